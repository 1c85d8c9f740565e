"""``berth.bench.schedule``: the scheduler_perf-like workloads build, run, report the contract keys, and the verify
mode really compares the vectorised path with the reference (a broken kernel is counted as mismatches)."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from typing import Any

import numpy as np
import pytest

from berth.bench import schedule as bench
from berth.kube.errors import InputError
from berth.schedule.vector import kernels

KEYS = {"workload", "nodes", "pods", "seconds", "podsPerSecond", "mismatches", "peakMemoryMiB"}


@pytest.mark.parametrize(
    ("workload", "nodes", "pods", "init"),
    [
        ("scheduling-basic", 40, 60, 20),
        ("topology-spreading", 30, 40, 10),
        ("preferred-topology-spreading", 30, 40, 10),
        ("default-topology-spreading", 30, 40, 10),
        ("node-inclusion-policy", 30, 40, 0),
        ("pod-anti-affinity", 30, 20, 5),
        ("pod-matching-anti-affinity", 30, 40, 10),
        ("pod-affinity", 30, 40, 10),
        ("preferred-pod-affinity", 30, 40, 10),
        ("preferred-pod-anti-affinity", 30, 40, 10),
        ("node-affinity", 30, 40, 10),
        ("mixed-scheduling-base-pod", 30, 40, 4),
        ("daemonset", 30, 40, 0),
    ],
    ids=lambda v: str(v),
)
def test_workloads_run_verified_with_no_mismatch(workload: str, nodes: int, pods: int, init: int) -> None:
    out = bench.run_benchmark(workload, nodes, pods, verify=True, seed=3, init_pods=init)
    assert set(out) >= KEYS
    assert out["workload"] == workload and out["nodes"] == nodes and out["pods"] == pods
    assert out["initPods"] == init * len(bench.WORKLOADS[workload].init)
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
    with pytest.raises(
        InputError, match="unknown workload 'nope'; known: daemonset, default-topology-spreading, "
    ):
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

    from berth.bench.schedule_cli import bench as bench_command

    args = ["--workload", "topology-spreading", "--nodes", "12", "--pods", "9", "--init-pods", "3"]
    result = CliRunner().invoke(bench_command, [*args, "--verify", "-o", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert (doc["workload"], doc["nodes"], doc["pods"], doc["mismatches"]) == ("topology-spreading", 12, 9, 0)
    text = CliRunner().invoke(bench_command, args)
    assert text.exit_code == 0 and text.output.startswith(
        "topology-spreading: 12 nodes, 3 init pods, 9/9 pods"
    )


def _placements(workload: str, nodes: int, pods: int, init: int = 0) -> tuple[bench.Workload, list[Any]]:
    """Run a workload's shapes through a plain Scheduler and return where the measured pods went."""
    from berth.schedule.scheduler import Scheduler

    w = bench.WORKLOADS[workload]
    s = Scheduler(bench.default_config(), seed=1)
    for obj in w.objects:
        s.add_object(obj)
    for i in range(nodes):
        s.add_node(w.node(i))
    for template in w.init[:1]:
        for i in range(init):
            s.add_pod(template("sched-0", i))
    s.run_until_idle()
    before = len(s.placements)
    for i in range(pods):
        s.add_pod(w.pod(w.namespace, i))
    s.run_until_idle()
    return w, s.placements[before:]


def test_daemonset_pods_all_go_to_the_named_node() -> None:
    _, placed = _placements("daemonset", 20, 30)
    assert len(placed) == 30 and {p.node for p in placed} == {bench.NAMED_NODE}


def test_node_inclusion_policy_spreads_over_untainted_nodes_only() -> None:
    """Ten nodes, two tainted (foo:NoSchedule, not tolerated); maxSkew 1 on the hostname with nodeTaintsPolicy
    Honor: the 16 pods go two to each of the eight untainted nodes."""
    w, placed = _placements("node-inclusion-policy", 10, 16)
    tainted = {f"scheduler-perf-{i}" for i in range(10) if w.node(i)["spec"].get("taints")}
    assert len(tainted) == 2
    per_node = Counter(p.node for p in placed)
    assert not tainted & set(per_node) and sorted(per_node.values()) == [2] * 8


