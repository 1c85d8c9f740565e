"""The lifecycle plan translated to Argo CD resource hooks, so Argo CD runs a package in Helm's exact order.

Argo CD reads Helm hook annotations itself, but not as Helm runs them. Inside a sync phase it orders by sync wave,
then by *its* kind order (:data:`KIND_ORDER`), then by name (gitops-engine ``pkg/sync/sync_tasks.go``), where Helm
orders hooks by weight, then name, then kind; it runs the tasks of one wave together (the objects of one kind
concurrently, kinds in order) and waits until they are done before the next wave. So berth gives **every hook a
wave of its own** -- Helm runs hooks one at a time -- numbered by one order that every event's plan step is a
part of, and splits the release objects of the Sync phase into the fewest waves that make Argo CD's kind-by-kind
creation equal Helm's install order (Helm, too, creates the objects of one kind concurrently).

What else changes (docs/install.md, "GitOps export", has the full table):

* phases: ``pre-install``/``pre-upgrade`` -> ``PreSync``, ``post-install``/``post-upgrade`` -> ``PostSync``,
  ``pre-delete`` -> ``PreDelete`` (Argo CD 3.3+), ``post-delete`` -> ``PostDelete`` (2.10+). Argo CD creates all
  hooks of a delete phase at once (argo-cd ``controller/hook.go``), so their order is not reproduced.
  ``pre-rollback``, ``post-rollback`` and ``test`` have no Argo CD phase: listed, not exported.
* delete policies map one to one and are always written, Helm's default included. A policy that names no action
  (Helm: never deleted) cannot be said to Argo CD, which then applies its default ``BeforeHookCreation``. A hook in
  both PreSync and PostSync with ``HookSucceeded`` also gets ``BeforeHookCreation``: Argo CD deletes succeeded
  hooks only at the end of the whole sync, so without it the PostSync run would find the PreSync one done.
* CRD hooks become plain resources of the first Sync wave: Argo CD would delete a hook CRD before every run (and
  every custom resource with it); Helm never deletes CRD hooks.
* hooks Helm runs only on install run on every sync, with a warning, or -- ``RunOnce.ONCE``, the idempotency
  guard -- become plain resources of their own Sync waves (before or after the release objects): Argo CD applies
  them on the first sync and, unchanged, never again.
* no ``helm.sh/hook*`` annotation is left; custom resources whose CRD the export carries get
  ``SkipDryRunOnMissingResource=true``; ``helm.sh/resource-policy: keep`` objects get ``Prune=false`` (Helm's
  upgrade never prunes them; Argo CD's cascade delete already honours ``keep``).
"""

from __future__ import annotations

import copy
import dataclasses
import heapq
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import PurePosixPath
from typing import Any

from berth.install import plan, split
from berth.install.export import Plans, ref_of
from berth.kube import hooks, kinds, objects
from berth.kube.hooks import DeletePolicy, HookEvent

HOOK = "argocd.argoproj.io/hook"
HOOK_DELETE_POLICY = "argocd.argoproj.io/hook-delete-policy"
SYNC_WAVE = "argocd.argoproj.io/sync-wave"
SYNC_OPTIONS = "argocd.argoproj.io/sync-options"
SKIP_DRY_RUN = "SkipDryRunOnMissingResource=true"
NO_PRUNE = "Prune=false"
HELM_HOOK_ANNOTATIONS = (
    hooks.HOOK_ANNOTATION,
    hooks.WEIGHT_ANNOTATION,
    hooks.DELETE_POLICY_ANNOTATION,
    hooks.OUTPUT_LOG_POLICY_ANNOTATION,
)
CRD_GROUP = "apiextensions.k8s.io"


class Phase(StrEnum):
    """Argo CD's hook types that a Helm event maps to, plus ``Sync`` (every plain resource)."""

    PRE_SYNC = "PreSync"
    SYNC = "Sync"
    POST_SYNC = "PostSync"
    PRE_DELETE = "PreDelete"
    POST_DELETE = "PostDelete"


