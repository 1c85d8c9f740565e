"""A chart that keeps its random Secret through ``lookup``: berth's upgrade keeps the live value, as Helm's does."""

from __future__ import annotations

import base64
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from berth.cluster import Cluster
from berth.install import cli as install_cli
from berth.install.live_cli import apply_command, status_command, upgrade_command
from berth.kube import client as kube_client
from berth.kube import tools

from ..test_randomness import RANDOM_CHART, write_chart
from .conftest import run_live


def password(cluster: Cluster) -> str:
    from kubernetes import client as k8s

    api = kube_client.api_client(cluster.kubeconfig)
    try:
        secret: Any = k8s.CoreV1Api(api).read_namespaced_secret("rnd-admin", "mon")
        return base64.b64decode(secret.data["password"]).decode()
    finally:
        api.close()


def test_upgrade_keeps_the_live_value_of_a_random_field_the_chart_looks_up(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, tmp_path: Path
) -> None:
    chart = write_chart(tmp_path, RANDOM_CHART)
    work = tmp_path / "w"
    res = run_live(capsys, install_cli.setup_cmd, "--pull", chart, "-n", "mon", "--work-dir", work,
                   "--non-interactive")  # fmt: skip
    assert res.code == 0, res.err
    live = ["--work-dir", work, "--kubeconfig", cluster.kubeconfig, "--no-wait"]
    assert run_live(capsys, apply_command, *live).code == 0
    first = password(cluster)
    assert len(first) == 24
    res = run_live(capsys, upgrade_command, *live, "--pull", chart)  # a new render, a new random password
    assert res.code == 0, res.err
    assert password(cluster) == first  # kept, as the chart's lookup keeps it under helm upgrade
    res = run_live(capsys, status_command, "--work-dir", work, "--kubeconfig", cluster.kubeconfig)
    assert res.code == 0, res.out + res.err  # the random fields are not drift
    env = {**os.environ, "KUBECONFIG": str(cluster.kubeconfig), "HOME": str(tmp_path)}
    proc = subprocess.run([tools.find("helm").path, "upgrade", "rnd", str(chart), "-n", "mon"],
                          capture_output=True, text=True, env=env, timeout=180)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert password(cluster) == first  # and helm, after berth, keeps it too
