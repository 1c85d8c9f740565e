"""THE lifecycle plan: every step of one action, in Helm 4's execution order, built in exactly one place.

``berth install plan`` prints it, ``berth install script`` turns it into bash, and the later ``apply`` executor
runs it. A change to Helm semantics is one edit here. The rules (helm/helm ``pkg/action/{install,upgrade,
uninstall,rollback,release_testing,hooks}.go``):

install    namespace -> crds (server-side apply, wait Established) -> pre-install -> apply (kinds Helm creates
           before Secrets) -> secrets -> apply (the rest, install order) -> [readiness, only with --wait] ->
           post-install
upgrade    namespace -> crds (templated ones only: Helm never upgrades ``crds/``) -> pre-upgrade -> [apply] ->
           secrets -> apply -> [prune] -> [readiness] -> post-upgrade
rollback   pre-rollback -> [apply] -> secrets -> apply -> [prune] -> [readiness] -> post-rollback, all of the
           *target* revision (its objects, its hooks)
uninstall  pre-delete -> delete (uninstall order; ``resource-policy: keep`` and ``crds/`` CRDs left in place; the
           release namespace outlives post-delete) -> post-delete
test       test

Within a hook event the hooks run one at a time, ordered by weight, then name (byte-wise), then kind install
order (not "weight, kind, name" as Helm's docs say). Per hook: delete it first if ``before-hook-creation``
(Helm's default, used only when no policy is listed), create it, wait (Job ``Complete``, Pod ``Succeeded``, any
other kind: nothing); on failure delete it if ``hook-failed`` and delete the already-succeeded
``hook-succeeded`` hooks in forward order; after the whole event succeeds delete the ``hook-succeeded`` ones in
reverse. CRD hooks are never deleted.

Prune (upgrade and rollback): Helm's ``KubeClient.Update`` (``pkg/kube/client.go``) first creates or patches every
object of the new manifest, then deletes each object of the *replaced* revision's manifest that the new one lacks
(matched by group, kind, namespace and name), in that manifest's order -- which is install order, as Helm stores
it -- one by one, with background propagation and without waiting, skipping any whose **live** copy carries
``helm.sh/resource-policy: keep``. Only then comes the wait, then the post hooks. The plan lists the objects whose
replaced copy says ``keep`` as kept; executors still check the live copy of the rest, as Helm does.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from berth.install import split as split_mod
from berth.kube import kinds
from berth.kube.hooks import RESOURCE_POLICY_KEEP, DeletePolicy, HookEvent

DEFAULT_HOOK_TIMEOUT_SECONDS = 300
"""Helm's ``--timeout`` default (5m), applied per hook and per deletion wait."""
CRD_TIMEOUT_SECONDS = 120


class Action(StrEnum):
    INSTALL = "install"
    UPGRADE = "upgrade"
    UNINSTALL = "uninstall"
    ROLLBACK = "rollback"
    TEST = "test"


class Phase(StrEnum):
    """Non-hook step kinds; hook steps use the :class:`HookEvent` value as their phase."""

    NAMESPACE = "namespace"
    CRDS = "crds"
    SECRETS = "secrets"
    APPLY = "apply"
    DELETE = "delete"
    PRUNE = "prune"
    """Upgrade and rollback: delete what the replaced revision had and the new one lacks, unless the live copy says
    ``keep`` (the one phase whose executors read the live object before deleting)."""
    READINESS = "readiness"


class Wait(StrEnum):
    """What an executor waits for after creating an object."""

    NONE = "none"
    JOB_COMPLETE = "job-complete"
    POD_SUCCEEDED = "pod-succeeded"
    ESTABLISHED = "established"
    ROLLOUT = "rollout"


PRE_EVENT: dict[Action, HookEvent] = {
    Action.INSTALL: HookEvent.PRE_INSTALL,
    Action.UPGRADE: HookEvent.PRE_UPGRADE,
    Action.UNINSTALL: HookEvent.PRE_DELETE,
    Action.ROLLBACK: HookEvent.PRE_ROLLBACK,
}
POST_EVENT: dict[Action, HookEvent] = {
    Action.INSTALL: HookEvent.POST_INSTALL,
    Action.UPGRADE: HookEvent.POST_UPGRADE,
    Action.UNINSTALL: HookEvent.POST_DELETE,
    Action.ROLLBACK: HookEvent.POST_ROLLBACK,
}
EVENT_ACTION: dict[HookEvent, Action] = {
    **{e: a for a, e in PRE_EVENT.items()},
    **{e: a for a, e in POST_EVENT.items()},
    HookEvent.TEST: Action.TEST,
}
ROLLOUT_KINDS = frozenset({"Deployment", "StatefulSet", "DaemonSet"})


