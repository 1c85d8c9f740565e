"""The seams between the API's write path and the pure engines: validation, patching, managedFields, reviews.

:mod:`berth.cluster.api` calls only this module for "what does this write mean": name and schema validation
(``validation.py``), the four patch types and server-side apply (``patch.py``), managedFields bookkeeping for
non-apply writes, and the create-only review kinds (access reviews via ``rbac.py``, token reviews via
``auth.py``, legacy ``bindings``). Keeping the seam in one place means the engines stay pure and the API code
stays about storage semantics.
"""

from __future__ import annotations

import copy
import importlib
import re
from typing import TYPE_CHECKING, Any

from berth.cluster import errors as E
from berth.cluster.errors import ApiError
from berth.cluster.resources import ResourceType
from berth.kube.objects import Obj

if TYPE_CHECKING:
    from berth.cluster.api import Api

_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
# Kinds whose names are path segments upstream (anything but "/" "%" "." ".."), not DNS subdomains.
_PATH_SEGMENT_NAMES = {
    "roles.rbac.authorization.k8s.io",
    "clusterroles.rbac.authorization.k8s.io",
    "rolebindings.rbac.authorization.k8s.io",
    "clusterrolebindings.rbac.authorization.k8s.io",
    "nodes",
    "events",
    "events.events.k8s.io",
}
_DNS_LABEL_NAMES = {"namespaces", "services"}


_MODULES: dict[str, Any] = {}


def _optional(name: str) -> Any:
    """A sibling engine module if it has landed, else None (lets the server run before every engine exists)."""
    if name not in _MODULES:
        try:
            _MODULES[name] = importlib.import_module(f"berth.cluster.{name}")
        except ImportError:
            _MODULES[name] = None
    return _MODULES[name]


# ---- validation -------------------------------------------------------------------------------------------------


