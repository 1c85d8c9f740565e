"""``berth demo``: the README's main job on the embedded default.

Until the live parts land, the demo runs the two-profile seed exercise in simulation.
"""

from __future__ import annotations

from berth.kube.errors import NotImplementedYet


def run(seed: int = 1) -> None:
    raise NotImplementedYet("berth demo")
