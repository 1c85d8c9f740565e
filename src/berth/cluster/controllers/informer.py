"""Shared informers: one list+watch loop per resource, a cache of its objects, indexes, and event handlers.

Why: every controller needs "the current pods" (the kubelet, ReplicaSet, Job, StatefulSet, DaemonSet and the garbage
collector all do). Like client-go's shared informers, one loop per resource feeds them all, so the store answers
one watch per resource, not one per controller.

The loop (one daemon thread per informer)::

    list ──▶ replace cache (diff → add/update/delete handlers) ──▶ watch from the list's resourceVersion
      ▲                                                                 │ ADDED/MODIFIED/DELETED → cache + handlers
      └──────── 410 Gone (history compacted) or a broken watch ◀────────┘

Handlers run on the informer thread and must be quick (they enqueue keys). Cached objects are shared: callers must
copy before changing one. Locking: ``_lock`` guards the cache and is never held while calling out, so handlers may
read any informer's cache; ``_dispatch`` orders handler calls and handler registration.
"""

from __future__ import annotations

import builtins
import contextlib
import copy
import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol, cast

from berth.cluster import objmeta
from berth.cluster.controllers import client
from berth.kube.objects import Obj, compact

log = logging.getLogger(__name__)

IndexFunc = Callable[[Obj], Iterable[str]]

OWNER_UID_INDEX = "owner-uid"
"""Built-in index: the uids in ``metadata.ownerReferences`` (how dependents of an owner are found)."""


key_of = objmeta.object_key
"""Cache key: ``namespace/name`` for namespaced objects, ``name`` for cluster-scoped ones."""
split_key = objmeta.split_key


def owner_uids(obj: Obj) -> list[str]:
    return [str(r.get("uid", "")) for r in (obj.get("metadata") or {}).get("ownerReferences") or []]


