"""``berth install apply``: execute the lifecycle plan against a cluster through the official Python client.

The executor here is the Python twin of :mod:`berth.install.script`: it reads the same
:class:`~berth.install.plan.Plan` and does, step for step, what the generated bash does -- it never decides order,
events or delete timing itself. Per step phase:

    namespace   create the release namespace if it is missing
    crds        server-side apply each CRD (an older one on the cluster is upgraded, a newer one left alone with
                a warning), wait until Established
    <event>     hooks one at a time: delete first if ``before-hook-creation`` (and wait until gone), apply, wait
                (Job Complete / Pod Succeeded; Failed ends the wait at once, with pod logs); on failure the plan's
                failure deletions, then stop; after the whole event the plan's ``hook-succeeded`` deletions
    secrets     server-side apply
    apply       server-side apply, in the plan's order
    readiness   wait for Deployments available, StatefulSets/DaemonSets ready, Jobs complete
    delete      delete with background propagation (uninstall), not waited on (Helm 4)
    prune       upgrade and rollback: the same, except that an object whose live copy says
                ``helm.sh/resource-policy: keep`` stays (Helm's ``KubeClient.Update``)

Every step and every object's outcome goes into the run receipt (:mod:`berth.install.receipt`) as it happens;
``--resume`` continues from where the previous run stopped. Before anything is written, the permissions the plan
needs are checked with SelfSubjectAccessReviews, so a too-small role is reported as one line per missing
permission instead of a failure halfway through.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import functools
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

from berth.install import (
    kubeops,
    layout,
    lock,
    ownership,
    permissions,
    randomness,
    receipt,
    recorder,
    release,
    revisions,
    workdir,
)
from berth.install import plan as plan_mod
from berth.install.plan import Phase, Plan, PlanObject, Step, Wait
from berth.install.workdir import UPGRADE_DIR
from berth.kube import objects
from berth.kube.errors import BerthError, InputError
from berth.kube.hooks import (
    OUTPUT_LOG_POLICY_ANNOTATION,
    RESOURCE_POLICY_ANNOTATION,
    RESOURCE_POLICY_KEEP,
    HookEvent,
)

LIVE_COMMAND = {
    plan_mod.Action.INSTALL: "apply",
    plan_mod.Action.UPGRADE: "upgrade",
    plan_mod.Action.UNINSTALL: "uninstall",
    plan_mod.Action.ROLLBACK: "rollback",
    plan_mod.Action.TEST: "test",
}
"""The live command that runs each action."""


class RunFailed(BerthError):
    """A step failed or the API server went away; the message names the step, what did not run and how to resume."""


class MissingPermissions(BerthError):
    """The kube context's identity lacks permissions the plan needs (one line per permission)."""


@dataclass(frozen=True)
class ApplyOptions:
    work_dir: Path
    kubeconfig: str | None = None
    context: str | None = None
    timeout: int = plan_mod.DEFAULT_HOOK_TIMEOUT_SECONDS
    """Seconds per hook and per wait (CRDs wait at most the plan's own limit)."""
    resume: bool = False
    dry_run: bool = False
    force_conflicts: bool = False
    wait: bool = True
    """Add the plan's readiness step (like ``helm --wait``)."""
    preflight: bool = True
    wait_lock: bool = False
    """Wait for another command holding the work dir (:mod:`berth.install.lock`) instead of refusing (exit 2)."""
    take_ownership: bool = False
    """Adopt existing objects that are not this release's (Helm 4's ``--take-ownership``) instead of refusing."""


_P = ParamSpec("_P")
_R = TypeVar("_R")


def locked(fn: Callable[Concatenate[ApplyOptions, _P], _R]) -> Callable[Concatenate[ApplyOptions, _P], _R]:
    """Run a live command holding its work dir's lock (one writer per work dir: :mod:`berth.install.lock`)."""

    def run(options: ApplyOptions, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        with lock.hold(options.work_dir, options.wait_lock):
            return fn(options, *args, **kwargs)

    functools.update_wrapper(run, fn)
    return run


def live_command(action: plan_mod.Action, work_dir: Path | str) -> str:
    verb = LIVE_COMMAND.get(action)
    return (
        f"berth install {verb} --work-dir {work_dir}"
        if verb
        else plan_mod.runner_command(action, str(work_dir))
    )


# ---- progress ------------------------------------------------------------------------------------------------


class Reporter:
    """Live progress: one line per step and per object outcome. On a terminal, a rich progress bar under the
    lines shows the running step (objects done of total, elapsed) and what is being waited on.

    Subclass and override :meth:`event` to observe a run (tests use it to stop the API server mid-apply)."""

    def __init__(self, quiet: bool = False, stream: Any = None) -> None:
        from rich.console import Console

        self.quiet = quiet
        self.console = Console(file=stream or sys.stdout, markup=False, highlight=False, soft_wrap=True)
        self._progress: Any = None
        self._task: Any = None
        self._label = ""

    @contextlib.contextmanager
    def live(self) -> Iterator[None]:
        """Show the progress bar while the body runs (terminals only)."""
        if self.quiet or not self.console.is_terminal:
            yield
            return
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
        )

        columns = (SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn())  # fmt: skip
        with Progress(*columns, console=self.console, transient=True) as progress:
            self._progress = progress
            try:
                yield
            finally:
                self._progress = None

    def step(self, index: int, total: int, step: Step, note: str = "") -> None:
        self.print(f"[{index}/{total}] {step.phase}: {step.description}{note}")
        if self._progress is not None:
            if self._task is not None:
                self._progress.remove_task(self._task)
            self._label = f"step {index}/{total} {step.phase}"
            self._task = self._progress.add_task(self._label, total=max(1, len(step.objects)))

    def object(self, text: str) -> None:
        self.print(f"      {text}")
        if self._progress is not None and self._task is not None:
            task = self._progress.tasks[-1]
            self._progress.update(self._task, completed=min(task.completed + 1, task.total or 1))

    def warn(self, text: str) -> None:
        self.print(f"warning: {text}")

    def print(self, text: str) -> None:
        if self.quiet:
            return
        if text.count(":") < 2 and text.isprintable() and not self.console.is_terminal:
            # Exactly what rich writes for such a line off a terminal (no ``:emoji:`` code, control character or
            # tab to render), without its ~80 us of rendering: an upgrade prints over a hundred lines.
            self.console.file.write(text + "\n")
            self.console.file.flush()
            return
        self.console.print(text)

    @contextlib.contextmanager
    def waiting(self, text: str) -> Iterator[None]:
        if self._progress is None or self._task is None:
            yield
            return
        self._progress.update(self._task, description=f"{self._label}: {text}")
        try:
            yield
        finally:
            self._progress.update(self._task, description=self._label)

    def event(self, name: str, **data: Any) -> None:
        """Called after each recorded outcome (``applied``, ``succeeded``, ``deleted``...)."""


