"""``berth install test`` against a real embedded cluster: the chart's test hooks run one at a time in Helm's order
(weight, then name), each waited on, with their delete policies; a failed one stops the run with exit 1 naming it;
``--logs`` prints each test Job's pod logs, also of hooks already deleted after success; nothing but the test hooks
is written; a release without test hooks exits 0 with one line.

Most test hooks here are Jobs; the last test uses a bare Pod as ``helm create`` scaffolds it. The embedded
cluster's simulated kubelet completes both (and fails them on ``berth.dev/simulate-failure``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from berth.cluster import Cluster
from berth.install import plan as plan_mod
from berth.install import receipt, workdir
from berth.install.live_cli import apply_command, release_test_command

from .conftest import Audit, run_live, setup_workdir
from .test_apply import fail_job

NAMESPACE = "probe"
HOOKS = ("test-token", "z-first", "a-check", "b-check")
"""The test hooks in Helm's order: weight -2, -1, then the two of weight 0 by name."""
SECRET_VALUE = "s3cr3t-token-value"


def job(name: str, weight: int, event: str, policies: str | None) -> str:
    policy = f"\n    helm.sh/hook-delete-policy: {policies}" if policies else ""
    return (
        f"apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {name}\n  annotations:\n"
        f'    helm.sh/hook: {event}\n    helm.sh/hook-weight: "{weight}"{policy}\n'
        "spec:\n  backoffLimit: 0\n  template:\n"
        f"    metadata:\n      annotations:\n        berth.dev/log: '{name}: all checks passed'\n"
        "    spec:\n      restartPolicy: Never\n"
        f"      containers: [{{name: check, image: registry.example.com/probe/check:1, args: [{name}]}}]\n"
    )


def probe_chart(tmp: Path, with_tests: bool = True) -> Path:
    """A release ConfigMap and, ``with_tests``, four test hooks given out of order: a Secret (weight -2, no policy:
    before-hook-creation), Job ``z-first`` (-1, deleted after success), Job ``b-check`` (0, deleted after success),
    Job ``a-check`` (0, the ``test-success`` alias, no policy: stays)."""
    chart = tmp / ("probe-tests" if with_tests else "probe-plain")
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: probe\nversion: 0.1.0\n", encoding="utf-8")
    (chart / "templates" / "app.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\ndata: {mode: prod}\n", encoding="utf-8"
    )
    if with_tests:
        secret = (
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: test-token\n  annotations:\n"
            f'    helm.sh/hook: test\n    helm.sh/hook-weight: "-2"\nstringData: {{token: {SECRET_VALUE}}}\n'
        )
        docs = [
            job("b-check", 0, "test", "before-hook-creation,hook-succeeded"),
            secret,
            job("a-check", 0, "test-success", None),
            job("z-first", -1, "test", "before-hook-creation,hook-succeeded"),
        ]
        (chart / "templates" / "tests.yaml").write_text("---\n".join(docs), encoding="utf-8")
    return chart


def installed_probe(capsys: pytest.CaptureFixture[str], cluster: Cluster, tmp: Path) -> Path:
    work = setup_workdir(tmp, probe_chart(tmp), NAMESPACE)
    res = run_live(capsys, apply_command, "--work-dir", work, "--kubeconfig", cluster.kubeconfig)
    assert res.code == 0, res.err
    # The install points at the live test command for the step it does not run.
    assert f"the test step; run it with: berth install test --work-dir {work}" in res.out
    return work


def last_spec(work: Path) -> dict[str, Any]:
    spec: dict[str, Any] = receipt.receipts(work)[-1][1]["spec"]
    return spec


def hook_file(work: Path, name: str) -> str:
    (path,) = (work / "out" / "lifecycle" / "test").glob(f"job-*{name}.yaml")
    return str(path.relative_to(work / "out"))


def test_test_hooks_run_in_helm_order_with_their_delete_policies_and_logs(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, audit: Audit, tmp_path: Path
) -> None:
    work = installed_probe(capsys, cluster, tmp_path)
    plan = workdir.build_plan(workdir.load_workdir(work), plan_mod.Action.TEST, str(work))
    assert [o.name for s in plan.steps for o in s.objects] == list(HOOKS)
    args = ["--work-dir", work, "--kubeconfig", cluster.kubeconfig, "--timeout", "60s"]

    start = len(audit.writes())
    res = run_live(capsys, release_test_command, *args)
    assert res.code == 0, res.err
    # One at a time in the plan's order, each created only after the one before succeeded; then the event's
    # hook-succeeded deletions in reverse. Nothing but the test hooks is written (no release object).
    assert audit.writes()[start:] == [
        "patch secrets test-token",
        "patch jobs.batch z-first",
        "patch jobs.batch a-check",
        "patch jobs.batch b-check",
        "delete jobs.batch b-check",
        "delete jobs.batch z-first",
    ]
    assert "Done: the test plan of release probe (1 of 1 step(s) ran, 1 of them hook steps)" in res.out
    assert "--- logs of" not in res.out  # only with --logs
    spec = last_spec(work)
    assert spec["action"] == "test" and spec["result"] == "succeeded"
    assert [o["name"] for o in spec["steps"][0]["objects"] if o["action"] == "succeeded"] == list(HOOKS)

    # Again with --logs: before-hook-creation deletes the hooks that stayed (the Secret, a-check) first, and the
    # logs of z-first and b-check are read before their hook-succeeded deletion, as helm test --logs does.
    start = len(audit.writes())
    res = run_live(capsys, release_test_command, *args, "--logs")
    assert res.code == 0, res.err
    assert audit.writes()[start:] == [
        "delete secrets test-token",
        "patch secrets test-token",
        "patch jobs.batch z-first",
        "delete jobs.batch a-check",
        "patch jobs.batch a-check",
        "patch jobs.batch b-check",
        "delete jobs.batch b-check",
        "delete jobs.batch z-first",
    ]
    logs = res.out[res.out.index("Receipt:") :]
    headers = [line for line in logs.splitlines() if line.startswith("--- logs of")]
    assert headers == [f"--- logs of Job probe/{n} (test hook) ---" for n in HOOKS[1:]]
    for name in HOOKS[1:]:
        assert f"[pod/{name}-" in logs and f"] {name}: all checks passed" in logs
    assert SECRET_VALUE not in res.out + res.err  # a Secret hook has no logs and is never printed


