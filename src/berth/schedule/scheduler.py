"""The Scheduler: one cache, one queue, one framework per profile, and the cycle that places one pod.

Why: this is the object every mode shares -- ``berth schedule simulate``, ``berth bench schedule``, the live
``berth schedule run`` and the embedded cluster's default-scheduler. Only two things differ between them: who calls
the event methods (simulation files vs informers) and the :class:`Binder` (record vs ``POST pods/binding``).

One pod's path (upstream ``schedule_one.go``), read top-down in :meth:`Scheduler.schedule_one`:

1. pop from the queue; route by ``spec.schedulerName`` to that profile's framework (a name with no profile was
   never queued: :meth:`Scheduler.add_pod` reports it as *ignored*); skip pods being deleted or already assumed;
2. refresh the snapshot (only changed nodes are re-cloned); no nodes -> ``no nodes available to schedule pods``;
3. PreFilter (may reject for all nodes, or narrow the node list); a nominated node is tried first;
4. Filter from the shared rotating ``next_start_node_index`` until ``num_feasible_nodes_to_find`` nodes pass;
   none -> FitError ``0/N nodes are available: <histogram>.`` and PostFilter; exactly one -> chosen unscored;
5. PreScore, Score (+normalize, x weight); the highest total wins, ties broken uniformly at random with a seeded
   ``random.Random`` (the distribution of kube-scheduler 1.34's reservoir-sampling selectHost);
6. assume in the cache, Reserve, Permit, then the binding cycle: PreBind, Bind, FinishBinding, PostBind. A
   failure after assume un-reserves (reverse order), forgets the pod and requeues it. A pod a Permit plugin
   asks to WAIT stays assumed in ``waiting_pods``; a later step finishes its binding cycle once it is allowed,
   rejected or timed out (:meth:`Scheduler._finish_held`).

Rooms (as upstream's files): :mod:`~berth.schedule.outcome` (what a cycle ends with),
:mod:`~berth.schedule.eventhandlers` (cluster changes in), :mod:`~berth.schedule.schedule_one` (the cycle),
:mod:`~berth.schedule.find_nodes` (Filter scan, extenders, host selection), :mod:`~berth.schedule.nominator`,
:mod:`~berth.schedule.binders` (the simulation's binder). This module builds the Scheduler and drives it.
"""

from __future__ import annotations

import random
import threading
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from berth.kube.errors import InputError
from berth.schedule import explain, extender, vector
from berth.schedule.binders import Binder, Evicting, EvictingAsync, SimulationBinder, replacement_pod
from berth.schedule.cache import Cache, Snapshot
from berth.schedule.config import SchedulerConfiguration
from berth.schedule.eventhandlers import (
    ASSIGNED_POD_ADD,
    ASSIGNED_POD_DELETE,
    NODE_ADD,
    NODE_DELETE,
    UNSCHEDULED_POD_ADD,
    EventHandlers,
    node_update_events,
    pod_update_events,
)
from berth.schedule.find_nodes import rotated_slice
from berth.schedule.framework.interface import SUCCESS, Code, Status
from berth.schedule.framework.listers import ObjectCache
from berth.schedule.framework.runtime import Framework, FrameworkError
from berth.schedule.framework.types import NodeInfo, PodInfo
from berth.schedule.framework.waiting_pods import WaitingPods
from berth.schedule.nominator import Nominator
from berth.schedule.outcome import (
    MAX_EVENT_MESSAGE,
    NO_NODES_AVAILABLE,
    SCHEDULING_GATED_MESSAGE,
    CycleOutcome,
    Diagnosis,
    Failure,
    FailureReason,
    Ignored,
    Placement,
    Preemption,
    Result,
    fit_error_message,
    standing_placements,
    truncate_event_message,
)
from berth.schedule.plugins.registry import Registry, default_registry
from berth.schedule.queue import SchedulingQueue, VirtualClock, Where
from berth.schedule.schedule_one import SchedulingCycle
from berth.schedule.scheduler_state import HeldBinding

