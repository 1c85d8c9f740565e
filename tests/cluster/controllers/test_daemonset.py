"""DaemonSets: one bound pod per fitting node, node churn, taints/selectors, rolling updates, status."""

from __future__ import annotations

from typing import Any

import pytest

from berth.cluster.controllers import daemonset

from .conftest import Cluster, template, wait_for


def ds(name: str, **pod_spec: Any) -> dict[str, Any]:
    labels = {"app": name}
    t = template(labels, node=None)
    t["spec"].update(pod_spec)
    return {"metadata": {"name": name}, "spec": {"selector": {"matchLabels": labels}, "template": t}}


def done(c: Cluster, name: str, desired: int) -> Any:
    def check() -> Any:
        x = c.get("daemonsets.apps", name)
        st = x.get("status") or {}
        return (
            st.get("observedGeneration") == x["metadata"]["generation"]
            and st.get("desiredNumberScheduled") == desired
            and st.get("updatedNumberScheduled", 0) == desired
            and st.get("numberAvailable", 0) == desired
            and st.get("numberReady") == desired
            and x
        )

    return wait_for(check, what=f"daemonset {name} at {desired}")


def nodes_of(c: Cluster, selector: str) -> list[str]:
    return sorted(p["spec"]["nodeName"] for p in c.pods(selector=selector))


def test_one_running_pod_per_node_with_status(make_cluster: Any) -> None:
    c = make_cluster(nodes=3)
    c.api.create("daemonsets.apps", ds("agent"), "default")
    d = done(c, "agent", 3)
    assert nodes_of(c, "app=agent") == ["node-1", "node-2", "node-3"]
    st = d["status"]
    assert st["currentNumberScheduled"] == 3 and st["numberMisscheduled"] == 0
    p = c.pods(selector="app=agent")[0]
    assert p["status"]["phase"] == "Running"
    terms = p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    assert terms == [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [p["spec"]["nodeName"]]}]}
    ]
    keys = {(t["key"], t["effect"]) for t in p["spec"]["tolerations"]}
    assert ("node.kubernetes.io/unschedulable", "NoSchedule") in keys
    assert ("node.kubernetes.io/not-ready", "NoExecute") in keys
    assert p["metadata"]["labels"]["controller-revision-hash"]


def test_node_selector_and_taints_limit_the_nodes(make_cluster: Any) -> None:
    c = make_cluster(nodes=3)
    n2 = c.get("nodes", "node-2", None)
    n2["metadata"]["labels"]["gpu"] = "yes"
    n2["spec"]["taints"] = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
    c.api.update("nodes", n2)
    n3 = c.get("nodes", "node-3", None)
    n3["metadata"]["labels"]["gpu"] = "yes"
    c.api.update("nodes", n3)
    c.api.create("daemonsets.apps", ds("gpu-agent", nodeSelector={"gpu": "yes"}), "default")
    done(c, "gpu-agent", 1)
    assert nodes_of(c, "app=gpu-agent") == ["node-3"]
    tolerating = ds(
        "gpu-all", nodeSelector={"gpu": "yes"}, tolerations=[{"key": "dedicated", "operator": "Exists"}]
    )
    c.api.create("daemonsets.apps", tolerating, "default")
    done(c, "gpu-all", 2)
    assert nodes_of(c, "app=gpu-all") == ["node-2", "node-3"]


def test_new_node_gets_a_pod_and_removed_node_loses_it(cluster: Cluster) -> None:
    cluster.api.create("daemonsets.apps", ds("agent"), "default")
    done(cluster, "agent", 2)
    cluster.api.create(
        "nodes", {"metadata": {"name": "node-9", "labels": {"kubernetes.io/hostname": "node-9"}}}
    )
    done(cluster, "agent", 3)
    assert nodes_of(cluster, "app=agent") == ["node-1", "node-2", "node-9"]
    cluster.api.delete("nodes", "node-9")
    done(cluster, "agent", 2)
    wait_for(
        lambda: nodes_of(cluster, "app=agent") == ["node-1", "node-2"], what="pod on removed node deleted"
    )


def test_rolling_update_replaces_every_pod(cluster: Cluster) -> None:
    cluster.api.create("daemonsets.apps", ds("agent"), "default")
    done(cluster, "agent", 2)
    d = cluster.get("daemonsets.apps", "agent")
    d["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.28"
    cluster.api.update("daemonsets.apps", d, "default")
    done(cluster, "agent", 2)
    wait_for(
        lambda: (
            [p["spec"]["containers"][0]["image"] for p in cluster.pods(selector="app=agent")]
            == ["nginx:1.28"] * 2
        ),
        what="pods replaced",
    )


@pytest.mark.parametrize(
    ("pod_spec", "node_spec", "fits"),
    [
        pytest.param({}, {}, True, id="plain"),
        pytest.param({}, {"taints": [{"key": "k", "effect": "NoSchedule"}]}, False, id="untolerated-taint"),
        pytest.param({}, {"taints": [{"key": "k", "effect": "PreferNoSchedule"}]}, True, id="soft-taint"),
        pytest.param({}, {"unschedulable": True}, True, id="cordoned-is-tolerated"),
        pytest.param(
            {"tolerations": [{"key": "k", "operator": "Exists"}]},
            {"taints": [{"key": "k", "effect": "NoExecute"}]},
            True,
            id="tolerated",
        ),
        pytest.param({"nodeSelector": {"a": "b"}}, {}, False, id="selector-miss"),
        pytest.param(
            {
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}]}
                            ]
                        }
                    }
                }
            },
            {},
            True,
            id="affinity-hit",
        ),
    ],
)
def test_fits(pod_spec: dict[str, Any], node_spec: dict[str, Any], fits: bool) -> None:
    node = {"metadata": {"name": "n", "labels": {"zone": "z1"}}, "spec": node_spec}
    assert daemonset.fits(pod_spec, node) is fits
