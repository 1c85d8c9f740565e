"""NodeName: a pod naming a node fits only that node."""

from __future__ import annotations

import pytest

from berth.schedule.framework import interface as fw
from berth.schedule.plugins import node_name

from .support import FakeHandle, node, pod, run_filter


@pytest.mark.parametrize(
    ("pod_node", "node_name_", "code"),
    [
        ("", "n1", fw.Code.SUCCESS),
        ("n1", "n1", fw.Code.SUCCESS),
        ("n1", "n2", fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
    ],
    ids=["unset", "match", "mismatch"],
)
def test_filter(pod_node: str, node_name_: str, code: fw.Code) -> None:
    status = run_filter(node_name.NodeName(None, FakeHandle()), pod(node_name=pod_node), node(node_name_))
    assert status.code is code
    if code is not fw.Code.SUCCESS:
        assert status.message() == node_name.ERR_REASON == "node(s) didn't match the requested node name"
