"""The in-process Kubernetes API: the semantics behind every HTTP verb, callable without HTTP.

The HTTP server (``server.py``) parses requests and calls the methods here; the controllers call the same methods
in-process. Both therefore see one behaviour: defaulting, validation, a global ``resourceVersion`` with optimistic
concurrency (409), ``generation`` bumps, status/scale subresources, finalizers and ``deletionTimestamp``,
propagation policies, namespace lifecycle hooks, CRDs that register new types, and watches with 410 after
compaction.

Object life cycle as the store sees it::

    create --> live --(update/patch)--> live
                 |--(delete, no finalizers)--> gone (DELETED event)
                 `--(delete, finalizers)--> terminating (deletionTimestamp set, MODIFIED)
                        --(update leaves no finalizers)--> gone (DELETED)

Namespaces are the same with ``spec.finalizers`` (the namespace controller empties them through ``finalize``).
Pods are removed at once on delete (no kubelet grace period is simulated) unless they carry finalizers.

All writes run under the store's writer lock, so read-check-write sequences are atomic. Objects handed out are
fresh copies: callers may mutate them freely.
"""

from __future__ import annotations

import base64
import builtins
import copy
import json
import os
import random
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from berth.cluster import admission, defaults, eventsv1, quota, validation
from berth.cluster import errors as E
from berth.cluster import resources as R
from berth.cluster import store as S
from berth.cluster.errors import ApiError
from berth.cluster.resources import ResourceType
from berth.kube import selectors
from berth.kube.errors import InputError
from berth.kube.objects import Obj

__all__ = ["Api", "ApiError", "AuditHook", "ListResult", "ResourceType", "Watch"]

DEFAULT_USER = "system:controller:berth"
PATCH_TYPES = ("json", "merge", "strategic", "apply")
_GENERATE_CHARS = "bcdfghjklmnpqrstvwxz2456789"

AuditHook = Callable[[str, str, str, str, str, str, int], None]
"""(user, verb, resource, subresource, namespace, name, code) -> None"""

Clock = Callable[[], datetime]


def _utcnow() -> datetime:
    return datetime.now(UTC)


# One (second, text) pair, replaced whole, so two threads never combine one second with another's text.
_TIME_CACHE: list[tuple[int, str]] = [(-1, "")]


def format_time(t: datetime) -> str:
    """Kubernetes ``Time``: second precision, ``Z`` suffix (cached per second: every write stamps one)."""
    if t.tzinfo is UTC:
        sec = int(t.timestamp())
        cached_sec, text = _TIME_CACHE[0]
        if cached_sec != sec:
            text = t.strftime("%Y-%m-%dT%H:%M:%SZ")
            _TIME_CACHE[0] = (sec, text)
        return text
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


_UID_BYTES = 4096
# The variant digit of a version 4 UUID (RFC 9562: bits 10xx): a random digit's low two bits under 8.
_VARIANT = {c: "89ab"[int(c, 16) & 3] for c in "0123456789abcdef"}
_UIDS: list[str] = []
"""Uids made ahead, 128 from each 4 KiB of ``os.urandom`` (the randomness ``uuid.uuid4`` uses): one ``getrandom``
system call per 128 uids instead of one per uid. ``list.pop`` and ``list.extend`` are atomic, so threads need no
lock: two that find it empty at once both add a batch of fresh uids."""
os.register_at_fork(after_in_child=_UIDS.clear)  # a forked child must not hand out its parent's uids


def _make_uids() -> None:
    """Format a batch: as in ``uuid4``, of 32 random hex digits the 13th becomes the version (4) and the 17th keeps
    two random bits under the variant bits, so 122 bits are random."""
    t = os.urandom(_UID_BYTES).hex()
    _UIDS.extend(
        [
            f"{t[p : p + 8]}-{t[p + 8 : p + 12]}-4{t[p + 13 : p + 16]}-"
            f"{_VARIANT[t[p + 16]]}{t[p + 17 : p + 20]}-{t[p + 20 : p + 32]}"
            for p in range(0, len(t), 32)
        ]
    )


def new_uid() -> str:
    """A random (version 4) UUID as text, like ``str(uuid.uuid4())`` without building a UUID object."""
    while True:
        try:
            return _UIDS.pop()
        except IndexError:
            _make_uids()


def format_micro_time(t: datetime) -> str:
    """Kubernetes ``MicroTime``: six fraction digits."""
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _loads(text: str) -> Obj:
    out: Obj = json.loads(text)
    return out


def _copy(obj: Obj) -> Obj:
    """A deep copy of a JSON object (a JSON round trip is several times faster than ``copy.deepcopy``)."""
    try:
        out: Obj = json.loads(json.dumps(obj))
    except (TypeError, ValueError):
        return copy.deepcopy(obj)
    return out


@dataclass(frozen=True)
class ListResult:
    """One page of a list: items, the list's resourceVersion, the continue token and remaining count."""

    items: list[Obj]
    resource_version: str
    continue_token: str = ""
    remaining: int | None = None


# Field selectors each resource supports beyond metadata.name / metadata.namespace (upstream field label conversion).
FIELD_LABELS: dict[str, tuple[str, ...]] = {
    "pods": (
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.schedulerName",
        "spec.serviceAccountName",
        "spec.hostNetwork",
        "status.phase",
        "status.podIP",
        "status.podIPs",
        "status.nominatedNodeName",
    ),
    "events": (
        "involvedObject.kind",
        "involvedObject.namespace",
        "involvedObject.name",
        "involvedObject.uid",
        "involvedObject.apiVersion",
        "involvedObject.resourceVersion",
        "involvedObject.fieldPath",
        "reason",
        "reportingComponent",
        "source",
        "type",
    ),
    "events.events.k8s.io": (
        "regarding.kind",
        "regarding.namespace",
        "regarding.name",
        "regarding.uid",
        "regarding.apiVersion",
        "regarding.resourceVersion",
        "regarding.fieldPath",
        "reason",
        "reportingController",
        "type",
    ),
    "secrets": ("type",),
    "nodes": ("spec.unschedulable",),
    "namespaces": ("status.phase",),
    "replicasets.apps": ("status.replicas",),
    "jobs.batch": ("status.successful",),
    "replicationcontrollers": ("status.replicas",),
    "certificatesigningrequests.certificates.k8s.io": ("spec.signerName",),
}


def _field_value(obj: Obj, path: str) -> str:
    if path == "source":
        return str(((obj.get("source") or {}).get("component")) or "")
    if path == "status.podIPs":
        return ",".join(str(p.get("ip", "")) for p in ((obj.get("status") or {}).get("podIPs") or []))
    return selectors.field_value(obj, path)


def _meta(obj: Obj) -> dict[str, Any]:
    m = obj.get("metadata")
    if not isinstance(m, dict):
        m = {}
        obj["metadata"] = m
    return m


def _spec_and_rest(obj: Obj) -> Obj:
    return {k: v for k, v in obj.items() if k not in ("metadata", "status")}


def _strip_volatile(obj: Obj) -> Obj:
    """The object without fields that change on every write (for no-op detection)."""
    out = dict(obj)
    m = dict(out.get("metadata") or {})
    m.pop("resourceVersion", None)
    m.pop("managedFields", None)
    out["metadata"] = m
    return out


# ---- watch --------------------------------------------------------------------------------------------------


