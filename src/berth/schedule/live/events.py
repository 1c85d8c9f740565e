"""What the live scheduler tells users about a pod: Events and the pod's ``PodScheduled`` condition.

Why: ``kubectl describe pod`` is where people look when a pod stays Pending. Upstream writes, per cycle outcome:

- scheduled: Event ``Scheduled`` (Normal, action ``Binding``): ``Successfully assigned <ns>/<pod> to <node>``;
- failed: Event ``FailedScheduling`` (Warning, action ``Scheduling``) with the FitError text truncated to 1024
  characters, and a ``pods/status`` patch setting condition ``PodScheduled=False`` (reason ``Unschedulable`` or
  ``SchedulerError``, the full message) and ``status.nominatedNodeName`` when preemption nominated a node.

Events go out on a background thread (:class:`EventRecorder`) so a slow API server never slows scheduling; they
use ``events.k8s.io/v1`` and fall back to core ``v1`` Events if the server does not serve that group. The
condition patch (:class:`StatusWriter`) is written synchronously, before the pod can be retried, and only when the
condition or nomination actually changes -- an unschedulable pod re-tried on every cluster event would otherwise
write the same status again and again.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import queue
import socket
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from berth.kube import objects
from berth.kube.objects import Obj
from berth.schedule import scheduler as scheduler_mod
from berth.schedule.live import api

log = logging.getLogger("berth.schedule.live")

NORMAL = "Normal"
WARNING = "Warning"
SCHEDULED = "Scheduled"
FAILED_SCHEDULING = "FailedScheduling"
ACTION_BINDING = "Binding"
ACTION_SCHEDULING = "Scheduling"
POD_SCHEDULED = "PodScheduled"


def micro_time(now: dt.datetime | None = None) -> str:
    """MicroTime as the API writes it: ``2026-11-29T19:53:33.849118Z``."""
    t = (now or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def rfc3339(now: dt.datetime | None = None) -> str:
    t = (now or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def scheduled_message(pod_key: str, node: str) -> str:
    return f"Successfully assigned {pod_key} to {node}"


@dataclass(frozen=True)
class PodEvent:
    """One Event about one pod."""

    pod: Obj
    reporting_controller: str  # the profile's scheduler name, as upstream
    type: str
    reason: str
    action: str
    note: str
    related: Obj | None = None  # a second object the event is about (the preemptor, for ``Preempted``)


class EventRecorder:
    """Posts :class:`PodEvent` s from background threads; never blocks the scheduling loop.

    ``workers`` threads post concurrently: one thread waits out each Event's round trip, and at a few hundred pods
    a second a single one falls behind a busy API server. An unreachable API server is logged once per outage (not
    once per Event); events still queued when :meth:`close` gives up are dropped.

    Args:
        api_client: the official client's ApiClient.
        permissions: 403s are logged once per missing permission.
        capacity: events waiting beyond this are dropped (counted in ``dropped``), as client-go's broadcaster does.
        workers: posting threads.
    """

    def __init__(
        self, api_client: Any, permissions: api.PermissionLog, capacity: int = 10_000, workers: int = 2
    ) -> None:
        self._api_client = api_client
        self._permissions = permissions
        self._queue: queue.Queue[PodEvent | None] = queue.Queue(capacity)
        self._instance_suffix = socket.gethostname()
        self._use_core = False
        self._lock = threading.Lock()
        self._unreachable = False  # logged for the current outage already
        self._closing = False
        self.posted = 0
        self.failed = 0
        self.dropped = 0
        self._threads = [
            threading.Thread(target=self._run, name=f"event-recorder-{i}", daemon=True)
            for i in range(workers)
        ]
        for thread in self._threads:
            thread.start()

    def record(self, event: PodEvent) -> None:
        try:
            self._queue.put_nowait(event)
        except queue.Full:
            with self._lock:
                self.dropped += 1

    @property
    def pending(self) -> int:
        """Events queued and not posted yet."""
        return self._queue.qsize()

    def close(self, timeout: float = 5.0) -> None:
        """Post what is queued (up to ``timeout`` seconds), then stop; what is still queued then is dropped."""
        deadline = time.monotonic() + timeout
        for _ in self._threads:
            with contextlib.suppress(queue.Full):
                self._queue.put(None, timeout=max(0.0, deadline - time.monotonic()))
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        with self._lock:
            self._closing = True
        left = self._drain()
        if left:
            log.warning("dropped %d queued event(s) at shutdown", left)

    def _drain(self) -> int:
        """Empty the queue (not the stop markers' job any more); the number of events dropped."""
        left = 0
        while True:
            try:
                event = self._queue.get_nowait()
            except queue.Empty:
                break
            if event is not None:
                left += 1
        with self._lock:
            self.dropped += left
        return left

    def _run(self) -> None:
        while True:
            event = self._queue.get()
            if event is None:
                return
            with self._lock:
                if self._closing:
                    self.dropped += 1
                    continue
            try:
                self._post(event)
                with self._lock:
                    self.posted += 1
                    if self._unreachable:
                        self._unreachable = False
                        log.info("recording events again")
            except api.ApiError as exc:
                with self._lock:
                    self.failed += 1
                ns = str((event.pod.get("metadata") or {}).get("namespace") or "default")
                if exc.status == 403:
                    group = "" if self._use_core else "events.k8s.io"
                    self._permissions.forbidden("create", "events", group, ns, exc)
                else:
                    log.warning("could not record event %s for pod %s: %s", event.reason, ns, exc)
            except api.Unreachable as exc:
                with self._lock:
                    self.failed += 1
                    first = not self._unreachable
                    self._unreachable = True
                if first:
                    log.warning(
                        "could not record event %s: API server unreachable: %s (further failures until it "
                        "answers again are counted, not logged)",
                        event.reason,
                        exc,
                    )
            except Exception:
                with self._lock:
                    self.failed += 1
                log.exception("could not record event %s", event.reason)

    def _post(self, event: PodEvent) -> None:
        meta = event.pod.get("metadata") or {}
        ns = str(meta.get("namespace") or "default")
        name = str(meta.get("name") or "")
        now = dt.datetime.now(dt.UTC)
        event_name = f"{name}.{time.time_ns():x}"
        ref = objects.object_reference(event.pod, "Pod")
        related = objects.object_reference(event.related, "Pod") if event.related is not None else None
        instance = f"{event.reporting_controller}-{self._instance_suffix}"
        if not self._use_core:
            body = {
                "apiVersion": "events.k8s.io/v1",
                "kind": "Event",
                "metadata": {"name": event_name, "namespace": ns},
                "eventTime": micro_time(now),
                "reportingController": event.reporting_controller,
                "reportingInstance": instance,
                "action": event.action,
                "reason": event.reason,
                "regarding": ref,
                "note": event.note,
                "type": event.type,
            }
            if related is not None:
                body["related"] = related
            try:
                # Raw JSON (berth.schedule.live.api): the typed method would first validate the body into its
                # pydantic model, which costs as much as the request itself on this hot path.
                api.call(
                    self._api_client, "POST", f"/apis/events.k8s.io/v1/namespaces/{ns}/events", body=body
                )
                return
            except api.ApiError as exc:
                if exc.status != 404 or exc.body.get("details"):
                    raise
                log.info("events.k8s.io/v1 is not served; recording core v1 Events instead")
                self._use_core = True
        stamp = rfc3339(now)
        core_body = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": event_name, "namespace": ns},
            "involvedObject": ref,
            "reason": event.reason,
            "message": event.note,
            "type": event.type,
            "source": {"component": event.reporting_controller},
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
            "eventTime": micro_time(now),
            "action": event.action,
            "reportingComponent": event.reporting_controller,
            "reportingInstance": instance,
        }
        if related is not None:
            core_body["related"] = related
        api.call(self._api_client, "POST", f"/api/v1/namespaces/{ns}/events", body=core_body)


