"""``berth schedule run``: run the configured profiles against a cluster until SIGTERM/SIGINT.

Attached to the ``berth schedule`` group by name (``schedule/cli.py``); the work is done by
:mod:`berth.schedule.live`, imported only when the command runs: it pulls in the Kubernetes client (~0.9 s), which
``berth schedule --help`` (it loads this module for the one-line summary) should not pay for.
"""

from __future__ import annotations

import logging
import signal
import sys
import threading
import time
from collections.abc import Callable
from types import FrameType
from typing import Any, TypeVar

import click

from berth import cliopts
from berth.kube.errors import BerthError
from berth.schedule.cli import plugin_option


class SchedulerFailed(BerthError):
    """The scheduler stopped on its own (lost its lease, crashed): exit code 1."""


F = TypeVar("F", bound=Callable[..., Any])


def _connection_options(f: F) -> F:
    """--kubeconfig and --context, resolved as ``berth.schedule.live.run.resolve_kubeconfig`` does."""
    f = cliopts.context_option("Kubeconfig context (default: its current-context).")(f)
    return click.option(
        "--kubeconfig",
        metavar="FILE",
        help="Default: $KUBECONFIG, then ~/.kube/config (as kubectl), then ./.berth/cluster/kubeconfig, then the "
        "in-cluster ServiceAccount.",
    )(f)


def _metrics_options(what: str) -> Callable[[F], F]:
    """--metrics-port and --metrics-address; ``what`` says what /metrics carries beyond the usual."""

    def decorate(f: F) -> F:
        f = click.option(
            "--metrics-address", default="0.0.0.0", show_default=True, help="Address for --metrics-port."
        )(f)
        return click.option(
            "--metrics-port",
            type=click.IntRange(min=0, max=65535),
            metavar="PORT",
            help=f"Serve /metrics{what}, /healthz and /readyz on this port (0: any free port).",
        )(f)

    return decorate


@cliopts.command(
    "run",
    examples="""
    # schedule with the configuration's profiles on the current context's cluster (Ctrl-C stops)
    berth schedule run --config examples/two-profiles/config.yaml

    # on another context, with /metrics on port 10259 and an HTML report on exit
    berth schedule run --config examples/two-profiles/config.yaml --kube-context kind-dev \\
        --metrics-port 10259 --report cluster.html
    """,
)
@click.option(
    "--config", "config_path", required=True, metavar="CONFIG", help="KubeSchedulerConfiguration file."
)
@_connection_options
@click.option(
    "--leader-elect",
    is_flag=True,
    help="Hold the Lease named by the configuration's leaderElection before scheduling (for several replicas).",
)
@_metrics_options("")
@plugin_option
@click.option("-v", "--verbose", is_flag=True, help="Log every decision (debug level).")
@click.option(
    "--explain",
    "explain_patterns",
    multiple=True,
    metavar="POD",
    help="Log why these pods went where they did (as simulate --explain): ns/name or name, * and ? as "
    "wildcards; repeatable.",
)
@click.option(
    "--report",
    "report_path",
    metavar="FILE.html",
    help="On exit, write an HTML report of the cluster as the scheduler left it (pods, cpu and memory per node).",
)
def run_command(
    config_path: str,
    kubeconfig: str | None,
    context: str | None,
    leader_elect: bool,
    metrics_port: int | None,
    metrics_address: str,
    plugin_refs: tuple[str, ...],
    verbose: bool,
    explain_patterns: tuple[str, ...],
    report_path: str | None,
) -> None:
    """Schedule pods on a cluster with the configuration's profiles (the same framework as ``simulate``).

    Binds through pods/binding, records Scheduled/FailedScheduling Events and the PodScheduled condition, and stops
    gracefully on SIGTERM or Ctrl-C. Missing RBAC permissions are logged once each.
    """
    sched = _live_scheduler(
        config_path,
        plugin_refs,
        verbose,
        kubeconfig=kubeconfig,
        context=context,
        leader_elect=leader_elect,
        metrics_port=metrics_port,
        metrics_address=metrics_address,
        explain=explain_patterns,
        settle_gc=True,
    )
    started = time.monotonic()
    try:
        stopped = _run_until_stopped(sched)
    finally:
        if report_path:
            from berth.schedule import report_live

            report_live.write(report_path, sched.scheduler, time.monotonic() - started)
            logging.getLogger("berth.schedule.live").info("report written to %s", report_path)
    if sched.failure is not None and not stopped:
        raise SchedulerFailed(str(sched.failure))


def _live_scheduler(config_path: str, plugin_refs: tuple[str, ...], verbose: bool, **options: Any) -> Any:
    """Logging set up, the configuration loaded with the plugins, and a LiveScheduler built with ``options``
    (:class:`berth.schedule.live.run.LiveOptions` fields) -- not started."""
    from berth.schedule import config as config_mod
    from berth.schedule.deploy_cli import build_registry
    from berth.schedule.live.run import LiveOptions, LiveScheduler

    _setup_logging(verbose)
    reg = build_registry(plugin_refs)
    return LiveScheduler(config_mod.load(config_path, reg), reg, LiveOptions(**options))


