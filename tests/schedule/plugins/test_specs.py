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
    "DefaultPreemption": {"postFilter"},
    "NodeResourcesBalancedAllocation": {"preScore", "score"},
    "ImageLocality": {"score"},
    "DefaultBinder": {"bind"},
    "Concentrate": {"preScore", "score"},
}
INACTIVE = {"DynamicResources"}
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
    assert spec.reads, "every plugin says which API resources it reads"


@pytest.mark.parametrize("name", sorted(INACTIVE), ids=sorted(INACTIVE))
def test_inactive_plugins_refuse_to_pretend(name: str) -> None:
    """Built anyway, every extension method of an inactive plugin answers Error, never Success."""
    from .support import FakeHandle, node, pod

    spec = registry.default_registry().get(name)
    assert spec is not None
    args = spec.args_type.decode(None, "args")[0] if spec.args_type else None
    plugin = spec.new(args, FakeHandle())
    state, p, n = fw.CycleState(), pod(), node()
    statuses: list[fw.Status] = []
    if isinstance(plugin, fw.PreEnqueuePlugin):
        statuses.append(plugin.pre_enqueue(p))
    if isinstance(plugin, fw.PreFilterPlugin):
        statuses.append(plugin.pre_filter(state, p, [n])[1])
    if isinstance(plugin, fw.FilterPlugin):
        statuses.append(plugin.filter(state, p, n))
    if isinstance(plugin, fw.PostFilterPlugin):
        statuses.append(plugin.post_filter(state, p, {})[1])
    if isinstance(plugin, fw.PreScorePlugin):
        statuses.append(plugin.pre_score(state, p, [n]))
    if isinstance(plugin, fw.ScorePlugin):
        statuses.append(plugin.score(state, p, n)[1])
    if isinstance(plugin, fw.ReservePlugin):
        statuses.append(plugin.reserve(state, p, "n"))
    if isinstance(plugin, fw.PreBindPlugin):
        statuses.append(plugin.pre_bind(state, p, "n"))
    assert statuses
    for status in statuses:
        assert status.code is fw.Code.ERROR
        assert "not active yet" in status.message()
