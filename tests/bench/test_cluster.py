"""``berth bench cluster``'s create harness and its report (figures are printed, never asserted on speed)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from berth.bench import cluster as bench
from berth.cluster import Cluster, ClusterOptions


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    c = Cluster(ClusterOptions(data_dir=tmp_path_factory.mktemp("bench"), run_controllers=False)).start()
    yield c
    c.stop()


def test_create_many_creates_every_configmap_from_all_processes(cluster: Cluster) -> None:
    run = bench._create_many(cluster.kubeconfig, 12, 2, "harness")
    assert run.per_s > 0
    assert run.client_cpu_ms > 0
    assert cluster.api is not None
    items, _rv = cluster.api.list("configmaps", "default")
    names = {obj["metadata"]["name"] for obj in items if obj["metadata"]["name"].startswith("harness-")}
    # worker i of 2 creates indexes i, i+2, ...: together every index once
    assert names == {f"harness-{j}" for j in range(12)}


def _figures(per_s_trials: list[int], one: float) -> dict[str, object]:
    median = sorted(per_s_trials)[len(per_s_trials) // 2]
    return {
        "ready_s": 0.5,
        "ready_cpu_s": 0.4,
        "detach_s": 0.6,
        "module_ready_s": 0.5,
        "cold_ready_s": 0.9,
        "cold_ready_cpu_s": 0.8,
        "start_in_process_s": 0.1,
        "creates_per_s_1_process": one,
        "creates_per_s_processes": float(median),
        "creates_per_s_trials": per_s_trials,
        "creates_per_s": max(one, float(median)),
        "client_processes": 3,
        "server_cpu_ms_per_create": 0.65,
        "client_cpu_ms_per_create": 1.0,
        "watch_p50_ms": 3.0,
        "watch_p99_ms": 5.0,
        "pods": 10_000,
        "memory_mib": 380.0,
        "rss_idle_mib": 100.0,
        "pods_create_s": 20.0,
        "wal_mib": 4.0,
        "wal_peak_mib": 7.5,
        "running_nodes": 125,
        "running_pods": 10_000,
        "running_settle_s": 80.0,
        "running_memory_mib": 460.0,
    }


def test_report_names_every_trial_and_marks_a_missed_target() -> None:
    lines = bench.describe(_figures([930, 990, 1010], 700.0))
    creates = next(line for line in lines if line.startswith("creates/s"))
    assert "930/990/1010" in creates
    assert creates.endswith("MISSED")
    cpu = next(line for line in lines if line.startswith("CPU per create"))
    assert "server 0.65 ms" in cpu and "official client 1.00 ms" in cpu


def test_report_marks_a_met_target_ok() -> None:
    lines = bench.describe(_figures([1010, 1040, 1100], 700.0))
    creates = next(line for line in lines if line.startswith("creates/s"))
    assert creates.endswith("ok")


def test_report_gives_the_wal_size_after_the_pods_and_its_largest() -> None:
    lines = bench.describe(_figures([1010, 1040, 1100], 700.0))
    wal = next(line for line in lines if line.startswith("SQLite WAL"))
    assert "4.0 MiB" in wal and "7.5 MiB" in wal


def test_memory_target_is_judged_with_every_pod_running() -> None:
    """The pending-pods figure is informative; the target line is the cluster where all the pods run, and it is
    missed when they do not all run, whatever the memory."""
    f = _figures([1010, 1040, 1100], 700.0)
    lines = bench.describe(f)
    pending = next(line for line in lines if line.startswith("memory with"))
    assert "380 MiB pending" in pending and "target" not in pending
    running = next(line for line in lines if "running:" in line)
    assert "460 MiB with 10000 pods Running on 125 nodes" in running and running.endswith("ok")
    short = bench.describe({**f, "running_pods": 9_000})
    assert next(line for line in short if "running:" in line).endswith("MISSED")
    heavy = bench.describe({**f, "running_memory_mib": 640.0})
    assert next(line for line in heavy if "running:" in line).endswith("MISSED")


def test_wal_watch_keeps_the_largest_size_seen(tmp_path: Path) -> None:
    path = tmp_path / "f"
    with bench._WalWatch(path) as watch:
        path.write_bytes(b"x" * (3 << 20))
        deadline = time.monotonic() + 10
        while watch.peak_mib < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        path.write_bytes(b"x")
        time.sleep(0.05)
    assert watch.peak_mib == 3.0
