"""``berth schedule run --report FILE``: on exit, the cluster as the scheduler left it, as a placement report."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

from berth.schedule.report_live import natural_key

from .conftest import Env, eventually, pod

CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: report-spread
- schedulerName: report-binpack-most-allocated
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}]
"""


def test_run_writes_its_report_on_sigterm(env: Env, tmp_path: Path) -> None:
    cfg = tmp_path / "config.yaml"
    cfg.write_text(CONFIG, encoding="utf-8")
    report = tmp_path / "reports" / "at-exit.html"
    code = "import sys; from berth.schedule.live_cli import run_command; run_command.main(sys.argv[1:])"
    argv = [sys.executable, "-c", code, "--config", str(cfg), "--kubeconfig", str(env.cluster.kubeconfig)]
    proc = subprocess.Popen([*argv, "--report", str(report)], stderr=subprocess.PIPE, text=True)
    try:
        for i in range(3):
            env.create(pod(f"spread-{i}", scheduler="report-spread", cpu="1"))
            env.create(pod(f"packed-{i}", scheduler="report-binpack-most-allocated", cpu="500m"))
        env.create(pod("too-big", scheduler="report-spread", cpu="64"))
        eventually(lambda: len(env.bindings()) >= 6, 60, "the six pods that fit to be bound")
        eventually(lambda: _unschedulable(env, "too-big"), 60, "too-big to be found unschedulable")
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert f"report written to {report}" in err
    page = report.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert "placement report, at exit" in page
    # every node of the cluster with its cpu (4 cores each), the two profiles by their full names
    for n in range(1, 5):
        assert f'<td class="name">node-{n}</td>' in page
    assert "of 4 cores" in page
    assert "report-binpack-most-allocated" in page and "report-spread" in page
    placed = re.search(
        r'<div class="value">(\d+) <small>of (\d+)</small></div><div class="label">pods placed', page
    )
    assert placed is not None and placed.groups() == ("6", "7")
    # the pod that fits nowhere is still waiting, with the plugin that turned it away
    assert "default/too-big" in page and "NodeResourcesFit" in page


def _unschedulable(env: Env, name: str) -> bool:
    for p in env.pods("default"):
        if p["metadata"]["name"] == name:
            conditions = (p.get("status") or {}).get("conditions") or []
            return any(c.get("type") == "PodScheduled" and c.get("status") == "False" for c in conditions)
    return False


def test_nodes_sort_as_people_count() -> None:
    assert sorted(["node-10", "node-2", "node-1"], key=natural_key) == ["node-1", "node-2", "node-10"]
