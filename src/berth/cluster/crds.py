"""CustomResourceDefinitions: validating them, establishing them as live resource types, serving their objects.

When a CRD is stored, :func:`established` derives a :class:`ResourceType` from it and adds it to the registry, so
the very next discovery or OpenAPI request shows it and ``/apis/<group>/<version>/<plural>`` serves it. The CRD's
status gets ``acceptedNames``, ``storedVersions`` and the ``NamesAccepted`` / ``Established`` conditions that
``kubectl wait --for=condition=Established`` watches. Deleting a CRD deletes its objects first, then the type.

Versions use the ``None`` conversion strategy, like most CRDs: objects are stored once and served at any served
version with ``apiVersion`` rewritten. Custom objects get defaults from the version's ``openAPIV3Schema`` and are
validated by ``validation.py`` when it is available.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from berth.cluster import cel_rules, decoding, objmeta, validation
from berth.cluster import errors as E
from berth.cluster.host import ApiHost
from berth.cluster.resources import ResourceType, _sort_versions
from berth.cluster.store import Store
from berth.kube.objects import Obj

CRD_RESOURCE = "customresourcedefinitions.apiextensions.k8s.io"


def _now(api: ApiHost) -> str:
    return objmeta.format_time(api.clock())


def _subresources(version: dict[str, Any]) -> tuple[str, ...]:
    subs = version.get("subresources") or {}
    return tuple(name for name in ("status", "scale") if name in subs)


def resource_type(crd: Obj) -> ResourceType | None:
    """The served type for a CRD (None when no version is served): each served version with its own subresources;
    objects stored at the storage version."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    versions = [v for v in spec.get("versions") or [] if isinstance(v, dict) and v.get("served", True)]
    if not versions:
        return None
    ordered = _sort_versions([str(v.get("name")) for v in versions])
    preferred = next(v for v in versions if v.get("name") == ordered[0])
    storage = next(
        (str(v.get("name")) for v in spec.get("versions") or [] if isinstance(v, dict) and v.get("storage")),
        ordered[0],
    )
    kind = str(names.get("kind") or "")
    return ResourceType(
        group=str(spec.get("group") or ""),
        version=ordered[0],
        kind=kind,
        plural=str(names.get("plural") or ""),
        singular=str(names.get("singular") or kind.lower()),
        namespaced=spec.get("scope", "Namespaced") == "Namespaced",
        short_names=tuple(names.get("shortNames") or ()),
        categories=tuple(names.get("categories") or ()),
        subresources=_subresources(preferred),
        versions=tuple(ordered),
        generation=True,
        custom=True,
        list_kind=str(names.get("listKind") or f"{kind}List"),
        storage_version=storage if storage != ordered[0] else "",
        version_subresources=tuple((str(v.get("name")), _subresources(v)) for v in versions),
    )


def deprecation_warning(crd: Obj, version: str) -> str:
    """The Warning a request at a deprecated version gets (its ``deprecationWarning``, else upstream's default
    naming the preferred version), or ""."""
    ver = version_of(crd, version)
    if not ver.get("deprecated"):
        return ""
    if ver.get("deprecationWarning"):
        return str(ver["deprecationWarning"])
    spec = crd.get("spec") or {}
    group, kind = spec.get("group"), (spec.get("names") or {}).get("kind")
    text = f"{group}/{version} {kind} is deprecated"
    rt = resource_type(crd)
    if rt is not None and rt.version != version and not version_of(crd, rt.version).get("deprecated"):
        text += f"; use {group}/{rt.version} {kind}"
    return text


def crd_of(api: ApiHost, rt: ResourceType) -> Obj | None:
    entry = api.store.get(CRD_RESOURCE, "", f"{rt.plural}.{rt.group}")
    return json.loads(entry[1]) if entry else None


def version_of(crd: Obj, version: str) -> dict[str, Any]:
    for v in (crd.get("spec") or {}).get("versions") or []:
        if isinstance(v, dict) and v.get("name") == version:
            return v
    return {}


def load_all(api: ApiHost) -> None:
    """Register every stored, established CRD (at start-up)."""
    items, _ = api.store.list(CRD_RESOURCE)
    for _ns, _name, (_rv, text) in items:
        rt = resource_type(json.loads(text))
        if rt is not None:
            api.registry.add(rt)


