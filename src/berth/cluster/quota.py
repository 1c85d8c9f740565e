"""Two of kube-apiserver's admission plugins and the usage arithmetic they share: LimitRanger and ResourceQuota.

Why: a namespace with a ``LimitRange`` gives containers without requests or limits its defaults, and the scheduler
places pods by those requests; a namespace with a ``ResourceQuota`` refuses what would exceed it, and a Deployment
whose pods are refused shows ``FailedCreate`` events. Charts and tenants ship both, so the embedded cluster must
behave the same way.

* :func:`limit_pod` -- LimitRanger on a pod being created: fill ``default``/``defaultRequest`` into containers that
  lack them (annotation ``kubernetes.io/limit-ranger`` says what was set), then check ``min``, ``max`` and
  ``maxLimitRequestRatio`` per Container and per Pod; violations are a 403 naming each one, as upstream words them.
* :func:`default_resized_pod` and :func:`limit_update` -- the same two halves on the updates upstream's LimitRanger
  looks at (:func:`limits_update`): on ``pods/resize`` defaults before validation, then the whole pod checked
  again (kube-apiserver 1.35 checks every container, not only the resized ones); on a PVC, its storage min/max.
* :func:`limit_claim` -- LimitRanger on a PVC create or update: ``PersistentVolumeClaim`` items' storage ``min``
  and ``max``.
* :func:`default_limit_range` -- upstream's defaulting of a LimitRange item (``default`` from ``max``,
  ``defaultRequest`` from ``default``, then from ``min``).
* :func:`usage` -- what one quota's tracked resources add up to in a namespace (pods, cpu/memory requests and
  limits, services, PVCs and storage, ``count/<resource>``), honouring the quota's scopes.
* :func:`admit` -- ResourceQuota on an object being created: 403 ``exceeded quota`` when it would push a tracked
  resource over ``hard``, or ``failed quota ... must specify`` when the quota tracks cpu/memory the pod leaves
  unset. Usage is computed from the store under its lock, so two creates never both squeeze under a limit.
* :func:`admit_update` -- ResourceQuota on the updates upstream's evaluators handle (:func:`counts_update`): a
  ``pods/resize``, a Service changing type or ports, a PVC asking for more storage. Only the increase is charged
  (new usage minus old, per name, negative parts dropped); an update that raises nothing reads no quota at all.

Pure: objects in, objects and errors out; the Api and the quota controller pass a ``lister``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from fractions import Fraction
from typing import Any

from berth.cluster import errors as E
from berth.cluster import validation
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
    """Containers, then init containers, in upstream's order (its messages and annotation list them so)."""
    return [
        ("init container" if key == "initContainers" else "container", c)
        for key in ("containers", "initContainers")
        for c in spec.get(key) or []
        if isinstance(c, dict)
    ]


def limit_pod(pod: Obj, ranges: Iterable[Obj]) -> None:
    """LimitRanger on a pod being created: defaults in place, then the constraints (403 on any violation)."""
    ranges = list(ranges)
    if not ranges:
        return
    _default_pod(pod, ranges, annotate=True)
    _check_pod(pod, ranges)


def limits_update(resource: str, subresource: str | None) -> bool:
    """Whether LimitRanger looks at an update (upstream's ``SupportsAttributes``): ``pods/resize``, and PVC updates
    of the object itself. Plain pod updates are skipped: they cannot change resources."""
    if resource == "pods":
        return subresource == "resize"
    return resource == "persistentvolumeclaims" and not subresource


def limit_update(resource: str, old: Obj, new: Obj, ranges: Iterable[Obj]) -> None:
    """LimitRanger's validating half on an update :func:`limits_update` accepts (403 on any violation)."""
    if resource == "pods":
        limit_resized_pod(old, new, ranges)
    else:
        limit_claim(old, new, ranges)


def default_resized_pod(old: Obj, pod: Obj, ranges: Iterable[Obj]) -> None:
    """LimitRanger's mutating half on ``pods/resize``: containers the resize leaves without a request or limit get
    the defaults again. Upstream mutates the submitted pod and the resize strategy then keeps only the containers'
    resources, so the ``kubernetes.io/limit-ranger`` annotation is not rewritten. A pod being deleted is skipped."""
    if not _deleting(old):
        _default_pod(pod, list(ranges), annotate=False)


