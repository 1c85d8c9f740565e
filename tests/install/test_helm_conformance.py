"""berth's plan order is Helm 4's real order: run the real ``helm install`` against the embedded API server and
compare the create/delete sequence in its audit log with what berth's plan says, step by step."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from berth.install import plan, workdir
from berth.kube import tools

from .conftest import REPO, Run
from .helpers import plan_calls, same_kind_runs_sorted, settled_text

PROBE = REPO / "examples" / "charts" / "hook-order-probe"
PROBE_NEXT = REPO / "examples" / "charts" / "hook-order-probe-next"
RESOURCE_KIND = {
    "configmaps": "ConfigMap",
    "namespaces": "Namespace",
    "serviceaccounts": "ServiceAccount",
    "secrets": "Secret",
    "roles.rbac.authorization.k8s.io": "Role",
    "customresourcedefinitions.apiextensions.k8s.io": "CustomResourceDefinition",
}


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Any]:
    from berth.cluster import Cluster, ClusterOptions

    c = Cluster(ClusterOptions(data_dir=tmp_path / "cluster", run_controllers=False)).start()
    try:
        yield c
    finally:
        c.stop()


def audited_calls(audit: Path, names: set[str]) -> list[str]:
    out = []
    for line in settled_text(audit).splitlines():
        e = json.loads(line)
        kind = RESOURCE_KIND.get(e.get("resource", ""))
        if kind is None or e.get("name") not in names or e["verb"] in ("get", "list", "watch"):
            continue
        verb = "delete" if e["verb"] == "delete" else "apply"
        out.append(f"{verb} {kind} {e['name']}")
    return out


def helm_cmd(kubeconfig: str, *args: str) -> None:
    proc = subprocess.run(
        [tools.find("helm").path, *args, "-n", "probe", "--kubeconfig", kubeconfig, "--timeout", "60s"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr


def test_real_helm_lifecycle_follows_the_plan(run: Run, tmp_path: Path, cluster: Any) -> None:
    work = tmp_path / "w"
    assert (
        run(
            "install",
            "setup",
            "--pull",
            PROBE,
            "--namespace",
            "probe",
            "--work-dir",
            work,
            "--non-interactive",
        ).code
        == 0
    )
    wd = workdir.load_workdir(work)
    plans = {
        a: workdir.build_plan(wd, a, str(work))
        for a in (plan.Action.INSTALL, plan.Action.UPGRADE, plan.Action.UNINSTALL)
    }
    names = {o.name for p in plans.values() for s in p.steps if s.phase != "namespace" for o in s.objects}
    install = plan_calls(plans[plan.Action.INSTALL])
    assert install[:3] == [  # sanity: the plan itself has the shape the chart's comments describe
        "apply CustomResourceDefinition probes.order.example.com",
        "delete Secret zeta",
        "apply Secret zeta",
    ]
    kubeconfig = str(cluster.data_dir / "kubeconfig")
    audit = cluster.data_dir / "audit.jsonl"
    steps = [
        (plan.Action.INSTALL, ["install", "probe", str(PROBE), "--create-namespace"]),
        (plan.Action.UPGRADE, ["upgrade", "probe", str(PROBE)]),
        (plan.Action.UNINSTALL, ["uninstall", "probe"]),
    ]
    ordinary = {
        f"{verb} {o.kind} {o.name}"
        for p in plans.values()
        for s in p.steps
        if not s.is_hook
        for o in s.objects
        for verb in ("apply", "delete")
    }
    seen = 0
    for action, args in steps:
        helm_cmd(kubeconfig, *args)
        calls = audited_calls(audit, names)
        got = same_kind_runs_sorted(calls[seen:], ordinary)
        assert got == same_kind_runs_sorted(plan_calls(plans[action]), ordinary), action
        seen = len(calls)
    assert "delete ConfigMap kept" not in calls  # resource-policy: keep


def test_generated_script_makes_the_same_calls_with_real_kubectl(
    run: Run, tmp_path: Path, cluster: Any
) -> None:
    work = tmp_path / "w"
    assert (
        run(
            "install",
            "setup",
            "--pull",
            PROBE,
            "--namespace",
            "probe",
            "--work-dir",
            work,
            "--non-interactive",
        ).code
        == 0
    )
    wd = workdir.load_workdir(work)
    kubectl_dir = str(Path(tools.find("kubectl").path).parent)
    env = {
        "PATH": f"{kubectl_dir}:/usr/bin:/bin",
        "KUBECONFIG": str(cluster.data_dir / "kubeconfig"),
        "HOME": str(tmp_path),
    }
    audit = cluster.data_dir / "audit.jsonl"
    plans = [workdir.build_plan(wd, a, str(work)) for a in (plan.Action.INSTALL, plan.Action.UNINSTALL)]
    names = {o.name for p in plans for s in p.steps if s.phase != "namespace" for o in s.objects}
    seen = 0
    for p in plans:
        action = p.action
        script = tmp_path / f"{action.value}.sh"
        assert (
            run("install", "script", "--work-dir", work, "--action", action.value, "--out", script).code == 0
        )
        proc = subprocess.run(
            ["bash", str(script), "--yes"], env=env, capture_output=True, text=True, timeout=180
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        calls = audited_calls(audit, names)
        assert calls[seen:] == plan_calls(p), action
        seen = len(calls)


def setup_probe(run: Run, work: Path, chart: Path) -> workdir.Workdir:
    r = run(
        "install", "setup", "--pull", chart, "--namespace", "probe", "--work-dir", work, "--non-interactive"
    )
    assert r.code == 0, r.err
    return workdir.load_workdir(work)


def plan_names(*plans: plan.Plan) -> set[str]:
    return {o.name for p in plans for s in p.steps if s.phase != "namespace" for o in s.objects} | {
        k.obj.name for p in plans for k in p.kept
    }


def test_real_helm_upgrade_prune_and_rollback_follow_the_plan(run: Run, tmp_path: Path, cluster: Any) -> None:
    """Helm 4 deletes what the previous revision had and the new one lacks inside KubeClient.Update (after
    applying, before post-upgrade; never a live ``keep`` object), and a rollback applies the target revision's
    manifest, runs the target revision's hooks and deletes what the current revision added: the plans say so."""
    work = tmp_path / "w"
    wd = setup_probe(run, work, PROBE)
    install = workdir.build_plan(wd, plan.Action.INSTALL, str(work))
    wd = setup_probe(run, work, PROBE_NEXT)  # records the 0.1.0 render as revision 1
    upgrade = workdir.build_plan(wd, plan.Action.UPGRADE, str(work))
    rollback = workdir.build_plan(wd, plan.Action.ROLLBACK, str(work))
    prune = next(s for s in upgrade.steps if s.phase == plan.Phase.PRUNE.value)
    assert [o.label for o in prune.objects] == ["ConfigMap plain", "Role plain"]  # install order
    assert [k.obj.label for k in upgrade.kept] == ["ConfigMap kept"]
    names = plan_names(install, upgrade, rollback) | {"rewind-next"}
    ordinary = {
        f"{verb} {o.kind} {o.name}"
        for p in (install, upgrade, rollback)
        for s in p.steps
        if not s.is_hook
        for o in s.objects
        for verb in ("apply", "delete")
    }
    kubeconfig = str(cluster.data_dir / "kubeconfig")
    audit = cluster.data_dir / "audit.jsonl"
    seen = 0
    calls: list[str] = []
    for p, args in [
        (install, ["install", "probe", str(PROBE), "--create-namespace"]),
        (upgrade, ["upgrade", "probe", str(PROBE_NEXT)]),
        (rollback, ["rollback", "probe", "1"]),
    ]:
        if p is rollback:
            assert "delete ConfigMap kept" not in calls  # keep: the upgrade never pruned it
            # Helm's rollback fails on an object the target revision has that lives on outside the current one
            # ("original object ConfigMap with the name "kept" not found"); berth's plan simply applies it. Remove
            # the kept ConfigMap first so both take the same path.
            kubectl = str(Path(tools.find("kubectl").path))
            subprocess.run([kubectl, "--kubeconfig", kubeconfig, "delete", "-n", "probe", "configmap", "kept"],
                           check=True, capture_output=True, timeout=60)  # fmt: skip
            seen = len(audited_calls(audit, names))
        helm_cmd(kubeconfig, *args)
        calls = audited_calls(audit, names)
        got = same_kind_runs_sorted(calls[seen:], ordinary)
        assert got == same_kind_runs_sorted(plan_calls(p), ordinary), p.action
        seen = len(calls)
    assert not [c for c in calls if c.endswith("rewind-next")]  # the target revision's rollback hook ran
    assert "delete ConfigMap fresh" in calls  # added by 0.2.0, pruned by the rollback to 0.1.0