def _setup_logging(verbose: bool) -> None:
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(message)s",
        stream=sys.stderr,
    )
    logging.getLogger("urllib3").setLevel(logging.ERROR)


def _run_until_stopped(sched: Any, seconds: float | None = None) -> bool:
    """Start ``sched`` (a LiveScheduler) and run it until SIGTERM/SIGINT, ``seconds`` or its own stop; then stop it
    gracefully. True when a signal or the time limit ended it."""
    stop = threading.Event()

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        logging.getLogger("berth.schedule.live").info("received %s; stopping", signal.Signals(signum).name)
        stop.set()
        sched.stop_event.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    deadline = None if seconds is None else time.monotonic() + seconds
    try:
        sched.start()
        while not sched.wait(0.5):
            if deadline is not None and time.monotonic() >= deadline:
                stop.set()
                break
    finally:
        sched.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return stop.is_set()


@cliopts.command(
    "shadow",
    examples="""
    # judge for five minutes, read-only, what the cluster's scheduler binds
    berth schedule shadow --config examples/compare/most-allocated.yaml --for 5m

    # the verdicts as JSON, on another context
    berth schedule shadow --config examples/compare/most-allocated.yaml --for 90s --kube-context kind-dev -o json
    """,
)
@click.option(
    "--config", "config_path", required=True, metavar="CONFIG", help="The KubeSchedulerConfiguration to try."
)
@_connection_options
@cliopts.duration_option(
    "--for",
    "seconds",
    default=None,
    whole=False,
    help="Stop after this long: a Go duration (90s, 5m) or seconds (default: at SIGTERM or Ctrl-C).",
)
@click.option(
    "--explain",
    "explain_patterns",
    multiple=True,
    metavar="POD",
    help="Also log the full explanation for these pods (ns/name or name, wildcards).",
)
@cliopts.output_option("table", "json", "yaml")
@_metrics_options(" (berth_shadow_decisions_total by verdict)")
@plugin_option
def shadow_command(
    config_path: str,
    kubeconfig: str | None,
    context: str | None,
    seconds: float | None,
    explain_patterns: tuple[str, ...],
    output: str,
    metrics_port: int | None,
    metrics_address: str,
    plugin_refs: tuple[str, ...],
) -> None:
    """Follow a cluster read-only and judge, for every pod another scheduler binds, where this configuration
    would have put it.

    Nothing is written to the cluster. Each decision is logged (agree, tie, disagree, filtered, unschedulable);
    the summary is printed at the end.
    """
    sched = _live_scheduler(
        config_path,
        plugin_refs,
        False,
        kubeconfig=kubeconfig,
        context=context,
        shadow=True,
        events=False,
        explain=explain_patterns,
        metrics_port=metrics_port,
        metrics_address=metrics_address,
    )
    _run_until_stopped(sched, seconds)
    if sched.failure is not None:
        raise SchedulerFailed(str(sched.failure))
    assert sched.shadow is not None
    if output == "table":
        click.echo(sched.shadow.summary())
    else:
        cliopts.print_doc(sched.shadow.to_dict(), output, one_line=True)


@cliopts.command(
    "snapshot",
    examples="""
    # the current context's cluster as simulate input, Pending pods as the workload
    berth schedule snapshot --out cluster.yaml --pending pending.yaml

    # then: how another configuration would place them
    berth schedule simulate --config examples/compare/most-allocated.yaml --cluster cluster.yaml \\
        --workload pending.yaml
    """,
)
@_connection_options
@click.option(
    "--out",
    "cluster_path",
    required=True,
    metavar="CLUSTER.yaml",
    help="The cluster file: nodes, running pods, PriorityClasses and the objects plugins read.",
)
@click.option(
    "--pending",
    "pending_path",
    metavar="WORKLOAD.yaml",
    help="Also write the Pending pods as a workload file.",
)
def snapshot_command(
    kubeconfig: str | None, context: str | None, cluster_path: str, pending_path: str | None
) -> None:
    """Write a cluster's current state as `simulate` input: try a configuration on today's cluster.

    Then: berth schedule simulate --config NEW.yaml --cluster CLUSTER.yaml --workload WORKLOAD.yaml
    """
    from berth.schedule.live import snapshot

    with cliopts.progress("Reading the cluster"):
        snap = snapshot.snapshot(kubeconfig, context, with_pending=pending_path is not None)
    snapshot.write(snap, cluster_path, pending_path)
    for warning in snap.warnings:
        click.echo(f"warning: {warning}", err=True)
    click.echo(
        f"wrote {cluster_path}" + (f" and {pending_path}" if pending_path else "") + f": {snap.summary()}"
    )
