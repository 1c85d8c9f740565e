"""InterPodAffinity (PreFilter, Filter, PreScore, Score) -- accepted with validated args, NOT active yet in berth.

Why it exists now: the default profile names it (score weight 2), and ``hardPodAffinityWeight`` /
``ignorePreferredTermsOfExistingPods`` must validate as upstream's ``InterPodAffinityArgs``. Pod (anti-)affinity
arrives with the next scheduler issue; until then ``SPEC.active`` is False, the scheduler skips it and says so,
and every method returns an Error status rather than pretending to run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from berth.schedule.framework import interface as fw
from berth.schedule.framework.types import NodeInfo, PodInfo
from berth.schedule.plugins import helper

NAME = "InterPodAffinity"
ARGS_KIND = "InterPodAffinityArgs"
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"
ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't satisfy existing pods anti-affinity rules"


@dataclass(frozen=True)
class InterPodAffinityArgs:
    hard_pod_affinity_weight: int = 1
    ignore_preferred_terms_of_existing_pods: bool = False

    @classmethod
    def decode(cls, raw: Mapping[str, Any] | None, path: str) -> tuple[InterPodAffinityArgs, list[str]]:
        problems: list[str] = []
        r = helper.ArgsReader(raw, path, problems, ARGS_KIND)
        weight = r.get_int("hardPodAffinityWeight", 1)
        ignore = r.get_bool("ignorePreferredTermsOfExistingPods", False)
        r.finish()
        if not 0 <= weight <= 100:
            problems.append(
                helper.invalid(r.at("hardPodAffinityWeight"), weight, "not in valid range [0, 100]")
            )
        return cls(weight, ignore), problems

    def to_dict(self) -> dict[str, Any]:
        return {
            "hardPodAffinityWeight": self.hard_pod_affinity_weight,
            "ignorePreferredTermsOfExistingPods": self.ignore_preferred_terms_of_existing_pods,
        }


class InterPodAffinity(fw.PreFilterPlugin, fw.FilterPlugin, fw.PreScorePlugin, fw.ScorePlugin):
    NAME = NAME

    def pre_filter(
        self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[fw.PreFilterResult | None, fw.Status]:
        return None, fw.error(helper.not_active(NAME))

    def filter(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo) -> fw.Status:
        return fw.error(helper.not_active(NAME))

    def pre_score(self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> fw.Status:
        return fw.error(helper.not_active(NAME))

    def score(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, fw.Status]:
        return 0, fw.error(helper.not_active(NAME))

    def events_to_register(self) -> Sequence[fw.ClusterEvent]:
        return (
            fw.ClusterEvent("Pod", "Add"),
            fw.ClusterEvent("Pod", "UpdatePodLabel"),
            fw.ClusterEvent("Pod", "Delete"),
            fw.ClusterEvent("Node", "Add"),
            fw.ClusterEvent("Node", "UpdateNodeLabel"),
        )


SPEC = fw.PluginSpec(
    name=NAME,
    plugin_class=InterPodAffinity,
    args_type=InterPodAffinityArgs,
    active=False,
    reads=("pods", "nodes", "namespaces"),
)
