"""``berth install rollback [--revision N]``: the rollback plan on a cluster, then the work dir follows it.

As ``helm rollback RELEASE [REVISION]`` (helm/helm ``pkg/action/rollback.go``): the *target* revision's
pre-rollback hooks, its objects applied, what the current render has and the target lacks pruned (unless its live
copy says ``keep``), the wait, the target's post-rollback hooks. All of that is the rollback plan
(:func:`berth.install.setup.build_plan`, the same plan ``berth install plan|script --action rollback`` show and
run), executed by the one executor (:func:`berth.install.apply.execute`); this module adds nothing to it. Without
``--revision`` the target is the newest recorded revision (Helm's default: the previous one); no recorded revision,
or an unknown number, is the plan's own :class:`~berth.kube.errors.InputError` (exit 2).

Helm records a rollback as a new release revision holding the target's manifest. berth's work dir is its release
store, so a rollback that succeeded on the cluster makes the work dir follow, the way ``upgrade`` does: the render
it replaces is recorded as the next revision in ``W/out/revisions`` (:func:`berth.install.revisions.record`) and
``W/out`` becomes the target revision's render (its objects, hooks, selection and inputs). So ``status`` compares
with what the cluster now runs, a later ``upgrade`` prunes against it, and a second ``rollback`` goes back to the
render just replaced (``helm rollback`` without a revision does the same). The new ``W/out`` is built beside the
old one and swapped in with one rename (:func:`berth.install.setup._swap`, the one setup uses); the rollback's
receipt in the swapped-in ``out/runs`` says which revision the replaced render became (``recordedRevision``), so
the switch is either done and recorded or not done at all. A run that stops on the cluster switches nothing:
``--resume`` continues it with the same target (read from the stopped run's receipt), and also completes a run
that succeeded on the cluster but died before the switch. ``W/package`` is not part of a revision and stays the
newest package pulled (the summary says so when it differs from the target's chart).
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from berth.install import apply, receipt, revisions, setup
from berth.install import plan as plan_mod
from berth.kube import yamlio

TARGET_FIELD = "targetRevision"
"""Receipt field: the revision the run rolls back to (what ``--resume`` without ``--revision`` goes back to)."""
RECORDED_FIELD = "recordedRevision"
"""Receipt field, set with the switch of ``W/out``: the revision number the replaced render was recorded as."""


def last_run(work: Path) -> tuple[Path, dict[str, Any]] | None:
    """The newest rollback receipt that was not a dry run, with its spec."""
    found = [
        (p, b["spec"])
        for p, b in receipt.receipts(work, plan_mod.Action.ROLLBACK.value)
        if not b["spec"].get("dryRun")
    ]
    return found[-1] if found else None


def resume_target(work: Path, revision: int | None) -> int | None:
    """``--revision`` if given, else the target of the run being resumed (None: no earlier run; the executor's
    resume check then says there is nothing to resume)."""
    last = last_run(work)
    target = last[1].get(TARGET_FIELD) if last else None
    if revision is None and isinstance(target, int):
        return target
    return revision


def unswitched(work: Path) -> tuple[Path, int] | None:
    """The last rollback's receipt and target, if it succeeded on the cluster but the work dir was never switched."""
    last = last_run(work)
    if last is None:
        return None
    path, spec = last
    target = spec.get(TARGET_FIELD)
    if (
        spec.get("result") != receipt.Result.SUCCEEDED
        or RECORDED_FIELD in spec
        or not isinstance(target, int)
    ):
        return None
    return path, target


