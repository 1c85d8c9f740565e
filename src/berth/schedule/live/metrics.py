"""Prometheus metrics and the health endpoints of the live scheduler: ``/metrics``, ``/healthz``, ``/readyz``.

Why: a scheduler in a cluster is watched through its metrics (is the queue growing? are attempts failing?) and
probed by the kubelet. Names and labels follow kube-scheduler's, so existing dashboards read them:

- ``scheduler_pending_pods{queue="active|backoff|unschedulable|gated"}``: queue depth, read at scrape time;
- ``scheduler_schedule_attempts_total{result, profile}``: every cycle, by outcome (scheduled, unschedulable, error);
- ``scheduler_scheduling_attempt_duration_seconds{result, profile}``: one cycle (incl. the binding call);
- ``scheduler_pod_scheduling_sli_duration_seconds{attempts}``: end to end, from the scheduler first seeing a pod
  pending to its successful binding, over all attempts;
- ``berth_scheduler_leader``: 1 while this process holds the lease (or runs without leader election);
- ``berth_scheduler_informer_relists_total{resource}``: re-lists after a 410 or a broken watch.

Each scheduler gets its own registry (tests run several in one process). ``/healthz`` is 200 while the scheduling
loop is alive; ``/readyz`` is 200 once every informer has synced (a standby replica is ready: it can take over).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
DURATION_BUCKETS = (
    0.001,
    0.002,
    0.004,
    0.008,
    0.016,
    0.032,
    0.064,
    0.128,
    0.256,
    0.512,
    1.024,
    2.048,
    4.096,
    8.192,
    16.384,
)
SLI_BUCKETS = (
    0.01,
    0.02,
    0.04,
    0.08,
    0.16,
    0.32,
    0.64,
    1.28,
    2.56,
    5.12,
    10.24,
    20.48,
    40.96,
    81.92,
    163.84,
    327.68,
)


class _Live(Collector):
    """Values read at scrape time from the running scheduler."""

    def __init__(
        self, queue_counts: Callable[[], Mapping[str, int]], relists: Callable[[], Mapping[str, int]]
    ) -> None:
        self._queue_counts = queue_counts
        self._relists = relists

    def collect(self) -> Iterable[Any]:
        pending = GaugeMetricFamily(
            "scheduler_pending_pods", "Number of pending pods, by the queue type.", labels=["queue"]
        )
        for queue, count in sorted(self._queue_counts().items()):
            pending.add_metric([queue], count)
        yield pending
        relists = GaugeMetricFamily(
            "berth_scheduler_informer_relists_total",
            "Re-lists of an informer after its watch could not resume (410 Gone or an error before any watch).",
            labels=["resource"],
        )
        for resource, count in sorted(self._relists().items()):
            relists.add_metric([resource], count)
        yield relists


class Metrics:
    """The scheduler's metrics in their own registry."""

    def __init__(
        self,
        queue_counts: Callable[[], Mapping[str, int]],
        relists: Callable[[], Mapping[str, int]] = dict,
    ) -> None:
        self.registry = CollectorRegistry()
        self.attempts = Counter(
            "scheduler_schedule_attempts",
            "Number of attempts to schedule pods, by the result and the profile.",
            ["result", "profile"],
            registry=self.registry,
        )
        self.attempt_duration = Histogram(
            "scheduler_scheduling_attempt_duration_seconds",
            "Scheduling attempt latency in seconds (scheduling algorithm + binding).",
            ["result", "profile"],
            buckets=DURATION_BUCKETS,
            registry=self.registry,
        )
        self.e2e = Histogram(
            "scheduler_pod_scheduling_sli_duration_seconds",
            "E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue to its "
            "successful binding, possibly over multiple attempts.",
            ["attempts"],
            buckets=SLI_BUCKETS,
            registry=self.registry,
        )
        self.shadow = Counter(
            "berth_shadow_decisions",
            "berth schedule shadow: pods another scheduler bound, by what this configuration would have done.",
            ["verdict", "profile"],
            registry=self.registry,
        )
        self.leader = Gauge(
            "berth_scheduler_leader",
            "1 while this scheduler may schedule (holds the lease).",
            registry=self.registry,
        )
        self.registry.register(_Live(queue_counts, relists))
        # Labelled children by label values: ``labels()`` checks its arguments and takes a lock on every call, and
        # the scheduling loop records two or three samples per pod with label values that repeat.
        self._attempt_children: dict[tuple[str, str], tuple[Any, Any]] = {}
        self._e2e_children: dict[int, Any] = {}

    def attempt(self, result: str, profile: str, seconds: float | None) -> None:
        """Count one scheduling attempt; ``seconds`` (its duration) is observed unless None."""
        pair = self._attempt_children.get((result, profile))
        if pair is None:
            pair = (self.attempts.labels(result, profile), self.attempt_duration.labels(result, profile))
            self._attempt_children[(result, profile)] = pair
        pair[0].inc()
        if seconds is not None:
            pair[1].observe(seconds)

    def scheduled(self, attempts: int, seconds: float) -> None:
        """A pod bound after ``attempts`` attempts, ``seconds`` after it was first seen (counted up to 15)."""
        attempts = min(attempts, 15)
        child = self._e2e_children.get(attempts)
        if child is None:
            child = self._e2e_children[attempts] = self.e2e.labels(str(attempts))
        child.observe(seconds)

    def render(self) -> bytes:
        return generate_latest(self.registry)


class HealthServer:
    """Serves ``/metrics``, ``/healthz`` and ``/readyz`` over plain HTTP on ``address:port`` (0 = a free port)."""

    def __init__(
        self,
        metrics: Metrics,
        healthy: Callable[[], tuple[bool, str]],
        ready: Callable[[], tuple[bool, str]],
        port: int,
        address: str = "0.0.0.0",
    ) -> None:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                if path == "/metrics":
                    self._send(200, owner.metrics.render(), CONTENT_TYPE)
                elif path in ("/healthz", "/livez", "/readyz"):
                    ok, why = (owner.ready if path == "/readyz" else owner.healthy)()
                    self._send(200 if ok else 503, (why + "\n").encode(), "text/plain; charset=utf-8")
                else:
                    self._send(404, b"not found\n", "text/plain; charset=utf-8")

            def _send(self, code: int, body: bytes, ctype: str) -> None:
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                return

        self.metrics = metrics
        self.healthy = healthy
        self.ready = ready
        self._server = ThreadingHTTPServer((address, port), Handler)
        self._server.daemon_threads = True
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.2},
            name="scheduler-metrics",
            daemon=True,
        )
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)
