"""Two example scheduler plugins written in Python for berth (see docs/writing-plugins.md).

- ``RequireLabel`` (Filter, with args): a node fits only if it carries ``key: value``.
- ``FewestPods`` (PreScore + Score + NormalizeScore): prefer nodes running fewer pods.

Use them with ``--plugin berth_example_plugins:RequireLabel --plugin berth_example_plugins:FewestPods`` and this
directory on ``PYTHONPATH``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from berth.schedule.framework import interface as fw
from berth.schedule.framework.types import NodeInfo, PodInfo


@dataclass(frozen=True)
class RequireLabelArgs:
    """``pluginConfig[].args`` of RequireLabel: ``{key: string, value: string}``."""

    key: str = ""
    value: str = ""

    @classmethod
    def decode(cls, raw: Mapping[str, Any] | None, path: str) -> tuple[RequireLabelArgs, list[str]]:
        """Defaulted args plus every problem, each prefixed with its field path (never raises)."""
        raw = dict(raw or {})
        problems = [f'{path}: unknown field "{k}"' for k in sorted(set(raw) - {"key", "value"})]
        key, value = raw.get("key", ""), raw.get("value", "")
        if not isinstance(key, str) or not key:
            problems.append(f"{path}.key: Required value: the label key to require")
            key = ""
        if not isinstance(value, str):
            problems.append(f"{path}.value: Invalid value: {value!r}: must be a string")
            value = ""
        return cls(key, value), problems

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "value": self.value}


class RequireLabel(fw.FilterPlugin):
    """Filter: reject nodes without the configured label (UnschedulableAndUnresolvable: preemption cannot help)."""

    NAME = "RequireLabel"
    Args = RequireLabelArgs  # the registry reads the args type from here
    args: RequireLabelArgs

    def filter(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo) -> fw.Status:
        if node.labels.get(self.args.key) == self.args.value:
            return fw.SUCCESS
        return fw.unresolvable(f"node(s) didn't have label {self.args.key}={self.args.value}")

    def events_to_register(self) -> Sequence[fw.ClusterEvent]:
        # A node gaining the label (or a new node) may make a rejected pod schedulable.
        return (fw.ClusterEvent("Node", "Add"), fw.ClusterEvent("Node", "UpdateNodeLabel"))


class FewestPods(fw.PreScorePlugin, fw.ScorePlugin):
    """Score: fewer pods on the node is better; normalised so the emptiest feasible node scores 100."""

    NAME = "FewestPods"
    STATE_KEY = "PreScoreFewestPods"

    def pre_score(self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> fw.Status:
        # Computed once per pod, read by Score for every node.
        state.write(self.STATE_KEY, max((len(n.pods) for n in nodes), default=0))
        return fw.SUCCESS

    def score(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, fw.Status]:
        most: int = state.read(self.STATE_KEY)
        return most - len(node.pods), fw.SUCCESS

    def normalize_score(self, state: fw.CycleState, pod: PodInfo, scores: list[fw.NodeScore]) -> fw.Status:
        top = max((s.score for s in scores), default=0)
        for s in scores:
            s.score = fw.MAX_NODE_SCORE * s.score // top if top else fw.MAX_NODE_SCORE
        return fw.SUCCESS
