"""``/metrics``: the usual kube-apiserver request metrics in Prometheus text format (``prometheus_client``).

What is exported, with upstream's names and labels:

- ``apiserver_request_total{verb, dry_run, group, version, resource, subresource, scope, component, code}``
- ``apiserver_request_duration_seconds{verb, dry_run, group, version, resource, subresource, scope, component}``
  (upstream's buckets, 5 ms to 60 s)
- ``apiserver_current_inflight_requests{request_kind}`` (``mutating`` / ``readOnly``; watches are long-running and
  counted in ``apiserver_longrunning_requests`` instead)
- ``apiserver_storage_objects{resource}`` (objects in the store per resource, read when scraped)

``verb`` is reported as upstream reports it: GET, LIST, WATCH, POST, PUT, PATCH, APPLY (a server-side apply
patch), DELETE, DELETECOLLECTION; ``scope`` is ``resource`` for a named object, ``namespace`` or ``cluster`` for a
collection; ``component`` is ``apiserver``. Requests outside the resource URL space (discovery, OpenAPI) carry
their path in no label and are counted with empty resource labels, as upstream's non-resource requests are.
Each server has its own registry, so several clusters in one process do not share counts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
BUCKETS = (
    0.005,
    0.025,
    0.05,
    0.1,
    0.2,
    0.4,
    0.6,
    0.8,
    1.0,
    1.25,
    1.5,
    2,
    3,
    4,
    5,
    6,
    8,
    10,
    15,
    20,
    30,
    45,
    60,
)
_LABELS = ("verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component")
_REPORTED = {
    "get": "GET",
    "list": "LIST",
    "watch": "WATCH",
    "create": "POST",
    "update": "PUT",
    "patch": "PATCH",
    "delete": "DELETE",
    "deletecollection": "DELETECOLLECTION",
}


class _StorageObjects(Collector):
    def __init__(self, counts: Callable[[], dict[str, int]]) -> None:
        self._counts = counts

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily(
            "apiserver_storage_objects",
            "Number of stored objects at the time of last check split by kind.",
            labels=["resource"],
        )
        for resource, n in sorted(self._counts().items()):
            family.add_metric([resource], n)
        yield family


class ApiMetrics:
    """The request metrics of one API server."""

    def __init__(self, storage_counts: Callable[[], dict[str, int]] | None = None) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self._total = Counter(
            "apiserver_request",
            "Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, "
            "scope, component, and HTTP response code.",
            [*_LABELS, "code"],
            registry=self.registry,
        )
        self._duration = Histogram(
            "apiserver_request_duration_seconds",
            "Response latency distribution in seconds for each verb, dry run value, group, version, resource, "
            "subresource, scope and component.",
            _LABELS,
            buckets=BUCKETS,
            registry=self.registry,
        )
        inflight = Gauge(
            "apiserver_current_inflight_requests",
            "Maximal number of currently used inflight request limit of this apiserver per request kind.",
            ["request_kind"],
            registry=self.registry,
        )
        self.mutating, self.read_only = inflight.labels("mutating"), inflight.labels("readOnly")
        self.longrunning = Gauge(
            "apiserver_longrunning_requests",
            "Gauge of all active long-running apiserver requests (watches).",
            registry=self.registry,
        )
        if storage_counts is not None:
            self.registry.register(_StorageObjects(storage_counts))
        # The labelled children by label values: ``labels()`` checks and converts its arguments under a lock on
        # every call (~35 us for the pair); a request's labels repeat, so each pair is looked up once.
        self._children: dict[tuple[str, ...], tuple[Any, Any]] = {}

    def observe(
        self,
        verb: str,
        method: str,
        group: str,
        version: str,
        resource: str,
        subresource: str,
        scope: str,
        dry_run: bool,
        apply: bool,
        code: int,
        seconds: float,
    ) -> None:
        """Count one finished request (``verb`` is the Kubernetes verb, lower case; empty for non-resource
        requests, which are reported by their HTTP method)."""
        reported = "APPLY" if apply else _REPORTED.get(verb, method)
        labels = (
            reported,
            "All" if dry_run else "",
            group,
            version,
            resource,
            subresource,
            scope,
            "apiserver",
        )
        key = (*labels, str(code))
        pair = self._children.get(key)
        if pair is None:
            pair = self._children[key] = (self._total.labels(*key), self._duration.labels(*labels))
        pair[0].inc()
        pair[1].observe(seconds)

    def render(self) -> bytes:
        return generate_latest(self.registry)
