"""``setup --api-versions``: extra ``.Capabilities.APIVersions`` as ``helm template --api-versions`` takes them, so a
chart that guards a ServiceMonitor on the Prometheus operator's API renders it for a cluster that serves that API --
remembered by the work dir (verify and later setups render the same), cleared by an empty value."""

from __future__ import annotations

from pathlib import Path

import yaml

from .conftest import Run

GUARDED = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: app}
data: {k: v}
{{- if .Capabilities.APIVersions.Has "monitoring.coreos.com/v1" }}
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: app}
spec:
  selector: {matchLabels: {app: app}}
  endpoints: [{port: metrics}]
{{- end }}
"""


def chart(tmp_path: Path) -> Path:
    root = tmp_path / "monitored"
    (root / "templates").mkdir(parents=True)
    (root / "Chart.yaml").write_text("apiVersion: v2\nname: monitored\nversion: 0.1.0\n", encoding="utf-8")
    (root / "templates" / "all.yaml").write_text(GUARDED, encoding="utf-8")
    return root


def setup(run: Run, src: Path, work: Path, *extra: str) -> int:
    r = run(
        "install",
        "setup",
        "--pull",
        src,
        "--namespace",
        "mon",
        "--work-dir",
        work,
        "--non-interactive",
        *extra,
    )
    assert r.code == 0, r.err
    return len(list((work / "out" / "manifests").glob("servicemonitor-*.yaml")))


def test_api_versions_reach_capabilities_and_are_remembered(run: Run, tmp_path: Path) -> None:
    src, work = chart(tmp_path), tmp_path / "w"
    assert setup(run, src, work) == 0  # a stock cluster serves no monitoring.coreos.com
    assert (
        setup(run, src, work, "--api-versions", "monitoring.coreos.com/v1,policy/v1/PodDisruptionBudget") == 1
    )
    selection = yaml.safe_load((work / "out" / "spec" / "selection.yaml").read_text(encoding="utf-8"))
    assert selection["spec"]["apiVersions"] == ["monitoring.coreos.com/v1", "policy/v1/PodDisruptionBudget"]
    assert setup(run, src, work) == 1  # remembered, as the base and the inputs are
    verified = run("install", "verify", "--work-dir", work)
    assert verified.code == 0, verified.out + verified.err
    assert setup(run, src, work, "--api-versions", "") == 0  # an empty value clears them
    assert "apiVersions" not in yaml.safe_load((work / "out" / "spec" / "selection.yaml").read_text())["spec"]


def test_a_malformed_api_version_is_refused_before_anything_is_written(run: Run, tmp_path: Path) -> None:
    src, work = chart(tmp_path), tmp_path / "w"
    r = run(
        "install",
        "setup",
        "--pull",
        src,
        "--work-dir",
        work,
        "--non-interactive",
        "--api-versions",
        "not a gv",
    )
    assert r.code == 2
    assert '"not a gv" is not an API version: use group/version or group/version/Kind' in r.err
    assert not work.exists()
