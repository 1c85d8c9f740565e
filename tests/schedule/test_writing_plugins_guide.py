"""docs/writing-plugins.md's Python examples run: every ```python block is executed in order, and the plugins
the guide defines are placed in a profile and schedule pods as the guide says. A Score plugin answering a bare
integer (the guide's old mistake) fails the pod's cycle with a message naming the plugin and the value."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from runtime_support import node, pod

from berth.schedule import config as schedconfig
from berth.schedule.framework import interface as fw
from berth.schedule.framework.types import NodeInfo, PodInfo
from berth.schedule.plugins.registry import default_registry
from berth.schedule.scheduler import Result, Scheduler

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "writing-plugins.md"
API = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def guide_namespace() -> dict[str, Any]:
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.S)
    assert len(blocks) >= 3, "the guide's Python examples"
    namespace: dict[str, Any] = {}
    for block in blocks:
        exec(compile(block, str(GUIDE), "exec"), namespace)
    return namespace


def scheduler_with(*plugins: type[fw.Plugin], **enabled: list[str]) -> Scheduler:
    reg = default_registry()
    for cls in plugins:
        reg.register(fw.PluginSpec(name=cls.NAME, plugin_class=cls))
    profile = {
        "schedulerName": "default-scheduler",
        "plugins": {point: {"enabled": [{"name": n} for n in names]} for point, names in enabled.items()},
    }
    return Scheduler(schedconfig.parse({**API, "profiles": [profile]}, registry=reg), reg, seed=1)


def test_the_guides_filter_and_score_examples_schedule_pods() -> None:
    ns = guide_namespace()
    require, fewest = ns["RequireLabel"], ns["FewestPods"]
    s = scheduler_with(require, fewest, filter=["RequireLabel"], score=["FewestPods"])
    s.add_node(node("cpu-1"))
    s.add_node(node("gpu-1", labels={"pool": "gpu"}))
    s.add_node(node("gpu-2", labels={"pool": "gpu"}))
    for i in range(4):
        s.add_pod(pod(f"p{i}"))
    s.run_until_idle()
    placed = {p.pod: p.node for p in s.placements}
    assert set(placed.values()) == {"gpu-1", "gpu-2"}  # RequireLabel kept cpu-1 out
    assert sorted(placed.values()).count("gpu-1") == 2  # FewestPods spread them
    assert require.VALUE == "gpu"  # the documented class attributes exist


class BareInteger(fw.ScorePlugin):
    NAME = "BareInteger"

    def score(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo) -> Any:
        return 7


class FloatScore(fw.ScorePlugin):
    NAME = "FloatScore"

    def score(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo) -> Any:
        return 7.5, fw.SUCCESS


@pytest.mark.parametrize(("cls", "shown"), [(BareInteger, "7"), (FloatScore, "(7.5, Status(")])
def test_a_score_of_the_wrong_shape_fails_the_cycle_naming_plugin_and_value(
    cls: type[fw.ScorePlugin], shown: str
) -> None:
    s = scheduler_with(cls, score=[cls.NAME])
    s.add_node(node("n1"))
    s.add_node(node("n2"))
    s.add_pod(pod("web"))
    outcome = s.schedule_one()
    assert outcome is not None and outcome.result is Result.ERROR
    assert f'plugin "{cls.NAME}" returned {shown}' in outcome.message
    assert "Score must return (score: int, status: Status)" in outcome.message
    assert s.failures["default/web"].reason == "SchedulerError"