def switch(work: Path, wd: setup.Workdir, target: revisions.Revision, run_name: str) -> int | None:
    """Make ``W/out`` the target revision's render, recording the current one as the next revision; mark the run's
    receipt with that number in the same swap. Returns the new revision's number."""
    out = work / "out"
    stage = Path(tempfile.mkdtemp(prefix=".berth-rollback-", dir=work))
    try:
        new_out = stage / "out"
        new_out.mkdir()
        source = out / target.prefix
        for name in revisions.SNAPSHOT:
            if (source / name).is_dir():
                shutil.copytree(source / name, new_out / name)
            elif (source / name).is_file():
                shutil.copy2(source / name, new_out / name)
        recorded = revisions.record(
            out, work / "package", new_out, datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        )
        now = dataclasses.replace(
            wd, split=target.split, install_only=target.install_only, upgrade=target.upgrade, out_dir=new_out
        )
        plan_file = new_out / setup.PLAN_FILE
        plan_file.parent.mkdir(parents=True, exist_ok=True)
        plan_file.write_text(yamlio.dump(setup.plan_document(now, str(work))), encoding="utf-8")
        if (out / "runs").is_dir():
            shutil.copytree(out / "runs", new_out / "runs")
        path = new_out / "runs" / f"{run_name}.yaml"
        if path.is_file():
            body = receipt.load(path)
            body["spec"][RECORDED_FIELD] = recorded
            yamlio.write_atomic(path, yamlio.dump(body))
        setup._swap(stage, work, ("out",))
    except OSError as exc:
        raise apply.RunFailed(
            f"the cluster is rolled back to {target.label}, but {out} could not be switched to it ({exc}); it "
            f"still holds the render before the rollback. Fix the cause, then finish with: "
            f"{apply.live_command(plan_mod.Action.ROLLBACK, work)} --resume"
        ) from exc
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return recorded


def switched_lines(
    work: Path, wd: setup.Workdir, target: revisions.Revision, recorded: int | None
) -> list[str]:
    where = work / "out" / revisions.REVISIONS_DIR
    lines = [f"{work / 'out'} now holds the render of {target.label}"]
    if recorded is not None:
        lines.append(f"Recorded the render this replaced as revision {recorded} in {where}")
    chart = target.meta.get("chart") or {}
    if chart.get("sha256") and chart.get("sha256") != wd.package.chart.sha256:
        lines.append(
            f"note: {work / 'package'} still holds {wd.package.name} {wd.package.version} (a revision keeps the "
            "render, not the package): `berth install verify` compares against it until the next upgrade"
        )
    return lines


def run(
    options: apply.ApplyOptions, revision: int | None = None, reporter: apply.Reporter | None = None
) -> apply.Outcome:
    """``berth install rollback``: the rollback plan to ``revision`` (default: the newest recorded), then the switch
    of ``W/out`` to it (not on a dry run)."""
    reporter = reporter or apply.Reporter()
    work = options.work_dir
    wd = setup.load_workdir(work)
    if options.resume:
        pending = unswitched(work)
        if pending is not None and revision in (None, pending[1]):
            path, number = pending
            done = revisions.load(work / "out", number)
            reporter.print(
                f"The last rollback ({path.stem}) succeeded on the cluster; switching {work / 'out'} to it"
            )
            recorded = switch(work, wd, done, path.stem)
            return apply.Outcome(path, 0, 0, (f"Receipt: {path}", *switched_lines(work, wd, done, recorded)))
        revision = resume_target(work, revision)
    plan = setup.build_plan(wd, plan_mod.Action.ROLLBACK, str(work), options.wait, options.timeout, revision)
    target = revisions.load(work / "out", revision) if revision is not None else wd.previous()
    assert target is not None  # build_plan refused otherwise
    reporter.print(f"Rolling back release {plan.release} to {target.label}")
    kube = apply.connect_checked(options, reporter)
    try:
        outcome = apply.execute(kube, plan, options, reporter, extra={TARGET_FIELD: target.number})
    finally:
        kube.close()
    if options.dry_run:
        return dataclasses.replace(
            outcome,
            lines=(*outcome.lines, f"Dry run: {work / 'out'} is unchanged (still the current render)"),
        )
    recorded = switch(work, wd, target, outcome.receipt_path.stem)
    return dataclasses.replace(outcome, lines=(*outcome.lines, *switched_lines(work, wd, target, recorded)))
