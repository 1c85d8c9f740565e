"""DefaultPreemption (PostFilter) -- accepted in configuration with validated args, NOT active yet in berth.

Why it exists now: the default profile names it, and ``minCandidateNodesPercentage``/``minCandidateNodesAbsolute``
must validate as upstream's ``DefaultPreemptionArgs`` do. Choosing victims and nominating nodes arrives with the
next scheduler issue; until then ``SPEC.active`` is False, the scheduler skips it and says so (FailedScheduling
messages carry no preemption part), and ``post_filter`` returns an Error status rather than pretending to run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from berth.schedule.framework import interface as fw
from berth.schedule.framework.types import PodInfo
from berth.schedule.plugins import helper

NAME = "DefaultPreemption"
ARGS_KIND = "DefaultPreemptionArgs"


@dataclass(frozen=True)
class DefaultPreemptionArgs:
    min_candidate_nodes_percentage: int = 10
    min_candidate_nodes_absolute: int = 100

    @classmethod
    def decode(cls, raw: Mapping[str, Any] | None, path: str) -> tuple[DefaultPreemptionArgs, list[str]]:
        problems: list[str] = []
        r = helper.ArgsReader(raw, path, problems, ARGS_KIND)
        pct = r.get_int("minCandidateNodesPercentage", 10)
        absolute = r.get_int("minCandidateNodesAbsolute", 100)
        r.finish()
        pct_path, abs_path = r.at("minCandidateNodesPercentage"), r.at("minCandidateNodesAbsolute")
        if not 0 <= pct <= 100:
            problems.append(helper.invalid(pct_path, pct, "not in valid range [0, 100]"))
        if absolute < 0:
            problems.append(helper.invalid(abs_path, absolute, "not in valid range [0, inf)"))
        if pct == 0 and absolute == 0:
            problems.append(
                helper.invalid(pct_path, pct, "cannot be zero at the same time as minCandidateNodesAbsolute")
            )
            problems.append(
                helper.invalid(
                    abs_path, absolute, "cannot be zero at the same time as minCandidateNodesPercentage"
                )
            )
        return cls(pct, absolute), problems

    def to_dict(self) -> dict[str, Any]:
        return {
            "minCandidateNodesPercentage": self.min_candidate_nodes_percentage,
            "minCandidateNodesAbsolute": self.min_candidate_nodes_absolute,
        }


class DefaultPreemption(fw.PostFilterPlugin):
    NAME = NAME

    def post_filter(
        self, state: fw.CycleState, pod: PodInfo, statuses: Mapping[str, fw.Status]
    ) -> tuple[fw.PostFilterResult | None, fw.Status]:
        return None, fw.error(helper.not_active(NAME))


SPEC = fw.PluginSpec(
    name=NAME,
    plugin_class=DefaultPreemption,
    args_type=DefaultPreemptionArgs,
    active=False,
    reads=("pods", "nodes", "poddisruptionbudgets", "priorityclasses"),
)
