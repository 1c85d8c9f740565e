"""``berth install export --argocd``: Argo CD's sort of the export equals berth's plan, in every phase.

The main property: for generated hook sets and for the edge-hooks chart (ties on weight, name and kind; default,
explicit and inert delete policies; CRD hooks; hooks on several events; events listed twice; rollback and test
hooks), sorting the exported objects the way Argo CD does (``test_export_argocd_sort``) gives, for every Helm
event, exactly that event's plan step, each hook alone in its wave; the Sync phase creates the release objects
kind by kind in Helm's install order; the delete phases hold exactly the delete hooks.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from berth.install import export, plan, split
from berth.install.export_argocd import (
    DELETE_EVENTS,
    EVENT_PHASE,
    HOOK,
    HOOK_DELETE_POLICY,
    KIND_ORDER,
    POLICIES,
    SYNC_EVENTS,
    SYNC_OPTIONS,
    SYNC_WAVE,
    RunOnce,
    translate,
)
from berth.kube import tools, yamlio
from berth.kube.hooks import DeletePolicy, HookEvent

from .conftest import Run
from .helpers import doc
from .test_export_argocd_sort import argocd_sort, delete_hooks, schedule

NS = "ns"
Ident = tuple[str, str, str]


def test_argo_kind_order_is_pinned_whole() -> None:
    """gitops-engine's kindOrder (argo-cd v3.5 ``gitops-engine/pkg/sync/sync_tasks.go``), in full."""
    assert ", ".join(KIND_ORDER) == (
        "Namespace, NetworkPolicy, ResourceQuota, LimitRange, PodSecurityPolicy, PodDisruptionBudget, ServiceAccount, "
        "Secret, SecretList, ConfigMap, StorageClass, PersistentVolume, PersistentVolumeClaim, "
        "CustomResourceDefinition, ClusterRole, ClusterRoleList, ClusterRoleBinding, ClusterRoleBindingList, Role, "
        "RoleList, RoleBinding, RoleBindingList, Service, DaemonSet, Pod, ReplicationController, ReplicaSet, "
        "Deployment, HorizontalPodAutoscaler, StatefulSet, Job, CronJob, IngressClass, Ingress, APIService"
    )


def test_phase_and_policy_maps() -> None:
    assert {e.value: p.value for e, p in EVENT_PHASE.items()} == {
        "pre-install": "PreSync",
        "pre-upgrade": "PreSync",
        "post-install": "PostSync",
        "post-upgrade": "PostSync",
        "pre-delete": "PreDelete",
        "post-delete": "PostDelete",
    }
    assert {h.value: a.value for h, a in POLICIES.items()} == {
        "hook-succeeded": "HookSucceeded",
        "hook-failed": "HookFailed",
        "before-hook-creation": "BeforeHookCreation",
    }


# -- the property ------------------------------------------------------------------------------------------


def ident(o: plan.PlanObject) -> Ident:
    return (o.kind, o.namespace or NS, o.name)


def dedup(xs: list[Ident]) -> list[Ident]:
    return list(dict.fromkeys(xs))


def hook_idents(render: split.Split, run_once: RunOnce) -> tuple[set[Ident], set[Ident]]:
    """The hooks the export must turn into plain Sync resources: CRD hooks of a sync event, and (guard) the hooks
    whose sync events are install-only and that have no delete event -- stated here from the rules, not taken
    from the code under test."""
    crd: set[Ident] = set()
    guarded: set[Ident] = set()
    for h in render.hooks:
        i = (h.obj.kind, h.obj.namespace or NS, h.obj.name)
        events = set(h.events)
        sync = events & set(SYNC_EVENTS)
        if h.obj.kind == split.CRD_KIND and sync:
            crd.add(i)
        elif (
            run_once == RunOnce.ONCE
            and sync
            and sync <= {HookEvent.PRE_INSTALL, HookEvent.POST_INSTALL}
            and not events & set(DELETE_EVENTS)
        ):
            guarded.add(i)
    return crd, guarded


def kind_batches(objs: list[plan.PlanObject]) -> list[tuple[str, frozenset[Ident]]]:
    """Helm's creation of release objects: consecutive objects of one kind together (``pkg/kube`` batchPerform)."""
    out: list[tuple[str, frozenset[Ident]]] = []
    for o in objs:
        if out and out[-1][0] == o.kind:
            out[-1] = (o.kind, out[-1][1] | {ident(o)})
        else:
            out.append((o.kind, frozenset({ident(o)})))
    return out


