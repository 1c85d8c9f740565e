"""Patches: JSON patch, merge patch, strategic merge patch and server-side apply (an apply may create)."""

from __future__ import annotations

from typing import Any

from berth.cluster import decoding, objmeta
from berth.cluster import errors as E
from berth.cluster.api import fields, pod_subresources, strategy
from berth.cluster.api.base import DEFAULT_USER
from berth.cluster.api.write import Writer
from berth.cluster.resources import ResourceType
from berth.kube.objects import Obj

PATCH_TYPES = ("json", "merge", "strategic", "apply")


class Patcher(Writer):
    """``patch`` on an object or its status / pod-spec subresources (``scale`` is :mod:`.scale`'s)."""

    def _check_patch_request(
        self, rt: ResourceType, patch_type: str, manager: str | None, force: bool
    ) -> None:
        """400/405/415/422 for a patch request that cannot be served, before anything is read."""
        if patch_type not in PATCH_TYPES:
            raise E.unsupported_media_type(
                [
                    "application/json-patch+json",
                    "application/merge-patch+json",
                    "application/strategic-merge-patch+json",
                    "application/apply-patch+yaml",
                ]
            )
        if "patch" not in rt.verbs:
            raise E.method_not_allowed("patch", rt.resource)
        if patch_type == "apply":
            if not manager:
                raise E.invalid(
                    "PatchOptions",
                    "",
                    [E.required("fieldManager", "is required for apply patch")],
                    "meta.k8s.io",
                )
        elif force:
            raise E.invalid(
                "PatchOptions",
                "",
                [E.forbidden_field("force", "may not be specified for non-apply patch")],
                "meta.k8s.io",
            )
        if patch_type == "strategic" and rt.custom:
            raise E.unsupported_media_type(
                "the body of the request was in an unknown format - accepted media types include: "
                "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
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
        """Apply a patch; returns (object, created) -- ``created`` only for server-side apply upserts."""
        self._check_patch_request(rt, patch_type, manager, force)
        ns = self._ns_key(rt, namespace) if rt.namespaced else ""
        with self.store.locked():
            entry = self.store.get(rt.resource, ns, name)
            if entry is None:
                if patch_type == "apply" and subresource in (None, ""):
                    if not isinstance(patch, dict):
                        raise E.bad_request("an apply patch must be a single object")
                    obj = objmeta.copy_obj(patch)
                    pm = objmeta.meta_of(obj)
                    if pm.get("name") and pm["name"] != name:
                        raise E.bad_request(
                            f"the name of the object ({pm['name']}) does not match the name on the URL ({name})"
                        )
                    pm["name"] = name
                    decoding.apply_strict_errors(field_validation)
                    obj.pop("status", None) if "status" in rt.subresources else None
                    (obj.get("metadata") or {}).pop("managedFields", None)
                    created = self.do_create(
                        rt,
                        obj,
                        namespace,
                        user=user,
                        dry_run=dry_run,
                        manager=manager,
                        version=version,
                        apply_patch=patch,
                        field_validation=field_validation,
                    )
                    return created, True
                raise E.not_found(rt.plural, rt.group, name)
            cur = objmeta.loads(entry[1])
            if subresource not in (None, "", "status", "approval", *pod_subresources.POD_SPEC_SUBRESOURCES):
                raise E.path_not_found()
            if subresource and subresource not in rt.subresources_at(version):
                raise E.path_not_found()
            base = objmeta.copy_obj(cur)
            if patch_type == "apply" and isinstance(patch, dict) and field_validation == "Strict":
                strategy.decode_check(rt, {**patch, "kind": rt.kind, "apiVersion": rt.api_version}, "Strict")
            new = fields.patch_object(
                self, rt, base, patch, patch_type, manager, force, subresource=subresource or ""
            )
            if not isinstance(new, dict):
                raise E.bad_request("the patch did not produce an object")
            if patch_type == "apply":
                decoding.apply_strict_errors(field_validation)
            else:  # the patched object decoded as upstream does: unknown fields dropped or refused
                decoding.patched(new)
                strategy.decode_check(rt, new, field_validation)
            nm = objmeta.meta_of(new)
            if str(nm.get("resourceVersion") or entry[0]) != str(entry[0]):
                raise E.conflict(rt.plural, rt.group, name)
            if nm.get("name") != name:
                raise E.bad_request(
                    f"the name of the object ({nm.get('name')}) does not match the name on the URL ({name})"
                )
            new = self._merge_subresource(rt, cur, new, subresource, version)
            out = self._commit_update(
                rt,
                cur,
                new,
                user=user,
                dry_run=dry_run,
                manager=manager,
                subresource=subresource,
                version=version,
                track=patch_type != "apply",
                field_validation=field_validation,
            )
            return out, False
