"""NodeUnschedulable: cordoned nodes reject pods unless they tolerate the unschedulable taint."""

from __future__ import annotations

from typing import Any

import pytest

from berth.schedule.framework import interface as fw
from berth.schedule.plugins import node_unschedulable as nu

from .support import FakeHandle, node, pod, run_filter


@pytest.mark.parametrize(
    ("unschedulable", "tolerations", "code"),
    [
        (False, [], fw.Code.SUCCESS),
        (True, [], fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
        (
            True,
            [{"key": nu.TAINT_NODE_UNSCHEDULABLE, "operator": "Exists", "effect": "NoSchedule"}],
            fw.Code.SUCCESS,
        ),
        (True, [{"key": nu.TAINT_NODE_UNSCHEDULABLE, "operator": "Exists"}], fw.Code.SUCCESS),
        (True, [{"operator": "Exists"}], fw.Code.SUCCESS),
        (
            True,
            [{"key": nu.TAINT_NODE_UNSCHEDULABLE, "operator": "Exists", "effect": "NoExecute"}],
            fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        ),
        (True, [{"key": "other", "operator": "Exists"}], fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
    ],
    ids=[
        "schedulable",
        "cordoned",
        "tolerated",
        "tolerated-any-effect",
        "tolerate-everything",
        "wrong-effect",
        "wrong-key",
    ],
)
def test_filter(unschedulable: bool, tolerations: list[dict[str, Any]], code: fw.Code) -> None:
    status = run_filter(
        nu.NodeUnschedulable(None, FakeHandle()),
        pod(tolerations=tolerations),
        node(unschedulable=unschedulable),
    )
    assert status.code is code
    if code is not fw.Code.SUCCESS:
        assert status.reasons == (nu.ERR_REASON_UNSCHEDULABLE,) == ("node(s) were unschedulable",)
