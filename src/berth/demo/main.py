"""``berth demo``: the README's main job, end to end on an embedded cluster, with no arguments.

What it shows, in six numbered steps (each wait has a deadline, so the demo always ends):

1. an embedded cluster with four equal nodes starts in-process (data in ``./.berth/demo``);
2. ``berth install`` sets up the ``berth-scheduler`` chart, prints the plan and applies it (the Deployment becomes
   available; the simulated kubelet runs no container, so the demo runs the scheduler itself, next);
3. berth's live scheduler with the two-profile configuration runs as a ServiceAccount bound to a deliberately
   too-small ClusterRole (one line per 403, no pod bound), then bound to the role ``berth schedule rbac``
   computes (a probe pod gets bound);
4. two Deployments of 6 pause pods, one per profile: placement per node and profile (6 concentrated on one node,
   6 spread at most 2 per node);
5. the two deployment shapes compared with measured values (:mod:`berth.demo.shapes`); meanwhile the same
   workload is placed again by the separate shape (same outcome);
6. an HTML report, and the cluster stopped (also on error or Ctrl-C).
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from berth import cliopts, data, install
from berth.cluster import Cluster, ClusterOptions
from berth.demo import page
from berth.demo.admin import Admin, DemoError, wait_for
from berth.demo.result import TOO_SMALL_RULES, DemoResult
from berth.demo.shapes import SA_NAMESPACE, Fleet, measure, start_scheduler
from berth.kube import yamlio
from berth.kube.errors import BerthError, InputError
from berth.schedule import (
    Placement,
    SchedulerConfiguration,
    compute_rbac,
    default_registry,
    live_result,
    load_config,
    print_table,
    run_live_scheduler,
)

EXAMPLE = data.path("examples/two-profiles")
CHART = data.path("charts/berth-scheduler")
DEFAULT_BASE = Path(".berth") / "demo"
DEFAULT_REPORT = Path("berth-demo-report.html")
NAMESPACE = "academy"
STEPS = 6


class _Capture(logging.Handler):
    """Keeps the live scheduler's ``missing permission:`` lines (the 403s of step 3)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.missing: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if message.startswith("missing permission:"):
            self.missing.append(message)


@contextlib.contextmanager
def _logs_to(path: Path) -> Iterator[_Capture]:
    """While the demo runs, berth's own log lines go to ``path`` (the screen shows the steps), and the 403 lines
    are kept for step 3."""
    logger = logging.getLogger("berth")
    saved = (logger.level, logger.propagate)
    to_file = logging.FileHandler(path, encoding="utf-8")
    to_file.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    capture = _Capture()
    logger.addHandler(to_file)
    logger.addHandler(capture)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    try:
        yield capture
    finally:
        logger.removeHandler(to_file)
        logger.removeHandler(capture)
        to_file.close()
        logger.setLevel(saved[0])
        logger.propagate = saved[1]


def _fresh_base(base: Path) -> None:
    """Empty ``base`` for this run, refusing when another demo's cluster is running on it."""
    lock = base / "cluster" / "lock"
    if lock.is_file():
        with open(lock, "a+", encoding="utf-8") as fh:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                raise InputError(
                    "another berth demo is running on this directory; wait for it or run from another directory",
                    str(base),
                ) from exc
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
    if base.exists():
        shutil.rmtree(base)
    base.mkdir(parents=True)


class _Steps:
    def __init__(self, console: Console) -> None:
        self.console = console
        self.n = 0
        self.started = time.monotonic()

    def begin(self, title: str) -> None:
        self.n += 1
        self.console.print()
        self.console.rule(f"[bold]Step {self.n}/{STEPS}[/bold]  {escape(title)}", align="left")

    def say(self, text: str, style: str = "") -> None:
        self.console.print(text, style=style or None, markup=False, highlight=False)

    def ok(self, text: str) -> None:
        self.console.print(f"[green]✓[/green] {escape(text)}", highlight=False)


