"""SchedulingGates: pods with spec.schedulingGates are held back at PreEnqueue."""

from __future__ import annotations

from typing import Any

import pytest

from berth.schedule.framework import interface as fw
from berth.schedule.plugins import scheduling_gates

from .support import FakeHandle, pod


@pytest.mark.parametrize(
    ("spec", "code", "message"),
    [
        ({}, fw.Code.SUCCESS, ""),
        ({"schedulingGates": []}, fw.Code.SUCCESS, ""),
        (
            {"schedulingGates": [{"name": "example.com/quota"}]},
            fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            "waiting for scheduling gates: [example.com/quota]",
        ),
        (
            {"schedulingGates": [{"name": "a"}, {"name": "b"}]},
            fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            "waiting for scheduling gates: [a b]",
        ),
    ],
    ids=["no-gates", "empty-gates", "one-gate", "two-gates"],
)
def test_pre_enqueue(spec: dict[str, Any], code: fw.Code, message: str) -> None:
    plugin = scheduling_gates.SchedulingGates(None, FakeHandle())
    status = plugin.pre_enqueue(pod(spec=spec))
    assert status.code is code
    assert status.message() == message


def test_requeued_when_gates_are_removed() -> None:
    plugin = scheduling_gates.SchedulingGates(None, FakeHandle())
    assert fw.ClusterEvent("Pod", "UpdatePodSchedulingGatesEliminated") in plugin.events_to_register()
