"""DynamicResources args (the plugin itself is inactive): Go durations, defaults 10s / 600s."""

from __future__ import annotations

from typing import Any

import pytest

from berth.schedule.plugins import dynamic_resources as dra


@pytest.mark.parametrize(
    ("raw", "want", "problems"),
    [
        (None, {"filterTimeout": "10s", "bindingTimeout": "10m0s"}, []),
        ({"filterTimeout": "0s"}, {"filterTimeout": "0s", "bindingTimeout": "10m0s"}, []),
        (
            {"filterTimeout": "1m30s", "bindingTimeout": "5m"},
            {"filterTimeout": "1m30s", "bindingTimeout": "5m0s"},
            [],
        ),
        ({"filterTimeout": "-1s"}, None, ["a.filterTimeout: Invalid value: -1s: must be zero or positive"]),
        ({"bindingTimeout": "0s"}, None, ["a.bindingTimeout: Invalid value: 0s: must be at least 1 second"]),
        (
            {"bindingTimeout": "500ms"},
            None,
            ["a.bindingTimeout: Invalid value: 500ms: must be at least 1 second"],
        ),
        ({"bindingTimeout": "1s"}, {"filterTimeout": "10s", "bindingTimeout": "1s"}, []),
        (
            {"filterTimeout": "soon"},
            None,
            ['a.filterTimeout: Invalid value: "soon": must be a duration such as "10s" or "1m30s"'],
        ),
        (
            {"filterTimeout": 10},
            None,
            ['a.filterTimeout: Invalid value: 10: must be a duration such as "10s" or "1m30s"'],
        ),
        ({"timeout": "1s"}, None, ['a: unknown field "timeout"']),
    ],
    ids=[
        "defaults",
        "zero-filter-ok",
        "compound",
        "negative-filter",
        "zero-binding",
        "sub-second-binding",
        "one-second-binding",
        "garbage",
        "number",
        "unknown",
    ],
)
def test_args(raw: dict[str, Any] | None, want: dict[str, Any] | None, problems: list[str]) -> None:
    args, got = dra.DynamicResourcesArgs.decode(raw, "a")
    assert got == problems
    if want is not None:
        assert args.to_dict() == want
