"""Property: every score plugin's batch hook ``score_nodes`` equals its per-node ``score`` on random clusters.

The batch loops are hand-unrolled for speed (cpu+memory special cases), so they are checked against the plain
per-node reference on random allocatable, existing pods and incoming pods -- including zero allocatable,
over-commit, request-less containers and explicit zeros.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from berth.schedule.framework import interface as fw
from berth.schedule.framework.types import NodeInfo, PodInfo
from berth.schedule.plugins import (
    concentrate,
    image_locality,
    node_affinity,
    node_resources_balanced_allocation,
    node_resources_fit,
    taint_toleration,
)

from .support import FakeHandle, container, fill_image_states, node, pod

RESOURCES = ("cpu", "memory", "ephemeral-storage", "example.com/gpu")
IMAGES = ("a", "b:1", "c", "d:2")

amounts = st.one_of(st.none(), st.integers(min_value=0, max_value=5000))


@st.composite
def requests(draw: st.DrawFn) -> dict[str, Any] | None:
    if draw(st.booleans()):
        return None  # a container without requests: non-zero defaults apply to scoring
    out: dict[str, Any] = {}
    for r in RESOURCES:
        v = draw(amounts)
        if v is not None:
            out[r] = f"{v}m" if r == "cpu" else v
    return out


@st.composite
def pods(draw: st.DrawFn, name: str) -> PodInfo:
    containers = [
        container(draw(requests()), name=f"c{i}", image=draw(st.sampled_from(IMAGES)))
        for i in range(draw(st.integers(min_value=0, max_value=3)))
    ]
    labels = {"app": draw(st.sampled_from(["x", "y"]))} if draw(st.booleans()) else {}
    tolerations = [
        {"key": "t", "operator": "Exists", "effect": draw(st.sampled_from(["", "PreferNoSchedule"]))}
    ]
    return pod(
        name,
        namespace=draw(st.sampled_from(["default", "other"])),
        containers=containers,
        labels=labels,
        tolerations=tolerations if draw(st.booleans()) else [],
    )


@st.composite
def nodes(draw: st.DrawFn) -> list[NodeInfo]:
    out = []
    for i in range(draw(st.integers(min_value=1, max_value=6))):
        alloc: dict[str, Any] = {"pods": 110}
        for r in RESOURCES:
            v = draw(st.one_of(st.none(), st.integers(min_value=0, max_value=20000)))
            if v is not None:
                alloc[r] = f"{v}m" if r == "cpu" else v
        existing = [draw(pods(f"e{i}-{j}")) for j in range(draw(st.integers(min_value=0, max_value=3)))]
        taints = [
            {"key": k, "effect": "PreferNoSchedule"}
            for k in draw(st.lists(st.sampled_from(["t", "u"]), max_size=2))
        ]
        images = [
            ([img], draw(st.integers(min_value=0, max_value=3000)) * 1024 * 1024)
            for img in draw(st.lists(st.sampled_from(IMAGES), max_size=3, unique=True))
        ]
        labels = {"zone": draw(st.sampled_from(["a", "b"])), "cores": str(draw(st.integers(0, 16)))}
        out.append(
            node(f"n{i}", allocatable=alloc, pods=existing, taints=taints, images=images, labels=labels)
        )
    if draw(st.booleans()):
        fill_image_states(out)
    return out


def fit_args(strategy: str, resources: tuple[str, ...], weights: list[int]) -> Any:
    raw: dict[str, Any] = {
        "type": strategy,
        "resources": [{"name": r, "weight": w} for r, w in zip(resources, weights, strict=False)],
    }
    if strategy == "RequestedToCapacityRatio":
        raw["requestedToCapacityRatio"] = {
            "shape": [
                {"utilization": 0, "score": 10},
                {"utilization": 60, "score": 3},
                {"utilization": 100, "score": 0},
            ]
        }
    args, problems = node_resources_fit.NodeResourcesFitArgs.decode({"scoringStrategy": raw}, "a")
    assert problems == []
    return args


def check(plugin: fw.Plugin, incoming: PodInfo, cluster: list[NodeInfo]) -> None:
    state = fw.CycleState()
    if isinstance(plugin, fw.PreScorePlugin) and plugin.pre_score(state, incoming, cluster).is_skip:
        return
    assert isinstance(plugin, fw.ScorePlugin)
    per_node = []
    for n in cluster:
        s, status = plugin.score(state, incoming, n)
        assert status.is_success
        per_node.append(s)
    batch, status = plugin.score_nodes(state, incoming, cluster)  # type: ignore[attr-defined]
    assert status.is_success
    assert batch == per_node


SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(
    incoming=pods("p"),
    cluster=nodes(),
    strategy=st.sampled_from(["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"]),
    resources=st.sampled_from(
        [
            ("cpu", "memory"),
            ("memory", "cpu"),
            ("cpu", "memory", "example.com/gpu"),
            ("ephemeral-storage",),
            ("cpu", "example.com/gpu"),
        ]
    ),
    weights=st.lists(st.integers(min_value=1, max_value=100), min_size=3, max_size=3),
)
def test_node_resources_fit(
    incoming: PodInfo, cluster: list[NodeInfo], strategy: str, resources: tuple[str, ...], weights: list[int]
) -> None:
    args = fit_args(strategy, resources, weights)
    check(node_resources_fit.NodeResourcesFit(args, FakeHandle(cluster)), incoming, cluster)


@SETTINGS
@given(
    incoming=pods("p"),
    cluster=nodes(),
    resources=st.sampled_from(
        [("cpu", "memory"), ("cpu", "memory", "ephemeral-storage"), ("example.com/gpu", "cpu"), ("memory",)]
    ),
)
def test_balanced_allocation(incoming: PodInfo, cluster: list[NodeInfo], resources: tuple[str, ...]) -> None:
    mod = node_resources_balanced_allocation
    args, problems = mod.NodeResourcesBalancedAllocationArgs.decode(
        {"resources": [{"name": r} for r in resources]}, "a"
    )
    assert problems == []
    check(mod.NodeResourcesBalancedAllocation(args, FakeHandle(cluster)), incoming, cluster)


@SETTINGS
@given(incoming=pods("p"), cluster=nodes())
def test_other_score_plugins(incoming: PodInfo, cluster: list[NodeInfo]) -> None:
    handle = FakeHandle(cluster)
    check(image_locality.ImageLocality(None, handle), incoming, cluster)
    check(taint_toleration.TaintToleration(None, handle), incoming, cluster)
    check(concentrate.Concentrate(concentrate.ConcentrateArgs("app"), handle), incoming, cluster)
    affinity = {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 3,
                    "preference": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]},
                },
                {
                    "weight": 5,
                    "preference": {"matchExpressions": [{"key": "cores", "operator": "Gt", "values": ["7"]}]},
                },
            ]
        }
    }
    with_affinity = pod("q", affinity=affinity)
    check(node_affinity.NodeAffinity(node_affinity.NodeAffinityArgs(), handle), with_affinity, cluster)
