"""The nominator: pods preemption promised room on a node (upstream ``backend/queue/nominator.go``, the part
Filter needs).

Why: a preemptor is nominated to the node where its victims are being evicted; until it is bound there, pods of
lower priority must not take that room (Filter counts the nominated pods in:
``Framework.run_filter_with_nominated_pods``).
"""

from __future__ import annotations

from berth.schedule.framework.types import PodInfo


class Nominator:
    """node name -> the pods nominated to it, each kept bound to the node (so Filter counts it without a copy)."""

    def __init__(self) -> None:
        self._by_node: dict[str, dict[str, PodInfo]] = {}

    def __bool__(self) -> bool:
        return bool(self._by_node)

    def nominate(self, pod: PodInfo, node_name: str) -> None:
        self.unnominate(pod.key)
        self._by_node.setdefault(node_name, {})[pod.key] = pod.with_node(node_name)

    def unnominate(self, key: str) -> None:
        for node_name in [n for n, pods in self._by_node.items() if key in pods]:
            del self._by_node[node_name][key]
            if not self._by_node[node_name]:
                del self._by_node[node_name]

    def is_nominated(self, key: str) -> bool:
        return any(key in pods for pods in self._by_node.values())

    def promised_nodes(self, pod: PodInfo) -> list[str]:
        """The nodes where another pod of equal or higher priority is nominated (Filter must count it in there)."""
        return [
            node_name
            for node_name, pods in self._by_node.items()
            if any(other.key != pod.key and other.priority >= pod.priority for other in pods.values())
        ]

    def nominated_on(self, node_name: str) -> list[PodInfo]:
        """The pods nominated to ``node_name`` (the frameworks' ``run_filter_with_nominated_pods`` reads them)."""
        pods = self._by_node.get(node_name)
        return list(pods.values()) if pods else []