def test_a_failed_test_hook_fails_the_run_naming_it(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, audit: Audit, tmp_path: Path
) -> None:
    work = installed_probe(capsys, cluster, tmp_path)
    fail_job(work, hook_file(work, "a-check"), True)
    args = ["--work-dir", work, "--kubeconfig", cluster.kubeconfig, "--timeout", "60s", "--logs"]
    start = len(audit.writes())
    res = run_live(capsys, release_test_command, *args)
    assert res.code == 1
    assert "step 1/1 (test) stopped: test hook Job probe/a-check failed" in res.err
    assert "--- pod logs ---" in res.err and "[pod/a-check-" in res.err
    assert f"berth install test --work-dir {work} --resume" in res.err
    # Helm stops the event at the failed hook: b-check never runs; z-first, already succeeded, is deleted
    # (hook-succeeded, forward order after a failure); a-check has no hook-failed policy and stays.
    assert audit.writes()[start:] == [
        "patch secrets test-token",
        "patch jobs.batch z-first",
        "patch jobs.batch a-check",
        "delete jobs.batch z-first",
    ]
    # --logs prints what ran, the failed hook too, before the error (helm test --logs does the same).
    headers = [line for line in res.out.splitlines() if line.startswith("--- logs of")]
    assert headers == [
        "--- logs of Job probe/z-first (test hook) ---",
        "--- logs of Job probe/a-check (test hook) ---",
    ]
    spec = last_spec(work)
    assert spec["action"] == "test" and spec["result"] == "failed"
    failed = [o for o in spec["steps"][0]["objects"] if o["action"] == "failed"]
    assert [o["name"] for o in failed] == ["a-check"] and "[pod/a-check-" in failed[0]["logs"]

    # Fixed, the next run passes: before-hook-creation replaces the failed Job that stayed.
    fail_job(work, hook_file(work, "a-check"), False)
    start = len(audit.writes())
    res = run_live(capsys, release_test_command, *args[:-1])
    assert res.code == 0, res.err
    writes = audit.writes()[start:]
    assert writes.index("delete jobs.batch a-check") < writes.index("patch jobs.batch a-check")
    assert "patch jobs.batch b-check" in writes and last_spec(work)["result"] == "succeeded"


def test_a_release_without_test_hooks_says_so_and_exits_0(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, audit: Audit, tmp_path: Path
) -> None:
    work = setup_workdir(tmp_path, probe_chart(tmp_path, with_tests=False), NAMESPACE)
    start = len(audit.entries())
    res = run_live(
        capsys, release_test_command, "--work-dir", work, "--kubeconfig", cluster.kubeconfig, "--logs"
    )
    assert res.code == 0, res.err
    assert res.out == f"Release probe has no test hooks (helm.sh/hook: test) in {work}: nothing to run\n"
    assert audit.entries()[start:] == [] and receipt.receipts(work) == []


def test_a_bare_pod_test_hook_as_helm_create_scaffolds_it_passes_or_fails(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, tmp_path: Path
) -> None:
    """``helm create``'s ``tests/test-connection.yaml``: a bare Pod, ``restartPolicy: Never``, no delete policy.
    The embedded cluster runs it to completion, so ``berth install test`` passes; the simulated-failure
    annotation on the pod makes the run fail naming it."""
    chart = tmp_path / "web"
    (chart / "templates" / "tests").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: web\nversion: 0.1.0\n", encoding="utf-8")
    (chart / "templates" / "app.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {mode: prod}\n", encoding="utf-8"
    )
    (chart / "templates" / "tests" / "test-connection.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web-test-connection\n  annotations:\n"
        "    helm.sh/hook: test\n"
        "spec:\n  restartPolicy: Never\n  containers:\n"
        "    - {name: wget, image: busybox, command: [wget], args: ['web:80']}\n",
        encoding="utf-8",
    )
    work = setup_workdir(tmp_path, chart, "web-probe")
    kube = ["--kubeconfig", cluster.kubeconfig]
    assert run_live(capsys, apply_command, "--work-dir", work, *kube).code == 0
    res = run_live(capsys, release_test_command, "--work-dir", work, *kube, "--timeout", "60s")
    assert res.code == 0, res.err
    assert cluster.api is not None
    pod = cluster.api.get("pods", "web-test-connection", "web-probe")
    assert pod["status"]["phase"] == "Succeeded"

    (test_file,) = (work / "out" / "lifecycle" / "test").glob("pod-*web-test-connection.yaml")
    fail_job(work, str(test_file.relative_to(work / "out")), True)
    res = run_live(capsys, release_test_command, "--work-dir", work, *kube, "--timeout", "60s")
    assert res.code == 1
    assert "test hook Pod web-probe/web-test-connection failed" in res.err
