"""NodeResourcesBalancedAllocation (PreScore, Score): prefer nodes whose cpu and memory (or configured resources)
would be used in similar proportions after placing the pod.

Why: a node full on cpu but empty on memory strands the memory. Upstream
``plugins/noderesources/balanced_allocation.go`` (1.34/1.35 formula): per resource ``f = min(req/alloc, 1)``
(floats, actual requests -- no non-zero defaults), two resources ``std = |f1 - f2| / 2``, more -> population
standard deviation; score ``int((1 - std) * 100)``. A pod requesting none of the resources skips this plugin
(PreScore Skip, kubernetes#129138) so best-effort pods are not all piled onto one node.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from berth.schedule.framework import interface as fw
from berth.schedule.framework.types import NodeInfo, PodInfo
from berth.schedule.plugins import helper
from berth.schedule.plugins import node_resources_fit as fit

NAME = "NodeResourcesBalancedAllocation"
ARGS_KIND = "NodeResourcesBalancedAllocationArgs"
PRE_SCORE_STATE_KEY = "PreScore" + NAME


@dataclass(frozen=True)
class NodeResourcesBalancedAllocationArgs:
    resources: tuple[tuple[str, int], ...] = fit.DEFAULT_RESOURCES

    @classmethod
    def decode(
        cls, raw: Mapping[str, Any] | None, path: str
    ) -> tuple[NodeResourcesBalancedAllocationArgs, list[str]]:
        problems: list[str] = []
        r = helper.ArgsReader(raw, path, problems, ARGS_KIND)
        resources = helper.decode_resource_specs(r.get_list("resources"), r.at("resources"), problems)
        r.finish()
        # Defaulting: no resources -> cpu+memory; weight 0 -> 1. Validation: unique names, weight exactly 1.
        specs = tuple((n, w or 1) for n, w in resources) if resources else fit.DEFAULT_RESOURCES
        seen: set[str] = set()
        for i, (name, weight) in enumerate(specs):
            p = f"{r.at('resources')}[{i}]"
            if name in seen:
                problems.append(helper.duplicate(f"{p}.name", name))
            seen.add(name)
            if weight != 1:
                problems.append(helper.invalid(f"{p}.weight", weight, "must be 1"))
        return cls(specs), problems

    def to_dict(self) -> dict[str, Any]:
        return {"resources": helper.resource_specs_to_dict(self.resources)}


def balanced_resource_score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
    fractions: list[float] = []
    total = 0.0
    for req, alloc in zip(requested, allocatable, strict=True):
        if alloc == 0:
            continue
        f = min(req / alloc, 1.0)
        total += f
        fractions.append(f)
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / len(fractions)
        std = math.sqrt(sum((f - mean) * (f - mean) for f in fractions) / len(fractions))
    return int((1 - std) * fw.MAX_NODE_SCORE)


class NodeResourcesBalancedAllocation(fw.PreScorePlugin, fw.ScorePlugin):
    NAME = NAME
    args: NodeResourcesBalancedAllocationArgs

    def __init__(self, args: NodeResourcesBalancedAllocationArgs | None, handle: fw.Handle) -> None:
        super().__init__(args or NodeResourcesBalancedAllocationArgs(), handle)
        self._names = [n for n, _ in self.args.resources]

    def pre_score(self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> fw.Status:
        requests = fit.pod_request_list(pod, self._names, non_zero=False)
        if not any(requests):
            return fw.skip()
        state.write(PRE_SCORE_STATE_KEY, requests)
        return fw.SUCCESS

    def score(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, fw.Status]:
        requests: list[int] | None = state.get(PRE_SCORE_STATE_KEY)
        if requests is None:
            requests = fit.pod_request_list(pod, self._names, non_zero=False)
        alloc, req = fit.allocatable_and_requested(node, self._names, requests, use_requested=True)
        return balanced_resource_score(req, alloc), fw.SUCCESS


SPEC = fw.PluginSpec(
    name=NAME,
    plugin_class=NodeResourcesBalancedAllocation,
    args_type=NodeResourcesBalancedAllocationArgs,
    reads=("nodes", "pods"),
)
