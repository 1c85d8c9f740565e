"""Setting a work dir up again from a newer chart keeps what the user chose: the package is rebased onto the new
chart (bases with their values, components, inputs, release and namespace carried over), the earlier base,
components and answers are used again, and a package that no longer has them is refused by name."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from berth.install import package, wizard
from berth.kube import yamlio

from .conftest import EDGE_CHART, EDGE_HA_VALUES, Run, edge_next_chart, tree_digest


def setup(run: Run, work: Path, ref: Path, *extra: str) -> str:
    r = run("install", "setup", "--pull", ref, "--work-dir", work, "--non-interactive", *extra)
    assert r.code == 0, r.err
    return r.out


def rendered(work: Path, file: str) -> dict[str, object]:
    body: dict[str, object] = yamlio.load_file(work / "out" / "manifests" / file)[0].body
    return body


@pytest.fixture
def chosen(run: Run, edge_package: Path, tmp_path: Path) -> Path:
    """A work dir set up from the edge package with base ha, component metrics and two answers."""
    work = tmp_path / "w"
    setup(run, work, edge_package, "--namespace", "edge", "--base", "ha", "--select", "metrics",
          "--input", "licenseKey=k-1", "--input", "replicas=3")  # fmt: skip
    return work


def test_a_newer_chart_keeps_base_components_inputs_and_values(
    run: Run, chosen: Path, tmp_path: Path
) -> None:
    out = setup(run, chosen, edge_next_chart(tmp_path))
    assert "Base: ha; components: [metrics]" in out and "Namespace: edge" in out
    pkg = package.load(chosen / "package")
    assert (pkg.chart.version, pkg.release) == ("0.4.0", "edge")
    assert [b.name for b in pkg.bases] == ["default", "ha"] and pkg.bases[0].default
    assert [c.name for c in pkg.components] == ["metrics", "single", "ha-extra"]
    assert {i.name for i in pkg.inputs} == {"greeting", "replicas", "licenseKey"}
    selection, answers = wizard.read_prior(chosen / "out" / "spec")
    assert selection is not None and (selection.base, selection.components) == ("ha", ("metrics",))
    assert answers == {"licenseKey": "k-1", "replicas": 3}
    assert (chosen / "package" / "bases" / "ha" / "values.yaml").read_text() == EDGE_HA_VALUES.read_text()
    assert rendered(chosen, "configmap-edge-app-settings.yaml")["data"]["next"] == "yes"  # type: ignore[index]
    assert rendered(chosen, "deployment-edge-app.yaml")["spec"]["replicas"] == 3  # type: ignore[index]
    assert any(p.name.startswith("servicemonitor-") for p in (chosen / "out" / "manifests").iterdir())


def test_a_package_without_the_chosen_base_is_refused_naming_it(
    run: Run, chosen: Path, edge_package: Path, tmp_path: Path
) -> None:
    other = tmp_path / "pkg-no-ha"
    assert run("install", "package", EDGE_CHART, "--base", "default", "--out", other).code == 0
    before = tree_digest(chosen)
    r = run("install", "setup", "--pull", other, "--work-dir", chosen, "--non-interactive")
    assert r.code == 2
    assert "set up with base 'ha', which package edge-hooks 0.3.0 does not have (it has: default)" in r.err
    assert "--base NAME" in r.err and tree_digest(chosen) == before


def test_a_package_without_the_chosen_components_is_refused_naming_them(
    run: Run, chosen: Path, tmp_path: Path, edge_package: Path
) -> None:
    before = tree_digest(chosen)
    other = tmp_path / "pkg-no-components"
    shutil.copytree(edge_package, other)
    manifest = other / package.MANIFEST
    body = yamlio.load_file(manifest)[0].body
    body["spec"].pop("components")
    manifest.write_text(yamlio.dump(body))
    r = run("install", "setup", "--pull", other, "--work-dir", chosen, "--non-interactive")
    assert r.code == 2 and "component(s) metrics, which package edge-hooks 0.3.0 does not have" in r.err
    assert "--select NAME" in r.err and tree_digest(chosen) == before


def test_choices_given_now_win_over_the_earlier_ones(run: Run, chosen: Path, tmp_path: Path) -> None:
    out = setup(run, chosen, edge_next_chart(tmp_path), "--base", "default", "--input", "replicas=2")
    assert "Base: default; components: [metrics]" in out
    selection, answers = wizard.read_prior(chosen / "out" / "spec")
    assert selection is not None and selection.base == "default"
    assert answers == {"licenseKey": "k-1", "replicas": 2}
    assert rendered(chosen, "deployment-edge-app.yaml")["spec"]["replicas"] == 2  # type: ignore[index]
