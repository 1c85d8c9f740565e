"""``berth install rollback [--revision N]``: the rollback plan on a cluster, then the work dir follows it.

As ``helm rollback RELEASE [REVISION]`` (helm/helm ``pkg/action/rollback.go``): the *target* revision's
pre-rollback hooks, its objects applied, what the current render has and the target lacks pruned (unless its live
copy says ``keep``), the wait, the target's post-rollback hooks. All of that is the rollback plan
(:func:`berth.install.workdir.build_plan`, the same plan ``berth install plan|script --action rollback`` show and
run), executed by the one executor (:func:`berth.install.apply.execute`); this module adds nothing to it. Without
``--revision`` the target is the newest recorded revision (Helm's default: the previous one); no recorded revision,
or an unknown number, is the plan's own :class:`~berth.kube.errors.InputError` (exit 2).

Helm records a rollback as a new release revision holding the target's manifest *and chart*. berth's work dir is
its release store, so a rollback that succeeded on the cluster makes the work dir follow, the way ``upgrade`` does:
the render it replaces is recorded, with its package, as the next revision in ``W/out/revisions``
(:func:`berth.install.revisions.record`), ``W/out`` becomes the target revision's render (its objects, hooks,
selection and inputs) and ``W/package`` the target's package. So ``status`` compares with what the cluster now
runs, ``verify`` re-renders the chart the render came from, a later ``upgrade`` prunes against it, and a second
``rollback`` goes back to the render just replaced (``helm rollback`` without a revision does the same).

The switch is two renames, since ``W/out`` and ``W/package`` are siblings; the order makes it safe::

    stage/out = target render + revisions (+ the replaced one) + runs (receipt: recordedRevision)
                + .rollback-package/ (the target's package)
    swap W/out <- stage/out                  the commit point: done and recorded, or not done at all
    W/package -> aside; W/out/.rollback-package -> W/package; drop the old one (recorded with its render)

A run that stops before the swap left the work dir as it was: the receipt has no ``recordedRevision``, and
``--resume`` (:func:`unswitched`) switches without touching the cluster again. A run that stops after it leaves
``W/out/.rollback-package``; every command that loads the work dir refuses while it is there, and ``--resume``
(:func:`restore_package`) finishes the move, whichever of its renames was done. A run that stops on the cluster
switches nothing: ``--resume`` continues it with the same target (read from the stopped run's receipt). A
revision recorded before revisions kept packages has none to restore: ``W/package`` stays as it is and the summary
says so in one line when it is not the target's.
"""

from __future__ import annotations

import dataclasses
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from berth.install import apply, layout, receipt, recorder, release, revisions, swap, workdir
from berth.install import package as package_mod
from berth.install import plan as plan_mod
from berth.kube import yamlio
from berth.kube.errors import BerthError, InputError

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


def switch(work: Path, wd: workdir.Workdir, target: revisions.Revision, run_name: str) -> int | None:
    """Make ``W/out`` the target revision's render and ``W/package`` its package, recording the current render
    (with its package) as the next revision; mark the run's receipt with that number in the same swap of
    ``W/out``. Returns the new revision's number."""
    out = work / "out"
    try:
        with swap.stage_dir(work, ".berth-rollback-") as stage:
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
            package_dir = work / "package"
            if target.package is not None:
                package_dir = new_out / revisions.PENDING_PACKAGE
                shutil.copytree(target.package, package_dir)
                marker = package_dir / revisions.NO_BASE_RENDERS
                if marker.exists():  # the package never had base review renders
                    marker.unlink()
                else:  # the revision kept it without them
                    package_mod.restore_base_renders(package_dir)
            now = workdir.read_workdir(new_out, package_dir)
            plan_file = new_out / workdir.PLAN_FILE
            plan_file.parent.mkdir(parents=True, exist_ok=True)
            plan_file.write_text(yamlio.dump(workdir.plan_document(now, str(work))), encoding="utf-8")
            if (out / "runs").is_dir():
                shutil.copytree(out / "runs", new_out / "runs")
            path = new_out / "runs" / f"{run_name}.yaml"
            if path.is_file():
                body = receipt.load(path)
                body["spec"][RECORDED_FIELD] = recorded
                yamlio.write_atomic(path, yamlio.dump(body))
            swap.swap(stage, work, ("out",))
    except (OSError, BerthError) as exc:
        raise apply.RunFailed(
            f"the cluster is rolled back to {target.label}, but {out} could not be switched to it ({exc}); it "
            f"still holds the render before the rollback. Fix the cause, then finish with: "
            f"{apply.live_command(plan_mod.Action.ROLLBACK, work)} --resume"
        ) from exc
    restore_package(work, target.label)
    return recorded


def restore_package(work: Path, label: str) -> bool:
    """Move the package a switch swapped in with ``W/out`` (``W/out/.rollback-package``) to ``W/package``; the
    package there goes (the switch recorded it with the render it replaced). Safe to repeat: it finishes a move
    that stopped between its two renames. Returns whether there was one to move."""
    pending = work / "out" / revisions.PENDING_PACKAGE
    if not pending.is_dir():
        return False
    current = work / "package"
    with swap.stage_dir(work, ".berth-rollback-") as aside:
        try:
            if current.exists():
                current.rename(aside / "package")
            try:
                pending.rename(current)
            except OSError:
                if (aside / "package").is_dir() and not current.exists():
                    (aside / "package").rename(current)
                raise
        except OSError as exc:
            raise apply.RunFailed(
                f"the cluster is rolled back to {label} and {work / 'out'} holds its render, but {current} could not "
                f"be replaced by its package ({exc}). Fix the cause, then finish with: "
                f"{apply.live_command(plan_mod.Action.ROLLBACK, work)} --resume"
            ) from exc
    return True


