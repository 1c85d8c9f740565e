"""Event recording: core/v1 Events describing what the simulated cluster did (for ``kubectl describe`` and tests).

Like client-go's broadcaster, recording is asynchronous: a controller hands over (object, type, reason, message)
and goes on; one thread writes the Events. Repeats of the same (object, reason, message) within a short window are
folded into one Event whose ``count`` grows (upstream's correlator does the same), so a crash-looping Job does not
write hundreds of objects; and from the tenth different message of one (object, reason, type) on, they share one
``(combined from similar events)`` Event, as upstream's aggregator does. A failed write (the namespace is terminating, the server is stopping) is dropped, as
upstream drops it.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from dataclasses import dataclass
from enum import StrEnum

from berth.cluster.controllers import base, client
from berth.kube.objects import Obj

log = logging.getLogger(__name__)


class EventType(StrEnum):
    NORMAL = "Normal"
    WARNING = "Warning"


class Reason(StrEnum):
    """The reasons the simulated controllers and kubelet emit (upstream's words)."""

    SUCCESSFUL_CREATE = "SuccessfulCreate"
    SUCCESSFUL_DELETE = "SuccessfulDelete"
    FAILED_CREATE = "FailedCreate"
    SCALING_REPLICA_SET = "ScalingReplicaSet"
    PULLED = "Pulled"
    CREATED = "Created"
    STARTED = "Started"
    KILLING = "Killing"
    COMPLETED = "Completed"
    BACKOFF_LIMIT_EXCEEDED = "BackoffLimitExceeded"
    DEADLINE_EXCEEDED = "DeadlineExceeded"
    NODE_READY = "NodeReady"
    REGISTERED_NODE = "RegisteredNode"


@dataclass(frozen=True)
class _Record:
    involved: dict[str, str]
    namespace: str
    etype: str
    reason: str
    message: str


class EventRecorder:
    """Queue Events and write them on a background thread. ``enabled=False`` drops everything (benchmarks)."""

    AGGREGATE_WINDOW = 600.0
    SIMILAR_MAX = 10
    """Distinct messages of one (object, reason, type) within the window before further ones are combined into one
    Event, ``(combined from similar events): <latest>`` (upstream's EventAggregator)."""

    def __init__(self, api: client.ApiLike, component: str = "berth-cluster", enabled: bool = True) -> None:
        self.api = api
        self.component = component
        self.enabled = enabled
        self._queue: queue.Queue[_Record | None] = queue.Queue(maxsize=10_000)
        self._seen: dict[tuple[str, str, str, str], tuple[str, int, float]] = {}
        self._similar: dict[tuple[str, str, str], tuple[set[str], float]] = {}
        self._thread: threading.Thread | None = None
        self.written = 0

    def event(self, obj: Obj, etype: str, reason: str, message: str, component: str | None = None) -> None:
        if not self.enabled:
            return
        m = base.meta(obj)
        involved = {
            "kind": str(obj.get("kind", "")),
            "namespace": str(m.get("namespace") or ""),
            "name": str(m.get("name", "")),
            "uid": str(m.get("uid", "")),
            "apiVersion": str(obj.get("apiVersion", "")),
            "resourceVersion": str(m.get("resourceVersion", "")),
        }
        involved = {k: v for k, v in involved.items() if v}
        if component:
            involved["_component"] = component
        namespace = str(m.get("namespace") or "default")
        try:
            self._queue.put_nowait(_Record(involved, namespace, etype, reason, message))
        except queue.Full:
            log.debug("event queue full; dropping %s %s", reason, message)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="event-recorder", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        """Write what is queued (bounded by ``timeout``), then end the thread."""
        self._queue.put(None)
        if self._thread is not None:
            self._thread.join(timeout)

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until everything queued so far is written (tests)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._queue.unfinished_tasks == 0:
                return True
            time.sleep(0.005)
        return False

    def _run(self) -> None:
        while True:
            rec = self._queue.get()
            try:
                if rec is None:
                    return
                self._write(rec)
            except Exception as exc:  # events are best effort
                log.debug("event not recorded: %s", exc)
            finally:
                self._queue.task_done()

    def _write(self, rec: _Record) -> None:
        involved = dict(rec.involved)
        component = involved.pop("_component", self.component)
        component, _, host = component.partition("/")
        stamp = base.fmt_time()
        mono = time.monotonic()
        who = involved.get("uid", involved.get("name", ""))
        message = rec.message
        agg_key = (who, rec.reason, message, rec.etype)
        similar_key = (who, rec.reason, rec.etype)
        messages, since = self._similar.get(similar_key, (set(), mono))
        if mono - since >= self.AGGREGATE_WINDOW:
            messages, since = set(), mono
        messages.add(rec.message)
        self._similar[similar_key] = (messages, since)
        if len(messages) >= self.SIMILAR_MAX:
            # e.g. a ReplicaSet retrying creates a full quota refuses, each with a new pod name: one Event, counted
            message = f"(combined from similar events): {rec.message}"
            agg_key = (who, rec.reason, "(combined from similar events)", rec.etype)
        seen = self._seen.get(agg_key)
        if seen is not None and mono - seen[2] < self.AGGREGATE_WINDOW:
            name, count, _ = seen
            try:
                ev = self.api.get("events", name, rec.namespace)
                ev["count"] = int(ev.get("count") or 1) + 1
                ev["message"] = message
                ev["lastTimestamp"] = stamp
                self.api.update("events", ev, rec.namespace, user=f"system:{component}")
                self._seen[agg_key] = (name, count + 1, mono)
                return
            except client.ApiError:
                pass
        name = f"{involved.get('name', 'event')}.{time.time_ns():x}"
        event: Obj = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": rec.namespace},
            "involvedObject": involved,
            "reason": rec.reason,
            "message": message,
            "type": rec.etype,
            "source": {"component": component, "host": host} if host else {"component": component},
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
            "reportingComponent": component,
            "reportingInstance": host,
        }
        self.api.create("events", event, rec.namespace, user=f"system:{component}")
        self.written += 1
        if len(self._seen) > 50_000:
            self._seen.clear()
            self._similar.clear()
        self._seen[agg_key] = (name, 1, mono)
