"""Store checkpoints: the writer never checkpoints, the checkpoint thread does, and every acknowledged write survives
``kill -9`` whatever the checkpoint thread was doing."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from berth.cluster import store as S

PAGE = 4096


def _wal_pages(data: Path) -> int:
    return (data / "store.db-wal").stat().st_size // PAGE


def test_writes_leave_checkpoints_to_the_checkpoint_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(S, "CHECKPOINT_EVERY", 10**9)  # the thread never wakes: only explicit rounds below
    st = S.open_store(tmp_path)
    big = "x" * 3000
    for i in range(
        1200
    ):  # > 1,000 WAL pages, where SQLite's automatic checkpoint would have run and restarted it
        st.put("configmaps", "ns", f"c{i}", {"metadata": {"name": f"c{i}"}, "data": {"v": big}}, "ADDED")
    assert _wal_pages(tmp_path) > 1200
    checkpointer = st._checkpointer
    assert checkpointer is not None
    frames, copied = checkpointer.checkpoint()
    assert frames == copied > 1200
    st.put("configmaps", "ns", "next", {"metadata": {"name": "next"}}, "ADDED")
    assert checkpointer.checkpoint()[0] == 1  # all copied: the next commit started the WAL over
    st.close()


class _ReaderLeavesDuringCheckpoint:
    """The checkpoint connection, while another connection reads an old snapshot until the unlocked checkpoints
    are done: they cannot copy the pages committed after the snapshot, as when commits land during each of them."""

    def __init__(self, db: sqlite3.Connection, reader: sqlite3.Connection) -> None:
        self.db, self.reader, self.calls = db, reader, 0

    def execute(self, sql: str) -> sqlite3.Cursor:
        cursor = self.db.execute(sql)
        self.calls += 1
        if self.calls == 1 + S.CATCH_UP_ROUNDS and self.reader.in_transaction:
            self.reader.execute("COMMIT")
        return cursor


class _CountingLock:
    """The store's writer lock, counting how often the checkpoint thread takes it."""

    def __init__(self, lock: threading.RLock) -> None:
        self.lock, self.taken = lock, 0

    def acquire(self, timeout: float = -1) -> bool:
        self.taken += 1
        return self.lock.acquire(timeout=timeout)

    def release(self) -> None:
        self.lock.release()


