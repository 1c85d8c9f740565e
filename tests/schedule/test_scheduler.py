"""Scheduler: routing by schedulerName, FailedScheduling text, filter rotation, tie-breaking, failure paths.

Configurations go through the real loader (``config.parse``) and the real in-tree plugins.
"""

from __future__ import annotations

import copy
from typing import Any, ClassVar

import pytest
from runtime_support import node, pod, profile, registry

from berth.schedule import config as schedconfig
from berth.schedule.config import SchedulerConfiguration
from berth.schedule.framework import interface as fw
from berth.schedule.framework.runtime import FrameworkError
from berth.schedule.framework.types import PodInfo
from berth.schedule.queue import Where
from berth.schedule.scheduler import (
    CycleOutcome,
    Diagnosis,
    FailureReason,
    Result,
    Scheduler,
    SimulationBinder,
    fit_error_message,
    pod_update_events,
    truncate_event_message,
)

API = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def cfg(**doc: Any) -> SchedulerConfiguration:
    return schedconfig.parse({**API, **doc})


def two_profiles() -> SchedulerConfiguration:
    return cfg(
        profiles=[
            {"schedulerName": "academy-default"},
            {
                "schedulerName": "academy-concentrate",
                "plugins": {"multiPoint": {"enabled": [{"name": "Concentrate", "weight": 10}]}},
                "pluginConfig": [{"name": "Concentrate", "args": {"labelKey": "app"}}],
            },
        ]
    )


def scheduler(c: SchedulerConfiguration | None = None, nodes: int = 0, seed: int = 1, **kw: Any) -> Scheduler:
    s = Scheduler(c or cfg(), seed=seed, **kw)
    for i in range(nodes):
        s.add_node(node(f"n{i}"))
    return s


def placed(s: Scheduler) -> dict[str, str]:
    return {p.pod: p.node for p in s.placements}


def only_failure(s: Scheduler) -> str:
    failures = s.unschedulable()
    assert len(failures) == 1
    return failures[0].message


def test_pods_are_routed_by_scheduler_name_and_unknown_names_ignored() -> None:
    s = scheduler(two_profiles(), nodes=4)
    s.add_pod(pod("d", scheduler="academy-default"))
    s.add_pod(pod("c", scheduler="academy-concentrate", labels={"app": "x"}))
    s.add_pod(pod("nobody"))  # default-scheduler: no such profile here
    s.add_pod(pod("other", scheduler="third"))
    s.run_until_idle()
    assert sorted((p.pod, p.scheduler_name) for p in s.placements) == [
        ("default/c", "academy-concentrate"),
        ("default/d", "academy-default"),
    ]
    assert sorted((i.pod, i.scheduler_name) for i in s.ignored.values()) == [
        ("default/nobody", "default-scheduler"),
        ("default/other", "third"),
    ]


