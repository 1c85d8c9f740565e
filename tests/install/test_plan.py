"""The lifecycle plan: Helm 4's step order per action, hook order, waits and delete timing, JSON contract."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from berth.install import helm, plan, split, workdir
from berth.kube import yamlio
from berth.kube.hooks import HookEvent

from .conftest import EDGE_CHART, Run
from .helpers import doc, hook

Action = plan.Action


@pytest.fixture(scope="module")
def edge_split() -> split.Split:
    rendered = helm.render(helm.RenderRequest(EDGE_CHART, "edge", "edge"))
    return split.from_render(rendered.text, rendered.dropped_hook_events)


def phases(p: plan.Plan) -> list[str]:
    return [s.phase for s in p.steps]


def step(p: plan.Plan, phase: str) -> plan.Step:
    return next(s for s in p.steps if s.phase == phase)


def labels(objs: Any) -> list[str]:
    return [o.label for o in objs]


def applied(p: plan.Plan) -> list[plan.PlanObject]:
    """Objects of every ``apply`` step, in order."""
    return [o for s in p.steps if s.phase == "apply" for o in s.objects]


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        (Action.INSTALL, ["namespace", "crds", "pre-install", "apply", "secrets", "apply", "post-install"]),
        (Action.UPGRADE, ["namespace", "crds", "pre-upgrade", "apply", "secrets", "apply", "post-upgrade"]),
        (Action.UNINSTALL, ["pre-delete", "delete", "post-delete"]),
        (Action.ROLLBACK, ["pre-rollback", "apply", "secrets", "apply", "post-rollback"]),
        (Action.TEST, ["test"]),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_step_order_per_action(edge_split: split.Split, action: plan.Action, expected: list[str]) -> None:
    assert phases(plan.build(action, plan.PlanInputs(edge_split, "edge", "edge"))) == expected


def test_pre_install_order_ties_weight_name_kind_and_crd_hook(edge_split: split.Split) -> None:
    s = step(plan.build(Action.INSTALL, plan.PlanInputs(edge_split, "edge", "edge")), "pre-install")
    assert labels(s.objects) == [
        "CustomResourceDefinition gadgets.edge.example.com",  # weight -5
        "ServiceAccount edge/shared-hook-sa",  # weight -1
        "ConfigMap edge/migrate",  # weight 0, name "migrate", ConfigMap before Job by kind
        "Job edge/migrate",
        "ServiceAccount edge/runner",  # weight 0 ("runner" > "migrate")
        "Role edge/runner",  # weight "1.5" -> 0; Role after ServiceAccount by kind
        "ConfigMap edge/typo-policy",  # weight 5
    ]
    waits = {o.label: o.wait for o in s.objects}
    assert waits["Job edge/migrate"] == plan.Wait.JOB_COMPLETE
    assert waits["ConfigMap edge/migrate"] == plan.Wait.NONE
    # success cleanup: hook-succeeded ones in reverse; never the CRD hook, never the misspelt-policy object
    assert labels(s.delete_after_success) == [
        "Role edge/runner",
        "ServiceAccount edge/runner",
        "Job edge/migrate",
        "ConfigMap edge/migrate",
        "ServiceAccount edge/shared-hook-sa",
    ]
    crd = s.objects[0]
    assert not crd.delete_before_create and not crd.delete_on_failure
    typo = s.objects[-1]
    assert typo.delete_policies == () and not typo.delete_before_create


def test_failure_deletes_failed_if_hook_failed_then_succeeded_forward(edge_split: split.Split) -> None:
    s = step(plan.build(Action.INSTALL, plan.PlanInputs(edge_split, "edge", "edge")), "pre-install")
    job_index = labels(s.objects).index("Job edge/migrate")
    assert labels(s.delete_after_failure(job_index)) == [
        "ServiceAccount edge/shared-hook-sa",
        "ConfigMap edge/migrate",
    ]
    drain = step(plan.build(Action.UNINSTALL, plan.PlanInputs(edge_split, "edge", "edge")), "pre-delete")
    assert labels(drain.delete_after_failure(0)) == ["Job edge/drain"]  # hook-failed only
    assert drain.delete_after_success == ()


def test_no_policy_object_stays_and_shared_hook_recreated_per_event(edge_split: split.Split) -> None:
    p = plan.build(Action.INSTALL, plan.PlanInputs(edge_split, "edge", "edge"))
    post = step(p, "post-install")
    assert labels(post.objects) == [
        "ServiceAccount edge/shared-hook-sa",
        "ConfigMap edge/operator-config",
        "Job edge/config-deployer",
    ]
    config = post.objects[1]
    assert config.delete_policies == (plan.DeletePolicy.BEFORE_HOOK_CREATION,)
    assert config.delete_before_create
    assert "ConfigMap edge/operator-config" not in labels(post.delete_after_success)
    # the shared SA is created and deleted in pre-install AND again in post-install
    assert "ServiceAccount edge/shared-hook-sa" in labels(step(p, "pre-install").delete_after_success)
    assert "ServiceAccount edge/shared-hook-sa" in labels(post.delete_after_success)


def test_install_apply_order_and_namespace_always_planned(edge_split: split.Split) -> None:
    p = plan.build(Action.INSTALL, plan.PlanInputs(edge_split, "edge", "edge"))
    assert labels(step(p, "namespace").objects) == ["Namespace edge"]
    assert labels(step(p, "crds").objects) == [
        "CustomResourceDefinition things.edge.example.com",
        "CustomResourceDefinition widgets.edge.example.com",
    ]
    assert all(o.wait == plan.Wait.ESTABLISHED for o in step(p, "crds").objects)
    # Helm creates Namespaces and ServiceAccounts before Secrets, everything else after them
    assert labels(step(p, "apply").objects) == ["Namespace edge-reservation", "ServiceAccount edge/app"]
    assert phases(p).index("secrets") == phases(p).index("apply") + 1
    assert labels(applied(p)) == [
        "Namespace edge-reservation",
        "ServiceAccount edge/app",
        "ConfigMap edge/app-settings",
        "Service edge/app",
        "Deployment edge/app",
        "ValidatingWebhookConfiguration edge-validator",
        "Thing edge/default-thing",
        "Widget edge/default-widget",
    ]
    assert labels(step(p, "secrets").objects) == ["Secret edge/app-token"]


def test_uninstall_order_keep_and_crds(edge_split: split.Split) -> None:
    p = plan.build(Action.UNINSTALL, plan.PlanInputs(edge_split, "edge", "edge"))
    deleted = labels(step(p, "delete").objects)
    assert deleted[0] == "ValidatingWebhookConfiguration edge-validator"  # webhooks first
    assert deleted.index("Service edge/app") < deleted.index("Deployment edge/app")
    assert (
        "CustomResourceDefinition widgets.edge.example.com" in deleted
    )  # templated CRD is a release resource
    assert "Thing edge/default-thing" not in deleted
    assert "Namespace edge" not in deleted  # the release namespace outlives post-delete
    kept = {k.obj.label: k.reason for k in p.kept}
    assert "keep" in kept["Thing edge/default-thing"]
    assert "never deletes" in kept["CustomResourceDefinition things.edge.example.com"]
    assert phases(p)[-1] == "post-delete"


def test_upgrade_skips_crds_folder_and_install_only_objects(edge_split: split.Split) -> None:
    install_only = frozenset(o.ref for o in edge_split.ordinary if o.name == "default-thing")
    p = plan.build(Action.UPGRADE, plan.PlanInputs(edge_split, "edge", "edge", install_only=install_only))
    assert labels(step(p, "crds").objects) == ["CustomResourceDefinition widgets.edge.example.com"]
    assert "Thing edge/default-thing" not in labels(applied(p))
    assert labels(step(p, "pre-upgrade").objects)[-1] == "Job edge/upgrade-check"
    # the operator's config hook (no policy -> before-hook-creation, stays) is recreated on every upgrade
    assert p.warnings == (
        "post-upgrade: ConfigMap edge/operator-config stays after success but is deleted and recreated on every "
        "upgrade (before-hook-creation); objects owned by it (ownerReferences) are garbage-collected with it",
    )
    assert "warning: post-upgrade: ConfigMap edge/operator-config" in plan.render_text(p)
    assert plan.build(Action.INSTALL, plan.PlanInputs(edge_split, "edge", "edge")).warnings == ()


def test_test_action_runs_test_and_alias_hooks(edge_split: split.Split) -> None:
    p = plan.build(Action.TEST, plan.PlanInputs(edge_split, "edge", "edge"))
    assert labels(p.steps[0].objects) == ["Pod edge/alias-test", "Pod edge/smoke-test"]
    assert all(o.wait == plan.Wait.POD_SUCCEEDED for o in p.steps[0].objects)


def test_wait_adds_readiness_step(edge_split: split.Split) -> None:
    p = plan.build(Action.INSTALL, plan.PlanInputs(edge_split, "edge", "edge", wait=True))
    assert phases(p) == [
        "namespace",
        "crds",
        "pre-install",
        "apply",
        "secrets",
        "apply",
        "readiness",
        "post-install",
    ]
    assert [(o.label, o.wait) for o in step(p, "readiness").objects] == [
        ("Deployment edge/app", plan.Wait.ROLLOUT)
    ]


def test_json_contract(edge_split: split.Split) -> None:
    data = plan.build(Action.INSTALL, plan.PlanInputs(edge_split, "edge", "edge", work_dir="W")).to_json()
    assert set(data) == {"action", "steps", "notRun"}
    assert data["action"] == "install"
    pre = next(s for s in data["steps"] if s["phase"] == "pre-install")
    assert pre["objects"][3] == {
        "kind": "Job",
        "name": "migrate",
        "namespace": "edge",
        "weight": 0,
        "deletePolicies": ["before-hook-creation", "hook-succeeded"],
        "wait": "job-complete",
    }
    apply_obj = next(s for s in data["steps"] if s["phase"] == "apply")["objects"][0]
    assert apply_obj == {"kind": "Namespace", "name": "edge-reservation", "namespace": ""}
    assert {"phase": "post-delete", "runBy": "berth install script --work-dir W --action uninstall"} in data[
        "notRun"
    ]
    assert [n["phase"] for n in data["notRun"]] == [
        "pre-delete", "post-delete", "pre-upgrade", "post-upgrade", "pre-rollback", "post-rollback", "test",
    ]  # fmt: skip


def test_kai_v0_14_1_pre_hooks_in_helm_order() -> None:
    """The spec's worked example: ties at -1 and 1 and 3 decided by name, then kind; kai-config stays."""
    pre = "pre-install,pre-upgrade"
    hs_bhc = "hook-succeeded,before-hook-creation"
    rbac = "rbac.authorization.k8s.io/v1"
    text = "".join(
        [
            hook("ServiceAccount", "kai-topology-migration", pre, "1", hs_bhc),
            hook("ServiceAccount", "kai-scheduler-crd-manager", pre, "-1", hs_bhc),
            hook("ConfigMap", "topology-migration-script", pre, "3", hs_bhc),
            hook("ClusterRole", "kai-topology-migration", pre, "1", hs_bhc, api=rbac),
            hook("ClusterRole", "kai-scheduler-crd-manager", pre, "-1", hs_bhc, api=rbac),
            hook("ClusterRoleBinding", "kai-topology-migration", pre, "1", hs_bhc, api=rbac),
            hook("ClusterRoleBinding", "kai-scheduler-crd-manager", pre, "-1", hs_bhc, api=rbac),
            hook("Job", "crd-upgrader", pre, "2", "hook-succeeded", api="batch/v1"),
            hook("Config", "kai-config", pre, "3", None, api="kai.scheduler/v1"),
            hook("Job", "topology-migration", pre, "4", hs_bhc, api="batch/v1"),
            hook("Job", "post-delete-cleanup", "post-delete", None, "hook-succeeded", api="batch/v1"),
        ]
    )
    p = plan.build(Action.INSTALL, plan.PlanInputs(split.from_render(text), "kai-scheduler", "kai-scheduler"))
    s = step(p, "pre-install")
    assert [(o.kind, o.name, o.weight) for o in s.objects] == [
        ("ServiceAccount", "kai-scheduler-crd-manager", -1),
        ("ClusterRole", "kai-scheduler-crd-manager", -1),
        ("ClusterRoleBinding", "kai-scheduler-crd-manager", -1),
        ("ServiceAccount", "kai-topology-migration", 1),
        ("ClusterRole", "kai-topology-migration", 1),
        ("ClusterRoleBinding", "kai-topology-migration", 1),
        ("Job", "crd-upgrader", 2),
        ("Config", "kai-config", 3),
        ("ConfigMap", "topology-migration-script", 3),
        ("Job", "topology-migration", 4),
    ]
    assert "Config ns/kai-config" not in labels(s.delete_after_success)
    assert len(s.delete_after_success) == 9
    assert [n.phase for n in p.not_run] == ["post-delete", "pre-upgrade"]


