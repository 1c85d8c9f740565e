"""``berth schedule``: command-line surface of the schedule part."""

from __future__ import annotations

import click

from berth.kube.errors import NotImplementedYet


@click.group("schedule")
def group() -> None:
    """berth schedule commands."""


@click.command("schedule")
def bench() -> None:
    """Benchmark the schedule part."""
    raise NotImplementedYet("berth bench schedule")
