"""What each action writes to the Helm release record, and when: the status moves of helm/helm ``pkg/action``.

::

    install    create v1 pending-install "Initial install underway" -> run -> deployed "Install complete"
               | failed "Release \\"R\\" failed: <error>"
    upgrade    create v(last+1) pending-upgrade "Preparing upgrade" -> run -> the previous deployed revision
               superseded, the new one deployed "Upgrade complete" | the new one failed "Upgrade \\"R\\" failed:
               <error>" (the previous one stays deployed)
    rollback   create v(last+1) pending-rollback "Rollback to N" with the target's chart, values, manifest and
               hooks -> run -> every deployed revision superseded, the new one deployed | failed "Rollback \\"R\\"
               failed: <error>"
    uninstall  run -> every record deleted, or with --keep-history the last one uninstalled "Uninstallation
               complete" (deployed ones superseded) | a run that stopped after deleting anything leaves it
               uninstalling "Deletion in progress (or silently failed)"
    test       the last revision's test hooks get their last run

Every hook the run executed gets ``last_run`` (started, completed, ``Succeeded``/``Failed``) from the run receipt,
as Helm's ``execHook`` sets it. Two deliberate differences: a rollback whose hook fails is recorded ``failed``
(Helm 4.1 leaves it ``pending-rollback``, which blocks every later upgrade), and ``--resume`` continues the
revision the stopped run created instead of creating another one.

Before an install, the release name must be free, as ``helm install`` checks (``availableName``): berth refuses a
name with records unless the work dir's own stopped install made them; an upgrade refuses a release whose last
revision is pending (another operation in progress) unless it is this work dir's stopped run being resumed.
"""

from __future__ import annotations

import contextlib
import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from berth.install import plan as plan_mod
from berth.install import receipt, release, revisions, values, workdir
from berth.install import split as split_mod
from berth.install.release import Status
from berth.kube import canonical
from berth.kube.errors import BerthError, InputError
from berth.kube.hooks import HookEvent

HOOK_PHASES = frozenset(e.value for e in HookEvent)
HELM_REVISION_FIELD = "helmRevision"
"""Receipt field of a deploying run: the release revision it recorded (what tells this work dir's revisions from
ones ``helm`` made since)."""