# ---- CRD versions --------------------------------------------------------------------------------------------

_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_key(name: str) -> tuple[int, int, int, str]:
    """Kubernetes version priority (as CRD versions sort): GA above beta above alpha, then major, then minor
    (``v2`` > ``v1`` > ``v2beta1`` > ``v1beta2`` > ``v1alpha1``); names that are not ``vN[alpha|betaM]`` lowest."""
    m = _VERSION.match(name)
    if not m:
        return (0, 0, 0, name)
    stability = {"alpha": 1, "beta": 2}.get(m.group(2) or "", 3)
    return (stability, int(m.group(1)), int(m.group(3) or 0), "")


def newest_version(crd: dict[str, Any]) -> str:
    names = [str(v.get("name")) for v in (crd.get("spec") or {}).get("versions") or [] if isinstance(v, dict)]
    return max(names, key=version_key) if names else ""


def crd_decision(desired: dict[str, Any], live: dict[str, Any] | None) -> tuple[str, str]:
    """``create``, ``upgrade`` (the cluster's newest version is older), ``update`` (same newest version) or
    ``newer-on-cluster`` (leave it alone), with a note."""
    if live is None:
        return "create", ""
    mine, theirs = newest_version(desired), newest_version(live)
    if theirs and mine and version_key(theirs) > version_key(mine):
        return "newer-on-cluster", (
            f"CRD {objects.name(desired)} on the cluster serves {theirs}, newer than this package's {mine}: "
            "left as it is"
        )
    if theirs and mine and version_key(theirs) < version_key(mine):
        return "upgrade", f"CRD {objects.name(desired)}: upgrading the cluster's {theirs} to {mine}"
    return "update", ""


# ---- the executor --------------------------------------------------------------------------------------------


