"""End to end through HTTP with the real kubectl 1.35: what users wait on works against the simulated cluster.

``rollout status`` (Deployment, StatefulSet, DaemonSet), ``wait --for=condition=complete|failed`` on Jobs (the
failure annotation), and ``delete`` that waits for garbage collection and namespace termination.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from berth.cluster import Cluster, ClusterOptions
from berth.cluster.controllers import SIMULATE_FAILURE_ANNOTATION
from berth.kube import tools


@pytest.fixture(scope="module")
def kube(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Cluster, Path]]:
    data = tmp_path_factory.mktemp("cluster")
    with Cluster(ClusterOptions(data_dir=data, nodes=2)) as c:
        yield c, c.kubeconfig


def kubectl(kube: tuple[Cluster, Path], *args: str, stdin: str | None = None, timeout: int = 120) -> str:
    exe = tools.find("kubectl").path
    proc = subprocess.run(
        [str(exe), "--kubeconfig", str(kube[1]), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert proc.returncode == 0, (
        f"kubectl {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    )
    return proc.stdout


def apply(kube: tuple[Cluster, Path], manifest: str, ns: str) -> None:
    kubectl(kube, "apply", "-n", ns, "-f", "-", stdin=manifest)


def make_ns(kube: tuple[Cluster, Path], ns: str) -> str:
    kubectl(kube, "create", "namespace", ns)
    return ns


def bound_pod_spec(node: str = "node-1") -> str:
    return f"""
      nodeName: {node}
      containers:
      - name: main
        image: nginx:1.27
"""


def test_rollout_status_completes_for_deployment_and_update(kube: tuple[Cluster, Path]) -> None:
    ns = make_ns(kube, "e2e-deploy")
    manifest = """
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web}}
spec:
  replicas: 3
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:{spec}"""
    apply(kube, manifest.format(spec=bound_pod_spec()), ns)
    out = kubectl(kube, "rollout", "status", "-n", ns, "deployment/web", "--timeout=60s")
    assert 'deployment "web" successfully rolled out' in out
    kubectl(kube, "set", "image", "-n", ns, "deployment/web", "main=nginx:1.28")
    out = kubectl(kube, "rollout", "status", "-n", ns, "deployment/web", "--timeout=60s")
    assert "successfully rolled out" in out
    images = kubectl(
        kube, "get", "pods", "-n", ns, "-o", "jsonpath={.items[*].spec.containers[0].image}"
    ).split()
    assert images == ["nginx:1.28"] * 3


def test_rollout_status_for_statefulset_and_daemonset(kube: tuple[Cluster, Path]) -> None:
    ns = make_ns(kube, "e2e-sets")
    apply(
        kube,
        f"""
apiVersion: apps/v1
kind: StatefulSet
metadata: {{name: db}}
spec:
  replicas: 2
  serviceName: db
  selector: {{matchLabels: {{app: db}}}}
  template:
    metadata: {{labels: {{app: db}}}}
    spec:{bound_pod_spec()}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {{name: agent}}
spec:
  selector: {{matchLabels: {{app: agent}}}}
  template:
    metadata: {{labels: {{app: agent}}}}
    spec:
      containers:
      - name: main
        image: fluent-bit:3
""",
        ns,
    )
    # with the defaulted partition (0) kubectl 1.35 reports "partitioned roll out complete: 2 new pods ..."
    assert "roll out complete: 2 new pods" in kubectl(
        kube, "rollout", "status", "-n", ns, "statefulset/db", "--timeout=60s"
    )
    assert "successfully rolled out" in kubectl(
        kube, "rollout", "status", "-n", ns, "daemonset/agent", "--timeout=60s"
    )


@pytest.mark.parametrize(
    ("annotation", "condition"),
    [pytest.param("", "complete", id="completes"), pytest.param("true", "failed", id="fails-on-annotation")],
)
def test_kubectl_wait_for_job_condition(kube: tuple[Cluster, Path], annotation: str, condition: str) -> None:
    ns = make_ns(kube, f"e2e-job-{condition}")
    annotations = (
        f"annotations: {{{SIMULATE_FAILURE_ANNOTATION}: '{annotation}'}}" if annotation else "annotations: {}"
    )
    apply(
        kube,
        f"""
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  {annotations}
spec:
  backoffLimit: 1
  template:
    spec:
      restartPolicy: Never{bound_pod_spec()}""",
        ns,
    )
    out = kubectl(kube, "wait", "-n", ns, f"--for=condition={condition}", "job/migrate", "--timeout=60s")
    assert "condition met" in out


def test_delete_waits_for_garbage_collection_and_namespace_termination(kube: tuple[Cluster, Path]) -> None:
    ns = make_ns(kube, "e2e-delete")
    apply(
        kube,
        f"""
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:{bound_pod_spec("node-2")}""",
        ns,
    )
    kubectl(kube, "rollout", "status", "-n", ns, "deployment/web", "--timeout=60s")
    kubectl(kube, "delete", "-n", ns, "deployment/web", "--cascade=foreground", "--timeout=60s")
    assert kubectl(kube, "get", "pods,rs", "-n", ns, "-o", "name").strip() == ""
    kubectl(kube, "delete", "namespace", ns, "--timeout=60s")
    assert ns not in kubectl(kube, "get", "namespaces", "-o", "name")


def test_nodes_are_ready_for_kubectl(kube: tuple[Cluster, Path]) -> None:
    out = kubectl(
        kube,
        "get",
        "nodes",
        "-o",
        "jsonpath={range .items[*]}{.metadata.name}={.status.conditions[?(@.type=='Ready')].status} {end}",
    )
    assert out.split() == ["node-1=True", "node-2=True"]
    kubectl(kube, "wait", "--for=condition=Ready", "node/node-1", "--timeout=60s")