def test_pods_bound_by_another_scheduler_still_take_room() -> None:
    s = scheduler(nodes=0)
    s.add_node(node("n0", cpu="1"))
    s.add_pod(pod("theirs", cpu="800m", scheduler="another", node_name="n0"))
    s.add_pod(pod("mine", cpu="500m"))
    s.run_until_idle()
    # "theirs" has the same priority as "mine": nothing to preempt.
    assert only_failure(s) == (
        "0/1 nodes are available: 1 Insufficient cpu. "
        "no new claims to deallocate, preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    )


def test_assumed_pods_of_one_profile_count_for_the_other() -> None:
    s = scheduler(two_profiles(), nodes=0)
    s.add_node(node("n0", cpu="1"))
    s.add_pod(pod("a", cpu="600m", scheduler="academy-default"))
    s.add_pod(pod("b", cpu="600m", scheduler="academy-concentrate"))
    s.run_until_idle()
    assert placed(s) == {"default/a": "n0"}
    assert s.unschedulable()[0].scheduler_name == "academy-concentrate"


@pytest.mark.parametrize(
    ("nodes", "the_pod", "message"),
    [
        pytest.param(
            [node(f"n{i}", cpu="1") for i in range(4)],
            pod("p", cpu="2"),
            # A request above a node's allocatable is UnschedulableAndUnresolvable: no preemption candidate.
            "0/4 nodes are available: 4 Insufficient cpu."
            " no new claims to deallocate, preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.",
            id="all-short-of-cpu",
        ),
        pytest.param(
            [node("n0", cpu="1", memory="1Gi"), node("n1", cpu="1")],
            pod("p", cpu="2", memory="2Gi"),
            "0/2 nodes are available: 1 Insufficient memory, 2 Insufficient cpu."
            " no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
            id="one-node-two-reasons",
        ),
        pytest.param(
            [
                node("n0", taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}]),
                node("n1", unschedulable=True),
                node("n2", cpu="1"),
                node("n3", cpu="1"),
            ],
            pod("p", cpu="2"),
            "0/4 nodes are available: 1 node(s) had untolerated taint(s), 1 node(s) were unschedulable, "
            "2 Insufficient cpu. no new claims to deallocate, preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.",
            id="mixed-sorted",
        ),
        pytest.param(
            [node(f"n{i}", cpu="1") for i in range(10)]
            + [node("t0", taints=[{"key": "k", "effect": "NoSchedule"}])],
            pod("p", cpu="2"),
            "0/11 nodes are available: 1 node(s) had untolerated taint(s), 10 Insufficient cpu."
            " no new claims to deallocate, preemption: 0/11 nodes are available: 11 Preemption is not helpful for scheduling.",
            id="sorted-as-strings",
        ),
        pytest.param(
            [node("n0", pods="0")],
            pod("p"),
            # Too many pods is Unschedulable (preemption could help), but the node has no pod to evict.
            "0/1 nodes are available: 1 Too many pods."
            " no new claims to deallocate, preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
            id="too-many-pods",
        ),
        pytest.param(
            [node("n0"), node("n1")],
            pod(
                "p",
                affinity={
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {
                                    "matchFields": [
                                        {"key": "metadata.name", "operator": "In", "values": ["gone"]}
                                    ]
                                }
                            ]
                        }
                    }
                },
            ),
            "0/2 nodes are available: 2 node(s) didn't satisfy plugin(s) [NodeAffinity]."
            " no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
            id="prefilter-result-excludes-all",
        ),
        pytest.param(
            [node("n0"), node("n1", labels={"disk": "ssd"})],
            pod("p", nodeSelector={"disk": "hdd"}),
            "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector."
            " no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
            id="node-selector",
        ),
        pytest.param([], pod("p"), "no nodes available to schedule pods", id="no-nodes"),
    ],
)
def test_failed_scheduling_message(
    nodes: list[dict[str, Any]], the_pod: dict[str, Any], message: str
) -> None:
    s = scheduler()
    for n in nodes:
        s.add_node(n)
    s.add_pod(the_pod)
    s.run_until_idle()
    assert only_failure(s) == message


def test_fit_error_message_with_prefilter_and_postfilter_messages() -> None:
    d = Diagnosis(pre_filter_msg="pod affinity terms conflict", post_filter_msg="preemption: nothing to do")
    # 1.33+ appends the PostFilter message as the plugins wrote it (DefaultPreemption's ends in a period).
    assert fit_error_message(3, d) == (
        "0/3 nodes are available: pod affinity terms conflict. preemption: nothing to do"
    )


def test_event_messages_are_truncated_like_upstream() -> None:
    long = "x" * 2000
    assert truncate_event_message(long) == "x" * 1020 + " ..."
    assert truncate_event_message("short") == "short"


def test_errors_are_reported_as_scheduler_errors() -> None:
    s = scheduler()
    s.add_pod(pod("p"))
    s.run_until_idle()
    failure = s.unschedulable()[0]
    assert failure.reason is FailureReason.SCHEDULER_ERROR


