"""The scheduler's one queue of pods waiting for a node (upstream ``backend/queue/scheduling_queue.go``).

Why one queue: every profile shares it, ordered by the single queueSort plugin, so profiles interleave fairly by
priority and age. Three sub-queues, each pod in at most one of them (or "in flight" while a cycle runs)::

    add ──PreEnqueue ok──▶ activeQ (heap, queueSort order) ──pop──▶ in flight ──┬─ bound: done
     │                        ▲   ▲                                             │
     └─PreEnqueue rejects─▶ unschedulable (gated) ◀── rejected by plugins ──────┤
                              │   ▲                                             │
                 cluster event│   │ event during the cycle, or an error         │
                  / 5 min     ▼   │                                             │
                            backoffQ (heap by backoff expiry) ◀─────────────────┘

- Backoff: ``initial * 2**(attempts-1)`` seconds capped at ``max`` (1, 2, 4, 8, 10 s with the defaults); 0 for a
  pod never attempted. When activeQ is empty, :meth:`SchedulingQueue.pop` may take a pod rejected by plugins from
  backoffQ early (upstream ``SchedulerPopFromBackoffQ``, on since 1.33); pods that failed with an error always wait.
- Unschedulable pods go back on a :class:`~berth.schedule.framework.interface.ClusterEvent` that one of the
  plugins which rejected them registered (``events_to_register``) -- when the plugin gave a queueing hint, only if
  the hint says QUEUE for that change -- and every 30 s those waiting over 5 min.
- Events that arrive while a pod is in flight are kept and replayed through the same rules when its cycle fails
  (upstream ``inFlightEvents``): only a relevant one sends it to backoffQ instead of unschedulable.
- An update of a pending pod is an ``UnscheduledPod`` event for that pod alone (upstream
  ``PodSchedulingPropertiesChange``); a change the scheduler cannot care about (status, resourceVersion,
  managedFields, finalizers) moves nothing, so the scheduler's own PodScheduled condition never retries a pod.
- Time comes from an injectable clock: the simulation passes a :class:`VirtualClock`, so backoff costs no
  wall-clock time and runs are reproducible.

Thread-safe (one lock); :meth:`SchedulingQueue.pop_wait` blocks for the live scheduler.
"""

from __future__ import annotations

import heapq
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from berth.schedule.framework.interface import (
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
    QueueingHintFn,
    Status,
)
from berth.schedule.framework.types import PodInfo, QueuedPodInfo

FLUSH_UNSCHEDULABLE_INTERVAL_SECONDS = 30.0
MAX_IN_UNSCHEDULABLE_SECONDS = 300.0
FLUSH_BACKOFF_INTERVAL_SECONDS = 1.0

Less = Callable[[QueuedPodInfo, QueuedPodInfo], bool]
SortKey = Callable[[QueuedPodInfo], tuple[Any, ...]]
PreEnqueue = Callable[[PodInfo], Status]

# Events the queue itself raises (upstream framework/events.go).
UNSCHEDULABLE_TIMEOUT = ClusterEvent("*", "UnschedulableTimeout")
FORCE_ACTIVATE = ClusterEvent("*", "ForceActivate")

# The resource of events about pending pods (upstream's unexported ``unschedulablePod``). A plugin registering
# ``Pod`` hears both these and assigned pods' (``Pod``) events, as upstream's ``EventResource.match``.
UNSCHEDULED_POD = "UnscheduledPod"
UNSCHEDULED_POD_UPDATE = ClusterEvent(UNSCHEDULED_POD, "Update")

_WILDCARDS = ("*", "All")

_HintTable = dict[tuple[str, str], tuple[QueueingHintFn | None, ...]]


class Where(StrEnum):
    """Which sub-queue a pending pod sits in."""

    ACTIVE = "activeQ"
    BACKOFF = "backoffQ"
    UNSCHEDULABLE = "unschedulable"
    GATED = "gated"
    IN_FLIGHT = "inFlight"


