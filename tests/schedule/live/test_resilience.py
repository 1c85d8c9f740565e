"""The API server killed (``kill -9``) and brought up again on another port: the running scheduler re-reads its
kubeconfig, reconnects there, re-lists, and binds every pod exactly once -- proven from the cluster's audit log.
The outage and the recovery are one log line each, naming the server and the kubeconfig."""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import replace
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
        admin.close()
        time.sleep(0.5)
        proc = cluster_up(data, second_port, server_log)  # the same data dir, another port
        admin = Api(data)
        for i in range(20):
            admin.call("POST", "/api/v1/namespaces/default/pods", pod(f"b{i}", scheduler=PROFILE))
        eventually(
            lambda: len(bound_names(admin.call("GET", "/api/v1/namespaces/default/pods")["items"])) == 40,
            120,
            "all 40 pods bound after the restart",
        )
        assert sched.link.url.endswith(f":{second_port}")
        assert sched.link.outages >= 1 and sched.link.switches == 1
    finally:
        sched.stop()
        admin.close()
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
    bindings = Env(proc, data, None).bindings_when(lambda b: len(b) >= 40)  # type: ignore[arg-type]
    # Every pod bound exactly once: one successful pods/binding each in the audit log of both server runs.
    assert bindings == {f"default/{p}{i}": 1 for p in "ab" for i in range(20)}
    # One line per change of state, naming the server and the kubeconfig -- not one per failed request.
    kubeconfig = str(data / "kubeconfig")
    lost = [r.getMessage() for r in caplog.records if r.getMessage().startswith("lost the API server")]
    moved = [r.getMessage() for r in caplog.records if "now points at" in r.getMessage()]
    back = [r.getMessage() for r in caplog.records if "reachable again" in r.getMessage()]
    assert len(lost) == 1 and f"127.0.0.1:{first_port}" in lost[0] and kubeconfig in lost[0]
    assert len(moved) == 1 and f"127.0.0.1:{second_port}" in moved[0] and kubeconfig in moved[0]
    assert len(back) == 1 and f"127.0.0.1:{second_port}" in back[0] and kubeconfig in back[0]