def test_unschedulable_pod_is_placed_once_a_node_arrives() -> None:
    s = scheduler(nodes=0)
    s.add_node(node("small", cpu="1"))
    s.add_pod(pod("p", cpu="2"))
    s.run_until_idle()
    assert placed(s) == {}
    s.add_node(node("big", cpu="8"))
    s.run_until_idle()
    assert placed(s) == {"default/p": "big"}
    assert s.unschedulable() == []


def test_filter_rotation_starts_where_the_last_cycle_stopped() -> None:
    # 200 nodes, percentageOfNodesToScore 50 -> 100 feasible nodes per cycle, so the start moves by 100.
    s = scheduler(cfg(percentageOfNodesToScore=50), nodes=200)
    s.add_pod(pod("a"))
    s.add_pod(pod("b"))
    s.add_pod(pod("c"))
    assert s.schedule_one() is not None
    assert s.next_start_node_index == 100
    assert s.schedule_one() is not None
    assert s.next_start_node_index == 0
    s.run_until_idle()
    first_half = {f"n{i}" for i in range(100)}
    assert placed(s)["default/a"] in first_half
    assert placed(s)["default/b"] not in first_half


def test_rotation_counts_rejected_nodes_too() -> None:
    s = scheduler(cfg(percentageOfNodesToScore=10), nodes=0)
    for i in range(300):
        s.add_node(node(f"n{i}", cpu="4" if i % 2 else "1"))
    s.add_pod(pod("a", cpu="2"))
    s.schedule_one()
    # 100 feasible (odd) nodes are needed: nodes 0..199 hold them, with 100 rejections on the way.
    assert s.next_start_node_index == 200


def test_ties_are_broken_by_the_seeded_rng() -> None:
    def run(seed: int) -> dict[str, str]:
        s = scheduler(nodes=4, seed=seed)
        s.add_pod(pod("p"))
        s.run_until_idle()
        return placed(s)

    assert run(7) == run(7)
    assert len({run(seed)["default/p"] for seed in range(12)}) > 1


def test_highest_total_score_wins() -> None:
    s = scheduler(nodes=0)
    s.add_node(node("busy", cpu="4"))
    s.add_node(node("idle", cpu="4"))
    s.add_pod(pod("x", cpu="3", node_name="busy"))
    s.add_pod(pod("p", cpu="100m"))
    s.run_until_idle()
    assert placed(s) == {"default/p": "idle"}


def test_bind_failure_forgets_the_pod_and_retries_it() -> None:
    attempts: list[str] = []

    def flaky(pod: PodInfo, node_name: str) -> str | None:
        attempts.append(node_name)
        return "connection refused" if len(attempts) == 1 else None

    s = scheduler(nodes=0, binder=SimulationBinder(fail=flaky))
    s.add_node(node("n0", cpu="1"))
    s.add_pod(pod("p", cpu="800m"))
    s.run_until_idle()
    assert placed(s) == {"default/p": "n0"}
    assert len(attempts) == 2
    info = s.cache.node_info("n0")
    assert info is not None and [p.key for p in info.pods] == ["default/p"]  # counted once


def test_a_pod_that_never_binds_is_given_up_with_its_error() -> None:
    s = scheduler(nodes=1, binder=SimulationBinder(fail=lambda p, n: "forbidden"))
    s.add_pod(pod("p"))
    s.run_until_idle(max_error_attempts=3)
    failure = s.unschedulable()[0]
    assert failure.reason is FailureReason.SCHEDULER_ERROR
    assert failure.message == 'running Bind plugin "DefaultBinder": forbidden'
    info = s.cache.node_info("n0")
    assert info is not None and info.pods == []


def test_reserve_failure_unreserves_and_forgets() -> None:
    c = SchedulerConfiguration(
        profiles=(profile("p", filter=["NodeName"], reserve=["ReserveA", "ReserveFail"]),)
    )
    s = Scheduler(c, registry(), seed=1)
    s.add_node(node("n0"))
    s.add_pod(pod("a", scheduler="p"))
    outcome = s.schedule_one()
    assert outcome is not None and outcome.result is Result.UNSCHEDULABLE
    assert outcome.message == "ReserveFail refused"
    info = s.cache.node_info("n0")
    assert info is not None and info.pods == []


