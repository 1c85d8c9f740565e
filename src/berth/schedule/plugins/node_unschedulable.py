"""NodeUnschedulable (Filter): a cordoned node (``spec.unschedulable``) takes only pods tolerating
``node.kubernetes.io/unschedulable:NoSchedule``.

Why: ``kubectl cordon`` must keep new pods away while letting DaemonSet-like pods that tolerate it in.
Upstream ``plugins/nodeunschedulable/node_unschedulable.go``; the rejection is UnschedulableAndUnresolvable
(preempting pods cannot uncordon a node).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from berth.kube import taints
from berth.schedule import vector
from berth.schedule.framework import interface as fw
from berth.schedule.framework.columns import BoolArray, NodeArrays, Rows
from berth.schedule.framework.types import NodeInfo, PodInfo
from berth.schedule.plugins import helper

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

    # Requeueing ------------------------------------------------------------------------------------------------

    def events_to_register(self) -> Sequence[fw.ClusterEventWithHint]:
        """Upstream 1.35 (queueing hints on): nodes added or whose taints (``spec.unschedulable`` included)
        changed, and pods whose tolerations changed, each with a hint."""
        node_hint, pod_hint = is_schedulable_after_node_change, is_schedulable_after_pod_toleration_change
        return (
            fw.ClusterEventWithHint(fw.ClusterEvent("Node", "Add"), node_hint),
            fw.ClusterEventWithHint(fw.ClusterEvent("Node", "UpdateNodeTaint"), node_hint),
            fw.ClusterEventWithHint(fw.ClusterEvent("Pod", "UpdatePodToleration"), pod_hint),
        )


def _cordoned(node: Any) -> bool:
    return bool((node.get("spec") or {}).get("unschedulable"))


def is_schedulable_after_node_change(pod: PodInfo, old: Any, new: Any) -> fw.QueueingHint:
    """Upstream ``isSchedulableAfterNodeChange``: a node added schedulable, or uncordoned."""
    return helper.queue_if(not _cordoned(new) and (old is None or _cordoned(old)))


def is_schedulable_after_pod_toleration_change(pod: PodInfo, old: Any, new: Any) -> fw.QueueingHint:
    """Upstream ``isSchedulableAfterPodTolerationChange`` (NodeUnschedulable's): the pod's own update, once its
    tolerations tolerate the cordon taint (tolerations can only be added, so it did not before)."""
    if helper.raw_pod_uid(new) != pod.uid:
        return fw.QueueingHint.QUEUE_SKIP
    tolerations = (new.get("spec") or {}).get("tolerations") or ()
    return helper.queue_if(taints.tolerated(_UNSCHEDULABLE_TAINT, tolerations))


SPEC = fw.PluginSpec(name=NAME, plugin_class=NodeUnschedulable, api_access=("nodes",))
