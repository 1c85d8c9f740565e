"""``berth install upgrade --pull NEWREF``: re-render with the inputs carried over, show the diff, run the upgrade
plan -- pre-upgrade hooks, apply, prune what the new render dropped, post-upgrade hooks. Without ``--pull`` it
upgrades to the render the work dir holds now (``berth install setup`` run again with other inputs, which ``apply``
refuses to install over an installed release).

Re-rendering is the install engineer's ``setup`` (:func:`berth.install.setup.run`), which re-uses the work dir's
selection and answers and records the render it replaces as a revision (:mod:`berth.install.revisions`). The
prune is a step of the upgrade plan itself (:func:`berth.install.workdir.build_plan`), computed from that revision,
so ``berth install plan``/``script --action upgrade`` show and run exactly what this command does: after the new
objects are applied and before the wait and post-upgrade hooks, as Helm's ``KubeClient.Update`` does, a release
object of the previous revision that the new render lacks is deleted unless its **live** copy carries
``helm.sh/resource-policy: keep``; objects rendered only under ``.Release.IsInstall`` are never pruned. Setup
replaces ``W/out`` as a whole, so the run receipts in ``W/out/runs`` are carried across it.
"""

from __future__ import annotations

import difflib
import shutil
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from berth.install import adopt, apply, kubeops, lock, receipt, recorder, release, setup, values, workdir
from berth.install import plan as plan_mod
from berth.install import split as split_mod
from berth.kube import canonical, objects, yamlio
from berth.kube.errors import BerthError, InputError


@dataclass(frozen=True)
class UpgradeSource:
    """What to re-render from: ``--pull`` (a package, or a chart the work dir's package is rebased onto), and any
    choice the user changes now (``--base``, ``--select``, ``--input``); the rest carries over."""

    ref: str
    version: str | None = None
    repo: str | None = None
    base: str | None = None
    selects: tuple[str, ...] = ()
    inputs: tuple[str, ...] = ()


def release_objects(
    result: split_mod.Split, skip: frozenset[objects.Ref] = frozenset()
) -> dict[objects.Ref, split_mod.RenderedObject]:
    """What a release owns (ordinary, Secrets, templated CRDs), by identity."""
    objs = [*result.ordinary, *result.secrets, *(c for c in result.crds if not c.from_crds_dir)]
    return {o.ref: o for o in objs if o.ref not in skip}


class Render(Protocol):
    """A render with its variants: a set-up work dir or a recorded revision."""

    @property
    def split(self) -> split_mod.Split: ...
    @property
    def upgrade(self) -> split_mod.Split | None: ...
    @property
    def install_only(self) -> frozenset[objects.Ref]: ...


def applied_variant(wd: Render) -> split_mod.Split:
    """The render an upgrade plan applies: the ``--is-upgrade`` variant when it differs."""
    return wd.upgrade if wd.upgrade is not None else wd.split


def diff_lines(old: Render, new: Render) -> list[str]:
    """``+``/``-``/``~`` per release object, with a short unified diff for changed ones."""
    before = release_objects(applied_variant(old), old.install_only)
    after = release_objects(applied_variant(new), new.install_only)
    lines: list[str] = []
    for ref in sorted(set(before) | set(after), key=lambda r: r.key):
        if ref not in before:
            lines.append(f"+ {ref}")
        elif ref not in after:
            lines.append(f"- {ref}")
        elif canonical.canonical_json(before[ref].body) != canonical.canonical_json(after[ref].body):
            lines.append(f"~ {ref}")
            if (
                ref.kind == "Secret" and not ref.group
            ):  # never print Secret data: which keys changed, no values
                lines.append(f"    {secret_change(before[ref].body, after[ref].body)}")
                continue
            udiff = difflib.unified_diff(
                yamlio.dump(before[ref].body).splitlines(), yamlio.dump(after[ref].body).splitlines(),
                "before", "after", n=1, lineterm="",
            )  # fmt: skip
            body = list(udiff)[2:]
            lines += [f"    {d}" for d in body[:30]] + (["    ..."] if len(body) > 30 else [])
    return lines or ["(no change to release objects)"]


