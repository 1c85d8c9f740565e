"""``berth cluster up/status/down`` as a user runs them, and durability across ``kill -9``."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import kubectl_for

UP = [sys.executable, "-c", "import sys; from berth.cli import main; sys.exit(main(sys.argv[1:]))"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(data: Path, port: int) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [*UP, "cluster", "up", "--data", str(data), "--port", str(port), "--nodes", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert "ready at https://127.0.0.1:" in line, line + proc.stdout.read()
    return proc


def _berth(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*UP, *args], capture_output=True, text=True, timeout=60)


def test_objects_survive_kill_9_and_restart(tmp_path: Path) -> None:
    data, port = tmp_path / "data", _free_port()
    proc = _start(data, port)
    kubectl = kubectl_for(data / "kubeconfig", tmp_path / "home")
    try:
        kubectl.ok("create", "configmap", "keep", "--from-literal=a=b")
        rv = json.loads(kubectl.ok("get", "cm", "keep", "-o", "json"))["metadata"]["resourceVersion"]
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    proc = _start(data, port)
    try:
        cm = json.loads(kubectl.ok("get", "cm", "keep", "-o", "json"))
        assert cm["data"] == {"a": "b"} and cm["metadata"]["resourceVersion"] == rv
        kubectl.ok("create", "configmap", "next")
        nxt = json.loads(kubectl.ok("get", "cm", "next", "-o", "json"))
        assert int(nxt["metadata"]["resourceVersion"]) > int(rv)
        status = json.loads(_berth("cluster", "status", "--data", str(data), "-o", "json").stdout)
        assert status["running"] and status["ready"] and status["pid"] == proc.pid
        # ours, and kube-root-ca.crt in each of the four namespaces a cluster starts with
        assert status["url"] == f"https://127.0.0.1:{port}" and status["objects"]["configmaps"] == 2 + 4
        down = _berth("cluster", "down", "--data", str(data))
        assert down.returncode == 0 and "stopped" in down.stdout
        proc.wait(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    status = json.loads(_berth("cluster", "status", "--data", str(data), "-o", "json").stdout)
    assert status["running"] is False and status["objects"]["configmaps"] == 2 + 4


def test_second_up_on_a_running_dir_is_refused(tmp_path: Path) -> None:
    from berth.cluster import Cluster, ClusterOptions

    data = tmp_path / "data"
    with Cluster(ClusterOptions(data_dir=data, run_controllers=False)):
        again = _berth("cluster", "up", "--data", str(data), "--nodes", "0")
    assert (
        again.returncode == 1 and "already running" in again.stderr and "berth cluster down" in again.stderr
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [(b"garbage that is not sqlite" * 200, "not a usable berth store")],
    ids=["corrupted-store"],
)
def test_corrupted_data_dir_is_a_clear_error(tmp_path: Path, content: bytes, message: str) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "store.db").write_bytes(content)
    proc = _berth("cluster", "up", "--data", str(data), "--nodes", "0")
    assert proc.returncode == 1 and message in proc.stderr and "Traceback" not in proc.stderr


def test_a_locked_data_dir_is_a_clear_error(tmp_path: Path) -> None:
    from berth.cluster import Cluster, ClusterError, ClusterOptions

    data = tmp_path / "data"
    with (
        Cluster(ClusterOptions(data_dir=data, run_controllers=False)),
        pytest.raises(ClusterError, match="locked by another running cluster"),
    ):
        Cluster(ClusterOptions(data_dir=data, run_controllers=False)).start()


def test_detach_then_down(tmp_path: Path) -> None:
    data = tmp_path / "data"
    up = _berth("cluster", "up", "--data", str(data), "--nodes", "0", "--detach")
    assert up.returncode == 0 and "ready at https://" in up.stdout
    info = json.loads((data / "server.json").read_text())
    try:
        assert (data / "kubeconfig").is_file()
        # the printed lines work as they are: the export, then the kubectl to use (the pinned one off PATH)
        export, hint = up.stdout.splitlines()[1:3]
        assert export.strip() == f"export KUBECONFIG={data / 'kubeconfig'}"
        command = hint.split()
        assert command[1:] == ["get", "nodes"]
        env = {**os.environ, "KUBECONFIG": str(data / "kubeconfig"), "HOME": str(tmp_path)}
        listed = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)
        assert listed.returncode == 0, listed.stderr
        assert "No resources found" in listed.stderr  # --nodes 0
    finally:
        down = _berth("cluster", "down", "--data", str(data))
    assert down.returncode == 0
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(int(info["pid"]), 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("detached cluster still running after down")


def test_a_taken_port_is_a_clear_error(tmp_path: Path) -> None:
    from berth.cluster import Cluster, ClusterError, ClusterOptions

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        with pytest.raises(ClusterError, match=f"cannot listen on 127.0.0.1:{port}"):
            Cluster(ClusterOptions(data_dir=tmp_path / "d", port=port, run_controllers=False)).start()
    # the failed start released the data directory: a new start succeeds
    with Cluster(ClusterOptions(data_dir=tmp_path / "d", run_controllers=False)) as c:
        assert c.port != port


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--port", "99999"], "error: --port: 99999 is not a port: use 1-65535, or 0 for a free one"),
        (["--node-cpu", "abc"], "error: --node-cpu: invalid quantity 'abc'"),
        (["--node-memory", "1Qi"], "error: --node-memory: invalid quantity '1Qi'"),
        (["--node-cpu", "0"], "error: --node-cpu: must be a positive quantity like 8 or 500m, got '0'"),
        (["--node-pods", "1.5"], "error: --node-pods: must be a whole number of pods like 110, got '1.5'"),
        (["--nodes", "-1"], "error: --nodes: must be >= 0"),
    ],
    ids=["port", "cpu", "memory", "zero-cpu", "pods", "nodes"],
)
def test_bad_up_flags_are_one_clear_error_and_write_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    from berth.cli import main

    data = tmp_path / "data"
    assert main(["cluster", "up", "--data", str(data), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1
    assert not data.exists()


def test_status_of_a_folder_no_cluster_ever_used_says_so(tmp_path: Path) -> None:
    proc = _berth("cluster", "status", "--data", str(tmp_path / "typo"))
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        f"error: {tmp_path / 'typo'}: no cluster has been started here; start one with "
        f"`berth cluster up --data {tmp_path / 'typo'}`"
    )
