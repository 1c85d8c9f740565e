"""Two of kube-apiserver's admission plugins and the usage arithmetic they share: LimitRanger and ResourceQuota.

Why: a namespace with a ``LimitRange`` gives containers without requests or limits its defaults, and the scheduler
places pods by those requests; a namespace with a ``ResourceQuota`` refuses what would exceed it, and a Deployment
whose pods are refused shows ``FailedCreate`` events. Charts and tenants ship both, so the embedded cluster must
behave the same way.

* :func:`limit_pod` -- LimitRanger on a pod being created: fill ``default``/``defaultRequest`` into containers that
  lack them (annotation ``kubernetes.io/limit-ranger`` says what was set), then check ``min``, ``max`` and
  ``maxLimitRequestRatio`` per Container and per Pod; violations are a 403 naming each one, as upstream words them.
* :func:`default_limit_range` -- upstream's defaulting of a LimitRange item (``default`` from ``max``,
  ``defaultRequest`` from ``default``, then from ``min``).
* :func:`usage` -- what one quota's tracked resources add up to in a namespace (pods, cpu/memory requests and
  limits, services, PVCs and storage, ``count/<resource>``), honouring the quota's scopes.
* :func:`admit` -- ResourceQuota on an object being created: 403 ``exceeded quota`` when it would push a tracked
  resource over ``hard``, or ``failed quota ... must specify`` when the quota tracks cpu/memory the pod leaves
  unset. Usage is computed from the store under its lock, so two creates never both squeeze under a limit.

Pure: objects in, objects and errors out; the Api and the quota controller pass a ``lister``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from fractions import Fraction
from typing import Any

from berth.cluster import errors as E
from berth.kube import quantity
from berth.kube.objects import Obj

Lister = Callable[[str, str], Iterable[Obj]]
"""``lister(resource, namespace)``: the objects of ``resource`` in ``namespace``."""

LIMIT_RANGER_ANNOTATION = "kubernetes.io/limit-ranger"
COMPUTE = ("cpu", "memory", "ephemeral-storage")
POD_SCOPES = ("Terminating", "NotTerminating", "BestEffort", "NotBestEffort", "PriorityClass")
# Quota names counted by object count, and the resource each counts.
COUNTED = {
    "pods": "pods",
    "services": "services",
    "secrets": "secrets",
    "configmaps": "configmaps",
    "persistentvolumeclaims": "persistentvolumeclaims",
    "replicationcontrollers": "replicationcontrollers",
    "resourcequotas": "resourcequotas",
}


# ---- quantities ------------------------------------------------------------------------------------------------


def _amount(value: Any, where: str) -> Fraction:
    try:
        return quantity.parse(value, where)
    except Exception as exc:  # InputError: a malformed quantity in a stored object is that object's problem
        raise E.bad_request(f"{where}: {exc}") from exc


def _is_binary(text: Any) -> bool:
    return isinstance(text, str) and text.endswith("i")


# ---- LimitRanger ------------------------------------------------------------------------------------------------


def default_limit_range(obj: Obj) -> None:
    """Upstream's ``SetDefaults_LimitRangeItem`` for Container items: ``default`` from ``max``, then
    ``defaultRequest`` from ``default``, then from ``min``."""
    for item in (obj.get("spec") or {}).get("limits") or []:
        if not isinstance(item, dict) or item.get("type") != "Container":
            continue
        default = item.setdefault("default", {})
        request = item.setdefault("defaultRequest", {})
        for key, value in (item.get("max") or {}).items():
            default.setdefault(key, value)
        for key, value in default.items():
            request.setdefault(key, value)
        for key, value in (item.get("min") or {}).items():
            request.setdefault(key, value)
        if not default:
            item.pop("default")
        if not request:
            item.pop("defaultRequest")


def _containers(spec: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("init container" if key == "initContainers" else "container", c)
        for key in ("initContainers", "containers")
        for c in spec.get(key) or []
        if isinstance(c, dict)
    ]


def limit_pod(pod: Obj, ranges: Iterable[Obj]) -> None:
    """LimitRanger on a pod being created: defaults in place, then the constraints (403 on any violation)."""
    ranges = list(ranges)
    if not ranges:
        return
    spec = pod.get("spec") or {}
    notes: list[str] = []
    for lr in ranges:
        for item in (lr.get("spec") or {}).get("limits") or []:
            if not isinstance(item, dict) or item.get("type") != "Container":
                continue
            for kind, c in _containers(spec):
                res = c.setdefault("resources", {})
                set_requests = _fill(res, "requests", item.get("defaultRequest") or {})
                set_limits = _fill(res, "limits", item.get("default") or {})
                name = c.get("name", "")
                if set_requests:
                    notes.append(f"{', '.join(set_requests)} request for {kind} {name}")
                if set_limits:
                    notes.append(f"{', '.join(set_limits)} limit for {kind} {name}")
    if notes:
        annotations = pod.setdefault("metadata", {}).setdefault("annotations", {})
        annotations[LIMIT_RANGER_ANNOTATION] = "LimitRanger plugin set: " + "; ".join(notes)
    problems: list[str] = []
    for lr in ranges:
        for item in (lr.get("spec") or {}).get("limits") or []:
            if not isinstance(item, dict):
                continue
            if item.get("type") == "Container":
                for _kind, c in _containers(spec):
                    res = c.get("resources") or {}
                    problems += _constraints(
                        item, "Container", res.get("requests") or {}, res.get("limits") or {}
                    )
            elif item.get("type") == "Pod":
                problems += _constraints(
                    item, "Pod", _pod_totals(spec, "requests"), _pod_totals(spec, "limits")
                )
    if problems:
        name = str((pod.get("metadata") or {}).get("name") or "")
        why = problems[0] if len(problems) == 1 else f"[{', '.join(problems)}]"
        raise E.forbidden("pods", "", name, why)


def _fill(res: dict[str, Any], key: str, defaults: Mapping[str, Any]) -> list[str]:
    if not defaults:
        return []
    current = res.setdefault(key, {})
    added = [r for r in defaults if r not in current]
    for r in added:
        current[r] = defaults[r]
    if not current:
        res.pop(key)
    return added


def _pod_totals(spec: Mapping[str, Any], key: str) -> dict[str, Fraction]:
    """A pod's effective requests or limits: the containers' sum, or the largest init container when larger."""
    total: dict[str, Fraction] = {}
    for c in spec.get("containers") or []:
        for r, v in ((c.get("resources") or {}).get(key) or {}).items():
            total[r] = total.get(r, Fraction(0)) + _amount(v, f"containers.resources.{key}.{r}")
    for c in spec.get("initContainers") or []:
        for r, v in ((c.get("resources") or {}).get(key) or {}).items():
            total[r] = max(total.get(r, Fraction(0)), _amount(v, f"initContainers.resources.{key}.{r}"))
    return total


def _constraints(
    item: Mapping[str, Any], scope: str, requests: Mapping[str, Any], limits: Mapping[str, Any]
) -> list[str]:
    out: list[str] = []

    def amount(values: Mapping[str, Any], r: str) -> Fraction | None:
        v = values.get(r)
        return None if v is None else v if isinstance(v, Fraction) else _amount(v, r)

    def shown(v: Any, r: str) -> str:
        return quantity.canonical(v, r == "memory") if isinstance(v, Fraction) else str(v)

    for r, low in (item.get("min") or {}).items():
        floor, req, lim = _amount(low, f"min.{r}"), amount(requests, r), amount(limits, r)
        if req is None:
            out.append(f"minimum {r} usage per {scope} is {low}.  No request is specified")
        elif req < floor:
            out.append(f"minimum {r} usage per {scope} is {low}, but request is {shown(requests[r], r)}")
        if lim is not None and lim < floor:
            out.append(f"minimum {r} usage per {scope} is {low}, but limit is {shown(limits[r], r)}")
    for r, high in (item.get("max") or {}).items():
        ceiling, lim = _amount(high, f"max.{r}"), amount(limits, r)
        if lim is None:
            out.append(f"maximum {r} usage per {scope} is {high}.  No limit is specified")
        elif lim > ceiling:
            out.append(f"maximum {r} usage per {scope} is {high}, but limit is {shown(limits[r], r)}")
    for r, ratio in (item.get("maxLimitRequestRatio") or {}).items():
        req, lim = amount(requests, r), amount(limits, r)
        if req is None or lim is None or req == 0:
            continue
        if lim / req > _amount(ratio, f"maxLimitRequestRatio.{r}"):
            out.append(
                f"{r} max limit to request ratio per {scope} is {ratio}, but provided ratio is {float(lim / req):f}"
            )
    return out


# ---- ResourceQuota ----------------------------------------------------------------------------------------------


def _pod_terminal(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def _best_effort(pod: Obj) -> bool:
    spec = pod.get("spec") or {}
    return not any(
        (c.get("resources") or {}).get("requests") or (c.get("resources") or {}).get("limits")
        for _k, c in _containers(spec)
    )


def _scope_matches(scope: str, pod: Obj, values: list[str] | None = None, operator: str = "Exists") -> bool:
    spec = pod.get("spec") or {}
    if scope == "Terminating":
        return spec.get("activeDeadlineSeconds") is not None
    if scope == "NotTerminating":
        return spec.get("activeDeadlineSeconds") is None
    if scope == "BestEffort":
        return _best_effort(pod)
    if scope == "NotBestEffort":
        return not _best_effort(pod)
    if scope == "PriorityClass":
        pc = spec.get("priorityClassName")
        if operator == "Exists":
            return bool(pc)
        if operator == "DoesNotExist":
            return not pc
        if operator == "In":
            return pc in (values or [])
        if operator == "NotIn":
            return pc not in (values or [])
    return True


def _quota_scopes(quota: Obj) -> list[tuple[str, str, list[str]]]:
    spec = quota.get("spec") or {}
    scopes: list[tuple[str, str, list[str]]] = [(str(s), "Exists", []) for s in spec.get("scopes") or []]
    for expr in (spec.get("scopeSelector") or {}).get("matchExpressions") or []:
        scopes.append(
            (
                str(expr.get("scopeName")),
                str(expr.get("operator") or "Exists"),
                list(expr.get("values") or []),
            )
        )
    return scopes


def matches(quota: Obj, resource: str, obj: Obj) -> bool:
    """Whether ``quota`` counts ``obj`` at all: scoped quotas count only pods in their scopes."""
    scopes = _quota_scopes(quota)
    if not scopes:
        return True
    if resource != "pods":
        return False
    return all(_scope_matches(name, obj, values, op) for name, op, values in scopes)


def object_usage(resource: str, obj: Obj) -> dict[str, Fraction]:
    """What one object adds to a quota (every name it can count towards; the quota keeps the ones it tracks)."""
    plural, _, group = resource.partition(".")
    out: dict[str, Fraction] = {f"count/{resource}": Fraction(1)}
    if plural in COUNTED and not group:
        out[COUNTED[plural]] = Fraction(1)
    if resource == "pods":
        if _pod_terminal(obj):
            return {}
        spec = obj.get("spec") or {}
        for key in ("requests", "limits"):
            for r, v in _pod_totals(spec, key).items():
                out[f"{key}.{r}"] = out.get(f"{key}.{r}", Fraction(0)) + v
                if key == "requests" and r in COMPUTE:
                    out[r] = out.get(r, Fraction(0)) + v  # plain cpu/memory quota names mean requests
        for r, v in (spec.get("overhead") or {}).items():
            for name in (f"requests.{r}", f"limits.{r}", r):
                if name in out:
                    out[name] += _amount(v, f"overhead.{r}")
    elif resource == "services":
        kind = (obj.get("spec") or {}).get("type")
        ports = len((obj.get("spec") or {}).get("ports") or [])
        if kind == "LoadBalancer":
            out["services.loadbalancers"] = Fraction(1)
            out["services.nodeports"] = Fraction(ports)
        elif kind == "NodePort":
            out["services.nodeports"] = Fraction(ports)
    elif resource == "persistentvolumeclaims":
        spec = obj.get("spec") or {}
        storage = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
        if storage is not None:
            amount = _amount(storage, "spec.resources.requests.storage")
            out["requests.storage"] = amount
            sc = spec.get("storageClassName")
            if sc:
                out[f"{sc}.storageclass.storage.k8s.io/requests.storage"] = amount
                out[f"{sc}.storageclass.storage.k8s.io/persistentvolumeclaims"] = Fraction(1)
    return out


def tracked_resource(name: str) -> str | None:
    """The API resource a quota name counts (``pods``, ``count/deployments.apps`` -> ``deployments.apps``)."""
    if name.startswith("count/"):
        return name[len("count/") :]
    if name in COUNTED:
        return COUNTED[name]
    if name.startswith(("requests.", "limits.")) and name.split(".", 1)[1] != "storage":
        return "pods"
    if name in COMPUTE:
        return "pods"
    if name.startswith("services."):
        return "services"
    if name == "requests.storage" or ".storageclass.storage.k8s.io/" in name:
        return "persistentvolumeclaims"
    return None


def usage(quota: Obj, namespace: str, lister: Lister) -> dict[str, Fraction]:
    """What ``quota``'s ``hard`` names add up to in ``namespace`` now (a name nothing counts stays 0)."""
    hard = (quota.get("spec") or {}).get("hard") or {}
    used = {name: Fraction(0) for name in hard}
    for resource in sorted({r for name in hard if (r := tracked_resource(name))}):
        for obj in lister(resource, namespace):
            if not matches(quota, resource, obj):
                continue
            for name, amount in object_usage(resource, obj).items():
                if name in used:
                    used[name] += amount
    return used