def _name_errors(rt: ResourceType, name: str) -> list[E.FieldError]:
    if not name:
        return [E.required("metadata.name", "name or generateName is required")]
    if rt.resource in _PATH_SEGMENT_NAMES:
        if name in (".", "..") or "/" in name or "%" in name:
            return [
                E.invalid_value(
                    "metadata.name", name, 'may not contain "/" or "%" and may not be "." or ".."'
                )
            ]
        return []
    if rt.resource in _DNS_LABEL_NAMES:
        if len(name) > 63 or not _DNS1123_LABEL.match(name):
            return [
                E.invalid_value(
                    "metadata.name",
                    name,
                    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
                    "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
                    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                )
            ]
        return []
    if len(name) > 253 or not _DNS1123_SUBDOMAIN.match(name):
        return [
            E.invalid_value(
                "metadata.name",
                name,
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
                "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation "
                "is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            )
        ]
    return []


def validate(api: Api, rt: ResourceType, obj: Obj, old: Obj | None) -> None:
    """Raise 422 Invalid with every field problem of ``obj`` (``old`` is the stored object on update)."""
    mod = _optional("validation")
    if mod is not None and hasattr(mod, "validate_object") and not rt.custom:
        problems = mod.validate_object(obj, rt.namespaced)
        if old is not None:
            problems = [p for p in problems if not str(getattr(p, "field", "")).startswith("metadata.name")]
        mod.raise_if_invalid(obj, problems)
        return
    name = str((obj.get("metadata") or {}).get("name") or "")
    errors = _name_errors(rt, name) if old is None else []
    if errors:
        raise E.invalid(rt.kind, name, errors, rt.group)


# ---- managedFields for non-apply writes ------------------------------------------------------------------------


def _fieldset(value: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if isinstance(value, dict):
        for k, v in value.items():
            out[f"f:{k}"] = _fieldset(v) if isinstance(v, dict) and v else {}
    return out


def _object_fields(obj: Obj) -> dict[str, Any]:
    body = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind", "metadata", "status")}
    fs = _fieldset(body)
    meta = obj.get("metadata") or {}
    mfs: dict[str, Any] = {}
    for key in ("labels", "annotations"):
        if meta.get(key):
            mfs[f"f:{key}"] = {f"f:{k}": {} for k in meta[key]}
    if meta.get("finalizers"):
        mfs["f:finalizers"] = {f'v:"{f}"': {} for f in meta["finalizers"]}
    if meta.get("ownerReferences"):
        mfs["f:ownerReferences"] = {f'k:{{"uid":"{o.get("uid")}"}}': {} for o in meta["ownerReferences"]}
    if mfs:
        fs["f:metadata"] = mfs
    return fs


def node_for(api: Api, rt: ResourceType, obj: Obj) -> Any:
    """The schema node (``schema.Node``) for an object: built-in table or the CRD version's openAPIV3Schema."""
    sch = _optional("schema")
    if sch is None:
        return None
    if rt.custom:
        from berth.cluster import crds

        crd = crds.crd_of(api, rt)
        version = str(obj.get("apiVersion", "")).rpartition("/")[2] or rt.version
        ver = crds.version_of(crd or {}, version) or crds.version_of(crd or {}, rt.version)
        return sch.from_openapi((ver.get("schema") or {}).get("openAPIV3Schema"))
    return sch.for_kind(rt.api_version, rt.kind) or sch.ANY


def track_update(
    api: Api, rt: ResourceType, old: Obj | None, new: Obj, manager: str, subresource: str, now: str
) -> None:
    """Record an ``Update`` managedFields entry for ``manager`` on ``new`` (in place)."""
    mod = _optional("patch")
    if mod is not None and hasattr(mod, "record_update"):
        out = mod.record_update(
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
        return
    meta = new.setdefault("metadata", {})
    entries = [e for e in (meta.get("managedFields") or []) if isinstance(e, dict)]
    if old is not None and _strip_meta(old) == _strip_meta(new):
        meta["managedFields"] = entries
        if not entries:
            meta.pop("managedFields", None)
        return
    src = new if subresource != "status" else {"status": new.get("status")}
    fields = (
        _object_fields(src) if subresource != "status" else {"f:status": _fieldset(new.get("status") or {})}
    )
    entry = {
        "manager": manager,
        "operation": "Update",
        "apiVersion": rt.api_version,
        "time": now,
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
    }
    if subresource:
        entry["subresource"] = subresource
    entries = [
        e
        for e in entries
        if not (
            e.get("manager") == manager
            and e.get("operation") == "Update"
            and e.get("subresource", "") == subresource
        )
    ]
    entries.append(entry)
    meta["managedFields"] = entries


def _strip_meta(obj: Obj) -> Obj:
    out = dict(obj)
    m = dict(out.get("metadata") or {})
    for k in ("resourceVersion", "managedFields", "generation"):
        m.pop(k, None)
    out["metadata"] = m
    return out


# ---- patching -----------------------------------------------------------------------------------------------------


def _merge_patch(target: Any, patch: Any) -> Any:
    from berth.cluster.api import merge_patch

    return merge_patch(target, patch)


def patch_object(
    api: Api,
    rt: ResourceType,
    base: Obj,
    patch: Any,
    patch_type: str,
    manager: str | None,
    force: bool,
    *,
    subresource: str = "",
    scale: bool = False,
) -> Any:
    """``base`` with ``patch`` applied (``patch_type``: json, merge, strategic, apply). Raises ApiError."""
    from berth.cluster import api as api_mod

    now = api_mod.format_time(api.clock())
    mod = _optional("patch")
    if mod is not None and hasattr(mod, "server_side_apply"):
        node = None if scale else node_for(api, rt, base)
        if patch_type == "json":
            return mod.json_patch(base, patch)
        if patch_type == "merge":
            return mod.merge_patch(base, patch)
        if patch_type == "strategic":
            if scale:
                return mod.merge_patch(base, mod._strip_directives(patch))
            return mod.strategic_merge_patch(base, patch, node)
        if not isinstance(patch, dict):
            raise E.bad_request("apply configuration must be a JSON or YAML object")
        return mod.server_side_apply(
            base,
            patch,
            manager or "",
            now=now,
            force=force,
            api_version=str(patch.get("apiVersion") or rt.api_version),
            node=node,
            subresource=subresource,
            status_subresource="status" in rt.subresources,
        )
    try:
        if patch_type == "json":
            return api_mod.json_patch(base, patch)
        if not isinstance(patch, dict):
            raise E.bad_request("the patch must be a JSON object")
        if patch_type == "merge":
            return _merge_patch(base, patch)
        if patch_type == "strategic":
            return _merge_patch(base, api_mod._strip_directives(patch))
        # apply (fallback: merge the applied configuration, record an Apply entry)
        applied = copy.deepcopy(patch)
        if subresource != "status":
            applied.pop("status", None)
        (applied.get("metadata") or {}).pop("managedFields", None)
        out = _merge_patch(base, applied)
        _record_apply(rt, out, applied, manager or "", subresource)
        return out
    except ValueError as exc:
        raise ApiError(422, E.Reason.INVALID, str(exc)) from exc


def _record_apply(rt: ResourceType, obj: Obj, applied: Obj, manager: str, subresource: str) -> None:
    from datetime import UTC, datetime

    from berth.cluster.api import format_time

    meta = obj.setdefault("metadata", {})
    entries = [
        e
        for e in (meta.get("managedFields") or [])
        if not (e.get("manager") == manager and e.get("operation") == "Apply")
    ]
    entry: dict[str, Any] = {
        "manager": manager,
        "operation": "Apply",
        "apiVersion": rt.api_version,
        "time": format_time(datetime.now(UTC)),
        "fieldsType": "FieldsV1",
        "fieldsV1": _object_fields(applied),
    }
    if subresource:
        entry["subresource"] = subresource
    entries.append(entry)
    meta["managedFields"] = entries


def apply_fields_for_create(api: Api, rt: ResourceType, created: Obj, patch: Obj, manager: str) -> list[Any]:
    """The managedFields of an object created by server-side apply: one ``Apply`` entry for ``manager``."""
    from berth.cluster import api as api_mod

    mod = _optional("patch")
    if mod is not None and hasattr(mod, "server_side_apply"):
        live = copy.deepcopy(created)
        live.setdefault("metadata", {}).pop("managedFields", None)
        out = mod.server_side_apply(
            None,
            patch,
            manager,
            now=api_mod.format_time(api.clock()),
            api_version=str(patch.get("apiVersion") or rt.api_version),
            node=node_for(api, rt, created),
            status_subresource="status" in rt.subresources,
        )
        return list((out.get("metadata") or {}).get("managedFields") or [])
    tmp: Obj = {"metadata": {}}
    _record_apply(rt, tmp, patch, manager, "")
    return list(tmp["metadata"]["managedFields"])


# ---- create-only review kinds -------------------------------------------------------------------------------------


def review(api: Api, rt: ResourceType, obj: Obj, namespace: str | None, user: str) -> Obj:
    """Answer a review kind (never stored): access reviews, token reviews, self-subject reviews, bindings."""
    from berth.cluster import auth

    obj.setdefault("apiVersion", rt.api_version)
    obj.setdefault("kind", rt.kind)
    obj.setdefault("metadata", {})
    if rt.resource == "bindings":
        pod = str(obj["metadata"].get("name") or "")
        api_bind(api, namespace or "", pod, obj, user)
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
    ident = auth.identity_of(api, user)
    if rt.resource == "tokenreviews.authentication.k8s.io":
        return auth.token_review(api, obj)
    if rt.resource == "selfsubjectreviews.authentication.k8s.io":
        obj["status"] = {"userInfo": ident.user_info()}
        return obj
    spec = obj.get("spec") or {}
    if rt.resource == "selfsubjectrulesreviews.authorization.k8s.io":
        ns = str(spec.get("namespace") or namespace or "")
        obj["status"] = auth.rules_for(api, ident, ns)
        return obj
    if rt.resource in (
        "subjectaccessreviews.authorization.k8s.io",
        "localsubjectaccessreviews.authorization.k8s.io",
    ):
        ident = auth.Identity(
            str(spec.get("user") or ""), tuple(spec.get("groups") or ()), str(spec.get("uid") or "")
        )
    if rt.resource == "localsubjectaccessreviews.authorization.k8s.io":
        attrs = spec.get("resourceAttributes")
        if isinstance(attrs, dict):
            attrs["namespace"] = namespace or attrs.get("namespace", "")
    obj["status"] = auth.review(api, ident, spec)
    return obj


def api_bind(api: Api, namespace: str, pod_name: str, binding: Obj, user: str, dry_run: bool = False) -> None:
    """Bind a pod to a node: set ``spec.nodeName`` and condition ``PodScheduled=True``; 409 if already bound."""
    from berth.cluster.api import format_time

    target = binding.get("target") or {}
    node = str(target.get("name") or "")
    if not node:
        raise E.invalid("Binding", pod_name, [E.required("target.name", "")])
    rt = api.resource_type("pods")
    with api.store.locked():
        pod = api.do_get(rt, pod_name, namespace)
        spec = pod.setdefault("spec", {})
        if spec.get("nodeName"):
            raise E.conflict(
                "pods", "", pod_name, f'pod {pod_name} is already assigned to node "{spec["nodeName"]}"'
            )
        if (pod.get("metadata") or {}).get("deletionTimestamp"):
            raise E.conflict(
                "pods", "", pod_name, f"pod {pod_name} is being deleted, cannot be assigned to a host"
            )
        new = copy.deepcopy(pod)
        new["spec"]["nodeName"] = node
        status = new.setdefault("status", {})
        conds = [c for c in (status.get("conditions") or []) if c.get("type") != "PodScheduled"]
        conds.append(
            {
                "type": "PodScheduled",
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": format_time(api.clock()),
            }
        )
        status["conditions"] = conds
        ann = (binding.get("metadata") or {}).get("annotations")
        if ann:
            new["metadata"].setdefault("annotations", {}).update(ann)
        if dry_run:
            return
        api._commit_update(
            rt, pod, new, user=user, dry_run=False, manager=None, subresource="binding", track=False
        )
