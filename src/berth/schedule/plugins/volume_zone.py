"""VolumeZone (PreFilter, Filter) -- accepted in configuration, NOT active yet in berth.

Why it exists now: profiles naming it must load and multiPoint must expand exactly as upstream. The zone check of
bound PersistentVolumes arrives with the volume work of the next scheduler issue; until then ``SPEC.active`` is
False, the scheduler skips it and says so, and every method returns an Error status.
"""

from __future__ import annotations

from collections.abc import Sequence

from berth.schedule.framework import interface as fw
from berth.schedule.framework.types import NodeInfo, PodInfo
from berth.schedule.plugins import helper

NAME = "VolumeZone"


class VolumeZone(fw.PreFilterPlugin, fw.FilterPlugin):
    NAME = NAME

    def pre_filter(
        self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[fw.PreFilterResult | None, fw.Status]:
        return None, fw.error(helper.not_active(NAME))

    def filter(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo) -> fw.Status:
        return fw.error(helper.not_active(NAME))


SPEC = fw.PluginSpec(
    name=NAME,
    plugin_class=VolumeZone,
    active=False,
    reads=("persistentvolumes", "persistentvolumeclaims", "storageclasses"),
)
