"""Namespace lifecycle: Active + name label + default ServiceAccount; deletion empties the namespace first."""

from __future__ import annotations

from functools import partial

from .conftest import Cluster, pod, wait_for


def names(c: Cluster, resource: str, ns: str) -> set[str]:
    return {o["metadata"]["name"] for o in c.api.list(resource, ns)[0]}


def test_new_namespace_is_active_labelled_and_has_default_account(cluster: Cluster) -> None:
    cluster.api.create("namespaces", {"metadata": {"name": "team-a"}})
    sa = wait_for(lambda: cluster.get("serviceaccounts", "default", "team-a"), what="default ServiceAccount")
    assert sa["metadata"]["namespace"] == "team-a"
    ns = cluster.get("namespaces", "team-a", None)
    assert ns["status"]["phase"] == "Active"
    assert ns["metadata"]["labels"]["kubernetes.io/metadata.name"] == "team-a"


def test_bootstrap_namespaces_get_default_accounts(cluster: Cluster) -> None:
    for ns in ("default", "kube-system", "kube-public", "kube-node-lease"):
        wait_for(partial(cluster.get, "serviceaccounts", "default", ns), what=f"default SA in {ns}")


def test_deleted_default_account_is_recreated(cluster: Cluster) -> None:
    first = wait_for(lambda: cluster.get("serviceaccounts", "default", "default"), what="default SA")
    cluster.api.delete("serviceaccounts", "default", "default")
    again = wait_for(
        lambda: (
            (sa := cluster.get("serviceaccounts", "default", "default"))["metadata"]["uid"]
            != first["metadata"]["uid"]
            and sa
        ),
        what="recreated SA",
    )
    assert again["metadata"]["name"] == "default"


def test_namespace_deletion_removes_contents_then_the_namespace(cluster: Cluster) -> None:
    cluster.api.create("namespaces", {"metadata": {"name": "gone"}})
    wait_for(lambda: cluster.get("serviceaccounts", "default", "gone"), what="default SA")
    cluster.api.create("configmaps", {"metadata": {"name": "cfg"}, "data": {"a": "b"}}, "gone")
    cluster.api.create("pods", pod("p"), "gone")
    cluster.api.create(
        "deployments.apps",
        {
            "metadata": {"name": "web"},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "nginx"}]},
                },
            },
        },
        "gone",
    )
    wait_for(lambda: len(names(cluster, "pods", "gone")) == 3, what="3 pods")
    cluster.api.delete("namespaces", "gone")
    wait_for(lambda: "gone" not in names(cluster, "namespaces", ""), what="namespace removed")
    for resource in ("configmaps", "pods", "deployments.apps", "replicasets.apps", "serviceaccounts"):
        assert not names(cluster, resource, "gone"), resource


def test_object_with_finalizer_holds_the_namespace(cluster: Cluster) -> None:
    cluster.api.create("namespaces", {"metadata": {"name": "held"}})
    cluster.api.create(
        "configmaps", {"metadata": {"name": "sticky", "finalizers": ["example.com/keep"]}, "data": {}}, "held"
    )
    cluster.api.delete("namespaces", "held")
    cm = wait_for(
        lambda: (x := cluster.get("configmaps", "sticky", "held"))["metadata"].get("deletionTimestamp") and x,
        what="configmap terminating",
    )
    ns = cluster.get("namespaces", "held", None)
    assert ns["status"]["phase"] == "Terminating"
    cm["metadata"]["finalizers"] = []
    cluster.api.update("configmaps", cm, "held")
    wait_for(lambda: "held" not in names(cluster, "namespaces", ""), what="namespace removed")
