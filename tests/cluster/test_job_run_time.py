"""A Job on the embedded cluster runs for at least a real container's minimum run time, so a client that creates a
hook Job with ``ttlSecondsAfterFinished: 0`` and then starts watching it (Helm 4) finds it before the TTL-after-finished
controller deletes it, and sees it go Complete then DELETED -- as on a real cluster, where the pod takes seconds."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from berth.cluster import Cluster, ClusterOptions
from berth.cluster.controllers import CONTAINER_RUN_SECONDS
from berth.kube.objects import Obj


def hook_job(name: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "annotations": {"helm.sh/hook": "pre-install"}},
        "spec": {
            "ttlSecondsAfterFinished": 0,
            "backoffLimit": 0,
            "template": {
                "spec": {
                    "nodeName": "node-1",
                    "restartPolicy": "Never",
                    "containers": [{"name": "create", "image": "certgen:1"}],
                }
            },
        },
    }


@pytest.fixture()
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    c = Cluster(ClusterOptions(data_dir=tmp_path / "data", nodes=1)).start()
    try:
        yield c
    finally:
        c.stop()


def _complete(job: Obj) -> bool:
    return any(c.get("type") == "Complete" for c in (job.get("status") or {}).get("conditions") or [])


def test_a_ttl_zero_job_lives_a_containers_run_time_then_completes_and_is_deleted(cluster: Cluster) -> None:
    assert cluster.api is not None
    api = cluster.api
    t0 = time.monotonic()
    created = api.create("jobs.batch", hook_job("gate-create"), "default")
    # What Helm does next: watch the Job from what it created (the history is replayed, so nothing is missed)
    w = api.watch("jobs.batch", "default", created["metadata"]["resourceVersion"])
    pods = api.watch("pods", "default", created["metadata"]["resourceVersion"])
    completed_at = None
    deleted = False
    deadline = time.monotonic() + 30
    try:
        while not deleted:
            assert time.monotonic() < deadline, "the Job never completed and went away"
            ev = w.next_event(0.5)
            if ev is None:
                continue
            kind, job = ev
            if kind == "MODIFIED" and completed_at is None and _complete(job):
                completed_at = time.monotonic()
            deleted = kind == "DELETED"
        phases = []
        while (ev := pods.next_event(0.05)) is not None:
            phase = (ev[1].get("status") or {}).get("phase")
            if phase and (not phases or phases[-1] != phase):
                phases.append(phase)
    finally:
        w.close()
        pods.close()
    # Completed no sooner than a container can run (a lower bound: a loaded machine only makes it later) ...
    assert completed_at is not None, "deleted without ever being seen Complete"
    assert completed_at - t0 >= CONTAINER_RUN_SECONDS
    # ... its pod ran before it succeeded, and the TTL controller removed the Job once it was Complete
    assert phases[-2:] == ["Running", "Succeeded"], phases


def test_the_run_time_is_an_option_a_caller_can_set_to_zero(tmp_path: Path) -> None:
    opts = ClusterOptions(data_dir=tmp_path / "data", nodes=1, controller_overrides={"job_duration": 0.0})
    with Cluster(opts) as c:
        assert c.controllers is not None
        assert c.controllers.ctx.options.job_duration == 0.0
    with Cluster(ClusterOptions(data_dir=tmp_path / "data2", nodes=1)) as c:
        assert c.controllers.ctx.options.job_duration == CONTAINER_RUN_SECONDS
