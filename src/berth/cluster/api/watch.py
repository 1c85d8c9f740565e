"""Watches: a :class:`Watch` follows the store's event log for one resource from a revision on."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from berth.cluster import errors as E
from berth.cluster import objmeta
from berth.cluster import store as S
from berth.cluster.api.base import ApiBase
from berth.cluster.api.read import Reader, field_value
from berth.cluster.resources import ResourceType
from berth.kube import selectors
from berth.kube.objects import Obj


class RawObject(str):
    """An event's object as the store's JSON text, for a watch that streams it unchanged (see ``Watch.raw_text``)."""


class Watch:
    """Iterator of ``(event_type, obj)``; types ADDED, MODIFIED, DELETED (BOOKMARK when bookmarks were asked for).

    ``next_event(timeout)`` returns None on timeout; ``close()`` stops it. Raises :class:`ApiError` 410 when the
    log it needs was compacted while it lagged behind.
    """

    def __init__(
        self,
        api: ApiBase,
        rtype: ResourceType,
        namespace: str | None,
        start: int,
        initial: list[Obj],
        label_selector: selectors.Selector,
        field_selector: tuple[selectors.FieldRequirement, ...],
        initial_end_bookmark: bool,
        version: str | None,
        transform: Callable[[Obj], Obj] | None = None,
        shown: ResourceType | None = None,
    ) -> None:
        self._api = api
        self._store = api.store
        self.rtype = rtype
        self._resource = rtype.resource
        self._shown = shown or rtype
        self._transform = transform
        self._namespace = namespace
        self._labels = label_selector
        self._fields = field_selector
        self._version = version
        self.raw_text = False
        """Set by the HTTP server: events whose object needs no change may be handed out as :class:`RawObject`
        (the stored JSON text), so streaming them costs no decode and re-encode per watcher."""
        self._pending: deque[tuple[str, Any]] = deque(
            ("ADDED", transform(o) if transform else o) for o in initial
        )
        if initial_end_bookmark:
            self._pending.append(("BOOKMARK", self._bookmark_obj(start, initial_end=True)))
        self.revision = start
        self._closed = threading.Event()

    def _bookmark_obj(self, rv: int, initial_end: bool = False) -> Obj:
        meta: dict[str, Any] = {"resourceVersion": str(rv)}
        if initial_end:
            meta["annotations"] = {"k8s.io/initial-events-end": "true"}
        return {
            "kind": self._shown.kind,
            "apiVersion": self._shown.api_version_for(self._version or self._shown.version),
            "metadata": meta,
        }

    def bookmark(self) -> Obj:
        """A BOOKMARK object at the revision this watch has caught up to."""
        return self._bookmark_obj(self.revision)

    def _matches(self, obj: Obj) -> bool:
        if not self._labels.empty and not self._labels.matches(
            (obj.get("metadata") or {}).get("labels") or {}
        ):
            return False
        return not self._fields or selectors.fields_match(self._fields, obj, field_value)

    def fast_forward(self) -> bool:
        """Nothing to read? True when no event is pending and the store holds no event of this resource after
        ``revision``; the watch then moves ``revision`` to the store's revision without locking or reading the log
        (the informer loop asks this of every watch on each pass, and most resources are quiet). Lock-free: the
        global revision is read before the resource's newest one, and commits set them in the other order."""
        if self._pending:
            return False
        top = self._store.revision
        if self._store.last_revision(self._resource) > self.revision:
            return False
        if top > self.revision:
            self.revision = top
        return True

    def skip_to(self, revision: int) -> None:
        """Move ``revision`` up to ``revision``, which the caller knows holds no event of this resource after the
        current one (it read ``Store.last_revision``), so the next read starts there instead of scanning other
        resources' events from an old revision (the informer loop leaves quiet watches untouched)."""
        if revision > self.revision:
            self.revision = revision

    def _fill(self, timeout: float | None) -> None:
        if timeout is not None and timeout <= 0 and self.fast_forward():
            return
        ready, cursor = self._store.wait_resource(self._resource, self.revision, timeout)
        if not ready:
            self.revision = cursor  # nothing of ours up to there: skip other resources' events unread
            return
        try:
            events = self._store.events_after(self.revision, resource=self._resource)
        except S.Compacted as exc:
            raise E.too_old_resource_version(exc.requested, exc.oldest) from exc
        resource, ns = self._resource, self._namespace
        filtered = not self._labels.empty or bool(self._fields)
        rt = self.rtype
        raw = (
            self.raw_text
            and self._transform is None
            and self._version in (None, rt.version)
            and not rt.storage_version
        )
        for ev in events:
            self.revision = ev.rv
            if ev.resource != resource or (ns is not None and ev.namespace != ns):
                continue
            typ = ev.type
            if raw and not filtered:
                self._pending.append((typ, RawObject(ev.value)))
                continue
            obj = objmeta.loads(ev.value)
            if filtered:
                now = self._matches(obj)
                before = ev.prev is not None and typ == "MODIFIED" and self._matches(objmeta.loads(ev.prev))
                if typ == "MODIFIED":
                    if now and not before:
                        typ = "ADDED"
                    elif before and not now:
                        typ = "DELETED"
                    elif not now:
                        continue
                elif not now:
                    continue
            if raw:
                self._pending.append((typ, RawObject(ev.value)))
                continue
            out = self._api.present(self.rtype, obj, self._version)
            self._pending.append((typ, self._transform(out) if self._transform else out))

    def next_event(self, timeout: float | None = None) -> tuple[str, Obj] | None:
        if self._pending:
            return self._pending.popleft()
        if self._closed.is_set() or self._store.closed:
            return None
        self._fill(timeout)
        if self._pending:
            return self._pending.popleft()
        return None

    @property
    def idle(self) -> bool:
        """Nothing read from the log is waiting to be delivered (a BOOKMARK now would not skip an event)."""
        return not self._pending

    @property
    def closed(self) -> bool:
        return self._closed.is_set() or self._store.closed

    def close(self) -> None:
        self._closed.set()
        self._store.wake_all()

    def __iter__(self) -> Iterator[tuple[str, Obj]]:
        while not self.closed:
            ev = self.next_event(timeout=1.0)
            if ev is not None:
                yield ev


