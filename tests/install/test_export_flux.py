"""``berth install export --flux``: a HelmRelease, the locked chart with its HelmChart source, a Kustomization.

The objects are checked against hand-written rules from the Flux APIs (helm-controller ``api/v2``,
source-controller ``api/v1``, kustomize-controller ``api/v1``: required fields, enums, the duration pattern, name
lengths, unknown fields); the values are checked by rendering the exported chart with them through the real Helm
and comparing with the work dir's render.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from berth import cli
from berth.install import chart as chart_mod
from berth.install import export, export_flux, helm, layout, split
from berth.kube import canonical, yamlio

from .conftest import Run

DURATION = re.compile(r"^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$")


@dataclass(frozen=True)
class Rule:
    """A field's type and limits (a tiny structural schema: what these exports must satisfy)."""

    type: type | tuple[type, ...]
    enum: tuple[str, ...] = ()
    duration: bool = False
    length: tuple[int, int] | None = None
    fields: dict[str, Rule] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    open: bool = False
    """Any keys (``values``, ``metadata``)."""


STR, BOOL, INT = Rule(str), Rule(bool), Rule(int)
DUR = Rule(str, duration=True)
REMEDIATION = Rule(dict, fields={"retries": INT, "ignoreTestFailures": BOOL, "remediateLastFailure": BOOL,
                                 "strategy": Rule(str, enum=("rollback", "uninstall"))})  # fmt: skip
CRDS = Rule(str, enum=("Skip", "Create", "CreateReplace"))
HELMRELEASE_SPEC = Rule(
    dict,
    required=("interval",),
    fields={
        "interval": DUR,
        "timeout": DUR,
        "chartRef": Rule(
            dict,
            required=("kind", "name"),
            fields={
                "kind": Rule(str, enum=("OCIRepository", "HelmChart", "ExternalArtifact")),
                "name": Rule(str, length=(1, 253)),
                "namespace": Rule(str, length=(1, 63)),
            },
        ),
        "releaseName": Rule(str, length=(1, 53)),
        "targetNamespace": Rule(str, length=(1, 63)),
        "storageNamespace": Rule(str, length=(1, 63)),
        "maxHistory": INT,
        "install": Rule(
            dict,
            fields={
                "timeout": DUR,
                "crds": CRDS,
                "createNamespace": BOOL,
                "disableWait": BOOL,
                "disableWaitForJobs": BOOL,
                "remediation": REMEDIATION,
            },
        ),
        "upgrade": Rule(
            dict,
            fields={
                "timeout": DUR,
                "crds": CRDS,
                "disableWait": BOOL,
                "disableWaitForJobs": BOOL,
                "remediation": REMEDIATION,
            },
        ),
        "uninstall": Rule(
            dict,
            fields={
                "timeout": DUR,
                "disableWait": BOOL,
                "keepHistory": BOOL,
                "deletionPropagation": Rule(str, enum=("background", "foreground", "orphan")),
            },
        ),
        "test": Rule(dict, fields={"enable": BOOL, "ignoreFailures": BOOL, "timeout": DUR}),
        "values": Rule(dict, open=True),
    },
)
HELMCHART_SPEC = Rule(
    dict,
    required=("chart", "interval", "sourceRef"),
    fields={
        "chart": STR,
        "interval": DUR,
        "sourceRef": Rule(
            dict,
            required=("kind", "name"),
            fields={"kind": Rule(str, enum=("HelmRepository", "GitRepository", "Bucket")), "name": STR},
        ),
        "reconcileStrategy": Rule(str, enum=("ChartVersion", "Revision")),
    },
)
KUSTOMIZATION_SPEC = Rule(
    dict,
    required=("interval", "prune", "sourceRef"),
    fields={
        "interval": DUR,
        "path": STR,
        "prune": BOOL,
        "wait": BOOL,
        "timeout": DUR,
        "sourceRef": Rule(
            dict,
            required=("kind", "name"),
            fields={
                "kind": Rule(str, enum=("OCIRepository", "GitRepository", "Bucket", "ExternalArtifact")),
                "name": STR,
                "namespace": STR,
            },
        ),
    },
)
METADATA = Rule(dict, required=("name", "namespace"), open=True)


def problems(value: Any, rule: Rule, path: str) -> list[str]:
    out: list[str] = []
    if not isinstance(value, rule.type) or (rule.type is int and isinstance(value, bool)):
        return [f"{path}: expected {rule.type}, got {value!r}"]
    if rule.enum and value not in rule.enum:
        out.append(f"{path}: {value!r} not in {rule.enum}")
    if rule.duration and not DURATION.match(value):
        out.append(f"{path}: {value!r} is not a duration")
    if rule.length and not rule.length[0] <= len(value) <= rule.length[1]:
        out.append(f"{path}: length {len(value)} outside {rule.length}")
    if isinstance(value, dict):
        out += [f"{path}.{k}: required" for k in rule.required if k not in value]
        for k, v in value.items():
            if k in rule.fields:
                out += problems(v, rule.fields[k], f"{path}.{k}")
            elif not rule.open:
                out.append(f"{path}.{k}: unknown field")
    return out


