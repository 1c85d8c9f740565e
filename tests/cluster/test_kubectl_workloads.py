"""kubectl against the embedded cluster with its simulated nodes and controllers running.

No scheduler is wired in here (berth's own scheduler joins the cluster elsewhere), so a tiny binder thread plays
that part: it binds every pending pod to node-1 through the same ``bindings`` API a scheduler uses.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from berth.cluster import Cluster, ClusterOptions
from berth.cluster.api import ApiError

from .conftest import Kubectl, kubectl_for


def _binder(c: Cluster, stop: threading.Event) -> None:
    assert c.api is not None
    w = c.api.watch("pods")
    while not stop.is_set():
        ev = w.next_event(0.1)
        if ev is None or ev[0] == "DELETED":
            continue
        pod = ev[1]
        if pod["spec"].get("nodeName") or pod["metadata"].get("deletionTimestamp"):
            continue
        binding = {
            "metadata": {"name": pod["metadata"]["name"]},
            "target": {"kind": "Node", "name": "node-1"},
        }
        with contextlib.suppress(ApiError):
            c.api.create("bindings", binding, pod["metadata"]["namespace"], user="test-binder")
    w.close()


@pytest.fixture()
def live(tmp_path: Path) -> Iterator[tuple[Cluster, Kubectl]]:
    c = Cluster(ClusterOptions(data_dir=tmp_path / "data", nodes=1)).start()
    stop = threading.Event()
    t = threading.Thread(target=_binder, args=(c, stop), daemon=True)
    t.start()
    try:
        yield c, kubectl_for(c.kubeconfig, tmp_path / "home")
    finally:
        stop.set()
        t.join(5)
        c.stop()


def test_nodes_are_ready(live: tuple[Cluster, Kubectl]) -> None:
    _c, kubectl = live
    out = kubectl.ok("get", "nodes", "-o", "wide")
    assert "node-1" in out and "Ready" in out


def test_rollout_status_wait_complete_and_cascading_delete(live: tuple[Cluster, Kubectl]) -> None:
    _c, kubectl = live
    kubectl.ok("create", "deployment", "web", "--image=nginx:1.27", "--replicas=2")
    assert "successfully rolled out" in kubectl.ok(
        "rollout", "status", "deployment/web", "--timeout=30s", timeout=60
    )
    pods = json.loads(kubectl.ok("get", "pods", "-l", "app=web", "-o", "json"))["items"]
    assert len(pods) == 2 and {p["status"]["phase"] for p in pods} == {"Running"}
    kubectl.ok("create", "job", "once", "--image=busybox")
    assert "condition met" in kubectl.ok(
        "wait", "--for=condition=complete", "job/once", "--timeout=30s", timeout=60
    )
    assert "berth simulated container" in kubectl.ok("logs", "job/once")
    kubectl.ok("delete", "deployment", "web", timeout=60)
    kubectl.ok("wait", "--for=delete", "pod", "-l", "app=web", "--timeout=30s", timeout=60)
    assert "replicaset" not in kubectl.ok("get", "all")


def test_namespace_deletion_removes_contents(live: tuple[Cluster, Kubectl]) -> None:
    _c, kubectl = live
    kubectl.ok("create", "namespace", "team")
    kubectl.ok("create", "configmap", "c", "-n", "team")
    kubectl.ok("delete", "namespace", "team", "--timeout=30s", timeout=60)
    assert kubectl.run("get", "namespace", "team").returncode != 0


def test_debug_adds_an_ephemeral_container_the_kubelet_starts(live: tuple[Cluster, Kubectl]) -> None:
    _c, kubectl = live
    kubectl.ok("run", "app", "--image=nginx:1.27")
    kubectl.ok("wait", "--for=condition=Ready", "pod/app", "--timeout=30s", timeout=60)
    kubectl.ok("debug", "pod/app", "--image=busybox", "--target=app", "--container=dbg", "--profile=general")
    kubectl.ok(
        "wait",
        "--for=jsonpath={.status.ephemeralContainerStatuses[0].state.running.startedAt}",
        "pod/app",
        "--timeout=30s",
        timeout=60,
    )
    pod = json.loads(kubectl.ok("get", "pod", "app", "-o", "json"))
    assert [c["name"] for c in pod["spec"]["ephemeralContainers"]] == ["dbg"]
    assert [c["name"] for c in pod["spec"]["containers"]] == ["app"]
    assert "dbg:" in kubectl.ok("describe", "pod", "app")


def test_logs_of_an_ephemeral_container_and_debug_interactive(live: tuple[Cluster, Kubectl]) -> None:
    _c, kubectl = live
    kubectl.ok("run", "app", "--image=nginx:1.27")
    kubectl.ok("wait", "--for=condition=Ready", "pod/app", "--timeout=30s", timeout=60)
    kubectl.ok("debug", "pod/app", "--image=busybox:1.36", "--container=dbg", "--profile=general")
    kubectl.ok(
        "wait",
        "--for=jsonpath={.status.ephemeralContainerStatuses[0].state.running.startedAt}",
        "pod/app",
        "--timeout=30s",
        timeout=60,
    )
    logs = kubectl.ok("logs", "app", "-c", "dbg")
    assert "berth simulated container 'dbg' (image busybox:1.36) of pod default/app" in logs
    # -i attaches; no container runs, so kubectl falls back to the container's logs, as it does on a real cluster
    # whose attach fails
    interactive = kubectl.run(
        "debug", "pod/app", "-i", "--image=busybox:1.36", "--container=dbg2", "--profile=general", timeout=60
    )
    assert "falling back to streaming logs" in interactive.stderr, interactive.stderr
    assert "berth simulated container 'dbg2' (image busybox:1.36)" in interactive.stdout, interactive.stdout
    unknown = kubectl.run("logs", "app", "-c", "nope")
    assert unknown.returncode != 0 and "container nope is not valid for pod app" in unknown.stderr


def test_exec_attach_port_forward_and_proxy_say_no_container_runs(live: tuple[Cluster, Kubectl]) -> None:
    _c, kubectl = live
    kubectl.ok("run", "app", "--image=nginx:1.27")
    kubectl.ok("wait", "--for=condition=Ready", "pod/app", "--timeout=30s", timeout=60)
    for args in (
        ("exec", "app", "--", "ls"),
        ("port-forward", "app", "18080:80"),
        ("get", "--raw", "/api/v1/namespaces/default/pods/app/proxy/healthz"),
    ):
        proc = kubectl.run(*args, timeout=30)
        assert proc.returncode != 0
        assert "is not served: no container runs in berth's embedded cluster" in proc.stderr, args
    subresources = {
        r["name"] for r in json.loads(kubectl.ok("get", "--raw", "/api/v1"))["resources"] if "/" in r["name"]
    }
    assert {"pods/exec", "pods/attach", "pods/portforward", "pods/proxy"} <= subresources


QUOTA = """\
apiVersion: v1
kind: ResourceQuota
metadata: {name: team}
spec:
  hard: {pods: "2", requests.cpu: "1", limits.memory: 1Gi}