def limit_resized_pod(old: Obj, pod: Obj, ranges: Iterable[Obj]) -> None:
    """LimitRanger's validating half on ``pods/resize``: min/max/ratio over the whole resized pod, as on create
    (kube-apiserver 1.35 does not skip containers the resize left alone), 403 on any violation."""
    if not _deleting(old):
        _check_pod(pod, list(ranges))


def limit_claim(old: Obj | None, claim: Obj, ranges: Iterable[Obj]) -> None:
    """LimitRanger on a PVC create or update (``old`` given): ``PersistentVolumeClaim`` items' ``min`` and ``max``
    against ``spec.resources.requests`` (claims get no defaults: storage is required), 403 on any violation.
    kube-apiserver 1.35 checks the whole claim on every update, so a claim a later LimitRange no longer allows
    cannot be updated at all until it fits (kubernetes/kubernetes#142170 skips unchanged requests, after 1.35)."""
    if old is not None and _deleting(old):
        return
    requests = ((claim.get("spec") or {}).get("resources") or {}).get("requests") or {}
    problems: list[str] = []
    for lr in ranges:
        for item in (lr.get("spec") or {}).get("limits") or []:
            if not isinstance(item, dict) or item.get("type") != "PersistentVolumeClaim":
                continue
            for r, low in (item.get("min") or {}).items():
                if r not in requests:
                    problems.append(
                        f"minimum {r} usage per PersistentVolumeClaim is {low}.  No request is specified"
                    )
                elif _amount(requests[r], f"spec.resources.requests.{r}") < _amount(low, f"min.{r}"):
                    problems.append(
                        f"minimum {r} usage per PersistentVolumeClaim is {low}, but request is {requests[r]}"
                    )
            for r, high in (item.get("max") or {}).items():
                if r not in requests:
                    problems.append(
                        f"maximum {r} usage per PersistentVolumeClaim is {high}.  No request is specified"
                    )
                elif _amount(requests[r], f"spec.resources.requests.{r}") > _amount(high, f"max.{r}"):
                    problems.append(
                        f"maximum {r} usage per PersistentVolumeClaim is {high}, but request is {requests[r]}"
                    )
    if problems:
        name = str((claim.get("metadata") or {}).get("name") or "")
        why = problems[0] if len(problems) == 1 else f"[{', '.join(problems)}]"
        raise E.forbidden("persistentvolumeclaims", "", name, why)


def _deleting(obj: Obj) -> bool:
    return bool((obj.get("metadata") or {}).get("deletionTimestamp"))


def _default_pod(pod: Obj, ranges: list[Obj], *, annotate: bool) -> None:
    """Upstream's PodMutateLimitFunc, once per LimitRange: its Container items' defaults merged (a later item
    wins), filled into what each container lacks; the annotation names what the last range to set something set."""
    spec = pod.get("spec") or {}
    for lr in ranges:
        requests: dict[str, Any] = {}
        limits: dict[str, Any] = {}
        for item in (lr.get("spec") or {}).get("limits") or []:
            if isinstance(item, dict) and item.get("type") == "Container":
                requests.update(item.get("defaultRequest") or {})
                limits.update(item.get("default") or {})
        notes: list[str] = []
        for kind, c in _containers(spec):
            res = c.setdefault("resources", {})
            set_limits = _fill(res, "limits", limits)
            set_requests = _fill(res, "requests", requests)
            name = c.get("name", "")
            if set_requests:
                notes.append(f"{', '.join(set_requests)} request for {kind} {name}")
            if set_limits:
                notes.append(f"{', '.join(set_limits)} limit for {kind} {name}")
        if notes and annotate:
            annotations = pod.setdefault("metadata", {}).setdefault("annotations", {})
            annotations[LIMIT_RANGER_ANNOTATION] = "LimitRanger plugin set: " + "; ".join(notes)


def _check_pod(pod: Obj, ranges: list[Obj]) -> None:
    spec = pod.get("spec") or {}
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
    """Set the ``defaults`` ``res[key]`` lacks; the names set, sorted (as upstream lists them)."""
    if not defaults:
        return []
    current = res.setdefault(key, {})
    added = sorted(r for r in defaults if r not in current)
    for r in added:
        current[r] = defaults[r]
    if not current:
        res.pop(key)
    return added


def _pod_totals(
    spec: Mapping[str, Any], key: str, status: Mapping[str, Any] | None = None
) -> dict[str, Fraction]:
    """A pod's effective requests or limits (upstream's PodRequests/PodLimits, PodLevelResources on as in 1.35):
    the containers' aggregate (:func:`container_totals`), with the pod-level ``spec.resources`` taking the place
    of the cpu, memory and hugepages it sets -- requests when the pod sets any, limits when it sets any pod-level
    resource. LimitRanger's Pod items and ResourceQuota both count this."""
    total = container_totals(spec, key, status)
    total.update(_pod_level(spec, key))
    return total