def test_release_namespace_planned_even_when_chart_renders_namespaces() -> None:
    result = split.from_render(doc("Namespace", "other", None) + doc("ConfigMap", "c"))
    p = plan.build(Action.INSTALL, plan.PlanInputs(result, "rel", "target"))
    assert labels(step(p, "namespace").objects) == ["Namespace target"]


def test_plan_cli_text_and_json(run: Run, edge_workdir: Path) -> None:
    r = run("install", "plan", "--work-dir", edge_workdir, "--action", "uninstall", "-o", "json")
    assert r.code == 0, r.err
    data = json.loads(r.out)
    assert [s["phase"] for s in data["steps"]] == ["pre-delete", "delete", "post-delete"]
    assert data["steps"][2]["objects"][0]["deletePolicies"] == ["hook-succeeded"]
    t = run("install", "plan", "--work-dir", edge_workdir)
    assert t.code == 0
    assert "3. pre-install:" in t.out and "after the event succeeds, delete in reverse" in t.out
    assert "post-delete: run by `berth install script" in t.out


def test_plan_from_disk_equals_plan_from_fresh_render(edge_workdir: Path) -> None:
    wd = workdir.load_workdir(edge_workdir)
    rendered = helm.render(helm.RenderRequest(EDGE_CHART, "edge", "edge"))
    fresh = split.from_render(rendered.text)
    for action in (Action.INSTALL, Action.UNINSTALL, Action.TEST):
        a = workdir.build_plan(wd, action, "W")
        b = plan.build(action, plan.PlanInputs(fresh, wd.package.release, wd.namespace, "W"))
        assert a.to_json() == b.to_json(), action
    assert [e.value for e in wd.split.events()] == [e.value for e in HookEvent]
    assert {r.name for r in wd.install_only} == {"default-thing"}


