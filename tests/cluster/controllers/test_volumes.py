"""Claims get Bound: provisioned volumes, static volumes, WaitForFirstConsumer, reclaim on claim deletion."""

from __future__ import annotations

from typing import Any

from .conftest import Cluster, pod, wait_for


def claim(name: str, size: str = "1Gi", klass: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}}
    if klass is not None:
        spec["storageClassName"] = klass
    return {"metadata": {"name": name}, "spec": spec}


def bound(c: Cluster, name: str) -> Any:
    return wait_for(
        lambda: (x := c.get("persistentvolumeclaims", name))["status"].get("phase") == "Bound" and x,
        what=f"claim {name} Bound",
    )


def test_claim_is_provisioned_and_bound(cluster: Cluster) -> None:
    created = cluster.api.create("persistentvolumeclaims", claim("data", "5Gi"), "default")
    pvc = bound(cluster, "data")
    pv_name = pvc["spec"]["volumeName"]
    assert pv_name == f"pvc-{created['metadata']['uid']}"
    assert pvc["status"]["capacity"] == {"storage": "5Gi"}
    assert pvc["status"]["accessModes"] == ["ReadWriteOnce"]
    pv = cluster.get("persistentvolumes", pv_name, None)
    assert pv["status"]["phase"] == "Bound"
    assert (
        pv["spec"]["claimRef"]["name"] == "data"
        and pv["spec"]["claimRef"]["uid"] == created["metadata"]["uid"]
    )
    cluster.api.delete("persistentvolumeclaims", "data", "default")
    wait_for(lambda: not cluster.api.list("persistentvolumes")[0], what="provisioned volume deleted")


def test_static_volume_is_preferred_when_it_fits(cluster: Cluster) -> None:
    pv = {
        "metadata": {"name": "static-10g"},
        "spec": {
            "capacity": {"storage": "10Gi"},
            "accessModes": ["ReadWriteOnce", "ReadOnlyMany"],
            "storageClassName": "manual",
            "hostPath": {"path": "/data"},
            "persistentVolumeReclaimPolicy": "Retain",
        },
    }
    cluster.api.create("persistentvolumes", pv)
    wait_for(
        lambda: cluster.get("persistentvolumes", "static-10g", None)["status"].get("phase") == "Available",
        what="Available",
    )
    cluster.api.create("persistentvolumeclaims", claim("mine", "2Gi", "manual"), "default")
    assert bound(cluster, "mine")["spec"]["volumeName"] == "static-10g"
    cluster.api.delete("persistentvolumeclaims", "mine", "default")
    wait_for(
        lambda: cluster.get("persistentvolumes", "static-10g", None)["status"]["phase"] == "Released",
        what="Released",
    )


def test_wait_for_first_consumer_binds_once_a_pod_is_on_a_node(cluster: Cluster) -> None:
    cluster.api.create(
        "storageclasses.storage.k8s.io",
        {"metadata": {"name": "local"}, "provisioner": "x", "volumeBindingMode": "WaitForFirstConsumer"},
    )
    cluster.api.create("persistentvolumeclaims", claim("late", klass="local"), "default")
    cluster.api.create("persistentvolumeclaims", claim("marker"), "default")
    bound(cluster, "marker")
    assert cluster.get("persistentvolumeclaims", "late")["status"].get("phase") == "Pending"
    consumer = pod(
        "user",
        node="node-2",
        spec={"volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "late"}}]},
    )
    cluster.api.create("pods", consumer, "default")
    pvc = bound(cluster, "late")
    pv = cluster.get("persistentvolumes", pvc["spec"]["volumeName"], None)
    term = pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]
    assert term["values"] == ["node-2"]
    assert pv["spec"]["storageClassName"] == "local"


def test_statefulset_claims_become_bound(cluster: Cluster) -> None:
    vct = {
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    labels = {"app": "db"}
    cluster.api.create(
        "statefulsets.apps",
        {
            "metadata": {"name": "db"},
            "spec": {
                "replicas": 2,
                "serviceName": "db",
                "selector": {"matchLabels": labels},
                "volumeClaimTemplates": [vct],
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "postgres"}]},
                },
            },
        },
        "default",
    )
    bound(cluster, "data-db-0")
    bound(cluster, "data-db-1")