def test_nominated_node_is_tried_first() -> None:
    s = scheduler(nodes=3)
    p = pod("p")
    p["status"] = {"nominatedNodeName": "n2"}
    s.add_pod(p)
    s.run_until_idle()
    assert placed(s) == {"default/p": "n2"}


def test_deleted_pending_pod_is_dropped() -> None:
    s = scheduler(nodes=0)
    s.add_node(node("n0", cpu="1"))
    s.add_pod(pod("p", cpu="2"))
    s.run_until_idle()
    s.remove_pod(pod("p"))
    assert s.unschedulable() == [] and len(s.queue) == 0


def test_removing_a_bound_pod_frees_room_for_a_waiting_one() -> None:
    s = scheduler(nodes=0)
    s.add_node(node("n0", cpu="1"))
    s.add_pod(pod("old", cpu="800m", node_name="n0"))
    s.add_pod(pod("new", cpu="800m"))
    s.run_until_idle()
    assert placed(s) == {}
    s.remove_pod(pod("old"))
    s.run_until_idle()
    assert placed(s) == {"default/new": "n0"}


def test_outcomes_reach_the_callback() -> None:
    seen: list[CycleOutcome] = []
    s = scheduler(nodes=1, on_outcome=seen.append)
    s.add_pod(pod("p"))
    s.run_until_idle()
    assert [(o.pod, o.result, o.node) for o in seen] == [("default/p", Result.SCHEDULED, "n0")]
    assert s.attempts[("default-scheduler", Result.SCHEDULED)] == 1


def test_warnings_name_each_inactive_plugin_per_profile() -> None:
    c = SchedulerConfiguration(
        profiles=(profile("a", filter=["Dormant"]), profile("b", preFilter=["Dormant"]))
    )
    s = Scheduler(c, registry())
    assert s.warnings == [
        'profile "a": plugin Dormant is accepted but not active yet in berth (it is skipped)',
        'profile "b": plugin Dormant is accepted but not active yet in berth (it is skipped)',
    ]


@pytest.mark.parametrize(
    ("profiles", "detail"),
    [
        pytest.param(
            (profile("a"), profile("a")), 'duplicate profile with scheduler name "a"', id="duplicate"
        ),
        pytest.param(
            (profile("a"), profile("b", queueSort=["FifoSort"])),
            'different queue sort plugins for profile "b": "FifoSort", first: "PrioritySort"',
            id="queue-sort",
        ),
    ],
)
def test_profile_map_errors(profiles: tuple[Any, ...], detail: str) -> None:
    with pytest.raises(FrameworkError, match=detail):
        Scheduler(SchedulerConfiguration(profiles=profiles), registry())


def test_batch_hooks_replace_per_node_calls_with_the_same_decisions() -> None:
    from berth.schedule.framework import interface as fw
    from berth.schedule.framework.types import NodeInfo

    calls: list[str] = []

    class Batched(fw.FilterPlugin, fw.ScorePlugin):
        NAME = "Batched"

        def filter(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo) -> fw.Status:
            raise AssertionError("per-node Filter called although filter_nodes exists")

        def filter_nodes(self, state: fw.CycleState, pod: PodInfo, nodes: Any) -> list[fw.Status]:
            calls.append(f"filter:{len(nodes)}")
            return [fw.SUCCESS if n.name != "n1" else fw.unschedulable("odd one out") for n in nodes]

        def score(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, fw.Status]:
            raise AssertionError("per-node Score called although score_nodes exists")

        def score_nodes(self, state: fw.CycleState, pod: PodInfo, nodes: Any) -> tuple[list[int], fw.Status]:
            calls.append(f"score:{len(nodes)}")
            return [int(n.name[1:]) for n in nodes], fw.SUCCESS

    reg = registry()
    reg.register(fw.PluginSpec(name="Batched", plugin_class=Batched))
    s = Scheduler(
        SchedulerConfiguration(profiles=(profile("p", filter=["Batched"], score=["Batched"]),)), reg, seed=1
    )
    for i in range(4):
        s.add_node(node(f"n{i}"))
    s.add_pod(pod("a", scheduler="p"))
    s.run_until_idle()
    assert placed(s) == {"default/a": "n3"}
    assert calls == ["filter:4", "score:3"]


