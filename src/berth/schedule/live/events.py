"""What the live scheduler tells users about a pod: Events and the pod's ``PodScheduled`` condition.

Why: ``kubectl describe pod`` is where people look when a pod stays Pending. Upstream writes, per cycle outcome:

- scheduled: Event ``Scheduled`` (Normal, action ``Binding``): ``Successfully assigned <ns>/<pod> to <node>``;
- failed: Event ``FailedScheduling`` (Warning, action ``Scheduling``) with the FitError text truncated to 1024
  characters, and a ``pods/status`` patch setting condition ``PodScheduled=False`` (reason ``Unschedulable`` or
  ``SchedulerError``, the full message) and ``status.nominatedNodeName`` when preemption nominated a node.

Events go out on background threads (:class:`EventRecorder`) so a slow API server never slows scheduling; they
use ``events.k8s.io/v1`` and fall back to core ``v1`` Events if the server does not serve that group. The
condition patch (:class:`StatusWriter`) is written synchronously, before the pod can be retried, and only when the
condition or nomination actually changes -- an unschedulable pod re-tried on every cluster event would otherwise
write the same status again and again.

Series, as kube-scheduler's recorder (client-go ``tools/events``: ``eventBroadcasterImpl.recordToSink``,
``recordEvent``, ``finishSeries``, ``refreshExistingEventSeries``) makes them, so a pod retried for an hour is one
Event with a count, not hundreds. Two Events are *isomorphic* when they agree on type, action, reason, reporting
controller and instance, ``regarding`` and ``related`` (``getKey``) -- whole object references, resourceVersion
included, and not the note. Per isomorphic key the recorder keeps the Event it created::

    1st occurrence      -> cached, POST (created)
    2nd                 -> series {count: 2, lastObservedTime: now} on the cached Event, PATCH (strategic merge of
                           ``series`` only); a 404 (deleted, or not written yet) POSTs it whole under the same name,
                           and a POST of a series that then answers AlreadyExists is retried
    3rd, 4th, ...       -> count + 1, lastObservedTime = now in the cache only: no request
    every 30 min        -> every cached series PATCHed with its current count        (refreshExistingEventSeries)
    every 6 min         -> a series last observed more than 6 min ago: final count PATCHed, dropped from the cache;
                           a single Event older than 6 min: dropped; the next occurrence starts a new Event
                                                                                      (finishSeries)

So what the API shows lags: ``count: 2`` until the next refresh or until the series ends. A pod's resourceVersion
changes when its ``PodScheduled`` condition is first written, so a pod failing again and again shows one
``FailedScheduling`` Event for its first failure and one series for the rest -- as on a real cluster. An Event
that gets no answer is tried again 10 s later (+ up to 25 % jitter), 12 tries in all; one the server rejects (any
error Status) is not. The core ``v1`` fallback writes every occurrence as its own Event (upstream's legacy
recorder aggregates with a different scheme, ``record.EventCorrelator``, which berth does not reproduce).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import heapq
import logging
import math
import queue
import random
import socket
import threading
import time
from collections.abc import Callable, Mapping
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

EVENTS_GROUP = "events.k8s.io"
FINISH_TIME = 6 * 60.0  # upstream finishTime: a series unseen this long has ended (also the check period)
REFRESH_TIME = 30 * 60.0  # upstream refreshTime: every live series' count is written again this often
RETRY_SLEEP = 10.0  # upstream defaultSleepDuration between tries of an unanswered write (jittered by +25 %)
MAX_TRIES = 12  # upstream maxTriesPerEvent
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)

Clock = Callable[[], dt.datetime]


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


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


@dataclass(frozen=True)
class SeriesTimings:
    """Upstream's constants, in seconds; tests shorten them instead of sleeping."""

    finish: float = FINISH_TIME
    refresh: float = REFRESH_TIME
    retry_sleep: float = RETRY_SLEEP
    max_tries: int = MAX_TRIES


_Ref = tuple[Any, ...]
_Key = tuple[Any, ...]


