"""``berth bench cluster``: the embedded cluster's speed figures (printed, never asserted in tests).

* **up to usable** -- wall time from launching ``berth cluster up`` (a fresh interpreter, the ``berth`` console
  script's entry point) until its kubeconfig works: ``DIR/kubeconfig`` exists, its CA verifies the server,
  ``/readyz`` is 200 and its token is accepted. Median of three, with bytecode cached (as after ``pip install`` or
  any earlier start); also ``--detach`` (until the command returns), ``python -m berth.cluster up``, a start
  without cached bytecode, and the in-process ``Cluster.start()``;
* **creates/s** -- ConfigMaps created through the official ``kubernetes`` client over HTTPS from one client
  process and from three (the three-process run is repeated and its median reported: one run on a shared
  2-core machine varies by +-15%), once the server is idle after start-up (the built-in default-scheduler starts
  in the background after ready). Each process opens its connection first and all start together; the clock runs from
  the first create to the last response, so client start-up and TLS handshakes are not counted. On a 2-core
  machine the three clients and the server share the cores: the client's ~1 ms of CPU per request is as much of
  the figure as the server's. The client builds and sends every request as usual
  (``create_namespaced_config_map``) but is asked for the raw response (``_preload_content=False``), which it reads
  whole: the server does all its work, the client skips turning each response into model objects -- so the figure
  is the server's capacity as the official client reaches it, not the client's deserialisation speed. The server's
  CPU per create (from ``/proc``) and the client processes' are reported beside it: their sum, against the
  machine's cores, is the ceiling;
* **watch latency** -- from just before a create returns to the client to the matching event arriving on an
  official-client watch stream in the same process (p50/p99);
* **memory** -- resident set size of a ``berth cluster up`` process after creating N pods through the client,
  and the size of its SQLite WAL file then and at its largest while they were created; then, the figure the target
  is about, in a second cluster with room for every pod (``--nodes N/80``: 8 cpu per node, 100m per pod), once the
  pods are scheduled, started and the server is idle again (a running pod is twice a pending pod's size, and the
  controllers' and the default-scheduler's caches hold each one).

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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple

RUNS = 3
TARGETS = {"ready_s": 1.0, "creates_per_s": 1000.0, "watch_p99_ms": 20.0, "memory_mib": 500.0}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env(pycache: Path | None) -> dict[str, str]:
    """The environment of a measured ``up``: as given, or with bytecode cached under ``pycache``.

    With ``pycache`` the process reads and writes compiled bytecode there (``PYTHONPYCACHEPREFIX``), as any
    installed berth has it after ``pip install`` or its first run; without, it runs as this environment says (on
    a machine with ``PYTHONDONTWRITEBYTECODE=1`` every start compiles berth's sources again).
    """
    env = dict(os.environ)
    if pycache is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    return env


BERTH = ["-c", "import sys; from berth.entry import main; sys.exit(main())", "cluster"]
"""``berth cluster ...`` exactly as the console script runs it (``berth.entry:main``)."""


def _up_args(
    data: Path, port: int, entry: list[str], controllers: bool = True, detach: bool = False, nodes: int = 0
) -> list[str]:
    return [
        sys.executable,
        *entry,
        "up",
        "--data",
        str(data),
        "--port",
        str(port),
        "--nodes",
        str(nodes),
        *([] if controllers else ["--no-controllers"]),
        *(["--detach"] if detach else []),
    ]


def _launch(
    data: Path,
    port: int,
    full_cli: bool = True,
    controllers: bool = True,
    env: dict[str, str] | None = None,
    nodes: int = 0,
) -> subprocess.Popen[bytes]:
    """``berth cluster up`` in a new process (through the berth CLI, or ``python -m berth.cluster up``)."""
    entry = BERTH if full_cli else ["-m", "berth.cluster"]
    return subprocess.Popen(
        _up_args(data, port, entry, controllers, nodes=nodes),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env=env,
    )


def _usable(data: Path) -> bool:
    """True when ``DIR/kubeconfig`` works: its CA verifies the server, ``/readyz`` is 200 and its token is
    accepted (``GET /api``) -- what a user's first ``kubectl`` needs."""
    import base64
    import http.client

    from berth.kube import kubeconfig
    from berth.kube.errors import BerthError

    path = data / "kubeconfig"
    if not path.is_file():
        return False
    try:
        config = kubeconfig.load(path)
        cluster = config["clusters"][0]["cluster"]
        token = config["users"][0]["user"]["token"]
        ca = base64.b64decode(cluster["certificate-authority-data"]).decode()
        host, _, port = str(cluster["server"]).removeprefix("https://").partition(":")
        conn = http.client.HTTPSConnection(
            host, int(port), timeout=1, context=ssl.create_default_context(cadata=ca)
        )
        try:
            conn.request("GET", "/readyz")
            resp = conn.getresponse()
            resp.read()
            if resp.status != 200:
                return False
            conn.request("GET", "/api", headers={"Authorization": f"Bearer {token}"})
            resp = conn.getresponse()
            resp.read()
            return resp.status == 200
        finally:
            conn.close()
    except (OSError, ValueError, LookupError, TypeError, http.client.HTTPException, BerthError):
        return False  # not written yet, half written, or not serving yet


def _wait_ready(data: Path, start: float, deadline_s: float = 30.0) -> float:
    """Seconds from ``start`` (``time.monotonic()`` before the process was launched) until :func:`_usable`."""
    while time.monotonic() - start < deadline_s:
        if _usable(data):
            return time.monotonic() - start
        time.sleep(0.005)
    raise RuntimeError("cluster did not become ready")


def _time_up(
    root: Path, name: str, full_cli: bool, controllers: bool, env: dict[str, str] | None
) -> tuple[float, float]:
    """(seconds to usable, CPU seconds the process used by then) of one foreground ``up``."""
    data = root / name
    t0 = time.monotonic()
    proc = _launch(data, _free_port(), full_cli=full_cli, controllers=controllers, env=env)
    try:
        return _wait_ready(data, t0), _cpu_s(proc.pid)
    finally:
        _stop(proc)


def _time_detach(root: Path, name: str, env: dict[str, str] | None) -> float:
    """Seconds until ``berth cluster up --detach`` returns (it returns once the cluster is ready)."""
    data = root / name
    t0 = time.monotonic()
    done = subprocess.run(
        _up_args(data, _free_port(), BERTH, detach=True), capture_output=True, env=env, timeout=60
    )
    elapsed = time.monotonic() - t0
    try:
        if done.returncode != 0 or not _usable(data):
            raise RuntimeError(f"`berth cluster up --detach` failed: {done.stderr.decode(errors='replace')}")
    finally:
        info = json.loads((data / "server.json").read_text()) if (data / "server.json").is_file() else {}
        if info.get("pid"):
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(info["pid"]), signal.SIGTERM)
            deadline = time.monotonic() + 10
            while (data / "server.json").exists() and time.monotonic() < deadline:
                time.sleep(0.02)
    return elapsed


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _settle(pid: int, timeout: float = 60.0) -> float:
    """Wait until the server is idle (under 10 % of a core over half a second): ``up`` reports ready before the
    built-in default-scheduler has started in the background, and its start-up (seconds of imports) must not be
    billed to the create figures. Returns the seconds waited."""
    start = time.monotonic()
    before = _cpu_s(pid)
    while time.monotonic() - start < timeout:
        time.sleep(0.5)
        now = _cpu_s(pid)
        if now - before < 0.05:
            break
        before = now
    return time.monotonic() - start


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _file_mib(path: Path) -> float:
    try:
        return path.stat().st_size / 2**20
    except OSError:
        return 0.0


