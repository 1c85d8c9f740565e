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
"""

from __future__ import annotations

import functools
import random
import threading
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol, TypeVar, cast

import numpy as np

from berth.kube.errors import InputError
from berth.kube.objects import Obj
from berth.schedule import explain, extender, percentage, vector
from berth.schedule.cache import Cache, ObjectCache, Snapshot
from berth.schedule.config import SchedulerConfiguration
from berth.schedule.framework.interface import (
    MAX_NODE_SCORE,
    SUCCESS,
    ClusterEvent,
    Code,
    CycleState,
    Status,
)
from berth.schedule.framework.runtime import Framework, FrameworkError
from berth.schedule.framework.types import NodeInfo, PodInfo, QueuedPodInfo
from berth.schedule.framework.waiting_pods import WaitingPods
from berth.schedule.plugins.registry import Registry, default_registry
from berth.schedule.queue import UNSCHEDULED_POD, UNSCHEDULED_POD_UPDATE, SchedulingQueue, VirtualClock, Where

NO_NODES_AVAILABLE = "no nodes available to schedule pods"
SCHEDULING_GATED_MESSAGE = "Scheduling is blocked due to non-empty scheduling gates"
MAX_EVENT_MESSAGE = 1024  # FailedScheduling event notes are truncated to this (the condition keeps it all)

NODE_ADD = ClusterEvent("Node", "Add")
NODE_DELETE = ClusterEvent("Node", "Delete")
ASSIGNED_POD_ADD = ClusterEvent("Pod", "Add")
ASSIGNED_POD_DELETE = ClusterEvent("Pod", "Delete")
UNSCHEDULED_POD_ADD = ClusterEvent(UNSCHEDULED_POD, "Add")


class Result(StrEnum):
    """How one scheduling cycle ended (the ``result`` label of upstream's schedule_attempts_total)."""

    SCHEDULED = "scheduled"
    UNSCHEDULABLE = "unschedulable"
    ERROR = "error"
    SKIPPED = "skipped"
    # berth-only: the cycle ended at Permit WAIT; the pod's binding cycle finishes (and is counted) once it is
    # allowed or rejected (upstream counts the attempt when its binding goroutine ends).
    WAITING = "waiting"


class FailureReason(StrEnum):
    """The ``reason`` of the PodScheduled=False condition and FailedScheduling event."""

    UNSCHEDULABLE = "Unschedulable"
    SCHEDULER_ERROR = "SchedulerError"
    SCHEDULING_GATED = "SchedulingGated"


@dataclass(frozen=True, slots=True)
class Placement:
    pod: str  # "ns/name"
    scheduler_name: str
    node: str


@dataclass(frozen=True, slots=True)
class Failure:
    pod: str
    scheduler_name: str
    message: str
    reason: FailureReason = FailureReason.UNSCHEDULABLE


@dataclass(frozen=True, slots=True)
class Preemption:
    """A pod evicted so that ``preemptor`` can run on ``node``. ``after_placements``: how many placements the
    scheduler's log held when the victim was evicted (placements of the victim before that index are undone)."""

    victim: str
    preemptor: str
    node: str
    after_placements: int = 0


@dataclass(frozen=True, slots=True)
class Ignored:
    """A pod whose ``spec.schedulerName`` names no profile: left Pending, never queued (upstream behaviour)."""

    pod: str
    scheduler_name: str


@dataclass(frozen=True, slots=True)
class CycleOutcome:
    """What :meth:`Scheduler.schedule_one` did with one pod."""

    pod: str
    scheduler_name: str
    result: Result
    node: str = ""
    message: str = ""
    reason: FailureReason | None = None
    nominated_node: str = ""  # live mode patches status.nominatedNodeName with it
    clear_nomination: bool = False  # had one; preemption found no room: live mode clears it
    # Lower-priority pods whose nomination to the node this pod's preemption chose was dropped (live mode clears
    # their status.nominatedNodeName, as upstream's prepareCandidate does).
    unnominated: tuple[str, ...] = ()


@dataclass(slots=True)
class _HeldBinding:
    """What a pod's binding cycle needs: run at once, or once the pod held at Permit is decided."""

    qp: QueuedPodInfo
    fw: Framework
    state: CycleState
    assumed: PodInfo
    host: str


class Binder(Protocol):
    """Makes a placement real. ``echoes_bindings``: True when nobody else will report the bound pod back (the
    simulation), so the scheduler feeds the bound pod to itself as an update, as an informer would."""

    echoes_bindings: bool

    def bind(self, pod: PodInfo, node_name: str) -> Status: ...


class SimulationBinder:
    """Records placements in memory; optionally fails chosen pods (to exercise the failure path)."""

    echoes_bindings = True

    def __init__(self, fail: Callable[[PodInfo, str], str | None] | None = None) -> None:
        self.bound: dict[str, str] = {}
        self._fail = fail

    def bind(self, pod: PodInfo, node_name: str) -> Status:
        if self._fail is not None:
            problem = self._fail(pod, node_name)
            if problem:
                return Status(Code.ERROR, (problem,))
        self.bound[pod.key] = node_name
        return SUCCESS

    def evict(self, victim: PodInfo, preemptor: PodInfo, node_name: str) -> Status:
        """Preemption in simulation: the victim's binding is dropped (the scheduler removes it from its cache and
        queues its controller's replacement)."""
        self.bound.pop(victim.key, None)
        return SUCCESS


def replacement_pod(victim: PodInfo) -> Obj | None:
    """The pod a preemption victim's controller creates in its place, pending; None for a pod no controller owns
    (a bare pod is simply gone, as on a cluster).

    The replacement keeps the victim's name and uid so a simulation report can follow it (a ReplicaSet or Job
    would pick a new random suffix; a StatefulSet re-creates the same name); it is unbound, with a fresh status.
    """
    meta = victim.pod.get("metadata") or {}
    owners = meta.get("ownerReferences") or ()
    if not any(isinstance(o, Mapping) and o.get("controller") is True for o in owners):
        return None
    pod = dict(victim.pod)
    dropped = ("resourceVersion", "deletionTimestamp", "creationTimestamp")
    pod["metadata"] = {k: v for k, v in meta.items() if k not in dropped}
    pod["spec"] = {k: v for k, v in (victim.pod.get("spec") or {}).items() if k != "nodeName"}
    pod["status"] = {"phase": "Pending"}
    return pod


def standing_placements(placements: Sequence[Placement], preempted: Sequence[Preemption]) -> list[Placement]:
    """The placements still in force, in placement order: each pod's last placement, unless preemption evicted the
    pod after it (``Preemption.after_placements``). ``placements`` is the append-only log a Scheduler keeps."""
    evicted_at: dict[str, int] = {}
    for p in preempted:
        evicted_at[p.victim] = max(evicted_at.get(p.victim, 0), p.after_placements)
    last = {p.pod: i for i, p in enumerate(placements)}
    return [p for i, p in enumerate(placements) if last[p.pod] == i and i >= evicted_at.get(p.pod, 0)]


@dataclass
class Diagnosis:
    """Why no node fit (upstream ``framework.Diagnosis``)."""

    node_to_status: dict[str, Status] = field(default_factory=dict)
    absent_status: Status | None = None
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""
    nominated_node: str = ""  # set by a PostFilter (preemption) that made room on a node
    # A PostFilter found no room (upstream's empty nomination): a nomination the pod had is dropped.
    clear_nomination: bool = False
    unnominated: list[str] = field(
        default_factory=list
    )  # lower-priority pods whose nomination preemption dropped
    # The failure is a FitError (no node fits): only then does the PostFilter decide about the nomination; after
    # any other failure (an error, Reserve, Permit, binding) upstream clears it.
    fit_error: bool = False

    def add_rejections(self, rejected: Sequence[tuple[str, Status]]) -> None:
        """Record (node, status) rejections. Statuses are shared by reason, so the plugins they name are taken once
        per distinct (plugin, code), not once per node (hundreds of nodes are often turned away per cycle)."""
        self.node_to_status.update(rejected)
        for status in {(st.plugin, st.code): st for _, st in rejected}.values():
            self.add_plugin_status(status)

    def add_plugin_status(self, status: Status) -> None:
        if not status.plugin:
            return
        if status.code is Code.PENDING:
            self.pending_plugins.add(status.plugin)
        elif status.is_rejected:
            self.unschedulable_plugins.add(status.plugin)


def fit_error_message(num_all_nodes: int, diagnosis: Diagnosis) -> str:
    """kube-scheduler's FitError text: ``0/N nodes are available: <PreFilterMsg | histogram>.[ <PostFilterMsg>]``
    (the PostFilter part as the plugins wrote it, e.g. ``preemption: 0/4 nodes are available: 4 Preemption is not
    helpful for scheduling.``).

    The histogram counts reasons, not nodes; nodes excluded by a PreFilterResult count with the absent-node
    reason; entries ``"<count> <reason>"`` are sorted as plain strings and joined by ``", "``.
    """
    msg = f"0/{num_all_nodes} nodes are available:"
    if diagnosis.pre_filter_msg:
        msg += f" {diagnosis.pre_filter_msg}."
    else:
        counts: Counter[str] = Counter()
        for status in diagnosis.node_to_status.values():
            for reason in status.reasons:
                counts[reason] += 1
        explicit = len(diagnosis.node_to_status)
        if explicit < num_all_nodes and diagnosis.absent_status is not None:
            for reason in diagnosis.absent_status.reasons:
                counts[reason] += num_all_nodes - explicit
        entries = sorted(f"{count} {reason}" for reason, count in counts.items())
        if entries:
            msg += f" {', '.join(entries)}."
    if diagnosis.post_filter_msg:
        msg += f" {diagnosis.post_filter_msg}"  # as is: 1.33+ adds no period of its own
    return msg


def truncate_event_message(message: str) -> str:
    """FailedScheduling event notes are capped at 1024 characters, ending in ``" ..."``."""
    if len(message) <= MAX_EVENT_MESSAGE:
        return message
    return message[: MAX_EVENT_MESSAGE - 4] + " ..."


def node_update_events(old: Obj | None, new: NodeInfo) -> list[ClusterEvent]:
    """The specific update actions a node change amounts to (upstream ``nodeSchedulingPropertiesChange``)."""
    if old is None:
        return [ClusterEvent("Node", "Update")]
    before = NodeInfo(old)
    events = []
    if before.allocatable != new.allocatable:
        events.append(ClusterEvent("Node", "UpdateNodeAllocatable"))
    if before.labels != new.labels:
        events.append(ClusterEvent("Node", "UpdateNodeLabel"))
    if before.taints != new.taints or before.unschedulable != new.unschedulable:
        events.append(ClusterEvent("Node", "UpdateNodeTaint"))
    if (old.get("status") or {}).get("conditions") != (new.node.get("status") or {}).get("conditions"):
        events.append(ClusterEvent("Node", "UpdateNodeCondition"))
    if (old.get("metadata") or {}).get("annotations") != (new.node.get("metadata") or {}).get("annotations"):
        events.append(ClusterEvent("Node", "UpdateNodeAnnotation"))
    return events


def pod_update_events(old: PodInfo, new: PodInfo) -> list[ClusterEvent]:
    """What a pod's update amounts to (upstream ``PodSchedulingPropertiesChange``): label, scale-down, toleration,
    scheduling-gate and generated-claim changes, else ``UpdatePodOther``; about an ``UnscheduledPod`` while it has
    no node. A change of status (but its resource claims), resourceVersion, generation, managedFields or
    finalizers alone is none (upstream ``isPodUpdated``): the scheduler's own status writes must not retry a pod."""
    resource = "Pod" if new.node_name else UNSCHEDULED_POD
    events = []
    if old.labels != new.labels:
        events.append(ClusterEvent(resource, "UpdatePodLabel"))
    if any(new.requests.get(k, 0) < v for k, v in old.requests.items()):
        events.append(ClusterEvent(resource, "UpdatePodScaleDown"))
    old_spec, new_spec = old.pod.get("spec") or {}, new.pod.get("spec") or {}
    if old_spec.get("schedulingGates") and not new_spec.get("schedulingGates"):
        events.append(ClusterEvent(resource, "UpdatePodSchedulingGatesEliminated"))
    if old_spec.get("tolerations") != new_spec.get("tolerations"):
        events.append(ClusterEvent(resource, "UpdatePodToleration"))
    claims = "resourceClaimStatuses"
    if (old.pod.get("status") or {}).get(claims) != (new.pod.get("status") or {}).get(claims):
        events.append(ClusterEvent(resource, "UpdatePodGeneratedResourceClaim"))
    if not events and _scheduling_relevant(old.pod) != _scheduling_relevant(new.pod):
        events.append(ClusterEvent(resource, "UpdatePodOther"))
    return events


_IRRELEVANT_METADATA = ("resourceVersion", "generation", "managedFields", "finalizers")


def _scheduling_relevant(pod: Obj) -> tuple[Any, Any]:
    """A pod without what upstream's ``isPodUpdated`` strips before comparing."""
    meta = {k: v for k, v in (pod.get("metadata") or {}).items() if k not in _IRRELEVANT_METADATA}
    return meta, pod.get("spec")


_TERMINAL_PHASES = ("Succeeded", "Failed")

_F = TypeVar("_F", bound=Callable[..., Any])


def _locked(method: _F) -> _F:
    """Run a Scheduler method under its lock: informer threads feed events while the scheduling thread runs cycles
    (the lock is re-entrant, so a cycle's own binder echo may call back in)."""

    @functools.wraps(method)
    def wrapper(self: Scheduler, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            return method(self, *args, **kwargs)

    return cast(_F, wrapper)


class Scheduler:
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
        self.warnings: list[str] = []
        # Pods held at Permit (shared by the profiles, as upstream) and their unfinished binding cycles, by uid.
        self.waiting_pods = WaitingPods(self.clock)
        self._held: dict[str, _HeldBinding] = {}
        # HTTP extenders, called after the Filter plugins, beside Score, before the bind plugins, by preemption.
        self.extenders = extender.build(getattr(config, "extenders", ()))
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
                evict=self._evict if callable(getattr(self.binder, "evict", None)) else None,
                evict_victims=self._evict_victims if callable(getattr(self.binder, "evict", None)) else None,
                running_preemption=self.is_pod_running_preemption,
                nominated=self._nominated_on,
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
        self._nominated: dict[str, dict[str, PodInfo]] = {}  # node -> pods nominated to it by preemption
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

    # --- plumbing for the frameworks --------------------------------------------------------------------------

    def _current_snapshot(self) -> Snapshot:
        return self._snapshot

    def _bind(self, pod: PodInfo, node_name: str) -> Status:
        return self.binder.bind(pod, node_name)

    def _evict(self, victim: PodInfo, preemptor: PodInfo, node_name: str) -> Status:
        """Preemption: delete ``victim`` through the binder and report it in ``preempted``. When nobody else reports
        the deletion (the simulation's binder echoes), the victim leaves the cache here and the replacement its
        controller would create is queued (:func:`replacement_pod`); live, the pod informer reports both."""
        evict = getattr(self.binder, "evict", None)
        if not callable(evict):
            return Status(Code.ERROR, ("this scheduler's binder cannot evict pods",))
        status: Status = evict(victim, preemptor, node_name)
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
        evict_async = getattr(self.binder, "evict_async", None)
        if not victims or not callable(evict_async):
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
        sent: Status = evict_async(list(victims), preemptor, node_name, release)
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

    # --- events (an informer feed or the simulation drives these) ---------------------------------------------

    @_locked
    def add_node(self, node: Obj, where: str | None = None) -> None:
        self.cache.add_node(node, where)
        self.queue.move_all_to_active_or_backoff(NODE_ADD, new=node)

    @_locked
    def update_node(self, old: Obj | None, new: Obj, where: str | None = None) -> None:
        info = self.cache.update_node(new, where)
        for event in node_update_events(old, info):
            self.queue.move_all_to_active_or_backoff(event, old=old, new=new)

    @_locked
    def remove_node(self, node: Obj | str) -> None:
        name = node if isinstance(node, str) else str((node.get("metadata") or {}).get("name") or "")
        self.cache.remove_node(name)
        self.queue.move_all_to_active_or_backoff(NODE_DELETE, old=None if isinstance(node, str) else node)

    @_locked
    def add_pod(self, pod: Obj, where: str | None = None) -> None:
        """A pod appeared. Bound pods go to the cache (whatever their scheduler, so they count); pending pods of a
        configured profile go to the queue; others are ignored (and reported)."""
        info = PodInfo(pod, where)
        if info.node_name:
            self.cache.add_pod(info)
            self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_ADD, new=pod)
            return
        if (pod.get("status") or {}).get("phase") in _TERMINAL_PHASES:
            return
        if info.scheduler_name not in self.frameworks:
            self.ignored[info.key] = Ignored(info.key, info.scheduler_name)
            return
        self._pending_pods[info.key] = info
        self.queue.add(info)
        if self.queue.hears(UNSCHEDULED_POD):
            # A berth extension (upstream raises it only under the alpha GangScheduling gate): a plugin that
            # registered UnscheduledPod events -- a gang waiting for members -- hears new pending pods.
            self.queue.move_all_to_active_or_backoff(UNSCHEDULED_POD_ADD, exclude=info.key, new=pod)

    @_locked
    def update_pod(self, old: Obj | None, new: Obj, where: str | None = None) -> None:
        info = PodInfo(new, where)
        old_info = PodInfo(old) if old is not None else None
        if info.node_name:
            # Bound (by us -- confirming an assumption -- or by someone else) or an update of a bound pod.
            if old_info is None or not old_info.node_name:
                self.ignored.pop(info.key, None)
                self._observe_bound(info)
                return
            self.cache.update_pod(info)
            for event in pod_update_events(old_info, info):
                self.queue.move_all_to_active_or_backoff(event, old=old, new=new)
            return
        if (new.get("status") or {}).get("phase") in _TERMINAL_PHASES:
            self.remove_pod(new)
            return
        if info.scheduler_name not in self.frameworks:
            self.queue.delete(info.key)
            self._pending_pods.pop(info.key, None)
            self.ignored[info.key] = Ignored(info.key, info.scheduler_name)
            return
        self.ignored.pop(info.key, None)
        self._pending_pods[info.key] = info
        events = pod_update_events(old_info, info) if old_info is not None else [UNSCHEDULED_POD_UPDATE]
        self.queue.update(info, events, old)

    @_locked
    def add_object(self, obj: Obj) -> None:
        """A non-pod, non-node object plugins read (Service, ReplicaSet, PVC ...) appeared or changed."""
        kind = str(obj.get("kind") or "")
        meta = obj.get("metadata") or {}
        before = self.objects.get(kind, str(meta.get("namespace") or ""), str(meta.get("name") or ""))
        self.objects.add(obj)
        event = ClusterEvent(kind, "Update" if before is not None else "Add")
        self.queue.move_all_to_active_or_backoff(event, old=before, new=obj)

    @_locked
    def remove_object(self, obj: Obj) -> None:
        if self.objects.remove(obj):
            self.queue.move_all_to_active_or_backoff(
                ClusterEvent(str(obj.get("kind") or ""), "Delete"), old=obj
            )

    def _observe_bound(self, pod: PodInfo) -> None:
        """What the informer's update does when a pod we bound shows up with ``spec.nodeName``."""
        self._unnominate(pod.key)
        self.queue.delete(pod.key)
        self._pending_pods.pop(pod.key, None)
        self.cache.add_pod(pod)
        self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_ADD, new=pod.pod)

    @_locked
    def remove_pod(self, pod: Obj | str) -> None:
        if isinstance(pod, str):
            key = pod
        else:
            meta = pod.get("metadata") or {}
            key = f"{meta.get('namespace') or 'default'}/{meta.get('name') or ''}"
        self.ignored.pop(key, None)
        self.failures.pop(key, None)
        self._pending_pods.pop(key, None)
        self._unnominate(key)
        self.queue.delete(key)
        held = next((h for h in self._held.values() if h.assumed.key == key), None)
        if held is not None:
            # Upstream deletePodFromSchedulingQueue: a deleted pod held at Permit is rejected; its binding cycle
            # then un-reserves it and takes it out of the cache (finished at the next step).
            held.fw.reject_waiting_pod(held.assumed.uid)
            self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, old=held.assumed.pod)
            return
        removed = self.cache.remove_pod(key)
        if removed is not None:
            self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, old=removed.pod)

    # --- the cycle --------------------------------------------------------------------------------------------

    def schedule_one(self) -> CycleOutcome | None:
        """One step: finish the binding cycle of a pod held at Permit that was allowed or rejected (or whose wait
        ran out), else pop one pod and run its scheduling + binding cycle. None when there is nothing to do."""
        outcome = self._finish_held() if self._held else None
        if outcome is None:
            qp = self.queue.pop()
            if qp is None:
                return None
            outcome = self._cycle(qp)
        self._report(outcome)
        return outcome

    def _report(self, outcome: CycleOutcome) -> None:
        if outcome.result is not Result.WAITING:
            self.attempts[(outcome.scheduler_name, outcome.result)] += 1
        if self.explainer is not None:
            trace, self._trace = self._trace, None
            if trace is not None and trace.pod == outcome.pod:
                self.explainer.finish(trace, outcome, self.preempted)
            elif self.explainer.wants(outcome.pod):
                self.explainer.settle(outcome)  # a pod held at Permit finished its binding cycle
        if self.on_outcome is not None:
            self.on_outcome(outcome)

    def next_wakeup(self) -> float | None:
        """The clock time of the next thing due without any event: a backoff ending or a Permit wait running
        out (None: nothing is due)."""
        times = [
            t for t in (self.queue.next_backoff_expiry(), self.waiting_pods.next_deadline()) if t is not None
        ]
        return min(times) if times else None

    @_locked
    def _finish_held(self) -> CycleOutcome | None:
        """Upstream's binding goroutine after ``WaitOnPermit`` returns: bind an allowed pod; un-reserve, forget and
        re-queue a rejected one (its FitError names the one node it was held on)."""
        if not self._held:
            return None
        self.waiting_pods.expire()
        decided = next((w for w in self.waiting_pods.decided() if w.pod.uid in self._held), None)
        if decided is None:
            return None
        held = self._held.pop(decided.pod.uid)
        self.waiting_pods.remove(decided.pod.uid)
        status = decided.decision or SUCCESS
        if status.is_success:
            return self._binding_cycle(held)
        pod = held.assumed
        held.fw.run_unreserve(held.state, pod, held.host)
        self.cache.forget_pod(pod)
        # Upstream's FitError for one node: UnschedulablePlugins is the rejecting plugin, even "" (a removal).
        diagnosis = Diagnosis(node_to_status={held.host: status}, unschedulable_plugins={status.plugin})
        failure = Status(status.code, (fit_error_message(1, diagnosis),), status.plugin)
        outcome = self._fail(held.qp, failure, diagnosis, held=True)
        # Its room is free again (upstream: an AssignedPodDelete event, not for the rejected pod itself).
        self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, exclude=pod.key, old=pod.pod)
        return outcome

    @_locked
    def _cycle(self, qp: QueuedPodInfo) -> CycleOutcome:
        pod = qp.pod_info
        if self.explainer is not None:
            self._trace = self.explainer.start(pod.key, pod.scheduler_name, len(self.preempted))
        fw = self.frameworks.get(pod.scheduler_name)
        if fw is None:
            # Upstream logs `profile not found for scheduler name "<name>"` and drops the pod.
            self.queue.done(pod.key)
            self.ignored[pod.key] = Ignored(pod.key, pod.scheduler_name)
            return CycleOutcome(
                pod.key,
                pod.scheduler_name,
                Result.SKIPPED,
                message=f'profile not found for scheduler name "{pod.scheduler_name}"',
            )
        if pod.terminating or self.cache.is_assumed(pod.key):
            self.queue.done(pod.key)
            return CycleOutcome(
                pod.key, pod.scheduler_name, Result.SKIPPED, message=f"skip schedule deleting pod: {pod.key}"
            )
        self.cache.update_snapshot(self._snapshot)
        state = CycleState()
        host, failure, diagnosis = self._schedule_pod(fw, state, pod)
        if failure is not None:
            return self._fail(qp, failure, diagnosis)

        # Assume, Reserve, Permit.
        assumed = pod.with_node(host)
        self.cache.assume_pod(assumed)
        status = fw.run_reserve(state, assumed, host)
        if not status.is_success:
            fw.run_unreserve(state, assumed, host)
            self.cache.forget_pod(assumed)
            return self._fail(qp, status, _diagnosis_for(status))
        status, _wait = fw.run_permit(state, assumed, host)
        if status.code is Code.WAIT:
            # Held, reserved on its node, until allowed, rejected or timed out (_finish_held binds it then).
            self._held[assumed.uid] = _HeldBinding(qp, fw, state, assumed, host)
            return CycleOutcome(
                pod.key, pod.scheduler_name, Result.WAITING, node=host, message=status.message()
            )
        if not status.is_success:
            fw.run_unreserve(state, assumed, host)
            self.cache.forget_pod(assumed)
            return self._fail(qp, status, _diagnosis_for(status))
        return self._binding_cycle(_HeldBinding(qp, fw, state, assumed, host))

    def _binding_cycle(self, held: _HeldBinding) -> CycleOutcome:
        """PreBind, Bind, FinishBinding, PostBind (synchronous here; upstream runs it in a goroutine)."""
        qp, fw, state, assumed, host = held.qp, held.fw, held.state, held.assumed, held.host
        pod = qp.pod_info
        self.queue.done(pod.key)
        status = fw.run_pre_bind(state, assumed, host)
        if status.is_success:
            bound = self._extenders_bind(assumed, host)
            status = bound if bound is not None else fw.run_bind(state, assumed, host)
            if status.code is Code.SKIP:
                status = Status(Code.ERROR, ("no bind plugin bound the pod (all returned Skip)",))
        if not status.is_success:
            fw.run_unreserve(state, assumed, host)
            self.cache.forget_pod(assumed)
            self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, old=assumed.pod)
            error = status if status.code is Code.ERROR else Status(Code.ERROR, status.reasons, status.plugin)
            return self._fail(qp, error, Diagnosis())
        self.cache.finish_binding(assumed)
        fw.run_post_bind(state, assumed, host)
        self.placements.append(Placement(pod.key, pod.scheduler_name, host))
        self.failures.pop(pod.key, None)
        self._pending_pods.pop(pod.key, None)
        if self.binder.echoes_bindings:
            self._observe_bound(assumed)
        return CycleOutcome(pod.key, pod.scheduler_name, Result.SCHEDULED, node=host)

    def _schedule_pod(
        self, fw: Framework, state: CycleState, pod: PodInfo
    ) -> tuple[str, Status | None, Diagnosis]:
        """(chosen node, None, _) or ("", failure status, diagnosis). Unschedulable failures carry the FitError
        message; errors their own."""
        diagnosis = Diagnosis()
        all_nodes = self._snapshot.node_infos()
        num_all = len(all_nodes)
        trace = self._trace  # None unless simulate --explain follows this pod
        if trace is not None:
            trace.diagnosis = diagnosis
            trace.node_names = tuple(n.name for n in all_nodes)
        if num_all == 0:
            return "", Status(Code.ERROR, (NO_NODES_AVAILABLE,)), diagnosis

        result, status, narrowing = fw.run_pre_filter(state, pod, all_nodes)
        if trace is not None:
            trace.skipped_filter = tuple(sorted(state.skip_filter))
        if not status.is_success:
            if not status.is_rejected:
                return "", status, diagnosis
            if trace is not None:
                trace.route = explain.Route.PRE_FILTER
            diagnosis.absent_status = status
            diagnosis.pre_filter_msg = status.message()
            if status.plugin:
                diagnosis.add_plugin_status(status)
            else:
                diagnosis.unschedulable_plugins.update(narrowing)
            return "", self._post_filter(fw, state, pod, num_all, diagnosis), diagnosis

        nominated = str(((pod.pod.get("status") or {}).get("nominatedNodeName")) or "")
        if nominated:
            node = self._snapshot.get(nominated)
            if node is not None and (
                result is None or result.node_names is None or nominated in result.node_names
            ):
                st = fw.run_filter_with_nominated_pods(state, pod, node)  # upstream evaluateNominatedNode
                if st.is_success:
                    try:
                        passed = self._pass_extenders(pod, [node], diagnosis)
                    except extender.ExtenderError:
                        passed = []  # upstream logs it and looks at every node
                    if passed:
                        if trace is not None:
                            trace.route, trace.feasible = explain.Route.NOMINATED, (nominated,)
                        return nominated, None, diagnosis
                elif st.code is Code.ERROR:
                    return "", st, diagnosis

        nodes: Sequence[NodeInfo] = all_nodes
        if result is not None and result.node_names is not None:
            allowed = result.node_names
            nodes = self._snapshot.nodes_named(allowed)
            if trace is not None:
                trace.allowed = frozenset(allowed)
            diagnosis.unschedulable_plugins.update(narrowing)
            diagnosis.absent_status = Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                (f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(narrowing))}]",),
            )
        feasible, error = self._find_feasible(fw, state, pod, nodes, diagnosis)
        processed = len(feasible) + len(diagnosis.node_to_status)
        self.next_start_node_index = (self.next_start_node_index + processed) % num_all
        if error is not None:
            return "", error, diagnosis
        if self.extenders and feasible:
            try:
                feasible = self._pass_extenders(pod, feasible, diagnosis)
            except extender.ExtenderError as exc:
                return "", Status(Code.ERROR, (str(exc),)), diagnosis
        if trace is not None:
            trace.feasible = tuple(n.name for n in feasible)
        if not feasible:
            if trace is not None:
                trace.route = explain.Route.NONE_FEASIBLE
            return "", self._post_filter(fw, state, pod, num_all, diagnosis), diagnosis
        if len(feasible) == 1:
            if trace is not None:
                trace.route = explain.Route.ONLY_FEASIBLE
            return feasible[0].name, None, diagnosis

        totals: Sequence[int] | np.ndarray[Any, np.dtype[np.int64]]
        if fw.has_score_plugins or self._extenders_rank:
            status = fw.run_pre_score(state, pod, feasible)
            if not status.is_success:
                return "", status, diagnosis
            fused = self._fused_rows
            if fused is not None and fused[0] is feasible:  # rows left by the vectorised filter
                totals, status = fw.run_score_rows(state, pod, feasible, fused[1], fused[2])
            else:
                totals, status = fw.run_score(state, pod, feasible)
            if not status.is_success:
                return "", status, diagnosis
            plugin_totals = totals
            if self.extenders:
                totals = self._add_extender_scores(pod, feasible, totals)
            if trace is not None:
                self._trace_scores(trace, fw, state, pod, feasible, plugin_totals, totals)
        else:
            totals = [1] * len(feasible)
            if trace is not None:
                trace.route, trace.totals = explain.Route.UNSCORED, tuple(totals)
        return self._select_host(feasible, totals), None, diagnosis

    @staticmethod
    def _trace_scores(
        trace: explain.Trace,
        fw: Framework,
        state: CycleState,
        pod: PodInfo,
        feasible: Sequence[NodeInfo],
        plugin_totals: Sequence[int] | np.ndarray[Any, np.dtype[np.int64]],
        totals: Sequence[int] | np.ndarray[Any, np.dtype[np.int64]],
    ) -> None:
        """Record the scored route for ``simulate --explain``: the totals, and every plugin's own answers."""
        trace.route = explain.Route.SCORED
        trace.skipped_score = tuple(sorted(state.skip_score))
        trace.plugin_totals = tuple(int(t) for t in plugin_totals)
        trace.totals = tuple(int(t) for t in totals)
        breakdown, status = fw.score_breakdown(state, pod, feasible)
        trace.breakdown = tuple(breakdown)
        if not status.is_success:
            trace.breakdown_problem = f"asking the Score plugins again failed: {status.message()}"

    def _extenders_bind(self, pod: PodInfo, host: str) -> Status | None:
        """Upstream ``extendersBinding``: the first interested binder extender binds (an ignorable one that fails
        is passed over); None when no extender bound, so the bind plugins run."""
        for ext in self.extenders:
            if not ext.is_binder or not ext.is_interested(pod):
                continue
            try:
                ext.bind(pod, host)
            except extender.ExtenderError as exc:
                if ext.ignorable:
                    continue
                return Status(Code.ERROR, (str(exc),))
            return SUCCESS
        return None

    def _pass_extenders(self, pod: PodInfo, feasible: list[NodeInfo], diagnosis: Diagnosis) -> list[NodeInfo]:
        """Upstream ``findNodesThatPassExtenders``: each interested filter extender narrows the feasible nodes in
        turn; its failed nodes get statuses (unresolvable ones win). Raises ExtenderError for a failing extender
        that is not ignorable."""
        before = len(feasible)
        for ext in self.extenders:
            if not feasible:
                break
            if not ext.is_filter or not ext.is_interested(pod):
                continue
            try:
                passed, failed, unresolvable = ext.filter(pod, feasible)
            except extender.ExtenderError:
                if ext.ignorable:
                    continue
                raise
            for node_name, reason in unresolvable.items():
                diagnosis.node_to_status[node_name] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (reason,))
            for node_name, reason in failed.items():
                if node_name not in unresolvable:
                    diagnosis.node_to_status[node_name] = Status(Code.UNSCHEDULABLE, (reason,))
            feasible = passed
        if len(feasible) != before:
            # Extenders register no events: a pod they rejected is retried on any cluster event (upstream #122019).
            diagnosis.unschedulable_plugins.add(extender.EXTENDER_NAME)
        return feasible

    def _add_extender_scores(
        self,
        pod: PodInfo,
        feasible: Sequence[NodeInfo],
        totals: Sequence[int] | np.ndarray[Any, np.dtype[np.int64]],
    ) -> list[int]:
        """Upstream ``prioritizeNodes``: each interested extender's score x weight x (100 / 10) is added; a failing
        prioritizer is skipped (its nodes get nothing from it)."""
        out = [int(t) for t in totals]
        index = {n.name: i for i, n in enumerate(feasible)}
        scale = MAX_NODE_SCORE // extender.MAX_EXTENDER_PRIORITY
        for ext in self.extenders:
            if not ext.is_interested(pod):
                continue
            try:
                scores, weight = ext.prioritize(pod, feasible)
            except extender.ExtenderError:
                continue
            for host, score in scores:
                i = index.get(host)
                if i is not None:
                    out[i] += score * weight * scale
        return out

    def _find_feasible(
        self, fw: Framework, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo], diagnosis: Diagnosis
    ) -> tuple[list[NodeInfo], Status | None]:
        """Filter from the rotating start until enough nodes pass (upstream ``findNodesThatPassFilters``)."""
        self._fused_rows = None
        n = len(nodes)
        if n == 0:
            return [], None
        to_find = percentage.num_feasible_nodes_to_find(
            n,
            self.config.percentage_of_nodes_to_score,
            fw.percentage_of_nodes_to_score,
            fw.has_score_plugins,
            has_extenders=self._extenders_rank,
        )
        start = self.next_start_node_index % n
        if not fw.has_filter_plugins:
            return _rotated_slice(nodes, start, 0, to_find), None
        promised = self._promised_nodes(pod)
        if promised:
            if vector.enabled(fw) and nodes is self._snapshot.node_infos():
                mixed = self._find_feasible_mixed(
                    fw, state, pod, nodes, start, to_find, set(promised), diagnosis
                )
                if mixed is not None:
                    return mixed
            ordered = list(nodes[start:]) + list(nodes[:start]) if start else nodes
            return self._find_feasible_with_nominated(fw, state, pod, ordered, to_find, diagnosis)
        if vector.enabled(fw) and nodes is self._snapshot.node_infos():
            # The vectorised path: masks over rows of the node columns (same nodes examined, same verdicts).
            arrays = fw.node_arrays()
            arrays.sync(self._snapshot)
            found = fw.find_feasible_rows(state, pod, nodes, arrays, start, to_find)
            if found is not None:
                passed, rows, rejected = found
                diagnosis.add_rejections(rejected)
                self._fused_rows = (passed, arrays, rows)
                return passed, None
        filters = fw.filters_for(state)
        batch_filters = fw.batch_filters
        feasible: list[NodeInfo] = []
        statuses = diagnosis.node_to_status
        ok = Code.SUCCESS
        name = ""
        # Plugin-major over chunks of exactly as many nodes as are still needed: per node the plugins still run in
        # order and stop at the first rejection, and exactly the nodes the sequential loop would visit are
        # visited -- but each plugin runs in a tight comprehension (Filter plugins are side-effect free; upstream
        # runs them in parallel).
        pos = 0
        try:
            while pos < n and len(feasible) < to_find:
                want = to_find - len(feasible)
                chunk = _rotated_slice(nodes, start, pos, want)  # no copy of the whole rotated list
                pos += len(chunk)
                for name, fn in filters:
                    batch = batch_filters.get(name)
                    if batch is not None:
                        results = list(batch(state, pod, chunk))
                    else:
                        results = [fn(state, pod, node) for node in chunk]
                    if results.count(SUCCESS) == len(results):
                        continue
                    keep = []
                    for node, status in zip(chunk, results, strict=True):
                        if status.code is ok:
                            keep.append(node)
                            continue
                        if not status.is_rejected:
                            return feasible, Status(
                                Code.ERROR, (f'running "{name}" filter plugin: {status.message()}',), name
                            )
                        status = status.with_plugin(name)
                        statuses[node.name] = status
                        diagnosis.add_plugin_status(status)
                    chunk = keep
                    if not chunk:
                        break
                feasible.extend(chunk)
        except Exception as exc:
            return feasible, Status(
                Code.ERROR, (f"plugin {name} raised in Filter: {type(exc).__name__}: {exc}",), name
            )
        return feasible, None

    # --- nominated pods (upstream's nominator, the part Filter needs) ---------------------------------------------

    @_locked
    def what_if(self, pod: Obj) -> explain.Attempt | None:
        """Where this scheduler would put the pending ``pod`` now, and why -- without doing anything: nothing is
        assumed, reserved or bound, PostFilter (preemption) does not run, the rotating start index and the
        random state are put back. None when no profile serves the pod. ``berth schedule shadow`` asks it of every
        pod another scheduler binds."""
        info = PodInfo(pod)
        fw = self.frameworks.get(info.scheduler_name)
        if fw is None:
            return None
        self.cache.update_snapshot(self._snapshot)
        start, rng_state, post_filter = self.next_start_node_index, self.rng.getstate(), fw.post_filter
        trace = explain.Trace(info.key, info.scheduler_name, len(self.preempted))
        saved, self._trace = self._trace, trace
        fw.post_filter = []
        try:
            host, failure, _diagnosis = self._schedule_pod(fw, CycleState(), info)
        finally:
            fw.post_filter = post_filter
            self._trace = saved
            self.next_start_node_index = start
            self.rng.setstate(rng_state)
            self._fused_rows = None
        if failure is None:
            outcome = CycleOutcome(info.key, info.scheduler_name, Result.SCHEDULED, node=host)
        else:
            result = Result.ERROR if failure.code is Code.ERROR else Result.UNSCHEDULABLE
            outcome = CycleOutcome(info.key, info.scheduler_name, result, message=failure.message())
        return explain.build_attempt(1, trace, outcome)

    @_locked
    def clear_nomination(self, key: str) -> None:
        """Forget the node preemption nominated for ``key`` (live mode: its binding failed in the background, and
        upstream then overrides the nomination with none)."""
        self._unnominate(key)

    def _nominate(self, pod: PodInfo, node_name: str) -> None:
        self._unnominate(pod.key)
        # Kept bound to the node: Filter counts it there (run_filter_with_nominated_pods), without a copy per run.
        self._nominated.setdefault(node_name, {})[pod.key] = pod.with_node(node_name)

    def _unnominate(self, key: str) -> None:
        for node_name in [n for n, pods in self._nominated.items() if key in pods]:
            del self._nominated[node_name][key]
            if not self._nominated[node_name]:
                del self._nominated[node_name]

    def _unnominate_lower(self, pod: PodInfo, node_name: str) -> list[str]:
        """Upstream ``prepareCandidate``: pods of lower priority nominated to the node preemption chose may no
        longer fit there; their nomination is dropped so they look for room elsewhere. Returns their keys."""
        dropped = []
        for key, other in list(self._nominated.get(node_name, {}).items()):
            if key != pod.key and other.priority < pod.priority:
                self._unnominate(key)
                dropped.append(key)
                pending = self._pending_pods.get(key)
                if pending is not None:  # its next attempt must not try the node first
                    status = {
                        k: v for k, v in (pending.pod.get("status") or {}).items() if k != "nominatedNodeName"
                    }
                    self._pending_pods[key] = PodInfo({**pending.pod, "status": status})
                    self.queue.update(self._pending_pods[key])
        return dropped

    def _promised_nodes(self, pod: PodInfo) -> list[str]:
        """The nodes where another pod of equal or higher priority is nominated (Filter must count it in there)."""
        return [
            node_name
            for node_name, pods in self._nominated.items()
            if any(other.key != pod.key and other.priority >= pod.priority for other in pods.values())
        ]

    def _nominated_on(self, node_name: str) -> list[PodInfo]:
        """The pods nominated to ``node_name`` (the frameworks' ``run_filter_with_nominated_pods`` reads them)."""
        pods = self._nominated.get(node_name)
        return list(pods.values()) if pods else []

    def _find_feasible_mixed(
        self,
        fw: Framework,
        state: CycleState,
        pod: PodInfo,
        nodes: Sequence[NodeInfo],
        start: int,
        to_find: int,
        promised_set: set[str],
        diagnosis: Diagnosis,
    ) -> tuple[list[NodeInfo], Status | None] | None:
        """Upstream's rule, fast: the rotation is scanned on the vectorised path, then only the nodes examined that
        carry nominated pods of equal or higher priority are filtered again with them added (per node). Adding pods
        can only turn a pass into a rejection, so when a node drops out the scan goes on from where it stopped:
        same nodes examined, same early stop, same order and statuses as :meth:`_find_feasible_with_nominated`.
        None when the vectorised path declines or a plugin errors (or raises): the caller then runs the per-node
        scan, which reports it with exactly its nodes examined."""
        n = len(nodes)
        arrays = fw.node_arrays()
        arrays.sync(self._snapshot)
        feasible: list[NodeInfo] = []
        runs: list[np.ndarray[Any, np.dtype[np.int64]]] = []
        rejected: list[tuple[str, Status]] = []
        pos = 0  # rotation offset of the next node to examine
        while pos < n and len(feasible) < to_find:
            first = start + pos if start + pos < n else start + pos - n
            found = fw.find_feasible_rows(state, pod, nodes, arrays, first, to_find - len(feasible), n - pos)
            if found is None:
                return None
            passed, rows, rejections = found
            pos += len(passed) + len(rejections)
            # run_filter_with_nominated_pods is "with the pods added, then without": the scan gave the second.
            for name, status in rejections:
                if name in promised_set:
                    node = self._snapshot.get(name)
                    if node is None:
                        return None
                    added = fw.run_filter_with_pods_added(state, pod, node, fw.promised_pods(pod, name))
                    if added.code is Code.ERROR:
                        return None  # the per-node scan reports it with exactly its nodes examined
                    if not added.is_success:
                        status = added
                rejected.append((name, status))
            keep: list[int] = []
            for j, node in enumerate(passed):
                if node.name in promised_set:
                    added = fw.run_filter_with_pods_added(state, pod, node, fw.promised_pods(pod, node.name))
                    if added.code is Code.ERROR:
                        return None
                    if not added.is_success:
                        rejected.append((node.name, added))
                        continue
                keep.append(j)
            arr = np.arange(rows.start, rows.stop) if isinstance(rows, slice) else rows
            if len(keep) == len(passed):
                feasible.extend(passed)
                runs.append(arr)
            else:
                feasible.extend([passed[j] for j in keep])
                runs.append(arr[keep])
        diagnosis.add_rejections(rejected)
        self._fused_rows = (feasible, arrays, runs[0] if len(runs) == 1 else np.concatenate(runs))
        return feasible, None

    def _find_feasible_with_nominated(
        self,
        fw: Framework,
        state: CycleState,
        pod: PodInfo,
        ordered: Sequence[NodeInfo],
        to_find: int,
        diagnosis: Diagnosis,
    ) -> tuple[list[NodeInfo], Status | None]:
        """Filter with nominated pods counted in (``Framework.run_filter_with_nominated_pods``), node by node."""
        feasible: list[NodeInfo] = []
        for node in ordered:
            status = fw.run_filter_with_nominated_pods(state, pod, node)
            if status.code is Code.ERROR:
                return feasible, status
            if status.is_success:
                feasible.append(node)
                if len(feasible) >= to_find:
                    break
                continue
            diagnosis.node_to_status[node.name] = status
            diagnosis.add_plugin_status(status)
        return feasible, None

    def _select_host(
        self, nodes: Sequence[NodeInfo], totals: Sequence[int] | np.ndarray[Any, np.dtype[np.int64]]
    ) -> str:
        """Highest total wins; ties are broken uniformly at random with the seeded RNG.

        kube-scheduler 1.34 walks the ties with reservoir sampling (the k-th tie replaces the pick with probability
        1/k), which picks each tied node with probability 1/ties; one draw over the tied list gives exactly that
        distribution with one random number instead of one per tie.
        """
        arr = np.asarray(totals)
        if arr.ndim == 1 and arr.dtype.kind in "iu":  # the usual int totals: one array pass instead of a loop
            tied: Sequence[int] | np.ndarray[Any, np.dtype[np.intp]] = np.flatnonzero(arr == arr.max())
        else:
            best = max(totals)
            tied = [i for i, total in enumerate(totals) if total == best]
        chosen = tied[0] if len(tied) == 1 else tied[self.rng.randrange(len(tied))]
        return nodes[int(chosen)].name

    def _post_filter(
        self, fw: Framework, state: CycleState, pod: PodInfo, num_all: int, diagnosis: Diagnosis
    ) -> Status:
        diagnosis.fit_error = True
        if fw.has_post_filter_plugins:
            statuses = dict(diagnosis.node_to_status)
            if diagnosis.absent_status is not None:
                for node in self._snapshot.node_infos():
                    statuses.setdefault(node.name, diagnosis.absent_status)
            result, status = fw.run_post_filter(state, pod, statuses)
            diagnosis.post_filter_msg = status.message() if not status.is_success else ""
            if result is not None and result.nominated_node_name:
                diagnosis.nominated_node = result.nominated_node_name
                diagnosis.unnominated = self._unnominate_lower(pod, result.nominated_node_name)
            elif result is not None:
                diagnosis.clear_nomination = True
        return Status(Code.UNSCHEDULABLE, (fit_error_message(num_all, diagnosis),))

    def _fail(
        self, qp: QueuedPodInfo, status: Status, diagnosis: Diagnosis, held: bool = False
    ) -> CycleOutcome:
        """Upstream ``handleSchedulingFailure``: requeue (unschedulable or backoff) and record the message.
        ``held``: the pod was rejected while held at Permit (a gang that never completes is retried forever
        upstream; a simulation gives up on it as on errors)."""
        pod = qp.pod_info
        is_error = status.code is Code.ERROR
        if is_error:
            qp.unschedulable_plugins = set()
            qp.pending_plugins = set()
        else:
            qp.unschedulable_plugins = set(diagnosis.unschedulable_plugins)
            qp.pending_plugins = set(diagnosis.pending_plugins)
        message = status.message()
        reason = FailureReason.SCHEDULER_ERROR if is_error else FailureReason.UNSCHEDULABLE
        had = str((pod.pod.get("status") or {}).get("nominatedNodeName") or "")
        keeps = diagnosis.fit_error and not diagnosis.clear_nomination  # a PostFilter's "no change"
        clear = bool(had) and not diagnosis.nominated_node and not keeps
        if diagnosis.nominated_node or clear:
            # Remember the nomination on the pending pod (its next attempt tries that node first), or forget it.
            pod_status = {k: v for k, v in (pod.pod.get("status") or {}).items() if k != "nominatedNodeName"}
            if diagnosis.nominated_node:
                pod_status["nominatedNodeName"] = diagnosis.nominated_node
            qp.pod_info = PodInfo({**pod.pod, "status": pod_status})
            if pod.key in self._pending_pods:
                self._pending_pods[pod.key] = qp.pod_info
            if diagnosis.nominated_node:
                self._nominate(qp.pod_info, diagnosis.nominated_node)
            else:
                self._unnominate(pod.key)
        # A failure no plugin claims goes to backoff and is retried forever upstream; a simulation gives up.
        retried_blindly = held or is_error or not (qp.unschedulable_plugins or qp.pending_plugins)
        give_up = (
            retried_blindly and self.max_error_attempts is not None and qp.attempts >= self.max_error_attempts
        )
        if pod.key in self._pending_pods and not give_up:
            self.queue.add_unschedulable_if_not_present(qp)
        else:
            self.queue.done(pod.key)  # deleted or bound meanwhile, or given up by a simulation
        if pod.key in self._pending_pods:  # a pod deleted or bound meanwhile is no failure to report
            self.failures[pod.key] = Failure(pod.key, pod.scheduler_name, message, reason)
        return CycleOutcome(
            pod.key,
            pod.scheduler_name,
            Result.ERROR if is_error else Result.UNSCHEDULABLE,
            message=message,
            reason=reason,
            nominated_node=diagnosis.nominated_node,
            clear_nomination=clear,
            unnominated=tuple(diagnosis.unnominated),
        )

    # --- driving ----------------------------------------------------------------------------------------------

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

    # --- reporting --------------------------------------------------------------------------------------------

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


def _rotated_slice(nodes: Sequence[NodeInfo], start: int, pos: int, count: int) -> list[NodeInfo]:
    """``(nodes[start:] + nodes[:start])[pos:pos + count]`` without building the rotated list."""
    n = len(nodes)
    pos = min(pos, n)
    count = max(0, min(count, n - pos))
    i = start + pos
    if i >= n:
        i -= n
    end = i + count
    if end <= n:
        return list(nodes[i:end])
    return list(nodes[i:]) + list(nodes[: end - n])


def _diagnosis_for(status: Status) -> Diagnosis:
    d = Diagnosis()
    d.add_plugin_status(status)
    return d