@dataclass
class Executor:
    """Runs ``steps`` (a plan's steps, plus any the caller adds: --delete-crds) against ``kube``."""

    kube: kubeops.KubeOps
    plan: Plan
    steps: tuple[Step, ...]
    out_dir: Path
    rec: receipt.RunReceipt
    reporter: Reporter
    options: ApplyOptions
    state: receipt.ResumeState | None = None
    before_writes: Callable[[], None] | None = None
    """Called once, after the namespace step and before any other (the Helm record is created there, as Helm
    creates it once the namespace exists and before the first hook)."""
    warnings: list[str] = field(default_factory=list)
    _docs: dict[str, dict[str, Any]] = field(default_factory=dict)
    _random: dict[str, dict[str, randomness.RandomFields]] = field(default_factory=dict)
    _applied: dict[tuple[str, str, str], dict[str, Any]] = field(default_factory=dict)
    """(kind, namespace, name) -> the object as this run applied it: what the readiness step's wait replays the
    watch history from when a Job is gone (``ttlSecondsAfterFinished: 0``)."""

    # -- helpers --

    def namespace_of(self, o: PlanObject, res: kubeops.Resource) -> str:
        return (o.namespace or self.plan.namespace) if res.namespaced else ""

    def body(self, o: PlanObject) -> dict[str, Any]:
        if o.file not in self._docs:
            self._docs[o.file] = layout.read_object(self.out_dir / o.file)
        return copy.deepcopy(self._docs[o.file])

    def prepared(self, o: PlanObject, res: kubeops.Resource) -> dict[str, Any]:
        obj = self.body(o)
        if res.namespaced and not objects.namespace(obj):
            objects.meta(obj)["namespace"] = self.plan.namespace
        return obj

    def owned(self, o: PlanObject, res: kubeops.Resource) -> dict[str, Any]:
        """A release object as applied: with Helm's ownership metadata (hooks never get it), and the live value of
        each field the chart renders at random when its template keeps it through ``lookup``."""
        obj = ownership.stamp(self.prepared(o, res), self.plan.release, self.plan.namespace)
        random = self.random_fields(o)
        if random is not None and random.keep_live and not self.options.dry_run:
            live = self.kube.get(res, o.name, self.namespace_of(o, res))
            if live is not None:
                obj = randomness.keep_live(obj, live, random.paths)
        return obj

    def random_fields(self, o: PlanObject) -> randomness.RandomFields | None:
        """The random fields recorded for ``o`` with the render its file belongs to (``W/out`` or a revision)."""
        prefix = o.file.split("manifests/")[0].split("secrets/")[0].removesuffix(f"{UPGRADE_DIR}/")
        if prefix not in self._random:
            self._random[prefix] = randomness.read(self.out_dir / prefix / "spec")
        return self._random[prefix].get(f"{o.kind}|{o.namespace}|{o.name}")

    def record(
        self, index: int, j: int, o: PlanObject, action: str, ns: str = "", defer: bool = False, **extra: Any
    ) -> None:
        key = receipt.object_key(j, o)
        self.rec.record(index, o, key, action, ns, defer, **extra)
        self.reporter.event(action, step=index, key=key, obj=o)

    def label(self, o: PlanObject, ns: str) -> str:
        return f"{o.kind} {ns}/{o.name}" if ns else f"{o.kind} {o.name}"

    def show_event(self, line: str) -> None:
        """A Warning event about what is being waited on, shown as it arrives (:mod:`berth.install.diagnose`)."""
        self.reporter.print(f"      ! {line}")

    def timeout(self, step: Step) -> float:
        return float(min(step.timeout_seconds, self.options.timeout))

    # -- run --

    def run(self) -> int:
        """Run every step not already done; returns how many ran. Raises :class:`RunFailed`."""
        total = len(self.steps)
        ran = 0
        for i, step in enumerate(self.steps, 1):
            if self.before_writes is not None and step.phase != Phase.NAMESPACE.value:
                self.before_writes()
                self.before_writes = None
            if self.state is not None and i in self.state.done_steps:
                self.rec.copy_step(i, self.state.done_steps[i], self.state.run)
                self.reporter.step(i, total, step, f"  (done by run {self.state.run})")
                continue
            self.reporter.step(i, total, step)
            self.rec.start_step(i)
            try:
                self.run_step(i, step)
            except KeyboardInterrupt:
                self.rec.finish_step(i, "interrupted", "interrupted by the user")
                self.rec.finish(
                    receipt.Result.INTERRUPTED, "interrupted by the user", list(range(i + 1, total + 1))
                )
                raise
            except BerthError as exc:
                interrupted = isinstance(exc, kubeops.Unreachable)
                self.rec.finish_step(i, "interrupted" if interrupted else "failed", str(exc))
                rest = list(range(i + 1, total + 1))
                result = receipt.Result.INTERRUPTED if interrupted else receipt.Result.FAILED
                self.rec.finish(result, str(exc), rest)
                raise RunFailed(self.failure_text(i, step, exc, rest)) from exc
            self.rec.finish_step(i, "done", sync=step.is_hook)
            ran += 1
        if self.before_writes is not None:
            self.before_writes()
            self.before_writes = None
        self.rec.finish(receipt.Result.DRY_RUN if self.options.dry_run else receipt.Result.SUCCEEDED)
        return ran

    def failure_text(self, i: int, step: Step, exc: BerthError, rest: list[int]) -> str:
        total = len(self.steps)
        lines = [f"step {i}/{total} ({step.phase}) stopped: {exc}"]
        if rest:
            lines.append("Not run: " + "; ".join(f"step {k} ({self.steps[k - 1].phase})" for k in rest))
        lines.append(f"Receipt: {self.rec.path}")
        cmd = live_command(self.plan.action, self.options.work_dir)
        lines.append(f"Fix the cause, then continue from step {i} with: {cmd} --resume")
        return "\n".join(lines)

    def run_step(self, i: int, step: Step) -> None:
        phase = step.phase
        if phase == Phase.NAMESPACE.value:
            self.do_namespace(i, step)
        elif phase == Phase.CRDS.value:
            self.do_crds(i, step)
        elif phase in (Phase.APPLY.value, Phase.SECRETS.value):
            self.do_apply(i, step)
        elif phase == Phase.READINESS.value:
            self.do_readiness(i, step)
        elif phase in (Phase.DELETE.value, Phase.PRUNE.value):
            self.do_delete(i, step, prune=phase == Phase.PRUNE.value)
        elif step.is_hook:
            self.do_hooks(i, step)
        else:
            raise BerthError(f"unknown plan phase {phase!r}; this berth cannot run it")

    def do_namespace(self, i: int, step: Step) -> None:
        res = self.kube.resource("v1", "Namespace")
        for j, o in enumerate(step.objects):
            if self.kube.get(res, o.name) is not None:
                self.record(i, j, o, "exists")
                self.reporter.object(f"= Namespace {o.name} exists")
            elif self.options.dry_run:
                self.record(i, j, o, "would-create")
                self.reporter.object(f"+ Namespace {o.name} would be created")
            else:
                live = self.kube.create(
                    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": o.name}}, res
                )
                self.record(i, j, o, "created", uid=(live.get("metadata") or {}).get("uid"))
                self.reporter.object(f"+ Namespace {o.name} created")

    def do_crds(self, i: int, step: Step) -> None:
        done = self.state.applied.get(i, set()) if self.state else set()
        for j, o in enumerate(step.objects):
            res = self.kube.resource(o.api_version, o.kind)
            desired = self.prepared(o, res) if o.create_only else self.owned(o, res)
            key = receipt.object_key(j, o)
            if key not in done:
                live_crd = self.kube.get(res, o.name)
                decision, note = crd_decision(desired, live_crd)
                if decision == "update" and live_crd is not None and o.create_only:
                    # A crds/ CRD already there at the same version: Helm leaves it to its current owner.
                    self.record(i, j, o, "exists", detail="crds/ CRD already present at the same version")
                    self.reporter.object(f"= CRD {o.name} exists (crds/: left to its current owner)")
                elif decision == "newer-on-cluster":
                    self.warnings.append(note)
                    self.reporter.warn(note)
                    self.record(i, j, o, "kept-newer", detail=note)
                else:
                    if note:
                        self.reporter.object(note)
                    # Upgrading an older CRD is deliberate: take ownership of its fields (as KAI's crd-upgrader
                    # Job does with --force-conflicts); otherwise conflicts are reported unless --force-conflicts.
                    force = self.options.force_conflicts or decision == "upgrade"
                    created, live = self.kube.apply(desired, res, force, self.options.dry_run)
                    if self.options.dry_run:
                        self.record(i, j, o, "would-apply", detail=decision)
                        self.reporter.object(f"~ CRD {o.name} ({decision}, validated by the server)")
                        continue
                    uid = (live.get("metadata") or {}).get("uid")
                    self.record(i, j, o, "created" if created else "applied", uid=uid, detail=decision)
                    self.reporter.object(f"{'+' if created else '~'} CRD {o.name} ({decision})")
            if self.options.dry_run:
                continue
            with self.reporter.waiting(f"waiting for CRD {o.name} to be Established"):
                try:
                    self.kube.wait_ready(
                        res, o.name, "", Wait.ESTABLISHED.value, self.timeout(step), on_event=self.show_event
                    )
                except kubeops.WaitTimeout as exc:
                    raise kubeops.WaitTimeout(
                        f"CRD {o.name} was not Established within {self.timeout(step):g}s "
                        f"({str(exc).split(': ', 1)[-1]}); check `kubectl get crd {o.name} -o yaml` status.conditions"
                    ) from exc
            self.record(i, j, o, "established")
        # Custom resources of the new CRDs appear in discovery now.
        self.kube._gv.clear()

    def do_apply(self, i: int, step: Step) -> None:
        done = self.state.applied.get(i, set()) if self.state else set()
        for j, o in enumerate(step.objects):
            key = receipt.object_key(j, o)
            if self.options.dry_run:
                self.dry_apply(i, j, o)
                continue
            res = self.kube.resource(o.api_version, o.kind)
            ns = self.namespace_of(o, res)
            if key in done:
                earlier = (self.state.applied_objects if self.state else {}).get((o.kind, ns, o.name)) or {}
                meta = earlier.get("metadata") or {}
                self.record(
                    i, j, o, "skipped", ns, True, detail=f"applied by run {self.state.run if self.state else ''}",
                    uid=meta.get("uid"), resourceVersion=meta.get("resourceVersion"),
                )  # fmt: skip
                self.reporter.object(f"= {self.label(o, ns)} (applied by the earlier run)")
                continue
            created, live = self.kube.apply(self.owned(o, res), res, self.options.force_conflicts)
            self._applied[(o.kind, ns, o.name)] = live
            meta = live.get("metadata") or {}
            self.record(
                i, j, o, "created" if created else "applied", ns, True,
                uid=meta.get("uid"), resourceVersion=meta.get("resourceVersion"),
            )  # fmt: skip
            self.reporter.object(f"{'+' if created else '~'} {self.label(o, ns)}")

    def dry_apply(self, i: int, j: int, o: PlanObject) -> None:
        """Server-side dry run of one apply. A kind or namespace that an earlier step of this plan creates
        cannot be checked before that step really ran: recorded as unverified, not as a failure."""
        res = self.kube.try_resource(o.api_version, o.kind)
        if res is None:
            self.record(
                i, j, o, "would-apply", detail=f"not verified: {o.kind} is served once its CRD exists"
            )
            self.reporter.object(f"? {o.label} (its CRD is not on the cluster yet: not verified)")
            return
        ns = self.namespace_of(o, res)
        if ns and self.kube.get(self.kube.resource("v1", "Namespace"), ns) is None:
            self.record(i, j, o, "would-apply", ns, detail=f"not verified: namespace {ns} does not exist yet")
            self.reporter.object(
                f"? {self.label(o, ns)} (namespace {ns} is created by the plan: not verified)"
            )
            return
        self.kube.apply(self.owned(o, res), res, self.options.force_conflicts, dry_run=True)
        self.record(i, j, o, "would-apply", ns, detail="validated by the server (dryRun=All)")
        self.reporter.object(f"~ {self.label(o, ns)} (validated by the server, not stored)")

    def do_readiness(self, i: int, step: Step) -> None:
        for j, o in enumerate(step.objects):
            res = self.kube.resource(o.api_version, o.kind)
            ns = self.namespace_of(o, res)
            if self.options.dry_run:
                self.record(i, j, o, "would-wait", ns)
                continue
            # What the watch history of a Job gone meanwhile (ttlSecondsAfterFinished: 0) is replayed from: the
            # object as this run applied it, or on --resume past the apply step as the receipt recorded it.
            since = self._applied.get((o.kind, ns, o.name))
            if since is None and self.state is not None:
                since = self.state.applied_objects.get((o.kind, ns, o.name))
            with self.reporter.waiting(f"waiting for {self.label(o, ns)} ({(o.wait or Wait.NONE).value})"):
                r = self.kube.wait_ready(
                    res, o.name, ns, (o.wait or Wait.ROLLOUT).value, self.timeout(step), since,
                    self.show_event,
                )  # fmt: skip
            self.record(i, j, o, "ready", ns, detail=r.detail)
            self.reporter.object(f"✓ {self.label(o, ns)} ready ({r.detail})")

    def delete_one(self, i: int, j: int, o: PlanObject, timeout: float, wait: bool, why: str) -> None:
        res = self.kube.try_resource(o.api_version, o.kind)
        if res is None:
            self.record(i, j, o, "absent", detail=f"{why}; the cluster no longer serves {o.kind}")
            return
        ns = self.namespace_of(o, res)
        if self.options.dry_run:
            self.record(i, j, o, "would-delete", ns, detail=why)
            self.reporter.object(f"- {self.label(o, ns)} would be deleted ({why})")
            return
        gone = self.kube.delete(res, o.name, ns)
        if gone is None:
            self.record(i, j, o, "absent", ns, detail=why)
            return
        if wait:
            self.kube.wait_gone(res, o.name, ns, timeout)
        self.record(i, j, o, "deleted", ns, detail=why)
        self.reporter.object(f"- {self.label(o, ns)} deleted ({why})")

    def do_hooks(self, i: int, step: Step) -> None:
        timeout = self.timeout(step)
        index_of = {id(o): j for j, o in enumerate(step.objects)}
        earlier = self.state.succeeded_hooks.get(i, {}) if self.state else {}
        in_flight = self.state.in_flight_hooks.get(i, {}) if self.state else {}
        for j, o in enumerate(step.objects):
            key = receipt.object_key(j, o)
            if self.options.dry_run and self.kube.try_resource(o.api_version, o.kind) is None:
                # a custom resource hook whose CRD an earlier step creates: listed, as the apply step does
                self.record(
                    i, j, o, "would-create", detail=f"not verified: {o.kind} is served once its CRD exists"
                )
                self.reporter.object(
                    f"? {step.phase} hook {o.label} would run (its CRD is not on the cluster yet: not verified)"
                )
                continue
            res = self.kube.resource(o.api_version, o.kind)
            ns = self.namespace_of(o, res)
            label = self.label(o, ns)
            if self.options.dry_run:
                if o.delete_before_create:
                    self.record(i, j, o, "would-delete", ns, detail="before-hook-creation")
                self.record(i, j, o, "would-create", ns)
                self.reporter.object(
                    f"+ {step.phase} hook {label} would run (wait: {(o.wait or Wait.NONE).value})"
                )
                continue
            if key in earlier:
                live = self.kube.get(res, o.name, ns)
                if live is not None and (live.get("metadata") or {}).get("uid") == earlier[key]:
                    self.record(
                        i, j, o, "succeeded", ns, uid=earlier[key], detail="in the earlier run; still present"
                    )
                    self.reporter.object(f"= {label} succeeded in the earlier run")
                    continue
            live = self.kube.get(res, o.name, ns) if key in in_flight else None
            if live is not None and (live.get("metadata") or {}).get("uid") == in_flight[key]:
                # Created by the interrupted run and not judged yet: wait on it, do not run it a second time.
                uid = in_flight[key]
                self.record(i, j, o, "created", ns, uid=uid, detail="by the earlier run; waited on again")
                self.reporter.object(f"= {step.phase} hook {label} (created by the earlier run)")
            else:
                if o.delete_before_create:
                    self.delete_one(i, j, o, timeout, True, "before-hook-creation")
                created, live = self.kube.apply(self.prepared(o, res), res, self.options.force_conflicts)
                uid = str((live.get("metadata") or {}).get("uid") or "")
                self.record(i, j, o, "created" if created else "applied", ns, uid=uid)
                self.reporter.object(f"{'+' if created else '~'} {step.phase} hook {label}")
            if o.wait in (Wait.JOB_COMPLETE, Wait.POD_SUCCEEDED):
                try:
                    with self.reporter.waiting(f"waiting for {label} ({o.wait.value}, timeout {timeout:g}s)"):
                        self.kube.wait_ready(res, o.name, ns, o.wait.value, timeout, live, self.show_event)
                except (kubeops.WaitFailed, kubeops.WaitTimeout) as exc:
                    self.record(
                        i, j, o, "failed", ns, uid=uid, detail=str(exc).split("\n", 1)[0], logs=exc.logs
                    )
                    for d in step.delete_after_failure(j):
                        why = "hook-failed" if d is o else "hook-succeeded (the event failed)"
                        self.delete_one(i, index_of[id(d)], d, timeout, True, why)
                    hint = ""
                    if not o.delete_before_create:
                        hint = (
                            f"\nIt has no before-hook-creation policy, so a re-run reuses it: delete it first with "
                            f"`kubectl delete {o.kind.lower()} {o.name}{' -n ' + ns if ns else ''}`"
                        )
                    raise kubeops.WaitFailed(
                        f"{step.phase} hook {label} failed; Helm stops the event here and skips its remaining "
                        f"hooks: {exc}{hint}"
                    ) from exc
            logs = ""
            if o.wait in (Wait.JOB_COMPLETE, Wait.POD_SUCCEEDED) and self.log_policy(o, "hook-succeeded"):
                logs = self.kube.logs_for(o.kind, o.name, ns)
                self.reporter.print(
                    f"--- logs of {label} (hook-output-log-policy: hook-succeeded) ---\n{logs}"
                )
            self.record(i, j, o, "succeeded", ns, uid=uid, logs=logs)
        for d in step.delete_after_success:
            if not self.options.dry_run:
                self.delete_one(i, index_of[id(d)], d, timeout, True, "hook-succeeded")

    def log_policy(self, o: PlanObject, policy: str) -> bool:
        """Whether the hook's ``helm.sh/hook-output-log-policy`` lists ``policy`` (Helm prints Job and Pod hook
        logs per it; logs of a failed hook are always shown and kept here)."""
        raw = str(objects.annotations(self.body(o)).get(OUTPUT_LOG_POLICY_ANNOTATION) or "")
        return policy in {p.strip().lower() for p in raw.split(",")}

    def do_delete(self, i: int, step: Step, prune: bool) -> None:
        for j, o in enumerate(step.objects):
            if prune:
                res = self.kube.try_resource(o.api_version, o.kind)
                live = self.kube.get(res, o.name, self.namespace_of(o, res)) if res else None
                if (
                    live is not None
                    and objects.annotations(live).get(RESOURCE_POLICY_ANNOTATION) == RESOURCE_POLICY_KEEP
                ):
                    self.record(
                        i, j, o, "kept", self.namespace_of(o, res) if res else "", detail="live copy has keep"
                    )
                    self.reporter.object(
                        f"= {o.label} kept (its live copy has helm.sh/resource-policy: keep)"
                    )
                    continue
            self.delete_one(
                i, j, o, self.timeout(step), False, "pruned: no longer rendered" if prune else step.phase
            )


