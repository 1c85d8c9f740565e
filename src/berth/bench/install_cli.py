"""``berth bench install``: berth's render + split + plan against ``helm template`` alone, or (``--live``) an
install on the embedded cluster. Attached to ``berth bench`` by name (``berth/cli.py``)."""

from __future__ import annotations

import click

from berth import cliopts


@cliopts.command(
    "install",
    examples="""
    # a generated 500-object chart: berth's render + split + plan vs helm template alone
    berth bench install

    # a chart of your own, three runs each, as JSON
    berth bench install examples/charts/edge-hooks --repeat 3 -o json

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
    help="Size of the generated chart when CHART is omitted.",
)
@click.option(
    "--repeat", type=int, default=5, show_default=True, help="Runs per measurement (the best is reported)."
)
@cliopts.output_option("table", "json", "yaml")
@click.option(
    "--live",
    is_flag=True,
    help="Instead: end-to-end `install apply` of a 40-object chart with 3 hook Jobs on the embedded cluster.",
)
def bench(chart: str | None, n_objects: int, repeat: int, output: str, live: bool) -> None:
    """Render + split + plan time vs `helm template` alone on the same chart, in the same run."""
    from berth.bench import install as bench_mod

    if live:
        with cliopts.progress("Installing a 40-object chart on the embedded cluster"):
            figures = bench_mod.run_live(min(repeat, 3))
        lines = bench_mod.live_text(figures)
    else:
        with cliopts.progress(f"Rendering {chart or f'a {n_objects}-object chart'} {repeat} times each way"):
            figures = bench_mod.run(chart, n_objects, repeat)
        lines = bench_mod.text(figures)
    if output != "table":
        cliopts.print_doc(figures, output)
    else:
        for line in lines:
            click.echo(line)
