"""Property: PodTopologySpread and InterPodAffinity decide on the node index (vector/topology.py) exactly as on the
per-node reference path.

Random clusters carry zones, hostnames (some missing, some shared) and racks, taints, and pods in two namespaces
with labels, terminating pods and (anti-)affinity terms of their own (namespaces lists, namespaceSelectors with
and without requirements). Incoming pods carry random spread constraints (label selectors, minDomains,
nodeAffinityPolicy/nodeTaintsPolicy, matchLabelKeys) and (anti-)affinity terms. Compared: PreFilter states (counts,
critical paths), Filter verdicts per node and in rotated chunks, preemption's AddPod/RemovePod on cloned states,
PreScore/Score/NormalizeScore results, and a whole Scheduler run (which keeps the index in step through the
snapshot's change log while pods are assumed one after another).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from plugins.support import FakeHandle, node, pod

from berth.schedule import vector
from berth.schedule.config import default_config
from berth.schedule.framework import interface as fw
from berth.schedule.framework.types import NodeInfo, PodInfo
from berth.schedule.plugins import inter_pod_affinity as ipa
from berth.schedule.plugins import pod_topology_spread as pts
from berth.schedule.plugins.registry import default_registry
from berth.schedule.scheduler import Scheduler
from berth.schedule.vector import topology

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
RACK = "rack"
KEYS = (ZONE, HOST, RACK)
NAMESPACES = ("default", "other")
TAINTS = ({"key": "a", "effect": "NoSchedule"}, {"key": "b", "effect": "PreferNoSchedule"})
TOLERATIONS = ({"key": "a", "operator": "Exists"},)
NAMESPACE_OBJECTS = (
    {"kind": "Namespace", "metadata": {"name": "default", "labels": {"team": "a"}}},
    {"kind": "Namespace", "metadata": {"name": "other", "labels": {"team": "b"}}},
)

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


SERVICES = tuple(
    {"kind": "Service", "metadata": {"name": "web", "namespace": ns}, "spec": {"selector": {"app": "x"}}}
    for ns in NAMESPACES
)


class Handle(FakeHandle):
    """A fake handle that lists Namespace objects (for namespaceSelector) and, with ``services``, a Service
    selecting ``app: x`` in each namespace (so pods without constraints of their own get the system defaults)."""

    def __init__(self, nodes: Sequence[NodeInfo], services: bool = False) -> None:
        super().__init__(nodes, NAMESPACE_OBJECTS + (SERVICES if services else ()))


# --- strategies ----------------------------------------------------------------------------------------------------

label_selectors = st.one_of(
    st.none(),
    st.just({}),
    st.builds(lambda v: {"matchLabels": {"app": v}}, st.sampled_from(["x", "y"])),
    st.just({"matchExpressions": [{"key": "app", "operator": "Exists"}]}),
    st.just({"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["y"]}]}),
    st.just({"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}),
)


@st.composite
def affinity_terms(draw: st.DrawFn) -> dict[str, Any]:
    out: dict[str, Any] = {"topologyKey": draw(st.sampled_from(KEYS))}
    sel = draw(label_selectors)
    if sel is not None:
        out["labelSelector"] = sel
    which = draw(st.integers(0, 4))
    if which == 1:
        out["namespaces"] = draw(st.lists(st.sampled_from(NAMESPACES), min_size=1, unique=True))
    elif which == 2:
        out["namespaceSelector"] = {}
    elif which == 3:
        out["namespaceSelector"] = {"matchLabels": {"team": draw(st.sampled_from(["a", "b"]))}}
    elif which == 4 and draw(st.booleans()):
        out["matchLabelKeys"] = ["tier"]
    return out


@st.composite
def pod_affinities(draw: st.DrawFn) -> dict[str, Any] | None:
    if draw(st.integers(0, 2)) == 0:
        return None
    out: dict[str, Any] = {}
    for kind in ("podAffinity", "podAntiAffinity"):
        section: dict[str, Any] = {}
        if draw(st.booleans()):
            section[ipa.REQUIRED] = draw(st.lists(affinity_terms(), min_size=1, max_size=2))
        if draw(st.integers(0, 2)) == 0:
            section[ipa.PREFERRED] = [
                {"weight": draw(st.integers(1, 100)), "podAffinityTerm": draw(affinity_terms())}
                for _ in range(draw(st.integers(1, 2)))
            ]
        if section:
            out[kind] = section
    return out or None


@st.composite
def existing_pods(draw: st.DrawFn, name: str) -> PodInfo:
    labels = {"app": draw(st.sampled_from(["x", "y"]))}
    if draw(st.booleans()):
        labels["tier"] = draw(st.sampled_from(["a", "b"]))
    return pod(
        name,
        namespace=draw(st.sampled_from(NAMESPACES)),
        labels=labels,
        affinity=draw(pod_affinities()) if draw(st.booleans()) else None,
        terminating=draw(st.integers(0, 6)) == 0,
    )


@st.composite
def clusters(draw: st.DrawFn) -> list[NodeInfo]:
    out = []
    for i in range(draw(st.integers(min_value=1, max_value=9))):
        labels: dict[str, str] = {}
        if draw(st.integers(0, 5)):
            labels[ZONE] = f"z{draw(st.integers(0, 2))}"
        if draw(st.integers(0, 5)):
            labels[HOST] = f"h{i}" if draw(st.integers(0, 3)) else "shared"
        if draw(st.booleans()):
            labels[RACK] = draw(st.sampled_from(["r0", "r1", ""]))
        if draw(st.integers(0, 9)) == 0 and ZONE in labels:
            labels[ZONE] = ""  # the empty value: the same domain as "no zone" for system-default spreading
        out.append(
            node(
                f"n{i}",
                labels=labels,
                taints=draw(st.lists(st.sampled_from(TAINTS), max_size=1)),
                pods=[draw(existing_pods(f"e{i}-{j}")) for j in range(draw(st.integers(0, 3)))],
            )
        )
    return out


@st.composite
def spread_constraints(draw: st.DrawFn) -> dict[str, Any]:
    out: dict[str, Any] = {
        "maxSkew": draw(st.integers(1, 3)),
        "topologyKey": draw(st.sampled_from(KEYS)),
        "whenUnsatisfiable": draw(st.sampled_from([pts.DO_NOT_SCHEDULE, pts.SCHEDULE_ANYWAY])),
    }
    sel = draw(label_selectors)
    if sel is not None:
        out["labelSelector"] = sel
    if draw(st.booleans()):
        out["minDomains"] = draw(st.integers(1, 4))
    if draw(st.booleans()):
        out["nodeAffinityPolicy"] = draw(st.sampled_from([pts.HONOR, pts.IGNORE]))
    if draw(st.booleans()):
        out["nodeTaintsPolicy"] = draw(st.sampled_from([pts.HONOR, pts.IGNORE]))
    if draw(st.integers(0, 3)) == 0:
        out["matchLabelKeys"] = ["tier"]
    return out


@st.composite
def incoming_pods(draw: st.DrawFn) -> PodInfo:
    labels = {"app": draw(st.sampled_from(["x", "y"]))}
    if draw(st.booleans()):
        labels["tier"] = "a"
    spec: dict[str, Any] = {}
    constraints = draw(st.lists(spread_constraints(), max_size=2))
    if constraints:
        spec["topologySpreadConstraints"] = constraints
    node_selector = {ZONE: draw(st.sampled_from(["z0", "z1"]))} if draw(st.integers(0, 3)) == 0 else None
    affinity = draw(pod_affinities()) or {}
    if draw(st.integers(0, 3)) == 0:
        affinity["nodeAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": RACK, "operator": "Exists"}]}]
            }
        }
    return pod(
        "p",
        namespace=draw(st.sampled_from(NAMESPACES)),
        labels=labels,
        node_selector=node_selector,
        affinity=affinity or None,
        tolerations=draw(st.lists(st.sampled_from(TOLERATIONS), max_size=1)),
        spec=spec,
    )


# --- helpers -------------------------------------------------------------------------------------------------------


def on_path(handle: FakeHandle, vectorised: bool, call: Any) -> Any:
    vector.set_enabled(handle, vectorised)
    try:
        return call()
    finally:
        vector.set_enabled(handle, True)


def chunks(nodes: Sequence[NodeInfo], start: int) -> list[list[NodeInfo]]:
    """What the scheduler hands Filter: the whole list, a rotated run, a shorter run, and a non-contiguous subset."""
    start %= len(nodes)
    rotated = [*nodes[start:], *nodes[:start]]
    return [list(nodes), rotated, rotated[: max(1, len(rotated) // 2)], rotated[::2]]


def pre_filter(
    plugin: Any, handle: FakeHandle, incoming: PodInfo, nodes: Sequence[NodeInfo], vec: bool
) -> Any:
    state = fw.CycleState()
    _, status = on_path(handle, vec, lambda: plugin.pre_filter(state, incoming, nodes))
    return state, status


def filter_all(plugin: Any, state: fw.CycleState, incoming: PodInfo, nodes: Sequence[NodeInfo]) -> list[Any]:
    return [plugin.filter(state, incoming, n) for n in nodes]


def verdicts(
    plugin: Any, state: fw.CycleState, incoming: PodInfo, nodes: Sequence[NodeInfo]
) -> list[Any] | None:
    """The bulk-rejection hook's answer as one status per node (None where the hook declines)."""
    got = plugin.filter_verdicts(state, incoming, nodes, None, None)
    if got is None:
        return None
    verdict, table = got
    assert len(verdict) == len(nodes)
    return [table[v] for v in verdict.tolist()]