# ---- the command ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    receipt_path: Path
    ran: int
    total: int
    lines: tuple[str, ...]


def connect_checked(options: ApplyOptions, reporter: Reporter) -> kubeops.KubeOps:
    """Connect, print the context, refuse a context the work dir was not applied to (unless --context)."""
    kube = kubeops.connect(options.kubeconfig, options.context)
    reporter.print(kube.connection.target_line())
    receipt.check_target(options.work_dir, kube.context, kube.server, options.context is not None)
    return kube


def execute(
    kube: kubeops.KubeOps,
    plan: Plan,
    options: ApplyOptions,
    reporter: Reporter,
    steps: tuple[Step, ...] | None = None,
    extra: dict[str, Any] | None = None,
    render: tuple[Path, str] | None = None,
    record: recorder.Recorder | None = None,
    ownership_skip: frozenset[str] | None = None,
) -> Outcome:
    """Run ``plan`` (or ``steps`` built from it) with a receipt, resume state and permission check. ``render`` is
    the render a deploying run applies and its variant (``install``/``upgrade``): the receipt records its digest,
    so a later ``apply`` can tell whether the work dir still holds what the cluster runs (:func:`installed`).
    ``record`` writes the Helm release record around the run (:mod:`berth.install.recorder`); with
    ``ownership_skip`` (the replaced revision's objects, ``Kind|ns|name``) the release objects are first checked
    for Helm's ownership metadata (:mod:`berth.install.ownership`), before anything is written."""
    work = options.work_dir
    steps = plan.steps if steps is None else steps
    plan_id = receipt.fingerprint(plan, {"steps": [s.to_json() for s in steps], "extra": extra})
    state = receipt.resume_state(work, plan.action.value, plan_id) if options.resume else None
    if state is not None:
        reporter.print(f"Resuming run {state.run}")
    if options.preflight:
        missing = permissions.check_permissions(kube, steps, plan.namespace, record is not None)
        if missing:
            raise MissingPermissions(
                f"the identity of context {kube.context} lacks {len(missing)} permission(s) the "
                f"{plan.action.value} plan needs:\n"
                + "\n".join(f"  {m}" for m in missing)
                + "\nask a cluster admin to grant them, or use another --context"
            )
    adopted: list[str] = []
    if ownership_skip is not None:
        found = ownership.existing(kube, plan, steps, ownership_skip)
        adopted = ownership.refuse_or_adopt(found, plan.action.value, options.take_ownership)
    for w in plan.warnings:
        reporter.warn(w)
    for line in adopted:
        reporter.print(line)
    if not options.dry_run:
        receipt.record_target(work, kube.context, kube.server)
    rec = receipt.RunReceipt(
        work, plan, steps, kube.context, kube.server, plan_id, options.dry_run,
        state.run if state else None, extra,
    )  # fmt: skip
    if render is not None:
        rec.spec[receipt.DIGEST_FIELD] = layout.render_digest(render[0])
        rec.spec[receipt.VARIANT_FIELD] = render[1]
        rec.save()
    if options.dry_run:
        record = None  # Helm's dry runs store nothing either
    begin = record.begin if record is not None else None
    executor = Executor(kube, plan, steps, work / "out", rec, reporter, options, state, begin)
    try:
        with reporter.live():
            ran = executor.run()
    except (RunFailed, KeyboardInterrupt) as exc:
        if record is not None:
            record.failed(rec, str(exc) or "interrupted by the user")
        raise
    if record is not None:
        record.succeeded(rec)
        executor.warnings += record.warnings
    lines = [
        f"{'Dry run' if options.dry_run else 'Done'}: the {plan.action.value} plan of release {plan.release} "
        f"({ran} of {len(steps)} step(s) ran"
        + (f", {len(steps) - ran} done by run {state.run}" if state else "")
        + f", {sum(1 for s in steps if s.is_hook)} of them hook steps)",
        f"Receipt: {rec.path}",
    ]
    lines += [f"warning: {w}" for w in executor.warnings]
    lines += adopted
    lines += record.notes if record is not None else []
    lines += [f"Left in place: {k.obj.label} ({k.reason})" for k in plan.kept]
    # One line per command that runs the hook steps this one does not (pre- and post- of an event together), when
    # that command is a valid next step for the release this run leaves behind.
    others: dict[str, list[str]] = {}
    for n in plan.not_run:
        action = plan_mod.EVENT_ACTION.get(HookEvent(n.phase), plan.action)
        if valid_next(plan.action, action, bool(revisions.numbers(work / "out"))):
            others.setdefault(live_command(action, work), []).append(n.phase)
    for command, phases in others.items():
        if len(phases) == 1:
            lines.append(f"Not run by this command: the {phases[0]} step; run it with: {command}")
        else:
            named = ", ".join(phases[:-1]) + f" and {phases[-1]}"
            lines.append(f"Not run by this command: the {named} steps; run them with: {command}")
    return Outcome(rec.path, ran, len(steps), tuple(lines))


