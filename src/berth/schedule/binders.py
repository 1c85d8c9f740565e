"""The simulation's binder and the contract every binder keeps (live: :mod:`berth.schedule.live.binder`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol, runtime_checkable

from berth.kube.objects import Obj
from berth.schedule.framework.interface import SUCCESS, Code, Status
from berth.schedule.framework.types import PodInfo


class Binder(Protocol):
    """Makes a placement real. ``echoes_bindings``: True when nobody else will report the bound pod back (the
    simulation), so the scheduler feeds the bound pod to itself as an update, as an informer would."""

    echoes_bindings: bool

    def bind(self, pod: PodInfo, node_name: str) -> Status: ...


@runtime_checkable
class Evicting(Protocol):
    """A binder that can delete preemption victims (without it, preemption fails with an Error)."""

    def evict(self, victim: PodInfo, preemptor: PodInfo, node_name: str) -> Status: ...


@runtime_checkable
class EvictingAsync(Protocol):
    """A binder that sends one candidate's evictions in the background (upstream ``prepareCandidateAsync``) and
    calls ``release`` once they have all answered."""

    def evict_async(
        self, victims: list[PodInfo], preemptor: PodInfo, node_name: str, release: Callable[[], None]
    ) -> Status: ...


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