def run(
    seed: int = 1,
    *,
    fast: bool = False,
    base_dir: str | Path | None = None,
    report_path: str | Path | None = None,
    console: Console | None = None,
) -> DemoResult:
    """Run the demo; returns what it found. ``fast`` shortens the measurement windows (tests)."""
    for needed in (EXAMPLE / "config.yaml", EXAMPLE / "workload.yaml", CHART / "Chart.yaml"):
        if not needed.is_file():
            raise InputError(
                "berth demo's example and chart are missing (reinstall berth, or run it from a source checkout)",
                str(needed),
            )
    if console is None:
        # A terminal's own width; as wide as the lines need when the output goes to a file or a pipe.
        console = cliopts.console()
    base = Path(base_dir if base_dir is not None else DEFAULT_BASE).resolve()
    report_file = Path(report_path if report_path is not None else DEFAULT_REPORT).resolve()
    _fresh_base(base)
    result = DemoResult(data_dir=base / "cluster")
    steps = _Steps(console)
    with _logs_to(base / "demo.log") as capture:
        _run(seed, fast, base, report_file, steps, capture, result)
    result.seconds = time.monotonic() - steps.started
    console.print()
    console.print(
        f"[bold green]Demo done[/bold green] in {result.seconds:.0f}s. "
        + escape(f"Report: {result.report}  (data and logs: {base})"),
        highlight=False,
    )
    return result


def _run(
    seed: int, fast: bool, base: Path, report_file: Path, steps: _Steps, capture: _Capture, result: DemoResult
) -> None:
    registry = default_registry()
    config_path = EXAMPLE / "config.yaml"
    cfg = load_config(config_path, registry)
    profiles = [p.scheduler_name for p in cfg.profiles]
    result.profiles = profiles
    data = result.data_dir
    fleet = Fleet()
    admin: Admin | None = None

    steps.begin("start an embedded cluster (4 equal nodes)")
    t0 = time.monotonic()

    def default_scheduler(api: Any) -> Any:
        # The cluster's own default-scheduler (berth's scheduler, default profile), so that ordinary pods such as
        # the installed Deployment's get placed; the academy-* pods are left to the schedulers of step 3.
        return run_live_scheduler(str(data / "kubeconfig"))

    cluster = Cluster(
        ClusterOptions(
            data_dir=data, port=0, nodes=4, node_cpu="4", node_memory="16Gi", services=[default_scheduler]
        )
    )
    try:
        cluster.start()
        result.url = cluster.url
        admin = Admin(cluster, base / "kubeconfigs")
        result.nodes = admin.node_names()
        steps.ok(
            f"cluster at {cluster.url} in {time.monotonic() - t0:.1f}s; nodes: {', '.join(result.nodes)}"
        )
        steps.say(f"  kubeconfig: {cluster.kubeconfig}   audit log: {data / 'audit.jsonl'}", "dim")

        _install(steps, base, cluster, result)
        sched = _rbac_phases(steps, admin, cfg, registry, fleet, seed, capture, result)
        _deploy(steps, admin, result)
        result.usage = live_result(sched.scheduler, result.place_seconds).usage
        fleet.stop(sched)

        steps.begin("compare the two deployment shapes (measured)")
        window, settle = (1.5, 1.0) if fast else (4.0, 2.0)
        steps.say(
            f"  running each shape on the cluster for {window:g}s, then stopping (part of) it and creating one pod "
            "per profile ...",
            "dim",
        )

        def place_separately() -> None:
            _clear_workload(admin)
            steps.say(
                "  the same two Deployments again, now placed by two schedulers with one profile each "
                "(the first ones deleted):"
            )
            result.separate_placement = _place(steps, admin, result).counts()

        comparison = measure(
            admin, registry, EXAMPLE, NAMESPACE, fleet, seed, window, settle, while_separate=place_separately
        )
        result.comparison = comparison
        table = Table(title="One scheduler with two profiles vs two schedulers with one profile each")
        table.add_column("", style="bold")
        table.add_column("one scheduler, two profiles (--shape profiles)")
        table.add_column("two schedulers, one profile each (--shape separate)")
        for row in comparison.rows():
            table.add_row(*(escape(cell) for cell in row))
        steps.console.print(table)
        p, s = comparison.profiles, comparison.separate
        steps.say(
            f"  ClusterRole rules: {p.rules[0]} (one role) vs {' + '.join(str(r) for r in s.rules)} (one role "
            f"each); informers configured per process: {p.per_process[0]} vs "
            f"{' + '.join(str(n) for n in s.per_process)} (watches open only for resources the cluster serves)",
            "dim",
        )

        steps.begin("write the report and stop the cluster")
        result.report = page.write(report_file, result)
        steps.ok(f"report written: {result.report}")
    finally:
        fleet.stop_all()
        if admin is not None:
            admin.close()
        cluster.stop()
        result.cluster_stopped = cluster.server is None and not (data / "server.json").exists()
    steps.ok("cluster stopped")