def test_default_spreading_applies_through_the_service() -> None:
    """The measured pods carry no constraint of their own: the Service selecting them gives them the system
    default zone spreading (ScheduleAnyway), which keeps the three zones level."""
    _, placed = _placements("default-topology-spreading", 9, 30)
    zones = Counter(int(p.node.rsplit("-", 1)[1]) % 3 for p in placed)
    assert max(zones.values()) - min(zones.values()) <= 1


def test_threshold_verdicts_only_at_upstreams_sizes() -> None:
    w = bench.WORKLOADS["pod-affinity"]
    doc = {
        "workload": w.name, "upstream": w.upstream, "threshold": 35, "nodes": w.nodes, "pods": w.pods,
        "initPods": w.init_pods, "scheduled": w.pods, "seconds": 10.0, "podsPerSecond": 500.0,
        "cpuSeconds": 10.0, "podsPerCpuSecond": 500.0, "mismatches": None, "peakMemoryMiB": 1.0, "loadAverage": 0.1,
    }  # fmt: skip
    assert bench.format_result(doc).endswith("threshold 35 pods/s: met")
    assert bench.format_result({**doc, "podsPerSecond": 20.0}).endswith("threshold 35 pods/s: below")
    assert "(at its own sizes, not these)" in bench.format_result({**doc, "nodes": 10})


@pytest.mark.parametrize("workload", ["unschedulable", "preemption-async", "mixed-churn", "while-gated"])
def test_churn_workloads_run_their_steps_beside_the_measured_pods(
    workload: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The churn steps run on wall-clock intervals while the measured pods are scheduled; here every interval is
    made tiny (and the steps capped at five, so high-priority churn cannot crowd 20 nodes out) so steps certainly
    run, and the measured pods are all placed and verified."""
    w = bench.WORKLOADS[workload]

    def capped(step: bench.ChurnFn) -> bench.ChurnFn:
        return lambda s, k, init: step(s, k, init) if k < 5 else None

    fast = tuple(bench.Churn(0.0005, capped(c.step)) for c in w.churn)
    monkeypatch.setitem(bench.WORKLOADS, workload, dataclasses.replace(w, churn=fast))
    out = bench.run_benchmark(workload, 20, 200, verify=True, init_pods=20)
    assert out["scheduled"] == 200 and out["mismatches"] == 0
    assert out["churnSteps"] > 0
    assert "churn steps beside them" in bench.format_result(out)


def test_churn_steps_do_what_upstreams_ops_do() -> None:
    from berth.schedule.scheduler import Scheduler

    s = Scheduler(bench.default_config(), seed=1)
    s.add_node(bench.perf_node(0))
    # mixed churn: each step replaces the previous node, unschedulable pod and Service
    for k in range(3):
        bench._recreate_mixed(s, k, 0)
    s.run_until_idle()
    names = sorted(n.name for n in s.cache.update_snapshot(s._current_snapshot()).node_infos())
    assert names == ["node-churn-2", "scheduler-perf-0"]
    assert [f.pod for f in s.unschedulable()] == ["churn/pod-2"]  # 9 cpu fits no node
    # while-gated: deletions walk the scheduled light pods of init templates 1 and 2, then stop
    for t in (1, 2):
        for i in range(2):
            pod = bench.light_pod("sched-0", i)
            pod["metadata"]["name"] = f"pod-{t}-{i}"
            pod["spec"]["nodeName"] = "scheduler-perf-0"
            s.add_pod(pod)
    for k in range(5):
        bench._delete_scheduled_light_pod(s, k, 2)
    assert all(s.cache.get_pod(bench.init_pod_key(t, i)) is None for t in (1, 2) for i in range(2))
