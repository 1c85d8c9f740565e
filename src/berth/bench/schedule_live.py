"""``berth bench schedule --live``: pods per second bound through the API of the embedded cluster.

Why a live benchmark besides the simulation's: live, every placement also costs a ``pods/binding`` request, a
``Scheduled`` Event and the pod informer's updates, all through HTTPS and the official client. The workload is
scheduler_perf's SchedulingBasic shape: ``nodes`` nodes (4 cpu, 32Gi, 110 pods), ``pods`` pause pods
(100m / 500Mi) created before the scheduler starts (not timed); timed is the span from the scheduler's informers
having synced to the last successful binding; the CPU of both processes is counted until the last pod's
``Scheduled`` Event is written as well (Events are posted in the background, so they may finish later).

The cluster runs in its own process (as an API server would), so the scheduler's Python and the server's Python do
not share one interpreter lock; as in scheduler_perf its nodes have no kubelet (bound pods stay as bound -- the
benchmark is about binding) and no heartbeat, and the audit log is off.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from berth.kube import client as kube_client
from berth.schedule import config as config_mod
from berth.schedule.live import api, events
from berth.schedule.live.run import LiveOptions, LiveScheduler
from berth.schedule.plugins import registry as registry_mod

PROFILE = "bench-live"
WORKLOAD = "SchedulingBasic (live)"


def serve_cluster(argv: list[str] | None = None) -> None:
    """Child-process entry: ``DATA_DIR NODES``; runs the embedded cluster until SIGTERM."""
    import signal
    import threading

    from berth.cliopts import settle_gc
    from berth.cluster import Cluster, ClusterOptions

    data_dir, nodes = (argv if argv is not None else sys.argv[1:])[:2]
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    options = ClusterOptions(
        data_dir=data_dir,
        nodes=int(nodes),
        node_cpu="4",
        node_memory="32Gi",
        node_pods="110",
        # As scheduler_perf: nodes are objects without kubelets -- no pod lifecycle, no per-node heartbeat Lease
        # (1,000 nodes renewing every 10 s would be 100 Lease updates a second of background load on the server);
        # no audit log (kube-apiserver's default).
        controller_overrides={
            "events": False,
            "disabled": frozenset({"kubelet"}),
            "heartbeat_interval": 24 * 3600.0,
        },
        audit=False,
    )
    with Cluster(options):
        settle_gc()  # as `berth cluster up` runs its process
        print("ready", flush=True)
        stop.wait()


def _pod(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"pod-{i:06d}", "namespace": "default", "labels": {"app": "bench"}},
        "spec": {
            "schedulerName": PROFILE,
            "containers": [
                {
                    "name": "pause",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}},
                }
            ],
        },
    }


def bench_live(nodes: int = 1000, pods: int = 1000, timeout: float = 600.0) -> dict[str, Any]:
    """Run the benchmark; returns ``{workload, nodes, pods, scheduled, seconds, podsPerSecond, ...}``."""
    with tempfile.TemporaryDirectory(prefix="berth-bench-live-") as tmp:
        data = Path(tmp) / "data"
        code = "from berth.bench.schedule_live import serve_cluster; serve_cluster()"
        server = subprocess.Popen(
            [sys.executable, "-c", code, str(data), str(nodes)], stdout=subprocess.PIPE, text=True
        )
        try:
            assert server.stdout is not None
            if server.stdout.readline().strip() != "ready":
                raise RuntimeError("the embedded cluster did not start (see its output above)")
            kubeconfig = data / "kubeconfig"
            client = kube_client.api_client(kubeconfig)
            try:
                _wait_nodes(client, nodes)
                with ThreadPoolExecutor(4) as pool:
                    list(
                        pool.map(
                            lambda i: api.call(
                                client, "POST", "/api/v1/namespaces/default/pods", body=_pod(i)
                            ),
                            range(pods),
                        )
                    )
            finally:
                client.close()
            reg = registry_mod.default_registry()
            cfg = config_mod.default_config(reg)
            cfg = dataclasses.replace(
                cfg, profiles=(dataclasses.replace(cfg.profiles[0], scheduler_name=PROFILE),)
            )
            # settle_gc as `berth schedule run` sets it: the benchmark times that process.
            options = LiveOptions(kubeconfig=str(kubeconfig), seed=1, settle_gc=True)
            sched = LiveScheduler(cfg, reg, options)
            sched.start()
            try:
                if not sched.wait_synced(300):
                    raise RuntimeError("the scheduler's informers did not sync within 300 s")
                t0 = time.perf_counter()
                cpu0 = time.process_time()
                threads0 = thread_cpu()
                server_cpu0 = _process_cpu(server.pid)
                deadline = time.monotonic() + timeout
                while (
                    len(sched.binder.bound) < pods
                    and time.monotonic() < deadline
                    and not sched.stop_event.is_set()
                ):
                    time.sleep(0.01)
                seconds = time.perf_counter() - t0
                scheduled = len(sched.binder.bound)
                # Events are posted in the background (as upstream's broadcaster does): how many kept up, and then
                # the CPU both sides spend until the last one is posted too -- a Scheduled Event per pod is part of
                # the work, so the CPU figures count all of them, however late.
                recorder = sched.recorder
                events_posted = recorder.posted if recorder is not None else 0
                while (
                    recorder is not None
                    and time.monotonic() < deadline
                    and _events_pending(recorder, scheduled)
                ):
                    time.sleep(0.01)
                events_seconds = time.perf_counter() - t0
                cpu = time.process_time() - cpu0
                server_cpu = _process_cpu(server.pid) - server_cpu0
                where = _where(threads0, thread_cpu(), cpu)
                events_total = recorder.posted if recorder is not None else 0
                conflicts, errors = sched.binder.conflicts, sched.binder.errors
            finally:
                sched.stop()
        finally:
            server.terminate()
            try:
                server.wait(60)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
    return {
        "workload": WORKLOAD,
        "nodes": nodes,
        "pods": pods,
        "scheduled": scheduled,
        "seconds": round(seconds, 3),
        "podsPerSecond": round(scheduled / seconds, 1) if seconds > 0 else 0.0,
        "schedulerCpuSeconds": round(cpu, 2),
        "serverCpuSeconds": round(server_cpu, 2),
        "schedulerCpuMsPerPod": round(1000 * cpu / scheduled, 3) if scheduled else None,
        "serverCpuMsPerPod": round(1000 * server_cpu / scheduled, 3) if scheduled else None,
        # Where the scheduler's CPU went while timed, by thread role (ms per pod).
        "schedulerCpuMsPerPodByPart": {
            part: round(1000 * sec / scheduled, 3) if scheduled else None for part, sec in where.items()
        },
        "eventsPostedWhileTimed": events_posted,
        "eventsPosted": events_total,
        "eventsDoneSeconds": round(events_seconds, 3),
        "bindConflicts": conflicts,
        "bindErrors": errors,
    }


# Thread name prefix -> the part of the scheduler it is (see berth.schedule.live.run for the threads).
_PARTS = (
    ("scheduling-loop", "cycle"),
    ("informer-", "informers"),
    ("binder", "binder"),
    ("event-", "events"),
)


def thread_cpu() -> dict[str, float]:
    """User + system CPU seconds of each live thread of this process, by thread name (Linux ``/proc``)."""
    out: dict[str, float] = {}
    ticks = os.sysconf("SC_CLK_TCK")
    for thread in threading.enumerate():
        tid = thread.native_id
        try:
            fields = Path(f"/proc/self/task/{tid}/stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[thread.name] = out.get(thread.name, 0.0) + (int(fields[11]) + int(fields[12])) / ticks
    return out


def _where(before: dict[str, float], after: dict[str, float], total: float) -> dict[str, float]:
    """CPU seconds per scheduler part between two :func:`thread_cpu` readings; ``other`` is the rest of the
    process (the main thread, metrics, threads that ended)."""
    parts = {part: 0.0 for _, part in _PARTS}
    for name, cpu in after.items():
        part = next((p for prefix, p in _PARTS if name.startswith(prefix)), None)
        if part is not None:
            parts[part] += cpu - before.get(name, 0.0)
    parts["other"] = max(0.0, total - sum(parts.values()))
    return parts


def _events_pending(recorder: events.EventRecorder, scheduled: int) -> bool:
    """Are Scheduled Events of the bound pods still to be written (queued, or not answered yet)?"""
    return recorder.pending > 0 or recorder.posted + recorder.failed + recorder.dropped < scheduled


def _process_cpu(pid: int) -> float:
    """User + system CPU seconds of another process (Linux ``/proc``; 0.0 where there is none): the cluster's
    share of the work, which a machine shared with other jobs hides in wall time."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def _wait_nodes(client: Any, nodes: int) -> None:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        items = api.call(client, "GET", "/api/v1/nodes").get("items") or []
        if len(items) >= nodes:
            return
        time.sleep(0.2)
    raise RuntimeError(f"the embedded cluster did not register {nodes} nodes within 300 s")


def format_result(result: dict[str, Any]) -> str:
    """The one-line text form of :func:`bench_live`'s result."""
    parts = ", ".join(f"{k} {v}" for k, v in (result.get("schedulerCpuMsPerPodByPart") or {}).items())
    return (
        f"{result['workload']}: {result['nodes']} nodes, {result['scheduled']}/{result['pods']} pods bound through "
        f"the API in {result['seconds']:.2f}s = {result['podsPerSecond']:.0f} pods/s "
        f"(CPU while timed: scheduler {result['schedulerCpuSeconds']:.2f}s = "
        f"{result['schedulerCpuMsPerPod']} ms/pod [{parts}], API server "
        f"{result['serverCpuSeconds']:.2f}s = {result['serverCpuMsPerPod']} ms/pod; "
        f"Scheduled events posted meanwhile {result['eventsPostedWhileTimed']}, all "
        f"{result['eventsPosted']} after {result['eventsDoneSeconds']:.2f}s (CPU counted until then); "
        f"bind conflicts {result['bindConflicts']}, "
        f"errors {result['bindErrors']})"
    )
