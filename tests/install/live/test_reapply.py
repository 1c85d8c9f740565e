"""``berth install apply`` on a work dir whose install already succeeded: the objects again, never the install hooks
(``helm install`` refuses a release name in use); a render set up again since is refused (exit 2) and applied as an
upgrade (``upgrade`` without ``--pull``); after an uninstall, or on a new cluster, it installs again, hooks
included."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from berth import cli
from berth.cluster import Cluster
from berth.install import layout, receipt, workdir
from berth.install import plan as plan_mod
from berth.install.live_cli import apply_command, uninstall_command, upgrade_command
from berth.kube import client as kube_client

from ..conftest import edge_next_chart
from .conftest import Audit, run_live, start_cluster
from .test_apply import fail_job
from .test_lifecycle import exists, installed

SETTINGS = "/api/v1/namespaces/edge/configmaps/app-settings"
ADDED = "/api/v1/namespaces/edge/configmaps/added"
SERVICE = "/api/v1/namespaces/edge/services/app"


def hook_names(work: Path) -> set[str]:
    """Every hook object of the work dir's install and upgrade plans (by name)."""
    wd = workdir.load_workdir(work)
    out: set[str] = set()
    for action in (plan_mod.Action.INSTALL, plan_mod.Action.UPGRADE):
        for step in workdir.build_plan(wd, action, str(work)).steps:
            if step.is_hook:
                out |= {o.name for o in step.objects}
    return out


def hook_writes(writes: list[str], hooks: set[str]) -> list[str]:
    return [w for w in writes if w.split()[-1] in hooks]


def delete(cluster: Cluster, path: str) -> None:
    api = kube_client.api_client(cluster.kubeconfig)
    try:
        m, url, h, b, *_ = api.param_serialize("DELETE", path, auth_settings=["BearerToken"])
        api.call_api(m, url, h, b).read()
    finally:
        api.close()


def last_spec(work: Path) -> dict[str, Any]:
    spec: dict[str, Any] = receipt.receipts(work)[-1][1]["spec"]
    return spec


def test_apply_again_reapplies_the_objects_and_runs_no_hook(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, audit: Audit, edge_work: Path
) -> None:
    installed(capsys, cluster, edge_work)
    first = receipt.receipts(edge_work)[-1][0].stem
    hooks = hook_names(edge_work)
    assert hook_writes(audit.writes(), hooks)  # the install ran them
    delete(cluster, SETTINGS)  # drift: status would say missing
    args = ["--work-dir", edge_work, "--kubeconfig", cluster.kubeconfig]

    start = len(audit.writes())
    res = run_live(capsys, apply_command, *args, "--dry-run")
    assert res.code == 0, res.err
    assert f"Release edge-hooks is installed on context berth (run {first})" in res.out
    assert "would re-apply its objects and run no hooks; its install hooks ran at install time" in res.out
    assert not hook_writes(audit.writes()[start:], hooks)
    assert not exists(cluster, SETTINGS)

    res = run_live(capsys, apply_command, *args)
    assert res.code == 0, res.err
    assert "re-applying its objects and running no hooks; its install hooks ran at install time" in res.out
    assert f"berth install upgrade --work-dir {edge_work}" in res.out
    assert f"berth install test --work-dir {edge_work}" in res.out
    writes = audit.writes()[start:]
    assert not hook_writes(writes, hooks), writes
    assert "patch configmaps app-settings" in writes and exists(cluster, SETTINGS)
    spec = last_spec(edge_work)
    assert spec["action"] == "install" and spec["result"] == "succeeded"
    assert [s["phase"] for s in spec["steps"]] == [
        "namespace",
        "crds",
        "apply",
        "secrets",
        "apply",
        "readiness",
    ]
    assert spec[receipt.DIGEST_FIELD] == layout.render_digest(edge_work / "out")
    # The install hooks are not offered as "not run" steps of another command.
    assert "pre-install" not in res.out.split("Receipt:")[1]
    # The generated install script cannot see receipts: generating it says so.
    capsys.readouterr()
    assert (
        cli.main(["install", "script", "--work-dir", str(edge_work), "--out", str(edge_work / "i.sh")]) == 0
    )
    err = capsys.readouterr().err
    newest = receipt.receipts(edge_work)[-1][0].stem  # the re-applying run deployed it last
    assert f"records release edge-hooks installed on context berth (run {newest})" in err
    assert "this script installs it as new, running the install hooks again" in err