def assert_argocd_runs_the_plan(
    objs: list[dict[str, Any]], plans: export.Plans, render: split.Split, run_once: RunOnce
) -> None:
    for o in objs:
        assert not [k for k in (o["metadata"].get("annotations") or {}) if k.startswith("helm.sh/hook")], o
    s = argocd_sort(objs, NS)
    waves = schedule(s)
    # Helm runs hooks one at a time: every hook is alone in its (phase, wave).
    for w in waves:
        if w.phase != "Sync":
            assert sum(len(b) for b in w.batches) == 1, w
    # Argo CD's unstable sort leaves only objects of one kind in one Sync wave unordered: Helm creates those
    # together too.
    for a, b in s.ties:
        assert a.phase == b.phase == "Sync" and a.kind == b.kind, (a, b)

    crd_hooks, guarded = hook_idents(render, run_once)
    by_phase: dict[str, set[Ident]] = {}
    for event in SYNC_EVENTS:
        step = plans.hook_step(event)
        if step is None:
            continue
        phase = EVENT_PHASE[event].value
        want = dedup([ident(o) for o in step.objects if ident(o) not in crd_hooks | guarded])
        got = [t.ident for t in s.tasks if t.phase == phase and t.ident in set(want)]
        assert got == want, (event, got, want)
        by_phase.setdefault(phase, set()).update(want)
    for phase in ("PreSync", "PostSync"):
        assert {t.ident for t in s.tasks if t.phase == phase} == by_phase.get(phase, set())

    # Sync: CRDs, guarded pre-install hooks, the release objects kind by kind, guarded post-install hooks.
    expected: list[tuple[str, frozenset[Ident]]] = []
    crds = [o for st_ in plans.install.steps if st_.phase == plan.Phase.CRDS.value for o in st_.objects]
    crd_set = {ident(o) for o in crds} | crd_hooks
    if crd_set:
        expected.append((split.CRD_KIND, frozenset(crd_set)))
    for event in (HookEvent.PRE_INSTALL, HookEvent.POST_INSTALL):
        if event == HookEvent.POST_INSTALL:
            release = [
                o
                for st_ in plans.install.steps
                if st_.phase in (plan.Phase.APPLY.value, plan.Phase.SECRETS.value)
                for o in st_.objects
            ]
            expected += kind_batches(release)
        step = plans.hook_step(event)
        placed = {i for _, b in expected for i in b}
        for o in step.objects if step is not None else ():
            if ident(o) in guarded and ident(o) not in placed:
                expected.append((o.kind, frozenset({ident(o)})))
                placed.add(ident(o))
    got_sync = [
        (b[0].kind, frozenset(t.ident for t in b)) for w in waves if w.phase == "Sync" for b in w.batches
    ]
    assert got_sync == expected

    for event in DELETE_EVENTS:
        step = plans.hook_step(event)
        want_set = {ident(o) for o in (step.objects if step else ()) if ident(o) not in crd_hooks}
        phase = EVENT_PHASE[event].value
        got_set = {
            (o["kind"], o["metadata"].get("namespace") or NS, o["metadata"]["name"])
            for o in delete_hooks(objs, phase)
        }
        assert got_set == want_set, event


KIND_API = {
    "Job": "batch/v1",
    "Deployment": "apps/v1",
    "Role": "rbac.authorization.k8s.io/v1",
    "CustomResourceDefinition": "apiextensions.k8s.io/v1",
    "Widget": "x.example.com/v1",
    "Gadget": "y.example.com/v1",
    "PriorityClass": "scheduling.k8s.io/v1",
    "MutatingWebhookConfiguration": "admissionregistration.k8s.io/v1",
    "ValidatingWebhookConfiguration": "admissionregistration.k8s.io/v1",
}
CLUSTER_SCOPED = {
    "CustomResourceDefinition",
    "PriorityClass",
    "Namespace",
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
}
HOOK_KINDS = [
    "Job",
    "Pod",
    "ConfigMap",
    "ServiceAccount",
    "Role",
    "Secret",
    "CustomResourceDefinition",
    "Widget",
]
ORDINARY_KINDS = [
    "PriorityClass",
    "Namespace",
    "ServiceAccount",
    "Secret",
    "ConfigMap",
    "Service",
    "Deployment",
    "Job",
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
    "Widget",
    "Gadget",
    "CustomResourceDefinition",
]
NAMES = ["a", "b", "migrate", "runner"]
EVENTS = [e.value for e in HookEvent]
POLICY_TEXTS = [
    None,
    "before-hook-creation",
    "hook-succeeded",
    "hook-failed",
    "before-hook-creation,hook-succeeded",
    "hook-succeeded,hook-failed",
    "hook-succeded",
]

