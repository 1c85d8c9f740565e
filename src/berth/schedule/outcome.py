"""What a scheduling cycle ends with: the outcome types and upstream's FitError message.

Why a module of its own: the cycle (:mod:`berth.schedule.schedule_one`), the reports, ``--explain`` and the live
mode all read these types; keeping them below the Scheduler lets each of those import them without importing the
Scheduler (upstream keeps them in ``framework/types.go`` and ``schedule_one.go``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from berth.schedule.framework.interface import Code, Status

NO_NODES_AVAILABLE = "no nodes available to schedule pods"
SCHEDULING_GATED_MESSAGE = "Scheduling is blocked due to non-empty scheduling gates"
MAX_EVENT_MESSAGE = 1024  # FailedScheduling event notes are truncated to this (the condition keeps it all)


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


def diagnosis_for(status: Status) -> Diagnosis:
    """A Diagnosis naming the plugin of a single failure (Reserve, Permit ...)."""
    d = Diagnosis()
    d.add_plugin_status(status)
    return d
