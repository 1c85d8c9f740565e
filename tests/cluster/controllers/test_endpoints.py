"""Services get Endpoints and an EndpointSlice listing the pod IPs they select, split by readiness."""

from __future__ import annotations

from typing import Any

from .conftest import Cluster, pod, wait_for


def service(name: str, selector: dict[str, str] | None, target: Any = 8080) -> dict[str, Any]:
    spec: dict[str, Any] = {"ports": [{"name": "http", "port": 80, "targetPort": target}]}
    if selector is not None:
        spec["selector"] = selector
    return {"metadata": {"name": name, "labels": {"tier": "web"}}, "spec": spec}


def labelled(name: str, node: str | None = "node-1", **labels: str) -> dict[str, Any]:
    p = pod(name, node=node, metadata={"labels": {"app": "web", **labels}})
    p["spec"]["containers"][0]["ports"] = [{"name": "web", "containerPort": 8080}]
    return p


def slice_of(c: Cluster, svc: str) -> Any:
    items = c.api.list(
        "endpointslices.discovery.k8s.io", "default", label_selector=f"kubernetes.io/service-name={svc}"
    )[0]
    return items[0] if items else None


def test_ready_pods_back_the_service(cluster: Cluster) -> None:
    cluster.api.create("pods", labelled("a"), "default")
    cluster.api.create("pods", labelled("b", node="node-2"), "default")
    cluster.api.create("pods", labelled("other", app="db"), "default")
    svc = cluster.api.create("services", service("web", {"app": "web"}), "default")
    ep = wait_for(
        lambda: (
            (e := cluster.get("endpoints", "web"))
            and len((e.get("subsets") or [{}])[0].get("addresses", [])) == 2
            and e
        ),
        what="two ready addresses",
    )
    (subset,) = ep["subsets"]
    assert {a["targetRef"]["name"] for a in subset["addresses"]} == {"a", "b"}
    assert subset["ports"] == [{"port": 8080, "protocol": "TCP", "name": "http"}]
    assert ep["metadata"]["labels"] == {"tier": "web"}
    es = wait_for(lambda: (s := slice_of(cluster, "web")) and len(s["endpoints"]) == 2 and s, what="slice")
    assert es["addressType"] == "IPv4"
    assert es["metadata"]["ownerReferences"][0]["uid"] == svc["metadata"]["uid"]
    assert all(e["conditions"]["ready"] for e in es["endpoints"])
    assert {e["nodeName"] for e in es["endpoints"]} == {"node-1", "node-2"}


def test_named_target_port_and_not_ready_pods(cluster: Cluster) -> None:
    cluster.api.create("pods", labelled("pending", node=None), "default")  # no IP: not listed
    cluster.api.create("pods", labelled("up"), "default")
    cluster.api.create("services", service("named", {"app": "web"}, target="web"), "default")
    ep = wait_for(lambda: (e := cluster.get("endpoints", "named")).get("subsets") and e, what="endpoints")
    assert ep["subsets"][0]["ports"][0]["port"] == 8080
    assert [a["targetRef"]["name"] for a in ep["subsets"][0]["addresses"]] == ["up"]


def test_pod_deletion_and_service_deletion(cluster: Cluster) -> None:
    cluster.api.create("pods", labelled("x"), "default")
    cluster.api.create("services", service("gone", {"app": "web"}), "default")
    wait_for(lambda: cluster.get("endpoints", "gone").get("subsets"), what="endpoints")
    cluster.api.delete("pods", "x", "default")
    wait_for(lambda: not cluster.get("endpoints", "gone").get("subsets"), what="address removed")
    cluster.api.delete("services", "gone", "default")
    wait_for(
        lambda: not cluster.api.list("endpoints", "default", field_selector="metadata.name=gone")[0],
        what="endpoints deleted",
    )
    wait_for(lambda: slice_of(cluster, "gone") is None, what="slice collected")


def test_service_without_selector_is_left_alone(cluster: Cluster) -> None:
    cluster.api.create("services", service("manual", None), "default")
    cluster.api.create("pods", labelled("y"), "default")
    cluster.api.create("services", service("marker", {"app": "web"}), "default")
    wait_for(lambda: cluster.get("endpoints", "marker").get("subsets"), what="marker endpoints")
    assert not cluster.api.list("endpoints", "default", field_selector="metadata.name=manual")[0]
