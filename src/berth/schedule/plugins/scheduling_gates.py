"""SchedulingGates (PreEnqueue): a pod listing ``spec.schedulingGates`` is held out of activeQ until they are removed.

Why: KEP-3521 lets controllers create pods that must not be scheduled yet; the queue parks them as gated and the
scheduler never spends a cycle on them. Upstream ``plugins/schedulinggates/scheduling_gates.go``.
"""

from __future__ import annotations

from collections.abc import Sequence

from berth.schedule.framework import interface as fw
from berth.schedule.framework.types import PodInfo

NAME = "SchedulingGates"


def gated_message(gates: Sequence[str]) -> str:
    """Upstream wording: ``waiting for scheduling gates: [a b]``."""
    return f"waiting for scheduling gates: [{' '.join(gates)}]"


class SchedulingGates(fw.PreEnqueuePlugin):
    NAME = NAME

    def pre_enqueue(self, pod: PodInfo) -> fw.Status:
        gates = (pod.pod.get("spec") or {}).get("schedulingGates") or []
        if not gates:
            return fw.SUCCESS
        names = [str(g.get("name", "")) if isinstance(g, dict) else str(g) for g in gates]
        return fw.unresolvable(gated_message(names))

    def events_to_register(self) -> Sequence[fw.ClusterEvent]:
        return (fw.ClusterEvent("Pod", "UpdatePodSchedulingGatesEliminated"),)


SPEC = fw.PluginSpec(name=NAME, plugin_class=SchedulingGates, api_access=("pods",))
