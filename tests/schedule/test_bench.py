"""``berth.schedule.bench``: the scheduler_perf-like workloads build, run, report the contract keys, and the verify
mode really compares the vectorised path with the reference (a broken kernel is counted as mismatches)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from berth.kube.errors import InputError
from berth.schedule import bench
from berth.schedule.vector import kernels

KEYS = {"workload", "nodes", "pods", "seconds", "podsPerSecond", "mismatches", "peakMemoryMiB"}


@pytest.mark.parametrize(
    ("workload", "nodes", "pods", "init"),
    [
        ("scheduling-basic", 40, 60, 20),
        ("topology-spreading", 30, 40, 10),
        ("pod-anti-affinity", 30, 20, 5),
    ],
    ids=["basic", "spreading", "anti-affinity"],
)
def test_workloads_run_verified_with_no_mismatch(workload: str, nodes: int, pods: int, init: int) -> None:
    out = bench.run_benchmark(workload, nodes, pods, verify=True, seed=3, init_pods=init)
    assert set(out) >= KEYS
    assert out["workload"] == workload and out["nodes"] == nodes and out["pods"] == pods
    assert out["scheduled"] == pods
    assert out["mismatches"] == 0
    assert (
        out["verified"] == pods
    )  # fewer pods than VERIFY_SAMPLES: every pod is re-run on the reference path
    assert out["peakMemoryMiB"] > 0
    assert "mismatches 0/" in bench.format_result(out)


def test_anti_affinity_pods_never_share_a_node() -> None:
    out = bench.run_benchmark("pod-anti-affinity", 10, 15, verify=False, init_pods=0)
    assert out["scheduled"] == 10  # one green pod per hostname; the other 5 are unschedulable
    assert out["mismatches"] is None


def test_verify_counts_a_broken_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    real = kernels.allocated_scores

    def off_by_one(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        out[: len(out) // 2] = np.minimum(out[: len(out) // 2] + 7, 100)
        return out

    monkeypatch.setattr(kernels, "allocated_scores", off_by_one)
    out = bench.run_benchmark("scheduling-basic", 30, 40, verify=True, init_pods=10)
    assert out["mismatches"] > 0
    assert out["mismatchExamples"]


def test_reference_path_can_be_timed() -> None:
    out = bench.run_benchmark("scheduling-basic", 20, 10, init_pods=0, vectorised=False)
    assert out["path"] == "reference" and out["scheduled"] == 10


def test_unknown_workload_is_an_input_error() -> None:
    with pytest.raises(InputError, match="unknown workload 'nope'; known: pod-anti-affinity, preemption"):
        bench.run_benchmark("nope")


def test_preemption_workload_preempts_three_low_pods_per_high_pod() -> None:
    """scheduler_perf PreemptionBasic/5Nodes: 4 low pods (900m) fill each 4-cpu node; each 3-cpu high pod needs 3
    of them gone, is nominated, then binds; the reference path decides the same."""
    out = bench.run_benchmark("preemption", 5, 5, init_pods=20, verify=True)
    assert out["available"] is True
    assert (out["scheduled"], out["preempted"], out["mismatches"]) == (5, 15, 0)
    assert out["verified"] > 0
    assert ", 15 pods preempted" in bench.format_result(out)


def test_cli_workload_and_verify_print_the_contract() -> None:
    from click.testing import CliRunner

    from berth.schedule.bench_cli import bench as bench_command

    args = ["--workload", "topology-spreading", "--nodes", "12", "--pods", "9", "--init-pods", "3"]
    result = CliRunner().invoke(bench_command, [*args, "--verify", "-o", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert (doc["workload"], doc["nodes"], doc["pods"], doc["mismatches"]) == ("topology-spreading", 12, 9, 0)
    text = CliRunner().invoke(bench_command, args)
    assert text.exit_code == 0 and text.output.startswith(
        "topology-spreading: 12 nodes, 3 init pods, 9/9 pods"
    )
