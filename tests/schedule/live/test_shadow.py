"""``berth schedule shadow`` against the embedded cluster: another scheduler binds, berth judges read-only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from berth.cli import main
from berth.schedule import config as config_mod
from berth.schedule.live.run import LiveScheduler
from berth.schedule.plugins import registry as registry_mod

from .conftest import Env, eventually, pod
from .test_faults import PROFILE, one_profile


def most_allocated() -> config_mod.SchedulerConfiguration:
    return config_mod.parse(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {
                    "schedulerName": PROFILE,
                    "pluginConfig": [
                        {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}
                    ],
                }
            ],
        },
        "test",
        registry_mod.default_registry(),
    )


def _place(env: Env, names: list[str], shadows: list[LiveScheduler]) -> None:
    """Bind ``names`` with a real (synchronous) scheduler while the shadows watch, until each shadow judged them."""
    with env.scheduler(one_profile(), pipelined_binds=False) as real:
        assert real.wait_synced(30)
        for name in names:
            env.create(pod(name, scheduler=PROFILE, cpu="1"))
        for shadow in shadows:
            assert shadow.shadow is not None
            log = shadow.shadow
            eventually(lambda log=log: sum(log.counts.values()) >= len(names), 30, "the shadow's verdicts")


def test_the_same_configuration_agrees_and_bin_packing_disagrees(env: Env) -> None:
    same = env.scheduler(one_profile(), shadow=True, events=False)
    packing = env.scheduler(most_allocated(), shadow=True, events=False)
    with same, packing:
        assert same.wait_synced(30) and packing.wait_synced(30)
        _place(env, [f"web-{i}" for i in range(6)], [same, packing])
    assert same.shadow is not None and packing.shadow is not None
    # LeastAllocated judged by LeastAllocated: the same node, or one of equal score.
    assert sum(same.shadow.counts.values()) == 6
    assert same.shadow.counts["agree"] + same.shadow.counts["tie"] == 6
    # MostAllocated would have stacked the 1-cpu pods on the fullest node: it disagrees once one node holds one.
    assert packing.shadow.counts["disagree"] >= 1
    diff = packing.shadow.differences[0]
    assert diff.verdict == "disagree" and diff.detail.startswith("total ") and diff.ours != diff.theirs
    assert "would have agreed on" in packing.shadow.summary()


def test_shadow_writes_nothing_to_the_cluster(env: Env) -> None:
    """Over a shadow's whole run the audit log holds no write a scheduler would make -- bindings, pod status,
    Events -- only the test's own pod create (the cluster's own controllers write other things meanwhile)."""
    before = len(env.audit())
    shadow = env.scheduler(one_profile(), shadow=True, events=False)
    with shadow:
        assert shadow.wait_synced(30)
        env.create(pod("lonely", scheduler=PROFILE, cpu="1"))  # nobody binds it; the shadow must not either
        shadow.stop_event.wait(1.5)
    during = env.audit()[before:]
    writes = [
        (r["verb"], r["resource"], r.get("subresource") or "", r["name"])
        for r in during
        if r["verb"] not in ("get", "list", "watch")
        and (r["resource"] == "pods" or r["resource"].startswith("events"))
    ]
    assert writes == [("create", "pods", "", "lonely")]
    assert any(r["verb"] == "list" and r["resource"] == "pods" for r in during)  # it did read the cluster


def test_cli_prints_the_summary(env: Env, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "config.yaml"
    cfg.write_text(
        json.dumps(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "profiles": [{"schedulerName": PROFILE}],
            }
        ),
        encoding="utf-8",
    )
    kubeconfig = str(env.cluster.kubeconfig)
    args = [
        "schedule",
        "shadow",
        "--config",
        str(cfg),
        "--kubeconfig",
        kubeconfig,
        "--for",
        "2",
        "-o",
        "json",
    ]
    assert main(args) == 0  # runs for two seconds, then prints the verdicts
    doc = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert set(doc["counts"]) == {"agree", "tie", "disagree", "filtered", "unschedulable"}


def test_the_read_only_role_is_enough_for_a_shadow(env: Env, tmp_path: Path) -> None:
    """`berth schedule rbac --shadow` grants list and watch only -- and a shadow on that role syncs and judges."""
    from dataclasses import replace

    from berth.schedule import rbac

    from .conftest import FAST
    from .test_reporting import _service_account_kubeconfig

    cfg = one_profile()
    role = rbac.compute(cfg, registry_mod.default_registry()).read_only().cluster_role("shadow")
    assert all(rule["verbs"] == ["list", "watch"] for rule in role["rules"])
    assert not any("/" in res for rule in role["rules"] for res in rule["resources"])
    path = _service_account_kubeconfig(env, tmp_path, role["rules"], "shadow")
    opts = replace(FAST, kubeconfig=str(path), shadow=True, events=False)
    with LiveScheduler(cfg, registry_mod.default_registry(), opts) as shadow:
        assert shadow.wait_synced(30)
        assert not shadow.permissions.missing
        _place(env, ["a", "b"], [shadow])
    assert shadow.shadow is not None and sum(shadow.shadow.counts.values()) == 2


def test_verdicts_are_counted_on_metrics(env: Env) -> None:
    import urllib.request

    shadow = env.scheduler(one_profile(), shadow=True, events=False, metrics_port=0)
    with shadow:
        assert shadow.wait_synced(30) and shadow.health is not None
        _place(env, ["m1", "m2"], [shadow])
        url = f"http://127.0.0.1:{shadow.health.port}"
        body = urllib.request.urlopen(f"{url}/metrics", timeout=10).read().decode()
        ready = urllib.request.urlopen(f"{url}/readyz", timeout=10).status
    counted = [line for line in body.splitlines() if line.startswith("berth_shadow_decisions_total{")]
    assert sum(float(line.rsplit(" ", 1)[1]) for line in counted) == 2
    assert all(f'profile="{PROFILE}"' in line for line in counted) and ready == 200
