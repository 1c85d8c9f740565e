"""Framework (one profile's pipeline): construction errors with upstream wording, and each extension point's rules."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from runtime_support import (
    JOURNAL_KEY,
    NameScore,
    node,
    pod_info,
    profile,
    registry,
)

from berth.schedule.cache import Cache, Snapshot
from berth.schedule.framework import interface as fwi
from berth.schedule.framework.interface import SUCCESS, Code, CycleState, Status
from berth.schedule.framework.runtime import Framework, FrameworkError
from berth.schedule.framework.types import NodeInfo, PodInfo

REG = registry()


class ArrayNameScore(NameScore):
    """NameScore with the fused array hook (as the built-in plugins have)."""

    NAME = "ArrayNameScore"

    def score_array(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo], arrays: Any, rows: Any
    ) -> Any:
        return np.asarray([self.score(state, pod, n)[0] for n in nodes], np.int64)


class ArrayOutOfRange(fwi.ScorePlugin):
    NAME = "ArrayOutOfRange"

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        return 150, SUCCESS

    def score_array(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo], arrays: Any, rows: Any
    ) -> Any:
        return np.full(len(nodes), 150, np.int64)


class FailingScore(fwi.ScorePlugin):
    NAME = "FailingScore"

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        return 0, fwi.error("no score today")


class _Multiples(fwi.FilterPlugin):
    """Rejects nodes whose number is a multiple of K; its mask also fails multiples of 7 (which may pass)."""

    NAME = ""
    K = 1

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        return fwi.unschedulable(f"multiple of {self.K}") if int(node.name[1:]) % self.K == 0 else SUCCESS

    def filter_mask(self, state: CycleState, pod: PodInfo, arrays: Any, rows: Any) -> Any:
        numbers = np.asarray([int(n.name[1:]) for n in np.asarray(arrays.objs, dtype=object)[rows]])
        return (numbers % self.K != 0) & (numbers % 7 != 0)


class MultiplesOfTwo(_Multiples):
    NAME = "MultiplesOfTwo"
    K = 2


class MultiplesOfThree(_Multiples):
    NAME = "MultiplesOfThree"
    K = 3


class MultiplesOfFive(fwi.FilterPlugin):
    """Rejects multiples of 5 (of 10: unresolvable); bulk verdicts with shared statuses, except for chunks that
    start at a multiple of 4 (the hook declines: the per-node Filter decides)."""

    NAME = "MultiplesOfFive"
    TABLE = (SUCCESS, fwi.unschedulable("multiple of 5"), fwi.unresolvable("multiple of 10"))

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        k = int(node.name[1:])
        return fwi.unresolvable("multiple of 10") if k % 10 == 0 else self.TABLE[1] if k % 5 == 0 else SUCCESS

    def filter_verdicts(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo], arrays: Any, rows: Any
    ) -> Any:
        numbers = np.asarray([int(n.name[1:]) for n in nodes])
        if numbers[0] % 4 == 0:
            return None
        return np.where(numbers % 10 == 0, 2, np.where(numbers % 5 == 0, 1, 0)).astype(np.int8), self.TABLE


for _cls in (
    ArrayNameScore,
    ArrayOutOfRange,
    FailingScore,
    MultiplesOfTwo,
    MultiplesOfThree,
    MultiplesOfFive,
):
    REG.register(fwi.PluginSpec(name=_cls.NAME, plugin_class=_cls))


def build(**points: Any) -> Framework:
    return Framework(profile("p", **points), REG)


def nodes(*names: str, ok: tuple[str, ...] = ()) -> list[NodeInfo]:
    return [NodeInfo(node(n, labels={"ok": "1"} if n in ok else {})) for n in names]


@pytest.mark.parametrize(
    ("points", "detail"),
    [
        pytest.param(
            {"filter": ["NoSuchPlugin"]}, 'FilterPlugin "NoSuchPlugin" does not exist', id="unknown-plugin"
        ),
        pytest.param(
            {"filter": ["PrioritySort"]},
            'plugin "PrioritySort" does not extend FilterPlugin plugin',
            id="wrong-point",
        ),
        pytest.param(
            {"score": ["NodeName"]},
            'plugin "NodeName" does not extend ScorePlugin plugin',
            id="filter-as-score",
        ),
        pytest.param(
            {"filter": ["NodeName", "NodeName"]},
            'plugin "NodeName" already registered as "FilterPlugin"',
            id="repeated",
        ),
        pytest.param(
            {"bind": []},
            'at least one bind plugin is needed for profile with scheduler name "p"',
            id="no-bind",
        ),
        pytest.param(
            {"queueSort": []},
            'only one queue sort plugin required for profile with scheduler name "p", but got 0',
            id="no-queue-sort",
        ),
        pytest.param(
            {"queueSort": ["PrioritySort", "FifoSort"]},
            'only one queue sort plugin required for profile with scheduler name "p", but got 2',
            id="two-queue-sorts",
        ),
    ],
)
def test_construction_errors_use_upstream_wording(points: dict[str, Any], detail: str) -> None:
    with pytest.raises(FrameworkError) as err:
        build(**points)
    assert str(err.value) == f"initializing profiles: creating profile for scheduler name p: {detail}"
    assert err.value.exit_code == 2


def test_plugin_args_are_defaulted_when_the_profile_has_none() -> None:
    fw = build(filter=["NodeResourcesFit"], score=["NodeResourcesFit"])
    assert fw.plugins["NodeResourcesFit"].args is not None


def test_invalid_args_of_a_plugin_fail_construction_naming_it() -> None:
    with pytest.raises(FrameworkError, match=r'initializing plugin "Concentrate": .*labelKey'):
        build(score=["Concentrate"])


def test_inactive_plugins_are_not_built_or_run_and_warn() -> None:
    fw = build(preFilter=["Dormant"], filter=["NodeName", "Dormant"])
    assert "Dormant" not in fw.plugins
    assert [n for n, _ in fw.filter] == ["NodeName"]
    assert fw.pre_filter == []
    assert fw.warnings == [
        'profile "p": plugin Dormant is accepted but not active yet in berth (it is skipped)',
    ]
    state = CycleState()
    _, status, _ = fw.run_pre_filter(state, pod_info("a"), nodes("n1"))
    assert status.is_success and fw.run_filter(state, pod_info("a"), nodes("n1")[0]).is_success


def test_prefilter_skip_removes_that_plugins_filter_for_the_pod() -> None:
    fw = build(preFilter=["LabelFilter"], filter=["LabelFilter"])
    ns = nodes("n1")
    state = CycleState()
    _, status, _ = fw.run_pre_filter(state, pod_info("a", labels={"skip-label-filter": "y"}), ns)
    assert status.is_success
    assert fw.run_filter(state, pod_info("a"), ns[0]).is_success
    assert state.read(JOURNAL_KEY) == ["LabelFilter.pre_filter"]  # the Filter never ran

    state = CycleState()
    fw.run_pre_filter(state, pod_info("b"), ns)
    status = fw.run_filter(state, pod_info("b"), ns[0])
    assert (status.code, status.reasons, status.plugin) == (
        Code.UNSCHEDULABLE,
        ("node(s) lacked label ok",),
        "LabelFilter",
    )


def test_filters_stop_at_the_first_rejecting_plugin() -> None:
    fw = build(filter=["LabelFilter", "AlwaysReject"])
    state = CycleState()
    ns = nodes("n1", "n2", ok=("n2",))
    assert fw.run_filter(state, pod_info("a"), ns[0]).plugin == "LabelFilter"
    assert fw.run_filter(state, pod_info("a"), ns[1]).plugin == "AlwaysReject"
    assert state.read(JOURNAL_KEY) == [
        "LabelFilter.filter:n1",
        "LabelFilter.filter:n2",
        "AlwaysReject.filter:n2",
    ]


@pytest.mark.parametrize(
    ("labels", "expected_nodes", "code", "message"),
    [
        pytest.param({}, None, Code.SUCCESS, "", id="no-result"),
        pytest.param({"pin": "n1.n2"}, {"n1", "n2"}, Code.SUCCESS, "", id="one-narrowing"),
        pytest.param({"pin": "n1.n2", "pin2": "n2.n3"}, {"n2"}, Code.SUCCESS, "", id="intersection"),
        pytest.param(
            {"pin": ""},
            set(),
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            "node(s) didn't satisfy plugin PinTo",
            id="empty-one",
        ),
        pytest.param(
            {"pin": "n1", "pin2": "n2"},
            set(),
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            "node(s) didn't satisfy plugin(s) [PinTo PinToo] simultaneously",
            id="empty-intersection",
        ),
    ],
)
def test_prefilter_results_narrow_by_intersection(
    labels: dict[str, str], expected_nodes: set[str] | None, code: Code, message: str
) -> None:
    fw = build(preFilter=["PinTo", "PinToo"])
    result, status, _ = fw.run_pre_filter(CycleState(), pod_info("a", labels=labels), nodes("n1", "n2", "n3"))
    got = None if result is None or result.node_names is None else set(result.node_names)
    assert got == expected_nodes
    assert status.code is code
    assert status.message() == message


def test_prefilter_unresolvable_stops_and_names_the_plugin() -> None:
    fw = build(preFilter=["PreFilterReject", "LabelFilter"])
    state = CycleState()
    _, status, _ = fw.run_pre_filter(state, pod_info("a", labels={"reject": "1"}), nodes("n1"))
    assert (status.code, status.plugin, status.message()) == (
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "PreFilterReject",
        "the pod asked to be rejected",
    )
    assert state.get(JOURNAL_KEY) is None  # LabelFilter's PreFilter never ran


def test_scores_are_normalised_then_weighted_and_summed() -> None:
    fw = build(score=[("NameScore", 2), ("NormalizedNameScore", 1), ("ReverseNameScore", 3)])
    ns = nodes("n1", "n2", "n4")
    totals, status = fw.run_score(CycleState(), pod_info("a"), ns)
    assert status is SUCCESS
    # n1: 1*2 + 25 + 9*3 = 54; n2: 2*2 + 50 + 8*3 = 78; n4: 4*2 + 100 + 6*3 = 126
    assert totals == [54, 78, 126]


def test_score_out_of_range_after_normalizing_is_an_error() -> None:
    fw = build(score=["OutOfRangeScore"])
    _, status = fw.run_score(CycleState(), pod_info("a"), nodes("n1"))
    assert status.code is Code.ERROR
    assert status.message() == (
        'applying score defaultWeights on Score plugins: plugin "OutOfRangeScore" returns an invalid score 101, '
        "it should in the range of [0, 100] after normalizing"
    )


@pytest.mark.parametrize(
    "score",
    [
        [("NameScore", 2), ("NormalizedNameScore", 1), ("ReverseNameScore", 3), ("ArrayNameScore", 2)],
        ["ArrayOutOfRange", "FailingScore"],
        ["NameScore", "OutOfRangeScore", "ArrayNameScore"],
        ["FailingScore", "ArrayOutOfRange"],
        ["ArrayNameScore", "ArrayOutOfRange", "OutOfRangeScore"],
    ],
    ids=["weighted-sum", "range-before-failure", "list-out-of-range", "failure-first", "first-bad-plugin"],
)
def test_fused_score_equals_run_score(score: list[Any]) -> None:
    """run_score_rows (range check and weighted sum over all plugins at once) reports what run_score does."""
    fw = build(score=score)
    ns = nodes("n1", "n2", "n4")
    arrays = fw.node_arrays()
    rows = arrays.rows(ns)
    want, want_status = fw.run_score(CycleState(), pod_info("a"), ns)
    got, got_status = fw.run_score_rows(CycleState(), pod_info("a"), ns, arrays, rows)
    assert got_status == want_status
    if want_status.is_success:
        assert list(got) == want


@settings(max_examples=100, deadline=None)
@given(
    order=st.permutations(["MultiplesOfTwo", "LabelFilter", "MultiplesOfThree", "MultiplesOfFive"]),
    ok=st.lists(st.booleans(), min_size=1, max_size=30),
    start=st.integers(0, 29),
    to_find=st.integers(1, 30),
)
def test_fused_filter_equals_the_plain_scan(
    order: list[str], ok: list[bool], start: int, to_find: int
) -> None:
    """Masks that pass, fail, or only may fail, mixed with a plugin without a mask and one with bulk verdicts
    (which sometimes declines), in any order: the same nodes examined, the same feasible nodes in rotation order, the same status (plugin, reason) per rejected node."""
    fw = build(filter=order)
    names = [f"n{i + 1}" for i in range(len(ok))]
    ns = nodes(*names, ok=tuple(n for n, good in zip(names, ok, strict=True) if good))
    start %= len(ns)
    arrays = fw.node_arrays()
    arrays.rows(ns)  # position i is row i
    state = CycleState()
    found = fw.find_feasible_rows(state, pod_info("a"), ns, arrays, start, to_find)
    assert found is not None
    feasible, rows, rejected = found
    want_feasible, want_rejected = [], {}
    for node_ in ns[start:] + ns[:start]:
        if len(want_feasible) == to_find:
            break
        status = fw.run_filter(state, pod_info("a"), node_)
        if status.is_success:
            want_feasible.append(node_.name)
        else:
            want_rejected[node_.name] = status
    assert [n.name for n in feasible] == want_feasible
    assert dict(rejected) == want_rejected
    assert [arrays.objs[r].name for r in np.arange(len(ns))[rows].tolist()] == want_feasible  # type: ignore[union-attr]


def test_prescore_skip_removes_that_plugins_score() -> None:
    fw = build(preScore=["SkippingScore"], score=["SkippingScore", "NameScore"])
    state = CycleState()
    ns = nodes("n1", "n3")
    assert fw.run_pre_score(state, pod_info("a"), ns).is_success
    totals, status = fw.run_score(state, pod_info("a"), ns)
    assert status.is_success and totals == [1, 3]


def test_a_crashing_plugin_becomes_an_error_status_naming_it() -> None:
    fw = build(filter=["Crashing"])
    status = fw.run_filter(CycleState(), pod_info("a"), nodes("n1")[0])
    assert status.code is Code.ERROR and status.plugin == "Crashing"
    assert "ZeroDivisionError: boom" in status.message()


def test_unreserve_runs_in_reverse_order_after_a_failed_reserve() -> None:
    fw = build(reserve=["ReserveA", "ReserveB", "ReserveFail"])
    state = CycleState()
    status = fw.run_reserve(state, pod_info("a"), "n1")
    assert (status.code, status.plugin) == (Code.UNSCHEDULABLE, "ReserveFail")
    fw.run_unreserve(state, pod_info("a"), "n1")
    assert state.read(JOURNAL_KEY) == [
        "ReserveA.reserve",
        "ReserveB.reserve",
        "ReserveFail.reserve",
        "ReserveFail.unreserve",
        "ReserveB.unreserve",
        "ReserveA.unreserve",
    ]


def test_bind_passes_over_skipping_binders_and_all_skipping_is_not_success() -> None:
    bound: list[tuple[str, str]] = []

    def binder(pod: PodInfo, node_name: str) -> Status:
        bound.append((pod.key, node_name))
        return SUCCESS

    fw = Framework(profile("p", bind=["SkipBinder", "DefaultBinder"]), REG, binder=binder)
    state = CycleState()
    assert fw.run_bind(state, pod_info("a"), "n1").is_success
    assert bound == [("default/a", "n1")]
    assert state.read(JOURNAL_KEY) == ["SkipBinder.bind"]

    only_skip = Framework(profile("p", bind=["SkipBinder"]), REG, binder=binder)
    assert only_skip.run_bind(CycleState(), pod_info("a"), "n1").code is Code.SKIP


def test_permit_rejection_names_the_plugin() -> None:
    fw = build(permit=["PermitReject"])
    status, _ = fw.run_permit(CycleState(), pod_info("a"), "n1")
    assert (status.code, status.plugin, status.message()) == (
        Code.UNSCHEDULABLE,
        "PermitReject",
        "not permitted",
    )


def test_plugins_see_the_cycle_snapshot_through_the_handle() -> None:
    cache = Cache()
    cache.add_node(node("n1"))
    snap = cache.update_snapshot(Snapshot())
    fw = Framework(profile("p", filter=["NodeName"]), REG, snapshot=lambda: snap)
    handle = fw.plugins["NodeName"].handle
    assert handle.profile_name == "p"
    assert [n.name for n in handle.snapshot().node_infos()] == ["n1"]


def test_events_default_to_everything_for_plugins_that_register_none() -> None:
    fw = build(filter=["LabelFilter", "NodeName"])
    events = fw.events_to_register()
    assert [(e.event.resource, e.event.action) for e in events["LabelFilter"]] == [("*", "*")]
    assert ("Node", "Add") in [(e.event.resource, e.event.action) for e in events["NodeName"]]
    assert all(e.hint is None for e in events["NodeName"])  # in-tree plugins give no queueing hints
