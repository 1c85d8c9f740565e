"""NodePorts (PreFilter, Filter): a pod asking for host ports fits only nodes where those ports are free.

Why: two pods cannot bind the same ``hostIP:hostPort/protocol``; upstream ``plugins/nodeports/node_ports.go``.
PreFilter collects the pod's host ports (containers and sidecars) once and returns Skip when there are none, so
the per-node Filter is skipped for the common pod. A conflict is Unschedulable (preemption can free a port).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from berth.schedule import vector
from berth.schedule.framework import interface as fw
from berth.schedule.framework.columns import BoolArray, NodeArrays, Rows
from berth.schedule.framework.types import HostPort, NodeInfo, PodInfo
from berth.schedule.plugins import helper

NAME = "NodePorts"
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME


def _sanitized(hp: HostPort) -> HostPort:
    return HostPort(hp.ip or "0.0.0.0", hp.protocol or "TCP", hp.port)


def fits_ports(want: Sequence[HostPort], used: Sequence[HostPort]) -> bool:
    """No wanted port conflicts with one in use (on a node, or by a pod)."""
    if not used:
        return True
    for hp in want:
        for existing in used:
            if hp.conflicts(existing):
                return False
    return True


class NodePorts(fw.PreFilterPlugin, fw.FilterPlugin):
    NAME = NAME

    def __init__(self, args: Any, handle: fw.Handle) -> None:
        super().__init__(args, handle)
        self._hint_deleted = helper.LastParsed(PodInfo)  # the deleted pod, parsed once for every waiting pod

    def pre_filter(
        self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[fw.PreFilterResult | None, fw.Status]:
        ports = tuple(_sanitized(hp) for hp in pod.host_ports)
        if not ports:
            return None, fw.skip()
        state.write(PRE_FILTER_STATE_KEY, ports)
        return None, fw.SUCCESS

    def filter(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo) -> fw.Status:
        want = state.get(PRE_FILTER_STATE_KEY)
        if want is None:  # PreFilter disabled in this profile: compute here
            want = tuple(_sanitized(hp) for hp in pod.host_ports)
        if fits_ports(want, node.used_ports):
            return fw.SUCCESS
        return fw.unschedulable(ERR_REASON)

    def filter_mask(
        self, state: fw.CycleState, pod: PodInfo, arrays: NodeArrays, rows: Rows
    ) -> BoolArray | bool:
        """The framework's fused Filter hook (vectorised path): nodes with no host port in use pass; the others
        are left to :meth:`filter`."""
        if not arrays.flagged["has_ports"]:
            return True
        used = arrays.has_ports[rows]
        if not used.any():
            return True
        ok: BoolArray = ~used
        return ok

    def filter_nodes(self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> list[fw.Status]:
        """Filter for all ``nodes`` (the framework's batch hook): nodes with no host port in use pass without a
        look; the others get the per-node check."""
        if not vector.enabled(self.handle):
            return [self.filter(state, pod, n) for n in nodes]
        arrays = vector.arrays_for(self.handle, self)
        rows = arrays.rows(nodes, state)
        out = [fw.SUCCESS] * len(nodes)
        for j in np.flatnonzero(arrays.has_ports[rows] | arrays.exotic[rows]).tolist():
            out[j] = self.filter(state, pod, nodes[j])
        return out

    # Requeueing ------------------------------------------------------------------------------------------------

    def events_to_register(self) -> Sequence[fw.ClusterEventWithHint]:
        """Upstream 1.35 (queueing hints on): deleted pods, with a hint (host ports cannot change in an update),
        and added nodes, without one (a new node always has its ports free)."""
        return (
            fw.ClusterEventWithHint(fw.ClusterEvent("Pod", "Delete"), self.is_schedulable_after_pod_deleted),
            fw.ClusterEventWithHint(fw.ClusterEvent("Node", "Add")),
        )

    def is_schedulable_after_pod_deleted(self, pod: PodInfo, old: Any, new: Any) -> fw.QueueingHint:
        """Upstream ``isSchedulableAfterPodDeleted``: only an assigned or nominated pod that used a host port
        conflicting with one this pod wants."""
        if not (helper.raw_node_name(old) or helper.raw_nominated_node_name(old)):
            return fw.QueueingHint.QUEUE_SKIP
        freed = self._hint_deleted(old).host_ports
        if not freed:
            return fw.QueueingHint.QUEUE_SKIP
        return helper.queue_if(not fits_ports(pod.host_ports, freed))


SPEC = fw.PluginSpec(name=NAME, plugin_class=NodePorts, api_access=("pods", "nodes"))