def test_upgrade_plan_uses_the_is_upgrade_render(edge_workdir: Path) -> None:
    wd = workdir.load_workdir(edge_workdir)
    assert wd.upgrade is not None  # app-settings renders isInstall differently; default-thing is install-only
    p = workdir.build_plan(wd, Action.UPGRADE, "W")
    files = {o.label: o.file for o in applied(p)}
    assert files["ConfigMap edge/app-settings"] == "upgrade/manifests/configmap-edge-app-settings.yaml"
    assert "Thing edge/default-thing" not in files
    body = yamlio.load_file(edge_workdir / "out" / files["ConfigMap edge/app-settings"])[0].body
    assert body["data"]["isInstall"] == "false"
    assert all(o.file.startswith("upgrade/lifecycle/pre-upgrade/") for o in step(p, "pre-upgrade").objects)


# ---- prune and rollback: the previous revision ---------------------------------------------------------------


def _rendered(*docs: str) -> list[tuple[split.RenderedObject, str]]:
    objs = split.parse_render("".join(docs))
    return [(o, f"revisions/1/manifests/{o.kind.lower()}-{o.name}.yaml") for o in objs]


@pytest.mark.parametrize(
    ("previous", "remaining", "pruned", "kept"),
    [
        pytest.param(
            [doc("Deployment", "web", api="apps/v1"), doc("ConfigMap", "cfg"), doc("ServiceAccount", "sa")],
            {"cfg"},
            ["ServiceAccount ns/sa", "Deployment ns/web"],
            [],
            id="install-order-of-the-replaced-manifest",
        ),
        pytest.param(
            [doc("ConfigMap", "cfg", annotations={"helm.sh/resource-policy": "keep"}), doc("Service", "svc")],
            set(),
            ["Service ns/svc"],
            ["ConfigMap ns/cfg"],
            id="keep-listed-as-kept",
        ),
        pytest.param(
            [doc("ConfigMap", "cfg", annotations={"helm.sh/resource-policy": "Keep"})],
            set(),
            ["ConfigMap ns/cfg"],
            [],
            id="only-the-exact-value-keeps",
        ),
        pytest.param([doc("ConfigMap", "cfg")], {"cfg"}, None, [], id="nothing-dropped-no-step"),
    ],
)
def test_prune_step(
    previous: list[str], remaining: set[str], pruned: list[str] | None, kept: list[str]
) -> None:
    replaced = tuple(_rendered(*previous))
    still = frozenset(o.ref for o, _ in replaced if o.name in remaining)
    st, k = plan.prune_step(replaced, still, "revision 1")
    assert (labels(st.objects) if st else None) == pruned
    assert [x.obj.label for x in k] == kept
    assert all("revision 1" in x.reason for x in k)
    if st is not None:
        assert st.phase == "prune" and all(o.file.startswith("revisions/1/") for o in st.objects)


