"""PodTopologySpread args (the plugin itself is inactive until the next issue): defaults and upstream validation."""

from __future__ import annotations

from typing import Any

import pytest

from berth.schedule.plugins import pod_topology_spread as pts


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
