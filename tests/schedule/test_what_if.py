"""``Scheduler.what_if`` (what ``berth schedule shadow`` asks) and the shadow's verdicts."""

from __future__ import annotations

from runtime_support import node, pod

from berth.schedule import config as schedconfig
from berth.schedule.live import shadow
from berth.schedule.scheduler import Scheduler

TAINT = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}


def scheduler() -> Scheduler:
    s = Scheduler(schedconfig.default_config(), seed=1)
    s.add_node(node("a", cpu="4"))
    s.add_node(node("b", cpu="4"))
    s.add_node(node("c", cpu="4", taints=[TAINT]))
    s.add_pod(pod("busy", cpu="2", node_name="b"))
    return s


def test_what_if_answers_without_changing_anything() -> None:
    s = scheduler()
    start, rng = s.next_start_node_index, s.rng.getstate()
    attempt = s.what_if(pod("web", cpu="1"))
    assert attempt is not None and attempt.node == "a" and attempt.best_nodes == ("a",)
    assert {n.node: n.passed for n in attempt.nodes} == {"a": True, "b": True, "c": False}
    assert (s.next_start_node_index, s.rng.getstate()) == (start, rng)
    assert s.placements == [] and not s.cache.is_assumed("default/web") and len(s.queue) == 0
    assert s.what_if(pod("other", scheduler="nobody")) is None  # no profile serves it


def test_what_if_does_not_preempt() -> None:
    s = Scheduler(schedconfig.default_config(), seed=1)
    s.add_node(node("a", cpu="1"))
    s.add_pod(pod("low", cpu="1", node_name="a", priority=0))
    attempt = s.what_if(pod("high", cpu="1", priority=100))
    assert attempt is not None and attempt.result == "unschedulable" and not attempt.victims
    assert s.preempted == [] and s.cache.get_pod("default/low") is not None


def test_verdicts() -> None:
    s = scheduler()
    attempt = s.what_if(pod("web", cpu="1"))
    assert attempt is not None
    assert shadow.judge("default/web", "a", attempt).verdict == "agree"
    disagree = shadow.judge("default/web", "b", attempt)
    assert (
        disagree.verdict == "disagree" and disagree.detail.startswith("total ") and " on b" in disagree.detail
    )
    # a has all 4 cpu free, b only 2: LeastAllocated's gap is the main reason for a
    assert "; most of it: NodeResourcesFit +" in disagree.detail
    filtered = shadow.judge("default/web", "c", attempt)
    assert (filtered.verdict, filtered.detail) == (
        "filtered",
        "TaintToleration: node(s) had untolerated taint(s)",
    )
    huge = s.what_if(pod("huge", cpu="40"))
    assert huge is not None and shadow.judge("default/huge", "a", huge).verdict == "unschedulable"
    even = Scheduler(schedconfig.default_config(), seed=1)
    for name in ("x", "y"):
        even.add_node(node(name))
    tie = even.what_if(pod("web"))
    assert tie is not None and set(tie.best_nodes) == {"x", "y"}
    other = ({"x", "y"} - {tie.node}).pop()
    assert shadow.judge("default/web", other, tie).verdict == "tie"


def test_the_log_counts_and_summarises() -> None:
    s = scheduler()
    log = shadow.ShadowLog()
    for name, theirs in (("p1", "a"), ("p2", "c")):
        pending = pod(name, cpu="1")
        bound = {**pending, "spec": {**pending["spec"], "nodeName": theirs}}
        decision = log.observe(s, pending, bound)
        assert decision is not None
    assert dict(log.counts) == {"agree": 1, "filtered": 1}
    assert [d.pod for d in log.differences] == ["default/p2"]
    assert log.summary().startswith(
        "shadow: 2 pods bound by another scheduler; berth would have agreed on 1 (50 %)"
    )
