"""NodeResourcesFit (PreFilter, Filter, PreScore, Score): does the pod's request fit what the node has left, and
how full would the node be afterwards.

Why: it is the plugin that keeps nodes from being over-committed and, through its scoring strategy, decides
between spreading (LeastAllocated, the default), packing (MostAllocated) or a custom utilisation curve
(RequestedToCapacityRatio). Upstream ``plugins/noderesources/fit.go``, ``resource_allocation.go``,
``least_allocated.go``, ``most_allocated.go``, ``requested_to_capacity_ratio.go``.

Filter uses the pod's actual requests (``PodInfo.requests``: init/sidecar containers and overhead already folded
in): ``Too many pods`` when the pod count is at allocatable; then every resource with ``req > allocatable -
requested`` is reported (``Insufficient <name>``); UnschedulableAndUnresolvable when some request exceeds the
node's whole allocatable, else Unschedulable. Scoring uses the non-zero requests for cpu/memory (100m / 200MiB
per container that sets none), with Go integer arithmetic.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from berth.schedule import vector
from berth.schedule.framework import interface as fw
from berth.schedule.framework.columns import BoolArray, IntArray, NodeArrays, Rows
from berth.schedule.framework.types import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, NodeInfo, PodInfo
from berth.schedule.plugins import helper
from berth.schedule.vector import kernels

NAME = "NodeResourcesFit"
ARGS_KIND = "NodeResourcesFitArgs"
ERR_REASON_TOO_MANY_PODS = "Too many pods"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
SCORING_STRATEGY_TYPES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)
DEFAULT_RESOURCES: tuple[tuple[str, int], ...] = ((CPU, 1), (MEMORY, 1))
MAX_UTILIZATION = 100

_HUGE_PAGES_PREFIX = "hugepages-"
_ATTACHABLE_VOLUMES_PREFIX = "attachable-volumes-"
_DEFAULT_NAMESPACE_PREFIX = "kubernetes.io/"
_REQUESTS_PREFIX = "requests."


def insufficient(resource: str) -> str:
    """The reason string for one resource, e.g. ``Insufficient cpu``."""
    return f"Insufficient {resource}"


def is_extended_resource_name(name: str) -> bool:
    """Upstream ``IsExtendedResourceName``: has a domain other than kubernetes.io and is a valid quota name."""
    if "/" not in name or _DEFAULT_NAMESPACE_PREFIX in name or name.startswith(_REQUESTS_PREFIX):
        return False
    return not helper.qualified_name_problems(_REQUESTS_PREFIX + name, "")


def is_scalar_resource_name(name: str) -> bool:
    """Upstream ``IsScalarResourceName``: extended resources, hugepages, prefixed native resources (any name
    containing ``kubernetes.io/``, upstream ``IsPrefixedNativeResource``) and attachable volumes -- what NodeInfo
    tracks as scalar resources and Filter checks."""
    return (
        is_extended_resource_name(name)
        or name.startswith(_HUGE_PAGES_PREFIX)
        or _DEFAULT_NAMESPACE_PREFIX in name
        or name.startswith(_ATTACHABLE_VOLUMES_PREFIX)
    )


# --- args ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScoringStrategy:
    type: str = LEAST_ALLOCATED
    resources: tuple[tuple[str, int], ...] = DEFAULT_RESOURCES
    shape: tuple[tuple[int, int], ...] | None = None  # requestedToCapacityRatio.shape

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, "resources": helper.resource_specs_to_dict(self.resources)}
        if self.shape is not None:
            out["requestedToCapacityRatio"] = {"shape": helper.shape_to_list(self.shape)}
        return out


@dataclass(frozen=True)
class NodeResourcesFitArgs:
    ignored_resources: tuple[str, ...] = ()
    ignored_resource_groups: tuple[str, ...] = ()
    scoring_strategy: ScoringStrategy = field(default_factory=ScoringStrategy)

    @classmethod
    def decode(cls, raw: Mapping[str, Any] | None, path: str) -> tuple[NodeResourcesFitArgs, list[str]]:
        problems: list[str] = []
        r = helper.ArgsReader(raw, path, problems, ARGS_KIND)
        ignored = r.get_str_list("ignoredResources")
        groups = r.get_str_list("ignoredResourceGroups")
        raw_strategy = r.get_mapping("scoringStrategy")
        r.finish()
        for i, res in enumerate(ignored):
            problems.extend(helper.qualified_name_problems(res, f"{r.at('ignoredResources')}[{i}]"))
        for i, group in enumerate(groups):
            p = f"{r.at('ignoredResourceGroups')}[{i}]"
            if "/" in group:
                problems.append(helper.invalid(p, group, "resource group name can't contain '/'"))
            problems.extend(helper.qualified_name_problems(group, p))
        strategy = ScoringStrategy()
        if raw_strategy is not None:
            strategy = _decode_strategy(raw_strategy, r.at("scoringStrategy"), problems)
        return cls(ignored, groups, strategy), problems

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"scoringStrategy": self.scoring_strategy.to_dict()}
        if self.ignored_resources:
            out["ignoredResources"] = list(self.ignored_resources)
        if self.ignored_resource_groups:
            out["ignoredResourceGroups"] = list(self.ignored_resource_groups)
        return out


def _decode_strategy(raw: Mapping[str, Any], path: str, problems: list[str]) -> ScoringStrategy:
    r = helper.ArgsReader(raw, path, problems)
    type_ = r.get_str("type", "")
    resources = helper.decode_resource_specs(r.get_list("resources"), r.at("resources"), problems)
    rtcr = r.get_mapping("requestedToCapacityRatio")
    r.finish()
    shape: tuple[tuple[int, int], ...] | None = None
    rtcr_path = r.at("requestedToCapacityRatio")
    if rtcr is not None:
        rr = helper.ArgsReader(rtcr, rtcr_path, problems)
        shape = helper.decode_shape(rr.get_list("shape") or [], rr.at("shape"), problems)
        rr.finish()
    if type_ not in SCORING_STRATEGY_TYPES:
        problems.append(helper.not_supported(r.at("type"), type_, SCORING_STRATEGY_TYPES))
    # Defaulting (SetDefaults_NodeResourcesFitArgs): no resources -> cpu+memory; weight 0 -> 1.
    specs = tuple((n, w or 1) for n, w in resources) if resources else DEFAULT_RESOURCES
    for i, (name, weight) in enumerate(specs):
        if weight <= 0 or weight > 100:
            problems.append(
                helper.invalid(
                    f"{r.at('resources')}[{i}].weight",
                    weight,
                    f"resource weight of {name} not in valid range (0, 100]",
                )
            )
    if shape is not None:
        problems.extend(helper.shape_problems(shape, f"{rtcr_path}.shape"))
    elif type_ == REQUESTED_TO_CAPACITY_RATIO:
        # 1.35 crashes here (nil pointer); later upstream (kubernetes#132120) reports it with these words.
        problems.append(helper.required(rtcr_path, "must be specified when type is RequestedToCapacityRatio"))
    return ScoringStrategy(type_ or LEAST_ALLOCATED, specs, shape)


# --- scoring arithmetic (shared with NodeResourcesBalancedAllocation) ----------------------------------------------

Scorer = Callable[[Sequence[int], Sequence[int]], int]


def _div(a: int, b: int) -> int:
    """Go int64 division for a positive divisor (the hot-path form of :func:`helper.go_div`)."""
    return a // b if a >= 0 else -(-a // b)


def least_requested_score(requested: int, capacity: int) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return helper.go_div((capacity - requested) * fw.MAX_NODE_SCORE, capacity)


def most_requested_score(requested: int, capacity: int) -> int:
    if capacity == 0:
        return 0
    if requested > capacity:  # pods without requests count non-zero defaults, so this happens
        requested = capacity
    return helper.go_div(requested * fw.MAX_NODE_SCORE, capacity)


def least_allocated_scorer(resources: Sequence[tuple[str, int]]) -> Scorer:
    """Weighted mean of ``(alloc - req) * 100 / alloc`` (0 when over capacity) over resources the node has."""
    weights = tuple(w for _, w in resources)

    def score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for req, alloc, weight in zip(requested, allocatable, weights, strict=True):
            if alloc == 0:
                continue
            if req <= alloc:
                node_score += _div((alloc - req) * 100, alloc) * weight
            weight_sum += weight
        return _div(node_score, weight_sum) if weight_sum else 0

    return score


def most_allocated_scorer(resources: Sequence[tuple[str, int]]) -> Scorer:
    """Weighted mean of ``min(req, alloc) * 100 / alloc`` over resources the node has."""
    weights = tuple(w for _, w in resources)

    def score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for req, alloc, weight in zip(requested, allocatable, weights, strict=True):
            if alloc == 0:
                continue
            node_score += _div((alloc if req > alloc else req) * 100, alloc) * weight
            weight_sum += weight
        return _div(node_score, weight_sum) if weight_sum else 0

    return score


def broken_linear(shape: Sequence[tuple[int, int]], p: int) -> int:
    """Upstream ``BuildBrokenLinearFunction``: piecewise-linear through the points, flat outside them."""
    for i, (u, s) in enumerate(shape):
        if p <= u:
            if i == 0:
                return s
            u0, s0 = shape[i - 1]
            return s0 + helper.go_div((s - s0) * (p - u0), u - u0)
    return shape[-1][1]


def requested_to_capacity_ratio_scorer(
    resources: Sequence[tuple[str, int]], shape: Sequence[tuple[int, int]]
) -> Scorer:
    """Shape scores (0..10) are scaled to 0..100; only resources scoring > 0 enter the weighted mean (rounded)."""
    scale = fw.MAX_NODE_SCORE // helper.MAX_CUSTOM_PRIORITY_SCORE
    scaled = [(u, s * scale) for u, s in shape]
    weights = tuple(w for _, w in resources)

    def resource_score(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return broken_linear(scaled, MAX_UTILIZATION)
        return broken_linear(scaled, helper.go_div(requested * MAX_UTILIZATION, capacity))

    def score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for req, alloc, weight in zip(requested, allocatable, weights, strict=True):
            if alloc == 0:
                continue
            rs = resource_score(req, alloc)
            if rs > 0:
                node_score += rs * weight
                weight_sum += weight
        if weight_sum == 0:
            return 0
        return helper.go_round(node_score / weight_sum)

    return score


def pod_request_list(pod: PodInfo, names: Sequence[str], non_zero: bool) -> list[int]:
    """The pod's request per scored resource (non-zero defaults for cpu/memory when ``non_zero``)."""
    source = pod.non_zero_requests if non_zero else pod.requests
    return [source.get(n, 0) for n in names]


