"""Faults around apply: the API server killed mid-apply and restarted, the wrong kube context, too few permissions."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from berth.bench import install as bench
from berth.cluster import Cluster
from berth.install import apply, receipt
from berth.install.live_cli import apply_command, status_command
from berth.kube import client as kube_client
from berth.kube import kubeconfig, yamlio

from .conftest import run_live, setup_workdir


class ServerProcess:
    """``berth cluster up`` in a child process, so it can be killed with SIGKILL and started again."""

    def __init__(self, data: Path) -> None:
        self.data = data
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.proc: subprocess.Popen[str] | None = None

    def start(self) -> None:
        cmd = [sys.executable, "-m", "berth.cli", "cluster", "up", "--data", str(self.data),
               "--port", str(self.port), "--nodes", "1"]  # fmt: skip
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert self.proc.stdout is not None
        first = self.proc.stdout.readline()
        assert "ready" in first, first

    def kill(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    s = ServerProcess(tmp_path / "cluster")
    s.start()
    try:
        yield s
    finally:
        s.stop()


class KillAt(apply.Reporter):
    """Kills the API server right after the ``nth`` outcome ``action`` of an object of ``kinds`` is recorded."""

    def __init__(self, server: ServerProcess, action: str, kinds: frozenset[str], nth: int) -> None:
        super().__init__(quiet=True)
        self.server, self.action, self.kinds, self.nth = server, action, kinds, nth
        self.count = 0

    def event(self, name: str, **data: Any) -> None:
        if name == self.action and data["obj"].kind in self.kinds:
            self.count += 1
            if self.count == self.nth:
                self.server.kill()


KILL_POINTS = {
    # mid-way through the late apply step (the 6th ConfigMap/Service/Role/Deployment applied)
    "apply": ("created", frozenset({"ConfigMap", "Service", "Role", "Deployment"}), 6, "apply"),
    # right after the post-install hook Job is created, before it is judged: resume waits on it, never re-runs it
    "hook-wait": ("created", frozenset({"Job"}), 3, "post-install"),
}


@pytest.mark.parametrize("point", sorted(KILL_POINTS))
def test_api_server_killed_mid_apply_then_resume(tmp_path: Path, server: ServerProcess, point: str) -> None:
    action, kinds, nth, phase = KILL_POINTS[point]
    work = setup_workdir(tmp_path, bench.live_chart(tmp_path), "bench")
    opts = apply.ApplyOptions(work, kubeconfig=str(server.data / "kubeconfig"), timeout=120)
    with pytest.raises(apply.RunFailed, match="no answer from the API server") as err:
        apply.run(opts, KillAt(server, action, kinds, nth))
    assert "--resume" in str(err.value)
    spec = receipt.receipts(work)[-1][1]["spec"]
    assert spec["result"] == "interrupted"
    stopped = next(s for s in spec["steps"] if s["status"] == "interrupted")
    assert stopped["phase"] == phase

    server.start()
    outcome = apply.run(apply.ApplyOptions(work, kubeconfig=str(server.data / "kubeconfig"), timeout=120, resume=True),
                        apply.Reporter(quiet=True))  # fmt: skip
    assert outcome.ran < outcome.total
    spec = receipt.receipts(work)[-1][1]["spec"]
    assert spec["result"] == "succeeded"
    # Across both server lives, every object and hook Job was written exactly once.
    writes: dict[str, int] = {}
    for line in (server.data / "audit.jsonl").read_text().splitlines():
        e = json.loads(line)
        if e["user"] == "kubernetes-admin" and e["verb"] == "patch" and e["code"] < 300:
            key = f"{e['resource']} {e['name']}"
            writes[key] = writes.get(key, 0) + 1
    assert len(writes) == bench.LIVE_OBJECTS + bench.LIVE_HOOK_JOBS
    assert {k: n for k, n in writes.items() if n != 1} == {}


def two_context_kubeconfig(cluster: Cluster, path: Path, current: str) -> Path:
    doc = yamlio.load_file(cluster.kubeconfig)[0].body
    other = dict(doc["contexts"][0], name="staging")
    doc["contexts"].append(other)
    doc["current-context"] = current
    path.write_text(yamlio.dump(doc), encoding="utf-8")
    return path


def test_wrong_context_is_refused_unless_named(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, edge_work: Path, tmp_path: Path
) -> None:
    res = run_live(capsys, apply_command, "--work-dir", edge_work, "--kubeconfig", cluster.kubeconfig)
    assert res.code == 0, res.err
    cfg = two_context_kubeconfig(cluster, tmp_path / "kubeconfig", current="staging")
    for command in (apply_command, status_command):
        res = run_live(capsys, command, "--work-dir", edge_work, "--kubeconfig", cfg)
        assert res.code == 2
        assert "the current kube context is 'staging'" in res.err and "applied to context 'berth'" in res.err
        assert "pass --context berth" in res.err
    res = run_live(capsys, status_command, "--work-dir", edge_work, "--kubeconfig", cfg, "--context", "berth")
    assert res.code == 0, res.err
    # Naming --context passes the guard; the release is then Helm's to find there (this "staging" is the same
    # cluster), so installing it a second time is refused as helm install refuses a name in use.
    res = run_live(
        capsys, apply_command, "--work-dir", edge_work, "--kubeconfig", cfg, "--context", "staging"
    )
    assert res.code == 2
    assert "the current kube context" not in res.err
    assert "cannot reuse a name that is still in use: release edge-hooks in namespace edge" in res.err


def test_missing_permissions_one_line_each(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, edge_work: Path, tmp_path: Path
) -> None:
    from kubernetes import client as k8s

    api = kube_client.api_client(cluster.kubeconfig)
    core: Any = k8s.CoreV1Api(api)
    rbac: Any = k8s.RbacAuthorizationV1Api(api)
    core.create_namespaced_service_account("default", {"metadata": {"name": "installer"}})
    rbac.create_cluster_role({
        "metadata": {"name": "almost-installer"},
        "rules": [
            {"apiGroups": ["*"], "resources": ["*"], "verbs": ["get", "list", "create", "patch"]},
        ],
    })  # fmt: skip
    rbac.create_cluster_role_binding({
        "metadata": {"name": "almost-installer"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "almost-installer"},
        "subjects": [{"kind": "ServiceAccount", "name": "installer", "namespace": "default"}],
    })  # fmt: skip
    token = core.create_namespaced_service_account_token("installer", "default", {"spec": {}}).status.token
    api.close()
    doc = yamlio.load_file(cluster.kubeconfig)[0].body
    doc["users"][0]["user"] = {"token": token}
    cfg = tmp_path / "sa-kubeconfig"
    cfg.write_text(yamlio.dump(doc), encoding="utf-8")
    assert kubeconfig.current_context(cfg) == "berth"

    res = run_live(capsys, apply_command, "--work-dir", edge_work, "--kubeconfig", cfg)
    assert res.code == 1
    lines = [ln.strip() for ln in res.err.splitlines() if ln.strip().startswith("cannot ")]
    # Only deletions are missing (hook Jobs, RoleBindings...), and the update of the release record (a Secret
    # Helm's driver replaces): each (verb, resource, namespace) once.
    assert lines and all(
        ln.startswith("cannot delete ") or ln == "cannot update secrets in namespace edge" for ln in lines
    )
    assert "cannot delete jobs.batch in namespace edge" in lines
    assert "cannot update secrets in namespace edge" in lines
    assert len(lines) == len(set(lines))
    assert f"lacks {len(lines)} permission(s)" in res.err
    assert not receipt.receipts(edge_work)  # refused before anything was written
