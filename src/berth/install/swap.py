"""The one swap of a work dir: stage folders moved over ``W/package`` and ``W/out`` under a journal.

setup replaces both folders at once, rollback switches ``W/out``; either way a command killed between renames must
never leave a ``W/package`` and ``W/out`` that do not belong together. :func:`swap` journals its renames in
``W/.berth-swap.yaml``; :func:`recover` (called by every command that loads a work dir) finishes or undoes a swap
a dead process left half done, and removes the scratch folders (:func:`stage_dir`) of commands that died before
any swap.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from berth.install import layout
from berth.kube import yamlio
from berth.kube.errors import InputError

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
