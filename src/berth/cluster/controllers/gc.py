"""Garbage collector: deletes dependents whose owners are gone, and runs Foreground and Orphan deletion.

Why: ``kubectl delete deployment`` (Background by default) must take its ReplicaSets and pods with it; ``kubectl
delete --cascade=foreground`` and ``--cascade=orphan`` put the finalizers ``foregroundDeletion`` / ``orphan`` on
the owner (the Api does that when the owner has dependents) and wait for someone to finish the job. Upstream's
garbage collector does it from a graph of ownerReferences; this one keeps the same graph in informer caches:

* dependent check (``dep:`` keys): for each ownerReference, is the owner (same uid) still there? All gone → delete
  the dependent (Background). Some gone → drop just those references.
* owner with deletionTimestamp (``owner:`` keys):
    ``orphan``             → strip this owner's reference from every dependent, then remove the finalizer;
    ``foregroundDeletion`` → delete every dependent (Foreground, so chains cascade), wait until no dependent with
                             ``blockOwnerDeletion: true`` is left, then remove the finalizer.
  Removing the last finalizer lets the Api remove the owner, whose DELETED event re-checks its dependents.

Every served resource is watched (custom resources join when their CRD appears) except Events, which never own
anything and are the most frequently written kind.
"""

from __future__ import annotations

import collections
import contextlib
import copy
import threading
from typing import Any

from berth.cluster.controllers import base, client
from berth.cluster.controllers.informer import OWNER_UID_INDEX, Handler, Informer, key_of, split_key
from berth.kube.objects import Obj

FOREGROUND = "foregroundDeletion"
ORPHAN = "orphan"
SKIPPED = frozenset({"events", "events.events.k8s.io"})
CRDS = "customresourcedefinitions.apiextensions.k8s.io"


