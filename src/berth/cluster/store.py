"""Durable object storage for the embedded API server: SQLite in WAL mode, one global revision, an event log.

Design (after kine, k3s's etcd shim): every successful write gets the next value of one global counter, the
*revision* that clients see as ``resourceVersion``. One append-only table, ``log``, holds everything: each create,
update or delete appends a row (revision, ADDED/MODIFIED/DELETED, resource, namespace, name, the object's JSON
after the write -- its final state for DELETED -- and its JSON before, so a watch with a label selector can tell
an object *leaving* the selector). An object's current state is its newest row unless that row is a deletion; the
server keeps the current state in memory and rebuilds it from the log at start. A write is one INSERT.

A watch that starts at revision N replays rows after N, then follows live writes. Compaction deletes rows that are
older than the newest ``retain`` revisions *and* superseded (a newer row for the same object exists) or deletions,
and records the boundary in ``meta``; a watch or list continuation below it gets 410. Because the log lives in
SQLite, a watch can resume after the server restarts.

The log has no index besides its revision (each INSERT into a secondary index cost ~40% more CPU and twice the WAL
pages). Compaction does not need one: the store remembers in memory which rows died (superseded by a newer row of
the same object, or deletions) and deletes exactly those by revision; the start-up load reads the log once in
revision order, so the newest row of each object wins, and learns the dead rows on the way.

Durability: WAL with ``synchronous=NORMAL`` survives the process being killed (``kill -9``) at any point; only an
OS crash or power loss may lose the last transactions. A write returns once its INSERT is committed to the WAL (the
OS has it). Checkpoints -- copying the WAL into the database file, with an fsync -- do not run on the writer
connection, where they would stall every write behind the lock for milliseconds, but on a background thread's
own connection (PASSIVE: it never blocks the writer). One writer lock serialises writes; readers use an in-memory
copy of the current state (JSON text per object) so ``get``/``list`` never touch the disk.

Watch state machine for a consumer (see :meth:`Store.events_after`)::

    cursor=N --(rows after N available)--> deliver, cursor=last --(N below compacted)--> Gone (410) --> relist
"""

from __future__ import annotations

import builtins
import contextlib
import heapq
import json
import json.encoder
import os
import sqlite3
import threading
from collections import deque
from pathlib import Path
from typing import Any, NamedTuple

from berth.cluster import jsonfast

SCHEMA_VERSION = "2"
DEFAULT_RETAIN = 10_000
COMPACT_EVERY = 1_000
# The checkpoint thread copies the WAL into the database after this many WAL pages, as the writer estimates them
# (a commit counts one page plus one per 4 KiB of JSON it stores: a ConfigMap ~1, a running pod's status ~3-5;
# SQLite's own automatic checkpoint runs every 1,000 pages) ...
CHECKPOINT_EVERY = 512
# ... and copies the rest while holding the writer lock once the WAL holds this many pages (4 MiB at SQLite's
# 4 KiB pages), so a steady stream of writes cannot grow it without bound (see _Checkpointer) ...
WAL_RESTART_FRAMES = 1_024
# ... and the first commit after the WAL starts over truncates the file to this size (``journal_size_limit``):
# without it the file keeps the largest size it ever had. Peak: the restart threshold, plus up to CHECKPOINT_EVERY
# pages before the thread looks, plus what lands during its catch-up rounds (measured 5-8 MiB over 10,000 pods
# created and run, where it was 31 MiB).
WAL_SIZE_LIMIT = 4 << 20
# Unlocked checkpoints run again this many times first, each copying what arrived during the previous one: the
# locked one then copies only a few pages (its two fsyncs remain; measured 10-17 ms -> 6-10 ms).
CATCH_UP_ROUNDS = 2


_encode = jsonfast.dumps


class StoreError(Exception):
    """The data directory cannot be used (corrupted, locked, from a newer version)."""


class Compacted(Exception):
    """The requested revision is older than the kept history (maps to HTTP 410)."""

    def __init__(self, requested: int, oldest: int) -> None:
        super().__init__(f"too old resource version: {requested} ({oldest})")
        self.requested = requested
        self.oldest = oldest


