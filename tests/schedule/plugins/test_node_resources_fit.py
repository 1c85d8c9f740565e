"""NodeResourcesFit: the filter's verdicts and reasons, the three scoring strategies with upstream's numeric
vectors (least/most_allocated_test.go, requested_to_capacity_ratio_test.go), and args decoding/validation."""

from __future__ import annotations

from typing import Any

import pytest

from berth.schedule.framework import interface as fw
from berth.schedule.framework.types import NodeInfo, PodInfo
from berth.schedule.plugins import node_resources_fit as fit

from .support import FakeHandle, container, node, pod, run_filter, run_score

GI = 1024**3


def plugin(args: dict[str, Any] | None = None) -> fit.NodeResourcesFit:
    decoded, problems = fit.NodeResourcesFitArgs.decode(args, "args")
    assert problems == []
    built = fit.SPEC.new(decoded, FakeHandle())
    assert isinstance(built, fit.NodeResourcesFit)
    return built


def req_pod(*requests: dict[str, Any], name: str = "p", **kw: Any) -> PodInfo:
    return pod(name, containers=[container(r, name=f"c{i}") for i, r in enumerate(requests)], **kw)


# --- Filter --------------------------------------------------------------------------------------------------------

CLASSIC_INIT: dict[str, Any] = dict(
    init_containers=[
        container({"cpu": "2", "memory": "1Gi"}, name="i1"),
        container({"cpu": "2", "memory": "3Gi"}, name="i2"),
    ],
    containers=[
        container({"cpu": "2", "memory": "1Gi"}, name="c1"),
        container({"cpu": "1", "memory": "1Gi"}, name="c2"),
    ],
)


