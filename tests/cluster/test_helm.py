"""Helm 4 against the embedded cluster: release Secrets (protobuf), server-side apply, uninstall (protobuf
DeleteOptions) -- what ``berth install`` relies on."""

from __future__ import annotations

import subprocess
from pathlib import Path

from berth.cluster import Cluster
from berth.kube import tools

from .conftest import Kubectl

CHART = {
    "Chart.yaml": "apiVersion: v2\nname: demo\nversion: 0.1.0\n",
    "templates/cm.yaml": (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: '{{ .Release.Name }}-cfg'}\ndata: {a: '{{ .Values.a }}'}\n"
    ),
    "values.yaml": "a: one\n",
}


def test_install_upgrade_list_uninstall(cluster: Cluster, kubectl: Kubectl, tmp_path: Path) -> None:
    chart = tmp_path / "chart"
    for rel, text in CHART.items():
        (chart / rel).parent.mkdir(parents=True, exist_ok=True)
        (chart / rel).write_text(text)
    helm = tools.find("helm").path

    def run(*args: str) -> str:
        proc = subprocess.run([helm, *args], capture_output=True, text=True, env=kubectl.env, timeout=60)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    assert "STATUS: deployed" in run("install", "r1", str(chart))
    assert kubectl.ok("get", "cm", "r1-cfg", "-o", "jsonpath={.data.a}") == "one"
    run("upgrade", "r1", str(chart), "--set", "a=two")
    assert kubectl.ok("get", "cm", "r1-cfg", "-o", "jsonpath={.data.a}") == "two"
    assert "r1" in run("list")
    secrets = kubectl.ok("get", "secrets", "-l", "owner=helm", "-o", "name")
    assert "secret/sh.helm.release.v1.r1.v2" in secrets
    run("uninstall", "r1")
    assert kubectl.run("get", "cm", "r1-cfg").returncode != 0
    assert kubectl.ok("get", "secrets", "-l", "owner=helm", "-o", "name").strip() == ""
