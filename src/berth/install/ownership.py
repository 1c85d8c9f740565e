"""Ownership as Helm writes and checks it (helm/helm ``pkg/action/validate.go``).

Every release object carries the label ``app.kubernetes.io/managed-by: Helm`` and the annotations
``meta.helm.sh/release-name`` and ``meta.helm.sh/release-namespace`` (Helm 3.2+); hooks and ``crds/`` CRDs do not.
Before an install writes anything, every release object that already exists must carry all three for this release
(``existingResourceConflict``), an upgrade checks the objects the previous revision did not have; otherwise the
run is refused with Helm's wording, naming the object and the release that owns it, and nothing is written.
``--take-ownership`` (Helm 4) adopts such objects instead: the apply rewrites their metadata.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from berth.install import kubeops
from berth.install.plan import Phase, Plan, PlanObject, Step
from berth.kube import objects
from berth.kube.errors import BerthError

MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
MANAGED_BY = "Helm"
RELEASE_NAME_ANNOTATION = "meta.helm.sh/release-name"
RELEASE_NAMESPACE_ANNOTATION = "meta.helm.sh/release-namespace"
OWNED_PHASES = frozenset({Phase.CRDS.value, Phase.APPLY.value, Phase.SECRETS.value})
"""The steps whose objects become the release's (hooks never do)."""


class OwnershipConflict(BerthError):
    """Objects the release would take over belong to another release or to none (exit 2: nothing written)."""

    exit_code = 2


def stamp(obj: dict[str, Any], release: str, namespace: str) -> dict[str, Any]:
    """Add the release's ownership metadata to ``obj`` (Helm's ``setMetadataVisitor``); returns it."""
    meta = objects.meta(obj)
    meta["labels"] = {**(meta.get("labels") or {}), MANAGED_BY_LABEL: MANAGED_BY}
    meta["annotations"] = {
        **(meta.get("annotations") or {}),
        RELEASE_NAME_ANNOTATION: release,
        RELEASE_NAMESPACE_ANNOTATION: namespace,
    }
    return obj


def _require(values: dict[str, Any], key: str, want: str) -> str | None:
    if key not in values:
        return f'missing key "{key}": must be set to "{want}"'
    if values[key] != want:
        return f'key "{key}" must equal "{want}": current value is "{values[key]}"'
    return None


def problems(live: dict[str, Any], release: str, namespace: str) -> list[str]:
    """Helm's ``checkOwnership`` findings for a live object (empty: it is this release's)."""
    labels = {str(k): str(v) for k, v in objects.labels(live).items()}
    annotations = {str(k): str(v) for k, v in objects.annotations(live).items()}
    found = []
    problem = _require(labels, MANAGED_BY_LABEL, MANAGED_BY)
    if problem:
        found.append(f"label validation error: {problem}")
    for key, want in ((RELEASE_NAME_ANNOTATION, release), (RELEASE_NAMESPACE_ANNOTATION, namespace)):
        problem = _require(annotations, key, want)
        if problem:
            found.append(f"annotation validation error: {problem}")
    return found


def owner(live: dict[str, Any]) -> str:
    """Who owns a live object, as its metadata says (for messages)."""
    annotations = objects.annotations(live)
    name = annotations.get(RELEASE_NAME_ANNOTATION)
    if name:
        return f"release {name} in namespace {annotations.get(RELEASE_NAMESPACE_ANNOTATION) or '?'}"
    return "no Helm release (created outside Helm and berth)"


@dataclass(frozen=True)
class Found:
    """An existing object the run would make the release's."""

    label: str
    owner: str
    problems: tuple[str, ...]


def owned_objects(steps: tuple[Step, ...]) -> list[PlanObject]:
    """The objects the steps make the release's (``crds/`` CRDs, created only when absent, are not)."""
    return [o for s in steps if s.phase in OWNED_PHASES for o in s.objects if not o.create_only]


def existing(
    kube: kubeops.KubeOps, plan: Plan, steps: tuple[Step, ...], skip: frozenset[str] = frozenset()
) -> list[Found]:
    """The release objects of ``steps`` that exist and are not this release's (``skip``: ``Kind|ns|name`` keys
    the replaced revision had, which an upgrade does not check, as Helm's)."""
    out = []
    for o in owned_objects(steps):
        res = kube.try_resource(o.api_version, o.kind)
        if res is None:  # a kind whose CRD this plan creates: nothing of it exists yet
            continue
        ns = (o.namespace or plan.namespace) if res.namespaced else ""
        if f"{o.kind}|{ns}|{o.name}" in skip:
            continue
        live = kube.get(res, o.name, ns)
        if live is None:
            continue
        found = problems(live, plan.release, plan.namespace)
        if found:
            out.append(Found(f'{o.kind} "{o.name}" in namespace "{ns}"', owner(live), tuple(found)))
    return out


def refuse_or_adopt(found: list[Found], action: str, take_ownership: bool) -> list[str]:
    """Helm's refusal (:class:`OwnershipConflict`) for objects of another release or none, or with
    ``--take-ownership`` one line per object adopted."""
    if not found:
        return []
    if take_ownership:
        return [f"adopting {f.label} (owned by {f.owner}): --take-ownership" for f in found]
    lines = [
        f"{f.label} exists and cannot be imported into the current release: invalid ownership metadata; "
        + "; ".join(f.problems)
        + f" (it belongs to {f.owner})"
        for f in found
    ]
    raise OwnershipConflict(
        f"Unable to continue with {action}: {len(found)} object(s) already exist and are not this release's; "
        "nothing was written:\n"
        + "\n".join(f"  {line}" for line in lines)
        + "\nIf this release should own them, re-run with --take-ownership (Helm 4's flag) to adopt them"
    )