SYNC_PHASE_ORDER: dict[Phase, int] = {Phase.PRE_SYNC: -1, Phase.SYNC: 0, Phase.POST_SYNC: 1}
"""gitops-engine's ``syncPhaseOrder`` (its fourth phase, SyncFail, has no Helm counterpart)."""
DELETE_PHASES = (Phase.PRE_DELETE, Phase.POST_DELETE)


class Policy(StrEnum):
    HOOK_SUCCEEDED = "HookSucceeded"
    HOOK_FAILED = "HookFailed"
    BEFORE_HOOK_CREATION = "BeforeHookCreation"


POLICIES: dict[DeletePolicy, Policy] = {
    DeletePolicy.HOOK_SUCCEEDED: Policy.HOOK_SUCCEEDED,
    DeletePolicy.HOOK_FAILED: Policy.HOOK_FAILED,
    DeletePolicy.BEFORE_HOOK_CREATION: Policy.BEFORE_HOOK_CREATION,
}

EVENT_PHASE: dict[HookEvent, Phase] = {
    HookEvent.PRE_INSTALL: Phase.PRE_SYNC,
    HookEvent.PRE_UPGRADE: Phase.PRE_SYNC,
    HookEvent.POST_INSTALL: Phase.POST_SYNC,
    HookEvent.POST_UPGRADE: Phase.POST_SYNC,
    HookEvent.PRE_DELETE: Phase.PRE_DELETE,
    HookEvent.POST_DELETE: Phase.POST_DELETE,
}
"""Every Helm event Argo CD has a phase for; the rest (rollback, test) are not exported."""
SYNC_EVENTS = (HookEvent.PRE_INSTALL, HookEvent.PRE_UPGRADE, HookEvent.POST_INSTALL, HookEvent.POST_UPGRADE)
DELETE_EVENTS = (HookEvent.PRE_DELETE, HookEvent.POST_DELETE)
INSTALL_TWIN = {HookEvent.PRE_INSTALL: HookEvent.PRE_UPGRADE, HookEvent.POST_INSTALL: HookEvent.POST_UPGRADE}

KIND_ORDER = kinds.ARGOCD_ORDER
_KIND_RANK = {k: i - len(KIND_ORDER) for i, k in enumerate(KIND_ORDER)}


def kind_rank(kind: str) -> int:
    """The kind's place in :data:`KIND_ORDER` as gitops-engine computes it: negative for listed kinds, 0 for all
    others (the API group plays no part)."""
    return _KIND_RANK.get(kind, 0)


class RunOnce(StrEnum):
    """What the export does with hooks Helm runs only on install (``pre-install`` without ``pre-upgrade``, ...)."""

    EVERY_SYNC = "every-sync"
    """Keep them hooks: Argo CD runs them on every sync (its own semantics), with a warning naming each."""
    ONCE = "once"
    """The idempotency guard: plain resources in Sync waves of their own, applied on the first sync and never
    again while unchanged (nothing deletes them: the object is the record that it ran)."""


@dataclass(frozen=True)
class Item:
    """One exported object: what Argo CD does with it, and what Helm's plan does."""

    ref: objects.Ref
    file: str
    """Relative to ``DIR``: ``manifests/<slug>.yaml`` (``secrets/`` for Secrets)."""
    body: dict[str, Any]
    """The object as written: Helm hook annotations gone, Argo CD's set."""
    source: str
    events: tuple[HookEvent, ...]
    """The Helm events that run it (empty: a release object)."""
    helm: str
    """Where Helm's plan has it: its step (``crds``, ``apply``, ``secrets``) or its events and weight."""
    phases: tuple[Phase, ...]
    wave: int | None
    policies: tuple[Policy, ...] = ()
    notes: tuple[str, ...] = ()
    """Why Argo CD runs this object differently from Helm (empty: the same)."""

    @property
    def hook(self) -> bool:
        return Phase.SYNC not in self.phases

    @property
    def label(self) -> str:
        return _label(self.ref)


@dataclass(frozen=True)
class Unmapped:
    """A Helm event's run that Argo CD has no phase for."""

    event: str
    label: str
    exported: bool
    """Whether the object is exported anyway (for another of its events)."""