class Event(NamedTuple):
    """One entry of the log. ``value`` is the object's JSON after the write (the final state for DELETED),
    ``prev`` its JSON before (None for ADDED). A NamedTuple: built on every write, where a frozen dataclass's
    ``__init__`` cost ~5% of a put's CPU."""

    rv: int
    type: str
    resource: str
    namespace: str
    name: str
    value: str
    prev: str | None


Entry = tuple[int, str]  # (resourceVersion, JSON text)


class Store:
    """SQLite-backed objects + event log. ``path=None`` keeps everything in memory (for tests and benchmarks)."""

    def __init__(self, path: str | os.PathLike[str] | None = None, retain: int = DEFAULT_RETAIN) -> None:
        self.retain = max(1, retain)
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        # Per-resource wake-ups: a write wakes only the watchers of its resource (and whole-store waiters), not
        # every informer; _last says up to which revision a resource has events, so idle watchers fast-forward.
        self._conds: dict[str, threading.Condition] = {}
        self._last: dict[str, int] = {}
        self._dropped: dict[str, int] = {}
        self._objects: dict[str, dict[str, dict[str, Entry]]] = {}
        self._ring: deque[Event] = deque()
        # Revisions of the rows compaction may delete once they fall below the boundary (a heap): rows superseded
        # by a newer row of the same object, and deletions.
        self._dead: builtins.list[int] = []
        self._closed = False
        self._path = str(path) if path is not None else ":memory:"
        self._checkpointer: _Checkpointer | None = None
        try:
            self._db = sqlite3.connect(self._path, check_same_thread=False, isolation_level=None, timeout=0.5)
            self._init_schema()
            self._load()
            self._cursor = self._db.cursor()  # reused by every write (one cursor object less per write)
            if self._path != ":memory:":
                self._checkpointer = _Checkpointer(self._path, self._lock)
        except sqlite3.DatabaseError as exc:
            raise StoreError(self._explain(exc)) from exc

    # ---- setup ---------------------------------------------------------------------------------------------

    def _explain(self, exc: sqlite3.DatabaseError) -> str:
        text = str(exc)
        if "locked" in text or "busy" in text:
            return f"{self._path} is locked by another process (is another `berth cluster up` using it?)"
        return f"{self._path} is not a usable berth store ({text}); move it away or pass another --data directory"

    def _init_schema(self) -> None:
        db = self._db
        tables = {str(r[0]) for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if tables and not {"log", "meta"} <= tables:
            # Another program's database: refused before anything (even the WAL switch) writes to it.
            raise sqlite3.DatabaseError(f"it holds tables {sorted(tables)} but not berth's (log, meta)")
        if self._path != ":memory:":
            mode = db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise sqlite3.DatabaseError(f"cannot switch to WAL mode (got {mode})")
        # NORMAL (with WAL): a commit is a write() to the WAL, no fsync -- durable across kill -9 (the OS has the
        # pages); only checkpoints fsync, so an OS crash or power loss may lose the last commits but never
        # corrupts the file (OFF could). Measured: the same CPU per commit as OFF.
        db.execute("PRAGMA synchronous=NORMAL")
        # Checkpoints run on the _Checkpointer's connection, not inside a write (see the module docstring).
        db.execute("PRAGMA wal_autocheckpoint=0")
        db.execute(f"PRAGMA journal_size_limit={WAL_SIZE_LIMIT}")
        db.execute(
            "CREATE TABLE IF NOT EXISTS log (rv INTEGER PRIMARY KEY, type TEXT NOT NULL, resource TEXT NOT NULL,"
            " namespace TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL, prev TEXT)"
        )
        # Stores written before this version carry a (resource, namespace, name, rv) index; nothing reads it.
        db.execute("DROP INDEX IF EXISTS log_key")
        db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        row = db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        if row is None:
            db.execute("INSERT INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
        elif row[0] != SCHEMA_VERSION:
            raise sqlite3.DatabaseError(f"store schema {row[0]} is not supported (expected {SCHEMA_VERSION})")

    def _load(self) -> None:
        db = self._db
        self._rv = int(self._meta("rv", "0"))
        self._compacted = int(self._meta("compacted", "0"))
        self._floor = self._compacted  # what was compacted before this process: no per-resource knowledge
        # One pass in revision order: an object's newer row replaces (and kills) its older one, and the newest
        # ``retain`` rows above the boundary become the ring. The log holds the live objects plus about ``retain``
        # recent rows, so little is read only to be dropped.
        objects = self._objects
        dead = self._dead
        ring: deque[Event] = deque(maxlen=self.retain)
        compacted = self._compacted
        last = 0
        for rv, typ, resource, ns, name, value, prev in db.execute(
            "SELECT rv, type, resource, namespace, name, value, CASE WHEN rv > ? THEN prev END FROM log ORDER BY rv",
            (compacted,),
        ):
            last = rv
            if rv > compacted:
                ring.append(Event(rv, typ, resource, ns, name, value, prev))
            names = objects.setdefault(resource, {}).setdefault(ns, {})
            old = names.get(name)
            if old is not None:
                dead.append(old[0])
            if typ == "DELETED":
                dead.append(rv)
                if old is not None:
                    del names[name]
            else:
                names[name] = (rv, value)
        for resource, by_ns in builtins.list(objects.items()):
            for ns in [ns for ns, names in by_ns.items() if not names]:
                del by_ns[ns]
            if not by_ns:
                del objects[resource]
        heapq.heapify(dead)
        if last > self._rv:
            self._rv = last
        self._ring.extend(ring)
        for event in ring:
            self._last[event.resource] = event.rv

    def _meta(self, key: str, default: str) -> str:
        row = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return str(row[0]) if row else default

    def get_meta(self, key: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
            return str(row[0]) if row else None

    def set_meta(self, key: str, value: str) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def close(self) -> None:
        if self._checkpointer is not None:
            self._checkpointer.stop()  # before taking the lock: its last round may be waiting for it
        with self._cond:
            if self._closed:
                return
            self._closed = True
            self._cond.notify_all()
            for cond in self._conds.values():
                cond.notify_all()
            # The last connection to close checkpoints the whole WAL and removes it.
            with contextlib.suppress(sqlite3.Error):
                self._db.execute("PRAGMA wal_checkpoint(PASSIVE)")
            self._db.close()

    @property
    def closed(self) -> bool:
        return self._closed

    # ---- reads ---------------------------------------------------------------------------------------------

    @property
    def revision(self) -> int:
        """The current global revision (what a list reports as its resourceVersion)."""
        return self._rv

    @property
    def compacted(self) -> int:
        """Revisions up to and including this one are no longer in the event log."""
        return self._compacted

    def last_revision(self, resource: str) -> int:
        """The revision of ``resource``'s newest event (0: none), without taking the lock. Read ``revision`` first,
        then this: if this is at most what a watcher has seen, the watcher may fast-forward to that ``revision``
        (commits set this before the global revision)."""
        return self._last.get(resource, 0)

    def get(self, resource: str, namespace: str, name: str) -> Entry | None:
        return self._objects.get(resource, {}).get(namespace, {}).get(name)

    def list(
        self, resource: str, namespace: str | None = None
    ) -> tuple[builtins.list[tuple[str, str, Entry]], int]:
        """Current objects of one resource (optionally one namespace), sorted by (namespace, name), and the revision."""
        with self._lock:
            by_ns = self._objects.get(resource, {})
            out: builtins.list[tuple[str, str, Entry]] = []
            spaces = [namespace] if namespace is not None else sorted(by_ns)
            for ns in spaces:
                items = by_ns.get(ns, {})
                out.extend((ns, n, items[n]) for n in sorted(items))
            return out, self._rv

    def list_at(
        self, resource: str, namespace: str | None, revision: int
    ) -> builtins.list[tuple[str, str, Entry]]:
        """The objects of one resource (optionally one namespace) as they were at ``revision``, sorted by
        (namespace, name): the current ones, with every object written since put back to what the first write
        after ``revision`` found (its ``prev``), and those created since left out. Raises :class:`Compacted` when
        the log no longer reaches back to ``revision`` (compaction only deletes rows at or below its boundary, so
        every row after a revision at or above it is kept)."""
        with self._lock:
            current, now = self.list(resource, namespace)
            if revision >= now:
                return current
            if revision < self._compacted:
                raise Compacted(revision, self._compacted + 1)
            first: dict[tuple[str, str], Event] = {}
            cursor = revision
            while cursor < now:
                events = self.events_after(cursor, limit=10_000)
                if not events:
                    break
                for ev in events:
                    if ev.resource == resource and (namespace is None or ev.namespace == namespace):
                        first.setdefault((ev.namespace, ev.name), ev)
                cursor = events[-1].rv
            if not first:
                return current
            state = {(ns, name): entry for ns, name, entry in current}
            for key, ev in first.items():
                if ev.prev is None:  # created after revision
                    state.pop(key, None)
                else:
                    state[key] = (_revision_of(ev.prev), ev.prev)
            return [(ns, name, state[(ns, name)]) for ns, name in sorted(state)]

    def count(self, resource: str) -> int:
        return sum(len(v) for v in self._objects.get(resource, {}).values())

    def counts(self) -> dict[str, int]:
        with self._lock:
            return {r: n for r in sorted(self._objects) if (n := self.count(r))}

    def resources(self) -> builtins.list[str]:
        return list(self._objects)

    # ---- writes --------------------------------------------------------------------------------------------

    def locked(self) -> threading.RLock:
        """The writer lock, for read-modify-write sequences that must not interleave."""
        return self._lock

    def put(self, resource: str, namespace: str, name: str, obj: dict[str, Any], event: str) -> int:
        """Create or replace an object; sets ``metadata.resourceVersion`` to the new revision and logs ``event``."""
        # The lock itself, not the Condition over it (whose __enter__/__exit__ are Python calls around the same lock).
        with self._lock:
            if self._closed:
                self._check_open()
            rv = self._rv + 1
            obj.setdefault("metadata", {})["resourceVersion"] = str(rv)
            value = _encode(obj)
            # The object's name table, looked up once for the previous entry and the new one.
            by_ns = self._objects.get(resource)
            names = None if by_ns is None else by_ns.get(namespace)
            prev = None if names is None else names.get(name)
            if prev is None:
                self._commit(Event(rv, event, resource, namespace, name, value, None), None)
            else:
                self._commit(Event(rv, event, resource, namespace, name, value, prev[1]), prev[0])
            if names is None:  # created only now: a failed commit leaves no empty tables behind
                names = self._objects.setdefault(resource, {}).setdefault(namespace, {})
            names[name] = (rv, value)
            return rv

    def remove(self, resource: str, namespace: str, name: str, final: dict[str, Any]) -> int:
        """Delete an object; the DELETED event carries ``final`` with a new resourceVersion."""
        with self._cond:
            self._check_open()
            rv = self._rv + 1
            final.setdefault("metadata", {})["resourceVersion"] = str(rv)
            value = _encode(final)
            prev = self.get(resource, namespace, name)
            if prev is None:
                self._commit(Event(rv, "DELETED", resource, namespace, name, value, None), None)
            else:
                self._commit(Event(rv, "DELETED", resource, namespace, name, value, prev[1]), prev[0])
                by_ns = self._objects[resource]
                names = by_ns[namespace]
                del names[name]
                if not names:
                    del by_ns[namespace]
            return rv

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError("the store is closed")

    def _commit(self, event: Event, superseded: int | None) -> None:
        """Log ``event``; ``superseded`` is the revision of the object's row it replaces (None: no row)."""
        # One INSERT in autocommit mode: the row is the write (atomic on its own).
        self._cursor.execute(
            "INSERT INTO log VALUES (?, ?, ?, ?, ?, ?, ?)",
            (event.rv, event.type, event.resource, event.namespace, event.name, event.value, event.prev),
        )
        if superseded is not None:
            heapq.heappush(self._dead, superseded)
        if event.type == "DELETED":
            heapq.heappush(self._dead, event.rv)
        # _last before _rv: a lock-free reader that sees revision R (``revision``) then reads ``last_revision``
        # sees every event up to R (see last_revision).
        self._last[event.resource] = event.rv
        self._rv = event.rv
        self._ring.append(event)
        if event.rv % COMPACT_EVERY == 0:
            # The write is committed whatever happens here: a failed compaction is retried next time.
            with contextlib.suppress(sqlite3.Error):
                self._compact_locked()
        checkpointer = self._checkpointer
        if checkpointer is not None:
            # WAL pages this commit wrote, roughly: the log's leaf page, plus overflow pages for the JSON texts
            # (per 2 KiB: measured, a row's pages are not full; compaction adds its own below).
            checkpointer.pending += 1 + ((len(event.value) + len(event.prev or "")) >> 11)
            if checkpointer.pending >= CHECKPOINT_EVERY:
                checkpointer.pending = 0
                checkpointer.wake.set()
        while len(self._ring) > self.retain:
            self._forget(self._ring.popleft())
        self._cond.notify_all()
        cond = self._conds.get(event.resource)
        if cond is not None:
            cond.notify_all()

    def _forget(self, event: Event) -> None:
        """An event leaves memory: remember, per resource, the newest revision no longer replayable from it."""
        self._dropped[event.resource] = event.rv

    def compact(self) -> int:
        """Drop log entries older than the newest ``retain``; returns the compacted revision."""
        with self._lock:
            self._compact_locked()
            return self._compacted

    def _compact_locked(self) -> None:
        target = self._rv - self.retain
        if target <= self._compacted:
            return
        dead = self._dead
        doomed = []
        while dead and dead[0] <= target:
            doomed.append((heapq.heappop(dead),))
        db = self._db
        try:
            # One transaction (a savepoint: also correct inside a caller's transaction, which it must not end).
            db.execute("SAVEPOINT compact")
            try:
                db.executemany("DELETE FROM log WHERE rv = ?", doomed)
                db.execute("INSERT OR REPLACE INTO meta VALUES ('compacted', ?)", (str(target),))
                db.execute("INSERT OR REPLACE INTO meta VALUES ('rv', ?)", (str(self._rv),))
                db.execute("RELEASE compact")
            except sqlite3.Error:
                with contextlib.suppress(sqlite3.Error):
                    db.execute("ROLLBACK TO compact")
                    db.execute("RELEASE compact")
                raise
        except sqlite3.Error:
            for (rv,) in doomed:
                heapq.heappush(dead, rv)
            raise
        self._compacted = target
        if self._checkpointer is not None:
            self._checkpointer.pending += len(doomed)  # about a page rewritten or freed per deleted row
        while self._ring and self._ring[0].rv <= target:
            self._forget(self._ring.popleft())

    # ---- watch support -------------------------------------------------------------------------------------

    def events_after(self, rv: int, limit: int = 1000, resource: str | None = None) -> builtins.list[Event]:
        """Log entries with revision > ``rv`` (at most ``limit``); raises :class:`Compacted` if ``rv`` is too old.

        With ``resource``, a revision below the compaction boundary is still fine when nothing of that resource
        was compacted after it (an idle watcher of a quiet resource is not expired by other resources' churn).
        """
        with self._lock:
            if rv >= self._rv:
                return []
            if rv < self._compacted:
                if resource is None or rv < self._floor or self._dropped.get(resource, 0) > rv:
                    raise Compacted(rv, self._compacted + 1)
                rv = self._compacted
            ring = self._ring
            if ring and ring[0].rv <= rv + 1:
                start = rv + 1 - ring[0].rv
                out = []
                for i in range(start, min(len(ring), start + limit)):
                    out.append(ring[i])
                return out
            rows = self._db.execute(
                "SELECT rv, type, resource, namespace, name, value, prev FROM log WHERE rv > ? ORDER BY rv LIMIT ?",
                (rv, limit),
            ).fetchall()
            return [Event(int(r[0]), r[1], r[2], r[3], r[4], r[5], r[6]) for r in rows]

    def wait(self, after: int, timeout: float | None) -> bool:
        """Block until the revision exceeds ``after`` (True) or the timeout passes / the store closes (False)."""
        with self._cond:
            if self._rv > after:
                return True
            if self._closed:
                return False
            self._cond.wait(timeout)
            return self._rv > after

    def wait_resource(self, resource: str, after: int, timeout: float | None) -> tuple[bool, int]:
        """Block until ``resource`` has an event after revision ``after``: ``(True, after)``; on timeout or close
        ``(False, cursor)`` where ``cursor`` is a revision up to which ``resource`` certainly has no events (a
        watcher may fast-forward to it without reading the log)."""
        with self._lock:
            if self._last.get(resource, 0) > after:
                return True, after
            if not self._closed and (timeout is None or timeout > 0):
                cond = self._conds.get(resource)
                if cond is None:
                    cond = self._conds[resource] = threading.Condition(self._lock)
                cond.wait(timeout)
            if self._last.get(resource, 0) > after:
                return True, after
            return False, max(after, self._rv)

    def wake_all(self) -> None:
        with self._cond:
            self._cond.notify_all()
            for cond in self._conds.values():
                cond.notify_all()


class _Checkpointer:
    """Copies the WAL into the database file on a background thread, so no write waits for a checkpoint.

    The writer connection never checkpoints (``wal_autocheckpoint=0``). After about CHECKPOINT_EVERY WAL pages (as
    the writer estimates them from what it commits) this thread runs a PASSIVE checkpoint on its own connection: it
    copies what was committed when it started, fsyncs, and never blocks the writer. The WAL starts over from its
    beginning only when a commit finds it entirely copied, which a steady stream of writes never allows (commits
    land during every checkpoint); so once the WAL holds WAL_RESTART_FRAMES pages, after CATCH_UP_ROUNDS more
    unlocked checkpoints a last one copies what arrived meanwhile while holding the store's writer lock -- a few
    pages and two fsyncs (6-10 ms measured; every ~1,000 small commits), instead of SQLite's automatic checkpoint
    of the whole WAL inside a write every ~400 commits (20-50 ms). The commit that starts the WAL over truncates
    the file to WAL_SIZE_LIMIT.
    """

    def __init__(self, path: str, lock: threading.RLock) -> None:
        # Estimated WAL pages since the last wake-up (only the writer, under the lock, touches it).
        self.pending = 0
        self.wake = threading.Event()
        self._lock = lock
        self._stopping = False
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=0.5)
        self._db.execute("PRAGMA synchronous=NORMAL")  # fsync the WAL before copying, the database after
        self._thread = threading.Thread(target=self._run, name="berth-store-checkpoint", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            while True:
                self.wake.wait()
                self.wake.clear()
                if self._stopping:
                    return
                with contextlib.suppress(sqlite3.Error):
                    self.checkpoint()
        finally:
            self._db.close()

    def checkpoint(self) -> tuple[int, int]:
        """One round; returns (pages in the WAL, pages copied into the database) as its last checkpoint saw them."""
        _busy, frames, copied = self._db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        if frames < WAL_RESTART_FRAMES:
            return int(frames), int(copied)
        for _ in range(CATCH_UP_ROUNDS):
            _busy, now, copied = self._db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            if now == frames == copied:  # nothing arrived meanwhile: the next commit starts the WAL over
                return int(frames), int(copied)
            frames = now
        # Polls: close() may hold the lock while it stops this thread.
        while not self._lock.acquire(timeout=0.1):
            if self._stopping:
                return (0, 0)
        try:
            _busy, frames, copied = self._db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            return int(frames), int(copied)
        finally:
            self._lock.release()

    def stop(self) -> None:
        self._stopping = True
        self.wake.set()
        self._thread.join()


def _revision_of(text: str) -> int:
    """The ``metadata.resourceVersion`` of an object's stored JSON (0 when absent)."""
    try:
        return int(json.loads(text)["metadata"]["resourceVersion"])
    except (ValueError, KeyError, TypeError):
        return 0


def open_store(data_dir: str | os.PathLike[str], retain: int = DEFAULT_RETAIN) -> Store:
    """Open (creating if needed) the store in ``data_dir/store.db``."""
    path = Path(data_dir) / "store.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    return Store(path, retain=retain)
