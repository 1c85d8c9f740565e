"""``berth install status`` tells the truth as Helm would judge the release: 0 after every successful apply,
upgrade and rollback -- also across chart versions whose ``crds/`` changed and with install-only objects -- and
suggestions that are valid next steps for the release's real state (nothing to upgrade after an uninstall, apply
only when it would change something, ``--force-conflicts`` when another field manager took a field)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from berth.cluster import Cluster
from berth.install.live_cli import (
    apply_command,
    rollback_command,
    status_command,
    uninstall_command,
    upgrade_command,
)
from berth.kube import client as kube_client

from ..conftest import EDGE_CHART, edge_next_chart
from .conftest import run_live, setup_workdir
from .test_lifecycle import exists

CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: {plural}.edge.example.com
spec:
  group: edge.example.com
  names: {{kind: {kind}, listKind: {kind}List, plural: {plural}, singular: {singular}}}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema: {{type: object, description: "{description}", x-kubernetes-preserve-unknown-fields: true}}
"""


def crd(kind: str, description: str = "") -> str:
    return CRD.format(kind=kind, plural=f"{kind.lower()}s", singular=kind.lower(), description=description)


def edge_0_3(tmp: Path) -> Path:
    """edge-hooks with a second crds/ CRD, ``olds``, that the next version drops."""
    chart = tmp / "edge-0.3"
    shutil.copytree(EDGE_CHART, chart)
    (chart / "crds" / "olds.yaml").write_text(crd("Old"))
    return chart


def edge_0_4(tmp: Path) -> Path:
    """The next version: a changed crds/ CRD (things), one dropped (olds), one added (news), objects changed."""
    chart = edge_next_chart(tmp)
    (chart / "crds" / "things.yaml").write_text(
        crd("Thing", "changed in 0.4.0").replace("metadata:\n", "metadata:\n  labels: {edge: v4}\n", 1)
    )
    (chart / "crds" / "news.yaml").write_text(crd("New"))
    return chart


def status(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, work: Path
) -> tuple[int, dict[str, Any], str]:
    args = ["--work-dir", work, "--kubeconfig", cluster.kubeconfig]
    text = run_live(capsys, status_command, *args)
    res = run_live(capsys, status_command, *args, "-o", "json")
    assert res.code == text.code
    return res.code, json.loads(res.out), text.out


def test_status_is_in_sync_after_apply_upgrade_across_changed_crds_and_rollback(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, tmp_path: Path
) -> None:
    work = setup_workdir(tmp_path, edge_0_3(tmp_path), "edge")
    args = ["--work-dir", work, "--kubeconfig", cluster.kubeconfig]
    code, report, text = status(capsys, cluster, work)
    assert code == 1 and report["state"] == "not-installed" and "missing  Deployment edge/app" in text
    assert report["next"] == [
        f"berth install apply --work-dir {work}: installs the release (install hooks included)"
    ]

    assert run_live(capsys, apply_command, *args).code == 0
    code, report, text = status(capsys, cluster, work)
    assert code == 0 and report["inSync"] and report["next"] == [], text

    res = run_live(capsys, upgrade_command, *args, "--pull", edge_0_4(tmp_path))
    assert res.code == 0, res.err
    assert "berth install apply" not in res.out  # install hooks are no next step of an installed release
    code, report, text = status(capsys, cluster, work)
    assert code == 0, text
    assert report["state"] == "installed" and report["extra"] == [] and report["drifted"] == []
    # crds/ CRDs: the changed one is checked for presence only, the dropped one is left (never "extra"), the added
    # one is not installed by an upgrade (as Helm) and only noted; the install-only Thing is not compared.
    assert "CustomResourceDefinition things.edge.example.com" in report["present"]
    assert any("CRD news.edge.example.com" in r and "never on upgrade" in r for r in report["remarks"])
    assert exists(cluster, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/olds.edge.example.com")

    res = run_live(capsys, rollback_command, *args)
    assert res.code == 0, res.err
    code, report, text = status(capsys, cluster, work)
    assert code == 0 and report["compared"].startswith("the render"), text


def test_status_after_uninstall_suggests_only_an_install(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, tmp_path: Path
) -> None:
    work = setup_workdir(tmp_path, EDGE_CHART, "edge")
    args = ["--work-dir", work, "--kubeconfig", cluster.kubeconfig]
    assert run_live(capsys, apply_command, *args).code == 0
    res = run_live(capsys, uninstall_command, *args)
    assert res.code == 0, res.err
    assert "berth install upgrade" not in res.out and "berth install rollback" not in res.out
    assert "berth install test" not in res.out
    assert f"run them with: berth install apply --work-dir {work}" in res.out
    code, report, _ = status(capsys, cluster, work)
    assert code == 1 and report["state"] == "not-installed"
    assert [n.split(":")[0] for n in report["next"]] == [f"berth install apply --work-dir {work}"]


def test_drift_by_another_field_manager_names_it_and_force_conflicts_repairs_it(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, tmp_path: Path
) -> None:
    work = setup_workdir(tmp_path, EDGE_CHART, "edge")
    args = ["--work-dir", work, "--kubeconfig", cluster.kubeconfig]
    assert run_live(capsys, apply_command, *args).code == 0
    api = kube_client.api_client(cluster.kubeconfig)
    from kubernetes import client as k8s

    core: Any = k8s.CoreV1Api(api)
    # Fields the server defaults or another manager adds are no drift; a field berth applied and another changed is.
    core.patch_namespaced_config_map("app-settings", "edge", {"metadata": {"labels": {"team": "ops"}}})
    code, report, text = status(capsys, cluster, work)
    assert code == 0, text
    core.patch_namespaced_config_map("app-settings", "edge", {"data": {"greeting": "changed"}})
    api.close()
    code, report, text = status(capsys, cluster, work)
    assert code == 1
    fields = next(d["fields"] for d in report["drifted"] if d["object"] == "ConfigMap edge/app-settings")
    assert fields[0].startswith(".data.greeting (conflict with ")
    assert report["next"][0].startswith(
        f"berth install apply --work-dir {work} --force-conflicts: takes back"
    )
    assert (
        run_live(capsys, apply_command, *args).code == 1
    )  # without --force-conflicts apply stops, naming it
    assert run_live(capsys, apply_command, *args, "--force-conflicts").code == 0
    code, report, text = status(capsys, cluster, work)
    assert code == 0, text


def test_a_missing_object_is_repaired_by_the_suggested_apply(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, tmp_path: Path
) -> None:
    work = setup_workdir(tmp_path, EDGE_CHART, "edge")
    args = ["--work-dir", work, "--kubeconfig", cluster.kubeconfig]
    assert run_live(capsys, apply_command, *args).code == 0
    api = kube_client.api_client(cluster.kubeconfig)
    from kubernetes import client as k8s

    k8s.CoreV1Api(api).delete_namespaced_service("app", "edge")
    api.close()
    code, report, text = status(capsys, cluster, work)
    assert code == 1 and report["missing"] == ["Service edge/app"]
    command = report["next"][0].split(":")[0]
    assert command == f"berth install apply --work-dir {work}"
    assert run_live(capsys, apply_command, *args).code == 0
    code, report, text = status(capsys, cluster, work)
    assert code == 0, text