def check_verdicts(
    plugin: Any, state: fw.CycleState, incoming: PodInfo, nodes: Sequence[NodeInfo], want: Any
) -> bool:
    """The hook agrees with the per-node Filter wherever it answers; True when it answered."""
    got = verdicts(plugin, state, incoming, nodes)
    if got is None:
        return False
    assert got == want
    return True


def normalised(
    plugin: Any, handle: FakeHandle, incoming: PodInfo, nodes: Sequence[NodeInfo], vec: bool
) -> Any:
    """PreScore + Score (batch hook) + NormalizeScore on one path: the scores the framework would weight (Skip ->
    the plugin adds 0 everywhere)."""

    def go() -> Any:
        state = fw.CycleState()
        status = plugin.pre_score(state, incoming, nodes)
        if status.is_skip:
            return [0] * len(nodes)
        if not status.is_success:
            return status
        per_node = [plugin.score(state, incoming, n) for n in nodes]
        batch = getattr(plugin, "score_nodes", None)
        if batch is not None:
            raw, st_ = batch(state, incoming, nodes)
            assert st_.is_success
            assert raw == [s for s, _ in per_node]
        scores = [fw.NodeScore(n.name, s) for n, (s, _) in zip(nodes, per_node, strict=True)]
        assert plugin.normalize_score(state, incoming, scores).is_success
        return [s.score for s in scores]

    return on_path(handle, vec, go)