def test_prune_matches_group_kind_namespace_and_name() -> None:
    """A ConfigMap and a custom ``ConfigMap`` of another group are different objects (Helm's isMatchingInfo)."""
    replaced = tuple(_rendered(doc("ConfigMap", "x"), doc("ConfigMap", "x", api="other.example.com/v1")))
    st, _ = plan.prune_step(replaced, frozenset({replaced[0][0].ref}), "r")
    assert st is not None and [o.api_version for o in st.objects] == ["other.example.com/v1"]


def test_upgrade_plan_prunes_what_the_previous_revision_had(edge_history_workdir: Path) -> None:
    wd = workdir.load_workdir(edge_history_workdir)
    prev = wd.previous()
    assert prev is not None and prev.number == 1 and prev.meta["chart"]["version"] == "0.3.0"
    p = workdir.build_plan(wd, Action.UPGRADE, "W", wait=True)
    got = phases(p)
    # Helm's Update applies, then deletes what the old manifest had, then waits; post-upgrade after that.
    assert got[got.index("prune") - 1] == "apply" and got[got.index("prune") + 1] == "readiness"
    assert got[-1] == "post-upgrade"
    prune = step(p, "prune")
    assert labels(prune.objects) == ["Service edge/app"]
    assert (edge_history_workdir / "out" / prune.objects[0].file).is_file()
    assert prune.objects[0].file.startswith("revisions/1/")
    assert "Thing edge/default-thing" not in [o.label for s in p.steps for o in s.objects]  # install-only
    assert {"phase": "prune", "objects": [{"kind": "Service", "name": "app", "namespace": "edge"}]} in (
        p.to_json()["steps"]
    )
    assert "prune 1 object(s) of revision 1 (edge-hooks 0.3.0)" in plan.render_text(p)


