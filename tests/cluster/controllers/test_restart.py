"""Controllers resume on a restarted cluster (same data directory): no duplicate nodes or pods, work continues."""

from __future__ import annotations

from pathlib import Path

from berth.cluster import Cluster, ClusterOptions

from .conftest import wait_for


def test_restart_keeps_nodes_and_pods_and_finishes_pending_work(tmp_path: Path) -> None:
    labels = {"app": "web"}
    deploy = {
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }
    with Cluster(ClusterOptions(data_dir=tmp_path, nodes=2)) as c:
        assert c.api is not None
        api = c.api
        api.create("deployments.apps", deploy, "default")
        wait_for(
            lambda: (
                api.get("deployments.apps", "web", "default").get("status", {}).get("availableReplicas") == 2
            ),
            what="deployment available",
        )
        nodes_before = {n["metadata"]["uid"] for n in api.list("nodes")[0]}
        pods_before = {p["metadata"]["uid"] for p in api.list("pods", "default")[0]}
    with Cluster(ClusterOptions(data_dir=tmp_path, nodes=2, controller_overrides={"job_duration": 0.0})) as c:
        assert c.api is not None
        api = c.api
        api.create(
            "jobs.batch",
            {
                "metadata": {"name": "after-restart"},
                "spec": {
                    "template": {
                        "spec": {
                            "nodeName": "node-2",
                            "restartPolicy": "Never",
                            "containers": [{"name": "c", "image": "busybox"}],
                        }
                    }
                },
            },
            "default",
        )
        wait_for(
            lambda: any(
                c["type"] == "Complete"
                for c in api.get("jobs.batch", "after-restart", "default")
                .get("status", {})
                .get("conditions", [])
            ),
            what="job completes after restart",
        )
        assert {n["metadata"]["uid"] for n in api.list("nodes")[0]} == nodes_before
        web_pods = api.list("pods", "default", label_selector="app=web")[0]
        assert {p["metadata"]["uid"] for p in web_pods} <= pods_before
        assert len(web_pods) == 2
        assert all(p["status"]["phase"] == "Running" for p in web_pods)
        ips = [
            p["status"]["podIP"] for p in api.list("pods", "default")[0] if p["spec"]["nodeName"] == "node-1"
        ]
        assert len(ips) == len(set(ips))