# How a scored resource's node usage is read (upstream ``calculateResourceAllocatableRequest``).
_CPU_MEMORY, _EPHEMERAL, _SCALAR, _UNSCORED = range(4)


def _kind(name: str) -> int:
    if name in (CPU, MEMORY):
        return _CPU_MEMORY
    if name == EPHEMERAL_STORAGE:
        return _EPHEMERAL
    if is_scalar_resource_name(name):
        return _SCALAR
    return _UNSCORED


class ResourceAllocation:
    """The per-node (requested, allocatable) vectors a resource scorer reads (upstream ``resourceAllocationScorer``).

    A resource is left out (allocatable 0) when the node has none of it, when it is a scalar resource the pod does
    not request, or when it is not a resource the scheduler tracks. cpu/memory usage comes from the node's
    non-zero sums unless ``use_requested`` (BalancedAllocation uses the actual sums).
    """

    __slots__ = ("_kinds", "names", "use_requested")

    def __init__(self, names: Sequence[str], use_requested: bool) -> None:
        self.names = tuple(names)
        self._kinds = tuple(_kind(n) for n in self.names)
        self.use_requested = use_requested

    def scored_items(
        self, pod_requests: Sequence[int], resources: Sequence[tuple[str, int]]
    ) -> list[tuple[str, bool, int, int]]:
        """(name, reads cpu/memory sums, pod request, weight) of the resources a node can score for this pod.

        Drops what :meth:`vectors` always leaves out whatever the node: untracked names and scalar resources the
        pod does not request. Used by batch scoring loops.
        """
        out: list[tuple[str, bool, int, int]] = []
        for (name, weight), kind, pod_req in zip(resources, self._kinds, pod_requests, strict=True):
            if kind == _UNSCORED or (kind == _SCALAR and pod_req == 0):
                continue
            out.append((name, kind == _CPU_MEMORY and not self.use_requested, pod_req, weight))
        return out

    def vectors(self, node: NodeInfo, pod_requests: Sequence[int]) -> tuple[list[int], list[int]]:
        """(requested incl. the pod, allocatable) per scored resource."""
        node_alloc = node.allocatable
        requested = node.requested
        cpu_mem = requested if self.use_requested else node.non_zero_requested
        req_out: list[int] = []
        alloc_out: list[int] = []
        for name, kind, pod_req in zip(self.names, self._kinds, pod_requests, strict=True):
            if kind == _CPU_MEMORY:
                used = cpu_mem.get(name, 0)
            elif kind == _EPHEMERAL or (kind == _SCALAR and pod_req != 0):
                used = requested.get(name, 0)
            else:
                req_out.append(0)
                alloc_out.append(0)
                continue
            alloc = node_alloc.get(name, 0)
            alloc_out.append(alloc)
            req_out.append(used + pod_req if alloc else 0)
        return req_out, alloc_out


