"""What every controller shares: the context handed in at start, the worker loop, and small object helpers.

A controller (like upstream's) is informers feeding a :class:`~.workqueue.WorkQueue` of keys and one worker thread
that reconciles a key at a time: read the cached desired state, compare with the observed state, write the
difference through the Api. A reconcile that hits a 409 (someone wrote first) or any other error is retried with
backoff; one that wants to look again later (a simulated delay) asks for :meth:`Controller.requeue_after`.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol

from berth.cluster import objmeta
from berth.cluster.controllers import client
from berth.cluster.controllers.informer import InformerFactory
from berth.cluster.controllers.workqueue import WorkQueue
from berth.kube.objects import Obj

if TYPE_CHECKING:
    from berth.cluster.controllers.options import ControllerOptions

log = logging.getLogger(__name__)


class Recorder(Protocol):
    """What controllers record events through (``events.EventRecorder``, upstream's ``record.EventRecorder``):
    declared here so this module needs nothing from the recorder's own."""

    def event(
        self, obj: Obj, etype: str, reason: str, message: str, component: str | None = None
    ) -> None: ...

    def stop(self, timeout: float = 2.0) -> None: ...


@dataclass
class Context:
    """Dependencies every controller receives (passed in, never global, so tests can build their own)."""

    api: client.ApiLike
    options: ControllerOptions
    informers: InformerFactory
    recorder: Recorder
    stop: threading.Event


class Controller:
    """Base class: subclasses set ``name``, wire informers in ``__init__`` and implement :meth:`reconcile`."""

    name = "controller"
    key = ""
    """The :data:`berth.cluster.controllers.CONTROLLER_NAMES` entry this instance runs as (set by ``start``)."""

    SYNC_TIMEOUT = 10.0
    TRACK_WRITES = False
    """Keep what this controller's status writes return for :meth:`fresher` (controllers of a few objects with
    busy statuses: workloads; not the kubelet, whose thousands of pods would be kept twice)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.api = ctx.api
        self.options = ctx.options
        self.queue = WorkQueue()
        self._thread: threading.Thread | None = None
        self._due: dict[str, float] = {}
        self._due_lock = threading.Lock()
        self._backoff: dict[str, float] = {}
        # Objects this controller's own status writes returned, by key, until its informer catches up (fresher).
        self._written: dict[str, Obj] = {}
        self._written_lock = threading.Lock()

    @property
    def user(self) -> str:
        """The identity written to the audit log for this controller's requests."""
        return f"system:controller:{self.name}"

    # ---- lifecycle -----------------------------------------------------------------------------------------

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"controller-{self.name}", daemon=True)
        self._thread.start()

    def shutdown(self) -> None:
        self.queue.shutdown()

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def requeue_after(self, key: str, delay: float) -> None:
        """Ask to reconcile ``key`` again after ``delay`` seconds; an earlier pending request makes this a no-op."""
        due = time.monotonic() + max(delay, 0.0)
        with self._due_lock:
            cur = self._due.get(key)
            if cur is not None and time.monotonic() < cur <= due:
                return
            self._due[key] = due
        self.queue.add_after(key, delay)

    def wrote(self, obj: Obj) -> None:
        """Remember what a write of ours returned: the informer delivers it a moment later, and a reconcile in
        between would otherwise write from the older copy and get a 409 (again and again while events arrive)."""
        if not self.TRACK_WRITES:
            return
        key = objmeta.object_key(obj)
        with self._written_lock:
            self._written[key] = obj

    def fresher(self, key: str, cached: Obj | None) -> Obj | None:
        """``cached`` (the informer's copy of ``key``), or what our last write returned when that is newer."""
        with self._written_lock:
            written = self._written.get(key)
            if written is None:
                return cached
            if cached is not None and _revision(cached) < _revision(written):
                return written
            del self._written[key]  # the informer caught up (or the object is gone)
            return cached

    BACKOFF_MAX = 30.0
    """Seconds: the longest wait between retries of a write that keeps failing (see :meth:`back_off`)."""

    def back_off(self, key: str) -> None:
        """Reconcile ``key`` again, each time twice as late (10 ms up to :data:`BACKOFF_MAX`): how upstream's
        controllers retry a create the server refuses (a full quota, a terminating namespace) without spinning."""
        with self._due_lock:
            delay = self._backoff[key] = min(self._backoff.get(key, 0.005) * 2, self.BACKOFF_MAX)
        self.requeue_after(key, delay)

    def back_off_reset(self, key: str) -> None:
        with self._due_lock:
            self._backoff.pop(key, None)

    def _run(self) -> None:
        # Like upstream's WaitForCacheSync: acting on half-listed caches would, e.g., make a ReplicaSet whose pods
        # are not listed yet create duplicates after a restart.
        deadline = time.monotonic() + self.SYNC_TIMEOUT
        while not self.ctx.stop.is_set() and time.monotonic() < deadline:
            if self.ctx.informers.wait_synced(0.05):
                break
        else:
            if not self.ctx.stop.is_set():
                log.warning(
                    "%s: informers not synced after %.0fs; starting anyway", self.name, self.SYNC_TIMEOUT
                )
        while not self.ctx.stop.is_set():
            key = self.queue.get(timeout=0.2)
            if key is None:
                continue
            with self._due_lock:
                due = self._due.get(key)
                if due is not None and due <= time.monotonic():
                    del self._due[key]
            try:
                self.reconcile(key)
                self.queue.forget(key)
            except client.ApiError as exc:
                if not client.is_conflict(exc) and not client.is_not_found(exc):
                    log.warning("%s: reconcile %s: %s", self.name, key, exc.message)
                self.queue.add_rate_limited(key)
            except Exception:
                if self.ctx.stop.is_set():
                    break
                log.exception("%s: reconcile %s failed", self.name, key)
                self.queue.add_rate_limited(key)
            finally:
                self.queue.done(key)

    def reconcile(self, key: str) -> None:  # pragma: no cover - abstract
        raise NotImplementedError