@dataclass
class Recorder:
    """The record one run writes (or, for uninstall and test, updates) and the history it was read with."""

    store: release.Store
    action: plan_mod.Action
    record: dict[str, Any]
    history: list[dict[str, Any]]
    exists: bool = False
    """The record is already stored (a resumed run, uninstall, test): update it instead of creating it."""
    keep_history: bool = False
    notes: list[str] = field(default_factory=list)
    """Lines for the run's summary (``Release R revision N: deployed``)."""
    warnings: list[str] = field(default_factory=list)
    """A record the run could not write: the run's outcome stands (Helm only logs it, too), the line says so."""

    @property
    def label(self) -> str:
        return f"release {self.store.name} revision {release.version_of(self.record)}"

    def begin(self) -> None:
        """Store the pending revision before anything is written to the cluster (Helm creates it first)."""
        if self.action in (plan_mod.Action.UNINSTALL, plan_mod.Action.TEST):
            return
        if self.exists:
            self.store.update(self.record)
        else:
            max_history = release.HISTORY_MAX if self.action != plan_mod.Action.INSTALL else 0
            self.store.create(self.record, max_history, self.history)
            self.exists = True

    def succeeded(self, rec: receipt.RunReceipt) -> None:
        try:
            self._succeeded(rec)
        except BerthError as exc:
            self.warnings.append(
                f"the {self.action.value} succeeded, but {self.label} could not be recorded ({exc}); helm "
                "shows the release as it was before this run"
            )

    def _succeeded(self, rec: receipt.RunReceipt) -> None:
        set_last_runs(self.record, rec)
        info = self.record["info"]
        if self.action == plan_mod.Action.UNINSTALL:
            self._uninstalled()
            return
        if self.action == plan_mod.Action.TEST:
            self.store.update(self.record)
            self.notes.append(f"Recorded the test hooks' last run in {self.label}")
            return
        mine = release.version_of(self.record)
        for other in self.history:
            if release.version_of(other) != mine and release.status_of(other) == Status.DEPLOYED.value:
                other["info"]["status"] = Status.SUPERSEDED.value
                if self.action == plan_mod.Action.INSTALL:
                    other["info"]["description"] = "superseded by new release"
                self.store.update(other)
        info["status"] = Status.DEPLOYED.value
        info["description"] = {
            plan_mod.Action.INSTALL: "Install complete",
            plan_mod.Action.UPGRADE: "Upgrade complete",
        }.get(self.action, info.get("description", ""))
        self.store.update(self.record)
        rec.spec[HELM_REVISION_FIELD] = release.version_of(self.record)
        rec.save()
        self.notes.append(f"Recorded {self.label}: deployed ({info['description']}; helm history reads it)")

    def _uninstalled(self) -> None:
        if not self.keep_history:
            for rel in self.history:
                self.store.delete(release.version_of(rel))
            self.notes.append(f"Deleted the {len(self.history)} record(s) of release {self.store.name}")
            return
        info = self.record["info"]
        info.update(status=Status.UNINSTALLED.value, description="Uninstallation complete")
        info.setdefault("deleted", release.now())
        self.store.update(self.record)
        for other in self.history:
            if other is not self.record and release.status_of(other) == Status.DEPLOYED.value:
                other["info"]["status"] = Status.SUPERSEDED.value
                self.store.update(other)
        self.notes.append(f"Kept the history of release {self.store.name}: {self.label} is uninstalled")

    def failed(self, rec: receipt.RunReceipt, error: str) -> None:
        """Mark the run's revision failed (best effort, as Helm's ``failRelease``: an API server that went away
        leaves it pending; ``--resume`` continues that revision)."""
        if not self.exists:
            return  # stopped before the record was created (in the namespace step): nothing to mark
        with contextlib.suppress(BerthError):
            self._failed(rec, error)

    def _failed(self, rec: receipt.RunReceipt, error: str) -> None:
        set_last_runs(self.record, rec)
        first_line = error.splitlines()[0] if error else "stopped"
        name = self.store.name
        if self.action == plan_mod.Action.UNINSTALL:
            deleted = any(
                item.get("action") == "deleted"
                for step in rec.spec.get("steps") or []
                if step.get("phase") == plan_mod.Phase.DELETE.value
                for item in step.get("objects") or []
            )
            if deleted:
                info = self.record["info"]
                info.update(
                    status=Status.UNINSTALLING.value, description="Deletion in progress (or silently failed)"
                )
                info.setdefault("deleted", release.now())
                self.store.update(self.record)
            return
        if self.action == plan_mod.Action.TEST:
            self.store.update(self.record)
            return
        what = {plan_mod.Action.INSTALL: "Release", plan_mod.Action.UPGRADE: "Upgrade"}.get(
            self.action, "Rollback"
        )
        self.record["info"].update(
            status=Status.FAILED.value, description=f'{what} "{name}" failed: {first_line}'
        )
        self.store.update(self.record)


def set_last_runs(rel: dict[str, Any], rec: receipt.RunReceipt) -> None:
    """``last_run`` of every hook the run executed: started when created, completed and judged when it
    succeeded or failed (the receipt's times); a hook listed under several events keeps its latest run."""
    runs: dict[tuple[str, str], dict[str, Any]] = {}
    for step in rec.spec.get("steps") or []:
        if step.get("phase") not in HOOK_PHASES:
            continue
        for item in step.get("objects") or []:
            key = (str(item.get("kind")), str(item.get("name")))
            action, at = item.get("action"), str(item.get("at") or "")
            if action in ("created", "applied"):
                runs[key] = {"started_at": at, "phase": "Running"}
            elif action in ("succeeded", "failed") and key in runs:
                runs[key].update(completed_at=at, phase="Succeeded" if action == "succeeded" else "Failed")
    for hook in rel.get("hooks") or []:
        run = runs.get((str(hook.get("kind")), str(hook.get("name"))))
        if run is not None:
            hook["last_run"] = run
            hook.setdefault("delete_policies", ["before-hook-creation"])  # execHook's default, set as it runs


