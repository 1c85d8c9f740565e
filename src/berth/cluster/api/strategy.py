"""Per-kind strategy, as upstream's registry strategies: status reset and defaults on create, what an update may
not change, the kind-specific work (selectors, cluster IPs, tokens, CRD status), and the object's own validation.

These run in the write path around the admission chain: :func:`default_for_create` before it,
:func:`prepare_create` / :func:`prepare_update` and :func:`validate` after it.
"""

from __future__ import annotations

import copy
import random

from berth.cluster import auth, crds, decoding, defaults, objmeta, validation
from berth.cluster.host import ApiHost
from berth.cluster.resources import ResourceType
from berth.kube.objects import Obj


def decode_check(rt: ResourceType, obj: Obj, field_validation: str = "") -> None:
    """400 for a built-in body whose JSON does not fit the Go types; unknown and duplicate fields are a 400 under
    ``fieldValidation=Strict``, a ``Warning`` header each under ``Warn`` (the default), nothing under ``Ignore``."""
    if rt.custom:
        return
    err, has_unknown = validation.decode(obj)
    if err is not None:
        raise err
    strict = field_validation == "Strict"
    unknown = validation.unknown_fields(obj, drop=not strict) if has_unknown else []
    if field_validation == "Ignore":
        return
    problems = validation.strict_problems(unknown)
    if not problems:
        return
    if strict:
        raise validation.strict_decoding_error(problems)
    decoding.warn_problems(problems)


def drop_nulls(rt: ResourceType, obj: Obj) -> None:
    """A created or replaced built-in body's ``null`` values as Go decodes them (gone, or a map's zero value);
    custom objects keep theirs for their schema's pruning and ``nullable``."""
    if not rt.custom:
        validation.drop_nulls(obj)


def validate(rt: ResourceType, obj: Obj, old: Obj | None) -> None:
    """Raise 422 Invalid with every field problem of a built-in ``obj`` (``old`` is the stored object on update;
    custom objects are validated against their CRD's schema by :func:`prepare_create` / :func:`prepare_update`)."""
    if not rt.custom:
        problems = validation.validate_object(obj, rt.namespaced)
        if old is not None:
            problems = [p for p in problems if not p.field.startswith("metadata.name")]
        validation.raise_if_invalid(obj, problems)


def default_for_create(rt: ResourceType, obj: Obj) -> None:
    """What a created built-in object starts from before admission: its status reset as the kind's strategy does
    (``PrepareForCreate``), then the kind's defaults (upstream applies them while decoding)."""
    if rt.custom:
        return
    res = rt.resource
    if res in ("pods",):
        obj.pop("status", None)
    elif rt.group in ("apps", "batch", "policy", "autoscaling") or res in (
        "replicationcontrollers",
        "services",
        "persistentvolumeclaims",
        "customresourcedefinitions.apiextensions.k8s.io",
    ):
        obj["status"] = {}
        if res == "services":
            obj["status"] = {"loadBalancer": {}}
    defaults.apply(res, obj)


def prepare_create(api: ApiHost, rt: ResourceType, obj: Obj, user: str, field_validation: str = "") -> None:
    """The kind's own create-time work once the object has its uid: a custom object defaulted, pruned and checked
    against its CRD version's schema; a Job's generated selector, a Service's cluster IP, a legacy token Secret's
    token, a CRD's validation and status, a CSR's requester."""
    res = rt.resource
    if rt.custom:
        sent = crds.prepare_custom(api, rt, obj, None, field_validation)
        if "status" in rt.subresources_at(sent):
            obj.pop("status", None)
        return
    if res == "jobs.batch":
        defaults.job_selector(obj)
    elif res == "services":
        allocate_service(api, obj)
    elif res == "secrets":
        auth.fill_service_account_secret(api, obj)
    elif res == "customresourcedefinitions.apiextensions.k8s.io":
        crds.prepare_crd(api, obj, None)
    elif res == "certificatesigningrequests.certificates.k8s.io":
        obj["status"] = {}  # the requester is recorded by the server, never taken from the body
        obj.setdefault("spec", {})["username"] = user


def prepare_update(
    api: ApiHost, rt: ResourceType, cur: Obj, new: Obj, subresource: str | None, field_validation: str = ""
) -> None:
    res = rt.resource
    if rt.custom:
        crds.prepare_custom(api, rt, new, cur, field_validation)
        return
    if subresource in (None, ""):
        defaults.apply(res, new)
        if res == "pods":
            new["status"] = copy.deepcopy(cur.get("status") or {})
            # spec is mostly immutable upstream; keep the scheduler-set fields.
            for k in ("nodeName", "priority"):
                if k in (cur.get("spec") or {}):
                    new.setdefault("spec", {})[k] = cur["spec"][k]
        elif res == "services":
            spec, old = new.setdefault("spec", {}), cur.get("spec") or {}
            for k in ("clusterIP", "clusterIPs"):
                if old.get(k) and not spec.get(k):
                    spec[k] = old[k]
            if not spec.get("clusterIP"):
                allocate_service(api, new)
        elif res == "jobs.batch":
            cspec = cur.get("spec") or {}
            if "selector" in cspec:
                new.setdefault("spec", {}).setdefault("selector", cspec["selector"])
            tl = ((cspec.get("template") or {}).get("metadata") or {}).get("labels") or {}
            labels = new.setdefault("spec", {}).setdefault("template", {}).setdefault("metadata", {})
            for k, v in tl.items():
                labels.setdefault("labels", {}).setdefault(k, v)
        elif res == "customresourcedefinitions.apiextensions.k8s.io":
            crds.prepare_crd(api, new, cur)
        elif res == "namespaces":
            defaults.namespace(new)


def allocate_service(api: ApiHost, obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    if spec.get("type") == "ExternalName":
        return
    if not spec.get("clusterIP"):
        taken: set[str] = set()
        entries, _ = api.store.list("services")
        for _ns, _n, (_rv, text) in entries:
            taken.add(str((objmeta.loads(text).get("spec") or {}).get("clusterIP", "")))
        meta = objmeta.meta_of(obj)
        spec["clusterIP"] = defaults.cluster_ip(str(meta.get("namespace")), str(meta.get("name")), taken)
    spec.setdefault("clusterIPs", [spec["clusterIP"]])
    if spec.get("clusterIP") == "None":
        spec["clusterIPs"] = ["None"]
    if spec.get("type") in ("NodePort", "LoadBalancer"):
        used = 30000 + random.randrange(0, 2000)
        for i, p in enumerate(spec.get("ports") or []):
            if isinstance(p, dict):
                p.setdefault("nodePort", used + i)
