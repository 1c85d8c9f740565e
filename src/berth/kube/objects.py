"""Object identity and small accessors over raw Kubernetes objects (plain dicts).

One identity in two shapes, both defined here and nowhere else:

- :class:`Ref` (group, kind, namespace, name): an object among objects of every kind -- install's split files, plan
  steps, exports, ownership checks.
- :func:`object_key` / :func:`ns_name_key` / :func:`split_key` (``namespace/name``, or ``name`` when cluster-scoped):
  an object among objects of one resource, where the kind is implied -- client-go's ``MetaNamespaceKeyFunc``, used by
  the embedded cluster's informers, work queues and owner lookups and by the scheduler's live informers.
"""

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

Obj = dict[str, Any]


def split_api_version(api_version: str) -> tuple[str, str]:
    """``apps/v1`` -> ``("apps", "v1")``; ``v1`` -> ``("", "v1")``."""
    if "/" in api_version:
        group, _, version = api_version.partition("/")
        return group, version
    return "", api_version


@dataclass(frozen=True, order=True)
class Ref:
    """apiVersion group + kind + namespace + name: what makes an object unique in a cluster.

    The version is deliberately *not* part of identity (``apps/v1`` and ``apps/v1beta1`` Deployments are one object).
    """

    group: str
    kind: str
    namespace: str
    name: str

    @property
    def key(self) -> str:
        """Stable text form ``group|kind|namespace|name`` for sorting and hashing."""
        return f"{self.group}|{self.kind}|{self.namespace}|{self.name}"

    def __str__(self) -> str:
        kind = f"{self.kind}.{self.group}" if self.group else self.kind
        return f"{kind} {self.namespace}/{self.name}" if self.namespace else f"{kind} {self.name}"


def ref(obj: Obj) -> Ref:
    """Identity of a raw object."""
    group, _ = split_api_version(str(obj.get("apiVersion", "")))
    meta = obj.get("metadata") or {}
    return Ref(group, str(obj.get("kind", "")), str(meta.get("namespace") or ""), str(meta.get("name") or ""))


def ns_name_key(namespace: str | None, name: str) -> str:
    """The key of an object among one resource's objects: ``namespace/name``, or ``name`` for a cluster-scoped
    object (client-go's ``MetaNamespaceKeyFunc``)."""
    return f"{namespace}/{name}" if namespace else name


def object_key(obj: Mapping[str, Any]) -> str:
    """:func:`ns_name_key` of an object's metadata."""
    meta = obj.get("metadata") or {}
    return ns_name_key(str(meta.get("namespace") or ""), str(meta.get("name") or ""))


def split_key(key: str) -> tuple[str, str]:
    """``ns/name`` -> ``(ns, name)``; ``name`` -> ``("", name)`` (the inverse of :func:`ns_name_key`)."""
    ns, sep, name = key.partition("/")
    return (ns, name) if sep else ("", ns)


def object_reference(obj: Mapping[str, Any], kind: str, api_version: str = "v1") -> dict[str, str]:
    """An ObjectReference to a namespaced ``obj`` (an Event's ``regarding``, a PersistentVolume's ``claimRef``);
    the namespace is ``default`` when unset, as the API server defaults it."""
    m = obj.get("metadata") or {}
    return {
        "apiVersion": api_version,
        "kind": kind,
        "namespace": str(m.get("namespace") or "default"),
        "name": str(m.get("name") or ""),
        "uid": str(m.get("uid") or ""),
        "resourceVersion": str(m.get("resourceVersion") or ""),
    }


def meta(obj: Obj) -> dict[str, Any]:
    """``metadata``, created empty if missing."""
    m = obj.get("metadata")
    if not isinstance(m, dict):
        m = {}
        obj["metadata"] = m
    return m


def name(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def namespace(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("namespace") or "")


def labels(obj: Obj) -> dict[str, str]:
    return (obj.get("metadata") or {}).get("labels") or {}


def annotations(obj: Obj) -> dict[str, str]:
    return (obj.get("metadata") or {}).get("annotations") or {}


def namespaced_name(obj: Obj) -> str:
    """``ns/name`` (or ``name`` for cluster-scoped objects), the form kube-scheduler prints."""
    ns = namespace(obj)
    return f"{ns}/{name(obj)}" if ns else name(obj)


_SHORT_STRING = 32  # values this short repeat across objects: "True", "Running", "100m", timestamps, reasons


def compact(value: Any) -> Any:
    """A copy of a decoded object whose keys and short strings are interned.

    Why: a JSON decoder makes new key strings for every object, so 10,000 cached pods hold 10,000 copies of
    ``"lastTransitionTime"`` and every other key -- about half of a decoded pod's memory. Informers keep objects
    for as long as they exist; interning halves them for ~15 us of work per object. The copy is new dicts and
    lists (the input is left as it is); other values are shared."""
    if isinstance(value, dict):
        return {sys.intern(k) if type(k) is str else k: compact(v) for k, v in value.items()}
    if isinstance(value, list):
        return [compact(v) for v in value]
    if type(value) is str and len(value) <= _SHORT_STRING:
        return sys.intern(value)
    return value
