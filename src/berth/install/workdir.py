"""A set-up work dir read back, and the plan of each action looked up from it.

``W/package`` (the reviewable package) and ``W/out`` (its render, split into files, with the recorded revisions)
are what setup leaves; every later command -- plan, script, apply, upgrade, rollback, uninstall, test, status,
verify -- starts from :func:`load_workdir` and asks :func:`build_plan` for its action's plan, so the previous
revision an upgrade prunes against and the target a rollback goes back to are chosen in one place.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from berth.install import layout, package, revisions, swap, values, wizard
from berth.install import plan as plan_mod
from berth.install import split as split_mod
from berth.kube import objects, yamlio
from berth.kube.errors import InputError

PLAN_FILE = "lifecycle/plan.yaml"
NOTES_FILES = {"install": "NOTES.txt", "upgrade": "NOTES-upgrade.txt"}
"""The chart's rendered NOTES.txt in ``out/spec/`` (install and ``--is-upgrade`` values): printed after a
successful ``apply`` and ``upgrade`` as ``helm install``/``upgrade`` print it. Absent when the chart has none."""


def release_notes(out_dir: Path, action: str) -> str:
    """The notes ``helm install`` (``action`` install) or ``helm upgrade`` would print for the render in
    ``out_dir``; empty when the chart has no NOTES.txt (or the work dir predates notes)."""
    path = out_dir / "spec" / NOTES_FILES[action]
    return path.read_text(encoding="utf-8").strip() if path.is_file() else ""


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
    release_name: str = ""
    """``--release`` as recorded (empty: the package's release name)."""

    @property
    def release(self) -> str:
        """The Helm release name the render was made for."""
        return self.release_name or self.package.release

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
    """Named by the work dir's own ``out/revisions`` (not ``wd.out_dir``, which is setup's staging copy while setup
    writes the plan, a folder gone once it is swapped in)."""
    where = str(Path(work_dir).resolve() / "out" / revisions.REVISIONS_DIR)
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
    base = plan_mod.PlanInputs(wd.split, wd.release, wd.namespace, work_dir, wait, hook_timeout)
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
        inputs = dataclasses.replace(
            base, result=target.split, install_only=target.install_only, prefix=target.prefix,
            replaced=current, remaining=kept_refs, replaced_source="the current render",
        )  # fmt: skip
        rollback = plan_mod.build(action, inputs)
        return dataclasses.replace(rollback, target=target.label, target_revision=target.number)
    if action != plan_mod.Action.UPGRADE:
        return plan_mod.build(action, dataclasses.replace(base, install_only=wd.install_only))
    inputs = dataclasses.replace(base, install_only=wd.install_only, replaced_source="")
    prev = wd.previous()
    if prev is not None:
        replaced, _ = _replaced(prev.split, prev.upgrade, prev.install_only, prev.prefix)
        _, remaining = _replaced(wd.split, wd.upgrade, wd.install_only, "")
        inputs = dataclasses.replace(
            inputs, replaced=replaced, remaining=remaining, replaced_source=prev.label
        )
    if wd.upgrade is not None:
        # The --is-upgrade render: its install-only objects are already absent from it.
        inputs = dataclasses.replace(
            inputs, result=wd.upgrade, install_only=frozenset(), prefix=f"{UPGRADE_DIR}/"
        )
    return plan_mod.build(action, inputs)


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
    spec: dict[str, Any] = {"release": wd.release, "namespace": wd.namespace, "plans": plans}
    if unavailable:
        spec["unavailable"] = unavailable
    return {
        "apiVersion": layout.API_VERSION,
        "kind": "LifecyclePlan",
        "metadata": {"name": f"{wd.package.name}-plan"},
        "spec": spec,
    }


def load_workdir(work_dir: Path) -> Workdir:
    """Read a set-up work dir back (package, selection, answers, namespace, split, upgrade variant)."""
    work = work_dir.resolve()
    swap.recover(work)
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
    answers = wizard.stored_answers(out / "spec", pkg)
    namespace = str(spec.get("namespace") or pkg.namespace or "default")
    result, install_only = layout.read_split(out)
    upgrade = None
    if (out / UPGRADE_DIR / layout.INDEX_FILE).is_file():
        upgrade, _ = layout.read_split(out / UPGRADE_DIR)
    recorded = values.read(out / "spec")
    return Workdir(
        pkg, selection, answers, namespace, result, install_only, upgrade, out, recorded.release or ""
    )
