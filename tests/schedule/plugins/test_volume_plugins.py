"""VolumeRestrictions, VolumeZone and NodeVolumeLimits: no args; accepted in configuration, not active yet."""

from __future__ import annotations

import pytest

from berth.schedule.framework import interface as fw
from berth.schedule.plugins import node_volume_limits, volume_restrictions, volume_zone

from .support import FakeHandle, node, pod

SPECS = [volume_restrictions.SPEC, volume_zone.SPEC, node_volume_limits.SPEC]


@pytest.mark.parametrize("spec", SPECS, ids=[s.name for s in SPECS])
def test_accepted_but_inactive(spec: fw.PluginSpec) -> None:
    assert spec.active is False
    assert spec.args_type is None
    assert spec.points == {"preFilter", "filter"}
    plugin = spec.new(None, FakeHandle())
    assert isinstance(plugin, fw.FilterPlugin)
    status = plugin.filter(fw.CycleState(), pod(), node())
    assert status.code is fw.Code.ERROR
    assert status.message() == f"plugin {spec.name} is accepted in configuration but not active yet in berth"