def valid_next(done: plan_mod.Action, other: plan_mod.Action, has_revision: bool) -> bool:
    """Whether ``other`` is a step that makes sense after ``done`` succeeded: after an uninstall only an install;
    otherwise the release is installed, so never ``apply`` for its install hooks (it re-applies without them), and a
    rollback only when the work dir has a revision to go back to."""
    if done == plan_mod.Action.UNINSTALL:
        return other == plan_mod.Action.INSTALL
    if other == plan_mod.Action.INSTALL:
        return False
    return other != plan_mod.Action.ROLLBACK or has_revision


def load_plan(options: ApplyOptions, action: plan_mod.Action) -> tuple[workdir.Workdir, Plan]:
    wd = workdir.load_workdir(options.work_dir)
    p = workdir.build_plan(wd, action, str(options.work_dir), options.wait, options.timeout)
    return wd, p


@dataclass(frozen=True)
class Installed:
    """The release as the work dir records it installed on the current cluster (Helm's deployed revision)."""

    run: str
    """The receipt of the run it was last deployed by (install, upgrade, rollback, or a re-applying ``apply``)."""
    spec: dict[str, Any]
    same_render: bool
    """``W/out`` holds the render that run applied (its receipt's render digest)."""
    revision: revisions.Revision | None
    """Otherwise: the recorded revision holding that render (None: not among them, or a receipt without digest)."""
    present: bool
    """Some object that run recorded is on the cluster with the uid it recorded (False: a new cluster under the
    same context and server, or the release deleted by hand: nothing to re-apply onto)."""