@dataclass(frozen=True)
class ArgoExport:
    release: str
    namespace: str
    run_once: RunOnce
    items: tuple[Item, ...]
    """Hooks of the sync phases, then the Sync resources, then the delete hooks."""
    wave_splits: tuple[str, ...] = ()
    """Why the Sync phase needs more than one wave (one line per extra wave)."""
    install_only: tuple[str, ...] = ()
    upgrade_only: tuple[str, ...] = ()
    unmapped: tuple[Unmapped, ...] = ()
    warnings: tuple[str, ...] = ()

    def item(self, ref: objects.Ref) -> Item | None:
        return next((i for i in self.items if i.ref == ref), None)

    def runs(self) -> list[tuple[Phase, Item]]:
        """Every (phase, object) in Argo CD's order: the sync phases by (phase, wave, kind order, name), then the
        delete phases in the plan's order (Argo CD starts those all at once)."""
        sync = [(p, i) for i in self.items for p in i.phases if p in SYNC_PHASE_ORDER]
        sync.sort(key=lambda r: argo_key(r[0], r[1].wave, r[1].ref.kind, r[1].ref.name))
        return sync + [(p, i) for p in DELETE_PHASES for i in self.items if p in i.phases]


def argo_key(phase: Phase, wave: int | None, kind: str, name: str) -> tuple[int, int, int, bytes]:
    """gitops-engine's ``syncTasks.Less``: phase, wave, kind order, name (Go compares strings byte-wise)."""
    return (SYNC_PHASE_ORDER[phase], wave or 0, kind_rank(kind), name.encode("utf-8"))


def helm_key(o: plan.PlanObject) -> tuple[int, bytes, tuple[int, str]]:
    """Helm's hook order (weight, name, kind): only to interleave hooks that no single plan step orders together."""
    return (o.weight or 0, o.name.encode("utf-8"), kinds.install_key(o.kind))


def merge_orders(
    sequences: Iterable[list[objects.Ref]], key: Callable[[objects.Ref], Any]
) -> tuple[list[objects.Ref], bool]:
    """One order in which every sequence keeps its own order (each plan step's), ties between refs no sequence
    orders broken by ``key``. Helm's events are sorted by one rule, so the sequences never disagree; if two did
    (an upgrade render ordering ties differently), the second value is False and the smallest key goes first."""
    first: dict[objects.Ref, int] = {}
    after: dict[objects.Ref, set[objects.Ref]] = {}
    indegree: dict[objects.Ref, int] = {}
    for seq in sequences:
        prev: objects.Ref | None = None
        for r in dict.fromkeys(seq):
            first.setdefault(r, len(first))
            after.setdefault(r, set())
            indegree.setdefault(r, 0)
            if prev is not None and r not in after[prev]:
                after[prev].add(r)
                indegree[r] += 1
            prev = r
    ready = [(key(r), first[r], r) for r in first if indegree[r] == 0]
    heapq.heapify(ready)
    out: list[objects.Ref] = []
    consistent = True
    while len(out) < len(first):
        if not ready:  # a cycle: the sequences disagree
            consistent = False
            rest = [r for r in first if indegree[r] > 0 and r not in out]
            stuck = min(rest, key=lambda r: (key(r), first[r]))
            indegree[stuck] = 0
            ready.append((key(stuck), first[stuck], stuck))
        _, _, r = heapq.heappop(ready)
        out.append(r)
        for nxt in after[r]:
            indegree[nxt] -= 1
            if indegree[nxt] == 0:
                heapq.heappush(ready, (key(nxt), first[nxt], nxt))
    return out, consistent


Reader = Callable[[str], tuple[dict[str, Any], str]]
"""A plan object's file (relative to ``W/out``) -> its object and ``# Source:`` line."""


@dataclass
class _Hook:
    first: plan.PlanObject
    events: list[HookEvent] = field(default_factory=list)


def translate(plans: Plans, read: Reader, run_once: RunOnce = RunOnce.EVERY_SYNC) -> ArgoExport:
    """The Argo CD form of the install, upgrade and uninstall plans (objects from the install render)."""
    return _Translator(plans, read, run_once).build()


