"""``berth install setup``: pull -> wizard -> collector -> render -> split -> plan, written atomically.

Everything is built in a staging folder inside the work dir and swapped in only when every step succeeded, so a
failed run (bad values, template error, missing input, duplicate identities...) leaves ``W/out`` and
``W/package`` exactly as they were. The swap itself is journaled (:func:`swap`): a run killed between its renames
leaves a journal, and the next command that loads the work dir (:func:`recover`, from :func:`load_workdir` and
:func:`run`) finishes it or undoes it, so ``W/package`` and ``W/out`` always belong together.

The chart is rendered twice over: the install variant (what is written) and the ``--is-upgrade`` variant, whose
difference tells which objects exist only under ``.Release.IsInstall`` (an upgrade must neither re-apply nor prune
them, as Helm's live ``keep`` check does).
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from berth.install import chart as chart_mod
from berth.install import collector, helm, layout, package, revisions, wizard
from berth.install import plan as plan_mod
from berth.install import split as split_mod
from berth.kube import canonical, objects, yamlio
from berth.kube.errors import InputError, MultiInputError

PLAN_FILE = "lifecycle/plan.yaml"
FACTS_FILE = "facts.yaml"
NOTES_FILES = {"install": "NOTES.txt", "upgrade": "NOTES-upgrade.txt"}
"""The chart's rendered NOTES.txt in ``out/spec/`` (install and ``--is-upgrade`` values): printed after a
successful ``apply`` and ``upgrade`` as ``helm install``/``upgrade`` print it. Absent when the chart has none."""


def release_notes(out_dir: Path, action: str) -> str:
    """The notes ``helm install`` (``action`` install) or ``helm upgrade`` would print for the render in
    ``out_dir``; empty when the chart has no NOTES.txt (or the work dir predates notes)."""
    path = out_dir / "spec" / NOTES_FILES[action]
    return path.read_text(encoding="utf-8").strip() if path.is_file() else ""


@dataclass(frozen=True)
class SetupOptions:
    ref: str
    work_dir: Path
    namespace: str | None = None
    base: str | None = None
    selects: tuple[str, ...] = ()
    inputs: tuple[str, ...] = ()
    non_interactive: bool = False
    version: str | None = None
    repo: str | None = None
    live: bool = False
    kubeconfig: str | None = None
    context: str | None = None
    api_versions: tuple[str, ...] | None = None
    """``--api-versions`` flags (None: keep the earlier run's)."""


@dataclass(frozen=True)
class SetupResult:
    package: package.Package
    selection: wizard.Selection
    namespace: str
    split: split_mod.Split
    facts: dict[str, Any]
    lines: tuple[str, ...]


UPGRADE_DIR = "upgrade"
"""``W/out/upgrade/``: the ``--is-upgrade`` render, written only when it differs from the install render."""


@dataclass(frozen=True)
class Workdir:
    """Everything later commands need from a set-up work dir."""

    package: package.Package
    selection: wizard.Selection
    answers: dict[str, Any]
    namespace: str
    split: split_mod.Split
    install_only: frozenset[objects.Ref]
    upgrade: split_mod.Split | None
    """The upgrade variant when it differs from the install render (files under ``out/upgrade/``)."""
    out_dir: Path | None = None
    """Where ``revisions/`` is (``W/out``, or setup's staging copy of it); None: no history."""

    def previous(self) -> revisions.Revision | None:
        """The newest recorded revision: what an upgrade replaces and a rollback goes back to."""
        return revisions.latest(self.out_dir) if self.out_dir is not None else None


def _replaced(
    result: split_mod.Split,
    upgrade: split_mod.Split | None,
    install_only: frozenset[objects.Ref],
    prefix: str,
) -> tuple[plan_mod.Replaced, frozenset[objects.Ref]]:
    """A render's release objects with their files (install-only ones left out: never pruned), and every identity
    it renders (install-only ones included: never pruned either)."""
    objs = plan_mod.release_files(result, prefix, install_only)
    if upgrade is not None:
        have = {o.ref for o, _ in objs}
        objs += [
            p for p in plan_mod.release_files(upgrade, f"{prefix}{UPGRADE_DIR}/") if p[0].ref not in have
        ]
    refs = {o.ref for o, _ in plan_mod.release_files(result, prefix)}
    if upgrade is not None:
        refs |= {o.ref for o, _ in plan_mod.release_files(upgrade)}
    return tuple(objs), frozenset(refs)


def no_revision_error(wd: Workdir, work_dir: str) -> InputError:
    where = str((wd.out_dir or Path(work_dir) / "out") / revisions.REVISIONS_DIR)
    return InputError(
        "a rollback goes back to an earlier revision, and this work dir has none recorded (setup records the "
        "render it replaces here; this one was set up only once). To go back to another version, run "
        f"`berth install upgrade --work-dir {work_dir} --pull OLDREF` (or setup) with that version's package",
        where,
    )


def build_plan(
    wd: Workdir,
    action: plan_mod.Action,
    work_dir: str,
    wait: bool = False,
    hook_timeout: int = plan_mod.DEFAULT_HOOK_TIMEOUT_SECONDS,
    revision: int | None = None,
) -> plan_mod.Plan:
    """The plan of ``action``. Upgrade uses the ``--is-upgrade`` render when it differs, like Helm would, and prunes
    what the previous revision had and this render lacks. Rollback applies the render of ``revision`` (default: the
    previous one) and runs its hooks (as ``helm rollback`` runs the target revision's), pruning what the current
    render added; it raises :class:`InputError` when that revision is not recorded."""
    release, ns = wd.package.release, wd.namespace
    if action == plan_mod.Action.ROLLBACK:
        if revision is not None and wd.out_dir is not None:
            target: revisions.Revision | None = revisions.load(wd.out_dir, revision)
        else:
            target = wd.previous()
        if target is None:
            raise no_revision_error(wd, work_dir)
        # The revision's install render, without its install-only objects (nothing pruned them): the usual target
        # is the revision an install created, before the upgrade being undone.
        current, _ = _replaced(wd.split, wd.upgrade, wd.install_only, "")
        _, kept_refs = _replaced(target.split, target.upgrade, target.install_only, target.prefix)
        rollback = plan_mod.build(
            target.split, action, release, ns, work_dir, wait, hook_timeout, target.install_only,
            target.prefix, current, kept_refs, "the current render",
        )  # fmt: skip
        return dataclasses.replace(rollback, target=target.label, target_revision=target.number)
    replaced: plan_mod.Replaced = ()
    remaining: frozenset[objects.Ref] = frozenset()
    source = ""
    if action == plan_mod.Action.UPGRADE:
        prev = wd.previous()
        if prev is not None:
            replaced, _ = _replaced(prev.split, prev.upgrade, prev.install_only, prev.prefix)
            _, remaining = _replaced(wd.split, wd.upgrade, wd.install_only, "")
            source = prev.label
    if action == plan_mod.Action.UPGRADE and wd.upgrade is not None:
        return plan_mod.build(
            wd.upgrade, action, release, ns, work_dir, wait, hook_timeout,
            prefix=f"{UPGRADE_DIR}/", replaced=replaced, remaining=remaining, replaced_source=source,
        )  # fmt: skip
    return plan_mod.build(
        wd.split, action, release, ns, work_dir, wait, hook_timeout, wd.install_only,
        replaced=replaced, remaining=remaining, replaced_source=source,
    )  # fmt: skip


def plan_document(wd: Workdir, work_dir: str) -> dict[str, Any]:
    """``W/out/lifecycle/plan.yaml``: the plan of every action, for review (``berth install plan`` rebuilds it);
    an action that cannot be planned yet (rollback without a recorded revision) is listed with the reason."""
    plans: list[dict[str, Any]] = []
    unavailable: list[dict[str, str]] = []
    for action in plan_mod.Action:
        try:
            plans.append(build_plan(wd, action, work_dir).to_json())
        except InputError as exc:
            unavailable.append({"action": action.value, "reason": str(exc)})
    spec: dict[str, Any] = {"release": wd.package.release, "namespace": wd.namespace, "plans": plans}
    if unavailable:
        spec["unavailable"] = unavailable
    return {
        "apiVersion": layout.API_VERSION,
        "kind": "LifecyclePlan",
        "metadata": {"name": f"{wd.package.name}-plan"},
        "spec": spec,
    }


_LOOKUP_CALL = re.compile(r"\blookup\s+[\"$.(]")
"""A call of Helm's ``lookup`` (its first argument is a string, a variable, a field or a sub-expression)."""


def lookup_notes(result: split_mod.Split, chart_dir: Path) -> list[str]:
    """One review note per template that calls ``lookup``: offline it finds nothing, so its objects hold the
    chart's fallback (a generated password, a default), where ``helm install``/``upgrade`` read the live object
    and keep it. An upgrade from this render overwrites such live values (or stops at a field-manager conflict,
    where ``--force-conflicts`` would overwrite them)."""
    out = []
    for source in dict.fromkeys(o.source for o in result.all_objects()):
        rel = Path(*Path(source).parts[1:])  # "<chart>/templates/x.yaml" -> chart_dir/templates/x.yaml
        path = chart_dir / rel
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if _LOOKUP_CALL.search(text):
            out.append(
                f"{source} calls lookup, which finds nothing offline: what it renders from the result is the "
                "chart's fallback where helm install/upgrade would read and keep the live value; before an "
                "upgrade (or --force-conflicts) check that no live value is overwritten"
            )
    return out


def render_selection(
    pkg: package.Package,
    selection: wizard.Selection,
    answers: dict[str, Any],
    namespace: str,
    scratch: Path,
) -> tuple[
    split_mod.Split, split_mod.Split | None, frozenset[objects.Ref], list[str], tuple[str, str] | None
]:
    """The install render (split), the upgrade render when it differs, the identities only the install variant
    has, notes on the differences, and the chart's NOTES.txt as ``helm install`` and ``helm upgrade`` would print
    it (None when it has none)."""
    chart_dir = chart_mod.safe_extract(pkg.root / pkg.chart.archive, scratch / "chart")
    extra = selection.api_versions
    req = package.render_request(
        pkg, chart_dir, selection.base, selection.components, answers, namespace, scratch, api_versions=extra
    )
    upgrade_req = package.render_request(
        pkg, chart_dir, selection.base, selection.components, answers, namespace, scratch, True, extra
    )
    notes_reqs = [
        n
        for n in (
            helm.notes_request(req, scratch / "notes"),
            helm.notes_request(upgrade_req, scratch / "notes-up"),
        )
        if n
    ]
    rendered, up_rendered, *notes_renders = helm.render_all([req, upgrade_req, *notes_reqs])
    chart_notes = tuple(helm.notes_text(r) for r in notes_renders)
    result = split_mod.from_render(rendered.text, rendered.dropped_hook_events)
    twins = split_mod.release_namespace_duplicates(result, namespace)
    if twins:
        raise MultiInputError(
            twins, "duplicate object identities (each object must be rendered exactly once)"
        )
    upgrade = split_mod.from_render(up_rendered.text, up_rendered.dropped_hook_events)
    up = {o.ref: o for o in upgrade.all_objects()}
    mine = {o.ref: o for o in result.all_objects()}
    install_only = frozenset(r for r in mine if r not in up)
    notes = [
        f"{r} is rendered only on install (.Release.IsInstall); upgrade neither applies nor prunes it"
        for r in mine
        if r not in up
    ]
    for r, o in up.items():
        if r not in mine:
            notes.append(
                f"{r} is rendered only on upgrade; the upgrade plan applies it from out/{UPGRADE_DIR}/"
            )
        elif canonical.canonical_json(o.body) != canonical.canonical_json(mine[r].body):
            notes.append(f"{r} renders differently on upgrade; the upgrade plan uses out/{UPGRADE_DIR}/")
    return (
        result,
        (upgrade if notes else None),
        install_only,
        [*notes, *lookup_notes(result, chart_dir)],
        (chart_notes[0], chart_notes[1]) if len(chart_notes) == 2 else None,
    )


SWAP_JOURNAL = ".berth-swap.yaml"
"""``W/.berth-swap.yaml``: written before a swap's first rename, removed after its last (see :func:`swap`)."""
SWAP_ASIDE = ".berth-swap.old"
"""``W/.berth-swap.old/<name>``: the folders a swap replaces, kept until it is finished or undone."""
SWAP_DONE = (
    "done when every name's new folder is W/<name> (for a name in replaced, with the old one in the aside "
    "folder); otherwise undo: every old folder back, the stage removed"
)
"""The journal's statement of which direction counts as done, for whoever reads the file."""


@dataclass(frozen=True)
class SwapJournal:
    """What a swap in progress is doing: enough for the next command to finish or undo it."""

    stage: str
    """The stage folder in the work dir the new folders come from (it may be gone: its owner removes it)."""
    names: tuple[str, ...]
    replaced: tuple[str, ...]
    """The names the work dir had before the swap: their old folders go to ``W/.berth-swap.old/<name>``."""

    def to_doc(self) -> dict[str, Any]:
        return {
            "apiVersion": layout.API_VERSION,
            "kind": "SwapJournal",
            "metadata": {"name": "swap"},
            "spec": {
                "stage": self.stage,
                "names": list(self.names),
                "replaced": list(self.replaced),
                "aside": SWAP_ASIDE,
                "done": SWAP_DONE,
            },
        }


def _plain_name(value: object) -> bool:
    return isinstance(value, str) and value not in ("", ".", "..") and Path(value).name == value


def _read_journal(work: Path) -> SwapJournal | None:
    path = work / SWAP_JOURNAL
    if not path.is_file():
        return None
    docs = yamlio.load_file(path)
    spec = docs[0].body.get("spec") if docs and isinstance(docs[0].body, dict) else None
    names = spec.get("names") if isinstance(spec, dict) else None
    replaced = spec.get("replaced") if isinstance(spec, dict) else None
    stage = spec.get("stage") if isinstance(spec, dict) else None
    if (
        not isinstance(names, list)
        or not isinstance(replaced, list)
        or not all(_plain_name(n) for n in names)
        or not set(replaced) <= set(names)
        or not _plain_name(stage)
        or not str(stage).startswith(".berth-")
    ):
        raise InputError(
            "not a swap journal berth wrote (spec.stage, spec.names, spec.replaced); check that W/package and "
            "W/out belong together, then delete it",
            str(path),
        )
    return SwapJournal(str(stage), tuple(names), tuple(replaced))


@contextlib.contextmanager
def _locked(work: Path) -> Iterator[int]:
    """An exclusive ``flock`` on the work dir (the fd is yielded, to fsync the directory): a command that loads the
    work dir while another one swaps waits out the few renames instead of "recovering" a live swap. The kernel
    drops the lock of a killed process, so a crash never leaves it held."""
    fd = os.open(work, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield fd
    finally:
        os.close(fd)


def _all_new(work: Path, journal: SwapJournal) -> bool:
    """Whether every new folder is in place: ``W/<name>`` exists and, when the work dir had one, the old one is set
    aside (a rename that moved the new one in always follows the one that set the old one aside)."""
    aside = work / SWAP_ASIDE
    return all(
        (work / n).exists() and (n not in journal.replaced or (aside / n).exists()) for n in journal.names
    )


def _undo(work: Path, journal: SwapJournal) -> None:
    """Put every old folder back (newest rename first). Each step is a rename, and a new folder goes to the aside
    folder before its old one comes back, so an undo that stops part-way is undone again by the next call."""
    aside = work / SWAP_ASIDE
    for name in reversed(journal.names):
        target, old, trash = work / name, aside / name, aside / f"{name}.new"
        if name in journal.replaced and not old.exists():
            continue  # never set aside: W/<name> is still the old one
        if target.exists():
            shutil.rmtree(trash, ignore_errors=True)
            target.rename(trash)
        if old.exists():
            old.rename(target)


def _close(work: Path, fd: int, stage: Path | None) -> None:
    """Drop what a finished or undone swap leaves: the stage (recovery only; a running swap's owner removes its
    own), then the journal, then the aside folder (the journal goes first: without it, the aside folder is only
    leftovers, which the next load removes)."""
    if stage is not None:
        shutil.rmtree(stage, ignore_errors=True)
    os.fsync(fd)
    (work / SWAP_JOURNAL).unlink()
    shutil.rmtree(work / SWAP_ASIDE, ignore_errors=True)


def _recover_locked(work: Path, fd: int) -> str | None:
    line = _finish_or_undo(work, fd)
    if line is not None:
        print(line, file=sys.stderr)
    return line


def _finish_or_undo(work: Path, fd: int) -> str | None:
    journal = _read_journal(work)
    if journal is None:  # a swap that finished but stopped before removing its aside folder
        shutil.rmtree(work / SWAP_ASIDE, ignore_errors=True)
        return None
    names = " and ".join(f"{work / n}" for n in journal.names)
    if _all_new(work, journal):
        _close(work, fd, work / journal.stage)
        return (
            f"recovered an interrupted swap: {names} already held the new folders from {journal.stage}; "
            "finished it (removed the replaced ones)"
        )
    _undo(work, journal)
    _close(work, fd, work / journal.stage)
    return (
        f"recovered an interrupted swap: {names} are back to what they held before it (the new folders from "
        f"{journal.stage} were not all in place); re-run the command that was stopped (a live rollback: "
        f"berth install rollback --work-dir {work} --resume)"
    )


STAGE_PREFIXES = (".berth-setup-", ".berth-rollback-")
"""The scratch folders commands build in inside a work dir (:func:`stage_dir`)."""


@contextlib.contextmanager
def stage_dir(work: Path, prefix: str) -> Iterator[Path]:
    """A scratch folder in the work dir (same filesystem, so :func:`swap` can rename out of it), removed when the
    command ends. Its owner holds a ``flock`` on it while it lives, so a later command can tell the stage of a
    process that died before writing any journal (kill -9 mid-render) from a live one, and :func:`recover` removes
    only the former. It is made under the work dir's lock so a recovery never sees it before it is held."""
    with _locked(work):
        stage = Path(tempfile.mkdtemp(prefix=prefix, dir=work))
        held = os.open(stage, os.O_RDONLY)
        fcntl.flock(held, fcntl.LOCK_EX)
    try:
        yield stage
    finally:
        shutil.rmtree(stage, ignore_errors=True)
        os.close(held)


def _stages(work: Path) -> list[Path]:
    return sorted(p for p in work.glob(".berth-*") if p.is_dir() and p.name.startswith(STAGE_PREFIXES))


def _sweep_stages(work: Path) -> str | None:
    """Remove the stages no live command holds (their owner died); one line saying so, or None."""
    removed = []
    for path in _stages(work):
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # a running command's stage
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path.name)
        finally:
            os.close(fd)
    if not removed:
        return None
    line = (
        f"removed {len(removed)} scratch folder(s) an interrupted command left in {work}: {', '.join(removed)} "
        "(nothing in W/package or W/out depended on them)"
    )
    print(line, file=sys.stderr)
    return line


def recover(work_dir: Path) -> str | None:
    """Finish or undo a swap that a killed process left half done (:func:`swap`), and remove the scratch folders of
    commands that died before any swap (:func:`stage_dir`), saying what it did in one line each on stderr; return
    the swap's line, else the scratch line (None: nothing to recover). Every command that reads a work dir calls
    this first."""
    work = work_dir.resolve()
    pending = (work / SWAP_JOURNAL).exists() or (work / SWAP_ASIDE).exists()
    if not pending and not _stages(work):
        return None
    with _locked(work) as fd:
        line = _recover_locked(work, fd) if pending else None
        swept = _sweep_stages(work)
        return line or swept


def swap(stage: Path, work: Path, names: tuple[str, ...]) -> None:
    """Move ``stage/<name>`` over ``work/<name>`` for each name (the one swap of a work dir: setup's, and rollback's
    switch of ``W/out``).

    The renames are journaled so the work dir is never left half switched: ``W/.berth-swap.yaml`` (written
    atomically before the first rename, removed after the last) names the stage, the names and which of them the
    work dir had; each old folder is renamed to ``W/.berth-swap.old/<name>``, then the new one into place. A failed
    rename (OSError) or Ctrl-C undoes the renames done so far, here; a process that dies in between (kill -9,
    power loss) leaves the journal, and the next command that loads the work dir (:func:`recover`) finishes the
    swap when every new folder is in place and undoes it otherwise -- so the work dir always holds either the
    complete old pair or the complete new one."""
    work = work.resolve()
    stage = stage.resolve()
    if stage.parent != work:
        raise ValueError(f"the stage {stage} must be a folder of the work dir {work}")
    aside = work / SWAP_ASIDE
    with _locked(work) as fd:
        _recover_locked(work, fd)  # a crashed swap's leftovers (the callers' loads normally recovered them)
        # Run receipts (and the context recorded at first apply) belong to the work dir's history, not to one
        # render: carry them into the new out/ so --resume and the context guard keep working.
        runs = work / "out" / "runs"
        if "out" in names and runs.is_dir() and not (stage / "out" / "runs").exists():
            shutil.copytree(runs, stage / "out" / "runs")
        journal = SwapJournal(stage.name, names, tuple(n for n in names if (work / n).exists()))
        yamlio.write_atomic(work / SWAP_JOURNAL, yamlio.dump(journal.to_doc()))
        os.fsync(fd)
        try:
            aside.mkdir()
            for name in names:
                if name in journal.replaced:
                    (work / name).rename(aside / name)
                (stage / name).rename(work / name)
        except (OSError, KeyboardInterrupt):
            _undo(work, journal)
            _close(work, fd, None)
            raise
        _close(work, fd, None)


def run(
    opts: SetupOptions,
    prompt: Callable[[package.Input], str] | None = None,
    cluster: collector.LiveCluster | None = None,
) -> SetupResult:
    """The whole setup; raises before touching ``W/out`` on any error. With ``opts.live`` the facts are checked
    against ``cluster`` (default: a client for ``opts.kubeconfig``/``opts.context``)."""
    work = opts.work_dir.resolve()
    fresh = not work.exists()
    work.mkdir(parents=True, exist_ok=True)
    try:
        return _run(opts, work, prompt, cluster)
    except BaseException:
        if fresh and not any(work.iterdir()):
            work.rmdir()  # a first setup that failed leaves no empty work dir behind
        raise


def _run(
    opts: SetupOptions,
    work: Path,
    prompt: Callable[[package.Input], str] | None,
    cluster: collector.LiveCluster | None,
) -> SetupResult:
    recover(work)  # setup reads W/out (earlier answers, the render it records as a revision)
    with stage_dir(work, ".berth-setup-") as stage:
        ref = Path(opts.ref)
        if ref.is_dir() and (ref / package.MANIFEST).is_file():
            package.load(ref)  # validate before copying
            shutil.copytree(ref, stage / "package")
        else:
            package.build(
                opts.ref,
                [("default", None)],
                stage / "package",
                opts.version,
                opts.repo,
                namespace=opts.namespace,
            )
        pkg = package.load(stage / "package")
        namespace = opts.namespace or pkg.namespace
        prior_sel, prior_answers = wizard.read_prior(work / "out" / "spec")
        selection = wizard.select(pkg, opts.base, opts.selects, prior_sel, opts.api_versions)
        answers = wizard.answer(
            pkg,
            wizard.parse_input_flags(opts.inputs),
            prior_answers,
            None if opts.non_interactive else prompt,
        )
        result, upgrade, install_only, notes, chart_notes = render_selection(
            pkg, selection, answers.effective, namespace, stage / "scratch"
        )
        if notes:
            result = split_mod.Split(
                result.ordinary,
                result.crds,
                result.secrets,
                result.hooks,
                (*result.warnings, *notes),
                result.file_names,
            )
        out = stage / "out"
        env = {
            "INSTALLER_PACKAGE_DIR": str(work / "package"),
            "INSTALLER_WORK_DIR": str(work),
            "INSTALLER_OUT_DIR": str(work / "out"),
            "INSTALLER_NAMESPACE": namespace,
            "INSTALLER_BASE": selection.base,
            "INSTALLER_SELECTED": ",".join(selection.components),
            **{f"INSTALLER_INPUT_{k.upper()}": str(v) for k, v in answers.effective.items()},
        }
        if opts.live and cluster is None:
            cluster = collector.KubeCluster(opts.kubeconfig, opts.context)
        facts = collector.collect(pkg, result, namespace, env, cluster if opts.live else None)
        spec_dir = out / "spec"
        wizard.write(spec_dir, pkg, selection, answers, namespace)
        (spec_dir / FACTS_FILE).write_text(
            yamlio.dump(wizard.spec_doc(pkg, "Facts", {"values": facts})), encoding="utf-8"
        )
        if chart_notes is not None:
            for action, text in zip(NOTES_FILES, chart_notes, strict=True):
                (spec_dir / NOTES_FILES[action]).write_text(text + "\n", encoding="utf-8")
        written = layout.write_split(result, out, pkg.name, install_only)
        hook_secrets = [
            w.path for w in written if w.role == "hook" and w.ref.kind == "Secret" and not w.ref.group
        ]
        if upgrade is not None:
            hook_secrets.append(f"{UPGRADE_DIR}/secrets/")
            hook_secrets += [
                f"{UPGRADE_DIR}/lifecycle/{e.value}/{upgrade.file_names[h.obj.ref]}"
                for h in upgrade.hooks
                if h.obj.kind == "Secret" and not h.obj.ref.group
                for e in dict.fromkeys(h.events)
            ]
        (out / ".gitignore").write_text(
            "".join(f"{p}\n" for p in ["secrets/", *hook_secrets]), encoding="utf-8"
        )
        if upgrade is not None:
            layout.write_split(upgrade, out / UPGRADE_DIR, f"{pkg.name}-upgrade")
        recorded = revisions.record(
            work / "out", work / "package", out, datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        )
        wd = Workdir(pkg, selection, answers.effective, namespace, result, install_only, upgrade, out)
        doc = plan_document(wd, str(opts.work_dir))
        (out / PLAN_FILE).parent.mkdir(parents=True, exist_ok=True)
        (out / PLAN_FILE).write_text(yamlio.dump(doc), encoding="utf-8")
        shutil.rmtree(stage / "scratch", ignore_errors=True)
        swap(stage, work, ("package", "out"))
    out_dir = work / "out"
    n_manifests = len(result.ordinary) + len(result.crds)
    lines = [
        f"Wizard wrote {out_dir}/spec/selection.yaml and inputs.yaml",
        f"Collector produced {len(facts)} fact(s) in {out_dir}/spec/facts.yaml",
        f"Base: {selection.base}; components: [{', '.join(selection.components)}]",
        f"Namespace: {namespace}",
        f"Rendered {n_manifests} manifest(s) to {out_dir}/manifests",
    ]
    if result.secrets:
        lines.append(f"Rendered {len(result.secrets)} secret(s) to {out_dir}/secrets (not uploaded)")
    n_hooks = len(result.hooks)
    events = ", ".join(e.value for e in result.events()) or "none"
    lines.append(
        f"Extracted {n_hooks} hook object(s) to {out_dir}/lifecycle (events: {events}); plan in {out_dir}/{PLAN_FILE}"
    )
    if recorded is not None:
        lines.append(
            f"Recorded the render this replaced as revision {recorded} in {out_dir}/{revisions.REVISIONS_DIR} "
            "(what upgrade prunes against and rollback goes back to)"
        )
    lines += [f"warning: {w}" for w in result.warnings]
    for u in facts.get("unmet", []):
        lines.append(f"requirement: {u['requirement']}; fix: {u['fix']}")
    return SetupResult(pkg, selection, namespace, result, facts, tuple(lines))


def load_workdir(work_dir: Path) -> Workdir:
    """Read a set-up work dir back (package, selection, answers, namespace, split, upgrade variant)."""
    work = work_dir.resolve()
    recover(work)
    out = work / "out"
    if not (out / layout.INDEX_FILE).is_file():
        raise InputError(
            "no berth setup here (out/spec/manifest-index.yaml missing); run berth install setup first",
            str(work),
        )
    if (out / revisions.PENDING_PACKAGE).is_dir():
        raise InputError(
            f"the last rollback switched out/ but stopped before restoring its package to {work / 'package'}; "
            f"finish it with: berth install rollback --work-dir {work_dir} --resume",
            str(out / revisions.PENDING_PACKAGE),
        )
    return read_workdir(out, work / "package")


def read_workdir(out: Path, package_dir: Path) -> Workdir:
    """A work dir's render in ``out`` with the package in ``package_dir`` (``W/out`` and ``W/package``, or a
    rollback's staged ``out`` with the package it restores)."""
    pkg = package.load(package_dir)
    selection, _ = wizard.read_prior(out / "spec")
    if selection is None:
        raise InputError(
            "out/spec/selection.yaml is missing or invalid; re-run berth install setup", str(out.parent)
        )
    docs = yamlio.load_file(out / "spec" / wizard.INPUTS_FILE)
    spec = (docs[0].body or {}).get("spec") or {}
    answers = {**(spec.get("defaults") or {}), **(spec.get("values") or {})}
    namespace = str(spec.get("namespace") or pkg.namespace)
    result, install_only = layout.read_split(out)
    upgrade = None
    if (out / UPGRADE_DIR / layout.INDEX_FILE).is_file():
        upgrade, _ = layout.read_split(out / UPGRADE_DIR)
    return Workdir(pkg, selection, answers, namespace, result, install_only, upgrade, out)