@pytest.mark.parametrize(
    ("incoming", "alloc", "existing", "code", "reasons"),
    [
        (
            req_pod({"cpu": "1", "memory": "1Gi"}),
            {"cpu": "4", "memory": "8Gi", "pods": 10},
            [],
            fw.Code.SUCCESS,
            (),
        ),
        (
            req_pod({"cpu": "2"}),
            {"cpu": "4", "memory": "8Gi", "pods": 10},
            [req_pod({"cpu": "3"}, name="e")],
            fw.Code.UNSCHEDULABLE,
            ("Insufficient cpu",),
        ),
        (
            req_pod({"cpu": "5"}),
            {"cpu": "4", "memory": "8Gi", "pods": 10},
            [],
            fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            ("Insufficient cpu",),
        ),
        (
            req_pod({"cpu": "2", "memory": "5Gi"}),
            {"cpu": "4", "memory": "8Gi", "pods": 10},
            [req_pod({"cpu": "3", "memory": "4Gi"}, name="e")],
            fw.Code.UNSCHEDULABLE,
            ("Insufficient cpu", "Insufficient memory"),
        ),
        (
            req_pod({"cpu": "2", "memory": "9Gi"}),
            {"cpu": "4", "memory": "8Gi", "pods": 10},
            [req_pod({"cpu": "3"}, name="e")],
            fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            ("Insufficient cpu", "Insufficient memory"),
        ),
        (
            req_pod({"cpu": "1"}),
            {"cpu": "4", "memory": "8Gi", "pods": 1},
            [req_pod({}, name="e")],
            fw.Code.UNSCHEDULABLE,
            ("Too many pods",),
        ),
        (
            req_pod({}),
            {"cpu": "4", "memory": "8Gi", "pods": 1},
            [req_pod({}, name="e")],
            fw.Code.UNSCHEDULABLE,
            ("Too many pods",),
        ),
        (
            req_pod({"cpu": "8"}),
            {"cpu": "4", "memory": "8Gi", "pods": 1},
            [req_pod({}, name="e")],
            fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            ("Too many pods", "Insufficient cpu"),
        ),
        (req_pod({}), {"cpu": "0", "memory": "0"}, [], fw.Code.UNSCHEDULABLE, ("Too many pods",)),
        (req_pod({}), {"cpu": "0", "memory": "0", "pods": 1}, [], fw.Code.SUCCESS, ()),
        (pod(**CLASSIC_INIT), {"cpu": "3", "memory": "3Gi", "pods": 10}, [], fw.Code.SUCCESS, ()),
        (
            pod(**CLASSIC_INIT),
            {"cpu": "2900m", "memory": "3Gi", "pods": 10},
            [],
            fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            ("Insufficient cpu",),
        ),
        (
            pod(
                init_containers=[container({"cpu": "1"}, name="side", restart_policy="Always")],
                containers=[container({"cpu": "1"})],
            ),
            {"cpu": "1500m", "memory": "1Gi", "pods": 10},
            [],
            fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            ("Insufficient cpu",),
        ),
        (
            req_pod({"cpu": "1"}, overhead={"cpu": "500m"}),
            {"cpu": "1200m", "memory": "1Gi", "pods": 10},
            [],
            fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            ("Insufficient cpu",),
        ),
        (
            req_pod({"ephemeral-storage": "2Gi"}),
            {"cpu": "1", "memory": "1Gi", "ephemeral-storage": "1Gi", "pods": 10},
            [],
            fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            ("Insufficient ephemeral-storage",),
        ),
        (
            req_pod({"example.com/gpu": 1}),
            {"cpu": "1", "memory": "1Gi", "pods": 10},
            [],
            fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            ("Insufficient example.com/gpu",),
        ),
        (
            req_pod({"example.com/gpu": 1}),
            {"cpu": "1", "memory": "1Gi", "example.com/gpu": 1, "pods": 10},
            [req_pod({"example.com/gpu": 1}, name="e")],
            fw.Code.UNSCHEDULABLE,
            ("Insufficient example.com/gpu",),
        ),
        (
            req_pod({"hugepages-2Mi": "4Mi"}),
            {"cpu": "1", "memory": "1Gi", "hugepages-2Mi": "2Mi", "pods": 10},
            [],
            fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            ("Insufficient hugepages-2Mi",),
        ),
    ],
    ids=[
        "fits",
        "insufficient-cpu",
        "cpu-above-allocatable",
        "cpu-and-memory",
        "memory-above-allocatable",
        "too-many-pods",
        "too-many-pods-empty-request",
        "all-failures-reported",
        "no-pods-allocatable",
        "zero-request-fits-empty-node",
        "init-containers-classic",
        "init-containers-classic-short",
        "sidecar-adds",
        "overhead-adds",
        "ephemeral-storage",
        "extended-missing",
        "extended-used",
        "hugepages",
    ],
)
def test_filter(
    incoming: PodInfo, alloc: dict[str, Any], existing: list[PodInfo], code: fw.Code, reasons: tuple[str, ...]
) -> None:
    status = run_filter(plugin(), incoming, node(allocatable=alloc, pods=existing))
    assert status.code is code
    assert status.reasons == reasons


@pytest.mark.parametrize(
    ("args", "fits"),
    [
        (None, False),
        ({"ignoredResources": ["example.com/gpu"]}, True),
        ({"ignoredResourceGroups": ["example.com"]}, True),
        ({"ignoredResourceGroups": ["other.io"]}, False),
    ],
    ids=["checked-by-default", "ignored-resource", "ignored-group", "other-group"],
)
def test_ignored_extended_resources(args: dict[str, Any] | None, fits: bool) -> None:
    status = run_filter(
        plugin(args), req_pod({"example.com/gpu": 2}), node(allocatable={"cpu": "1", "pods": 5})
    )
    assert status.is_success is fits


def test_insufficient_reason_helper() -> None:
    assert fit.insufficient("cpu") == "Insufficient cpu"
    assert fit.ERR_REASON_TOO_MANY_PODS == "Too many pods"


# --- Score ---------------------------------------------------------------------------------------------------------

CPU_AND_MEMORY = [{"cpu": "1000m", "memory": 2000}, {"cpu": "2000m", "memory": 3000}]  # 3000m / 5000
CPU_ONLY = [
    {"cpu": "1000m", "memory": "0"},
    {"cpu": "2000m", "memory": "0"},
]  # 3000m / 0 (explicit zero memory)


