"""The optional speed hooks are found by ``isinstance`` against the Protocols of ``framework/hooks.py``: each
in-tree plugin that offers a hook is recognised, and the framework uses exactly the hooks a plugin has."""

from __future__ import annotations

import pytest

from berth.schedule.config import default_config
from berth.schedule.framework import hooks
from berth.schedule.framework import interface as fw
from berth.schedule.framework.runtime import Framework
from berth.schedule.plugins import (
    concentrate,
    image_locality,
    inter_pod_affinity,
    node_name,
    node_ports,
    node_resources_balanced_allocation,
    node_resources_fit,
    node_unschedulable,
    pod_topology_spread,
    priority_sort,
    taint_toleration,
    volume_binding,
)
from berth.schedule.plugins.registry import default_registry

# (plugin class, the hook Protocols it must satisfy)
OFFERED: list[tuple[type[fw.Plugin], tuple[type, ...]]] = [
    (node_name.NodeName, (hooks.FilterMask, hooks.BatchFilter, hooks.EnqueueExtensions)),
    (node_unschedulable.NodeUnschedulable, (hooks.FilterMask, hooks.BatchFilter)),
    (node_ports.NodePorts, (hooks.FilterMask, hooks.BatchFilter)),
    (taint_toleration.TaintToleration, (hooks.FilterMask, hooks.BatchFilter)),
    (
        node_resources_fit.NodeResourcesFit,
        (hooks.FilterMask, hooks.BatchFilter, hooks.ScoreArray, hooks.BatchScore, hooks.EnqueueExtensions),
    ),
    (
        node_resources_balanced_allocation.NodeResourcesBalancedAllocation,
        (hooks.ScoreArray, hooks.BatchScore),
    ),
    (image_locality.ImageLocality, (hooks.ScoreArray, hooks.BatchScore)),
    (pod_topology_spread.PodTopologySpread, (hooks.BatchFilter, hooks.FilterVerdicts, hooks.BatchScore)),
    (inter_pod_affinity.InterPodAffinity, (hooks.BatchFilter, hooks.FilterVerdicts, hooks.BatchScore)),
    (concentrate.Concentrate, (hooks.BatchScore, hooks.NormalizeArray, hooks.NormalizeList)),
    (priority_sort.PrioritySort, (hooks.SortKey,)),
    (volume_binding.VolumeBinding, (hooks.EnqueueExtensions,)),
]


@pytest.mark.parametrize(("cls", "protocols"), OFFERED, ids=[c.__name__ for c, _ in OFFERED])
def test_in_tree_hooks_are_recognised(cls: type[fw.Plugin], protocols: tuple[type, ...]) -> None:
    for proto in protocols:
        assert issubclass(cls, proto), f"{cls.__name__} should satisfy {proto.__name__}"


def test_a_plain_plugin_offers_no_hooks() -> None:
    class Plain(fw.FilterPlugin, fw.ScorePlugin):
        NAME = "Plain"

        def filter(self, state: fw.CycleState, pod: object, node: object) -> fw.Status:  # type: ignore[override]
            return fw.SUCCESS

        def score(self, state: fw.CycleState, pod: object, node: object) -> tuple[int, fw.Status]:  # type: ignore[override]
            return 0, fw.SUCCESS

    every = (
        hooks.BatchFilter,
        hooks.FilterMask,
        hooks.FilterVerdicts,
        hooks.BatchScore,
        hooks.ScoreArray,
        hooks.NormalizeList,
        hooks.NormalizeArray,
        hooks.SortKey,
        hooks.EnqueueExtensions,
    )
    assert not any(issubclass(Plain, proto) for proto in every)


def test_the_framework_uses_the_hooks_its_plugins_have() -> None:
    reg = default_registry()
    framework = Framework(default_config(reg).profiles[0], reg)
    assert isinstance(framework, fw.PreemptionHandle)
    assert set(framework.batch_filters) == {
        name for name, plugin in framework.filter if isinstance(plugin, hooks.BatchFilter)
    }
    assert framework.queue_sort_key is not None  # PrioritySort's sort_key
    assert "NodeResourcesFit" in framework.batch_filters