@dataclass(frozen=True)
class PlanObject:
    """One object as a step touches it. ``file`` is relative to ``W/out``."""

    kind: str
    name: str
    namespace: str
    api_version: str
    file: str
    weight: int | None = None
    delete_policies: tuple[DeletePolicy, ...] | None = None
    wait: Wait | None = None
    delete_before_create: bool = False
    delete_on_failure: bool = False
    logs_on_success: bool = False
    """``helm.sh/hook-output-log-policy: hook-succeeded`` on a Job or Pod: print its logs after it succeeds."""
    create_only: bool = False
    """A ``crds/`` CRD: Helm creates it when absent and never touches an existing one."""

    @property
    def group(self) -> str:
        return self.api_version.split("/", 1)[0] if "/" in self.api_version else ""

    @property
    def label(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}" if self.namespace else f"{self.kind} {self.name}"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "name": self.name, "namespace": self.namespace}
        if self.weight is not None:
            out["weight"] = self.weight
        if self.delete_policies is not None:
            out["deletePolicies"] = [p.value for p in self.delete_policies]
        if self.wait is not None:
            out["wait"] = self.wait.value
        return out


@dataclass(frozen=True)
class Step:
    """One step: its objects in execution order and the deletions tied to it."""

    phase: str
    objects: tuple[PlanObject, ...]
    description: str
    timeout_seconds: int = DEFAULT_HOOK_TIMEOUT_SECONDS
    delete_after_success: tuple[PlanObject, ...] = ()
    """Hook steps: ``hook-succeeded`` objects, already in reverse execution order."""

    @property
    def is_hook(self) -> bool:
        return self.phase in {e.value for e in HookEvent}

    def delete_after_failure(self, failed_index: int) -> tuple[PlanObject, ...]:
        """Deletions when hook ``failed_index`` fails: it (if ``hook-failed``), then the earlier succeeded
        ``hook-succeeded`` hooks in forward order (Helm 4, v3.21)."""
        failed = self.objects[failed_index]
        out = [failed] if failed.delete_on_failure else []
        succeeded = {id(o) for o in self.delete_after_success}
        out += [o for o in self.objects[:failed_index] if id(o) in succeeded]
        return tuple(out)

    def to_json(self) -> dict[str, Any]:
        return {"phase": self.phase, "objects": [o.to_json() for o in self.objects]}


@dataclass(frozen=True)
class NotRun:
    """A step of another action, with the command that runs it."""

    phase: str
    run_by: str

    def to_json(self) -> dict[str, Any]:
        return {"phase": self.phase, "runBy": self.run_by}


@dataclass(frozen=True)
class Kept:
    """An object the action deliberately leaves in place, and why."""

    obj: PlanObject
    reason: str


