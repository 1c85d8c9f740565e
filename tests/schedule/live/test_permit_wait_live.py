"""Permit WAIT on the embedded cluster: the gang example holds members unbound (no pods/binding request) until the
last one arrives, then binds them all; a gang that never completes gets FailedScheduling with upstream's timeout
message and binds nothing."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from berth.schedule import config as config_mod
from berth.schedule.live.run import LiveScheduler
from berth.schedule.plugins import registry as registry_mod

from .conftest import FAST, REPO, Env, eventually, pod

GANG = REPO / "examples" / "gang"


@pytest.fixture(autouse=True)
def gang_on_path(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.syspath_prepend(str(GANG))
    yield
    sys.modules.pop("berth_gang", None)


def gang_scheduler(env: Env, timeout: float) -> LiveScheduler:
    reg = registry_mod.default_registry()
    reg.register(registry_mod.load_user_plugin("berth_gang:Gang"))
    doc: dict[str, Any] = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": {"multiPoint": {"enabled": [{"name": "Gang"}]}},
                "pluginConfig": [{"name": "Gang", "args": {"timeoutSeconds": timeout}}],
            }
        ],
    }
    cfg = config_mod.parse(doc, registry=reg)
    return LiveScheduler(cfg, reg, replace(FAST, kubeconfig=str(env.cluster.kubeconfig)))


def member(name: str, group: str, size: int) -> dict[str, Any]:
    return pod(name, labels={"gang.berth.dev/name": group, "gang.berth.dev/min-member": str(size)})


def node_of(env: Env, name: str) -> str:
    return str(env.call("GET", f"/api/v1/namespaces/default/pods/{name}")["spec"].get("nodeName") or "")


def test_a_gang_is_bound_only_when_its_last_member_arrives(env: Env, tmp_path: Path) -> None:
    with gang_scheduler(env, timeout=120) as sched:
        assert sched.wait_synced(30)
        env.create(member("m0", "train", 3))
        env.create(member("m1", "train", 3))
        eventually(lambda: len(sched.scheduler.waiting_pods) == 2, 30, "two members held at Permit")
        time.sleep(0.5)  # give a wrong binding every chance to happen
        assert env.bindings() == {}
        assert node_of(env, "m0") == "" and node_of(env, "m1") == ""
        env.create(member("m2", "train", 3))
        bound = env.bindings_when(lambda b: len(b) == 3)
    assert bound == {"default/m0": 1, "default/m1": 1, "default/m2": 1}
    assert all(node_of(env, f"m{i}") for i in range(3))


def test_an_incomplete_gang_times_out_with_a_failed_scheduling_event(env: Env) -> None:
    with gang_scheduler(env, timeout=1) as sched:
        assert sched.wait_synced(30)
        env.create(member("lonely", "eval", 2))

        def failed() -> dict[str, Any] | None:
            items = env.call("GET", "/apis/events.k8s.io/v1/namespaces/default/events").get("items") or []
            return next((e for e in items if e.get("reason") == "FailedScheduling"), None)

        event = eventually(failed, 60, "FailedScheduling event")
        condition = eventually(
            lambda: next(
                (
                    c
                    for c in (
                        env.call("GET", "/api/v1/namespaces/default/pods/lonely").get("status") or {}
                    ).get("conditions")
                    or []
                    if c.get("type") == "PodScheduled"
                ),
                None,
            ),
            30,
            "PodScheduled condition",
        )
    message = "0/1 nodes are available: 1 rejected due to timeout after waiting 1s at plugin Gang."
    assert event["note"] == message
    assert (condition["status"], condition["reason"], condition["message"]) == (
        "False",
        "Unschedulable",
        message,
    )
    assert env.bindings() == {}
