"""``berth schedule``: the command-line surface of the schedule part.

``simulate`` places a workload on a described cluster with kube-scheduler's configuration format and is defined
here. ``config``, ``rbac``, ``manifests`` and ``run`` live in their own modules and are attached by name
(:class:`berth.lazycli.LazyCommands`), so running one imports only its own module. ``berth bench schedule`` is
:mod:`berth.bench.schedule_cli`.

Why the imports sit inside the commands: ``berth schedule --help`` lists each command's one-line summary, which
click reads from the command objects, so listing imports the modules that define them. Those modules therefore
import numpy, the framework and the Kubernetes client only when a command runs (``tests/schedule/test_cli_help.py``
checks it), and ``--help`` stays well under a second.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from berth import cliopts
from berth.lazycli import LazyCommands

F = TypeVar("F", bound=Callable[..., Any])


def _input_files(f: F) -> F:
    """--cluster and --workload: what simulate and compare place, and where."""
    f = click.option(
        "--workload",
        "workload_path",
        required=True,
        metavar="WORKLOAD.yaml",
        help="Pods, Deployments, ReplicaSets, StatefulSets, Jobs.",
    )(f)
    return click.option(
        "--cluster",
        "cluster_path",
        required=True,
        metavar="NODES.yaml",
        help="Nodes (+ bound Pods, PriorityClasses).",
    )(f)


_output_option = cliopts.output_option("table", "json", "yaml")
plugin_option = click.option(
    "--plugin", "plugin_refs", multiple=True, metavar="MODULE:CLASS", help="Register a Python plugin."
)


@click.group(
    "schedule",
    cls=cliopts.Group,
    examples="""
    # where a workload goes on a cluster described in files, with two profiles
    berth schedule simulate --config examples/two-profiles/config.yaml \\
        --cluster examples/two-profiles/nodes.yaml --workload examples/two-profiles/workload.yaml

    # the ClusterRole a configuration needs, then the scheduler on the current context's cluster
    berth schedule rbac --config examples/two-profiles/config.yaml
    berth schedule run --config examples/two-profiles/config.yaml
    """,
    commands=LazyCommands(
        {
            "config": "berth.schedule.config_cli:config_command",
            "rbac": "berth.schedule.deploy_cli:rbac_command",
            "manifests": "berth.schedule.deploy_cli:manifests_command",
            "run": "berth.schedule.live_cli:run_command",
            "snapshot": "berth.schedule.live_cli:snapshot_command",
            "shadow": "berth.schedule.live_cli:shadow_command",
        }
    ),
)
def group() -> None:
    """Schedule pods with KubeSchedulerConfiguration profiles (simulation, configuration, deployment)."""


@group.command(
    "simulate",
    examples="""
    # pods per node and profile, then why the packed pods went where they did
    berth schedule simulate --config examples/two-profiles/config.yaml \\
        --cluster examples/two-profiles/nodes.yaml --workload examples/two-profiles/workload.yaml \\
        --explain 'packed-*'

    # with each node's cpu and memory requested
    berth schedule simulate --config examples/two-profiles/config.yaml \\
        --cluster examples/two-profiles/nodes.yaml --workload examples/two-profiles/workload.yaml -o wide

    # every placement as JSON, and an HTML report
    berth schedule simulate --config examples/two-profiles/config.yaml \\
        --cluster examples/two-profiles/nodes.yaml --workload examples/two-profiles/workload.yaml \\
        -o json --report placement.html

    # with a plugin of your own (a module on PYTHONPATH)
    PYTHONPATH=examples/gang berth schedule simulate --config examples/gang/config.yaml \\
        --cluster examples/gang/nodes.yaml --workload examples/gang/workload.yaml --plugin berth_gang:Gang
    """,
)
@click.option(
    "--config",
    "config_paths",
    multiple=True,
    required=True,
    metavar="CONFIG",
    help="KubeSchedulerConfiguration file. Repeat to simulate separate scheduler binaries (one per file).",
)
@_input_files
@click.option(
    "--seed", type=int, default=1, show_default=True, help="Seeds pod name suffixes and tie-breaking."
)
@cliopts.output_option("table", "wide", "json", "yaml")
@click.option("--report", "report_path", metavar="FILE.html", help="Also write a self-contained HTML report.")
@plugin_option
@click.option(
    "--explain",
    "explain_patterns",
    multiple=True,
    metavar="POD",
    help="Show why these pods went where they did: each node's Filter verdict and each Score plugin's score. "
    "ns/name or name, * and ? as wildcards; repeatable.",
)
def simulate_command(
    config_paths: tuple[str, ...],
    cluster_path: str,
    workload_path: str,
    seed: int,
    output: str,
    report_path: str | None,
    plugin_refs: tuple[str, ...],
    explain_patterns: tuple[str, ...],
) -> None:
    """Place a workload on a cluster described in files, and show where each pod went (or why not); -o wide adds
    each node's cpu and memory requested at the end.

    Exit code 0 when every pod is placed or reported (unschedulable/ignored); 2 on bad input.
    """
    from berth.kube import yamlio
    from berth.schedule import config as config_mod
    from berth.schedule import deploy_cli, report, report_html, simulate

    reg = deploy_cli.build_registry(plugin_refs)
    configs = [config_mod.load(path, reg) for path in config_paths]
    with cliopts.progress(f"Placing {workload_path} on {cluster_path}"):
        result = simulate.simulate(
            configs, cluster_path, workload_path, seed=seed, registry=reg, explain_patterns=explain_patterns
        )
        if report_path:
            yamlio.write_atomic(report_path, report_html.render_html(result))
    if output not in ("table", "wide"):
        cliopts.print_doc(result.to_dict(), output)
    else:
        for w in result.warnings:
            click.echo(f"warning: {w}", err=True)
        console = cliopts.console()
        report.print_table(result, console, wide=output == "wide")
        if result.explanations is not None:
            report.print_explanations(result.explanations, console)
        if report_path:
            click.echo(f"report written to {report_path}")


@group.command(
    "compare",
    examples="""
    # two configurations on one workload, side by side (the first is the baseline)
    berth schedule compare --config examples/compare/least-allocated.yaml \\
        --config examples/compare/most-allocated.yaml --cluster examples/compare/nodes.yaml \\
        --workload examples/compare/workload.yaml

    # the same as YAML, with an HTML report
    berth schedule compare --config examples/compare/least-allocated.yaml \\
        --config examples/compare/most-allocated.yaml --cluster examples/compare/nodes.yaml \\
        --workload examples/compare/workload.yaml -o yaml --report compare.html
    """,
)
@click.option(
    "--config",
    "config_paths",
    multiple=True,
    required=True,
    metavar="CONFIG",
    help="A KubeSchedulerConfiguration to compare; give two or more (the first is the baseline).",
)
@_input_files
@click.option("--seed", type=int, default=1, show_default=True, help="The same seed for every run.")
@_output_option
@click.option(
    "--report",
    "report_path",
    metavar="FILE.html",
    help="Also write a self-contained HTML report, side by side.",
)
@plugin_option
@click.option(
    "--explain",
    "explain_patterns",
    multiple=True,
    metavar="POD",
    help="Also show, for each configuration, why these pods went where they did (as simulate --explain).",
)
def compare_command(
    config_paths: tuple[str, ...],
    cluster_path: str,
    workload_path: str,
    seed: int,
    output: str,
    report_path: str | None,
    plugin_refs: tuple[str, ...],
    explain_patterns: tuple[str, ...],
) -> None:
    """Place one workload with each configuration, alone and from the same start, and compare the outcomes.

    Shows placed and unschedulable pods, nodes in use, how full they are, and which pods landed elsewhere than
    with the first configuration. Exit code 2 on bad input.
    """
    from berth.kube import yamlio
    from berth.kube.errors import InputError
    from berth.schedule import compare, deploy_cli, report, report_html
    from berth.schedule import config as config_mod

    if len(config_paths) < 2:
        raise InputError("give at least two --config files to compare", "--config")
    reg = deploy_cli.build_registry(plugin_refs)
    configs = [(path, config_mod.load(path, reg)) for path in config_paths]
    with cliopts.progress(f"Placing {workload_path} with {len(configs)} configurations"):
        comparison = compare.compare(
            configs, cluster_path, workload_path, seed=seed, registry=reg, explain_patterns=explain_patterns
        )
        if report_path:
            yamlio.write_atomic(report_path, report_html.render_comparison_html(comparison))
    if output != "table":
        cliopts.print_doc(comparison.to_dict(), output)
    else:
        console = cliopts.console()
        report.print_comparison(comparison, console)
        for outcome in comparison.outcomes:
            if outcome.result.explanations:
                console.print()
                console.rule(f"why, with {outcome.label}", align="left")
                report.print_explanations(outcome.result.explanations, console)
        if report_path:
            click.echo(f"report written to {report_path}")
