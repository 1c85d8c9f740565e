"""Pods held at Permit (upstream ``framework/runtime/waiting_pods_map.go``).

Why: a Permit plugin may answer WAIT -- "reserve this pod but do not bind it yet" -- which is how gang scheduling
(coscheduling) holds the members of a group until enough of them have room. The pod stays assumed on its node while
it waits; every plugin that asked to wait must :meth:`WaitingPod.allow` it before its timeout, and any plugin (or
preemption, or the pod's deletion) may :meth:`WaitingPod.reject` it. The map is shared by every profile of a
scheduler, as upstream, so a plugin of one profile can find pods another profile holds.

Upstream blocks a binding goroutine on a channel; here a decision is only *recorded*, and the scheduler finishes
the pod's binding cycle at its next step (:meth:`berth.schedule.scheduler.Scheduler.schedule_one`). That keeps a
plugin calling ``allow`` from inside its own Permit (the last member of a gang releasing the others) from running
other pods' bindings in the middle of its cycle. Timeouts are read from the scheduler's clock, so a simulation's
virtual clock expires them without sleeping.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from berth.kube.durations import format_duration
from berth.schedule.framework.interface import SUCCESS, Code, Status

if TYPE_CHECKING:
    from berth.schedule.framework.types import PodInfo

MAX_PERMIT_TIMEOUT = 15 * 60.0
"""Upstream ``maxTimeout``: a Permit plugin's requested wait is capped at 15 minutes."""


class WaitingPod:
    """One pod held at Permit on ``node_name``, with the plugins it still waits for (upstream ``waitingPod``).

    ``decision`` is None while it waits; then SUCCESS (every waiting plugin allowed it) or an Unschedulable status
    naming the rejecting plugin. The first decision wins, as on upstream's one-slot channel.
    """

    def __init__(
        self,
        pod: PodInfo,
        node_name: str,
        waits: dict[str, float],
        now: float,
        on_decided: Callable[[], None] | None = None,
    ) -> None:
        self.pod = pod
        self.node_name = node_name
        self._lock = threading.Lock()
        self._waits = dict(waits)  # plugin -> seconds it asked to wait (for the timeout message)
        self._deadlines = {name: now + seconds for name, seconds in waits.items()}
        self._decision: Status | None = None
        self._on_decided = on_decided

    def get_pod(self) -> PodInfo:
        return self.pod

    def pending_plugins(self) -> list[str]:
        """The plugins that asked to wait and have not allowed the pod yet."""
        with self._lock:
            return list(self._deadlines)

    @property
    def decision(self) -> Status | None:
        with self._lock:
            return self._decision

    def allow(self, plugin: str) -> None:
        """``plugin`` lets the pod go on; it is bound once every waiting plugin has allowed it."""
        with self._lock:
            if self._decision is not None:
                return
            self._deadlines.pop(plugin, None)
            if self._deadlines:
                return
            self._decision = SUCCESS
        self._notify()

    def reject(self, plugin: str, message: str) -> None:
        """Refuse the pod: its binding cycle fails with Unschedulable ``message`` (un-reserved and re-queued)."""
        with self._lock:
            if self._decision is not None:
                return
            self._deadlines.clear()
            self._decision = Status(Code.UNSCHEDULABLE, (message,), plugin)
        self._notify()

    def next_deadline(self) -> float | None:
        with self._lock:
            if self._decision is not None or not self._deadlines:
                return None
            return min(self._deadlines.values())

    def expire(self, now: float) -> bool:
        """Reject the pod if a plugin's wait has run out by ``now`` (the earliest deadline's plugin, as upstream's
        first timer to fire). True when this call rejected it."""
        with self._lock:
            if self._decision is not None or not self._deadlines:
                return False
            plugin = min(self._deadlines, key=lambda name: self._deadlines[name])
            if self._deadlines[plugin] > now:
                return False
            waited = format_duration(self._waits[plugin])
        self.reject(plugin, f"rejected due to timeout after waiting {waited} at plugin {plugin}")
        return True

    def _notify(self) -> None:
        if self._on_decided is not None:
            self._on_decided()


class WaitingPods:
    """The waiting pods of a scheduler, by pod uid (upstream ``waitingPodsMap``), shared by its profiles."""

    def __init__(self, clock: Callable[[], float], on_decided: Callable[[], None] | None = None) -> None:
        self._clock = clock
        self._on_decided = on_decided
        self._lock = threading.Lock()
        self._pods: dict[str, WaitingPod] = {}

    def add(self, pod: PodInfo, node_name: str, waits: dict[str, float]) -> WaitingPod:
        capped = {name: min(max(0.0, seconds), MAX_PERMIT_TIMEOUT) for name, seconds in waits.items()}
        waiting = WaitingPod(pod, node_name, capped, self._clock(), self._on_decided)
        with self._lock:
            self._pods[pod.uid] = waiting
        return waiting

    def get(self, uid: str) -> WaitingPod | None:
        with self._lock:
            return self._pods.get(uid)

    def remove(self, uid: str) -> WaitingPod | None:
        with self._lock:
            return self._pods.pop(uid, None)

    def __iter__(self) -> Iterator[WaitingPod]:
        with self._lock:
            return iter(list(self._pods.values()))

    def __len__(self) -> int:
        with self._lock:
            return len(self._pods)

    def expire(self) -> None:
        """Reject every pod whose wait has run out."""
        now = self._clock()
        for waiting in self:
            waiting.expire(now)

    def next_deadline(self) -> float | None:
        deadlines = [d for d in (w.next_deadline() for w in self) if d is not None]
        return min(deadlines) if deadlines else None

    def decided(self) -> list[WaitingPod]:
        """The pods allowed or rejected and not yet handed back to the scheduler, oldest first."""
        return [w for w in self if w.decision is not None]
