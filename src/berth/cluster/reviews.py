"""The create-only kinds that are answered, never stored: access reviews, token reviews, self-subject reviews and
the legacy ``bindings`` resource (upstream serves each from its own REST storage that has only ``Create``)."""

from __future__ import annotations

from berth.cluster import auth
from berth.cluster.host import ApiHost
from berth.cluster.resources import ResourceType
from berth.kube.objects import Obj


def review(api: ApiHost, rt: ResourceType, obj: Obj, namespace: str | None, user: str) -> Obj:
    """Answer a review kind (never stored): access reviews, token reviews, self-subject reviews, bindings."""
    obj.setdefault("apiVersion", rt.api_version)
    obj.setdefault("kind", rt.kind)
    obj.setdefault("metadata", {})
    if rt.resource == "bindings":
        pod = str(obj["metadata"].get("name") or "")
        api.bind(namespace or "", pod, obj, user)
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
