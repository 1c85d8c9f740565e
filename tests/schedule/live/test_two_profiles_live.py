"""The seed exercise, live: two Deployments of 6 pause pods on four equal nodes of the embedded cluster, one per
profile of examples/two-profiles -- the concentrate pods end on one node, the default ones spread (<= 2 a node)."""

from __future__ import annotations

from collections import Counter

from berth.kube import yamlio
from berth.schedule import config as config_mod
from berth.schedule.plugins import registry as registry_mod

from .conftest import TWO_PROFILES, Env, eventually


def test_two_profiles_place_like_the_simulation(env: Env) -> None:
    cfg = config_mod.load(TWO_PROFILES / "config.yaml", registry_mod.default_registry())
    env.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "academy"}})
    with env.scheduler(cfg) as sched:
        assert sched.wait_synced(30)
        for _doc, obj in yamlio.load_objects((TWO_PROFILES / "workload.yaml").read_text(encoding="utf-8")):
            env.create(obj)

        def placed() -> list[dict[str, object]] | None:
            pods = env.pods("academy")
            bound = [p for p in pods if (p.get("spec") or {}).get("nodeName")]
            return pods if len(pods) == 12 and len(bound) == 12 else None

        pods = eventually(placed, 60, "12 bound pods")
    by_app: dict[str, Counter[str]] = {"spread": Counter(), "packed": Counter()}
    for p in pods:
        by_app[p["metadata"]["labels"]["app"]][p["spec"]["nodeName"]] += 1
    assert list(by_app["packed"].values()) == [6]
    assert max(by_app["spread"].values()) <= 2
    assert sum(by_app["spread"].values()) == 6
    # Each pod bound exactly once, through pods/binding.
    assert sorted(env.bindings_when(lambda b: len(b) >= 12).values()) == [1] * 12


def test_scheduled_events_and_pods_of_other_schedulers_left_alone(env: Env) -> None:
    cfg = config_mod.load(TWO_PROFILES / "config.yaml", registry_mod.default_registry())
    from .conftest import pod

    with env.scheduler(cfg) as sched:
        assert sched.wait_synced(30)
        env.create(pod("mine", scheduler="academy-default"))
        env.create(pod("theirs", scheduler="someone-else"))
        node = eventually(
            lambda: env.call("GET", "/api/v1/namespaces/default/pods/mine")["spec"].get("nodeName"),
            30,
            "bind",
        )

        def scheduled_event() -> dict[str, object] | None:
            items = env.call("GET", "/apis/events.k8s.io/v1/namespaces/default/events").get("items") or []
            return next((e for e in items if e.get("reason") == "Scheduled"), None)

        event = eventually(scheduled_event, 30, "Scheduled event")
    assert event["note"] == f"Successfully assigned default/mine to {node}"
    assert event["type"] == "Normal"
    assert event["action"] == "Binding"
    assert event["reportingController"] == "academy-default"
    assert event["regarding"]["name"] == "mine"
    theirs = env.call("GET", "/api/v1/namespaces/default/pods/theirs")
    assert not theirs["spec"].get("nodeName")
    assert "default/theirs" not in env.bindings()
