"""``berth demo``: the README's main job on the embedded default.

Until the live parts land (issue 6), the demo runs the two-profile seed exercise in simulation: one scheduler
process with profiles ``academy-default`` (kube-scheduler's defaults: spread) and ``academy-concentrate``
(berth's Concentrate plugin, weight 10: pack), four equal nodes, two Deployments of 6 pause pods; then the same
with one process per profile. It prints the placement tables.
"""

from __future__ import annotations

import sys
from pathlib import Path

from rich.console import Console

from berth.kube.errors import InputError
from berth.schedule import config as schedule_config
from berth.schedule import report, run_simulation

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "two-profiles"


def run(seed: int = 1) -> None:
    if not (EXAMPLE / "config.yaml").is_file():
        raise InputError(
            "the two-profile example is missing; run berth demo from a source checkout", str(EXAMPLE)
        )
    console = Console(file=sys.stdout, width=120)
    shapes = (
        ("one scheduler, two profiles", ["config.yaml"]),
        (
            "two schedulers, one profile each",
            ["separate/academy-default.yaml", "separate/academy-concentrate.yaml"],
        ),
    )
    for title, files in shapes:
        configs = [schedule_config.load(EXAMPLE / f) for f in files]
        result = run_simulation(
            configs, str(EXAMPLE / "nodes.yaml"), str(EXAMPLE / "workload.yaml"), seed=seed
        )
        console.rule(f"{title} ({', '.join(files)})")
        report.print_table(result, console)
    console.print(
        "academy-concentrate pods share one node; academy-default pods spread (at most 2 per node). "
        "Simulation only: the live demo on the embedded cluster arrives with issue 6.",
        markup=False,
    )
