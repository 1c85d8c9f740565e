"""Server-side apply ownership and CRD versions already on the cluster."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from berth.cluster import Cluster
from berth.install import receipt
from berth.install.live_cli import apply_command
from berth.kube import client as kube_client

from .conftest import run_live


def test_field_conflict_is_reported_and_force_conflicts_takes_ownership(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, edge_work: Path
) -> None:
    from kubernetes import client as k8s

    api = kube_client.api_client(cluster.kubeconfig)
    core: Any = k8s.CoreV1Api(api)
    core.create_namespace({"metadata": {"name": "edge"}})
    core.create_namespaced_config_map(
        "edge", {"metadata": {"name": "app-settings"}, "data": {"greeting": "mine"}}, field_manager="ops-team"
    )
    args = ["--work-dir", edge_work, "--kubeconfig", cluster.kubeconfig]
    res = run_live(capsys, apply_command, *args)
    assert res.code == 2  # first Helm's ownership check: the ConfigMap belongs to no release
    assert 'ConfigMap "app-settings" in namespace "edge" exists and cannot be imported' in res.err
    res = run_live(capsys, apply_command, *args, "--take-ownership")
    assert res.code == 1
    assert (
        "apply ConfigMap edge/app-settings: server-side apply conflicts with other field managers:" in res.err
    )
    assert '.data.greeting: conflict with "ops-team"' in res.err
    assert "re-run with --force-conflicts" in res.err
    res = run_live(capsys, apply_command, *args, "--resume", "--force-conflicts", "--take-ownership")
    assert res.code == 0, res.err
    live = core.read_namespaced_config_map("app-settings", "edge")
    api.close()
    assert live.data["greeting"] == "hello"
    owners = {m.manager: m.operation for m in live.metadata.managed_fields}
    assert owners.get("helm") == "Apply"  # Helm 4's field manager: helm and berth never lock each other out


def crd(name: str, kind: str, versions: list[tuple[str, bool]]) -> dict[str, Any]:
    plural, group = name.split(".", 1)
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": name},
        "spec": {
            "group": group,
            "names": {"kind": kind, "plural": plural, "singular": kind.lower(), "listKind": f"{kind}List"},
            "scope": "Namespaced",
            "versions": [
                {"name": v, "served": True, "storage": storage,
                 "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}
                for v, storage in versions
            ],
        },
    }  # fmt: skip


def test_older_crd_is_upgraded_newer_is_left_with_a_warning(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, edge_work: Path
) -> None:
    from kubernetes import client as k8s

    api = kube_client.api_client(cluster.kubeconfig)
    ext: Any = k8s.ApiextensionsV1Api(api)
    ext.create_custom_resource_definition(crd("things.edge.example.com", "Thing", [("v1alpha1", True)]))
    ext.create_custom_resource_definition(
        crd("widgets.edge.example.com", "Widget", [("v1", False), ("v2", True)])
    )
    args = ["--work-dir", edge_work, "--kubeconfig", cluster.kubeconfig]
    res = run_live(capsys, apply_command, *args)
    assert res.code == 2  # CRDs another tool installed are not this release's: Helm refuses them too
    assert 'CustomResourceDefinition "widgets.edge.example.com" in namespace "" exists' in res.err
    res = run_live(capsys, apply_command, *args, "--take-ownership")
    assert res.code == 0, res.err
    assert "CRD things.edge.example.com: upgrading the cluster's v1alpha1 to v1" in res.out
    assert (
        "warning: CRD widgets.edge.example.com on the cluster serves v2, newer than this package's v1: "
        "left as it is" in res.out
    )
    things = ext.read_custom_resource_definition("things.edge.example.com")
    widgets = ext.read_custom_resource_definition("widgets.edge.example.com")
    api.close()
    assert [v.name for v in things.spec.versions] == ["v1"]
    assert [v.name for v in widgets.spec.versions] == ["v1", "v2"]
    crds = receipt.receipts(edge_work)[-1][1]["spec"]["steps"][1]["objects"]
    assert [(o["name"], o["action"]) for o in crds if o["action"] != "established"] == [
        ("things.edge.example.com", "applied"),
        ("widgets.edge.example.com", "kept-newer"),
    ]