def allocatable_and_requested(
    node: NodeInfo, names: Sequence[str], pod_requests: Sequence[int], use_requested: bool
) -> tuple[list[int], list[int]]:
    """(allocatable, requested) vectors for one node; see :class:`ResourceAllocation`."""
    req, alloc = ResourceAllocation(names, use_requested).vectors(node, pod_requests)
    return alloc, req


CACHED_SHAPES = 256  # distinct pod request shapes remembered per plugin (then forgotten all at once)

# --- the plugin ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _PreFilterState:
    """What Filter checks: the pod's non-zero actual requests in upstream's order (cpu, memory, ephemeral-storage,
    then scalar resources that are not ignored). ``empty`` mirrors upstream's "the pod requests nothing" early exit
    (which looks at every scalar, ignored or not)."""

    checks: tuple[tuple[str, int], ...]
    empty: bool


def _fit_state(req: Mapping[str, int], ignored: Callable[[str], bool] | None = None) -> _PreFilterState:
    """What Filter checks for requests ``req``, leaving out the scalar resources ``ignored`` names."""
    checks = [(n, req.get(n, 0)) for n in (CPU, MEMORY, EPHEMERAL_STORAGE) if req.get(n, 0) > 0]
    scalars = sorted((n, v) for n, v in req.items() if v != 0 and is_scalar_resource_name(n))
    checks.extend((n, v) for n, v in scalars if ignored is None or not ignored(n))
    empty = not (req.get(CPU, 0) or req.get(MEMORY, 0) or req.get(EPHEMERAL_STORAGE, 0) or scalars)
    return _PreFilterState(tuple(checks), empty)


