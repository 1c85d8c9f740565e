"""``berth cluster``: command-line surface of the cluster part."""

from __future__ import annotations

import click

from berth.kube.errors import NotImplementedYet


@click.group("cluster")
def group() -> None:
    """berth cluster commands."""


@click.command("cluster")
def bench() -> None:
    """Benchmark the cluster part."""
    raise NotImplementedYet("berth bench cluster")
