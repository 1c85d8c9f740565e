"""One binding-failed path (upstream ``handleBindingCycleError``) for the synchronous binding cycle and for a
binding the live binder sent in the background: Unreserve runs with the cycle's own CycleState, the assumed pod is
forgotten, the pod backs off and is pending again."""

from __future__ import annotations

from typing import Any, ClassVar

from runtime_support import node, pod

from berth.schedule import config as schedconfig
from berth.schedule.framework import interface as fw
from berth.schedule.framework.types import PodInfo
from berth.schedule.plugins.registry import default_registry
from berth.schedule.queue import Where
from berth.schedule.scheduler import Result, Scheduler

API = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
KEY = "Remember/state"


class Remember(fw.ReservePlugin):
    """Writes a token into the cycle's state at Reserve; Unreserve records what it finds there."""

    NAME = "Remember"
    seen: ClassVar[list[Any]] = []

    def reserve(self, state: fw.CycleState, pod: PodInfo, node_name: str) -> fw.Status:
        state.write(KEY, f"reserved {pod.key} on {node_name}")
        return fw.SUCCESS

    def unreserve(self, state: fw.CycleState, pod: PodInfo, node_name: str) -> None:
        Remember.seen.append(state.get(KEY))


class LaterBinder:
    """A live-like binder: accepts every binding at once (the answer comes later) and echoes nothing."""

    echoes_bindings = False

    def bind(self, pod: PodInfo, node_name: str) -> fw.Status:
        return fw.SUCCESS


class FailingBinder(LaterBinder):
    echoes_bindings = True

    def bind(self, pod: PodInfo, node_name: str) -> fw.Status:
        return fw.error("connection refused")


def scheduler(binder: Any) -> Scheduler:
    reg = default_registry()
    reg.register(fw.PluginSpec(name=Remember.NAME, plugin_class=Remember))
    profile = {
        "schedulerName": "default-scheduler",
        "plugins": {"reserve": {"enabled": [{"name": "Remember"}]}},
    }
    s = Scheduler(schedconfig.parse({**API, "profiles": [profile]}, registry=reg), reg, binder=binder, seed=1)
    s.add_node(node("n0"))
    Remember.seen.clear()
    return s


def test_a_background_binding_failure_unreserves_with_the_cycles_state() -> None:
    s = scheduler(LaterBinder())
    p = pod("web")
    s.add_pod(p)
    outcome = s.schedule_one()
    assert outcome is not None and outcome.result is Result.SCHEDULED
    assert s.cache.is_assumed("default/web")

    failed = s.binding_failed("default/web", fw.error("the API server went away"), p)

    assert Remember.seen == ["reserved default/web on n0"]  # the cycle's state, not a fresh one
    assert failed is not None and failed.result is Result.ERROR
    assert failed.message == "the API server went away"
    assert not s.cache.is_assumed("default/web") and s.cache.get_pod("default/web") is None
    assert {qp.info.key: qp.where for qp in s.queue.pending()} == {"default/web": Where.BACKOFF}
    assert s.failures["default/web"].message == "the API server went away"
    # Asked twice (a late duplicate answer), nothing happens again.
    assert s.binding_failed("default/web", fw.error("again"), p) is None
    assert Remember.seen == ["reserved default/web on n0"]


def test_a_binding_confirmed_by_the_informer_is_settled() -> None:
    s = scheduler(LaterBinder())
    p = pod("web")
    s.add_pod(p)
    s.schedule_one()
    s.update_pod(p, {**p, "spec": {**p["spec"], "nodeName": "n0"}})  # the informer shows it bound
    assert s.binding_failed("default/web", fw.error("late"), p) is None
    assert Remember.seen == []


def test_a_synchronous_binding_failure_takes_the_same_path() -> None:
    s = scheduler(FailingBinder())
    s.add_pod(pod("web"))
    outcome = s.schedule_one()
    assert outcome is not None and outcome.result is Result.ERROR
    assert "connection refused" in outcome.message
    assert Remember.seen == ["reserved default/web on n0"]
    assert s.cache.get_pod("default/web") is None
