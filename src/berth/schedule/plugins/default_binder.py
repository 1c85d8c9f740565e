"""DefaultBinder (Bind): binds the pod to the chosen node through the framework handle.

Why: binding is the only write the scheduler makes; the handle routes it to the active binder (simulation records
the placement, live mode posts ``pods/binding`` as upstream ``plugins/defaultbinder/default_binder.go`` does).
"""

from __future__ import annotations

from berth.schedule.framework import interface as fw
from berth.schedule.framework.types import PodInfo

NAME = "DefaultBinder"


class DefaultBinder(fw.BindPlugin):
    NAME = NAME

    def bind(self, state: fw.CycleState, pod: PodInfo, node_name: str) -> fw.Status:
        return self.handle.bind(pod, node_name)


SPEC = fw.PluginSpec(name=NAME, plugin_class=DefaultBinder, api_access=("pods/binding",))