def sized(
    name: str,
    cpu_milli: int,
    memory: int,
    pods: list[PodInfo] | None = None,
    extra: dict[str, Any] | None = None,
) -> NodeInfo:
    alloc: dict[str, Any] = {"cpu": f"{cpu_milli}m", "memory": memory, "pods": 100, **(extra or {})}
    return node(name, allocatable=alloc, pods=pods or [])


def no_container_pod(name: str = "p") -> PodInfo:
    return pod(name, containers=[])


LEAST = {"scoringStrategy": {"type": "LeastAllocated"}}
MOST = {"scoringStrategy": {"type": "MostAllocated"}}


@pytest.mark.parametrize(
    ("args", "incoming", "nodes", "want"),
    [
        (LEAST, req_pod(*CPU_AND_MEMORY), [sized("n1", 4000, 10000), sized("n2", 6000, 10000)], [37, 50]),
        (
            {
                "scoringStrategy": {
                    "type": "LeastAllocated",
                    "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 2}],
                }
            },
            req_pod(*CPU_AND_MEMORY),
            [sized("n1", 4000, 10000), sized("n2", 6000, 10000)],
            [41, 50],
        ),
        (
            LEAST,
            no_container_pod(),
            [
                sized("n1", 10000, 20000, [req_pod(*CPU_ONLY, name="a"), req_pod(*CPU_ONLY, name="b")]),
                sized("n2", 10000, 20000, [req_pod(*CPU_ONLY, name="a"), req_pod(*CPU_AND_MEMORY, name="b")]),
            ],
            [70, 57],
        ),
        (
            LEAST,
            req_pod(*CPU_ONLY),
            [
                sized("n1", 4000, 10000, [req_pod(*CPU_ONLY, name="a")]),
                sized("n2", 4000, 10000, [req_pod(*CPU_AND_MEMORY, name="a")]),
            ],
            [50, 25],
        ),
        (
            {
                "scoringStrategy": {
                    "type": "LeastAllocated",
                    "resources": [
                        {"name": "cpu", "weight": 1},
                        {"name": "memory", "weight": 1},
                        {"name": "intel.com/foo", "weight": 1},
                    ],
                }
            },
            req_pod({"cpu": "2000m", "memory": 5000, "intel.com/foo": 2}),
            [
                sized("n1", 4000, 10000, extra={"intel.com/foo": 4}),
                sized("n2", 4000, 10000, extra={"intel.com/foo": 10}),
            ],
            [50, 60],
        ),
        (MOST, req_pod(*CPU_AND_MEMORY), [sized("n1", 4000, 10000), sized("n2", 6000, 10000)], [62, 50]),
        (
            MOST,
            req_pod({"cpu": "2000m", "memory": 4000}),
            [sized("n1", 5000, 10000, [req_pod({"cpu": "3000m", "memory": 5000}, name="a")])],
            [95],
        ),
        (
            {
                "scoringStrategy": {
                    "type": "MostAllocated",
                    "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 2}],
                }
            },
            req_pod(*CPU_AND_MEMORY),
            [sized("n1", 4000, 10000), sized("n2", 6000, 10000)],
            [58, 50],
        ),
        (
            MOST,
            req_pod({}),
            [
                node(
                    "full",
                    allocatable={"cpu": "250m", "memory": "1000Mi", "pods": 10},
                    pods=[req_pod({}, name="a"), req_pod({}, name="b")],
                ),
                node("empty", allocatable={"cpu": "250m", "memory": "1000Mi", "pods": 10}),
            ],
            [80, 30],
        ),
        (
            {
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "requestedToCapacityRatio": {
                        "shape": [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
                    },
                }
            },
            req_pod(*CPU_AND_MEMORY),
            [sized("n1", 4000, 10000), sized("n2", 6000, 10000)],
            [38, 50],
        ),
        (
            {
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "resources": [{"name": "intel.com/foo", "weight": 1}],
                    "requestedToCapacityRatio": {
                        "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 1}]
                    },
                }
            },
            req_pod({"intel.com/foo": 2}),
            [
                sized("a", 4000, 10000, extra={"intel.com/foo": 8}),
                sized("b", 4000, 10000, extra={"intel.com/foo": 4}),
                sized(
                    "c", 4000, 10000, [req_pod({"intel.com/foo": 2}, name="e")], extra={"intel.com/foo": 4}
                ),
            ],
            [2, 5, 10],
        ),
        # Resources scoring 0 leave both sums: cpu scores 0 (full), memory 50 -> 50, not 25.
        (
            {
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "requestedToCapacityRatio": {
                        "shape": [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
                    },
                }
            },
            req_pod({"cpu": "4000m", "memory": 5000}),
            [sized("n1", 4000, 10000)],
            [50],
        ),
        # A scalar resource the pod does not request is not scored; a node without it is skipped.
        (
            {
                "scoringStrategy": {
                    "type": "LeastAllocated",
                    "resources": [
                        {"name": "cpu", "weight": 1},
                        {"name": "memory", "weight": 1},
                        {"name": "intel.com/foo", "weight": 1},
                    ],
                }
            },
            req_pod(*CPU_AND_MEMORY),
            [sized("n1", 4000, 10000, extra={"intel.com/foo": 4})],
            [37],
        ),
    ],
    ids=[
        "least-37-50",
        "least-mem-weight-2",
        "least-requestless-pod",
        "least-over-capacity",
        "least-extended",
        "most-62-50",
        "most-95",
        "most-mem-weight-2",
        "most-non-zero-defaults-80-30",
        "rtcr-38-50",
        "rtcr-extended-2-5-10",
        "rtcr-zero-terms-dropped",
        "unrequested-scalar-skipped",
    ],
)
def test_score(args: dict[str, Any], incoming: PodInfo, nodes: list[NodeInfo], want: list[int]) -> None:
    assert run_score(plugin(args), incoming, nodes) == want


