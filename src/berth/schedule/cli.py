"""``berth schedule`` and ``berth bench schedule``: the command-line surface of the schedule part.

``simulate`` places a workload on a described cluster with kube-scheduler's configuration format; ``bench`` runs a
scheduler_perf-like workload in simulation. ``config``, ``rbac`` and ``manifests`` live in their own modules and
are attached here.
"""

from __future__ import annotations

import json
import sys

import click
from rich.console import Console

from berth.kube import yamlio
from berth.schedule import bench as bench_mod
from berth.schedule import config as config_mod
from berth.schedule import config_cli, deploy_cli, live_cli, report, simulate
from berth.schedule.plugins import registry as registry_mod


@click.group("schedule")
def group() -> None:
    """Schedule pods with KubeSchedulerConfiguration profiles (simulation, configuration, deployment)."""


def _registry(plugin_refs: tuple[str, ...]) -> registry_mod.Registry:
    reg = registry_mod.default_registry()
    for ref in plugin_refs:
        reg.register(registry_mod.load_user_plugin(ref))
    return reg


@group.command("simulate")
@click.option(
    "--config",
    "config_paths",
    multiple=True,
    required=True,
    metavar="CONFIG",
    help="KubeSchedulerConfiguration file. Repeat to simulate separate scheduler binaries (one per file).",
)
@click.option(
    "--cluster",
    "cluster_path",
    required=True,
    metavar="NODES.yaml",
    help="Nodes (+ bound Pods, PriorityClasses).",
)
@click.option(
    "--workload",
    "workload_path",
    required=True,
    metavar="WORKLOAD.yaml",
    help="Pods, Deployments, ReplicaSets, StatefulSets, Jobs.",
)
@click.option(
    "--seed", type=int, default=1, show_default=True, help="Seeds pod name suffixes and tie-breaking."
)
@click.option(
    "-o", "--output", type=click.Choice(["table", "json", "yaml"]), default="table", show_default=True
)
@click.option("--report", "report_path", metavar="FILE.html", help="Also write a self-contained HTML report.")
@click.option(
    "--plugin", "plugin_refs", multiple=True, metavar="MODULE:CLASS", help="Register a Python plugin."
)
def simulate_command(
    config_paths: tuple[str, ...],
    cluster_path: str,
    workload_path: str,
    seed: int,
    output: str,
    report_path: str | None,
    plugin_refs: tuple[str, ...],
) -> None:
    """Place a workload on a cluster described in files, and show where each pod went (or why not).

    Exit code 0 when every pod is placed or reported (unschedulable/ignored); 2 on bad input.
    """
    reg = _registry(plugin_refs)
    configs = [config_mod.load(path, reg) for path in config_paths]
    result = simulate.simulate(configs, cluster_path, workload_path, seed=seed, registry=reg)
    if report_path:
        yamlio.write_atomic(report_path, report.render_html(result))
    if output == "json":
        click.echo(json.dumps(result.to_dict(), indent=2))
    elif output == "yaml":
        click.echo(yamlio.dump(result.to_dict()), nl=False)
    else:
        for w in result.warnings:
            click.echo(f"warning: {w}", err=True)
        report.print_table(result, Console(file=sys.stdout, width=120))
        if report_path:
            click.echo(f"report written to {report_path}")


group.add_command(config_cli.config_command, "config")
group.add_command(deploy_cli.rbac_command, "rbac")
group.add_command(deploy_cli.manifests_command, "manifests")
group.add_command(live_cli.run_command, "run")


@click.command("schedule")
@click.option(
    "--workload",
    type=click.Choice(sorted(bench_mod.WORKLOADS)),
    help="A scheduler_perf-like workload (default: SchedulingBasic as before, timed by simulate).",
)
@click.option("--nodes", type=click.IntRange(min=1), help="Nodes (default: the workload's; 5000).")
@click.option("--pods", type=click.IntRange(min=0), help="Measured pods (default: the workload's; 10000).")
@click.option(
    "--init-pods",
    type=click.IntRange(min=0),
    help="Placed first, not timed (default: the workload's; 1000).",
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

    Workloads: scheduling-basic, topology-spreading, pod-anti-affinity, preemption (see docs/performance.md).
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