def status_of(quota: Obj, used: Mapping[str, Fraction]) -> dict[str, Any]:
    """``status`` as the quota controller writes it: ``hard`` copied from spec, ``used`` in the same units."""
    hard = dict((quota.get("spec") or {}).get("hard") or {})
    return {
        "hard": hard,
        "used": {
            name: quantity.canonical(used.get(name, Fraction(0)), _is_binary(hard[name])) for name in hard
        },
    }


def admit(resource: str, obj: Obj, namespace: str, quotas: Iterable[Obj], lister: Lister) -> None:
    """ResourceQuota on a create: 403 when ``obj`` would exceed a quota of ``namespace``, or when a quota tracks
    compute resources the pod does not set."""
    kind_plural, _, group = resource.partition(".")
    name = str((obj.get("metadata") or {}).get("name") or "")
    delta = object_usage(resource, obj)
    for quota in quotas:
        hard = (quota.get("spec") or {}).get("hard") or {}
        qname = str((quota.get("metadata") or {}).get("name") or "")
        if not matches(quota, resource, obj):
            continue
        if resource == "pods":
            missing = _missing_compute(obj, hard)
            if missing:
                raise E.forbidden(kind_plural, group, name, f"failed quota: {qname}: must specify {missing}")
        requested = {k: v for k, v in delta.items() if k in hard and v}
        if not requested:
            continue
        used = usage(quota, namespace, lister)
        over = sorted(k for k, v in requested.items() if used[k] + v > _amount(hard[k], f"spec.hard.{k}"))
        if over:
            raise E.forbidden(
                kind_plural,
                group,
                name,
                f"exceeded quota: {qname}, requested: {_pretty(requested, over, hard)}, "
                f"used: {_pretty(used, over, hard)}, limited: {_pretty(hard, over, hard)}",
            )