class _Translator:
    def __init__(self, plans: Plans, read: Reader, run_once: RunOnce) -> None:
        self.plans = plans
        self.read = read
        self.run_once = run_once
        self.warnings: list[str] = []
        self.notes: dict[objects.Ref, list[str]] = {}
        self.hooks: dict[objects.Ref, _Hook] = {}
        self.bodies: dict[objects.Ref, tuple[dict[str, Any], str]] = {}

    def note(self, r: objects.Ref, text: str) -> None:
        self.notes.setdefault(r, []).append(text)

    def body(self, o: plan.PlanObject) -> tuple[dict[str, Any], str]:
        r = ref_of(o)
        if r not in self.bodies:
            self.bodies[r] = self.read(o.file)
        return self.bodies[r]

    # -- what the plans say ------------------------------------------------------------------------------------

    def steps(self) -> dict[HookEvent, plan.Step]:
        out = {}
        for event in (*SYNC_EVENTS, *DELETE_EVENTS):
            s = self.plans.hook_step(event)
            if s is not None:
                out[event] = s
        return out

    def collect(self, steps: dict[HookEvent, plan.Step]) -> None:
        for event, step in steps.items():
            seen: set[objects.Ref] = set()
            for o in step.objects:
                r = ref_of(o)
                h = self.hooks.setdefault(r, _Hook(o))
                if r in seen:
                    self.note(
                        r, f"Helm runs it twice in {event.value} (the event is listed twice); Argo CD once"
                    )
                    continue
                seen.add(r)
                h.events.append(event)

    def release_objects(self) -> tuple[list[plan.PlanObject], list[plan.PlanObject]]:
        """The install plan's CRDs, and its release objects in creation order (apply and secrets steps)."""
        crds: list[plan.PlanObject] = []
        ordinary: list[plan.PlanObject] = []
        for s in self.plans.install.steps:
            if s.phase == plan.Phase.CRDS.value:
                crds += s.objects
            elif s.phase in (plan.Phase.APPLY.value, plan.Phase.SECRETS.value):
                ordinary += s.objects
        return crds, ordinary

    # -- the translation ---------------------------------------------------------------------------------------

    def build(self) -> ArgoExport:
        steps = self.steps()
        self.collect(steps)
        unmapped = self.unmapped()
        crds, ordinary = self.release_objects()
        crd_hooks, once_pre, once_post, hook_refs = self.classify()
        install_only, upgrade_only = self.run_once_lists()

        # One order over every sync hook that each event's step is a part of; each hook gets its own wave.
        sequences = [
            [ref_of(o) for o in steps[e].objects if ref_of(o) in hook_refs] for e in SYNC_EVENTS if e in steps
        ]
        order, consistent = merge_orders(sequences, lambda r: helm_key(self.hooks[r].first))
        if not consistent:
            self.warnings.append(
                "the install and upgrade renders order tied hooks differently; the export keeps the install "
                "render's order where they disagree"
            )
        items = [self.hook_item(r, wave) for wave, r in enumerate(order, 1)]
        sync_items, splits = self.sync_items(crds, crd_hooks, once_pre, ordinary, once_post)
        items += sync_items
        in_order = set(order)
        items += [self.hook_item(r, None) for r in hook_refs if r not in in_order]  # delete hooks: no waves
        for event in DELETE_EVENTS:
            s = steps.get(event)
            if s is not None and len({ref_of(o) for o in s.objects}) > 1:
                for o in s.objects:
                    self.note(
                        ref_of(o),
                        f"Argo CD creates the {len(s.objects)} {EVENT_PHASE[event].value} hooks together and "
                        "waits for all; Helm runs them one at a time in this order",
                    )
        names = split.file_names(
            [i.ref for i in items]
        )  # the one naming rule: W/out's names, collisions apart
        served = {
            crd_serves(i.body) for i in items if i.ref.kind == split.CRD_KIND and i.ref.group == CRD_GROUP
        }
        items = [
            dataclasses.replace(
                with_sync_options(i, served),
                file=out_file(i.ref, names[i.ref]),
                notes=tuple(dict.fromkeys(self.notes.get(i.ref, []))),
            )
            for i in items
        ]
        return ArgoExport(
            self.plans.install.release,
            self.plans.install.namespace,
            self.run_once,
            tuple(items),
            tuple(splits),
            tuple(install_only),
            tuple(upgrade_only),
            tuple(unmapped),
            tuple(self.warnings),
        )

    def classify(
        self,
    ) -> tuple[list[objects.Ref], list[objects.Ref], list[objects.Ref], list[objects.Ref]]:
        """Split the hooks into CRD hooks (plain resources), guarded run-once hooks before and after the release
        objects, and the rest (Argo CD hooks)."""
        crd_hooks: list[objects.Ref] = []
        once_pre: list[objects.Ref] = []
        once_post: list[objects.Ref] = []
        rest: list[objects.Ref] = []
        for r, h in self.hooks.items():
            events = set(h.events)
            sync_events = events & set(SYNC_EVENTS)
            if r.kind == split.CRD_KIND and sync_events:
                crd_hooks.append(r)
                self.note(
                    r,
                    "a CRD hook is exported as a plain resource of the CRD wave: Argo CD would delete a hook CRD "
                    "before every run (BeforeHookCreation cannot be switched off), taking every custom resource "
                    "with it, where Helm never deletes CRD hooks",
                )
                for e in sorted(events & set(DELETE_EVENTS)):
                    self.note(r, f"its {e} run is not exported (a plain resource is no delete hook)")
                continue
            guard = (
                self.run_once == RunOnce.ONCE
                and sync_events
                and sync_events <= {HookEvent.PRE_INSTALL, HookEvent.POST_INSTALL}
                and not events & set(DELETE_EVENTS)
            )
            if guard:
                (once_pre if HookEvent.PRE_INSTALL in events else once_post).append(r)
                self.note(
                    r,
                    "run-once guard: a plain resource Argo CD applies on the first sync and, unchanged, never "
                    "again; nothing deletes it (it is the record that it ran)",
                )
                if {HookEvent.PRE_INSTALL, HookEvent.POST_INSTALL} <= events:
                    self.note(
                        r, "Helm runs it twice on install (pre- and post-install); the guard once, before"
                    )
                continue
            rest.append(r)
        return crd_hooks, once_pre, once_post, rest

    def run_once_lists(self) -> tuple[list[str], list[str]]:
        install_only: list[str] = []
        upgrade_only: list[str] = []
        for r, h in self.hooks.items():
            events = set(h.events)
            label = _label(r)
            if r.kind == split.CRD_KIND:
                continue
            only = [e for e, twin in INSTALL_TWIN.items() if e in events and twin not in events]
            if only:
                install_only.append(label)
                if self.run_once == RunOnce.EVERY_SYNC or events & {
                    HookEvent.PRE_UPGRADE,
                    HookEvent.POST_UPGRADE,
                    *DELETE_EVENTS,
                }:
                    why = (
                        ""
                        if self.run_once == RunOnce.EVERY_SYNC
                        else " (the run-once guard cannot apply: it also runs on upgrade or delete)"
                    )
                    self.note(
                        r, f"Helm runs it on install only ({', '.join(only)}); Argo CD on every sync{why}"
                    )
                    self.warnings.append(
                        f"{label} runs on every sync, where Helm runs it on install only{why}; "
                        "--install-only-hooks once makes it run once"
                    )
            up = [twin for e, twin in INSTALL_TWIN.items() if twin in events and e not in events]
            if up:
                upgrade_only.append(label)
                self.note(
                    r,
                    f"Helm runs it on upgrade only ({', '.join(up)}); Argo CD on every sync, the first one (the "
                    "install) included",
                )
                self.warnings.append(
                    f"{label} runs on the first sync too, where Helm runs it on upgrade only"
                )
        return install_only, upgrade_only

    def hook_item(self, r: objects.Ref, wave: int | None) -> Item:
        h = self.hooks[r]
        o = h.first
        phases = tuple(dict.fromkeys(EVENT_PHASE[e] for e in _ordered(h.events)))
        policies = [POLICIES[p] for p in (o.delete_policies or ())]
        if r.kind == split.CRD_KIND:  # a delete hook only (sync CRD hooks are plain resources)
            if set(policies) - {Policy.BEFORE_HOOK_CREATION}:
                self.note(r, "HookSucceeded/HookFailed left out: Helm never deletes a CRD hook")
            policies = [Policy.BEFORE_HOOK_CREATION]
        elif not policies:
            policies = [Policy.BEFORE_HOOK_CREATION]
            self.note(
                r,
                "its delete policy names nothing Helm acts on, so Helm never deletes it; Argo CD cannot be told "
                "so and applies its default, BeforeHookCreation",
            )
        if (
            Phase.PRE_SYNC in phases
            and Phase.POST_SYNC in phases
            and Policy.HOOK_SUCCEEDED in policies
            and Policy.BEFORE_HOOK_CREATION not in policies
        ):
            policies.insert(0, Policy.BEFORE_HOOK_CREATION)
            self.note(
                r,
                "BeforeHookCreation added: Argo CD deletes succeeded hooks only when the whole sync ends, so the "
                "PostSync run would otherwise find the PreSync one done instead of running again as Helm does",
            )
        body, source = self.body(o)
        new = rewrite(body, self.notes.setdefault(r, []), phases, wave, tuple(policies))
        events = _ordered(h.events)
        helm = ", ".join(e.value for e in events) + f" (weight {o.weight or 0})"
        return Item(r, out_file(r, o.file), new, source, events, helm, phases, wave, tuple(policies))

    def sync_items(
        self,
        crds: list[plan.PlanObject],
        crd_hooks: list[objects.Ref],
        once_pre: list[objects.Ref],
        ordinary: list[plan.PlanObject],
        once_post: list[objects.Ref],
    ) -> tuple[list[Item], list[str]]:
        """The Sync phase: CRDs first (one wave), the guarded pre-install hooks (a wave each), the release
        objects in the fewest waves that keep Helm's kind-by-kind order, the guarded post-install hooks."""
        items: list[Item] = []
        splits: list[str] = []
        wave = 0

        def plain(o: plan.PlanObject, w: int, helm: str, events: tuple[HookEvent, ...] = ()) -> Item:
            r = ref_of(o)
            body, source = self.body(o)
            new = rewrite(body, self.notes.setdefault(r, []), (Phase.SYNC,), w, (), drop_ttl=bool(events))
            return Item(r, out_file(r, o.file), new, source, events, helm, (Phase.SYNC,), w)

        if crds or crd_hooks:
            for o in crds:
                items.append(plain(o, wave, "crds"))
            for r in crd_hooks:
                h = self.hooks[r]
                items.append(plain(h.first, wave, _hook_where(h), _ordered(h.events)))
            wave += 1
        for r in once_pre:
            h = self.hooks[r]
            items.append(plain(h.first, wave, _hook_where(h), _ordered(h.events)))
            wave += 1
        last: tuple[str, int] | None = None
        for o in ordinary:
            rank = kind_rank(o.kind)
            if last is not None and o.kind != last[0] and rank <= last[1]:
                wave += 1
                splits.append(_split_reason(wave, last[0], o.kind, rank, last[1]))
            items.append(plain(o, wave, "secrets" if _is_secret(ref_of(o)) else "apply"))
            last = (o.kind, rank)
        if ordinary:
            wave += 1
        for r in once_post:
            h = self.hooks[r]
            items.append(plain(h.first, wave, _hook_where(h), _ordered(h.events)))
            wave += 1
        return items, splits

    def unmapped(self) -> list[Unmapped]:
        out = []
        for s in self.plans.unmapped:
            for o in s.objects:
                r = ref_of(o)
                exported = r in self.hooks
                out.append(Unmapped(s.phase, o.label, exported))
                if exported:
                    self.note(r, f"its {s.phase} run is not exported: Argo CD has no phase for {s.phase}")
        return out


