"""Simulated nodes: created Ready with capacity, labels, addresses and nodeInfo; heartbeats via Leases."""

from __future__ import annotations

from collections.abc import Callable

from berth.cluster import controllers
from berth.cluster.controllers import nodes

from .conftest import Cluster, condition, wait_for


def test_nodes_are_created_ready_with_capacity_and_labels(make_cluster: Callable[..., Cluster]) -> None:
    c = make_cluster(nodes=3, node_cpu="4", node_memory="16Gi", node_pods="50", node_labels={"zone": "a"})
    items, _ = c.api.list("nodes")
    assert [n["metadata"]["name"] for n in items] == ["node-1", "node-2", "node-3"]
    n = c.get("nodes", "node-2", None)
    assert n["status"]["capacity"]["cpu"] == "4"
    assert n["status"]["allocatable"] == n["status"]["capacity"]
    assert {"memory": "16Gi", "pods": "50", "ephemeral-storage": "100Gi"}.items() <= n["status"][
        "capacity"
    ].items()
    labels = n["metadata"]["labels"]
    assert labels["kubernetes.io/hostname"] == "node-2"
    assert labels["kubernetes.io/os"] == "linux"
    assert labels["kubernetes.io/arch"] == "amd64"
    assert labels["zone"] == "a"
    ready = condition(n, "Ready")
    assert ready is not None and ready["status"] == "True" and ready["reason"] == "KubeletReady"
    assert condition(n, "MemoryPressure")["status"] == "False"  # type: ignore[index]
    assert n["status"]["nodeInfo"]["kubeletVersion"] == "v1.35.0"
    addresses = {a["type"]: a["address"] for a in n["status"]["addresses"]}
    assert addresses["Hostname"] == "node-2"
    assert addresses["InternalIP"].startswith("10.0.")
    assert n["spec"]["podCIDR"] == "10.244.2.0/24"


def test_internal_ips_are_distinct() -> None:
    ips = {nodes.internal_ip(i) for i in range(1, 600)}
    assert len(ips) == 599
    assert all(not ip.endswith((".0", ".255")) for ip in ips)


def test_each_node_gets_a_lease_that_is_renewed(make_cluster: Callable[..., Cluster]) -> None:
    c = make_cluster(nodes=1, heartbeat_interval=0.05)
    lease = wait_for(lambda: c.get("leases.coordination.k8s.io", "node-1", "kube-node-lease"), what="lease")
    assert lease["spec"]["holderIdentity"] == "node-1"
    assert lease["spec"]["leaseDurationSeconds"] == 40
    assert lease["metadata"]["ownerReferences"][0]["kind"] == "Node"
    first = lease["spec"]["renewTime"]
    assert first.endswith("Z") and len(first.split(".")[1]) == 7  # MicroTime: six fraction digits + Z
    wait_for(
        lambda: (
            c.get("leases.coordination.k8s.io", "node-1", "kube-node-lease")["spec"]["renewTime"] != first
        ),
        what="lease renewal",
    )


def test_user_created_node_is_initialised(cluster: Cluster) -> None:
    cluster.api.create("nodes", {"metadata": {"name": "extra", "labels": {"role": "gpu"}}})
    n = wait_for(
        lambda: (node := cluster.get("nodes", "extra", None)).get("status", {}).get("conditions") and node,
        what="initialised node",
    )
    assert condition(n, "Ready")["status"] == "True"  # type: ignore[index]
    assert n["status"]["capacity"]["cpu"] == "8"
    assert n["spec"]["podCIDR"].startswith("10.244.")


def test_node_reporting_not_ready_is_left_alone(cluster: Cluster) -> None:
    n = cluster.get("nodes", "node-1", None)
    for c in n["status"]["conditions"]:
        if c["type"] == "Ready":
            c["status"] = "False"
    cluster.api.update("nodes", n, subresource="status")
    wait_for(lambda: cluster.get("leases.coordination.k8s.io", "node-1", "kube-node-lease"), what="lease")
    assert condition(cluster.get("nodes", "node-1", None), "Ready")["status"] == "False"  # type: ignore[index]


def test_restart_reuses_existing_nodes(cluster: Cluster) -> None:
    before = {n["metadata"]["uid"] for n in cluster.api.list("nodes")[0]}
    cluster.stop()
    again = controllers.start(cluster.api, controllers.ControllerOptions(nodes=3))
    try:
        after = cluster.api.list("nodes")[0]
        assert len(after) == 3
        assert before <= {n["metadata"]["uid"] for n in after}
    finally:
        again.stop()


def test_deleting_a_node_collects_its_lease(cluster: Cluster) -> None:
    wait_for(lambda: cluster.get("leases.coordination.k8s.io", "node-2", "kube-node-lease"), what="lease")
    cluster.api.delete("nodes", "node-2")
    wait_for(
        lambda: (
            not [
                lease
                for lease in cluster.api.list("leases.coordination.k8s.io", "kube-node-lease")[0]
                if lease["metadata"]["name"] == "node-2"
            ]
        ),
        what="lease garbage-collected",
    )


def test_deleting_a_node_deletes_its_pods(cluster: Cluster) -> None:
    for name, node in (("on-2", "node-2"), ("on-1", "node-1")):
        cluster.api.create(
            "pods",
            {
                "metadata": {"name": name},
                "spec": {"nodeName": node, "containers": [{"name": "c", "image": "i"}]},
            },
            "default",
        )
    wait_for(
        lambda: (
            all(p["status"].get("phase") == "Running" for p in cluster.pods()) and len(cluster.pods()) == 2
        ),
        what="running",
    )
    cluster.api.delete("nodes", "node-2")
    wait_for(lambda: [p["metadata"]["name"] for p in cluster.pods()] == ["on-1"], what="orphaned pod deleted")


def test_pod_cidrs_stay_valid_and_distinct_past_255_nodes() -> None:
    import ipaddress

    from berth.cluster.controllers.nodes import pod_cidr_for

    cidrs = [pod_cidr_for(i) for i in range(1, 5001)]
    assert len(set(cidrs)) == len(cidrs)
    assert all(ipaddress.ip_network(c).prefixlen == 24 for c in cidrs)
    assert pod_cidr_for(7) == "10.244.7.0/24"  # small clusters look like kubeadm ones
