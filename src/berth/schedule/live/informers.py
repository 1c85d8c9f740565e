"""Informers: list + watch one resource, keep a local copy, and report every change -- across dropped watches,
410s and API server restarts.

Why: the live scheduler must see every pod and node change exactly as the API server orders them, and must never
miss one, or a pod would be lost (never queued) or placed on a node that is already full. One :class:`Informer`
per resource (client-go's reflector + indexer, in miniature)::

             list (paged, resourceVersion="")             watch ?resourceVersion=RV&allowWatchBookmarks=true
    start ──────────────────────────────────▶ synced ─────────────────────────────────────────────┐
      ▲                                          ▲         ADDED/MODIFIED/DELETED: store + sink    │
      │ error: backoff                           │         BOOKMARK: RV only                       │
      └──────────────────────────────────────────┤         stream ended (timeout, cut): re-watch ◀─┘
                                                 │         connection error: backoff, re-watch from RV
                                                 └──────── 410 Gone (RV compacted): re-list, diff

A re-list is compared with the local copy: objects gone become DELETED (with their last known state), new ones
ADDED, changed ones (other resourceVersion) MODIFIED -- so a consumer sees the same sequence of facts as if the
watch had never dropped. Errors back off exponentially (client-go's reflector: 0.8 s doubling to 30 s, jittered),
403s are logged once per missing permission, and a resource the server does not serve (404 on list) is reported
once and treated as empty.
"""

from __future__ import annotations

import contextlib
import logging
import random
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

import urllib3

from berth.kube.objects import Obj, object_key
from berth.schedule.live import api, http11

log = logging.getLogger("berth.schedule.live")

LIST_PAGE = 500
VERY_SHORT_WATCH_SECONDS = 1.0
WATCH_TIMEOUT_SECONDS = (300, 600)  # each watch asks the server to end it after a random time in this range


@dataclass(frozen=True)
class Resource:
    """An API resource an informer can follow."""

    kind: str
    plural: str
    group: str = ""
    version: str = "v1"
    namespaced: bool = True

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def path(self) -> str:
        """The all-namespaces collection path."""
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        return f"{base}/{self.plural}"

    @property
    def qualified(self) -> str:
        """``pods``, ``replicasets.apps``: how RBAC and error messages name it."""
        return f"{self.plural}.{self.group}" if self.group else self.plural


# Every resource a scheduler plugin may read (berth.schedule.rbac.KNOWN_RESOURCES), with the version to follow.
KNOWN: dict[tuple[str, str], Resource] = {
    (r.group, r.plural): r
    for r in (
        Resource("Pod", "pods"),
        Resource("Node", "nodes", namespaced=False),
        Resource("Namespace", "namespaces", namespaced=False),
        Resource("Service", "services"),
        Resource("ReplicationController", "replicationcontrollers"),
        Resource("PersistentVolumeClaim", "persistentvolumeclaims"),
        Resource("PersistentVolume", "persistentvolumes", namespaced=False),
        Resource("ReplicaSet", "replicasets", "apps"),
        Resource("StatefulSet", "statefulsets", "apps"),
        Resource("PodDisruptionBudget", "poddisruptionbudgets", "policy"),
        Resource("StorageClass", "storageclasses", "storage.k8s.io", namespaced=False),
        Resource("CSINode", "csinodes", "storage.k8s.io", namespaced=False),
        Resource("CSIDriver", "csidrivers", "storage.k8s.io", namespaced=False),
        Resource("CSIStorageCapacity", "csistoragecapacities", "storage.k8s.io"),
        Resource("VolumeAttachment", "volumeattachments", "storage.k8s.io", namespaced=False),
        Resource("PriorityClass", "priorityclasses", "scheduling.k8s.io", namespaced=False),
        Resource("ResourceClaim", "resourceclaims", "resource.k8s.io"),
        Resource("ResourceSlice", "resourceslices", "resource.k8s.io", namespaced=False),
        Resource("DeviceClass", "deviceclasses", "resource.k8s.io", namespaced=False),
    )
}
PODS = KNOWN[("", "pods")]
NODES = KNOWN[("", "nodes")]


class EventType(StrEnum):
    ADDED = "ADDED"
    MODIFIED = "MODIFIED"
    DELETED = "DELETED"


@dataclass(frozen=True)
class Delta:
    """One change of one object: ``old`` is None for ADDED, ``new`` is the final state for DELETED."""

    resource: Resource
    type: EventType
    old: Obj | None
    new: Obj


class Gone(Exception):
    """410: the resourceVersion we asked for was compacted away; only a re-list helps."""


class WatchStream(Protocol):
    """An open watch: iterate its events (dicts ``{type, object}``); ``close()`` may be called from another thread."""

    def __iter__(self) -> Iterator[dict[str, Any]]: ...

    def close(self) -> None: ...


