"""The live benchmark runs end to end on a small cluster and reports every pod bound (speed is not asserted)."""

from __future__ import annotations

from berth.bench.schedule_live import bench_live, format_result


def test_bench_live_small() -> None:
    result = bench_live(nodes=5, pods=20)
    assert {
        k: result[k] for k in ("workload", "nodes", "pods", "scheduled", "bindConflicts", "bindErrors")
    } == {
        "workload": "SchedulingBasic (live)",
        "nodes": 5,
        "pods": 20,
        "scheduled": 20,
        "bindConflicts": 0,
        "bindErrors": 0,
    }
    assert result["seconds"] > 0 and result["podsPerSecond"] > 0
    assert format_result(result).startswith(
        "SchedulingBasic (live): 5 nodes, 20/20 pods bound through the API in "
    )
    # CPU per pod for each side, and where the scheduler's went, by part (they add up to the whole).
    parts = result["schedulerCpuMsPerPodByPart"]
    assert set(parts) == {"cycle", "informers", "binder", "events", "other"}
    assert all(v >= 0 for v in parts.values())
    assert (
        abs(sum(parts.values()) - result["schedulerCpuMsPerPod"])
        < 0.01 + 0.01 * result["schedulerCpuMsPerPod"]
    )
    # The server's CPU is read from /proc in clock ticks (10 ms): 20 pods may cost it less than one tick.
    assert isinstance(result["serverCpuMsPerPod"], float) and result["serverCpuMsPerPod"] >= 0
    # The CPU window runs until every pod's Scheduled Event is written.
    assert result["eventsPosted"] == 20 and result["eventsDoneSeconds"] >= result["seconds"]
    assert "ms/pod [cycle " in format_result(result)