def pod_level_resource(name: str) -> bool:
    """Upstream's IsSupportedPodLevelResource: what ``spec.resources`` may set (cpu, memory, hugepages)."""
    return name in ("cpu", "memory") or name.startswith("hugepages-")


def _pod_level(spec: Mapping[str, Any], key: str) -> dict[str, Fraction]:
    """The pod-level amounts that replace the containers' aggregate: ``requests`` when the pod sets a supported
    request (IsPodLevelRequestsSet), ``limits`` when it sets any supported request or limit
    (IsPodLevelResourcesSet)."""
    res = spec.get("resources")
    if not isinstance(res, Mapping):
        return {}
    requests = res.get("requests") or {}
    limits = res.get("limits") or {}
    if key == "requests":
        values, deciding = requests, requests
    else:
        values, deciding = limits, {**requests, **limits}
    if not any(pod_level_resource(r) for r in deciding):
        return {}
    return {r: _amount(v, f"spec.resources.{key}.{r}") for r, v in values.items() if pod_level_resource(r)}


def container_totals(
    spec: Mapping[str, Any], key: str, status: Mapping[str, Any] | None = None
) -> dict[str, Fraction]:
    """The containers' aggregate requests or limits (upstream's AggregateContainerRequests/Limits): their sum; a
    sidecar (an init container with ``restartPolicy: Always``) adds to it and to every init container after it; the
    largest init container wins when larger. With ``status`` (quota, not LimitRanger) each container counts what
    :func:`_container_amounts` says a pending in-place resize holds."""
    statuses: dict[str, Mapping[str, Any]] = {}
    infeasible = False
    if status:
        for field in ("containerStatuses", "initContainerStatuses"):
            for cs in status.get(field) or []:
                if isinstance(cs, dict) and cs.get("resources") is not None:
                    statuses[str(cs.get("name"))] = cs
        infeasible = any(
            isinstance(cond, dict)
            and cond.get("type") == "PodResizePending"
            and cond.get("reason") == "Infeasible"
            for cond in status.get("conditions") or []
        )
    total: dict[str, Fraction] = {}
    for c in spec.get("containers") or []:
        for r, v in _container_amounts(c, key, statuses.get(str(c.get("name"))), infeasible).items():
            total[r] = total.get(r, Fraction(0)) + v
    sidecars: dict[str, Fraction] = {}
    init: dict[str, Fraction] = {}
    for c in spec.get("initContainers") or []:
        own = _container_amounts(c, key, statuses.get(str(c.get("name"))), infeasible)
        if c.get("restartPolicy") == "Always":
            for r, v in own.items():
                total[r] = total.get(r, Fraction(0)) + v
                sidecars[r] = sidecars.get(r, Fraction(0)) + v
            own = dict(sidecars)
        else:
            own = {r: own.get(r, Fraction(0)) + sidecars.get(r, Fraction(0)) for r in {*own, *sidecars}}
        for r, v in own.items():
            init[r] = max(init.get(r, v), v)
    for r, v in init.items():
        total[r] = max(total.get(r, v), v)
    return total


def _container_amounts(
    c: Mapping[str, Any], key: str, cs: Mapping[str, Any] | None, infeasible: bool
) -> dict[str, Fraction]:
    """One container's ``requests`` or ``limits``. With its status reporting resources (an in-place resize the
    kubelet has seen), the largest of the spec, the running resources and, for requests, what the kubelet
    allocated; only the status ones when the kubelet marked the resize Infeasible (upstream's
    determineContainerReqs/Limits), so a pending resize is charged until it is done or refused."""
    lists: list[Mapping[str, Any]] = []
    if cs is None or not infeasible:
        lists.append(((c.get("resources") or {}).get(key)) or {})
    if cs is not None:
        lists.append(((cs.get("resources") or {}).get(key)) or {})
        if key == "requests":
            lists.append(cs.get("allocatedResources") or {})
    out: dict[str, Fraction] = {}
    for values in lists:
        for r, v in values.items():
            amount = _amount(v, f"resources.{key}.{r}")
            if r not in out or amount > out[r]:
                out[r] = amount
    return out


