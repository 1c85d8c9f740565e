"""``berth schedule snapshot`` against the embedded cluster: the files it writes are ``simulate`` input that
reproduces what is running, and the Pending pods can be placed with another configuration."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from berth.cli import main
from berth.kube import yamlio
from berth.schedule.simulate import load_cluster

from .conftest import Env, eventually, pod
from .test_reporting import _service_account_kubeconfig

API = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def _bound(env: Env, names: list[str]) -> dict[str, str]:
    def check() -> dict[str, str] | None:
        got = {p["metadata"]["name"]: p["spec"].get("nodeName") for p in env.pods("default")}
        return got if all(got.get(n) for n in names) else None

    found = eventually(check, 60, "the bindings")
    return {n: found[n] for n in names}


def test_snapshot_writes_what_runs_and_what_waits_as_simulate_input(
    env: Env, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env.call(
        "POST",
        "/apis/scheduling.k8s.io/v1/priorityclasses",
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "gold"},
            "value": 500,
        },
    )
    with env.scheduler() as sched:  # berth's scheduler, default profile, binds the web pods
        assert sched.wait_synced(30)
        for i in range(3):
            env.create(pod(f"web-{i}", cpu="1"))
        env.create(
            pod("waiting", scheduler="batch", cpu="2")
        )  # no scheduler serves "batch": it stays Pending
        placed = _bound(env, ["web-0", "web-1", "web-2"])
    cluster, pending = tmp_path / "cluster.yaml", tmp_path / "pending.yaml"
    args = ["schedule", "snapshot", "--kubeconfig", str(env.cluster.kubeconfig), "--out", str(cluster)]
    assert main([*args, "--pending", str(pending)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"wrote {cluster} and {pending}: 4 Nodes, 3 PriorityClasses, ")  # gold + 2 system
    assert "3 Pods; 1 Pending pod\n" in out

    loaded = load_cluster(str(cluster))
    assert len(loaded.nodes) == 4
    running = {p.obj["metadata"]["name"]: p.obj["spec"]["nodeName"] for p in loaded.bound_pods}
    assert {n: running[n] for n in placed} == placed
    text = cluster.read_text(encoding="utf-8")
    assert "managedFields" not in text and "kind: Secret" not in text
    ((_doc, waiting),) = yamlio.load_objects(pending.read_text(encoding="utf-8"))
    assert waiting["metadata"]["name"] == "waiting" and not waiting["spec"].get("nodeName")

    # The Pending pod, placed by a profile that serves "batch", on the snapshot: it goes where 2 cpu are free.
    cfg = tmp_path / "config.yaml"
    cfg.write_text(json.dumps({**API, "profiles": [{"schedulerName": "batch"}]}), encoding="utf-8")
    sim = [
        "schedule",
        "simulate",
        "--config",
        str(cfg),
        "--cluster",
        str(cluster),
        "--workload",
        str(pending),
    ]
    assert main([*sim, "-o", "json"]) == 0
    doc: dict[str, Any] = json.loads(capsys.readouterr().out)
    ((placement,),) = [doc["placements"]]
    assert placement["pod"] == "default/waiting" and placement["schedulerName"] == "batch"


def test_a_snapshot_without_list_on_nodes_is_one_clear_error(
    env: Env, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    only_pods = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}]
    path = _service_account_kubeconfig(env, tmp_path, only_pods, "reader")
    out = tmp_path / "cluster.yaml"
    assert main(["schedule", "snapshot", "--kubeconfig", str(path), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "cannot list nodes: 403 Forbidden" in err and "grant list on nodes" in err
    assert not out.exists()  # nothing half-written
