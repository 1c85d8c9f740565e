"""The live request layer: token refresh hooks throttled but kept, and when the kept-alive fast path is used."""

from __future__ import annotations

import socket
from typing import Any

import pytest
from kubernetes import client as k8s_client

from berth.kube.client import TOKEN_REFRESH_SECONDS
from berth.schedule.live import api
from berth.schedule.live.run import api_client_from

from .conftest import Env


def configuration(**changes: Any) -> Any:
    cfg = k8s_client.Configuration()
    cfg.host = "https://127.0.0.1:6443"
    for key, value in changes.items():
        setattr(cfg, key, value)
    return cfg


def test_refresh_hook_runs_once_per_interval_and_stays_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kubeconfig loader's hook re-installs itself each time it runs; the throttle must survive that."""
    calls: list[str] = []
    now = [1000.0]
    monkeypatch.setattr("berth.kube.client.time.monotonic", lambda: now[0])

    def loader_hook(cfg: Any) -> None:
        calls.append("refresh")
        cfg.api_key["BearerToken"] = f"Bearer token-{len(calls)}"
        cfg.refresh_api_key_hook = loader_hook  # what kubernetes.config.kube_config does

    cfg = configuration()
    cfg.api_key["BearerToken"] = "Bearer token-0"
    cfg.refresh_api_key_hook = loader_hook
    client = api_client_from(cfg, 2)
    mine = client.configuration
    values = [mine.auth_settings()["BearerToken"]["value"] for _ in range(3)]
    assert values == ["Bearer token-1"] * 3
    now[0] += TOKEN_REFRESH_SECONDS
    assert mine.auth_settings()["BearerToken"]["value"] == "Bearer token-2"
    assert calls == ["refresh", "refresh"]
    client.close()


@pytest.mark.parametrize(
    ("changes", "fast"),
    [
        pytest.param({}, True, id="direct"),
        pytest.param({"proxy": "http://proxy.example:3128"}, False, id="proxy-uses-urllib3"),
        pytest.param({"tls_server_name": "kubernetes"}, False, id="tls-server-name-uses-urllib3"),
    ],
)
def test_keep_alive_only_for_direct_connections(changes: dict[str, Any], fast: bool) -> None:
    client = k8s_client.ApiClient(configuration(verify_ssl=False, **changes))
    assert (api.KeepAlive.of(client) is not None) is fast
    client.close()


def test_calls_survive_a_server_closing_kept_alive_connections(env: Env) -> None:
    """A reset (the server went away) or a connection the server closed is re-opened transparently."""
    client = api_client_from(env.client.configuration, 2)
    fast = api.KeepAlive.of(client)
    assert fast is not None
    assert api.call(client, "GET", "/api/v1/namespaces/default")["metadata"]["name"] == "default"
    fast._local.conn.sock.shutdown(socket.SHUT_RDWR)  # as if the server had dropped the idle connection
    assert api.call(client, "GET", "/api/v1/namespaces/default")["metadata"]["name"] == "default"
    fast.reset()
    with pytest.raises(api.ApiError) as info:
        api.call(client, "GET", "/api/v1/namespaces/default/pods/nope")
    assert info.value.status == 404
    conn = fast._local.conn
    fast.close()  # at shutdown: every connection closed; a later call opens a new one
    assert conn.sock is None
    assert api.call(client, "GET", "/api/v1/namespaces/default")["metadata"]["name"] == "default"
    fast.close()
    client.close()


def test_pipelined_calls_answer_each_in_its_place(env: Env) -> None:
    """``call_many``: several requests on one kept-alive connection, each answer (or its error) in order; a
    connection the server dropped meanwhile is re-opened, as for one call."""
    client = api_client_from(env.client.configuration, 2)
    fast = api.KeepAlive.of(client)
    assert fast is not None
    event = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "pipelined.1", "namespace": "default"},
        "eventTime": "2026-12-02T07:00:00.000000Z",
        "reportingController": "test",
        "reportingInstance": "test-1",
        "action": "Binding",
        "reason": "Scheduled",
        "regarding": {"kind": "Pod", "namespace": "default", "name": "p"},
        "note": "n",
        "type": "Normal",
    }
    calls: list[api.Call] = [
        ("GET", "/api/v1/namespaces/default", None, api.JSON),
        ("GET", "/api/v1/namespaces/default/pods/nope", None, api.JSON),
        ("POST", "/apis/events.k8s.io/v1/namespaces/default/events", event, api.JSON),
        ("POST", "/apis/events.k8s.io/v1/namespaces/default/events", event, api.JSON),
    ]
    assert api.call(client, "GET", "/api/v1/namespaces/default")["metadata"]["name"] == "default"
    fast._local.conn.sock.shutdown(socket.SHUT_RDWR)  # as if the server had dropped the idle connection
    first, missing, created, again = api.call_many(client, calls)
    assert isinstance(first, dict) and first["metadata"]["name"] == "default"
    assert isinstance(missing, api.ApiError) and missing.status == 404
    assert isinstance(created, dict) and created["metadata"]["name"] == "pipelined.1"
    assert isinstance(again, api.ApiError) and again.status == 409
    # Undecoded (the Event recorder and the binder need only which succeeded): {} per success, errors as before.
    event["metadata"]["name"] = "pipelined.2"
    first, missing, created, again = api.call_many(client, calls, decode=False)
    assert first == {} and created == {}
    assert isinstance(missing, api.ApiError) and missing.status == 404
    assert isinstance(again, api.ApiError) and again.status == 409 and again.reason == "AlreadyExists"
    fast.close()
    client.close()


def test_pipelined_calls_to_a_server_that_is_gone_are_unreachable(env: Env) -> None:
    client = api_client_from(env.client.configuration, 2)
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        client.configuration.host = f"https://127.0.0.1:{closed.getsockname()[1]}"  # nobody listens there
        answers = api.call_many(client, [("GET", "/api/v1/namespaces/default", None, api.JSON)] * 3)
    assert [type(a) for a in answers] == [api.Unreachable] * 3
    client.close()
