"""Concentrate (PreScore, Score) -- berth's own plugin: put pods that share a label value on the same node.

Why: kube-scheduler's defaults spread a workload; some workloads (caches warming each other, licence-per-node
software, the "academy-concentrate" seed exercise) want the opposite. Choices, following the spec's suggested
contract (``kube-scheduler.md`` 4.4):

- args ``{labelKey: string}``; a missing or empty key is a validation error
  (``<path>.labelKey: Required value: labelKey is required``);
- PreScore returns Skip when the incoming pod lacks ``labelKey``, so such a pod scores 0 on every node;
- raw score = pods already on the node (assumed ones included -- ``NodeInfo.pods`` holds them) that are in the
  SAME namespace, not terminating, and whose ``labels[labelKey]`` equals the incoming pod's value;
- NormalizeScore = ``DefaultNormalizeScore(reverse=False)``: the node with the most such pods gets 100, others
  proportionally (integer division); when no node has any, all stay 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from berth.schedule import vector
from berth.schedule.framework import interface as fw
from berth.schedule.framework.columns import IntArray
from berth.schedule.framework.types import NodeInfo, PodInfo
from berth.schedule.plugins import helper
from berth.schedule.vector import kernels

NAME = "Concentrate"
ARGS_KIND = "ConcentrateArgs"
PRE_SCORE_STATE_KEY = "PreScore" + NAME


@dataclass(frozen=True)
class ConcentrateArgs:
    label_key: str = ""

    @classmethod
    def decode(cls, raw: Mapping[str, Any] | None, path: str) -> tuple[ConcentrateArgs, list[str]]:
        problems: list[str] = []
        r = helper.ArgsReader(raw, path, problems, ARGS_KIND)
        key = r.get_str("labelKey", "")
        r.finish()
        if not key:
            problems.append(helper.required(r.at("labelKey"), "labelKey is required"))
        else:
            problems.extend(helper.qualified_name_problems(key, r.at("labelKey")))
        return cls(key), problems

    def to_dict(self) -> dict[str, Any]:
        return {"labelKey": self.label_key}


def count_matching(node: NodeInfo, namespace: str, key: str, value: str) -> int:
    """Non-terminating pods on ``node`` in ``namespace`` with ``labels[key] == value``."""
    n = 0
    for p in node.pods:
        if p.namespace == namespace and not p.terminating and p.labels.get(key) == value:
            n += 1
    return n


class Concentrate(fw.PreScorePlugin, fw.ScorePlugin):
    NAME = NAME
    args: ConcentrateArgs

    def pre_score(self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> fw.Status:
        value = pod.labels.get(self.args.label_key)
        if value is None:
            return fw.skip()
        state.write(PRE_SCORE_STATE_KEY, value)
        return fw.SUCCESS

    def score(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, fw.Status]:
        value = state.get(PRE_SCORE_STATE_KEY)
        if value is None:
            value = pod.labels.get(self.args.label_key)
            if value is None:
                return 0, fw.SUCCESS
        return count_matching(node, pod.namespace, self.args.label_key, value), fw.SUCCESS

    def score_nodes(
        self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[list[int], fw.Status]:
        """All nodes at once (the framework's batch hook); equal to :meth:`score` per node."""
        value = state.get(PRE_SCORE_STATE_KEY)
        if value is None:
            value = pod.labels.get(self.args.label_key)
            if value is None:
                return [0] * len(nodes), fw.SUCCESS
        key, namespace = self.args.label_key, pod.namespace
        return [count_matching(n, namespace, key, value) if n.pods else 0 for n in nodes], fw.SUCCESS

    def normalize_score(self, state: fw.CycleState, pod: PodInfo, scores: list[fw.NodeScore]) -> fw.Status:
        helper.default_normalize_score(scores, reverse=False)
        return fw.SUCCESS

    def normalize_array(self, state: fw.CycleState, pod: PodInfo, raw: IntArray) -> IntArray | None:
        """NormalizeScore on an int64 array (the framework's fused hook); equal to :meth:`normalize_score`."""
        return kernels.default_normalize_array(raw, reverse=False)

    def normalize_scores(
        self, state: fw.CycleState, pod: PodInfo, raw: list[int]
    ) -> tuple[list[int], fw.Status]:
        """NormalizeScore on a plain list (the framework's batch hook); equal to :meth:`normalize_score`."""
        out = kernels.default_normalize(raw, reverse=False) if vector.enabled(self.handle) else None
        if out is None:
            scores = [fw.NodeScore(str(i), s) for i, s in enumerate(raw)]
            status = self.normalize_score(state, pod, scores)
            return [s.score for s in scores], status
        return out, fw.SUCCESS


SPEC = fw.PluginSpec(name=NAME, plugin_class=Concentrate, args_type=ConcentrateArgs, api_access=("pods",))
