"""``berth bench cluster``: the embedded cluster's speed figures (printed, never asserted in tests).

* **up to ready** -- wall time from launching ``berth cluster up`` (a fresh interpreter) until ``/readyz`` answers
  200, and the in-process ``Cluster.start()`` part of it;
* **creates/s** -- ConfigMaps created through the official ``kubernetes`` client over HTTPS from one client
  process and from three (two threads each);
* **watch latency** -- from just before a create returns to the client to the matching event arriving on an
  official-client watch stream in the same process (p50/p99);
* **memory** -- resident set size of a ``berth cluster up`` process after creating N pods through the client.

Targets (issue 5): ready <= 1 s, >= 1,000 creates/s, watch p99 <= 20 ms, <= 500 MiB with 10,000 pods.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

TARGETS = {"ready_s": 1.0, "creates_per_s": 1000.0, "watch_p99_ms": 20.0, "memory_mib": 500.0}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _launch(
    data: Path, port: int, full_cli: bool = False, controllers: bool = True
) -> subprocess.Popen[bytes]:
    """``berth cluster up`` in a new process (``python -m berth.cluster up``, or through the whole berth CLI)."""
    entry = (
        ["-c", "import sys; from berth.cli import main; sys.exit(main(sys.argv[1:]))", "cluster"]
        if full_cli
        else ["-m", "berth.cluster"]
    )
    args = [
        sys.executable,
        *entry,
        "up",
        "--data",
        str(data),
        "--port",
        str(port),
        "--nodes",
        "0",
        *([] if controllers else ["--no-controllers"]),
    ]
    return subprocess.Popen(
        args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )


def _wait_ready(data: Path, port: int, deadline_s: float = 30.0) -> float:
    start = time.monotonic()
    ca = data / "pki" / "ca.crt"
    while time.monotonic() - start < deadline_s:
        if ca.is_file():
            try:
                ctx = ssl.create_default_context(cafile=str(ca))
                with urllib.request.urlopen(f"https://127.0.0.1:{port}/readyz", timeout=1, context=ctx) as r:
                    if r.status == 200:
                        return time.monotonic() - start
            except (OSError, ssl.SSLError):
                pass
        time.sleep(0.005)
    raise RuntimeError("cluster did not become ready")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _cpu_s(pid: int) -> float:
    """User+system CPU seconds a process has used (``/proc/<pid>/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _core(kubeconfig: Path) -> Any:
    from kubernetes import client as k8s

    from berth.kube import client as kube_client

    return k8s.CoreV1Api(kube_client.api_client(kubeconfig))


def _create_worker(args: tuple[str, int, int, int, str]) -> int:
    """One client process: ``threads`` official-client threads creating ConfigMaps ``index::procs``."""
    kubeconfig, n, index, procs, prefix = args
    threads = 2
    apis = [_core(Path(kubeconfig)) for _ in range(threads)]

    def work(t: int) -> int:
        done = 0
        for j in range(index * threads + t, n, procs * threads):
            resp = apis[t].create_namespaced_config_map(
                "default", {"metadata": {"name": f"{prefix}-{j}"}, "data": {"k": "v"}}, _preload_content=False
            )
            resp.read()
            resp.release_conn()
            done += 1
        return done

    with ThreadPoolExecutor(threads) as pool:
        return sum(pool.map(work, range(threads)))


def _create_many(kubeconfig: Path, n: int, procs: int, prefix: str) -> float:
    """Creates/s of ``n`` ConfigMaps from ``procs`` client processes (2 threads each; raw responses, so the
    figure measures the server rather than the client's model deserialisation)."""
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(procs) as pool:
        pool.map(_noop, range(procs))  # start the workers before timing
        start = time.perf_counter()
        total = sum(pool.map(_create_worker, [(str(kubeconfig), n, i, procs, prefix) for i in range(procs)]))
        return total / (time.perf_counter() - start)


def _noop(_: int) -> None:
    import kubernetes  # noqa: F401 - warm the import in the worker


def _watch_latency(kubeconfig: Path, n: int) -> tuple[float, float]:
    from kubernetes import watch

    core = _core(kubeconfig)
    sent: dict[str, float] = {}
    got: list[float] = []
    ready = threading.Event()
    done = threading.Event()
    rv = core.list_namespaced_config_map("default", limit=1).metadata.resource_version

    def consume() -> None:
        w = watch.Watch()  # type: ignore[no-untyped-call]
        ready.set()
        for ev in w.stream(  # type: ignore[no-untyped-call]
            _core(kubeconfig).list_namespaced_config_map,
            "default",
            resource_version=rv,
            label_selector="bench=watch",
            timeout_seconds=120,
            _request_timeout=130,
        ):
            name = ev["object"].metadata.name
            now = time.perf_counter()
            if name in sent:
                got.append((now - sent[name]) * 1000)
            if len(got) >= n:
                done.set()
                w.stop()  # type: ignore[no-untyped-call]
                return

    t = threading.Thread(target=consume, daemon=True)
    t.start()
    ready.wait()
    time.sleep(0.3)
    for i in range(n):
        name = f"watch-{i}"
        sent[name] = time.perf_counter()
        core.create_namespaced_config_map(
            "default", {"metadata": {"name": name, "labels": {"bench": "watch"}}}
        )
        time.sleep(0.005)
    done.wait(60)
    if not got:
        return float("nan"), float("nan")
    q = statistics.quantiles(got, n=100)
    return statistics.median(got), q[98]


def _create_pods(kubeconfig: Path, n: int, threads: int = 4) -> None:
    apis = [_core(kubeconfig) for _ in range(threads)]

    def work(i: int) -> None:
        for j in range(i, n, threads):
            resp = apis[i].create_namespaced_pod(
                "default",
                {
                    "metadata": {"name": f"pod-{j}", "labels": {"app": "bench", "shard": str(j % 10)}},
                    "spec": {
                        "containers": [
                            {
                                "name": "main",
                                "image": "registry.k8s.io/pause:3.10",
                                "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
                            }
                        ]
                    },
                },
                _preload_content=False,
            )
            resp.read()
            resp.release_conn()

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(work, range(threads)))


