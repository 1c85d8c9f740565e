"""Every in-tree module exposes a SPEC whose name, extension points and activity match upstream's default set."""

from __future__ import annotations

import importlib

import pytest

from berth.schedule.framework import interface as fw
from berth.schedule.plugins import registry

# Upstream 1.35 extension points of each plugin type (spec 2.4; VolumeBinding's type also implements PreScore/Score).
EXPECTED_POINTS: dict[str, set[str]] = {
    "SchedulingGates": {"preEnqueue"},
    "PrioritySort": {"queueSort"},
    "NodeUnschedulable": {"filter"},
    "NodeName": {"filter"},
    "TaintToleration": {"filter", "preScore", "score"},
    "NodeAffinity": {"preFilter", "filter", "preScore", "score"},
    "NodePorts": {"preFilter", "filter"},
    "NodeResourcesFit": {"preFilter", "filter", "preScore", "score"},
    "VolumeRestrictions": {"preFilter", "filter"},
    "NodeVolumeLimits": {"preFilter", "filter"},
    "VolumeBinding": {"preFilter", "filter", "preScore", "score", "reserve", "preBind"},
    "VolumeZone": {"preFilter", "filter"},
    "PodTopologySpread": {"preFilter", "filter", "preScore", "score"},
    "InterPodAffinity": {"preFilter", "filter", "preScore", "score"},
    "DynamicResources": {"preEnqueue", "preFilter", "filter", "postFilter", "reserve", "preBind"},
    "DefaultPreemption": {"preEnqueue", "postFilter"},
    "NodeResourcesBalancedAllocation": {"preScore", "score"},
    "ImageLocality": {"score"},
    "DefaultBinder": {"bind"},
    "Concentrate": {"preScore", "score"},
}
INACTIVE: set[str] = set()  # no in-tree plugin is inactive (the mechanism is tested with Dormant)
WITH_ARGS = {
    "NodeResourcesFit",
    "NodeResourcesBalancedAllocation",
    "NodeAffinity",
    "PodTopologySpread",
    "InterPodAffinity",
    "DefaultPreemption",
    "VolumeBinding",
    "DynamicResources",
    "Concentrate",
}


def test_every_module_is_covered() -> None:
    assert set(registry.IN_TREE_MODULES) == set(EXPECTED_POINTS)


@pytest.mark.parametrize("name", sorted(EXPECTED_POINTS), ids=sorted(EXPECTED_POINTS))
def test_spec(name: str) -> None:
    mod = importlib.import_module(f"berth.schedule.plugins.{registry.IN_TREE_MODULES[name]}")
    spec: fw.PluginSpec = mod.SPEC
    assert spec.name == name == mod.NAME == spec.plugin_class.NAME
    assert spec.points == EXPECTED_POINTS[name]
    assert spec.active is (name not in INACTIVE)
    assert (spec.args_type is not None) is (name in WITH_ARGS)
    assert spec.api_access, "every plugin says which API resources it reads"


def test_the_fake_handles_keep_the_handle_contract() -> None:
    """The plugin tests' fakes implement the declared Protocols, so plugins need no fallbacks for them."""
    from .support import FakeHandle
    from .test_default_preemption import PreemptionHandle

    assert isinstance(FakeHandle(), fw.Handle)
    assert not isinstance(FakeHandle(), fw.PreemptionHandle)
    assert isinstance(PreemptionHandle([]), fw.PreemptionHandle)
