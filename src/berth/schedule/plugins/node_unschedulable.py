"""NodeUnschedulable (Filter): a cordoned node (``spec.unschedulable``) takes only pods tolerating
``node.kubernetes.io/unschedulable:NoSchedule``.

Why: ``kubectl cordon`` must keep new pods away while letting DaemonSet-like pods that tolerate it in.
Upstream ``plugins/nodeunschedulable/node_unschedulable.go``; the rejection is UnschedulableAndUnresolvable
(preempting pods cannot uncordon a node).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from berth.kube import taints
from berth.schedule import vector
from berth.schedule.framework import interface as fw
from berth.schedule.framework.types import NodeInfo, PodInfo
from berth.schedule.vector.arrays import BoolArray, NodeArrays, Rows

NAME = "NodeUnschedulable"
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"

_UNSCHEDULABLE_TAINT = {"key": TAINT_NODE_UNSCHEDULABLE, "effect": "NoSchedule"}


class NodeUnschedulable(fw.FilterPlugin):
    NAME = NAME

    def filter(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo) -> fw.Status:
        if not node.unschedulable:
            return fw.SUCCESS
        if taints.tolerated(_UNSCHEDULABLE_TAINT, pod.tolerations):
            return fw.SUCCESS
        return fw.unresolvable(ERR_REASON_UNSCHEDULABLE)

    def filter_mask(
        self, state: fw.CycleState, pod: PodInfo, arrays: NodeArrays, rows: Rows
    ) -> BoolArray | bool:
        """The framework's fused Filter hook (vectorised path): cordoned nodes are left to :meth:`filter` unless
        the pod tolerates the cordon taint."""
        if not arrays.flagged["unschedulable"]:
            return True
        cordoned = arrays.unschedulable[rows]
        if not cordoned.any() or taints.tolerated(_UNSCHEDULABLE_TAINT, pod.tolerations):
            return True
        ok: BoolArray = ~cordoned
        return ok

    def filter_nodes(self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> list[fw.Status]:
        """Filter for all ``nodes`` (the framework's batch hook): a boolean column of cordoned nodes."""
        if not vector.enabled(self.handle):
            return [self.filter(state, pod, n) for n in nodes]
        arrays = vector.arrays_for(self.handle, self)
        rows = arrays.rows(nodes, state)
        out = [fw.SUCCESS] * len(nodes)
        for j in np.flatnonzero(arrays.unschedulable[rows] | arrays.exotic[rows]).tolist():
            out[j] = self.filter(state, pod, nodes[j])
        return out

    def events_to_register(self) -> Sequence[fw.ClusterEvent]:
        return (
            fw.ClusterEvent("Node", "Add"),
            fw.ClusterEvent("Node", "UpdateNodeTaint"),
            fw.ClusterEvent("Pod", "UpdatePodToleration"),
        )


SPEC = fw.PluginSpec(name=NAME, plugin_class=NodeUnschedulable, reads=("nodes",))