def is_resource_scale_down(target: PodInfo, before: PodInfo, after: PodInfo) -> bool:
    """Did an assigned pod's update lower a resource ``target`` requests (upstream
    ``isSchedulableAfterPodScaleDown``; requests count a resize in progress, as ``PodInfo.requests`` does)?"""
    old, new = before.requests, after.requests
    for name, want in target.requests.items():
        if want == 0 or not (name in (CPU, MEMORY, EPHEMERAL_STORAGE) or is_scalar_resource_name(name)):
            continue
        if old.get(name, 0) > new.get(name, 0):
            return True
    return False


def requested_allocatable_increased(s: _PreFilterState, before: NodeInfo, after: NodeInfo) -> bool:
    """Upstream ``haveAnyRequestedResourcesIncreased``: the node takes more pods, or more of something the pod
    requests (``s`` built without ignored resources)."""
    old, new = before.allocatable, after.allocatable
    if new.get(PODS, 0) > old.get(PODS, 0):
        return True
    if s.empty:
        return False
    return any(new.get(name, 0) > old.get(name, 0) for name, _ in s.checks)


def _fits(s: _PreFilterState, node: NodeInfo) -> bool:
    """Room for one more pod and for every checked request (upstream ``fitsRequest`` finding nothing)."""
    alloc = node.allocatable
    if len(node.pods) >= alloc.get(PODS, 0):
        return False
    if not s.empty:
        used = node.requested
        for name, want in s.checks:
            if want > alloc.get(name, 0) - used.get(name, 0):
                return False
    return True