hooks_st = st.lists(
    st.tuples(
        st.sampled_from(HOOK_KINDS),
        st.sampled_from(NAMES),
        st.sampled_from([NS, "other"]),
        st.lists(st.sampled_from(EVENTS), min_size=1, max_size=4),
        st.sampled_from([None, "-1", "0", "1", "1.5"]),
        st.sampled_from(POLICY_TEXTS),
    ),
    max_size=12,
)
ordinary_st = st.lists(
    st.tuples(st.sampled_from(ORDINARY_KINDS), st.sampled_from(NAMES), st.sampled_from([NS, "other"])),
    max_size=12,
)


def render_of(hooks: list[Any], ordinary: list[Any]) -> split.Split:
    """A render from generated documents (one identity once; the first wins)."""
    seen: set[tuple[str, str, str]] = set()
    text = ""
    for kind, name, ns, *rest in [*((*h, True) for h in hooks), *((*o, False) for o in ordinary)]:
        namespace = None if kind in CLUSTER_SCOPED else ns
        key = (kind, namespace or "", name)
        if key in seen:
            continue
        seen.add(key)
        ann = None
        if rest[-1]:
            events, weight, policy = rest[0], rest[1], rest[2]
            ann = {"helm.sh/hook": ",".join(events)}
            if weight is not None:
                ann["helm.sh/hook-weight"] = weight
            if policy is not None:
                ann["helm.sh/hook-delete-policy"] = policy
        text += doc(kind, name, namespace, ann, api=KIND_API.get(kind, "v1"))
    return split.from_render(text)


def plans_for(render: split.Split) -> export.Plans:
    return export.plans_of(lambda action: plan.build(action, plan.PlanInputs(render, "r", NS)), render, 300)


def reader_for(render: split.Split) -> Any:
    by_file = {render.file_names[o.ref]: o for o in render.all_objects()}

    def read(file: str) -> tuple[dict[str, Any], str]:
        o = by_file[PurePosixPath(file).name]
        return o.body, f"# Source: {o.source}"

    return read


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hooks=hooks_st, ordinary=ordinary_st)
def test_argocd_sort_of_the_export_is_the_plan_order(hooks: list[Any], ordinary: list[Any]) -> None:
    render = render_of(hooks, ordinary)
    plans = plans_for(render)
    for mode in RunOnce:
        x = translate(plans, reader_for(render), mode)
        assert_argocd_runs_the_plan([i.body for i in x.items], plans, render, mode)


# -- the edge-hooks chart, through the CLI -------------------------------------------------------------------


def exported(dest: Path) -> list[dict[str, Any]]:
    out = []
    for folder in ("manifests", "secrets"):
        for path in sorted((dest / folder).glob("*.yaml")) if (dest / folder).is_dir() else []:
            out += [body for _, body in yamlio.load_objects(path.read_text(), str(path))]
    return out


@pytest.mark.parametrize("mode", list(RunOnce), ids=lambda m: m.value)
def test_edge_chart_export_runs_in_helm_order(
    run: Run, edge_workdir: Path, tmp_path: Path, mode: RunOnce
) -> None:
    dest = tmp_path / "argo"
    res = run(
        "install", "export", "--work-dir", edge_workdir, "--argocd", dest, "--install-only-hooks", mode.value
    )
    assert res.code == 0, res.err
    src = export.load(edge_workdir)
    objs = exported(dest)
    assert_argocd_runs_the_plan(objs, src.plans, src.workdir.split, mode)
    assert len(objs) == 23  # 10 manifests, 1 Secret, 12 of 16 hooks (2 test, 2 rollback hooks not exported)


def annotations(dest: Path, file: str) -> dict[str, str]:
    body = yamlio.load_objects((dest / file).read_text())[0][1]
    return dict(body["metadata"].get("annotations") or {})