def crd_serves(body: dict[str, Any]) -> tuple[str, str]:
    """(group, kind) of the custom resources a CRD serves."""
    spec = body.get("spec") or {}
    return str(spec.get("group", "")), str((spec.get("names") or {}).get("kind", ""))


def with_sync_options(item: Item, served: set[tuple[str, str]]) -> Item:
    """``SkipDryRunOnMissingResource`` on custom resources of CRDs the export carries (their dry run would fail
    before the CRD exists), ``Prune=false`` on ``keep`` objects (Helm's upgrade never prunes them)."""
    opts = []
    if (item.ref.group, item.ref.kind) in served:
        opts.append(SKIP_DRY_RUN)
    keep = objects.annotations(item.body).get(hooks.RESOURCE_POLICY_ANNOTATION) == hooks.RESOURCE_POLICY_KEEP
    if keep and not item.hook:
        opts.append(NO_PRUNE)
    if not opts:
        return item
    body = copy.deepcopy(item.body)
    ann = body.setdefault("metadata", {}).setdefault("annotations", {})
    have = [o.strip() for o in str(ann.get(SYNC_OPTIONS, "")).split(",") if o.strip()]
    ann[SYNC_OPTIONS] = ",".join([*have, *(o for o in opts if o not in have)])
    return dataclasses.replace(item, body=body)


