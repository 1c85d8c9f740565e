"""Garbage collection by ownerReferences: Background, Foreground and Orphan propagation, dangling references."""

from __future__ import annotations

from typing import Any

from .conftest import Cluster, template, wait_for


def deploy(name: str, replicas: int = 2) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "metadata": {"name": name},
        "spec": {"replicas": replicas, "selector": {"matchLabels": labels}, "template": template(labels)},
    }


def names(c: Cluster, resource: str) -> list[str]:
    return sorted(o["metadata"]["name"] for o in c.api.list(resource, "default")[0])


def ready(c: Cluster, name: str, n: int) -> None:
    wait_for(
        lambda: (
            c.get("deployments.apps", name).get("status", {}).get("availableReplicas") == n
            and len(c.pods(selector=f"app={name}")) == n
        ),
        what=f"{name} ready",
    )


def owner_ref(obj: dict[str, Any], block: bool = False) -> dict[str, Any]:
    return {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "name": obj["metadata"]["name"],
        "uid": obj["metadata"]["uid"],
        "blockOwnerDeletion": block,
    }


def test_background_deletion_removes_replicasets_and_pods(cluster: Cluster) -> None:
    cluster.api.create("deployments.apps", deploy("bg"), "default")
    ready(cluster, "bg", 2)
    cluster.api.delete("deployments.apps", "bg", "default")
    wait_for(
        lambda: not names(cluster, "replicasets.apps") and not cluster.pods(), what="dependents collected"
    )


def test_foreground_deletion_removes_dependents_before_the_owner(cluster: Cluster) -> None:
    cluster.api.create("deployments.apps", deploy("fg"), "default")
    ready(cluster, "fg", 2)
    watch = cluster.api.watch("deployments.apps", "default")
    pods_watch = cluster.api.watch("pods", "default")
    try:
        cluster.api.delete("deployments.apps", "fg", "default", propagation="Foreground")
        d = cluster.get("deployments.apps", "fg")
        assert "foregroundDeletion" in d["metadata"]["finalizers"]
        wait_for(lambda: not names(cluster, "deployments.apps"), what="owner removed")
        assert not cluster.pods() and not names(cluster, "replicasets.apps")
        # the owner's DELETED event comes after every pod's DELETED event
        order: list[tuple[int, str]] = []
        for w, label in ((watch, "deployment"), (pods_watch, "pod")):
            while (ev := w.next_event(0.01)) is not None:
                if ev[0] == "DELETED":
                    order.append((int(ev[1]["metadata"]["resourceVersion"]), label))
        kinds = [label for _, label in sorted(order)]
        assert kinds[-1] == "deployment" and kinds.count("pod") == 2
    finally:
        watch.close()
        pods_watch.close()


def test_orphan_deletion_keeps_dependents_without_the_reference(cluster: Cluster) -> None:
    cluster.api.create("deployments.apps", deploy("or"), "default")
    ready(cluster, "or", 2)
    (rs,) = cluster.api.list("replicasets.apps", "default")[0]
    cluster.api.delete("replicasets.apps", rs["metadata"]["name"], "default", propagation="Orphan")
    cluster.api.delete("deployments.apps", "or", "default", propagation="Orphan")
    wait_for(lambda: not names(cluster, "deployments.apps"), what="deployment removed")
    wait_for(lambda: rs["metadata"]["name"] not in names(cluster, "replicasets.apps"), what="rs removed")
    pods = cluster.pods(selector="app=or")
    assert len(pods) == 2
    assert all(not p["metadata"].get("ownerReferences") for p in pods)


def test_dependent_of_a_missing_owner_is_deleted(cluster: Cluster) -> None:
    cluster.api.create(
        "configmaps",
        {
            "metadata": {
                "name": "dangling",
                "ownerReferences": [
                    {"apiVersion": "v1", "kind": "ConfigMap", "name": "nobody", "uid": "no-such-uid"}
                ],
            }
        },
        "default",
    )
    wait_for(lambda: "dangling" not in names(cluster, "configmaps"), what="dangling dependent collected")


def test_only_the_gone_owner_reference_is_dropped(cluster: Cluster) -> None:
    a = cluster.api.create("configmaps", {"metadata": {"name": "owner-a"}}, "default")
    b = cluster.api.create("configmaps", {"metadata": {"name": "owner-b"}}, "default")
    cluster.api.create(
        "secrets",
        {"metadata": {"name": "shared", "ownerReferences": [owner_ref(a), owner_ref(b)]}},
        "default",
    )
    cluster.api.delete("configmaps", "owner-a", "default")
    s = wait_for(
        lambda: (x := cluster.get("secrets", "shared")) and len(x["metadata"]["ownerReferences"]) == 1 and x,
        what="reference dropped",
    )
    assert s["metadata"]["ownerReferences"][0]["name"] == "owner-b"
    cluster.api.delete("configmaps", "owner-b", "default")
    wait_for(lambda: "shared" not in names(cluster, "secrets"), what="last owner gone")