def test_edge_chart_translation_details(run: Run, edge_workdir: Path, tmp_path: Path) -> None:
    dest = tmp_path / "argo"
    res = run("install", "export", "--work-dir", edge_workdir, "--argocd", dest)
    assert res.code == 0, res.err
    # Helm's default made explicit; an explicit policy mapped; a hook of both sync phases keeps its one wave
    assert (
        annotations(dest, "manifests/configmap-edge-operator-config.yaml")[HOOK_DELETE_POLICY]
        == "BeforeHookCreation"
    )
    drain = annotations(dest, "manifests/job-edge-drain.yaml")
    assert (drain[HOOK], drain[HOOK_DELETE_POLICY]) == ("PreDelete", "HookFailed") and SYNC_WAVE not in drain
    shared = annotations(dest, "manifests/serviceaccount-edge-shared-hook-sa.yaml")
    assert (shared[HOOK], shared[HOOK_DELETE_POLICY]) == (
        "PreSync,PostSync",
        "BeforeHookCreation,HookSucceeded",
    )
    # a CRD hook is a plain resource of the CRD wave, with the crds/ and templated CRDs
    gadgets = annotations(dest, "manifests/customresourcedefinition-gadgets-edge-example-com.yaml")
    assert HOOK not in gadgets and gadgets[SYNC_WAVE] == "0"
    assert (
        annotations(dest, "manifests/customresourcedefinition-things-edge-example-com.yaml")[SYNC_WAVE] == "0"
    )
    # custom resources of exported CRDs skip the dry run; keep objects are never pruned
    assert annotations(dest, "manifests/widget-edge-default-widget.yaml")[SYNC_OPTIONS] == (
        "SkipDryRunOnMissingResource=true"
    )
    thing = annotations(dest, "manifests/thing-edge-default-thing.yaml")
    assert thing[SYNC_OPTIONS] == "SkipDryRunOnMissingResource=true,Prune=false"
    assert thing["helm.sh/resource-policy"] == "keep"
    # the inert policy: Helm never deletes it; Argo CD's default applies, and the output says so
    assert (
        annotations(dest, "manifests/configmap-edge-typo-policy.yaml")[HOOK_DELETE_POLICY]
        == "BeforeHookCreation"
    )
    readme = (dest / "README.md").read_text()
    assert "Helm never deletes it; Argo CD cannot be told so" in readme
    # Secrets: owner-only, git-ignored, never in manifests/
    secret = dest / "secrets" / "secret-edge-app-token.yaml"
    assert secret.stat().st_mode & 0o777 == 0o600 and (dest / "secrets").stat().st_mode & 0o777 == 0o700
    assert (dest / ".gitignore").read_text() == "secrets/\n"
    assert not list((dest / "manifests").glob("secret-*"))
    app = yamlio.load_objects((dest / "application.yaml").read_text())[0][1]
    assert app["spec"]["destination"]["namespace"] == "edge"
    assert "CreateNamespace=true" in app["spec"]["syncPolicy"]["syncOptions"]


def test_unmappable_events_are_listed_in_the_output_and_the_readme(
    run: Run, edge_workdir: Path, tmp_path: Path
) -> None:
    dest = tmp_path / "argo"
    res = run("install", "export", "--work-dir", edge_workdir, "--argocd", dest)
    assert res.code == 0, res.err
    for event, label in [
        ("test", "Pod edge/smoke-test"),
        ("test", "Pod edge/alias-test"),
        ("pre-rollback", "ConfigMap edge/rollback-marker"),
        ("post-rollback", "Job edge/rollback-check"),
    ]:
        assert f"not exported: {event} {label} (Argo CD has no phase for {event})" in res.out
        assert f"- {event}: {label}" in (dest / "README.md").read_text()
    assert not (dest / "manifests" / "pod-edge-smoke-test.yaml").exists()


def test_install_only_hooks_every_sync_warns_naming_them(
    run: Run, edge_workdir: Path, tmp_path: Path
) -> None:
    res = run("install", "export", "--work-dir", edge_workdir, "--argocd", tmp_path / "a")
    assert res.code == 0, res.err
    assert (
        "warning: ConfigMap edge/typo-policy runs on every sync, where Helm runs it on install only; "
        "--install-only-hooks once makes it run once"
    ) in res.out
    assert (
        "warning: Job edge/upgrade-check runs on the first sync too, where Helm runs it on upgrade only"
        in res.out
    )
    assert annotations(tmp_path / "a", "manifests/configmap-edge-typo-policy.yaml")[HOOK] == "PreSync"


