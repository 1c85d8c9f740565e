"""``apply --dry-run`` of a chart whose hook is a custom resource of a CRD the plan itself creates (the
operator-crds example's post-install Widget): the hook is listed as not verifiable, as the apply step lists such
objects, instead of stopping the dry run with "the cluster serves no Widget"."""

from __future__ import annotations

from pathlib import Path

import pytest

from berth.cluster import Cluster
from berth.install.live_cli import apply_command

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
