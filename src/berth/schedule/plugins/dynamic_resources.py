"""DynamicResources (PreEnqueue, PreFilter, Filter, PostFilter, Reserve, PreBind): DRA in the default profile (GA,
locked on in 1.35), exactly as upstream for pods that use no ResourceClaims; pods that do are refused plainly.

Why: every pod goes through this plugin in kube-scheduler 1.35. For a pod without ``spec.resourceClaims`` it does
nothing -- PreFilter answers Skip -- except at PostFilter, where it answers ``no new claims to deallocate``; that is
why every FailedScheduling message of the default profile reads ``... no new claims to deallocate, preemption:
...``. berth does not allocate devices yet (no ResourceSlice matching, no CEL selectors): a pod that names claims is
rejected at PreFilter with a message saying so (UnschedulableAndUnresolvable: preemption cannot help), never placed
as if its devices were there. ``filterTimeout``/``bindingTimeout`` validate like upstream's
``DynamicResourcesArgs``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from berth.kube.durations import format_duration
from berth.schedule.framework import interface as fw
from berth.schedule.framework.interface import ClusterEvent
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
                f"{r.at('filterTimeout')}: Invalid value: {format_duration(filter_timeout)}: "
                "must be zero or positive"
            )
        if binding_timeout < 1:  # DRADeviceBindingConditions + DRAResourceClaimDeviceStatus are on in 1.35
            problems.append(
                f"{r.at('bindingTimeout')}: Invalid value: {format_duration(binding_timeout)}: "
                "must be at least 1 second"
            )
        return cls(filter_timeout, binding_timeout), problems

    def to_dict(self) -> dict[str, Any]:
        return {
            "filterTimeout": format_duration(self.filter_timeout_seconds),
            "bindingTimeout": format_duration(self.binding_timeout_seconds),
        }


STATE_KEY = "PreFilterDynamicResources"
NO_CLAIMS_TO_DEALLOCATE = "no new claims to deallocate"
NOT_ALLOCATED = "still not schedulable"
STATE_NOT_FOUND = "not found"


def pod_claims(pod: PodInfo) -> list[str]:
    """The names of the pod's ``spec.resourceClaims`` entries (each a ResourceClaim or a template's claim)."""
    claims = (pod.pod.get("spec") or {}).get("resourceClaims") or ()
    return [str(c.get("name") or "") for c in claims if isinstance(c, Mapping)]


def refused(pod: PodInfo, claims: Sequence[str]) -> str:
    return (
        f"berth does not allocate DRA devices yet: pod {pod.key} uses resource claim(s) {', '.join(claims)} "
        "(schedule it with kube-scheduler, or remove spec.resourceClaims)"
    )


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
        return fw.SUCCESS

    def pre_filter(
        self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[fw.PreFilterResult | None, fw.Status]:
        claims = pod_claims(pod)
        state.write(STATE_KEY, claims)  # before Skip, as upstream: PostFilter reads it
        if not claims:
            return None, fw.Status(fw.Code.SKIP)
        return None, fw.unresolvable(refused(pod, claims))

    def filter(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo) -> fw.Status:
        claims = pod_claims(pod)
        return fw.unresolvable(refused(pod, claims)) if claims else fw.SUCCESS

    def post_filter(
        self, state: fw.CycleState, pod: PodInfo, statuses: Mapping[str, fw.Status]
    ) -> tuple[fw.PostFilterResult | None, fw.Status]:
        claims = state.get(STATE_KEY)
        if claims is None:
            # An earlier PreFilter rejected the pod as unresolvable, so this plugin's PreFilter never ran: upstream's
            # getStateData fails with the CycleState's "not found", as UnschedulableAndUnresolvable -- which ends
            # PostFilter there (no preemption). Real clusters print e.g. "pod has unbound immediate
            # PersistentVolumeClaims. not found".
            return None, fw.unresolvable(STATE_NOT_FOUND)
        # Upstream deallocates an allocated claim not reserved for the pod; berth allocates none.
        return None, fw.unschedulable(NOT_ALLOCATED if claims else NO_CLAIMS_TO_DEALLOCATE)

    def reserve(self, state: fw.CycleState, pod: PodInfo, node_name: str) -> fw.Status:
        claims = pod_claims(pod)
        return fw.error(refused(pod, claims)) if claims else fw.SUCCESS

    def pre_bind(self, state: fw.CycleState, pod: PodInfo, node_name: str) -> fw.Status:
        claims = pod_claims(pod)
        return fw.error(refused(pod, claims)) if claims else fw.Status(fw.Code.SKIP)

    def events_to_register(self) -> Sequence[ClusterEvent]:
        # A pod this plugin refused waits for DRA objects to change (as upstream registers them).
        return (
            ClusterEvent("ResourceClaim", "*"),
            ClusterEvent("ResourceSlice", "*"),
            ClusterEvent("DeviceClass", "*"),
        )


SPEC = fw.PluginSpec(
    name=NAME,
    plugin_class=DynamicResources,
    args_type=DynamicResourcesArgs,
    api_access=("resourceclaims", "resourceslices", "deviceclasses", "pods"),
)