def rewrite(
    body: dict[str, Any],
    notes: list[str],
    phases: tuple[Phase, ...],
    wave: int | None,
    policies: tuple[Policy, ...],
    drop_ttl: bool = False,
) -> dict[str, Any]:
    """``body`` with Helm's hook annotations removed and Argo CD's set; Argo CD annotations the chart wrote
    itself are replaced (and noted). ``drop_ttl``: a guarded or CRD hook Job loses ``ttlSecondsAfterFinished``
    (a plain resource that deletes itself is re-created, and so re-run, by the next sync)."""
    new = copy.deepcopy(body)
    meta = new.setdefault("metadata", {})
    ann = {str(k): str(v) for k, v in (meta.get("annotations") or {}).items()}
    for key in HELM_HOOK_ANNOTATIONS:
        ann.pop(key, None)
    for key in (HOOK, HOOK_DELETE_POLICY, SYNC_WAVE):
        if key in ann:
            notes.append(
                f"the chart's own {key}: {ann.pop(key)!r} is replaced (the export follows Helm's plan)"
            )
    if Phase.SYNC not in phases:
        ann[HOOK] = ",".join(phases)
        ann[HOOK_DELETE_POLICY] = ",".join(policies)
    if wave is not None:
        ann[SYNC_WAVE] = str(wave)
    if ann:
        meta["annotations"] = ann
    else:
        meta.pop("annotations", None)
    spec = new.get("spec")
    if drop_ttl and new.get("kind") == "Job" and isinstance(spec, dict) and "ttlSecondsAfterFinished" in spec:
        del spec["ttlSecondsAfterFinished"]
        notes.append(
            "ttlSecondsAfterFinished removed: a plain resource that deletes itself runs again next sync"
        )
    return new