def test_a_render_set_up_again_is_refused_and_upgrade_without_pull_applies_it(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, audit: Audit, edge_work: Path, tmp_path: Path
) -> None:
    installed(capsys, cluster, edge_work)
    code = cli.main(
        ["install", "setup", "--pull", str(edge_next_chart(tmp_path)), "--namespace", "edge",
         "--work-dir", str(edge_work), "--non-interactive"]
    )  # fmt: skip
    assert code == 0
    args = ["--work-dir", edge_work, "--kubeconfig", cluster.kubeconfig]
    start = len(audit.writes())
    for extra in ((), ("--dry-run",)):
        res = run_live(capsys, apply_command, *args, *extra)
        assert res.code == 2
        assert "release edge-hooks is installed on context berth (run " in res.err
        assert "from the render recorded as revision 1 (edge-hooks 0.3.0)" in res.err
        assert "run the install hooks a second time" in res.err
        assert f"Apply the change as an upgrade: berth install upgrade --work-dir {edge_work}" in res.err
    assert audit.writes()[start:] == []

    res = run_live(capsys, upgrade_command, *args)  # no --pull: the render set up now
    assert res.code == 0, res.err
    assert "Changes to release objects since revision 1 (edge-hooks 0.3.0):" in res.out
    assert "  + ConfigMap edge/added" in res.out
    assert exists(cluster, ADDED) and not exists(cluster, SERVICE)
    writes = audit.writes()[start:]
    assert "patch jobs.batch upgrade-check" in writes and "delete services app" in writes
    assert last_spec(edge_work)[receipt.VARIANT_FIELD] == "upgrade"

    # Installed now from this render (as upgraded): apply re-applies the upgrade plan's objects, no hook.
    hooks = hook_names(edge_work)
    start = len(audit.writes())
    res = run_live(capsys, apply_command, *args)
    assert res.code == 0, res.err
    assert "re-applying its objects and running no hooks" in res.out
    assert (
        "Not run by this command: the pre-upgrade and post-upgrade steps; run them with: berth install upgrade"
        in res.out
    )
    assert not hook_writes(audit.writes()[start:], hooks)
    assert last_spec(edge_work)[receipt.VARIANT_FIELD] == "upgrade"


def test_after_an_uninstall_or_a_failed_install_apply_installs_with_hooks(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, audit: Audit, edge_work: Path
) -> None:
    args = ["--work-dir", edge_work, "--kubeconfig", cluster.kubeconfig]
    fail_job(edge_work, "lifecycle/post-install/job-edge-config-deployer.yaml", True)
    assert run_live(capsys, apply_command, *args).code == 1  # every step but the last done: not installed
    fail_job(edge_work, "lifecycle/post-install/job-edge-config-deployer.yaml", False)
    for _ in range(2):
        start = len(audit.writes())
        res = run_live(capsys, apply_command, *args)
        assert res.code == 0, res.err
        assert "is installed on context" not in res.out
        assert "patch jobs.batch migrate" in audit.writes()[start:]
        assert run_live(capsys, uninstall_command, *args).code == 0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_new_cluster_under_the_same_context_and_server_gets_a_fresh_install(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, edge_work: Path
) -> None:
    port = free_port()
    first = start_cluster(tmp_path / "one", port)
    try:
        installed(capsys, first, edge_work)
    finally:
        first.stop()
    second = start_cluster(tmp_path / "two", port)
    try:
        assert urlparse(last_spec(edge_work)["server"]).port == port
        res = run_live(capsys, apply_command, "--work-dir", edge_work, "--kubeconfig", second.kubeconfig)
        assert res.code == 0, res.err
        assert "none of the objects that run recorded is on the cluster with its uid" in res.out
        assert "installing it, hooks included" in res.out
        pre = next(s for s in last_spec(edge_work)["steps"] if s["phase"] == "pre-install")
        assert "succeeded" in [o["action"] for o in pre["objects"]]
    finally:
        second.stop()


def test_the_release_in_another_namespace_is_another_release(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, audit: Audit, edge_work: Path
) -> None:
    """A Helm release is its name and namespace: set up again into another namespace, apply installs it there,
    hooks included, rather than re-applying the objects of the release in ``edge``."""
    installed(capsys, cluster, edge_work)
    code = cli.main(
        ["install", "setup", "--pull", str(edge_work / "package"), "--namespace", "edge-two",
         "--work-dir", str(edge_work), "--non-interactive"]
    )  # fmt: skip
    assert code == 0
    start = len(audit.writes(records=True))
    args = ["--work-dir", edge_work, "--kubeconfig", cluster.kubeconfig]
    res = run_live(capsys, apply_command, *args)
    # The chart's cluster-scoped objects belong to the release in edge: Helm's ownership check refuses them.
    assert res.code == 2
    assert "it belongs to release edge-hooks in namespace edge" in res.err
    assert audit.writes(records=True)[start:] == []
    res = run_live(capsys, apply_command, *args, "--take-ownership")
    assert res.code == 0, res.err
    assert "is installed on context" not in res.out
    assert "create namespaces edge-two" in audit.writes(records=True)[start:]
    assert "patch jobs.batch migrate" in audit.writes(records=True)[start:]
