"""Split one render into ordinary objects, CRDs, Secrets and hooks, in one pass, by Helm's own parsing rules.

Mirrors helm/helm ``pkg/release/v1/util/manifest_sorter.go``:

* a document without ``helm.sh/hook`` is a release resource (here: ordinary, CRD or Secret);
* ``helm.sh/hook`` is split on commas, trimmed and lowercased; if *any* part is not a known event the whole
  document is dropped (Helm logs it at info level; berth warns);
* ``helm.sh/hook-weight`` is parsed like Go's ``strconv.Atoi``: anything else silently becomes 0 (berth warns);
* ``helm.sh/hook-delete-policy`` is a comma list, not validated; ``before-hook-creation`` is added *only when the
  list is empty* -- any listed value, even a misspelt one, disables the default.

Hooks are kept in Helm's render order (stable by kind install order), which is the tie-breaker after
(weight, name) when an event runs. Every object also gets its file name here, so the same object has the same
name in the package, in ``W/out`` and in the plan.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from berth.kube import hooks, kinds, objects, yamlio
from berth.kube.errors import InputError, MultiInputError
from berth.kube.hooks import DeletePolicy, HookEvent

CRD_KIND = "CustomResourceDefinition"
ACTING_POLICIES = frozenset(p.value for p in DeletePolicy)

_SOURCE = re.compile(r"^# Source: (?P<path>.+?)\s*$", re.MULTILINE)


def _chunks(text: str) -> list[str]:
    """``text`` cut at the lines between two of Helm's documents (``^---[ \\t]*$``, line by line), found by string
    search: that regex tries every position of the text, ~8 ms on the 1.3 MB render of a chart with large CRDs,
    where only the lines starting ``---`` can be separators."""
    pieces: list[str] = []
    start = 0  # where the current piece begins
    at = 0 if text.startswith("---") else _line_of_dashes(text, 0)
    while at >= 0:
        end = at + 3
        while end < len(text) and text[end] in " \t":
            end += 1
        if end == len(text) or text[end] == "\n":
            pieces.append(text[start:at])
            start = end
        at = _line_of_dashes(text, at)
    pieces.append(text[start:])
    return pieces


def _line_of_dashes(text: str, after: int) -> int:
    """Where the next line starting ``---`` after ``after`` begins (-1: none)."""
    found = text.find("\n---", after)
    return found + 1 if found >= 0 else -1


@dataclass(frozen=True)
class RenderedObject:
    """One object of a render with where it came from and its place in the render output."""

    body: dict[str, Any]
    ref: objects.Ref
    source: str
    order: int
    api_version: str
    text: str = field(default="", compare=False)
    """The document as Helm rendered it (with its ``# Source:`` line), when it was one document of its own: what is
    written to its file, byte for byte (no YAML is emitted again). Empty: written from ``body``."""

    @property
    def kind(self) -> str:
        return self.ref.kind

    @property
    def name(self) -> str:
        return self.ref.name

    @property
    def namespace(self) -> str:
        return self.ref.namespace

    @property
    def annotations(self) -> dict[str, str]:
        return {str(k): str(v) for k, v in objects.annotations(self.body).items()}

    @property
    def from_crds_dir(self) -> bool:
        """True for CRDs Helm installs from a chart's ``crds/`` folder (never templated, upgraded or deleted)."""
        parts = PurePosixPath(self.source).parts
        return len(parts) >= 2 and parts[-2] == "crds"

    @property
    def keep(self) -> str | None:
        """The ``helm.sh/resource-policy`` value, if any."""
        return self.annotations.get(hooks.RESOURCE_POLICY_ANNOTATION)


@dataclass(frozen=True)
class Hook:
    """A hook object with its parsed annotations (Helm's ``release.Hook``)."""

    obj: RenderedObject
    events: tuple[HookEvent, ...]
    weight: int
    listed_policies: tuple[str, ...]
    """The delete policies as listed (trimmed, lowercased), possibly empty or unknown."""
    log_policies: tuple[str, ...] = ()
    """``helm.sh/hook-output-log-policy``: print Job/Pod logs on ``hook-succeeded`` and/or ``hook-failed``."""

    @property
    def delete_policies(self) -> tuple[DeletePolicy, ...]:
        """The effective policies: Helm's default when none is listed, else the listed ones that act."""
        if not self.listed_policies:
            return (DeletePolicy.BEFORE_HOOK_CREATION,)
        return tuple(DeletePolicy(p) for p in self.listed_policies if p in ACTING_POLICIES)

    def has(self, policy: DeletePolicy) -> bool:
        return policy in self.delete_policies

    @property
    def deletable(self) -> bool:
        """CRD hooks are never deleted by any policy: removing a CRD cascades to every custom resource of it."""
        return self.obj.kind != CRD_KIND


@dataclass(frozen=True)
class Split:
    """The result of one pass over a render."""

    ordinary: tuple[RenderedObject, ...]
    """Release resources that are neither CRDs nor Secrets, in render order."""
    crds: tuple[RenderedObject, ...]
    secrets: tuple[RenderedObject, ...]
    hooks: tuple[Hook, ...]
    """In Helm's render order: stable by kind install order."""
    warnings: tuple[str, ...] = ()
    file_names: dict[objects.Ref, str] = field(default_factory=dict)
    """``<slug>.yaml`` per object identity."""

    def all_objects(self) -> list[RenderedObject]:
        return [*self.crds, *self.ordinary, *self.secrets, *(h.obj for h in self.hooks)]

    def hooks_for(self, event: HookEvent) -> list[Hook]:
        """The hooks of one event in Helm's execution order: weight, then name (byte-wise), then render order.

        Render order is already stable by kind install order, so kind decides only between equal weight and name.
        A hook listing the event twice runs twice (Helm appends it once per listing).
        """
        runs = [h for h in self.hooks for e in h.events if e == event]
        return sorted(runs, key=lambda h: (h.weight, h.obj.name.encode("utf-8")))

    def events(self) -> list[HookEvent]:
        present = {e for h in self.hooks for e in h.events}
        return [e for e in HookEvent if e in present]


def sanitise(text: str) -> str:
    """File-name part: lowercase; keep a-z and 0-9; ``-``, ``.`` and ``_`` become ``-``; drop everything else."""
    out = []
    for ch in text.lower():
        if ("a" <= ch <= "z") or ("0" <= ch <= "9"):
            out.append(ch)
        elif ch in "-._":
            out.append("-")
    return "".join(out)


def slug(ref: objects.Ref) -> str:
    """``lowercase(kind)-[namespace-]name``; refuses a name that sanitising would erase."""
    name = sanitise(ref.name)
    if not name:
        raise InputError(
            f"the name {ref.name!r} has no letter or digit left after sanitising; rename the object",
            str(ref),
        )
    parts = [ref.kind.lower()]
    if ref.namespace:
        parts.append(sanitise(ref.namespace))
    parts.append(name)
    return "-".join(parts)


def file_names(refs: Iterable[objects.Ref]) -> dict[objects.Ref, str]:
    """File name per identity; colliding slugs each get ``-`` + 8 hex of SHA-256 of the identity (stable, not content)."""
    refs = list(refs)
    slugs = {r: slug(r) for r in refs}
    counts = Counter(slugs.values())
    out: dict[objects.Ref, str] = {}
    for r, s in slugs.items():
        if counts[s] > 1:
            s = f"{s}-{hashlib.sha256(r.key.encode('utf-8')).hexdigest()[:8]}"
        out[r] = f"{s}.yaml"
    return out


@functools.lru_cache(maxsize=4096)
def _documents(chunk: str, source: str) -> tuple[yamlio.Document, ...]:
    """The documents of one render chunk (by its text and template), parsed once: the install and the
    ``--is-upgrade`` render of a chart share all but a few documents (its large CRDs among them). The bodies are
    shared: nothing changes a rendered object in place."""
    return tuple(yamlio.load_documents(chunk, source))


def _document_text(chunk: str, source: str) -> str:
    """One document's text as a file holds it: Helm's own lines, led by its ``# Source:`` comment."""
    text = chunk.strip("\n") + "\n"
    return text if text.startswith("# Source:") else f"# Source: {source}\n{text}"


def parse_render(text: str) -> list[RenderedObject]:
    """Documents of ``helm template`` output, each with its ``# Source:`` template path and output position.

    Every document must be an object with ``kind`` and ``metadata.name``: nameless and ``generateName``-only
    objects cannot be applied idempotently or planned, so they are refused (not silently dropped).
    """
    out: list[RenderedObject] = []
    source = "<render>"
    problems: list[str] = []
    for chunk in _chunks(text):
        m = _SOURCE.search(chunk)
        if m:
            source = m.group("path")
        if not chunk.strip():
            continue
        docs = _documents(chunk, source)
        verbatim = _document_text(chunk, source) if len(docs) == 1 else ""
        for doc in docs:
            where = f"{source} (document {doc.index + 1})"
            body = doc.body
            if not isinstance(body, dict):
                problems.append(
                    f"{where}: a YAML document must be a Kubernetes object, got {type(body).__name__}"
                )
                continue
            if not body.get("kind") or not body.get("apiVersion"):
                problems.append(f"{where}: the object has no kind or apiVersion")
                continue
            meta = body.get("metadata")
            if not isinstance(meta, dict) or not meta.get("name"):
                hint = (
                    " (generateName is not supported: objects must have a fixed name)"
                    if (isinstance(meta, dict) and meta.get("generateName"))
                    else ""
                )
                problems.append(f"{where}: {body.get('kind')} has no metadata.name{hint}")
                continue
            out.append(
                RenderedObject(
                    body, objects.ref(body), source, len(out), str(body.get("apiVersion")), verbatim
                )
            )
    if len(problems) == 1:
        raise InputError(problems[0])
    if problems:
        raise MultiInputError(problems, "the render has documents berth cannot place")
    return out


def parse_hook(obj: RenderedObject, warnings: list[str]) -> Hook | None:
    """Helm's hook parsing for one object; None (with a warning) when Helm would drop it."""
    ann = obj.annotations
    raw_events = ann[hooks.HOOK_ANNOTATION]
    parts = [p.strip().lower() for p in raw_events.split(",")]
    events: list[HookEvent] = []
    for part in parts:
        event = hooks.parse_event(part)
        if event is None:
            warnings.append(
                f"{obj.source}: {obj.ref}: unknown hook event {part!r} in {hooks.HOOK_ANNOTATION}="
                f"{raw_events!r}; Helm drops the whole object (neither hook nor release resource)"
            )
            return None
        events.append(event)
    dupes = sorted({e.value for e in events if events.count(e) > 1})
    if dupes:
        warnings.append(
            f"{obj.source}: {obj.ref}: hook event(s) {', '.join(dupes)} listed twice; Helm runs it twice"
        )
    raw_weight = ann.get(hooks.WEIGHT_ANNOTATION)
    weight = hooks.parse_weight(raw_weight)
    if raw_weight is not None and weight == 0 and raw_weight.lstrip("+-") != "0" and raw_weight != "":
        warnings.append(
            f"{obj.source}: {obj.ref}: {hooks.WEIGHT_ANNOTATION}={raw_weight!r} is not an integer; Helm uses 0"
        )
    policies: tuple[str, ...] = ()
    raw_policy = ann.get(hooks.DELETE_POLICY_ANNOTATION)
    if raw_policy is not None:
        policies = tuple(p.strip().lower() for p in raw_policy.split(","))
        unknown = [p for p in policies if p not in ACTING_POLICIES]
        if unknown:
            warnings.append(
                f"{obj.source}: {obj.ref}: delete polic(ies) {unknown} do nothing in Helm, and listing them "
                f"disables the default {DeletePolicy.BEFORE_HOOK_CREATION.value}"
            )
    raw_logs = ann.get(hooks.OUTPUT_LOG_POLICY_ANNOTATION)
    logs = tuple(p.strip().lower() for p in raw_logs.split(",")) if raw_logs is not None else ()
    return Hook(obj, tuple(events), weight, policies, logs)


def split(rendered: Iterable[RenderedObject], dropped_hook_events: Iterable[str] = ()) -> Split:
    """One pass: classify, check identities are unique, name files."""
    warnings = [
        f"Helm dropped a document whose {hooks.HOOK_ANNOTATION} is {types!r} (an unknown event); "
        "it is neither a hook nor a release resource"
        for types in dropped_hook_events
    ]
    ordinary: list[RenderedObject] = []
    crds: list[RenderedObject] = []
    secrets: list[RenderedObject] = []
    hook_list: list[Hook] = []
    seen: dict[objects.Ref, RenderedObject] = {}
    duplicates: list[str] = []
    for obj in rendered:
        if obj.ref in seen:
            first = seen[obj.ref]
            duplicates.append(f"{obj.ref} is rendered twice: {first.source} and {obj.source}")
            continue
        seen[obj.ref] = obj
        if hooks.HOOK_ANNOTATION in obj.annotations:
            hook = parse_hook(obj, warnings)
            if hook is not None:
                hook_list.append(hook)
        elif obj.kind == CRD_KIND:
            crds.append(obj)
        elif obj.kind == "Secret" and obj.ref.group == "":
            secrets.append(obj)
        else:
            ordinary.append(obj)
    if duplicates:
        raise MultiInputError(
            duplicates, "duplicate object identities (each object must be rendered exactly once)"
        )
    hook_list = kinds.sort_for_install(hook_list, lambda h: h.obj.kind)
    result = Split(tuple(ordinary), tuple(crds), tuple(secrets), tuple(hook_list), tuple(warnings))
    names = file_names(o.ref for o in result.all_objects())
    return Split(result.ordinary, result.crds, result.secrets, result.hooks, result.warnings, names)


CLUSTER_SCOPED_KINDS = frozenset(
    {
        "Namespace", "Node", "PersistentVolume", "StorageClass", "CSIDriver", "CSINode", "VolumeAttachment",
        "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition", "APIService", "PriorityClass",
        "PriorityLevelConfiguration", "FlowSchema", "IngressClass", "RuntimeClass", "PodSecurityPolicy",
        "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding", "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding",
        "CertificateSigningRequest", "DeviceClass", "ResourceSlice", "StorageVersionMigration",
        "VolumeAttributesClass", "IPAddress", "ServiceCIDR", "ComponentStatus",
    }
)  # fmt: skip
"""Built-in kinds without a namespace (Kubernetes 1.35); the chart's own CRDs add theirs by ``spec.scope``."""


def release_namespace_duplicates(result: Split, namespace: str) -> list[str]:
    """Objects that differ only by one leaving ``metadata.namespace`` empty and the other naming the release
    namespace: the same object once applied (an empty namespace means the release namespace)."""
    cluster_scoped = set(CLUSTER_SCOPED_KINDS) | {
        str((c.body.get("spec") or {}).get("names", {}).get("kind", ""))
        for c in [*result.crds, *(h.obj for h in result.hooks if h.obj.kind == CRD_KIND)]
        if (c.body.get("spec") or {}).get("scope") == "Cluster"
    }
    by_ref = {o.ref: o for o in result.all_objects()}
    out = []
    for r, o in by_ref.items():
        if r.namespace or r.kind in cluster_scoped:
            continue
        twin = by_ref.get(objects.Ref(r.group, r.kind, namespace, r.name))
        if twin is not None:
            out.append(
                f"{twin.ref} is rendered twice: {o.source} (no namespace, so the release namespace) and {twin.source}"
            )
    return out


def from_render(text: str, dropped_hook_events: Iterable[str] = ()) -> Split:
    """Parse and split ``helm template`` output (the last few distinct renders are kept: the install and
    ``--is-upgrade`` renders of a chart that does not tell them apart are one text; a Split is not changed by its
    users)."""
    return _from_render(text, tuple(dropped_hook_events))


@functools.lru_cache(maxsize=8)
def _from_render(text: str, dropped_hook_events: tuple[str, ...]) -> Split:
    return split(parse_render(text), dropped_hook_events)
