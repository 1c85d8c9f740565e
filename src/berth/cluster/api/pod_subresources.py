"""The pod subresources that change the pod's spec: ``ephemeralcontainers`` (``kubectl debug``) and ``resize``
(in-place resize), each taking only its own fields from the request, as upstream's subresource strategies."""

from __future__ import annotations

import copy

from berth.cluster import errors as E
from berth.cluster import objmeta
from berth.kube.objects import Obj

POD_SPEC_SUBRESOURCES = ("ephemeralcontainers", "resize")
_NOT_FOR_EPHEMERAL = ("ports", "livenessProbe", "readinessProbe", "startupProbe", "lifecycle", "resources")


def with_ephemeral_containers(cur: Obj, new: Obj) -> Obj:
    """pods/ephemeralcontainers (``kubectl debug``): only ``spec.ephemeralContainers`` changes, and only by
    additions -- existing ones may be neither changed nor removed, as upstream validates."""
    name = str(objmeta.meta_of(cur).get("name", ""))
    spec = cur.get("spec") or {}
    before = {str(c.get("name")): c for c in spec.get("ephemeralContainers") or []}
    after = list((new.get("spec") or {}).get("ephemeralContainers") or [])
    path = "spec.ephemeralContainers"
    errs: list[E.FieldError] = []
    names_after = {str(c.get("name")) for c in after if isinstance(c, dict)}
    for gone in before:
        if gone not in names_after:
            errs.append(E.forbidden_field(path, f'existing ephemeral containers "{gone}" may not be removed'))
    taken = {str(c.get("name")) for key in ("containers", "initContainers") for c in spec.get(key) or []}
    for i, c in enumerate(after):
        where = f"{path}[{i}]"
        if not isinstance(c, dict):
            errs.append(E.invalid_value(where, c, "must be an object"))
            continue
        cname = str(c.get("name") or "")
        if cname in before:
            if c != before[cname]:
                errs.append(E.forbidden_field(where, "existing ephemeral containers may not be changed"))
            continue
        if not cname:
            errs.append(E.required(f"{where}.name"))
        elif cname in taken:
            errs.append(E.duplicate(f"{where}.name", cname))
        if not c.get("image"):
            errs.append(E.required(f"{where}.image"))
        for field in _NOT_FOR_EPHEMERAL:
            if c.get(field):
                errs.append(E.forbidden_field(f"{where}.{field}", "cannot be set for an Ephemeral Container"))
        taken.add(cname)
    if errs:
        raise E.invalid("Pod", name, errs)
    out = objmeta.copy_obj(cur)
    out.setdefault("spec", {})["ephemeralContainers"] = after
    return out


def with_resized_containers(cur: Obj, new: Obj) -> Obj:
    """pods/resize (in-place resize), as upstream's resize strategy: only the containers' ``resources`` and
    ``resizePolicy`` are taken from the request, position by position. A request that adds, removes, renames or
    reorders containers keeps its lists, for validation.validate_pod_resize to refuse."""
    asked = new.get("spec") or {}
    out = objmeta.copy_obj(cur)
    spec = out.setdefault("spec", {})
    for key in ("containers", "initContainers"):
        before = spec.get(key) or []
        after = [c for c in asked.get(key) or [] if isinstance(c, dict)]
        if len(after) != len(before) or any(
            a.get("name") != b.get("name") for a, b in zip(after, before, strict=True)
        ):
            spec[key] = copy.deepcopy(after)
            continue
        for c, src in zip(before, after, strict=True):
            for field in ("resources", "resizePolicy"):
                if field in src:
                    c[field] = copy.deepcopy(src[field])
                else:
                    c.pop(field, None)
    return out
