"""DefaultPreemption against the embedded cluster: low-priority pods fill every node, a high-priority pod arrives;
the scheduler marks the victims ``DisruptionTarget`` and deletes them, records ``Preempted`` on them, patches the
preemptor's ``status.nominatedNodeName``, and binds it on that node once the victims are gone."""

from __future__ import annotations

import logging
from typing import Any

from berth.schedule.live import api, events, informers

from .conftest import Env, eventually, pod
from .test_faults import PROFILE, one_profile


def priority_class(name: str, value: int) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
    }


def classed(name: str, cls: str, cpu: str) -> dict[str, Any]:
    p = pod(name, scheduler=PROFILE, cpu=cpu)
    p["spec"]["priorityClassName"] = cls
    return p


def _get(env: Env, name: str) -> dict[str, Any] | None:
    items = env.pods("default")
    return next((p for p in items if p["metadata"]["name"] == name), None)


def _events(env: Env, reason: str) -> list[dict[str, Any]]:
    items = env.call("GET", "/apis/events.k8s.io/v1/namespaces/default/events").get("items") or []
    return [e for e in items if e.get("reason") == reason]


def test_high_priority_pod_preempts_is_nominated_and_bound(env: Env) -> None:
    for pc in (priority_class("low", 10), priority_class("high", 1000)):
        env.call("POST", "/apis/scheduling.k8s.io/v1/priorityclasses", pc)
    lows = [f"low-{i}" for i in range(8)]
    with env.scheduler(one_profile()) as sched:
        assert sched.wait_synced(30)
        for name in lows:  # 4 nodes x 4 cpu: two 1.9-cpu pods per node leave 200m free on each
            env.create(classed(name, "low", "1900m"))
        placed = eventually(
            lambda: (
                {p["metadata"]["name"]: p["spec"].get("nodeName") for p in env.pods("default")}
                if all(p["spec"].get("nodeName") for p in env.pods("default"))
                and len(env.pods("default")) == 8
                else None
            ),
            30,
            "the low-priority pods bound",
        )
        vip = env.create(classed("vip", "high", "3"))
        bound = eventually(
            lambda: ((_get(env, "vip") or {}).get("spec") or {}).get("nodeName"), 60, "vip bound"
        )
        final = _get(env, "vip")
        failed = eventually(lambda: _events(env, "FailedScheduling"), 30, "FailedScheduling event")
        preempted = eventually(
            lambda: len(_events(env, "Preempted")) == 2 and _events(env, "Preempted"), 30, "events"
        )
        evicted = list(sched.api_binder.evicted)
    assert final is not None
    # Both pods on the chosen node had to go (3 cpu does not fit beside one 1.9-cpu pod); nothing else was touched.
    victims = sorted(n for n, node in placed.items() if node == bound)
    assert sorted(k.split("/")[1] for k in evicted) == victims and len(victims) == 2
    remaining = {p["metadata"]["name"]: p["spec"].get("nodeName") for p in env.pods("default")}
    assert remaining == {**{n: node for n, node in placed.items() if n not in victims}, "vip": bound}
    # The preemptor's status carries the nomination it was bound by.
    assert final["status"].get("nominatedNodeName") == bound
    # Its first attempt failed with the plain FitError: preemption succeeded, so no "preemption:" part.
    assert [(e["regarding"]["name"], e["note"]) for e in failed] == [
        ("vip", "0/4 nodes are available: 4 Insufficient cpu.")
    ]
    # Each victim got a Preempted event naming the preemptor's uid and the node.
    uid = vip["metadata"]["uid"]
    assert sorted((e["regarding"]["name"], e["note"], e["type"], e["action"]) for e in preempted) == [
        (v, f"Preempted by pod {uid} on node {bound}", "Normal", "Preempting") for v in victims
    ]
    # ... and, as upstream's recorder call does, the preemptor as the related object.
    assert {(e["related"]["kind"], e["related"]["name"], e["related"]["uid"]) for e in preempted} == {
        ("Pod", "vip", uid)
    }
    # The API calls, in upstream's order for each victim: DisruptionTarget condition, then delete. (If the
    # informer has not yet seen a deletion when the preemptor's next attempt comes, that attempt preempts again and
    # its delete answers 404: harmless, as upstream; only the calls that took effect are compared.)
    calls = [
        (rec.get("verb"), rec.get("subresource") or "", rec.get("name"), rec.get("user"), rec.get("code"))
        for rec in env.audit()
        if rec.get("resource") == "pods"
        and rec.get("name") in victims
        and rec.get("verb") in ("patch", "delete")
    ]
    for v in victims:
        done = [c[:2] for c in calls if c[2] == v and int(c[4] or 0) < 300]
        assert done == [("patch", "status"), ("delete", "")], calls
    assert env.bindings_when(lambda b: "default/vip" in b).get("default/vip") == 1


def test_status_writer_sets_then_clears_the_nomination(env: Env) -> None:
    """Upstream clears status.nominatedNodeName when preemption later finds no room for the pod."""
    writer = events.StatusWriter(env.client, api.PermissionLog(logging.getLogger("test")))
    env.create(pod("waiting", scheduler=PROFILE))
    path = "/api/v1/namespaces/default/pods/waiting"
    assert writer.patch(env.call("GET", path), "Unschedulable", "first", "node-1")
    nominated = env.call("GET", path)
    assert nominated["status"]["nominatedNodeName"] == "node-1"
    assert writer.patch(nominated, "Unschedulable", "second", clear_nomination=True)
    cleared = env.call("GET", path)
    assert "nominatedNodeName" not in cleared["status"]
    assert [c["message"] for c in cleared["status"]["conditions"] if c["type"] == "PodScheduled"] == [
        "second"
    ]
    # Nothing to clear and the same condition: no write.
    assert not writer.patch(cleared, "Unschedulable", "second", clear_nomination=True)


def test_a_preemption_clears_the_nomination_of_lower_priority_pods_on_its_node(env: Env) -> None:
    """Upstream prepareCandidate clears status.nominatedNodeName of lower-priority pods nominated to the node a
    preemption chose (CycleOutcome.unnominated), so they look elsewhere; pods already bound are left alone."""
    from berth.schedule.scheduler import CycleOutcome, FailureReason, Result

    writer = events.StatusWriter(env.client, api.PermissionLog(logging.getLogger("test")))
    env.create(pod("mid", scheduler="someone-else"))
    path = "/api/v1/namespaces/default/pods/mid"
    assert writer.patch(env.call("GET", path), "Unschedulable", "waiting", "node-1")
    assert not writer.clear_nomination(
        {"metadata": {"name": "mid"}, "status": {}}
    )  # nothing to clear: no write
    with env.scheduler(one_profile()) as sched:
        assert sched.wait_synced(30)
        eventually(
            lambda: (
                (sched.informers[informers.PODS.qualified].get("default/mid") or {})
                .get("status", {})
                .get("nominatedNodeName")
            ),
            30,
            "the informer sees the nomination",
        )
        outcome = CycleOutcome(
            "default/vip",
            PROFILE,
            Result.UNSCHEDULABLE,
            message="0/4 nodes are available: 4 Insufficient cpu.",
            reason=FailureReason.UNSCHEDULABLE,
            nominated_node="node-1",
            unnominated=("default/mid",),
        )
        sched._on_outcome(outcome)
    assert "nominatedNodeName" not in env.call("GET", path)["status"]
    clears = [
        rec
        for rec in env.audit()
        if rec.get("name") == "mid" and rec.get("subresource") == "status" and rec.get("verb") == "patch"
    ]
    assert len(clears) == 2  # the test's own nomination, then the scheduler's clearing
