"""Where plugins read non-pod cluster objects from, and where live volume bindings are written to.

Why it exists: upstream hands plugins informer listers through the framework handle
(``handle.SharedInformerFactory()``); several plugins read the same kinds (Services and ReplicaSets for spreading,
Namespaces for affinity, PVCs/PVs/StorageClasses/CSI objects for the volume plugins, PDBs for preemption). The
contract and the one in-memory implementation live here, below every plugin, so no plugin imports another for them.

- :class:`ObjectLister` is what ``handle.objects`` is: ``list(kind)`` (every object of ``kind``, all namespaces,
  insertion order) and ``get(kind, namespace, name)`` (``namespace`` is ignored for cluster-scoped kinds).
- :class:`ObjectCache` is the one implementation: the scheduler fills it from the simulation's files or from live
  informers; tests hand one to their fake handle.
- :class:`VolumeWriter` is ``handle.volume_writer`` (live only): VolumeBinding's PreBind writes PVs and claims
  through it; None in simulation.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

Obj = Mapping[str, Any]

# Kinds without a namespace (their ``get`` ignores the namespace argument).
CLUSTER_SCOPED_KINDS = frozenset(
    {
        "Node",
        "Namespace",
        "PriorityClass",
        "PersistentVolume",
        "StorageClass",
        "CSINode",
        "CSIDriver",
        "VolumeAttachment",
    }
)


@runtime_checkable
class ObjectLister(Protocol):
    """Non-pod objects by kind, as ``handle.objects`` offers them (raw objects)."""

    def list(self, kind: str) -> Sequence[Obj]: ...

    def get(self, kind: str, namespace: str, name: str) -> Obj | None: ...


class ObjectCache:
    """Cluster objects other than nodes and pods that plugins read (Services, ReplicaSets, StatefulSets,
    Namespaces, PVCs, PVs, StorageClasses, CSI objects, PDBs ...): upstream's informer listers, in one place.

    Keyed by kind, namespace ("" for cluster-scoped kinds) and name: a later object with the same key replaces an
    earlier one; ``list`` keeps insertion order. The simulation fills it from the files; live mode from informers.
    Thread-safe.
    """

    def __init__(self, objects: Iterable[Obj] = ()) -> None:
        self._lock = threading.RLock()
        self._by_kind: dict[str, dict[tuple[str, str], Obj]] = {}
        for obj in objects:
            self.add(obj)

    @staticmethod
    def _key(kind: str, namespace: str, name: str) -> tuple[str, str]:
        return ("" if kind in CLUSTER_SCOPED_KINDS else (namespace or "default"), name)

    def add(self, obj: Obj) -> None:
        """Add or replace (same kind, namespace and name)."""
        meta = obj.get("metadata") or {}
        kind = str(obj.get("kind") or "")
        key = self._key(kind, str(meta.get("namespace") or ""), str(meta.get("name") or ""))
        with self._lock:
            self._by_kind.setdefault(kind, {})[key] = obj

    def remove(self, obj: Obj) -> bool:
        meta = obj.get("metadata") or {}
        kind = str(obj.get("kind") or "")
        key = self._key(kind, str(meta.get("namespace") or ""), str(meta.get("name") or ""))
        with self._lock:
            return self._by_kind.get(kind, {}).pop(key, None) is not None

    def list(self, kind: str) -> Sequence[Obj]:
        with self._lock:
            return list(self._by_kind.get(kind, {}).values())

    def get(self, kind: str, namespace: str, name: str) -> Obj | None:
        with self._lock:
            return self._by_kind.get(kind, {}).get(self._key(kind, namespace, name))

    def kinds(self) -> Sequence[str]:
        with self._lock:
            return sorted(k for k, v in self._by_kind.items() if v)


class VolumeWriter(Protocol):
    """Live only: writes a PV or claim through the API (``handle.volume_writer``; upstream's client updates in
    VolumeBinding's PreBind). ``update`` raises on failure; its message becomes the PreBind error."""

    def update(self, obj: Obj) -> Any: ...


class HasObjects(Protocol):
    """What :func:`list_objects` and :func:`get_object` read from the plugins' handle: only its ``objects``.
    Declared here so this module stays below :mod:`~berth.schedule.framework.interface` (whose ``Handle`` has it)."""

    @property
    def objects(self) -> ObjectLister: ...


def list_objects(handle: HasObjects, kind: str, namespace: str | None) -> Sequence[Mapping[str, Any]]:
    """Objects of ``kind`` (in ``namespace``; None = all) from ``handle.objects``. Nothing when the lister fails --
    upstream also ignores lister errors when building default selectors."""
    try:
        objs = [o for o in handle.objects.list(kind) or () if isinstance(o, Mapping)]
    except Exception:  # a broken lister (a live informer's) must not break scheduling
        return ()
    if namespace is None:
        return objs
    return [o for o in objs if str((o.get("metadata") or {}).get("namespace") or "default") == namespace]


def get_object(handle: HasObjects, kind: str, namespace: str, name: str) -> Mapping[str, Any] | None:
    """One object by key from ``handle.objects`` (None when absent or the lister fails)."""
    try:
        obj = handle.objects.get(kind, namespace, name)
    except Exception:  # a broken lister (a live informer's) must not break scheduling
        return None
    return obj if isinstance(obj, Mapping) else None
