"""Hand-written ``helm template``-style documents for split and plan tests."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from berth.install import plan
from berth.kube import yamlio


def doc(
    kind: str,
    name: str | None,
    namespace: str | None = "ns",
    annotations: dict[str, str] | None = None,
    api: str = "v1",
    source: str = "c/templates/x.yaml",
) -> str:
    meta: dict[str, Any] = {}
    if name is not None:
        meta["name"] = name
    if namespace:
        meta["namespace"] = namespace
    if annotations:
        meta["annotations"] = annotations
    body = {"apiVersion": api, "kind": kind, "metadata": meta}
    return f"---\n# Source: {source}\n" + yamlio.dump(body)


def hook(
    kind: str, name: str, event: str, weight: str | None = None, policy: str | None = None, api: str = "v1"
) -> str:
    ann = {"helm.sh/hook": event}
    if weight is not None:
        ann["helm.sh/hook-weight"] = weight
    if policy is not None:
        ann["helm.sh/hook-delete-policy"] = policy
    return doc(kind, name, annotations=ann, api=api)


def plan_calls(
    p: plan.Plan, label: Callable[[str], str] = str, skip: tuple[plan.Phase, ...] = (plan.Phase.NAMESPACE,)
) -> list[str]:
    """What the plan says happens to each object, as ``delete|apply <label(kind)> name`` in order (hook deletions
    included); steps of the ``skip`` phases make no object calls worth comparing."""
    skipped = {ph.value for ph in skip}
    out: list[str] = []
    for step in p.steps:
        if step.phase in skipped:
            continue
        verb = "delete" if step.phase in (plan.Phase.DELETE.value, plan.Phase.PRUNE.value) else "apply"
        for o in step.objects:
            if o.delete_before_create:
                out.append(f"delete {label(o.kind)} {o.name}")
            out.append(f"{verb} {label(o.kind)} {o.name}")
        out += [f"delete {label(o.kind)} {o.name}" for o in step.delete_after_success]
    return out


def same_kind_runs_sorted(calls: list[str], ordinary: set[str]) -> list[str]:
    """Helm creates and deletes release resources kind by kind, the objects of one kind concurrently
    (``pkg/kube`` batchPerform): within a run of one verb and kind only the set is defined, so sort it."""
    out: list[str] = []
    run: list[str] = []
    for call in [*calls, ""]:
        verb_kind = call.rsplit(" ", 1)[0]
        if run and (call not in ordinary or verb_kind != run[0].rsplit(" ", 1)[0]):
            out += sorted(run)
            run = []
        if call in ordinary:
            run.append(call)
        elif call:
            out.append(call)
    return out


def settled_text(path: Path, quiet: float = 0.15, limit: float = 5.0) -> str:
    """The audit log once it stops growing: the server writes a request's line just after sending its response, so
    the last calls of a command that just returned can be a moment away (a liveness wait, not a timing check)."""
    deadline = time.monotonic() + limit
    size = -1
    while True:
        now = path.stat().st_size if path.exists() else 0
        if now == size or time.monotonic() > deadline:
            return path.read_text() if path.exists() else ""
        size = now
        time.sleep(quiet)
