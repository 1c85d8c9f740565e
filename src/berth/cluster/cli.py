"""``berth cluster up|down|status`` and ``berth bench cluster``.

``up`` runs the embedded cluster in the foreground (Ctrl-C or ``down`` stops it) or, with ``--detach``, in a
background process whose output goes to ``DIR/server.log``. ``down`` signals the process recorded in
``DIR/server.json``; ``status`` reports url, pid, readiness and object counts (read straight from the store, which
SQLite's WAL lets another process read while the server writes).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

import click

from berth import cliopts
from berth.kube.errors import BerthError, InputError

DEFAULT_DATA = "./.berth/cluster"


def _labels(values: tuple[str, ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for v in values:
        key, sep, val = v.partition("=")
        if not sep or not key:
            raise InputError(f"expected k=v, got {v!r}", "--node-label")
        out[key] = val
    return out


def _remembered_port(data: Path) -> int:
    """The port this data directory's cluster served on last time (0: none yet). The port is part of the cluster's
    identity -- kubeconfigs and running clients point there -- so a restart takes it again (the server binds with
    SO_REUSEADDR, so sockets the last run left in TIME_WAIT do not stand in the way)."""
    try:
        port = int((data / "port").read_text().strip())
    except (OSError, ValueError):
        return 0
    return port if 0 < port <= 65535 else 0


def _server_info(data: Path) -> dict[str, Any] | None:
    try:
        info: dict[str, Any] = json.loads((data / "server.json").read_text())
    except (OSError, ValueError):
        return None
    return info


def _running(data: Path) -> bool:
    from berth.cluster import datadir

    return datadir.is_running(data)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _ready(data: Path, url: str, timeout: float = 2.0) -> bool:
    import ssl
    import urllib.error
    import urllib.request

    ctx: ssl.SSLContext | None = None
    ca = data / "pki" / "ca.crt"
    if url.startswith("https"):
        ctx = ssl.create_default_context(cafile=str(ca)) if ca.is_file() else ssl._create_unverified_context()
    try:
        with urllib.request.urlopen(f"{url}/readyz", timeout=timeout, context=ctx) as resp:
            return bool(resp.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def _counts(data: Path) -> dict[str, int]:
    import sqlite3

    db = data / "store.db"
    if not db.is_file():
        return {}
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=2)
        try:
            # SQLite takes a bare column from the row holding the group's MAX(rv): each object's newest row.
            rows = con.execute(
                "SELECT resource, COUNT(*) FROM (SELECT resource, type, MAX(rv) FROM log GROUP BY resource, namespace,"
                " name) WHERE type != 'DELETED' GROUP BY resource ORDER BY resource"
            ).fetchall()
        finally:
            con.close()
    except sqlite3.Error as exc:
        raise BerthError(f"{db}: cannot read the store ({exc})") from exc
    return {str(r): int(n) for r, n in rows}


def _kubectl() -> str:
    """How to call kubectl in the hint ``up`` prints: plain ``kubectl`` when a compatible one is on PATH, else the
    pinned binary berth installed (a laptop without kubectl can copy the line as it is)."""
    from berth.kube import tools
    from berth.kube.errors import ToolError

    try:
        found = tools.find("kubectl")
    except ToolError:
        return "kubectl"
    return "kubectl" if found.source == "PATH" else found.path


def _check_node_capacity(cpu: str, memory: str, pods: str) -> None:
    """Refuse node sizes that are not quantities before anything starts (a node with cpu "abc" would break every
    scheduler and kubectl describe later, far from the typo)."""
    from berth.kube import quantity

    for flag, text, example in (("--node-cpu", cpu, "8 or 500m"), ("--node-memory", memory, "32Gi")):
        if quantity.parse(text, flag) <= 0:
            raise InputError(f"must be a positive quantity like {example}, got {text!r}", flag)
    if not pods.isdigit():
        raise InputError(f"must be a whole number of pods like 110, got {pods!r}", "--node-pods")


def _write_private(path: Path, text: str) -> None:
    """Replace ``path`` with ``text``, mode 0600 (every file of the data directory is private)."""
    from berth.cluster import datadir

    fd = datadir.open_private(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)


@click.group(
    "cluster",
    cls=cliopts.Group,
    examples="""
    # four simulated nodes in the background, then kubectl against them
    berth cluster up --nodes 4 --detach
    kubectl --kubeconfig .berth/cluster/kubeconfig get nodes
    berth cluster down
    """,
)
def group() -> None:
    """Run the embedded, kubectl-compatible Kubernetes API server with simulated nodes."""


@group.command(
    "up",
    examples="""
    # one 8-cpu node, in the foreground (Ctrl-C stops it)
    berth cluster up

    # four labelled nodes in the background, data in another directory
    berth cluster up --nodes 4 --node-label zone=a --detach --data /tmp/berth-cluster

    # a bare API server: no simulated nodes, controllers or scheduler
    berth cluster up --no-controllers --detach
    """,
)
@click.option(
    "--data", "data", default=DEFAULT_DATA, show_default=True, help="Data directory (store, kubeconfig)."
)
@click.option(
    "--port", type=int, default=None, help="Port on 127.0.0.1 (default: last port used, else a free one)."
)
@click.option("--nodes", type=int, default=1, show_default=True, help="Simulated nodes to create.")
@click.option("--node-cpu", default="8", show_default=True)
@click.option("--node-memory", default="32Gi", show_default=True)
@click.option("--node-pods", default="110", show_default=True)
@click.option(
    "--node-label", "node_labels", multiple=True, help="Label for every simulated node (k=v), repeatable."
)
@click.option(
    "--controllers/--no-controllers",
    default=True,
    show_default=True,
    help="Run the simulated nodes, controllers and the built-in default-scheduler (off: a bare API server).",
)
@click.option("--detach", is_flag=True, help="Run in the background; output goes to DIR/server.log.")
def up(
    data: str,
    port: int | None,
    nodes: int,
    node_cpu: str,
    node_memory: str,
    node_pods: str,
    node_labels: tuple[str, ...],
    controllers: bool,
    detach: bool,
) -> None:
    """Start the embedded cluster and write DIR/kubeconfig."""
    from berth.cluster import Cluster, ClusterError, ClusterOptions

    data_dir = Path(data).resolve()
    labels = _labels(node_labels)
    if nodes < 0:
        raise InputError("must be >= 0", "--nodes")
    if port is not None and not 0 <= port <= 65535:
        raise InputError(f"{port} is not a port: use 1-65535, or 0 for a free one", "--port")
    _check_node_capacity(node_cpu, node_memory, node_pods)
    if _running(data_dir):
        info = _server_info(data_dir) or {}
        raise BerthError(
            f"a cluster is already running from {data_dir} (pid {info.get('pid', '?')}, {info.get('url', '?')}); "
            f"use it via KUBECONFIG={data_dir / 'kubeconfig'} or stop it with `berth cluster down --data {data}`"
        )
    if detach:
        _detach(data_dir, port, nodes, node_cpu, node_memory, node_pods, node_labels, controllers)
        return
    if controllers:
        # The built-in default-scheduler logs start-up notes (plugins berth does not run, DRA resources this
        # server does not serve) that are noise for `up`; keep only its errors on stderr.
        only_errors = logging.StreamHandler()
        only_errors.setLevel(logging.ERROR)
        logging.getLogger("berth.schedule").addHandler(only_errors)
    remembered = _remembered_port(data_dir)
    chosen = port if port is not None else remembered
    t0 = time.monotonic()
    opts = ClusterOptions(
        data_dir=data_dir,
        port=chosen,
        nodes=nodes,
        node_cpu=node_cpu,
        node_memory=node_memory,
        node_pods=node_pods,
        node_labels=labels,
        run_controllers=controllers,
        default_scheduler=controllers,
    )
    try:
        cluster = Cluster(opts).start()
    except ClusterError as exc:
        if port is None and remembered and "cannot listen" in str(exc):
            raise ClusterError(
                f"{exc}. Port {remembered} is this cluster's address (DIR/kubeconfig and running clients point "
                f"there): free it, or pass --port to move the cluster (DIR/kubeconfig is rewritten; copies of it "
                "and running clients must follow)"
            ) from exc
        raise
    cliopts.settle_gc()
    stop = threading.Event()

    def _on_signal(_signum: int, _frame: Any) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    with contextlib.suppress(OSError):
        _write_private(data_dir / "port", f"{cluster.port}\n")
    elapsed = time.monotonic() - t0
    click.echo(
        f"berth cluster ready at {cluster.url} in {elapsed:.2f}s (data: {data_dir}, pid {os.getpid()})"
    )
    click.echo(f"  export KUBECONFIG={cluster.kubeconfig}")
    click.echo(f"  {_kubectl()} get nodes")
    click.echo(f"  stop with Ctrl-C or `berth cluster down --data {data}`")
    sys.stdout.flush()
    try:
        while not stop.wait(0.5):
            pass
    finally:
        cluster.stop()
        click.echo("berth cluster stopped")


def _detach(
    data_dir: Path,
    port: int | None,
    nodes: int,
    node_cpu: str,
    node_memory: str,
    node_pods: str,
    node_labels: tuple[str, ...],
    controllers: bool = True,
) -> None:
    import subprocess

    from berth.cluster import datadir

    new_dir = datadir.create_private(data_dir)
    args = [
        sys.executable,
        "-m",
        "berth.cluster",
        "up",
        "--data",
        str(data_dir),
        "--nodes",
        str(nodes),
        "--node-cpu",
        node_cpu,
        "--node-memory",
        node_memory,
        "--node-pods",
        node_pods,
    ]
    if port is not None:
        args += ["--port", str(port)]
    for label in node_labels:
        args += ["--node-label", label]
    if not controllers:
        args.append("--no-controllers")
    with contextlib.suppress(OSError):
        (data_dir / "server.json").unlink()
    log = os.fdopen(datadir.open_private(data_dir / "server.log"), "ab")  # handed to the child
    proc = subprocess.Popen(
        args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
    )
    log.close()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        info = _server_info(data_dir)
        if info and int(info.get("pid", 0)) == proc.pid and _ready(data_dir, str(info["url"])):
            click.echo(
                f"berth cluster ready at {info['url']} (pid {proc.pid}, log {data_dir / 'server.log'})"
            )
            click.echo(f"  export KUBECONFIG={data_dir / 'kubeconfig'}")
            click.echo(f"  {_kubectl()} get nodes")
            return
        if proc.poll() is not None:
            tail = (data_dir / "server.log").read_text(errors="replace").strip().splitlines()[-5:]
            if new_dir:  # a failed start leaves no half-made data directory (its log is shown here)
                datadir.remove_new(data_dir, None)
            raise BerthError("the cluster exited during start-up:\n  " + "\n  ".join(tail))
        time.sleep(0.01)
    raise BerthError(f"the cluster did not become ready within 30s; see {data_dir / 'server.log'}")


@group.command(
    "down",
    examples="""
    # stop the cluster running from ./.berth/cluster
    berth cluster down

    # or from another data directory
    berth cluster down --data /tmp/berth-cluster
    """,
)
@click.option("--data", "data", default=DEFAULT_DATA, show_default=True)
def down(data: str) -> None:
    """Stop the cluster running from DIR."""
    data_dir = Path(data).resolve()
    info = _server_info(data_dir)
    if not _running(data_dir) or not info or not _alive(int(info.get("pid", 0))):
        click.echo(f"no cluster is running from {data_dir}")
        return
    pid = int(info["pid"])
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _running(data_dir):
        time.sleep(0.05)
    if _running(data_dir) and _alive(pid):
        os.kill(pid, signal.SIGKILL)
    click.echo(f"stopped the cluster from {data_dir} (pid {pid})")


@group.command(
    "status",
    examples="""
    # url, pid, readiness and object counts
    berth cluster status

    # the same as JSON
    berth cluster status -o json
    """,
)
@click.option("--data", "data", default=DEFAULT_DATA, show_default=True)
@cliopts.output_option("table", "json", "yaml")
def status(data: str, output: str) -> None:
    """Show url, pid, readiness and object counts of the cluster in DIR."""
    data_dir = Path(data).resolve()
    if not (data_dir / "store.db").exists() and _server_info(data_dir) is None:
        raise InputError(
            f"no cluster has been started here; start one with `berth cluster up --data {data}`",
            str(data_dir),
        )
    info = _server_info(data_dir) or {}
    pid = int(info.get("pid", 0) or 0)
    running = _running(data_dir)
    url = str(info.get("url", "")) if running else ""
    ready = running and _ready(data_dir, url)
    counts = _counts(data_dir)
    report = {
        "data": str(data_dir),
        "url": url,
        "pid": pid if running else None,
        "running": running,
        "ready": ready,
        "kubeconfig": str(data_dir / "kubeconfig"),
        "objects": counts,
    }
    if output != "table":
        cliopts.print_doc(report, output)
        return
    click.echo(f"data:    {data_dir}")
    click.echo(f"running: {'yes' if running else 'no'}" + (f" (pid {pid}, {url})" if running else ""))
    click.echo(f"ready:   {'yes' if ready else 'no'}")
    total = sum(counts.values())
    click.echo(f"objects: {total}")
    for res, n in counts.items():
        click.echo(f"  {res}: {n}")
