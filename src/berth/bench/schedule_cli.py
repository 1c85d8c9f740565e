"""``berth bench schedule``: scheduler_perf-like workloads in simulation (or, with ``--live``, through the API).

Kept apart from ``schedule/cli.py``: its ``--workload`` choices are the names of :data:`berth.bench.schedule.WORKLOADS`,
and that module loads numpy and the whole framework, which ``berth schedule --help`` should not pay for. ``berth
bench`` attaches :data:`bench` by name (``berth/cli.py``).
"""

from __future__ import annotations

from collections.abc import Callable

import click

from berth import cliopts
from berth.bench import schedule as bench_mod
from berth.schedule import config as config_mod
from berth.schedule import simulate
from berth.schedule.plugins import registry as registry_mod


@cliopts.command(
    "schedule",
    examples="""
    # SchedulingBasic at a small size, timed by simulate
    berth bench schedule --nodes 500 --pods 1000 --init-pods 100

    # one scheduler_perf workload at its sizes, checked against the per-node reference path
    berth bench schedule --workload scheduling-basic --verify -o json

    # pods/s bound through the API of an embedded cluster
    berth bench schedule --live --nodes 100 --pods 200
    """,
)
@click.option(
    "--workload",
    type=click.Choice(sorted(bench_mod.WORKLOADS)),
    help="A scheduler_perf workload (default: SchedulingBasic, timed by simulate, without the threshold line).",
)
@click.option("--nodes", type=click.IntRange(min=1), help="Nodes (default: the workload's; 5000).")
@click.option("--pods", type=click.IntRange(min=0), help="Measured pods (default: the workload's; 10000).")
@click.option(
    "--init-pods",
    type=click.IntRange(min=0),
    help="Placed first, not timed, per init template (default: the workload's; 1000).",
)
@click.option(
    "--verify",
    is_flag=True,
    help="Re-run a sample of the measured pods on the per-node reference path and report mismatches.",
)
@click.option(
    "--config",
    "config_path",
    metavar="CONFIG",
    help="KubeSchedulerConfiguration (default: kube-scheduler's).",
)
@click.option("--seed", type=int, default=1, show_default=True)
@cliopts.output_option("table", "json", "yaml")
@click.option(
    "--live",
    is_flag=True,
    help="Instead: pods/s bound through the API of an embedded cluster by `schedule run` (default 1,000 nodes/pods).",
)
def bench(
    workload: str | None,
    nodes: int | None,
    pods: int | None,
    init_pods: int | None,
    verify: bool,
    config_path: str | None,
    seed: int,
    output: str,
    live: bool,
) -> None:
    """scheduler_perf-like workloads in simulation: N nodes (110 pods, 4 cpu, 32Gi), pause pods (100m/500Mi).

    Each --workload mirrors one upstream scheduler_perf test at its sizes and prints that test's threshold
    (docs/performance.md; benchmarks/scheduler_perf_suite.py runs them all).
    """
    if live:
        from berth.bench import schedule_live as live_bench

        n_nodes, n_pods = nodes or 1000, 1000 if pods is None else pods
        with cliopts.progress(f"Binding {n_pods} pods on {n_nodes} nodes through an embedded cluster"):
            live_doc = live_bench.bench_live(nodes=n_nodes, pods=n_pods)
        _print(live_doc, output, live_bench.format_result)
        return
    reg = registry_mod.default_registry()
    cfg = config_mod.load(config_path, reg) if config_path else config_mod.default_config(reg)
    if workload is not None or verify:
        name = workload or "scheduling-basic"
        with cliopts.progress(f"{name}: placing the init pods, then the measured pods"):
            doc = bench_mod.run_benchmark(
                name, nodes, pods, verify, seed, init_pods=init_pods, config=cfg, registry=reg
            )
        _print(doc, output, bench_mod.format_result)
        return
    n_nodes = 5000 if nodes is None else nodes
    n_pods = 10000 if pods is None else pods
    n_init = 1000 if init_pods is None else init_pods
    with cliopts.progress(f"SchedulingBasic: {n_init} init pods, then {n_pods} pods on {n_nodes} nodes"):
        result = simulate.scheduling_basic(
            cfg, nodes=n_nodes, pods=n_pods, init_pods=n_init, seed=seed, registry=reg
        )
    if output != "table":
        cliopts.print_doc(result.to_dict(), output, one_line=True)
        return
    click.echo(
        f"{result.workload}: {result.nodes} nodes, {result.init_pods} init pods, {result.scheduled}/{result.pods} "
        f"pods scheduled in {result.seconds:.2f}s = {result.pods_per_second:.0f} pods/s "
        f"({result.cpu_seconds:.2f} CPU s = {result.pods_per_cpu_second:.0f} pods per CPU second)"
    )


def _print(doc: dict[str, object], output: str, table: Callable[[dict[str, object]], str]) -> None:
    """A benchmark's figures: one JSON line (a record per run), YAML, or ``table``'s lines."""
    if output == "table":
        click.echo(table(doc))
    else:
        cliopts.print_doc(doc, output, one_line=True)
