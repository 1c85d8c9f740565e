"""``berth install apply`` against a real embedded cluster: Helm's order as the audit log records it, hook
failure and resume, CRDs that never become Established, dry runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from berth.cluster import Cluster
from berth.install import plan as plan_mod
from berth.install import receipt, workdir
from berth.install.live_cli import apply_command
from berth.kube import client as kube_client
from berth.kube import yamlio

from .conftest import Audit, run_live

RESOURCE = {
    "Namespace": "namespaces",
    "ConfigMap": "configmaps",
    "ServiceAccount": "serviceaccounts",
    "Secret": "secrets",
    "Service": "services",
    "Role": "roles.rbac.authorization.k8s.io",
    "Job": "jobs.batch",
    "Deployment": "deployments.apps",
    "CustomResourceDefinition": "customresourcedefinitions.apiextensions.k8s.io",
    "ValidatingWebhookConfiguration": "validatingwebhookconfigurations.admissionregistration.k8s.io",
    "Thing": "things.edge.example.com",
    "Widget": "widgets.edge.example.com",
}


def expected_writes(p: plan_mod.Plan) -> list[str]:
    """The writes a first install makes, per the plan (deletions before creation find nothing: not audited)."""
    out: list[str] = []
    for step in p.steps:
        if step.phase == plan_mod.Phase.NAMESPACE.value:
            out += [f"create namespaces {o.name}" for o in step.objects]
        elif step.phase != plan_mod.Phase.READINESS.value:
            out += [f"patch {RESOURCE[o.kind]} {o.name}" for o in step.objects]
            out += [f"delete {RESOURCE[o.kind]} {o.name}" for o in step.delete_after_success]
    return out


def install_plan(work: Path) -> plan_mod.Plan:
    return workdir.build_plan(workdir.load_workdir(work), plan_mod.Action.INSTALL, str(work), wait=True)


def last_receipt(work: Path) -> dict[str, Any]:
    spec: dict[str, Any] = receipt.receipts(work)[-1][1]["spec"]
    return spec


def test_apply_runs_the_plan_in_helm_order(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, audit: Audit, edge_work: Path
) -> None:
    res = run_live(capsys, apply_command, "--work-dir", edge_work, "--kubeconfig", cluster.kubeconfig)
    assert res.code == 0, res.err
    assert audit.writes() == expected_writes(install_plan(edge_work))
    assert "Kube context: berth" in res.out
    assert (
        "Not run by this command: the pre-delete and post-delete steps; run them with: berth install uninstall"
        in res.out
    )
    # one line per command that runs the other hook steps, not one per step; no rollback yet (nothing recorded)
    others = [line for line in res.out.splitlines() if line.startswith("Not run by this command")]
    assert [line.split("berth install ")[1].split()[0] for line in others] == ["uninstall", "upgrade", "test"]
    spec = last_receipt(edge_work)
    assert spec["result"] == "succeeded"
    assert {s["status"] for s in spec["steps"]} == {"done"}
    hooks = next(s for s in spec["steps"] if s["phase"] == "pre-install")
    migrate = [o["action"] for o in hooks["objects"] if o["kind"] == "Job"]
    assert migrate == ["absent", "created", "succeeded", "deleted"]


def fail_job(work: Path, rel: str, fail: bool) -> None:
    path = work / "out" / rel
    body = yamlio.load_file(path)[0].body
    ann = body["metadata"].setdefault("annotations", {})
    if fail:
        ann["berth.dev/simulate-failure"] = "true"
    else:
        ann.pop("berth.dev/simulate-failure", None)
    path.write_text(yamlio.dump(body), encoding="utf-8")


def test_failed_hook_job_stops_with_logs_and_resume_continues(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, audit: Audit, edge_work: Path
) -> None:
    fail_job(edge_work, "lifecycle/pre-install/job-edge-migrate.yaml", True)
    args = ["--work-dir", edge_work, "--kubeconfig", cluster.kubeconfig, "--timeout", "120s"]
    res = run_live(capsys, apply_command, *args)
    assert res.code == 1
    assert "pre-install hook Job edge/migrate failed" in res.err
    assert "--- pod logs ---" in res.err and "[pod/migrate-" in res.err
    assert "Not run: step 4 (apply); step 5 (secrets)" in res.err
    assert "--resume" in res.err
    spec = last_receipt(edge_work)
    assert spec["result"] == "failed"
    statuses = [s["status"] for s in spec["steps"]]
    assert statuses[:3] == ["done", "done", "failed"] and set(statuses[3:]) == {"not-run"}
    pre = spec["steps"][2]["objects"]
    failed = next(o for o in pre if o["action"] == "failed")
    assert failed["name"] == "migrate" and "[pod/migrate-" in failed["logs"]
    # Helm 4 deletes the event's already-succeeded hook-succeeded hooks after a failure, in forward order.
    assert [o["name"] for o in pre if o["action"] == "deleted"] == ["shared-hook-sa", "migrate"]
    assert not [
        w for w in audit.writes() if "deployments.apps" in w
    ]  # no release resource after pre-install fails

    fail_job(edge_work, "lifecycle/pre-install/job-edge-migrate.yaml", False)
    before = len(audit.writes())
    res = run_live(capsys, apply_command, *args, "--resume")
    assert res.code == 0, res.err
    spec = last_receipt(edge_work)
    assert spec["result"] == "succeeded" and spec["resumedFrom"]
    assert [s.get("doneBy") for s in spec["steps"][:2]] == [spec["resumedFrom"]] * 2
    again = audit.writes()[before:]
    assert not [w for w in again if w.startswith(("create namespaces", "patch customresourcedefinitions"))]
    # The CRD hook succeeded and still exists (same uid): not run again. The hooks the failure deleted are.
    assert again[:2] == ["patch serviceaccounts shared-hook-sa", "patch configmaps migrate"]
    assert "delete jobs.batch migrate" in again  # the failed Job is replaced (before-hook-creation)
    assert "patch deployments.apps app" in again


def test_resume_needs_an_unfinished_run(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, edge_work: Path
) -> None:
    args = ["--work-dir", edge_work, "--kubeconfig", cluster.kubeconfig, "--resume"]
    res = run_live(capsys, apply_command, *args)
    assert res.code == 2 and "nothing to resume: no earlier install run" in res.err
    assert run_live(capsys, apply_command, *args[:-1]).code == 0
    res = run_live(capsys, apply_command, *args)
    assert res.code == 2 and "succeeded" in res.err


def test_crd_never_established_times_out_naming_it(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, edge_work: Path
) -> None:
    # Another CRD of the group already claims kind Widget: widgets.edge.example.com keeps NamesAccepted=False.
    clash = {
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
    api = kube_client.api_client(cluster.kubeconfig)
    from kubernetes import client as k8s

    ext: Any = k8s.ApiextensionsV1Api(api)
    ext.create_custom_resource_definition(clash)
    api.close()
    res = run_live(
        capsys, apply_command, "--work-dir", edge_work, "--kubeconfig", cluster.kubeconfig, "--timeout", "1s"
    )
    assert res.code == 1
    assert "CRD widgets.edge.example.com was not Established within 1s" in res.err
    assert "NamesAccepted=False" in res.err
    assert last_receipt(edge_work)["steps"][1]["status"] == "failed"


def test_dry_run_changes_nothing(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, audit: Audit, edge_work: Path
) -> None:
    res = run_live(
        capsys, apply_command, "--work-dir", edge_work, "--kubeconfig", cluster.kubeconfig, "--dry-run"
    )
    assert res.code == 0, res.err
    assert "Dry run:" in res.out
    writes = audit.writes()
    assert writes and all(
        w.startswith("patch ") for w in writes
    )  # dryRun=All patches only: no create, no delete
    api = kube_client.api_client(cluster.kubeconfig)
    from kubernetes import client as k8s

    ext: Any = k8s.ApiextensionsV1Api(api)
    core: Any = k8s.CoreV1Api(api)
    crds = ext.list_custom_resource_definition().items
    namespaces = [n.metadata.name for n in core.list_namespace().items]
    hooks = k8s.AdmissionregistrationV1Api(api).list_validating_webhook_configuration().items
    api.close()
    assert (crds, hooks) == ([], []) and "edge" not in namespaces
    assert last_receipt(edge_work)["result"] == "dry-run"
    assert not (edge_work / receipt.RUNS_DIR / receipt.TARGET_FILE).exists()


def test_hook_timeout_names_the_hook_and_stops(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, edge_work: Path
) -> None:
    path = edge_work / "out" / "lifecycle" / "pre-install" / "job-edge-migrate.yaml"
    body = yamlio.load_file(path)[0].body
    body["spec"]["template"]["spec"]["schedulerName"] = "nobody"  # its pod stays Pending
    path.write_text(yamlio.dump(body), encoding="utf-8")
    res = run_live(
        capsys, apply_command, "--work-dir", edge_work, "--kubeconfig", cluster.kubeconfig, "--timeout", "1s"
    )
    assert res.code == 1
    assert "pre-install hook Job edge/migrate failed" in res.err
    assert "Job edge/migrate was not ready within 1s: active=1" in res.err
    steps = last_receipt(edge_work)["steps"]
    assert steps[2]["status"] == "failed" and steps[3]["status"] == "not-run"


def test_output_log_policy_hook_succeeded_prints_the_logs(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, edge_work: Path
) -> None:
    path = edge_work / "out" / "lifecycle" / "post-install" / "job-edge-config-deployer.yaml"
    body = yamlio.load_file(path)[0].body
    body["metadata"]["annotations"]["helm.sh/hook-output-log-policy"] = "hook-succeeded"
    path.write_text(yamlio.dump(body), encoding="utf-8")
    res = run_live(capsys, apply_command, "--work-dir", edge_work, "--kubeconfig", cluster.kubeconfig)
    assert res.code == 0, res.err
    assert "--- logs of Job edge/config-deployer (hook-output-log-policy: hook-succeeded) ---" in res.out
    assert "[pod/config-deployer-" in res.out
    assert "--- logs of Job edge/migrate" not in res.out  # no policy, no logs
    post = last_receipt(edge_work)["steps"][-1]["objects"]
    assert [o["name"] for o in post if o.get("logs")] == ["config-deployer"]