def test_install_only_hooks_once_become_plain_resources_before_the_release(
    run: Run, edge_workdir: Path, tmp_path: Path
) -> None:
    dest = tmp_path / "a"
    res = run(
        "install", "export", "--work-dir", edge_workdir, "--argocd", dest, "--install-only-hooks", "once"
    )
    assert res.code == 0, res.err
    assert "typo-policy runs on every sync" not in res.out
    typo = annotations(dest, "manifests/configmap-edge-typo-policy.yaml")
    assert HOOK not in typo and HOOK_DELETE_POLICY not in typo
    # its own wave, after the CRDs (0), before the first release object
    assert (
        typo[SYNC_WAVE] == "1"
        and annotations(dest, "manifests/serviceaccount-edge-app.yaml")[SYNC_WAVE] == "2"
    )
    assert "the run-once guard made each a plain resource" in (dest / "README.md").read_text()


def synthetic(text: str) -> tuple[split.Split, export.Plans]:
    render = split.from_render(text)
    return render, plans_for(render)


def hook_doc(kind: str, name: str, event: str, policy: str | None = None, api: str = "v1", **ann: str) -> str:
    a = {"helm.sh/hook": event, **{k.replace("_", "/", 1).replace("_", "-"): v for k, v in ann.items()}}
    if policy is not None:
        a["helm.sh/hook-delete-policy"] = policy
    return doc(kind, name, NS, a, api=api)


def test_guarded_job_loses_its_ttl_and_its_deletion() -> None:
    body = "---\n# Source: c/templates/j.yaml\n" + yamlio.dump(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "name": "init",
                "namespace": NS,
                "annotations": {
                    "helm.sh/hook": "pre-install",
                    "helm.sh/hook-delete-policy": "hook-succeeded",
                },
            },
            "spec": {"ttlSecondsAfterFinished": 0, "template": {"spec": {"restartPolicy": "Never"}}},
        }
    )
    render, plans = synthetic(body)
    x = translate(plans, reader_for(render), RunOnce.ONCE)
    (item,) = x.items
    assert "ttlSecondsAfterFinished" not in item.body["spec"]
    assert item.phases[0].value == "Sync" and item.policies == ()
    assert any("ttlSecondsAfterFinished removed" in n for n in item.notes)
    every = translate(plans, reader_for(render), RunOnce.EVERY_SYNC).items[0]
    assert (
        every.body["spec"]["ttlSecondsAfterFinished"] == 0
    )  # a hook keeps it: Argo CD recreates hooks anyway


def test_hook_of_both_sync_phases_with_hook_succeeded_gets_before_hook_creation() -> None:
    render, plans = synthetic(
        hook_doc("Job", "twice", "pre-install,post-install", "hook-succeeded", "batch/v1")
    )
    (item,) = translate(plans, reader_for(render)).items
    assert item.body["metadata"]["annotations"][HOOK] == "PreSync,PostSync"
    assert item.body["metadata"]["annotations"][HOOK_DELETE_POLICY] == "BeforeHookCreation,HookSucceeded"
    assert any("BeforeHookCreation added" in n for n in item.notes)


def test_the_charts_own_argo_annotations_are_replaced_and_noted() -> None:
    text = doc("ConfigMap", "c", NS, {SYNC_WAVE: "-7", HOOK: "Skip"})
    render, plans = synthetic(text)
    (item,) = translate(plans, reader_for(render)).items
    assert item.body["metadata"]["annotations"] == {SYNC_WAVE: "0"}
    assert any("the chart's own argocd.argoproj.io/hook: 'Skip' is replaced" in n for n in item.notes)


def test_event_listed_twice_runs_once_and_says_so() -> None:
    render, plans = synthetic(hook_doc("Job", "j", "pre-install,pre-install", api="batch/v1"))
    (item,) = translate(plans, reader_for(render)).items
    assert any("Helm runs it twice in pre-install" in n for n in item.notes)