# ---- the records each action writes ---------------------------------------------------------------------------


def notes_of(out_dir: Path, action: str) -> str:
    return workdir.release_notes(out_dir, action)


def render_record(
    wd: workdir.Workdir,
    version: int,
    status: Status,
    description: str,
    first_deployed: str,
    variant: str = "install",
) -> dict[str, Any]:
    """The record of the render ``wd`` holds (its ``variant``: the install render, or the ``--is-upgrade`` one an
    upgrade applies), with the chart and values setup recorded."""
    out_dir = wd.out_dir or Path()
    base = values.read_base(out_dir) or {}
    result, skip = _variant(wd.split, wd.upgrade, wd.install_only, variant)
    stamp = release.now()
    info = release.info(status, description, first_deployed or stamp, stamp, notes_of(out_dir, variant))
    return release.release(
        wd.release,
        wd.namespace,
        version,
        info,
        base,
        release.manifest(result, skip),
        release.hooks(result, skip),
    )


def _variant(
    split: split_mod.Split, upgrade: split_mod.Split | None, install_only: frozenset[Any], variant: str
) -> tuple[split_mod.Split, frozenset[Any]]:
    if variant == "upgrade":
        return (upgrade, frozenset()) if upgrade is not None else (split, install_only)
    return split, frozenset()


def _ours(work: Path, rel_name: str, namespace: str, context: str, action: str) -> bool:
    """Whether this work dir ran ``action`` (not a dry run) for the release on ``context``: the records a
    stopped run of it left are its own to continue."""
    return any(
        not b["spec"].get("dryRun")
        and b["spec"].get("release") == rel_name
        and b["spec"].get("namespace") == namespace
        and b["spec"].get("context") == context
        for _, b in receipt.receipts(work, action)
    )


def describe(rel: dict[str, Any]) -> str:
    chart = (rel.get("chart") or {}).get("metadata") or {}
    return (
        f"revision {release.version_of(rel)} ({release.status_of(rel)}, chart {chart.get('name')}-"
        f"{chart.get('version')}, {(rel.get('info') or {}).get('description') or 'no description'})"
    )


def for_install(store: release.Store, wd: workdir.Workdir, work: Path, context: str) -> Recorder:
    """An install's record (v1), or the one this work dir's stopped install left; refuses a name in use."""
    history = store.history()
    last = history[-1] if history else None
    if last is None:
        rel = render_record(wd, 1, Status.PENDING_INSTALL, "Initial install underway", "")
        return Recorder(store, plan_mod.Action.INSTALL, rel, history)
    pending = release.status_of(last) in (Status.PENDING_INSTALL.value, Status.FAILED.value)
    if pending and len(history) == 1 and _ours(work, wd.release, wd.namespace, context, "install"):
        first = str((last.get("info") or {}).get("first_deployed") or "")
        rel = render_record(wd, 1, Status.PENDING_INSTALL, "Initial install underway", first)
        return Recorder(store, plan_mod.Action.INSTALL, rel, history, exists=True)
    raise InputError(
        f"cannot reuse a name that is still in use: release {wd.release} in namespace {wd.namespace} has "
        f"{len(history)} record(s) on context {context}, the last {describe(last)}. Upgrade it instead (berth "
        f"adopts it, values and history): berth install upgrade --release {wd.release} -n {wd.namespace} "
        f"--work-dir {work} (add --pull CHART to re-render)",
        f"Secret {wd.namespace}/{release.record_name(wd.release, release.version_of(last))}",
    )