def _constraints(
    item: Mapping[str, Any], scope: str, requests: Mapping[str, Any], limits: Mapping[str, Any]
) -> list[str]:
    """Upstream's min/max/ratio checks for one LimitRange item: at most one message per resource and check."""
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
        elif lim is not None and lim < floor:
            out.append(f"minimum {r} usage per {scope} is {low}, but limit is {shown(limits[r], r)}")
    for r, high in (item.get("max") or {}).items():
        ceiling, req, lim = _amount(high, f"max.{r}"), amount(requests, r), amount(limits, r)
        if lim is None:
            out.append(f"maximum {r} usage per {scope} is {high}.  No limit is specified")
        elif lim > ceiling:
            out.append(f"maximum {r} usage per {scope} is {high}, but limit is {shown(limits[r], r)}")
        elif req is not None and req > ceiling:
            out.append(f"maximum {r} usage per {scope} is {high}, but request is {shown(requests[r], r)}")
    for r, ratio in (item.get("maxLimitRequestRatio") or {}).items():
        req, lim = amount(requests, r), amount(limits, r)
        if not req:
            out.append(
                f"{r} max limit to request ratio per {scope} is {ratio}, but no request is specified or request is 0"
            )
        elif not lim:
            out.append(
                f"{r} max limit to request ratio per {scope} is {ratio}, but no limit is specified or limit is 0"
            )
        elif lim / req > _amount(ratio, f"maxLimitRequestRatio.{r}"):
            out.append(
                f"{r} max limit to request ratio per {scope} is {ratio}, but provided ratio is {float(lim / req):f}"
            )
    return out


# ---- ResourceQuota ----------------------------------------------------------------------------------------------