def test_plugins_read_cluster_objects_through_the_handle() -> None:
    s = scheduler(nodes=1)
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "a"}, "spec": {}}
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}}
    s.add_object(svc)
    s.add_object(ns)
    objects = s.frameworks["default-scheduler"].plugins["NodeName"].handle.objects  # type: ignore[attr-defined]
    assert objects.get("Service", "a", "web") is svc
    assert objects.get("Namespace", "whatever", "a") is ns  # cluster-scoped
    assert objects.list("Service") == [svc]
    s.remove_object(svc)
    assert objects.list("Service") == []


OWNED = {
    "ownerReferences": [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u", "controller": True}
    ]
}


@pytest.mark.parametrize("owned", [True, False], ids=["controller-owned-victim", "bare-victim"])
def test_postfilter_eviction_nominates_and_requeues_the_victim(owned: bool) -> None:
    """A controller-owned victim comes back pending (its controller re-creates it); a bare pod is simply gone."""
    c = SchedulerConfiguration(
        profiles=(
            profile(
                "p", filter=["NodeResourcesFit"], preFilter=["NodeResourcesFit"], postFilter=["EvictLowest"]
            ),
        )
    )
    seen: list[CycleOutcome] = []
    s = Scheduler(c, registry(), seed=1, on_outcome=seen.append)
    s.add_node(node("n0", cpu="1"))
    low = pod("low", cpu="800m", scheduler="p", priority=1)
    if owned:
        low["metadata"].update(OWNED)
    s.add_pod(low)
    s.run_until_idle()
    s.add_pod(pod("high", cpu="800m", scheduler="p", priority=100))
    s.run_until_idle()
    assert [(p.pod, p.node) for p in s.placements] == [("default/low", "n0"), ("default/high", "n0")]
    assert {p.pod: p.node for p in s.standing_placements()} == {"default/high": "n0"}
    assert [(p.victim, p.preemptor, p.node) for p in s.preempted] == [("default/low", "default/high", "n0")]
    assert [
        o.nominated_node for o in seen if o.pod == "default/high" and o.result is Result.UNSCHEDULABLE
    ] == ["n0"]
    # The custom PostFilter's message is appended as it is.
    expected = [("default/low", "0/1 nodes are available: 1 Insufficient cpu. preemption: no victims")]
    assert [(f.pod, f.message) for f in s.unschedulable()] == (expected if owned else [])
    assert s.cache.get_pod("default/low") is None


def test_the_handle_offers_eviction_only_when_the_binder_can_evict() -> None:
    class NoEvict:
        echoes_bindings = True

        def bind(self, pod: PodInfo, node_name: str) -> Any:
            from berth.schedule.framework.interface import SUCCESS

            return SUCCESS

    with_evict = scheduler(nodes=1)
    without = scheduler(nodes=1, binder=NoEvict())
    assert with_evict.frameworks["default-scheduler"].evict is not None
    assert without.frameworks["default-scheduler"].evict is None


def test_live_loop_schedules_pods_fed_from_another_thread() -> None:
    import threading
    import time

    s = Scheduler(cfg(), seed=1, clock=time.monotonic)
    stop = threading.Event()
    worker = threading.Thread(target=s.run, args=(stop,), kwargs={"poll_seconds": 0.05}, daemon=True)
    worker.start()
    try:
        for i in range(3):
            s.add_node(node(f"n{i}"))
        for i in range(40):
            s.add_pod(pod(f"p{i}"))
        deadline = time.monotonic() + 60
        while len(s.placements) < 40 and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        stop.set()
        s.queue.close()
        worker.join(timeout=10)
    assert len({p.pod for p in s.placements}) == 40
    assert not worker.is_alive()