def secret_change(before: dict[str, Any], after: dict[str, Any]) -> str:
    """What changed in a Secret, without its values: the keys of ``data``/``stringData`` added, removed, changed."""

    def keyed(body: dict[str, Any]) -> dict[str, str]:
        return {
            f"{field}.{k}": canonical.canonical_json(v)
            for field in ("data", "stringData")
            for k, v in (body.get(field) or {}).items()
        }

    old, new = keyed(before), keyed(after)
    parts = [f"+{k}" for k in sorted(set(new) - set(old))] + [f"-{k}" for k in sorted(set(old) - set(new))]
    parts += [f"~{k}" for k in sorted(set(old) & set(new)) if old[k] != new[k]]
    rest = {k: v for k, v in before.items() if k not in ("data", "stringData")} != {
        k: v for k, v in after.items() if k not in ("data", "stringData")
    }
    return (
        (f"data keys {', '.join(parts)}" if parts else "")
        + ("; " if parts and rest else "")
        + ("other fields changed" if rest else "")
        + " (values not shown)"
    )


def rerender(
    work: Path,
    source: UpgradeSource,
    namespace: str,
    reporter: apply.Reporter,
    shown_as: str = "",
    given: adopt.UpgradeValues = adopt.NO_VALUES,
    reused: values.Reused | None = None,
) -> None:
    """Run setup again with the new reference (and the values flags ``given``, over the ``reused`` values of the
    release). The run receipts survive: setup's journaled swap of ``W/out`` carries ``out/runs`` into the new
    render (:func:`berth.install.swap.swap`). ``shown_as`` replaces ``work`` in the lines printed (a dry run's
    temporary copy, gone when the run ends)."""
    result = setup.run(
        setup.SetupOptions(
            source.ref,
            work,
            namespace=namespace,
            base=source.base,
            selects=source.selects,
            inputs=source.inputs,
            non_interactive=True,
            version=source.version,
            repo=source.repo,
            release=given.release,
            values=given.flags,
            reuse=reused,
        )
    )
    for line in result.lines:
        reporter.print(line.replace(str(work), shown_as) if shown_as else line)


def run(
    options: apply.ApplyOptions,
    source: UpgradeSource | None,
    reporter: apply.Reporter | None = None,
    given: adopt.UpgradeValues = adopt.NO_VALUES,
) -> apply.Outcome:
    """``berth install upgrade``: with ``source`` (``--pull``) re-render from it first; without, upgrade to the
    render the work dir holds now (set up again with other inputs, say), or with ``--resume`` continue the last
    upgrade. ``given``: Helm's release and values flags (values flags without ``--pull`` re-render the package the
    work dir holds); on a work dir never set up they name the release to adopt (:mod:`berth.install.adopt`)."""
    reporter = reporter or apply.Reporter()
    work = options.work_dir
    kubeops.preload()  # a re-render runs Helm first; the client's import overlaps it
    if adopt.is_set_up(work) or options.resume:
        return _run(options, source, reporter, given)
    fresh = not work.exists()
    with lock.hold(work, options.wait_lock, create=True):
        try:
            return _adopt(options, source, given, reporter)
        except BaseException:
            if not (work / "out").exists() and not (work / "package").exists():
                lock.release_file(work)  # nothing set up: leave no lock file, no empty work dir
                if fresh and not any(work.iterdir()):
                    work.rmdir()
            raise


