"""VolumeBinding args (the plugin itself is inactive until the next issue)."""

from __future__ import annotations

from typing import Any

import pytest

from berth.schedule.plugins import volume_binding as vb


@pytest.mark.parametrize(
    ("raw", "problems"),
    [
        (None, []),
        ({"bindTimeoutSeconds": 0}, []),
        (
            {"bindTimeoutSeconds": -1},
            [
                "a.bindTimeoutSeconds: Invalid value: -1: invalid BindTimeoutSeconds, should not be a negative value"
            ],
        ),
        (
            {"shape": [{"utilization": 0, "score": 0}]},
            [
                "a.shape: Invalid value: []config.UtilizationShapePoint{config.UtilizationShapePoint{Utilization:0, "
                "Score:0}}: unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring"
            ],
        ),
        (
            {"shape": [{"utilization": 0, "scor": 0}]},
            [
                'a.shape[0]: unknown field "scor"',
                "a.shape: Invalid value: []config.UtilizationShapePoint{config.UtilizationShapePoint{Utilization:0, "
                "Score:0}}: unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring",
            ],
        ),
        ({"bindTimeout": 5}, ['a: unknown field "bindTimeout"']),
    ],
    ids=["defaults", "zero", "negative", "shape-needs-gate", "shape-shape", "unknown"],
)
def test_args(raw: dict[str, Any] | None, problems: list[str]) -> None:
    assert vb.VolumeBindingArgs.decode(raw, "a")[1] == problems


def test_defaults() -> None:
    assert vb.VolumeBindingArgs.decode(None, "a")[0].to_dict() == {"bindTimeoutSeconds": 600}
