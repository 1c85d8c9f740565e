"""A plugin registry for the config tests that does not depend on the in-tree plugin modules.

Each fake plugin class derives from exactly the extension-point bases of spec table 2.4, so ``PluginSpec.points``
(and hence multiPoint expansion) is what upstream's plugins declare. A few have small strict args types.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from berth.schedule.framework import interface as fw
from berth.schedule.plugins.registry import Registry

POINT_BASES: dict[str, type[fw.Plugin]] = dict(fw.EXTENSION_POINTS)

# Name -> extension points (spec 2.4), plus berth's Concentrate.
POINTS: dict[str, tuple[str, ...]] = {
    "SchedulingGates": ("preEnqueue",),
    "PrioritySort": ("queueSort",),
    "NodeUnschedulable": ("filter",),
    "NodeName": ("filter",),
    "TaintToleration": ("filter", "preScore", "score"),
    "NodeAffinity": ("preFilter", "filter", "preScore", "score"),
    "NodePorts": ("preFilter", "filter"),
    "NodeResourcesFit": ("preFilter", "filter", "preScore", "score"),
    "VolumeRestrictions": ("preFilter", "filter"),
    "NodeVolumeLimits": ("preFilter", "filter"),
    # VolumeBinding implements Score (upstream ExpandedPluginsV1 lists it at preScore/score, weight 1); it only
    # scores with the alpha StorageCapacityScoring gate, at run time.
    "VolumeBinding": ("preFilter", "filter", "reserve", "preScore", "score", "preBind"),
    "VolumeZone": ("preFilter", "filter"),
    "PodTopologySpread": ("preFilter", "filter", "preScore", "score"),
    "InterPodAffinity": ("preFilter", "filter", "preScore", "score"),
    "DynamicResources": ("preEnqueue", "preFilter", "filter", "postFilter", "reserve", "preBind"),
    "DefaultPreemption": ("preEnqueue", "postFilter"),  # PreEnqueue: asynchronous preemption (1.32+)
    "NodeResourcesBalancedAllocation": ("preScore", "score"),
    "ImageLocality": ("score",),
    "DefaultBinder": ("bind",),
    "Concentrate": ("preScore", "score"),
    "QSort": ("queueSort",),  # a second queue sort, as an out-of-tree one (Coscheduling) would be
}


def plugin_class(name: str, points: tuple[str, ...]) -> type[fw.Plugin]:
    bases = tuple(POINT_BASES[p] for p in points)
    cls: type[fw.Plugin] = type(name, bases, {"NAME": name})
    return cls


def make_args(kind: str, fields: Mapping[str, Any], required: tuple[str, ...] = ()) -> type[Any]:
    """A strict args type: known ``fields`` with defaults; ``required`` ones must be non-empty strings."""

    @dataclass(frozen=True)
    class Args:
        values: Mapping[str, Any] = field(default_factory=dict)

        @classmethod
        def decode(cls, raw: Mapping[str, Any] | None, path: str) -> tuple[Any, list[str]]:
            problems: list[str] = []
            values = dict(fields)
            for key, value in (raw or {}).items():
                if key in ("apiVersion", "kind"):
                    continue
                if key not in fields:
                    problems.append(f'{path}: unknown field "{key}"')
                    continue
                values[key] = value
            for key in required:
                if not values.get(key):
                    problems.append(f"{path}.{key}: Required value: {key} is required")
            return cls(values), problems

        def to_dict(self) -> dict[str, Any]:
            return dict(self.values)

    Args.__name__ = kind
    return Args


ARGS: dict[str, type[Any]] = {
    "NodeResourcesFit": make_args(
        "NodeResourcesFitArgs",
        {
            "ignoredResources": [],
            "scoringStrategy": {
                "type": "LeastAllocated",
                "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
            },
        },
    ),
    "NodeResourcesBalancedAllocation": make_args(
        "NodeResourcesBalancedAllocationArgs",
        {"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]},
    ),
    "PodTopologySpread": make_args("PodTopologySpreadArgs", {"defaultingType": "System"}),
    "InterPodAffinity": make_args(
        "InterPodAffinityArgs", {"hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": False}
    ),
    "DefaultPreemption": make_args(
        "DefaultPreemptionArgs", {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}
    ),
    "VolumeBinding": make_args("VolumeBindingArgs", {"bindTimeoutSeconds": 600}),
    "NodeAffinity": make_args("NodeAffinityArgs", {}),
    "DynamicResources": make_args("DynamicResourcesArgs", {"filterTimeout": "10s"}),
    "Concentrate": make_args("ConcentrateArgs", {"labelKey": ""}, required=("labelKey",)),
}


# Built once: new ABC subclasses make the first issubclass() checks slow, and parsing never mutates a registry.
SPECS: tuple[fw.PluginSpec, ...] = tuple(
    fw.PluginSpec(name=name, plugin_class=plugin_class(name, points), args_type=ARGS.get(name))
    for name, points in POINTS.items()
)


def fake_registry(extra: tuple[fw.PluginSpec, ...] = ()) -> Registry:
    return Registry([*SPECS, *extra])