# The names callers import from here (the outcome types and event helpers live in their own rooms).
__all__ = [
    "ASSIGNED_POD_ADD",
    "ASSIGNED_POD_DELETE",
    "MAX_EVENT_MESSAGE",
    "NODE_ADD",
    "NODE_DELETE",
    "NO_NODES_AVAILABLE",
    "SCHEDULING_GATED_MESSAGE",
    "UNSCHEDULED_POD_ADD",
    "Binder",
    "CycleOutcome",
    "Diagnosis",
    "Failure",
    "FailureReason",
    "Ignored",
    "Placement",
    "Preemption",
    "Result",
    "Scheduler",
    "SimulationBinder",
    "fit_error_message",
    "node_update_events",
    "pod_update_events",
    "replacement_pod",
    "rotated_slice",
    "standing_placements",
    "truncate_event_message",
]


class Scheduler(SchedulingCycle, EventHandlers):
    """kube-scheduler's core in one object. Public in :mod:`berth.schedule`.

    Args:
        config: a resolved ``SchedulerConfiguration`` (``berth.schedule.config.load``).
        registry: plugin specs (defaults to the in-tree ones plus entry points).
        binder: where placements go (:class:`SimulationBinder` by default).
        seed: seeds the tie-breaking RNG (None: nondeterministic, as upstream).
        clock: seconds for the queue's backoff; a :class:`~berth.schedule.queue.VirtualClock` by default, so a
            simulation never sleeps. Live mode passes ``time.monotonic``.
        on_outcome: called after every cycle (live mode posts Scheduled/FailedScheduling events from it).

    Raises:
        FrameworkError: a profile cannot be built (exit code 2).
    """

    def __init__(
        self,
        config: SchedulerConfiguration,
        registry: Registry | None = None,
        binder: Binder | None = None,
        seed: int | None = None,
        *,
        clock: Callable[[], float] | None = None,
        on_outcome: Callable[[CycleOutcome], None] | None = None,
    ) -> None:
        if registry is None:
            registry = default_registry()
        self.config = config
        self.registry = registry
        self.binder: Binder = binder if binder is not None else SimulationBinder()
        self.rng = random.Random(seed)
        self.clock: Callable[[], float] = clock if clock is not None else VirtualClock()
        self.on_outcome = on_outcome
        self.cache = Cache(clock=self.clock)
        self.objects = ObjectCache()
        self._snapshot = Snapshot()
        self.frameworks: dict[str, Framework] = {}
        self.nominator = Nominator()  # node -> pods nominated to it by preemption
        self.warnings: list[str] = []
        # Pods held at Permit (shared by the profiles, as upstream) and their unfinished binding cycles, by uid.
        self.waiting_pods = WaitingPods(self.clock)
        self._held: dict[str, HeldBinding] = {}
        # Bindings the binder accepted but nobody has echoed yet (live): their cycle, for a later failure.
        self._in_flight: dict[str, HeldBinding] = {}
        # HTTP extenders, called after the Filter plugins, beside Score, before the bind plugins, by preemption.
        self.extenders = extender.build(config.extenders)
        self._extenders_rank = any(e.is_filter or e.is_prioritizer for e in self.extenders)
        first: Framework | None = None
        for profile in config.profiles:
            name = profile.scheduler_name
            if not name:
                raise FrameworkError(name, "scheduler name is needed")
            if name in self.frameworks:
                raise FrameworkError(name, f'duplicate profile with scheduler name "{name}"')
            framework = Framework(
                profile,
                registry,
                snapshot=self._current_snapshot,
                binder=self._bind,
                objects=self.objects,
                rng=self.rng,
                evict=self._evict if isinstance(self.binder, Evicting) else None,
                evict_victims=self._evict_victims if isinstance(self.binder, Evicting) else None,
                running_preemption=self.is_pod_running_preemption,
                nominated=self.nominator.nominated_on,
                waiting_pods=self.waiting_pods,
                extenders=self.extenders,
            )
            if first is None:
                first = framework
            elif framework.queue_sort_name != first.queue_sort_name:
                raise FrameworkError(
                    name,
                    f'different queue sort plugins for profile "{name}": "{framework.queue_sort_name}", '
                    f'first: "{first.queue_sort_name}"',
                )
            elif profile.plugin_args.get(framework.queue_sort_name) != config.profiles[0].plugin_args.get(
                first.queue_sort_name
            ):
                raise FrameworkError(name, f'different queue sort plugin args for profile "{name}"')
            self.frameworks[name] = framework
            self.warnings.extend(framework.warnings)
        if first is None:
            raise InputError("the configuration has no profiles", "profiles")
        self.queue = SchedulingQueue(
            first.queue_sort_less,
            clock=self.clock,
            initial_backoff_seconds=config.pod_initial_backoff_seconds,
            max_backoff_seconds=config.pod_max_backoff_seconds,
            pre_enqueue=self._pre_enqueue,
            plugin_events={n: f.events_to_register() for n, f in self.frameworks.items()},
            sort_key=first.queue_sort_key,
        )
        self.next_start_node_index = 0
        # The vectorised filter's (feasible list, node columns, their rows) for this cycle's Score.
        self._fused_rows: tuple[list[NodeInfo], vector.NodeArrays, vector.Rows] | None = None
        # Every placement made, in order: a log (preemption victims stay in it; see standing_placements).
        self.placements: list[Placement] = []
        self.preempted: list[Preemption] = []
        self.failures: dict[str, Failure] = {}
        self.ignored: dict[str, Ignored] = {}
        self.attempts: Counter[tuple[str, Result]] = Counter()
        self._pending_pods: dict[str, PodInfo] = {}  # unassigned pods this scheduler is responsible for
        self.max_error_attempts: int | None = (
            None  # set by run_until_idle: give up on pods that keep erroring
        )
        self._lock = threading.RLock()
        # Preemptors whose victims' API calls are still going out in the background (binders with evict_async),
        # by uid: DefaultPreemption's PreEnqueue keeps them out of the queue meanwhile (SchedulerAsyncPreemption).
        self._preempting: set[str] = set()
        self._preempting_lock = threading.Lock()
        # Pods followed for ``simulate --explain`` (None: nobody asked) and the current cycle's trace of one.
        self.explainer: explain.Recorder | None = None
        self._trace: explain.Trace | None = None

    # --- plumbing for the frameworks ----------------------------------------------------------------------

    def _current_snapshot(self) -> Snapshot:
        return self._snapshot

    def _bind(self, pod: PodInfo, node_name: str) -> Status:
        return self.binder.bind(pod, node_name)

    def _evict(self, victim: PodInfo, preemptor: PodInfo, node_name: str) -> Status:
        """Preemption: delete ``victim`` through the binder and report it in ``preempted``. When nobody else reports
        the deletion (the simulation's binder echoes), the victim leaves the cache here and the replacement its
        controller would create is queued (:func:`replacement_pod`); live, the pod informer reports both."""
        if not isinstance(self.binder, Evicting):
            return Status(Code.ERROR, ("this scheduler's binder cannot evict pods",))
        status = self.binder.evict(victim, preemptor, node_name)
        if not status.is_success:
            return status
        self.preempted.append(Preemption(victim.key, preemptor.key, node_name, len(self.placements)))
        if self.binder.echoes_bindings:
            self.remove_pod(victim.key)
            replacement = replacement_pod(victim)
            if replacement is not None:
                self.add_pod(replacement)
        return SUCCESS

    def _evict_victims(self, victims: Sequence[PodInfo], preemptor: PodInfo, node_name: str) -> Status:
        """Preemption's evictions for one candidate. A binder with ``evict_async`` sends them in the background
        (upstream ``prepareCandidateAsync``, ``SchedulerAsyncPreemption`` on since 1.33): the preemptor is marked
        as running preemption until its victims' API calls have answered (DefaultPreemption's PreEnqueue keeps it
        out of the queue meanwhile) and the cycle goes on at once. Otherwise one :meth:`_evict` after another."""
        if not victims or not isinstance(self.binder, EvictingAsync):
            for victim in victims:
                status = self._evict(victim, preemptor, node_name)
                if not status.is_success:
                    return status
            return SUCCESS
        uid = preemptor.uid
        with self._preempting_lock:
            self._preempting.add(uid)

        def release() -> None:
            with self._preempting_lock:
                self._preempting.discard(uid)

        for victim in victims:
            self.preempted.append(Preemption(victim.key, preemptor.key, node_name, len(self.placements)))
        sent = self.binder.evict_async(list(victims), preemptor, node_name, release)
        if not sent.is_success:
            release()
        return sent

    def is_pod_running_preemption(self, uid: str) -> bool:
        """Are the evictions of this pod's preemption still going out (upstream ``IsPodRunningPreemption``)?"""
        with self._preempting_lock:
            return uid in self._preempting

    def _pre_enqueue(self, pod: PodInfo) -> Status:
        fw = self.frameworks.get(pod.scheduler_name)
        return fw.run_pre_enqueue(pod) if fw is not None else SUCCESS

    @property
    def scheduler_names(self) -> tuple[str, ...]:
        return tuple(self.frameworks)

    # --- driving ------------------------------------------------------------------------------------------

    def run_until_idle(self, max_error_attempts: int = 10) -> int:
        """Simulation: schedule until no pod can make progress. Returns the number of cycles run.

        Time is virtual: when activeQ is empty but pods are backing off, the clock jumps to the next expiry. A pod
        that keeps failing with an *error* is given up after ``max_error_attempts`` tries (it stays reported as
        unschedulable with its last message); pods rejected by plugins wait for cluster events, as upstream.
        """
        cycles = 0
        clock = self.clock
        self.max_error_attempts = max_error_attempts
        try:
            while True:
                if self.schedule_one() is not None:
                    cycles += 1
                    continue
                expiry = self.next_wakeup()
                if expiry is None or not isinstance(clock, VirtualClock):
                    return cycles
                clock.advance_to(expiry)
                self.queue.tick()
        finally:
            self.max_error_attempts = None

    def run(self, stop: threading.Event, poll_seconds: float = 1.0) -> None:
        """Live: schedule pods as they become ready until ``stop`` is set (the clock must be wall time)."""
        while not stop.is_set():
            outcome = self._finish_held()
            if outcome is None:
                wakeup = self.waiting_pods.next_deadline()
                timeout = (
                    poll_seconds if wakeup is None else max(0.0, min(poll_seconds, wakeup - self.clock()))
                )
                qp = self.queue.pop_wait(timeout=timeout)
                if qp is None:
                    self.queue.tick()
                    continue
                outcome = self._cycle(qp)
            self._report(outcome)

    # --- reporting ----------------------------------------------------------------------------------------

    def unschedulable(self) -> list[Failure]:
        """Pods still waiting (or given up), each with the last reason it could not be placed; gated pods say so."""
        gated = {p.info.key: p.info for p in self.queue.pending() if p.where is Where.GATED}
        out = [
            Failure(key, qp.pod_info.scheduler_name, SCHEDULING_GATED_MESSAGE, FailureReason.SCHEDULING_GATED)
            for key, qp in gated.items()
        ]
        out += [f for key, f in self.failures.items() if key not in gated]
        return out

    def standing_placements(self) -> list[Placement]:
        """This run's placements still in force (victims of preemption left out)."""
        return standing_placements(self.placements, self.preempted)

    def placement_counts(self) -> Mapping[str, Mapping[str, int]]:
        """node -> scheduler name -> pods placed there by this run (and still there)."""
        out: dict[str, dict[str, int]] = {}
        for p in self.standing_placements():
            out.setdefault(p.node, {})
            out[p.node][p.scheduler_name] = out[p.node].get(p.scheduler_name, 0) + 1
        return out
