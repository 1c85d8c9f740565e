"""SchedulingQueue: queueSort order, backoff arithmetic, event-driven requeueing, gating, virtual time."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from runtime_support import pod_info

from berth.schedule.framework.interface import (
    SUCCESS,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
    Status,
    unresolvable,
)
from berth.schedule.framework.types import PodInfo, QueuedPodInfo
from berth.schedule.plugins.priority_sort import PrioritySort
from berth.schedule.queue import SchedulingQueue, VirtualClock, Where, event_matches


def priority_less(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
    pa, pb = a.pod_info.priority, b.pod_info.priority
    return pa > pb if pa != pb else a.timestamp < b.timestamp


def gate(pod: PodInfo) -> Status:
    if pod.labels.get("gated"):
        return Status(unresolvable("waiting for scheduling gates: [g]").code, ("gated",), "SchedulingGates")
    return SUCCESS


def make(clock: VirtualClock | None = None, **kw: object) -> tuple[SchedulingQueue, VirtualClock]:
    c = clock or VirtualClock()
    events = {
        "default-scheduler": {
            "NodeResourcesFit": (ClusterEvent("Node", "Add"), ClusterEvent("Pod", "Delete")),
            "TaintToleration": (ClusterEvent("Node", "UpdateNodeTaint"),),
            "SchedulingGates": (ClusterEvent("Pod", "UpdatePodSchedulingGatesEliminated"),),
        }
    }
    return SchedulingQueue(priority_less, clock=c, pre_enqueue=gate, plugin_events=events, **kw), c  # type: ignore[arg-type]


def fail(q: SchedulingQueue, qp: QueuedPodInfo, *plugins: str) -> Where:
    qp.unschedulable_plugins = set(plugins)
    return q.add_unschedulable_if_not_present(qp)


def drain(q: SchedulingQueue) -> list[str]:
    out = []
    while (qp := q.pop()) is not None:
        out.append(qp.pod_info.name)
        q.done(qp.key)
    return out


def test_pop_order_is_priority_then_age_then_insertion() -> None:
    q, clock = make()
    q.add(pod_info("low", priority=1))
    q.add(pod_info("a", priority=5))
    clock.advance(1)
    q.add(pod_info("later", priority=5))
    q.add(pod_info("b-same-time", priority=5))
    assert drain(q) == ["a", "later", "b-same-time", "low"]


# (operation, pod number, priority): add, update (labels; a pod's priority is immutable), delete, pop, tick.
_OPS = st.lists(
    st.tuples(
        st.sampled_from(["add", "add", "update", "delete", "pop", "tick"]),
        st.integers(0, 6),
        st.integers(0, 3),
    ),
    max_size=40,
)


@settings(max_examples=200, deadline=None)
@given(ops=_OPS)
def test_a_sort_key_pops_in_the_order_less_does(ops: list[tuple[str, int, int]]) -> None:
    """PrioritySort.sort_key (tuples compared in C) and PrioritySort.less give the same pops, whatever happens."""
    plugin = PrioritySort(None, None)  # type: ignore[arg-type]
    runs = []
    for key in (None, plugin.sort_key):
        clock = VirtualClock()
        q = SchedulingQueue(plugin.less, clock=clock, sort_key=key)
        priorities: dict[str, int] = {}
        popped = []
        for op, i, priority in ops:
            name = f"p{i}"
            if op in ("add", "update"):
                prio = priorities.setdefault(name, priority)
                q.add(pod_info(name, priority=prio, labels={"v": str(priority)}))
            elif op == "delete":
                q.delete(f"default/{name}")
                priorities.pop(name, None)
            elif op == "pop" and (qp := q.pop()) is not None:
                popped.append(qp.pod_info.name)
                q.done(qp.key)
                priorities.pop(qp.pod_info.name, None)
            else:
                clock.advance(1)
        runs.append(popped + drain(q))
    assert runs[0] == runs[1]


@pytest.mark.parametrize(
    ("attempts", "seconds"),
    [(0, 0.0), (1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (5, 10.0), (12, 10.0)],
    ids=lambda v: str(v),
)
def test_backoff_doubles_from_initial_and_caps_at_max(attempts: int, seconds: float) -> None:
    q, _ = make()
    assert q.backoff_duration(attempts) == seconds


def test_backoff_uses_configured_initial_and_max() -> None:
    q, _ = make(initial_backoff_seconds=3, max_backoff_seconds=20)
    assert [q.backoff_duration(a) for a in range(1, 6)] == [3.0, 6.0, 12.0, 20.0, 20.0]


def test_rejected_pod_waits_in_unschedulable_until_a_relevant_event() -> None:
    q, _ = make()
    q.add(pod_info("a"))
    qp = q.pop()
    assert qp is not None and qp.attempts == 1
    assert fail(q, qp, "NodeResourcesFit") is Where.UNSCHEDULABLE
    assert q.pop() is None
    # An event none of its rejecting plugins registered leaves it there.
    assert q.move_all_to_active_or_backoff(ClusterEvent("Node", "UpdateNodeTaint")) == 0
    assert q.where("default/a") is Where.UNSCHEDULABLE
    # A registered one moves it (to backoffQ: it was attempted just now).
    assert q.move_all_to_active_or_backoff(ClusterEvent("Node", "Add")) == 1
    assert q.where("default/a") is Where.BACKOFF


def test_pop_takes_a_plugin_rejected_pod_from_backoff_when_active_is_empty() -> None:
    q, _ = make()
    q.add(pod_info("a"))
    qp = q.pop()
    assert qp is not None
    fail(q, qp, "NodeResourcesFit")
    q.move_all_to_active_or_backoff(ClusterEvent("Node", "Add"))
    again = q.pop()
    assert again is not None and again.attempts == 2


def test_error_failed_pods_serve_their_backoff_in_virtual_time() -> None:
    q, clock = make()
    q.add(pod_info("a"))
    qp = q.pop()
    assert qp is not None
    assert fail(q, qp) is Where.BACKOFF  # no rejecting plugin: an error
    assert q.pop() is None
    assert q.next_backoff_expiry() == 1.0
    clock.advance_to(1.0)
    assert drain(q) == ["a"]


def test_event_during_the_cycle_sends_the_pod_to_backoff_instead_of_unschedulable() -> None:
    q, _ = make()
    q.add(pod_info("a"))
    qp = q.pop()
    assert qp is not None
    q.move_all_to_active_or_backoff(ClusterEvent("Node", "Add"))  # arrives while "a" is in flight
    assert fail(q, qp, "NodeResourcesFit") is Where.BACKOFF


def test_gated_pods_wait_for_their_gate_to_go() -> None:
    q, _ = make()
    q.add(pod_info("g", labels={"gated": "yes"}))
    assert q.where("default/g") is Where.GATED
    assert q.pop() is None
    q.move_all_to_active_or_backoff(ClusterEvent("Node", "Add"))
    assert q.where("default/g") is Where.GATED
    q.update(pod_info("g"))  # gates removed
    assert drain(q) == ["g"]


def test_unschedulable_pods_are_flushed_after_five_minutes() -> None:
    q, clock = make()
    q.add(pod_info("a"))
    qp = q.pop()
    assert qp is not None
    fail(q, qp, "NodeResourcesFit")
    clock.advance(299)
    q.tick()
    assert q.where("default/a") is Where.UNSCHEDULABLE
    clock.advance(31)
    q.tick()
    assert q.where("default/a") is Where.ACTIVE


def test_update_and_delete_reach_every_sub_queue() -> None:
    q, _ = make()
    q.add(pod_info("a", priority=1))
    q.add(pod_info("b", priority=2))
    q.update(pod_info("a", priority=3))  # re-sorted
    assert q.delete("default/b")
    assert not q.delete("default/b")
    assert drain(q) == ["a"]
    assert len(q) == 0


def test_pending_lists_every_pod_with_its_place() -> None:
    q, _ = make()
    q.add(pod_info("a"))
    q.add(pod_info("g", labels={"gated": "1"}))
    assert sorted((p.info.pod_info.name, p.where) for p in q.pending()) == [
        ("a", Where.ACTIVE),
        ("g", Where.GATED),
    ]
    assert q.counts()[Where.GATED] == 1


@pytest.mark.parametrize(
    ("registered", "event", "matches"),
    [
        (("Node", "Add"), ("Node", "Add"), True),
        (("Node", "Add"), ("Node", "Delete"), False),
        (("Node", "Add"), ("Pod", "Add"), False),
        (("Node", "Update"), ("Node", "UpdateNodeLabel"), True),
        (("Node", "UpdateNodeLabel"), ("Node", "Update"), True),
        (("Node", "UpdateNodeTaint"), ("Node", "UpdateNodeLabel"), False),
        (("*", "*"), ("Pod", "Delete"), True),
        (("Pod", "All"), ("Pod", "UpdatePodLabel"), True),
        (("Node", "Add"), ("*", "UnschedulableTimeout"), False),
    ],
    ids=lambda v: "/".join(v) if isinstance(v, tuple) else str(v),
)
def test_event_matching(registered: tuple[str, str], event: tuple[str, str], matches: bool) -> None:
    assert event_matches(ClusterEvent(*registered), ClusterEvent(*event)) is matches


def test_pop_wait_returns_none_after_close() -> None:
    q, _ = make()
    q.close()
    assert q.pop_wait(timeout=5) is None


def test_a_queueing_hint_decides_per_pod_and_change() -> None:
    """A plugin may register an event with a hint (upstream ClusterEventWithHint): the pod moves only when the hint
    says QUEUE for that change; a hint that raises counts as QUEUE."""
    seen: list[tuple[str, object, object]] = []

    def ready_nodes_only(pod: PodInfo, old: object, new: object) -> QueueingHint:
        seen.append((pod.name, old, new))
        labels = ((new or {}).get("metadata") or {}).get("labels") or {}  # type: ignore[union-attr]
        return QueueingHint.QUEUE if labels.get("ready") == "true" else QueueingHint.QUEUE_SKIP

    def broken(pod: PodInfo, old: object, new: object) -> QueueingHint:
        raise RuntimeError("bug in a plugin")

    events = {
        "default-scheduler": {
            "NeedsReady": (ClusterEventWithHint(ClusterEvent("Node", "Add"), ready_nodes_only),),
            "Broken": (ClusterEventWithHint(ClusterEvent("Node", "Add"), broken),),
        }
    }
    q = SchedulingQueue(priority_less, clock=VirtualClock(), plugin_events=events)
    q.add(pod_info("a"))
    qp = q.pop()
    assert qp is not None and fail(q, qp, "NeedsReady") is Where.UNSCHEDULABLE
    plain = {"metadata": {"name": "n1", "labels": {}}}
    assert q.move_all_to_active_or_backoff(ClusterEvent("Node", "Add"), new=plain) == 0
    assert q.where("default/a") is Where.UNSCHEDULABLE
    assert seen == [("a", None, plain)]
    ready = {"metadata": {"name": "n2", "labels": {"ready": "true"}}}
    assert q.move_all_to_active_or_backoff(ClusterEvent("Node", "Add"), new=ready) == 1

    q.add(pod_info("b"))
    drain_b = q.pop()
    while drain_b is not None and drain_b.pod_info.name != "b":
        q.done(drain_b.key)
        drain_b = q.pop()
    assert drain_b is not None and fail(q, drain_b, "Broken") is Where.UNSCHEDULABLE
    assert q.move_all_to_active_or_backoff(ClusterEvent("Node", "Add"), new=plain) == 1


# --- events while a pod is in flight, and updates of pending pods (upstream inFlightEvents / isPodUpdated) ----------


def pop_named(q: SchedulingQueue, name: str) -> QueuedPodInfo:
    qp = q.pop()
    assert qp is not None and qp.pod_info.name == name
    return qp


def test_an_event_during_the_cycle_its_rejectors_never_registered_leaves_the_pod_unschedulable() -> None:
    q, _ = make()
    q.add(pod_info("a"))
    qp = pop_named(q, "a")
    q.move_all_to_active_or_backoff(ClusterEvent("Node", "UpdateNodeLabel"))  # NodeResourcesFit doesn't care
    assert fail(q, qp, "NodeResourcesFit") is Where.UNSCHEDULABLE


def test_events_during_the_cycle_are_replayed_through_the_hints_when_it_fails() -> None:
    def big_nodes(pod: PodInfo, old: object, new: object) -> QueueingHint:
        cpu = (((new or {}).get("status") or {}).get("allocatable") or {}).get("cpu")  # type: ignore[union-attr]
        return QueueingHint.QUEUE if cpu == "64" else QueueingHint.QUEUE_SKIP

    events = {"default-scheduler": {"Fit": (ClusterEventWithHint(ClusterEvent("Node", "Add"), big_nodes),)}}
    q = SchedulingQueue(priority_less, clock=VirtualClock(), plugin_events=events)
    for name in ("a", "b"):
        q.add(pod_info(name))
    a = pop_named(q, "a")
    q.move_all_to_active_or_backoff(
        ClusterEvent("Node", "Add"), new={"status": {"allocatable": {"cpu": "2"}}}
    )
    assert fail(q, a, "Fit") is Where.UNSCHEDULABLE  # the only node added is too small: skip
    b = pop_named(q, "b")
    q.move_all_to_active_or_backoff(
        ClusterEvent("Node", "Add"), new={"status": {"allocatable": {"cpu": "64"}}}
    )
    assert q.where("default/a") is not Where.UNSCHEDULABLE  # the event reached a as usual
    assert fail(q, b, "Fit") is Where.BACKOFF  # and b, in flight, through its replay


def test_an_event_excluding_the_pod_is_not_replayed_for_it() -> None:
    q, _ = make()
    q.add(pod_info("a"))
    qp = pop_named(q, "a")
    q.move_all_to_active_or_backoff(ClusterEvent("Pod", "Delete"), exclude="default/a")
    assert fail(q, qp, "NodeResourcesFit") is Where.UNSCHEDULABLE


def test_a_pod_long_in_flight_still_sees_an_event_after_other_cycles_ended() -> None:
    """Events are dropped once no pod still in flight needs them -- not while one that popped earlier does."""
    q, _ = make()
    for name in ("a", "b", "c"):
        q.add(pod_info(name))
    a = pop_named(q, "a")  # e.g. held at Permit
    b = pop_named(q, "b")
    q.move_all_to_active_or_backoff(ClusterEvent("Node", "Add"))
    q.done(b.key)
    c = pop_named(q, "c")  # popped after the event: it must not see it
    assert fail(q, c, "NodeResourcesFit") is Where.UNSCHEDULABLE
    assert fail(q, a, "NodeResourcesFit") is Where.BACKOFF


def test_an_error_still_serves_its_backoff_whatever_happened() -> None:
    q, _ = make()
    q.add(pod_info("a"))
    qp = pop_named(q, "a")
    assert fail(q, qp) is Where.BACKOFF  # no plugin rejected it


def test_an_update_wakes_an_unschedulable_pod_only_when_its_rejectors_registered_it() -> None:
    events = {"default-scheduler": {"TaintToleration": (ClusterEvent("Pod", "UpdatePodToleration"),)}}
    q = SchedulingQueue(priority_less, clock=VirtualClock(), plugin_events=events)
    q.add(pod_info("a"))
    assert fail(q, pop_named(q, "a"), "TaintToleration") is Where.UNSCHEDULABLE
    q.update(pod_info("a"), [])  # a status-only change amounts to no event
    assert q.where("default/a") is Where.UNSCHEDULABLE
    q.update(pod_info("a"), [ClusterEvent("UnscheduledPod", "UpdatePodLabel")])
    assert q.where("default/a") is Where.UNSCHEDULABLE
    # "Pod" registrations hear pending pods' updates too (upstream EventResource.match).
    q.update(pod_info("a"), [ClusterEvent("UnscheduledPod", "UpdatePodToleration")])
    assert q.where("default/a") is not Where.UNSCHEDULABLE


def test_an_update_of_a_pod_in_flight_is_replayed_for_that_pod_alone() -> None:
    events = {"default-scheduler": {"TaintToleration": (ClusterEvent("Pod", "UpdatePodToleration"),)}}
    q = SchedulingQueue(priority_less, clock=VirtualClock(), plugin_events=events)
    for name in ("a", "b"):
        q.add(pod_info(name))
    a, b = pop_named(q, "a"), pop_named(q, "b")
    q.update(pod_info("a"), [ClusterEvent("UnscheduledPod", "UpdatePodToleration")])
    assert fail(q, b, "TaintToleration") is Where.UNSCHEDULABLE
    assert fail(q, a, "TaintToleration") is Where.BACKOFF


def test_only_registered_resources_are_heard() -> None:
    events = {"p": {"Gang": (ClusterEvent("UnscheduledPod", "Add"),), "Fit": (ClusterEvent("Node", "Add"),)}}
    q = SchedulingQueue(priority_less, plugin_events=events)
    assert q.hears("UnscheduledPod") and q.hears("Node") and not q.hears("Pod")


def test_prenqueue_runs_on_the_way_into_backoff_so_early_pops_never_take_a_gated_pod() -> None:
    """SchedulerPopFromBackoffQ (KEP-5142): Pop may take a backing-off pod when activeQ is empty, so PreEnqueue
    runs when a pod enters backoffQ. A pod that PreEnqueue now refuses (here: gained a gate while in flight; live,
    a preemptor whose evictions are still going out) is parked as gated, not popped."""
    q, _ = make()
    q.add(pod_info("a"))
    qp = q.pop()
    assert qp is not None
    qp.pod_info = pod_info("a", labels={"gated": "yes"})
    q.move_all_to_active_or_backoff(ClusterEvent("Node", "Add"))  # in flight: it will go to backoffQ
    assert fail(q, qp, "NodeResourcesFit") is Where.GATED
    assert q.pop() is None


def test_activate_moves_waiting_pods_to_active_through_prenqueue() -> None:
    q, _ = make()
    for name in ("u", "b"):
        q.add(pod_info(name))
    u, b = q.pop(), q.pop()
    assert u is not None and b is not None
    assert fail(q, u, "NodeResourcesFit") is Where.UNSCHEDULABLE
    assert fail(q, b) is Where.BACKOFF
    q.add(pod_info("g", labels={"gated": "yes"}))
    assert q.activate(["default/u", "default/b", "default/g", "default/unknown"]) == 2
    assert q.where("default/g") is Where.GATED  # PreEnqueue still refuses it
    assert sorted(drain(q)) == ["b", "u"]


def test_an_event_weighs_only_the_pods_whose_rejectors_registered_it_in_arrival_order() -> None:
    """The unschedulable pods are indexed by rejecting plugin: an event is weighed against the pods of the plugins
    that registered it, plus pods no plugin claims, and they move in the order they arrived."""
    q, _ = make()
    for name in ("fit-1", "taint", "none", "fit-2"):
        q.add(pod_info(name))
    popped = {qp.pod_info.name: qp for qp in (q.pop() for _ in range(4)) if qp is not None}
    fail(q, popped["fit-1"], "NodeResourcesFit")
    fail(q, popped["taint"], "TaintToleration")
    fail(q, popped["fit-2"], "NodeResourcesFit")
    popped["none"].unschedulable_plugins = {"SomethingElse"}  # no events registered for it in this queue
    q.add_unschedulable_if_not_present(popped["none"])
    pending = q._unschedulable
    assert pending.candidates([("default-scheduler", "NodeResourcesFit")]) == [
        "default/fit-1",
        "default/fit-2",
    ]
    assert q.move_all_to_active_or_backoff(ClusterEvent("Node", "Add")) == 2
    assert q.where("default/taint") is Where.UNSCHEDULABLE and q.where("default/none") is Where.UNSCHEDULABLE
    # a pod leaving (deleted) leaves the index too
    assert q.delete("default/taint")
    assert pending.candidates([("default-scheduler", "TaintToleration")]) == []
    assert q.move_all_to_active_or_backoff(ClusterEvent("Node", "UpdateNodeTaint")) == 0
