"""Permit WAIT: pods held reserved on their node until allowed, rejected or timed out (upstream waiting pods).

Driven through the worked gang-scheduling example (examples/gang) -- the plugin users would copy -- and through
small plugins that pin the framework's rules: every waiting plugin must allow, the first decision wins, timeouts
are capped at 15 minutes, a deleted or preempted waiting pod is rejected and its room freed.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from runtime_support import node, pod

from berth.cli import main
from berth.schedule import config as schedconfig
from berth.schedule.framework import interface as fw
from berth.schedule.framework.types import PodInfo
from berth.schedule.framework.waiting_pods import MAX_PERMIT_TIMEOUT, WaitingPods
from berth.schedule.plugins.registry import Registry, default_registry, load_user_plugin
from berth.schedule.queue import VirtualClock, Where
from berth.schedule.scheduler import Result, Scheduler

GANG = Path(__file__).resolve().parents[2] / "examples" / "gang"
API = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


@pytest.fixture(autouse=True)
def gang_on_path(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.syspath_prepend(str(GANG))
    yield
    sys.modules.pop("berth_gang", None)


def gang_scheduler(timeout: float = 10, nodes: int = 2, cpu: str = "4", **kw: Any) -> Scheduler:
    reg = default_registry()
    reg.register(load_user_plugin("berth_gang:Gang"))
    c = schedconfig.parse(
        {
            **API,
            "profiles": [
                {
                    "schedulerName": "default-scheduler",
                    "plugins": {"multiPoint": {"enabled": [{"name": "Gang"}]}},
                    "pluginConfig": [{"name": "Gang", "args": {"timeoutSeconds": timeout}}],
                }
            ],
        },
        registry=reg,
    )
    s = Scheduler(c, reg, seed=1, **kw)
    for i in range(nodes):
        s.add_node(node(f"n{i}", cpu=cpu))
    return s


def member(name: str, group: str, size: int, cpu: str = "1", **kw: Any) -> dict[str, Any]:
    labels = {"gang.berth.dev/name": group, "gang.berth.dev/min-member": str(size)}
    return pod(name, cpu=cpu, labels=labels, **kw)


def step(s: Scheduler) -> Any:
    outcome = s.schedule_one()
    assert outcome is not None
    return outcome


# --- the scheduler holds and releases pods ---------------------------------------------------------------------------


def test_a_gang_is_held_until_its_last_member_has_room_then_bound_together() -> None:
    s = gang_scheduler()
    for i in range(3):
        s.add_pod(member(f"m{i}", "train", 3))
    first, second = step(s), step(s)
    assert (first.result, second.result) == (Result.WAITING, Result.WAITING)
    assert s.placements == [] and len(s.waiting_pods) == 2
    # Held pods are assumed: they take their room on the node.
    assert sum(len(n.pods) for n in s.cache.update_snapshot(s._snapshot).node_infos()) == 2
    third = step(s)
    assert third.result is Result.SCHEDULED
    # The third member's Permit allowed the other two; the next steps finish their binding cycles.
    assert {step(s).result, step(s).result} == {Result.SCHEDULED}
    assert s.schedule_one() is None
    assert sorted(p.pod for p in s.placements) == ["default/m0", "default/m1", "default/m2"]
    assert len(s.waiting_pods) == 0
    assert s.attempts[("default-scheduler", Result.SCHEDULED)] == 3
    assert ("default-scheduler", Result.WAITING) not in s.attempts


def test_an_incomplete_gang_times_out_with_upstreams_message_and_frees_its_room() -> None:
    clock = VirtualClock()
    s = gang_scheduler(timeout=10, nodes=1, cpu="2", clock=clock)
    s.add_pod(member("a", "eval", 3))
    s.add_pod(member("b", "eval", 3))
    assert step(s).result is Result.WAITING
    clock.advance(4)
    assert step(s).result is Result.WAITING
    assert s.next_wakeup() == 10.0  # a's wait runs out first
    clock.advance_to(10.0)
    out = step(s)
    assert (out.pod, out.result) == ("default/a", Result.UNSCHEDULABLE)
    assert (
        out.message == "0/1 nodes are available: 1 rejected due to timeout after waiting 10s at plugin Gang."
    )
    # Gang's Unreserve rejected the rest of the group: b is handed back with the plugin's own reason.
    out = step(s)
    assert (out.pod, out.result) == ("default/b", Result.UNSCHEDULABLE)
    assert out.message == "0/1 nodes are available: 1 member a of gang default/eval was rejected."
    # Neither holds room any more: a plain pod needing the whole node fits.
    s.add_pod(pod("plain", cpu="2"))
    placed = [step(s) for _ in range(3)]
    assert any(o.pod == "default/plain" and o.result is Result.SCHEDULED for o in placed)


def test_a_gang_handed_back_is_retried_when_its_next_member_is_created() -> None:
    """Gang registers ``UnscheduledPod`` Add with a hint: a member rejected after its wait ran out comes back as
    soon as another member of its own group is created -- not for a pod of another group, and not only at the
    5-minute flush."""
    clock = VirtualClock()
    s = gang_scheduler(timeout=10, nodes=1, cpu="4", clock=clock)
    s.add_pod(member("a", "train", 3))
    assert step(s).result is Result.WAITING
    clock.advance_to(10.0)
    assert step(s).result is Result.UNSCHEDULABLE
    assert s.queue.where("default/a") is Where.UNSCHEDULABLE
    s.add_pod(member("x", "other", 5))  # another gang's member: no reason to retry a
    assert s.queue.where("default/a") is Where.UNSCHEDULABLE
    s.add_pod(member("b", "train", 3))
    assert s.queue.where("default/a") in (Where.ACTIVE, Where.BACKOFF)
    s.add_pod(member("c", "train", 3))
    s.run_until_idle()
    assert sorted(p.pod for p in s.placements) == ["default/a", "default/b", "default/c"]


def test_simulation_gives_up_on_a_gang_that_never_completes(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "schedule",
            "simulate",
            "--config",
            str(GANG / "config.yaml"),
            "--cluster",
            str(GANG / "nodes.yaml"),
            "--workload",
            str(GANG / "workload.yaml"),
            "--plugin",
            "berth_gang:Gang",
            "-o",
            "json",
        ]
    )
    out, _ = capsys.readouterr()
    assert code == 0
    doc = json.loads(out)
    placed = sorted(p["pod"].rsplit("-", 1)[0] for p in doc["placements"])
    assert placed == ["default/train"] * 3
    failed = doc["unschedulable"]
    assert len(failed) == 2
    assert all(f["pod"].startswith("default/eval-") for f in failed)
    assert {f["message"] for f in failed} <= {
        "0/1 nodes are available: 1 rejected due to timeout after waiting 10s at plugin Gang.",
        *(
            f"0/1 nodes are available: 1 member {f['pod'].split('/')[1]} of gang default/eval was rejected."
            for f in failed
        ),
    }


def test_deleting_a_held_pod_rejects_it_and_frees_its_room() -> None:
    s = gang_scheduler(nodes=1, cpu="1")
    s.add_pod(member("a", "g", 2))
    assert step(s).result is Result.WAITING
    s.remove_pod("default/a")
    out = step(s)
    assert (out.pod, out.result, out.message) == (
        "default/a",
        Result.UNSCHEDULABLE,
        "0/1 nodes are available: 1 removed.",
    )
    assert s.cache.get_pod("default/a") is None and len(s.waiting_pods) == 0
    assert s.queue.where("default/a") is None and s.unschedulable() == []  # gone, not reported as a failure
    s.add_pod(pod("b", cpu="1"))
    assert step(s).result is Result.SCHEDULED


def test_preemption_rejects_a_held_victim_instead_of_evicting_it() -> None:
    s = gang_scheduler(nodes=1, cpu="1")
    s.add_pod(member("low", "g", 2, priority=0))
    assert step(s).result is Result.WAITING
    s.add_pod(pod("high", cpu="1", priority=1000))
    out = step(s)
    assert (out.pod, out.result, out.nominated_node) == ("default/high", Result.UNSCHEDULABLE, "n0")
    assert s.preempted == []  # nothing was deleted: the held pod was only rejected
    out = step(s)
    assert (out.pod, out.message) == ("default/low", "0/1 nodes are available: 1 preempted.")
    s.run_until_idle()
    assert [p.pod for p in s.placements] == ["default/high"]


# --- the waiting pods themselves -------------------------------------------------------------------------------------


def test_every_waiting_plugin_must_allow_and_the_first_decision_wins() -> None:
    clock = VirtualClock()
    pods = WaitingPods(clock)
    held = pods.add(PodInfo(pod("p")), "n1", {"A": 5, "B": 7})
    held.allow("A")
    assert held.decision is None and held.pending_plugins() == ["B"]
    held.allow("B")
    assert held.decision is fw.SUCCESS
    held.reject("A", "too late")
    assert held.decision is fw.SUCCESS

    other = pods.add(PodInfo(pod("q")), "n1", {"A": 5})
    other.reject("A", "no")
    other.allow("A")
    assert other.decision == fw.Status(fw.Code.UNSCHEDULABLE, ("no",), "A")


def test_waits_are_capped_at_fifteen_minutes_and_the_earliest_timeout_rejects() -> None:
    clock = VirtualClock()
    pods = WaitingPods(clock)
    held = pods.add(PodInfo(pod("p")), "n1", {"Slow": 3600, "Quick": 90})
    assert pods.next_deadline() == 90
    clock.advance_to(MAX_PERMIT_TIMEOUT)
    pods.expire()
    assert held.decision == fw.Status(
        fw.Code.UNSCHEDULABLE, ("rejected due to timeout after waiting 1m30s at plugin Quick",), "Quick"
    )
    capped = pods.add(PodInfo(pod("q")), "n1", {"Slow": 3600})
    assert capped.next_deadline() == MAX_PERMIT_TIMEOUT + MAX_PERMIT_TIMEOUT


class WaitForever(fw.PermitPlugin):
    NAME = "WaitForever"

    def permit(self, state: fw.CycleState, pod: PodInfo, node_name: str) -> tuple[fw.Status, float]:
        return fw.Status(fw.Code.WAIT), 3600


class AllowFromOutside(fw.PermitPlugin):
    """Waits; a test calls the handle to allow it, as an out-of-band controller would."""

    NAME = "AllowFromOutside"

    def permit(self, state: fw.CycleState, pod: PodInfo, node_name: str) -> tuple[fw.Status, float]:
        return fw.Status(fw.Code.WAIT), 60


def test_a_pod_waits_for_every_plugin_that_asked_and_the_handle_finds_it() -> None:
    reg: Registry = default_registry()
    for cls in (WaitForever, AllowFromOutside):
        reg.register(fw.PluginSpec(name=cls.NAME, plugin_class=cls))
    c = schedconfig.parse(
        {
            **API,
            "profiles": [
                {
                    "schedulerName": "default-scheduler",
                    "plugins": {
                        "permit": {"enabled": [{"name": "WaitForever"}, {"name": "AllowFromOutside"}]}
                    },
                }
            ],
        },
        registry=reg,
    )
    s = Scheduler(c, reg, seed=1)
    s.add_node(node("n0"))
    s.add_pod(pod("p"))
    out = step(s)
    assert out.result is Result.WAITING
    assert out.message == 'one or more plugins asked to wait and no plugin rejected pod "p"'
    handle = s.frameworks["default-scheduler"]
    found: list[str] = []
    handle.iterate_over_waiting_pods(lambda w: found.append(w.get_pod().key))
    assert found == ["default/p"]
    held = handle.get_waiting_pod(PodInfo(pod("p")).uid)
    assert held is not None and sorted(held.pending_plugins()) == ["AllowFromOutside", "WaitForever"]
    held.allow("AllowFromOutside")
    assert s.schedule_one() is None  # WaitForever has not allowed it
    held.allow("WaitForever")
    assert step(s).result is Result.SCHEDULED
    assert handle.get_waiting_pod(PodInfo(pod("p")).uid) is None
    assert not handle.reject_waiting_pod(PodInfo(pod("p")).uid)