def test_rollback_plan_uses_the_target_revisions_objects_and_hooks(edge_history_workdir: Path) -> None:
    wd = workdir.load_workdir(edge_history_workdir)
    p = workdir.build_plan(wd, Action.ROLLBACK, "W")
    files = [o.file for s in p.steps if s.phase != "prune" for o in s.objects]
    assert files and all(f.startswith("revisions/1/") for f in files)
    assert "Service edge/app" in labels(applied(p))  # dropped by 0.4.0, back with revision 1
    assert step(p, "pre-rollback").objects[0].file.startswith("revisions/1/lifecycle/pre-rollback/")
    assert not any(f.startswith("revisions/1/upgrade/") for f in files)  # the install render of revision 1
    assert "Thing edge/default-thing" not in labels(applied(p))  # install-only: never touched again
    prune = step(p, "prune")  # what the current render added, from the current files
    assert labels(prune.objects) == ["ConfigMap added"]
    assert not prune.objects[0].file.startswith("revisions/")
    body = (edge_history_workdir / "out" / next(f for f in files if "app-settings" in f)).read_text()
    assert "next" not in body  # the 0.3.0 ConfigMap, not the current one
    text = plan.render_text(p)
    assert text.startswith(
        "Plan: rollback release edge-hooks in namespace edge to revision 1 (edge-hooks 0.3.0) ("
    )
    assert "Secret(s) from out/revisions/1/secrets" in text


def test_rollback_without_a_recorded_revision_is_refused(run: Run, edge_workdir: Path) -> None:
    r = run("install", "plan", "--work-dir", edge_workdir, "--action", "rollback")
    assert r.code == 2
    assert f"{edge_workdir.resolve()}/out/revisions: a rollback goes back to an earlier revision" in r.err
    assert "berth install upgrade --work-dir" in r.err
    r = run("install", "script", "--work-dir", edge_workdir, "--action", "rollback")
    assert r.code == 2 and "none recorded" in r.err
    stored = (edge_workdir / "out" / "lifecycle" / "plan.yaml").read_text()
    assert "unavailable:" in stored and "action: rollback" in stored
    # written by setup from its staging folder, the stored reason still names the work dir's own revisions folder
    spec = yamlio.load_file(edge_workdir / "out" / "lifecycle" / "plan.yaml")[0].body["spec"]
    assert spec["unavailable"][0]["reason"].startswith(
        f"{edge_workdir.resolve()}/out/revisions: a rollback goes back"
    )


def test_install_plan_of_a_first_setup_has_no_prune(edge_workdir: Path) -> None:
    wd = workdir.load_workdir(edge_workdir)
    assert wd.previous() is None
    assert "prune" not in phases(workdir.build_plan(wd, Action.UPGRADE, "W"))


def test_rollback_to_a_named_revision(run: Run, edge_history_workdir: Path) -> None:
    r = run("install", "plan", "--work-dir", edge_history_workdir, "--action", "rollback", "--revision", "1",
            "-o", "json")  # fmt: skip
    assert r.code == 0, r.err
    assert json.loads(r.out)["steps"][0]["phase"] == "pre-rollback"
    r = run("install", "plan", "--work-dir", edge_history_workdir, "--action", "rollback", "--revision", "5")
    assert r.code == 2 and "no revision 5 recorded (recorded: 1)" in r.err
    r = run("install", "script", "--work-dir", edge_history_workdir, "--revision", "1")
    assert r.code == 2 and "--revision: only a rollback goes to a revision" in r.err
