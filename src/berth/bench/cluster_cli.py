"""``berth bench cluster``: the embedded API server's start-up, create rate, watch latency and memory. Attached to
``berth bench`` by name (``berth/cli.py``)."""

from __future__ import annotations

import click

from berth import cliopts


@cliopts.command(
    "cluster",
    examples="""
    # start-up, creates/s, watch latency and memory with 10,000 pods
    berth bench cluster

    # smaller, without the simulated controllers, as JSON
    berth bench cluster --pods 1000 --creates 500 --bare -o json
    """,
)
@click.option("--pods", type=int, default=10_000, show_default=True, help="Pods for the memory figure.")
@click.option(
    "--creates", type=int, default=2_000, show_default=True, help="Objects created for the rate figure."
)
@click.option("--bare", is_flag=True, help="Measure a server without the simulated controllers.")
@cliopts.output_option("table", "json", "yaml")
def bench(pods: int, creates: int, bare: bool, output: str) -> None:
    """Start-up time, creates/s through the official client, watch latency, memory with many pods."""
    from berth.bench import cluster as bench_mod

    with cliopts.progress(f"Measuring an embedded cluster: {creates} creates, then {pods} pods"):
        figures = bench_mod.run(pods=pods, creates=creates, controllers=not bare)
    if output != "table":
        cliopts.print_doc(figures, output)
        return
    for line in bench_mod.describe(figures):
        click.echo(line)