def _recorded_objects_present(kube: kubeops.KubeOps, spec: dict[str, Any]) -> bool:
    """Whether any release object (not a hook) the run recorded with a uid is still on the cluster with that uid;
    True when it recorded none (nothing to check against). Stops at the first one found: usually the namespace."""
    checked = False
    for step in spec.get("steps") or []:
        if step.get("phase") not in (*receipt.INVENTORY_PHASES, Phase.NAMESPACE.value):
            continue
        for item in step.get("objects") or []:
            uid = item.get("uid")
            if not uid or item.get("action") not in ("created", "applied"):
                continue
            res = kube.try_resource(str(item.get("apiVersion") or "v1"), str(item.get("kind")))
            if res is None:
                continue
            checked = True
            live = kube.get(
                res, str(item.get("name")), str(item.get("namespace") or "") if res.namespaced else ""
            )
            if live is not None and (live.get("metadata") or {}).get("uid") == uid:
                return True
    return not checked


def installed(kube: kubeops.KubeOps, work: Path, release: str, namespace: str) -> Installed | None:
    """The release (name and namespace) installed on ``kube``'s cluster per the work dir's receipts
    (:func:`receipt.deployed`), with whether ``W/out`` still holds its render; None when it records none there."""
    found = receipt.deployed(work, kube.context, kube.server, release, namespace)
    if found is None:
        return None
    path, spec = found
    out = work / "out"
    digest = spec.get(receipt.DIGEST_FIELD)
    same = bool(digest) and digest == layout.render_digest(out)
    revision = None
    if digest and not same:
        for n in reversed(revisions.numbers(out)):
            if layout.render_digest(out / revisions.REVISIONS_DIR / str(n)) == digest:
                revision = revisions.load(out, n)
                break
    return Installed(path.stem, spec, same, revision, _recorded_objects_present(kube, spec))


