"""The data directory: private by construction, checked before a cluster starts, and cleaned up when a start fails.

Threat model: one machine, several users. Everything a cluster keeps -- the store (every Secret's data, the admin
token, the ServiceAccount signing key), its WAL and shared-memory files, the CA and serving keys, the kubeconfig,
the audit and server logs -- grants cluster-admin to whoever reads it. So the directory is created 0700 and every
file in it 0600 (the store file is created 0600 before SQLite opens it, and SQLite gives its ``-wal``/``-shm``
files the store's mode); a directory made looser (by hand, an older berth, a restrictive-less umask) is tightened on
start with a warning naming what changed. Another local user can still reach the loopback port, but needs a token.

Start-up checks, before anything is written: a store that is empty, shorter than an SQLite header, not an SQLite
file, or an SQLite file without berth's tables is refused and left as it is (never replaced by a fresh cluster with
new credentials); so is a directory holding a former cluster's credentials (``pki/``, ``kubeconfig``) but no store.
Whether a cluster runs from the directory is asked of its lock (``flock`` on ``DIR/lock``), never of a pid, which
may belong to a zombie or to an unrelated process that reused it.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import shutil
import stat
from pathlib import Path

from berth.kube.errors import BerthError

log = logging.getLogger(__name__)

DIR_MODE = 0o700
FILE_MODE = 0o600
STORE = "store.db"
SQLITE_HEADER = b"SQLite format 3\x00"
_HEADER_SIZE = 100  # an SQLite database file starts with a 100-byte header


class DataDirError(BerthError):
    """The data directory cannot be used as it is (nothing in it was changed)."""


def create_private(data_dir: Path) -> bool:
    """Create ``data_dir`` (and missing parents) with mode 0700; True when it did not exist before."""
    existed = data_dir.exists()
    data_dir.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
    if not existed:
        os.chmod(data_dir, DIR_MODE)  # mkdir's mode is masked by the umask
    return not existed


def tighten(data_dir: Path) -> list[str]:
    """Make ``data_dir`` 0700, its subdirectories 0700 and its files 0600; return what was looser (``path mode``)
    and warn once about it."""
    loosened: list[str] = []
    paths = [data_dir, *sorted(data_dir.rglob("*"))]
    for path in paths:
        try:
            st = path.lstat()
        except OSError:
            continue
        if stat.S_ISLNK(st.st_mode):
            continue
        want = DIR_MODE if stat.S_ISDIR(st.st_mode) else FILE_MODE
        if stat.S_IMODE(st.st_mode) & 0o077:
            loosened.append(f"{path} {stat.S_IMODE(st.st_mode):04o}")
            with contextlib.suppress(OSError):
                os.chmod(path, want)
    if loosened:
        log.warning(
            "%s was readable by other users; tightened to 0700/0600 (the store holds the admin token and every "
            "Secret): %s",
            data_dir,
            ", ".join(loosened),
        )
    return loosened


def open_private(path: Path, flags: int = os.O_WRONLY | os.O_CREAT | os.O_APPEND) -> int:
    """``os.open`` with mode 0600 for a file berth creates in the data directory (an existing file keeps its mode,
    which :func:`tighten` already made 0600)."""
    return os.open(path, flags, FILE_MODE)


def check_store(data_dir: Path) -> None:
    """Refuse a data directory whose store is not a berth store, or whose store is missing while a former cluster's
    credentials remain; say what to do. Reads only."""
    store = data_dir / STORE
    if not store.exists():
        leftovers = [name for name in ("pki", "kubeconfig") if (data_dir / name).exists()]
        if leftovers:
            raise DataDirError(
                f"{data_dir} holds a former cluster's {' and '.join(leftovers)} but no {STORE}: the store was "
                f"removed or moved. Put {STORE} back, or start a new cluster in another --data directory (or "
                f"remove {data_dir} to start afresh there)"
            )
        return
    try:
        with open(store, "rb") as fh:
            header = fh.read(_HEADER_SIZE)
    except OSError as exc:
        raise DataDirError(f"{store}: cannot read the store ({exc.strerror or exc})") from exc
    what = ""
    if not header:
        what = "is empty (0 bytes)"
    elif len(header) < _HEADER_SIZE or not header.startswith(SQLITE_HEADER):
        what = "is not an SQLite database (truncated or overwritten)"
    if what:
        raise DataDirError(
            f"{store} is not a usable berth store: it {what}. It was left as it is: restore it from a copy, or "
            f"move {data_dir} away and start a new cluster (with new credentials)"
        )


def is_running(data_dir: Path) -> bool:
    """Whether a cluster holds ``DIR/lock`` now (an exclusive ``flock`` dies with its process, whatever its pid)."""
    lock = data_dir / "lock"
    if not lock.exists():
        return False
    try:
        fd = os.open(lock, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing drops a lock taken here
    return False


def remove_new(data_dir: Path, before: set[str] | None) -> None:
    """Undo a failed start: remove ``data_dir`` if it was created by it (``before`` is None), else the entries the
    start added to it (``before`` lists what was there)."""
    if before is None:
        shutil.rmtree(data_dir, ignore_errors=True)
        return
    with contextlib.suppress(OSError):
        for entry in data_dir.iterdir():
            if entry.name in before:
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    entry.unlink()
