"""What the live scheduler tells users and operators: FailedScheduling Events and the PodScheduled condition,
/metrics /healthz /readyz, and one log line per missing RBAC permission."""

from __future__ import annotations

import logging
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from berth.kube import kubeconfig
from berth.schedule import config as config_mod
from berth.schedule import rbac
from berth.schedule.live import api, events
from berth.schedule.live.run import LiveScheduler
from berth.schedule.plugins import registry as registry_mod
from berth.schedule.queue import Where

from .conftest import Env, eventually, pod
from .test_faults import PROFILE, one_profile


def _events(env: Env, reason: str) -> list[dict[str, Any]]:
    items = env.call("GET", "/apis/events.k8s.io/v1/namespaces/default/events").get("items") or []
    return [e for e in items if e.get("reason") == reason]


def test_unschedulable_pod_gets_failed_scheduling_event_and_condition(env: Env) -> None:
    with env.scheduler(one_profile()) as sched:
        assert sched.wait_synced(30)
        env.create(pod("huge", scheduler=PROFILE, cpu="100"))
        event = eventually(lambda: _events(env, "FailedScheduling"), 30, "FailedScheduling event")[0]

        def condition() -> dict[str, Any] | None:
            got = env.call("GET", "/api/v1/namespaces/default/pods/huge")
            return next(
                (c for c in got["status"].get("conditions") or [] if c["type"] == "PodScheduled"), None
            )

        cond = eventually(condition, 30, "PodScheduled condition")
        # The writer counts a patch once the server has answered it: the condition can be visible a moment before.
        patches = eventually(lambda: sched.status.patches, 30, "the status patch counted")
        # Another cluster event retries the pod with the same verdict: no second status write.
        env.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "nudge"}})
        env.create(pod("small", scheduler=PROFILE))
        eventually(
            lambda: env.call("GET", "/api/v1/namespaces/default/pods/small")["spec"].get("nodeName"),
            30,
            "bind",
        )
        assert sched.status.patches == patches
    # 100 cpu exceeds every node's allocatable (UnschedulableAndUnresolvable): no node is a preemption candidate.
    message = (
        "0/4 nodes are available: 4 Insufficient cpu. "
        "no new claims to deallocate, preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling."
    )
    assert event["note"] == message
    assert (event["type"], event["action"], event["reportingController"]) == (
        "Warning",
        "Scheduling",
        PROFILE,
    )
    assert cond["status"] == "False"
    assert cond["reason"] == "Unschedulable"
    assert cond["message"] == message
    assert "default/huge" not in env.bindings()


def test_a_retry_before_the_informer_saw_the_condition_writes_it_once(env: Env) -> None:
    """The scheduler's own condition write reaches its informer a moment later; a retry with the same verdict in
    between (on a loaded machine) must not write the condition again. A later change of verdict is written, and
    once the informer's copy is as new as the write, that copy is what counts."""
    writer = events.StatusWriter(env.client, api.PermissionLog(logging.getLogger("test")))
    path = "/api/v1/namespaces/default/pods/late"
    stale = env.create(pod("late", scheduler=PROFILE))  # the informer's copy: no condition yet
    assert writer.patch(stale, "Unschedulable", "no room")
    assert not writer.patch(stale, "Unschedulable", "no room")  # the same verdict, the copy still stale
    assert writer.patch(stale, "Unschedulable", "still no room")  # a new verdict is written
    assert writer.patches == 2
    fresh = env.call("GET", path)
    # Someone else changed the condition after the scheduler's write: the fresh copy counts, so it is written back.
    meta = fresh["metadata"]
    changed = {**fresh, "metadata": {**meta, "resourceVersion": str(int(meta["resourceVersion"]) + 1)}}
    changed["status"] = {"conditions": [{"type": "PodScheduled", "status": "False", "reason": "Other"}]}
    assert writer.patch(changed, "Unschedulable", "still no room")
    writer.forget("default/late")
    assert not writer.patch(env.call("GET", path), "Unschedulable", "still no room")
    assert writer.patches == 3


