"""The fields the Scheduler's parts share, declared once (the Scheduler's rooms are mixins over them).

Why: upstream's ``Scheduler`` is one struct whose methods live in several files (``schedule_one.go``,
``eventhandlers.go`` ...). berth does the same with mixins -- :class:`~berth.schedule.eventhandlers.EventHandlers`,
:class:`~berth.schedule.find_nodes.FeasibleNodes`, :class:`~berth.schedule.schedule_one.SchedulingCycle` -- over
this class, which only declares what :class:`~berth.schedule.scheduler.Scheduler` sets in ``__init__``.
"""

from __future__ import annotations

import functools
import random
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, cast

if TYPE_CHECKING:
    from berth.schedule import explain, vector
    from berth.schedule.binders import Binder
    from berth.schedule.cache import Cache, Snapshot
    from berth.schedule.config import SchedulerConfiguration
    from berth.schedule.extender import HTTPExtender
    from berth.schedule.framework.interface import CycleState
    from berth.schedule.framework.listers import ObjectCache
    from berth.schedule.framework.runtime import Framework
    from berth.schedule.framework.types import NodeInfo, PodInfo, QueuedPodInfo
    from berth.schedule.framework.waiting_pods import WaitingPods
    from berth.schedule.nominator import Nominator
    from berth.schedule.outcome import CycleOutcome, Failure, Ignored, Placement, Preemption, Result
    from berth.schedule.queue import SchedulingQueue

_F = TypeVar("_F", bound=Callable[..., Any])


def _locked(method: _F) -> _F:
    """Run a Scheduler method under its lock: informer threads feed events while the scheduling thread runs cycles
    (the lock is re-entrant, so a cycle's own binder echo may call back in)."""

    @functools.wraps(method)
    def wrapper(self: SchedulerState, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            return method(self, *args, **kwargs)

    return cast(_F, wrapper)


@dataclass(slots=True)
class HeldBinding:
    """What a pod's binding cycle needs: run at once, or once the pod held at Permit is decided (the scheduler keeps
    them in ``_held`` and ``_in_flight``; :mod:`~berth.schedule.schedule_one` makes and runs them)."""

    qp: QueuedPodInfo
    fw: Framework
    state: CycleState
    assumed: PodInfo
    host: str


class SchedulerState:
    """The Scheduler's fields (see :class:`~berth.schedule.scheduler.Scheduler` for what each holds)."""

    config: SchedulerConfiguration
    binder: Binder
    rng: random.Random
    clock: Callable[[], float]
    on_outcome: Callable[[CycleOutcome], None] | None
    cache: Cache
    objects: ObjectCache
    _snapshot: Snapshot
    frameworks: dict[str, Framework]
    waiting_pods: WaitingPods
    _held: dict[str, HeldBinding]
    _in_flight: dict[str, HeldBinding]
    extenders: list[HTTPExtender]
    _extenders_rank: bool
    queue: SchedulingQueue
    next_start_node_index: int
    _fused_rows: tuple[list[NodeInfo], vector.NodeArrays, vector.Rows] | None
    placements: list[Placement]
    preempted: list[Preemption]
    nominator: Nominator
    failures: dict[str, Failure]
    ignored: dict[str, Ignored]
    attempts: Counter[tuple[str, Result]]
    _pending_pods: dict[str, PodInfo]
    max_error_attempts: int | None
    _lock: threading.RLock
    explainer: explain.Recorder | None
    _trace: explain.Trace | None
