"""``berth schedule compare``: one workload, one run per configuration from the same start, outcomes side by side.

Driven through ``examples/compare`` (the files users would start from): six 4-cpu nodes, a database already on
node-1, eight 500m web pods and four 1-cpu Job pods.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from berth.cli import main
from berth.schedule import compare
from berth.schedule import config as schedconfig

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "compare"
LEAST, MOST = str(EXAMPLE / "least-allocated.yaml"), str(EXAMPLE / "most-allocated.yaml")
CLUSTER, WORKLOAD = str(EXAMPLE / "nodes.yaml"), str(EXAMPLE / "workload.yaml")


def run(*paths: str) -> compare.Comparison:
    return compare.compare([(p, schedconfig.load(p)) for p in paths], CLUSTER, WORKLOAD)


def test_bin_packing_leaves_a_node_empty_where_spreading_uses_them_all() -> None:
    least, most = (o.figures() for o in run(LEAST, MOST).outcomes)
    assert (least["placed"], most["placed"]) == (12, 12)
    # the same pods ask for the same resources: only where they go differs
    assert least["cpuRequested"] == most["cpuRequested"] == round(100 * (2 + 8 * 0.5 + 4 * 1) / 24, 1)
    assert least["nodesInUse"] == 6 and least["emptyNodes"] == 0
    assert most["nodesInUse"] < least["nodesInUse"] and most["emptyNodes"] >= 1
    assert most["cpuOnBusiestNode"] > least["cpuOnBusiestNode"]
    assert most["cpuOnUsedNodesStdev"] > least["cpuOnUsedNodesStdev"]


def test_moved_lists_the_pods_placed_elsewhere_and_nothing_else() -> None:
    c = run(LEAST, MOST)
    base, other = (o.nodes for o in c.outcomes)
    moved = dict(c.moved())
    assert set(moved) == {pod for pod in base if base[pod] != other.get(pod)}
    assert all(moved[pod] == (base[pod], other[pod]) for pod in moved)
    # a configuration compared with itself moves nothing: same files, same seed, same placements
    assert run(LEAST, LEAST).moved() == []


def test_labels_are_file_names_unless_two_share_one() -> None:
    assert compare.labels_for(["a/x.yaml", "b/y.yaml"]) == ["x", "y"]
    assert compare.labels_for(["a/x.yaml", "b/x.yaml"]) == ["a/x.yaml", "b/x.yaml"]


def test_cli_table_json_and_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["schedule", "compare", "--cluster", CLUSTER, "--workload", WORKLOAD]
    assert main([*args, "--config", LEAST, "--config", MOST]) == 0
    out = capsys.readouterr().out
    assert "least-allocated" in out and "most-allocated" in out and "nodes in use" in out
    assert "pods not placed alike (least-allocated / most-allocated; '-': not placed)" in out
    assert main([*args, "--config", LEAST, "--config", MOST, "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [c["label"] for c in doc["configs"]] == ["least-allocated", "most-allocated"]
    assert len(doc["configs"][0]["placements"]) == 12
    assert {u["node"] for u in doc["usage"]["most-allocated"]} == {f"node-{i}" for i in range(1, 7)}
    assert all(len(m["nodes"]) == 2 for m in doc["moved"])
    assert main([*args, "--config", LEAST]) == 2
    assert "give at least two --config files to compare" in capsys.readouterr().err


def test_explain_shows_each_configurations_reasons(capsys: pytest.CaptureFixture[str]) -> None:
    args = [
        "schedule",
        "compare",
        "--cluster",
        CLUSTER,
        "--workload",
        WORKLOAD,
        "--config",
        LEAST,
        "--config",
        MOST,
    ]
    assert main([*args, "--explain", "report-*"]) == 0
    out = capsys.readouterr().out
    assert "why, with least-allocated" in out and "why, with most-allocated" in out
    assert out.count("explain shop/report-") == 8  # four Job pods, once per configuration
    assert main([*args, "--explain", "report-*", "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {label: len(v) for label, v in doc["explanations"].items()} == {
        "least-allocated": 4,
        "most-allocated": 4,
    }
    without = run(LEAST, MOST).to_dict()
    assert "explanations" not in without
