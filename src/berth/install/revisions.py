"""The work dir's release history: ``W/out/revisions/<N>/``, the renders a later setup replaced.

Helm keeps every revision's manifest and hooks in the release store; an upgrade deletes the objects of the
*previous* revision that the new one no longer has, and a rollback re-applies the *target* revision's manifest and
runs that revision's rollback hooks. berth's work dir is its release store, so it needs the same record. When
``berth install setup`` (and therefore ``berth install upgrade``, which re-runs it) replaces an earlier render, it
first copies that render -- ``manifests/``, ``secrets/``, ``lifecycle/``, ``spec/`` and ``upgrade/``, exactly as
written -- to ``W/out/revisions/<N>/`` with a ``revision.yaml`` saying which package and chart it came from.
``N`` counts up from 1 and is never reused; the newest :data:`HISTORY_MAX` are kept (Helm's ``--history-max``
default). The folder lives inside ``W/out`` so a generated script, which refers to every file relative to
``out/``, can prune and roll back from it too; setup carries it across its swap of ``W/out``, like the run
receipts.

The newest revision is "the previous revision": the upgrade plan prunes against it and the rollback plan rolls
back to it. A render that was set up but never applied still becomes a revision when the next setup replaces it
(a work dir records renders, not cluster state); ``berth install status`` compares with the cluster.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from berth.install import layout
from berth.install import split as split_mod
from berth.kube import objects, yamlio
from berth.kube.errors import InputError

REVISIONS_DIR = "revisions"
"""Under ``W/out``."""
REVISION_FILE = "revision.yaml"
HISTORY_MAX = 10
"""How many revisions are kept (Helm's ``--history-max`` default)."""
SNAPSHOT = ("manifests", "secrets", "lifecycle", "spec", "upgrade", ".gitignore")
"""What of a render a revision keeps (never ``runs/``, ``revisions/`` or the review copy of the plan)."""
UPGRADE_DIR = "upgrade"


@dataclass(frozen=True)
class Revision:
    """One recorded render, read back: its install render, its ``--is-upgrade`` variant when that differed."""

    number: int
    split: split_mod.Split
    install_only: frozenset[objects.Ref]
    upgrade: split_mod.Split | None
    meta: dict[str, Any]

    @property
    def prefix(self) -> str:
        """Its folder relative to ``W/out`` (every plan file path starts with it)."""
        return f"{REVISIONS_DIR}/{self.number}/"

    @property
    def label(self) -> str:
        chart = self.meta.get("chart") or {}
        what = f"{chart.get('name')} {chart.get('version')}" if chart.get("name") else "an earlier render"
        return f"revision {self.number} ({what})"


def numbers(out: Path) -> list[int]:
    """The recorded revision numbers under ``out``, oldest first."""
    root = out / REVISIONS_DIR
    if not root.is_dir():
        return []
    return sorted(
        int(p.name) for p in root.iterdir() if p.name.isdigit() and (p / layout.INDEX_FILE).is_file()
    )


def load(out: Path, number: int) -> Revision:
    root = out / REVISIONS_DIR / str(number)
    if not (root / layout.INDEX_FILE).is_file():
        have = ", ".join(str(n) for n in numbers(out)) or "none"
        raise InputError(
            f"no revision {number} recorded (recorded: {have}); pick one of those, or re-run "
            "berth install setup with the package of the revision you want",
            str(out / REVISIONS_DIR),
        )
    result, install_only = layout.read_split(root)
    upgrade = None
    if (root / UPGRADE_DIR / layout.INDEX_FILE).is_file():
        upgrade, _ = layout.read_split(root / UPGRADE_DIR)
    meta: dict[str, Any] = {}
    if (root / REVISION_FILE).is_file():
        docs = yamlio.load_file(root / REVISION_FILE)
        body = docs[0].body if docs else None
        if isinstance(body, dict) and isinstance(body.get("spec"), dict):
            meta = body["spec"]
    return Revision(number, result, install_only, upgrade, meta)


def latest(out: Path) -> Revision | None:
    """The previous revision (the newest recorded), or None on a work dir set up only once."""
    have = numbers(out)
    return load(out, have[-1]) if have else None


def _package_meta(package_dir: Path) -> dict[str, Any]:
    """Name and chart of the package a render came from (best effort: the record is informative)."""
    path = package_dir / "berth-package.yaml"
    if not path.is_file():
        return {}
    docs = yamlio.load_file(path)
    body = docs[0].body if docs else None
    if not isinstance(body, dict):
        return {}
    meta, spec = body.get("metadata") or {}, body.get("spec") or {}
    chart = spec.get("chart") or {}
    return {
        "package": {"name": meta.get("name"), "version": meta.get("version")},
        "chart": {"name": chart.get("name"), "version": chart.get("version"), "sha256": chart.get("sha256")},
    }


def record(old_out: Path, old_package: Path, new_out: Path, recorded_at: str) -> int | None:
    """Carry ``old_out``'s revisions into ``new_out`` and add ``old_out``'s render as the next one; drop the
    oldest beyond :data:`HISTORY_MAX`. Returns the new number (None when ``old_out`` holds no render)."""
    carried = old_out / REVISIONS_DIR
    target = new_out / REVISIONS_DIR
    if carried.is_dir() and not target.exists():
        shutil.copytree(carried, target)
    if not (old_out / layout.INDEX_FILE).is_file():
        return None
    have = numbers(new_out)
    number = (have[-1] if have else 0) + 1
    dest = target / str(number)
    dest.mkdir(parents=True)
    for name in SNAPSHOT:
        src = old_out / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("plan.yaml"))
        elif src.is_file():
            shutil.copy2(src, dest / name)
    doc = {
        "apiVersion": layout.API_VERSION,
        "kind": "Revision",
        "metadata": {"name": f"revision-{number}"},
        "spec": {"revision": number, "recordedAt": recorded_at, **_package_meta(old_package)},
    }
    (dest / REVISION_FILE).write_text(yamlio.dump(doc), encoding="utf-8")
    for old in numbers(new_out)[:-HISTORY_MAX]:
        shutil.rmtree(target / str(old))
    return number
