"""Deletes: preconditions, finalizers and ``deletionTimestamp``, propagation policies, namespaces, collections."""

from __future__ import annotations

import builtins
from typing import Any

from berth.cluster import crds, objmeta
from berth.cluster import errors as E
from berth.cluster.api.base import ns_finalizers
from berth.cluster.api.write import Writer
from berth.cluster.errors import ApiError
from berth.cluster.resources import ResourceType
from berth.kube.objects import Obj


class Deleter(Writer):
    """``delete`` and ``deletecollection``."""

    def do_delete(
        self,
        rt: ResourceType,
        name: str,
        namespace: str | None,
        *,
        propagation: str | None = None,
        dry_run: bool = False,
        preconditions: dict[str, Any] | None = None,
        version: str | None = None,
    ) -> Obj:
        if "delete" not in rt.verbs:
            raise E.method_not_allowed("delete", rt.resource)
        if propagation not in (None, "", "Background", "Foreground", "Orphan"):
            raise E.invalid(
                "DeleteOptions",
                "",
                [
                    E.not_supported(
                        "propagationPolicy", propagation, ["Foreground", "Background", "Orphan", "nil"]
                    )
                ],
                "meta.k8s.io",
            )
        ns = self._ns_key(rt, namespace) if rt.namespaced else ""
        with self.store.locked():
            cur = self._load(rt, name, ns)
            meta = objmeta.meta_of(cur)
            for key, label in (("uid", "UID"), ("resourceVersion", "ResourceVersion")):
                want = (preconditions or {}).get(key)
                if want and str(want) != str(meta.get(key)):
                    raise E.conflict(
                        rt.plural,
                        rt.group,
                        name,
                        f"Precondition failed: {label} in precondition: {want}, {label} in object meta: {meta.get(key)}",
                    )
            if dry_run:
                return self.present(rt, cur, version)
            if rt.resource == "customresourcedefinitions.apiextensions.k8s.io":
                crds.delete_custom_objects(self, cur)
            if rt.resource == "namespaces":
                if name in ("default", "kube-system", "kube-public"):
                    raise E.forbidden("namespaces", "", name, "this namespace may not be deleted")
                if meta.get("deletionTimestamp"):
                    return self.present(rt, cur, version)
                new = objmeta.copy_obj(cur)
                objmeta.meta_of(new)["deletionTimestamp"] = self.now_text()
                objmeta.meta_of(new)["deletionGracePeriodSeconds"] = 0
                new.setdefault("status", {})["phase"] = "Terminating"
                if not ns_finalizers(rt, new) and not objmeta.meta_of(new).get("finalizers"):
                    self.store.remove(rt.resource, "", name, new)
                else:
                    self.store.put(rt.resource, "", name, new, "MODIFIED")
                return self.present(rt, new, version)
            finalizers = list(meta.get("finalizers") or [])
            if propagation in ("Foreground", "Orphan") and self._has_dependents(meta.get("uid")):
                fin = "foregroundDeletion" if propagation == "Foreground" else "orphan"
                if fin not in finalizers:
                    finalizers.append(fin)
            if meta.get("deletionTimestamp"):
                if finalizers != list(meta.get("finalizers") or []):
                    new = objmeta.copy_obj(cur)
                    objmeta.meta_of(new)["finalizers"] = finalizers
                    self.store.put(rt.resource, ns, name, new, "MODIFIED")
                    return self.present(rt, new, version)
                return self.present(rt, cur, version)
            if finalizers:
                new = objmeta.copy_obj(cur)
                nm = objmeta.meta_of(new)
                nm["finalizers"] = finalizers
                nm["deletionTimestamp"] = self.now_text()
                nm["deletionGracePeriodSeconds"] = 0
                self.store.put(rt.resource, ns, name, new, "MODIFIED")
                return self.present(rt, new, version)
            final = objmeta.copy_obj(cur)
            self.store.remove(rt.resource, ns, name, final)
            if rt.resource == "customresourcedefinitions.apiextensions.k8s.io":
                crds.removed(self, final)
            return self.present(rt, final, version)

    def _has_dependents(self, uid: Any) -> bool:
        if not uid:
            return False
        needle = f'"uid":"{uid}"'
        for resource in self.store.resources():
            entries, _ = self.store.list(resource)
            for _ns, _n, (_rv, text) in entries:
                if needle in text and '"ownerReferences"' in text:
                    for o in (objmeta.loads(text).get("metadata") or {}).get("ownerReferences") or []:
                        if o.get("uid") == uid:
                            return True
        return False

    def delete_collection(
        self,
        rt: ResourceType,
        namespace: str | None,
        label_selector: str = "",
        field_selector: str = "",
        *,
        propagation: str | None = None,
        dry_run: bool = False,
    ) -> builtins.list[Obj]:
        if "deletecollection" not in rt.verbs:
            raise E.method_not_allowed("deletecollection", rt.resource)
        res = self.do_list(rt, namespace, label_selector, field_selector)
        out = []
        for item in res.items:
            m = item.get("metadata") or {}
            try:
                out.append(
                    self.do_delete(
                        rt, str(m.get("name")), m.get("namespace"), propagation=propagation, dry_run=dry_run
                    )
                )
            except ApiError as exc:
                if exc.code != 404:
                    raise
        return out