def test_preemption_drops_the_nomination_of_lower_priority_pods_on_the_chosen_node() -> None:
    """Upstream prepareCandidate: a lower-priority pod nominated to the node a new preemption chose may no longer
    fit there; its nomination is dropped (and reported, so live mode clears its status.nominatedNodeName)."""
    s = scheduler(nodes=0)
    s.add_node(node("n0", cpu="2"))
    s.add_pod(pod("a", cpu="1", node_name="n0", priority=0))
    s.add_pod(pod("b", cpu="1", node_name="n0", priority=10))
    s.add_pod(pod("mid", cpu="1", priority=50))
    mid = s.schedule_one()
    assert mid is not None and (mid.nominated_node, mid.unnominated) == ("n0", ())
    assert [p.victim for p in s.preempted] == ["default/a"]
    s.add_pod(pod("high", cpu="2", priority=100))
    high = s.schedule_one()
    assert high is not None and high.pod == "default/high"
    assert (high.nominated_node, high.unnominated) == ("n0", ("default/mid",))
    assert [p.key for p in s.nominator.nominated_on("n0")] == ["default/high"]
    assert "nominatedNodeName" not in (s._pending_pods["default/mid"].pod.get("status") or {})


class NeedsReadyNode(fw.FilterPlugin):
    """Filter: nodes labelled ready=true only; retried only when a node that is ready appears (a queueing hint)."""

    NAME = "NeedsReadyNode"
    hints: ClassVar[list[str]] = []

    def filter(self, state: fw.CycleState, pod: PodInfo, node: Any) -> fw.Status:
        return fw.SUCCESS if node.labels.get("ready") == "true" else fw.unresolvable("node(s) were not ready")

    def events_to_register(self) -> tuple[fw.ClusterEventWithHint, ...]:
        return (fw.ClusterEventWithHint(fw.ClusterEvent("Node", "Add"), self.ready_node_added),)

    def ready_node_added(self, pod: PodInfo, old: Any, new: Any) -> fw.QueueingHint:
        name = str(((new or {}).get("metadata") or {}).get("name"))
        NeedsReadyNode.hints.append(name)
        ready = ((new or {}).get("metadata") or {}).get("labels", {}).get("ready") == "true"
        return fw.QueueingHint.QUEUE if ready else fw.QueueingHint.QUEUE_SKIP


def test_a_plugins_queueing_hint_keeps_a_pod_waiting_through_irrelevant_events() -> None:
    reg = registry()
    reg.register(fw.PluginSpec(name=NeedsReadyNode.NAME, plugin_class=NeedsReadyNode))
    c = schedconfig.parse(
        {**API, "profiles": [{"plugins": {"filter": {"enabled": [{"name": "NeedsReadyNode"}]}}}]},
        registry=reg,
    )
    NeedsReadyNode.hints = []
    s = Scheduler(c, reg, seed=1)
    s.add_node(node("n0"))
    s.add_pod(pod("p"))
    s.run_until_idle()
    assert s.queue.where("default/p") is Where.UNSCHEDULABLE
    s.add_node(node("n1"))  # not ready: the hint says QUEUE_SKIP, the pod is not retried
    assert s.queue.where("default/p") is Where.UNSCHEDULABLE
    s.add_node(node("n2", labels={"ready": "true"}))
    s.run_until_idle()
    assert placed(s) == {"default/p": "n2"}
    assert NeedsReadyNode.hints == ["n1", "n2"]


