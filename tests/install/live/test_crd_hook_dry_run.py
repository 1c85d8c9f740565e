"""``apply --dry-run`` of a chart whose hook is a custom resource of a CRD the plan itself creates (the
operator-crds example's post-install Widget): the hook is listed as not verifiable, as the apply step lists such
objects, instead of stopping the dry run with "the cluster serves no Widget"."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from berth.cluster import Cluster
from berth.install.live_cli import apply_command, upgrade_command

from ..conftest import REPO
from .conftest import run_live, setup_workdir


def test_dry_run_lists_a_custom_resource_hook_whose_crd_is_not_there_yet(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, cluster: Cluster
) -> None:
    work = setup_workdir(tmp_path, REPO / "examples" / "charts" / "operator-crds", "fac")
    res = run_live(capsys, apply_command, "--work-dir", work, "--kubeconfig", cluster.kubeconfig, "--dry-run")
    assert res.code == 0, res.err
    assert "? Widget default (its CRD is not on the cluster yet: not verified)" in res.out
    assert (
        "? post-install hook Widget warmup would run (its CRD is not on the cluster yet: not verified)"
        in res.out
    )
    assert "Dry run: the install plan of release operator-crds (6 of 6 step(s) ran" in res.out
    assert "NOTES:" not in res.out


def test_upgrade_dry_run_leaves_no_copy_and_names_the_real_work_dir(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dry run re-renders into a temporary copy (it holds the rendered Secrets): the copy is removed, its
    receipt joins the work dir's, and no printed command sends the user to the vanished copy."""
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    chart = REPO / "examples" / "charts" / "operator-crds"
    work = setup_workdir(tmp_path, chart, "fac")
    args = ["--work-dir", work, "--kubeconfig", cluster.kubeconfig, "--dry-run", "--pull", chart]
    res = run_live(capsys, upgrade_command, *args)
    assert res.code == 0, res.err
    assert not list(temp.glob("berth-upgrade-dry-run-*"))  # (the kube client keeps its own temp files here)
    assert "berth-upgrade-dry-run" not in res.out + res.err
    # After an upgrade the install hooks are no valid next step: `apply` on an installed release runs no hook.
    assert "berth install apply" not in res.out
    receipt_line = next(line for line in res.out.splitlines() if line.startswith("Receipt: "))
    assert Path(receipt_line.removeprefix("Receipt: ")).parent == work / "out" / "runs"
    assert Path(receipt_line.removeprefix("Receipt: ")).is_file()
    assert not (work / "out" / "runs" / "target.yaml").exists()  # a dry run records no target
