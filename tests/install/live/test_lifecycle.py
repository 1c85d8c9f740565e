"""Uninstall, upgrade and status against a real embedded cluster, after an install through ``apply``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from berth.cluster import Cluster
from berth.install import plan as plan_mod
from berth.install import receipt, workdir
from berth.install.live_cli import apply_command, status_command, uninstall_command, upgrade_command
from berth.kube import client as kube_client

from ..conftest import edge_next_chart
from .conftest import Audit, run_live
from .test_apply import RESOURCE


def installed(capsys: pytest.CaptureFixture[str], cluster: Cluster, work: Path) -> None:
    res = run_live(capsys, apply_command, "--work-dir", work, "--kubeconfig", cluster.kubeconfig)
    assert res.code == 0, res.err


def exists(cluster: Cluster, path: str) -> bool:
    api = kube_client.api_client(cluster.kubeconfig)
    try:
        m, url, h, b, *_ = api.param_serialize("GET", path, auth_settings=["BearerToken"])
        resp = api.call_api(m, url, h, b)
        resp.read()
        return bool(resp.status == 200)
    finally:
        api.close()


def test_uninstall_runs_helm_order_keeps_keep_objects_and_deletes_crds_last(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, audit: Audit, edge_work: Path
) -> None:
    installed(capsys, cluster, edge_work)
    start = len(audit.writes())
    res = run_live(capsys, uninstall_command, "--work-dir", edge_work, "--kubeconfig", cluster.kubeconfig)
    assert res.code == 0, res.err
    p = workdir.build_plan(workdir.load_workdir(edge_work), plan_mod.Action.UNINSTALL, str(edge_work))
    deletes = next(s for s in p.steps if s.phase == plan_mod.Phase.DELETE.value).objects
    writes = audit.writes()[start:]
    assert writes[0] == "patch jobs.batch drain"  # pre-delete first
    planned = [f"delete {RESOURCE[o.kind]} {o.name}" for o in deletes]
    # Deleting the templated CRD takes its Widget with it: the Widget's own delete then finds nothing (404).
    assert planned[-1] == "delete widgets.edge.example.com default-widget" and planned[-1] not in writes
    assert [w for w in writes if w.startswith("delete ")][: len(planned) - 1] == planned[:-1]
    assert writes[-2:] == [
        "patch jobs.batch cleanup",
        "delete jobs.batch cleanup",
    ]  # post-delete, hook-succeeded
    assert "Left in place: Thing edge/default-thing (helm.sh/resource-policy: keep)" in res.out
    assert "Left in place: CustomResourceDefinition things.edge.example.com (crds/ folder CRD" in res.out
    assert exists(cluster, "/apis/edge.example.com/v1/namespaces/edge/things/default-thing")
    assert not exists(
        cluster, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.edge.example.com"
    )
    assert exists(cluster, "/api/v1/namespaces/edge")  # the release namespace outlives post-delete


def test_uninstall_delete_crds(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, audit: Audit, edge_work: Path
) -> None:
    installed(capsys, cluster, edge_work)
    args = ["--work-dir", edge_work, "--kubeconfig", cluster.kubeconfig, "--delete-crds"]
    res = run_live(capsys, uninstall_command, *args)
    assert res.code == 0, res.err
    writes = audit.writes()
    crd = "delete customresourcedefinitions.apiextensions.k8s.io things.edge.example.com"
    assert writes[-1] == crd and writes.index("patch jobs.batch cleanup") < writes.index(crd)
    assert "things.edge.example.com (crds/" not in res.out
    assert not exists(
        cluster, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/things.edge.example.com"
    )


def test_upgrade_rerenders_diffs_prunes_and_runs_upgrade_hooks(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, audit: Audit, edge_work: Path, tmp_path: Path
) -> None:
    installed(capsys, cluster, edge_work)
    start = len(audit.writes())
    args = ["--work-dir", edge_work, "--kubeconfig", cluster.kubeconfig, "--pull", edge_next_chart(tmp_path)]
    res = run_live(capsys, upgrade_command, *args)
    assert res.code == 0, res.err
    assert "  - Service edge/app" in res.out and "  ~ ConfigMap edge/app-settings" in res.out
    assert "+  next: 'yes'" in res.out or '+  next: "yes"' in res.out, res.out
    writes = audit.writes()[start:]
    order = [
        writes.index("patch jobs.batch upgrade-check"),  # pre-upgrade
        writes.index("patch configmaps app-settings"),  # apply
        writes.index("delete services app"),  # prune
        writes.index("patch jobs.batch config-deployer"),  # post-upgrade
    ]
    assert order == sorted(order)
    # The prune the live command ran is the upgrade plan's own step (the one a script runs too).
    wd = workdir.load_workdir(edge_work)
    p = workdir.build_plan(wd, plan_mod.Action.UPGRADE, str(edge_work), wait=True)
    phases = [s.phase for s in p.steps]
    assert phases.index("prune") == phases.index("readiness") - 1  # Helm: delete inside Update, then wait
    assert [o.file for o in next(s for s in p.steps if s.phase == "prune").objects] == [
        "revisions/1/manifests/service-edge-app.yaml"
    ]
    assert not [w for w in writes if "things.edge.example.com default-thing" in w]  # install-only: untouched
    assert not exists(cluster, "/api/v1/namespaces/edge/services/app")
    actions = [b["spec"]["action"] for _, b in receipt.receipts(edge_work)]
    assert actions == ["install", "upgrade"]  # the install receipt survived the re-render
    res = run_live(capsys, status_command, "--work-dir", edge_work, "--kubeconfig", cluster.kubeconfig)
    assert res.code == 0, res.out + res.err


def test_status_reports_missing_drifted_and_extra(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, edge_work: Path
) -> None:
    args = ["--work-dir", edge_work, "--kubeconfig", cluster.kubeconfig]
    res = run_live(capsys, status_command, *args)
    assert res.code == 1 and "missing  Deployment edge/app" in res.out
    installed(capsys, cluster, edge_work)
    res = run_live(capsys, status_command, *args)
    assert res.code == 0, res.out
    assert "In sync." in res.out
    from kubernetes import client as k8s

    api = kube_client.api_client(cluster.kubeconfig)
    core: Any = k8s.CoreV1Api(api)
    core.patch_namespaced_config_map("app-settings", "edge", {"data": {"greeting": "changed"}})
    core.delete_namespaced_service("app", "edge")
    core.create_namespaced_config_map("edge", {"metadata": {"name": "not-mine"}})
    api.close()
    res = run_live(capsys, status_command, *args)
    assert res.code == 1
    assert "drifted  ConfigMap edge/app-settings: .data.greeting" in res.out
    assert "missing  Service edge/app" in res.out
    assert "not-mine" not in res.out  # never applied by berth: not "extra"
    res = run_live(capsys, status_command, *args, "-o", "json")
    assert '"inSync": false' in res.out


def test_failed_pre_delete_hook_aborts_uninstall(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, audit: Audit, edge_work: Path
) -> None:
    installed(capsys, cluster, edge_work)
    from .test_apply import fail_job

    fail_job(edge_work, "lifecycle/pre-delete/job-edge-drain.yaml", True)
    start = len(audit.writes())
    res = run_live(capsys, uninstall_command, "--work-dir", edge_work, "--kubeconfig", cluster.kubeconfig)
    assert res.code == 1 and "pre-delete hook Job edge/drain failed" in res.err
    # Helm aborts the uninstall: nothing but the hook itself (hook-failed deletes it) was touched.
    assert audit.writes()[start:] == ["patch jobs.batch drain", "delete jobs.batch drain"]
    assert exists(cluster, "/apis/apps/v1/namespaces/edge/deployments/app")


def test_upgrade_resume_keeps_the_prune_list(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, edge_work: Path, tmp_path: Path
) -> None:
    from .test_apply import fail_job

    installed(capsys, cluster, edge_work)
    chart = edge_next_chart(tmp_path)
    hooks = chart / "templates" / "hooks-pre.yaml"
    marker = "    helm.sh/hook: pre-upgrade\n"
    hooks.write_text(
        hooks.read_text().replace(marker, marker + '    berth.dev/simulate-failure: "true"\n'),
        encoding="utf-8",
    )
    args = ["--work-dir", edge_work, "--kubeconfig", cluster.kubeconfig, "--timeout", "120s"]
    res = run_live(capsys, upgrade_command, *args, "--pull", chart)
    assert res.code == 1 and "pre-upgrade hook Job edge/upgrade-check failed" in res.err
    assert "berth install upgrade --work-dir" in res.err and "--resume" in res.err
    assert exists(cluster, "/api/v1/namespaces/edge/services/app")  # nothing pruned before the hooks passed
    rendered = next((edge_work / "out").rglob("job-edge-upgrade-check.yaml"))
    fail_job(edge_work, str(rendered.relative_to(edge_work / "out")), False)
    res = run_live(capsys, upgrade_command, *args, "--resume")
    assert res.code == 0, res.err
    assert not exists(cluster, "/api/v1/namespaces/edge/services/app")
    spec = receipt.receipts(edge_work)[-1][1]["spec"]
    prune = next(s for s in spec["steps"] if s["phase"] == "prune")
    assert spec["result"] == "succeeded" and [o["name"] for o in prune["objects"]] == ["app"]


def test_status_after_setup_again_compares_the_deployed_revision_and_names_the_pending_upgrade(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, edge_work: Path, tmp_path: Path
) -> None:
    from berth.install import apply, upgrade

    installed(capsys, cluster, edge_work)
    upgrade.rerender(
        edge_work, upgrade.UpgradeSource(str(edge_next_chart(tmp_path))), "edge", apply.Reporter(quiet=True)
    )
    res = run_live(capsys, status_command, "--work-dir", edge_work, "--kubeconfig", cluster.kubeconfig)
    assert res.code == 1
    # The release runs revision 1 unchanged: nothing missing, drifted or extra; the new render is pending.
    assert "installed from revision 1 (edge-hooks 0.3.0)" in res.out
    assert "missing" not in res.out and "drifted" not in res.out and "extra" not in res.out
    assert "pending  - Service edge/app" in res.out and "pending  ~ ConfigMap edge/app-settings" in res.out
    assert f"next: berth install upgrade --work-dir {edge_work}: upgrades the release" in res.out


def test_upgrade_never_prunes_an_object_whose_live_copy_says_keep(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, edge_work: Path, tmp_path: Path
) -> None:
    from kubernetes import client as k8s

    installed(capsys, cluster, edge_work)
    api = kube_client.api_client(cluster.kubeconfig)
    core: Any = k8s.CoreV1Api(api)
    core.patch_namespaced_service(
        "app", "edge", {"metadata": {"annotations": {"helm.sh/resource-policy": "keep"}}}
    )
    api.close()
    args = ["--work-dir", edge_work, "--kubeconfig", cluster.kubeconfig, "--pull", edge_next_chart(tmp_path)]
    res = run_live(capsys, upgrade_command, *args)
    assert res.code == 0, res.err
    assert "= Service edge/app kept (its live copy has helm.sh/resource-policy: keep)" in res.out
    assert exists(cluster, "/api/v1/namespaces/edge/services/app")
    prune = next(s for s in receipt.receipts(edge_work)[-1][1]["spec"]["steps"] if s["phase"] == "prune")
    assert [(o["name"], o["action"]) for o in prune["objects"]] == [("app", "kept")]
