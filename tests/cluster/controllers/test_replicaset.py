"""ReplicaSets create and delete pods to match spec.replicas and report readiness in status."""

from __future__ import annotations

import re
from typing import Any

import pytest

from berth.cluster.controllers import replicaset

from .conftest import Cluster, template, wait_for


def rs(name: str, replicas: int, labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    labels = labels or {"app": name}
    body: dict[str, Any] = {
        "replicas": replicas,
        "selector": {"matchLabels": labels},
        "template": template(labels),
    }
    body.update(spec)
    return {"metadata": {"name": name}, "spec": body}


def ready_status(c: Cluster, name: str, n: int) -> Any:
    return wait_for(
        lambda: (
            (s := c.get("replicasets.apps", name).get("status") or {}).get("readyReplicas", 0) == n
            and s.get("replicas", 0) == n
            and s
        ),
        what=f"{name} ready={n}",
    )


def test_creates_named_owned_pods_and_reports_status(cluster: Cluster) -> None:
    created = cluster.api.create("replicasets.apps", rs("web", 3), "default")
    status = ready_status(cluster, "web", 3)
    assert status == {
        "replicas": 3,
        "fullyLabeledReplicas": 3,
        "readyReplicas": 3,
        "availableReplicas": 3,
        "observedGeneration": 1,
    }
    pods = cluster.pods(selector="app=web")
    assert len(pods) == 3
    for p in pods:
        assert re.fullmatch(r"web-[bcdfghjklmnpqrstvwxz2456789]{5}", p["metadata"]["name"])
        (ref,) = p["metadata"]["ownerReferences"]
        assert ref == {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "name": "web",
            "uid": created["metadata"]["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
        }
        assert p["spec"]["schedulerName"] == "default-scheduler"


def test_scheduler_name_comes_from_the_template(cluster: Cluster) -> None:
    body = rs("custom", 1)
    body["spec"]["template"]["spec"]["schedulerName"] = "my-scheduler"
    del body["spec"]["template"]["spec"]["nodeName"]
    cluster.api.create("replicasets.apps", body, "default")
    p = wait_for(lambda: cluster.pods(selector="app=custom"), what="pod")[0]
    assert p["spec"]["schedulerName"] == "my-scheduler"
    assert p["status"]["phase"] == "Pending"


@pytest.mark.parametrize(("start", "end"), [(3, 1), (1, 4), (2, 0)], ids=["down", "up", "to-zero"])
def test_scaling_converges(cluster: Cluster, start: int, end: int) -> None:
    cluster.api.create("replicasets.apps", rs("s", start), "default")
    ready_status(cluster, "s", start)
    obj = cluster.get("replicasets.apps", "s")
    obj["spec"]["replicas"] = end
    cluster.api.update("replicasets.apps", obj, "default")
    status = wait_for(
        lambda: (
            (s := cluster.get("replicasets.apps", "s")["status"]).get("observedGeneration") == 2
            and s.get("replicas") == end
            and s.get("readyReplicas", 0) == end
            and s
        ),
        what="scaled",
    )
    assert status["replicas"] == end
    assert len(cluster.pods(selector="app=s")) == end


def test_deleted_pod_is_replaced(cluster: Cluster) -> None:
    cluster.api.create("replicasets.apps", rs("r", 2), "default")
    ready_status(cluster, "r", 2)
    victim = cluster.pods(selector="app=r")[0]["metadata"]["name"]
    cluster.api.delete("pods", victim, "default")
    wait_for(
        lambda: (
            len(names := [p["metadata"]["name"] for p in cluster.pods(selector="app=r")]) == 2
            and victim not in names
        ),
        what="replacement",
    )


def test_unready_pods_count_in_replicas_not_ready(cluster: Cluster) -> None:
    body = rs("pending", 2)
    del body["spec"]["template"]["spec"]["nodeName"]  # nothing binds these pods
    cluster.api.create("replicasets.apps", body, "default")
    status = wait_for(
        lambda: (
            (s := cluster.get("replicasets.apps", "pending").get("status") or {}).get("replicas") == 2 and s
        ),
        what="status",
    )
    assert status.get("readyReplicas", 0) == 0 and status.get("availableReplicas", 0) == 0


def test_records_successful_create_events(cluster: Cluster) -> None:
    cluster.api.create("replicasets.apps", rs("ev", 2), "default")
    ready_status(cluster, "ev", 2)
    cluster.controllers.ctx.recorder.flush()
    events = [
        e
        for e in cluster.api.list("events", "default")[0]
        if e["involvedObject"].get("name") == "ev" and e["reason"] == "SuccessfulCreate"
    ]
    assert len(events) == 2
    assert all(e["message"].startswith("Created pod: ev-") for e in events)


def test_generated_names_respect_the_length_limit() -> None:
    name = replicaset.generated_name("x" * 80)
    assert len(name) == 63
    assert name.startswith("x" * 58)