def test_its_own_status_write_does_not_retry_an_unschedulable_pod(
    env: Env, caplog: pytest.LogCaptureFixture
) -> None:
    """The PodScheduled condition the scheduler writes comes back as an update of the pending pod. Upstream's queue
    ignores status-only updates (``isPodUpdated``); so does berth's: the pod is tried once and then waits in
    unschedulable for a cluster event, instead of being retried after each backoff."""

    def attempts() -> int:
        return sum("could not schedule default/huge" in r.getMessage() for r in caplog.records)

    with caplog.at_level(logging.INFO, logger="berth.schedule.live"), env.scheduler(one_profile()) as sched:
        assert sched.wait_synced(30)
        env.create(pod("huge", scheduler=PROFILE, cpu="100"))
        eventually(lambda: sched.status.patches >= 1, 30, "the PodScheduled condition written")
        eventually(lambda: sched.scheduler.queue.where("default/huge") is Where.UNSCHEDULABLE, 30, "parked")
        # Longer than the first backoffs (1 s, 2 s): a pod retried on its own status write would have gone again.
        time.sleep(3.5)
        assert attempts() == 1
        assert sched.scheduler.queue.where("default/huge") is Where.UNSCHEDULABLE


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_metrics_healthz_readyz(env: Env) -> None:
    with env.scheduler(one_profile(), metrics_port=0) as sched:
        assert sched.health is not None
        base = f"http://127.0.0.1:{sched.health.port}"
        assert sched.wait_synced(30)
        assert _get(base + "/readyz") == (200, "ok\n")
        assert _get(base + "/healthz") == (200, "ok\n")
        env.create(pod("m1", scheduler=PROFILE))
        env.create(pod("m2", scheduler=PROFILE, cpu="100"))
        eventually(lambda: sched.scheduler.failures, 60, "a failure")
        # m1's binding may arrive while m2 is being tried: m2 then goes to backoffQ and is tried again before it
        # rests among the unschedulable pods. Scrape once the queue is there (what the gauges must then show).
        queue = sched.scheduler.queue
        eventually(
            lambda: queue.where("default/m2") is Where.UNSCHEDULABLE and queue.where("default/m1") is None,
            60,
            "m2 resting in the unschedulable queue",
        )
        sli = "scheduler_pod_scheduling_sli_duration_seconds_count"
        code, text = eventually(
            lambda: (got := _get(base + "/metrics"))[1].count(sli) and got, 60, "e2e sample"
        )
        assert _get(base + "/nope")[0] == 404
    assert code == 200
    lines = text.splitlines()
    values = {
        line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1]) for line in lines if not line.startswith("#")
    }
    assert values[f'scheduler_schedule_attempts_total{{profile="{PROFILE}",result="scheduled"}}'] == 1.0
    assert values[f'scheduler_schedule_attempts_total{{profile="{PROFILE}",result="unschedulable"}}'] >= 1.0
    assert 'scheduler_pending_pods{queue="unschedulable"} 1.0' in lines
    assert 'scheduler_pending_pods{queue="active"} 0.0' in lines
    assert values['scheduler_pod_scheduling_sli_duration_seconds_count{attempts="1"}'] == 1.0
    assert any(line.startswith("scheduler_scheduling_attempt_duration_seconds_bucket") for line in lines)
    assert "berth_scheduler_leader 1.0" in lines


def _service_account_kubeconfig(env: Env, tmp_path: Path, rules: list[dict[str, Any]], name: str) -> Path:
    """A ServiceAccount bound to a ClusterRole with ``rules``; returns a kubeconfig using its token."""
    env.create(
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name, "namespace": "default"}}
    )
    env.create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": name},
            "rules": rules,
        }
    )
    env.create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
            "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": "default"}],
        }
    )
    token = env.call(
        "POST",
        f"/api/v1/namespaces/default/serviceaccounts/{name}/token",
        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}},
    )["status"]["token"]
    assert env.cluster.pki is not None
    return kubeconfig.write(
        tmp_path / f"{name}.kubeconfig", env.cluster.url, token, ca_pem=env.cluster.pki.ca_pem()
    )


