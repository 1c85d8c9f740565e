"""The journaled swap of ``W/package`` and ``W/out``: a process killed between its renames leaves a journal, and the
next command that loads the work dir finishes the swap (every new folder in place) or undoes it (otherwise), so the
two folders always belong together and no temp folder is left. A failed rename or Ctrl-C undoes it at once."""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from berth.install import package, revisions, swap
from berth.kube import yamlio

from .conftest import Run, edge_next_chart, tree_digest

NAMES = ("package", "out")


class Killed(BaseException):
    """Stands for kill -9 or a power loss: nothing catches it (``except OSError`` and ``KeyboardInterrupt`` do
    not), so whatever the swap did so far stays on disk."""


def leftovers(work: Path) -> list[str]:
    return sorted(p.name for p in work.iterdir() if p.name.startswith(".berth-"))


def kill_at(
    monkeypatch: pytest.MonkeyPatch,
    k: int,
    after: bool,
    counted: Callable[[], bool] = lambda: True,
    on_kill: Callable[[], None] = lambda: None,
) -> None:
    """Make the k-th counted ``Path.rename`` raise :class:`Killed`, before or after it moved anything (calling
    ``on_kill`` first); the renames after it work again."""
    real = Path.rename
    calls = [0]

    def rename(self: Path, target: Any) -> Path:
        if not counted():
            return real(self, target)
        calls[0] += 1
        if calls[0] != k:
            return real(self, target)
        if after:
            real(self, target)
        on_kill()
        raise Killed(f"killed {'after' if after else 'before'} rename {k}: {self} -> {target}")

    monkeypatch.setattr(Path, "rename", rename)


# ---- the swap on its own: two folders each holding a version marker ------------------------------------------


def work_dir(tmp_path: Path, old: bool = True) -> tuple[Path, Path]:
    """``W`` with ``package`` and ``out`` at version ``old`` (unless ``old`` is False), and a stage at ``new``."""
    work = tmp_path / "w"
    work.mkdir()
    stage = Path(tempfile.mkdtemp(prefix=".berth-setup-", dir=work))
    for root, version in ((work, "old"), (stage, "new")):
        if root is work and not old:
            continue
        for name in NAMES:
            (root / name).mkdir()
            (root / name / "v").write_text(version)
    return work, stage


def held(work: Path) -> str | None:
    """The version both folders hold (None: neither exists); fails when they differ."""
    versions = {(work / n / "v").read_text() if (work / n).exists() else None for n in NAMES}
    assert len(versions) == 1, f"half switched: {[(n, (work / n).exists()) for n in NAMES]}"
    return versions.pop()


KILL_POINTS = [
    pytest.param(1, False, "old", id="before-package-aside"),
    pytest.param(2, False, "old", id="before-package-in"),
    pytest.param(3, False, "old", id="before-out-aside"),
    pytest.param(4, False, "old", id="before-out-in"),
    pytest.param(4, True, "new", id="after-out-in"),
]


@pytest.mark.parametrize("stage_left", [True, False], ids=["stage-left", "stage-removed"])
@pytest.mark.parametrize(("k", "after", "expected"), KILL_POINTS)
def test_a_killed_swap_is_finished_or_undone_by_the_next_recover(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    k: int,
    after: bool,
    expected: str,
    stage_left: bool,
    capsys: pytest.CaptureFixture[str],
) -> None:
    work, stage = work_dir(tmp_path)
    kill_at(monkeypatch, k, after)
    with pytest.raises(Killed):
        swap.swap(stage, work, NAMES)
    monkeypatch.undo()
    assert (work / swap.SWAP_JOURNAL).is_file()
    if not stage_left:  # the owner's `finally` ran (any exception but kill -9)
        shutil.rmtree(stage)
    line = swap.recover(work)
    assert line is not None and line.startswith("recovered an interrupted swap")
    assert ("finished it" in line) == (expected == "new")
    assert capsys.readouterr().err == f"{line}\n"
    assert held(work) == expected and leftovers(work) == []
    assert swap.recover(work) is None  # nothing left to do