# --- PodTopologySpread ---------------------------------------------------------------------------------------------


@SETTINGS
@given(
    cluster=clusters(),
    incoming=incoming_pods(),
    start=st.integers(0, 8),
    victim=st.integers(0, 30),
    services=st.booleans(),
)
def test_pod_topology_spread_agrees(
    cluster: list[NodeInfo], incoming: PodInfo, start: int, victim: int, services: bool
) -> None:
    handle = Handle(cluster, services)
    plugin = pts.PodTopologySpread(None, handle)
    ref_state, ref_status = pre_filter(plugin, handle, incoming, cluster, False)
    vec_state, vec_status = pre_filter(plugin, handle, incoming, cluster, True)
    assert vec_status == ref_status
    if ref_status.is_success:
        ref, vec = ref_state.read(pts.PRE_FILTER_STATE_KEY), vec_state.read(pts.PRE_FILTER_STATE_KEY)
        assert vec.index is not None
        assert [dict(c) for c in vec.counts] == [dict(c) for c in ref.counts]
        assert [p.paths for p in vec.critical] == [p.paths for p in ref.critical]
        assert [vec.min_match(i) for i in range(len(vec.constraints))] == [
            ref.min_match(i) for i in range(len(ref.constraints))
        ]
        want = filter_all(plugin, ref_state, incoming, cluster)
        assert filter_all(plugin, vec_state, incoming, cluster) == want
        for chunk in chunks(cluster, start):
            expected = filter_all(plugin, ref_state, incoming, chunk)
            assert plugin.filter_nodes(vec_state, incoming, chunk) == expected
            check_verdicts(plugin, vec_state, incoming, chunk, expected)
        assert verdicts(plugin, ref_state, incoming, cluster) is None  # no index: the per-node forms decide
        # Preemption's what-ifs: remove a pod from a node, then add it back, on cloned states.
        target = cluster[victim % len(cluster)]
        if target.pods:
            gone = target.pods[victim % len(target.pods)]
            ref_copy, vec_copy = ref_state.clone(), vec_state.clone()
            assert plugin.remove_pod(ref_copy, incoming, gone, target).is_success
            assert plugin.remove_pod(vec_copy, incoming, gone, target).is_success
            r, v = ref_copy.read(pts.PRE_FILTER_STATE_KEY), vec_copy.read(pts.PRE_FILTER_STATE_KEY)
            assert [dict(c) for c in v.counts] == [dict(c) for c in r.counts]
            assert [p.paths for p in v.critical] == [p.paths for p in r.critical]
            assert filter_all(plugin, vec_copy, incoming, cluster) == filter_all(
                plugin, ref_copy, incoming, cluster
            )
            assert plugin.filter_nodes(vec_copy, incoming, cluster) == filter_all(
                plugin, ref_copy, incoming, cluster
            )
            check_verdicts(
                plugin, vec_copy, incoming, cluster, filter_all(plugin, ref_copy, incoming, cluster)
            )
            # the original states are untouched by the clones' updates
            assert [dict(c) for c in vec.counts] == [dict(c) for c in ref.counts]
    for candidates in chunks(cluster, start):  # PreScore sees the feasible nodes, counts over all of them
        assert normalised(plugin, handle, incoming, candidates, True) == normalised(
            plugin, handle, incoming, candidates, False
        )