@apply.locked
def _run(
    options: apply.ApplyOptions,
    source: UpgradeSource | None,
    reporter: apply.Reporter,
    given: adopt.UpgradeValues,
) -> apply.Outcome:
    work = options.work_dir
    if not options.resume:
        _refuse_uninstalled(options)
    reused = None
    if given.given and not options.resume:
        old = workdir.load_workdir(work)
        _same_release(old, given)
        reused = adopt.reused_for(options, given, old, reporter)
        source = source or UpgradeSource(str(work / "package"))
    if source is None and options.resume:
        found = [
            b for _, b in receipt.receipts(work, plan_mod.Action.UPGRADE.value) if not b["spec"].get("dryRun")
        ]
        if not found:
            raise InputError(
                f"nothing to resume: no earlier upgrade run in {work / receipt.RUNS_DIR}", "--resume"
            )
    elif source is None:
        wd = workdir.load_workdir(work)
        prev = wd.previous()
        reporter.print(
            f"Upgrading to the render {work / 'out'} holds (package {wd.package.name} {wd.package.version})"
        )
        if prev is not None:
            reporter.print(f"Changes to release objects since {prev.label}:")
            for line in diff_lines(prev, wd):
                reporter.print(f"  {line}")
    else:
        old = workdir.load_workdir(work)
        if options.dry_run:
            return _dry_run(options, source, old, reporter, given, reused)
        try:
            rerender(work, source, old.namespace, reporter, given=given, reused=reused)
        except lock.InterruptedAfterCommit as exc:
            raise lock.InterruptedAfterCommit(
                f"{exc}; nothing was applied to the cluster: upgrade to it with "
                f"{apply.live_command(plan_mod.Action.UPGRADE, work)}"
            ) from None
        runs_before = len(receipt.files(work, plan_mod.Action.UPGRADE.value))
        try:
            new = workdir.load_workdir(work)
            reporter.print("Changes to release objects:")
            for line in diff_lines(old, new):
                reporter.print(f"  {line}")
            return _execute(options, work, reporter, new)
        except KeyboardInterrupt:
            command = apply.live_command(plan_mod.Action.UPGRADE, work)
            started = len(receipt.files(work, plan_mod.Action.UPGRADE.value)) > runs_before
            raise lock.InterruptedAfterCommit(
                f"interrupted: {work / 'out'} already holds the new render (set up from {source.ref}); "
                + (
                    f"the upgrade on the cluster stopped where its receipt in {work / receipt.RUNS_DIR} says: "
                    f"continue it with {command} --resume"
                    if started
                    else f"nothing was applied to the cluster: upgrade to it with {command}"
                )
            ) from None
    return _execute(options, work, reporter)


def _refuse_uninstalled(options: apply.ApplyOptions) -> None:
    """``helm upgrade`` of an uninstalled release fails ("has no deployed releases"); so does this, before anything is
    re-rendered, when the receipts say the release was uninstalled from the work dir's cluster after it was last
    deployed (an upgrade would run every upgrade step against nothing). Naming another ``--context`` skips it."""
    work = options.work_dir
    target = receipt.recorded_target(work) or {}
    if options.context is not None and options.context != target.get("context"):
        return
    last: tuple[Path, dict[str, Any]] | None = None
    for path, body in receipt.newest_first(work):
        spec = body["spec"]
        if spec.get("dryRun") or spec.get("result") != receipt.Result.SUCCEEDED:
            continue
        if spec.get("context") != target.get("context") or spec.get("action") not in (
            *receipt.DEPLOYING,
            plan_mod.Action.UNINSTALL.value,
        ):
            continue
        last = (path, spec)
        break
    if last is not None and last[1].get("action") == plan_mod.Action.UNINSTALL.value:
        raise InputError(
            f"release {last[1].get('release')} was uninstalled from context {last[1].get('context')} (run "
            f"{last[0].stem}): there is nothing to upgrade. Install it again with "
            f"{apply.live_command(plan_mod.Action.INSTALL, work)}",
            str(work),
        )


def replaced_keys(wd: workdir.Workdir) -> frozenset[str]:
    """``Kind|namespace|name`` of every object the previous revision had: an upgrade checks the ownership of the
    others only, as Helm's (the namespace as an object names it, the release's, and none for cluster-scoped)."""
    prev = wd.previous()
    if prev is None:
        return frozenset()
    objs = [*prev.split.all_objects(), *(prev.upgrade.all_objects() if prev.upgrade is not None else [])]
    return frozenset(
        f"{o.kind}|{ns}|{o.name}" for o in objs for ns in {o.namespace or wd.namespace, o.namespace, ""}
    )


def _execute(
    options: apply.ApplyOptions, named: Path, reporter: apply.Reporter, loaded: workdir.Workdir | None = None
) -> apply.Outcome:
    """Run the upgrade plan of ``options.work_dir`` (``loaded``: the work dir as just read, under the same lock);
    commands it prints name ``named``."""
    wd = loaded if loaded is not None else workdir.load_workdir(options.work_dir)
    plan = workdir.build_plan(wd, plan_mod.Action.UPGRADE, str(named), options.wait, options.timeout)
    kube = apply.connect_checked(options, reporter)
    try:
        store = release.Store(kube, wd.namespace, wd.release)
        variant = "upgrade"
        record = recorder.for_upgrade(store, wd, options.work_dir, kube.context, variant, options.resume)
        return apply.execute(
            kube, plan, options, reporter, render=(options.work_dir / "out", variant), record=record,
            ownership_skip=replaced_keys(wd),
        )  # fmt: skip
    finally:
        kube.close()