def test_score_uses_non_zero_requests() -> None:
    # A request-less pod counts 100m / 200MiB for scoring: on a 1-cpu / 1000MiB node LeastAllocated gives
    # cpu (1000-100)*100/1000 = 90, memory (1000-200)*100/1000 = 80 -> 85.
    n = node("n", allocatable={"cpu": "1", "memory": "1000Mi", "pods": 10})
    assert run_score(plugin(), req_pod({}), [n]) == [85]


@pytest.mark.parametrize(
    ("shape", "points"),
    [
        ([(10, 1), (90, 9)], {15: 1, 20: 2, 89: 8, 100: 9, 0: 1}),
        ([(0, 2), (40, 10), (100, 0)], {20: 6, 30: 8, 70: 5, 75: 5, 100: 0}),
    ],
    ids=["rising", "rise-and-fall"],
)
def test_broken_linear(shape: list[tuple[int, int]], points: dict[int, int]) -> None:
    assert {p: fit.broken_linear(shape, p) for p in points} == points


# --- args ----------------------------------------------------------------------------------------------------------


def test_default_args() -> None:
    args, problems = fit.NodeResourcesFitArgs.decode(None, "args")
    assert problems == []
    assert args.to_dict() == {
        "scoringStrategy": {
            "type": "LeastAllocated",
            "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
        }
    }


def test_args_round_trip() -> None:
    raw = {
        "ignoredResources": ["example.com/foo"],
        "ignoredResourceGroups": ["example.org"],
        "scoringStrategy": {
            "type": "RequestedToCapacityRatio",
            "resources": [{"name": "cpu", "weight": 3}],
            "requestedToCapacityRatio": {
                "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
            },
        },
    }
    args, problems = fit.NodeResourcesFitArgs.decode(raw, "args")
    assert problems == []
    assert args.to_dict() == raw
    assert fit.NodeResourcesFitArgs.decode(args.to_dict(), "args")[0] == args