def for_reapply(store: release.Store, wd: workdir.Workdir, variant: str, work: Path) -> Recorder | None:
    """``apply`` on a release this work dir installed: nothing to record, unless the release has no record at all
    (installed by a berth that wrote none): then it gets its first one. Refuses when the deployed revision holds
    other objects than the render (``helm upgrade`` or ``rollback`` changed the release since): re-applying would
    undo that behind Helm's back. Only revisions newer than every one this work dir recorded count (a rollback
    the generated script ran leaves the records as they were: not someone else's change)."""
    history = store.history()
    if not history:
        rel = render_record(wd, 1, Status.PENDING_INSTALL, "Install complete", "", variant)
        return Recorder(store, plan_mod.Action.INSTALL, rel, history)
    refuse_if_changed(
        history, wd, variant, work, "re-applying would undo that", f"Upgrade to this render instead: berth install "
        f"upgrade --work-dir {work}"
    )  # fmt: skip
    return None


def changed_outside(
    history: list[dict[str, Any]], wd: workdir.Workdir, variant: str, work: Path, names_only: bool = False
) -> dict[str, Any] | None:
    """The deployed revision when it holds other objects than the render this work dir applied and is newer than
    every revision it recorded (``helm upgrade`` or ``rollback`` changed the release since); else None. Only
    revisions newer than every one this work dir recorded count (a rollback the generated script ran leaves the
    records as they were: not someone else's change). ``names_only``: only which objects, not their content,
    counts (what an uninstall deletes)."""
    deployed = release.Store.deployed(history)
    mine = [
        int(b["spec"][HELM_REVISION_FIELD])
        for _, b in receipt.receipts(work)
        if isinstance(b["spec"].get(HELM_REVISION_FIELD), int)
        and (b["spec"].get("release"), b["spec"].get("namespace")) == (wd.release, wd.namespace)
    ]
    if deployed is None or not mine or release.version_of(deployed) <= max(mine):
        return None
    result, skip = _variant(wd.split, wd.upgrade, wd.install_only, variant)
    theirs, ours = _objects(release.parsed(deployed)), _objects(without(result, skip))
    return deployed if ((set(theirs) != set(ours)) if names_only else (theirs != ours)) else None


def refuse_if_changed(
    history: list[dict[str, Any]],
    wd: workdir.Workdir,
    variant: str,
    work: Path,
    consequence: str,
    fix: str,
    names_only: bool = False,
) -> None:
    """Refuse (exit 2, naming the release record) when :func:`changed_outside` finds the release changed."""
    deployed = changed_outside(history, wd, variant, work, names_only)
    if deployed is not None:
        raise InputError(
            f"release {wd.release} in namespace {wd.namespace} changed since this work dir applied it: its "
            f"deployed {describe(deployed)} holds other objects than {work / 'out'}; {consequence}. {fix}",
            f"Secret {wd.namespace}/{release.record_name(wd.release, release.version_of(deployed))}",
        )


def current(history: list[dict[str, Any]]) -> dict[str, Any] | None:
    """What an upgrade replaces (``prepareUpgrade``): the deployed revision, else a failed or superseded last one."""
    deployed = release.Store.deployed(history)
    if deployed is not None:
        return deployed
    last = history[-1] if history else None
    if last is not None and release.status_of(last) in (Status.FAILED.value, Status.SUPERSEDED.value):
        return last
    return None


def _next_version(
    history: list[dict[str, Any]], work: Path, rel_name: str, ns: str, context: str, action: str, resume: bool
) -> tuple[int, bool]:
    """The revision a run writes and whether it exists already (a resumed run's); refuses a pending last revision
    that is not this work dir's stopped run (``errPending``)."""
    last = history[-1] if history else None
    if last is None:
        return 1, False
    if release.status_of(last) in {s.value for s in release.PENDING} or (
        resume and release.status_of(last) == Status.FAILED.value
    ):
        if resume and _ours(work, rel_name, ns, context, action):
            return release.version_of(last), True
        if release.status_of(last) != Status.FAILED.value:
            raise InputError(
                f"another operation (install/upgrade/rollback) is in progress: release {rel_name} is at "
                f"{describe(last)}; if it is this work dir's stopped run, continue it with --resume",
                f"Secret {ns}/{release.record_name(rel_name, release.version_of(last))}",
            )
    return release.version_of(last) + 1, False