def _install(steps: _Steps, base: Path, cluster: Cluster, result: DemoResult) -> None:
    steps.begin("install the berth-scheduler package with berth install (setup, plan, apply)")
    work = base / "work"
    t0 = time.monotonic()
    setup = install.run_setup(
        install.SetupOptions(str(CHART), work, namespace=SA_NAMESPACE, non_interactive=True)
    )
    steps.ok(
        f"berth install setup --pull {data.shown(CHART)} --work-dir {work} ({time.monotonic() - t0:.1f}s)"
    )
    for line in setup.lines:
        steps.say(f"  {line}", "dim")
    options = install.ApplyOptions(work, kubeconfig=str(cluster.kubeconfig), timeout=60)
    _, plan = install.load_plan(options, install.Action.INSTALL)
    steps.say("")
    steps.say("berth install plan:", "bold")
    for line in install.render_plan(plan).rstrip().splitlines():
        steps.say(f"  {line}")
    steps.say("")
    steps.say("berth install apply:", "bold")
    try:
        outcome = install.run_apply(options, install.Reporter(stream=steps.console.file))
    except BerthError as exc:
        # The rest of the demo does not need the installed objects (only the namespace, ensured below), so a
        # failed apply is shown and recorded, not fatal.
        result.install_error = str(exc)
        result.install_lines = [f"install apply failed: {exc}"]
        steps.say(f"  install apply failed: {exc}", "red")
        steps.say("  (receipt and resume command above; continuing with the scheduler steps)", "red")
        return
    result.install_lines = list(outcome.lines)
    for line in outcome.lines:
        steps.say(f"  {line}", "dim")
    steps.ok(
        f"Deployment {SA_NAMESPACE}/berth-scheduler available (the simulated kubelet runs no container: the demo "
        "runs the scheduler process itself, next)"
    )


def _rbac_phases(
    steps: _Steps,
    admin: Admin,
    cfg: SchedulerConfiguration,
    registry: Any,
    fleet: Fleet,
    seed: int,
    capture: _Capture,
    result: DemoResult,
) -> Any:
    """Step 3; returns the scheduler running with the computed role (left running for step 4)."""
    steps.begin(
        "run berth's scheduler: first with a too-small ClusterRole, then with `berth schedule rbac`'s"
    )
    admin.ensure_namespace(NAMESPACE)
    probe = "probe"
    admin.create_pod(NAMESPACE, probe, cfg.profiles[0].scheduler_name, "probe")
    steps.say(f"  pod {NAMESPACE}/{probe} (schedulerName {cfg.profiles[0].scheduler_name}) created, Pending")

    small = admin.identity("berth-demo-too-small", SA_NAMESPACE, TOO_SMALL_RULES)
    steps.say(
        f"  ServiceAccount {SA_NAMESPACE}/{small.name} bound to a ClusterRole of {small.rules} rule "
        "(pods get,list,watch); scheduler started with examples/two-profiles/config.yaml",
    )
    sched = fleet.add(start_scheduler(cfg, registry, small, seed))

    def settled() -> bool:
        before = len(sched.permissions.missing)
        time.sleep(1.0)
        return before > 0 and len(sched.permissions.missing) == before

    wait_for(settled, 20, "the too-small scheduler to report its missing permissions")
    fleet.stop(sched)
    result.forbidden = list(capture.missing) or [
        f"missing permission: {verb} {resource} ({group or 'core'})"
        for verb, group, resource in sched.permissions.missing
    ]
    result.bound_while_forbidden = admin.bindings_by(small.user)
    probe_node = admin.node_of(NAMESPACE, probe)
    steps.say(
        f"  403s reported by the scheduler ({len(result.forbidden)}, one line per missing permission):",
        "bold",
    )
    for line in result.forbidden:
        steps.say(
            f"    {line.split(' -- ')[0]}", "red"
        )  # the server's full 403 text is in the report and log
    steps.say(
        f"  pods bound by {small.name}: {result.bound_while_forbidden}; {probe} is "
        + (f"on {probe_node}" if probe_node else "still Pending")
        + " (no scheduling without a complete view of the cluster)"
    )

    role = compute_rbac(cfg, registry)
    rules = role.cluster_role("berth-demo-scheduler")["rules"]
    result.rules_minimal = len(rules)
    minimal = admin.identity("berth-demo-scheduler", SA_NAMESPACE, rules)
    steps.say("")
    steps.say(
        f"  ServiceAccount {SA_NAMESPACE}/{minimal.name} bound to the ClusterRole of `berth schedule rbac --config "
        f"examples/two-profiles/config.yaml` ({len(rules)} rules):"
    )
    for rule in role.rules:
        steps.console.print(
            f"    {rule.describe()}",
            style="dim",
            markup=False,
            highlight=False,
            no_wrap=True,
            overflow="ellipsis",
        )
    sched = fleet.add(start_scheduler(cfg, registry, minimal, seed))
    if not sched.wait_synced(20):
        raise DemoError(f"the scheduler running as {minimal.name} did not sync its informers within 20s")
    result.probe_node = wait_for(
        lambda: admin.node_of(NAMESPACE, probe), 20, f"pod {NAMESPACE}/{probe} to be bound"
    )
    if sched.permissions.missing:
        raise DemoError(f"the computed role is missing permissions: {sched.permissions.missing}")
    steps.ok(
        f"scheduler running as {minimal.name}: informers synced, no 403; {probe} bound to {result.probe_node}"
    )
    steps.ok(f"rules: too-small role {result.rules_too_small}, computed role {result.rules_minimal}")
    admin.delete_pod(NAMESPACE, probe)
    wait_for(
        lambda: not any((p.get("metadata") or {}).get("name") == probe for p in admin.pods(NAMESPACE)),
        20,
        f"pod {NAMESPACE}/{probe} to be deleted",
    )
    return sched