def _ref(ref: Any) -> _Ref:
    """Every field of a ``corev1.ObjectReference`` (compared whole by upstream); spelled out, not sorted: this runs
    once per Event."""
    if not isinstance(ref, Mapping):
        return ()
    get = ref.get
    return (
        get("kind"),
        get("namespace"),
        get("name"),
        get("uid"),
        get("apiVersion"),
        get("resourceVersion"),
        get("fieldPath"),
    )


def series_key(body: Mapping[str, Any]) -> _Key:
    """Upstream ``getKey``: what makes two ``events.k8s.io/v1`` Events isomorphic (the note is not part of it)."""
    get = body.get
    return (
        get("type"),
        get("action"),
        get("reason"),
        get("reportingController"),
        get("reportingInstance"),
        _ref(get("regarding")),
        _ref(get("related")),
    )


@dataclass
class _Cached:
    """The Event created for one isomorphic key, and its series once it repeats."""

    body: dict[str, Any]  # as created: no series, no resourceVersion
    event_time: dt.datetime
    count: int = 1
    last_observed: dt.datetime | None = None  # set from the second occurrence on

    def to_send(self) -> dict[str, Any]:
        body = dict(self.body)
        if self.last_observed is not None:
            body["series"] = {"count": self.count, "lastObservedTime": micro_time(self.last_observed)}
        return body


@dataclass(frozen=True)
class _Retry:
    """A write that got no answer, queued again for its worker."""

    body: dict[str, Any]
    tries: int