def out_file(r: objects.Ref, plan_file: str) -> str:
    """Where an object goes in ``DIR``: its work-dir file name, under ``secrets/`` for Secrets."""
    return f"{'secrets' if _is_secret(r) else 'manifests'}/{PurePosixPath(plan_file).name}"


def _is_secret(r: objects.Ref) -> bool:
    return r.kind == "Secret" and r.group == ""


def _label(r: objects.Ref) -> str:
    return f"{r.kind} {r.namespace}/{r.name}" if r.namespace else f"{r.kind} {r.name}"


def _ordered(events: Iterable[HookEvent]) -> tuple[HookEvent, ...]:
    have = set(events)
    return tuple(e for e in (*SYNC_EVENTS, *DELETE_EVENTS) if e in have)


def _hook_where(h: _Hook) -> str:
    return ", ".join(e.value for e in _ordered(h.events)) + f" (weight {h.first.weight or 0})"


def _split_reason(wave: int, prev: str, kind: str, rank: int, prev_rank: int) -> str:
    if rank == prev_rank:
        return (
            f"Sync wave {wave} starts at {kind}: Argo CD's kind order lists neither {prev} nor {kind} and would "
            f"interleave them by name; Helm creates every {prev} first"
        )
    return (
        f"Sync wave {wave} starts at {kind}: Argo CD's kind order puts {kind} before {prev}, which Helm "
        "creates first"
    )