def write_status(ctrl: Controller, resource: str, obj: Obj, status: dict[str, Any]) -> Obj:
    """PUT ``status`` through the status subresource, guarded by ``obj``'s resourceVersion.

    Only identity and the status travel: the subresource ignores everything else, and not copying the spec keeps
    the kubelet cheap with thousands of pods.
    """
    m = meta(obj)
    body: Obj = {
        "apiVersion": obj.get("apiVersion"),
        "kind": obj.get("kind"),
        "metadata": {k: m[k] for k in ("name", "namespace", "resourceVersion") if m.get(k)},
        "status": status,
    }
    out = ctrl.api.update(resource, body, m.get("namespace") or None, subresource="status", user=ctrl.user)
    ctrl.wrote(out)
    return out


def _revision(obj: Obj) -> int:
    try:
        return int(meta(obj).get("resourceVersion") or 0)
    except (TypeError, ValueError):
        return 0


# ---- time ----------------------------------------------------------------------------------------------------


def now() -> datetime:
    return datetime.now(UTC)


def fmt_time(t: datetime | None = None) -> str:
    """``metav1.Time``: seconds precision, ``Z`` suffix."""
    return (t or now()).strftime("%Y-%m-%dT%H:%M:%SZ")


def fmt_micro(t: datetime | None = None) -> str:
    """``metav1.MicroTime``: six fraction digits, ``Z`` suffix."""
    return (t or now()).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text: str | None) -> datetime | None:
    """Parse a Time/MicroTime or Python ``isoformat()`` value; None when absent or malformed."""
    if not text:
        return None
    try:
        t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=UTC)


def age_seconds(text: str | None) -> float | None:
    t = parse_time(text)
    return None if t is None else (now() - t).total_seconds()


# ---- object helpers ------------------------------------------------------------------------------------------


def meta(obj: Obj) -> dict[str, Any]:
    return obj.get("metadata") or {}


def uid(obj: Obj) -> str:
    return str(meta(obj).get("uid", ""))


def deleting(obj: Obj) -> bool:
    return bool(meta(obj).get("deletionTimestamp"))


def generation(obj: Obj) -> int:
    return int(meta(obj).get("generation") or 0)