@dataclass(frozen=True)
class Plan:
    action: Action
    release: str
    namespace: str
    steps: tuple[Step, ...]
    not_run: tuple[NotRun, ...]
    kept: tuple[Kept, ...] = ()
    warnings: tuple[str, ...] = ()
    """Review notes (text output and scripts only; not part of the JSON contract)."""
    target: str = ""
    """Rollback: the revision it goes back to (text output and scripts only)."""
    target_revision: int | None = None
    """Rollback: that revision's number (scripts name it in the command that makes the work dir follow)."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "action": self.action.value,
            "steps": [s.to_json() for s in self.steps],
            "notRun": [n.to_json() for n in self.not_run],
        }
        if self.kept:
            out["kept"] = [{**k.obj.to_json(), "reason": k.reason} for k in self.kept]
        return out


def hook_wait(kind: str) -> Wait:
    """Helm waits on Jobs (Complete) and Pods (Succeeded) only; other hooks are done once created."""
    if kind == "Job":
        return Wait.JOB_COMPLETE
    if kind == "Pod":
        return Wait.POD_SUCCEEDED
    return Wait.NONE


def _plain(
    obj: split_mod.RenderedObject, files: dict[Any, str], folder: str, wait: Wait | None = None
) -> PlanObject:
    return PlanObject(
        obj.kind, obj.name, obj.namespace, obj.api_version, f"{folder}/{files[obj.ref]}", wait=wait
    )


def hook_step(event: HookEvent, result: split_mod.Split, timeout: int, prefix: str = "") -> Step:
    """One event's run list with its wait and delete rules."""
    objs: list[PlanObject] = []
    succeeded: list[PlanObject] = []
    for hook in result.hooks_for(event):
        o = hook.obj
        policies = hook.delete_policies
        po = PlanObject(
            o.kind,
            o.name,
            o.namespace,
            o.api_version,
            f"{prefix}lifecycle/{event.value}/{result.file_names[o.ref]}",
            weight=hook.weight,
            delete_policies=policies,
            wait=hook_wait(o.kind),
            delete_before_create=hook.deletable and DeletePolicy.BEFORE_HOOK_CREATION in policies,
            delete_on_failure=hook.deletable and DeletePolicy.HOOK_FAILED in policies,
            logs_on_success=o.kind in ("Job", "Pod")
            and DeletePolicy.HOOK_SUCCEEDED.value in hook.log_policies,
        )
        objs.append(po)
        if hook.deletable and DeletePolicy.HOOK_SUCCEEDED in policies:
            succeeded.append(po)
    kept = len(objs) - len(succeeded)
    desc = f"{len(objs)} {event.value} hook(s), one at a time, timeout {timeout}s each"
    if kept:
        desc += f"; {kept} stay after success (no hook-succeeded, or a CRD)"
    return Step(event.value, tuple(objs), desc, timeout, tuple(reversed(succeeded)))


Replaced = tuple[tuple[split_mod.RenderedObject, str], ...]
"""Release objects of the revision an upgrade or rollback replaces, each with its file (relative to ``W/out``)."""


def release_files(
    result: split_mod.Split, prefix: str = "", skip: frozenset[Any] = frozenset()
) -> list[tuple[split_mod.RenderedObject, str]]:
    """What a render makes a release own -- ordinary objects, Secrets, templated CRDs, never ``crds/`` ones -- with
    their files, in render order."""
    files = result.file_names
    out = [(o, f"{prefix}manifests/{files[o.ref]}") for o in (*result.crds, *result.ordinary)]
    out += [(o, f"{prefix}secrets/{files[o.ref]}") for o in result.secrets]
    return [
        (o, f) for o, f in sorted(out, key=lambda p: p[0].order) if o.ref not in skip and not o.from_crds_dir
    ]


def prune_step(replaced: Replaced, remaining: frozenset[Any], source: str) -> tuple[Step | None, list[Kept]]:
    """The prune step: ``replaced`` objects not in ``remaining``, in install order (the order Helm stores and walks
    the replaced manifest in); those whose replaced copy says ``keep`` are listed as kept instead."""
    gone = kinds.sort_for_install([p for p in replaced if p[0].ref not in remaining], lambda p: p[0].kind)
    pruned: list[PlanObject] = []
    kept: list[Kept] = []
    for o, file in gone:
        po = PlanObject(o.kind, o.name, o.namespace, o.api_version, file)
        if o.keep == RESOURCE_POLICY_KEEP:
            kept.append(
                Kept(
                    po, f"helm.sh/resource-policy: keep; no longer rendered, Helm never prunes it ({source})"
                )
            )
        else:
            pruned.append(po)
    if not pruned:
        return None, kept
    step = Step(
        Phase.PRUNE.value,
        tuple(pruned),
        f"prune {len(pruned)} object(s) of {source} the new render no longer has (its install order, not waited "
        "on; one whose live copy says helm.sh/resource-policy: keep stays)",
    )
    return step, kept


def runner_command(action: Action, work_dir: str) -> str:
    return f"berth install script --work-dir {work_dir} --action {action.value}"


@dataclass(frozen=True)
class PlanInputs:
    """What a plan is built from: one render and where it stands in the release's history."""

    result: split_mod.Split
    """The render the action works on (for rollback: the target revision's)."""
    release: str
    namespace: str
    work_dir: str = "W"
    """How commands printed in the plan name the work dir."""
    wait: bool = False
    """Add the readiness step (like ``helm --wait``)."""
    hook_timeout: int = DEFAULT_HOOK_TIMEOUT_SECONDS
    install_only: frozenset[Any] = frozenset()
    """Identities rendered only under ``.Release.IsInstall`` (absent from the ``--is-upgrade`` render): upgrade and
    rollback neither apply nor prune them."""
    prefix: str = ""
    """Put before every file path: ``upgrade/`` for the upgrade variant, ``revisions/N/`` for a recorded revision."""
    replaced: Replaced = ()
    """Upgrade and rollback: the release objects of the revision being replaced ..."""
    remaining: frozenset[Any] = frozenset()
    """... of which those not in ``remaining`` (what the new render has, install-only objects included) are pruned."""
    replaced_source: str = "the previous revision"
    """How the plan names the replaced revision."""


