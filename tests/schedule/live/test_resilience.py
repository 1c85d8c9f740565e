"""The API server killed (``kill -9``) and brought up again on another port: the running scheduler re-reads its
kubeconfig, reconnects there, re-lists, and binds every pod exactly once -- proven from the cluster's audit log.
The outage and the recovery are one log line each, naming the server and the kubeconfig.

The audit log has one gap a ``kill -9`` can open: the server writes a request's audit line just after answering
it, so a binding committed in the killed server's last moment (its answer lost, the scheduler's request failing as
unreachable) can be in the store without its line. Such a pod must then be bound by the killed server -- its
``PodScheduled`` time no later than the kill -- and by nobody since; every other pod has exactly one successful
binding in the log."""

from __future__ import annotations

import logging
import math
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from berth.kube import client as kube_client
from berth.schedule.live import api
from berth.schedule.live.run import LiveScheduler
from berth.schedule.plugins import registry as registry_mod

from .conftest import FAST, Env, eventually, pod
from .test_faults import PROFILE, bound_names, one_profile

BERTH = [str(Path(sys.executable).parent / "berth")]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def cluster_up(data: Path, port: int, log_path: Path) -> subprocess.Popen[bytes]:
    """``berth cluster up`` in its own process (so it can be killed), ready when it says so."""
    out = log_path.open("ab")
    proc = subprocess.Popen(
        [*BERTH, "cluster", "up", "--data", str(data), "--port", str(port), "--nodes", "4"],
        stdout=out,
        stderr=subprocess.STDOUT,
    )
    eventually(
        lambda: f":{port}" in log_path.read_text(errors="replace") and "ready at" in log_path.read_text(),
        120,
        f"the cluster on port {port}",
    )
    return proc


class Api:
    """The test's own client (a new one per server: the test's connections are not under test)."""

    def __init__(self, data: Path) -> None:
        self.client = kube_client.api_client(data / "kubeconfig")

    def call(self, method: str, path: str, body: Any = None) -> dict[str, Any]:
        return api.call(self.client, method, path, (), body)

    def close(self) -> None:
        self.client.close()


def all_bound(items: list[dict[str, Any]], count: int) -> dict[str, dict[str, Any]] | None:
    """``ns/name -> pod`` once ``count`` pods are all bound, else None."""
    bound = {f"default/{n}": p for p in items if (n := p["metadata"]["name"]) in bound_names([p])}
    return bound if len(bound) == count else None


def scheduled_at(pod: dict[str, Any]) -> float:
    """When the API server bound the pod (its ``PodScheduled=True`` condition, whole seconds), as a Unix time."""
    for cond in pod.get("status", {}).get("conditions") or ():
        if cond.get("type") == "PodScheduled" and cond.get("status") == "True":
            stamp = datetime.strptime(cond["lastTransitionTime"], "%Y-%m-%dT%H:%M:%SZ")
            return stamp.replace(tzinfo=UTC).timestamp()
    raise AssertionError(f"pod {pod['metadata']['name']} has no PodScheduled=True condition")


def test_kill_9_and_a_restart_elsewhere_binds_every_pod_exactly_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data, server_log = tmp_path / "data", tmp_path / "server.log"
    first_port, second_port = free_port(), free_port()
    proc = cluster_up(data, first_port, server_log)
    admin = Api(data)
    caplog.set_level(logging.INFO, logger="berth.schedule.live")
    opts = replace(FAST, kubeconfig=str(data / "kubeconfig"))
    sched = LiveScheduler(one_profile(), registry_mod.default_registry(), opts).start()
    try:
        assert sched.wait_synced(60)
        eventually(lambda: len(admin.call("GET", "/api/v1/nodes").get("items") or []) == 4, 60, "4 nodes")
        for i in range(20):
            admin.call("POST", "/api/v1/namespaces/default/pods", pod(f"a{i}", scheduler=PROFILE))
        eventually(
            lambda: len(bound_names(admin.call("GET", "/api/v1/namespaces/default/pods")["items"])) >= 5,
            60,
            "first bindings",
        )
        os.kill(proc.pid, signal.SIGKILL)  # mid-run: bindings and watches in flight fail
        proc.wait(30)
        killed_at = time.time()  # every binding of the first server was committed before this
        admin.close()
        # The second server starts in a later whole second, so that its bindings' PodScheduled times (whole
        # seconds) all come after the kill.
        time.sleep(max(0.5, math.floor(killed_at) + 1.0 - time.time()))
        proc = cluster_up(data, second_port, server_log)  # the same data dir, another port
        admin = Api(data)
        for i in range(20):
            admin.call("POST", "/api/v1/namespaces/default/pods", pod(f"b{i}", scheduler=PROFILE))
        pods = eventually(
            lambda: all_bound(admin.call("GET", "/api/v1/namespaces/default/pods")["items"], 40),
            240,
            "all 40 pods bound after the restart",
        )
        assert sched.link.url.endswith(f":{second_port}")
        assert sched.link.outages >= 1 and sched.link.switches == 1
    finally:
        sched.stop()
        admin.close()
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
    audit = Env(proc, data, None)  # type: ignore[arg-type]
    by_killed_server = {key for key, p in pods.items() if scheduled_at(p) <= killed_at}
    bindings = audit.bindings_when(lambda b: set(pods) - by_killed_server <= set(b))
    # Never bound twice (a second binding would be a second successful pods/binding in the log) ...
    assert {key: n for key, n in bindings.items() if n != 1} == {}
    assert set(bindings) <= set(pods)
    # ... and every pod once: by a logged binding, or by one the killed server committed as it died.
    unlogged = set(pods) - set(bindings)
    assert unlogged <= by_killed_server, (
        f"bound after the kill without a binding in the audit log: {unlogged}"
    )
    assert {key for key in unlogged if key.startswith("default/b")} == set()
    # One line per change of state, naming the server and the kubeconfig -- not one per failed request.
    kubeconfig = str(data / "kubeconfig")
    lost = [r.getMessage() for r in caplog.records if r.getMessage().startswith("lost the API server")]
    moved = [r.getMessage() for r in caplog.records if "now points at" in r.getMessage()]
    back = [r.getMessage() for r in caplog.records if "reachable again" in r.getMessage()]
    assert len(lost) == 1 and f"127.0.0.1:{first_port}" in lost[0] and kubeconfig in lost[0]
    assert len(moved) == 1 and f"127.0.0.1:{second_port}" in moved[0] and kubeconfig in moved[0]
    assert len(back) == 1 and f"127.0.0.1:{second_port}" in back[0] and kubeconfig in back[0]
