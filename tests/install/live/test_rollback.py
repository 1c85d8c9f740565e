"""``berth install rollback`` against a real embedded cluster: install 0.3.0, upgrade to 0.4.0 (``app-settings``
changed, Service ``app`` dropped, ConfigMap ``added`` new), roll back -- the cluster and the work dir are 0.3.0 again,
the rollback hooks ran in Helm's order, the replaced render is a new revision, W/package is the target's package
again (``verify`` passes against the real helm); bad revisions exit 2; resume; revisions recorded without a
package."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from berth.cluster import Cluster
from berth.install import package, receipt, revisions, rollback, swap, verify, workdir
from berth.install import plan as plan_mod
from berth.install.live_cli import rollback_command, status_command, upgrade_command
from berth.kube import client as kube_client
from berth.kube import yamlio
from berth.kube.errors import InputError, ToolError

from ..conftest import EDGE_CHART, edge_next_chart, setup_twice, tree_digest
from .conftest import Audit, run_live
from .test_apply import fail_job
from .test_lifecycle import exists, installed

ADDED = "/api/v1/namespaces/edge/configmaps/added"
SERVICE = "/api/v1/namespaces/edge/services/app"
POST_ROLLBACK_JOB = "revisions/1/lifecycle/post-rollback/job-edge-rollback-check.yaml"


def upgraded(capsys: pytest.CaptureFixture[str], cluster: Cluster, work: Path, tmp: Path) -> None:
    """0.3.0 installed, then upgraded to 0.4.0 (revision 1 records 0.3.0's render)."""
    installed(capsys, cluster, work)
    args = ["--work-dir", work, "--kubeconfig", cluster.kubeconfig, "--pull", edge_next_chart(tmp)]
    res = run_live(capsys, upgrade_command, *args)
    assert res.code == 0, res.err
    assert exists(cluster, ADDED) and not exists(cluster, SERVICE)


def settings(cluster: Cluster) -> dict[str, str]:
    from kubernetes import client as k8s

    api = kube_client.api_client(cluster.kubeconfig)
    try:
        core: Any = k8s.CoreV1Api(api)
        return dict(core.read_namespaced_config_map("app-settings", "edge").data or {})
    finally:
        api.close()


def package_version(work: Path) -> str:
    return package.load(work / "package").version


def verified(work: Path) -> None:
    """``berth install verify``: a fresh render of W/package's chart (the real helm) equals W/out."""
    report = verify.run(work)
    assert report.ok, report.lines()


def rendered_settings(out: Path) -> dict[str, str]:
    body = yamlio.load_file(out / "manifests" / "configmap-edge-app-settings.yaml")[0].body
    return {k: str(v) for k, v in body["data"].items()}


def test_rollback_restores_the_revision_runs_its_hooks_in_order_and_records_a_revision(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, audit: Audit, edge_work: Path, tmp_path: Path
) -> None:
    original = tree_digest(edge_work / "package")
    assert not any("/render/" in f for f in original)  # setup --pull CHART: W/out holds the only render
    upgraded(capsys, cluster, edge_work, tmp_path)
    v1 = rendered_settings(edge_work / "out" / "revisions" / "1")
    assert settings(cluster).get("next") == "yes" and "next" not in v1
    plan = workdir.build_plan(
        workdir.load_workdir(edge_work), plan_mod.Action.ROLLBACK, str(edge_work), wait=True
    )
    args = ["--work-dir", edge_work, "--kubeconfig", cluster.kubeconfig]

    before = tree_digest(edge_work / "out")
    res = run_live(capsys, rollback_command, *args, "--dry-run")
    assert res.code == 0, res.err
    assert "is unchanged (still the current render)" in res.out
    assert {k: v for k, v in tree_digest(edge_work / "out").items() if not k.startswith("runs/")} == {
        k: v for k, v in before.items() if not k.startswith("runs/")
    }
    assert exists(cluster, ADDED) and not exists(cluster, SERVICE)

    start = len(audit.writes())
    res = run_live(capsys, rollback_command, *args)
    assert res.code == 0, res.err
    assert "Rolling back release edge-hooks to revision 1 (edge-hooks 0.3.0)" in res.out
    # The cluster is 0.3.0 again: the dropped Service is back, the 0.4.0-only ConfigMap gone, the change undone.
    assert exists(cluster, SERVICE) and not exists(cluster, ADDED)
    assert settings(cluster) == v1
    # Helm's order (rollback.go): the target's pre-rollback hook, its objects, the prune, its post-rollback Job
    # (deleted after success: hook-succeeded).
    writes = audit.writes()[start:]
    order = [
        writes.index("patch configmaps rollback-marker"),
        writes.index("patch configmaps app-settings"),
        writes.index("patch services app"),
        writes.index("delete configmaps added"),
        writes.index("patch jobs.batch rollback-check"),
        writes.index("delete jobs.batch rollback-check"),
    ]
    assert order == sorted(order), writes
    assert not [w for w in writes if "upgrade-check" in w or "config-deployer" in w]  # no upgrade hooks
    # The receipt records the rollback plan's steps, the target and what the replaced render became.
    spec = receipt.receipts(edge_work)[-1][1]["spec"]
    assert spec["action"] == "rollback" and spec["result"] == "succeeded"
    assert [s["phase"] for s in spec["steps"]] == [s.phase for s in plan.steps]
    assert [s["status"] for s in spec["steps"]] == ["done"] * len(plan.steps)
    assert spec[rollback.TARGET_FIELD] == 1 and spec[rollback.RECORDED_FIELD] == 2
    assert [b["spec"]["action"] for _, b in receipt.receipts(edge_work)] == [
        "install",
        "upgrade",
        "rollback",
        "rollback",
    ]  # the dry run has its receipt too
    # The work dir follows, as upgrade makes it: out/ is revision 1's render, the replaced 0.4.0 render is revision 2.
    out = edge_work / "out"
    assert revisions.numbers(out) == [1, 2]
    assert (out / "revisions/2/manifests/configmap-added.yaml").is_file()
    assert not (out / "manifests/configmap-added.yaml").exists()
    assert (out / "manifests/service-edge-app.yaml").is_file() and rendered_settings(out) == v1
    assert "Recorded the render this replaced as revision 2" in res.out
    assert "now holds the render of revision 1 (edge-hooks 0.3.0)" in res.out
    # W/package is 0.3.0's again (as helm rollback makes the target's chart the release's), so verify re-renders
    # the chart the render came from; the replaced 0.4.0 render is recorded with its package and label.
    assert f"{edge_work / 'package'} now holds the package of revision 1 (edge-hooks 0.3.0)" in res.out
    assert package_version(edge_work) == "0.3.0" and "note:" not in res.out
    # The restored package is byte for byte the one that was pulled (a work dir's own package has no base
    # review renders; a package folder given to setup has them, and gets them back: the "base-renders" case of
    # test_resume_switches_the_work_dir_when_only_the_switch_failed).
    assert tree_digest(edge_work / "package") == original
    assert not (out / revisions.PENDING_PACKAGE).exists()
    assert [p.name for p in edge_work.iterdir() if p.name.startswith(".berth-")] == []
    verified(edge_work)
    rev2 = revisions.load(out, 2)
    assert rev2.label == "revision 2 (edge-hooks 0.4.0)" and rev2.package is not None
    assert package.load(rev2.package).version == "0.4.0"
    assert (out / workdir.PLAN_FILE).is_file()
    res = run_live(capsys, status_command, *args)
    assert res.code == 0, res.out + res.err

    # A second rollback without --revision goes back to the render just replaced (helm rollback's default).
    res = run_live(capsys, rollback_command, *args)
    assert res.code == 0, res.err
    assert "to revision 2 (edge-hooks 0.4.0)" in res.out
    assert exists(cluster, ADDED) and not exists(cluster, SERVICE)
    assert settings(cluster).get("next") == "yes"
    assert revisions.numbers(out) == [1, 2, 3]
    assert package_version(edge_work) == "0.4.0"
    verified(edge_work)
    rev3 = revisions.load(out, 3)
    assert rev3.label == "revision 3 (edge-hooks 0.3.0)"
    assert rev3.package is not None and package.load(rev3.package).version == "0.3.0"


def test_rollback_without_a_recorded_revision_exits_2(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, audit: Audit, edge_work: Path
) -> None:
    installed(capsys, cluster, edge_work)
    start = len(audit.writes())
    before = tree_digest(edge_work)
    res = run_live(capsys, rollback_command, "--work-dir", edge_work, "--kubeconfig", cluster.kubeconfig)
    assert res.code == 2
    assert "this work dir has none recorded" in res.err and "revisions" in res.err
    assert res.err.count("error:") == 1
    assert audit.writes()[start:] == [] and tree_digest(edge_work) == before


def test_rollback_to_a_revision_that_does_not_exist_exits_2(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, tmp_path: Path
) -> None:
    work = setup_twice(tmp_path / "w", EDGE_CHART, edge_next_chart(tmp_path))
    before = tree_digest(work)
    args = ["--work-dir", work, "--kubeconfig", cluster.kubeconfig, "--revision", "7"]
    res = run_live(capsys, rollback_command, *args)
    assert res.code == 2
    assert "no revision 7 recorded (recorded: 1)" in res.err
    assert tree_digest(work) == before
    res = run_live(capsys, rollback_command, *args[:4], "--resume")
    assert res.code == 2 and "nothing to resume: no earlier rollback run" in res.err


def test_failed_post_rollback_hook_switches_nothing_and_resume_finishes(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, audit: Audit, edge_work: Path, tmp_path: Path
) -> None:
    upgraded(capsys, cluster, edge_work, tmp_path)
    fail_job(edge_work, POST_ROLLBACK_JOB, True)
    args = ["--work-dir", edge_work, "--kubeconfig", cluster.kubeconfig, "--timeout", "120s"]
    res = run_live(capsys, rollback_command, *args, "--revision", "1")
    assert res.code == 1 and "post-rollback hook Job edge/rollback-check failed" in res.err
    assert f"berth install rollback --work-dir {edge_work} --resume" in res.err
    # Helm: "error after resources were updated"; the work dir is not switched before the rollback is done.
    assert exists(cluster, SERVICE) and not exists(cluster, ADDED)
    assert revisions.numbers(edge_work / "out") == [1]
    assert (edge_work / "out/manifests/configmap-added.yaml").is_file()
    fail_job(edge_work, POST_ROLLBACK_JOB, False)
    start = len(audit.writes())
    res = run_live(capsys, rollback_command, *args, "--resume")  # the target comes from the stopped run
    assert res.code == 0, res.err
    writes = audit.writes()[start:]
    assert "patch services app" not in writes and "patch configmaps rollback-marker" not in writes
    assert writes[-2:] == ["patch jobs.batch rollback-check", "delete jobs.batch rollback-check"]
    spec = receipt.receipts(edge_work)[-1][1]["spec"]
    assert spec["result"] == "succeeded" and spec["resumedFrom"]
    assert spec[rollback.TARGET_FIELD] == 1 and spec[rollback.RECORDED_FIELD] == 2
    assert revisions.numbers(edge_work / "out") == [1, 2]
    assert not (edge_work / "out/manifests/configmap-added.yaml").exists()
    res = run_live(capsys, rollback_command, *args, "--resume")
    assert res.code == 2 and "nothing to resume: the last rollback run" in res.err
    # --resume goes on with the stopped run's target even when a newer revision is recorded (2 is newest now).
    fail_job(edge_work, POST_ROLLBACK_JOB, True)
    res = run_live(capsys, rollback_command, *args, "--revision", "1")
    assert res.code == 1 and "post-rollback hook Job edge/rollback-check failed" in res.err
    fail_job(edge_work, POST_ROLLBACK_JOB, False)
    res = run_live(capsys, rollback_command, *args, "--resume")
    assert res.code == 0, res.err
    spec = receipt.receipts(edge_work)[-1][1]["spec"]
    assert spec[rollback.TARGET_FIELD] == 1 and spec[rollback.RECORDED_FIELD] == 3


@pytest.mark.parametrize(
    ("module", "name", "error"),
    [
        (swap, "swap", OSError(28, "No space left on device")),
        (package, "restore_base_renders", ToolError("helm template failed: no helm")),
    ],
    ids=["swap", "base-renders"],
)
def test_resume_switches_the_work_dir_when_only_the_switch_failed(
    capsys: pytest.CaptureFixture[str],
    cluster: Cluster,
    audit: Audit,
    edge_work: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    module: Any,
    name: str,
    error: Exception,
) -> None:
    package.restore_base_renders(edge_work / "package")  # as a package folder given to setup carries them
    upgraded(capsys, cluster, edge_work, tmp_path)
    real = getattr(module, name)

    def broken(*args: Any) -> None:
        raise error

    monkeypatch.setattr(module, name, broken)
    args = ["--work-dir", edge_work, "--kubeconfig", cluster.kubeconfig]
    res = run_live(capsys, rollback_command, *args)
    assert res.code == 1
    assert "the cluster is rolled back to revision 1 (edge-hooks 0.3.0), but" in res.err
    assert str(error) in res.err and "--resume" in res.err
    assert exists(cluster, SERVICE) and revisions.numbers(edge_work / "out") == [1]
    assert package_version(edge_work) == "0.4.0"  # neither half of the switch happened
    assert [p.name for p in edge_work.iterdir() if p.name.startswith(".berth-")] == []  # no stage left behind
    monkeypatch.setattr(module, name, real)
    start = len(audit.writes())
    res = run_live(capsys, rollback_command, *args, "--resume")
    assert res.code == 0, res.err
    assert audit.writes()[start:] == []  # the cluster part was done: nothing is applied again
    assert "Recorded the render this replaced as revision 2" in res.out
    assert revisions.numbers(edge_work / "out") == [1, 2]
    assert receipt.receipts(edge_work)[-1][1]["spec"][rollback.RECORDED_FIELD] == 2
    assert package_version(edge_work) == "0.3.0"
    assert any((edge_work / "package" / "bases").glob("*/render/manifests"))  # the review renders are back
    verified(edge_work)


def test_resume_restores_the_package_when_the_switch_stopped_after_w_out(
    capsys: pytest.CaptureFixture[str],
    cluster: Cluster,
    audit: Audit,
    edge_work: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """W/out and W/package are two renames: W/out (with the target's package inside) first, as the commit point;
    a run that stops before the package is moved leaves a work dir every command refuses until --resume."""
    upgraded(capsys, cluster, edge_work, tmp_path)
    real_rename = Path.rename

    def rename(self: Path, target: Any) -> Path:
        if self.name == revisions.PENDING_PACKAGE:
            raise OSError(28, "No space left on device")
        return real_rename(self, target)

    monkeypatch.setattr(Path, "rename", rename)
    args = ["--work-dir", edge_work, "--kubeconfig", cluster.kubeconfig]
    res = run_live(capsys, rollback_command, *args)
    monkeypatch.setattr(Path, "rename", real_rename)
    assert res.code == 1
    assert f"holds its render, but {edge_work / 'package'} could not be replaced by its package" in res.err
    assert "No space left on device" in res.err and f"rollback --work-dir {edge_work} --resume" in res.err
    out = edge_work / "out"
    assert revisions.numbers(out) == [1, 2] and rendered_settings(out) == rendered_settings(
        out / "revisions/1"
    )
    assert receipt.receipts(edge_work)[-1][1]["spec"][rollback.RECORDED_FIELD] == 2  # W/out is switched
    assert package_version(edge_work) == "0.4.0" and (out / revisions.PENDING_PACKAGE).is_dir()
    # Until the package follows, nothing compares W/out with the wrong package.
    for command in (status_command, rollback_command):
        res = run_live(capsys, command, *args)
        assert res.code == 2 and "stopped before restoring its package" in res.err
        assert f"berth install rollback --work-dir {edge_work} --resume" in res.err
    with pytest.raises(InputError, match="stopped before restoring its package"):
        verify.run(edge_work)
    # A crash between the two renames of the move: W/package already gone.
    shutil.rmtree(edge_work / "package")
    start = len(audit.writes())
    res = run_live(capsys, rollback_command, *args, "--resume")
    assert res.code == 0, res.err
    assert audit.writes()[start:] == []
    assert f"{edge_work / 'package'} now holds the package of revision 1 (edge-hooks 0.3.0)" in res.out
    assert package_version(edge_work) == "0.3.0" and not (out / revisions.PENDING_PACKAGE).exists()
    assert [p.name for p in edge_work.iterdir() if p.name.startswith(".berth-")] == []
    verified(edge_work)
    res = run_live(capsys, rollback_command, *args, "--resume")
    assert res.code == 2 and "nothing to resume: the last rollback run" in res.err


def test_rollback_to_a_revision_recorded_without_its_package(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, edge_work: Path, tmp_path: Path
) -> None:
    """Revisions recorded before revisions kept packages: the rollback works, W/package stays (one line says so),
    and the render it leaves in W/out is labelled from its own spec when the next rollback records it."""
    upgraded(capsys, cluster, edge_work, tmp_path)
    out = edge_work / "out"
    shutil.rmtree(out / "revisions/1/package")
    args = ["--work-dir", edge_work, "--kubeconfig", cluster.kubeconfig]
    res = run_live(capsys, rollback_command, *args)
    assert res.code == 0, res.err
    assert exists(cluster, SERVICE) and not exists(cluster, ADDED)
    notes = [line for line in res.out.splitlines() if "note:" in line]
    assert notes == [
        f"note: revision 1 (edge-hooks 0.3.0) was recorded without its package, so {edge_work / 'package'} "
        "still holds edge-hooks 0.4.0 (`berth install verify` compares against it until the next upgrade)"
    ]
    assert package_version(edge_work) == "0.4.0" and revisions.numbers(out) == [1, 2]
    assert revisions.load(out, 2).label == "revision 2 (edge-hooks 0.4.0)"
    # Back to 0.4.0: W/out's 0.3.0 render is recorded as 0.3.0 (its spec), not with the 0.4.0 W/package.
    res = run_live(capsys, rollback_command, *args)
    assert res.code == 0, res.err
    assert exists(cluster, ADDED) and not exists(cluster, SERVICE)
    rev3 = revisions.load(out, 3)
    assert rev3.label == "revision 3 (edge-hooks 0.3.0)" and rev3.package is None
    assert package_version(edge_work) == "0.4.0" and "note:" not in res.out
    verified(edge_work)


def test_a_scripted_rollback_says_how_the_work_dir_follows_and_switch_only_does_it(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, audit: Audit, edge_work: Path, tmp_path: Path
) -> None:
    import subprocess

    from berth import cli
    from berth.install.live_cli import apply_command
    from berth.kube import tools

    upgraded(capsys, cluster, edge_work, tmp_path)
    script = tmp_path / "rollback.sh"
    assert (
        cli.main(
            ["install", "script", "--work-dir", str(edge_work), "--action", "rollback", "--out", str(script)]
        )
        == 0
    )
    kubectl_dir = str(Path(tools.find("kubectl").path).parent)
    env = {
        "PATH": f"{kubectl_dir}:/usr/bin:/bin",
        "KUBECONFIG": str(cluster.kubeconfig),
        "HOME": str(tmp_path),
    }
    proc = subprocess.run(
        ["bash", str(script), "--yes"], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert exists(cluster, SERVICE) and not exists(cluster, ADDED)  # the cluster is 0.3.0 again
    command = f"berth install rollback --work-dir {edge_work} --revision 1 --switch-only"
    assert f"The work dir does not follow this rollback by itself: where {edge_work} is, run: {command}" in (
        proc.stdout
    )
    assert package_version(edge_work) == "0.4.0" and revisions.numbers(edge_work / "out") == [1]

    args = ["--work-dir", edge_work, "--kubeconfig", cluster.kubeconfig]
    res = run_live(capsys, rollback_command, *args, "--revision", "1", "--switch-only", "--resume")
    assert res.code == 2 and "takes neither --resume nor --dry-run" in res.err
    start = len(audit.writes())
    res = run_live(capsys, rollback_command, "--work-dir", edge_work, "--revision", "1", "--switch-only")
    assert res.code == 0, res.err
    assert audit.writes()[start:] == []  # no cluster contacted
    assert f"{edge_work / 'out'} now holds the render of revision 1 (edge-hooks 0.3.0)" in res.out
    assert "Recorded the render this replaced as revision 2" in res.out
    assert package_version(edge_work) == "0.3.0" and revisions.numbers(edge_work / "out") == [1, 2]
    spec = receipt.receipts(edge_work)[-1][1]["spec"]
    assert spec["action"] == "rollback" and spec[rollback.SWITCH_ONLY_FIELD] is True
    assert spec[rollback.TARGET_FIELD] == 1 and spec[rollback.RECORDED_FIELD] == 2 and spec["steps"] == []
    verified(edge_work)
    # The work dir now records the release as rolled back to this render: apply re-applies it, no hook.
    res = run_live(capsys, apply_command, *args)
    assert res.code == 0, res.err
    assert "re-applying its objects and running no hooks" in res.out