---
apiVersion: v1
kind: LimitRange
metadata: {name: defaults}
spec:
  limits:
  - type: Container
    default: {cpu: 300m, memory: 256Mi}
    defaultRequest: {cpu: 200m, memory: 128Mi}
"""


def test_quota_and_limit_range_shape_what_a_deployment_gets(live: tuple[Cluster, Kubectl]) -> None:
    _c, kubectl = live
    kubectl.ok("apply", "-f", "-", input=QUOTA)
    kubectl.ok("create", "deployment", "web", "--image=nginx:1.27", "--replicas=3")
    # two pods fit the quota, the third is refused: the ReplicaSet says so in an event
    kubectl.ok(
        "wait", "--for=jsonpath={.status.used.pods}=2", "resourcequota/team", "--timeout=30s", timeout=60
    )
    pods = json.loads(kubectl.ok("get", "pods", "-l", "app=web", "-o", "json"))["items"]
    assert len(pods) == 2
    res = pods[0]["spec"]["containers"][0]["resources"]
    assert res == {
        "limits": {"cpu": "300m", "memory": "256Mi"},
        "requests": {"cpu": "200m", "memory": "128Mi"},
    }
    status = json.loads(kubectl.ok("get", "quota", "team", "-o", "json"))["status"]
    assert status["used"] == {"pods": "2", "requests.cpu": "400m", "limits.memory": "512Mi"}
    assert status["hard"] == {"pods": "2", "requests.cpu": "1", "limits.memory": "1Gi"}
    rows = {
        line.split()[0]: line.split()[1:] for line in kubectl.ok("describe", "quota", "team").splitlines()
    }
    assert rows["requests.cpu"] == ["400m", "1"] and rows["pods"] == ["2", "2"]
    events = kubectl.ok("get", "events", "--field-selector", "reason=FailedCreate", "-o", "json")
    messages = [e["message"] for e in json.loads(events)["items"]]
    assert any("exceeded quota: team, requested: pods=1" in m for m in messages), messages
    refused = kubectl.run("run", "extra", "--image=nginx")
    assert refused.returncode != 0 and 'pods "extra" is forbidden: exceeded quota: team' in refused.stderr
    # the ReplicaSet keeps retrying (with a growing delay), so lifting the quota lets it finish
    kubectl.ok("delete", "quota", "team")
    kubectl.ok(
        "wait", "--for=jsonpath={.status.readyReplicas}=3", "deployment/web", "--timeout=30s", timeout=60
    )


JOB_WITH_ACCOUNT = """\
apiVersion: batch/v1
kind: Job
metadata: {name: migrate}
spec:
  backoffLimit: 0
  template:
    spec:
      serviceAccountName: builder
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
"""


def test_a_job_whose_service_account_comes_later_waits_for_it(live: tuple[Cluster, Kubectl]) -> None:
    _c, kubectl = live
    kubectl.ok("apply", "-f", "-", input=JOB_WITH_ACCOUNT)
    events = ""
    for _ in range(200):  # a guard against a hang, not a speed check: the Job controller's first try
        events = kubectl.ok("get", "events", "--field-selector", "reason=FailedCreate")
        if "builder" in events:
            break
        time.sleep(0.05)
    assert 'error looking up service account default/builder: serviceaccount "builder" not found' in events
    kubectl.ok("create", "serviceaccount", "builder")
    kubectl.ok("wait", "--for=condition=complete", "job/migrate", "--timeout=60s", timeout=90)


def test_namespaces_get_the_root_ca_and_pods_the_default_account(live: tuple[Cluster, Kubectl]) -> None:
    c, kubectl = live
    kubectl.ok("create", "namespace", "team")
    kubectl.ok(
        "wait", "--for=create", "configmap/kube-root-ca.crt", "-n", "team", "--timeout=30s", timeout=60
    )
    ca = json.loads(kubectl.ok("get", "configmap", "kube-root-ca.crt", "-n", "team", "-o", "json"))
    assert ca["data"]["ca.crt"].startswith("-----BEGIN CERTIFICATE-----")
    assert ca["data"]["ca.crt"] == (c.data_dir / "pki" / "ca.crt").read_text()
    kubectl.ok("run", "app", "--image=nginx:1.27")
    spec = json.loads(kubectl.ok("get", "pod", "app", "-o", "json"))["spec"]
    assert spec["serviceAccountName"] == spec["serviceAccount"] == "default"
    # a deleted root CA ConfigMap comes back
    kubectl.ok("delete", "configmap", "kube-root-ca.crt", "-n", "team")
    kubectl.ok(
        "wait", "--for=create", "configmap/kube-root-ca.crt", "-n", "team", "--timeout=30s", timeout=60
    )
