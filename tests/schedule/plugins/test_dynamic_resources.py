"""DynamicResources in the default profile: exactly upstream's answers for pods without ResourceClaims (Skip, then
``no new claims to deallocate`` at PostFilter, or ``not found`` when an earlier PreFilter ended the cycle), and a
plain refusal -- never a placement -- for pods that name claims (berth does not allocate devices yet)."""

from __future__ import annotations

from typing import Any

import pytest
from runtime_support import node as node_obj
from runtime_support import pod as pod_obj

from berth.schedule import config as schedconfig
from berth.schedule.framework import interface as fw
from berth.schedule.plugins import dynamic_resources as dra
from berth.schedule.scheduler import Result, Scheduler

from .support import FakeHandle, node, pod

API = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def plugin() -> dra.DynamicResources:
    return dra.DynamicResources(dra.DynamicResourcesArgs(), FakeHandle())


def claims(*names: str) -> dict[str, Any]:
    return {"resourceClaims": [{"name": n, "resourceClaimName": f"{n}-claim"} for n in names]}


def test_a_pod_without_claims_is_skipped_and_post_filter_has_nothing_to_deallocate() -> None:
    pl, state, p = plugin(), fw.CycleState(), pod()
    assert pl.pre_enqueue(p).is_success
    assert pl.pre_filter(state, p, [node()])[1].code is fw.Code.SKIP
    assert pl.filter(state, p, node()).is_success
    assert pl.post_filter(state, p, {})[1] == fw.Status(
        fw.Code.UNSCHEDULABLE, ("no new claims to deallocate",)
    )
    assert pl.reserve(state, p, "n").is_success
    assert pl.pre_bind(state, p, "n").code is fw.Code.SKIP


def test_post_filter_without_its_pre_filter_state_is_upstreams_not_found() -> None:
    status = plugin().post_filter(fw.CycleState(), pod(), {})[1]
    assert status == fw.Status(fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("not found",))


def test_a_pod_with_claims_is_refused_plainly() -> None:
    pl, state = plugin(), fw.CycleState()
    p = pod(spec=claims("gpu", "nic"))
    status = pl.pre_filter(state, p, [node()])[1]
    assert status.code is fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.message() == (
        "berth does not allocate DRA devices yet: pod default/p uses resource claim(s) gpu, nic "
        "(schedule it with kube-scheduler, or remove spec.resourceClaims)"
    )
    assert pl.post_filter(state, p, {})[1].message() == "still not schedulable"
    assert (
        pl.reserve(state, p, "n").code is fw.Code.ERROR and pl.pre_bind(state, p, "n").code is fw.Code.ERROR
    )


def scheduler() -> Scheduler:
    s = Scheduler(schedconfig.parse(API), seed=1)
    s.add_node(node_obj("n0", cpu="1"))
    return s


def test_default_profile_messages_read_as_kube_scheduler_1_35_writes_them() -> None:
    s = scheduler()
    s.add_pod(pod_obj("big", cpu="2"))
    out = s.schedule_one()
    assert out is not None and out.message == (
        "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )
    # An unresolvable PreFilter before DynamicResources' own: PostFilter stops at "not found", no preemption part.
    claim = pod_obj("vol", cpu="100m")
    claim["spec"]["volumes"] = [{"name": "d", "persistentVolumeClaim": {"claimName": "missing"}}]
    s.add_pod(claim)
    out = s.schedule_one()
    assert out is not None and out.message == (
        '0/1 nodes are available: persistentvolumeclaim "missing" not found. not found'
    )


def test_a_pod_with_claims_is_never_placed() -> None:
    s = scheduler()
    s.add_pod(pod_obj("dra", cpu="100m", **claims("gpu")))
    out = s.schedule_one()
    assert out is not None and out.result is Result.UNSCHEDULABLE
    assert out.message.startswith("0/1 nodes are available: berth does not allocate DRA devices yet")
    assert s.placements == []


# --- args: Go durations, defaults 10s / 600s ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "want", "problems"),
    [
        (None, {"filterTimeout": "10s", "bindingTimeout": "10m0s"}, []),
        ({"filterTimeout": "0s"}, {"filterTimeout": "0s", "bindingTimeout": "10m0s"}, []),
        (
            {"filterTimeout": "1m30s", "bindingTimeout": "5m"},
            {"filterTimeout": "1m30s", "bindingTimeout": "5m0s"},
            [],
        ),
        ({"filterTimeout": "-1s"}, None, ["a.filterTimeout: Invalid value: -1s: must be zero or positive"]),
        ({"bindingTimeout": "0s"}, None, ["a.bindingTimeout: Invalid value: 0s: must be at least 1 second"]),
        (
            {"bindingTimeout": "500ms"},
            None,
            ["a.bindingTimeout: Invalid value: 500ms: must be at least 1 second"],
        ),
        ({"bindingTimeout": "1s"}, {"filterTimeout": "10s", "bindingTimeout": "1s"}, []),
        (
            {"filterTimeout": "soon"},
            None,
            ['a.filterTimeout: Invalid value: "soon": must be a duration such as "10s" or "1m30s"'],
        ),
        (
            {"filterTimeout": 10},
            None,
            ['a.filterTimeout: Invalid value: 10: must be a duration such as "10s" or "1m30s"'],
        ),
        ({"timeout": "1s"}, None, ['a: unknown field "timeout"']),
    ],
    ids=[
        "defaults",
        "zero-filter-ok",
        "compound",
        "negative-filter",
        "zero-binding",
        "sub-second-binding",
        "one-second-binding",
        "garbage",
        "number",
        "unknown",
    ],
)
def test_args(raw: dict[str, Any] | None, want: dict[str, Any] | None, problems: list[str]) -> None:
    args, got = dra.DynamicResourcesArgs.decode(raw, "a")
    assert got == problems
    if want is not None:
        assert args.to_dict() == want