def check_object(body: dict[str, Any], api: str, kind: str, spec: Rule) -> list[str]:
    out = [] if body.get("apiVersion") == api and body.get("kind") == kind else [f"not {api} {kind}"]
    out += problems(body.get("metadata"), METADATA, "metadata")
    out += problems(body.get("spec"), spec, "spec")
    return out


def test_the_rules_catch_what_the_api_server_would_refuse() -> None:
    bad = {"interval": "10 minutes", "chartRef": {"kind": "GitRepository"}, "releaseName": "x" * 54,
           "install": {"crds": "Always"}, "bogus": 1}  # fmt: skip
    assert sorted(problems(bad, HELMRELEASE_SPEC, "spec")) == [
        "spec.bogus: unknown field",
        "spec.chartRef.kind: 'GitRepository' not in ('OCIRepository', 'HelmChart', 'ExternalArtifact')",
        "spec.chartRef.name: required",
        "spec.install.crds: 'Always' not in ('Skip', 'Create', 'CreateReplace')",
        "spec.interval: '10 minutes' is not a duration",
        "spec.releaseName: length 54 outside (1, 53)",
    ]


def load(path: Path) -> dict[str, Any]:
    (only,) = yamlio.load_objects(path.read_text(), str(path))
    return only[1]


@pytest.fixture(scope="module")
def ha_workdir(tmp_path_factory: pytest.TempPathFactory, edge_package: Path) -> Path:
    """The edge package with the ha base, two components and inputs: every values layer."""
    work = tmp_path_factory.mktemp("flux") / "w"
    code = cli.main(
        ["install", "setup", "--pull", str(edge_package), "--namespace", "edge", "--work-dir", str(work),
         "--non-interactive", "--base", "ha", "--select", "ha-extra", "--input", "licenseKey=k-2",
         "--input", "replicas=4"]
    )  # fmt: skip
    assert code == 0
    return work


def test_flux_export_writes_valid_objects_over_the_locked_chart(
    run: Run, ha_workdir: Path, tmp_path: Path
) -> None:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    dest = tmp_path / "repo" / "deploy" / "edge"
    dest.parent.mkdir()
    res = run("install", "export", "--work-dir", ha_workdir, "--flux", dest)
    assert res.code == 0, res.err
    hr = load(dest / "release" / "helmrelease.yaml")
    hc = load(dest / "release" / "helmchart.yaml")
    ks = load(dest / "flux-kustomization.yaml")
    assert check_object(hr, "helm.toolkit.fluxcd.io/v2", "HelmRelease", HELMRELEASE_SPEC) == []
    assert check_object(hc, "source.toolkit.fluxcd.io/v1", "HelmChart", HELMCHART_SPEC) == []
    assert check_object(ks, "kustomize.toolkit.fluxcd.io/v1", "Kustomization", KUSTOMIZATION_SPEC) == []
    assert load(dest / "release" / "kustomization.yaml")["resources"] == [
        "helmchart.yaml",
        "helmrelease.yaml",
    ]
    # the release, in the HelmChart over the archive in the repository, digest pinned
    pkg = export.load(ha_workdir).workdir.package
    archive = dest / "chart" / "edge-hooks-0.3.0.tgz"
    assert hashlib.sha256(archive.read_bytes()).hexdigest() == pkg.chart.sha256
    assert hc["metadata"]["annotations"][export_flux.CHART_SHA_ANNOTATION] == pkg.chart.sha256
    assert hc["spec"]["chart"] == "./deploy/edge/chart/edge-hooks-0.3.0.tgz"
    assert hc["spec"]["reconcileStrategy"] == "ChartVersion" and "valuesFiles" not in hc["spec"]
    assert hr["spec"]["chartRef"] == {"kind": "HelmChart", "name": "edge", "namespace": "flux-system"}
    assert (hr["spec"]["releaseName"], hr["spec"]["targetNamespace"], hr["spec"]["storageNamespace"]) == (
        "edge", "edge", "edge")  # fmt: skip
    assert ks["spec"]["path"] == "./deploy/edge/release"
    assert ks["spec"]["sourceRef"] == {"kind": "GitRepository", "name": "flux-system"}
    readme = (dest / "README.md").read_text()
    assert f"sha256:{pkg.chart.sha256}" in readme
    assert (
        "1. base ha (bases/ha/values.yaml)" in readme and "4. inputs greeting, licenseKey, replicas" in readme
    )
    assert "set it to true to run the chart's 2 test hook(s)" in readme


