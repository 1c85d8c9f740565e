"""DefaultBinder binds through the handle and passes the handle's verdict on."""

from __future__ import annotations

import pytest

from berth.schedule.framework import interface as fw
from berth.schedule.framework.types import PodInfo
from berth.schedule.plugins import default_binder

from .support import FakeHandle, pod


class FailingHandle(FakeHandle):
    def bind(self, pod: PodInfo, node_name: str) -> fw.Status:
        return fw.error("binding rejected")


@pytest.mark.parametrize(
    ("handle_cls", "code"),
    [(FakeHandle, fw.Code.SUCCESS), (FailingHandle, fw.Code.ERROR)],
    ids=["ok", "api-error"],
)
def test_bind(handle_cls: type[FakeHandle], code: fw.Code) -> None:
    handle = handle_cls()
    plugin = default_binder.SPEC.new(None, handle)
    assert isinstance(plugin, fw.BindPlugin)
    status = plugin.bind(fw.CycleState(), pod("web", namespace="shop"), "node-1")
    assert status.code is code
    if code is fw.Code.SUCCESS:
        assert handle.bound == [("shop/web", "node-1")]