class Watch:
    """Iterator of ``(event_type, obj)``; types ADDED, MODIFIED, DELETED (BOOKMARK when bookmarks were asked for).

    ``next_event(timeout)`` returns None on timeout; ``close()`` stops it. Raises :class:`ApiError` 410 when the
    log it needs was compacted while it lagged behind.
    """

    def __init__(
        self,
        api: Api,
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
        self._pending: deque[tuple[str, Obj]] = deque(
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
        return not self._fields or selectors.fields_match(self._fields, obj, _field_value)

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
        for ev in events:
            self.revision = ev.rv
            if ev.resource != resource or (ns is not None and ev.namespace != ns):
                continue
            obj = _loads(ev.value)
            typ = ev.type
            if filtered:
                now = self._matches(obj)
                before = ev.prev is not None and typ == "MODIFIED" and self._matches(_loads(ev.prev))
                if typ == "MODIFIED":
                    if now and not before:
                        typ = "ADDED"
                    elif before and not now:
                        typ = "DELETED"
                    elif not now:
                        continue
                elif not now:
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


# ---- the API --------------------------------------------------------------------------------------------------


def _generate_suffix(n: int = 5) -> str:
    return "".join(random.choice(_GENERATE_CHARS) for _ in range(n))


class Api:
    """Kubernetes API semantics over a :class:`~berth.cluster.store.Store`.

    ``resource`` arguments are resource keys (``pods``, ``deployments.apps``, ``<plural>.<crd-group>``).
    ``user`` names the caller in the audit log. In-process writes are audited when ``audit`` is set; the HTTP
    server audits its own requests and calls the ``do_*`` methods, which never audit.
    """

    def __init__(
        self,
        store: S.Store | None = None,
        registry: R.Registry | None = None,
        *,
        clock: Clock = _utcnow,
        audit: AuditHook | None = None,
    ) -> None:
        self.store = store if store is not None else S.Store()
        self.registry = registry if registry is not None else R.Registry()
        self.clock = clock
        self.audit = audit
        from berth.cluster import crds  # local: crds imports api types

        self._crds = crds
        crds.load_all(self)
        self.bootstrap()

    def now_text(self) -> str:
        """The clock's time now as Kubernetes ``Time`` text. With the real clock the second comes from
        ``time.time()`` and the text from format_time's per-second cache: no datetime object per write."""
        if self.clock is _utcnow:
            cached_sec, text = _TIME_CACHE[0]
            if cached_sec == int(time.time()):
                return text
        return format_time(self.clock())

    # ---- types ---------------------------------------------------------------------------------------------

    def resource_type(self, resource: str) -> ResourceType:
        """The type for a resource key; 404 NotFound when unknown."""
        t = self.registry.get(resource)
        if t is None:
            plural, _, group = resource.partition(".")
            raise ApiError(
                404,
                E.Reason.NOT_FOUND,
                f"the server could not find the requested resource ({resource})",
                {"group": group, "kind": plural} if group else {"kind": plural},
            )
        return t

    def present(self, rtype: ResourceType, obj: Obj, version: str | None = None) -> Obj:
        """The object as served at ``version`` (apiVersion rewritten for multi-version built-ins)."""
        if version and version != rtype.version:
            obj["apiVersion"] = rtype.api_version_for(version)
        return obj

    # ---- bootstrap -----------------------------------------------------------------------------------------

    def bootstrap(self) -> None:
        """Create the namespaces and objects every cluster starts with (only those missing)."""
        for ns in ("default", "kube-system", "kube-public", "kube-node-lease"):
            if self.store.get("namespaces", "", ns) is None:
                self.do_create(
                    self.resource_type("namespaces"), {"metadata": {"name": ns}}, None, manager="berth"
                )
        for name, value in (("system-cluster-critical", 2000000000), ("system-node-critical", 2000001000)):
            if self.store.get("priorityclasses.scheduling.k8s.io", "", name) is None:
                self.do_create(
                    self.resource_type("priorityclasses.scheduling.k8s.io"),
                    {
                        "metadata": {"name": name},
                        "value": value,
                        "description": "Used for system critical pods that must run in the cluster.",
                    },
                    None,
                    manager="berth",
                )
        if self.store.get("services", "default", "kubernetes") is None:
            self.do_create(
                self.resource_type("services"),
                {
                    "metadata": {
                        "name": "kubernetes",
                        "labels": {"component": "apiserver", "provider": "kubernetes"},
                    },
                    "spec": {
                        "clusterIP": "10.96.0.1",
                        "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}],
                    },
                },
                "default",
                manager="kube-apiserver",
            )
        from berth.cluster import auth

        for res, obj in auth.bootstrap_policy():
            rt = self.resource_type(res)
            if self.store.get(res, "", obj["metadata"]["name"]) is None:
                self.do_create(rt, obj, None, manager="berth")

    # ---- audit helper --------------------------------------------------------------------------------------

    def _audited(
        self,
        user: str,
        verb: str,
        resource: str,
        sub: str | None,
        ns: str | None,
        name: str,
        fn: Callable[[], Obj],
    ) -> Obj:
        if self.audit is None:
            return fn()
        code = 200
        try:
            out = fn()
            code = 201 if verb == "create" else 200
            return out
        except ApiError as exc:
            code = exc.code
            raise
        finally:
            self.audit(user, verb, resource, sub or "", ns or "", name, code)

    # ---- public in-process API (contract in notes/cluster-api.md) ------------------------------------------

    def get(self, resource: str, name: str, namespace: str | None = None) -> Obj:
        return self.do_get(self.resource_type(resource), name, namespace)

    def list(
        self, resource: str, namespace: str | None = None, label_selector: str = "", field_selector: str = ""
    ) -> tuple[builtins.list[Obj], str]:
        res = self.do_list(self.resource_type(resource), namespace, label_selector, field_selector)
        return res.items, res.resource_version

    def create(
        self,
        resource: str,
        obj: Obj,
        namespace: str | None = None,
        *,
        user: str = DEFAULT_USER,
        dry_run: bool = False,
        field_manager: str | None = None,
    ) -> Obj:
        rt = self.resource_type(resource)
        name = str((obj.get("metadata") or {}).get("name") or "")
        return self._audited(
            user,
            "create",
            resource,
            None,
            namespace,
            name,
            lambda: self.do_create(rt, obj, namespace, user=user, dry_run=dry_run, manager=field_manager),
        )

    def update(
        self,
        resource: str,
        obj: Obj,
        namespace: str | None = None,
        *,
        subresource: str | None = None,
        user: str = DEFAULT_USER,
        dry_run: bool = False,
        field_manager: str | None = None,
    ) -> Obj:
        rt = self.resource_type(resource)
        name = str((obj.get("metadata") or {}).get("name") or "")
        return self._audited(
            user,
            "update",
            resource,
            subresource,
            namespace,
            name,
            lambda: self.do_update(
                rt, obj, namespace, subresource=subresource, user=user, dry_run=dry_run, manager=field_manager
            ),
        )

    def patch(
        self,
        resource: str,
        name: str,
        patch: Any,
        patch_type: str,
        namespace: str | None = None,
        *,
        subresource: str | None = None,
        field_manager: str | None = None,
        force: bool = False,
        user: str = DEFAULT_USER,
        dry_run: bool = False,
    ) -> Obj:
        rt = self.resource_type(resource)
        return self._audited(
            user,
            "patch",
            resource,
            subresource,
            namespace,
            name,
            lambda: self.do_patch(
                rt,
                name,
                patch,
                patch_type,
                namespace,
                subresource=subresource,
                manager=field_manager,
                force=force,
                user=user,
                dry_run=dry_run,
            )[0],
        )

    def delete(
        self,
        resource: str,
        name: str,
        namespace: str | None = None,
        *,
        propagation: str = "Background",
        user: str = DEFAULT_USER,
        dry_run: bool = False,
        preconditions: dict[str, Any] | None = None,
    ) -> Obj:
        rt = self.resource_type(resource)
        return self._audited(
            user,
            "delete",
            resource,
            None,
            namespace,
            name,
            lambda: self.do_delete(
                rt, name, namespace, propagation=propagation, dry_run=dry_run, preconditions=preconditions
            ),
        )

    def watch(
        self,
        resource: str,
        namespace: str | None = None,
        resource_version: str | None = None,
        label_selector: str = "",
        field_selector: str = "",
    ) -> Watch:
        return self.do_watch(
            self.resource_type(resource), namespace, resource_version, label_selector, field_selector
        )

    # ---- reads ---------------------------------------------------------------------------------------------

    def _ns_key(self, rt: ResourceType, namespace: str | None) -> str:
        if rt.namespaced:
            if not namespace:
                raise E.bad_request(f"a namespace is required for {rt.resource}")
            return namespace
        return ""

    def _load(self, rt: ResourceType, name: str, namespace: str | None) -> Obj:
        entry = self.store.get(rt.resource, self._ns_key(rt, namespace), name)
        if entry is None:
            raise E.not_found(rt.plural, rt.group, name)
        return _loads(entry[1])

    def stored_json(
        self, rt: ResourceType, name: str, namespace: str | None, version: str | None = None
    ) -> tuple[int, str] | None:
        """``(resourceVersion, JSON text)`` of an object as stored, when serving it needs no change (the stored
        version, a kind without conversion) -- what :meth:`do_get` returns, without decoding and re-encoding it.
        None when it is missing or must be converted (use :meth:`do_get`)."""
        if rt.virtual or rt.resource == eventsv1.RESOURCE or (version and version != rt.version):
            return None
        return self.store.get(rt.resource, self._ns_key(rt, namespace), name)

    def do_get(self, rt: ResourceType, name: str, namespace: str | None, version: str | None = None) -> Obj:
        if rt.resource == eventsv1.RESOURCE:
            return eventsv1.from_core(self.do_get(self._core_events, name, namespace))
        if rt.virtual:
            raise E.method_not_allowed("get", rt.resource)
        return self.present(rt, self._load(rt, name, namespace), version)

    def _selectors(
        self, rt: ResourceType, label_selector: str, field_selector: str
    ) -> tuple[selectors.Selector, tuple[selectors.FieldRequirement, ...]]:
        try:
            labels = selectors.parse_label_selector(label_selector or "")
            fields = selectors.parse_field_selector(field_selector or "")
        except InputError as exc:
            raise E.bad_request(str(exc)) from exc
        allowed = (
            "metadata.name",
            "metadata.namespace",
            *FIELD_LABELS.get(rt.plural if not rt.group else rt.resource, ()),
        )
        if rt.resource == "events":
            allowed = ("metadata.name", "metadata.namespace", *FIELD_LABELS["events"])
        for f in fields:
            if f.field not in allowed:
                raise E.bad_request(
                    f"field label not supported: {f.field}"
                    if not rt.custom
                    else f'"{f.field}" is not a known field selector: only "metadata.name", "metadata.namespace"'
                )
        return labels, fields

    def do_list(
        self,
        rt: ResourceType,
        namespace: str | None,
        label_selector: str = "",
        field_selector: str = "",
        *,
        limit: int = 0,
        continue_token: str = "",
        version: str | None = None,
    ) -> ListResult:
        if rt.resource == eventsv1.RESOURCE:
            res = self.do_list(
                self._core_events,
                namespace,
                label_selector,
                eventsv1.field_selector_to_core(field_selector),
                limit=limit,
                continue_token=continue_token,
            )
            converted = [eventsv1.from_core(i) for i in res.items]
            return ListResult(converted, res.resource_version, res.continue_token, res.remaining)
        if rt.virtual:
            raise E.method_not_allowed("list", rt.resource)
        labels, fields = self._selectors(rt, label_selector, field_selector)
        ns = namespace if rt.namespaced and namespace else None
        entries, rv = self.store.list(rt.resource, ns)
        start_after = ""
        if continue_token:
            try:
                token = json.loads(base64.urlsafe_b64decode(continue_token.encode()).decode())
                start_after = str(token["start"])
                token_rv = int(token["rv"])
            except (ValueError, KeyError, TypeError) as exc:
                raise E.bad_request(f"continue key is not valid: {exc}") from exc
            if token_rv <= self.store.compacted:
                raise E.expired(
                    "The provided continue parameter is too old to display a consistent list result. You can start "
                    "a new list without the continue parameter, or use the continue token in this response to "
                    "retrieve the remainder of the results. Continuing with the provided token results in an "
                    "inconsistent list - objects that were created, modified, or deleted between the time the "
                    "first chunk was returned and now may show up in the list."
                )
            rv = token_rv
        items: builtins.list[Obj] = []
        filtered = not labels.empty or bool(fields)
        next_key = ""
        remaining = 0
        for ens, ename, (_erv, text) in entries:
            key = f"{ens}/{ename}"
            if start_after and key <= start_after:
                continue
            if limit and len(items) >= limit:
                if not filtered:
                    remaining += 1
                    continue
                obj = _loads(text)
                if labels.matches((obj.get("metadata") or {}).get("labels") or {}) and (
                    not fields or selectors.fields_match(fields, obj, _field_value)
                ):
                    remaining += 1
                continue
            obj = _loads(text)
            if filtered:
                if not labels.matches((obj.get("metadata") or {}).get("labels") or {}):
                    continue
                if fields and not selectors.fields_match(fields, obj, _field_value):
                    continue
            items.append(self.present(rt, obj, version))
            next_key = key
        token_out = ""
        if limit and remaining:
            token_out = base64.urlsafe_b64encode(json.dumps({"rv": rv, "start": next_key}).encode()).decode()
        return ListResult(items, str(rv), token_out, remaining if token_out else None)

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
        if rt.resource == eventsv1.RESOURCE:
            w = self.do_watch(
                self._core_events,
                namespace,
                resource_version,
                label_selector,
                eventsv1.field_selector_to_core(field_selector),
                send_initial_events=send_initial_events,
                transform=eventsv1.from_core,
                shown=rt,
            )
            return w
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

    # ---- admission helpers ---------------------------------------------------------------------------------

    def _check_kind(self, rt: ResourceType, obj: Obj, version: str | None) -> None:
        kind = obj.get("kind")
        api_version = obj.get("apiVersion")
        if kind == rt.kind and api_version == rt.api_version:
            return  # the usual body: already what is stored (the preferred version is always served)
        if kind and kind != rt.kind:
            raise E.bad_request(
                f"the API version in the data ({api_version}) does not match the expected API version "
                f"({rt.api_version_for(version or rt.version)})"
                if api_version and api_version not in [rt.api_version_for(v) for v in rt.all_versions]
                else f"Kind {kind} does not match expected kind {rt.kind}"
            )
        if api_version and api_version not in [rt.api_version_for(v) for v in rt.all_versions]:
            raise E.bad_request(
                f"the API version in the data ({api_version}) does not match the expected API version "
                f"({rt.api_version_for(version or rt.version)})"
            )
        obj["kind"] = rt.kind
        obj["apiVersion"] = rt.api_version  # stored at the preferred version

    def _scope(self, rt: ResourceType, obj: Obj, namespace: str | None) -> str:
        meta = _meta(obj)
        body_ns = meta.get("namespace")
        if rt.namespaced:
            if namespace and body_ns and body_ns != namespace:
                raise E.bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request"
                )
            ns = str(namespace or body_ns or "")
            if not ns:
                raise E.bad_request(f"a namespace is required for {rt.resource}")
            meta["namespace"] = ns
            return ns
        meta.pop("namespace", None)
        return ""

    def _require_namespace(self, ns: str, creating: bool) -> None:
        entry = self.store.get("namespaces", "", ns)
        if entry is None:
            raise E.not_found("namespaces", "", ns)
        if creating and '"deletionTimestamp"' in entry[1]:
            obj = _loads(entry[1])
            if (obj.get("metadata") or {}).get("deletionTimestamp"):
                raise ApiError(
                    403,
                    E.Reason.FORBIDDEN,
                    f"unable to create new content in namespace {ns} because it is being terminated",
                    {
                        "name": ns,
                        "kind": "namespaces",
                        "causes": [
                            {
                                "reason": "NamespaceTerminating",
                                "message": f"namespace {ns} is being terminated",
                                "field": "metadata.namespace",
                            }
                        ],
                    },
                )

    def _validate(self, rt: ResourceType, obj: Obj, old: Obj | None, user: str = "") -> None:
        admission.validate(self, rt, obj, old, user)

    def _manager(self, manager: str | None, user: str) -> str:
        return manager or "berth"

    def _managed_update(
        self, rt: ResourceType, old: Obj | None, new: Obj, manager: str, subresource: str, now: str = ""
    ) -> None:
        """Record the write in ``new``'s managedFields, stamped ``now`` (default: the clock's time now)."""
        admission.track_update(self, rt, old, new, manager, subresource, now or self.now_text())

    # ---- create --------------------------------------------------------------------------------------------

    def do_create(
        self,
        rt: ResourceType,
        obj: Obj,
        namespace: str | None,
        *,
        user: str = DEFAULT_USER,
        dry_run: bool = False,
        manager: str | None = None,
        version: str | None = None,
        apply_patch: Obj | None = None,
        field_validation: str = "",
        owned: bool = False,
    ) -> Obj:
        if not isinstance(obj, dict):
            raise E.bad_request("the request body must be a JSON object")
        res = rt.resource  # a property that formats the key: read once
        if res == eventsv1.RESOURCE:
            out = self.do_create(
                self._core_events,
                eventsv1.to_core(obj),
                namespace,
                user=user,
                dry_run=dry_run,
                manager=manager,
                owned=True,
            )
            return eventsv1.from_core(out)
        if rt.virtual:
            return admission.review(self, rt, _copy(obj), namespace, user)
        if "create" not in rt.verbs:
            raise E.method_not_allowed("create", rt.resource)
        if not owned:
            obj = _copy(obj)
        self._check_kind(rt, obj, version)
        admission.decode_check(rt, obj, field_validation)
        ns = self._scope(rt, obj, namespace)
        meta = _meta(obj)
        if meta.get("resourceVersion"):
            raise E.internal("resourceVersion should not be set on objects to be created")
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = str(meta["generateName"]) + _generate_suffix()
        name = str(meta.get("name") or "")
        with self.store.locked():
            if ns:
                self._require_namespace(ns, creating=True)
            if name and self.store.get(res, ns, name) is not None:
                if meta.get("generateName"):
                    meta["name"] = str(meta["generateName"]) + _generate_suffix()
                    name = meta["name"]
                else:
                    raise E.already_exists(rt.plural, rt.group, name)
            # One timestamp for creationTimestamp and the managedFields entry (both have second precision).
            now = self.now_text()
            for k in ("deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"):
                meta.pop(k, None)
            meta["uid"] = new_uid()
            meta["creationTimestamp"] = now
            if rt.generation:
                meta["generation"] = 1
            else:
                meta.pop("generation", None)
            if not meta.get("finalizers"):
                meta.pop("finalizers", None)
            self._prepare_create(rt, obj, user)
            self._validate(rt, obj, None, user)
            if res == "persistentvolumeclaims" and ns and self.store.count("limitranges"):
                quota.limit_claim(None, obj, self._objects("limitranges", ns))
            if ns and self.store.count("resourcequotas"):
                self._admit_quota(res, obj, ns)
            meta.pop("managedFields", None)
            if apply_patch is not None:
                meta["managedFields"] = admission.apply_fields_for_create(
                    self, rt, obj, apply_patch, manager or ""
                )
            else:
                self._managed_update(rt, None, obj, self._manager(manager, user), "", now)
            if dry_run:
                return self.present(rt, obj, version)
            self.store.put(res, ns, name, obj, "ADDED")
            if res == "customresourcedefinitions.apiextensions.k8s.io":
                obj = self._crds.established(self, obj)
        return self.present(rt, obj, version)

    def _prepare_create(self, rt: ResourceType, obj: Obj, user: str) -> None:
        res = rt.resource
        if rt.custom:
            self._crds.prepare_custom(self, rt, obj, None)
            if "status" in rt.subresources:
                obj.pop("status", None)
            return
        if res in ("pods",):
            obj.pop("status", None)
        elif rt.group in ("apps", "batch", "policy", "autoscaling") or res in (
            "replicationcontrollers",
            "services",
            "persistentvolumeclaims",
            "customresourcedefinitions.apiextensions.k8s.io",
        ):
            obj["status"] = {}
            if res == "services":
                obj["status"] = {"loadBalancer": {}}
        defaults.apply(res, obj)
        if res == "jobs.batch":
            defaults.job_selector(obj)
        elif res == "services":
            self._allocate_service(obj)
        elif res == "pods":
            self._pod_priority(obj)
            self._pod_service_account(obj)
            if self.store.count("limitranges"):
                ns = str(_meta(obj).get("namespace") or "")
                quota.limit_pod(obj, self._objects("limitranges", ns))
                if isinstance(obj.get("status"), dict):  # upstream classes the pod after admission's defaults
                    obj["status"].pop("qosClass", None)
                defaults.pod(obj)
        elif res == "secrets":
            from berth.cluster import auth

            auth.fill_service_account_secret(self, obj)
        elif res == "customresourcedefinitions.apiextensions.k8s.io":
            self._crds.prepare_crd(self, obj, None)
        elif res == "certificatesigningrequests.certificates.k8s.io":
            obj["status"] = {}  # the requester is recorded by the server, never taken from the body
            obj.setdefault("spec", {})["username"] = user

    def _pod_service_account(self, obj: Obj) -> None:
        """The ServiceAccount admission plugin's lookup: a pod naming a service account that does not exist is
        refused (a chart whose hook Job uses an account the release creates later fails here as on a real
        cluster). The namespace's ``default`` account is not checked: the namespace controller creates it just
        after the namespace, and upstream's race there helps nobody. Pods do not get the projected
        ``kube-api-access-*`` token volume upstream mounts: nothing runs to read it, and at ~10 KB of decoded
        structure per pod per cache it cost 117 MiB with 10,000 pods."""
        spec = obj.setdefault("spec", {})
        sa = str(spec.get("serviceAccountName") or spec.get("serviceAccount") or "default")
        spec["serviceAccountName"] = spec["serviceAccount"] = sa
        ns = str(_meta(obj).get("namespace") or "")
        if sa != "default" and self.store.get("serviceaccounts", ns, sa) is None:
            raise E.forbidden(
                "pods",
                "",
                str(_meta(obj).get("name") or ""),
                f'error looking up service account {ns}/{sa}: serviceaccount "{sa}" not found',
            )

    def _objects(self, resource: str, namespace: str) -> builtins.list[Obj]:
        """Every stored object of ``resource`` in ``namespace`` (decoded; for admission, under the store lock)."""
        entries, _ = self.store.list(resource, namespace)
        return [_loads(text) for _ns, _n, (_rv, text) in entries]

    def _admit_quota(self, resource: str, obj: Obj, namespace: str) -> None:
        quotas = self._objects("resourcequotas", namespace)
        if quotas:
            quota.admit(resource, obj, namespace, quotas, self._objects)

    def _allocate_service(self, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        if spec.get("type") == "ExternalName":
            return
        if not spec.get("clusterIP"):
            taken: set[str] = set()
            entries, _ = self.store.list("services")
            for _ns, _n, (_rv, text) in entries:
                taken.add(str((_loads(text).get("spec") or {}).get("clusterIP", "")))
            meta = _meta(obj)
            spec["clusterIP"] = defaults.cluster_ip(str(meta.get("namespace")), str(meta.get("name")), taken)
        spec.setdefault("clusterIPs", [spec["clusterIP"]])
        if spec.get("clusterIP") == "None":
            spec["clusterIPs"] = ["None"]
        if spec.get("type") in ("NodePort", "LoadBalancer"):
            used = 30000 + random.randrange(0, 2000)
            for i, p in enumerate(spec.get("ports") or []):
                if isinstance(p, dict):
                    p.setdefault("nodePort", used + i)

    def _pod_priority(self, obj: Obj) -> None:
        spec = obj.get("spec") or {}
        pc_name = spec.get("priorityClassName")
        if pc_name:
            entry = self.store.get("priorityclasses.scheduling.k8s.io", "", str(pc_name))
            if entry is None:
                raise ApiError(
                    403,
                    E.Reason.FORBIDDEN,
                    f'pods "{_meta(obj).get("name", "")}" is forbidden: no PriorityClass with name {pc_name} was found',
                    {"name": str(_meta(obj).get("name", "")), "kind": "pods"},
                )
            pc = _loads(entry[1])
            spec["priority"] = int(pc.get("value", 0))
            spec.setdefault("preemptionPolicy", pc.get("preemptionPolicy", "PreemptLowerPriority"))
        else:
            default_pc = None
            entries, _ = self.store.list("priorityclasses.scheduling.k8s.io")
            for _ns, _n, (_rv, text) in entries:
                pc = _loads(text)
                if pc.get("globalDefault"):
                    default_pc = pc
            if default_pc is not None:
                spec["priorityClassName"] = default_pc["metadata"]["name"]
                spec["priority"] = int(default_pc.get("value", 0))
                spec.setdefault(
                    "preemptionPolicy", default_pc.get("preemptionPolicy", "PreemptLowerPriority")
                )
            else:
                spec.setdefault("priority", 0)
        if spec.get("preemptionPolicy") is None:
            spec["preemptionPolicy"] = "PreemptLowerPriority"

    # ---- update --------------------------------------------------------------------------------------------

    def do_update(
        self,
        rt: ResourceType,
        obj: Obj,
        namespace: str | None,
        *,
        subresource: str | None = None,
        user: str = DEFAULT_USER,
        dry_run: bool = False,
        manager: str | None = None,
        version: str | None = None,
        name: str | None = None,
        field_validation: str = "",
    ) -> Obj:
        if not isinstance(obj, dict):
            raise E.bad_request("the request body must be a JSON object")
        if rt.resource == eventsv1.RESOURCE:
            out = self.do_update(
                self._core_events,
                eventsv1.to_core(obj),
                namespace,
                subresource=subresource,
                user=user,
                dry_run=dry_run,
                manager=manager,
                name=name,
            )
            return eventsv1.from_core(out)
        if subresource == "scale":
            return self._update_scale(rt, obj, namespace, name, user=user, dry_run=dry_run, manager=manager)
        if "update" not in rt.verbs:
            raise E.method_not_allowed("update", rt.resource)
        obj = _copy(obj)
        self._check_kind(rt, obj, version)
        admission.decode_check(rt, obj, field_validation)
        ns = self._scope(rt, obj, namespace)
        meta = _meta(obj)
        obj_name = str(meta.get("name") or "")
        if name is not None and obj_name and obj_name != name:
            raise E.bad_request(
                f"the name of the object ({obj_name}) does not match the name on the URL ({name})"
            )
        if not obj_name:
            obj_name = name or ""
            meta["name"] = obj_name
        if not obj_name:
            raise E.invalid(
                rt.kind, "", [E.required("metadata.name", "name or generateName is required")], rt.group
            )
        with self.store.locked():
            entry = self.store.get(rt.resource, ns, obj_name)
            if entry is None:
                raise E.not_found(rt.plural, rt.group, obj_name)
            cur = _loads(entry[1])
            want_rv = str(meta.get("resourceVersion") or "")
            if want_rv and want_rv != str(entry[0]):
                raise E.conflict(rt.plural, rt.group, obj_name)
            new = self._merge_subresource(rt, cur, obj, subresource)
            return self._commit_update(
                rt,
                cur,
                new,
                user=user,
                dry_run=dry_run,
                manager=manager,
                subresource=subresource,
                version=version,
            )

    def _merge_subresource(self, rt: ResourceType, cur: Obj, new: Obj, subresource: str | None) -> Obj:
        if subresource in (None, ""):
            if "status" in rt.subresources and rt.resource != "namespaces":
                if "status" in cur:
                    new["status"] = copy.deepcopy(cur["status"])
                else:
                    new.pop("status", None)
            elif rt.resource == "namespaces":
                new["status"] = copy.deepcopy(cur.get("status") or {})
                if "spec" in cur:
                    new["spec"] = copy.deepcopy(cur["spec"])
            return new
        if subresource == "status":
            if "status" not in rt.subresources:
                raise E.path_not_found()
            out = _copy(cur)
            if "status" in new:
                out["status"] = new["status"]
            else:
                out.pop("status", None)
            # Status writers may also touch labels/annotations? upstream keeps metadata except rv checks.
            return out
        if subresource == "finalize" and rt.resource == "namespaces":
            out = _copy(cur)
            out.setdefault("spec", {})["finalizers"] = list((new.get("spec") or {}).get("finalizers") or [])
            return out
        if subresource == "approval" and subresource in rt.subresources:
            # certificates/approval: the approver writes conditions only (Approved, Denied), never the certificate
            out = _copy(cur)
            out.setdefault("status", {})["conditions"] = list(
                (new.get("status") or {}).get("conditions") or []
            )
            return out
        if subresource == "ephemeralcontainers" and subresource in rt.subresources:
            return _with_ephemeral_containers(cur, new)
        if subresource == "resize" and subresource in rt.subresources:
            return _with_resized_containers(cur, new)
        raise E.path_not_found()

    def _commit_update(
        self,
        rt: ResourceType,
        cur: Obj,
        new: Obj,
        *,
        user: str,
        dry_run: bool,
        manager: str | None,
        subresource: str | None,
        version: str | None = None,
        track: bool = True,
    ) -> Obj:
        cm, nm = _meta(cur), _meta(new)
        for k in (
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "namespace",
            "name",
        ):
            if k in cm:
                nm[k] = cm[k]
            else:
                nm.pop(k, None)
        if "generateName" in cm and "generateName" not in nm:
            nm["generateName"] = cm["generateName"]
        if "managedFields" not in nm and "managedFields" in cm:
            nm["managedFields"] = copy.deepcopy(cm["managedFields"])
        if not nm.get("finalizers"):
            nm.pop("finalizers", None)
        nm.pop("selfLink", None)
        new["kind"], new["apiVersion"] = rt.kind, rt.api_version
        if cm.get("deletionTimestamp"):
            added = set(nm.get("finalizers") or []) - set(cm.get("finalizers") or [])
            if added:
                raise E.invalid(
                    rt.kind,
                    str(cm.get("name")),
                    [
                        E.forbidden_field(
                            "metadata.finalizers",
                            "no new finalizers can be added if the object is being deleted",
                        )
                    ],
                    rt.group,
                )
        self._prepare_update(rt, cur, new, subresource)
        ns = str(cm.get("namespace") or "")
        # LimitRanger and ResourceQuota see only the updates quota.limits_update and quota.counts_update name
        limited = quota.limits_update(rt.resource, subresource) and bool(self.store.count("limitranges"))
        ranges = self._objects("limitranges", ns) if limited else []
        if ranges and rt.resource == "pods":
            quota.default_resized_pod(cur, new, ranges)
        if subresource == "resize" and rt.resource == "pods":
            validation.raise_if_invalid(new, validation.validate_pod_resize(cur, new))
        if rt.generation:
            gen = int(cm.get("generation") or 1)
            if _spec_and_rest(new) != _spec_and_rest(cur):
                gen += 1
            nm["generation"] = gen
        else:
            nm.pop("generation", None)
        self._validate(rt, new, cur, user)
        if ranges:
            quota.limit_update(rt.resource, cur, new, ranges)
        if ns and quota.counts_update(rt.resource, subresource) and self.store.count("resourcequotas"):
            quota.admit_update(rt.resource, cur, new, ns, self._objects)  # under the store lock, as creates
        if track:
            self._managed_update(rt, cur, new, self._manager(manager, user), subresource or "")
        if _strip_volatile(new) == _strip_volatile(cur) and nm.get("managedFields") == cm.get(
            "managedFields"
        ):
            return self.present(rt, cur, version)
        # Past this point, even a change to managedFields alone (a no-op apply by a new manager) is a write, as upstream.
        name = str(nm.get("name"))
        if dry_run:
            nm["resourceVersion"] = cm.get("resourceVersion")
            return self.present(rt, new, version)
        if nm.get("deletionTimestamp") and not nm.get("finalizers") and not self._ns_finalizers(rt, new):
            self.store.remove(rt.resource, ns, name, new)
            if rt.resource == "customresourcedefinitions.apiextensions.k8s.io":
                self._crds.removed(self, new)
            return self.present(rt, new, version)
        self.store.put(rt.resource, ns, name, new, "MODIFIED")
        if rt.resource == "customresourcedefinitions.apiextensions.k8s.io":
            new = self._crds.established(self, new)
        return self.present(rt, new, version)

    def _ns_finalizers(self, rt: ResourceType, obj: Obj) -> builtins.list[str]:
        if rt.resource != "namespaces":
            return []
        return list((obj.get("spec") or {}).get("finalizers") or [])

    def _prepare_update(self, rt: ResourceType, cur: Obj, new: Obj, subresource: str | None) -> None:
        res = rt.resource
        if rt.custom:
            self._crds.prepare_custom(self, rt, new, cur)
            return
        if subresource in (None, ""):
            defaults.apply(res, new)
            if res == "pods":
                new["status"] = copy.deepcopy(cur.get("status") or {})
                # spec is mostly immutable upstream; keep the scheduler-set fields.
                for k in ("nodeName", "priority"):
                    if k in (cur.get("spec") or {}):
                        new.setdefault("spec", {})[k] = cur["spec"][k]
            elif res == "services":
                spec, old = new.setdefault("spec", {}), cur.get("spec") or {}
                for k in ("clusterIP", "clusterIPs"):
                    if old.get(k) and not spec.get(k):
                        spec[k] = old[k]
                if not spec.get("clusterIP"):
                    self._allocate_service(new)
            elif res == "jobs.batch":
                cspec = cur.get("spec") or {}
                if "selector" in cspec:
                    new.setdefault("spec", {}).setdefault("selector", cspec["selector"])
                tl = ((cspec.get("template") or {}).get("metadata") or {}).get("labels") or {}
                labels = new.setdefault("spec", {}).setdefault("template", {}).setdefault("metadata", {})
                for k, v in tl.items():
                    labels.setdefault("labels", {}).setdefault(k, v)
            elif res == "customresourcedefinitions.apiextensions.k8s.io":
                self._crds.prepare_crd(self, new, cur)
            elif res == "namespaces":
                defaults.namespace(new)

    # ---- scale subresource ---------------------------------------------------------------------------------

    def scale_of(self, rt: ResourceType, obj: Obj) -> Obj:
        """The ``autoscaling/v1 Scale`` view of a scalable object."""
        spec = obj.get("spec") or {}
        status = obj.get("status") or {}
        meta = obj.get("metadata") or {}
        selector = ""
        if rt.custom:
            return self._crds.scale_of(self, rt, obj)
        sel = spec.get("selector")
        if isinstance(sel, dict):
            if rt.resource == "replicationcontrollers":
                selector = ",".join(f"{k}={v}" for k, v in sorted(sel.items()))
            else:
                parts = [f"{k}={v}" for k, v in sorted((sel.get("matchLabels") or {}).items())]
                for expr in sel.get("matchExpressions") or []:
                    op = expr.get("operator")
                    vals = ",".join(expr.get("values") or [])
                    if op == "In":
                        parts.append(f"{expr['key']} in ({vals})")
                    elif op == "NotIn":
                        parts.append(f"{expr['key']} notin ({vals})")
                    elif op == "Exists":
                        parts.append(str(expr["key"]))
                    elif op == "DoesNotExist":
                        parts.append(f"!{expr['key']}")
                selector = ",".join(parts)
        return {
            "kind": "Scale",
            "apiVersion": "autoscaling/v1",
            "metadata": {
                k: meta[k]
                for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                if k in meta
            },
            "spec": {"replicas": int(spec.get("replicas") or 0)},
            "status": {"replicas": int(status.get("replicas") or 0), "selector": selector},
        }

    def get_scale(self, rt: ResourceType, name: str, namespace: str | None) -> Obj:
        if "scale" not in rt.subresources:
            raise E.path_not_found()
        return self.scale_of(rt, self._load(rt, name, namespace))

    def _update_scale(
        self,
        rt: ResourceType,
        scale: Obj,
        namespace: str | None,
        name: str | None,
        *,
        user: str,
        dry_run: bool,
        manager: str | None,
    ) -> Obj:
        if "scale" not in rt.subresources:
            raise E.path_not_found()
        meta = scale.get("metadata") or {}
        name = name or str(meta.get("name") or "")
        with self.store.locked():
            cur = self._load(rt, name, namespace)
            want_rv = str(meta.get("resourceVersion") or "")
            if want_rv and want_rv != str(cur["metadata"]["resourceVersion"]):
                raise E.conflict(rt.plural, rt.group, name)
            replicas = (scale.get("spec") or {}).get("replicas")
            if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
                raise E.invalid(
                    "Scale",
                    name,
                    [E.invalid_value("spec.replicas", replicas, "must be greater than or equal to 0")],
                    "autoscaling",
                )
            new = _copy(cur)
            if rt.custom:
                self._crds.set_scale_replicas(self, rt, new, replicas)
            else:
                new.setdefault("spec", {})["replicas"] = replicas
            out = self._commit_update(
                rt, cur, new, user=user, dry_run=dry_run, manager=manager, subresource="scale"
            )
            return self.scale_of(rt, out)

    # ---- patch ---------------------------------------------------------------------------------------------

    def do_patch(
        self,
        rt: ResourceType,
        name: str,
        patch: Any,
        patch_type: str,
        namespace: str | None,
        *,
        subresource: str | None = None,
        manager: str | None = None,
        force: bool = False,
        user: str = DEFAULT_USER,
        dry_run: bool = False,
        version: str | None = None,
        field_validation: str = "",
    ) -> tuple[Obj, bool]:
        """Apply a patch; returns (object, created) -- ``created`` only for server-side apply upserts."""
        if rt.resource == eventsv1.RESOURCE:
            return self._patch_events_v1(
                rt,
                name,
                patch,
                patch_type,
                namespace,
                manager=manager,
                force=force,
                user=user,
                dry_run=dry_run,
            )
        if patch_type not in PATCH_TYPES:
            raise E.unsupported_media_type(
                [
                    "application/json-patch+json",
                    "application/merge-patch+json",
                    "application/strategic-merge-patch+json",
                    "application/apply-patch+yaml",
                ]
            )
        if "patch" not in rt.verbs:
            raise E.method_not_allowed("patch", rt.resource)
        if patch_type == "apply":
            if not manager:
                raise E.invalid(
                    "PatchOptions",
                    "",
                    [E.required("fieldManager", "is required for apply patch")],
                    "meta.k8s.io",
                )
        elif force:
            raise E.invalid(
                "PatchOptions",
                "",
                [E.forbidden_field("force", "may not be specified for non-apply patch")],
                "meta.k8s.io",
            )
        if patch_type == "strategic" and rt.custom:
            raise E.unsupported_media_type(
                "the body of the request was in an unknown format - accepted media types include: "
                "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
            )
        ns = self._ns_key(rt, namespace) if rt.namespaced else ""
        with self.store.locked():
            entry = self.store.get(rt.resource, ns, name)
            if entry is None:
                if patch_type == "apply" and subresource in (None, ""):
                    if not isinstance(patch, dict):
                        raise E.bad_request("an apply patch must be a single object")
                    obj = _copy(patch)
                    pm = _meta(obj)
                    if pm.get("name") and pm["name"] != name:
                        raise E.bad_request(
                            f"the name of the object ({pm['name']}) does not match the name on the URL ({name})"
                        )
                    pm["name"] = name
                    obj.pop("status", None) if "status" in rt.subresources else None
                    (obj.get("metadata") or {}).pop("managedFields", None)
                    created = self.do_create(
                        rt,
                        obj,
                        namespace,
                        user=user,
                        dry_run=dry_run,
                        manager=manager,
                        version=version,
                        apply_patch=patch,
                        field_validation=field_validation,
                    )
                    return created, True
                raise E.not_found(rt.plural, rt.group, name)
            cur = _loads(entry[1])
            if subresource == "scale":
                if "scale" not in rt.subresources:
                    raise E.path_not_found()
                view = self.scale_of(rt, cur)
                patched_view = admission.patch_object(
                    self, rt, view, patch, patch_type, manager, force, scale=True
                )
                return (
                    self._update_scale(
                        rt, patched_view, namespace, name, user=user, dry_run=dry_run, manager=manager
                    ),
                    False,
                )
            if subresource not in (None, "", "status", "approval", *_POD_SPEC_SUBRESOURCES):
                raise E.path_not_found()
            if subresource and subresource not in rt.subresources:
                raise E.path_not_found()
            base = _copy(cur)
            if patch_type == "apply" and isinstance(patch, dict) and field_validation == "Strict":
                admission.decode_check(rt, {**patch, "kind": rt.kind, "apiVersion": rt.api_version}, "Strict")
            new = admission.patch_object(
                self, rt, base, patch, patch_type, manager, force, subresource=subresource or ""
            )
            if not isinstance(new, dict):
                raise E.bad_request("the patch did not produce an object")
            nm = _meta(new)
            if str(nm.get("resourceVersion") or entry[0]) != str(entry[0]):
                raise E.conflict(rt.plural, rt.group, name)
            if nm.get("name") != name:
                raise E.bad_request(
                    f"the name of the object ({nm.get('name')}) does not match the name on the URL ({name})"
                )
            new = self._merge_subresource(rt, cur, new, subresource)
            out = self._commit_update(
                rt,
                cur,
                new,
                user=user,
                dry_run=dry_run,
                manager=manager,
                subresource=subresource,
                version=version,
                track=patch_type != "apply",
            )
            return out, False

    @property
    def _core_events(self) -> ResourceType:
        return self.resource_type(eventsv1.CORE_RESOURCE)

    def _patch_events_v1(
        self,
        rt: ResourceType,
        name: str,
        patch: Any,
        patch_type: str,
        namespace: str | None,
        *,
        manager: str | None,
        force: bool,
        user: str,
        dry_run: bool,
    ) -> tuple[Obj, bool]:
        """Patch an ``events.k8s.io/v1`` Event: patch its v1 shape, store the core shape."""
        with self.store.locked():
            try:
                cur = self.do_get(rt, name, namespace)
            except ApiError as exc:
                if exc.code != 404 or patch_type != "apply" or not isinstance(patch, dict):
                    raise
                body = _copy(patch)
                body.setdefault("metadata", {})["name"] = name
                return self.do_create(rt, body, namespace, user=user, dry_run=dry_run, manager=manager), True
            new = admission.patch_object(self, rt, cur, patch, patch_type, manager, force)
            if not isinstance(new, dict):
                raise E.bad_request("the patch did not produce an object")
            return self.do_update(
                rt, new, namespace, user=user, dry_run=dry_run, manager=manager, name=name
            ), False

    # ---- delete --------------------------------------------------------------------------------------------

    def do_delete(
        self,
        rt: ResourceType,
        name: str,
        namespace: str | None,
        *,
        propagation: str | None = None,
        dry_run: bool = False,
        preconditions: dict[str, Any] | None = None,
        version: str | None = None,
    ) -> Obj:
        if rt.resource == eventsv1.RESOURCE:
            return eventsv1.from_core(
                self.do_delete(
                    self._core_events,
                    name,
                    namespace,
                    propagation=propagation,
                    dry_run=dry_run,
                    preconditions=preconditions,
                )
            )
        if "delete" not in rt.verbs:
            raise E.method_not_allowed("delete", rt.resource)
        if propagation not in (None, "", "Background", "Foreground", "Orphan"):
            raise E.invalid(
                "DeleteOptions",
                "",
                [
                    E.not_supported(
                        "propagationPolicy", propagation, ["Foreground", "Background", "Orphan", "nil"]
                    )
                ],
                "meta.k8s.io",
            )
        ns = self._ns_key(rt, namespace) if rt.namespaced else ""
        with self.store.locked():
            cur = self._load(rt, name, ns)
            meta = _meta(cur)
            for key, label in (("uid", "UID"), ("resourceVersion", "ResourceVersion")):
                want = (preconditions or {}).get(key)
                if want and str(want) != str(meta.get(key)):
                    raise E.conflict(
                        rt.plural,
                        rt.group,
                        name,
                        f"Precondition failed: {label} in precondition: {want}, {label} in object meta: {meta.get(key)}",
                    )
            if dry_run:
                return self.present(rt, cur, version)
            if rt.resource == "customresourcedefinitions.apiextensions.k8s.io":
                self._crds.delete_custom_objects(self, cur)
            if rt.resource == "namespaces":
                if name in ("default", "kube-system", "kube-public"):
                    raise E.forbidden("namespaces", "", name, "this namespace may not be deleted")
                if meta.get("deletionTimestamp"):
                    return self.present(rt, cur, version)
                new = _copy(cur)
                _meta(new)["deletionTimestamp"] = self.now_text()
                _meta(new)["deletionGracePeriodSeconds"] = 0
                new.setdefault("status", {})["phase"] = "Terminating"
                if not self._ns_finalizers(rt, new) and not _meta(new).get("finalizers"):
                    self.store.remove(rt.resource, "", name, new)
                else:
                    self.store.put(rt.resource, "", name, new, "MODIFIED")
                return self.present(rt, new, version)
            finalizers = list(meta.get("finalizers") or [])
            if propagation in ("Foreground", "Orphan") and self._has_dependents(meta.get("uid")):
                fin = "foregroundDeletion" if propagation == "Foreground" else "orphan"
                if fin not in finalizers:
                    finalizers.append(fin)
            if meta.get("deletionTimestamp"):
                if finalizers != list(meta.get("finalizers") or []):
                    new = _copy(cur)
                    _meta(new)["finalizers"] = finalizers
                    self.store.put(rt.resource, ns, name, new, "MODIFIED")
                    return self.present(rt, new, version)
                return self.present(rt, cur, version)
            if finalizers:
                new = _copy(cur)
                nm = _meta(new)
                nm["finalizers"] = finalizers
                nm["deletionTimestamp"] = self.now_text()
                nm["deletionGracePeriodSeconds"] = 0
                self.store.put(rt.resource, ns, name, new, "MODIFIED")
                return self.present(rt, new, version)
            final = _copy(cur)
            self.store.remove(rt.resource, ns, name, final)
            if rt.resource == "customresourcedefinitions.apiextensions.k8s.io":
                self._crds.removed(self, final)
            return self.present(rt, final, version)

    def _has_dependents(self, uid: Any) -> bool:
        if not uid:
            return False
        needle = f'"uid":"{uid}"'
        for resource in self.store.resources():
            entries, _ = self.store.list(resource)
            for _ns, _n, (_rv, text) in entries:
                if needle in text and '"ownerReferences"' in text:
                    for o in (_loads(text).get("metadata") or {}).get("ownerReferences") or []:
                        if o.get("uid") == uid:
                            return True
        return False

    def delete_collection(
        self,
        rt: ResourceType,
        namespace: str | None,
        label_selector: str = "",
        field_selector: str = "",
        *,
        propagation: str | None = None,
        dry_run: bool = False,
    ) -> builtins.list[Obj]:
        if "deletecollection" not in rt.verbs:
            raise E.method_not_allowed("deletecollection", rt.resource)
        res = self.do_list(rt, namespace, label_selector, field_selector)
        out = []
        for item in res.items:
            m = item.get("metadata") or {}
            try:
                out.append(
                    self.do_delete(
                        rt, str(m.get("name")), m.get("namespace"), propagation=propagation, dry_run=dry_run
                    )
                )
            except ApiError as exc:
                if exc.code != 404:
                    raise
        return out


_POD_SPEC_SUBRESOURCES = ("ephemeralcontainers", "resize")
_NOT_FOR_EPHEMERAL = ("ports", "livenessProbe", "readinessProbe", "startupProbe", "lifecycle", "resources")


def _with_ephemeral_containers(cur: Obj, new: Obj) -> Obj:
    """pods/ephemeralcontainers (``kubectl debug``): only ``spec.ephemeralContainers`` changes, and only by
    additions -- existing ones may be neither changed nor removed, as upstream validates."""
    name = str(_meta(cur).get("name", ""))
    spec = cur.get("spec") or {}
    before = {str(c.get("name")): c for c in spec.get("ephemeralContainers") or []}
    after = list((new.get("spec") or {}).get("ephemeralContainers") or [])
    path = "spec.ephemeralContainers"
    errs: list[E.FieldError] = []
    names_after = {str(c.get("name")) for c in after if isinstance(c, dict)}
    for gone in before:
        if gone not in names_after:
            errs.append(E.forbidden_field(path, f'existing ephemeral containers "{gone}" may not be removed'))
    taken = {str(c.get("name")) for key in ("containers", "initContainers") for c in spec.get(key) or []}
    for i, c in enumerate(after):
        where = f"{path}[{i}]"
        if not isinstance(c, dict):
            errs.append(E.invalid_value(where, c, "must be an object"))
            continue
        cname = str(c.get("name") or "")
        if cname in before:
            if c != before[cname]:
                errs.append(E.forbidden_field(where, "existing ephemeral containers may not be changed"))
            continue
        if not cname:
            errs.append(E.required(f"{where}.name"))
        elif cname in taken:
            errs.append(E.duplicate(f"{where}.name", cname))
        if not c.get("image"):
            errs.append(E.required(f"{where}.image"))
        for field in _NOT_FOR_EPHEMERAL:
            if c.get(field):
                errs.append(E.forbidden_field(f"{where}.{field}", "cannot be set for an Ephemeral Container"))
        taken.add(cname)
    if errs:
        raise E.invalid("Pod", name, errs)
    out = _copy(cur)
    out.setdefault("spec", {})["ephemeralContainers"] = after
    return out


def _with_resized_containers(cur: Obj, new: Obj) -> Obj:
    """pods/resize (in-place resize), as upstream's resize strategy: only the containers' ``resources`` and
    ``resizePolicy`` are taken from the request, position by position. A request that adds, removes, renames or
    reorders containers keeps its lists, for validation.validate_pod_resize to refuse."""
    asked = new.get("spec") or {}
    out = _copy(cur)
    spec = out.setdefault("spec", {})
    for key in ("containers", "initContainers"):
        before = spec.get(key) or []
        after = [c for c in asked.get(key) or [] if isinstance(c, dict)]
        if len(after) != len(before) or any(
            a.get("name") != b.get("name") for a, b in zip(after, before, strict=True)
        ):
            spec[key] = copy.deepcopy(after)
            continue
        for c, src in zip(before, after, strict=True):
            for field in ("resources", "resizePolicy"):
                if field in src:
                    c[field] = copy.deepcopy(src[field])
                else:
                    c.pop(field, None)
    return out