class Watcher(Reader):
    """``watch``: from now, from a revision, or after the current list as synthetic ADDED events."""

    def do_watch(
        self,
        rt: ResourceType,
        namespace: str | None,
        resource_version: str | None = None,
        label_selector: str = "",
        field_selector: str = "",
        *,
        send_initial_events: bool | None = None,
        version: str | None = None,
        transform: Callable[[Obj], Obj] | None = None,
        shown: ResourceType | None = None,
    ) -> Watch:
        if rt.virtual:
            raise E.method_not_allowed("watch", rt.resource)
        labels, fields = self._selectors(rt, label_selector, field_selector)
        ns = namespace if rt.namespaced and namespace else None
        rv_text = resource_version or ""
        with self.store.locked():
            if send_initial_events is False and rv_text in ("", "0"):
                # sendInitialEvents=false without a revision: changes from now on, no synthetic ADDED.
                return Watch(
                    self, rt, ns, self.store.revision, [], labels, fields, False, version, transform, shown
                )
            if send_initial_events or rv_text in ("", "0"):
                res = self.do_list(rt, ns, label_selector, field_selector, version=version)
                start = int(res.resource_version)
                return Watch(
                    self,
                    rt,
                    ns,
                    start,
                    res.items,
                    labels,
                    fields,
                    bool(send_initial_events),
                    version,
                    transform,
                    shown,
                )
            try:
                start = int(rv_text)
            except ValueError as exc:
                raise E.bad_request(f"invalid resource version {rv_text!r}") from exc
            if start < self.store.compacted:
                raise E.too_old_resource_version(start, self.store.compacted + 1)
            return Watch(self, rt, ns, start, [], labels, fields, False, version, transform, shown)
