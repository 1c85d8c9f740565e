"""DynamicResources (PreEnqueue, PreFilter, Filter, PostFilter, Reserve, PreBind) -- accepted with validated args,
NOT active yet in berth.

Why it exists now: DRA is in the default profile (GA, locked on in 1.35), so configurations naming it must load
and ``filterTimeout``/``bindingTimeout`` must validate like upstream's ``DynamicResourcesArgs``. Allocating
ResourceClaims is out of scope until a later issue; ``SPEC.active`` is False, the scheduler skips it and says so,
and every method returns an Error status rather than pretending to run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from berth.schedule.framework import interface as fw
from berth.schedule.framework.types import NodeInfo, PodInfo
from berth.schedule.plugins import helper

NAME = "DynamicResources"
ARGS_KIND = "DynamicResourcesArgs"
DEFAULT_FILTER_TIMEOUT_SECONDS = 10.0
DEFAULT_BINDING_TIMEOUT_SECONDS = 600.0


@dataclass(frozen=True)
class DynamicResourcesArgs:
    filter_timeout_seconds: float = DEFAULT_FILTER_TIMEOUT_SECONDS
    binding_timeout_seconds: float = DEFAULT_BINDING_TIMEOUT_SECONDS

    @classmethod
    def decode(cls, raw: Mapping[str, Any] | None, path: str) -> tuple[DynamicResourcesArgs, list[str]]:
        problems: list[str] = []
        r = helper.ArgsReader(raw, path, problems, ARGS_KIND)
        filter_timeout = r.get_duration("filterTimeout", DEFAULT_FILTER_TIMEOUT_SECONDS)
        binding_timeout = r.get_duration("bindingTimeout", DEFAULT_BINDING_TIMEOUT_SECONDS)
        r.finish()
        if filter_timeout < 0:
            problems.append(
                f"{r.at('filterTimeout')}: Invalid value: {helper.format_duration(filter_timeout)}: "
                "must be zero or positive"
            )
        if binding_timeout < 1:  # DRADeviceBindingConditions + DRAResourceClaimDeviceStatus are on in 1.35
            problems.append(
                f"{r.at('bindingTimeout')}: Invalid value: {helper.format_duration(binding_timeout)}: "
                "must be at least 1 second"
            )
        return cls(filter_timeout, binding_timeout), problems

    def to_dict(self) -> dict[str, Any]:
        return {
            "filterTimeout": helper.format_duration(self.filter_timeout_seconds),
            "bindingTimeout": helper.format_duration(self.binding_timeout_seconds),
        }


class DynamicResources(
    fw.PreEnqueuePlugin,
    fw.PreFilterPlugin,
    fw.FilterPlugin,
    fw.PostFilterPlugin,
    fw.ReservePlugin,
    fw.PreBindPlugin,
):
    NAME = NAME

    def pre_enqueue(self, pod: PodInfo) -> fw.Status:
        return fw.error(helper.not_active(NAME))

    def pre_filter(
        self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[fw.PreFilterResult | None, fw.Status]:
        return None, fw.error(helper.not_active(NAME))

    def filter(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo) -> fw.Status:
        return fw.error(helper.not_active(NAME))

    def post_filter(
        self, state: fw.CycleState, pod: PodInfo, statuses: Mapping[str, fw.Status]
    ) -> tuple[fw.PostFilterResult | None, fw.Status]:
        return None, fw.error(helper.not_active(NAME))

    def reserve(self, state: fw.CycleState, pod: PodInfo, node_name: str) -> fw.Status:
        return fw.error(helper.not_active(NAME))

    def pre_bind(self, state: fw.CycleState, pod: PodInfo, node_name: str) -> fw.Status:
        return fw.error(helper.not_active(NAME))


SPEC = fw.PluginSpec(
    name=NAME,
    plugin_class=DynamicResources,
    args_type=DynamicResourcesArgs,
    active=False,
    reads=("resourceclaims", "resourceslices", "deviceclasses", "pods"),
)
