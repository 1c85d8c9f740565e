"""VolumeRestrictions (PreFilter, Filter) -- accepted in configuration, NOT active yet in berth.

Why it exists now: profiles that name it (the default set does) must load, and multiPoint expansion must place it
at exactly upstream's extension points. Its behaviour (ReadWriteOncePod conflicts, disk conflicts) arrives with
the volume work of the next scheduler issue; until then ``SPEC.active`` is False, the scheduler skips it and
says so, and every method returns an Error status rather than pretending to run.
"""

from __future__ import annotations

from collections.abc import Sequence

from berth.schedule.framework import interface as fw
from berth.schedule.framework.types import NodeInfo, PodInfo
from berth.schedule.plugins import helper

NAME = "VolumeRestrictions"


class VolumeRestrictions(fw.PreFilterPlugin, fw.FilterPlugin):
    NAME = NAME

    def pre_filter(
        self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[fw.PreFilterResult | None, fw.Status]:
        return None, fw.error(helper.not_active(NAME))

    def filter(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo) -> fw.Status:
        return fw.error(helper.not_active(NAME))


SPEC = fw.PluginSpec(
    name=NAME,
    plugin_class=VolumeRestrictions,
    active=False,
    reads=("pods", "persistentvolumeclaims"),
)
