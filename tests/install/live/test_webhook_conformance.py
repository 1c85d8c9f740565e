"""An ingress-nginx-style admission webhook chart (``examples/charts/admission-webhook``) through the real Helm 4 and
through berth's generated scripts on one embedded cluster: hook RBAC for four events with weights, a certgen Job
with ``ttlSecondsAfterFinished: 0``, a post-install patch Job, ``before-hook-creation,hook-succeeded``, a kept PVC
and a test Job. The create/delete calls in the audit log must be the plan's, call by call."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from berth.cluster import Cluster
from berth.install import plan, workdir
from berth.install.live_cli import apply_command, status_command, upgrade_command
from berth.kube import tools

from ..conftest import REPO, Run
from ..helpers import plan_calls, same_kind_runs_sorted, settled_text
from .conftest import run_live, setup_workdir, start_cluster

CHART = REPO / "examples" / "charts" / "admission-webhook"
RELEASE = "admission-webhook"
NS = "gate"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    # Helm 4.1 waits for a hook with a kstatus watcher that takes a Job deleted before it first looks as
    # "NotFound" (helm/helm#32586, open): on a busy machine helm needs more than the default second between
    # creating the certgen Job (ttlSecondsAfterFinished: 0) and watching it, so its containers run longer here
    c = start_cluster(tmp_path_factory.mktemp("webhook") / "cluster", job_seconds=4.0)
    try:
        yield c
    finally:
        c.stop()


def plural(kind: str) -> str:
    low = kind.lower()
    return low + ("es" if low.endswith("s") else "s")


def expected(p: plan.Plan) -> list[str]:
    """``verb resource name`` for every object call the plan makes (the readiness step writes nothing)."""
    return plan_calls(p, plural, (plan.Phase.NAMESPACE, plan.Phase.READINESS))


def audited(audit: Path, names: set[str], start: int) -> tuple[list[str], int]:
    """The admin's writes to the plan's objects from line ``start`` on, and the line count."""
    lines = settled_text(audit).splitlines()
    out = []
    for line in lines[start:]:
        e = json.loads(line)
        if e["user"] != "kubernetes-admin" or e["verb"] not in ("create", "patch", "update", "delete"):
            continue
        if e["name"] not in names or e["subresource"] or e["resource"] == "namespaces":
            continue
        out.append(
            f"{'delete' if e['verb'] == 'delete' else 'apply'} {e['resource'].split('.')[0]} {e['name']}"
        )
    return out, len(lines)


def test_real_helm_and_the_generated_scripts_make_the_plans_calls(
    run: Run, tmp_path: Path, cluster: Cluster
) -> None:
    work = tmp_path / "w"
    r = run("install", "setup", "--pull", CHART, "--namespace", NS, "--work-dir", work, "--non-interactive")
    assert r.code == 0, r.err
    wd = workdir.load_workdir(work)
    actions = (plan.Action.INSTALL, plan.Action.UPGRADE, plan.Action.TEST, plan.Action.UNINSTALL)
    plans = {a: workdir.build_plan(wd, a, str(work)) for a in actions}
    names = {o.name for p in plans.values() for s in p.steps for o in s.objects}
    ordinary = {
        f"{verb} {plural(o.kind)} {o.name}"
        for p in plans.values()
        for s in p.steps
        if not s.is_hook
        for o in s.objects
        for verb in ("apply", "delete")
    }
    kept = [k.obj.label for k in plans[plan.Action.UNINSTALL].kept]
    assert kept == ["PersistentVolumeClaim gate/admission-webhook-gate-state"]
    assert cluster.data_dir is not None
    kubeconfig = str(cluster.data_dir / "kubeconfig")
    audit = cluster.data_dir / "audit.jsonl"
    helm = tools.find("helm").path
    seen = 0
    for action, args in [
        (plan.Action.INSTALL, ["install", RELEASE, str(CHART), "--create-namespace"]),
        (plan.Action.UPGRADE, ["upgrade", RELEASE, str(CHART)]),
        (plan.Action.TEST, ["test", RELEASE]),
        (plan.Action.UNINSTALL, ["uninstall", RELEASE]),
    ]:
        proc = subprocess.run(
            [helm, *args, "-n", NS, "--kubeconfig", kubeconfig, "--timeout", "60s"],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        calls, seen = audited(audit, names, seen)
        assert same_kind_runs_sorted(calls, ordinary) == same_kind_runs_sorted(
            expected(plans[action]), ordinary
        ), action
    # Helm kept the PVC (resource-policy: keep); the scripts now take the same release over from there
    kubectl_dir = str(Path(tools.find("kubectl").path).parent)
    env = {"PATH": f"{kubectl_dir}:/usr/bin:/bin", "KUBECONFIG": kubeconfig, "HOME": str(tmp_path)}
    for action in (plan.Action.INSTALL, plan.Action.TEST, plan.Action.UNINSTALL):
        script = tmp_path / f"{action.value}.sh"
        assert (
            run("install", "script", "--work-dir", work, "--action", action.value, "--out", script).code == 0
        )
        proc = subprocess.run(
            ["bash", str(script), "--yes"], env=env, capture_output=True, text=True, timeout=120
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        calls, seen = audited(audit, names, seen)
        assert calls == expected(plans[action]), action
    assert "Left in place: PersistentVolumeClaim gate/admission-webhook-gate-state" in proc.stdout


def test_apply_and_upgrade_print_the_charts_notes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, cluster: Cluster
) -> None:
    """``helm install`` and ``helm upgrade`` end with the chart's rendered NOTES.txt (``helm template`` never
    renders it), and ``helm status`` shows it: berth's apply, upgrade and status print the notes of the install
    and the ``--is-upgrade`` render."""
    chart = tmp_path / "umbrella-shop"
    shutil.copytree(REPO / "examples" / "charts" / "umbrella-shop", chart)
    (chart / "templates" / "NOTES.txt").write_text(
        "{{ .Values.shop.name }} {{ if .Release.IsInstall }}installed{{ else }}upgraded{{ end }} "
        "in {{ .Release.Namespace }}; cart port {{ .Values.cartInfo.port }}.\n"
    )
    work = setup_workdir(tmp_path, chart, "notes")
    assert (
        work / "out" / "spec" / "NOTES.txt"
    ).read_text() == "corner-shop installed in notes; cart port 8081.\n"
    kubeconfig = str(cluster.kubeconfig)
    res = run_live(capsys, apply_command, "--work-dir", work, "--kubeconfig", kubeconfig, "--dry-run")
    assert res.code == 0, res.err
    assert "NOTES:" not in res.out  # nothing was installed
    res = run_live(capsys, apply_command, "--work-dir", work, "--kubeconfig", kubeconfig)
    assert res.code == 0, res.err
    assert res.out.endswith("\nNOTES:\ncorner-shop installed in notes; cart port 8081.\n")
    res = run_live(capsys, upgrade_command, "--work-dir", work, "--kubeconfig", kubeconfig, "--pull", chart)
    assert res.code == 0, res.err
    assert res.out.endswith("\nNOTES:\ncorner-shop upgraded in notes; cart port 8081.\n")
    res = run_live(capsys, status_command, "--work-dir", work, "--kubeconfig", kubeconfig)  # as `helm status`
    assert res.code == 0, res.err
    assert res.out.endswith("In sync.\nNOTES:\ncorner-shop upgraded in notes; cart port 8081.\n")


def test_real_helm_installs_exactly_the_umbrella_charts_plan(
    run: Run, tmp_path: Path, cluster: Cluster
) -> None:
    """umbrella-shop (subcharts, a library chart, a subchart hook, a PDB guarded by
    ``.Capabilities.APIVersions.Has "policy/v1/PodDisruptionBudget"``): what ``helm install`` writes is what
    berth's offline render plans, the PDB included."""
    chart = REPO / "examples" / "charts" / "umbrella-shop"
    work = tmp_path / "w"
    assert (
        run(
            "install",
            "setup",
            "--pull",
            chart,
            "--namespace",
            "shop",
            "--work-dir",
            work,
            "--non-interactive",
        ).code
        == 0
    )
    p = workdir.build_plan(workdir.load_workdir(work), plan.Action.INSTALL, str(work))
    assert "apply poddisruptionbudgets umbrella-shop-corner-shop" in expected(p)
    names = {o.name for s in p.steps for o in s.objects}
    ordinary = {f"apply {plural(o.kind)} {o.name}" for s in p.steps if not s.is_hook for o in s.objects}
    assert cluster.data_dir is not None
    audit = cluster.data_dir / "audit.jsonl"
    _, seen = audited(audit, names, 0)
    proc = subprocess.run(
        [tools.find("helm").path, "install", "umbrella-shop", str(chart), "-n", "shop", "--create-namespace",
         "--kubeconfig", str(cluster.data_dir / "kubeconfig"), "--timeout", "60s"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    calls, _ = audited(audit, names, seen)
    assert same_kind_runs_sorted(calls, ordinary) == same_kind_runs_sorted(expected(p), ordinary)