class NodeResourcesFit(fw.PreFilterPlugin, fw.FilterPlugin, fw.PreScorePlugin, fw.ScorePlugin):
    NAME = NAME
    args: NodeResourcesFitArgs

    def __init__(self, args: NodeResourcesFitArgs | None, handle: fw.Handle) -> None:
        super().__init__(args or NodeResourcesFitArgs(), handle)
        strategy = self.args.scoring_strategy
        self._ignored = frozenset(self.args.ignored_resources)
        self._ignored_groups = frozenset(self.args.ignored_resource_groups)
        self._ignores_nothing = not self._ignored and not self._ignored_groups
        self._names = [n for n, _ in strategy.resources]
        self._allocation = ResourceAllocation(self._names, use_requested=False)
        if strategy.type == MOST_ALLOCATED:
            self._scorer = most_allocated_scorer(strategy.resources)
        elif strategy.type == REQUESTED_TO_CAPACITY_RATIO:
            self._scorer = requested_to_capacity_ratio_scorer(strategy.resources, strategy.shape or ((0, 0),))
        else:
            self._scorer = least_allocated_scorer(strategy.resources)
        self._last: tuple[fw.CycleState | None, _PreFilterState] = (None, _PreFilterState((), True))
        # Per distinct pod requests: the PreFilter state and the scored items (see _pre_filter_state, score_array).
        self._states: dict[tuple[tuple[str, int], ...], _PreFilterState] = {}
        self._items: dict[tuple[int, ...], tuple[tuple[str, bool, int, int], ...] | None] = {}
        # The raw objects of the event a hint is asked about, parsed once for all the pods it is asked for.
        self._hint_old_pod = helper.LastParsed(PodInfo)
        self._hint_new_pod = helper.LastParsed(PodInfo)
        self._hint_old_node = helper.LastParsed(NodeInfo)
        self._hint_new_node = helper.LastParsed(NodeInfo)

    # Filter ----------------------------------------------------------------------------------------------------

    def _pre_filter_state(self, pod: PodInfo) -> _PreFilterState:
        """What Filter checks for ``pod``, remembered per distinct requests (the pods of a workload share them)."""
        key = tuple(pod.requests.items())
        s = self._states.get(key)
        if s is None:
            if len(self._states) >= CACHED_SHAPES:
                self._states.clear()
            s = self._states[key] = _fit_state(pod.requests, self._ignored_name)
        return s

    def _ignored_name(self, name: str) -> bool:
        if not is_extended_resource_name(name):
            return False
        return name in self._ignored or name.split("/", 1)[0] in self._ignored_groups

    def pre_filter(
        self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[fw.PreFilterResult | None, fw.Status]:
        s = self._pre_filter_state(pod)
        state.write(PRE_FILTER_STATE_KEY, s)
        self._last = (state, s)  # Filter runs per node with this same state object: skip the lookup
        if vector.enabled(self.handle):
            vector.arrays_for(self.handle, self).forget_memo()  # a new cycle: node lists are new
        return None, fw.SUCCESS

    def filter(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo) -> fw.Status:
        last = self._last
        if last[0] is state:
            s = last[1]
        else:
            s = state.get(PRE_FILTER_STATE_KEY) or self._pre_filter_state(pod)
        return fw.SUCCESS if _fits(s, node) else self._rejection(s, node)

    @staticmethod
    def _rejection(s: _PreFilterState, node: NodeInfo) -> fw.Status:
        """Every reason the node fails (upstream keeps them all); Unresolvable if a request exceeds allocatable."""
        alloc = node.allocatable
        reasons: list[str] = []
        unresolvable = False
        if len(node.pods) + 1 > alloc.get("pods", 0):
            reasons.append(ERR_REASON_TOO_MANY_PODS)
        if not s.empty:
            used = node.requested
            for name, want in s.checks:
                have = alloc.get(name, 0)
                if want > have - used.get(name, 0):
                    reasons.append(insufficient(name))
                    unresolvable = unresolvable or want > have
        return fw.unresolvable(*reasons) if unresolvable else fw.unschedulable(*reasons)

    # Score -----------------------------------------------------------------------------------------------------

    def pre_score(self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> fw.Status:
        state.write(PRE_SCORE_STATE_KEY, pod_request_list(pod, self._names, non_zero=True))
        return fw.SUCCESS

    def _pod_requests(self, state: fw.CycleState, pod: PodInfo) -> list[int]:
        pod_requests: list[int] | None = state.get(PRE_SCORE_STATE_KEY)
        if pod_requests is None:  # PreScore disabled in this profile
            pod_requests = pod_request_list(pod, self._names, non_zero=True)
        return pod_requests

    def score(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, fw.Status]:
        req, alloc = self._allocation.vectors(node, self._pod_requests(state, pod))
        return self._scorer(req, alloc), fw.SUCCESS

    def filter_nodes(self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> list[fw.Status]:
        """Filter for all ``nodes`` (the framework's batch hook): one vector comparison per checked resource on the
        vectorised path; the per-node :meth:`filter` on the reference path and for the nodes that fail (so their
        reasons are the reference's)."""
        last = self._last
        s = last[1] if last[0] is state else (state.get(PRE_FILTER_STATE_KEY) or self._pre_filter_state(pod))
        if not vector.enabled(self.handle) or not kernels.pod_values_fit([v for _, v in s.checks]):
            return [self.filter(state, pod, n) for n in nodes]
        arrays = vector.arrays_for(self.handle, self)
        rows = arrays.rows(nodes, state)
        ok = kernels.fit_mask(arrays, rows, s.checks, s.empty) & ~arrays.exotic[rows]
        out = [fw.SUCCESS] * len(nodes)
        for j in np.flatnonzero(~ok).tolist():
            out[j] = self.filter(state, pod, nodes[j])
        return out

    def filter_mask(
        self, state: fw.CycleState, pod: PodInfo, arrays: NodeArrays, rows: Rows
    ) -> BoolArray | bool | None:
        """The framework's fused Filter hook (vectorised path, rows that are not exotic): True where the node has
        room; the framework asks :meth:`filter` about the others. None: amounts the kernel cannot hold. The verdict
        per row is a memo column keyed by the pod's checks (recomputed only for rows refreshed since)."""
        last = self._last
        s = last[1] if last[0] is state else (state.get(PRE_FILTER_STATE_KEY) or self._pre_filter_state(pod))
        if not kernels.pod_values_fit([v for _, v in s.checks]):
            return None
        checks, empty = s.checks, s.empty
        column = arrays.memo_column(
            ("fit", checks, empty),
            lambda r: kernels.fit_mask(arrays, r, checks, empty),
            lambda node: self.filter(state, pod, node).is_success,
        )
        mask: BoolArray = column[rows]
        return mask

    def score_array(
        self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo], arrays: NodeArrays, rows: Rows
    ) -> IntArray | None:
        """The framework's fused Score hook (vectorised path, rows that are not exotic): raw scores as an int64
        array, equal to :meth:`score` per node (a memo column keyed by the pod's requests). None for
        RequestedToCapacityRatio or amounts beyond the kernels."""
        strategy = self.args.scoring_strategy.type
        if strategy not in (LEAST_ALLOCATED, MOST_ALLOCATED):
            return None
        pod_requests = self._pod_requests(state, pod)
        shape = tuple(pod_requests)
        if shape in self._items:
            items = self._items[shape]
        else:  # a new request shape: are its amounts safe for the kernels, and what does it score?
            if len(self._items) >= CACHED_SHAPES:
                self._items.clear()
            resources = self.args.scoring_strategy.resources
            items = self._items[shape] = (
                tuple(self._allocation.scored_items(pod_requests, resources))
                if kernels.pod_values_fit(pod_requests)
                else None
            )
        if items is None:
            return None
        least = strategy == LEAST_ALLOCATED
        column = arrays.memo_column(
            ("allocated", least, items),
            lambda r: kernels.allocated_scores(arrays, r, items, least),
            lambda node: self.score(state, pod, node)[0],
        )
        scores: IntArray = column[rows]
        return scores

    def score_nodes(
        self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[list[int], fw.Status]:
        """All nodes at once (the framework's batch hook); equal to :meth:`score` per node.

        LeastAllocated/MostAllocated are integer array arithmetic on the vectorised path; RequestedToCapacityRatio,
        the reference path and exotic nodes go through :meth:`score`.
        """
        pod_requests = self._pod_requests(state, pod)
        strategy = self.args.scoring_strategy.type
        if (
            strategy not in (LEAST_ALLOCATED, MOST_ALLOCATED)
            or not vector.enabled(self.handle)
            or not kernels.pod_values_fit(pod_requests)
        ):
            return [self.score(state, pod, n)[0] for n in nodes], fw.SUCCESS
        items = self._allocation.scored_items(pod_requests, self.args.scoring_strategy.resources)
        arrays = vector.arrays_for(self.handle, self)
        rows = arrays.rows(nodes, state)
        out: list[int] = kernels.allocated_scores(arrays, rows, items, strategy == LEAST_ALLOCATED).tolist()
        for j in np.flatnonzero(arrays.exotic[rows]).tolist():
            out[j] = self.score(state, pod, nodes[j])[0]
        return out, fw.SUCCESS

    # Requeueing ------------------------------------------------------------------------------------------------

    def events_to_register(self) -> Sequence[fw.ClusterEventWithHint]:
        """Upstream 1.35 (queueing hints and InPlacePodVerticalScaling on): pods deleted or scaled down, nodes
        added or whose allocatable changed, each with a hint."""
        pod_hint, node_hint = self.is_schedulable_after_pod_event, self.is_schedulable_after_node_change
        return (
            fw.ClusterEventWithHint(fw.ClusterEvent("Pod", "Delete"), pod_hint),
            fw.ClusterEventWithHint(fw.ClusterEvent("Pod", "UpdatePodScaleDown"), pod_hint),
            fw.ClusterEventWithHint(fw.ClusterEvent("Node", "Add"), node_hint),
            fw.ClusterEventWithHint(fw.ClusterEvent("Node", "UpdateNodeAllocatable"), node_hint),
        )

    def is_schedulable_after_pod_event(self, pod: PodInfo, old: Any, new: Any) -> fw.QueueingHint:
        """A pod was deleted or scaled down (upstream ``isSchedulableAfterPodEvent``). A deleted pod frees room
        only if it held some: it was assigned or nominated. A scale-down helps when it is this pod's own, or an
        assigned pod's that lowers a resource this pod requests."""
        if new is None:
            return helper.queue_if(bool(helper.raw_node_name(old) or helper.raw_nominated_node_name(old)))
        if helper.raw_pod_uid(new) == pod.uid:
            return fw.QueueingHint.QUEUE
        if not helper.raw_node_name(new):
            return fw.QueueingHint.QUEUE_SKIP
        return helper.queue_if(is_resource_scale_down(pod, self._hint_old_pod(old), self._hint_new_pod(new)))

    def is_schedulable_after_node_change(self, pod: PodInfo, old: Any, new: Any) -> fw.QueueingHint:
        """A node was added or its allocatable changed (upstream ``isSchedulableAfterNodeChange``): only if the
        pod fits the node when empty (ignoredResources are not ignored here, as upstream's ``isFit``), and for an
        update only if the allocatable of something the pod requests (or the pod count) grew. An update without
        the old node (berth's generic ``Node/Update``) counts as an add."""
        # Without ignored resources that is Filter's own (remembered) state.
        s = self._pre_filter_state(pod) if self._ignores_nothing else _fit_state(pod.requests)
        after = self._hint_new_node(new)
        if not _fits(s, after):
            return fw.QueueingHint.QUEUE_SKIP
        if old is None:
            return fw.QueueingHint.QUEUE
        return helper.queue_if(requested_allocatable_increased(s, self._hint_old_node(old), after))


SPEC = fw.PluginSpec(
    name=NAME, plugin_class=NodeResourcesFit, args_type=NodeResourcesFitArgs, api_access=("nodes", "pods")
)
