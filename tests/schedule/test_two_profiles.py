"""The seed exercise (examples/two-profiles): two profiles in one process, and the separate-binary shape.

Expected: the 6 academy-concentrate pods all on one node; the 6 academy-default pods spread, at most 2 per node.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from berth.schedule import config as schedconfig
from berth.schedule.simulate import SimulationResult, simulate

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "two-profiles"
SHAPES = {
    "one-process": ["config.yaml"],
    "separate-binaries": ["separate/academy-default.yaml", "separate/academy-concentrate.yaml"],
}


def run(shape: str, seed: int) -> SimulationResult:
    configs = [schedconfig.load(EXAMPLE / name) for name in SHAPES[shape]]
    return simulate(configs, str(EXAMPLE / "nodes.yaml"), str(EXAMPLE / "workload.yaml"), seed=seed)


@pytest.mark.parametrize("seed", [1, 2, 3, 42])
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_concentrate_packs_and_default_spreads(shape: str, seed: int) -> None:
    result = run(shape, seed)
    assert result.unschedulable == () and result.ignored == ()
    per_profile: dict[str, Counter[str]] = {"academy-default": Counter(), "academy-concentrate": Counter()}
    for p in result.placements:
        per_profile[p.scheduler_name][p.node] += 1
    assert sorted(per_profile["academy-concentrate"].values()) == [6]
    assert sum(per_profile["academy-default"].values()) == 6
    assert max(per_profile["academy-default"].values()) <= 2


def test_both_shapes_serve_the_same_profiles() -> None:
    assert sorted(run("one-process", 1).profiles) == sorted(run("separate-binaries", 1).profiles)