@dataclass
class _Builder:
    """The steps of one plan as its planner adds them; every ordering rule of Helm's is one method here."""

    action: Action
    inputs: PlanInputs
    result: split_mod.Split
    steps: list[Step] = dataclasses.field(default_factory=list)
    kept: list[Kept] = dataclasses.field(default_factory=list)

    @classmethod
    def start(cls, action: Action, inputs: PlanInputs) -> _Builder:
        result = inputs.result
        if action in (Action.UPGRADE, Action.ROLLBACK) and inputs.install_only:
            result = dataclasses.replace(
                result, hooks=tuple(h for h in result.hooks if h.obj.ref not in inputs.install_only)
            )
        return cls(action, inputs, result)

    def plain(self, obj: split_mod.RenderedObject, folder: str, wait: Wait | None = None) -> PlanObject:
        return _plain(obj, self.result.file_names, self.inputs.prefix + folder, wait)

    def hooks(self, event: HookEvent) -> None:
        """One event's hooks, when the render has any."""
        if self.result.hooks_for(event):
            self.steps.append(hook_step(event, self.result, self.inputs.hook_timeout, self.inputs.prefix))

    def namespace(self) -> None:
        ns = self.inputs.namespace
        self.steps.append(
            Step(
                Phase.NAMESPACE.value,
                (PlanObject("Namespace", ns, "", "v1", ""),),
                f"ensure the release namespace {ns} exists (like helm --create-namespace)",
            )
        )

    def crds(self, with_crds_dir: bool) -> None:
        """Every CRD one by one, waited on until Established; ``crds/`` ones only on install (Helm never upgrades
        them: on upgrade they are listed as kept)."""
        crds = [c for c in self.result.crds if with_crds_dir or not c.from_crds_dir]
        if crds:
            self.steps.append(
                Step(
                    Phase.CRDS.value,
                    tuple(
                        dataclasses.replace(
                            self.plain(c, "manifests", Wait.ESTABLISHED), create_only=c.from_crds_dir
                        )
                        for c in crds
                    ),
                    f"server-side apply {len(crds)} CRD(s) one by one (crds/ ones only when absent, as Helm) "
                    "and wait until each is Established",
                    CRD_TIMEOUT_SECONDS,
                )
            )
        if not with_crds_dir:
            self.kept += [
                Kept(self.plain(c, "manifests"), "crds/ folder CRD: Helm never upgrades it")
                for c in self.result.crds
                if c.from_crds_dir
            ]

    def release_objects(self) -> None:
        """Apply the release objects in install order -- Secrets where Helm creates them, after namespaces, quotas
        and ServiceAccounts and before everything that reads them -- then (upgrade, rollback) prune, then (with
        ``wait``) the readiness step."""
        skip = self.inputs.install_only if self.action in (Action.UPGRADE, Action.ROLLBACK) else frozenset()
        ordinary = [
            o
            for o in kinds.sort_for_install(list(self.result.ordinary), lambda o: o.kind)
            if o.ref not in skip
        ]
        secrets = [
            o
            for o in kinds.sort_for_install(list(self.result.secrets), lambda o: o.kind)
            if o.ref not in skip
        ]
        secret_key = kinds.install_key("Secret")
        early = [o for o in ordinary if kinds.install_key(o.kind) < secret_key]
        late = [o for o in ordinary if kinds.install_key(o.kind) >= secret_key]
        if not secrets:
            early, late = [], early + late
        if early:
            self.steps.append(
                Step(
                    Phase.APPLY.value,
                    tuple(self.plain(o, "manifests") for o in early),
                    f"server-side apply {len(early)} object(s) Helm creates before Secrets (install order)",
                )
            )
        if secrets:
            self.steps.append(
                Step(
                    Phase.SECRETS.value,
                    tuple(self.plain(o, "secrets") for o in secrets),
                    f"server-side apply {len(secrets)} Secret(s) from out/{self.inputs.prefix}secrets",
                )
            )
        if late:
            self.steps.append(
                Step(
                    Phase.APPLY.value,
                    tuple(self.plain(o, "manifests") for o in late),
                    f"server-side apply {len(late)} object(s) in Helm's install order",
                )
            )
        if self.action in (Action.UPGRADE, Action.ROLLBACK):
            prune, kept_now = prune_step(
                self.inputs.replaced, self.inputs.remaining, self.inputs.replaced_source
            )
            self.kept.extend(kept_now)
            if prune is not None:
                self.steps.append(prune)
        if self.inputs.wait:
            self.readiness(ordinary)

    def readiness(self, ordinary: list[split_mod.RenderedObject]) -> None:
        ready = [o for o in ordinary if o.kind in ROLLOUT_KINDS or o.kind in ("Job", "Pod")]
        if ready:
            self.steps.append(
                Step(
                    Phase.READINESS.value,
                    tuple(
                        self.plain(
                            o, "manifests", Wait.ROLLOUT if o.kind in ROLLOUT_KINDS else hook_wait(o.kind)
                        )
                        for o in ready
                    ),
                    f"wait for {len(ready)} workload(s) to be ready (like helm --wait)",
                    self.inputs.hook_timeout,
                )
            )

    def deletions(self) -> None:
        """Uninstall: the release objects in uninstall order; ``keep`` ones (and any other resource policy) and
        ``crds/`` CRDs are listed as kept."""
        result = self.result
        release_objects = [
            *result.ordinary,
            *result.secrets,
            *(c for c in result.crds if not c.from_crds_dir),
        ]
        deleted = []
        secret_refs = {o.ref for o in result.secrets}
        for o in kinds.sort_for_uninstall(release_objects, lambda o: o.kind):
            po = self.plain(o, "secrets" if o.ref in secret_refs else "manifests")
            policy = o.keep
            if policy is None:
                deleted.append(po)
            elif policy == RESOURCE_POLICY_KEEP:
                self.kept.append(Kept(po, "helm.sh/resource-policy: keep"))
            else:
                self.kept.append(
                    Kept(po, f"helm.sh/resource-policy: {policy} (Helm neither deletes nor keeps-lists it)")
                )
        self.kept += [
            Kept(self.plain(c, "manifests"), "crds/ folder CRD: Helm never deletes it")
            for c in result.crds
            if c.from_crds_dir
        ]
        if deleted:
            self.steps.append(
                Step(
                    Phase.DELETE.value,
                    tuple(deleted),
                    f"delete {len(deleted)} release object(s) in Helm's uninstall order "
                    f"(webhooks first); the namespace {self.inputs.namespace} stays",
                )
            )

    def plan(self) -> Plan:
        """The plan, with the hook steps of other actions listed as not run (and who runs them)."""
        ran = {s.phase for s in self.steps}
        not_run = tuple(
            NotRun(e.value, runner_command(EVENT_ACTION[e], self.inputs.work_dir))
            for e in self.result.events()
            if e.value not in ran
        )
        return Plan(
            self.action,
            self.inputs.release,
            self.inputs.namespace,
            tuple(self.steps),
            not_run,
            tuple(self.kept),
            tuple(recreated_warnings(self.steps, self.action)),
        )


