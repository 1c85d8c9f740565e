"""The seams between the API's write path and the pure engines: validation, patching, managedFields, reviews.

:mod:`berth.cluster.api` calls only this module for "what does this write mean": name and schema validation
(``validation.py``), the four patch types and server-side apply (``patch.py``), managedFields bookkeeping for
non-apply writes, and the create-only review kinds (access reviews via ``rbac.py``, token reviews via
``auth.py``, legacy ``bindings``). Keeping the seam in one place means the engines stay pure and the API code
stays about storage semantics.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from berth.cluster import errors as E
from berth.cluster import patch, schema, validation
from berth.cluster.resources import ResourceType
from berth.kube.objects import Obj

if TYPE_CHECKING:
    from berth.cluster.api import Api

# ---- validation -------------------------------------------------------------------------------------------------

_RBAC_WRITES = {
    "roles.rbac.authorization.k8s.io": "role",
    "clusterroles.rbac.authorization.k8s.io": "role",
    "rolebindings.rbac.authorization.k8s.io": "binding",
    "clusterrolebindings.rbac.authorization.k8s.io": "binding",
}


def decode_check(rt: ResourceType, obj: Obj, field_validation: str = "") -> None:
    """400 for a built-in body whose JSON does not fit the Go types, and for unknown fields under
    ``fieldValidation=Strict`` (``Warn``/``Ignore`` accept them, as kubectl needs nothing more)."""
    if rt.custom:
        return
    err = validation.decode_error(obj)
    if err is not None:
        raise err
    if field_validation == "Strict":
        unknown = validation.unknown_fields(obj)
        if unknown:
            raise validation.strict_decoding_error(unknown)


def validate(api: Api, rt: ResourceType, obj: Obj, old: Obj | None, user: str = "") -> None:
    """Raise 422 Invalid with every field problem of ``obj`` (``old`` is the stored object on update), and 403
    when a non-admin writer would escalate privileges through an RBAC object."""
    if not rt.custom:
        problems = validation.validate_object(obj, rt.namespaced)
        if old is not None:
            problems = [p for p in problems if not p.field.startswith("metadata.name")]
        validation.raise_if_invalid(obj, problems)
    what = _RBAC_WRITES.get(rt.resource)
    if what and user:
        from berth.cluster import auth

        ident = auth.identity_of(api, user)
        if not ident.is_admin:
            az = auth.authorizer(api)
            ns = str((obj.get("metadata") or {}).get("namespace") or "")
            check = az.check_role_write if what == "role" else az.check_binding_write
            err = check(ident.name, list(ident.groups), obj, ns)
            if err is not None:
                raise err


# ---- managedFields and patches ---------------------------------------------------------------------------------


def node_for(api: Api, rt: ResourceType, obj: Obj) -> schema.Node:
    """The schema node for an object: the built-in table, or the CRD version's openAPIV3Schema."""
    if rt.custom:
        from berth.cluster import crds

        crd = crds.crd_of(api, rt)
        version = str(obj.get("apiVersion", "")).rpartition("/")[2] or rt.version
        ver = crds.version_of(crd or {}, version) or crds.version_of(crd or {}, rt.version)
        return schema.from_openapi((ver.get("schema") or {}).get("openAPIV3Schema"))
    return schema.for_kind(rt.api_version, rt.kind) or schema.ANY


def track_update(
    api: Api, rt: ResourceType, old: Obj | None, new: Obj, manager: str, subresource: str, now: str
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
    api: Api,
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
            return patch.merge_patch(base, patch._strip_directives(body))
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


def apply_fields_for_create(api: Api, rt: ResourceType, created: Obj, body: Obj, manager: str) -> list[Any]:
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


def _pod_ready(pod: Obj) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (pod.get("status") or {}).get("conditions") or []
    )


def _scaled(value: Any, total: int, round_up: bool) -> int:
    if isinstance(value, str) and value.endswith("%"):
        pct = int(value[:-1] or 0)
        whole, rest = divmod(pct * total, 100)
        return whole + (1 if round_up and rest else 0)
    return int(value or 0)


def check_eviction(api: Api, pod: Obj) -> None:
    """429 when evicting ``pod`` would break a PodDisruptionBudget (computed from the live pods, as the
    disruption controller would: healthy = Ready pods the budget selects)."""
    from berth.kube import selectors

    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed") or not _pod_ready(pod):
        return  # upstream lets unhealthy or finished pods go regardless of budgets
    meta = pod.get("metadata") or {}
    ns, labels = str(meta.get("namespace") or ""), meta.get("labels") or {}
    pdbs, _ = api.list("poddisruptionbudgets.policy", ns)
    pods: list[Obj] | None = None
    for pdb in pdbs:
        spec = pdb.get("spec") or {}
        if not selectors.label_selector_matches(spec.get("selector"), labels):
            continue
        if pods is None:
            pods, _ = api.list("pods", ns)
        selected = [
            p
            for p in pods
            if selectors.label_selector_matches(
                spec.get("selector"), (p.get("metadata") or {}).get("labels") or {}
            )
            and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
        ]
        expected, healthy = len(selected), sum(1 for p in selected if _pod_ready(p))
        if "minAvailable" in spec:
            desired = _scaled(spec["minAvailable"], expected, round_up=True)
        else:
            desired = expected - _scaled(spec.get("maxUnavailable", 0), expected, round_up=True)
        if healthy - 1 < desired:
            pdb_name = str((pdb.get("metadata") or {}).get("name"))
            raise E.ApiError(
                429,
                "TooManyRequests",
                "Cannot evict pod as it would violate the pod's disruption budget.",
                {
                    "causes": [
                        {
                            "reason": "DisruptionBudget",
                            "message": f"The disruption budget {pdb_name} needs {desired} healthy pods and has "
                            f"{healthy} currently",
                        }
                    ]
                },
            )


def api_bind(api: Api, namespace: str, pod_name: str, binding: Obj, user: str, dry_run: bool = False) -> None:
    """Bind a pod to a node: set ``spec.nodeName`` and condition ``PodScheduled=True``; 409 if already bound."""
    from berth.cluster.api import _copy

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
        new = _copy(pod)  # a JSON round trip: several times cheaper than copy.deepcopy on a whole pod
        new["spec"]["nodeName"] = node
        status = new.setdefault("status", {})
        conds = [c for c in (status.get("conditions") or []) if c.get("type") != "PodScheduled"]
        conds.append(
            {
                "type": "PodScheduled",
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": api.now_text(),
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
