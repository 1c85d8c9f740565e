"""Jobs: pods until completions succeed (SuccessCriteriaMet then Complete), or Failed past backoffLimit."""

from __future__ import annotations

import re
from typing import Any

import pytest

from berth.cluster.controllers import SIMULATE_FAILURE_ANNOTATION, job

from .conftest import Cluster, condition, wait_for


def job_body(name: str, annotations: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "template": {
            "spec": {
                "nodeName": "node-1",
                "restartPolicy": "Never",
                "containers": [{"name": "c", "image": "busybox"}],
            }
        }
    }
    body.update(spec)
    return {"metadata": {"name": name, "annotations": annotations or {}}, "spec": body}


def finished(c: Cluster, name: str, ctype: str) -> Any:
    return wait_for(
        lambda: (
            (j := c.get("jobs.batch", name)) and (condition(j, ctype) or {}).get("status") == "True" and j
        ),
        what=f"job {name} {ctype}",
    )


def test_job_completes_with_conditions_in_upstream_order(cluster: Cluster) -> None:
    cluster.api.create("jobs.batch", job_body("once"), "default")
    j = finished(cluster, "once", "Complete")
    st = j["status"]
    assert [c["type"] for c in st["conditions"]] == ["SuccessCriteriaMet", "Complete"]
    assert st["succeeded"] == 1 and "active" not in st and "failed" not in st
    assert st["startTime"] and st["completionTime"]
    (p,) = cluster.pods()
    assert re.fullmatch(r"once-[bcdfghjklmnpqrstvwxz2456789]{5}", p["metadata"]["name"])
    labels = p["metadata"]["labels"]
    uid = j["metadata"]["uid"]
    assert labels["batch.kubernetes.io/job-name"] == labels["job-name"] == "once"
    assert labels["batch.kubernetes.io/controller-uid"] == labels["controller-uid"] == uid
    assert p["status"]["phase"] == "Succeeded"


def test_completions_and_parallelism(cluster: Cluster) -> None:
    cluster.api.create("jobs.batch", job_body("many", completions=5, parallelism=2), "default")
    j = finished(cluster, "many", "Complete")
    assert j["status"]["succeeded"] == 5
    assert len(cluster.pods()) == 5


def test_failure_annotation_fails_the_job_after_backoff_limit(cluster: Cluster) -> None:
    cluster.api.create(
        "jobs.batch", job_body("bad", {SIMULATE_FAILURE_ANNOTATION: "true"}, backoffLimit=2), "default"
    )
    j = finished(cluster, "bad", "Failed")
    st = j["status"]
    assert [c["type"] for c in st["conditions"]] == ["FailureTarget", "Failed"]
    failed = condition(j, "Failed")
    assert failed is not None and failed["reason"] == "BackoffLimitExceeded"
    assert st["failed"] == 3
    assert "completionTime" not in st
    assert all(p["status"]["phase"] == "Failed" for p in cluster.pods())
    assert condition(j, "Complete") is None


def test_complete_job_records_event(cluster: Cluster) -> None:
    cluster.api.create("jobs.batch", job_body("ev"), "default")
    finished(cluster, "ev", "Complete")
    cluster.controllers.ctx.recorder.flush()
    reasons = [
        e["reason"]
        for e in cluster.api.list("events", "default")[0]
        if e["involvedObject"].get("name") == "ev"
    ]
    assert "SuccessfulCreate" in reasons and "Completed" in reasons


def test_indexed_job_runs_each_index_once(cluster: Cluster) -> None:
    cluster.api.create(
        "jobs.batch", job_body("idx", completions=3, parallelism=3, completionMode="Indexed"), "default"
    )
    j = finished(cluster, "idx", "Complete")
    assert j["status"]["completedIndexes"] == "0-2"
    indexes = sorted(p["metadata"]["annotations"][job.INDEX_ANNOTATION] for p in cluster.pods())
    assert indexes == ["0", "1", "2"]
    assert all(
        p["metadata"]["name"].startswith(f"idx-{p['metadata']['annotations'][job.INDEX_ANNOTATION]}-")
        for p in cluster.pods()
    )


def test_suspended_job_makes_no_pods_until_resumed(cluster: Cluster) -> None:
    cluster.api.create("jobs.batch", job_body("later", suspend=True), "default")
    cluster.api.create("jobs.batch", job_body("marker"), "default")
    finished(cluster, "marker", "Complete")
    assert not [p for p in cluster.pods() if p["metadata"]["labels"]["job-name"] == "later"]
    j = cluster.get("jobs.batch", "later")
    j["spec"]["suspend"] = False
    cluster.api.update("jobs.batch", j, "default")
    finished(cluster, "later", "Complete")


def test_active_deadline_fails_a_job_whose_pods_never_run(cluster: Cluster) -> None:
    body = job_body("slow", activeDeadlineSeconds=1)
    del body["spec"]["template"]["spec"]["nodeName"]
    cluster.api.create("jobs.batch", body, "default")
    j = finished(cluster, "slow", "Failed")
    assert condition(j, "Failed")["reason"] == "DeadlineExceeded"  # type: ignore[index]
    wait_for(lambda: not cluster.pods(), what="active pod deleted")


def test_ttl_after_finished_deletes_the_job(cluster: Cluster) -> None:
    cluster.api.create("jobs.batch", job_body("ttl", ttlSecondsAfterFinished=0), "default")
    wait_for(lambda: not cluster.api.list("jobs.batch", "default")[0], what="job deleted after ttl")


def test_job_pod_duration_option(make_cluster: Any) -> None:
    c = make_cluster(job_duration=0.2)
    c.api.create("jobs.batch", job_body("timed"), "default")
    p = wait_for(
        lambda: (ps := c.pods()) and ps[0]["status"].get("phase") == "Running" and ps[0], what="running"
    )
    assert condition(c.get("jobs.batch", "timed"), "Complete") is None
    assert p["status"]["containerStatuses"][0]["state"].get("running")
    finished(c, "timed", "Complete")


@pytest.mark.parametrize(
    ("indexes", "text"),
    [
        pytest.param(set(), "", id="empty"),
        pytest.param({0}, "0", id="single"),
        pytest.param({0, 1, 2, 5}, "0-2,5", id="run-and-single"),
        pytest.param({3, 1, 7, 8}, "1,3,7-8", id="unsorted"),
    ],
)
def test_format_indexes(indexes: set[int], text: str) -> None:
    assert job.format_indexes(indexes) == text


def test_the_job_controller_writes_from_its_own_last_write_not_a_stale_copy(cluster: Cluster) -> None:
    """Its informer delivers a status write a moment later; reconciles in between (pod events) used the older copy
    and met 409 after 409 (~30-80 per Job). Now it writes from what its last write returned: no conflict at all,
    since nobody else writes a Job's status."""
    outcomes: list[int] = []
    update = cluster.api.update

    def counting(resource: str, body: Any, *args: Any, **kwargs: Any) -> Any:
        if resource == "jobs.batch" and kwargs.get("subresource") == "status":
            try:
                out = update(resource, body, *args, **kwargs)
            except Exception as exc:
                outcomes.append(int(getattr(exc, "code", 0) or 0))
                raise
            outcomes.append(200)
            return out
        return update(resource, body, *args, **kwargs)

    cluster.api.update = counting  # type: ignore[method-assign]
    for i in range(3):
        cluster.api.create("jobs.batch", job_body(f"quick-{i}", completions=2, parallelism=2), "default")
    for i in range(3):
        finished(cluster, f"quick-{i}", "Complete")
    assert outcomes and set(outcomes) == {200}