@SETTINGS
@given(cluster=clusters(), incoming=incoming_pods(), start=st.integers(0, 8))
def test_system_default_spreading_agrees(cluster: list[NodeInfo], incoming: PodInfo, start: int) -> None:
    """A pod selected by a Service and without constraints of its own: hostname and zone ScheduleAnyway
    defaults, where a node without a zone label counts in the domain "" (as does a zone label "")."""
    raw = incoming.pod
    raw["spec"].pop("topologySpreadConstraints", None)
    raw["metadata"]["labels"]["app"] = "x"
    incoming = PodInfo(raw)
    handle = Handle(cluster, services=True)
    plugin = pts.PodTopologySpread(None, handle)
    for candidates in chunks(cluster, start):
        assert normalised(plugin, handle, incoming, candidates, True) == normalised(
            plugin, handle, incoming, candidates, False
        )


@SETTINGS
@given(
    counts=st.lists(st.integers(0, 3), min_size=1, max_size=40),
    order=st.permutations(range(40)),
    absent=st.sets(st.integers(0, 39)),
    empty_value=st.booleans(),
)
def test_critical_paths_equal_the_sequential_update(
    counts: list[int], order: list[int], absent: set[int], empty_value: bool
) -> None:
    """The vectorised critical paths are those the reference's ``update`` leaves after meeting the present
    domains in order of first appearance (also when a domain's value is the empty string, the paths' sentinel),
    for a few domains (plain Python) and many (arrays)."""
    values = [f"v{i}" for i in range(len(counts))]
    if empty_value:
        values[0] = ""
    present = np.array([i not in absent for i in range(len(counts))], np.bool_)
    seq = [i for i in order if i < len(counts) and present[i]]
    paths = pts.CriticalPaths()
    for i in seq:
        paths.update(values[i], counts[i])
    got = topology.critical_paths(values, np.array(counts, np.int64), present, np.array(seq, np.int32))
    assert got == paths.paths
    first_rows = np.array([seq.index(i) if i in seq else 10**6 for i in range(len(counts))], np.int64)
    by_first = topology.critical_paths(values, np.array(counts, np.int64), present, None, first_rows)
    assert by_first == paths.paths


# --- InterPodAffinity ----------------------------------------------------------------------------------------------


