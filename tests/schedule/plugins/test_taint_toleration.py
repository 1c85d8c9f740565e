"""TaintToleration: hard taints filter (Unresolvable), PreferNoSchedule taints score (reverse-normalised)."""

from __future__ import annotations

from typing import Any

import pytest

from berth.schedule.framework import interface as fw
from berth.schedule.plugins import taint_toleration as tt

from .support import FakeHandle, node, pod, run_filter, run_score


def taint(key: str, effect: str, value: str = "") -> dict[str, Any]:
    t = {"key": key, "effect": effect}
    if value:
        t["value"] = value
    return t


@pytest.mark.parametrize(
    ("taints", "tolerations", "fits"),
    [
        ([], [], True),
        ([taint("dedicated", "NoSchedule", "gpu")], [], False),
        ([taint("dedicated", "NoExecute", "gpu")], [], False),
        ([taint("dedicated", "PreferNoSchedule", "gpu")], [], True),
        (
            [taint("dedicated", "NoSchedule", "gpu")],
            [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}],
            True,
        ),
        ([taint("dedicated", "NoSchedule", "gpu")], [{"key": "dedicated", "value": "gpu"}], True),
        (
            [taint("dedicated", "NoSchedule", "gpu")],
            [{"key": "dedicated", "operator": "Equal", "value": "cpu"}],
            False,
        ),
        ([taint("dedicated", "NoSchedule", "gpu")], [{"key": "dedicated", "operator": "Exists"}], True),
        ([taint("dedicated", "NoSchedule", "gpu")], [{"operator": "Exists"}], True),
        (
            [taint("dedicated", "NoSchedule", "gpu")],
            [{"key": "dedicated", "operator": "Exists", "effect": "NoExecute"}],
            False,
        ),
        ([taint("a", "NoSchedule"), taint("b", "NoSchedule")], [{"key": "a", "operator": "Exists"}], False),
    ],
    ids=[
        "no-taints",
        "no-schedule",
        "no-execute",
        "prefer-is-not-a-filter",
        "equal-match",
        "default-operator-equal",
        "value-mismatch",
        "exists",
        "exists-empty-key",
        "effect-mismatch",
        "second-taint-untolerated",
    ],
)
def test_filter(taints: list[dict[str, Any]], tolerations: list[dict[str, Any]], fits: bool) -> None:
    status = run_filter(
        tt.TaintToleration(None, FakeHandle()), pod(tolerations=tolerations), node(taints=taints)
    )
    if fits:
        assert status.is_success
    else:
        assert status.code is fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert status.reasons == (tt.ERR_REASON_UNTOLERATED,) == ("node(s) had untolerated taint(s)",)


@pytest.mark.parametrize(
    ("tolerations", "node_taints", "want"),
    [
        # upstream taint_toleration_test.go: 0, 1 and 2 intolerable PreferNoSchedule taints -> 100, 50, 0
        (
            [],
            [
                [],
                [taint("a", "PreferNoSchedule")],
                [taint("a", "PreferNoSchedule"), taint("b", "PreferNoSchedule")],
            ],
            [100, 50, 0],
        ),
        (
            [{"key": "a", "operator": "Exists", "effect": "PreferNoSchedule"}],
            [[taint("a", "PreferNoSchedule")], [taint("b", "PreferNoSchedule")]],
            [100, 0],
        ),
        # A NoSchedule toleration does not count for PreferNoSchedule taints; an empty effect does.
        (
            [{"key": "a", "operator": "Exists", "effect": "NoSchedule"}],
            [[taint("a", "PreferNoSchedule")], []],
            [0, 100],
        ),
        ([{"key": "a", "operator": "Exists"}], [[taint("a", "PreferNoSchedule")], []], [100, 100]),
        # Hard taints do not enter the score.
        ([], [[taint("a", "NoSchedule")], []], [100, 100]),
    ],
    ids=[
        "upstream-0-1-2",
        "tolerated-one",
        "noschedule-toleration-ignored",
        "empty-effect-toleration",
        "hard-taints-ignored",
    ],
)
def test_score(
    tolerations: list[dict[str, Any]], node_taints: list[list[dict[str, Any]]], want: list[int]
) -> None:
    nodes = [node(f"n{i}", taints=t) for i, t in enumerate(node_taints)]
    assert run_score(tt.TaintToleration(None, FakeHandle()), pod(tolerations=tolerations), nodes) == want
