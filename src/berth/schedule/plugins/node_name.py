"""NodeName (Filter): a pod that already names a node in ``spec.nodeName`` fits only that node.

Why: pods created with ``nodeName`` bypass placement; if such a pod still reaches the scheduler it must not land
elsewhere. Upstream ``plugins/nodename/node_name.go``; UnschedulableAndUnresolvable.
"""

from __future__ import annotations

from collections.abc import Sequence

from berth.schedule.framework import interface as fw
from berth.schedule.framework.columns import NodeArrays, Rows
from berth.schedule.framework.types import NodeInfo, PodInfo

NAME = "NodeName"
ERR_REASON = "node(s) didn't match the requested node name"


class NodeName(fw.FilterPlugin):
    NAME = NAME

    def filter(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo) -> fw.Status:
        if pod.node_name and pod.node_name != node.name:
            return fw.unresolvable(ERR_REASON)
        return fw.SUCCESS

    def filter_mask(self, state: fw.CycleState, pod: PodInfo, arrays: NodeArrays, rows: Rows) -> bool | None:
        """The framework's fused Filter hook: a pod without ``spec.nodeName`` passes everywhere (None otherwise:
        the per-node check decides)."""
        return True if not pod.node_name else None

    def filter_nodes(self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> list[fw.Status]:
        """Filter for all ``nodes`` (the framework's batch hook): a pod without ``spec.nodeName`` passes everywhere
        without looking at a node; otherwise only the named node passes."""
        if not pod.node_name:
            return [fw.SUCCESS] * len(nodes)
        return [self.filter(state, pod, n) for n in nodes]

    def events_to_register(self) -> Sequence[fw.ClusterEventWithHint]:
        """Upstream 1.35 (queueing hints on): added nodes, without a hint (a retry is cheap and the same as
        QUEUE); node updates cannot change a name."""
        return (fw.ClusterEventWithHint(fw.ClusterEvent("Node", "Add")),)


SPEC = fw.PluginSpec(name=NAME, plugin_class=NodeName, api_access=("nodes",))
