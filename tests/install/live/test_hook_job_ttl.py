"""A hook Job with ``ttlSecondsAfterFinished: 0`` (ingress-nginx's certgen Jobs) is deleted the moment it completes.
Helm 4 watches, so it sees the completion; berth polls, and must not mistake "gone" for "not finished yet" (it used
to wait into the timeout and fail the install). One cluster for the module."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from berth.cluster import Cluster
from berth.install import kubeops

from .conftest import start_cluster


@pytest.fixture(scope="module")
def kube(tmp_path_factory: pytest.TempPathFactory) -> Iterator[kubeops.KubeOps]:
    c: Cluster = start_cluster(tmp_path_factory.mktemp("ttl") / "cluster")
    assert c.data_dir is not None
    ops = kubeops.connect(str(c.data_dir / "kubeconfig"))
    ns = ops.resource("v1", "Namespace")
    ops.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gate"}}, ns)
    try:
        yield ops
    finally:
        ops.close()
        c.stop()


def job(name: str, **spec: Any) -> dict[str, Any]:
    pod: dict[str, Any] = {"restartPolicy": "Never", "containers": [{"name": "c", "image": "certgen:1"}]}
    pod.update(spec.pop("pod", {}))
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "gate"},
        "spec": {"backoffLimit": 0, "template": {"spec": pod}, **spec},
    }


def wait_absent(ops: kubeops.KubeOps, res: kubeops.Resource, name: str) -> None:
    deadline = time.monotonic() + 30
    while ops.get(res, name, "gate") is not None:
        assert time.monotonic() < deadline, f"{name} was never deleted"
        time.sleep(0.05)


def test_job_deleted_by_its_ttl_right_after_completing_counts_as_complete(kube: kubeops.KubeOps) -> None:
    res = kube.resource("batch/v1", "Job")
    _, live = kube.apply(job("admission-create", ttlSecondsAfterFinished=0), res)
    wait_absent(kube, res, "admission-create")  # completed, then removed by the TTL controller
    r = kube.wait_ready(res, "admission-create", "gate", "job-complete", 5, since=live)
    assert r.state == "ready"
    assert r.detail.startswith("Complete; deleted right after")


def test_job_deleted_before_it_finished_fails_at_once(kube: kubeops.KubeOps) -> None:
    res = kube.resource("batch/v1", "Job")
    # no scheduler serves this pod, so the Job never finishes; someone deletes it meanwhile
    _, live = kube.apply(job("admission-stuck", pod={"schedulerName": "nobody"}), res)
    kube.delete(res, "admission-stuck", "gate")
    wait_absent(kube, res, "admission-stuck")
    # judged from the watch history at once (a WaitTimeout would mean it waited for a Job that cannot come back)
    with pytest.raises(
        kubeops.WaitFailed, match=r"Job gate/admission-stuck failed: deleted before it finished"
    ):
        kube.wait_ready(res, "admission-stuck", "gate", "job-complete", 5, since=live)


def test_without_a_known_version_a_missing_job_still_times_out(kube: kubeops.KubeOps) -> None:
    res = kube.resource("batch/v1", "Job")
    with pytest.raises(
        kubeops.WaitTimeout, match=r"Job gate/never-created was not ready within 0.2s: not found"
    ):
        kube.wait_ready(res, "never-created", "gate", "job-complete", 0.2)