def reapply_plan(wd: workdir.Workdir, options: ApplyOptions, variant: str) -> Plan:
    """``apply`` on an installed release: the objects as the release runs them, without any hook -- the install
    plan without its hook steps, or after an upgrade the upgrade plan's objects (its ``--is-upgrade`` render)
    without its hooks and prune. The hook steps left out are listed as not run, with the command that runs them."""
    action = (
        plan_mod.Action.UPGRADE
        if variant == "upgrade" and wd.upgrade is not None
        else plan_mod.Action.INSTALL
    )
    full = workdir.build_plan(wd, action, str(options.work_dir), options.wait, options.timeout)
    install_events = {
        plan_mod.PRE_EVENT[plan_mod.Action.INSTALL].value,
        plan_mod.POST_EVENT[plan_mod.Action.INSTALL].value,
    }
    dropped = tuple(
        plan_mod.NotRun(s.phase, plan_mod.runner_command(action, str(options.work_dir)))
        for s in full.steps
        if s.is_hook and s.phase not in install_events
    )
    return dataclasses.replace(
        full,
        action=plan_mod.Action.INSTALL,
        steps=tuple(s for s in full.steps if not s.is_hook and s.phase != Phase.PRUNE.value),
        not_run=tuple(n for n in (*dropped, *full.not_run) if n.phase not in install_events),
    )


