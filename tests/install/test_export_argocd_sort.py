"""A model of how Argo CD orders and runs a sync, for checking exports -- and the tests that pin the model.

Read from gitops-engine (argo-cd ``gitops-engine/pkg/sync``, v3.5): ``getSyncTasks`` makes one task per object and
sync phase (hooks: their sync-phase hook types; every other object: ``Sync``), fills in the Application's
namespace where an object names none (cluster-scoped ones too), ``syncTasks.Sort`` orders them by phase, wave, kind
order and name with Go's unstable ``sort.Sort``, then ``adjustDeps`` moves each Namespace before the first object
in it and each CRD before the first of its custom resources, giving the moved task that object's phase and wave.
``Sync`` runs one (phase, wave) at a time; ``runTasks`` applies a wave's tasks in order, the consecutive tasks of
one kind together. PreDelete/PostDelete hooks are argo-cd's (``controller/hook.go``), created all at once.

The exports are checked against this model, not against berth's own code: only the kind-order table is shared
(pinned whole in ``test_export_argocd.py``).
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass, field
from typing import Any

import pytest

from berth.install import export_argocd

PHASE_ORDER = {"PreSync": -1, "Sync": 0, "PostSync": 1, "SyncFail": 2}
HOOK_TYPES = ("PreSync", "Sync", "PostSync", "SyncFail", "Skip")
HELM_TYPES = {
    "pre-install": "PreSync",
    "pre-upgrade": "PreSync",
    "post-install": "PostSync",
    "post-upgrade": "PostSync",
}


def _annotations(obj: dict[str, Any]) -> dict[str, str]:
    return {str(k): str(v) for k, v in ((obj.get("metadata") or {}).get("annotations") or {}).items()}


def _csv(obj: dict[str, Any], key: str) -> list[str]:
    value = _annotations(obj).get(key)
    return [p.strip() for p in value.split(",") if p.strip()] if value is not None else []


def _atoi(text: str | None) -> int | None:
    if text is None:
        return None
    body = text[1:] if text[:1] in "+-" else text
    return int(text) if body.isdigit() and body.isascii() else None


def hook_types(obj: dict[str, Any]) -> list[str]:
    """``hook.Types``: Argo CD's own hook annotation; Helm's only when that names no known type."""
    types = [t for t in _csv(obj, export_argocd.HOOK) if t in HOOK_TYPES]
    if not types:
        types = [HELM_TYPES[t] for t in _csv(obj, "helm.sh/hook") if t in HELM_TYPES]
    return types


def is_hook(obj: dict[str, Any]) -> bool:
    """``hook.IsHook``: any Argo CD hook annotation (unless it is only Skip), else a Helm one (not crd-install)."""
    ann = _annotations(obj)
    if export_argocd.HOOK in ann:
        return hook_types(obj) != ["Skip"]
    return "helm.sh/hook" in ann and ann["helm.sh/hook"] != "crd-install"


def sync_phases(obj: dict[str, Any]) -> list[str]:
    """``syncPhases``: a hook's sync-phase types (PreDelete/PostDelete are none: never run by a sync)."""
    types = hook_types(obj)
    if types == ["Skip"]:
        return []
    if is_hook(obj):
        return sorted({t for t in types if t in PHASE_ORDER}, key=PHASE_ORDER.__getitem__)
    return ["Sync"]


def wave_of(obj: dict[str, Any]) -> int:
    """``syncwaves.Wave``: the sync-wave annotation when it parses, else the Helm hook weight, else 0."""
    ann = _annotations(obj)
    for key in (export_argocd.SYNC_WAVE, "helm.sh/hook-weight"):
        value = _atoi(ann.get(key))
        if value is not None:
            return value
    return 0


@dataclass
class Task:
    phase: str
    obj: dict[str, Any]
    wave_override: int | None = None
    hook: bool = False

    @property
    def wave(self) -> int:
        return self.wave_override if self.wave_override is not None else wave_of(self.obj)

    @property
    def kind(self) -> str:
        return str(self.obj.get("kind", ""))

    @property
    def name(self) -> str:
        return str((self.obj.get("metadata") or {}).get("name", ""))

    @property
    def namespace(self) -> str:
        return str((self.obj.get("metadata") or {}).get("namespace") or "")

    @property
    def group_kind(self) -> str:
        api = str(self.obj.get("apiVersion", ""))
        return f"{api.split('/')[0] if '/' in api else ''}/{self.kind}"

    @property
    def ident(self) -> tuple[str, str, str]:
        return (self.kind, self.namespace, self.name)


def kind_order(kind: str) -> int:
    return export_argocd.kind_rank(kind)


def compare(a: Task, b: Task) -> int:
    """``syncTasks.Less`` as a three-way comparison: 0 means Go's unstable sort may put them either way."""
    for x, y in (
        (PHASE_ORDER[a.phase], PHASE_ORDER[b.phase]),
        (a.wave, b.wave),
        (kind_order(a.kind), kind_order(b.kind)),
        (a.name.encode("utf-8"), b.name.encode("utf-8")),
    ):
        if x != y:
            return -1 if x < y else 1
    return 0