def run(pods: int = 10_000, creates: int = 2_000, controllers: bool = True) -> dict[str, Any]:
    """Measure every figure; returns them as a dict (see :func:`describe`)."""
    from berth.cluster import Cluster, ClusterOptions

    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="berth-bench-") as tmp:
        root = Path(tmp)
        # 1. up -> ready, a fresh process
        port = _free_port()
        proc = _launch(root / "up", port)
        try:
            figures["ready_s"] = _wait_ready(root / "up", port)
            figures["ready_cpu_s"] = _cpu_s(proc.pid)
        finally:
            _stop(proc)
        port = _free_port()
        proc = _launch(root / "up-cli", port, full_cli=True)
        try:
            figures["ready_full_cli_s"] = _wait_ready(root / "up-cli", port)
        finally:
            _stop(proc)
        t0 = time.perf_counter()
        c = Cluster(ClusterOptions(data_dir=root / "inproc", run_controllers=False)).start()
        figures["start_in_process_s"] = time.perf_counter() - t0
        c.stop()

        # 2-4. creates/s, watch latency, memory: against a separate server process
        port = _free_port()
        data = root / "load"
        proc = _launch(data, port, controllers=controllers)
        figures["controllers"] = controllers
        try:
            _wait_ready(data, port)
            kubeconfig = data / "kubeconfig"
            figures["rss_idle_mib"] = _rss_mib(proc.pid)
            figures["creates_per_s_1_thread"] = _create_many(kubeconfig, creates, 1, "one")
            cpu0 = _cpu_s(proc.pid)
            figures["creates_per_s_4_threads"] = _create_many(kubeconfig, creates, 3, "three")
            figures["server_cpu_ms_per_create"] = (_cpu_s(proc.pid) - cpu0) / creates * 1000
            p50, p99 = _watch_latency(kubeconfig, 300)
            figures["watch_p50_ms"], figures["watch_p99_ms"] = p50, p99
            t0 = time.perf_counter()
            _create_pods(kubeconfig, pods)
            figures["pods"] = pods
            figures["pods_create_s"] = time.perf_counter() - t0
            figures["memory_mib"] = _rss_mib(proc.pid)
        finally:
            _stop(proc)
    figures["creates_per_s"] = max(figures["creates_per_s_1_thread"], figures["creates_per_s_4_threads"])
    return figures


def describe(f: dict[str, Any]) -> list[str]:
    """Human-readable lines with the targets beside the figures."""

    def mark(ok: bool) -> str:
        return "ok" if ok else "MISSED"

    return [
        f"up -> ready (new process):   {f['ready_s']:.2f} s  (`berth cluster up`: {f['ready_full_cli_s']:.2f} s; "
        f"in-process start {f['start_in_process_s']:.2f} s; CPU used until ready {f['ready_cpu_s']:.2f} s)"
        f"  target <= {TARGETS['ready_s']:.0f} s  {mark(f['ready_s'] <= TARGETS['ready_s'])}",
        f"creates/s (official client): {f['creates_per_s_1_thread']:.0f} (1 process), "
        f"{f['creates_per_s_4_threads']:.0f} (3 processes)  target >= {TARGETS['creates_per_s']:.0f}  "
        f"{mark(f['creates_per_s'] >= TARGETS['creates_per_s'])}",
        f"server CPU per create:       {f['server_cpu_ms_per_create']:.2f} ms "
        f"(= {1000 / max(f['server_cpu_ms_per_create'], 1e-9):.0f} creates/s on one free core)",
        f"watch latency:               p50 {f['watch_p50_ms']:.1f} ms, p99 {f['watch_p99_ms']:.1f} ms  "
        f"target p99 <= {TARGETS['watch_p99_ms']:.0f} ms  {mark(f['watch_p99_ms'] <= TARGETS['watch_p99_ms'])}",
        f"memory with {f['pods']} pods:     {f['memory_mib']:.0f} MiB (idle {f['rss_idle_mib']:.0f} MiB; "
        f"pods created in {f['pods_create_s']:.1f} s)  target <= {TARGETS['memory_mib']:.0f} MiB  "
        f"{mark(f['memory_mib'] <= TARGETS['memory_mib'])}",
    ]


def main() -> None:  # pragma: no cover - manual entry point
    figures = run()
    print(json.dumps(figures, indent=2))
    for line in describe(figures):
        print(line)


if __name__ == "__main__":  # pragma: no cover
    with contextlib.suppress(KeyboardInterrupt):
        main()
    os._exit(0)
