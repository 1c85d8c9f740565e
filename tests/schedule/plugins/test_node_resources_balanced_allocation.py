"""NodeResourcesBalancedAllocation: the 1.34/1.35 std-dev formula on actual requests, the best-effort Skip, args."""

from __future__ import annotations

from typing import Any

import pytest

from berth.schedule.framework import interface as fw
from berth.schedule.framework.types import NodeInfo, PodInfo
from berth.schedule.plugins import node_resources_balanced_allocation as ba

from .support import FakeHandle, container, node, pod, run_score


def plugin(args: dict[str, Any] | None = None) -> ba.NodeResourcesBalancedAllocation:
    decoded, problems = ba.NodeResourcesBalancedAllocationArgs.decode(args, "args")
    assert problems == []
    built = ba.SPEC.new(decoded, FakeHandle())
    assert isinstance(built, ba.NodeResourcesBalancedAllocation)
    return built


def req_pod(*requests: dict[str, Any], name: str = "p") -> PodInfo:
    return pod(name, containers=[container(r, name=f"c{i}") for i, r in enumerate(requests)])


def sized(
    name: str,
    cpu_milli: int,
    memory: int,
    pods: list[PodInfo] | None = None,
    extra: dict[str, Any] | None = None,
) -> NodeInfo:
    alloc: dict[str, Any] = {"cpu": f"{cpu_milli}m", "memory": memory, "pods": 100, **(extra or {})}
    return node(name, allocatable=alloc, pods=pods or [])


CPU_AND_MEMORY = [{"cpu": "1000m", "memory": 2000}, {"cpu": "2000m", "memory": 3000}]


@pytest.mark.parametrize(
    ("args", "incoming", "nodes", "want"),
    [
        # balanced_allocation_test.go: fractions 0.75 / 0.5 -> std 0.125 -> 87; 0.5 / 0.5 -> 100
        (None, req_pod(*CPU_AND_MEMORY), [sized("n1", 4000, 10000), sized("n2", 6000, 10000)], [87, 100]),
        # existing pods count with their actual requests: cpu 6000/10000, memory 5000/20000 -> std 0.175 -> 82
        (
            None,
            req_pod({"cpu": "3000m", "memory": "0"}),
            [sized("n1", 10000, 20000, [req_pod(*CPU_AND_MEMORY, name="e")])],
            [82],
        ),
        # over-capacity fractions are capped at 1: cpu 8000/6000 -> 1, memory 5000/10000 -> 0.5 -> 75
        (None, req_pod({"cpu": "8000m", "memory": 5000}), [sized("n1", 6000, 10000)], [75]),
        # a lone request on one resource: cpu 3000/4000 -> 0.75, memory 0 -> std 0.375 -> 62
        (None, req_pod({"cpu": "3000m"}), [sized("n1", 4000, 10000)], [62]),
        # three resources: population std of 0.5, 0.5, 0.2 = 0.1414 -> 85
        (
            {"resources": [{"name": "cpu"}, {"name": "memory"}, {"name": "ephemeral-storage"}]},
            req_pod({"cpu": "2000m", "memory": 5000, "ephemeral-storage": 2000}),
            [sized("n1", 4000, 10000, extra={"ephemeral-storage": 10000})],
            [85],
        ),
        # a node lacking a resource leaves it out: only cpu -> std 0 -> 100
        (
            {"resources": [{"name": "cpu"}, {"name": "example.com/gpu"}]},
            req_pod({"cpu": "2000m", "example.com/gpu": 1}),
            [sized("n1", 4000, 10000)],
            [100],
        ),
    ],
    ids=[
        "upstream-87-100",
        "existing-pods",
        "capped-at-one",
        "one-resource-requested",
        "three-resources",
        "missing-resource-skipped",
    ],
)
def test_score(
    args: dict[str, Any] | None, incoming: PodInfo, nodes: list[NodeInfo], want: list[int]
) -> None:
    assert run_score(plugin(args), incoming, nodes, normalize=False) == want


@pytest.mark.parametrize(
    ("incoming", "skip"),
    [(req_pod({}), True), (req_pod({"cpu": "0", "memory": "0"}), True), (req_pod({"cpu": "1m"}), False)],
    ids=["best-effort", "explicit-zero", "tiny-request"],
)
def test_pre_score_skips_best_effort_pods(incoming: PodInfo, skip: bool) -> None:
    status = plugin().pre_score(fw.CycleState(), incoming, [sized("n", 1000, 1000)])
    assert status.is_skip is skip


@pytest.mark.parametrize(
    ("raw", "problems"),
    [
        (
            {"resources": [{"name": "cpu", "weight": 2}]},
            ["a.resources[0].weight: Invalid value: 2: must be 1"],
        ),
        ({"resources": [{"name": "cpu"}, {"name": "cpu"}]}, ['a.resources[1].name: Duplicate value: "cpu"']),
        ({"resources": [{"name": "cpu", "wieght": 1}]}, ['a.resources[0]: unknown field "wieght"']),
        ({"foo": 1}, ['a: unknown field "foo"']),
    ],
    ids=["weight-not-one", "duplicate", "typo-nested", "unknown-field"],
)
def test_args_problems(raw: dict[str, Any], problems: list[str]) -> None:
    assert ba.NodeResourcesBalancedAllocationArgs.decode(raw, "a")[1] == problems


def test_default_args() -> None:
    args, problems = ba.NodeResourcesBalancedAllocationArgs.decode({}, "a")
    assert problems == []
    assert args.to_dict() == {"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}
