"""berth's plan order is Helm 4's real order: run the real ``helm install`` against the embedded API server and
compare the create/delete sequence in its audit log with what berth's plan says, step by step."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from berth.install import plan, setup
from berth.kube import tools

from .conftest import REPO, Run

PROBE = REPO / "examples" / "charts" / "hook-order-probe"
RESOURCE_KIND = {
    "configmaps": "ConfigMap",
    "serviceaccounts": "ServiceAccount",
    "secrets": "Secret",
    "roles.rbac.authorization.k8s.io": "Role",
    "customresourcedefinitions.apiextensions.k8s.io": "CustomResourceDefinition",
}


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Any]:
    from berth.cluster import Cluster, ClusterOptions

    c = Cluster(ClusterOptions(data_dir=tmp_path / "cluster", run_controllers=False)).start()
    try:
        yield c
    finally:
        c.stop()


def expected_calls(p: plan.Plan) -> list[str]:
    """What the plan says happens to each object, as ``delete|apply Kind name`` in order."""
    out: list[str] = []
    for step in p.steps:
        if step.phase == plan.Phase.NAMESPACE.value:
            continue
        for o in step.objects:
            if o.delete_before_create:
                out.append(f"delete {o.kind} {o.name}")
            out.append(f"apply {o.kind} {o.name}")
        out += [f"delete {o.kind} {o.name}" for o in step.delete_after_success]
    return out


def audited_calls(audit: Path, names: set[str]) -> list[str]:
    out = []
    for line in audit.read_text().splitlines():
        e = json.loads(line)
        kind = RESOURCE_KIND.get(e.get("resource", ""))
        if kind is None or e.get("name") not in names or e["verb"] in ("get", "list", "watch"):
            continue
        verb = "delete" if e["verb"] == "delete" else "apply"
        out.append(f"{verb} {kind} {e['name']}")
    return out


def test_real_helm_install_runs_hooks_in_the_planned_order(run: Run, tmp_path: Path, cluster: Any) -> None:
    work = tmp_path / "w"
    assert (
        run(
            "install",
            "setup",
            "--pull",
            PROBE,
            "--namespace",
            "probe",
            "--work-dir",
            work,
            "--non-interactive",
        ).code
        == 0
    )
    p = setup.build_plan(setup.load_workdir(work), plan.Action.INSTALL, str(work))
    expected = expected_calls(p)
    assert expected[:3] == [  # sanity: the plan itself has the shape the chart's comments describe
        "apply CustomResourceDefinition probes.order.example.com",
        "delete Secret zeta",
        "apply Secret zeta",
    ]
    helm = tools.find("helm").path
    kubeconfig = str(cluster.data_dir / "kubeconfig")
    proc = subprocess.run(
        [
            helm,
            "install",
            "probe",
            str(PROBE),
            "-n",
            "probe",
            "--create-namespace",
            "--kubeconfig",
            kubeconfig,
            "--timeout",
            "60s",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    names = {o.name for s in p.steps for o in s.objects}
    assert audited_calls(cluster.data_dir / "audit.jsonl", names) == expected
