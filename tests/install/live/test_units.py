"""Pure pieces of the live executors: CRD version priority, wait judgements, drift comparison, durations."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from berth.bench import install as bench
from berth.install import apply, kubeops, receipt, status, workdir
from berth.install import plan as plan_mod


def crd(*versions: str) -> dict[str, Any]:
    return {"metadata": {"name": "things.example.com"}, "spec": {"versions": [{"name": v} for v in versions]}}


def test_version_priority_is_kubernetes_order() -> None:
    names = ["v1alpha1", "v2", "v1beta2", "v1", "v2beta1", "v1beta1", "foo"]
    assert sorted(names, key=apply.version_key, reverse=True) == [
        "v2", "v1", "v2beta1", "v1beta2", "v1beta1", "v1alpha1", "foo",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("desired", "live", "decision"),
    [
        (crd("v1"), None, "create"),
        (crd("v1"), crd("v1"), "update"),
        (crd("v1beta1", "v1"), crd("v1beta1"), "upgrade"),
        (crd("v1"), crd("v1", "v2"), "newer-on-cluster"),
        (crd("v1beta1"), crd("v1"), "newer-on-cluster"),
    ],
    ids=["absent", "same", "older-on-cluster", "newer-major", "ga-beats-beta"],
)
def test_crd_decision(desired: dict[str, Any], live: dict[str, Any] | None, decision: str) -> None:
    assert apply.crd_decision(desired, live)[0] == decision


def cond(ctype: str, status_: str = "True", **kw: str) -> dict[str, Any]:
    return {"type": ctype, "status": status_, **kw}


@pytest.mark.parametrize(
    ("judge", "obj", "state"),
    [
        (kubeops.judge_job, {"status": {"conditions": [cond("Complete")]}}, "ready"),
        (
            kubeops.judge_job,
            {"status": {"conditions": [cond("Failed", reason="BackoffLimitExceeded")]}},
            "failed",
        ),
        (kubeops.judge_job, {"status": {"conditions": [cond("SuccessCriteriaMet")], "active": 1}}, "pending"),
        (kubeops.judge_pod, {"status": {"phase": "Succeeded"}}, "ready"),
        (kubeops.judge_pod, {"status": {"phase": "Failed"}}, "failed"),
        (kubeops.judge_pod, {"status": {"phase": "Running"}}, "pending"),
        (kubeops.judge_crd, {"status": {"conditions": [cond("Established")]}}, "ready"),
        (kubeops.judge_crd, {"status": {"conditions": [cond("NamesAccepted", "False")]}}, "pending"),
        (
            kubeops.judge_rollout,
            {
                "kind": "Deployment",
                "metadata": {"generation": 2},
                "spec": {"replicas": 2},
                "status": {
                    "observedGeneration": 2,
                    "replicas": 2,
                    "updatedReplicas": 2,
                    "availableReplicas": 2,
                },
            },
            "ready",
        ),
        (
            kubeops.judge_rollout,
            {
                "kind": "Deployment",
                "metadata": {"generation": 2},
                "spec": {"replicas": 2},
                "status": {
                    "observedGeneration": 1,
                    "replicas": 2,
                    "updatedReplicas": 2,
                    "availableReplicas": 2,
                },
            },
            "pending",
        ),
        (
            kubeops.judge_rollout,
            {
                "kind": "StatefulSet",
                "metadata": {"generation": 1},
                "spec": {"replicas": 3},
                "status": {"observedGeneration": 1, "readyReplicas": 2, "updatedReplicas": 3},
            },
            "pending",
        ),
        (
            kubeops.judge_rollout,
            {
                "kind": "Deployment",
                "metadata": {"generation": 1},
                "spec": {},
                "status": {
                    "observedGeneration": 1,
                    "conditions": [cond("Progressing", "False", reason="ProgressDeadlineExceeded")],
                },
            },
            "failed",
        ),
    ],
    ids=[
        "job-complete",
        "job-failed-is-terminal",
        "job-interim-condition",
        "pod-succeeded",
        "pod-failed",
        "pod-running",
        "crd-established",
        "crd-name-clash",
        "deployment-available",
        "deployment-stale-generation",
        "statefulset-not-ready",
        "deployment-deadline",
    ],
)
def test_wait_judgements(judge: Any, obj: dict[str, Any], state: str) -> None:
    assert judge(obj).state == state


@pytest.mark.parametrize(
    ("desired", "live", "paths"),
    [
        ({"data": {"a": "1"}}, {"data": {"a": "1", "b": "2"}}, []),
        ({"data": {"a": "1"}}, {"data": {"a": "2"}}, [".data.a"]),
        ({"spec": {"ports": [{"port": 80}]}}, {"spec": {"ports": [{"port": 80, "protocol": "TCP"}]}}, []),
        ({"spec": {"ports": [{"port": 80}]}}, {"spec": {"ports": []}}, [".spec.ports"]),
        ({"spec": {"replicas": 1}}, {"spec": {}}, [".spec.replicas"]),
        ({"metadata": {"name": "x", "namespace": "n"}}, {"metadata": {"name": "x"}}, []),
    ],
    ids=[
        "server-added-key",
        "changed-value",
        "defaulted-list-item-field",
        "list-length",
        "removed",
        "meta-skip",
    ],
)
def test_drift_is_a_subset_comparison(desired: Any, live: Any, paths: list[str]) -> None:
    assert status.differences(desired, live) == paths


def test_secret_string_data_compares_as_data() -> None:
    body = status.normalised({"kind": "Secret", "stringData": {"k": "v"}})
    assert body == {"kind": "Secret", "data": {"k": "dg=="}}


def test_reporter_shows_a_live_bar_on_terminals_and_plain_lines_elsewhere() -> None:
    import io

    from rich.console import Console

    from berth.install.plan import PlanObject, Step

    step = Step("apply", (PlanObject("ConfigMap", "a", "ns", "v1", "x"),), "server-side apply 1 object(s)")
    plain = io.StringIO()
    r = apply.Reporter(stream=plain)
    with r.live():
        r.step(1, 2, step)
        with r.waiting("waiting for nothing"):
            r.object("+ ConfigMap ns/a")
    assert plain.getvalue() == "[1/2] apply: server-side apply 1 object(s)\n      + ConfigMap ns/a\n"
    tty = io.StringIO()
    r = apply.Reporter()
    r.console = Console(file=tty, force_terminal=True, markup=False, highlight=False, width=100)
    with r.live():
        r.step(1, 2, step)
        with r.waiting("waiting for nothing"):
            r.object("+ ConfigMap ns/a")
    assert "step 1/2 apply" in tty.getvalue() and "+ ConfigMap ns/a" in tty.getvalue()


def test_bench_chart_has_40_objects_and_3_hook_jobs(tmp_path: Any) -> None:
    from berth.install import split

    chart = bench.live_chart(tmp_path)
    rendered = (chart / "templates" / "all.yaml").read_text()
    text = "".join(f"---\n# Source: bench/templates/all.yaml\n{d}\n" for d in rendered.split("\n---\n"))
    result = split.from_render(text)
    assert len(result.ordinary) + len(result.secrets) == bench.LIVE_OBJECTS
    assert [h.obj.kind for h in result.hooks] == ["Job"] * bench.LIVE_HOOK_JOBS


def test_an_apply_steps_objects_are_written_at_most_every_save_interval(
    edge_work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An apply step's outcomes reach the receipt file at most every SAVE_INTERVAL (a deferred record); every
    other record and the step's end write at once, so a finished or failed step's receipt is complete."""
    now = [100.0]
    monkeypatch.setattr("berth.install.receipt.time.monotonic", lambda: now[0])
    wd = workdir.load_workdir(edge_work)
    plan = workdir.build_plan(wd, plan_mod.Action.INSTALL, str(edge_work))
    step = next(i for i, s in enumerate(plan.steps, 1) if s.phase == plan_mod.Phase.APPLY.value)
    obj = plan.steps[step - 1].objects[0]
    rec = receipt.RunReceipt(edge_work, plan, plan.steps, "ctx", "https://x", "plan-id")

    def on_disk() -> list[str]:
        return [o["key"] for o in receipt.load(rec.path)["spec"]["steps"][step - 1]["objects"]]

    rec.start_step(step)
    rec.record(step, obj, "k0", "applied", defer=True)
    assert on_disk() == []  # written by start_step a moment ago
    now[0] += receipt.SAVE_INTERVAL
    rec.record(step, obj, "k1", "applied", defer=True)
    assert on_disk() == ["k0", "k1"]
    rec.record(step, obj, "k2", "applied", defer=True)
    assert on_disk() == ["k0", "k1"]
    rec.record(step, obj, "k3", "created")  # not deferred: written at once
    assert on_disk() == ["k0", "k1", "k2", "k3"]
    rec.record(step, obj, "k4", "applied", defer=True)
    rec.finish_step(step, "done")
    assert on_disk() == ["k0", "k1", "k2", "k3", "k4"]


