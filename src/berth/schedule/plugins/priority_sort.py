"""PrioritySort (QueueSort): higher ``spec.priority`` first, then the pod that entered the queue earlier.

Why: it is the one order of the scheduler's single activeQ (every profile must use the same queue sort). Upstream
``plugins/queuesort/priority_sort.go`` compares priority then the queue timestamp; berth adds the queue's
insertion ``sequence`` as a last, deterministic tie-breaker so simulations are reproducible.
"""

from __future__ import annotations

from berth.schedule.framework import interface as fw
from berth.schedule.framework.types import QueuedPodInfo

NAME = "PrioritySort"


class PrioritySort(fw.QueueSortPlugin):
    NAME = NAME

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        pa, pb = a.pod_info.priority, b.pod_info.priority
        if pa != pb:
            return pa > pb
        if a.timestamp != b.timestamp:
            return a.timestamp < b.timestamp
        return a.sequence < b.sequence

    def sort_key(self, qp: QueuedPodInfo) -> tuple[int, float, int]:
        """A key with exactly :meth:`less`'s order (the queue's heap compares these tuples instead of calling
        :meth:`less`)."""
        return (-qp.pod_info.priority, qp.timestamp, qp.sequence)


SPEC = fw.PluginSpec(name=NAME, plugin_class=PrioritySort, api_access=("pods",))