def test_cluster_scoped_owner_of_namespaced_dependents(cluster: Cluster) -> None:
    owner = cluster.api.create("namespaces", {"metadata": {"name": "owner-ns"}})
    cluster.api.create(
        "configmaps", {"metadata": {"name": "dep", "ownerReferences": [owner_ref(owner)]}}, "default"
    )
    cluster.api.create("configmaps", {"metadata": {"name": "marker"}}, "default")
    wait_for(lambda: cluster.get("serviceaccounts", "default", "owner-ns"), what="namespace set up")
    assert "dep" in names(cluster, "configmaps")
    cluster.api.delete("namespaces", "owner-ns")
    wait_for(lambda: "dep" not in names(cluster, "configmaps"), what="dependent of deleted namespace")


CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                },
            }
        ],
    },
}


def make_widget(cluster: Cluster, name: str) -> Any:
    return wait_for(
        lambda: cluster.api.create(
            "widgets.example.com",
            {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name}},
            "default",
        ),
        what="custom resource",
    )


def test_deleting_a_crd_collects_dependents_of_its_objects(cluster: Cluster) -> None:
    cluster.api.create("customresourcedefinitions.apiextensions.k8s.io", CRD)
    w = make_widget(cluster, "w2")
    cluster.api.create(
        "configmaps", {"metadata": {"name": "of-w2", "ownerReferences": [owner_ref(w)]}}, "default"
    )
    gc = cluster.controllers.get("gc")
    wait_for(lambda: "widgets.example.com" in getattr(gc, "_watched", {}), what="gc watches widgets")
    cluster.api.delete("customresourcedefinitions.apiextensions.k8s.io", "widgets.example.com")
    wait_for(lambda: "of-w2" not in names(cluster, "configmaps"), what="dependent of a deleted CRD's object")


def test_custom_resource_owner(cluster: Cluster) -> None:
    cluster.api.create("customresourcedefinitions.apiextensions.k8s.io", CRD)
    w = make_widget(cluster, "w")
    cluster.api.create(
        "configmaps", {"metadata": {"name": "made-by-widget", "ownerReferences": [owner_ref(w)]}}, "default"
    )
    cluster.api.delete("widgets.example.com", "w", "default")
    wait_for(
        lambda: "made-by-widget" not in names(cluster, "configmaps"), what="dependent of custom resource"
    )


def test_recreated_deployment_adopts_what_an_orphan_delete_left(cluster: Cluster) -> None:
    cluster.api.create("deployments.apps", deploy("ad"), "default")
    ready(cluster, "ad", 2)
    pods_before = {p["metadata"]["uid"] for p in cluster.pods(selector="app=ad")}
    (rs,) = cluster.api.list("replicasets.apps", "default")[0]
    cluster.api.delete("deployments.apps", "ad", "default", propagation="Orphan")
    wait_for(lambda: not names(cluster, "deployments.apps"), what="deployment removed")
    wait_for(
        lambda: (
            not cluster.get("replicasets.apps", rs["metadata"]["name"])["metadata"].get("ownerReferences")
        ),
        what="rs orphaned",
    )
    again = cluster.api.create("deployments.apps", deploy("ad"), "default")
    wait_for(
        lambda: (
            cluster.get("replicasets.apps", rs["metadata"]["name"])["metadata"]
            .get("ownerReferences", [{}])[0]
            .get("uid")
            == again["metadata"]["uid"]
        ),
        what="rs adopted",
    )
    ready(cluster, "ad", 2)
    assert names(cluster, "replicasets.apps") == [rs["metadata"]["name"]]
    assert {p["metadata"]["uid"] for p in cluster.pods(selector="app=ad")} == pods_before


def test_replicaset_adopts_matching_orphan_pods(cluster: Cluster) -> None:
    labels = {"app": "orphan"}
    cluster.api.create(
        "pods",
        {
            "metadata": {"name": "stray", "labels": labels},
            "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "i"}]},
        },
        "default",
    )
    rs = cluster.api.create(
        "replicasets.apps",
        {
            "metadata": {"name": "orphan"},
            "spec": {"replicas": 1, "selector": {"matchLabels": labels}, "template": template(labels)},
        },
        "default",
    )
    wait_for(
        lambda: (
            (cluster.get("pods", "stray")["metadata"].get("ownerReferences") or [{}])[0].get("uid")
            == rs["metadata"]["uid"]
        ),
        what="pod adopted",
    )
    wait_for(
        lambda: cluster.get("replicasets.apps", "orphan").get("status", {}).get("readyReplicas") == 1,
        what="rs ready",
    )
    assert [p["metadata"]["name"] for p in cluster.pods(selector="app=orphan")] == ["stray"]