def prepare_crd(api: ApiHost, crd: Obj, old: Obj | None) -> None:
    """Validate and default a CRD before it is stored; raises 422 with every problem."""
    spec = crd.setdefault("spec", {})
    names = spec.setdefault("names", {})
    meta = crd.setdefault("metadata", {})
    errs: list[E.FieldError] = []
    group = spec.get("group")
    if not group:
        errs.append(E.required("spec.group", ""))
    elif "." not in str(group):
        errs.append(E.invalid_value("spec.group", group, "should be a domain with at least one dot"))
    for key in ("plural", "kind"):
        if not names.get(key):
            errs.append(E.required(f"spec.names.{key}", ""))
    if names.get("kind"):
        names.setdefault("singular", str(names["kind"]).lower())
        names.setdefault("listKind", f"{names['kind']}List")
    if spec.get("scope") not in ("Namespaced", "Cluster"):
        errs.append(E.not_supported("spec.scope", spec.get("scope"), ["Cluster", "Namespaced"]))
    versions = spec.get("versions")
    if not isinstance(versions, list) or not versions:
        errs.append(E.required("spec.versions", "must have exactly one version marked as storage version"))
    else:
        storage = [v for v in versions if isinstance(v, dict) and v.get("storage")]
        if len(storage) != 1:
            errs.append(
                E.invalid_value(
                    "spec.versions", versions, "must have exactly one version marked as storage version"
                )
            )
        for i, v in enumerate(versions):
            if not isinstance(v, dict) or not v.get("name"):
                errs.append(E.required(f"spec.versions[{i}].name", ""))
                continue
            if not isinstance(v.get("schema"), dict) or not v["schema"].get("openAPIV3Schema"):
                errs.append(E.required(f"spec.versions[{i}].schema.openAPIV3Schema", "schemas are required"))
            else:
                errs += cel_rules.compile_errors(
                    v["schema"]["openAPIV3Schema"], f"spec.versions[{i}].schema.openAPIV3Schema"
                )
    if names.get("plural") and group:
        want = f"{names['plural']}.{group}"
        if meta.get("name") != want:
            errs.append(
                E.invalid_value("metadata.name", meta.get("name"), 'must be spec.names.plural+"."+spec.group')
            )
    conversion = spec.get("conversion") or {}
    strategy = conversion.get("strategy", "None") if isinstance(conversion, dict) else conversion
    if strategy != "None":
        errs.append(
            E.not_supported("spec.conversion.strategy", strategy, ["None"])
            if strategy != "Webhook"
            else E.forbidden_field(
                "spec.conversion.strategy",
                "Webhook conversion is not served by berth's embedded cluster (no webhook is ever called); use "
                "strategy None (versions that differ only in apiVersion) or a real cluster",
            )
        )
    if errs:
        raise E.invalid("CustomResourceDefinition", str(meta.get("name") or ""), errs, "apiextensions.k8s.io")
    spec.setdefault("conversion", {"strategy": "None"})
    _set_status(api, crd, old)