def test_delete_hooks_carry_no_wave_and_say_argo_runs_them_together() -> None:
    render, plans = synthetic(
        hook_doc("Job", "a", "pre-delete", api="batch/v1") + hook_doc("ServiceAccount", "b", "pre-delete")
    )
    x = translate(plans, reader_for(render))
    assert [i.wave for i in x.items] == [None, None]
    assert all("creates the 2 PreDelete hooks together" in " ".join(i.notes) for i in x.items)


# -- errors and the folder ---------------------------------------------------------------------------------


def test_bad_work_dir_is_exit_2_and_writes_nothing(run: Run, tmp_path: Path) -> None:
    res = run("install", "export", "--work-dir", tmp_path / "nowork", "--argocd", tmp_path / "out")
    assert res.code == 2
    assert res.err.count("error:") == 1 and "no berth setup here" in res.err
    assert not (tmp_path / "out").exists() and not list(tmp_path.glob(".out.*"))


@pytest.mark.parametrize("case", ["parent-is-a-file", "foreign-folder", "file", "missing-parent"])
def test_unwritable_dir_is_exit_2_and_writes_nothing(
    run: Run, edge_workdir: Path, tmp_path: Path, case: str
) -> None:
    (tmp_path / "plain").write_text("x")
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "keep.txt").write_text("mine")
    dest = {
        "parent-is-a-file": tmp_path / "plain" / "argo",
        "foreign-folder": foreign,
        "file": tmp_path / "plain",
        "missing-parent": tmp_path / "no" / "argo",
    }[case]
    before = sorted(p.name for p in tmp_path.iterdir())
    res = run("install", "export", "--work-dir", edge_workdir, "--argocd", dest)
    assert res.code == 2, res.out
    assert res.err.count("error:") == 1 and str(dest) in res.err
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert [p.name for p in foreign.iterdir()] == ["keep.txt"] and (tmp_path / "plain").read_text() == "x"


def test_read_only_place_is_exit_2(run: Run, edge_workdir: Path) -> None:
    dest = Path("/proc/berth-export-test")
    res = run("install", "export", "--work-dir", edge_workdir, "--argocd", dest)
    assert res.code == 2 and "cannot write the export here" in res.err and not dest.exists()


def test_export_again_replaces_the_earlier_export(run: Run, edge_workdir: Path, tmp_path: Path) -> None:
    dest = tmp_path / "argo"
    assert run("install", "export", "--work-dir", edge_workdir, "--argocd", dest).code == 0
    (dest / "manifests" / "stale.yaml").write_text("kind: ConfigMap\n")
    res = run(
        "install", "export", "--work-dir", edge_workdir, "--argocd", dest, "--install-only-hooks", "once"
    )
    assert res.code == 0, res.err
    assert not (dest / "manifests" / "stale.yaml").exists()
    assert HOOK not in annotations(dest, "manifests/configmap-edge-typo-policy.yaml")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["argo"]


def test_exactly_one_target(run: Run, edge_workdir: Path, tmp_path: Path) -> None:
    res = run("install", "export", "--work-dir", edge_workdir)
    assert res.code == 2 and "exactly one of --argocd DIR and --flux DIR" in res.err
    res = run(
        "install", "export", "--work-dir", edge_workdir, "--argocd", tmp_path / "a", "--flux", tmp_path / "b"
    )
    assert res.code == 2 and not (tmp_path / "a").exists()


# -- plan --for argocd ---------------------------------------------------------------------------------------


def test_plan_for_argocd_puts_each_step_beside_argo(run: Run, edge_workdir: Path) -> None:
    res = run("install", "plan", "--work-dir", edge_workdir, "--for", "argocd")
    assert res.code == 0, res.err
    lines = res.out.splitlines()
    assert lines[0] == (
        "Plan: install release edge in namespace edge, beside its Argo CD export (install-only hooks: every-sync)"
    )
    row = next(line for line in lines if line.strip().startswith("Job edge/migrate (weight 0)"))
    assert row.split()[-4:] == ["PreSync", "wave", "3", "="]
    crd = next(line for line in lines if "CustomResourceDefinition gadgets" in line)
    assert "Sync wave 0" in crd and "≠ 1" in crd
    assert "Argo CD only (Helm runs these in another action):" in res.out
    only = next(line for line in lines if line.strip().startswith("Job edge/upgrade-check (pre-upgrade)"))
    assert "PreSync wave 7" in only and "≠" in only
    assert "The same in 20 of 23 row(s)." in res.out
    data = json.loads(run("install", "plan", "--work-dir", edge_workdir, "--for", "argocd", "-o", "json").out)
    assert data["action"] == "install"
    assert {"step": 3, "phase": "pre-install", "helm": "Job edge/migrate (weight 0)", "argocd": "PreSync wave 3",
            "notes": []} in data["rows"]  # fmt: skip
    test = json.loads(
        run(
            "install", "plan", "--work-dir", edge_workdir, "--for", "argocd", "--action", "test", "-o", "json"
        ).out
    )
    assert {r["argocd"] for r in test["rows"]} == {"not exported"}