class GarbageCollector(base.Controller):
    name = "garbage-collector"
    GONE_MEMORY = 100_000
    RECHECK = 0.5
    """Seconds before re-checking a dependent whose owner was confirmed by the Api but not yet by a cache."""

    def __init__(self, ctx: base.Context) -> None:
        super().__init__(ctx)
        self._lock = threading.Lock()
        self._uids: dict[str, tuple[str, str]] = {}  # uid -> (resource, key)
        self._unconfirmed = False
        self._gone: collections.OrderedDict[str, None] = (
            collections.OrderedDict()
        )  # uids seen DELETED (bounded)
        self._watched: dict[str, Informer] = {}
        for resource, _av, _kind, _ns in client.resource_kinds(self.api):
            self._watch(resource)
        crds = self._watched.get(CRDS) or ctx.informers.informer(CRDS)
        crds.add_handler(
            Handler(
                on_add=self._on_crd, on_update=lambda _o, n: self._on_crd(n), on_delete=self._on_crd_deleted
            )
        )

    # ---- watching ------------------------------------------------------------------------------------------

    def _watch(self, resource: str) -> None:
        if resource in SKIPPED or resource in self._watched:
            return
        inf = self.ctx.informers.informer(resource)
        self._watched[resource] = inf
        inf.add_handler(
            Handler(
                on_add=lambda o, r=resource: self._on_add(r, o),  # type: ignore[misc]
                on_update=lambda old, new, r=resource: self._on_update(r, old, new),  # type: ignore[misc]
                on_delete=lambda o, r=resource: self._on_delete(r, o),  # type: ignore[misc]
            )
        )

    def _on_crd(self, crd: Obj) -> None:
        spec = crd.get("spec") or {}
        plural = (spec.get("names") or {}).get("plural")
        group = spec.get("group")
        if plural and group and base.condition_true(crd, "Established"):
            resource = f"{plural}.{group}"
            with self._lock:
                if resource in self._watched:
                    return
            self._watch(resource)

    def _on_crd_deleted(self, crd: Obj) -> None:
        spec = crd.get("spec") or {}
        group, kind = spec.get("group"), (spec.get("names") or {}).get("kind")
        resource = f"{(spec.get('names') or {}).get('plural')}.{group}"
        with self._lock:
            inf = self._watched.pop(resource, None)
        if inf is not None:
            # The Api deleted the custom objects before the CRD: take in those DELETED events (their dependents
            # need collecting) before the informer goes.
            with contextlib.suppress(Exception):
                while inf.poll(0):
                    pass
            self.ctx.informers.drop(resource)
        # Every object of the type is gone, seen or not (the informer may not have listed yet): references to
        # that kind are dangling now.
        for dep_resource, dep_inf in list(self._watched.items()):
            for dep in dep_inf.list():
                for ref in base.meta(dep).get("ownerReferences") or []:
                    ref_group = str(ref.get("apiVersion", "")).rpartition("/")[0]
                    if ref.get("kind") == kind and ref_group == group:
                        self._forget(str(ref.get("uid", "")))
                        self.queue.add(f"dep:{dep_resource}|{key_of(dep)}")

    def _forget(self, uid: str) -> None:
        """Record ``uid`` as deleted (bounded memory)."""
        with self._lock:
            self._uids.pop(uid, None)
            self._gone[uid] = None
            while len(self._gone) > self.GONE_MEMORY:
                self._gone.popitem(last=False)

    def _on_add(self, resource: str, obj: Obj) -> None:
        key = key_of(obj)
        with self._lock:
            self._uids[base.uid(obj)] = (resource, key)
        if base.meta(obj).get("ownerReferences"):
            self.queue.add(f"dep:{resource}|{key}")
        self._check_owner(resource, obj)

    def _on_update(self, resource: str, old: Obj, new: Obj) -> None:
        if base.meta(new).get("ownerReferences") != base.meta(old).get("ownerReferences") and base.meta(
            new
        ).get("ownerReferences"):
            self.queue.add(f"dep:{resource}|{key_of(new)}")
        self._check_owner(resource, new)

    def _on_delete(self, resource: str, obj: Obj) -> None:
        uid = base.uid(obj)
        self._forget(uid)
        for dep_resource, dep in self._dependents(uid):
            self.queue.add(f"dep:{dep_resource}|{key_of(dep)}")
        # a dependent went away: an owner waiting in foreground deletion may be free now
        for ref in base.meta(obj).get("ownerReferences") or []:
            with self._lock:
                where = self._uids.get(str(ref.get("uid", "")))
            if where is not None:
                self.queue.add(f"owner:{where[0]}|{where[1]}")

    def _check_owner(self, resource: str, obj: Obj) -> None:
        if base.deleting(obj) and {FOREGROUND, ORPHAN} & set(base.meta(obj).get("finalizers") or []):
            self.queue.add(f"owner:{resource}|{key_of(obj)}")

    def _dependents(self, uid: str) -> list[tuple[str, Obj]]:
        out: list[tuple[str, Obj]] = []
        for resource, inf in list(self._watched.items()):
            for dep in inf.by_index(OWNER_UID_INDEX, uid):
                out.append((resource, dep))
        return out

    # ---- reconcile -----------------------------------------------------------------------------------------

    def reconcile(self, key: str) -> None:
        what, _, rest = key.partition(":")
        resource, _, obj_key = rest.partition("|")
        inf = self._watched.get(resource)
        if inf is None:
            return
        obj = inf.get(obj_key)
        if obj is None:
            return
        if what == "dep":
            self._check_dependent(resource, obj)
        else:
            self._finish_owner(resource, obj_key, obj)

    def _owner_alive(self, dependent: Obj, ref: dict[str, Any]) -> bool:
        """Is the object ``ref`` points at (same uid) still there? Asks the Api when the cache does not know it."""
        uid = str(ref.get("uid", ""))
        with self._lock:
            if uid in self._uids:
                return True
            if uid in self._gone:
                return False
        # Not in any cache yet (a virtual node, upstream would say): ask the Api, and look again later, because a
        # deletion that happens before the owner's informer lists it produces no event for us.
        self._unconfirmed = True
        found = client.resource_for_kind(self.api, str(ref.get("apiVersion", "")), str(ref.get("kind", "")))
        if found is None:
            return True  # an unknown kind (e.g. a CRD not established yet): never delete on a guess
        resource, namespaced = found
        ns = base.meta(dependent).get("namespace") if namespaced else None
        try:
            owner = self.api.get(resource, str(ref.get("name", "")), ns)
        except client.ApiError as exc:
            if client.is_not_found(exc):
                return False
            raise
        return base.uid(owner) == uid

    def _check_dependent(self, resource: str, obj: Obj) -> None:
        refs = list(base.meta(obj).get("ownerReferences") or [])
        if not refs or base.deleting(obj):
            return
        self._unconfirmed = False
        gone = [r for r in refs if not self._owner_alive(obj, r)]
        if not gone:
            if self._unconfirmed:
                self.requeue_after(f"dep:{resource}|{key_of(obj)}", self.RECHECK)
            return
        ns = base.meta(obj).get("namespace") or None
        name = str(base.meta(obj).get("name", ""))
        try:
            if len(gone) == len(refs):
                self.api.delete(resource, name, ns, propagation="Background", user=self.user)
            else:
                gone_uids = {r.get("uid") for r in gone}
                new = copy.deepcopy(obj)
                new["metadata"]["ownerReferences"] = [r for r in refs if r.get("uid") not in gone_uids]
                self.api.update(resource, new, ns, user=self.user)
        except client.ApiError as exc:
            if not client.is_not_found(exc):
                raise

    def _finish_owner(self, resource: str, key: str, owner: Obj) -> None:
        finalizers = list(base.meta(owner).get("finalizers") or [])
        if not base.deleting(owner):
            return
        uid = base.uid(owner)
        dependents = self._dependents(uid)
        if ORPHAN in finalizers:
            for dep_resource, dep in dependents:
                new = copy.deepcopy(dep)
                new["metadata"]["ownerReferences"] = [
                    r for r in base.meta(dep).get("ownerReferences") or [] if r.get("uid") != uid
                ]
                if not new["metadata"]["ownerReferences"]:
                    del new["metadata"]["ownerReferences"]
                try:
                    self.api.update(
                        dep_resource, new, base.meta(dep).get("namespace") or None, user=self.user
                    )
                except client.ApiError as exc:
                    if not client.is_not_found(exc):
                        raise
            self._remove_finalizer(resource, key, owner, ORPHAN)
            return
        if FOREGROUND in finalizers:
            blocking = 0
            for dep_resource, dep in dependents:
                ref: dict[str, Any] = next(
                    (r for r in base.meta(dep).get("ownerReferences") or [] if r.get("uid") == uid), {}
                )
                if ref.get("blockOwnerDeletion"):
                    blocking += 1
                if base.deleting(dep):
                    continue
                try:
                    self.api.delete(
                        dep_resource,
                        str(base.meta(dep).get("name", "")),
                        base.meta(dep).get("namespace") or None,
                        propagation="Foreground",
                        user=self.user,
                    )
                except client.ApiError as exc:
                    if not client.is_not_found(exc):
                        raise
            if blocking:
                return  # each dependent's DELETED event brings this owner back
            self._remove_finalizer(resource, key, owner, FOREGROUND)

    def _remove_finalizer(self, resource: str, key: str, owner: Obj, finalizer: str) -> None:
        new = copy.deepcopy(owner)
        new["metadata"]["finalizers"] = [
            f for f in base.meta(owner).get("finalizers") or [] if f != finalizer
        ]
        ns, _ = split_key(key)
        try:
            self.api.update(resource, new, ns or None, user=self.user)
        except client.ApiError as exc:
            if not client.is_not_found(exc):
                raise