def test_a_wait_polls_every_20ms_for_a_second_then_less_often() -> None:
    now = [0.0]
    sleeps: list[float] = []

    def sleep(s: float) -> None:
        sleeps.append(s)
        now[0] += s

    kube = kubeops.KubeOps(connection=None, sleep=sleep, clock=lambda: now[0])  # type: ignore[arg-type]
    r = kube.poll(lambda: {}, lambda obj: kubeops.Readiness("pending", "rolling"), timeout=5.0)
    assert r.state == "timeout"
    fast = next(i for i, s in enumerate(sleeps) if s != 0.02)
    assert fast == round(kubeops.FAST_POLL_SECONDS / 0.02)
    later = sleeps[fast:-1]  # the last sleep ends at the deadline
    assert later[0] > 0.02 and max(later) == 0.5
    assert all(b >= a for a, b in itertools.pairwise(later))


@pytest.mark.parametrize(
    "line",
    [
        "      ~ ConfigMap berth/cm-0",
        "",
        "      ✓ Deployment berth/d0 ready (available 2/2)",
        "  ~ Secret berth/s",
        "warning: :thumbs_up: stays as rich renders it",
        "[1/4] namespace: ensure the release namespace berth exists (like helm --create-namespace)",
        "      -  k: next-v0",
        "a: b:c",
        "a\ttab and a\rcarriage return",
        "   trailing spaces   ",
    ],
)
def test_reporter_lines_off_a_terminal_are_what_rich_writes(line: str) -> None:
    import io

    from rich.console import Console

    ours, theirs = io.StringIO(), io.StringIO()
    apply.Reporter(stream=ours).print(line)
    Console(file=theirs, markup=False, highlight=False, soft_wrap=True).print(line)
    assert ours.getvalue() == theirs.getvalue()