@pytest.mark.parametrize("j", [1, 2, 3])
def test_a_recovery_killed_part_way_is_undone_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, j: int
) -> None:
    """Killed after W/package was swapped and W/out set aside; the undo (3 renames) is killed at its j-th."""
    work, stage = work_dir(tmp_path)
    kill_at(monkeypatch, 4, False)
    with pytest.raises(Killed):
        swap.swap(stage, work, NAMES)
    kill_at(monkeypatch, j, False)
    with pytest.raises(Killed):
        swap.recover(work)
    monkeypatch.undo()
    assert swap.recover(work) is not None
    assert held(work) == "old" and leftovers(work) == []


@pytest.mark.parametrize(("k", "after", "expected"), [(1, True, None), (2, True, "new")])
def test_a_first_swap_killed_leaves_both_folders_or_neither(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, k: int, after: bool, expected: str | None
) -> None:
    work, stage = work_dir(tmp_path, old=False)
    kill_at(monkeypatch, k, after)
    with pytest.raises(Killed):
        swap.swap(stage, work, NAMES)
    monkeypatch.undo()
    assert swap.recover(work) is not None
    assert held(work) == expected and leftovers(work) == []


@pytest.mark.parametrize("k", [1, 2, 3, 4])
@pytest.mark.parametrize("error", [OSError(28, "No space left on device"), KeyboardInterrupt()], ids=repr)
def test_a_failed_rename_or_ctrl_c_is_undone_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, k: int, error: BaseException
) -> None:
    work, stage = work_dir(tmp_path)
    real = Path.rename
    calls = [0]

    def rename(self: Path, target: Any) -> Path:
        calls[0] += 1
        if calls[0] == k:
            raise error
        return real(self, target)

    monkeypatch.setattr(Path, "rename", rename)
    with pytest.raises(type(error)):
        swap.swap(stage, work, NAMES)
    monkeypatch.undo()
    assert held(work) == "old"
    assert leftovers(work) == [stage.name]  # its owner removes the stage


