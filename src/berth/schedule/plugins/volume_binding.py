"""VolumeBinding (PreFilter, Filter, PreScore, Score, Reserve, PreBind) -- accepted in configuration, NOT active yet.

Why it exists now: profiles naming it must load, its args must validate as upstream's ``VolumeBindingArgs`` do, and
multiPoint must expand it at upstream's points (upstream's type implements PreScore/Score too; they skip unless
the alpha ``StorageCapacityScoring`` gate is on, so ``shape`` is rejected here as upstream rejects it with the gate
off; upstream's own wording). Binding PVCs (WaitForFirstConsumer, PV node affinity) arrives with the next scheduler issue; until then
``SPEC.active`` is False, the scheduler skips it and says so, and every method returns an Error status.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from berth.schedule.framework import interface as fw
from berth.schedule.framework.types import NodeInfo, PodInfo
from berth.schedule.plugins import helper

NAME = "VolumeBinding"
ARGS_KIND = "VolumeBindingArgs"
DEFAULT_BIND_TIMEOUT_SECONDS = 600


@dataclass(frozen=True)
class VolumeBindingArgs:
    bind_timeout_seconds: int = DEFAULT_BIND_TIMEOUT_SECONDS
    shape: tuple[tuple[int, int], ...] | None = None

    @classmethod
    def decode(cls, raw: Mapping[str, Any] | None, path: str) -> tuple[VolumeBindingArgs, list[str]]:
        problems: list[str] = []
        r = helper.ArgsReader(raw, path, problems, ARGS_KIND)
        timeout = r.get_int("bindTimeoutSeconds", DEFAULT_BIND_TIMEOUT_SECONDS)
        shape_raw = r.get_list("shape")
        r.finish()
        shape = helper.decode_shape(shape_raw, r.at("shape"), problems) if shape_raw is not None else None
        if timeout < 0:
            problems.append(
                helper.invalid(
                    r.at("bindTimeoutSeconds"),
                    timeout,
                    "invalid BindTimeoutSeconds, should not be a negative value",
                )
            )
        if shape is not None:
            problems.append(
                f"{r.at('shape')}: Invalid value: {helper.go_shape_value(shape)}: unexpected field `shape`, remove it "
                "or turn on the feature gate StorageCapacityScoring"
            )
        return cls(timeout, shape), problems

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"bindTimeoutSeconds": self.bind_timeout_seconds}
        if self.shape is not None:
            out["shape"] = helper.shape_to_list(self.shape)
        return out


class VolumeBinding(
    fw.PreFilterPlugin, fw.FilterPlugin, fw.PreScorePlugin, fw.ScorePlugin, fw.ReservePlugin, fw.PreBindPlugin
):
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

    def reserve(self, state: fw.CycleState, pod: PodInfo, node_name: str) -> fw.Status:
        return fw.error(helper.not_active(NAME))

    def pre_bind(self, state: fw.CycleState, pod: PodInfo, node_name: str) -> fw.Status:
        return fw.error(helper.not_active(NAME))


SPEC = fw.PluginSpec(
    name=NAME,
    plugin_class=VolumeBinding,
    args_type=VolumeBindingArgs,
    active=False,
    reads=(
        "persistentvolumes",
        "persistentvolumeclaims",
        "storageclasses",
        "csinodes",
        "csistoragecapacities",
    ),
)