@pytest.mark.parametrize(
    ("raw", "problems"),
    [
        (
            {"scoringStrategy": {"type": "Unknown"}},
            [
                'a.scoringStrategy.type: Unsupported value: "Unknown": supported values: "LeastAllocated", "MostAllocated", '
                '"RequestedToCapacityRatio"'
            ],
        ),
        (
            {"scoringStrategy": {"resources": [{"name": "cpu"}]}},
            [
                'a.scoringStrategy.type: Unsupported value: "": supported values: "LeastAllocated", "MostAllocated", '
                '"RequestedToCapacityRatio"'
            ],
        ),
        (
            {
                "scoringStrategy": {
                    "type": "MostAllocated",
                    "resources": [{"name": "cpu", "weight": 101}, {"name": "memory", "weight": -1}],
                }
            },
            [
                "a.scoringStrategy.resources[0].weight: Invalid value: 101: resource weight of cpu not in valid range (0, 100]",
                "a.scoringStrategy.resources[1].weight: Invalid value: -1: resource weight of memory not in valid range (0, 100]",
            ],
        ),
        (
            {"scoringStrategy": {"type": "RequestedToCapacityRatio"}},
            [
                "a.scoringStrategy.requestedToCapacityRatio: Required value: must be specified when type is "
                "RequestedToCapacityRatio"
            ],
        ),
        (
            {
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "requestedToCapacityRatio": {
                        "shape": [{"utilization": 60, "score": 1}, {"utilization": 50, "score": 11}]
                    },
                }
            },
            [
                "a.scoringStrategy.requestedToCapacityRatio.shape[1].utilization: Invalid value: 50: values must "
                "be sorted in increasing order",
                "a.scoringStrategy.requestedToCapacityRatio.shape[1].score: Invalid value: 11: not in valid range [0, 10]",
            ],
        ),
        (
            {"ignoredResourceGroups": ["example.com/foo"]},
            [
                "a.ignoredResourceGroups[0]: Invalid value: \"example.com/foo\": resource group name can't contain '/'"
            ],
        ),
        (
            {"ignoredResources": ["-bad"]},
            [
                "a.ignoredResources[0]: Invalid value: \"-bad\": name part must consist of alphanumeric characters, '-', "
                "'_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
                "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
            ],
        ),
        (
            {"scoringStrategy": {"type": "LeastAllocated", "shape": []}},
            ['a.scoringStrategy: unknown field "shape"'],
        ),
        ({"ignoredResources": "cpu"}, ['a.ignoredResources: Invalid value: "cpu": must be a list']),
    ],
    ids=[
        "unknown-type",
        "missing-type",
        "weights-out-of-range",
        "rtcr-without-shape",
        "shape-unsorted-and-score",
        "group-with-slash",
        "bad-resource-name",
        "unknown-nested-field",
        "wrong-type",
    ],
)
def test_args_problems(raw: dict[str, Any], problems: list[str]) -> None:
    assert fit.NodeResourcesFitArgs.decode(raw, "a")[1] == problems


def test_weight_zero_defaults_to_one() -> None:
    args, problems = fit.NodeResourcesFitArgs.decode(
        {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 0}]}}, "a"
    )
    assert problems == []
    assert args.scoring_strategy.resources == (("cpu", 1),)


def test_requeue_events() -> None:
    events = [e.event for e in plugin().events_to_register()]
    assert events == [
        fw.ClusterEvent("Pod", "Delete"),
        fw.ClusterEvent("Pod", "UpdatePodScaleDown"),
        fw.ClusterEvent("Node", "Add"),
        fw.ClusterEvent("Node", "UpdateNodeAllocatable"),
    ]


def test_filter_reads_the_state_it_is_given() -> None:
    """Filter must use the PreFilter state of the cycle it is called with (a clone, another pod's, or none)."""
    p = plugin()
    small, big = req_pod({"cpu": "1"}, name="small"), req_pod({"cpu": "3"}, name="big")
    n = node(allocatable={"cpu": "2", "memory": "1Gi", "pods": 10})
    s_small, s_big = fw.CycleState(), fw.CycleState()
    p.pre_filter(s_small, small, [n])
    p.pre_filter(s_big, big, [n])
    assert p.filter(s_small, small, n).is_success
    assert p.filter(s_big, big, n).reasons == ("Insufficient cpu",)
    assert p.filter(s_small.clone(), small, n).is_success
    assert p.filter(fw.CycleState(), big, n).reasons == ("Insufficient cpu",)  # PreFilter disabled: computed