class VirtualClock:
    """A clock that only moves when told: simulation time."""

    def __init__(self, start: float = 0.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += max(0.0, seconds)

    def advance_to(self, t: float) -> None:
        self.now = max(self.now, t)


def event_matches(registered: ClusterEvent, event: ClusterEvent) -> bool:
    """Does an event a plugin registered cover ``event``?

    Resources match when equal or either is ``*``; actions when equal, either is ``*``/``All``, or the registered
    action is the umbrella ``Update`` and the event is a specific update (``UpdateNodeLabel`` ...).
    """
    if (
        registered.resource != event.resource
        and "*" not in (registered.resource, event.resource)
        and not (registered.resource == "Pod" and event.resource == UNSCHEDULED_POD)
    ):
        return False
    ra, ea = registered.action, event.action
    if ra == ea or ra in _WILDCARDS or ea in _WILDCARDS:
        return True
    return (ra == "Update" and ea.startswith("Update")) or (ea == "Update" and ra.startswith("Update"))


@dataclass(frozen=True, slots=True)
class PendingPod:
    """A pod still waiting, where, and why (for reports)."""

    info: QueuedPodInfo
    where: Where


class _ActiveItem:
    """activeQ heap entry: queueSort order, then insertion sequence, so equal pods pop FIFO."""

    __slots__ = ("alive", "less", "qp")

    def __init__(self, qp: QueuedPodInfo, less: Less) -> None:
        self.qp = qp
        self.less = less
        self.alive = True

    def __lt__(self, other: _ActiveItem) -> bool:
        a, b = self.qp, other.qp
        if self.less(a, b):
            return True
        if self.less(b, a):
            return False
        return a.sequence < b.sequence


PluginKey = tuple[str, str]  # (profile, plugin)


class _UnschedulablePods(dict[str, QueuedPodInfo]):
    """The unschedulable (and gated) pods by key, also indexed by the plugins that rejected them.

    Why: every cluster event is weighed against these pods, and only the pods rejected by a plugin that registered
    the event can care. With 10,000 gated pods (upstream's SchedulingWhileGated) walking all of them on every pod
    add and delete cost milliseconds per event; the index hands :meth:`SchedulingQueue.move_all_to_active_or_backoff`
    just the candidates -- pods of the plugins whose events match, plus pods no plugin claims (any event may help
    those) -- in the order they came in, so moves happen in the same order as a walk over all of them.
    """

    __slots__ = ("_any", "_by_plugin", "_filed", "_order", "_seq")

    def __init__(self) -> None:
        super().__init__()
        self._by_plugin: dict[PluginKey, set[str]] = {}
        self._any: set[str] = set()
        self._filed: dict[str, tuple[PluginKey, ...]] = {}  # key -> where it is indexed (empty: in _any)
        self._order: dict[str, int] = {}
        self._seq = 0

    def __setitem__(self, key: str, qp: QueuedPodInfo) -> None:
        if key in self:
            self._unfile(key)
        super().__setitem__(key, qp)
        profile = qp.pod_info.scheduler_name
        plugins = tuple((profile, p) for p in qp.unschedulable_plugins | qp.pending_plugins)
        for pk in plugins:
            self._by_plugin.setdefault(pk, set()).add(key)
        if not plugins:
            self._any.add(key)
        self._filed[key] = plugins
        self._seq += 1
        self._order[key] = self._seq

    def __delitem__(self, key: str) -> None:
        super().__delitem__(key)
        self._unfile(key)

    def pop(self, key: str, *default: Any) -> Any:
        if key not in self:
            if default:
                return default[0]
            raise KeyError(key)
        qp = super().pop(key)
        self._unfile(key)
        return qp

    def _unfile(self, key: str) -> None:
        plugins = self._filed.pop(key, ())
        self._order.pop(key, None)
        for pk in plugins:
            keys = self._by_plugin.get(pk)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del self._by_plugin[pk]
        if not plugins:
            self._any.discard(key)

    def candidates(self, plugins: Iterable[PluginKey]) -> list[str]:
        """Keys of the pods rejected by one of ``plugins`` or by none, oldest first."""
        found = set(self._any)
        for pk in plugins:
            keys = self._by_plugin.get(pk)
            if keys:
                found |= keys
        order = self._order
        return sorted(found, key=order.__getitem__)


class SchedulingQueue:
    """activeQ + backoffQ + unschedulable pods, with PreEnqueue gating and event-driven requeueing.

    Args:
        less: the queueSort plugin's ``less`` (the first profile's; all profiles must agree).
        clock: seconds; wall clock (``time.monotonic``) by default, a :class:`VirtualClock` in simulation.
        initial_backoff_seconds / max_backoff_seconds: ``podInitialBackoffSeconds`` / ``podMaxBackoffSeconds``.
        pre_enqueue: runs the PreEnqueue plugins of the pod's profile; a non-success parks the pod as gated.
        plugin_events: profile name -> plugin name -> events that may make pods it rejected schedulable (plain
            events, or events with a queueing hint that decides per pod and per change).
        pop_from_backoff: let :meth:`pop` take a plugin-rejected pod from backoffQ when activeQ is empty.
        sort_key: optional; a key with the same order as ``less`` (the queueSort plugin's ``sort_key``). With it
            activeQ's heap compares plain tuples (in C) instead of calling ``less`` twice per comparison, which
            was a tenth of a scheduling-basic cycle with 10,000 pods queued.
    """

    def __init__(
        self,
        less: Less,
        *,
        clock: Callable[[], float] | None = None,
        initial_backoff_seconds: float = 1.0,
        max_backoff_seconds: float = 10.0,
        pre_enqueue: PreEnqueue | None = None,
        plugin_events: Mapping[str, Mapping[str, Sequence[ClusterEvent | ClusterEventWithHint]]]
        | None = None,
        pop_from_backoff: bool = True,
        sort_key: SortKey | None = None,
    ) -> None:
        self._less = less
        self._sort_key = sort_key
        self._clock = clock or time.monotonic
        self._initial = float(initial_backoff_seconds)
        self._max = float(max_backoff_seconds)
        self._pre_enqueue = pre_enqueue
        self._plugin_events: dict[str, dict[str, tuple[ClusterEventWithHint, ...]]] = {
            profile: {
                plugin: tuple(
                    e if isinstance(e, ClusterEventWithHint) else ClusterEventWithHint(e) for e in events
                )
                for plugin, events in by_plugin.items()
            }
            for profile, by_plugin in (plugin_events or {}).items()
        }
        self._pop_from_backoff = pop_from_backoff
        self._cond = threading.Condition(threading.RLock())
        # (sort key + sequence, item) with a sort key; (item,) without one (the item's __lt__ calls ``less``).
        self._active_heap: list[tuple[Any, ...]] = []
        self._active: dict[str, _ActiveItem] = {}
        self._backoff_heap: list[tuple[float, int, str]] = []
        self._backoff: dict[str, tuple[QueuedPodInfo, int]] = {}  # key -> (pod, heap token)
        self._unschedulable = _UnschedulablePods()
        self._in_flight: dict[str, QueuedPodInfo] = {}
        self._seq = 0
        self.scheduling_cycle = 0
        # Events while any pod is in flight, oldest first: (number, event, old, new, the one pod it must not
        # reach, the one pod it is about -- "" for none).
        self._in_flight_events: deque[tuple[int, ClusterEvent, Any, Any, str, str]] = deque()
        self._hint_cache: dict[ClusterEvent, _HintTable] = {}
        self._registered_resources = {
            e.event.resource
            for by_plugin in self._plugin_events.values()
            for es in by_plugin.values()
            for e in es
        }
        self._event_seq = 0
        self._last_leftover_flush = self._clock()
        self._closed = False

    # --- adding -----------------------------------------------------------------------------------------------

    def add(self, pod: PodInfo) -> None:
        """A new pending pod (informer Add): PreEnqueue, then activeQ or gated."""
        with self._cond:
            if self._known(pod.key):
                self._update_locked(pod)
                return
            self._seq += 1
            qp = QueuedPodInfo(pod_info=pod, timestamp=self._clock(), sequence=self._seq)
            self._to_active_or_gated(qp)

    def _to_active_or_gated(self, qp: QueuedPodInfo) -> bool:
        if self._gated_by_pre_enqueue(qp):
            return False
        item = _ActiveItem(qp, self._less)
        self._active[qp.key] = item
        heapq.heappush(self._active_heap, self._entry(item))
        self._cond.notify()
        return True

    def _entry(self, item: _ActiveItem) -> tuple[Any, ...]:
        """activeQ heap entry: the sort key (fixed when pushed) then the insertion sequence, so equal pods pop
        FIFO as ``_ActiveItem`` orders them."""
        if self._sort_key is None:
            return (item,)
        qp = item.qp
        return (self._sort_key(qp), qp.sequence, item)

    def _gated_by_pre_enqueue(self, qp: QueuedPodInfo) -> bool:
        """Run PreEnqueue; a rejection parks the pod as gated (its gating plugin is then its only rejector, whose
        events re-check it). False when it may go on."""
        if self._pre_enqueue is not None:
            status = self._pre_enqueue(qp.pod_info)
            if not status.is_success:
                qp.gated = True
                qp.unschedulable_plugins = {status.plugin} if status.plugin else set()
                self._unschedulable[qp.key] = qp
                return True
        qp.gated = False
        return False

    def _to_backoff(self, qp: QueuedPodInfo) -> bool:
        """Into backoffQ, after PreEnqueue (``SchedulerPopFromBackoffQ``, KEP-5142: a pod may be popped from
        backoffQ early, so it must not be gated there -- e.g. a preemptor whose evictions are still going out).
        False when PreEnqueue gated it instead."""
        if self._gated_by_pre_enqueue(qp):
            return False
        self._seq += 1
        expiry = qp.timestamp + self.backoff_duration(qp.attempts)
        self._backoff[qp.key] = (qp, self._seq)
        heapq.heappush(self._backoff_heap, (expiry, self._seq, qp.key))
        self._cond.notify()
        return True

    def _known(self, key: str) -> bool:
        return key in self._active or key in self._backoff or key in self._unschedulable

    # --- popping ----------------------------------------------------------------------------------------------

    def pop(self) -> QueuedPodInfo | None:
        """The next pod to schedule, or None when nothing is ready (never blocks)."""
        with self._cond:
            self._flush_backoff_completed_locked()
            qp = self._pop_active()
            if qp is None and self._pop_from_backoff:
                qp = self._pop_backoff_early()
            if qp is None:
                return None
            qp.attempts += 1
            if qp.initial_attempt_timestamp is None:
                qp.initial_attempt_timestamp = self._clock()
            self.scheduling_cycle += 1
            qp.unschedulable_plugins = set()
            qp.pending_plugins = set()
            qp.in_flight_since = self._event_seq
            self._in_flight.pop(qp.key, None)  # re-inserted last: the dict stays ordered by in_flight_since
            self._in_flight[qp.key] = qp
            return qp

    def pop_wait(self, timeout: float | None = None) -> QueuedPodInfo | None:
        """Like :meth:`pop` but waits (up to ``timeout`` seconds) for a pod; None on timeout or :meth:`close`."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while not self._closed:
                qp = self.pop()
                if qp is not None:
                    return qp
                wait = FLUSH_BACKOFF_INTERVAL_SECONDS
                if deadline is not None:
                    wait = min(wait, deadline - time.monotonic())
                    if wait <= 0:
                        return None
                self._cond.wait(wait)
                self.tick()
            return None

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def _pop_active(self) -> QueuedPodInfo | None:
        heap = self._active_heap
        while heap:
            item: _ActiveItem = heapq.heappop(heap)[-1]
            if item.alive:
                del self._active[item.qp.key]
                return item.qp
        return None

    def _pop_backoff_early(self) -> QueuedPodInfo | None:
        heap = self._backoff_heap
        skipped: list[tuple[float, int, str]] = []
        found: QueuedPodInfo | None = None
        while heap:
            entry = heapq.heappop(heap)
            live = self._backoff.get(entry[2])
            if live is None or live[1] != entry[1]:
                continue
            qp = live[0]
            if not (qp.unschedulable_plugins or qp.pending_plugins):
                # Failed with an error (no plugin rejected it): it always serves its backoff.
                skipped.append(entry)
                continue
            del self._backoff[entry[2]]
            found = qp
            break
        for entry in skipped:
            heapq.heappush(heap, entry)
        return found

    def done(self, key: str) -> None:
        """The cycle for ``key`` ended (bound, or handed back through :meth:`add_unschedulable_if_not_present`)."""
        with self._cond:
            self._land(key)

    def _land(self, key: str) -> QueuedPodInfo | None:
        """Take ``key`` out of flight and forget the events no pod still in flight needs."""
        qp = self._in_flight.pop(key, None)
        events = self._in_flight_events
        if not self._in_flight:
            events.clear()
        elif qp is not None:
            oldest = next(iter(self._in_flight.values())).in_flight_since
            while events and events[0][0] <= oldest:
                events.popleft()
        return qp

    # --- failures ---------------------------------------------------------------------------------------------

    def add_unschedulable_if_not_present(self, qp: QueuedPodInfo) -> Where:
        """Put a pod whose cycle failed back (upstream ``AddUnschedulableIfNotPresent``): backoffQ after an error
        (no plugin rejected it); else unschedulable, unless an event that arrived while it was in flight is one
        its rejecting plugins would requeue it for (then backoffQ, or activeQ for a pending plugin)."""
        with self._cond:
            flown = self._in_flight.get(qp.key) is qp
            events = self._events_since(qp) if flown else []
            self._land(qp.key)
            if self._known(qp.key):
                return self.where(qp.key) or Where.ACTIVE
            qp.timestamp = self._clock()
            if not (qp.unschedulable_plugins or qp.pending_plugins):
                return Where.BACKOFF if self._to_backoff(qp) else Where.GATED
            if any(self._worth_requeuing(qp, event, old, new) for event, old, new in events):
                return self._requeue(qp)
            self._unschedulable[qp.key] = qp
            return Where.UNSCHEDULABLE

    def _events_since(self, qp: QueuedPodInfo) -> list[tuple[ClusterEvent, Any, Any]]:
        return [
            (event, old, new)
            for seq, event, old, new, excluded, only in self._in_flight_events
            if seq > qp.in_flight_since and excluded != qp.key and only in ("", qp.key)
        ]

    def backoff_duration(self, attempts: int) -> float:
        if attempts <= 0:
            return 0.0
        duration = self._initial
        for _ in range(1, attempts):
            if duration > self._max - duration:
                return self._max
            duration += duration
        return min(duration, self._max)

    def _backoff_expiry(self, qp: QueuedPodInfo) -> float:
        return qp.timestamp + self.backoff_duration(qp.attempts)

    def _is_backing_off(self, qp: QueuedPodInfo) -> bool:
        return self._backoff_expiry(qp) > self._clock()

    # --- cluster events ---------------------------------------------------------------------------------------

    def move_all_to_active_or_backoff(
        self, event: ClusterEvent, exclude: str = "", old: Any = None, new: Any = None
    ) -> int:
        """An event happened: move unschedulable pods one of whose rejecting plugins registered it -- and, when
        the plugin gave a queueing hint, whose hint says QUEUE for the change ``old`` -> ``new`` -- except the pod
        ``exclude`` names. Returns how many moved. Also remembers the event for pods now in flight (they go to
        backoffQ if they fail)."""
        with self._cond:
            if self._in_flight:
                self._event_seq += 1
                self._in_flight_events.append((self._event_seq, event, old, new, exclude, ""))
            moved = 0
            wildcard = event in (UNSCHEDULABLE_TIMEOUT, FORCE_ACTIVATE)
            hints = self._hints_for(event)
            pending = self._unschedulable
            keys = list(pending) if wildcard else pending.candidates(hints)
            for key in keys:
                qp = pending[key]
                if key == exclude:
                    continue
                if qp.gated and event is not FORCE_ACTIVATE:
                    # Gated pods wait for their own update (or the gate plugin's events).
                    if not self._interested(qp, hints, old, new):
                        continue
                    del self._unschedulable[key]
                    if not self._to_active_or_gated(qp):
                        continue
                    moved += 1
                    continue
                if not (wildcard or self._interested(qp, hints, old, new)):
                    continue
                del self._unschedulable[key]
                self._requeue(qp)
                moved += 1
            return moved

    def _worth_requeuing(self, qp: QueuedPodInfo, event: ClusterEvent, old: Any, new: Any) -> bool:
        """Upstream ``isPodWorthRequeuing``: the queue's own wildcard events always are; others by the hints."""
        if event in (UNSCHEDULABLE_TIMEOUT, FORCE_ACTIVATE):
            return True
        return self._interested(qp, self._hints_for(event), old, new)

    def _interested(self, qp: QueuedPodInfo, hints: _HintTable, old: Any = None, new: Any = None) -> bool:
        """Does a plugin that rejected ``qp`` care about the change (``hints``: :meth:`_hints_for` the event)?"""
        rejectors = qp.unschedulable_plugins | qp.pending_plugins
        if not rejectors:
            return True
        profile = qp.pod_info.scheduler_name
        for plugin in rejectors:
            for hint in hints.get((profile, plugin), ()):
                if hint is None:
                    return True
                try:
                    if hint(qp.pod_info, old, new) == QueueingHint.QUEUE:
                        return True
                except Exception:
                    return True  # upstream: a hint that fails counts as Queue
        return False

    def _hints_for(self, event: ClusterEvent) -> _HintTable:
        """(profile, plugin) -> the hints (None: a plain registration) of that plugin's events matching ``event``;
        worked out once per event kind, since an event is checked against every unschedulable pod."""
        table = self._hint_cache.get(event)
        if table is None:
            table = {}
            for profile, by_plugin in self._plugin_events.items():
                for plugin, registered in by_plugin.items():
                    matching = tuple(r.hint for r in registered if event_matches(r.event, event))
                    if matching:
                        table[(profile, plugin)] = matching
            self._hint_cache[event] = table
        return table

    def _requeue(self, qp: QueuedPodInfo) -> Where:
        if self._is_backing_off(qp) and not (qp.pending_plugins and not qp.unschedulable_plugins):
            return Where.BACKOFF if self._to_backoff(qp) else Where.GATED
        return Where.ACTIVE if self._to_active_or_gated(qp) else Where.GATED

    # --- pod updates ------------------------------------------------------------------------------------------

    def update(self, pod: PodInfo, events: Sequence[ClusterEvent] | None = None, old: Any = None) -> None:
        """The pending pod changed (informer Update); ``events`` are what the change amounts to (``UnscheduledPod``
        events, see :func:`berth.schedule.scheduler.pod_update_events`; none for a status-only change; None when
        not known: a generic update). An unschedulable pod is retried when one of them is worth it to the plugins
        that rejected it; a gated one is re-checked by PreEnqueue; a pod in flight keeps them for when its cycle
        ends."""
        with self._cond:
            self._update_locked(pod, (UNSCHEDULED_POD_UPDATE,) if events is None else events, old)

    def _update_locked(self, pod: PodInfo, events: Sequence[ClusterEvent] = (), old: Any = None) -> None:
        key = pod.key
        item = self._active.get(key)
        if item is not None:
            item.alive = False
            item.qp.pod_info = pod
            fresh = _ActiveItem(item.qp, self._less)
            self._active[key] = fresh
            heapq.heappush(self._active_heap, self._entry(fresh))
            return
        live = self._backoff.get(key)
        if live is not None:
            live[0].pod_info = pod
            return
        qp = self._unschedulable.get(key)
        if qp is not None:
            qp.pod_info = pod
            if qp.gated:
                if events:
                    del self._unschedulable[key]
                    self._to_active_or_gated(qp)
            elif any(self._worth_requeuing(qp, e, old, pod.pod) for e in events):
                del self._unschedulable[key]
                self._requeue(qp)
            return
        flying = self._in_flight.get(key)
        if flying is not None:
            flying.pod_info = pod
            for event in events:
                self._event_seq += 1
                self._in_flight_events.append((self._event_seq, event, old, pod.pod, "", key))
            return
        self._seq += 1
        self._to_active_or_gated(QueuedPodInfo(pod_info=pod, timestamp=self._clock(), sequence=self._seq))

    def activate(self, keys: Sequence[str]) -> int:
        """Upstream ``Activate``: move these pods from unschedulable (gated ones through PreEnqueue again) or
        backoffQ straight to activeQ. Pods not waiting there are left alone. Returns how many moved."""
        with self._cond:
            moved = 0
            for key in keys:
                qp = self._unschedulable.pop(key, None)
                if qp is None:
                    live = self._backoff.pop(key, None)  # its heap entry goes stale (no longer mapped)
                    qp = live[0] if live is not None else None
                if qp is not None and self._to_active_or_gated(qp):
                    moved += 1
            return moved

    def hears(self, resource: str) -> bool:
        """Did any plugin register an event of exactly ``resource`` (e.g. ``UnscheduledPod``)? Lets the scheduler
        skip raising events no one listens to."""
        return resource in self._registered_resources

    def delete(self, key: str) -> bool:
        """The pod was deleted or bound by someone else: drop it from every sub-queue."""
        with self._cond:
            found = False
            item = self._active.pop(key, None)
            if item is not None:
                item.alive = False
                found = True
            if self._backoff.pop(key, None) is not None:
                found = True
            if self._unschedulable.pop(key, None) is not None:
                found = True
            if self._in_flight.pop(key, None) is not None:
                found = True
            return found

    # --- time -------------------------------------------------------------------------------------------------

    def tick(self) -> None:
        """Periodic work: backoffQ -> activeQ for expired backoffs; every 30 s, pods unschedulable > 5 min."""
        with self._cond:
            self._flush_backoff_completed_locked()
            now = self._clock()
            if now - self._last_leftover_flush >= FLUSH_UNSCHEDULABLE_INTERVAL_SECONDS:
                self._last_leftover_flush = now
                self._flush_unschedulable_leftover_locked(now)

    def _flush_backoff_completed_locked(self) -> None:
        heap = self._backoff_heap
        now = self._clock()
        while heap and heap[0][0] <= now:
            _, token, key = heapq.heappop(heap)
            live = self._backoff.get(key)
            if live is None or live[1] != token:
                continue
            del self._backoff[key]
            self._to_active_or_gated(live[0])

    def _flush_unschedulable_leftover_locked(self, now: float) -> None:
        for key, qp in list(self._unschedulable.items()):
            if not qp.gated and now - qp.timestamp > MAX_IN_UNSCHEDULABLE_SECONDS:
                del self._unschedulable[key]
                self._requeue(qp)

    def next_backoff_expiry(self) -> float | None:
        """When the earliest pod in backoffQ becomes ready (None if backoffQ is empty)."""
        with self._cond:
            heap = self._backoff_heap
            while heap:
                expiry, token, key = heap[0]
                live = self._backoff.get(key)
                if live is not None and live[1] == token:
                    return expiry
                heapq.heappop(heap)
            return None

    # --- views ------------------------------------------------------------------------------------------------

    def where(self, key: str) -> Where | None:
        with self._cond:
            if key in self._active:
                return Where.ACTIVE
            if key in self._backoff:
                return Where.BACKOFF
            qp = self._unschedulable.get(key)
            if qp is not None:
                return Where.GATED if qp.gated else Where.UNSCHEDULABLE
            if key in self._in_flight:
                return Where.IN_FLIGHT
            return None

    def pending(self) -> list[PendingPod]:
        """Every pod the queue holds, with its sub-queue."""
        with self._cond:
            out = [PendingPod(item.qp, Where.ACTIVE) for item in self._active.values()]
            out += [PendingPod(qp, Where.BACKOFF) for qp, _ in self._backoff.values()]
            out += [
                PendingPod(qp, Where.GATED if qp.gated else Where.UNSCHEDULABLE)
                for qp in self._unschedulable.values()
            ]
            out += [PendingPod(qp, Where.IN_FLIGHT) for qp in self._in_flight.values()]
            return out

    def counts(self) -> dict[Where, int]:
        with self._cond:
            gated = sum(1 for qp in self._unschedulable.values() if qp.gated)
            return {
                Where.ACTIVE: len(self._active),
                Where.BACKOFF: len(self._backoff),
                Where.UNSCHEDULABLE: len(self._unschedulable) - gated,
                Where.GATED: gated,
                Where.IN_FLIGHT: len(self._in_flight),
            }

    def has_active(self) -> bool:
        with self._cond:
            return bool(self._active)

    def __len__(self) -> int:
        with self._cond:
            return len(self._active) + len(self._backoff) + len(self._unschedulable) + len(self._in_flight)