def _same_release(wd: workdir.Workdir, given: adopt.UpgradeValues) -> None:
    """``--release``/``-n`` on a set-up work dir must name its release (one work dir, one release)."""
    for flag, value, have in (
        ("--release", given.release, wd.release),
        ("--namespace", given.namespace, wd.namespace),
    ):
        if value and value != have:
            raise InputError(
                f"this work dir holds release {wd.release} in namespace {wd.namespace}; to upgrade another "
                "release use another --work-dir",
                flag,
            )


def _adopt(
    options: apply.ApplyOptions,
    source: UpgradeSource | None,
    given: adopt.UpgradeValues,
    reporter: apply.Reporter,
) -> apply.Outcome:
    """Upgrade a release this work dir never set up: read it from the cluster, set the work dir up from
    ``--pull`` with the values Helm would keep, record its current revision, then upgrade as usual."""
    work = options.work_dir
    if source is None:
        raise InputError(
            f"{work} is not set up: name the chart to upgrade {given.release or 'the release'} to with --pull CHART",
            "--pull",
        )
    default_ns = setup.context_namespace(options.kubeconfig, options.context)
    adoption = adopt.read_for_adoption(options, given, reporter, default_ns)
    named = adopt.UpgradeValues(adoption.name, adoption.namespace, given.flags, given.mode)
    rerender(work, source, adoption.namespace, reporter, given=named, reused=adoption.reused)
    reporter.print(adopt.record_adopted(work, adoption))
    wd = workdir.load_workdir(work)
    plan_file = work / "out" / workdir.PLAN_FILE
    plan_file.write_text(yamlio.dump(workdir.plan_document(wd, str(work))), encoding="utf-8")
    prev = wd.previous()
    if prev is not None:
        reporter.print(f"Changes to release objects since {prev.label}:")
        for line in diff_lines(prev, wd):
            reporter.print(f"  {line}")
    return _execute(options, work, reporter, wd)


def _dry_run(
    options: apply.ApplyOptions,
    source: UpgradeSource,
    old: workdir.Workdir,
    reporter: apply.Reporter,
    given: adopt.UpgradeValues = adopt.NO_VALUES,
    reused: values.Reused | None = None,
) -> apply.Outcome:
    """``upgrade --dry-run``: re-render into a copy of the work dir and run the plan with ``dryRun=All``. The
    copy goes away afterwards (it holds the rendered Secrets); its receipt joins the work dir's other dry-run
    receipts in ``out/runs``, and every command and path printed names the real work dir."""
    work = options.work_dir
    scratch = Path(tempfile.mkdtemp(prefix="berth-upgrade-dry-run-"))
    copy = scratch / "w"
    try:
        shutil.copytree(work, copy)
        reporter.print(f"Dry run: re-rendering into a temporary copy of the work dir; {work} is unchanged")
        rerender(copy, source, old.namespace, reporter, f"<dry-run copy of {work}>", given, reused)
        reporter.print("Changes to release objects:")
        for line in diff_lines(old, workdir.load_workdir(copy)):
            reporter.print(f"  {line}")
        try:
            outcome = _execute(replace(options, work_dir=copy), work, reporter)
        except BerthError as exc:
            exc.args = tuple(str(a).replace(str(copy), str(work)) for a in exc.args)
            raise
        finally:
            for rec in sorted((copy / receipt.RUNS_DIR).glob("*.yaml")):
                if not (work / receipt.RUNS_DIR / rec.name).exists() and rec.name != receipt.TARGET_FILE:
                    (work / receipt.RUNS_DIR).mkdir(parents=True, exist_ok=True)
                    shutil.copy2(rec, work / receipt.RUNS_DIR / rec.name)
        lines = tuple(line.replace(str(copy), str(work)) for line in outcome.lines)
        return replace(outcome, receipt_path=work / receipt.RUNS_DIR / outcome.receipt_path.name, lines=lines)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