@pytest.mark.parametrize("wait", [False, True], ids=["hook-only", "wait"])
def test_options_mirror_the_plan(run: Run, ha_workdir: Path, tmp_path: Path, wait: bool) -> None:
    args = ["--wait"] if wait else []
    res = run(
        "install", "export", "--work-dir", ha_workdir, "--flux", tmp_path / "f", "--timeout", "90", *args
    )
    assert res.code == 0, res.err
    spec = load(tmp_path / "f" / "release" / "helmrelease.yaml")["spec"]
    assert spec["timeout"] == spec["install"]["timeout"] == spec["upgrade"]["timeout"] == "90s"
    assert spec["uninstall"]["timeout"] == "90s"
    for action in ("install", "upgrade"):
        assert spec[action]["disableWait"] is spec[action]["disableWaitForJobs"] is (not wait)
        assert spec[action]["remediation"] == {"retries": 0}
    assert spec["uninstall"]["disableWait"] is (not wait)
    assert (spec["install"]["crds"], spec["upgrade"]["crds"]) == (
        "Create",
        "Skip",
    )  # crds/: create, never upgrade
    assert spec["install"]["createNamespace"] is True and spec["maxHistory"] == 10
    assert spec["test"] == {"enable": False}


def test_values_render_the_same_objects_as_the_work_dir(run: Run, ha_workdir: Path, tmp_path: Path) -> None:
    """helm template of the exported chart with the HelmRelease's values == the work dir's render, object by
    object: the values of the base, the components and the inputs, merged as Helm merges them."""
    dest = tmp_path / "f"
    assert run("install", "export", "--work-dir", ha_workdir, "--flux", dest).code == 0
    values = load(dest / "release" / "helmrelease.yaml")["spec"]["values"]
    assert (
        values["replicas"] == 4 and values["license"] == {"key": "k-2"} and values["ha"] == {"enabled": True}
    )
    (tmp_path / "values.yaml").write_text(yamlio.dump(values))
    chart_dir = chart_mod.safe_extract(dest / "chart" / "edge-hooks-0.3.0.tgz", tmp_path / "chart")
    wd = export.load(ha_workdir).workdir
    request = helm.RenderRequest(
        chart_dir, "edge", "edge", (tmp_path / "values.yaml",),
        api_versions=(*helm.chart_crd_api_versions(chart_dir), *wd.selection.api_versions),
    )  # fmt: skip
    fresh = split.from_render(helm.render(request).text)
    written, _ = layout.read_split(ha_workdir / "out")

    def objects_of(s: split.Split) -> dict[Any, str]:
        return {o.ref: canonical.canonical_json(o.body) for o in s.all_objects()}

    assert objects_of(fresh) == objects_of(written)


def test_merge_values_is_helms_merge() -> None:
    base = {"a": {"x": 1, "y": 2}, "b": [1, 2], "c": "keep"}
    over = {"a": {"y": 3, "z": None}, "b": [3], "d": {"e": 1}}
    assert export_flux.merge_values(base, over) == {
        "a": {"x": 1, "y": 3, "z": None},
        "b": [3],
        "c": "keep",
        "d": {"e": 1},
    }
    assert export_flux.merge_values({"a": 1}, {"a": {"b": 2}}) == {"a": {"b": 2}}
    assert base == {"a": {"x": 1, "y": 2}, "b": [1, 2], "c": "keep"}  # inputs untouched


def test_flux_source_and_namespace_flags(run: Run, edge_workdir: Path, tmp_path: Path) -> None:
    dest = tmp_path / "f"
    res = run("install", "export", "--work-dir", edge_workdir, "--flux", dest,
              "--flux-source", "apps", "--flux-namespace", "gitops")  # fmt: skip
    assert res.code == 0, res.err
    hc = load(dest / "release" / "helmchart.yaml")
    hr = load(dest / "release" / "helmrelease.yaml")
    assert hc["metadata"]["namespace"] == hr["metadata"]["namespace"] == "gitops"
    assert hc["spec"]["sourceRef"]["name"] == "apps" and hr["spec"]["chartRef"]["namespace"] == "gitops"
    assert "No Git repository was found above this folder" in (dest / "README.md").read_text()


def test_flux_bad_work_dir_and_tampered_chart_write_nothing(
    run: Run, edge_workdir: Path, tmp_path: Path
) -> None:
    res = run("install", "export", "--work-dir", tmp_path / "nowork", "--flux", tmp_path / "f")
    assert res.code == 2 and res.err.count("error:") == 1 and not (tmp_path / "f").exists()
    work = tmp_path / "w"
    shutil.copytree(edge_workdir, work)
    archive = next((work / "package" / "chart").glob("*.tgz"))
    archive.write_bytes(archive.read_bytes() + b"\0")
    res = run("install", "export", "--work-dir", work, "--flux", tmp_path / "f")
    assert res.code == 2 and "SHA-256" in res.err and not (tmp_path / "f").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w"]
