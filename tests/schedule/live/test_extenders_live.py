"""Extenders, live: `berth schedule run` on the embedded cluster calls a loopback HTTP extender that filters the
nodes and binds the pod itself through the API (as binder extenders do); the scheduler sends no binding of its
own and records the Scheduled event."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from berth.schedule import config as config_mod
from berth.schedule.live import api

from .conftest import Env, eventually, pod


@pytest.fixture()
def extender(env: Env) -> Iterator[tuple[str, list[tuple[str, Any]]]]:
    calls: list[tuple[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            verb = self.path.rsplit("/", 1)[-1]
            calls.append((verb, body))
            if verb == "filter":
                answer: Any = {"nodenames": [n for n in body["nodenames"] if n.endswith("-2")]}
            else:  # bind: the extender makes the binding itself
                binding = {
                    "apiVersion": "v1",
                    "kind": "Binding",
                    "metadata": {"name": body["PodName"], "namespace": body["PodNamespace"]},
                    "target": {"apiVersion": "v1", "kind": "Node", "name": body["Node"]},
                }
                path = f"/api/v1/namespaces/{body['PodNamespace']}/pods/{body['PodName']}/binding"
                api.call(env.client, "POST", path, [], binding)
                answer = {}
            data = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", calls
    finally:
        server.shutdown()
        server.server_close()


def test_live_scheduler_filters_and_binds_through_an_extender(
    env: Env, extender: tuple[str, list[tuple[str, Any]]]
) -> None:
    url, calls = extender
    doc = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "extenders": [
            {"urlPrefix": url, "filterVerb": "filter", "bindVerb": "bind", "nodeCacheCapable": True}
        ],
    }
    cfg = config_mod.parse(doc)
    with env.scheduler(cfg) as sched:
        assert sched.wait_synced(30)
        env.create(pod("p"))
        node = eventually(
            lambda: env.call("GET", "/api/v1/namespaces/default/pods/p")["spec"].get("nodeName"), 30, "bound"
        )

        def scheduled() -> dict[str, Any] | None:
            items = env.call("GET", "/apis/events.k8s.io/v1/namespaces/default/events").get("items") or []
            return next((e for e in items if e.get("reason") == "Scheduled"), None)

        event = eventually(scheduled, 30, "Scheduled event")
    assert str(node).endswith("-2")
    assert [verb for verb, _ in calls] == ["filter", "bind"]
    assert len(calls[0][1]["nodenames"]) == 4
    bind = calls[1][1]
    assert (bind["PodName"], bind["PodNamespace"], bind["Node"]) == ("p", "default", node)
    assert bind["PodUID"] == env.call("GET", "/api/v1/namespaces/default/pods/p")["metadata"]["uid"]
    assert env.bindings() == {"default/p": 1}  # the extender's binding only
    assert event["note"] == f"Successfully assigned default/p to {node}"
