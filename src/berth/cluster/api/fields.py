"""managedFields and patches: what a write means field by field (the engines are pure: :mod:`berth.cluster.patch`
does the arithmetic, this module hands it the schema of the object's kind or CRD version)."""

from __future__ import annotations

from typing import Any

from berth.cluster import crds, patch, schema
from berth.cluster import errors as E
from berth.cluster.host import ApiHost
from berth.cluster.resources import ResourceType
from berth.kube.objects import Obj


def node_for(api: ApiHost, rt: ResourceType, obj: Obj) -> schema.Node:
    """The schema node for an object: the built-in table, or the CRD version's openAPIV3Schema."""
    if rt.custom:
        crd = crds.crd_of(api, rt)
        version = str(obj.get("apiVersion", "")).rpartition("/")[2] or rt.version
        ver = crds.version_of(crd or {}, version) or crds.version_of(crd or {}, rt.version)
        return schema.from_openapi((ver.get("schema") or {}).get("openAPIV3Schema"))
    return schema.for_kind(rt.api_version, rt.kind) or schema.ANY


def track_update(
    api: ApiHost, rt: ResourceType, old: Obj | None, new: Obj, manager: str, subresource: str, now: str
) -> None:
    """Record an ``Update`` managedFields entry for ``manager`` on ``new`` (in place)."""
    meta = new.get("metadata")
    if old is None and not subresource and type(meta) is dict and not meta.get("managedFields"):
        # A create: the entry is built straight into ``new`` (record_update would return a copy to take it from).
        entries = patch.created_managed_fields(
            new,
            manager,
            now=now,
            api_version=rt.api_version,
            node=node_for(api, rt, new),
            status_subresource="status" in rt.subresources,
        )
        if entries:
            meta["managedFields"] = entries
        else:
            meta.pop("managedFields", None)
        return
    out = patch.record_update(
        old,
        new,
        manager,
        now=now,
        api_version=rt.api_version,
        node=node_for(api, rt, new),
        subresource=subresource,
        status_subresource="status" in rt.subresources,
    )
    meta = new.setdefault("metadata", {})
    managed = (out.get("metadata") or {}).get("managedFields")
    if managed:
        meta["managedFields"] = managed
    else:
        meta.pop("managedFields", None)


def patch_object(
    api: ApiHost,
    rt: ResourceType,
    base: Obj,
    body: Any,
    patch_type: str,
    manager: str | None,
    force: bool,
    *,
    subresource: str = "",
    scale: bool = False,
) -> Any:
    """``base`` with ``body`` applied (``patch_type``: json, merge, strategic, apply). Raises ApiError."""
    if patch_type == "json":
        return patch.json_patch(base, body)
    if patch_type == "merge":
        return patch.merge_patch(base, body)
    if patch_type == "strategic":
        if scale:
            return patch.merge_patch(base, patch.strip_directives(body))
        return patch.strategic_merge_patch(base, body, node_for(api, rt, base))
    if not isinstance(body, dict):
        raise E.bad_request("apply configuration must be a JSON or YAML object")
    return patch.server_side_apply(
        base,
        body,
        manager or "",
        now=api.now_text(),
        force=force,
        api_version=str(body.get("apiVersion") or rt.api_version),
        node=None if scale else node_for(api, rt, base),
        subresource=subresource,
        status_subresource="status" in rt.subresources,
    )


def apply_fields_for_create(
    api: ApiHost, rt: ResourceType, created: Obj, body: Obj, manager: str
) -> list[Any]:
    """The managedFields of an object created by server-side apply: one ``Apply`` entry for ``manager``."""
    out = patch.server_side_apply(
        None,
        body,
        manager,
        now=api.now_text(),
        api_version=str(body.get("apiVersion") or rt.api_version),
        node=node_for(api, rt, created),
        status_subresource="status" in rt.subresources,
    )
    return list((out.get("metadata") or {}).get("managedFields") or [])