def _scheduler_as(path: Path, cfg: config_mod.SchedulerConfiguration) -> LiveScheduler:
    from dataclasses import replace

    from .conftest import FAST

    return LiveScheduler(cfg, registry_mod.default_registry(), replace(FAST, kubeconfig=str(path)))


def test_too_small_role_logs_one_line_per_missing_permission(
    env: Env, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cfg = one_profile()
    too_small = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}]
    path = _service_account_kubeconfig(env, tmp_path, too_small, "small")
    caplog.set_level(logging.ERROR, logger="berth.schedule.live")
    with _scheduler_as(path, cfg) as sched:
        eventually(lambda: len(sched.permissions.missing) >= 10, 30, "403s from the informers")
        assert not sched.synced.is_set()  # never schedules with half a view of the cluster
        sched.stop_event.wait(1.0)  # let the informers retry a few times
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("missing permission:")]
    assert len(lines) == len(set(lines)) == len(sched.permissions.missing)
    assert any(line.startswith("missing permission: list nodes (core) cluster-wide -- ") for line in lines)
    assert any(line.startswith("missing permission: list replicasets (apps) cluster-wide") for line in lines)
    assert not any(" pods (core)" in line and "list" in line for line in lines)
    assert 'cannot list resource "nodes"' in next(line for line in lines if " nodes " in line)


def test_the_computed_minimal_role_is_enough(env: Env, tmp_path: Path) -> None:
    cfg = one_profile()
    role = rbac.compute(cfg, registry_mod.default_registry()).cluster_role("berth-scheduler")
    path = _service_account_kubeconfig(env, tmp_path, role["rules"], "berth-scheduler")
    with _scheduler_as(path, cfg) as sched:
        assert sched.wait_synced(30)
        env.create(pod("ok", scheduler=PROFILE))
        env.create(pod("too-big", scheduler=PROFILE, cpu="100"))
        eventually(lambda: env.bindings().get("default/ok") == 1, 30, "bind as the service account")
        eventually(lambda: _events(env, "FailedScheduling") and _events(env, "Scheduled"), 30, "events")
        eventually(lambda: sched.status.patches == 1, 30, "status patch")
    assert sched.permissions.missing == []


def test_explain_logs_each_attempt_of_the_followed_pods_only(
    env: Env, caplog: pytest.LogCaptureFixture
) -> None:
    """``schedule run --explain``: the followed pod's attempts are logged as simulate prints them (the score
    table names the node it was bound to); other pods log only their usual line."""
    caplog.set_level(logging.INFO, logger="berth.schedule.live")
    with env.scheduler(one_profile(), explain=("watch-*",)) as sched:
        assert sched.wait_synced(30)
        env.create(pod("watch-me", scheduler=PROFILE))
        env.create(pod("other", scheduler=PROFILE))
        for name in ("watch-me", "other"):
            eventually(
                lambda name=name: env.call("GET", f"/api/v1/namespaces/default/pods/{name}")["spec"].get(
                    "nodeName"
                ),
                30,
                f"{name} bound",
            )
    node = env.call("GET", "/api/v1/namespaces/default/pods/watch-me")["spec"]["nodeName"]
    explained = [r.getMessage() for r in caplog.records if r.getMessage().startswith("explain ")]
    assert len(explained) == 1
    text = explained[0]
    assert text.startswith(f"explain default/watch-me ({PROFILE}): attempt 1 scheduled on {node}")
    assert "plugin (weight)" in text and f"{node} *" in text and "total" in text
    assert not any("default/other" in m for m in explained)
