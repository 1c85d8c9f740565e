"""Facts: offline assumptions and requirements, the package's collector command, and live checks (fake cluster)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from berth.install import collector, helm, setup, split
from berth.kube import yamlio

from .conftest import EDGE_CHART, Run
from .helpers import doc


@pytest.fixture(scope="module")
def metrics_split(tmp_path_factory: pytest.TempPathFactory) -> split.Split:
    values = tmp_path_factory.mktemp("v") / "metrics.yaml"
    values.write_text("metrics: {enabled: true}\n")
    rendered = helm.render(helm.RenderRequest(EDGE_CHART, "edge", "edge", (values,)))
    return split.from_render(rendered.text)


def test_offline_facts(metrics_split: split.Split) -> None:
    facts = collector.offline_facts(metrics_split, "edge", "1.35.0")
    assert facts["requiredCRDs"] == [
        {"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor", "group": "monitoring.coreos.com"}
    ]
    assert facts["requiredSecrets"] == [
        {"namespace": "edge", "name": "edge-license"}
    ]  # app-token is rendered
    assert [c["name"] for c in facts["chartCRDs"]] == ["things.edge.example.com", "widgets.edge.example.com"]
    assert facts["namespace"] == {
        "name": "edge",
        "renderedByChart": False,
        "otherNamespaces": ["edge-reservation"],
    }
    assert facts["assumptions"]["releaseIsInstall"] is True
    unmet = collector.unmet_offline(facts)
    assert [u.what for u in unmet] == [
        "CRD for ServiceMonitor (monitoring.coreos.com/v1) is not in this chart",
        "Secret edge/edge-license is referenced but not rendered",
    ]


@pytest.mark.parametrize(
    ("pod_spec", "expected"),
    [
        ({"volumes": [{"secret": {"secretName": "v"}}]}, {"v"}),
        ({"volumes": [{"secret": {"secretName": "v", "optional": True}}]}, set()),
        ({"imagePullSecrets": [{"name": "pull"}]}, {"pull"}),
        ({"initContainers": [{"envFrom": [{"secretRef": {"name": "ef"}}]}]}, {"ef"}),
        ({"volumes": [{"projected": {"sources": [{"secret": {"name": "pr"}}]}}]}, {"pr"}),
    ],
    ids=["volume", "optional-volume", "pull-secret", "env-from", "projected"],
)
def test_referenced_secrets(pod_spec: dict[str, object], expected: set[str]) -> None:
    obj = {"kind": "Deployment", "spec": {"template": {"spec": {"containers": [{"name": "c"}], **pod_spec}}}}
    assert collector.referenced_secrets(obj) == expected


@dataclass
class FakeCluster:
    context: str = "fake-ctx"
    crd_list: list[collector.LiveCRD] = field(default_factory=list)
    namespaces: set[str] = field(default_factory=set)
    secrets: set[tuple[str, str]] = field(default_factory=set)

    def server_version(self) -> str:
        return "v1.35.2"

    def crds(self) -> list[collector.LiveCRD]:
        return self.crd_list

    def namespace_exists(self, name: str) -> bool:
        return name in self.namespaces

    def secret_exists(self, namespace: str, name: str) -> bool:
        return (namespace, name) in self.secrets


def test_live_facts_list_unmet_with_fixes(metrics_split: split.Split) -> None:
    facts = collector.offline_facts(metrics_split, "edge", "1.35.0")
    cluster = FakeCluster(
        crd_list=[collector.LiveCRD("things.edge.example.com", "edge.example.com", "Thing", ("v0",))],
        namespaces={"edge"},
    )
    live, unmet = collector.live_facts(facts, cluster)
    assert live["serverVersion"] == "v1.35.2" and live["namespaceExists"] is True
    assert live["chartCRDs"][0]["state"].startswith("present, serving v0; the chart needs v1")
    assert live["chartCRDs"][1]["state"] == "absent (the plan creates it)"
    assert [u.what for u in unmet] == [
        "no CRD serves ServiceMonitor (monitoring.coreos.com/v1) in context fake-ctx",
        "Secret edge/edge-license is missing in context fake-ctx",
    ]
    assert unmet[1].fix == "kubectl create secret generic edge-license -n edge --from-literal=KEY=VALUE"
    cluster.secrets.add(("edge", "edge-license"))
    cluster.crd_list.append(
        collector.LiveCRD(
            "servicemonitors.monitoring.coreos.com", "monitoring.coreos.com", "ServiceMonitor", ("v1",)
        )
    )
    assert collector.live_facts(facts, cluster)[1] == []


def test_setup_live_records_cluster_facts(tmp_path: Path, edge_package: Path) -> None:
    opts = setup.SetupOptions(
        str(edge_package), tmp_path / "w", "edge", inputs=("licenseKey=x",), non_interactive=True, live=True
    )
    result = setup.run(opts, cluster=FakeCluster(secrets={("edge", "edge-license")}))
    facts = yamlio.load_file(tmp_path / "w/out/spec/facts.yaml")[0].body["spec"]["values"]
    assert facts["live"]["context"] == "fake-ctx" and facts["unmet"] == []
    assert not any(line.startswith("requirement:") for line in result.lines)


def _spec_with_collector(tmp_path: Path, command: str) -> Path:
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"collector:\n  command: [/bin/sh, -c, {command!r}]\n  timeoutSeconds: 20\n")
    return spec


def test_package_collector_command_adds_facts(run: Run, tmp_path: Path) -> None:
    spec = _spec_with_collector(
        tmp_path, 'printf "gpu: true\\nbase: %s\\nns: %s\\n" "$INSTALLER_BASE" "$INSTALLER_NAMESPACE"'
    )
    assert run("install", "package", EDGE_CHART, "--spec", spec, "--out", tmp_path / "p").code == 0
    r = run(
        "install",
        "setup",
        "--pull",
        tmp_path / "p",
        "--namespace",
        "team",
        "--work-dir",
        tmp_path / "w",
        "--non-interactive",
    )
    assert r.code == 0, r.err
    assert "Collector produced 10 fact(s)" in r.out  # 7 offline keys + 3 from the command
    facts = yamlio.load_file(tmp_path / "w/out/spec/facts.yaml")[0].body["spec"]["values"]
    assert (facts["gpu"], facts["base"], facts["ns"]) == (True, "default", "team")


@pytest.mark.parametrize(
    ("command", "message"),
    [("echo oops >&2; exit 3", "exited 3: oops"), ("echo '- a list'", "must be a YAML mapping")],
    ids=["non-zero", "not-a-mapping"],
)
def test_failing_collector_fails_setup_cleanly(run: Run, tmp_path: Path, command: str, message: str) -> None:
    assert (
        run(
            "install",
            "package",
            EDGE_CHART,
            "--spec",
            _spec_with_collector(tmp_path, command),
            "--out",
            tmp_path / "p",
        ).code
        == 0
    )
    r = run("install", "setup", "--pull", tmp_path / "p", "--work-dir", tmp_path / "w", "--non-interactive")
    assert r.code == 2 and message in r.err
    assert not (tmp_path / "w" / "out").exists()


def test_unknown_groups_need_crds_builtin_groups_do_not() -> None:
    text = doc("Deployment", "d", api="apps/v1") + doc("Widget", "w", api="x.io/v1")
    facts = collector.offline_facts(split.from_render(text), "ns", "1.35.0")
    assert [r["kind"] for r in facts["requiredCRDs"]] == ["Widget"]


def test_a_crd_schema_that_shows_a_pod_spec_requires_no_secret() -> None:
    """A CRD's schema (a default, an example) may hold what looks like a pod spec; it runs no pod, so the Secrets it
    names are not prerequisites -- while the same pod spec in a Deployment is."""
    pod = {
        "containers": [{"name": "c", "env": [{"name": "K", "valueFrom": {"secretKeyRef": {"name": "key"}}}]}]
    }
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.x.io"},
        "spec": {"group": "x.io", "names": {"kind": "Widget"}, "versions": [{"name": "v1", "default": pod}]},
    }
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d"},
        "spec": {"template": {"spec": pod}},
    }
    crd_only = collector.offline_facts(split.from_render("---\n" + yamlio.dump(crd)), "ns", "1.35.0")
    assert crd_only["requiredSecrets"] == []
    both = collector.offline_facts(
        split.from_render("---\n" + yamlio.dump(crd) + "---\n" + yamlio.dump(deployment)), "ns", "1.35.0"
    )
    assert [s["name"] for s in both["requiredSecrets"]] == ["key"]
