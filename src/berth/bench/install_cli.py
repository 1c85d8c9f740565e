"""``berth bench install``: ``install setup`` (a whole process) against ``helm template`` and ``install upgrade``
against ``helm upgrade``; berth's render + split + plan against ``helm template`` alone; or (``--live``) an install
on the embedded cluster. Attached to ``berth bench`` by name (``berth/cli.py``)."""

from __future__ import annotations

import click

from berth import cliopts


@cliopts.command(
    "install",
    examples="""
    # setup (a whole process) vs helm template: a 50-object and a kai-scheduler-sized generated chart
    berth bench install

    # a chart of your own, three runs each, as JSON; then upgrade vs helm upgrade on the embedded cluster
    berth bench install examples/charts/edge-hooks --repeat 3 -o json
    berth bench install --upgrade --repeat 3

    # the in-process figure: a generated 500-object chart's render + split + plan vs helm template alone
    berth bench install --render-only

    # end to end: install apply of a 40-object chart with hook Jobs on the embedded cluster
    berth bench install --live
    """,
)
@click.argument("chart", required=False)
@click.option(
    "--objects",
    "n_objects",
    type=int,
    default=500,
    show_default=True,
    help="--render-only: size of the generated chart when CHART is omitted.",
)
@click.option(
    "--repeat",
    type=int,
    default=9,
    show_default=True,
    help="Runs per measurement (a median of 9 moves far less from one run to the next than one of 5 on a busy "
    "machine).",
)
@click.option(
    "--upgrade",
    is_flag=True,
    help="Also: `install upgrade` vs `helm upgrade` between two chart versions on the embedded cluster.",
)
@click.option(
    "--render-only",
    is_flag=True,
    help="Instead: render + split + plan in this process vs `helm template` alone (best of --repeat).",
)
@cliopts.output_option("table", "json", "yaml")
@click.option(
    "--live",
    is_flag=True,
    help="Instead: end-to-end `install apply` of a 40-object chart with 3 hook Jobs on the embedded cluster.",
)
def bench(
    chart: str | None, n_objects: int, repeat: int, output: str, upgrade: bool, render_only: bool, live: bool
) -> None:
    """`install setup` (a whole process, fresh work dir) vs `helm template` on the same chart, side by side in one
    run: a ~50-object chart and a kai-scheduler-sized one (or CHART); medians, ratio and the machine's load."""
    from berth.bench import install as bench_mod

    if live:
        with cliopts.progress("Installing a 40-object chart on the embedded cluster"):
            figures = bench_mod.run_live(min(repeat, 3))
        lines = bench_mod.live_text(figures)
    elif render_only:
        with cliopts.progress(f"Rendering {chart or f'a {n_objects}-object chart'} {repeat} times each way"):
            figures = bench_mod.run(chart, n_objects, repeat)
        lines = bench_mod.text(figures)
    else:
        from berth.bench import lifecycle

        with cliopts.progress(f"Running setup and helm template {repeat} times each"):
            figures = lifecycle.run(chart, repeat, upgrade=upgrade)
        lines = lifecycle.text(figures)
    if output != "table":
        cliopts.print_doc(figures, output)
    else:
        for line in lines:
            click.echo(line)
