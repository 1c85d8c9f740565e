"""``berth bench schedule``: scheduler_perf-like workloads in simulation (or, with ``--live``, through the API).

Kept apart from ``schedule/cli.py``: its ``--workload`` choices are the names of :data:`berth.schedule.bench.WORKLOADS`,
and that module loads numpy and the whole framework, which ``berth schedule --help`` should not pay for. ``berth
bench`` attaches :data:`bench` by name (``berth/cli.py``).
"""

from __future__ import annotations

import json

import click

from berth.schedule import bench as bench_mod
from berth.schedule import config as config_mod
from berth.schedule import simulate
from berth.schedule.plugins import registry as registry_mod


@click.command("schedule")
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
@click.option("-o", "--output", type=click.Choice(["text", "json"]), default="text", show_default=True)
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
        from berth.schedule.live import bench as live_bench

        live_doc = live_bench.bench_live(nodes=nodes or 1000, pods=1000 if pods is None else pods)
        click.echo(json.dumps(live_doc) if output == "json" else live_bench.format_result(live_doc))
        return
    reg = registry_mod.default_registry()
    cfg = config_mod.load(config_path, reg) if config_path else config_mod.default_config(reg)
    if workload is not None or verify:
        doc = bench_mod.run_benchmark(
            workload or "scheduling-basic",
            nodes,
            pods,
            verify,
            seed,
            init_pods=init_pods,
            config=cfg,
            registry=reg,
        )
        click.echo(json.dumps(doc) if output == "json" else bench_mod.format_result(doc))
        return
    result = simulate.scheduling_basic(
        cfg,
        nodes=5000 if nodes is None else nodes,
        pods=10000 if pods is None else pods,
        init_pods=1000 if init_pods is None else init_pods,
        seed=seed,
        registry=reg,
    )
    if output == "json":
        click.echo(json.dumps(result.to_dict()))
        return
    click.echo(
        f"{result.workload}: {result.nodes} nodes, {result.init_pods} init pods, {result.scheduled}/{result.pods} "
        f"pods scheduled in {result.seconds:.2f}s = {result.pods_per_second:.0f} pods/s "
        f"({result.cpu_seconds:.2f} CPU s = {result.pods_per_cpu_second:.0f} pods per CPU second)"
    )