def scheduled_event(pod: Obj, scheduler_name: str, node: str) -> PodEvent:
    meta = pod.get("metadata") or {}
    key = f"{meta.get('namespace') or 'default'}/{meta.get('name') or ''}"
    return PodEvent(pod, scheduler_name, NORMAL, SCHEDULED, ACTION_BINDING, scheduled_message(key, node))


def failed_event(pod: Obj, scheduler_name: str, message: str) -> PodEvent:
    note = scheduler_mod.truncate_event_message(message)
    return PodEvent(pod, scheduler_name, WARNING, FAILED_SCHEDULING, ACTION_SCHEDULING, note)


def pod_scheduled_condition(pod: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if isinstance(cond, Mapping) and cond.get("type") == POD_SCHEDULED:
            return cond
    return None


class StatusWriter:
    """Patches ``pods/status``: ``PodScheduled=False`` with the reason and message, and ``nominatedNodeName``."""

    def __init__(self, api_client: Any, permissions: api.PermissionLog) -> None:
        self._api_client = api_client
        self._permissions = permissions
        self.patches = 0

    def patch(
        self, pod: Obj, reason: str, message: str, nominated_node: str = "", clear_nomination: bool = False
    ) -> bool:
        """Write the condition if it differs from the pod's; True when a patch was sent and accepted.
        ``nominated_node`` sets ``status.nominatedNodeName``; ``clear_nomination`` removes it (upstream, when
        preemption finds no room any more)."""
        current = pod_scheduled_condition(pod) or {}
        status = pod.get("status") or {}
        same_condition = (
            current.get("status") == "False"
            and current.get("reason") == reason
            and current.get("message") == message
        )
        had = status.get("nominatedNodeName") or ""
        if nominated_node:
            same_nomination = had == nominated_node
        else:
            same_nomination = not (clear_nomination and had)
        if same_condition and same_nomination:
            return False
        meta = pod.get("metadata") or {}
        ns = str(meta.get("namespace") or "default")
        name = str(meta.get("name") or "")
        condition: dict[str, Any] = {
            "type": POD_SCHEDULED,
            "status": "False",
            "reason": reason,
            "message": message,
            "lastProbeTime": None,
            "lastTransitionTime": rfc3339()
            if current.get("status") != "False"
            else current.get("lastTransitionTime") or rfc3339(),
        }
        body: dict[str, Any] = {"status": {"conditions": [condition]}}
        if nominated_node:
            body["status"]["nominatedNodeName"] = nominated_node
        elif clear_nomination and had:
            body["status"]["nominatedNodeName"] = None  # a patch's null removes the field
        try:
            # Strategic merge: ``conditions`` merge by type, so other conditions of the pod are kept.
            api.call(
                self._api_client,
                "PATCH",
                f"/api/v1/namespaces/{ns}/pods/{name}/status",
                body=body,
                content_type=api.STRATEGIC_MERGE_PATCH,
            )
        except api.ApiError as exc:
            if exc.status == 403:
                self._permissions.forbidden("patch", "pods/status", "", ns, exc)
            elif exc.status != 404:
                log.warning("could not update the PodScheduled condition of %s/%s: %s", ns, name, exc)
            return False
        except api.Unreachable as exc:
            log.warning("could not update the PodScheduled condition of %s/%s: %s", ns, name, exc)
            return False
        self.patches += 1
        return True