def _pretty(values: Mapping[str, Any], keys: list[str], hard: Mapping[str, Any]) -> str:
    """``pods=1,requests.cpu=500m`` (upstream's prettyPrint over the exceeded names)."""
    shown = []
    for k in keys:
        v = values[k]
        shown.append(f"{k}={quantity.canonical(v, _is_binary(hard[k])) if isinstance(v, Fraction) else v}")
    return ",".join(shown)


_MUST_SPECIFY = {
    "cpu": ("requests", "cpu"),
    "memory": ("requests", "memory"),
    "requests.cpu": ("requests", "cpu"),
    "requests.memory": ("requests", "memory"),
    "limits.cpu": ("limits", "cpu"),
    "limits.memory": ("limits", "memory"),
}
"""Upstream's backward-compatible rule: a quota on cpu or memory makes every container state them (not other
resources)."""


def _missing_compute(pod: Obj, hard: Mapping[str, Any]) -> str:
    """``limits.cpu for: a,b; requests.memory for: a`` for tracked cpu/memory names some container leaves unset."""
    parts = []
    containers = [c for _k, c in _containers(pod.get("spec") or {})]
    for name in sorted(n for n in hard if n in _MUST_SPECIFY):
        key, r = _MUST_SPECIFY[name]
        lacking = sorted(
            str(c.get("name", "")) for c in containers if r not in ((c.get("resources") or {}).get(key) or {})
        )
        if lacking:
            parts.append(f"{name} for: {','.join(lacking)}")
    return "; ".join(parts)