@SETTINGS
@given(
    cluster=clusters(),
    incoming=incoming_pods(),
    start=st.integers(0, 8),
    victim=st.integers(0, 30),
    hard=st.sampled_from([0, 1, 5]),
)
def test_inter_pod_affinity_agrees(
    cluster: list[NodeInfo], incoming: PodInfo, start: int, victim: int, hard: int
) -> None:
    handle = Handle(cluster)
    plugin = ipa.InterPodAffinity(ipa.InterPodAffinityArgs(hard_pod_affinity_weight=hard), handle)
    ref_state, ref_status = pre_filter(plugin, handle, incoming, cluster, False)
    vec_state, vec_status = pre_filter(plugin, handle, incoming, cluster, True)
    assert vec_status == ref_status
    if ref_status.is_success:
        ref, vec = ref_state.read(ipa.PRE_FILTER_STATE_KEY), vec_state.read(ipa.PRE_FILTER_STATE_KEY)
        for name in ("existing_anti", "affinity", "anti"):
            assert dict(getattr(vec, name)) == dict(getattr(ref, name)), name
        assert vec.self_match == ref.self_match
        want = filter_all(plugin, ref_state, incoming, cluster)
        assert filter_all(plugin, vec_state, incoming, cluster) == want
        for chunk in chunks(cluster, start):
            expected = filter_all(plugin, ref_state, incoming, chunk)
            assert plugin.filter_nodes(vec_state, incoming, chunk) == expected
            check_verdicts(plugin, vec_state, incoming, chunk, expected)
        assert verdicts(plugin, ref_state, incoming, cluster) is None  # no index: the per-node forms decide
        target = cluster[victim % len(cluster)]
        if target.pods:
            gone = target.pods[victim % len(target.pods)]
            ref_copy, vec_copy = ref_state.clone(), vec_state.clone()
            plugin.remove_pod(ref_copy, incoming, gone, target)
            plugin.remove_pod(vec_copy, incoming, gone, target)
            plugin.add_pod(ref_copy, incoming, gone, target)
            plugin.add_pod(vec_copy, incoming, gone, target)
            plugin.remove_pod(ref_copy, incoming, gone, target)
            plugin.remove_pod(vec_copy, incoming, gone, target)
            r, v = ref_copy.read(ipa.PRE_FILTER_STATE_KEY), vec_copy.read(ipa.PRE_FILTER_STATE_KEY)
            for name in ("existing_anti", "affinity", "anti"):
                assert dict(getattr(v, name)) == dict(getattr(r, name)), name
            assert filter_all(plugin, vec_copy, incoming, cluster) == filter_all(
                plugin, ref_copy, incoming, cluster
            )
            assert plugin.filter_nodes(vec_copy, incoming, cluster) == filter_all(
                plugin, ref_copy, incoming, cluster
            )
            check_verdicts(
                plugin, vec_copy, incoming, cluster, filter_all(plugin, ref_copy, incoming, cluster)
            )
    assert normalised(plugin, handle, incoming, cluster, True) == normalised(
        plugin, handle, incoming, cluster, False
    )


@SETTINGS
@given(cluster=clusters(), incoming=incoming_pods(), extra=existing_pods("late"), which=st.integers(0, 8))
def test_index_follows_in_place_changes_and_new_clones(
    cluster: list[NodeInfo], incoming: PodInfo, extra: PodInfo, which: int
) -> None:
    """Rows are recomputed when a node is mutated in place (generation grows) or replaced by a clone."""
    handle = Handle(cluster)
    spread = pts.PodTopologySpread(None, handle)
    affinity = ipa.InterPodAffinity(None, handle)
    for plugin in (spread, affinity):
        pre_filter(plugin, handle, incoming, cluster, True)
    target = which % len(cluster)
    cluster[target].add_pod(extra.with_node(cluster[target].name))
    cluster[-1] = cluster[-1].clone()
    cluster[-1].add_pod(extra.with_node(cluster[-1].name))
    handle._snapshot._nodes = list(cluster)
    plugin: Any
    for plugin in (spread, affinity):
        ref_state, ref_status = pre_filter(plugin, handle, incoming, cluster, False)
        vec_state, vec_status = pre_filter(plugin, handle, incoming, cluster, True)
        assert vec_status == ref_status
        if ref_status.is_success:
            assert filter_all(plugin, vec_state, incoming, cluster) == filter_all(
                plugin, ref_state, incoming, cluster
            )
            assert plugin.filter_nodes(vec_state, incoming, cluster) == filter_all(
                plugin, ref_state, incoming, cluster
            )
        assert normalised(plugin, handle, incoming, cluster, True) == normalised(
            plugin, handle, incoming, cluster, False
        )


# --- end to end ----------------------------------------------------------------------------------------------------


