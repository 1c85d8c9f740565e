"""NodePorts: host-port conflicts per protocol and IP (wildcard 0.0.0.0/empty), sidecars included."""

from __future__ import annotations

from typing import Any

import pytest

from berth.schedule.framework import interface as fw
from berth.schedule.plugins import node_ports

from .support import FakeHandle, container, node, pod, run_filter


def port(host_port: int, protocol: str | None = None, host_ip: str | None = None) -> dict[str, Any]:
    p: dict[str, Any] = {"containerPort": 80, "hostPort": host_port}
    if protocol:
        p["protocol"] = protocol
    if host_ip:
        p["hostIP"] = host_ip
    return p


def with_ports(*ports: dict[str, Any], sidecar: bool = False) -> Any:
    if sidecar:
        return pod(init_containers=[container(ports=ports, restart_policy="Always", name="side")])
    return pod(containers=[container(ports=ports)])


@pytest.mark.parametrize(
    ("wanted", "existing", "fits"),
    [
        ([port(8080)], [], True),
        ([port(8080)], [port(8080)], False),
        ([port(8080, "UDP")], [port(8080)], True),
        ([port(8080, "TCP", "127.0.0.1")], [port(8080, "TCP", "127.0.0.2")], True),
        ([port(8080, "TCP", "127.0.0.1")], [port(8080, "TCP", "127.0.0.1")], False),
        ([port(8080, "TCP", "127.0.0.1")], [port(8080, "TCP", "0.0.0.0")], False),
        ([port(8080)], [port(8080, "TCP", "127.0.0.1")], False),
        ([port(8080)], [port(8081)], True),
        ([port(8001, "UDP"), port(8080)], [port(8080, "UDP"), port(8001)], True),
    ],
    ids=[
        "free-node",
        "same-port",
        "other-protocol",
        "other-ip",
        "same-ip",
        "existing-wildcard",
        "wanted-wildcard",
        "other-port",
        "crossed-protocols",
    ],
)
def test_filter(wanted: list[dict[str, Any]], existing: list[dict[str, Any]], fits: bool) -> None:
    n = node(pods=[with_ports(*existing)] if existing else [])
    status = run_filter(node_ports.NodePorts(None, FakeHandle()), with_ports(*wanted), n)
    if fits:
        assert status.is_success
    else:
        assert status.code is fw.Code.UNSCHEDULABLE
        assert (
            status.message()
            == node_ports.ERR_REASON
            == "node(s) didn't have free ports for the requested pod ports"
        )


def test_sidecar_ports_count() -> None:
    n = node(pods=[with_ports(port(9000), sidecar=True)])
    status = run_filter(node_ports.NodePorts(None, FakeHandle()), with_ports(port(9000), sidecar=True), n)
    assert status.code is fw.Code.UNSCHEDULABLE


@pytest.mark.parametrize(
    ("ports", "skip"),
    [([], True), ([{"containerPort": 80}], True), ([port(80)], False)],
    ids=["no-ports", "container-port-only", "host-port"],
)
def test_pre_filter_skips_pods_without_host_ports(ports: list[dict[str, Any]], skip: bool) -> None:
    _, status = node_ports.NodePorts(None, FakeHandle()).pre_filter(
        fw.CycleState(), with_ports(*ports), [node()]
    )
    assert status.is_skip is skip