def _changed_error(inst: Installed, release: str, context: str, work: Path) -> InputError:
    """Exit 2: the release is installed and ``W/out`` holds another render; say how to apply it (an upgrade)."""
    if inst.revision is not None:
        where = f"from the render recorded as {inst.revision.label}"
    elif inst.spec.get(receipt.DIGEST_FIELD):
        where = "from a render no longer among the recorded revisions"
    else:
        where = "from a render this berth cannot match (its run predates render digests)"
    upgrade_cmd = live_command(plan_mod.Action.UPGRADE, work)
    text = (
        f"release {release} is installed on context {context} (run {inst.run}) {where}, and {work / 'out'} now "
        f"holds another render (set up again since): apply would install it over the release and run the install "
        f"hooks a second time. Apply the change as an upgrade: {upgrade_cmd} (upgrades to the package as set up "
        "now: pre-upgrade hooks, apply, prune, post-upgrade hooks)"
    )
    newest = [
        (p, b["spec"]) for p, b in receipt.receipts(work)
        if not b["spec"].get("dryRun") and b["spec"].get("context") == context
    ]  # fmt: skip
    if (
        newest
        and newest[-1][1].get("action") in ("upgrade", "rollback")
        and (newest[-1][1].get("result") != receipt.Result.SUCCEEDED)
    ):
        action = plan_mod.Action(newest[-1][1]["action"])
        text += (
            f"; the last {action.value} (run {newest[-1][0].stem}) stopped before it finished: continue it with "
            f"{live_command(action, work)} --resume"
        )
    return InputError(text)


@locked
def run(options: ApplyOptions, reporter: Reporter | None = None) -> Outcome:
    """``berth install apply``: the install plan; on a release the work dir records installed here, its objects
    again without any hook (``helm install`` refuses a release name in use; install hooks never run twice)."""
    reporter = reporter or Reporter()
    wd, p = load_plan(options, plan_mod.Action.INSTALL)
    kube = connect_checked(options, reporter)
    try:
        work = options.work_dir
        inst = installed(kube, work, p.release, p.namespace)
        variant = "install"
        if inst is not None and not inst.present:
            reporter.print(
                f"The work dir records release {p.release} installed on context {kube.context} (run {inst.run}), "
                "but none of the objects that run recorded is on the cluster with its uid (a new cluster, or the "
                "release deleted by hand): installing it, hooks included"
            )
        elif inst is not None:
            if not inst.same_render:
                raise _changed_error(inst, p.release, kube.context, work)
            variant = receipt.variant(inst.spec)
            p = reapply_plan(wd, options, variant)
            doing = (
                "would re-apply its objects and run"
                if options.dry_run
                else "re-applying its objects and running"
            )
            reporter.print(
                f"Release {p.release} is installed on context {kube.context} (run {inst.run}) from the render "
                f"{work / 'out'} holds: {doing} no hooks; its install hooks ran at install time. Hooks run with an "
                f"upgrade ({live_command(plan_mod.Action.UPGRADE, work)}), tests with "
                f"{live_command(plan_mod.Action.TEST, work)}"
            )
        store = release.Store(kube, p.namespace, p.release)
        if inst is not None and inst.present:
            record = recorder.for_reapply(store, wd, variant, work)
            return execute(kube, p, options, reporter, render=(work / "out", variant), record=record)
        record = recorder.for_install(store, wd, work, kube.context)
        return execute(
            kube,
            p,
            options,
            reporter,
            render=(work / "out", variant),
            record=record,
            ownership_skip=frozenset(),
        )
    finally:
        kube.close()
