"""InterPodAffinity: args, Filter verdicts (required affinity incl. first-of-group, anti-affinity, existing pods'
anti-affinity, namespaces/namespaceSelector, bad and contradictory terms), PreFilter extensions, and scoring with
the upstream vectors (scoring_test.go: 100/0 and 20, 100, 0) plus hardPodAffinityWeight and
ignorePreferredTermsOfExistingPods."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from berth.schedule import vector
from berth.schedule.framework import interface as fw
from berth.schedule.framework.types import NodeInfo, PodInfo
from berth.schedule.plugins import inter_pod_affinity as ipa

from .support import FakeHandle, node, pod, run_score

ZONE = "zone"
HOST = "kubernetes.io/hostname"
REQ = "requiredDuringSchedulingIgnoredDuringExecution"
PREF = "preferredDuringSchedulingIgnoredDuringExecution"


@pytest.mark.parametrize(
    ("raw", "want", "problems"),
    [
        (None, {"hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": False}, []),
        (
            {"hardPodAffinityWeight": 0},
            {"hardPodAffinityWeight": 0, "ignorePreferredTermsOfExistingPods": False},
            [],
        ),
        (
            {"hardPodAffinityWeight": 100, "ignorePreferredTermsOfExistingPods": True},
            {"hardPodAffinityWeight": 100, "ignorePreferredTermsOfExistingPods": True},
            [],
        ),
        (
            {"hardPodAffinityWeight": 101},
            None,
            ["a.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]"],
        ),
        (
            {"hardPodAffinityWeight": -1},
            None,
            ["a.hardPodAffinityWeight: Invalid value: -1: not in valid range [0, 100]"],
        ),
        (
            {"ignorePreferredTermsOfExistingPods": "yes"},
            None,
            ['a.ignorePreferredTermsOfExistingPods: Invalid value: "yes": must be a boolean'],
        ),
        ({"hardPodAffinityWeigth": 2}, None, ['a: unknown field "hardPodAffinityWeigth"']),
    ],
    ids=["defaults", "zero-ok", "max-ok", "above-max", "negative", "wrong-type", "typo"],
)
def test_args(raw: dict[str, Any] | None, want: dict[str, Any] | None, problems: list[str]) -> None:
    args, got = ipa.InterPodAffinityArgs.decode(raw, "a")
    assert got == problems
    if want is not None:
        assert args.to_dict() == want


def test_reason_strings() -> None:
    assert ipa.ERR_REASON_AFFINITY_RULES_NOT_MATCH == "node(s) didn't match pod affinity rules"
    assert ipa.ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH == "node(s) didn't match pod anti-affinity rules"
    assert (
        ipa.ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH
        == "node(s) didn't satisfy existing pods anti-affinity rules"
    )


# --- builders ------------------------------------------------------------------------------------------------------


ObjectsHandle = FakeHandle


def plugin(
    args: dict[str, Any] | None = None,
    nodes: Sequence[NodeInfo] = (),
    objects: Sequence[Mapping[str, Any]] = (),
) -> ipa.InterPodAffinity:
    decoded, problems = ipa.InterPodAffinityArgs.decode(args, "args")
    assert problems == []
    built = ipa.SPEC.new(decoded, ObjectsHandle(nodes, objects))
    assert isinstance(built, ipa.InterPodAffinity)
    return built


def term(key: str = ZONE, **match: Any) -> dict[str, Any]:
    """A PodAffinityTerm selecting ``match`` labels (extra fields via ``_``-prefixed names)."""
    extra = {k[1:]: v for k, v in match.items() if k.startswith("_")}
    labels = {k: v for k, v in match.items() if not k.startswith("_")}
    return {"labelSelector": {"matchLabels": labels}, "topologyKey": key, **extra}


def affinity(
    required: Sequence[dict[str, Any]] = (),
    anti: Sequence[dict[str, Any]] = (),
    preferred: Sequence[tuple[int, dict[str, Any]]] = (),
    preferred_anti: Sequence[tuple[int, dict[str, Any]]] = (),
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if required or preferred:
        out["podAffinity"] = {}
        if required:
            out["podAffinity"][REQ] = list(required)
        if preferred:
            out["podAffinity"][PREF] = [{"weight": w, "podAffinityTerm": t} for w, t in preferred]
    if anti or preferred_anti:
        out["podAntiAffinity"] = {}
        if anti:
            out["podAntiAffinity"][REQ] = list(anti)
        if preferred_anti:
            out["podAntiAffinity"][PREF] = [{"weight": w, "podAffinityTerm": t} for w, t in preferred_anti]
    return out


def filter_all(pl: ipa.InterPodAffinity, p: PodInfo, nodes: Sequence[NodeInfo]) -> dict[str, str]:
    state = fw.CycleState()
    _, status = pl.pre_filter(state, p, nodes)
    if status.is_skip:
        return {n.name: "SKIP" for n in nodes}
    assert status.is_success, status
    per_node = [pl.filter(state, p, n) for n in nodes]
    assert pl.filter_nodes(state, p, nodes) == per_node, "the batch hook must agree"
    return {n.name: st.message() or "OK" for n, st in zip(nodes, per_node, strict=True)}


AFF = ipa.ERR_REASON_AFFINITY_RULES_NOT_MATCH
ANTI = ipa.ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH
EXISTING = ipa.ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH


def cluster(*extra: NodeInfo) -> list[NodeInfo]:
    """z1: a (runs app=db), b (empty); z2: c (empty); plus ``extra``."""
    return [
        node("a", labels={ZONE: "z1", HOST: "a"}, pods=[pod("db", labels={"app": "db"})]),
        node("b", labels={ZONE: "z1", HOST: "b"}),
        node("c", labels={ZONE: "z2", HOST: "c"}),
        *extra,
    ]


NOKEY = node("d", labels={HOST: "d"})


# --- Filter --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("p", "nodes", "want"),
    [
        pytest.param(
            pod("p", affinity=affinity(required=[term(app="db")])),
            cluster(NOKEY),
            {"a": "OK", "b": "OK", "c": AFF, "d": AFF},
            id="affinity-zone",
        ),
        pytest.param(
            pod("p", affinity=affinity(required=[term(HOST, app="db")])),
            cluster(),
            {"a": "OK", "b": AFF, "c": AFF},
            id="affinity-host",
        ),
        pytest.param(
            pod("p", affinity=affinity(required=[term(app="db"), term(HOST, app="db")])),
            cluster(),
            {"a": "OK", "b": AFF, "c": AFF},
            id="affinity-all-terms",
        ),
        pytest.param(
            pod("p", affinity=affinity(required=[term(app="db", tier="x")])),
            cluster(NOKEY),
            {"a": AFF, "b": AFF, "c": AFF, "d": AFF},
            id="affinity-nothing-matches-not-self",
        ),
        pytest.param(
            pod("p", labels={"app": "web"}, affinity=affinity(required=[term(app="web")])),
            cluster(NOKEY),
            {"a": "OK", "b": "OK", "c": "OK", "d": AFF},
            id="first-pod-of-group",
        ),
        pytest.param(
            pod("p", labels={"app": "web"}, affinity=affinity(required=[term(app="web"), term(app="db")])),
            cluster(),
            {"a": AFF, "b": AFF, "c": AFF},
            id="all-terms-must-match-one-pod",
        ),
        pytest.param(
            pod("p", affinity=affinity(anti=[term(app="db")])),
            cluster(NOKEY),
            {"a": ANTI, "b": ANTI, "c": "OK", "d": "OK"},
            id="anti-affinity-zone",
        ),
        pytest.param(
            pod("p", affinity=affinity(anti=[term(HOST, app="db")])),
            cluster(),
            {"a": ANTI, "b": "OK", "c": "OK"},
            id="anti-affinity-host",
        ),
        pytest.param(
            pod("p", labels={"app": "web"}),
            [
                node(
                    "a",
                    labels={ZONE: "z1"},
                    pods=[pod("guard", labels={"app": "db"}, affinity=affinity(anti=[term(app="web")]))],
                ),
                node("b", labels={ZONE: "z1"}),
                node("c", labels={ZONE: "z2"}),
                node("d", labels={}),
            ],
            {"a": EXISTING, "b": EXISTING, "c": "OK", "d": "OK"},
            id="existing-anti-affinity",
        ),
        pytest.param(
            pod("p", labels={"app": "web"}),
            [node("a", labels={ZONE: "z1"}, pods=[pod("guard", affinity=affinity(anti=[term(app="db")]))])],
            {"a": "SKIP"},
            id="existing-anti-not-matching-skips",
        ),
        pytest.param(
            pod("p", labels={"app": "web"}), cluster(), {"a": "SKIP", "b": "SKIP", "c": "SKIP"}, id="skip"
        ),
        pytest.param(
            pod(
                "p",
                labels={"app": "db"},
                affinity=affinity(required=[term(HOST, app="db")], anti=[term(HOST, app="db")]),
            ),
            cluster(),
            {"a": ANTI, "b": AFF, "c": AFF},
            id="contradictory-affinity-and-anti",
        ),
        pytest.param(
            pod("p", affinity=affinity(required=[term("example.com/rack", app="db")])),
            cluster(),
            {"a": AFF, "b": AFF, "c": AFF},
            id="key-no-node-has",
        ),
        pytest.param(
            pod("p", affinity=affinity(required=[term(app="db", _namespaces=["other"])])),
            cluster(),
            {"a": AFF, "b": AFF, "c": AFF},
            id="namespaces-list-excludes-default",
        ),
        pytest.param(
            pod("p", namespace="other", affinity=affinity(required=[term(app="db")])),
            cluster(),
            {"a": AFF, "b": AFF, "c": AFF},
            id="own-namespace-by-default",
        ),
        pytest.param(
            pod("p", namespace="other", affinity=affinity(required=[term(app="db", _namespaceSelector={})])),
            cluster(),
            {"a": "OK", "b": "OK", "c": AFF},
            id="empty-namespace-selector-means-all",
        ),
        pytest.param(
            pod(
                "p",
                namespace="other",
                affinity=affinity(
                    required=[
                        term(
                            app="db",
                            _namespaceSelector={"matchLabels": {"kubernetes.io/metadata.name": "default"}},
                        )
                    ]
                ),
            ),
            cluster(),
            {"a": "OK", "b": "OK", "c": AFF},
            id="namespace-selector-by-name-label",
        ),
        pytest.param(
            pod(
                "p",
                namespace="other",
                affinity=affinity(
                    required=[term(app="db", _namespaceSelector={"matchLabels": {"team": "data"}})]
                ),
            ),
            cluster(),
            {"a": "OK", "b": "OK", "c": AFF},
            id="namespace-selector-by-namespace-labels",
        ),
        pytest.param(
            pod(
                "p",
                labels={"app": "db", "rev": "2"},
                affinity=affinity(anti=[term(HOST, app="db", _matchLabelKeys=["rev"])]),
            ),
            [
                node("a", labels={HOST: "a"}, pods=[pod("old", labels={"app": "db", "rev": "1"})]),
                node("b", labels={HOST: "b"}, pods=[pod("new", labels={"app": "db", "rev": "2"})]),
            ],
            {"a": "OK", "b": ANTI},
            id="match-label-keys",
        ),
        pytest.param(
            pod(
                "p",
                labels={"app": "db", "rev": "2"},
                affinity=affinity(anti=[term(HOST, app="db", _mismatchLabelKeys=["rev"])]),
            ),
            [
                node("a", labels={HOST: "a"}, pods=[pod("old", labels={"app": "db", "rev": "1"})]),
                node("b", labels={HOST: "b"}, pods=[pod("new", labels={"app": "db", "rev": "2"})]),
            ],
            {"a": ANTI, "b": "OK"},
            id="mismatch-label-keys",
        ),
    ],
)
def test_filter(p: PodInfo, nodes: list[NodeInfo], want: dict[str, str]) -> None:
    namespaces = [{"kind": "Namespace", "metadata": {"name": "default", "labels": {"team": "data"}}}]
    assert filter_all(plugin(objects=namespaces, nodes=nodes), p, nodes) == want


def test_filter_codes() -> None:
    nodes = cluster()
    pl = plugin()
    state = fw.CycleState()
    p = pod("p", affinity=affinity(required=[term(HOST, app="db")], anti=[term(ZONE, app="db")]))
    pl.pre_filter(state, p, nodes)
    assert pl.filter(state, p, nodes[1]).code is fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert pl.filter(state, p, nodes[0]).code is fw.Code.UNSCHEDULABLE


@pytest.mark.parametrize(
    ("aff", "fragment"),
    [
        pytest.param(
            affinity(required=[{"labelSelector": {"matchExpressions": [{"key": "a", "operator": "Near"}]}}]),
            'parsing pod: requiredAffinityTerms: "Near" is not a valid label selector operator',
            id="bad-operator",
        ),
        pytest.param(
            affinity(anti=[{"labelSelector": {"matchExpressions": [{"key": "a", "operator": "In"}]}}]),
            "parsing pod: requiredAntiAffinityTerms: values: Invalid value",
            id="in-without-values",
        ),
        pytest.param(
            affinity(
                required=[{"labelSelector": {"matchLabels": {"a b": "x"}}}],
                preferred=[
                    (
                        1,
                        {
                            "labelSelector": {
                                "matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]
                            }
                        },
                    )
                ],
            ),
            "parsing pod: [requiredAffinityTerms: key: Invalid value",
            id="aggregated",
        ),
    ],
)
def test_bad_terms_are_unresolvable_never_raise(aff: dict[str, Any], fragment: str) -> None:
    state = fw.CycleState()
    _, status = plugin().pre_filter(state, pod("p", affinity=aff), cluster())
    assert status.code is fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.message().startswith(fragment)


def test_existing_pod_with_bad_terms_is_ignored() -> None:
    bad = pod(
        "bad",
        affinity=affinity(anti=[{"labelSelector": {"matchExpressions": [{"key": "a", "operator": "?"}]}}]),
    )
    nodes = [node("a", labels={ZONE: "z1"}, pods=[bad])]
    assert filter_all(plugin(), pod("p"), nodes) == {"a": "SKIP"}


def test_add_and_remove_pod_update_counts() -> None:
    nodes = cluster()
    pl = plugin()
    p = pod(
        "p",
        labels={"app": "web"},
        affinity=affinity(required=[term(HOST, app="db")], anti=[term(ZONE, app="cache")]),
    )
    state = fw.CycleState()
    pl.pre_filter(state, p, nodes)
    ext = pl.pre_filter_extensions()
    assert ext is not None
    copy = state.clone()
    # Removing the only db pod leaves no matching pod: p does not match its own term, so every node fails.
    assert ext.remove_pod(copy, p, nodes[0].pods[0], nodes[0]).is_success
    assert copy.read(ipa.PRE_FILTER_STATE_KEY).affinity == {}
    assert pl.filter(copy, p, nodes[0]).message() == AFF
    # A cache pod in z2 makes c violate p's anti-affinity; a guard pod anti-affine to web blocks z1.
    assert ext.add_pod(copy, p, pod("db2", labels={"app": "db"}), nodes[2]).is_success
    assert ext.add_pod(copy, p, pod("cache", labels={"app": "cache"}), nodes[2]).is_success
    assert pl.filter(copy, p, nodes[2]).message() == ANTI
    guard = pod("guard", affinity=affinity(anti=[term(ZONE, app="web")]))
    assert ext.add_pod(copy, p, guard, nodes[0]).is_success
    assert copy.read(ipa.PRE_FILTER_STATE_KEY).existing_anti == {(ZONE, "z1"): 1}
    assert ext.remove_pod(copy, p, guard, nodes[0]).is_success
    assert copy.read(ipa.PRE_FILTER_STATE_KEY).existing_anti == {}
    # The original state did not move.
    assert state.read(ipa.PRE_FILTER_STATE_KEY).affinity == {(HOST, "a"): 1}
    assert pl.filter(state, p, nodes[0]).is_success


# --- Score ---------------------------------------------------------------------------------------------------------

REGION = "region"


def sec(name: str, value: str) -> PodInfo:
    return pod(name, labels={"security": value})


def test_score_vector_weight_toward_s2() -> None:
    """Weight 6 toward security=S2 by region: China has 4 such pods (raw 24), India 2 (raw 12) -> 100, 0."""
    china = node("china", labels={REGION: "China"}, pods=[sec(f"c{i}", "S2") for i in range(4)])
    india = node("india", labels={REGION: "India"}, pods=[sec(f"i{i}", "S2") for i in range(2)])
    p = pod("p", affinity=affinity(preferred=[(6, term(REGION, security="S2"))]))
    assert run_score(plugin(nodes=[china, india]), p, [china, india]) == [100, 0]


def test_score_vector_two_terms() -> None:
    """Terms 8 (NotIn S1 and In S2) and 2 (Exists security and DoesNotExist wrongkey) -> 20, 100, 0."""
    t8 = {
        "labelSelector": {
            "matchExpressions": [
                {"key": "security", "operator": "NotIn", "values": ["S1"]},
                {"key": "security", "operator": "In", "values": ["S2"]},
            ]
        },
        "topologyKey": REGION,
    }
    t2 = {
        "labelSelector": {
            "matchExpressions": [
                {"key": "security", "operator": "Exists"},
                {"key": "wrongkey", "operator": "DoesNotExist"},
            ]
        },
        "topologyKey": REGION,
    }
    china = node("china", labels={REGION: "China"}, pods=[sec("c", "S1")])
    india = node("india", labels={REGION: "India"}, pods=[sec("i", "S2")])
    bare = node("bare", labels={"other": "x"}, pods=[sec("b", "S2")])
    p = pod("p", affinity=affinity(preferred=[(8, t8), (2, t2)]))
    nodes = [china, india, bare]
    assert run_score(plugin(nodes=nodes), p, nodes) == [20, 100, 0]


def test_score_anti_affinity_prefers_elsewhere() -> None:
    a = node("a", labels={HOST: "a"}, pods=[sec("x", "S1"), sec("y", "S1")])
    b = node("b", labels={HOST: "b"}, pods=[sec("z", "S1")])
    c = node("c", labels={HOST: "c"})
    p = pod("p", affinity=affinity(preferred_anti=[(5, term(HOST, security="S1"))]))
    assert run_score(plugin(nodes=[a, b, c]), p, [a, b, c]) == [0, 50, 100]


@pytest.mark.parametrize(
    ("weight", "want"), [(1, [100, 0]), (0, [0, 0])], ids=["hard-weight-1", "hard-weight-0"]
)
def test_score_existing_required_affinity_uses_hard_weight(weight: int, want: list[int]) -> None:
    fan = pod("fan", affinity=affinity(required=[term(HOST, app="web")]))
    a = node("a", labels={HOST: "a"}, pods=[fan])
    b = node("b", labels={HOST: "b"})
    p = pod("p", labels={"app": "web"})
    assert run_score(plugin({"hardPodAffinityWeight": weight}, [a, b]), p, [a, b]) == want


def test_score_existing_preferred_terms() -> None:
    likes = pod("likes", affinity=affinity(preferred=[(4, term(HOST, app="web"))]))
    hates = pod("hates", affinity=affinity(preferred_anti=[(4, term(HOST, app="web"))]))
    a = node("a", labels={HOST: "a"}, pods=[likes])
    b = node("b", labels={HOST: "b"}, pods=[hates])
    c = node("c", labels={HOST: "c"})
    p = pod("p", labels={"app": "web"})
    assert run_score(plugin(nodes=[a, b, c]), p, [a, b, c]) == [100, 0, 50]
    ignoring = plugin({"ignorePreferredTermsOfExistingPods": True}, [a, b, c])
    assert ignoring.pre_score(fw.CycleState(), p, [a, b, c]).is_skip


def test_score_skips_when_nothing_counts() -> None:
    nodes = cluster()
    assert plugin(nodes=nodes).pre_score(fw.CycleState(), pod("p"), nodes).is_skip
    p = pod("p", affinity=affinity(preferred=[(3, term(HOST, app="nobody"))]))
    assert plugin(nodes=nodes).pre_score(fw.CycleState(), p, nodes).is_skip


def test_score_all_equal_is_zero() -> None:
    a = node("a", labels={HOST: "a"}, pods=[sec("x", "S1")])
    b = node("b", labels={HOST: "b"}, pods=[sec("y", "S1")])
    p = pod("p", affinity=affinity(preferred=[(3, term(HOST, security="S1"))]))
    assert run_score(plugin(nodes=[a, b]), p, [a, b]) == [0, 0]


def test_terms_are_parsed_once_per_pod() -> None:
    pl = plugin()
    p = pod("p", affinity=affinity(required=[term(app="db")]))
    assert pl.terms_of(p) is pl.terms_of(p) is pl.terms_of(p.with_node("a"))
    assert pl.terms_of(pod("q")) is ipa.NO_TERMS


def test_spec_is_active() -> None:
    assert ipa.SPEC.active


class ListingSnapshotHandle(ObjectsHandle):
    """A handle whose snapshot offers upstream's precomputed "nodes hosting pods with affinity" lists."""

    def __init__(self, nodes: Sequence[NodeInfo], listed: Sequence[NodeInfo]) -> None:
        super().__init__(nodes)
        self.listed = list(listed)
        snap = self.snapshot()
        snap.have_pods_with_affinity = lambda: self.listed  # type: ignore[attr-defined]
        snap.have_pods_with_required_anti_affinity = lambda: self.listed  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("listed", "want"), [(True, EXISTING), (False, "SKIP")], ids=["listed", "not-listed"]
)
def test_snapshot_lists_of_nodes_with_affinity_pods_are_used(listed: bool, want: str) -> None:
    guard = pod("guard", affinity=affinity(anti=[term(ZONE, app="web")]))
    a = node("a", labels={ZONE: "z1"}, pods=[guard])
    handle = ListingSnapshotHandle([a], [a] if listed else [])
    vector.set_enabled(handle, False)  # the lists are a reference-path shortcut
    pl = ipa.SPEC.new(ipa.InterPodAffinityArgs(), handle)
    assert isinstance(pl, ipa.InterPodAffinity)
    assert filter_all(pl, pod("p", labels={"app": "web"}), [a]) == {"a": want}


