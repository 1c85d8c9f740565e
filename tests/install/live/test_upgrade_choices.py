"""``berth install upgrade`` keeps the user's choices on the cluster, refuses an uninstalled release, and a Ctrl-C
after its re-render says the new render is in place and how to go on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from berth.cluster import Cluster
from berth.install import apply, wizard
from berth.install.live_cli import apply_command, uninstall_command, upgrade_command
from berth.kube import client as kube_client

from ..conftest import EDGE_CHART, EDGE_HA_VALUES, EDGE_SPEC, edge_next_chart
from .conftest import run_live, setup_workdir


def replicas(cluster: Cluster) -> int:
    api = kube_client.api_client(cluster.kubeconfig)
    from kubernetes import client as k8s

    try:
        apps: Any = k8s.AppsV1Api(api)
        return int(apps.read_namespaced_deployment("app", "edge").spec.replicas)
    finally:
        api.close()


@pytest.fixture
def ha_work(capsys: pytest.CaptureFixture[str], tmp_path: Path, cluster: Cluster) -> Path:
    """The edge package installed with base ha and replicas=2."""
    from berth import cli

    pkg = tmp_path / "pkg"
    assert cli.main(["install", "package", str(EDGE_CHART), "--spec", str(EDGE_SPEC), "--base", "default",
                     "--base", f"ha={EDGE_HA_VALUES}", "--out", str(pkg)]) == 0  # fmt: skip
    work = setup_workdir(
        tmp_path, pkg, "edge", "--base", "ha", "--input", "licenseKey=k", "--input", "replicas=2"
    )
    assert run_live(capsys, apply_command, "--work-dir", work, "--kubeconfig", cluster.kubeconfig).code == 0
    return work


def test_upgrade_to_a_newer_chart_keeps_the_base_and_answers_then_refuses_after_uninstall(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, ha_work: Path, tmp_path: Path
) -> None:
    args = ["--work-dir", ha_work, "--kubeconfig", cluster.kubeconfig]
    res = run_live(capsys, upgrade_command, *args, "--pull", edge_next_chart(tmp_path))
    assert res.code == 0, res.err
    assert "Base: ha; components: []" in res.out
    selection, answers = wizard.read_prior(ha_work / "out" / "spec")
    assert selection is not None and selection.base == "ha" and answers["replicas"] == 2
    assert replicas(cluster) == 2

    res = run_live(capsys, upgrade_command, *args, "--input", "replicas=3")  # a changed answer, same package
    assert res.code == 0, res.err
    assert replicas(cluster) == 3

    assert run_live(capsys, uninstall_command, *args).code == 0
    res = run_live(capsys, upgrade_command, *args, "--pull", edge_next_chart(tmp_path / "again"))
    assert res.code == 2
    assert "was uninstalled from context berth" in res.err and "there is nothing to upgrade" in res.err
    assert f"berth install apply --work-dir {ha_work}" in res.err


def test_ctrl_c_during_the_cluster_upgrade_says_the_render_is_in_place_and_resume_finishes(
    capsys: pytest.CaptureFixture[str],
    cluster: Cluster,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    work = setup_workdir(tmp_path, EDGE_CHART, "edge")
    args = ["--work-dir", work, "--kubeconfig", cluster.kubeconfig]
    assert run_live(capsys, apply_command, *args).code == 0
    real = apply.Executor.run_step
    calls = [0]

    def interrupted(self: apply.Executor, i: int, step: Any) -> None:
        calls[0] += 1
        if calls[0] == 2:
            raise KeyboardInterrupt
        real(self, i, step)

    monkeypatch.setattr(apply.Executor, "run_step", interrupted)
    res = run_live(capsys, upgrade_command, *args, "--pull", edge_next_chart(tmp_path))
    monkeypatch.undo()
    assert res.code == 130
    assert f"interrupted: {work / 'out'} already holds the new render" in res.err
    assert f"continue it with berth install upgrade --work-dir {work} --resume" in res.err
    res = run_live(capsys, upgrade_command, *args, "--resume")
    assert res.code == 0, res.err