def controller_ref(obj: Obj) -> dict[str, Any] | None:
    """The ownerReference with ``controller: true`` (at most one exists)."""
    for r in meta(obj).get("ownerReferences") or []:
        if r.get("controller"):
            return dict(r)
    return None


def owned_by(obj: Obj, owner_uid: str) -> bool:
    ref = controller_ref(obj)
    return ref is not None and ref.get("uid") == owner_uid


def owner_reference(owner: Obj, api_version: str, kind: str, block: bool = True) -> dict[str, Any]:
    """A controller ownerReference pointing at ``owner``."""
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": meta(owner).get("name", ""),
        "uid": uid(owner),
        "controller": True,
        "blockOwnerDeletion": block,
    }


def owner_key(obj: Obj, kind: str) -> str | None:
    """``ns/name`` of the controlling owner when it is of ``kind`` (how a pod event finds its controller)."""
    ref = controller_ref(obj)
    if ref is None or ref.get("kind") != kind:
        return None
    return objmeta.ns_name_key(str(meta(obj).get("namespace") or ""), str(ref.get("name", "")))


def condition(obj: Obj, ctype: str) -> dict[str, Any] | None:
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype:
            return dict(c)
    return None


def condition_true(obj: Obj, ctype: str) -> bool:
    c = condition(obj, ctype)
    return c is not None and c.get("status") == "True"


def set_condition(
    status: dict[str, Any],
    ctype: str,
    value: str,
    reason: str = "",
    message: str = "",
    *,
    heartbeat: bool = False,
) -> None:
    """Upsert a condition in ``status.conditions``; ``lastTransitionTime`` moves only when the status changes."""
    conds: list[dict[str, Any]] = status.setdefault("conditions", [])
    stamp = fmt_time()
    for c in conds:
        if c.get("type") == ctype:
            if c.get("status") != value:
                c["lastTransitionTime"] = stamp
            c["status"] = value
            if reason:
                c["reason"] = reason
            if message:
                c["message"] = message
            if heartbeat:
                c["lastUpdateTime"] = stamp
            return
    new: dict[str, Any] = {"type": ctype, "status": value, "lastTransitionTime": stamp}
    if heartbeat:
        new["lastUpdateTime"] = stamp
    if reason:
        new["reason"] = reason
    if message:
        new["message"] = message
    conds.append(new)


ORPHAN_INDEX = "orphans-by-namespace"
"""Informer index: the namespace of every object without a controller ownerReference (adoption candidates)."""


def orphan_namespace(obj: Obj) -> list[str]:
    if controller_ref(obj) is not None or deleting(obj):
        return []
    return [str(meta(obj).get("namespace") or "")]


def adopt_orphans(
    ctrl: Controller, informer: Any, resource: str, owner: Obj, api_version: str, kind: str
) -> int:
    """Upstream ``ClaimObjects`` (adopt half): give orphans matching the owner's selector a controller reference.

    Returns how many were adopted. ``informer`` must carry :data:`ORPHAN_INDEX`.
    """
    from berth.kube import selectors

    if deleting(owner):
        return 0
    sel = selectors.from_label_selector((owner.get("spec") or {}).get("selector"))
    if sel is None or sel.empty:
        return 0
    ns = str(meta(owner).get("namespace") or "")
    adopted = 0
    for obj in informer.by_index(ORPHAN_INDEX, ns):
        if not sel.matches(meta(obj).get("labels") or {}):
            continue
        body = {
            "metadata": {
                "resourceVersion": meta(obj).get("resourceVersion"),
                "ownerReferences": [
                    *(meta(obj).get("ownerReferences") or []),
                    owner_reference(owner, api_version, kind),
                ],
            }
        }
        try:
            ctrl.api.patch(
                resource, str(meta(obj).get("name", "")), body, "merge", ns or None, user=ctrl.user
            )
            adopted += 1
        except client.ApiError as exc:
            # a conflict (someone wrote the orphan meanwhile) fails the reconcile so it retries: managing
            # replicas without the orphan would create a duplicate
            if not client.is_not_found(exc):
                raise
    return adopted


