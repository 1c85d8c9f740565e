"""Waits that cannot succeed fail with the cause the cluster reports, long before their timeout, and leave a
receipt that ``--resume`` continues from once the cause is fixed: a hook Job whose ServiceAccount does not exist
(the Job controller's ``FailedCreate`` events name it), a CRD whose names another CRD holds (``NamesAccepted=False``).
Each run gets a timeout far beyond the cause's grace, so only the fail-fast path can produce the messages checked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from berth.cluster import Cluster
from berth.install import receipt
from berth.install.live_cli import apply_command
from berth.kube import client as kube_client

from .conftest import run_live, setup_workdir

HOOK_JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations:
    helm.sh/hook: pre-install
spec:
  backoffLimit: 0
  template:
    spec:
      serviceAccountName: runner
      restartPolicy: Never
      containers: [{name: main, image: registry.example.com/migrate:1}]
"""


def chart_with_hook(tmp: Path) -> Path:
    root = tmp / "sa-chart"
    (root / "templates").mkdir(parents=True)
    (root / "Chart.yaml").write_text("apiVersion: v2\nname: sa-chart\nversion: 0.1.0\n")
    (root / "templates" / "migrate.yaml").write_text(HOOK_JOB)
    (root / "templates" / "config.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\n"
    )
    return root


def last_receipt(work: Path) -> dict[str, Any]:
    spec: dict[str, Any] = receipt.receipts(work)[-1][1]["spec"]
    return spec


def test_a_hook_job_without_its_service_account_fails_naming_it_then_resumes(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, tmp_path: Path
) -> None:
    work = setup_workdir(tmp_path, chart_with_hook(tmp_path), "sa")
    args = ["--work-dir", work, "--kubeconfig", cluster.kubeconfig, "--timeout", "5m"]
    res = run_live(capsys, apply_command, *args)
    assert res.code == 1
    assert "pre-install hook Job sa/migrate failed" in res.err
    assert "Job sa/migrate cannot succeed: FailedCreate: " in res.err
    assert 'error looking up service account sa/runner: serviceaccount "runner" not found' in res.err
    assert "Fix: create the ServiceAccount sa/runner (kubectl create serviceaccount runner -n sa)" in res.err
    assert "! Warning FailedCreate Job sa/migrate: " in res.out  # shown as it arrived
    assert "--- last events ---" in res.err and "Fix the cause, then continue from step 2" in res.err
    spec = last_receipt(work)
    assert spec["result"] == "failed" and spec["steps"][1]["status"] == "failed"

    api = kube_client.api_client(cluster.kubeconfig)
    from kubernetes import client as k8s

    core: Any = k8s.CoreV1Api(api)
    core.create_namespaced_service_account("sa", {"metadata": {"name": "runner"}})
    api.close()
    res = run_live(capsys, apply_command, *args, "--resume")
    assert res.code == 0, res.err
    spec = last_receipt(work)
    assert spec["result"] == "succeeded" and spec["resumedFrom"]
    assert spec["steps"][0].get("doneBy") == spec["resumedFrom"]  # the namespace step is not run again


CLASH = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgetclaims.edge.example.com"},
    "spec": {
        "group": "edge.example.com",
        "names": {"kind": "Widget", "plural": "widgetclaims", "listKind": "WidgetList"},
        "scope": "Namespaced",
        "versions": [{"name": "v1", "served": True, "storage": True,
                      "schema": {"openAPIV3Schema": {"type": "object"}}}],
    },
}  # fmt: skip


def test_a_crd_names_conflict_fails_with_the_condition_message_then_resumes(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, edge_work: Path
) -> None:
    api = kube_client.api_client(cluster.kubeconfig)
    from kubernetes import client as k8s

    ext: Any = k8s.ApiextensionsV1Api(api)
    ext.create_custom_resource_definition(CLASH)  # another CRD of the group already claims kind Widget
    args = ["--work-dir", edge_work, "--kubeconfig", cluster.kubeconfig, "--timeout", "5m"]
    res = run_live(capsys, apply_command, *args)
    assert res.code == 1
    assert "step 2/" in res.err and "(crds) stopped" in res.err
    assert (
        "CustomResourceDefinition widgets.edge.example.com cannot succeed: CRD widgets.edge.example.com: "
        'NamesAccepted=False (KindConflict): "Widget" is already in use. Fix: another CRD of group '
        "edge.example.com already uses that name"
    ) in res.err
    assert last_receipt(edge_work)["steps"][1]["status"] == "failed"

    ext.delete_custom_resource_definition(CLASH["metadata"]["name"])
    api.close()
    res = run_live(capsys, apply_command, *args, "--resume")
    assert res.code == 0, res.err
    spec = last_receipt(edge_work)
    assert spec["result"] == "succeeded" and spec["resumedFrom"]
    crd_step = spec["steps"][1]["objects"]
    assert {o["name"] for o in crd_step if o["action"] == "established"} >= {"widgets.edge.example.com"}