# -- the manifests are valid Kubernetes objects ---------------------------------------------------------------


def kubectl(kubeconfig: str, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [tools.find("kubectl").path, "--kubeconfig", kubeconfig, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_exported_manifests_pass_a_server_side_dry_run(run: Run, edge_workdir: Path, tmp_path: Path) -> None:
    from berth.cluster import Cluster, ClusterOptions

    dest = tmp_path / "argo"
    assert run("install", "export", "--work-dir", edge_workdir, "--argocd", dest).code == 0
    cluster = Cluster(ClusterOptions(data_dir=tmp_path / "cluster", port=0, nodes=1)).start()
    try:
        kc = str(cluster.kubeconfig)
        assert kubectl(kc, "create", "namespace", "edge").returncode == 0
        crds = sorted((dest / "manifests").glob("customresourcedefinition-*.yaml"))
        for crd in crds:  # custom resources dry-run only once their CRD is served
            done = kubectl(kc, "apply", "--server-side", "-f", crd)
            assert done.returncode == 0, done.stderr
        wait = kubectl(kc, "wait", "--for=condition=Established", "--timeout=60s", *[f"-f={c}" for c in crds])
        assert wait.returncode == 0, wait.stderr
        for folder in ("manifests", "secrets"):
            dry = kubectl(kc, "apply", "--server-side", "--dry-run=server", "-n", "edge", "-f", dest / folder)
            assert dry.returncode == 0, dry.stderr
            assert dry.stdout.count("serverside-applied (server dry run)") == len(
                list((dest / folder).glob("*.yaml"))
            )
    finally:
        cluster.stop()


def test_policies_map_from_the_plans_effective_policies() -> None:
    """Every hook's Argo CD policies are its plan policies mapped (Helm's default filled in), in order."""
    render, plans = synthetic(
        hook_doc("Job", "d", "post-install", api="batch/v1")
        + hook_doc("Job", "f", "post-install", "hook-failed,hook-succeeded", "batch/v1")
    )
    x = translate(plans, reader_for(render))
    got = {i.ref.name: i.body["metadata"]["annotations"][HOOK_DELETE_POLICY] for i in x.items}
    assert got == {"d": "BeforeHookCreation", "f": "HookFailed,HookSucceeded"}
    assert POLICIES[DeletePolicy.BEFORE_HOOK_CREATION].value == "BeforeHookCreation"


def test_a_crd_delete_hook_stays_a_hook_argo_never_deletes() -> None:
    render, plans = synthetic(
        hook_doc(
            "CustomResourceDefinition",
            "gone.x.example.com",
            "post-delete",
            "hook-succeeded",
            "apiextensions.k8s.io/v1",
        )
    )
    (item,) = translate(plans, reader_for(render)).items
    assert item.body["metadata"]["annotations"][HOOK] == "PostDelete"
    assert item.body["metadata"]["annotations"][HOOK_DELETE_POLICY] == "BeforeHookCreation"
    assert any("Helm never deletes a CRD hook" in n for n in item.notes)


def test_plan_for_argocd_uninstall_says_how_argo_deletes(run: Run, edge_workdir: Path) -> None:
    res = run("install", "plan", "--work-dir", edge_workdir, "--for", "argocd", "--action", "uninstall")
    assert res.code == 0, res.err
    assert "Job edge/drain (weight 0)" in res.out and "PreDelete (all at once)" in res.out
    assert "Argo CD never deletes a CRD with its Application" in res.out
    assert (
        "Argo CD deletes the Application's objects a wave at a time, the highest first (this one with Sync wave 3)"
        in (res.out)
    )