def test_a_load_waits_for_a_swap_in_progress(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A command loading the work dir while another swaps must not take the live journal for a crashed one."""
    work, stage = work_dir(tmp_path)
    owner = os.open(stage, os.O_RDONLY)  # the swapping command holds its stage, as swap.stage_dir does
    fcntl.flock(owner, fcntl.LOCK_EX)
    real = Path.rename
    paused, go = threading.Event(), threading.Event()
    real_lock = fcntl.flock
    locking = threading.Event()

    def rename(self: Path, target: Any) -> Path:
        if threading.current_thread() is swapper and not paused.is_set():
            paused.set()  # after the journal, before the first rename: stop until the loader is at the lock
            go.wait()
        return real(self, target)

    def flock(fd: int, op: int) -> None:
        if threading.current_thread() is loader:
            locking.set()
        real_lock(fd, op)

    monkeypatch.setattr(Path, "rename", rename)
    monkeypatch.setattr(fcntl, "flock", flock)
    swapper = threading.Thread(target=swap.swap, args=(stage, work, NAMES), daemon=True)
    loader = threading.Thread(target=swap.recover, args=(work,), daemon=True)
    swapper.start()
    paused.wait()
    loader.start()
    try:
        # A guard against a hang, not a speed check: without the lock the loader never reaches flock.
        assert locking.wait(timeout=60), "the loader did not wait for the work dir's lock"
    finally:
        go.set()
        swapper.join()
        loader.join()
    assert held(work) == "new" and leftovers(work) == [
        stage.name
    ]  # a live command's stage is its own to remove
    os.close(owner)


def test_a_stage_whose_command_died_is_removed_and_a_live_one_kept(tmp_path: Path) -> None:
    """setup killed while rendering (before any journal) leaves its stage; the next command removes it, but never
    the stage of a command still running."""
    work = tmp_path / "w"
    work.mkdir()
    dead = Path(tempfile.mkdtemp(prefix=".berth-setup-", dir=work))  # its owner died: nobody holds it
    (dead / "package").mkdir()
    with swap.stage_dir(work, ".berth-rollback-") as live:
        line = swap.recover(work)
        assert line is not None and dead.name in line and live.name not in line
        assert leftovers(work) == [live.name]
        assert swap.recover(work) is None  # nothing more to do
    assert leftovers(work) == []  # the owner removes its own stage when it ends


# ---- through the CLI: setup killed mid-swap, then `berth install plan` ----------------------------------------


def versions(work: Path) -> tuple[str, str]:
    """W/package's version and the version W/out's render names (spec/selection.yaml)."""
    selection = yamlio.load_file(work / "out" / "spec" / "selection.yaml")[0].body
    return package.load(work / "package").version, selection["spec"]["packageVersion"]


def setup_args(work: Path, ref: Path) -> list[str | Path]:
    return ["install", "setup", "--pull", ref, "--namespace", "edge", "--work-dir", work, "--non-interactive"]


@pytest.mark.parametrize(("k", "after", "expected"), KILL_POINTS)
def test_setup_killed_mid_swap_then_plan_recovers(
    run: Run,
    workdir_copy: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    k: int,
    after: bool,
    expected: str,
) -> None:
    work = workdir_copy
    before = tree_digest(work / "package"), tree_digest(work / "out")
    assert versions(work) == ("0.3.0", "0.3.0")
    journal = work / swap.SWAP_JOURNAL
    chart = edge_next_chart(tmp_path)
    # As kill -9: from the kill on, nothing runs (setup's `finally` would remove its stage).
    kill_at(monkeypatch, k, after, journal.exists, lambda: monkeypatch.setattr(shutil, "rmtree", _noop))
    with pytest.raises(Killed):
        run(*setup_args(work, chart))
    monkeypatch.undo()
    assert journal.is_file() and any(
        p.startswith(".berth-setup-") for p in leftovers(work)
    )  # as kill -9 left it
    r = run("install", "plan", "--work-dir", work)
    assert r.code == 0, r.err
    recovered = [line for line in r.err.splitlines() if line.startswith("recovered an interrupted swap")]
    assert len(recovered) == 1, r.err
    assert leftovers(work) == []
    if expected == "old":
        assert (tree_digest(work / "package"), tree_digest(work / "out")) == before
    else:
        assert versions(work) == ("0.4.0", "0.4.0") and revisions.numbers(work / "out") == [1]
    again = run("install", "plan", "--work-dir", work)
    assert again.code == 0 and "recovered" not in again.err


def _noop(*args: object, **kwargs: object) -> None:
    return None


def test_setup_interrupted_by_ctrl_c_mid_swap_leaves_the_old_pair(
    run: Run, workdir_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = workdir_copy
    before = tree_digest(work / "package"), tree_digest(work / "out")
    real = Path.rename
    calls = [0]

    def rename(self: Path, target: Any) -> Path:
        if (work / swap.SWAP_JOURNAL).exists():
            calls[0] += 1
            if calls[0] == 3:
                raise KeyboardInterrupt
        return real(self, target)

    monkeypatch.setattr(Path, "rename", rename)
    r = run(*setup_args(work, edge_next_chart(tmp_path)))
    monkeypatch.undo()
    assert r.code == 130 and "aborted" in r.err
    assert (tree_digest(work / "package"), tree_digest(work / "out")) == before
    assert leftovers(work) == []


def test_a_normal_setup_leaves_no_journal(run: Run, workdir_copy: Path, tmp_path: Path) -> None:
    r = run(*setup_args(workdir_copy, edge_next_chart(tmp_path)))
    assert r.code == 0, r.err
    assert versions(workdir_copy) == ("0.4.0", "0.4.0") and leftovers(workdir_copy) == []
    assert "recovered" not in r.err


def test_a_journal_berth_did_not_write_is_refused(run: Run, workdir_copy: Path) -> None:
    (workdir_copy / swap.SWAP_JOURNAL).write_text("spec: {stage: ../elsewhere, names: [out], replaced: []}\n")
    r = run("install", "plan", "--work-dir", workdir_copy)
    assert r.code == 2 and "not a swap journal berth wrote" in r.err
    assert (workdir_copy / "out").is_dir()
