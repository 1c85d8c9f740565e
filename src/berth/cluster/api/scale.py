"""The ``scale`` subresource: the ``autoscaling/v1 Scale`` view of a workload or a CRD with a scale
subresource, and writes to it (update or patch), which change only the replica count."""

from __future__ import annotations

from typing import Any

from berth.cluster import crds, objmeta
from berth.cluster import errors as E
from berth.cluster.api import fields
from berth.cluster.api.base import DEFAULT_USER
from berth.cluster.api.patching import Patcher
from berth.cluster.resources import ResourceType
from berth.kube.objects import Obj


class Scaler(Patcher):
    """Routes ``scale`` updates and patches here; every other write goes on to :class:`Patcher`."""

    def scale_of(self, rt: ResourceType, obj: Obj) -> Obj:
        """The ``autoscaling/v1 Scale`` view of a scalable object."""
        spec = obj.get("spec") or {}
        status = obj.get("status") or {}
        meta = obj.get("metadata") or {}
        selector = ""
        if rt.custom:
            return crds.scale_of(self, rt, obj)
        sel = spec.get("selector")
        if isinstance(sel, dict):
            if rt.resource == "replicationcontrollers":
                selector = ",".join(f"{k}={v}" for k, v in sorted(sel.items()))
            else:
                parts = [f"{k}={v}" for k, v in sorted((sel.get("matchLabels") or {}).items())]
                for expr in sel.get("matchExpressions") or []:
                    op = expr.get("operator")
                    vals = ",".join(expr.get("values") or [])
                    if op == "In":
                        parts.append(f"{expr['key']} in ({vals})")
                    elif op == "NotIn":
                        parts.append(f"{expr['key']} notin ({vals})")
                    elif op == "Exists":
                        parts.append(str(expr["key"]))
                    elif op == "DoesNotExist":
                        parts.append(f"!{expr['key']}")
                selector = ",".join(parts)
        return {
            "kind": "Scale",
            "apiVersion": "autoscaling/v1",
            "metadata": {
                k: meta[k]
                for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                if k in meta
            },
            "spec": {"replicas": int(spec.get("replicas") or 0)},
            "status": {"replicas": int(status.get("replicas") or 0), "selector": selector},
        }

    def get_scale(self, rt: ResourceType, name: str, namespace: str | None) -> Obj:
        if "scale" not in rt.subresources:
            raise E.path_not_found()
        return self.scale_of(rt, self._load(rt, name, namespace))

    def _update_scale(
        self,
        rt: ResourceType,
        scale: Obj,
        namespace: str | None,
        name: str | None,
        *,
        user: str,
        dry_run: bool,
        manager: str | None,
    ) -> Obj:
        if "scale" not in rt.subresources:
            raise E.path_not_found()
        meta = scale.get("metadata") or {}
        name = name or str(meta.get("name") or "")
        with self.store.locked():
            cur = self._load(rt, name, namespace)
            want_rv = str(meta.get("resourceVersion") or "")
            if want_rv and want_rv != str(cur["metadata"]["resourceVersion"]):
                raise E.conflict(rt.plural, rt.group, name)
            replicas = (scale.get("spec") or {}).get("replicas")
            if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
                raise E.invalid(
                    "Scale",
                    name,
                    [E.invalid_value("spec.replicas", replicas, "must be greater than or equal to 0")],
                    "autoscaling",
                )
            new = objmeta.copy_obj(cur)
            if rt.custom:
                crds.set_scale_replicas(self, rt, new, replicas)
            else:
                new.setdefault("spec", {})["replicas"] = replicas
            out = self._commit_update(
                rt, cur, new, user=user, dry_run=dry_run, manager=manager, subresource="scale"
            )
            return self.scale_of(rt, out)

    def do_update(
        self,
        rt: ResourceType,
        obj: Obj,
        namespace: str | None,
        *,
        subresource: str | None = None,
        user: str = DEFAULT_USER,
        dry_run: bool = False,
        manager: str | None = None,
        version: str | None = None,
        name: str | None = None,
        field_validation: str = "",
    ) -> Obj:
        if subresource == "scale" and isinstance(obj, dict):
            return self._update_scale(rt, obj, namespace, name, user=user, dry_run=dry_run, manager=manager)
        return super().do_update(
            rt,
            obj,
            namespace,
            subresource=subresource,
            user=user,
            dry_run=dry_run,
            manager=manager,
            version=version,
            name=name,
            field_validation=field_validation,
        )

    def do_patch(
        self,
        rt: ResourceType,
        name: str,
        patch: Any,
        patch_type: str,
        namespace: str | None,
        *,
        subresource: str | None = None,
        manager: str | None = None,
        force: bool = False,
        user: str = DEFAULT_USER,
        dry_run: bool = False,
        version: str | None = None,
        field_validation: str = "",
    ) -> tuple[Obj, bool]:
        if subresource != "scale":
            return super().do_patch(
                rt,
                name,
                patch,
                patch_type,
                namespace,
                subresource=subresource,
                manager=manager,
                force=force,
                user=user,
                dry_run=dry_run,
                version=version,
                field_validation=field_validation,
            )
        self._check_patch_request(rt, patch_type, manager, force)
        ns = self._ns_key(rt, namespace) if rt.namespaced else ""
        with self.store.locked():
            entry = self.store.get(rt.resource, ns, name)
            if entry is None:
                raise E.not_found(rt.plural, rt.group, name)
            if "scale" not in rt.subresources:
                raise E.path_not_found()
            view = self.scale_of(rt, objmeta.loads(entry[1]))
            patched_view = fields.patch_object(self, rt, view, patch, patch_type, manager, force, scale=True)
            return (
                self._update_scale(
                    rt, patched_view, namespace, name, user=user, dry_run=dry_run, manager=manager
                ),
                False,
            )
