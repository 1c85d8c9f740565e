"""Property: the vectorised path decides exactly as the per-node reference path.

Per plugin: ``filter_nodes``/``score_nodes``/``normalize_scores`` on random clusters equal the per-node methods with
the vectorised path switched off (statuses, reasons and integer scores); the fused hooks agree too -- a
``filter_mask`` never passes a node the per-node Filter rejects, ``score_array``/``normalize_array`` equal the
per-node Score/NormalizeScore on every row that is not exotic, also after rows changed under a memo column. End to
end: a Scheduler run on random clusters and pods (with nodes added, removed and cordoned between rounds) places
every pod on the same node, and reports the same FailedScheduling text, on both paths.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from plugins.support import FakeHandle, container, fill_image_states, node, pod

from berth.schedule import vector
from berth.schedule.config import default_config
from berth.schedule.framework import interface as fw
from berth.schedule.framework.types import NodeInfo, PodInfo
from berth.schedule.plugins import (
    concentrate,
    image_locality,
    node_affinity,
    node_name,
    node_ports,
    node_resources_balanced_allocation,
    node_resources_fit,
    node_unschedulable,
    taint_toleration,
)
from berth.schedule.plugins.registry import default_registry
from berth.schedule.scheduler import Scheduler

RESOURCES = ("cpu", "memory", "ephemeral-storage", "example.com/gpu")
TAINTS = (
    {"key": "a", "effect": "NoSchedule"},
    {"key": "a", "value": "x", "effect": "NoExecute"},
    {"key": "b", "effect": "PreferNoSchedule"},
    {"key": "c", "value": "y", "effect": "PreferNoSchedule"},
)
TOLERATIONS = (
    {"key": "a", "operator": "Exists"},
    {"key": "b", "operator": "Exists", "effect": "PreferNoSchedule"},
    {"key": "c", "operator": "Equal", "value": "y"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
)
amount = st.integers(min_value=0, max_value=6000)


@st.composite
def requests(draw: st.DrawFn) -> dict[str, Any] | None:
    if draw(st.booleans()):
        return None
    out: dict[str, Any] = {}
    for r in RESOURCES:
        if draw(st.booleans()):
            v = draw(amount)
            out[r] = f"{v}m" if r == "cpu" else v
    return out


@st.composite
def pods(draw: st.DrawFn, name: str) -> PodInfo:
    ports = (
        [{"containerPort": 80, "hostPort": draw(st.sampled_from([8080, 9090]))}]
        if draw(st.booleans())
        else []
    )
    containers = [
        container(draw(requests()), name=f"c{i}", image=draw(st.sampled_from(["a", "b:1"])), ports=ports)
        for i in range(draw(st.integers(min_value=1, max_value=2)))
    ]
    return pod(
        name,
        containers=containers,
        labels={"app": draw(st.sampled_from(["x", "y"]))},
        tolerations=draw(st.lists(st.sampled_from(TOLERATIONS), max_size=3)),
        node_name=draw(st.sampled_from(["", "", "", "n1"])),
    )


@st.composite
def clusters(draw: st.DrawFn) -> list[NodeInfo]:
    out = []
    for i in range(draw(st.integers(min_value=1, max_value=8))):
        alloc: dict[str, Any] = {"pods": draw(st.integers(min_value=0, max_value=4))}
        for r in RESOURCES:
            if draw(st.integers(min_value=0, max_value=3)):
                v = draw(st.integers(min_value=0, max_value=20000))
                alloc[r] = f"{v}m" if r == "cpu" else v
        if draw(st.integers(min_value=0, max_value=9)) == 0:
            alloc["memory"] = 2**70  # beyond int64: the node must take the per-node path
        existing = [draw(pods(f"e{i}-{j}")) for j in range(draw(st.integers(min_value=0, max_value=3)))]
        images = [
            ([img], draw(st.integers(0, 3000)) * 1024 * 1024)
            for img in draw(st.lists(st.sampled_from(["a", "c"]), max_size=2, unique=True))
        ]
        out.append(
            node(
                f"n{i}",
                allocatable=alloc,
                pods=existing,
                taints=draw(st.lists(st.sampled_from(TAINTS), max_size=2)),
                unschedulable=draw(st.booleans()),
                images=images,
            )
        )
    if draw(st.booleans()):
        fill_image_states(out)
    return out


def fit_plugin(
    handle: FakeHandle, strategy: str, resources: tuple[str, ...]
) -> node_resources_fit.NodeResourcesFit:
    raw = {"type": strategy, "resources": [{"name": r, "weight": i + 1} for i, r in enumerate(resources)]}
    args, problems = node_resources_fit.NodeResourcesFitArgs.decode({"scoringStrategy": raw}, "a")
    assert problems == []
    return node_resources_fit.NodeResourcesFit(args, handle)


def both_paths(plugin: fw.Plugin, handle: FakeHandle, call: Any) -> tuple[Any, Any]:
    vector.set_enabled(handle, False)
    reference = call()
    vector.set_enabled(handle, True)
    return reference, call()


SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(
    cluster=clusters(),
    incoming=pods("p"),
    strategy=st.sampled_from(["LeastAllocated", "MostAllocated"]),
    resources=st.sampled_from(
        [("cpu", "memory"), ("memory", "cpu", "example.com/gpu"), ("ephemeral-storage",)]
    ),
    start=st.integers(min_value=0, max_value=7),
)
def test_filters_and_scores_agree(
    cluster: list[NodeInfo], incoming: PodInfo, strategy: str, resources: tuple[str, ...], start: int
) -> None:
    handle = FakeHandle(cluster)
    start %= len(cluster)
    rotated = cluster[start:] + cluster[:start]  # the scheduler's rotating chunks
    balanced_args, problems = node_resources_balanced_allocation.NodeResourcesBalancedAllocationArgs.decode(
        {"resources": [{"name": r, "weight": 1} for r in resources]}, "a"
    )
    assert problems == []
    plugins: list[fw.Plugin] = [
        fit_plugin(handle, strategy, resources),
        node_resources_balanced_allocation.NodeResourcesBalancedAllocation(balanced_args, handle),
        taint_toleration.TaintToleration(None, handle),
        node_unschedulable.NodeUnschedulable(None, handle),
        node_name.NodeName(None, handle),
        node_ports.NodePorts(None, handle),
        image_locality.ImageLocality(None, handle),
    ]
    for plugin in plugins:
        for nodes in (cluster, rotated, rotated[: max(1, len(rotated) // 2)]):
            state = fw.CycleState()
            if isinstance(plugin, fw.PreFilterPlugin):
                plugin.pre_filter(state, incoming, nodes)
            if isinstance(plugin, fw.FilterPlugin):
                per_node = [plugin.filter(state, incoming, n) for n in nodes]
                ref, vec = both_paths(plugin, handle, lambda: plugin.filter_nodes(state, incoming, nodes))  # type: ignore[attr-defined]  # noqa: B023
                assert ref == per_node
                assert vec == per_node, type(plugin).__name__
            if isinstance(plugin, fw.ScorePlugin):
                if isinstance(plugin, fw.PreScorePlugin) and plugin.pre_score(state, incoming, nodes).is_skip:
                    continue
                per_node_scores = [plugin.score(state, incoming, n)[0] for n in nodes]
                ref, vec = both_paths(plugin, handle, lambda: plugin.score_nodes(state, incoming, nodes))  # type: ignore[attr-defined]  # noqa: B023
                assert ref == (per_node_scores, fw.SUCCESS)
                assert vec == (per_node_scores, fw.SUCCESS), type(plugin).__name__


def check_fused_hooks(
    plugins: list[fw.Plugin], handle: FakeHandle, nodes: list[NodeInfo], incoming: PodInfo
) -> None:
    """Every fused hook of ``plugins`` against the per-node methods on ``nodes`` (as rows of the shared arrays)."""
    arrays = vector.arrays_for(handle, plugins[0])
    rows = arrays.rows(nodes)
    for plugin in plugins:
        name = type(plugin).__name__
        state = fw.CycleState()
        if isinstance(plugin, fw.PreFilterPlugin) and plugin.pre_filter(state, incoming, nodes)[1].is_skip:
            continue
        mask_fn = getattr(plugin, "filter_mask", None)
        if mask_fn is not None:
            for run in (rows, slice(0, len(nodes))) if rows.tolist() == list(range(len(nodes))) else (rows,):
                mask = mask_fn(state, incoming, arrays, run)
                if mask is None:
                    continue
                plain = ~arrays.exotic[rows]  # (after the hook: it may add columns) exotic rows go per node
                passes = np.broadcast_to(np.asarray(mask, np.bool_), (len(nodes),))
                for j, n in enumerate(nodes):
                    if passes[j] and plain[j]:
                        assert plugin.filter(state, incoming, n).is_success, (name, n.name)
        if isinstance(plugin, fw.PreScorePlugin) and plugin.pre_score(state, incoming, nodes).is_skip:
            continue
        score_fn = getattr(plugin, "score_array", None)
        if score_fn is None:
            continue
        for _ in range(2):  # the second call reads the memo columns the first one built
            raw = score_fn(state, incoming, nodes, arrays, rows)
            if raw is None:
                break
            want = [plugin.score(state, incoming, n)[0] for n in nodes]
            got = raw.tolist()
            plain = ~arrays.exotic[rows]
            assert [g for g, ok in zip(got, plain, strict=True) if ok] == [
                w for w, ok in zip(want, plain, strict=True) if ok
            ], name
            normalize = getattr(plugin, "normalize_array", None)
            if normalize is not None and all(plain):
                scores = [fw.NodeScore(n.name, v) for n, v in zip(nodes, want, strict=True)]
                assert isinstance(plugin, fw.ScorePlugin)
                plugin.normalize_score(state, incoming, scores)
                normalised = normalize(state, incoming, raw)
                if normalised is not None:
                    assert normalised.tolist() == [x.score for x in scores], name
    for flag, rows_set in arrays.flagged.items():  # the counts that let hooks skip a column are exact
        assert rows_set == int(getattr(arrays, flag)[: arrays.size].sum()), flag


@SETTINGS
@given(
    cluster=clusters(),
    incoming=pods("p"),
    extra=pods("q"),
    strategy=st.sampled_from(["LeastAllocated", "MostAllocated"]),
    resources=st.sampled_from(
        [("cpu", "memory"), ("memory", "cpu", "example.com/gpu"), ("ephemeral-storage",)]
    ),
)
def test_fused_hooks_agree_with_per_node_methods(
    cluster: list[NodeInfo], incoming: PodInfo, extra: PodInfo, strategy: str, resources: tuple[str, ...]
) -> None:
    handle = FakeHandle(cluster)
    balanced_args, problems = node_resources_balanced_allocation.NodeResourcesBalancedAllocationArgs.decode(
        {"resources": [{"name": r, "weight": 1} for r in resources]}, "a"
    )
    assert problems == []
    plugins: list[fw.Plugin] = [
        fit_plugin(handle, strategy, resources),
        node_resources_balanced_allocation.NodeResourcesBalancedAllocation(balanced_args, handle),
        taint_toleration.TaintToleration(None, handle),
        node_unschedulable.NodeUnschedulable(None, handle),
        node_name.NodeName(None, handle),
        node_ports.NodePorts(None, handle),
        image_locality.ImageLocality(None, handle),
        node_affinity.NodeAffinity(None, handle),
        concentrate.Concentrate(concentrate.ConcentrateArgs("app"), handle),
    ]
    check_fused_hooks(plugins, handle, cluster, incoming)
    # A node changes (the snapshot shows a clone with one more pod): memo columns follow the refreshed row.
    cluster[-1] = cluster[-1].clone()
    cluster[-1].add_pod(extra.with_node(cluster[-1].name))
    check_fused_hooks(plugins, handle, cluster, incoming)


@SETTINGS
@given(cluster=clusters(), incoming=pods("p"), extra=pods("q"))
def test_rows_follow_in_place_changes_and_new_clones(
    cluster: list[NodeInfo], incoming: PodInfo, extra: PodInfo
) -> None:
    handle = FakeHandle(cluster)
    plugin = fit_plugin(handle, "LeastAllocated", ("cpu", "memory"))
    state = fw.CycleState()
    plugin.pre_filter(state, incoming, cluster)
    plugin.filter_nodes(state, incoming, cluster)
    cluster[0].add_pod(extra.with_node(cluster[0].name))  # mutated in place: generation grows
    cluster[-1] = cluster[-1].clone()  # replaced by a clone, as the snapshot does
    cluster[-1].add_pod(extra.with_node(cluster[-1].name))
    state = fw.CycleState()  # a new cycle
    plugin.pre_filter(state, incoming, cluster)
    for nodes in (cluster, list(cluster)):
        assert plugin.filter_nodes(state, incoming, nodes) == [
            plugin.filter(state, incoming, n) for n in nodes
        ]
        got, _ = plugin.score_nodes(state, incoming, nodes)
        assert got == [plugin.score(state, incoming, n)[0] for n in nodes]


@SETTINGS
@given(raw=st.lists(st.integers(min_value=-50, max_value=500), max_size=8), reverse=st.booleans())
def test_list_normalize_equals_node_score_normalize(raw: list[int], reverse: bool) -> None:
    handle = FakeHandle([])
    plugin: Any
    for plugin in (
        taint_toleration.TaintToleration(None, handle),
        node_affinity.NodeAffinity(None, handle),
        concentrate.Concentrate(concentrate.ConcentrateArgs("app"), handle),
    ):
        scores = [fw.NodeScore(str(i), s) for i, s in enumerate(raw)]
        assert plugin.normalize_score(fw.CycleState(), pod(), scores).is_success
        got, status = plugin.normalize_scores(fw.CycleState(), pod(), list(raw))
        assert status.is_success
        assert got == [s.score for s in scores]


def raw_node(
    i: int, alloc: dict[str, Any], taints: list[dict[str, Any]], unschedulable: bool
) -> dict[str, Any]:
    name = f"n{i}"
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": f"z{i % 2}"},
        },
        "spec": {"taints": taints, "unschedulable": unschedulable},
        "status": {"allocatable": alloc},
    }


@st.composite
def workloads(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    nodes = [
        raw_node(
            i,
            {
                "pods": draw(st.integers(1, 5)),
                "cpu": f"{draw(st.integers(0, 4000))}m",
                "memory": draw(st.integers(0, 8000)),
            },
            draw(st.lists(st.sampled_from(TAINTS), max_size=2)),
            draw(st.integers(0, 5)) == 0,
        )
        for i in range(draw(st.integers(1, 12)))
    ]
    pods_out = []
    for j in range(draw(st.integers(1, 12))):
        p = draw(pods(f"w{j}")).pod
        p["metadata"]["uid"] = f"uid-{j}"
        p["spec"].pop("nodeName", None)
        pods_out.append(p)
    return nodes, pods_out


def run(
    nodes: list[dict[str, Any]], pod_objs: list[dict[str, Any]], vectorised: bool, seed: int
) -> tuple[Any, Any]:
    registry = default_registry()
    s = Scheduler(default_config(registry), registry, seed=seed)
    for fwk in s.frameworks.values():
        vector.set_enabled(fwk, vectorised)
    for n in nodes:
        s.add_node(n)
    for p in pod_objs:
        s.add_pod(p)
    s.run_until_idle()
    return [(p.pod, p.node) for p in s.placements], sorted((f.pod, f.message) for f in s.unschedulable())


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workload=workloads(), seed=st.integers(0, 3))
def test_scheduler_places_identically_on_both_paths(
    workload: tuple[list[dict[str, Any]], list[dict[str, Any]]], seed: int
) -> None:
    nodes, pod_objs = workload
    assert run(nodes, pod_objs, True, seed) == run(nodes, pod_objs, False, seed)


def run_rounds(
    nodes: list[dict[str, Any]], pod_objs: list[dict[str, Any]], vectorised: bool, seed: int
) -> tuple[Any, Any, Any]:
    """Half the pods, then the cluster changes (a node removed, one added, one cordoned and re-labelled: a new node
    list for the vectorised rows), then the other half."""
    registry = default_registry()
    s = Scheduler(default_config(registry), registry, seed=seed)
    for fwk in s.frameworks.values():
        vector.set_enabled(fwk, vectorised)
    for n in nodes:
        s.add_node(n)
    half = len(pod_objs) // 2
    for p in pod_objs[:half]:
        s.add_pod(p)
    s.run_until_idle()
    s.remove_node(nodes[0])
    s.add_node(raw_node(len(nodes), {"pods": 3, "cpu": "3", "memory": 9000}, [], False))
    cordoned = dict(nodes[-1], spec={"unschedulable": True})
    cordoned["metadata"] = {**nodes[-1]["metadata"], "labels": {"topology.kubernetes.io/zone": "z9"}}
    s.update_node(nodes[-1], cordoned)
    for p in pod_objs[half:]:
        s.add_pod(p)
    s.run_until_idle()
    return (
        [(p.pod, p.node) for p in s.placements],
        sorted((f.pod, f.message) for f in s.unschedulable()),
        s.next_start_node_index,
    )


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workload=workloads(), seed=st.integers(0, 3))
def test_both_paths_agree_while_nodes_come_and_go(
    workload: tuple[list[dict[str, Any]], list[dict[str, Any]]], seed: int
) -> None:
    nodes, pod_objs = workload
    assert run_rounds(nodes, pod_objs, True, seed) == run_rounds(nodes, pod_objs, False, seed)
