"""One writer per work dir: an advisory lock around every command that changes a work dir or acts on its release.

Two ``setup`` runs into one work dir at once both read the same newest revision, both record theirs under the same
number, and one render is lost from ``W/out`` and from ``W/out/revisions`` -- the history upgrade prunes against
and rollback returns to. So ``setup``, ``upgrade``, ``apply``, ``uninstall``, ``rollback`` and ``test`` hold
``W/.berth.lock`` (an exclusive ``flock``) from start to end. A second command either waits for it (``--wait-lock``,
saying whom it waits for) or refuses at once with exit 2, naming the holder (pid, command, host, since when) that
the holder wrote into the file. The kernel drops the lock of a process that dies, so a crash never leaves it held;
the holder's details left in the file are only read while someone holds the lock, so they are never stale.

The lock is re-entrant within a process (``upgrade`` holds it and runs ``setup``, which asks again). A failed first
``setup`` may remove the lock file with its empty work dir; whoever then acquires a lock on the unlinked file
notices (the path no longer names the file it locked) and locks the new one instead.

:func:`no_interrupt` defers Ctrl-C over the few steps after a commit point (the swap that puts a new render in
place), so an interrupt there is reported as what it is -- the new render is in place -- and never as ``aborted``.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shlex
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any

from berth.kube.errors import BerthError, InputError

LOCK_FILE = ".berth.lock"
"""``W/.berth.lock``: the lock itself (``flock``) and, inside, who holds it."""


class LockHeld(InputError):
    """Another command holds the work dir (exit 2): the message names it and says how to wait instead."""


class InterruptedAfterCommit(BerthError):
    """Ctrl-C after a command's commit point: what it committed is in place (exit 130, as an interrupt)."""

    exit_code = 130


@dataclass
class _Held:
    fd: int
    depth: int


_HELD: dict[Path, _Held] = {}
_GUARD = threading.Lock()


def _command() -> str:
    return shlex.join([Path(sys.argv[0]).name, *sys.argv[1:]]) if sys.argv else "berth"


def holder(work_dir: Path) -> dict[str, Any]:
    """What the lock file says about its holder ({} when unreadable, e.g. while the holder is writing it)."""
    try:
        data = json.loads((work_dir / LOCK_FILE).read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def describe(info: dict[str, Any]) -> str:
    """``pid 4242 on host a (berth install setup ..., since 2026-...)``, or a plain phrase without details."""
    if not info.get("pid"):
        return "another berth command"
    where = f" on host {info['host']}" if info.get("host") and info["host"] != os.uname().nodename else ""
    what = ", ".join(
        str(p) for p in (info.get("command"), f"since {info.get('since')}" if info.get("since") else "") if p
    )
    return f"pid {info['pid']}{where}" + (f" ({what})" if what else "")


def _open(path: Path) -> int:
    return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)


def _same_file(fd: int, path: Path) -> bool:
    """Whether ``path`` still names the file ``fd`` has open (a failed first setup may have removed it)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    own = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (own.st_dev, own.st_ino)


def _acquire(work: Path, wait: bool, create: bool, say: Callable[[str], None]) -> int:
    path = work / LOCK_FILE
    announced = False
    while True:
        if create:
            work.mkdir(parents=True, exist_ok=True)
        try:
            fd = _open(path)
        except FileNotFoundError:
            raise InputError("no berth setup here; run berth install setup first", str(work)) from None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                who = describe(holder(work))
                if not wait:
                    raise LockHeld(
                        f"the work dir is in use by {who}; one command at a time changes a work dir. Wait for it "
                        "to finish, or pass --wait-lock to wait for it",
                        str(work),
                    ) from None
                if not announced:
                    say(f"Waiting for {work}: it is in use by {who}")
                    announced = True
                fcntl.flock(fd, fcntl.LOCK_EX)
            if _same_file(fd, path):
                return fd
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)  # locked a file that was removed meanwhile: lock the one the path names now
        time.sleep(0.001)


@contextlib.contextmanager
def hold(
    work_dir: Path, wait: bool = False, create: bool = False, say: Callable[[str], None] | None = None
) -> Iterator[None]:
    """Hold the work dir's lock for the body (re-entrant in one process). ``wait``: block until the holder is done,
    saying once whom it waits for; otherwise raise :class:`LockHeld` at once. ``create``: make the work dir when it
    is missing (setup), else it must exist."""
    work = work_dir.resolve()
    with _GUARD:
        held = _HELD.get(work)
        if held is not None:
            held.depth += 1
    if held is None:
        fd = _acquire(work, wait, create, say or (lambda line: print(line, file=sys.stderr)))
        info = {"pid": os.getpid(), "host": os.uname().nodename, "command": _command(),
                "since": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")}  # fmt: skip
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(info) + "\n").encode("utf-8"), 0)
        with _GUARD:
            held = _HELD[work] = _Held(fd, 1)
    try:
        yield
    finally:
        with _GUARD:
            held.depth -= 1
            last = held.depth == 0
            if last:
                del _HELD[work]
        if last:
            os.close(held.fd)  # closing the descriptor releases the flock


def release_file(work_dir: Path) -> None:
    """Remove the lock file of a work dir this process holds (a failed first setup removing its empty work dir)."""
    work = work_dir.resolve()
    if work in _HELD:
        with contextlib.suppress(FileNotFoundError):
            (work / LOCK_FILE).unlink()


@contextlib.contextmanager
def no_interrupt(message: Callable[[], str]) -> Iterator[None]:
    """Defer Ctrl-C (SIGINT) over the body; if one came, raise :class:`InterruptedAfterCommit` with ``message()``
    after it. Only the main thread can take signals; elsewhere the body simply runs."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []

    def note(signum: int, _frame: FrameType | None) -> None:
        caught.append(signum)

    previous = signal.signal(signal.SIGINT, note)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught:
        raise InterruptedAfterCommit(message())


__all__ = ["LOCK_FILE", "InterruptedAfterCommit", "LockHeld", "describe", "hold", "holder", "no_interrupt"]
