"""The scheduler's link to the API server (:mod:`berth.schedule.live.connection`): a kubeconfig that moves is
followed, and stays followed; every request on the link's clients -- a binding as much as a watch -- reports
whether the server answered; news about a server the clients have left is ignored."""

from __future__ import annotations

import logging
import socket
from pathlib import Path
from typing import Any

import pytest
import yaml

from berth.schedule.framework.types import PodInfo
from berth.schedule.live import api, connection
from berth.schedule.live.binder import ApiBinder

from .conftest import Env


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port  # nobody listens once the socket is closed


def write_kubeconfig(path: Path, server: str, token: str = "t0k3n") -> None:
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "c",
                "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
                "clusters": [{"name": "k", "cluster": {"server": server, "insecure-skip-tls-verify": True}}],
                "users": [{"name": "u", "user": {"token": token}}],
            }
        ),
        encoding="utf-8",
    )


def link_for(kubeconfig: Path, clock: Clock) -> tuple[connection.ServerLink, Any]:
    client = connection.api_client_from(connection.configuration(str(kubeconfig), None), 2)
    return connection.ServerLink(str(kubeconfig), None, [client], clock=clock), client


def test_a_moved_server_stays_followed_when_the_token_refresh_hook_runs(tmp_path: Path) -> None:
    # The kubeconfig loader's refresh hook re-applies *its* kubeconfig's host, CA and token each time it runs
    # (every 10 s, throttled): a client pointed elsewhere must carry the new kubeconfig's hook, or it drifts back
    # to the dead server ten seconds after following the new one.
    kubeconfig = tmp_path / "kubeconfig"
    write_kubeconfig(kubeconfig, "https://127.0.0.1:1111", token="old")
    clock = Clock()
    link, client = link_for(kubeconfig, clock)
    write_kubeconfig(kubeconfig, "https://127.0.0.1:2222", token="new")
    link.lost("test", "https://127.0.0.1:1111")
    assert link.switches == 1 and link.url == "https://127.0.0.1:2222"
    # The next request runs the client's hook if its throttle allows (it ran out here: the hook has not run yet).
    auth = client.configuration.auth_settings()
    assert client.configuration.host == "https://127.0.0.1:2222"
    assert auth["BearerToken"]["value"] == "Bearer new"


def test_a_request_on_a_linked_client_reports_the_outage_and_the_return(
    env: Env, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="berth.schedule.live")
    kubeconfig = tmp_path / "kubeconfig"
    real = yaml.safe_load(env.cluster.kubeconfig.read_text(encoding="utf-8"))
    dead = f"https://127.0.0.1:{closed_port()}"
    moved = yaml.safe_load(yaml.safe_dump(real))
    moved["clusters"][0]["cluster"]["server"] = dead
    kubeconfig.write_text(yaml.safe_dump(moved), encoding="utf-8")
    clock = Clock()
    link, client = link_for(kubeconfig, clock)
    binder = ApiBinder(client, api.PermissionLog(logging.getLogger("test")))
    pod = PodInfo({"metadata": {"name": "p", "namespace": "default", "uid": "u"}, "spec": {}})

    status = binder.bind(pod, "node-1")  # a writer, not an informer, finds the server gone
    assert not status.is_success and "unreachable" in status.message()
    assert link.outages == 1 and link.down_since is not None
    with pytest.raises(api.Unreachable):
        api.call(client, "GET", "/api/v1/nodes")  # still down: no second outage, no second line
    assert link.outages == 1

    kubeconfig.write_text(yaml.safe_dump(real), encoding="utf-8")  # the server "comes back" elsewhere
    clock.now += connection.REREAD_SECONDS
    link.lost("GET /api/v1/nodes: refused", dead)
    assert link.switches == 1 and link.url == real["clusters"][0]["cluster"]["server"]
    link.lost("a request sent before the switch, reported late", dead)  # old news: still one outage
    assert link.down_since is not None and link.outages == 1
    assert api.call(client, "GET", "/api/v1/nodes")["items"]  # the first answer ends the outage
    assert link.down_since is None

    messages = [r.getMessage() for r in caplog.records]
    lost = [m for m in messages if m.startswith("lost the API server")]
    back = [m for m in messages if "reachable again" in m]
    assert len(lost) == 1 and dead in lost[0] and "binding" in lost[0] and str(kubeconfig) in lost[0]
    assert len(back) == 1 and link.url in back[0]
    client.close()


def test_news_about_another_server_is_ignored(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    write_kubeconfig(kubeconfig, "https://127.0.0.1:1111")
    link, client = link_for(kubeconfig, Clock())
    link.lost("stale", "https://127.0.0.1:9999")
    assert link.down_since is None and link.outages == 0
    link.lost("current", "https://127.0.0.1:1111")
    link.reachable("https://127.0.0.1:9999")  # an answer from a server we do not use says nothing
    assert link.down_since is not None
    link.reachable("https://127.0.0.1:1111")
    assert link.down_since is None and link.outages == 1
    client.close()


def test_an_answer_to_a_request_sent_before_the_outage_does_not_end_it(tmp_path: Path) -> None:
    """Pipelined answers read just before the server went away may be reported after another thread's failure:
    they must not log "reachable again" (and so a second "lost" at the next failure) -- one line per outage."""
    kubeconfig = tmp_path / "kubeconfig"
    write_kubeconfig(kubeconfig, "https://127.0.0.1:1111")
    link, client = link_for(kubeconfig, Clock())
    sent_in = link.outages  # a request is sent while the server is up
    link.lost("another thread's request failed", "https://127.0.0.1:1111")
    link.reachable("https://127.0.0.1:1111", sent_in)  # its answer, reported late: old news
    assert link.down_since is not None and link.outages == 1
    link.reachable("https://127.0.0.1:1111", link.outages)  # a request sent during the outage was answered
    assert link.down_since is None and link.outages == 1
    client.close()