class ListWatch(Protocol):
    """Where an informer gets its data (the API; tests wrap it to cut streams)."""

    def list(self, resource: Resource, continue_token: str, limit: int) -> dict[str, Any]: ...

    def watch(self, resource: Resource, resource_version: str, timeout_seconds: int) -> WatchStream: ...


def _events(stream: _HttpWatch | _LineWatch, lines: Iterable[bytes]) -> Iterator[dict[str, Any]]:
    """The events of a watch answer's lines, for both kinds of stream: a broken connection is
    :class:`api.Unreachable` naming the server, one closed from another thread (stop) simply ends, and the stream
    is closed whichever way the reading ends."""
    loads = api.loads
    try:
        for line in lines:
            if line.strip():
                yield loads(line)
    except Exception as exc:
        if stream.closed:
            return  # closed from another thread: the read fails in whatever way the transport chooses
        if isinstance(exc, api.TRANSPORT_ERRORS):
            raise api.Unreachable(f"watch stream broke: {type(exc).__name__}: {exc}", stream.url) from exc
        raise
    finally:
        stream.close()


class _HttpWatch:
    """A watch response read line by line through urllib3 (the server flushes one JSON object per line)."""

    def __init__(self, resp: Any, url: str = "") -> None:
        self._resp = resp
        self.url = url  # the server it streams from
        self.closed = False

    def _lines(self) -> Iterator[bytes]:
        buf = b""
        for chunk in self._resp.stream(65536, decode_content=True):
            buf += chunk
            while True:
                nl = buf.find(b"\n")
                if nl < 0:
                    break
                line, buf = buf[:nl], buf[nl + 1 :]
                yield line

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return _events(self, self._lines())

    def close(self) -> None:
        """End the stream and drop its connection (never reused: a watch connection may belong to a server that
        has since stopped; a new watch opens a new connection)."""
        if self.closed:
            return
        self.closed = True
        with contextlib.suppress(Exception):
            self._resp.shutdown()
        with contextlib.suppress(Exception):
            self._resp.close()
        with contextlib.suppress(Exception):
            self._resp.release_conn()


class _LineWatch:
    """A watch answer read as lines from a connection of its own (:func:`api.open_stream`: a burst of events is one
    read, and no urllib3 layer per event); what :class:`_HttpWatch` does through urllib3."""

    def __init__(self, conn: http11.Connection, lines: Iterator[bytes], url: str = "") -> None:
        self._conn = conn
        self._lines = lines
        self.url = url
        self.closed = False

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return _events(self, self._lines)

    def close(self) -> None:
        """End the stream: shut the socket down (a read blocked in another thread returns) and close it."""
        if self.closed:
            return
        self.closed = True
        sock = self._conn.sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(Exception):
            self._conn.close()


class ApiListWatch:
    """:class:`ListWatch` over the API through the official client."""

    def __init__(self, api_client: Any) -> None:
        self.api_client = api_client

    def list(self, resource: Resource, continue_token: str, limit: int) -> dict[str, Any]:
        query: list[tuple[str, Any]] = [("limit", limit)]
        if continue_token:
            query.append(("continue", continue_token))
        return api.call(self.api_client, "GET", resource.path, query, timeout=(10.0, 120.0))

    def watch(self, resource: Resource, resource_version: str, timeout_seconds: int) -> WatchStream:
        query = [
            ("watch", "true"),
            ("resourceVersion", resource_version),
            ("allowWatchBookmarks", "true"),
            ("timeoutSeconds", timeout_seconds),
        ]
        url = str(self.api_client.configuration.host)
        timeout = (10.0, float(timeout_seconds) + 30.0)
        streamed = api.open_stream(self.api_client, resource.path, query, timeout)
        if streamed is not None:
            return _LineWatch(*streamed, url)
        return _HttpWatch(
            api.open_request(self.api_client, "GET", resource.path, query, timeout=timeout), url
        )


@dataclass(frozen=True)
class Backoff:
    """Exponential backoff with jitter (client-go reflector: 800 ms doubling to 30 s, jitter 1.0)."""

    initial: float = 0.8
    cap: float = 30.0
    jitter: float = 1.0

    def delay(self, failures: int, rng: random.Random) -> float:
        base = min(self.cap, self.initial * 2.0 ** max(0, failures - 1))
        return base * (1.0 + self.jitter * rng.random()) if self.jitter else base


