"""``berth install verify``: W/out equals a fresh Helm render, every object in exactly one place."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from berth.install import verify

from .conftest import Run


def test_verify_passes_on_a_fresh_setup(run: Run, edge_workdir: Path) -> None:
    r = run("install", "verify", "--work-dir", edge_workdir)
    assert r.code == 0, r.err
    assert r.out.splitlines() == ["27/27 objects match", "upgrade variant (out/upgrade): 26/26 objects match"]


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def _remove(path: Path) -> None:
    path.unlink()


CASES = [
    (
        "changed-field",
        lambda w: _edit(w / "out/manifests/deployment-edge-app.yaml", "replicas: 1", "replicas: 2"),
        "Deployment.apps edge/app differs: .spec.replicas: rendered 1, W/out has 2",
    ),
    (
        "missing-hook-copy",
        lambda w: _remove(w / "out/lifecycle/post-upgrade/job-edge-config-deployer.yaml"),
        "hook Job.batch edge/config-deployer should be in",
    ),
    (
        "hook-copies-differ",
        lambda w: _edit(
            w / "out/lifecycle/post-upgrade/configmap-edge-operator-config.yaml",
            "greeting: hello",
            "greeting: bye",
        ),
        "hook ConfigMap edge/operator-config has copies that differ",
    ),
    (
        "plan-edited",
        lambda w: _edit(w / "out/lifecycle/plan.yaml", "name: migrate", "name: migrated"),
        "lifecycle/plan.yaml: the install plan differs",
    ),
    (
        "upgrade-variant-edited",
        lambda w: _edit(
            w / "out/upgrade/manifests/configmap-edge-app-settings.yaml",
            'isInstall: "false"',
            'isInstall: "true"',  # the file is the document as Helm rendered it
        ),
        "upgrade variant: ConfigMap edge/app-settings differs: .data.isInstall",
    ),
    (
        "upgrade-variant-removed",
        lambda w: shutil.rmtree(w / "out/upgrade"),
        "the --is-upgrade render differs from W/out but out/upgrade/ is missing",
    ),
    (
        "stray-file",
        lambda w: shutil.copy(
            w / "out/manifests/service-edge-app.yaml", w / "out/manifests/service-edge-old.yaml"
        ),
        "out/manifests/service-edge-old.yaml".removeprefix("out/") + " is not in the manifest index",
    ),
    (
        "hook-copied-into-manifests",
        lambda w: shutil.copy(
            w / "out/lifecycle/pre-delete/job-edge-drain.yaml", w / "out/manifests/job-edge-drain.yaml"
        ),
        "manifests/job-edge-drain.yaml is not in the manifest index",
    ),
]


@pytest.mark.parametrize(("case", "tamper", "message"), CASES, ids=[c[0] for c in CASES])
def test_verify_names_each_difference(
    run: Run, workdir_copy: Path, case: str, tamper: object, message: str
) -> None:
    tamper(workdir_copy)  # type: ignore[operator]
    r = run("install", "verify", "--work-dir", workdir_copy)
    assert r.code == 1
    assert message in r.out, r.out
    assert "error: verify failed" in r.err


def test_verify_counts_a_dropped_object(workdir_copy: Path) -> None:
    index = workdir_copy / "out/spec/manifest-index.yaml"
    lines = index.read_text().split("\n  - file: ")
    kept = [part for part in lines if not part.startswith("manifests/service-edge-app.yaml")]
    index.write_text("\n  - file: ".join(kept))
    (workdir_copy / "out/manifests/service-edge-app.yaml").unlink()
    report = verify.run(workdir_copy)
    assert (report.matched, report.expected) == (26, 27)
    assert "Service edge/app is rendered by Helm but missing from W/out" in report.problems


def test_verify_without_setup(run: Run, tmp_path: Path) -> None:
    r = run("install", "verify", "--work-dir", tmp_path)
    assert r.code == 2 and "run berth install setup first" in r.err


def test_bench_reports_figures(run: Run) -> None:
    r = run("bench", "install", "--render-only", "--objects", "30", "--repeat", "1", "-o", "json")
    assert r.code == 0, r.err
    figures = json.loads(r.out)
    assert figures["objects"] == 30 and figures["hooks"] == 1
    assert figures["helmTemplateSeconds"] > 0 and figures["berthRenderSplitPlanSeconds"] > 0
    assert set(figures) >= {"ratio", "splitAndPlanOnlySeconds", "targets"}
