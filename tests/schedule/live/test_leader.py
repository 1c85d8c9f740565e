"""Lease leader election: one of two replicas schedules; a stale resourceVersion loses the race; a graceful stop
hands over at once."""

from __future__ import annotations

from typing import Any

from berth.schedule import config as config_mod
from berth.schedule.live import api
from berth.schedule.live.leader import LeaderElector
from berth.schedule.plugins import registry as registry_mod

from .conftest import Env, eventually, pod

PROFILE = "ha-test"


def ha_config() -> config_mod.SchedulerConfiguration:
    return config_mod.parse(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "leaderElection": {
                "leaderElect": True,
                "leaseDuration": "3s",
                "renewDeadline": "2s",
                "retryPeriod": "200ms",
                "resourceName": "berth-ha",
                "resourceNamespace": "default",
            },
            "profiles": [{"schedulerName": PROFILE}],
        },
        "test",
        registry_mod.default_registry(),
    )


def _lease(env: Env) -> dict[str, Any]:
    return env.call("GET", "/apis/coordination.k8s.io/v1/namespaces/default/leases/berth-ha")


def test_one_replica_leads_and_hands_over_on_stop(env: Env) -> None:
    cfg = ha_config()
    first = env.scheduler(cfg, leader_elect=True, identity="replica-a").start()
    second = None
    try:
        eventually(first.leading.is_set, 30, "replica-a leads")
        second = env.scheduler(cfg, leader_elect=True, identity="replica-b").start()
        assert second.wait_synced(30)
        env.create(pod("one", scheduler=PROFILE))
        eventually(lambda: first.binder.bound, 30, "the leader binds")
        assert not second.leading.is_set()
        assert second.binder.bound == []
        assert _lease(env)["spec"]["holderIdentity"] == "replica-a"
        first.stop()  # releases the lease
        eventually(second.leading.is_set, 30, "replica-b takes over")
        env.create(pod("two", scheduler=PROFILE))
        eventually(lambda: second.binder.bound, 30, "the new leader binds")
        lease = _lease(env)
    finally:
        first.stop()
        if second is not None:
            second.stop()
    assert lease["spec"]["holderIdentity"] == "replica-b"
    assert lease["spec"]["leaseTransitions"] == 1
    assert [p.pod for p in first.binder.bound] == ["default/one"]
    assert [p.pod for p in second.binder.bound] == ["default/two"]
    assert env.bindings_when(lambda b: len(b) >= 2) == {"default/one": 1, "default/two": 1}


def test_stale_resource_version_loses_the_race(env: Env) -> None:
    perms = api.PermissionLog(__import__("logging").getLogger("test"))
    a = LeaderElector(env.client, "default", "race", "a", 3.0, 2.0, 0.2, perms)
    b = LeaderElector(env.client, "default", "race", "b", 3.0, 2.0, 0.2, perms)
    assert a.try_acquire_or_renew()  # creates the lease
    assert not b.try_acquire_or_renew()  # held and fresh
    before = env.call("GET", "/apis/coordination.k8s.io/v1/namespaces/default/leases/race")
    assert a.try_acquire_or_renew()  # renews: a new resourceVersion
    stale = dict(before)
    stale["spec"] = dict(before["spec"], holderIdentity="b")
    try:
        env.call("PUT", "/apis/coordination.k8s.io/v1/namespaces/default/leases/race", stale)
    except api.ApiError as exc:
        assert exc.status == 409
    else:
        raise AssertionError("a PUT with a stale resourceVersion must be refused")
    assert (
        env.call("GET", "/apis/coordination.k8s.io/v1/namespaces/default/leases/race")["spec"][
            "holderIdentity"
        ]
        == "a"
    )
