"""InterPodAffinity args (the plugin itself is inactive until the next issue)."""

from __future__ import annotations

from typing import Any

import pytest

from berth.schedule.plugins import inter_pod_affinity as ipa


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