def _resized(
    p: dict[str, Any], running_cpu: str, allocated_cpu: str, *, infeasible: bool = False
) -> dict[str, Any]:
    """The pod as the kubelet reports an in-place resize: the container's running and allocated cpu."""
    p["status"] = {
        "phase": "Running",
        "containerStatuses": [
            {
                "name": "c",
                "resources": {"requests": {"cpu": running_cpu}},
                "allocatedResources": {"cpu": allocated_cpu},
            }
        ],
    }
    if infeasible:
        p["status"]["conditions"] = [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}]
    return p


@pytest.mark.parametrize(
    ("spec_cpu", "running", "allocated", "infeasible", "counted"),
    [
        pytest.param("500m", "1500m", "1500m", False, 1500, id="shrinking-keeps-the-old-size-until-actuated"),
        pytest.param("1500m", "500m", "500m", False, 1500, id="growing-counts-the-new-size"),
        pytest.param("3", "500m", "500m", True, 500, id="infeasible-counts-what-runs"),
        pytest.param("500m", "500m", "500m", False, 500, id="settled"),
    ],
)
def test_a_pod_being_resized_in_place_counts_the_larger_of_old_and_new(
    spec_cpu: str, running: str, allocated: str, infeasible: bool, counted: int
) -> None:
    """Upstream's scheduler counts a container being resized in place at the largest of its spec, running and
    allocated requests (only the status ones when the resize is Infeasible), so it never over-commits a node
    while the kubelet catches up."""
    info = PodInfo(
        _resized(pod("r", cpu=spec_cpu, node_name="n0"), running, allocated, infeasible=infeasible)
    )
    assert info.requests["cpu"] == counted
    s = scheduler(nodes=0)
    s.add_node(node("n0", cpu="2"))
    s.add_pod(_resized(pod("r", cpu=spec_cpu, node_name="n0"), running, allocated, infeasible=infeasible))
    s.add_pod(pod("new", cpu=f"{2000 - counted + 1}m"))
    s.add_pod(pod("fits", cpu=f"{2000 - counted}m"))
    s.run_until_idle()
    # One millicore more than the resized pod leaves does not fit; exactly what it leaves does.
    assert "default/new" not in placed(s) and placed(s)["default/fits"] == "n0"


@pytest.mark.parametrize(
    ("change", "events"),
    [
        pytest.param(
            lambda p: p["status"].update(phase="Pending", conditions=[{"type": "PodScheduled"}]),
            [],
            id="status",
        ),
        pytest.param(
            lambda p: p["metadata"].update(resourceVersion="9", managedFields=[{}]), [], id="bookkeeping"
        ),
        pytest.param(lambda p: p["metadata"]["labels"].update(app="x"), ["UpdatePodLabel"], id="label"),
        pytest.param(
            lambda p: p["spec"].update(tolerations=[{"operator": "Exists"}]),
            ["UpdatePodToleration"],
            id="toleration",
        ),
        pytest.param(
            lambda p: p["spec"].pop("schedulingGates"), ["UpdatePodSchedulingGatesEliminated"], id="gates"
        ),
        pytest.param(lambda p: p["metadata"].update(annotations={"a": "b"}), ["UpdatePodOther"], id="other"),
        pytest.param(
            lambda p: p["status"].update(resourceClaimStatuses=[{"name": "c"}]),
            ["UpdatePodGeneratedResourceClaim"],
            id="claims",
        ),
    ],
)
def test_pod_update_events_are_upstreams_pod_scheduling_properties_change(
    change: Any, events: list[str]
) -> None:
    before = pod("p", schedulingGates=[{"name": "g"}])
    before["status"] = {}
    after = copy.deepcopy(before)
    change(after)
    assert pod_update_events(PodInfo(before), PodInfo(after)) == [
        fw.ClusterEvent("UnscheduledPod", e) for e in events
    ]
    # The same change of an assigned pod is about "Pod".
    before["spec"]["nodeName"] = after["spec"]["nodeName"] = "n1"
    assert pod_update_events(PodInfo(before), PodInfo(after)) == [fw.ClusterEvent("Pod", e) for e in events]