class EventRecorder:
    """Posts :class:`PodEvent` s from background threads; never blocks the scheduling loop.

    Repeats become series as the module docstring describes. A worker takes every Event queued by the time it is
    free (up to ``batch``) and POSTs the first occurrences among them pipelined on its connection -- one round trip
    and one write for the lot, as upstream's broadcaster drains its channel -- so one worker keeps up with
    hundreds of pods a second at less CPU per Event on both sides than a request each; ``workers`` threads post
    concurrently. All Events about one pod go to the same worker, in the order they happened (a series update
    does not overtake the Event it updates). Another thread runs the series upkeep (end, refresh) and hands
    writes that got no answer back to their worker when their retry is due. An unreachable API server
    is logged once per outage (not once per Event); Events still queued, or waiting to be retried, when
    :meth:`close` gives up are dropped.

    Args:
        api_client: the official client's ApiClient.
        permissions: 403s are logged once per missing permission.
        capacity: events waiting beyond this are dropped (counted in ``dropped``), as client-go's broadcaster does.
        workers: posting threads.
        batch: the most Events one worker sends pipelined.
        timings: the series window, refresh period and retry policy (upstream's by default).
        clock: the time Events carry and series windows are measured in (a test passes a fake one).
    """

    def __init__(
        self,
        api_client: Any,
        permissions: api.PermissionLog,
        capacity: int = 10_000,
        workers: int = 1,
        timings: SeriesTimings | None = None,
        clock: Clock = utc_now,
        batch: int = 32,
    ) -> None:
        self._api_client = api_client
        self._batch = max(1, batch)
        self._permissions = permissions
        self._timings = timings or SeriesTimings()
        self._clock = clock
        n = max(1, workers)
        self._queues: list[queue.Queue[PodEvent | _Retry | None]] = [
            queue.Queue(max(1, capacity // n)) for _ in range(n)
        ]
        self._instance_suffix = socket.gethostname()
        self._use_core = False
        self._lock = threading.Lock()  # the counters, the outage flag, the series cache and the retry heap
        self._wake = threading.Condition(self._lock)  # the upkeep thread waits on it
        self._cache: dict[_Key, _Cached] = {}
        self._retries: list[tuple[float, int, int, _Retry]] = []  # heap of (due, sequence, worker, retry)
        self._sequence = 0
        self._jitter = random.Random()
        self._unreachable = False  # logged for the current outage already
        self._stopping = False  # the upkeep thread stops
        self._closing = False  # the workers drop what they still get
        self.posted = 0  # writes accepted: Events created and series updated
        self.aggregated = 0  # occurrences counted into a series without a request of their own
        self.failed = 0  # writes given up: rejected by the server, or unanswered after every try
        self.dropped = 0  # Events never written: the queue was full, or they were still waiting at shutdown
        self._workers = [
            threading.Thread(target=self._run, args=(i,), name=f"event-recorder-{i}", daemon=True)
            for i in range(n)
        ]
        self._upkeep = threading.Thread(target=self._series_upkeep, name="event-series", daemon=True)
        for thread in (*self._workers, self._upkeep):
            thread.start()

    def record(self, event: PodEvent) -> None:
        meta = event.pod.get("metadata") or {}
        worker = hash((meta.get("namespace"), meta.get("name"))) % len(self._queues)
        try:
            self._queues[worker].put_nowait(event)
        except queue.Full:
            with self._lock:
                self.dropped += 1

    @property
    def pending(self) -> int:
        """Events queued and not posted yet."""
        return sum(q.qsize() for q in self._queues)

    @property
    def series(self) -> int:
        """Isomorphic keys remembered (single Events younger than the window, and open series)."""
        with self._lock:
            return len(self._cache)

    def close(self, timeout: float = 5.0) -> None:
        """Post what is queued (up to ``timeout`` seconds), then stop; what is still queued or waiting for a retry
        then is dropped. Open series are not written a last time, as upstream's broadcaster does not either."""
        deadline = time.monotonic() + timeout
        with self._lock:
            self._stopping = True
            self._wake.notify_all()
        for q in self._queues:
            with contextlib.suppress(queue.Full):
                q.put(None, timeout=max(0.0, deadline - time.monotonic()))
        for thread in (*self._workers, self._upkeep):
            thread.join(max(0.0, deadline - time.monotonic()))
        with self._lock:
            self._closing = True
        left = self._drain()
        if left:
            log.warning("dropped %d queued event(s) at shutdown", left)

    def _drain(self) -> int:
        """Empty the queues and the retry heap (not the stop markers' job any more); the number of events
        dropped."""
        left = 0
        for q in self._queues:
            while True:
                try:
                    item = q.get_nowait()
                except queue.Empty:
                    break
                if item is not None:
                    left += 1
        with self._lock:
            left += len(self._retries)
            self._retries.clear()
            self.dropped += left
        return left

    # --- workers ----------------------------------------------------------------------------------------------

    def _run(self, worker: int) -> None:
        q = self._queues[worker]
        while True:
            items: list[PodEvent | _Retry | None] = [q.get()]
            while items[-1] is not None and len(items) < self._batch:
                try:
                    items.append(q.get_nowait())
                except queue.Empty:
                    break
            # Consecutive first occurrences (plain creates) go out together, pipelined on this worker's
            # connection; anything else (a series update, a retry) is written alone, after them, so the order of
            # the Events about one pod is kept.
            creates: list[dict[str, Any]] = []
            for item in items:
                if item is None:
                    self._create_all(creates, worker)
                    return
                with self._lock:
                    if self._closing:
                        self.dropped += 1
                        continue
                try:
                    if isinstance(item, _Retry):
                        self._create_all(creates, worker)
                        self._attempt(item.body, item.tries, worker)
                        continue
                    now = self._clock()
                    body = self._observe(self._body(item, now), now)
                    if body is None:
                        continue
                    if self._use_core or body.get("series") is not None:
                        self._create_all(creates, worker)
                        self._attempt(body, 0, worker)
                    else:
                        creates.append(body)
                except Exception:
                    with self._lock:
                        self.failed += 1
                    log.exception("could not record event %s", getattr(item, "reason", ""))
            self._create_all(creates, worker)

    def _create_all(self, bodies: list[dict[str, Any]], worker: int) -> None:
        """POST these first occurrences pipelined (:func:`api.call_many`); each answer is handled as
        :meth:`_attempt` handles one. Empties ``bodies``."""
        if not bodies:
            return
        batch = list(bodies)
        bodies.clear()
        if len(batch) == 1:
            self._attempt(batch[0], 0, worker)
            return
        try:
            calls: list[api.Call] = [
                (
                    "POST",
                    f"/apis/{EVENTS_GROUP}/v1/namespaces/{b['metadata']['namespace']}/events",
                    b,
                    api.JSON,
                )
                for b in batch
            ]
            answers = api.call_many(self._api_client, calls, decode=False)
            for body, answer in zip(batch, answers, strict=True):
                again = self._write_failed(body, "create", answer) if isinstance(answer, Exception) else False
                if not isinstance(answer, Exception):
                    self._answered()
                self._retry_later(body, 0, worker, again)
        except Exception:
            with self._lock:
                self.failed += len(batch)
            log.exception("could not record %d events", len(batch))

    def _body(self, event: PodEvent, now: dt.datetime) -> dict[str, Any]:
        """Upstream ``makeEvent``: an ``events.k8s.io/v1`` Event named ``<pod>.<unix nanoseconds in hex>``."""
        meta = event.pod.get("metadata") or {}
        ns = str(meta.get("namespace") or "default")
        nanos = (now - _EPOCH) // dt.timedelta(microseconds=1) * 1000
        body: dict[str, Any] = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": f"{meta.get('name') or ''}.{nanos:x}", "namespace": ns},
            "eventTime": micro_time(now),
            "reportingController": event.reporting_controller,
            "reportingInstance": f"{event.reporting_controller}-{self._instance_suffix}",
            "action": event.action,
            "reason": event.reason,
            "regarding": objects.object_reference(event.pod, "Pod"),
            "note": event.note,
            "type": event.type,
        }
        if event.related is not None:
            body["related"] = objects.object_reference(event.related, "Pod")
        return body

    def _observe(self, body: dict[str, Any], now: dt.datetime) -> dict[str, Any] | None:
        """Upstream ``recordToSink``: what to write for this occurrence (at ``now``) -- the Event itself (first),
        the cached Event with its new series (second), or nothing (later: the count grows in the cache)."""
        if self._use_core:
            return body  # the legacy path writes every occurrence
        key = series_key(body)
        with self._lock:
            cached = self._cache.get(key)
            if cached is None:
                self._cache[key] = _Cached(body, now)
                return body  # the cache keeps it as it is: no write changes a body
            cached.count += 1
            first_repeat = cached.last_observed is None
            cached.last_observed = now
            if not first_repeat:
                self.aggregated += 1
                return None
            return cached.to_send()

    def _attempt(self, body: dict[str, Any], tries: int, worker: int) -> None:
        """Upstream ``attemptRecording``: write; when no answer came, try again later, ``max_tries`` in all."""
        self._retry_later(body, tries, worker, self._write(body))

    def _retry_later(self, body: dict[str, Any], tries: int, worker: int, again: bool) -> None:
        """After a write of ``body`` (its try number ``tries``): queue it again later when ``again`` (no answer
        came), until ``max_tries``."""
        if not again:
            return
        tries += 1
        if tries >= self._timings.max_tries:
            with self._lock:
                self.failed += 1
            log.warning(
                "could not record event %s for %s after %d tries; giving up",
                body.get("reason"),
                _about(body),
                tries,
            )
            return
        delay = self._timings.retry_sleep * (1.0 + 0.25 * self._jitter.random())  # wait.Jitter(d, 0.25)
        with self._lock:
            if self._stopping:
                self.dropped += 1
                return
            self._sequence += 1
            heapq.heappush(
                self._retries, (time.monotonic() + delay, self._sequence, worker, _Retry(body, tries))
            )
            self._wake.notify_all()

    def _write(self, body: dict[str, Any]) -> bool:
        """Upstream ``recordEvent``: a series is PATCHed (created when the PATCH finds no Event), anything else
        POSTed. True when no answer came and the write should be tried again; a rejection is logged, counted and
        not retried -- except a series POST answered AlreadyExists (the first occurrence's POST won a race)."""
        if self._use_core:
            return self._write_core(body)
        meta = body["metadata"]
        ns, name = str(meta["namespace"]), str(meta["name"])
        series = body.get("series")
        verb = "patch" if series is not None else "create"
        try:
            if series is not None:
                try:
                    # Upstream's CreateTwoWayMergePatch of the Event without and with its series: just ``series``.
                    api.call(
                        self._api_client,
                        "PATCH",
                        f"/apis/{EVENTS_GROUP}/v1/namespaces/{ns}/events/{name}",
                        body={"series": series},
                        content_type=api.STRATEGIC_MERGE_PATCH,
                    )
                    self._answered()
                    return False
                except api.ApiError as exc:
                    if exc.status != 404 or not exc.body.get("details"):
                        raise
                    verb = "create"  # the Event is gone (or not written yet): create it, series and all
            # Raw JSON (berth.schedule.live.api): the typed method would first validate the body into its pydantic
            # model, which costs as much as the request itself on this hot path.
            api.call(self._api_client, "POST", f"/apis/{EVENTS_GROUP}/v1/namespaces/{ns}/events", body=body)
            self._answered()
            return False
        except (api.ApiError, api.Unreachable) as exc:
            return self._write_failed(body, verb, exc)

    def _write_failed(self, body: dict[str, Any], verb: str, exc: api.ApiError | api.Unreachable) -> bool:
        """A write of ``body`` (``verb``: ``create`` or ``patch``) failed: log or count it, or fall back to core
        Events; True when it should be tried again (no answer, or a series POST that lost a race)."""
        if isinstance(exc, api.Unreachable):
            self._no_answer(body, exc)
            return True
        if exc.status == 404 and not exc.body.get("details"):
            log.info("events.k8s.io/v1 is not served; recording core v1 Events instead")
            self._use_core = True
            return self._write_core(body)
        if (
            exc.status == 409
            and exc.reason == "AlreadyExists"
            and body.get("series") is not None
            and verb == "create"
        ):
            return True
        self._rejected(body, verb, EVENTS_GROUP, exc)
        return False

    def _write_core(self, body: dict[str, Any]) -> bool:
        """The same Event as a core ``v1`` Event (servers without ``events.k8s.io/v1``)."""
        ns = str(body["metadata"]["namespace"])
        series = body.get("series") or {}
        first = _parse_micro(str(body.get("eventTime") or "")) or self._clock()
        last = _parse_micro(str(series.get("lastObservedTime") or "")) or first
        core_body: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": body["metadata"]["name"], "namespace": ns},
            "involvedObject": body["regarding"],
            "reason": body["reason"],
            "message": body["note"],
            "type": body["type"],
            "source": {"component": body["reportingController"]},
            "firstTimestamp": rfc3339(first),
            "lastTimestamp": rfc3339(last),
            "count": int(series.get("count") or 1),
            "eventTime": body["eventTime"],
            "action": body["action"],
            "reportingComponent": body["reportingController"],
            "reportingInstance": body["reportingInstance"],
        }
        if body.get("related") is not None:
            core_body["related"] = body["related"]
        try:
            api.call(self._api_client, "POST", f"/api/v1/namespaces/{ns}/events", body=core_body)
        except api.ApiError as exc:
            self._rejected(body, "create", "", exc)
            return False
        except api.Unreachable as exc:
            self._no_answer(body, exc)
            return True
        self._answered()
        return False

    def _answered(self) -> None:
        with self._lock:
            self.posted += 1
            again = self._unreachable
            self._unreachable = False
        if again:
            log.info("recording events again")

    def _rejected(self, body: Mapping[str, Any], verb: str, group: str, exc: api.ApiError) -> None:
        with self._lock:
            self.failed += 1
        ns = str(body["metadata"]["namespace"])
        if exc.status == 403:
            self._permissions.forbidden(verb, "events", group, ns, exc)
        elif exc.status == 409:
            log.debug("event %s for %s exists already: %s", body.get("reason"), _about(body), exc)
        else:
            log.warning("could not record event %s for %s: %s", body.get("reason"), _about(body), exc)

    def _no_answer(self, body: Mapping[str, Any], exc: api.Unreachable) -> None:
        with self._lock:
            first = not self._unreachable
            self._unreachable = True
        if first:
            log.warning(
                "could not record event %s: API server unreachable: %s (retried; further failures until it "
                "answers again are not logged)",
                body.get("reason"),
                exc,
            )

    # --- series upkeep ----------------------------------------------------------------------------------------

    def _series_upkeep(self) -> None:
        """Upstream's two ``wait.Until`` loops (each runs at once, then ``period`` after it finished) and the
        retry timers, on one thread."""
        next_finish = next_refresh = time.monotonic()
        while True:
            with self._lock:
                while True:
                    if self._stopping:
                        return
                    now = time.monotonic()
                    due_retry = self._retries[0][0] if self._retries else math.inf
                    wake = min(next_finish, next_refresh, due_retry)
                    if wake <= now:
                        break
                    self._wake.wait(wake - now)
                due: list[tuple[int, _Retry]] = []
                while self._retries and self._retries[0][0] <= now:
                    _, _, worker, retry = heapq.heappop(self._retries)
                    due.append((worker, retry))
            for worker, retry in due:
                try:
                    self._queues[worker].put_nowait(retry)
                except queue.Full:
                    with self._lock:
                        self.dropped += 1
            try:
                if now >= next_refresh:
                    self.refresh_series()
                    next_refresh = time.monotonic() + self._timings.refresh
                if now >= next_finish:
                    self.finish_series()
                    next_finish = time.monotonic() + self._timings.finish
            except Exception:
                log.exception("event series upkeep failed")
                next_finish = max(next_finish, time.monotonic() + self._timings.finish)
                next_refresh = max(next_refresh, time.monotonic() + self._timings.refresh)

    def finish_series(self) -> None:
        """Upstream ``finishSeries``: a series not observed for the window gets its final count written and is
        forgotten; a single Event older than the window is forgotten. Either way the next occurrence is a new
        Event. A final write that gets no answer keeps its series for the next round, as upstream."""
        limit = self._clock() - dt.timedelta(seconds=self._timings.finish)
        ended: list[tuple[_Key, _Cached]] = []
        with self._lock:
            for key, cached in list(self._cache.items()):
                if cached.last_observed is not None:
                    if cached.last_observed < limit:
                        ended.append((key, cached))
                        del self._cache[key]
                elif cached.event_time < limit:
                    del self._cache[key]
        # Written without the lock (upstream holds it): an occurrence meanwhile starts a new Event, as it would
        # after upstream's delete.
        for key, cached in ended:
            if self._write(cached.to_send()):
                with self._lock:
                    self._cache.setdefault(key, cached)

    def refresh_series(self) -> None:
        """Upstream ``refreshExistingEventSeries``: write every open series' current count."""
        with self._lock:
            bodies = [c.to_send() for c in self._cache.values() if c.last_observed is not None]
        for body in bodies:
            self._write(body)