def switched_lines(
    work: Path, wd: workdir.Workdir, target: revisions.Revision, recorded: int | None
) -> list[str]:
    where = work / "out" / revisions.REVISIONS_DIR
    lines = [f"{work / 'out'} now holds the render of {target.label}"]
    if recorded is not None:
        lines.append(f"Recorded the render this replaced as revision {recorded} in {where}")
    if target.package is not None:
        lines.append(f"{work / 'package'} now holds the package of {target.label}")
        return lines
    chart, pkg = target.meta.get("chart") or {}, target.meta.get("package") or {}
    if chart.get("sha256"):
        same = chart["sha256"] == wd.package.chart.sha256
    else:
        same = (pkg.get("name"), pkg.get("version")) == (wd.package.name, wd.package.version)
    if not same:
        lines.append(
            f"note: {target.label} was recorded without its package, so {work / 'package'} still holds "
            f"{wd.package.name} {wd.package.version} (`berth install verify` compares against it until the next "
            "upgrade)"
        )
    return lines


def _label(work: Path, number: object) -> str:
    """A target's label; the switch may have dropped the target itself from the history (the newest 10 stay)."""
    if isinstance(number, int) and number in revisions.numbers(work / "out"):
        return revisions.load(work / "out", number).label
    return f"revision {number}"


SWITCH_ONLY_FIELD = "switchOnly"
"""Receipt field of ``rollback --switch-only``: the cluster was rolled back elsewhere (by the generated script)."""


def switch_only(work: Path, revision: int | None, reporter: apply.Reporter) -> apply.Outcome:
    """``rollback --switch-only``: make the work dir follow a rollback the generated script ran (a script cannot
    re-record the work dir: it runs kubectl only, often on another machine with a copy of ``W/out``). The cluster
    is not contacted. The receipt it writes (action rollback, no steps, ``switchOnly``) records the target's render
    as deployed on the work dir's recorded context, as the live rollback's receipt does, so a later ``apply``
    re-applies that render without hooks."""
    wd = workdir.load_workdir(work)
    plan = workdir.build_plan(wd, plan_mod.Action.ROLLBACK, str(work), revision=revision)
    target = revisions.load(work / "out", revision) if revision is not None else wd.previous()
    assert target is not None  # build_plan refused otherwise
    where = receipt.recorded_target(work) or {}
    extra = {TARGET_FIELD: target.number, SWITCH_ONLY_FIELD: True}
    rec = receipt.RunReceipt(
        work, plan, (), str(where.get("context") or ""), str(where.get("server") or ""),
        receipt.fingerprint(plan, extra), extra=extra,
    )  # fmt: skip
    rec.spec[receipt.DIGEST_FIELD] = layout.render_digest(work / "out" / target.prefix)
    rec.spec[receipt.VARIANT_FIELD] = "install"
    rec.finish(receipt.Result.SUCCEEDED)
    reporter.print(f"Switching {work} to {target.label}, which the cluster was rolled back to by a script")
    recorded = switch(work, wd, target, rec.name)
    return apply.Outcome(
        rec.path, 0, 0, (f"Receipt: {rec.path}", *switched_lines(work, wd, target, recorded))
    )


@apply.locked
def run(
    options: apply.ApplyOptions,
    revision: int | None = None,
    reporter: apply.Reporter | None = None,
    only_switch: bool = False,
) -> apply.Outcome:
    """``berth install rollback``: the rollback plan to ``revision`` (default: the newest recorded), then the switch
    of ``W/out`` to it (not on a dry run). ``only_switch``: the switch alone (:func:`switch_only`)."""
    reporter = reporter or apply.Reporter()
    work = options.work_dir
    if only_switch:
        if options.resume or options.dry_run:
            raise InputError(
                "--switch-only changes the work dir alone, at once; it takes neither --resume nor --dry-run",
                "--switch-only",
            )
        return switch_only(work, revision, reporter)
    last = last_run(work)
    if options.resume and last is not None and (work / "out" / revisions.PENDING_PACKAGE).is_dir():
        label = _label(work, last[1].get(TARGET_FIELD))
        reporter.print(
            f"The last rollback ({last[0].stem}) switched {work / 'out'} but not {work / 'package'}; restoring it"
        )
        restore_package(work, label)
        return apply.Outcome(
            last[0], 0, 0, (f"Receipt: {last[0]}", f"{work / 'package'} now holds the package of {label}")
        )
    wd = workdir.load_workdir(work)
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
    plan = workdir.build_plan(
        wd, plan_mod.Action.ROLLBACK, str(work), options.wait, options.timeout, revision
    )
    target = revisions.load(work / "out", revision) if revision is not None else wd.previous()
    assert target is not None  # build_plan refused otherwise
    reporter.print(f"Rolling back release {plan.release} to {target.label}")
    kube = apply.connect_checked(options, reporter)
    try:
        store = release.Store(kube, wd.namespace, wd.release)
        record = recorder.for_rollback(store, wd, target, work, kube.context, options.resume)
        outcome = apply.execute(
            kube, plan, options, reporter, extra={TARGET_FIELD: target.number},
            render=(work / "out" / target.prefix, "install"), record=record,
        )  # fmt: skip
    finally:
        kube.close()
    if options.dry_run:
        return dataclasses.replace(
            outcome,
            lines=(*outcome.lines, f"Dry run: {work / 'out'} is unchanged (still the current render)"),
        )
    recorded = switch(work, wd, target, outcome.receipt_path.stem)
    return dataclasses.replace(outcome, lines=(*outcome.lines, *switched_lines(work, wd, target, recorded)))
