"""The work dir's release history: ``W/out/revisions/<N>/``, the renders a later setup replaced.

Helm keeps every revision's manifest and hooks in the release store; an upgrade deletes the objects of the
*previous* revision that the new one no longer has, and a rollback re-applies the *target* revision's manifest and
runs that revision's rollback hooks. berth's work dir is its release store, so it needs the same record. When
``berth install setup`` (and therefore ``berth install upgrade``, which re-runs it) replaces an earlier render, it
first copies that render -- ``manifests/``, ``secrets/``, ``lifecycle/``, ``spec/`` and ``upgrade/``, exactly as
written -- to ``W/out/revisions/<N>/`` (with ``release/``, the chart and values of its release record) with a ``revision.yaml`` saying which package and chart it came from, and
the package itself (``package/``: what ``W/package`` held for that render -- the manifest, the locked chart
archive, the values files -- without the base review renders, which those files reproduce: a rollback that
restores the package renders them again, :func:`berth.install.package.restore_base_renders`, unless the package
never had them: :data:`NO_BASE_RENDERS`). Helm keeps the chart
with every release revision for the same reason: ``helm rollback`` makes the target's chart the release's chart
again, so ``berth install rollback`` restores ``W/package`` from the target revision and ``verify`` and the next
revision's labels see the package the render came from. ``N`` counts up from 1 and is never reused; the newest :data:`HISTORY_MAX` are kept (Helm's ``--history-max``
default). The folder lives inside ``W/out`` so a generated script, which refers to every file relative to
``out/``, can prune and roll back from it too; setup carries it across its swap of ``W/out``, like the run
receipts.

The newest revision is "the previous revision": the upgrade plan prunes against it and the rollback plan rolls
back to it. A render that was set up but never applied still becomes a revision when the next setup replaces it
(a work dir records renders, not cluster state); ``berth install status`` compares with the cluster.

A package is kept only when it is the render's own: the render's ``spec/selection.yaml`` names its package and
version, and when ``W/package`` names another (a work dir rolled back to a revision recorded before packages were
kept, whose ``W/package`` stayed the newer one), the revision is labelled from the render's spec and keeps no
package rather than a wrong one. A revision without ``package/`` still rolls back; ``W/package`` then stays.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from berth.install import layout, values, wizard
from berth.install import package as package_mod
from berth.install import split as split_mod
from berth.kube import objects, yamlio
from berth.kube.errors import InputError

REVISIONS_DIR = "revisions"
"""Under ``W/out``."""
REVISION_FILE = "revision.yaml"
HISTORY_MAX = 10
"""How many revisions are kept (Helm's ``--history-max`` default)."""
SNAPSHOT = ("manifests", "secrets", "lifecycle", "spec", "upgrade", "release", ".gitignore")
"""What of a render a revision keeps (never ``runs/``, ``revisions/`` or the review copy of the plan)."""
UPGRADE_DIR = "upgrade"
PACKAGE_DIR = "package"
"""Under a revision: the package its render came from (absent in revisions recorded before packages were kept)."""
PENDING_PACKAGE = ".rollback-package"
NO_BASE_RENDERS = ".no-base-renders"
"""Marks a kept package that had no base review renders to begin with (a work dir's own package: setup of a chart
packages it without them, since ``W/out`` holds its render), so a rollback does not render them."""
"""Under ``W/out``: a rollback's target package, swapped in with ``W/out`` and moved to ``W/package`` right after
(:mod:`berth.install.rollback`); while it exists, it is the package of the render in ``W/out``."""


@dataclass(frozen=True)
class Revision:
    """One recorded render, read back: its install render, its ``--is-upgrade`` variant when that differed."""

    number: int
    split: split_mod.Split
    install_only: frozenset[objects.Ref]
    upgrade: split_mod.Split | None
    meta: dict[str, Any]
    package: Path | None = None
    """The kept package folder (None: recorded before packages were kept, or its package was not the render's)."""

    @property
    def prefix(self) -> str:
        """Its folder relative to ``W/out`` (every plan file path starts with it)."""
        return f"{REVISIONS_DIR}/{self.number}/"

    @property
    def label(self) -> str:
        chart = self.meta.get("chart") or self.meta.get("package") or {}
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
    stamp = _stamp(root)
    known = _LOADED.get(stamp)
    if known is not None:
        return known
    loaded = _load(root, number)
    _LOADED.clear()  # one revision is read again and again in a command (the diff, the plan, ownership): keep one
    _LOADED[stamp] = loaded
    return loaded


_LOADED: dict[tuple[Any, ...], Revision] = {}


def _stamp(root: Path) -> tuple[Any, ...]:
    """What identifies a recorded revision as read: its folder and the identity of every file in it (a file added,
    removed, replaced or written changes it). A few milliseconds of ``stat`` against reading and splitting the
    whole render again."""
    out: list[Any] = [str(root.resolve())]
    for folder, _dirs, names in os.walk(root):
        for name in sorted(names):
            with contextlib.suppress(OSError):
                st = os.stat(os.path.join(folder, name))
                out.append((folder, name, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    return tuple(out)


def _load(root: Path, number: int) -> Revision:
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
    kept = root / PACKAGE_DIR
    return Revision(
        number, result, install_only, upgrade, meta, kept if (kept / package_mod.MANIFEST).is_file() else None
    )


def latest(out: Path) -> Revision | None:
    """The previous revision (the newest recorded), or None on a work dir set up only once."""
    have = numbers(out)
    return load(out, have[-1]) if have else None


def _manifest(package_dir: Path) -> dict[str, Any]:
    """The package manifest's body, or {} (best effort: the record is informative)."""
    path = package_dir / package_mod.MANIFEST
    if not path.is_file():
        return {}
    docs = yamlio.load_file(path)
    body = docs[0].body if docs else None
    return body if isinstance(body, dict) else {}


def _render_package(out: Path) -> dict[str, Any]:
    """The package name and version a render's ``spec/selection.yaml`` says it came from ({} when unreadable)."""
    path = out / "spec" / wizard.SELECTION_FILE
    if not path.is_file():
        return {}
    docs = yamlio.load_file(path)
    body = docs[0].body if docs else None
    spec = body.get("spec") if isinstance(body, dict) else None
    if not isinstance(spec, dict) or not spec.get("package"):
        return {}
    return {"name": spec.get("package"), "version": spec.get("packageVersion")}


def _package_meta(body: dict[str, Any]) -> dict[str, Any]:
    """Name and chart of a package, from its manifest's body."""
    meta, spec = body.get("metadata") or {}, body.get("spec") or {}
    chart = spec.get("chart") or {}
    return {
        "package": {"name": meta.get("name"), "version": meta.get("version")},
        "chart": {"name": chart.get("name"), "version": chart.get("version"), "sha256": chart.get("sha256")},
    }


def _keep_package(package_dir: Path, dest: Path) -> None:
    """Copy the package without its base review renders (``bases/<b>/render/``: derived from the archive and the
    values files, so a second copy of them would only grow every revision); a file the manifest names is kept
    even if it lives there."""
    body = _manifest(package_dir)
    spec = body.get("spec") or {}
    named = [str((spec.get("chart") or {}).get("archive") or "")]
    named += [
        str(p.get("values") or "") for p in [*(spec.get("bases") or []), *(spec.get("components") or [])]
    ]

    def ignore(folder: str, names: list[str]) -> set[str]:
        rel = Path(folder).relative_to(package_dir).parts
        if len(rel) == 2 and rel[0] == "bases" and "render" in names:
            prefix = f"bases/{rel[1]}/render/"
            if not any(n.startswith(prefix) for n in named):
                return {"render"}
        return set()

    shutil.copytree(package_dir, dest, ignore=ignore, copy_function=layout.link_or_copy)
    if not any((package_dir / "bases").glob("*/render")):
        (dest / NO_BASE_RENDERS).write_text("", encoding="utf-8")


def record(old_out: Path, old_package: Path, new_out: Path, recorded_at: str) -> int | None:
    """Carry ``old_out``'s revisions into ``new_out`` and add ``old_out``'s render, with ``old_package`` when that
    is the render's package, as the next one; drop the oldest beyond :data:`HISTORY_MAX`. Returns the new number
    (None when ``old_out`` holds no render)."""
    carried = old_out / REVISIONS_DIR
    target = new_out / REVISIONS_DIR
    if carried.is_dir() and not target.exists():  # links: a revision is written once, never in place
        shutil.copytree(carried, target, copy_function=layout.link_or_copy)
    if not (old_out / layout.INDEX_FILE).is_file():
        return None
    have = numbers(new_out)
    number = (have[-1] if have else 0) + 1
    dest = target / str(number)
    dest.mkdir(parents=True)
    for name in SNAPSHOT:
        src = old_out / name
        if src.is_dir():
            shutil.copytree(
                src,
                dest / name,
                ignore=shutil.ignore_patterns("plan.yaml"),
                copy_function=layout.link_or_copy,
            )
        elif src.is_file():
            shutil.copy2(src, dest / name)
    if (old_out / PENDING_PACKAGE / package_mod.MANIFEST).is_file():
        old_package = old_out / PENDING_PACKAGE  # a rollback stopped before moving it to W/package
    body, rendered_from = _manifest(old_package), _render_package(old_out)
    meta = _package_meta(body) if body else {}
    if meta and rendered_from and rendered_from != meta["package"]:
        meta = {"package": rendered_from}  # W/package is not this render's: label from the render, keep none
    elif meta:
        _keep_package(old_package, dest / PACKAGE_DIR)
    elif rendered_from:
        meta = {"package": rendered_from}
    doc = {
        "apiVersion": layout.API_VERSION,
        "kind": "Revision",
        "metadata": {"name": f"revision-{number}"},
        "spec": {"revision": number, "recordedAt": recorded_at, **meta},
    }
    (dest / REVISION_FILE).write_text(yamlio.dump(doc), encoding="utf-8")
    for old in numbers(new_out)[:-HISTORY_MAX]:
        shutil.rmtree(target / str(old))
    return number


def record_release(
    out: Path, result: split_mod.Split, base: dict[str, Any], helm_revision: int, recorded_at: str
) -> int:
    """Record a release revision another tool deployed (a Helm release record's manifest and hooks, parsed) as the
    next revision of ``out``: what an upgrade adopting that release prunes against and a rollback goes back to.
    Its ``release/`` holds the record's chart and values; it keeps no package (the record holds no archive)."""
    have = numbers(out)
    number = (have[-1] if have else 0) + 1
    dest = out / REVISIONS_DIR / str(number)
    meta = (base.get("chart") or {}).get("metadata") or {}
    layout.write_split(result, dest, f"{meta.get('name') or 'release'}-revision-{number}")
    values.write_base(dest, base)
    doc = {
        "apiVersion": layout.API_VERSION,
        "kind": "Revision",
        "metadata": {"name": f"revision-{number}"},
        "spec": {
            "revision": number,
            "recordedAt": recorded_at,
            "chart": {"name": meta.get("name"), "version": meta.get("version")},
            "helmRevision": helm_revision,
        },
    }
    (dest / REVISION_FILE).write_text(yamlio.dump(doc), encoding="utf-8")
    return number