def plan_install(inputs: PlanInputs) -> Plan:
    """``helm install``: namespace, CRDs, pre-install, release objects, [readiness], post-install."""
    b = _Builder.start(Action.INSTALL, inputs)
    b.namespace()
    b.crds(with_crds_dir=True)
    b.hooks(HookEvent.PRE_INSTALL)
    b.release_objects()
    b.hooks(HookEvent.POST_INSTALL)
    return b.plan()


def plan_upgrade(inputs: PlanInputs) -> Plan:
    """``helm upgrade``: namespace, templated CRDs, pre-upgrade, release objects, prune, [readiness],
    post-upgrade."""
    b = _Builder.start(Action.UPGRADE, inputs)
    b.namespace()
    b.crds(with_crds_dir=False)
    b.hooks(HookEvent.PRE_UPGRADE)
    b.release_objects()
    b.hooks(HookEvent.POST_UPGRADE)
    return b.plan()


def plan_rollback(inputs: PlanInputs) -> Plan:
    """``helm rollback``: the target's pre-rollback hooks, its objects, prune, [readiness], its post-rollback
    hooks."""
    b = _Builder.start(Action.ROLLBACK, inputs)
    b.hooks(HookEvent.PRE_ROLLBACK)
    b.release_objects()
    b.hooks(HookEvent.POST_ROLLBACK)
    return b.plan()