class _WalWatch:
    """The largest size a file reaches while the block runs (sampled every 10 ms on a thread)."""

    def __init__(self, path: Path) -> None:
        self.path, self.peak_mib = path, 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.01):
            self.peak_mib = max(self.peak_mib, _file_mib(self.path))

    def __enter__(self) -> _WalWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _cpu_s(pid: int) -> float:
    """User+system CPU seconds a process has used (``/proc/<pid>/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _core(kubeconfig: Path) -> Any:
    from kubernetes import client as k8s

    from berth.kube import client as kube_client

    return k8s.CoreV1Api(kube_client.api_client(kubeconfig))


CLIENT_PROCESSES = 3
TRIALS = 3

_start_line: Any = None  # the pool workers' shared barrier (set by _join_start_line in each worker)


def _join_start_line(barrier: Any) -> None:
    global _start_line
    _start_line = barrier
    import kubernetes  # noqa: F401 - the import (about a second of CPU) happens before the clock starts


def _create_worker(args: tuple[str, int, int, int, str]) -> tuple[float, float, int, float]:
    """One client process: one official-client connection creating ConfigMaps ``index::procs``.

    The client is built and its connection opened (TLS handshake, one warm-up request) first; then every worker
    waits at the start line, so the clock covers creates only -- not interpreter start-up, imports or handshakes,
    which a long-lived client pays once. Returns (start, end, creates, client CPU seconds) on the shared monotonic
    clock."""
    kubeconfig, n, index, procs, prefix = args
    api = _core(Path(kubeconfig))
    api.list_namespaced_config_map("default", limit=1, _preload_content=False).read()
    _start_line.wait()
    start, cpu = time.perf_counter(), time.process_time()
    done = 0
    for j in range(index, n, procs):
        resp = api.create_namespaced_config_map(
            "default", {"metadata": {"name": f"{prefix}-{j}"}, "data": {"k": "v"}}, _preload_content=False
        )
        resp.read()
        resp.release_conn()
        done += 1
    return start, time.perf_counter(), done, time.process_time() - cpu


class CreateRun(NamedTuple):
    """One timed run of :func:`_create_many`."""

    per_s: float
    client_cpu_ms: float
    """The client processes' CPU per create (all of them, together)."""


