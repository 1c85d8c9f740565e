"""Fixtures for the live scheduler: an embedded cluster per test (own data dir, free port), raw API helpers, and a
way to run ``LiveScheduler`` against it with fast retry timings."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from berth.cluster import Cluster, ClusterOptions
from berth.kube import client as kube_client
from berth.schedule import config as config_mod
from berth.schedule.live import api, informers
from berth.schedule.live.run import LiveOptions, LiveScheduler
from berth.schedule.plugins import registry as registry_mod

REPO = Path(__file__).resolve().parents[3]
TWO_PROFILES = REPO / "examples" / "two-profiles"
FAST = LiveOptions(
    backoff=informers.Backoff(initial=0.05, cap=0.5, jitter=0.5), seed=7, metrics_address="127.0.0.1"
)


@dataclass
class Env:
    """One embedded cluster and an admin client for a test."""

    cluster: Cluster
    data_dir: Path
    client: Any

    def call(self, method: str, path: str, body: Any = None, **query: Any) -> dict[str, Any]:
        return api.call(self.client, method, path, list(query.items()), body)

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        return self.call("POST", collection_path(obj), obj)

    def pods(self, namespace: str) -> list[dict[str, Any]]:
        return list(self.call("GET", f"/api/v1/namespaces/{namespace}/pods").get("items") or [])

    def audit(self) -> list[dict[str, Any]]:
        lines = (self.data_dir / "audit.jsonl").read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]

    def bindings(self) -> dict[str, int]:
        """Successful ``create pods/binding`` requests per ``ns/name``, from the audit log."""
        out: dict[str, int] = {}
        for rec in self.audit():
            if (
                rec.get("verb") == "create"
                and rec.get("resource") == "pods"
                and rec.get("subresource") == "binding"
            ) and 200 <= int(rec.get("code") or 0) < 300:
                key = f"{rec.get('namespace')}/{rec.get('name')}"
                out[key] = out.get(key, 0) + 1
        return out

    def bindings_when(self, ready: Callable[[dict[str, int]], bool], timeout: float = 60.0) -> dict[str, int]:
        """``bindings()`` once ``ready`` holds for them (or at the deadline; the caller asserts what they are). The
        cluster writes a request's audit line just after sending its response, so a binding the scheduler (or a
        GET) has already seen can be a moment away from the log on a loaded machine."""
        deadline = time.monotonic() + timeout
        while True:
            got = self.bindings()
            if ready(got) or time.monotonic() > deadline:
                return got
            time.sleep(0.05)

    def scheduler(
        self, config: config_mod.SchedulerConfiguration | None = None, **changes: Any
    ) -> LiveScheduler:
        reg = registry_mod.default_registry()
        cfg = config if config is not None else config_mod.default_config(reg)
        opts = replace(FAST, kubeconfig=str(self.cluster.kubeconfig), **changes)
        return LiveScheduler(cfg, reg, opts)


def collection_path(obj: dict[str, Any]) -> str:
    api_version = str(obj["apiVersion"])
    kind = str(obj["kind"])
    plural = {
        "Deployment": "deployments",
        "Pod": "pods",
        "Namespace": "namespaces",
        "ReplicaSet": "replicasets",
        "ClusterRole": "clusterroles",
        "ClusterRoleBinding": "clusterrolebindings",
        "ServiceAccount": "serviceaccounts",
        "Node": "nodes",
    }[kind]
    base = f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"
    ns = (obj.get("metadata") or {}).get("namespace")
    return f"{base}/namespaces/{ns}/{plural}" if ns else f"{base}/{plural}"


def start_cluster(data_dir: Path, port: int = 0, nodes: int = 4) -> Cluster:
    return Cluster(
        ClusterOptions(data_dir=data_dir, port=port, nodes=nodes, node_cpu="4", node_memory="16Gi")
    ).start()


@pytest.fixture()
def env(tmp_path: Path) -> Iterator[Env]:
    data = tmp_path / "data"
    cluster = start_cluster(data)
    client = kube_client.api_client(cluster.kubeconfig)
    try:
        yield Env(cluster, data, client)
    finally:
        client.close()
        cluster.stop()


def eventually(check: Callable[[], Any], timeout: float = 30.0, what: str = "condition") -> Any:
    """Poll ``check`` until it returns a truthy value (a liveness wait, not a timed assertion)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def pod(
    name: str,
    namespace: str = "default",
    scheduler: str = "default-scheduler",
    cpu: str = "100m",
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
        "spec": {
            "schedulerName": scheduler,
            "containers": [
                {"name": "c", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": {"cpu": cpu}}}
            ],
        },
    }
