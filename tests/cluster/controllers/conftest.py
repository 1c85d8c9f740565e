"""Fixtures for the controller tests: a real in-memory :class:`berth.cluster.api.Api` with controllers running."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from berth.cluster import controllers
from berth.cluster.api import Api
from berth.kube.objects import Obj


def wait_for(pred: Callable[[], Any], timeout: float = 30.0, what: str = "condition") -> Any:
    """Poll ``pred`` until it returns something truthy (returned) or fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = pred()
        except Exception as exc:  # a 404 while an object is not there yet
            last = exc
        if last and not isinstance(last, Exception):
            return last
        time.sleep(0.005)
    raise AssertionError(f"timed out waiting for {what}; last value: {last!r}")


def pod(name: str, node: str | None = "node-1", **extra: Any) -> Obj:
    spec: dict[str, Any] = {"containers": [{"name": "main", "image": "nginx:1.27"}]}
    if node:
        spec["nodeName"] = node
    spec.update(extra.pop("spec", {}))
    meta: dict[str, Any] = {"name": name}
    meta.update(extra.pop("metadata", {}))
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def template(labels: dict[str, str], node: str | None = "node-1", image: str = "nginx:1.27") -> Obj:
    spec: dict[str, Any] = {"containers": [{"name": "main", "image": image}]}
    if node:
        spec["nodeName"] = node
    return {"metadata": {"labels": dict(labels)}, "spec": spec}


def condition(obj: Obj, ctype: str) -> dict[str, Any] | None:
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype:
            return dict(c)
    return None


class Cluster:
    """An Api plus running controllers; ``restart`` stops them and starts a fresh set on the same Api."""

    def __init__(self, options: controllers.ControllerOptions) -> None:
        self.api = Api()
        self.options = options
        self.controllers = controllers.start(self.api, options)
        self.controllers.wait_synced(10)

    def stop(self) -> None:
        self.controllers.stop()

    def get(self, resource: str, name: str, namespace: str | None = "default") -> Obj:
        return self.api.get(resource, name, namespace)

    def pods(self, namespace: str = "default", selector: str = "") -> list[Obj]:
        return self.api.list("pods", namespace, label_selector=selector)[0]


@pytest.fixture
def make_cluster() -> Iterator[Callable[..., Cluster]]:
    made: list[Cluster] = []

    def make(**kw: Any) -> Cluster:
        kw.setdefault("nodes", 2)
        c = Cluster(controllers.ControllerOptions(**kw))
        made.append(c)
        return c

    yield make
    for c in made:
        c.stop()


@pytest.fixture
def cluster(make_cluster: Callable[..., Cluster]) -> Cluster:
    return make_cluster()
