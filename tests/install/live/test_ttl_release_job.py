"""A release Job (not a hook) with ``ttlSecondsAfterFinished: 0`` is gone the moment it completes; the readiness
step (``apply`` waits like ``helm --wait``) judges it from the watch history after the resourceVersion this run
applied, as hook waits do, instead of waiting for it into the timeout."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from berth.cluster import Cluster
from berth.install import apply, kubeops, receipt
from berth.install.live_cli import apply_command

from .conftest import run_live, setup_workdir

JOB = """apiVersion: batch/v1
kind: Job
metadata:
  name: seed
spec:
  ttlSecondsAfterFinished: 0
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers: [{name: seed, image: registry.example.com/seed:1}]
"""


def test_readiness_judges_a_job_its_ttl_already_deleted(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    chart = tmp_path / "seeder"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: seeder\nversion: 0.1.0\n")
    (chart / "templates" / "job.yaml").write_text(JOB)
    work = setup_workdir(tmp_path, chart, "seed")
    real_get = kubeops.KubeOps.get

    def late_get(self: kubeops.KubeOps, res: kubeops.Resource, name: str, namespace: str = "") -> Any:
        """A poll that always comes too late: it looks only once the TTL controller removed the Job."""
        if res.kind != "Job":
            return real_get(self, res, name, namespace)
        deadline = time.monotonic() + 30
        while real_get(self, res, name, namespace) is not None and time.monotonic() < deadline:
            time.sleep(0.05)
        return real_get(self, res, name, namespace)

    monkeypatch.setattr(kubeops.KubeOps, "get", late_get)
    res = run_live(
        capsys, apply_command, "--work-dir", work, "--kubeconfig", cluster.kubeconfig, "--timeout", "5s"
    )
    assert res.code == 0, res.err
    assert "✓ Job seed/seed ready (Complete; deleted right after (ttlSecondsAfterFinished?))" in res.out


def test_resume_past_the_apply_step_judges_a_job_gone_meanwhile(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The API server went away in the readiness step; by the time it is back the Job completed and its TTL removed
    it. ``--resume`` skips the apply step, so the resourceVersion to replay from is the one the receipt recorded."""
    chart = tmp_path / "seeder"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: seeder\nversion: 0.1.0\n")
    (chart / "templates" / "job.yaml").write_text(JOB)
    work = setup_workdir(tmp_path, chart, "seed")
    real = apply.Executor.do_readiness

    def gone(self: apply.Executor, i: int, step: Any) -> None:
        raise kubeops.Unreachable("the API server went away (test)")

    monkeypatch.setattr(apply.Executor, "do_readiness", gone)
    args = ["--work-dir", work, "--kubeconfig", cluster.kubeconfig, "--timeout", "5s"]
    res = run_live(capsys, apply_command, *args)
    assert res.code == 1 and "step 3/3 (readiness) stopped" in res.err
    monkeypatch.setattr(apply.Executor, "do_readiness", real)
    applied = next(s for s in receipt.receipts(work)[-1][1]["spec"]["steps"] if s["phase"] == "apply")
    assert applied["objects"][0]["resourceVersion"]
    kube = kubeops.connect(str(cluster.kubeconfig))
    try:
        jobs = kube.resource("batch/v1", "Job")
        deadline = time.monotonic() + 30
        while kube.get(jobs, "seed", "seed") is not None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert kube.get(jobs, "seed", "seed") is None  # completed and deleted before the resumed run
    finally:
        kube.close()
    res = run_live(capsys, apply_command, *args, "--resume")
    assert res.code == 0, res.err
    assert "✓ Job seed/seed ready (Complete; deleted right after (ttlSecondsAfterFinished?))" in res.out