def plan_uninstall(inputs: PlanInputs) -> Plan:
    """``helm uninstall``: pre-delete, deletions in uninstall order, post-delete."""
    b = _Builder.start(Action.UNINSTALL, inputs)
    b.hooks(HookEvent.PRE_DELETE)
    b.deletions()
    b.hooks(HookEvent.POST_DELETE)
    return b.plan()


def plan_test(inputs: PlanInputs) -> Plan:
    """``helm test``: the test hooks."""
    b = _Builder.start(Action.TEST, inputs)
    b.hooks(HookEvent.TEST)
    return b.plan()


PLANNERS: dict[Action, Callable[[PlanInputs], Plan]] = {
    Action.INSTALL: plan_install,
    Action.UPGRADE: plan_upgrade,
    Action.ROLLBACK: plan_rollback,
    Action.UNINSTALL: plan_uninstall,
    Action.TEST: plan_test,
}


def build(action: Action, inputs: PlanInputs) -> Plan:
    """The plan of ``action`` over ``inputs`` (one planner per action, as Helm's ``pkg/action``)."""
    return PLANNERS[action](inputs)


def recreated_warnings(steps: list[Step], action: Action) -> list[str]:
    """On upgrade (and rollback), a hook that stays after success but has ``before-hook-creation`` is deleted and
    created again on every run: anything that names it in ``ownerReferences`` is garbage-collected with it
    (kai-scheduler#1536: a hook ``Config`` took the scheduler's ServiceAccounts down on every upgrade)."""
    if action not in (Action.UPGRADE, Action.ROLLBACK):
        return []
    out = []
    for s in steps:
        if not s.is_hook:
            continue
        for o in s.objects:
            if o.delete_before_create and o not in s.delete_after_success and o.wait == Wait.NONE:
                out.append(
                    f"{s.phase}: {o.label} stays after success but is deleted and recreated on every {action.value} "
                    "(before-hook-creation); objects owned by it (ownerReferences) are garbage-collected with it"
                )
    return out


def render_text(plan: Plan) -> str:
    """The human listing: numbered steps, objects in order, waits, timeouts and deletions."""
    to = f" to {plan.target}" if plan.target else ""
    lines = [
        f"Plan: {plan.action.value} release {plan.release} in namespace {plan.namespace}{to} "
        f"({len(plan.steps)} step(s), Helm 4 order: weight, then name, then kind)"
    ]
    for i, step in enumerate(plan.steps, 1):
        lines.append("")
        lines.append(f"{i}. {step.phase}: {step.description}")
        for j, o in enumerate(step.objects, 1):
            extra = []
            if o.weight is not None:
                extra.append(f"weight={o.weight}")
            if o.delete_policies is not None:
                extra.append("policies=" + (",".join(p.value for p in o.delete_policies) or "(none acting)"))
            if o.wait is not None and o.wait != Wait.NONE:
                extra.append(f"wait={o.wait.value}")
            if o.delete_before_create:
                extra.append("deleted before creation")
            if o.delete_on_failure:
                extra.append("deleted if it fails")
            if o.create_only:
                extra.append("created only if absent (crds/)")
            lines.append(f"   {j:>3}  {o.label}" + (f"  [{'; '.join(extra)}]" if extra else ""))
        if step.is_hook:
            if step.delete_after_success:
                names = ", ".join(o.label for o in step.delete_after_success)
                lines.append(f"        after the event succeeds, delete in reverse: {names}")
            stay = [o.label for o in step.objects if o not in step.delete_after_success]
            if stay:
                lines.append(f"        left in place after success: {', '.join(stay)}")
    if plan.warnings:
        lines.append("")
        lines.append("Review:")
        lines += [f"   warning: {w}" for w in plan.warnings]
    if plan.kept:
        lines.append("")
        lines.append("Left in place:")
        lines += [f"   {k.obj.label}: {k.reason}" for k in plan.kept]
    if plan.not_run:
        lines.append("")
        lines.append("Not run by this action:")
        lines += [f"   {n.phase}: run by `{n.run_by}`" for n in plan.not_run]
    return "\n".join(lines) + "\n"
