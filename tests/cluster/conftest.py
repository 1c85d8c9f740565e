"""Fixtures for driving the embedded cluster: an in-process server per test, the real kubectl, the official client.

Each test gets its own data directory and port (the OS picks a free one), and kubectl gets its own HOME and cache
directory so discovery caches never leak between tests.
"""

from __future__ import annotations

import http.client
import json
import os
import ssl
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from berth.cluster import Cluster, ClusterOptions
from berth.kube import client as kube_client
from berth.kube import tools


@dataclass
class Kubectl:
    """Runs the pinned kubectl against one cluster with an isolated HOME and cache."""

    binary: str
    env: dict[str, str]

    def run(
        self, *args: str, input: str | None = None, timeout: float = 30
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [self.binary, *args], input=input, capture_output=True, text=True, env=self.env, timeout=timeout
        )

    def ok(self, *args: str, input: str | None = None, timeout: float = 30) -> str:
        proc = self.run(*args, input=input, timeout=timeout)
        assert proc.returncode == 0, f"kubectl {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr}"
        return proc.stdout


def kubectl_for(kubeconfig: Path, home: Path) -> Kubectl:
    home.mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "KUBECONFIG": str(kubeconfig),
        "KUBECACHEDIR": str(home / "cache"),
    }
    return Kubectl(tools.find("kubectl").path, env)


@pytest.fixture()
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    """An embedded cluster without controllers (API semantics only)."""
    c = Cluster(ClusterOptions(data_dir=tmp_path / "data", run_controllers=False)).start()
    try:
        yield c
    finally:
        c.stop()


@pytest.fixture()
def kubectl(cluster: Cluster, tmp_path: Path) -> Kubectl:
    return kubectl_for(cluster.kubeconfig, tmp_path / "home")


@pytest.fixture()
def k8s(cluster: Cluster) -> Iterator[Any]:
    """An official-client ApiClient built through berth's one client wrapper."""
    api_client = kube_client.api_client(cluster.kubeconfig)
    try:
        yield api_client
    finally:
        api_client.close()


def send(
    cluster: Cluster, method: str, path: str, body: bytes, content_type: str = "application/json"
) -> tuple[int, list[str], dict[str, Any]]:
    """The status, every ``Warning`` header (in order) and the JSON answer."""
    assert cluster.pki is not None
    ctx = ssl.create_default_context(cafile=str(cluster.pki.ca_cert))
    conn = http.client.HTTPSConnection("127.0.0.1", cluster.port, context=ctx, timeout=10)
    headers = {"Authorization": f"Bearer {cluster.token}", "Content-Type": content_type}
    conn.request(method, path, body=body, headers=headers)
    resp = conn.getresponse()
    out = json.loads(resp.read() or b"{}")
    conn.close()
    return resp.status, [v for k, v in resp.getheaders() if k.lower() == "warning"], out
