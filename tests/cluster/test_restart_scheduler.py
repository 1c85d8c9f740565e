"""``kill -9`` of ``berth cluster up`` with a ``berth schedule run`` attached, then ``berth cluster up`` again on the
same data directory: the cluster comes back on its own address (the port is part of its identity), so the running
scheduler -- never restarted, never told -- reconnects and binds the pods created after the restart."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from .conftest import Kubectl, kubectl_for

BERTH = [sys.executable, "-c", "import sys; from berth.cli import main; sys.exit(main(sys.argv[1:]))"]
PROFILE = "restart-e2e"
CONFIG = f"""apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection: {{leaderElect: false}}
profiles:
- schedulerName: {PROFILE}
"""


def eventually(check: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


class Procs:
    """The processes this test starts (and only those are ever killed)."""

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self, args: list[str], log: Path) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen([*BERTH, *args], stdout=log.open("ab"), stderr=subprocess.STDOUT)
        self.procs.append(proc)
        return proc

    def stop_all(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()


@pytest.fixture()
def procs() -> Iterator[Procs]:
    p = Procs()
    try:
        yield p
    finally:
        p.stop_all()


def cluster_up(procs: Procs, data: Path, log: Path) -> subprocess.Popen[bytes]:
    """``berth cluster up`` without ``--port``: the first start picks a free port, a restart takes the same one."""
    before = log.read_text(errors="replace").count("ready at") if log.exists() else 0
    proc = procs.start(["cluster", "up", "--data", str(data), "--nodes", "2"], log)
    eventually(lambda: log.read_text(errors="replace").count("ready at") > before, 120, "berth cluster up")
    assert proc.poll() is None, log.read_text()
    return proc


def create_pods(kubectl: Kubectl, prefix: str, n: int) -> None:
    items = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"{prefix}-{i}", "labels": {"batch": prefix}},
            "spec": {"schedulerName": PROFILE, "containers": [{"name": "c", "image": "nginx"}]},
        }
        for i in range(n)
    ]
    kubectl.ok("create", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))


def bound(kubectl: Kubectl, prefix: str) -> dict[str, str]:
    out = json.loads(kubectl.ok("get", "pods", "-l", f"batch={prefix}", "-o", "json"))
    return {p["metadata"]["name"]: p["spec"].get("nodeName", "") for p in out["items"]}


def test_kill_9_and_up_in_place_and_the_running_scheduler_carries_on(tmp_path: Path, procs: Procs) -> None:
    data, server_log, sched_log = tmp_path / "data", tmp_path / "server.log", tmp_path / "schedule.log"
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG)
    server = cluster_up(procs, data, server_log)
    url = json.loads((data / "server.json").read_text())["url"]
    kubectl = kubectl_for(data / "kubeconfig", tmp_path / "home")
    sched = procs.start(
        ["schedule", "run", "--config", str(config), "--kubeconfig", str(data / "kubeconfig")], sched_log
    )
    create_pods(kubectl, "before", 5)
    eventually(lambda: all(bound(kubectl, "before").values()), 120, "the scheduler to bind the first pods")

    os.kill(server.pid, signal.SIGKILL)
    server.wait()
    time.sleep(1)  # the scheduler meets a closed port (and its watches break) before the cluster is back
    assert sched.poll() is None, sched_log.read_text()
    cluster_up(procs, data, server_log)
    # the same address: neither the kubeconfig nor the scheduler was told anything
    assert json.loads((data / "server.json").read_text())["url"] == url

    create_pods(kubectl, "after", 5)
    eventually(
        lambda: all(bound(kubectl, "after").values()),
        120,
        "the running scheduler to bind the pods created after the restart",
    )
    assert sched.poll() is None, "the scheduler exited instead of carrying on:\n" + sched_log.read_text()
    nodes = set(bound(kubectl, "before").values()) | set(bound(kubectl, "after").values())
    assert nodes <= {"node-1", "node-2"}