def test_generated_upgrade_and_rollback_scripts_prune_like_helm(
    run: Run, tmp_path: Path, cluster: Any
) -> None:
    """The same upgrade and rollback through the generated scripts and real kubectl: the same calls, and a
    dropped object whose live copy was given ``keep`` after the render stays."""
    work = tmp_path / "w"
    kubectl_dir = str(Path(tools.find("kubectl").path).parent)
    env = {
        "PATH": f"{kubectl_dir}:/usr/bin:/bin",
        "KUBECONFIG": str(cluster.data_dir / "kubeconfig"),
        "HOME": str(tmp_path),
    }
    audit = cluster.data_dir / "audit.jsonl"

    def script(p: plan.Plan) -> subprocess.CompletedProcess[str]:
        path = tmp_path / f"{p.action.value}.sh"
        assert (
            run("install", "script", "--work-dir", work, "--action", p.action.value, "--out", path).code == 0
        )
        proc = subprocess.run(
            ["bash", str(path), "--yes"], env=env, capture_output=True, text=True, timeout=180
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc

    wd = setup_probe(run, work, PROBE)
    install = workdir.build_plan(wd, plan.Action.INSTALL, str(work))
    script(install)
    subprocess.run(
        [f"{kubectl_dir}/kubectl", "annotate", "-n", "probe", "role/plain", "helm.sh/resource-policy=keep"],
        env=env, check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    wd = setup_probe(run, work, PROBE_NEXT)
    upgrade = workdir.build_plan(wd, plan.Action.UPGRADE, str(work))
    rollback = workdir.build_plan(wd, plan.Action.ROLLBACK, str(work))
    names = plan_names(install, upgrade, rollback)
    seen = len(audited_calls(audit, names))
    proc = script(upgrade)
    calls = audited_calls(audit, names)
    want = [c for c in plan_calls(upgrade) if c != "delete Role plain"]  # its live copy says keep now
    assert calls[seen:] == want
    assert (
        "kept (its live copy has helm.sh/resource-policy: keep): revisions/1/manifests/role-plain.yaml"
        in (proc.stdout)
    )
    seen = len(calls)
    script(rollback)
    calls = audited_calls(audit, names)
    assert calls[seen:] == plan_calls(rollback)
    assert "delete ConfigMap fresh" in calls[seen:]
