"""DefaultPreemption args (the plugin itself is inactive until the next issue)."""

from __future__ import annotations

from typing import Any

import pytest

from berth.schedule.plugins import default_preemption as dp

PCT = "a.minCandidateNodesPercentage"
ABS = "a.minCandidateNodesAbsolute"


@pytest.mark.parametrize(
    ("raw", "problems"),
    [
        (None, []),
        ({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 1}, []),
        ({"minCandidateNodesPercentage": 100, "minCandidateNodesAbsolute": 0}, []),
        ({"minCandidateNodesPercentage": 101}, [f"{PCT}: Invalid value: 101: not in valid range [0, 100]"]),
        ({"minCandidateNodesPercentage": -1}, [f"{PCT}: Invalid value: -1: not in valid range [0, 100]"]),
        ({"minCandidateNodesAbsolute": -1}, [f"{ABS}: Invalid value: -1: not in valid range [0, inf)"]),
        (
            {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
            [
                f"{PCT}: Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute",
                f"{ABS}: Invalid value: 0: cannot be zero at the same time as minCandidateNodesPercentage",
            ],
        ),
        ({"minCandidateNodes": 5}, ['a: unknown field "minCandidateNodes"']),
    ],
    ids=[
        "defaults",
        "pct-zero",
        "abs-zero",
        "pct-above",
        "pct-negative",
        "abs-negative",
        "both-zero",
        "unknown",
    ],
)
def test_args(raw: dict[str, Any] | None, problems: list[str]) -> None:
    assert dp.DefaultPreemptionArgs.decode(raw, "a")[1] == problems


def test_defaults() -> None:
    assert dp.DefaultPreemptionArgs.decode({}, "a")[0].to_dict() == {
        "minCandidateNodesPercentage": 10,
        "minCandidateNodesAbsolute": 100,
    }