def for_upgrade(
    store: release.Store, wd: workdir.Workdir, work: Path, context: str, variant: str, resume: bool
) -> Recorder:
    history = store.history()
    version, exists = _next_version(history, work, wd.release, wd.namespace, context, "upgrade", resume)
    replaced = current(history)
    first = str(((replaced or {}).get("info") or {}).get("first_deployed") or "")
    rel = render_record(wd, version, Status.PENDING_UPGRADE, "Preparing upgrade", first, variant)
    return Recorder(store, plan_mod.Action.UPGRADE, rel, history, exists=exists)


def _objects(result: split_mod.Split) -> dict[str, str]:
    return {o.ref.key: canonical.canonical_json(o.body) for o in result.all_objects()}


def for_rollback(
    store: release.Store,
    wd: workdir.Workdir,
    target: revisions.Revision,
    work: Path,
    context: str,
    resume: bool,
) -> Recorder:
    """A rollback's record: as ``helm rollback`` copies the target revision's record (chart, values, manifest,
    hooks, notes), when a record holds exactly the target's objects; else built from the target render."""
    history = store.history()
    version, exists = _next_version(history, work, wd.release, wd.namespace, context, "rollback", resume)
    replaced = current(history) or (history[-1] if history else None)
    first = str(((replaced or {}).get("info") or {}).get("first_deployed") or "") or release.now()
    wanted = _objects(without(target.split, target.install_only))
    match = None
    for rel in reversed(history):
        if release.version_of(rel) != version and _objects(release.parsed(rel)) == wanted:
            match = rel
            break
    stamp = release.now()
    if match is not None:
        description = f"Rollback to {release.version_of(match)}"
        notes = str((match.get("info") or {}).get("notes") or "")
        info = release.info(Status.PENDING_ROLLBACK, description, first, stamp, notes)
        rel = release.release(
            wd.release, wd.namespace, version, info,
            {"chart": match.get("chart"), "config": match.get("config")},
            str(match.get("manifest") or ""), copy.deepcopy(match.get("hooks") or []),
        )  # fmt: skip
    else:
        out = (wd.out_dir or work / "out") / target.prefix
        base = values.read_base(out) or {}
        info = release.info(
            Status.PENDING_ROLLBACK, f"Rollback to {target.label}", first, stamp, notes_of(out, "install")
        )
        rel = release.release(
            wd.release, wd.namespace, version, info, base,
            release.manifest(target.split, target.install_only), release.hooks(target.split, target.install_only),
        )  # fmt: skip
    return Recorder(store, plan_mod.Action.ROLLBACK, rel, history, exists=exists)


def without(result: split_mod.Split, skip: frozenset[Any]) -> split_mod.Split:
    """``result`` without the objects in ``skip`` (a rollback neither applies nor records install-only ones)."""
    return split_mod.Split(
        tuple(o for o in result.ordinary if o.ref not in skip),
        tuple(o for o in result.crds if o.ref not in skip and not o.from_crds_dir),
        tuple(o for o in result.secrets if o.ref not in skip),
        tuple(h for h in result.hooks if h.obj.ref not in skip),
    )


def for_uninstall(
    store: release.Store, keep_history: bool, wd: workdir.Workdir, variant: str, work: Path
) -> Recorder | None:
    """The last revision, which uninstall marks (None: the release has no record). Refuses when Helm changed the
    release since this work dir applied it: the work dir's render would not name what the release now runs, and
    uninstalling from it would leave those objects behind with no record of them."""
    history = store.history()
    if not history:
        return None
    refuse_if_changed(
        history, wd, variant, work, "uninstalling from this work dir would leave behind what it does not know",
        f"Adopt the release first (berth install upgrade --work-dir NEW --release {wd.release} -n {wd.namespace} "
        f"--reuse-values --pull CHART), or uninstall it with helm uninstall {wd.release} -n {wd.namespace}",
        names_only=True,
    )  # fmt: skip
    return Recorder(
        store, plan_mod.Action.UNINSTALL, history[-1], history, exists=True, keep_history=keep_history
    )


def for_test(store: release.Store) -> Recorder | None:
    history = store.history()
    if not history:
        return None
    return Recorder(store, plan_mod.Action.TEST, history[-1], history, exists=True)