class Informer:
    """Follows one resource; delivers :class:`Delta` to ``sink`` from its own thread.

    Args:
        resource: what to follow.
        source: list/watch calls (:class:`ApiListWatch` normally).
        sink: called for every change, in the server's order (must be quick: it only hands the delta on).
        permissions: logs 403s once per missing permission.
        backoff: error backoff.
        watch_timeout: (min, max) seconds each watch may stay open.
        on_unreachable: called with what failed and the server it was sent to ("" if not known) when the API
            server stopped answering (the owner drops pooled connections, re-reads the kubeconfig and logs the
            outage once).
        on_reachable: called after every list, and when a watch delivers after a failure (the owner logs that
            the server is back).
    """

    def __init__(
        self,
        resource: Resource,
        source: ListWatch,
        sink: Callable[[Delta], None],
        permissions: api.PermissionLog,
        *,
        backoff: Backoff | None = None,
        watch_timeout: tuple[int, int] = WATCH_TIMEOUT_SECONDS,
        seed: int | None = None,
        on_unreachable: Callable[[str, str], None] | None = None,
        on_reachable: Callable[[], None] | None = None,
    ) -> None:
        self.resource = resource
        self.source = source
        self.sink = sink
        self.permissions = permissions
        self.backoff = backoff or Backoff()
        self.watch_timeout = watch_timeout
        self.on_unreachable = on_unreachable
        self.on_reachable = on_reachable
        self.store: dict[str, Obj] = {}
        self.resource_version = ""
        self.synced = threading.Event()
        self.served = True
        self.relists = 0  # lists after the first (410 or an error before any watch could resume)
        self.rewatches = 0  # watches started after the first
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._stream: WatchStream | None = None
        self._watch_opened = (
            False  # this round's watch request was answered (a later failure broke the stream)
        )
        self._thread: threading.Thread | None = None
        self._rng = random.Random(seed)

    # --- lifecycle ---------------------------------------------------------------------------------------------

    def start(self) -> None:
        self._thread = threading.Thread(
            target=self._run, name=f"informer-{self.resource.qualified}", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        stream = self._stream
        if stream is not None:
            stream.close()

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def get(self, key: str) -> Obj | None:
        with self._lock:
            return self.store.get(key)

    def items(self) -> list[Obj]:
        with self._lock:
            return list(self.store.values())

    # --- the loop ----------------------------------------------------------------------------------------------

    def _run(self) -> None:
        failures = 0
        need_list = True
        watches = 0
        while not self._stop.is_set():
            self._watch_opened = False
            try:
                if need_list:
                    self._list()
                    need_list = False
                if not self.served:
                    return
                if watches:
                    self.rewatches += 1
                watches += 1
                self._watch()
                failures = 0
            except Gone:
                log.info(
                    "%s: resourceVersion %s is too old; re-listing",
                    self.resource.qualified,
                    self.resource_version,
                )
                need_list = True
                failures = 0
            except api.ApiError as exc:
                failures += 1
                if exc.status == 403:
                    verb = "list" if need_list else "watch"
                    self.permissions.forbidden(verb, self.resource.plural, self.resource.group, "", exc)
                elif exc.status == 404 and need_list:
                    log.warning(
                        "%s: the API server does not serve this resource; plugins that read it see none",
                        self.resource.qualified,
                    )
                    self.served = False
                    self.synced.set()
                    return
                else:
                    log.warning("%s: %s", self.resource.qualified, exc)
                self._pause(failures)
            except (api.Unreachable, urllib3.exceptions.HTTPError, OSError, ValueError) as exc:
                if self._stop.is_set():
                    return  # stop() closed the watch stream under us: not an outage
                failures += 1
                if self.on_unreachable is not None:
                    self.on_unreachable(f"{self.resource.qualified}: {exc}", getattr(exc, "url", ""))
                # The owner logs the outage once; per informer it is a detail. A stream that broke is re-watched
                # from its resourceVersion (client-go); a request the server did not answer at all means it is
                # down or restarting, so the informer lists again once it answers: it may come back from another
                # state (or be another server), and a re-list is diffed against the local copy.
                if not self._watch_opened:
                    need_list = True
                log.debug("%s: API server unreachable (%s)", self.resource.qualified, exc)
                self._pause(failures)
            except Exception:
                if self._stop.is_set():
                    return
                failures += 1
                log.exception("%s: unexpected failure; retrying", self.resource.qualified)
                self._pause(failures)

    def _pause(self, failures: int) -> None:
        self._stop.wait(self.backoff.delay(failures, self._rng))

    def _list(self) -> None:
        items: list[Obj] = []
        token = ""
        rv = ""
        limit = LIST_PAGE
        while True:
            try:
                page = self.source.list(self.resource, token, limit)
            except api.ApiError as exc:
                if exc.status == 410 and token:
                    # The continue token expired mid-list: start over in one go.
                    items, token, limit = [], "", 0
                    continue
                raise
            for item in page.get("items") or []:
                if isinstance(item, dict):
                    item = trim(item)
                    item.setdefault("kind", self.resource.kind)
                    item.setdefault("apiVersion", self.resource.api_version)
                    items.append(item)
            meta = page.get("metadata") or {}
            rv = str(meta.get("resourceVersion") or rv)
            token = str(meta.get("continue") or "")
            if not token:
                break
        if self.synced.is_set():
            self.relists += 1
        if self.on_reachable is not None:
            self.on_reachable()
        self._replace(items)
        self.resource_version = rv
        self.synced.set()

    def _replace(self, items: list[Obj]) -> None:
        """A fresh list: emit what changed relative to the local copy (deletions first, then adds/updates)."""
        fresh = {object_key(o): o for o in items}
        with self._lock:
            old_store = self.store
            self.store = dict(fresh)
        for key, gone in old_store.items():
            if key not in fresh:
                self.sink(Delta(self.resource, EventType.DELETED, gone, gone))
        for key, obj in fresh.items():
            old = old_store.get(key)
            if old is None:
                self.sink(Delta(self.resource, EventType.ADDED, None, obj))
            elif _rv(old) != _rv(obj):
                self.sink(Delta(self.resource, EventType.MODIFIED, old, obj))

    def _watch(self) -> None:
        timeout = self._rng.randint(*self.watch_timeout)
        stream = self.source.watch(self.resource, self.resource_version, timeout)
        self._watch_opened = True
        if self.on_reachable is not None:
            self.on_reachable()  # the server answered the watch request
        self._stream = stream
        try:
            if self._stop.is_set():
                return
            started = time.monotonic()
            events = 0
            for event in stream:
                if self._stop.is_set():
                    return
                events += 1
                self._handle(event)
            if (
                events == 0
                and time.monotonic() - started < VERY_SHORT_WATCH_SECONDS
                and not self._stop.is_set()
            ):
                # client-go's "very short watch": a server that ends watches at once is unwell; back off.
                raise api.Unreachable("very short watch: the server ended it at once without any event")
        finally:
            self._stream = None
            stream.close()

    def _handle(self, event: Mapping[str, Any]) -> None:
        kind = str(event.get("type") or "")
        obj = event.get("object")
        if not isinstance(obj, dict):
            return
        if kind == "ERROR":
            code = int(obj.get("code") or 0)
            if code == 410:
                raise Gone(str(obj.get("message") or ""))
            raise api.ApiError(code, str(obj.get("reason") or ""), str(obj.get("message") or ""), obj)
        rv = _rv(obj)
        if kind == "BOOKMARK":
            if rv:
                self.resource_version = rv
            return
        obj = trim(obj)
        obj.setdefault("kind", self.resource.kind)
        obj.setdefault("apiVersion", self.resource.api_version)
        key = object_key(obj)
        if kind in ("ADDED", "MODIFIED"):
            with self._lock:
                old = self.store.get(key)
                self.store[key] = obj
            if old is None:
                self.sink(Delta(self.resource, EventType.ADDED, None, obj))
            else:
                self.sink(Delta(self.resource, EventType.MODIFIED, old, obj))
        elif kind == "DELETED":
            with self._lock:
                old = self.store.pop(key, None)
            if old is not None:
                self.sink(Delta(self.resource, EventType.DELETED, old, obj))
        if rv:
            self.resource_version = rv


def trim(obj: dict[str, Any]) -> dict[str, Any]:
    """The informers' transform, in place on a freshly decoded object: drop ``metadata.managedFields`` (as
    kube-scheduler's pod informer does: no plugin reads them, and on a pod written by a client, a kubelet and a
    scheduler they are close to half its size), and intern its short string values, since the cache holds every
    object while it exists.

    Why in place, and values only: the keys already come shared -- :func:`berth.schedule.live.api.loads` is orjson,
    whose decoder reuses one string per key -- so rebuilding every dict to intern them (what
    :func:`berth.kube.objects.compact` does for any decoder) bought nothing here and was most of an informer's CPU
    per watch event on ``berth bench schedule --live``."""
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        meta.pop("managedFields", None)
    _intern_in_place(obj)
    return obj


_SHORT = 32  # as berth.kube.objects.compact: values this short repeat across objects ("True", "100m", times)
_intern = sys.intern


def _intern_in_place(container: dict[Any, Any] | list[Any]) -> None:
    """Intern the short strings in ``container`` (a dict or a list) and in everything it holds."""
    pairs = container.items() if type(container) is dict else enumerate(container)
    for k, v in pairs:
        t = type(v)
        if t is str:
            if len(v) <= _SHORT:
                container[k] = _intern(v)
        elif t is dict or t is list:
            _intern_in_place(v)


def _rv(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


def wait_synced(informers: list[Informer], stop: threading.Event, timeout: float | None = None) -> bool:
    """Block until every informer has listed once (or ``stop``/timeout). True when all synced."""
    deadline = None if timeout is None else time.monotonic() + timeout
    for inf in informers:
        while not inf.synced.wait(0.1):
            if stop.is_set() or (deadline is not None and time.monotonic() > deadline):
                return False
    return True
