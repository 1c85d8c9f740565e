"""PodTopologySpread: args (defaults, upstream validation), Filter verdicts (skew, minDomains, inclusion policies,
matchLabelKeys, missing labels, bad selectors), PreFilter extensions, and scoring with the upstream vectors
(scoring_test.go: 20,60,100,0; 33,66,100,16; 44,66,77,100; 75,75,100) incl. system-default spreading."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from berth.schedule.framework import interface as fw
from berth.schedule.framework.listers import ObjectCache
from berth.schedule.framework.types import NodeInfo, PodInfo
from berth.schedule.plugins import pod_topology_spread as pts

from .support import FakeHandle, node, pod, run_score

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def c(key: str = "zone", skew: int = 1, when: str = "ScheduleAnyway", **extra: Any) -> dict[str, Any]:
    return {"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": when, **extra}


def test_defaults_are_system_constraints() -> None:
    args, problems = pts.PodTopologySpreadArgs.decode(None, "a")
    assert problems == []
    assert args.to_dict() == {"defaultingType": "System"}
    assert [
        (d.topology_key, d.max_skew, d.when_unsatisfiable) for d in args.effective_default_constraints()
    ] == [
        ("kubernetes.io/hostname", 3, "ScheduleAnyway"),
        ("topology.kubernetes.io/zone", 5, "ScheduleAnyway"),
    ]


def test_list_defaulting_round_trip() -> None:
    raw = {
        "defaultingType": "List",
        "defaultConstraints": [
            c(minDomains=2, nodeAffinityPolicy="Ignore", matchLabelKeys=["pod-template-hash"])
        ],
    }
    args, problems = pts.PodTopologySpreadArgs.decode(raw, "a")
    assert problems == []
    assert args.to_dict() == raw
    assert len(args.effective_default_constraints()) == 1
    assert (
        pts.PodTopologySpreadArgs.decode({"defaultingType": "List"}, "a")[0].effective_default_constraints()
        == ()
    )


@pytest.mark.parametrize(
    ("raw", "problems"),
    [
        (
            {"defaultingType": "Sometimes"},
            ['a.defaultingType: Unsupported value: "Sometimes": supported values: "List", "System"'],
        ),
        (
            {"defaultConstraints": [c()]},
            ['a.defaultingType: Invalid value: "System": when .defaultConstraints are not empty'],
        ),
        (
            {"defaultingType": "List", "defaultConstraints": [c(skew=0)]},
            ["a.defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf)"],
        ),
        (
            {"defaultingType": "List", "defaultConstraints": [c(key="")]},
            ["a.defaultConstraints[0].topologyKey: Required value: can not be empty"],
        ),
        (
            {"defaultingType": "List", "defaultConstraints": [c(when="Sometimes")]},
            [
                'a.defaultConstraints[0].whenUnsatisfiable: Unsupported value: "Sometimes": supported values: '
                '"DoNotSchedule", "ScheduleAnyway"'
            ],
        ),
        (
            {"defaultingType": "List", "defaultConstraints": [c(when="")]},
            ["a.defaultConstraints[0].whenUnsatisfiable: Required value: can not be empty"],
        ),
        (
            {"defaultingType": "List", "defaultConstraints": [c(labelSelector={"matchLabels": {"a": "b"}})]},
            [
                "a.defaultConstraints[0].labelSelector: Forbidden: constraint must not define a selector, as they deduced "
                "for each pod"
            ],
        ),
        (
            {"defaultingType": "List", "defaultConstraints": [c(), c(skew=2)]},
            ['a.defaultConstraints[1]: Duplicate value: "{zone, ScheduleAnyway}"'],
        ),
        ({"defaultingType": "List", "defaultConstraints": [c(), c(when="DoNotSchedule")]}, []),
        (
            {"defaultingType": "List", "defaultConstraints": [c(maxskew=1)]},
            ['a.defaultConstraints[0]: unknown field "maxskew"'],
        ),
    ],
    ids=[
        "bad-defaulting-type",
        "system-with-constraints",
        "max-skew",
        "empty-key",
        "bad-when",
        "empty-when",
        "selector-forbidden",
        "duplicate",
        "same-key-other-action-ok",
        "unknown-field",
    ],
)
def test_problems(raw: dict[str, Any], problems: list[str]) -> None:
    assert pts.PodTopologySpreadArgs.decode(raw, "a")[1] == problems


# --- builders ------------------------------------------------------------------------------------------------------


ObjectsHandle = FakeHandle


def plugin(
    args: dict[str, Any] | None = None,
    nodes: Sequence[NodeInfo] = (),
    objects: Sequence[Mapping[str, Any]] = (),
) -> pts.PodTopologySpread:
    decoded, problems = pts.PodTopologySpreadArgs.decode(args, "args")
    assert problems == []
    built = pts.SPEC.new(decoded, ObjectsHandle(nodes, objects))
    assert isinstance(built, pts.PodTopologySpread)
    return built


def spread(key: str, skew: int = 1, when: str = "DoNotSchedule", **extra: Any) -> dict[str, Any]:
    return {
        "maxSkew": skew,
        "topologyKey": key,
        "whenUnsatisfiable": when,
        "labelSelector": {"matchLabels": {"app": "web"}},
        **extra,
    }


def incoming(*constraints: dict[str, Any], labels: Mapping[str, str] | None = None, **kw: Any) -> PodInfo:
    spec = {"topologySpreadConstraints": list(constraints)} if constraints else None
    return pod("new", labels=labels if labels is not None else {"app": "web"}, spec=spec, **kw)


def web(n: int, prefix: str = "w", **labels: str) -> list[PodInfo]:
    return [pod(f"{prefix}{i}", labels={"app": "web", **labels}) for i in range(n)]


def filter_all(pl: pts.PodTopologySpread, p: PodInfo, nodes: Sequence[NodeInfo]) -> dict[str, fw.Status]:
    """PreFilter over all nodes, then Filter on each (a PreFilter Skip passes every node)."""
    state = fw.CycleState()
    _, status = pl.pre_filter(state, p, nodes)
    if status.is_skip:
        return {n.name: fw.SUCCESS for n in nodes}
    assert status.is_success, status
    per_node = {n.name: pl.filter(state, p, n) for n in nodes}
    assert pl.filter_nodes(state, p, nodes) == list(per_node.values()), "the batch hook must agree"
    return per_node


def verdicts(statuses: Mapping[str, fw.Status]) -> dict[str, str]:
    return {name: (s.message() or s.code.name) for name, s in statuses.items()}


OK = "SUCCESS"
SKEW = pts.ERR_REASON_CONSTRAINTS_NOT_MATCH
MISSING = pts.ERR_REASON_NODE_LABEL_NOT_MATCH


def zones(a: int, b: int, **extra_b: Any) -> list[NodeInfo]:
    """zone1: node a with ``a`` web pods; zone2: node b with ``b`` web pods."""
    return [
        node("a", labels={ZONE: "zone1", HOST: "a"}, pods=web(a, "a")),
        node(
            "b", labels={ZONE: "zone2", HOST: "b", **extra_b.pop("labels", {})}, pods=web(b, "b"), **extra_b
        ),
    ]


# --- Filter --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("p", "nodes", "want"),
    [
        pytest.param(
            incoming(spread(ZONE)), zones(1, 0), {"a": SKEW, "b": OK}, id="zone-skew-rejects-fuller"
        ),
        pytest.param(incoming(spread(ZONE)), zones(1, 1), {"a": OK, "b": OK}, id="balanced-both-ok"),
        pytest.param(incoming(spread(ZONE, skew=2)), zones(2, 0), {"a": SKEW, "b": OK}, id="max-skew-2"),
        pytest.param(incoming(spread(ZONE, skew=3)), zones(2, 0), {"a": OK, "b": OK}, id="max-skew-3"),
        pytest.param(
            incoming(spread(ZONE), labels={"app": "db"}),
            zones(1, 0),
            {"a": OK, "b": OK},
            id="pod-not-self-matching",
        ),
        pytest.param(
            incoming(spread(ZONE)),
            [*zones(0, 0), node("c", labels={HOST: "c"})],
            {"a": OK, "b": OK, "c": MISSING},
            id="node-missing-key",
        ),
        pytest.param(
            incoming(spread("example.com/rack")),
            zones(0, 0),
            {"a": MISSING, "b": MISSING},
            id="key-no-node-has",
        ),
        pytest.param(
            incoming(spread(ZONE, minDomains=3)),
            zones(1, 1),
            {"a": SKEW, "b": SKEW},
            id="min-domains-not-met",
        ),
        pytest.param(
            incoming(spread(ZONE, minDomains=2)), zones(1, 1), {"a": OK, "b": OK}, id="min-domains-met"
        ),
        pytest.param(
            incoming(spread(ZONE), spread(HOST)),
            [*zones(1, 0), node("b2", labels={ZONE: "zone2", HOST: "b2"}, pods=web(1, "b2"))],
            {"a": SKEW, "b": OK, "b2": SKEW},
            id="two-constraints",
        ),
        pytest.param(
            incoming(spread(ZONE), node_selector={"pool": "x"}),
            [
                node("a", labels={ZONE: "zone1", "pool": "x"}, pods=web(2, "a")),
                node("b", labels={ZONE: "zone2"}),
            ],
            {"a": OK, "b": OK},
            id="affinity-policy-honor-skips-unselected-domain",
        ),
        pytest.param(
            incoming(spread(ZONE, nodeAffinityPolicy="Ignore"), node_selector={"pool": "x"}),
            [
                node("a", labels={ZONE: "zone1", "pool": "x"}, pods=web(2, "a")),
                node("b", labels={ZONE: "zone2"}),
            ],
            {"a": SKEW, "b": OK},
            id="affinity-policy-ignore-counts-it",
        ),
        pytest.param(
            incoming(spread(ZONE)),
            zones(2, 0, taints=[{"key": "k", "effect": "NoSchedule"}]),
            {"a": SKEW, "b": OK},
            id="taints-policy-ignore-counts-tainted",
        ),
        pytest.param(
            incoming(spread(ZONE, nodeTaintsPolicy="Honor")),
            zones(2, 0, taints=[{"key": "k", "effect": "NoSchedule"}]),
            {"a": OK, "b": OK},
            id="taints-policy-honor-skips-tainted",
        ),
        pytest.param(
            incoming(
                spread(ZONE, nodeTaintsPolicy="Honor"), tolerations=[{"key": "k", "operator": "Exists"}]
            ),
            zones(2, 0, taints=[{"key": "k", "effect": "NoSchedule"}]),
            {"a": SKEW, "b": OK},
            id="taints-policy-honor-tolerated",
        ),
        pytest.param(
            incoming(spread(ZONE, matchLabelKeys=["rev"]), labels={"app": "web", "rev": "2"}),
            [
                node("a", labels={ZONE: "zone1"}, pods=web(3, "a", rev="1")),
                node("b", labels={ZONE: "zone2"}, pods=web(1, "b", rev="2")),
            ],
            {"a": OK, "b": SKEW},
            id="match-label-keys-counts-own-revision",
        ),
        pytest.param(
            incoming(spread(ZONE)),
            [
                node("a", labels={ZONE: "zone1"}, pods=[pod("t", labels={"app": "web"}, terminating=True)]),
                node("b", labels={ZONE: "zone2"}, pods=[pod("o", namespace="other", labels={"app": "web"})]),
            ],
            {"a": OK, "b": OK},
            id="terminating-and-other-namespace-ignored",
        ),
        pytest.param(
            incoming({**spread(ZONE), "labelSelector": {}}),
            zones(3, 0),
            {"a": OK, "b": OK},
            id="empty-selector",
        ),
        pytest.param(
            incoming({k: v for k, v in spread(ZONE).items() if k != "labelSelector"}),
            zones(3, 0),
            {"a": OK, "b": OK},
            id="nil-selector-matches-nothing",
        ),
        pytest.param(
            incoming(spread(ZONE, when="ScheduleAnyway")), zones(5, 0), {"a": OK, "b": OK}, id="soft-only"
        ),
    ],
)
def test_filter(p: PodInfo, nodes: list[NodeInfo], want: dict[str, str]) -> None:
    assert verdicts(filter_all(plugin(), p, nodes)) == want


def test_filter_codes() -> None:
    statuses = filter_all(plugin(), incoming(spread(ZONE)), [*zones(1, 0), node("c")])
    assert statuses["a"].code is fw.Code.UNSCHEDULABLE
    assert statuses["c"].code is fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def test_pre_filter_skips_without_hard_constraints() -> None:
    state = fw.CycleState()
    _, status = plugin().pre_filter(state, pod("p", labels={"app": "web"}), zones(1, 0))
    assert status.is_skip


def test_pre_filter_state_shape() -> None:
    state = fw.CycleState()
    nodes = [*zones(2, 1), node("c", labels={ZONE: "zone2"}, pods=web(1, "c"))]
    plugin().pre_filter(state, incoming(spread(ZONE)), nodes)
    s = state.read(pts.PRE_FILTER_STATE_KEY)
    assert s.counts == [{"zone1": 2, "zone2": 2}]
    assert s.min_match(0) == 2


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        pytest.param(
            {"matchExpressions": [{"key": "app", "operator": "Foo"}]},
            '"Foo" is not a valid label selector operator',
            id="bad-operator",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "app", "operator": "In"}]},
            "values set can't be empty",
            id="in-without-values",
        ),
        pytest.param({"matchLabels": {"bad key": "x"}}, "key: Invalid value", id="bad-key"),
    ],
)
def test_bad_selector_is_an_error_status(raw: dict[str, Any], fragment: str) -> None:
    state = fw.CycleState()
    _, status = plugin().pre_filter(state, incoming({**spread(ZONE), "labelSelector": raw}), zones(0, 0))
    assert status.code is fw.Code.ERROR
    assert status.message().startswith("obtaining pod's hard topology spread constraints: ")
    assert fragment in status.message()


def test_add_and_remove_pod_update_counts_and_minimum() -> None:
    nodes = zones(1, 0)
    pl, p = plugin(), incoming(spread(ZONE))
    state = fw.CycleState()
    pl.pre_filter(state, p, nodes)
    assert pl.filter(state, p, nodes[0]).message() == SKEW
    ext = pl.pre_filter_extensions()
    assert ext is not None
    copy = state.clone()
    assert ext.add_pod(copy, p, pod("x", labels={"app": "web"}), nodes[1]).is_success
    assert pl.filter(copy, p, nodes[0]).is_success  # zone2 now has 1 too
    assert ext.remove_pod(copy, p, nodes[0].pods[0], nodes[0]).is_success
    assert copy.read(pts.PRE_FILTER_STATE_KEY).counts == [{"zone1": 0, "zone2": 1}]
    assert pl.filter(copy, p, nodes[1]).message() == SKEW
    # The original state is untouched by the clone's updates.
    assert state.read(pts.PRE_FILTER_STATE_KEY).counts == [{"zone1": 1, "zone2": 0}]
    # Pods of another namespace or not matching the selector change nothing.
    assert ext.add_pod(copy, p, pod("y", namespace="other", labels={"app": "web"}), nodes[0]).is_success
    assert ext.add_pod(copy, p, pod("z", labels={"app": "db"}), nodes[0]).is_success
    assert copy.read(pts.PRE_FILTER_STATE_KEY).counts == [{"zone1": 0, "zone2": 1}]


def test_critical_paths_keep_the_minimum() -> None:
    paths = pts.CriticalPaths()
    for value, num in [("a", 3), ("b", 1), ("c", 2)]:
        paths.update(value, num)
    assert paths.min == 1
    paths.update("b", 5)  # the minimum domain grows
    assert paths.min in (2, 3)
    paths.update("c", 0)
    assert paths.min == 0


# --- Score ---------------------------------------------------------------------------------------------------------


def hosts(*counts: int, **labels: str) -> list[NodeInfo]:
    return [
        node(f"n{i}", labels={HOST: f"n{i}", **labels}, pods=web(c, f"n{i}-")) for i, c in enumerate(counts)
    ]


@pytest.mark.parametrize(
    ("counts", "skew", "want"),
    [
        pytest.param((2, 1, 0, 3), 1, [20, 60, 100, 0], id="hostname-skew-1"),
        pytest.param((2, 1, 0, 3), 2, [33, 66, 100, 16], id="hostname-skew-2"),
        pytest.param((4, 3, 2, 1), 3, [44, 66, 77, 100], id="hostname-skew-3"),
        pytest.param((0, 0, 0), 1, [100, 100, 100], id="all-empty"),
    ],
)
def test_score_hostname_vectors(counts: tuple[int, ...], skew: int, want: list[int]) -> None:
    nodes = hosts(*counts)
    p = incoming(spread(HOST, skew=skew, when="ScheduleAnyway"))
    assert run_score(plugin(nodes=nodes), p, nodes) == want


def test_score_zone_vector_counts_filtered_nodes() -> None:
    """Candidates a, b (zone1) and x (zone2); y (zone2) failed Filter but its pods still count: 75, 75, 100."""
    a = node("a", labels={ZONE: "zone1", HOST: "a"}, pods=web(4, "a"))
    b = node("b", labels={ZONE: "zone1", HOST: "b"}, pods=web(2, "b"))
    x = node("x", labels={ZONE: "zone2", HOST: "x"}, pods=web(1, "x"))
    y = node("y", labels={ZONE: "zone2", HOST: "y"}, pods=web(3, "y"))
    p = incoming(spread(ZONE, when="ScheduleAnyway"))
    assert run_score(plugin(nodes=[a, b, x, y]), p, [a, b, x]) == [75, 75, 100]


def test_score_ignores_candidates_missing_a_key() -> None:
    nodes = [*hosts(1, 0, zone="z"), node("bare", labels={HOST: "bare"})]
    p = incoming(spread(HOST, when="ScheduleAnyway"), spread("zone", when="ScheduleAnyway"))
    scores = run_score(plugin(nodes=nodes), p, nodes)
    assert scores[2] == 0
    assert scores[1] == 100


SERVICE = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {"selector": {"app": "web"}},
}


def owned(name: str, kind: str = "ReplicaSet", api: str = "apps/v1", **labels: str) -> PodInfo:
    p = pod(name, labels={"app": "web", **labels})
    p.pod["metadata"]["ownerReferences"] = [
        {"apiVersion": api, "kind": kind, "name": "rs", "controller": True}
    ]
    return p


def replica_set(selector: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "rs", "namespace": "default"},
        "spec": {"selector": selector},
    }


@pytest.mark.parametrize(
    ("p", "objects"),
    [
        pytest.param(pod("new", labels={"app": "web"}), [SERVICE], id="service"),
        pytest.param(owned("new"), [replica_set({"matchLabels": {"app": "web"}})], id="replicaset-owner"),
        pytest.param(
            owned("new", kind="StatefulSet"),
            [{**replica_set({"matchLabels": {"app": "web"}}), "kind": "StatefulSet"}],
            id="statefulset-owner",
        ),
        pytest.param(
            owned("new", kind="ReplicationController", api="v1"),
            [{**replica_set({"app": "web"}), "kind": "ReplicationController", "apiVersion": "v1"}],
            id="rc-owner",
        ),
    ],
)
def test_system_defaults_spread_selected_pods(p: PodInfo, objects: list[dict[str, Any]]) -> None:
    """Upstream: 4/3/2/1 pods, system defaults (hostname maxSkew 3), no zone labels -> 44, 66, 77, 100."""
    nodes = hosts(4, 3, 2, 1)
    assert run_score(plugin(nodes=nodes, objects=objects), p, nodes) == [44, 66, 77, 100]


@pytest.mark.parametrize(
    ("p", "objects", "args"),
    [
        pytest.param(pod("new", labels={"app": "web"}), [], None, id="nothing-selects-it"),
        pytest.param(pod("new", labels={"app": "db"}), [SERVICE], None, id="service-does-not-select-it"),
        pytest.param(
            pod("new", labels={"app": "web"}),
            [{**SERVICE, "metadata": {"name": "web", "namespace": "other"}}],
            None,
            id="service-in-other-namespace",
        ),
        pytest.param(
            owned("new", api="extensions/v1beta1"),
            [replica_set({"matchLabels": {"app": "web"}})],
            None,
            id="unknown-owner-group",
        ),
        pytest.param(
            pod("new", labels={"app": "web"}), [SERVICE], {"defaultingType": "List"}, id="list-empty"
        ),
    ],
)
def test_no_default_spreading(p: PodInfo, objects: list[dict[str, Any]], args: dict[str, Any] | None) -> None:
    nodes = hosts(4, 3)
    state = fw.CycleState()
    assert plugin(args, nodes, objects).pre_score(state, p, nodes).is_skip


def test_system_defaults_keep_zoneless_nodes_with_zoned_ones() -> None:
    """System defaulting does not ignore a node lacking the zone label: it still gets hostname spreading.

    Hostname weight ln(3+2); zone domains {"z1", ""} -> ln(4). Raw: n0 round(2*1.609+2 + 2*1.386+4) = 12,
    n1 round(2 + 6.77) = 9, bare (no zone term) 2 -> 100*(14-raw)/12 = 16, 41, 100.
    """
    nodes = [*hosts(2, 0, **{ZONE: "z1"}), node("bare", labels={HOST: "bare"})]
    scores = run_score(plugin(nodes=nodes, objects=[SERVICE]), pod("new", labels={"app": "web"}), nodes)
    assert scores == [16, 41, 100]


def test_list_defaulting_uses_default_constraints() -> None:
    args = {
        "defaultingType": "List",
        "defaultConstraints": [{"maxSkew": 1, "topologyKey": HOST, "whenUnsatisfiable": "ScheduleAnyway"}],
    }
    nodes = hosts(2, 1, 0, 3)
    assert run_score(plugin(args, nodes, [SERVICE]), pod("new", labels={"app": "web"}), nodes) == [
        20,
        60,
        100,
        0,
    ]


def test_list_defaulting_hard_constraint_filters() -> None:
    args = {
        "defaultingType": "List",
        "defaultConstraints": [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}],
    }
    nodes = zones(1, 0)
    got = verdicts(filter_all(plugin(args, nodes, [SERVICE]), pod("new", labels={"app": "web"}), nodes))
    assert got == {"a": SKEW, "b": OK}


def test_handle_without_lister_means_no_defaults() -> None:
    nodes = hosts(1, 0)
    decoded = pts.PodTopologySpreadArgs.decode(None, "a")[0]
    pl = pts.SPEC.new(decoded, FakeHandle(nodes))
    assert isinstance(pl, pts.PodTopologySpread)
    assert pl.pre_score(fw.CycleState(), pod("new", labels={"app": "web"}), nodes).is_skip


def test_soft_bad_selector_is_an_error_status() -> None:
    nodes = hosts(1)
    p = incoming(
        {**spread(HOST, when="ScheduleAnyway"), "labelSelector": {"matchExpressions": [{"key": "a"}]}}
    )
    status = plugin(nodes=nodes).pre_score(fw.CycleState(), p, nodes)
    assert status.code is fw.Code.ERROR
    assert "soft topology spread constraints" in status.message()


def test_spec_is_active() -> None:
    assert pts.SPEC.active


def test_objects_attribute_lister_is_read_too() -> None:
    """The ``handle.objects`` convention (list/get, as the volume plugins use) feeds default spreading as well."""
    nodes = hosts(4, 3, 2, 1)
    handle = FakeHandle(nodes)
    handle.objects = ObjectCache([SERVICE])
    pl = pts.SPEC.new(pts.PodTopologySpreadArgs.decode(None, "a")[0], handle)
    assert run_score(pl, pod("new", labels={"app": "web"}), nodes) == [44, 66, 77, 100]


# --- bad input never raises ----------------------------------------------------------------------------------------

_WORDS = st.sampled_from(
    ["DoNotSchedule", "ScheduleAnyway", "In", "NotIn", "Exists", "Foo", ZONE, HOST, "app", "web", "Honor", ""]
)
_KEYS = st.sampled_from(
    [
        "maxSkew",
        "topologyKey",
        "whenUnsatisfiable",
        "labelSelector",
        "matchLabels",
        "matchExpressions",
        "key",
        "operator",
        "values",
        "minDomains",
        "nodeAffinityPolicy",
        "nodeTaintsPolicy",
        "matchLabelKeys",
    ]
)
_JUNK = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | _WORDS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=5),
    max_leaves=12,
)


def _drive(pl: fw.Plugin, p: PodInfo, nodes: Sequence[NodeInfo]) -> None:
    """Every extension point answers with a Status (never an exception), whatever the input."""
    assert isinstance(pl, pts.PodTopologySpread)
    state = fw.CycleState()
    _, status = pl.pre_filter(state, p, nodes)
    assert isinstance(status, fw.Status)
    if status.is_success:
        assert pl.filter_nodes(state, p, nodes) == [pl.filter(state, p, n) for n in nodes]
        assert pl.add_pod(state, p, pod("x", labels={"app": "web"}), nodes[0]).is_success
        assert pl.remove_pod(state, p, pod("x", labels={"app": "web"}), nodes[0]).is_success
    state = fw.CycleState()
    status = pl.pre_score(state, p, nodes)
    assert isinstance(status, fw.Status)
    if status.is_success:
        scores = [fw.NodeScore(n.name, pl.score(state, p, n)[0]) for n in nodes]
        assert pl.normalize_score(state, p, scores).is_success


@settings(max_examples=80, deadline=None)
@given(constraints=_JUNK)
def test_malformed_constraints_never_raise(constraints: Any) -> None:
    nodes = [*zones(2, 1), node("c", labels={"other": "x"})]
    _drive(
        plugin(nodes=nodes, objects=[SERVICE]),
        pod("p", labels={"app": "web"}, spec={"topologySpreadConstraints": constraints}),
        nodes,
    )


@settings(max_examples=40, deadline=None)
@given(constraints=st.lists(st.dictionaries(_KEYS, _JUNK, max_size=6), max_size=3))
def test_constraint_shaped_junk_never_raises(constraints: list[dict[str, Any]]) -> None:
    nodes = [*zones(2, 1), node("c", labels={"other": "x"})]
    _drive(
        plugin(nodes=nodes),
        pod("p", labels={"app": "web"}, spec={"topologySpreadConstraints": constraints}),
        nodes,
    )


def test_remembered_counts_follow_node_changes() -> None:
    """Per-node counts are reused only for the same node object at the same generation."""
    nodes = zones(1, 0)
    pl, p = plugin(), incoming(spread(ZONE))

    def counts() -> list[dict[str, int]]:
        state = fw.CycleState()
        pl.pre_filter(state, p, nodes)
        got: list[dict[str, int]] = state.read(pts.PRE_FILTER_STATE_KEY).counts
        return got

    assert counts() == [{"zone1": 1, "zone2": 0}]
    nodes[1].add_pod(pod("late", labels={"app": "web"}).with_node("b"))  # same object, new generation
    assert counts() == [{"zone1": 1, "zone2": 1}]
    nodes[0] = node("a", labels={ZONE: "zone1", HOST: "a"}, pods=web(3, "a"))  # a new object (a new snapshot)
    assert counts() == [{"zone1": 3, "zone2": 1}]
