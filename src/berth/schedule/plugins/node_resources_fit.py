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

from berth.schedule.framework import interface as fw
from berth.schedule.framework.types import CPU, EPHEMERAL_STORAGE, MEMORY, NodeInfo, PodInfo
from berth.schedule.plugins import helper

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
    """Extended resources, hugepages and attachable volumes (what NodeInfo tracks as scalar resources)."""
    return (
        is_extended_resource_name(name)
        or name.startswith(_HUGE_PAGES_PREFIX)
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
        problems.append(helper.required(f"{rtcr_path}.shape", "at least one point must be specified"))
    return ScoringStrategy(type_ or LEAST_ALLOCATED, specs, shape)


# --- scoring arithmetic (shared with NodeResourcesBalancedAllocation) ----------------------------------------------

Scorer = Callable[[Sequence[int], Sequence[int]], int]


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
    weights = [w for _, w in resources]

    def score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for i, alloc in enumerate(allocatable):
            if alloc == 0:
                continue
            node_score += least_requested_score(requested[i], alloc) * weights[i]
            weight_sum += weights[i]
        return helper.go_div(node_score, weight_sum) if weight_sum else 0

    return score


def most_allocated_scorer(resources: Sequence[tuple[str, int]]) -> Scorer:
    weights = [w for _, w in resources]

    def score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for i, alloc in enumerate(allocatable):
            if alloc == 0:
                continue
            node_score += most_requested_score(requested[i], alloc) * weights[i]
            weight_sum += weights[i]
        return helper.go_div(node_score, weight_sum) if weight_sum else 0

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
    weights = [w for _, w in resources]

    def resource_score(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return broken_linear(scaled, MAX_UTILIZATION)
        return broken_linear(scaled, helper.go_div(requested * MAX_UTILIZATION, capacity))

    def score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for i, alloc in enumerate(allocatable):
            if alloc == 0:
                continue
            rs = resource_score(requested[i], alloc)
            if rs > 0:
                node_score += rs * weights[i]
                weight_sum += weights[i]
        if weight_sum == 0:
            return 0
        return helper.go_round(node_score / weight_sum)

    return score


def pod_request_list(pod: PodInfo, names: Sequence[str], non_zero: bool) -> list[int]:
    """The pod's request per scored resource (non-zero defaults for cpu/memory when ``non_zero``)."""
    source = pod.non_zero_requests if non_zero else pod.requests
    return [source.get(n, 0) for n in names]


def allocatable_and_requested(
    node: NodeInfo, names: Sequence[str], pod_requests: Sequence[int], use_requested: bool
) -> tuple[list[int], list[int]]:
    """Upstream ``calculateResourceAllocatableRequest`` for every scored resource.

    A resource is left out (allocatable 0) when the node has none of it, or when it is a scalar resource the pod
    does not request. cpu/memory use the node's non-zero sums unless ``use_requested`` (BalancedAllocation).
    """
    alloc_out = [0] * len(names)
    req_out = [0] * len(names)
    node_alloc = node.allocatable
    for i, name in enumerate(names):
        pod_req = pod_requests[i]
        if name in (CPU, MEMORY):
            used = node.requested.get(name, 0) if use_requested else node.non_zero_requested.get(name, 0)
        elif name == EPHEMERAL_STORAGE:
            used = node.requested.get(name, 0)
        elif is_scalar_resource_name(name):
            if pod_req == 0 or name not in node_alloc:
                continue
            used = node.requested.get(name, 0)
        else:
            continue
        alloc = node_alloc.get(name, 0)
        if alloc == 0:
            continue
        alloc_out[i] = alloc
        req_out[i] = used + pod_req
    return alloc_out, req_out


# --- the plugin ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _PreFilterState:
    """The pod's actual requests that Filter checks, split the way upstream's ``Resource`` does."""

    milli_cpu: int
    memory: int
    ephemeral_storage: int
    scalars: tuple[tuple[str, int], ...]

    @property
    def empty(self) -> bool:
        return not (self.milli_cpu or self.memory or self.ephemeral_storage or self.scalars)


class NodeResourcesFit(fw.PreFilterPlugin, fw.FilterPlugin, fw.PreScorePlugin, fw.ScorePlugin):
    NAME = NAME
    args: NodeResourcesFitArgs

    def __init__(self, args: NodeResourcesFitArgs | None, handle: fw.Handle) -> None:
        super().__init__(args or NodeResourcesFitArgs(), handle)
        strategy = self.args.scoring_strategy
        self._ignored = frozenset(self.args.ignored_resources)
        self._ignored_groups = frozenset(self.args.ignored_resource_groups)
        self._names = [n for n, _ in strategy.resources]
        if strategy.type == MOST_ALLOCATED:
            self._scorer = most_allocated_scorer(strategy.resources)
        elif strategy.type == REQUESTED_TO_CAPACITY_RATIO:
            self._scorer = requested_to_capacity_ratio_scorer(strategy.resources, strategy.shape or ((0, 0),))
        else:
            self._scorer = least_allocated_scorer(strategy.resources)

    # Filter ----------------------------------------------------------------------------------------------------

    def _pre_filter_state(self, pod: PodInfo) -> _PreFilterState:
        req = pod.requests
        scalars = tuple(
            sorted(
                (n, v)
                for n, v in req.items()
                if v != 0 and is_scalar_resource_name(n) and not self._ignored_name(n)
            )
        )
        return _PreFilterState(req.get(CPU, 0), req.get(MEMORY, 0), req.get(EPHEMERAL_STORAGE, 0), scalars)

    def _ignored_name(self, name: str) -> bool:
        if not is_extended_resource_name(name):
            return False
        return name in self._ignored or name.split("/", 1)[0] in self._ignored_groups

    def pre_filter(
        self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[fw.PreFilterResult | None, fw.Status]:
        state.write(PRE_FILTER_STATE_KEY, self._pre_filter_state(pod))
        return None, fw.SUCCESS

    def filter(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo) -> fw.Status:
        s: _PreFilterState | None = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            s = self._pre_filter_state(pod)
        alloc = node.allocatable
        reasons: list[str] = []
        unresolvable = False
        if len(node.pods) + 1 > alloc.get("pods", 0):
            reasons.append(ERR_REASON_TOO_MANY_PODS)
        if not s.empty:
            used = node.requested
            for name, want in (
                (CPU, s.milli_cpu),
                (MEMORY, s.memory),
                (EPHEMERAL_STORAGE, s.ephemeral_storage),
            ):
                if want > 0:
                    have = alloc.get(name, 0)
                    if want > have - used.get(name, 0):
                        reasons.append(insufficient(name))
                        unresolvable = unresolvable or want > have
            for name, want in s.scalars:
                have = alloc.get(name, 0)
                if want > have - used.get(name, 0):
                    reasons.append(insufficient(name))
                    unresolvable = unresolvable or want > have
        if not reasons:
            return fw.SUCCESS
        if unresolvable:
            return fw.unresolvable(*reasons)
        return fw.unschedulable(*reasons)

    # Score -----------------------------------------------------------------------------------------------------

    def pre_score(self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> fw.Status:
        state.write(PRE_SCORE_STATE_KEY, pod_request_list(pod, self._names, non_zero=True))
        return fw.SUCCESS

    def score(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, fw.Status]:
        pod_requests: list[int] | None = state.get(PRE_SCORE_STATE_KEY)
        if pod_requests is None:
            pod_requests = pod_request_list(pod, self._names, non_zero=True)
        alloc, req = allocatable_and_requested(node, self._names, pod_requests, use_requested=False)
        return self._scorer(req, alloc), fw.SUCCESS

    def events_to_register(self) -> Sequence[fw.ClusterEvent]:
        return (
            fw.ClusterEvent("Pod", "Delete"),
            fw.ClusterEvent("Pod", "UpdatePodScaleDown"),
            fw.ClusterEvent("Node", "Add"),
            fw.ClusterEvent("Node", "UpdateNodeAllocatable"),
        )


SPEC = fw.PluginSpec(
    name=NAME, plugin_class=NodeResourcesFit, args_type=NodeResourcesFitArgs, reads=("nodes", "pods")
)
