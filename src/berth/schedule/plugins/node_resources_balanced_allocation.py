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

import numpy as np

from berth.schedule import vector
from berth.schedule.framework import interface as fw
from berth.schedule.framework.columns import IntArray, NodeArrays, Rows
from berth.schedule.framework.types import NodeInfo, PodInfo
from berth.schedule.plugins import helper
from berth.schedule.plugins import node_resources_fit as fit
from berth.schedule.vector import kernels

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
    """``int((1 - std) * 100)`` over the fractions ``min(req/alloc, 1)`` of resources the node has."""
    fractions = [
        (1.0 if req > alloc else req / alloc)
        for req, alloc in zip(requested, allocatable, strict=True)
        if alloc
    ]
    n = len(fractions)
    if n == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif n > 2:
        mean = sum(fractions) / n
        std = math.sqrt(sum((f - mean) * (f - mean) for f in fractions) / n)
    else:
        std = 0.0
    return int((1 - std) * fw.MAX_NODE_SCORE)


def _balanced_or_undecided(arrays: NodeArrays, rows: Rows, items: Sequence[tuple[str, int]]) -> IntArray:
    """:func:`kernels.balanced_scores` with -1 for rows it cannot decide (scores are never negative)."""
    scores, undecided = kernels.balanced_scores(arrays, rows, items)
    out: IntArray = np.where(undecided, -1, scores)
    return out


class NodeResourcesBalancedAllocation(fw.PreScorePlugin, fw.ScorePlugin):
    NAME = NAME
    args: NodeResourcesBalancedAllocationArgs

    def __init__(self, args: NodeResourcesBalancedAllocationArgs | None, handle: fw.Handle) -> None:
        super().__init__(args or NodeResourcesBalancedAllocationArgs(), handle)
        self._names = [n for n, _ in self.args.resources]
        self._allocation = fit.ResourceAllocation(self._names, use_requested=True)
        # Per distinct pod requests: the (resource, request) pairs scored, None when beyond the kernels.
        self._items: dict[tuple[int, ...], tuple[tuple[str, int], ...] | None] = {}

    def pre_score(self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> fw.Status:
        requests = fit.pod_request_list(pod, self._names, non_zero=False)
        if not any(requests):
            return fw.skip()
        state.write(PRE_SCORE_STATE_KEY, requests)
        return fw.SUCCESS

    def _pod_requests(self, state: fw.CycleState, pod: PodInfo) -> list[int]:
        requests: list[int] | None = state.get(PRE_SCORE_STATE_KEY)
        if requests is None:  # PreScore disabled in this profile
            requests = fit.pod_request_list(pod, self._names, non_zero=False)
        return requests

    def score(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, fw.Status]:
        req, alloc = self._allocation.vectors(node, self._pod_requests(state, pod))
        return balanced_resource_score(req, alloc), fw.SUCCESS

    def score_array(
        self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo], arrays: NodeArrays, rows: Rows
    ) -> IntArray | None:
        """The framework's fused Score hook (vectorised path, rows that are not exotic): raw scores as an int64
        array, equal to :meth:`score` per node (a memo column keyed by the pod's requests; rows the kernel cannot
        decide are asked per node)."""
        requests = self._pod_requests(state, pod)
        shape = tuple(requests)
        if shape in self._items:
            items = self._items[shape]
        else:  # a new request shape: are its amounts safe for the kernels, and what does it score?
            if len(self._items) >= fit.CACHED_SHAPES:
                self._items.clear()
            items = self._items[shape] = (
                tuple(
                    (name, pod_req)
                    for name, _, pod_req, _ in self._allocation.scored_items(requests, self.args.resources)
                )
                if kernels.pod_values_fit(requests)
                else None
            )
        if items is None:
            return None
        column = arrays.memo_column(
            ("balanced", items),
            lambda r: _balanced_or_undecided(arrays, r, items),
            lambda node: self.score(state, pod, node)[0],
        )
        scores: IntArray = column[rows]
        if int(scores.min()) < 0:  # rows the kernel cannot decide: per node (on a copy: a slice is a view)
            scores = scores.copy()
            for j in np.flatnonzero(scores < 0).tolist():
                scores[j] = self.score(state, pod, nodes[j])[0]
        return scores

    def score_nodes(
        self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[list[int], fw.Status]:
        """All nodes at once (the framework's batch hook); equal to :meth:`score` per node. float64 array arithmetic
        on the vectorised path (same operations, same order as :func:`balanced_resource_score`)."""
        requests = self._pod_requests(state, pod)
        if not vector.enabled(self.handle) or not kernels.pod_values_fit(requests):
            return [self.score(state, pod, n)[0] for n in nodes], fw.SUCCESS
        items = [
            (name, pod_req)
            for name, _, pod_req, _ in self._allocation.scored_items(requests, self.args.resources)
        ]
        arrays = vector.arrays_for(self.handle, self)
        rows = arrays.rows(nodes, state)
        scores, undecided = kernels.balanced_scores(arrays, rows, items)
        out: list[int] = scores.tolist()
        for j in np.flatnonzero(undecided | arrays.exotic[rows]).tolist():
            out[j] = self.score(state, pod, nodes[j])[0]
        return out, fw.SUCCESS


SPEC = fw.PluginSpec(
    name=NAME,
    plugin_class=NodeResourcesBalancedAllocation,
    args_type=NodeResourcesBalancedAllocationArgs,
    api_access=("nodes", "pods"),
)