def _create_many(kubeconfig: Path, n: int, procs: int, prefix: str) -> CreateRun:
    """Creates/s of ``n`` ConfigMaps from ``procs`` client processes started together (raw responses, so the figure
    measures the server rather than the client's model deserialisation): creates over the span from the first
    worker's start to the last one's end."""
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(procs)
    with ctx.Pool(procs, initializer=_join_start_line, initargs=(barrier,)) as pool:
        spans = pool.map(
            _create_worker, [(str(kubeconfig), n, i, procs, prefix) for i in range(procs)], chunksize=1
        )
    total = sum(s[2] for s in spans)
    wall = max(s[1] for s in spans) - min(s[0] for s in spans)
    return CreateRun(total / wall, sum(s[3] for s in spans) / max(total, 1) * 1000)


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


PODS_PER_NODE = 80  # a node's 8 cpu / the bench pod's 100m


def _running_memory(data: Path, pods: int, env: dict[str, str]) -> dict[str, Any]:
    """RSS of a cluster with room for ``pods`` once they run and the server is idle again; also how many ran."""
    nodes = -(-pods // PODS_PER_NODE)
    t0 = time.monotonic()
    proc = _launch(data, _free_port(), env=env, nodes=nodes)
    try:
        _wait_ready(data, t0)
        _settle(proc.pid)
        kubeconfig = data / "kubeconfig"
        t0 = time.perf_counter()
        _create_pods(kubeconfig, pods)
        _settle(proc.pid, timeout=300.0)
        out: dict[str, Any] = {
            "running_nodes": nodes,
            "running_settle_s": time.perf_counter() - t0,
            "running_memory_mib": _rss_mib(proc.pid),
        }
        listed = _core(kubeconfig).list_namespaced_pod(
            "default", field_selector="status.phase=Running", _preload_content=False
        )
        out["running_pods"] = len(json.loads(listed.read()).get("items") or [])
        return out
    finally:
        _stop(proc)


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
        # 1. up -> usable, a fresh process each time (median of RUNS): warm (bytecode cached, as after install or
        # any earlier run; the first, warming run is not counted) and as this environment runs it.
        warm = _env(root / "pycache")
        _time_up(root, "warm-up", True, True, warm)
        runs = {
            "ready": [_time_up(root, f"up-{i}", True, True, warm) for i in range(RUNS)],
            "module": [_time_up(root, f"module-{i}", False, True, warm) for i in range(RUNS)],
            "cold": [_time_up(root, f"cold-{i}", True, True, None) for i in range(RUNS)],
        }
        for key, values in runs.items():
            figures[f"{key}_runs_s"] = [round(v[0], 3) for v in values]
            figures[f"{key}_s"] = statistics.median(v[0] for v in values)
            figures[f"{key}_cpu_s"] = statistics.median(v[1] for v in values)
        figures["module_ready_s"] = figures.pop("module_s")
        figures["module_ready_cpu_s"] = figures.pop("module_cpu_s")
        figures["cold_ready_s"] = figures.pop("cold_s")
        figures["cold_ready_cpu_s"] = figures.pop("cold_cpu_s")
        detach = [_time_detach(root, f"detach-{i}", warm) for i in range(RUNS)]
        figures["detach_runs_s"] = [round(v, 3) for v in detach]
        figures["detach_s"] = statistics.median(detach)
        t0 = time.perf_counter()
        c = Cluster(ClusterOptions(data_dir=root / "inproc", run_controllers=False)).start()
        figures["start_in_process_s"] = time.perf_counter() - t0
        c.stop()

        # 2-4. creates/s, watch latency, memory: against a separate server process
        data = root / "load"
        t0 = time.monotonic()
        proc = _launch(data, _free_port(), controllers=controllers, env=warm)
        figures["controllers"] = controllers
        try:
            _wait_ready(data, t0)
            figures["settle_s"] = _settle(proc.pid)
            kubeconfig = data / "kubeconfig"
            figures["rss_idle_mib"] = _rss_mib(proc.pid)
            figures["creates_per_s_1_process"] = _create_many(kubeconfig, creates, 1, "one").per_s
            # The same run TRIALS times, median reported: on a shared 2-core machine one run varies by +-15%.
            cpu0 = _cpu_s(proc.pid)
            trials = [_create_many(kubeconfig, creates, CLIENT_PROCESSES, f"many{i}") for i in range(TRIALS)]
            figures["creates_per_s_trials"] = [round(t.per_s) for t in trials]
            figures["creates_per_s_processes"] = statistics.median(t.per_s for t in trials)
            figures["client_processes"] = CLIENT_PROCESSES
            figures["server_cpu_ms_per_create"] = (_cpu_s(proc.pid) - cpu0) / (creates * TRIALS) * 1000
            figures["client_cpu_ms_per_create"] = statistics.median(t.client_cpu_ms for t in trials)
            p50, p99 = _watch_latency(kubeconfig, 300)
            figures["watch_p50_ms"], figures["watch_p99_ms"] = p50, p99
            t0 = time.perf_counter()
            with _WalWatch(data / "store.db-wal") as wal:
                _create_pods(kubeconfig, pods)
            figures["pods"] = pods
            figures["pods_create_s"] = time.perf_counter() - t0
            figures["memory_mib"] = _rss_mib(proc.pid)
            figures["wal_mib"] = _file_mib(data / "store.db-wal")
            figures["wal_peak_mib"] = max(wal.peak_mib, figures["wal_mib"])
        finally:
            _stop(proc)
        if controllers:
            figures.update(_running_memory(root / "running", pods, warm))
    figures["creates_per_s"] = max(figures["creates_per_s_1_process"], figures["creates_per_s_processes"])
    return figures


def describe(f: dict[str, Any]) -> list[str]:
    """Human-readable lines with the targets beside the figures."""

    def mark(ok: bool) -> str:
        return "ok" if ok else "MISSED"

    return [
        f"`berth cluster up` -> usable: {f['ready_s']:.2f} s (median of {RUNS}; CPU {f['ready_cpu_s']:.2f} s)  "
        f"target <= {TARGETS['ready_s']:.0f} s  {mark(f['ready_s'] <= TARGETS['ready_s'])}",
        f"  --detach returns {f['detach_s']:.2f} s; `python -m berth.cluster up` {f['module_ready_s']:.2f} s; "
        f"without cached bytecode {f['cold_ready_s']:.2f} s (CPU {f['cold_ready_cpu_s']:.2f} s); "
        f"in-process start {f['start_in_process_s']:.2f} s",
        f"creates/s (official client): {f['creates_per_s_1_process']:.0f} (1 process), "
        f"{f['creates_per_s_processes']:.0f} ({f['client_processes']} processes, median of "
        f"{'/'.join(str(t) for t in f['creates_per_s_trials'])})  "
        f"target >= {TARGETS['creates_per_s']:.0f}  "
        f"{mark(f['creates_per_s'] >= TARGETS['creates_per_s'])}",
        f"CPU per create:              server {f['server_cpu_ms_per_create']:.2f} ms "
        f"(= {1000 / max(f['server_cpu_ms_per_create'], 1e-9):.0f} creates/s on one free core), "
        f"official client {f['client_cpu_ms_per_create']:.2f} ms",
        f"watch latency:               p50 {f['watch_p50_ms']:.1f} ms, p99 {f['watch_p99_ms']:.1f} ms  "
        f"target p99 <= {TARGETS['watch_p99_ms']:.0f} ms  {mark(f['watch_p99_ms'] <= TARGETS['watch_p99_ms'])}",
        f"memory with {f['pods']} pods:     {f['memory_mib']:.0f} MiB pending, no nodes (idle "
        f"{f['rss_idle_mib']:.0f} MiB; pods created in {f['pods_create_s']:.1f} s)",
        *(
            [
                f"  ... running:               {f['running_memory_mib']:.0f} MiB with {f['running_pods']} pods "
                f"Running on {f['running_nodes']} nodes (created, scheduled and started in "
                f"{f['running_settle_s']:.1f} s)  target <= {TARGETS['memory_mib']:.0f} MiB  "
                f"{mark(f['running_memory_mib'] <= TARGETS['memory_mib'] and f['running_pods'] >= f['pods'])}"
            ]
            if "running_memory_mib" in f
            else []
        ),
        f"SQLite WAL after the pods:   {f['wal_mib']:.1f} MiB (largest while they were created "
        f"{f['wal_peak_mib']:.1f} MiB)",
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
