"""Gang scheduling as a berth plugin: the members of a pod group are bound together or not at all.

``Gang`` (Reserve + Permit) holds each member of a group at Permit (WAIT) until ``minMember`` members have room,
then allows them all at once -- the idea of the scheduler-plugins Coscheduling plugin, in a few lines. A pod joins
a group with the label ``gang.berth.dev/name``; the group's size is the label ``gang.berth.dev/min-member`` (on
every member). Members wait at most ``timeoutSeconds`` (args, default 30); when one member's wait runs out or it is
rejected, Unreserve rejects the rest of the group, so a half-placed gang never holds room. A member handed back
that way is retried when another member of its group is created, or when room appears (``events_to_register``).

Use it with ``--plugin berth_gang:Gang`` and this directory on ``PYTHONPATH`` (see config.yaml).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from berth.schedule.framework import interface as fw
from berth.schedule.framework.types import PodInfo

GROUP = "gang.berth.dev/name"
MIN_MEMBER = "gang.berth.dev/min-member"


@dataclass(frozen=True)
class GangArgs:
    """``pluginConfig[].args`` of Gang: ``{timeoutSeconds: number > 0}``."""

    timeout_seconds: float = 30.0

    @classmethod
    def decode(cls, raw: Mapping[str, Any] | None, path: str) -> tuple[GangArgs, list[str]]:
        raw = dict(raw or {})
        problems = [f'{path}: unknown field "{k}"' for k in sorted(set(raw) - {"timeoutSeconds"})]
        timeout = raw.get("timeoutSeconds", cls.timeout_seconds)
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            problems.append(f"{path}.timeoutSeconds: Invalid value: {timeout!r}: must be a number above 0")
            timeout = cls.timeout_seconds
        return cls(float(timeout)), problems

    def to_dict(self) -> dict[str, Any]:
        return {"timeoutSeconds": self.timeout_seconds}


def _group(pod: PodInfo) -> tuple[str, int] | None:
    """(namespace/group, minMember) of a gang member; None for a pod in no group."""
    name = pod.labels.get(GROUP)
    if not name:
        return None
    try:
        size = int(pod.labels.get(MIN_MEMBER, "1"))
    except ValueError:
        size = 1
    return f"{pod.namespace}/{name}", size


class Gang(fw.ReservePlugin, fw.PermitPlugin):
    """Permit: WAIT until ``minMember`` members of the pod's group are assumed or bound, then allow them all."""

    NAME = "Gang"
    Args = GangArgs
    args: GangArgs

    def reserve(self, state: fw.CycleState, pod: PodInfo, node_name: str) -> fw.Status:
        return fw.SUCCESS

    def permit(self, state: fw.CycleState, pod: PodInfo, node_name: str) -> tuple[fw.Status, float]:
        group = _group(pod)
        if group is None:
            return fw.SUCCESS, 0.0
        key, size = group
        # Members already on nodes (bound, or assumed and waiting) in this cycle's snapshot, plus this pod.
        placed = sum(
            1
            for node in self.handle.snapshot().node_infos()
            for p in node.pods
            if p.key != pod.key and _in(p, key)
        )
        if placed + 1 < size:
            return fw.Status(fw.Code.WAIT, (f"waiting for {size - placed - 1} more member(s) of {key}",)), (
                self.args.timeout_seconds
            )

        def release(waiting: fw.WaitingPod) -> None:
            if _in(waiting.get_pod(), key):
                waiting.allow(self.NAME)

        self.handle.iterate_over_waiting_pods(release)
        return fw.SUCCESS, 0.0

    def events_to_register(self) -> Sequence[fw.ClusterEvent | fw.ClusterEventWithHint]:
        """What may complete a gang whose members were handed back: a new member (``UnscheduledPod`` Add, a
        berth event for pending pods, asked here with a hint: only a member of the same group counts), a new node,
        or a pod leaving a node."""
        return (
            fw.ClusterEventWithHint(fw.ClusterEvent("UnscheduledPod", "Add"), _new_member_of_my_gang),
            fw.ClusterEvent("Node", "Add"),
            fw.ClusterEvent("Pod", "Delete"),
        )

    def unreserve(self, state: fw.CycleState, pod: PodInfo, node_name: str) -> None:
        # One member failed (timed out, rejected, or its binding failed): the others must not hold their room.
        group = _group(pod)
        if group is None:
            return
        key = group[0]

        def reject(waiting: fw.WaitingPod) -> None:
            if waiting.get_pod().key != pod.key and _in(waiting.get_pod(), key):
                waiting.reject(self.NAME, f"member {pod.name} of gang {key} was rejected")

        self.handle.iterate_over_waiting_pods(reject)


def _in(pod: PodInfo, key: str) -> bool:
    group = _group(pod)
    return group is not None and group[0] == key


def _new_member_of_my_gang(pod: PodInfo, old: Any, new: Any) -> fw.QueueingHint:
    group = _group(pod)
    if group is None or not isinstance(new, Mapping) or not _in(PodInfo(dict(new)), group[0]):
        return fw.QueueingHint.QUEUE_SKIP
    return fw.QueueingHint.QUEUE