# --- bad input never raises ----------------------------------------------------------------------------------------

_WORDS = st.sampled_from(
    ["In", "NotIn", "Exists", "DoesNotExist", "Foo", ZONE, HOST, "app", "db", "default", ""]
)
_KEYS = st.sampled_from(
    [
        REQ,
        PREF,
        "weight",
        "podAffinityTerm",
        "labelSelector",
        "namespaceSelector",
        "namespaces",
        "topologyKey",
        "matchLabels",
        "matchExpressions",
        "key",
        "operator",
        "values",
        "matchLabelKeys",
        "mismatchLabelKeys",
    ]
)
_JUNK = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | _WORDS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=5),
    max_leaves=14,
)


@settings(max_examples=80, deadline=None)
@given(incoming=_JUNK, existing=_JUNK)
def test_malformed_affinity_never_raises(incoming: Any, existing: Any) -> None:
    """Junk in the incoming pod's and in existing pods' podAffinity/podAntiAffinity: statuses, not exceptions."""
    other = pod(
        "other", labels={"app": "db"}, affinity={"podAntiAffinity": existing, "podAffinity": existing}
    )
    nodes = [*cluster(), node("e", labels={ZONE: "z2", HOST: "e"}, pods=[other])]
    p = pod("p", labels={"app": "db"}, affinity={"podAffinity": incoming, "podAntiAffinity": incoming})
    pl = plugin(nodes=nodes)
    state = fw.CycleState()
    _, status = pl.pre_filter(state, p, nodes)
    assert isinstance(status, fw.Status)
    if status.is_success:
        assert pl.filter_nodes(state, p, nodes) == [pl.filter(state, p, n) for n in nodes]
        assert pl.add_pod(state, p, other, nodes[0]).is_success
        assert pl.remove_pod(state, p, other, nodes[0]).is_success
    state = fw.CycleState()
    status = pl.pre_score(state, p, nodes)
    assert isinstance(status, fw.Status)
    if status.is_success:
        scores = [fw.NodeScore(n.name, pl.score(state, p, n)[0]) for n in nodes]
        assert pl.normalize_score(state, p, scores).is_success
        assert all(0 <= s.score <= 100 for s in scores)