def _pod_terminal(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def _best_effort(pod: Obj) -> bool:
    """QoS BestEffort as upstream computes it from the spec (not ``status.qosClass``: the resize that changes
    requests cannot change the class)."""
    return validation.pod_qos_class(pod.get("spec") or {}) == "BestEffort"


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
    """What one object adds to a quota (every name it can count towards; the quota keeps the ones it tracks), as
    upstream's evaluators measure it (pods.go, services.go, persistent_volume_claims.go)."""
    plural, _, group = resource.partition(".")
    out: dict[str, Fraction] = {f"count/{resource}": Fraction(1)}
    if plural in COUNTED and not group:
        out[COUNTED[plural]] = Fraction(1)
    if resource == "pods":
        if _pod_terminal(obj):
            return {"count/pods": Fraction(1)}  # a finished pod holds no compute, but is still an object
        spec = obj.get("spec") or {}
        status = obj.get("status") or {}
        for key in ("requests", "limits"):
            for r, v in _pod_totals(spec, key, status).items():
                out[f"{key}.{r}"] = out.get(f"{key}.{r}", Fraction(0)) + v
                if key == "requests" and r in COMPUTE:
                    out[r] = out.get(r, Fraction(0)) + v  # plain cpu/memory quota names mean requests
        for r, v in (spec.get("overhead") or {}).items():
            extra = _amount(v, f"overhead.{r}")
            out[f"requests.{r}"] = out.get(f"requests.{r}", Fraction(0)) + extra  # requests always carry it
            if r in COMPUTE:
                out[r] = out.get(r, Fraction(0)) + extra
            if f"limits.{r}" in out:  # limits only where the pod has one
                out[f"limits.{r}"] += extra
    elif resource == "services":
        spec = obj.get("spec") or {}
        kind = spec.get("type")
        ports = [p for p in spec.get("ports") or [] if isinstance(p, dict)]
        if kind == "LoadBalancer":
            out["services.loadbalancers"] = Fraction(1)
            if spec.get("allocateLoadBalancerNodePorts") is False:  # only ports given a node port explicitly
                out["services.nodeports"] = Fraction(sum(1 for p in ports if p.get("nodePort")))
            else:
                out["services.nodeports"] = Fraction(len(ports))
        elif kind == "NodePort":
            out["services.nodeports"] = Fraction(len(ports))
    elif resource == "persistentvolumeclaims":
        spec = obj.get("spec") or {}
        annotations = (obj.get("metadata") or {}).get("annotations") or {}
        sc = annotations.get("volume.beta.kubernetes.io/storage-class") or spec.get("storageClassName")
        if sc:
            out[f"{sc}.storageclass.storage.k8s.io/persistentvolumeclaims"] = Fraction(1)
        storage = _claim_storage(obj)
        if storage is not None:
            out["requests.storage"] = storage
            if sc:
                out[f"{sc}.storageclass.storage.k8s.io/requests.storage"] = storage
    return out


def _claim_storage(pvc: Obj) -> Fraction | None:
    """The storage a claim is charged for: its request, or what the resizer already allocated when that is more
    (``status.allocatedResources``; a failed expansion stays charged), in whole bytes (upstream rounds up)."""
    request = (((pvc.get("spec") or {}).get("resources") or {}).get("requests") or {}).get("storage")
    if request is None:
        return None
    amount = _amount(request, "spec.resources.requests.storage")
    allocated = ((pvc.get("status") or {}).get("allocatedResources") or {}).get("storage")
    if allocated is not None:
        amount = max(amount, _amount(allocated, "status.allocatedResources.storage"))
    return Fraction(math.ceil(amount))


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
    _check(resource, obj, None, namespace, list(quotas), lister)


def counts_update(resource: str, subresource: str | None) -> bool:
    """Whether ResourceQuota admission evaluates an update of ``resource`` (upstream's evaluators' ``Handles``):
    pods only through ``pods/resize`` (in-place resize; a plain pod update cannot change resources), Services
    and PVCs on the object itself (a type change, more storage). Status writes and every other kind are not
    charged: object counts change on create only."""
    if resource == "pods":
        return subresource == "resize"
    return resource in ("services", "persistentvolumeclaims") and not subresource


def admit_update(resource: str, old: Obj, new: Obj, namespace: str, lister: Lister) -> None:
    """ResourceQuota on an update :func:`counts_update` accepts: 403 ``exceeded quota`` when what the update adds
    (``requested:`` is that increase) would exceed a quota, or ``must specify`` when a resize drops a cpu/memory
    value a quota needs. A Service or PVC update that raises no usage returns before reading any quota."""
    if resource != "pods" and (
        _usage_inputs(old) == _usage_inputs(new)  # a label or annotation change: no arithmetic at all
        or not _raised(object_usage(resource, old), object_usage(resource, new))
    ):
        return
    quotas = list(lister("resourcequotas", namespace))
    if quotas:
        _check(resource, new, old, namespace, quotas, lister)


def _usage_inputs(obj: Obj) -> tuple[Any, Any, Any]:
    """What a Service's or PVC's usage is computed from: the spec, the allocated storage, the storage-class
    annotation."""
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    return (
        obj.get("spec"),
        (obj.get("status") or {}).get("allocatedResources"),
        annotations.get("volume.beta.kubernetes.io/storage-class"),
    )


def _raised(before: Mapping[str, Fraction], after: Mapping[str, Fraction]) -> dict[str, Fraction]:
    """The names ``after`` uses more of than ``before``, by how much (upstream's SubtractWithNonNegativeResult and
    RemoveZeros)."""
    return {k: v - before.get(k, Fraction(0)) for k, v in after.items() if v > before.get(k, Fraction(0))}


def _check(
    resource: str, obj: Obj, old: Obj | None, namespace: str, quotas: list[Obj], lister: Lister
) -> None:
    """Upstream's CheckRequest: every matching quota's constraints first, then each quota's charge -- the whole
    usage of ``obj`` on a create, or on an update the increase over ``old`` (the whole usage for a quota ``old``
    was outside of, such as a scope it did not match). Usage comes from the store, which still holds ``old``."""
    kind_plural, _, group = resource.partition(".")
    name = str((obj.get("metadata") or {}).get("name") or "")
    matching = [q for q in quotas if matches(q, resource, obj)]
    if resource == "pods":
        for quota in matching:
            missing = _missing_compute(obj, (quota.get("spec") or {}).get("hard") or {})
            if missing:
                qname = str((quota.get("metadata") or {}).get("name") or "")
                raise E.forbidden(kind_plural, group, name, f"failed quota: {qname}: must specify {missing}")
    usage_new = object_usage(resource, obj)
    usage_old = object_usage(resource, old) if old is not None else {}
    for quota in matching:
        hard = (quota.get("spec") or {}).get("hard") or {}
        charged = (
            _raised(usage_old, usage_new) if old is not None and matches(quota, resource, old) else usage_new
        )
        requested = {k: v for k, v in charged.items() if k in hard and v}
        if not requested:
            continue
        used = usage(quota, namespace, lister)
        over = sorted(k for k, v in requested.items() if used[k] + v > _amount(hard[k], f"spec.hard.{k}"))
        if over:
            qname = str((quota.get("metadata") or {}).get("name") or "")
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
