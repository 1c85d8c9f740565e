"""``berth schedule simulate`` / ``berth bench schedule`` through the real entry point: the JSON contract, output
formats, exit codes, and errors without tracebacks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from berth.cli import main
from berth.kube import yamlio

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "two-profiles"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def simulate_args(*extra: str, cluster: Path | None = None, workload: Path | None = None) -> list[str]:
    return [
        "schedule",
        "simulate",
        "--config",
        str(EXAMPLE / "config.yaml"),
        "--cluster",
        str(cluster or EXAMPLE / "nodes.yaml"),
        "--workload",
        str(workload or EXAMPLE / "workload.yaml"),
        *extra,
    ]


def write(tmp_path: Path, name: str, *docs: Any) -> Path:
    path = tmp_path / name
    path.write_text(yamlio.dump_all(docs), encoding="utf-8")
    return path


def test_json_output_is_one_object_with_the_contract_keys(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, *simulate_args("-o", "json", "--seed", "3"))
    assert code == 0
    doc = json.loads(out)
    assert {"placements", "unschedulable", "ignored", "stats", "warnings"} <= set(doc)
    assert len(doc["placements"]) == 12
    for p in doc["placements"]:
        assert set(p) == {"pod", "schedulerName", "node"}
        assert p["pod"].startswith("academy/")
    assert set(doc["stats"]) == {"pods", "scheduled", "seconds", "podsPerSecond"}
    assert (doc["stats"]["pods"], doc["stats"]["scheduled"]) == (12, 12)
    assert doc["unschedulable"] == [] and doc["ignored"] == []


def test_same_seed_same_placements(capsys: pytest.CaptureFixture[str]) -> None:
    first = json.loads(run(capsys, *simulate_args("-o", "json", "--seed", "5"))[1])["placements"]
    second = json.loads(run(capsys, *simulate_args("-o", "json", "--seed", "5"))[1])["placements"]
    assert first == second


def test_unschedulable_and_ignored_pods_are_reported_with_exit_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    container = {"name": "c", "image": "pause", "resources": {"requests": {"cpu": "64"}}}
    workload = write(
        tmp_path,
        "w.yaml",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "huge"},
            "spec": {"schedulerName": "academy-default", "containers": [container]},
        },
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "stray", "namespace": "x"},
            "spec": {"schedulerName": "nobody", "containers": [{"name": "c", "image": "pause"}]},
        },
    )
    code, out, _ = run(capsys, *simulate_args("-o", "json", workload=workload))
    assert code == 0
    doc = json.loads(out)
    assert [(u["pod"], u["schedulerName"], u["message"]) for u in doc["unschedulable"]] == [
        (
            "default/huge",
            "academy-default",
            "0/4 nodes are available: 4 Insufficient cpu. "
            "no new claims to deallocate, preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.",
        )
    ]
    assert doc["ignored"] == [{"pod": "x/stray", "schedulerName": "nobody"}]
    assert doc["stats"]["pods"] == 2 and doc["stats"]["scheduled"] == 0


def test_table_output_has_a_row_per_node_and_a_column_per_profile(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, *simulate_args())
    assert code == 0
    assert "academy-default" in out and "academy-concentrate" in out
    for n in range(1, 5):
        assert f"node-{n}" in out
    assert "12/12 pods placed" in out
    assert "warning: " not in err  # every plugin of the default profile runs: nothing to warn about


def test_yaml_output_parses_to_the_same_contract(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, *simulate_args("-o", "yaml"))
    assert code == 0
    doc = yamlio.load_one(out)
    assert len(doc["placements"]) == 12 and doc["stats"]["scheduled"] == 12


def test_report_is_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "out" / "report.html"
    code, _, _ = run(capsys, *simulate_args("-o", "json", "--report", str(report)))
    assert code == 0
    text = report.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and "cpu requested" in text


@pytest.mark.parametrize(
    ("case", "message"),
    [
        pytest.param(
            "bad-quantity",
            "spec.template.spec.containers[0].resources.requests.cpu: invalid quantity '2x'",
            id="bad-quantity",
        ),
        pytest.param(
            "unknown-kind", "kind 'ConfigMap' is not supported in the workload file", id="unknown-kind"
        ),
        pytest.param("malformed", "malformed YAML", id="malformed-yaml"),
        pytest.param("bad-config", "unknown field", id="bad-config"),
        pytest.param("missing-file", "file not found", id="missing-file"),
    ],
)
def test_bad_input_exits_2_with_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str, message: str
) -> None:
    workload = EXAMPLE / "workload.yaml"
    config = EXAMPLE / "config.yaml"
    if case == "bad-quantity":
        text = (EXAMPLE / "workload.yaml").read_text(encoding="utf-8").replace("cpu: 100m", "cpu: 2x", 1)
        workload = tmp_path / "w.yaml"
        workload.write_text(text, encoding="utf-8")
    elif case == "unknown-kind":
        workload = write(
            tmp_path, "w.yaml", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
        )
    elif case == "malformed":
        workload = tmp_path / "w.yaml"
        workload.write_text("kind: [Pod\n", encoding="utf-8")
    elif case == "bad-config":
        config = tmp_path / "c.yaml"
        config.write_text(
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nbogus: 1\n",
            encoding="utf-8",
        )
    else:
        workload = tmp_path / "absent.yaml"
    argv = [
        "schedule",
        "simulate",
        "--config",
        str(config),
        "--cluster",
        str(EXAMPLE / "nodes.yaml"),
        "--workload",
        str(workload),
    ]
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert message in err
    assert err.startswith("error: ") and "Traceback" not in err
    assert out == ""


def test_unknown_user_plugin_is_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, *simulate_args("--plugin", "no_such_module_xyz:Thing"))
    assert code == 2
    assert "--plugin no_such_module_xyz:Thing: cannot import module" in err


def test_bench_prints_the_figures(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "bench", "schedule", "--nodes", "20", "--pods", "30", "--init-pods", "10", "-o", "json"
    )
    assert code == 0
    doc = json.loads(out)
    assert {"workload", "nodes", "pods", "seconds", "podsPerSecond"} <= set(doc)
    assert (doc["workload"], doc["nodes"], doc["pods"], doc["scheduled"]) == ("SchedulingBasic", 20, 30, 30)
