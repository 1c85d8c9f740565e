"""``berth install``: command-line surface of the install part."""

from __future__ import annotations

import click

from berth.kube.errors import NotImplementedYet


@click.group("install")
def group() -> None:
    """berth install commands."""


@click.command("install")
def bench() -> None:
    """Benchmark the install part."""
    raise NotImplementedYet("berth bench install")