REVISIONS = "controllerrevisions.apps"


def ensure_revision(ctrl: Controller, revisions: Any, owner: Obj, kind: str, rev_name: str, h: str) -> None:
    """Keep a ControllerRevision ``rev_name`` holding the owner's pod template as its newest revision.

    What ``kubectl rollout history|undo`` reads for StatefulSets and DaemonSets. A template that returns to an
    older revision gets that revision renumbered to the newest, as upstream does.
    """
    import copy

    ns = str(meta(owner).get("namespace", ""))
    owner_uid = uid(owner)
    owned = [r for r in revisions.by_index("owner-uid", owner_uid) if owned_by(r, owner_uid)]
    top = max((int(r.get("revision") or 0) for r in owned), default=0)
    existing = revisions.get(objmeta.ns_name_key(ns, rev_name))
    if existing is not None:
        if int(existing.get("revision") or 0) < top:
            bumped = copy.deepcopy(existing)
            bumped["revision"] = top + 1
            ctrl.api.update(REVISIONS, bumped, ns, user=ctrl.user)
        return
    template = copy.deepcopy((owner.get("spec") or {}).get("template") or {})
    labels = dict(((template.get("metadata") or {}).get("labels")) or {})
    labels["controller.kubernetes.io/hash"] = h
    rev = {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {
            "name": rev_name,
            "namespace": ns,
            "labels": labels,
            "ownerReferences": [owner_reference(owner, "apps/v1", kind)],
        },
        "data": {"spec": {"template": {**template, "$patch": "replace"}}},
        "revision": top + 1,
    }
    try:
        ctrl.api.create(REVISIONS, rev, ns, user=ctrl.user)
    except client.ApiError as exc:
        if not client.is_already_exists(exc):
            raise


# ---- pods ----------------------------------------------------------------------------------------------------


def int_field(obj: dict[str, Any], field: str, default: int) -> int:
    """An optional integer field (``None`` or absent reads as ``default``)."""
    value = obj.get(field)
    return default if value is None else int(value)


def pod_phase(pod: Obj) -> str:
    return str((pod.get("status") or {}).get("phase") or "Pending")


def pod_ready(pod: Obj) -> bool:
    return pod_phase(pod) == "Running" and condition_true(pod, "Ready")


def pod_finished(pod: Obj) -> bool:
    return pod_phase(pod) in ("Succeeded", "Failed")


def pod_active(pod: Obj) -> bool:
    """Upstream ``IsPodActive``: not finished and not being deleted."""
    return not pod_finished(pod) and not deleting(pod)


def pod_available(pod: Obj, min_ready_seconds: int) -> bool:
    """Ready for at least ``min_ready_seconds`` (measured from the Ready condition's transition)."""
    if not pod_ready(pod):
        return False
    if min_ready_seconds <= 0:
        return True
    c = condition(pod, "Ready") or {}
    age = age_seconds(c.get("lastTransitionTime"))
    return age is not None and age >= min_ready_seconds


def pod_from_template(
    template: dict[str, Any],
    namespace: str,
    name: str,
    owner_ref: dict[str, Any],
    extra_labels: dict[str, str],
) -> Obj:
    """A Pod built from a PodTemplateSpec, owned by a workload (upstream ``GetPodFromTemplate``)."""
    import copy

    tmeta = template.get("metadata") or {}
    labels = dict(tmeta.get("labels") or {})
    labels.update(extra_labels)
    metadata: dict[str, Any] = {
        "name": name,
        "namespace": namespace,
        "labels": labels,
        "ownerReferences": [owner_ref],
    }
    if tmeta.get("annotations"):
        metadata["annotations"] = dict(tmeta["annotations"])
    if tmeta.get("finalizers"):
        metadata["finalizers"] = list(tmeta["finalizers"])
    spec = copy.deepcopy(template.get("spec") or {})
    spec.setdefault("schedulerName", "default-scheduler")
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def sleep_until(pred: Any, timeout: float, interval: float = 0.01) -> bool:
    """Poll ``pred()`` until true or ``timeout`` (used by start-up sync, never for fixed waits)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(interval)
    return bool(pred())