def _condition(
    ctype: str, status: str, reason: str, message: str, now: str, old: Obj | None
) -> dict[str, Any]:
    for c in ((old or {}).get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype and c.get("status") == status:
            now = c.get("lastTransitionTime", now)
    return {"type": ctype, "status": status, "lastTransitionTime": now, "reason": reason, "message": message}


def _set_status(api: ApiHost, crd: Obj, old: Obj | None) -> None:
    spec = crd["spec"]
    names = spec["names"]
    now = _now(api)
    clash = _name_clash(api, crd)
    status: dict[str, Any] = {}
    stored = [str(v["name"]) for v in spec.get("versions") or [] if v.get("storage")]
    prior = list(((old or {}).get("status") or {}).get("storedVersions") or [])
    status["storedVersions"] = prior + [v for v in stored if v not in prior]
    if clash:
        status["acceptedNames"] = copy.deepcopy(((old or {}).get("status") or {}).get("acceptedNames") or {})
        status["conditions"] = [
            _condition("NamesAccepted", "False", "ListKindConflict" if "list" in clash else "KindConflict", clash,
                       now, old),
            _condition("Established", "False", "NotAccepted", "not all names are accepted", now, old),
        ]  # fmt: skip
    else:
        status["acceptedNames"] = {
            k: copy.deepcopy(names[k])
            for k in ("plural", "singular", "shortNames", "kind", "listKind", "categories")
            if k in names
        }
        status["conditions"] = [
            _condition("NamesAccepted", "True", "NoConflicts", "no conflicts found", now, old),
            _condition(
                "Established",
                "True",
                "InitialNamesAccepted",
                "the initial names have been accepted",
                now,
                old,
            ),
        ]
    crd["status"] = status


def _name_clash(api: ApiHost, crd: Obj) -> str:
    spec = crd["spec"]
    names = spec["names"]
    me = crd["metadata"].get("name")
    for t in api.registry.all():
        if t.group != spec.get("group") or f"{t.plural}.{t.group}" == me:
            continue
        if t.kind == names.get("kind"):
            return f'"{names["kind"]}" is already in use'
        if t.plural == names.get("singular") or t.singular == names.get("plural"):
            return f'"{names.get("plural")}" is already in use'
    return ""


def established(api: ApiHost, crd: Obj) -> Obj:
    """After a CRD write: (re)register its type when its names are accepted."""
    conds = {c.get("type"): c.get("status") for c in (crd.get("status") or {}).get("conditions") or []}
    rt = resource_type(crd)
    if rt is not None and conds.get("Established") == "True":
        api.registry.add(rt)
    return crd


def removed(api: ApiHost, crd: Obj) -> None:
    spec = crd.get("spec") or {}
    plural = (spec.get("names") or {}).get("plural")
    if plural and spec.get("group"):
        api.registry.remove(f"{plural}.{spec['group']}")
        reconsider_group(api, str(spec["group"]))


def reconsider_group(api: ApiHost, group: str) -> None:
    """A deleted CRD frees its names: every other CRD of its group whose names were refused is considered again
    (upstream's naming controller, ``requeueAllOtherGroupCRDs``), and one whose names are free now is accepted and
    established. Called with the store locked."""
    items, _ = api.store.list(CRD_RESOURCE)
    for _ns, name, (_rv, text) in items:
        crd = json.loads(text)
        if (crd.get("spec") or {}).get("group") != group:
            continue
        conds = {c.get("type"): c.get("status") for c in (crd.get("status") or {}).get("conditions") or []}
        if conds.get("NamesAccepted") != "False":
            continue
        new = copy.deepcopy(crd)
        _set_status(api, new, crd)
        if new["status"] != crd["status"]:
            api.store.put(CRD_RESOURCE, "", name, new, "MODIFIED")
            established(api, new)


def delete_custom_objects(api: ApiHost, crd: Obj) -> None:
    """Delete every object of the CRD's type (finalizers are ignored: the type itself goes away)."""
    rt = resource_type(crd)
    if rt is None:
        return
    items, _ = api.store.list(rt.resource)
    for ns, name, (_rv, text) in items:
        api.store.remove(rt.resource, ns, name, json.loads(text))


# ---- custom objects ---------------------------------------------------------------------------------------------


def _schema(crd: Obj, version: str) -> dict[str, Any]:
    return ((version_of(crd, version).get("schema") or {}).get("openAPIV3Schema")) or {}


_READ_DEFAULTS: dict[str, tuple[str, dict[str, dict[str, Any]]]] = {}


def default_on_read(store: Store, rt: ResourceType, obj: Obj) -> None:
    """Fill in, in place, the defaults of the version ``obj`` is stored at, as upstream's storage decoder does on
    every read (get, list, watch, a write's answer), whatever version it is then served at: a default added to
    the storage version's schema shows on objects written before it, and on objects written at another version.
    The request version's defaults apply only when a request body is decoded (:func:`prepare_custom`)."""
    entry = store.get(CRD_RESOURCE, "", f"{rt.plural}.{rt.group}")
    if entry is None:
        return
    text = entry[1]  # the cache is keyed by the CRD's text: clusters in one process may share a CRD's name
    cached = _READ_DEFAULTS.get(rt.resource)
    if cached is None or cached[0] != text:
        crd = json.loads(text) if '"default"' in text else {}
        versions = [
            str(v.get("name")) for v in (crd.get("spec") or {}).get("versions") or [] if isinstance(v, dict)
        ]
        cached = (text, {v: _schema(crd, v) for v in versions if '"default"' in json.dumps(_schema(crd, v))})
        _READ_DEFAULTS[rt.resource] = cached
    schema = cached[1].get(str(obj.get("apiVersion") or "").rpartition("/")[2])
    if schema:
        obj.update(validation.apply_defaults(obj, schema))


def prepare_custom(
    api: ApiHost, rt: ResourceType, obj: Obj, old: Obj | None, field_validation: str = ""
) -> str:
    """Prune, default and validate a custom object against the schema of the version it was sent at (its
    ``apiVersion``), then store it at the storage version (conversion strategy None: only ``apiVersion``
    changes). Unknown (and duplicate) fields: ``fieldValidation=Strict`` is a 400 naming each, ``Warn`` (the
    default) a warning each, ``Ignore`` nothing; unknown ones are pruned either way. Returns the version the object was sent at."""
    version = str(obj.get("apiVersion", "")).rpartition("/")[2] or rt.version
    crd = crd_of(api, rt)
    if crd is None:
        return version
    sent_at = version if version_of(crd, version) else rt.version
    dropped: list[str] = []
    stored, problems = validation.admit_custom_resource(obj, _schema(crd, sent_at), dropped, old)
    if sent_at != rt.version and _schema(crd, rt.version):
        # converted to the storage version, the object is pruned with that version's schema (upstream's
        # schemaCoercingConverter): with conversion strategy None, a field only the sent version declares is lost
        stored = validation.prune(stored, _schema(crd, rt.version), root=True)
    dropped.sort()
    strict = decoding.strict_problems(dropped, custom=True) if field_validation != "Ignore" else []
    if strict and field_validation == "Strict":
        raise decoding.strict_decoding_error(strict)
    decoding.warn_problems(strict)
    if old is not None:
        problems = [p for p in problems if not str(getattr(p, "field", "")).startswith("metadata.name")]
    if problems:
        raise E.invalid(rt.kind, str((obj.get("metadata") or {}).get("name") or ""), problems, rt.group)
    stored["apiVersion"] = rt.stored_api_version
    obj.clear()
    obj.update(stored)
    return version


def _get_path(obj: Obj, path: str) -> Any:
    cur: Any = obj
    for part in [p for p in path.split(".") if p]:
        if not isinstance(cur, dict):
            return None
        cur = cur.get(part)
    return cur


def scale_of(api: ApiHost, rt: ResourceType, obj: Obj, version: str | None = None) -> Obj:
    crd = crd_of(api, rt) or {}
    scale = (version_of(crd, version or rt.version).get("subresources") or {}).get("scale") or {}
    meta = obj.get("metadata") or {}
    spec_r = _get_path(obj, str(scale.get("specReplicasPath") or ".spec.replicas"))
    status_r = _get_path(obj, str(scale.get("statusReplicasPath") or ".status.replicas"))
    sel = _get_path(obj, str(scale.get("labelSelectorPath") or "")) if scale.get("labelSelectorPath") else ""
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            k: meta[k]
            for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
            if k in meta
        },
        "spec": {"replicas": int(spec_r or 0)},
        "status": {"replicas": int(status_r or 0), "selector": str(sel or "")},
    }


def set_scale_replicas(api: ApiHost, rt: ResourceType, obj: Obj, replicas: int) -> None:
    """Write ``replicas`` at the CRD's ``specReplicasPath`` (default ``.spec.replicas``)."""
    crd = crd_of(api, rt) or {}
    scale = (version_of(crd, rt.version).get("subresources") or {}).get("scale") or {}
    path = str(scale.get("specReplicasPath") or ".spec.replicas")
    parts = [p for p in path.split(".") if p]
    cur = obj
    for p in parts[:-1]:
        cur = cur.setdefault(p, {})
    cur[parts[-1]] = replicas