def test_remembered_counts_follow_node_changes() -> None:
    """Per-node match counts are reused only for the same node object at the same generation."""
    nodes = cluster()
    pl = plugin()
    p = pod("p", affinity=affinity(required=[term(HOST, app="db")], anti=[term(ZONE, app="cache")]))

    def counts() -> tuple[dict[tuple[str, str], int], dict[tuple[str, str], int]]:
        state = fw.CycleState()
        pl.pre_filter(state, p, nodes)
        s = state.read(ipa.PRE_FILTER_STATE_KEY)
        return s.affinity, s.anti

    assert counts() == ({(HOST, "a"): 1}, {})
    nodes[1].add_pod(pod("db2", labels={"app": "db"}).with_node("b"))
    nodes[2].add_pod(pod("cache", labels={"app": "cache"}).with_node("c"))
    assert counts() == ({(HOST, "a"): 1, (HOST, "b"): 1}, {(ZONE, "z2"): 1})
    nodes[0] = node("a", labels={ZONE: "z1", HOST: "a"})  # a new object without the db pod
    assert counts() == ({(HOST, "b"): 1}, {(ZONE, "z2"): 1})


def test_remembered_existing_anti_affinity_follows_node_changes() -> None:
    guard = pod("guard", affinity=affinity(anti=[term(ZONE, app="web")]))
    nodes = [node("a", labels={ZONE: "z1"}, pods=[guard]), node("b", labels={ZONE: "z2"})]
    pl = plugin(nodes=nodes)

    def existing(p: PodInfo) -> dict[tuple[str, str], int]:
        state = fw.CycleState()
        _, status = pl.pre_filter(state, p, nodes)
        return {} if status.is_skip else dict(state.read(ipa.PRE_FILTER_STATE_KEY).existing_anti)

    web = pod("w", labels={"app": "web"})
    assert existing(web) == {(ZONE, "z1"): 1}
    assert existing(pod("d", labels={"app": "db"})) == {}  # other labels, other answer
    nodes[1].add_pod(pod("guard2", affinity=affinity(anti=[term(ZONE, app="web")])).with_node("b"))
    assert existing(web) == {(ZONE, "z1"): 1, (ZONE, "z2"): 1}
    nodes[0] = node("a", labels={ZONE: "z1"})
    assert existing(web) == {(ZONE, "z2"): 1}


def test_score_skips_nodes_whose_pods_do_not_score_others() -> None:
    guard = pod("guard", affinity=affinity(anti=[term(HOST, app="web")]))
    a = node("a", labels={HOST: "a"}, pods=[guard])
    b = node("b", labels={HOST: "b"})
    p = pod("p", labels={"app": "web"})
    pl = plugin(nodes=[a, b])
    assert pl.pre_score(fw.CycleState(), p, [a, b]).is_skip  # anti-affinity pods score nobody
    a.add_pod(pod("likes", affinity=affinity(preferred=[(4, term(HOST, app="web"))])).with_node("a"))
    assert run_score(pl, p, [a, b]) == [100, 0]