@dataclass
class Sorted:
    tasks: list[Task]
    ties: list[tuple[Task, Task]] = field(default_factory=list)
    """Pairs of tasks that compare equal: their order is unspecified in Argo CD."""


def tasks_of(objs: list[dict[str, Any]], app_namespace: str) -> list[Task]:
    out = []
    for obj in objs:
        target = obj
        if not (obj.get("metadata") or {}).get("namespace"):
            target = {**obj, "metadata": {**(obj.get("metadata") or {}), "namespace": app_namespace}}
        out += [Task(phase, target, hook=is_hook(obj)) for phase in sync_phases(obj)]
    return out


def _crd_key(t: Task) -> str | None:
    if t.kind != "CustomResourceDefinition" or t.group_kind.split("/")[0] != "apiextensions.k8s.io":
        return None
    spec = t.obj.get("spec") or {}
    group, kind = spec.get("group"), (spec.get("names") or {}).get("kind")
    return f"{group}/{kind}" if group is not None and kind is not None else None


def adjust_deps(tasks: list[Task], is_dep: Any, refs_dep: Any) -> None:
    """``syncTasks.adjustDeps``: bubble each dependency up to just before the first task that refers to it."""
    first: dict[str, int] = {}
    for i in range(len(tasks)):
        t = tasks[i]
        dep = is_dep(t)
        if dep is not None:
            if dep in first:
                index = first[dep]
                t.wave_override = tasks[index].wave
                t.phase = tasks[index].phase
                tasks.insert(index, tasks.pop(i))
                for k, v in first.items():
                    if v >= index:
                        first[k] = v + 1
        else:
            ref = refs_dep(t)
            if ref is not None and ref not in first:
                first[ref] = i


def argocd_sort(objs: list[dict[str, Any]], app_namespace: str) -> Sorted:
    """The tasks of a sync of ``objs`` in Argo CD's order, with the pairs whose order Argo CD leaves open."""
    tasks = sorted(tasks_of(objs, app_namespace), key=functools.cmp_to_key(compare))
    ties = [(a, b) for a, b in itertools.pairwise(tasks) if compare(a, b) == 0]
    adjust_deps(
        tasks,
        lambda t: t.name if t.kind == "Namespace" and t.group_kind == "/Namespace" else None,
        lambda t: t.namespace or None,
    )
    adjust_deps(tasks, _crd_key, lambda t: t.group_kind)
    return Sorted(tasks, ties)


@dataclass(frozen=True)
class Wave:
    phase: str
    wave: int
    batches: tuple[tuple[Task, ...], ...]
    """Consecutive tasks of one kind: applied together (``runTasks``), batch after batch."""


def schedule(s: Sorted) -> list[Wave]:
    """How ``Sync`` runs the sorted tasks: (phase, wave) by (phase, wave), kind batch by kind batch."""
    waves: list[Wave] = []
    for t in s.tasks:
        if not waves or (waves[-1].phase, waves[-1].wave) != (t.phase, t.wave):
            waves.append(Wave(t.phase, t.wave, ((t,),)))
            continue
        last = waves[-1]
        if last.batches[-1][0].kind == t.kind:
            batches = (*last.batches[:-1], (*last.batches[-1], t))
        else:
            batches = (*last.batches, (t,))
        waves[-1] = Wave(last.phase, last.wave, batches)
    return waves


def delete_hooks(objs: list[dict[str, Any]], phase: str) -> list[dict[str, Any]]:
    """argo-cd's ``isHookOfType``: the objects a PreDelete/PostDelete phase creates (together)."""
    helm = {"PreDelete": "pre-delete", "PostDelete": "post-delete"}[phase]
    return [o for o in objs if phase in _csv(o, export_argocd.HOOK) or helm in _csv(o, "helm.sh/hook")]


# -- the model itself, against gitops-engine's own tests -----------------------------------------------------