def _about(body: Mapping[str, Any]) -> str:
    ref = body.get("regarding") or {}
    return f"{str(ref.get('kind') or '').lower()} {ref.get('namespace')}/{ref.get('name')}"


def _parse_micro(text: str) -> dt.datetime | None:
    try:
        return dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=dt.UTC)
    except ValueError:
        return None


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
    """Patches ``pods/status``: ``PodScheduled=False`` with the reason and message, and ``nominatedNodeName``.

    Whether a write is needed is judged against the pod as the informer has it -- unless this writer's own last
    write to that pod is newer than that copy (its watch event not yet delivered: on a loaded machine a retry can
    come first). The writer then judges against the status the server answered, so a retry with the same verdict
    does not write the same condition twice. Those answers are kept only until the informer catches up (or the pod
    is bound or deleted: :meth:`forget`)."""

    def __init__(self, api_client: Any, permissions: api.PermissionLog) -> None:
        self._api_client = api_client
        self._permissions = permissions
        self.patches = 0
        # ns/name -> (uid, resourceVersion, status) the server answered to this writer's last patch of the pod
        self._written: dict[str, tuple[str, int, Mapping[str, Any]]] = {}
        self._lock = threading.Lock()

    def forget(self, key: str) -> None:
        """The pod ``key`` (``ns/name``) was bound or deleted: its last written status is of no more use."""
        if self._written:
            with self._lock:
                self._written.pop(key, None)

    def _latest(self, pod: Obj) -> Obj:
        """``pod``, or -- when this writer's last answered patch of it is newer than this copy -- that answer."""
        if not self._written:
            return pod
        meta = pod.get("metadata") or {}
        key = f"{meta.get('namespace') or 'default'}/{meta.get('name') or ''}"
        with self._lock:
            written = self._written.get(key)
            if written is None:
                return pod
            uid, rv, status = written
            seen = _int_rv(meta)
            if uid != str(meta.get("uid") or "") or seen is None or seen >= rv:
                del self._written[key]  # the informer caught up (or it is another pod by that name)
                return pod
        return {**pod, "status": status}

    def _remember(self, key: str, answer: Any) -> None:
        if not isinstance(answer, Mapping):
            return
        meta = answer.get("metadata") or {}
        rv = _int_rv(meta)
        if rv is None:  # an opaque resourceVersion cannot be ordered: trust the informer, as before
            return
        with self._lock:
            self._written[key] = (str(meta.get("uid") or ""), rv, answer.get("status") or {})

    def patch(
        self, pod: Obj, reason: str, message: str, nominated_node: str = "", clear_nomination: bool = False
    ) -> bool:
        """Write the condition if it differs from the pod's; True when a patch was sent and accepted.
        ``nominated_node`` sets ``status.nominatedNodeName``; ``clear_nomination`` removes it (upstream, when
        preemption finds no room any more)."""
        pod = self._latest(pod)
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
        # Strategic merge: ``conditions`` merge by type, so other conditions of the pod are kept.
        return self._patch_status(ns, name, body, "update the PodScheduled condition of")

    def clear_nomination(self, pod: Obj) -> bool:
        """Remove ``status.nominatedNodeName`` of a pending pod (upstream ``clearNominatedNodeName``: a preemption
        chose the node this lower-priority pod was nominated to). True when a patch was sent and accepted."""
        pod = self._latest(pod)
        meta = pod.get("metadata") or {}
        ns, name = str(meta.get("namespace") or "default"), str(meta.get("name") or "")
        if not (pod.get("status") or {}).get("nominatedNodeName"):
            return False
        return self._patch_status(
            ns, name, {"status": {"nominatedNodeName": None}}, "clear the nominated node of"
        )

    def _patch_status(self, ns: str, name: str, body: Obj, what: str) -> bool:
        """One strategic-merge PATCH of ``pods/status``: a 403 is recorded as a missing permission, a gone pod is
        no error, anything else is logged; True when the server accepted it."""
        try:
            answer = api.call(
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
                log.warning("could not %s %s/%s: %s", what, ns, name, exc)
            return False
        except api.Unreachable as exc:
            # The pod goes back to the queue and is written again on its next failure; the outage itself is
            # logged once, by the connection (berth.schedule.live.connection), not once per pod.
            log.debug("could not %s %s/%s: %s", what, ns, name, exc)
            return False
        self._remember(f"{ns}/{name}", answer)
        self.patches += 1
        return True


def _int_rv(meta: Mapping[str, Any]) -> int | None:
    """A resourceVersion as a number (the embedded cluster's and etcd's are), or None when it is not one."""
    try:
        return int(str(meta.get("resourceVersion") or ""))
    except ValueError:
        return None