@pytest.mark.parametrize(
    ("limit", "reader_stays", "restarts", "locked"),
    [(50, True, True, 1), (50, False, True, 0), (10**9, True, False, 0)],
    ids=["over-limit-behind", "over-limit-caught-up", "under-limit"],
)
def test_a_round_over_the_limit_copies_the_rest_under_the_lock_so_the_wal_starts_over(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    limit: int,
    reader_stays: bool,
    restarts: bool,
    locked: int,
) -> None:
    monkeypatch.setattr(S, "CHECKPOINT_EVERY", 10**9)
    monkeypatch.setattr(S, "WAL_RESTART_FRAMES", limit)
    st = S.open_store(tmp_path)
    reader = sqlite3.connect(tmp_path / "store.db", isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT COUNT(*) FROM log").fetchall()
    if not reader_stays:
        reader.execute("COMMIT")
    for i in range(100):
        st.put("configmaps", "ns", f"c{i}", {"metadata": {"name": f"c{i}"}}, "ADDED")
    checkpointer = st._checkpointer
    assert checkpointer is not None
    real, lock = checkpointer._db, _CountingLock(checkpointer._lock)
    checkpointer._db = _ReaderLeavesDuringCheckpoint(real, reader)  # type: ignore[assignment]
    checkpointer._lock = lock  # type: ignore[assignment]
    frames, copied = checkpointer.checkpoint()
    checkpointer._db = real
    reader.close()
    assert (frames == copied >= 100) is restarts
    assert lock.taken == locked  # caught up without the lock: nothing arrived during the unlocked rounds
    st.put("configmaps", "ns", "next", {"metadata": {"name": "next"}}, "ADDED")
    assert (checkpointer.checkpoint()[0] == 1) is restarts  # the commit started the WAL over
    st.close()
    assert S.open_store(tmp_path).revision == 101


def test_the_wal_file_shrinks_back_when_the_wal_starts_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``journal_size_limit``: the first commit after the WAL starts over truncates the file, which otherwise keeps
    the largest size it ever had."""
    monkeypatch.setattr(S, "CHECKPOINT_EVERY", 10**9)
    monkeypatch.setattr(S, "WAL_SIZE_LIMIT", 64 * PAGE)
    st = S.open_store(tmp_path)
    big = "x" * 3000
    for i in range(600):
        st.put("configmaps", "ns", f"c{i}", {"metadata": {"name": f"c{i}"}, "data": {"v": big}}, "ADDED")
    assert _wal_pages(tmp_path) > 600
    checkpointer = st._checkpointer
    assert checkpointer is not None
    frames, copied = checkpointer.checkpoint()
    assert frames == copied > 600
    st.put("configmaps", "ns", "next", {"metadata": {"name": "next"}}, "ADDED")
    assert _wal_pages(tmp_path) <= 64
    st.close()
    reopened = S.open_store(tmp_path)
    assert reopened.revision == 601 and reopened.get("configmaps", "ns", "c599") is not None
    reopened.close()


class _Wake:
    """The checkpoint thread's wake-up event, recording how many times the writer sets it."""

    def __init__(self, real: threading.Event) -> None:
        self.real, self.sets = real, 0

    def set(self) -> None:
        self.sets += 1
        self.real.set()

    def wait(self) -> bool:
        return self.real.wait()

    def clear(self) -> None:
        self.real.clear()


def test_the_checkpoint_thread_wakes_by_wal_pages_not_commits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A commit counts its pages (one, plus one per 2 KiB of JSON), so big objects wake the thread after fewer
    commits than small ones and the WAL does not run far past its restart threshold between looks."""
    monkeypatch.setattr(S, "CHECKPOINT_EVERY", 40)
    st = S.open_store(tmp_path)
    checkpointer = st._checkpointer
    assert checkpointer is not None
    wake = _Wake(checkpointer.wake)
    checkpointer.wake = wake  # type: ignore[assignment]
    for i in range(30):
        st.put("configmaps", "ns", f"small{i}", {"metadata": {"name": f"small{i}"}}, "ADDED")
    assert wake.sets == 0
    big = "x" * 20_000  # ten pages each
    for i in range(4):
        st.put("configmaps", "ns", f"big{i}", {"metadata": {"name": f"big{i}"}, "data": {"v": big}}, "ADDED")
    assert wake.sets == 1
    st.close()


def test_close_stops_the_checkpoint_thread_and_leaves_no_wal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(S, "CHECKPOINT_EVERY", 7)
    st = S.open_store(tmp_path)
    checkpointer = st._checkpointer
    assert checkpointer is not None and checkpointer._thread.is_alive()
    for i in range(50):
        st.put("configmaps", "ns", f"c{i}", {"metadata": {"name": f"c{i}"}}, "ADDED")
    st.close()
    assert not checkpointer._thread.is_alive()
    assert not (tmp_path / "store.db-wal").exists()
    st.close()  # a second close is a no-op


def test_an_in_memory_store_has_no_checkpoint_thread() -> None:
    assert S.Store()._checkpointer is None


_WRITER = textwrap.dedent(
    """
    import sys
    from berth.cluster import store as S
    S.CHECKPOINT_EVERY, S.WAL_RESTART_FRAMES, S.COMPACT_EVERY, S.WAL_SIZE_LIMIT = 5, 20, 40, 8 * 4096
    st = S.open_store(sys.argv[1], retain=25)
    for i in range(400):
        st.put("configmaps", "ns", f"c{i % 60}", {"metadata": {"name": f"c{i % 60}"}, "data": {"i": str(i)}}, "ADDED")
        if i % 7 == 0:
            st.remove("configmaps", "ns", f"c{(i + 30) % 60}", {"metadata": {"name": "x"}})
        print(i, st.revision, flush=True)
    input()  # killed here, never closed
    """
)


def test_every_acknowledged_write_survives_kill_9_during_checkpoints(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    lines = [proc.stdout.readline() for _ in range(400)]
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    acknowledged = int(lines[-1].split()[1])
    st = S.open_store(tmp_path, retain=25)
    assert st.revision == acknowledged
    for i in range(340, 400):  # the last write of every name decides whether it exists and its data
        name = f"c{i % 60}"
        entry = st.get("configmaps", "ns", name)
        removed_later = any((j + 30) % 60 == i % 60 for j in range(i, 400) if j % 7 == 0)
        assert (entry is None) == removed_later, name
        if entry is not None:
            assert f'"i":"{i}"' in entry[1]
    st.close()