def obj(
    kind: str, name: str, namespace: str = "", ann: dict[str, str] | None = None, **extra: Any
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    if ann:
        meta["annotations"] = ann
    api = extra.pop("api", "v1")
    return {"apiVersion": api, "kind": kind, "metadata": meta, **extra}


def idents(s: Sorted) -> list[tuple[str, str]]:
    return [(t.phase, t.name) for t in s.tasks]


def test_kind_order_ranks_as_gitops_engine() -> None:
    # gitops-engine Test_syncTasks_kindOrder: Namespace -35, APIService -1, an unlisted kind 0
    assert (kind_order("Namespace"), kind_order("APIService"), kind_order("MyCRD")) == (-35, -1, 0)
    assert kind_order("PriorityClass") == kind_order("ValidatingWebhookConfiguration") == 0


def test_sort_is_phase_then_wave_then_kind_then_name() -> None:
    objs = [
        obj("Pod", "p", "ns"),
        obj("Service", "s", "ns"),
        obj("ConfigMap", "b", "ns"),
        obj("ConfigMap", "a", "ns"),
        obj("Job", "early", "ns", {export_argocd.SYNC_WAVE: "-1"}),
        obj("Job", "hook", "ns", {export_argocd.HOOK: "PreSync"}),
        obj("Job", "late", "ns", {export_argocd.HOOK: "PostSync", export_argocd.SYNC_WAVE: "-5"}),
        obj("Widget", "0", "ns", api="x.example.com/v1"),
    ]
    assert idents(argocd_sort(objs, "ns")) == [
        ("PreSync", "hook"),
        ("Sync", "early"),
        ("Sync", "a"),
        ("Sync", "b"),
        ("Sync", "s"),
        ("Sync", "p"),
        ("Sync", "0"),
        ("PostSync", "late"),
    ]


def test_unlisted_kinds_tie_on_kind_and_sort_by_name() -> None:
    objs = [
        obj("Zeta", "a", "ns", api="z/v1"),
        obj("Alpha", "b", "ns", api="a/v1"),
        obj("Zeta", "c", "ns", api="z/v1"),
    ]
    assert [t.kind for t in argocd_sort(objs, "ns").tasks] == ["Zeta", "Alpha", "Zeta"]
    assert [len(w.batches) for w in schedule(argocd_sort(objs, "ns"))] == [3]


def test_equal_keys_are_reported_as_ties() -> None:
    objs = [obj("ConfigMap", "a", "one"), obj("ConfigMap", "a", "two"), obj("ConfigMap", "b", "one")]
    ties = argocd_sort(objs, "ns").ties
    assert [(a.namespace, b.namespace) for a, b in ties] == [("one", "two")]


def test_wave_falls_back_to_the_helm_weight_and_helm_hooks_count() -> None:
    helm_hook = obj("Job", "h", "ns", {"helm.sh/hook": "pre-install", "helm.sh/hook-weight": "7"})
    assert sync_phases(helm_hook) == ["PreSync"] and wave_of(helm_hook) == 7
    both = obj("Job", "b", "ns", {export_argocd.HOOK: "PostSync", "helm.sh/hook": "pre-install"})
    assert sync_phases(both) == ["PostSync"]  # Argo CD's annotation wins
    assert sync_phases(obj("Job", "d", "ns", {export_argocd.HOOK: "PostDelete"})) == []
    assert sync_phases(obj("Job", "s", "ns", {export_argocd.HOOK: "Skip"})) == []
    assert sync_phases(obj("CustomResourceDefinition", "c", ann={"helm.sh/hook": "crd-install"})) == ["Sync"]


def test_namespace_moves_before_the_first_object_in_it_taking_its_phase_and_wave() -> None:
    # gitops-engine TestSyncTasksSort_NamespaceAndObjectInNamespace
    objs = [
        obj("Job", "hook1", "ns1", {export_argocd.HOOK: "PreSync"}),
        obj("Job", "hook2", "ns2", {export_argocd.HOOK: "PreSync"}),
        obj("Namespace", "ns1", ann={export_argocd.SYNC_WAVE: "1"}),
        obj("Namespace", "ns2", ann={export_argocd.SYNC_WAVE: "2"}),
    ]
    s = argocd_sort(objs, "app")
    assert idents(s) == [("PreSync", "ns1"), ("PreSync", "hook1"), ("PreSync", "ns2"), ("PreSync", "hook2")]
    assert [t.wave for t in s.tasks] == [0, 0, 0, 0]


def test_crd_moves_before_its_first_custom_resource() -> None:
    crd = obj(
        "CustomResourceDefinition",
        "widgets.x.example.com",
        api="apiextensions.k8s.io/v1",
        ann={export_argocd.SYNC_WAVE: "3"},
        spec={"group": "x.example.com", "names": {"kind": "Widget"}},
    )
    cr = obj("Widget", "w", "ns", {export_argocd.HOOK: "PreSync"}, api="x.example.com/v1")
    s = argocd_sort([crd, cr], "ns")
    assert idents(s) == [("PreSync", "widgets.x.example.com"), ("PreSync", "w")]
    assert s.tasks[0].wave == 0


@pytest.mark.parametrize(
    ("annotation", "created"),
    [("PreDelete", ["a"]), ("PostDelete", ["b"])],
)
def test_delete_hooks_are_found_by_argo_or_helm_annotation(annotation: str, created: list[str]) -> None:
    objs = [
        obj("Job", "a", "ns", {export_argocd.HOOK: "PreDelete"}),
        obj("Job", "b", "ns", {"helm.sh/hook": "post-delete"}),
        obj("Job", "c", "ns", {export_argocd.HOOK: "PreSync"}),
    ]
    assert [o["metadata"]["name"] for o in delete_hooks(objs, annotation)] == created
