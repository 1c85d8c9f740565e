"""``berth install export``: a set-up work dir handed to a GitOps system, written into a folder atomically.

Both exporters (:mod:`berth.install.export_argocd`, :mod:`berth.install.export_flux`) are executors of the one
:class:`~berth.install.plan.Plan`, like the script and ``apply``: they read the plans of install, upgrade and
uninstall and never re-derive Helm's order. What they share lives here: loading the work dir and its plans (the
only place the exporters touch the work-dir lookup), reading a plan object's file, writing ``DIR`` through a
sibling staging folder renamed into place (a failed export leaves ``DIR`` as it was), and where ``DIR`` sits in
its Git repository (what an Argo CD Application's ``path`` and a Flux Kustomization's ``path`` name).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from berth import __version__
from berth.install import plan, split
from berth.install import workdir as workdir_mod
from berth.kube import objects, yamlio
from berth.kube.errors import InputError
from berth.kube.hooks import HookEvent

MARKER = ".berth-export.yaml"
"""Written into every export: a later export may replace a folder that holds it, and no other non-empty one."""


@dataclass(frozen=True)
class Plans:
    """The plans an export translates, built once from the work dir."""

    install: plan.Plan
    upgrade: plan.Plan
    uninstall: plan.Plan
    unmapped: tuple[plan.Step, ...] = ()
    """Hook steps of the events a GitOps sync has no phase for (``test``, ``pre-rollback``, ``post-rollback``):
    listed, never exported."""

    def hook_step(self, event: HookEvent) -> plan.Step | None:
        """The step that runs ``event``'s hooks (install: pre/post-install, upgrade: pre/post-upgrade, uninstall:
        pre/post-delete), or None when the chart has none."""
        for p in (self.install, self.upgrade, self.uninstall):
            for s in p.steps:
                if s.phase == event.value:
                    return s
        for s in self.unmapped:
            if s.phase == event.value:
                return s
        return None


@dataclass(frozen=True)
class Source:
    """A set-up work dir as the exporters see it."""

    work_dir: Path
    out_dir: Path
    workdir: workdir_mod.Workdir
    plans: Plans

    def read(self, file: str) -> tuple[dict[str, Any], str]:
        """The object of a plan file (relative to ``W/out``) and its ``# Source:`` line ('' when it has none)."""
        path = self.out_dir / file
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise InputError(
                f"cannot read a file the plan names ({exc.strerror}); re-run setup", str(path)
            ) from exc
        found = yamlio.load_objects(text, str(path))
        if len(found) != 1:
            raise InputError(f"expected one object, found {len(found)}; re-run setup", str(path))
        first = text.splitlines()[0] if text else ""
        return found[0][1], first if first.startswith("# Source:") else ""


def load(work_dir: Path, wait: bool = False, timeout: int = plan.DEFAULT_HOOK_TIMEOUT_SECONDS) -> Source:
    """The work dir and the plans of every action a GitOps system runs (a bad work dir: :class:`InputError`)."""
    wd = workdir_mod.load_workdir(work_dir)

    def build(action: plan.Action) -> plan.Plan:
        return workdir_mod.build_plan(wd, action, str(work_dir), wait, timeout)

    return Source(work_dir, work_dir.resolve() / "out", wd, plans_of(build, wd.split, timeout))


def plans_of(build: Callable[[plan.Action], plan.Plan], render: split.Split, timeout: int) -> Plans:
    """The plans an export reads, from ``build`` (the work dir's plan builder) and the install ``render``."""
    unmapped = [s for s in build(plan.Action.TEST).steps if s.is_hook]
    for event in (HookEvent.PRE_ROLLBACK, HookEvent.POST_ROLLBACK):
        if render.hooks_for(event):  # this render's rollback hooks: what a rollback *to* it would run
            unmapped.append(plan.hook_step(event, render, timeout))
    return Plans(
        build(plan.Action.INSTALL), build(plan.Action.UPGRADE), build(plan.Action.UNINSTALL), tuple(unmapped)
    )


def ref_of(o: plan.PlanObject) -> objects.Ref:
    """The identity of a plan object (the one identity helper's type)."""
    return objects.Ref(o.group, o.kind, o.namespace, o.name)


@dataclass(frozen=True)
class OutFile:
    """One file of an export, relative to ``DIR``."""

    path: str
    data: bytes
    mode: int = 0o644