def _deploy(steps: _Steps, admin: Admin, result: DemoResult) -> None:
    steps.begin("two Deployments of 6 pause pods, one per profile")
    t0 = time.monotonic()
    sim = _place(steps, admin, result)
    result.place_seconds = time.monotonic() - t0
    result.placements = list(sim.placements)
    result.placement = sim.counts()


def _workload() -> list[dict[str, Any]]:
    """The two Deployments of examples/two-profiles/workload.yaml, each named after its profile."""
    docs = [d.body for d in yamlio.load_file(EXAMPLE / "workload.yaml") if isinstance(d.body, dict)]
    for doc in docs:
        doc["metadata"]["name"] = str(doc["spec"]["template"]["spec"].get("schedulerName") or "")
        doc["metadata"]["namespace"] = NAMESPACE
    return docs


def _place(steps: _Steps, admin: Admin, result: DemoResult) -> Any:
    """Create the workload, wait until every pod is bound, print and check the placement; returns it as a
    ``SimulationResult``."""
    docs = _workload()
    apps = {str(d["spec"]["template"]["metadata"]["labels"]["app"]) for d in docs}
    t0 = time.monotonic()
    for doc in docs:
        admin.create(f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments", doc)
        name = doc["metadata"]["name"]
        steps.say(f"  Deployment {NAMESPACE}/{name}: {doc['spec']['replicas']} pods, schedulerName {name}")
    expected = sum(int(d["spec"]["replicas"]) for d in docs)

    def placed() -> list[Placement]:
        out = []
        for pod in admin.pods(NAMESPACE):
            app = str(((pod.get("metadata") or {}).get("labels") or {}).get("app") or "")
            node = str((pod.get("spec") or {}).get("nodeName") or "")
            if app in apps and node:
                name = f"{NAMESPACE}/{pod['metadata']['name']}"
                out.append(Placement(name, str(pod["spec"].get("schedulerName") or ""), node))
        return out if len(out) >= expected else []

    placements = wait_for(placed, 60, f"all {expected} pods to be bound")
    sim = page.live_result(placements, result.nodes, result.profiles, time.monotonic() - t0)
    print_table(sim, steps.console)
    counts = sim.counts()
    concentrate, default = (
        [counts[n].get(p, 0) for n in result.nodes] for p in (result.profiles[-1], result.profiles[0])
    )
    if max(concentrate) == sum(concentrate) and max(default) <= 2:
        steps.ok(
            f"{result.profiles[-1]}: all {sum(concentrate)} pods on one node; "
            f"{result.profiles[0]}: spread, at most {max(default)} per node"
        )
    else:
        steps.say(
            f"  unexpected placement: {result.profiles[-1]} {concentrate}, {result.profiles[0]} {default}",
            "yellow",
        )
    return sim


def _clear_workload(admin: Admin) -> None:
    """Delete the workload's Deployments and wait until their pods are gone (the GC deletes them)."""
    docs = _workload()
    apps = {str(d["spec"]["template"]["metadata"]["labels"]["app"]) for d in docs}
    for doc in docs:
        admin.call("DELETE", f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments/{doc['metadata']['name']}")

    def gone() -> bool:
        return not any(
            str(((p.get("metadata") or {}).get("labels") or {}).get("app") or "") in apps
            for p in admin.pods(NAMESPACE)
        )

    wait_for(gone, 30, "the first Deployments' pods to be deleted")
