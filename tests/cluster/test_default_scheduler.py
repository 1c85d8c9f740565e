"""The embedded cluster's built-in default-scheduler is berth's own scheduler: a Deployment that names no
scheduler rolls out with the real kubectl, and pods naming another scheduler stay Pending for it."""

from __future__ import annotations

import json
from pathlib import Path

from berth.cluster import Cluster, ClusterOptions

from .conftest import kubectl_for

DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: pause, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: 100m}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: elsewhere, namespace: default}
spec:
  schedulerName: someone-else
  containers: [{name: pause, image: registry.k8s.io/pause:3.10}]
"""


def test_default_scheduler_places_pods_and_leaves_others_pending(tmp_path: Path) -> None:
    opts = ClusterOptions(data_dir=tmp_path / "data", nodes=2, default_scheduler=True)
    cluster = Cluster(opts).start()
    try:
        kubectl = kubectl_for(cluster.kubeconfig, tmp_path / "home")
        kubectl.ok("apply", "-f", "-", input=DEPLOYMENT)
        kubectl.ok("rollout", "status", "deployment/web", "--timeout=60s", timeout=90)
        pods = json.loads(kubectl.ok("get", "pods", "-o", "json"))["items"]
        placed = {p["metadata"]["name"]: p["spec"].get("nodeName") for p in pods}
        web = [n for name, n in placed.items() if name.startswith("web-")]
        assert len(web) == 3 and all(n in ("node-1", "node-2") for n in web)
        assert placed["elsewhere"] is None
        events = kubectl.ok("get", "events", "-o", "json")
        assert "Successfully assigned default/web-" in events
    finally:
        cluster.stop()