def strip(obj: Obj) -> Obj:
    """The informer transform (client-go ``SetTransform``): a compact copy (:func:`berth.kube.objects.compact`:
    interned keys and short strings) without ``managedFields``, which no controller reads and which is close to
    half of a pod's size. Writes from a stripped copy keep the stored managedFields (the Api carries them over
    when a PUT omits them). A pod's container statuses share the spec's ``resources`` and ``requests`` where they
    say the same (:func:`share_status_resources`)."""
    meta = obj.get("metadata")
    if isinstance(meta, dict) and "managedFields" in meta:
        obj = {**obj, "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}
    obj = compact(obj)
    status = obj.get("status")
    if isinstance(status, dict) and "containerStatuses" in status:
        share_status_resources(obj)
    return obj


def share_status_resources(pod: Obj) -> None:
    """Point each container status's ``resources`` and ``allocatedResources`` at the spec's equal dicts.

    Why: the kubelet reports both for every container, and they equal the spec unless a resize is under way; as
    separate decoded dicts they cost ~1 KB per pod in the cache (10 MB for 10,000 pods), shared ~0. Cached
    objects are never changed in place (callers copy first), so the sharing is invisible."""
    spec = pod.get("spec")
    status = pod.get("status")
    if not isinstance(spec, dict) or not isinstance(status, dict):
        return
    by_name: dict[str, dict[str, object]] = {}
    for key in ("containers", "initContainers"):
        for c in spec.get(key) or ():
            res = c.get("resources") if isinstance(c, dict) else None
            if isinstance(res, dict):
                by_name[str(c.get("name"))] = res
    if not by_name:
        return
    for key in ("containerStatuses", "initContainerStatuses"):
        for cs in status.get(key) or ():
            if not isinstance(cs, dict):
                continue
            res = by_name.get(str(cs.get("name")))
            if res is None:
                continue
            if "resources" in cs and cs["resources"] == res:
                cs["resources"] = res
            requests = res.get("requests")
            if "allocatedResources" in cs and cs["allocatedResources"] == requests:
                cs["allocatedResources"] = requests


class _BatchWatch(Protocol):
    """What the in-process Api's ``Watch`` adds to the plain contract, so the shared loop can drain in batches."""

    revision: int
    """The store revision the watch has scanned up to."""

    def fast_forward(self) -> bool:
        """True (and ``revision`` moved to the store's) when nothing is pending and the log holds nothing new."""
        ...

    def skip_to(self, revision: int) -> None:
        """Move ``revision`` up to ``revision``, which the caller knows holds no event of the watch's resource."""
        ...


class _Revisions(Protocol):
    """The in-process store's lock-free revision reads (``Store.revision`` and ``Store.last_revision``) and its
    wait for any write."""

    @property
    def revision(self) -> int: ...

    def last_revision(self, resource: str) -> int: ...

    def wait(self, after: int, timeout: float | None) -> bool: ...

    def wake_all(self) -> None: ...


def _batch_watch(watch: object) -> _BatchWatch | None:
    """``watch`` when it says which store revision it has scanned up to and can fast-forward, else None."""
    value = getattr(watch, "revision", None)
    if (
        isinstance(value, int)
        and not isinstance(value, bool)
        and callable(getattr(watch, "fast_forward", None))
        and callable(getattr(watch, "skip_to", None))
    ):
        return cast(_BatchWatch, watch)
    return None


def _revisions(api: object) -> _Revisions | None:
    """The Api's store when it offers lock-free revision reads (the in-process Api), else None."""
    store = getattr(api, "store", None)
    value = getattr(store, "revision", None)
    if isinstance(value, int) and all(
        callable(getattr(store, name, None)) for name in ("last_revision", "wait", "wake_all")
    ):
        return cast(_Revisions, store)
    return None


def _rv(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion", ""))


@dataclass
class Handler:
    """Callbacks for one consumer; any may be None."""

    on_add: Callable[[Obj], None] | None = None
    on_update: Callable[[Obj, Obj], None] | None = None
    on_delete: Callable[[Obj], None] | None = None


class Informer:
    """List+watch one resource (all namespaces) into a cache. Start with :meth:`start`, end with :meth:`stop`."""

    def __init__(self, api: client.ApiLike, resource: str, stop: threading.Event | None = None) -> None:
        self.api = api
        self.resource = resource
        self._stop = threading.Event()
        self._parent_stop = stop
        self._lock = threading.Lock()
        self._dispatch = threading.RLock()
        self._cache: dict[str, Obj] = {}
        self._handlers: list[Handler] = []
        self._index_funcs: dict[str, IndexFunc] = {OWNER_UID_INDEX: owner_uids}
        self._indexes: dict[str, dict[str, set[str]]] = {OWNER_UID_INDEX: {}}
        self._thread: threading.Thread | None = None
        self._watch: client.WatchLike | None = None
        self._batch: _BatchWatch | None = None  # the watch again, when it can be drained in batches
        self.synced = threading.Event()
        self.relists = 0
        self.rv: str | None = None

    # ---- configuration -------------------------------------------------------------------------------------

    def add_index(self, name: str, func: IndexFunc) -> None:
        with self._lock:
            if name in self._index_funcs:
                return
            self._index_funcs[name] = func
            data: dict[str, set[str]] = {}
            for key, obj in self._cache.items():
                for value in func(obj):
                    data.setdefault(value, set()).add(key)
            self._indexes[name] = data

    def add_handler(self, handler: Handler) -> None:
        """Register a consumer; objects already cached are replayed to it as adds."""
        with self._dispatch:
            self._handlers.append(handler)
            if handler.on_add is not None:
                for obj in self.list():
                    handler.on_add(obj)

    # ---- reading -------------------------------------------------------------------------------------------

    def get(self, key: str) -> Obj | None:
        with self._lock:
            return self._cache.get(key)

    def get_copy(self, key: str) -> Obj | None:
        obj = self.get(key)
        return copy.deepcopy(obj) if obj is not None else None

    def list(self, namespace: str | None = None) -> builtins.list[Obj]:
        with self._lock:
            if namespace is None:
                return list(self._cache.values())
            return [
                o for o in self._cache.values() if (o.get("metadata") or {}).get("namespace") == namespace
            ]

    def by_index(self, index: str, value: str) -> builtins.list[Obj]:
        with self._lock:
            keys = self._indexes.get(index, {}).get(value, set())
            return [self._cache[k] for k in keys if k in self._cache]

    def __len__(self) -> int:
        with self._lock:
            return len(self._cache)

    # ---- lifecycle -----------------------------------------------------------------------------------------

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name=f"informer-{self.resource}", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        w = self._watch
        if w is not None:
            with contextlib.suppress(Exception):  # closing a dead watch is best effort
                w.close()

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def wait_synced(self, timeout: float | None = None) -> bool:
        return self.synced.wait(timeout)

    def _stopping(self) -> bool:
        return self._stop.is_set() or (self._parent_stop is not None and self._parent_stop.is_set())

    # ---- the loop ------------------------------------------------------------------------------------------

    def _run(self) -> None:
        backoff = 0.01
        rv: str | None = None
        while not self._stopping():
            try:
                if rv is None:
                    rv = self._relist()
                rv = self._watch_from(rv)
                backoff = 0.01
            except client.ApiError as exc:
                if client.is_gone(exc):
                    log.debug("informer %s: %s; re-listing", self.resource, exc.message)
                    rv = None
                    continue
                log.warning("informer %s: %s; retrying", self.resource, exc.message)
                rv = None
            except Exception:
                log.exception("informer %s failed; retrying", self.resource)
                rv = None
            self._stop.wait(backoff)
            backoff = min(backoff * 2, 1.0)

    def relist(self) -> str:
        """List afresh, reconcile the cache (firing handlers for the differences) and return the list's RV."""
        return self._relist()

    def _relist(self) -> str:
        items, rv = self.api.list(self.resource)
        self.relists += 1
        fresh = {key_of(o): strip(o) for o in items}
        with self._dispatch:
            with self._lock:
                old = self._cache
                self._cache = {}
                for idx in self._indexes.values():
                    idx.clear()
                for key, obj in fresh.items():
                    self._store_locked(key, obj)
            for key, obj in fresh.items():
                prev = old.get(key)
                if prev is None:
                    self._fire_add(obj)
                elif _rv(prev) != _rv(obj):
                    self._fire_update(prev, obj)
            for key, prev in old.items():
                if key not in fresh:
                    self._fire_delete(prev)
        self.synced.set()
        return rv

    def _watch_from(self, rv: str) -> str:
        """Follow a watch until stopped (returns the last resourceVersion) or it fails (raises)."""
        self.open_watch(rv)
        try:
            while not self._stopping():
                self.poll(0.2)
        finally:
            self.close_watch()
        return self.rv or rv

    # ---- stepping (used by the factory's shared loop) ------------------------------------------------------

    def open_watch(self, rv: str) -> None:
        self.rv = rv
        self._watch = w = self.api.watch(self.resource, resource_version=rv)
        self._batch = _batch_watch(w)

    def close_watch(self) -> None:
        w, self._watch = self._watch, None
        self._batch = None
        if w is not None:
            with contextlib.suppress(Exception):
                w.close()

    def poll(self, timeout: float) -> bool:
        """Handle at most one event (waiting up to ``timeout``); False when none came. Raises on a broken watch."""
        ev = self.fetch(timeout)
        if ev is None:
            return False
        self.deliver(*ev)
        return True

    def fetch(self, timeout: float) -> tuple[str, Obj] | None:
        """The next event of the watch without applying it (None when none came); raises on an ERROR event."""
        w = self._watch
        if w is None:
            return None
        ev = w.next_event(timeout=timeout)
        if ev is None:
            return None
        etype, obj = ev
        if etype == "ERROR":
            code = int(obj.get("code") or 0)
            raise client.ApiError(code or 500, str(obj.get("reason", "")), str(obj.get("message", "")))
        return etype, obj

    def deliver(self, etype: str, obj: Obj) -> None:
        """Apply a fetched event to the cache and the handlers."""
        new_rv = _rv(obj)
        if etype != "BOOKMARK":
            self._apply(etype, obj)
        if new_rv:
            self.rv = new_rv

    def _apply(self, etype: str, obj: Obj) -> None:
        obj = strip(obj)
        key = key_of(obj)
        with self._dispatch:
            with self._lock:
                prev = self._cache.get(key)
                if prev is not None:
                    self._unindex_locked(key, prev)
                    del self._cache[key]
                if etype != "DELETED":
                    self._store_locked(key, obj)
            if etype == "DELETED":
                self._fire_delete(obj)
            elif prev is None:
                self._fire_add(obj)
            else:
                self._fire_update(prev, obj)

    def _store_locked(self, key: str, obj: Obj) -> None:
        self._cache[key] = obj
        for name, func in self._index_funcs.items():
            data = self._indexes[name]
            for value in func(obj):
                data.setdefault(value, set()).add(key)

    def _unindex_locked(self, key: str, obj: Obj) -> None:
        for name, func in self._index_funcs.items():
            data = self._indexes[name]
            for value in func(obj):
                keys = data.get(value)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del data[value]

    def _fire_add(self, obj: Obj) -> None:
        for h in self._handlers:
            if h.on_add is not None:
                self._call(h.on_add, obj)

    def _fire_update(self, old: Obj, new: Obj) -> None:
        for h in self._handlers:
            if h.on_update is not None:
                self._call(h.on_update, old, new)

    def _fire_delete(self, obj: Obj) -> None:
        for h in self._handlers:
            if h.on_delete is not None:
                self._call(h.on_delete, obj)

    def _call(self, fn: Callable[..., None], *args: Obj) -> None:
        try:
            fn(*args)
        except Exception:
            log.exception("informer %s: handler failed", self.resource)


class InformerFactory:
    """One :class:`Informer` per resource, shared by every controller that asks for it.

    All of them are driven by **one** thread (the informers' own threads are not started): every store write wakes
    one thread instead of one per resource, which matters because the garbage collector informs on every resource
    type. The loop relists informers that need it (new, or after 410), then delivers pending events **in
    resourceVersion order across all resources** (each informer's next event is held as its "head"; the oldest
    head is delivered once every informer has been polled after it was fetched), so a handler never sees a
    ReplicaSet before the pod that was written earlier. With nothing pending it blocks on one watch for at most
    ``BLOCK`` (a write of that watch's kind wakes it early; others wait for the timeout, so a busy store costs
    one pass per ``BLOCK``, not one per write)::

        for each informer needing a list: relist + open watch
        fill heads (fetch(0) per informer) ─▶ deliver the oldest head ─▶ repeat ── none? ──▶ block ≤ 20 ms ─┐
              ▲─────────────────────────────────────────────────────────────────────────────────────────┘

    Over the in-process Api (watches that expose their revision) the loop drains in batches instead, and a pass
    touches only the watches whose kind has news (see :meth:`_deliver_batch`). Once a whole ``BLOCK`` went by
    without any write, it sleeps until the next write (up to ``IDLE``): an idle cluster costs no wake-ups, and the
    first write after a quiet spell is delivered at once.
    """

    BLOCK = 0.02
    IDLE = 1.0
    """Seconds to sleep until any write once a whole ``BLOCK`` went by without one (the store wakes it early)."""
    DRAIN = 2048

    def __init__(self, api: client.ApiLike, stop: threading.Event) -> None:
        self.api = api
        self._stop = stop
        self._lock = threading.Lock()
        self._informers: dict[str, Informer] = {}
        self._dirty: set[str] = set()
        self._retry_at: dict[str, float] = {}
        self._failures: dict[str, int] = {}
        self._thread: threading.Thread | None = None
        self._wake = threading.Event()
        self._heads: dict[str, tuple[int, str, Obj]] = {}  # per informer: the next event, fetched not applied
        self._buffers: dict[str, list[tuple[int, str, Obj]]] = {}  # batch mode: drained, not yet delivered
        # Batch mode over the in-process store: per resource, a revision up to which its watch has nothing unread
        # (the watch's own ``revision`` may lag: quiet watches are not touched); and the store revision of the
        # last pass that left every watch drained (while the store is still there, a pass has nothing to do).
        self._store = _revisions(api)
        self._quiet: dict[str, int] = {}
        self._settled = -1
        self._calm = False  # the last timed block saw no write at all: sleep until one comes

    def informer(self, resource: str) -> Informer:
        with self._lock:
            inf = self._informers.get(resource)
            created = inf is None
            if inf is None:
                inf = Informer(self.api, resource, self._stop)
                self._informers[resource] = inf
                self._dirty.add(resource)
                self._wake.set()
        if created and self._store is not None and self._thread is not None:
            self._store.wake_all()  # the loop may be asleep until the next write
        return inf

    def drop(self, resource: str) -> None:
        """Stop and forget an informer (a custom resource whose CRD went away)."""
        with self._lock:
            inf = self._informers.pop(resource, None)
            self._dirty.discard(resource)
        self._quiet.pop(resource, None)
        if inf is not None:
            inf.stop()
            inf.close_watch()

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="informers", daemon=True)
            self._thread.start()

    def all(self) -> builtins.list[Informer]:
        with self._lock:
            return list(self._informers.values())

    def wait_synced(self, timeout: float) -> bool:
        return all(inf.wait_synced(timeout) for inf in self.all())

    def stop(self, timeout: float = 2.0) -> None:
        self._stop.set()
        self._wake.set()
        for inf in self.all():
            inf.stop()
        if self._thread is not None:
            self._thread.join(timeout)
        for inf in self.all():
            inf.close_watch()

    # ---- the shared loop -----------------------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._step()
            except Exception:  # pragma: no cover - the loop must survive anything
                log.exception("informer loop failed; continuing")
                self._stop.wait(0.05)
        for inf in self.all():
            inf.close_watch()

    def _fail(self, resource: str, exc: BaseException) -> None:
        self._heads.pop(resource, None)
        self._buffers.pop(resource, None)
        self._quiet.pop(resource, None)
        inf = self._informers.get(resource)
        if inf is not None:
            inf.close_watch()
        n = self._failures.get(resource, 0)
        self._failures[resource] = n + 1
        if isinstance(exc, client.ApiError) and client.is_gone(exc):
            delay = 0.0
            log.debug("informer %s: %s; re-listing", resource, exc.message)
        else:
            delay = min(0.01 * (2**n), 1.0)
            msg = exc.message if isinstance(exc, client.ApiError) else repr(exc)
            log.warning("informer %s: %s; re-listing in %.2fs", resource, msg, delay)
        with self._lock:
            if resource in self._informers:
                self._dirty.add(resource)
        self._retry_at[resource] = time.monotonic() + delay

    def _step(self) -> None:
        with self._lock:
            dirty = [r for r in self._dirty if self._retry_at.get(r, 0.0) <= time.monotonic()]
            informers = list(self._informers.items())
        for resource in dirty:
            with self._lock:
                self._dirty.discard(resource)
                inf = self._informers.get(resource)
            if inf is None:
                continue
            self._heads.pop(resource, None)
            self._buffers.pop(resource, None)
            self._quiet.pop(resource, None)
            self._settled = -1
            try:
                inf.close_watch()
                inf.open_watch(inf.relist())
                self._failures.pop(resource, None)
            except Exception as exc:
                self._fail(resource, exc)
        batch = self._deliver_batch(informers)
        progressed = bool(batch)
        for _ in range(self.DRAIN if batch is None else 0):
            self._fill_heads(informers)
            if not self._heads:
                break
            # deliver the oldest pending event: every informer was polled after it was fetched, so nothing
            # older can still be unseen -- handlers observe writes in the store's order across resources
            resource = min(self._heads, key=lambda r: self._heads[r][0])
            _, etype, obj = self._heads.pop(resource)
            inf = self._informers.get(resource)
            if inf is not None:
                inf.deliver(etype, obj)
            progressed = True
        if progressed or self._stop.is_set():
            return
        with self._lock:
            pending = bool(self._dirty)
        if pending:
            self._wake.wait(self.BLOCK)
            self._wake.clear()
            return
        store = self._store
        before = -1
        if store is not None and not self._buffers and not self._heads:
            before = store.revision
            if self._calm and before == self._settled:
                # a whole BLOCK went by without a write: an idle cluster costs no wake-ups; the next write (or
                # stop(), which closes the watches, or a new informer) ends the sleep at once
                self._calm = False
                store.wait(before, self.IDLE)
                return
        try:
            self._block(informers)
        finally:
            self._calm = before >= 0 and store is not None and store.revision == before

    def _block(self, informers: builtins.list[tuple[str, Informer]]) -> None:
        """Wait up to ``BLOCK`` on the first watch (a write of its kind wakes it), else on ``_wake``."""
        for resource, inf in informers:
            if inf._watch is not None:
                known = self._quiet.pop(resource, None)
                if known is not None and inf._batch is not None:
                    inf._batch.skip_to(known)
                try:
                    ev = inf.fetch(self.BLOCK)  # the event waits to be ordered
                    if ev is not None:
                        item = (int(_rv(ev[1]) or 0), ev[0], ev[1])
                        if inf._batch is not None:
                            self._buffers.setdefault(resource, []).append(item)
                        else:
                            self._heads[resource] = item
                except Exception as exc:
                    self._fail(resource, exc)
                return
        self._wake.wait(self.BLOCK)
        self._wake.clear()

    def _deliver_batch(self, informers: builtins.list[tuple[str, Informer]]) -> bool | None:
        """Drain every watch, then deliver, in resourceVersion order, all events at or below the revision every
        watch has scanned up to (``Watch.revision`` of the in-process Api). One pass over the informers per batch
        instead of per event. None when a watch does not expose its revision (the per-event path is used).

        Most resources are quiet, and a pass must not cost a lock and a log read per informer (the garbage
        collector informs on every kind). With the store's lock-free revisions, the pass reads the global revision
        first and skips every resource whose newest event is not after the revision it was last known quiet at
        (its watch is not even touched); nothing written since the last settled pass means nothing to do. Without
        them each watch answers for itself (``Watch.fast_forward``)."""
        store = self._store
        top = store.revision if store is not None else -1  # read before any resource's last revision
        if top == self._settled and top >= 0 and not self._buffers:
            return False
        quiet = self._quiet
        busy: builtins.list[tuple[str, Informer, _BatchWatch]] = []
        safe = top if store is not None else None
        for resource, inf in informers:
            if inf._watch is None:
                continue
            w = inf._batch
            if w is None:  # decide before draining anything: the per-event path must see every event itself
                self._unsettle(informers)
                return None if not self._buffers else self._flush_all()
            if store is not None:
                known = quiet.get(resource)
                if known is not None and store.last_revision(resource) <= known:
                    quiet[resource] = top  # nothing of it up to ``top`` either
                    continue
                if known is not None:
                    w.skip_to(known)  # start reading there, not at an older revision among others' events
            elif w.fast_forward():
                safe = w.revision if safe is None else min(safe, w.revision)
                continue
            busy.append((resource, inf, w))
        settled = True
        for resource, inf, w in busy:
            buf = self._buffers.get(resource)
            try:
                while (ev := inf.fetch(0)) is not None:
                    if buf is None:
                        buf = self._buffers[resource] = []
                    buf.append((int(_rv(ev[1]) or 0), ev[0], ev[1]))
            except Exception as exc:
                self._fail(resource, exc)
                settled = False
                continue
            # drained to the store's revision? (a read may stop early, among other kinds' events)
            if w.fast_forward():
                quiet[resource] = w.revision
            else:
                quiet.pop(resource, None)
                settled = False
            safe = w.revision if safe is None else min(safe, w.revision)
        if settled and store is not None:
            self._settled = top
        if safe is None or not self._buffers:
            return False
        ready: builtins.list[tuple[int, int, str, str, Obj]] = []
        for resource, buf in list(self._buffers.items()):
            keep = []
            for i, (rv, etype, obj) in enumerate(buf):
                if rv <= safe:
                    ready.append((rv, i, resource, etype, obj))
                else:
                    keep.append((rv, etype, obj))
            if keep:
                buf[:] = keep
            else:
                del self._buffers[resource]
        ready.sort(key=lambda e: (e[0], e[1]))
        for _, _, resource, etype, obj in ready:
            target = self._informers.get(resource)
            if target is not None:
                target.deliver(etype, obj)
        return bool(ready)

    def _unsettle(self, informers: builtins.list[tuple[str, Informer]]) -> None:
        """Leave batch mode's bookkeeping: every quiet watch catches up to the revision it is known quiet at (the
        per-event path reads each watch from its own revision)."""
        for resource, inf in informers:
            known = self._quiet.pop(resource, None)
            w = inf._batch
            if known is not None and w is not None:
                w.skip_to(known)
        self._settled = -1

    def _flush_all(self) -> bool:
        """Deliver whatever was buffered (in order) before falling back to the per-event path."""
        ready = sorted(
            (
                (rv, i, r, etype, obj)
                for r, buf in self._buffers.items()
                for i, (rv, etype, obj) in enumerate(buf)
            ),
            key=lambda e: (e[0], e[1]),
        )
        self._buffers.clear()
        for _, _, resource, etype, obj in ready:
            target = self._informers.get(resource)
            if target is not None:
                target.deliver(etype, obj)
        return bool(ready)

    def _fill_heads(self, informers: builtins.list[tuple[str, Informer]]) -> None:
        """Poll every informer without a head until a whole pass finds nothing new: then each informer still
        empty was polled after every head was fetched, so no unseen event can be older than the oldest head."""
        while True:
            found = False
            for resource, inf in informers:
                if resource in self._heads or inf._watch is None:
                    continue
                batch = inf._batch
                if batch is not None and batch.fast_forward():
                    continue  # nothing new (what fetch(0) would find, without the lock)
                try:
                    ev = inf.fetch(0)
                except Exception as exc:
                    self._fail(resource, exc)
                    continue
                if ev is not None:
                    self._heads[resource] = (int(_rv(ev[1]) or 0), ev[0], ev[1])
                    found = True
            if not found:
                return