@st.composite
def workloads(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    nodes = []
    for i in range(draw(st.integers(2, 12))):
        labels = {HOST: f"n{i}"}
        if draw(st.integers(0, 5)):
            labels[ZONE] = f"z{draw(st.integers(0, 2))}"
        nodes.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": f"n{i}", "labels": labels},
                "spec": {"taints": draw(st.lists(st.sampled_from(TAINTS), max_size=1))},
                "status": {"allocatable": {"pods": draw(st.integers(1, 6)), "cpu": "4", "memory": "8Gi"}},
            }
        )
    pods_out = []
    for j in range(draw(st.integers(1, 14))):
        p = draw(incoming_pods()).pod
        p["metadata"]["name"] = f"w{j}"
        p["metadata"]["uid"] = f"uid-{j}"
        pods_out.append(p)
    return nodes, pods_out


def run(nodes: list[dict[str, Any]], pod_objs: list[dict[str, Any]], vectorised: bool, seed: int) -> Any:
    """Placements, FitError messages and, per Filter pass, the rejected nodes' statuses (the diagnosis)."""
    registry = default_registry()
    s = Scheduler(default_config(registry), registry, seed=seed)
    diagnoses: list[Any] = []
    find = s._find_feasible

    def spy(fwk: Any, state: Any, p: PodInfo, ns: Sequence[NodeInfo], diagnosis: Any) -> Any:
        out = find(fwk, state, p, ns, diagnosis)
        diagnoses.append((p.key, dict(diagnosis.node_to_status)))
        return out

    s._find_feasible = spy  # type: ignore[method-assign]
    for fwk in s.frameworks.values():
        vector.set_enabled(fwk, vectorised)
    for n in nodes:
        s.add_node(n)
    for p in pod_objs:
        s.add_pod(p)
    s.run_until_idle()
    return (
        [(p.pod, p.node) for p in s.placements],
        sorted((f.pod, f.message) for f in s.unschedulable()),
        diagnoses,
    )


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workload=workloads(), seed=st.integers(0, 3))
def test_scheduler_places_spread_and_affinity_pods_identically_on_both_paths(
    workload: tuple[list[dict[str, Any]], list[dict[str, Any]]], seed: int
) -> None:
    nodes, pod_objs = workload
    assert run(nodes, pod_objs, True, seed) == run(nodes, pod_objs, False, seed)


def test_bulk_rejections_name_the_shared_statuses() -> None:
    """The bulk-rejection hooks answer on the index (not vacuously None) with the per-node Filter's statuses: a
    node without the key, nodes in the crowded zone (PodTopologySpread), nodes next to a pod the incoming one
    must avoid (InterPodAffinity)."""
    web = [pod(f"w{i}", labels={"app": "x"}, node_name="a0") for i in range(2)]
    cluster = [
        node("a0", labels={ZONE: "z0", HOST: "a0"}, pods=web),
        node("a1", labels={ZONE: "z0", HOST: "a1"}),
        node("b0", labels={ZONE: "z1", HOST: "b0"}),
        node("bare", labels={HOST: "bare"}),
    ]
    spread = {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}
    selector = {"matchLabels": {"app": "x"}}
    incoming = pod(
        "p",
        labels={"app": "x"},
        spec={"topologySpreadConstraints": [{**spread, "labelSelector": selector}]},
        affinity={
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"topologyKey": HOST, "labelSelector": selector}
                ]
            }
        },
    )
    handle = Handle(cluster)
    for plugin, key in (
        (pts.PodTopologySpread(None, handle), pts.PRE_FILTER_STATE_KEY),
        (ipa.InterPodAffinity(None, handle), ipa.PRE_FILTER_STATE_KEY),
    ):
        state, status = pre_filter(plugin, handle, incoming, cluster, True)
        assert status.is_success
        assert state.read(key).index is not None
        want = filter_all(plugin, state, incoming, cluster)
        assert sum(not s.is_success for s in want) >= 1
        for chunk in chunks(cluster, 1)[:3]:  # runs of rows, as the scheduler hands them
            assert check_verdicts(plugin, state, incoming, chunk, filter_all(plugin, state, incoming, chunk))
    spread_state, _ = pre_filter(pts.PodTopologySpread(None, handle), handle, incoming, cluster, True)
    assert verdicts(pts.PodTopologySpread(None, handle), spread_state, incoming, cluster) == [
        pts._SKEWED,
        pts._SKEWED,
        fw.SUCCESS,
        pts._MISSING_LABEL,
    ]
