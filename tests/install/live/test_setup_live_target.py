"""``setup --live --kubeconfig F --context C`` checks the facts against that cluster (the flags used to be dropped,
so the check went to $KUBECONFIG's cluster instead)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from berth import cli
from berth.cluster import Cluster

from ..conftest import EDGE_CHART


def test_setup_live_uses_the_given_kubeconfig(
    cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(
        "KUBECONFIG", str(tmp_path / "nowhere" / "kubeconfig")
    )  # the wrong target, if it were used
    context = yaml.safe_load(Path(cluster.kubeconfig).read_text())["current-context"]
    work = tmp_path / "w"
    code = cli.main(
        [
            "install", "setup", "--pull", str(EDGE_CHART), "--namespace", "edge", "--work-dir", str(work),
            "--non-interactive", "--live", "--kubeconfig", str(cluster.kubeconfig), "--context", context,
        ]
    )  # fmt: skip
    _out, err = capsys.readouterr()
    assert code == 0, err
    facts = yaml.safe_load((work / "out" / "spec" / "facts.yaml").read_text(encoding="utf-8"))
    live = facts["spec"]["values"]["live"]
    assert live["context"] == context and live["serverVersion"].startswith("v1.35")