@pytest.mark.parametrize(
    ("name", "extended", "scalar"),
    [
        ("cpu", False, False),
        ("memory", False, False),
        ("ephemeral-storage", False, False),
        ("pods", False, False),
        ("example.com/gpu", True, True),
        ("nvidia.com/gpu", True, True),
        ("kubernetes.io/something", False, True),  # upstream IsPrefixedNativeResource
        ("subdomain.kubernetes.io/something", False, True),
        ("requests.example.com/x", False, False),
        ("hugepages-2Mi", False, True),
        ("attachable-volumes-csi-x", False, True),
        ("foo", False, False),
    ],
    ids=lambda v: str(v),
)
def test_resource_name_classes(name: str, extended: bool, scalar: bool) -> None:
    """Which requests Filter checks beyond cpu/memory/ephemeral-storage (upstream IsScalarResourceName)."""
    assert fit.is_extended_resource_name(name) is extended
    assert fit.is_scalar_resource_name(name) is scalar


# Upstream fit_test.go (TestEnoughRequests), "kubernetes.io resource capacity enforced" and "... for init container":
# a pod requesting 10 of kubernetes.io/something (resp. subdomain.kubernetes.io/something, from an init container)
# does not fit a node that has none -- UnschedulableAndUnresolvable in 1.35 (capacity 0), reason Insufficient <name>.
@pytest.mark.parametrize(
    ("incoming", "name"),
    [
        (req_pod({"cpu": "1m", "memory": "1", "kubernetes.io/something": 10}), "kubernetes.io/something"),
        (
            pod(
                init_containers=[
                    container({"cpu": "1m", "memory": "1", "subdomain.kubernetes.io/something": 10})
                ],
                containers=[container({})],
            ),
            "subdomain.kubernetes.io/something",
        ),
    ],
    ids=[
        "kubernetes.io-resource-capacity-enforced",
        "kubernetes.io-resource-capacity-enforced-for-init-container",
    ],
)
def test_prefixed_native_resources_are_checked(incoming: PodInfo, name: str) -> None:
    alloc = {"cpu": "10", "memory": "20", "pods": 32}
    status = run_filter(plugin(), incoming, node(allocatable=alloc))
    assert status.code is fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.reasons == (f"Insufficient {name}",)
    assert run_filter(plugin(), incoming, node(allocatable={**alloc, name: 10})).is_success


# Upstream helpers_test.go (TestPodRequests) with pod-level resources: a pod-level hugepages request replaces the
# containers' sum, as cpu and memory do (IsSupportedPodLevelResource includes the hugepages- prefix).
def test_pod_level_hugepages_request_counts() -> None:
    incoming = pod(
        containers=[container({"cpu": "100m", "hugepages-2Mi": "2Mi"})],
        spec={"resources": {"requests": {"cpu": "1", "hugepages-2Mi": "10Mi"}}},
    )
    assert incoming.requests["hugepages-2Mi"] == 10 * 2**20
    alloc = {"cpu": "2", "memory": "1Gi", "pods": 10}
    status = run_filter(plugin(), incoming, node(allocatable={**alloc, "hugepages-2Mi": "4Mi"}))
    assert status.reasons == ("Insufficient hugepages-2Mi",)
    assert run_filter(plugin(), incoming, node(allocatable={**alloc, "hugepages-2Mi": "10Mi"})).is_success


def test_unknown_plain_resource_is_not_checked() -> None:
    """A request for a name the scheduler does not track (no domain, not native) is ignored, as upstream."""
    status = run_filter(plugin(), req_pod({"foo": 5}), node(allocatable={"cpu": "1", "pods": 5}))
    assert status.is_success