def repo_path(dest: Path) -> tuple[str, bool]:
    """``DIR`` as a path inside its Git repository (``./deploy/edge``), and whether a repository was found;
    without one, the path relative to the current folder (or DIR's name), which the README asks to check."""
    target = dest.resolve()
    for parent in (target.parent, *target.parent.parents):
        if (parent / ".git").exists():
            return "./" + target.relative_to(parent).as_posix(), True
    try:
        return "./" + target.relative_to(Path.cwd().resolve()).as_posix(), False
    except ValueError:
        return "./" + target.name, False


def _check_dest(dest: Path) -> Path:
    """The folder ``DIR`` goes in, after refusing what an export must not replace."""
    parent = dest.absolute().parent
    if dest.is_symlink() or (dest.exists() and not dest.is_dir()):
        raise InputError("exists and is not a folder; choose a new or empty folder", str(dest))
    if dest.is_dir() and any(dest.iterdir()) and not (dest / MARKER).is_file():
        raise InputError(
            f"is not empty and holds no {MARKER}: it is not an earlier berth export, so nothing in it is "
            "replaced; choose a new or empty folder",
            str(dest),
        )
    if not parent.is_dir():
        raise InputError(f"the folder it goes in does not exist ({parent}); create it first", str(dest))
    return parent


def write_tree(dest: Path, files: list[OutFile], kind: str) -> None:
    """Write ``files`` as the folder ``dest``: staged in a sibling folder, then renamed into place, so ``dest`` holds
    the old export or the new one, never a part. An earlier export in ``dest`` (it holds :data:`MARKER`) is moved
    aside by a rename and removed once the new one is in place. An unwritable place is one :class:`InputError`
    (exit 2) with nothing written."""
    parent = _check_dest(dest)
    try:
        stage = Path(tempfile.mkdtemp(prefix=f".{dest.name}.berth-export-", dir=parent))
    except OSError as exc:
        raise InputError(
            f"cannot write the export here ({exc.strerror or exc}): it is staged next to it, in {parent}",
            str(dest),
        ) from exc
    aside: Path | None = None
    try:
        os.chmod(stage, 0o755)
        marker = {"apiVersion": "berth.dev/v1alpha1", "kind": "Export", "metadata": {"name": dest.name},
                  "spec": {"for": kind, "berth": __version__}}  # fmt: skip
        for f in [*files, OutFile(MARKER, yamlio.dump(marker).encode("utf-8"))]:
            path = stage / f.path
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, f.mode)
            with os.fdopen(fd, "wb") as fh:
                fh.write(f.data)
            os.chmod(path, f.mode)
            if f.mode & 0o077 == 0:
                os.chmod(path.parent, 0o700)  # a folder of owner-only files (Secrets) is owner-only too
        if dest.is_dir():
            aside = Path(tempfile.mkdtemp(prefix=f".{dest.name}.berth-old-", dir=parent))
            dest.rename(aside / "old")
        stage.rename(dest)
    except OSError as exc:
        if aside is not None and (aside / "old").exists() and not dest.exists():
            (aside / "old").rename(dest)
        raise InputError(f"cannot write the export here ({exc.strerror or exc})", str(dest)) from exc
    finally:
        shutil.rmtree(stage, ignore_errors=True)
        if aside is not None:
            shutil.rmtree(aside, ignore_errors=True)


def gitignore(paths: list[str]) -> OutFile:
    return OutFile(".gitignore", "".join(f"{p}\n" for p in paths).encode("utf-8"))


def text_file(path: str, text: str, mode: int = 0o644) -> OutFile:
    return OutFile(path, text.encode("utf-8"), mode)


def yaml_file(path: str, body: Any, comment: str = "", mode: int = 0o644) -> OutFile:
    head = f"{comment}\n" if comment else ""
    return text_file(path, head + yamlio.dump(body), mode)


def header(src: Source, kind: str) -> list[str]:
    """The first lines of every export README: what was exported from where."""
    pkg = src.workdir.package
    sel = src.workdir.selection
    comps = ", ".join(sel.components) or "none"
    return [
        f"# {pkg.release}: exported for {kind} by berth {__version__}",
        "",
        f"Generated by `berth install export` from the work dir `{src.work_dir}`: package {pkg.name} "
        f"{pkg.version}, chart {pkg.chart.name} {pkg.chart.version} (sha256 `{pkg.chart.sha256}`), base "
        f"{sel.base}, components {comps}, release {pkg.release} in namespace {src.workdir.namespace}. Do not "
        "edit: export again after the next `berth install setup`.",
        "",
    ]
