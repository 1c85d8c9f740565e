"""A pod's resources: its QoS class, and what an in-place resize (``pods/resize``, KEP-1287) may change."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from berth.cluster import errors
from berth.cluster.errors import FieldError
from berth.kube import quantity
from berth.kube.errors import InputError

Obj = dict[str, Any]

# -- pods/resize (in-place resize, KEP-1287) -------------------------------------------------------------------------

MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
"""Set by the kubelet on the API mirror of a static pod; such pods cannot be resized."""

_RESIZABLE = ("cpu", "memory")
_RESIZE_RESTART_POLICIES = ("NotRequired", "RestartContainer")


def _amount(value: Any) -> Fraction | None:
    """A quantity's value, or None when it does not parse (the pod validation reports that elsewhere)."""
    try:
        return quantity.parse(value)
    except (InputError, ValueError, TypeError):
        return None


def validate_resize_policy(policies: Any, path: str, pod_restart_policy: Any) -> list[FieldError]:
    """Upstream's validateResizePolicy: each resource once, cpu or memory, NotRequired or RestartContainer, and
    only NotRequired in a pod whose restartPolicy is Never. Note that upstream reports most of these at the list's
    path, not the item's."""
    out: list[FieldError] = []
    seen: set[Any] = set()
    for i, p in enumerate(policies if isinstance(policies, list) else []):
        p = p if isinstance(p, Mapping) else {}
        name, restart = p.get("resourceName") or "", p.get("restartPolicy") or ""
        if name in seen:
            out.append(errors.duplicate(f"{path}[{i}]", name))
        seen.add(name)
        if not name:
            out.append(errors.required(path))
        elif name not in _RESIZABLE:
            out.append(errors.not_supported(path, name, _RESIZABLE))
        if not restart:
            out.append(errors.required(path))
        elif restart not in _RESIZE_RESTART_POLICIES:
            out.append(errors.not_supported(path, restart, _RESIZE_RESTART_POLICIES))
        if pod_restart_policy == "Never" and restart != "NotRequired":
            out.append(
                errors.invalid_value(path, restart, "must be 'NotRequired' when `restartPolicy` is 'Never'")
            )
    return out


def pod_qos_class(spec: Mapping[str, Any]) -> str:
    """Upstream's ComputePodQOS -- the one QoS computation (status.qosClass, resize checks, quota scopes): cpu and
    memory only, init and regular containers, or the pod-level ``spec.resources`` when set; amounts compared as
    quantities (``1`` equals ``1000m``), zero requests and limits ignored."""
    requests: dict[str, Fraction] = {}
    limits: dict[str, Fraction] = {}
    guaranteed = True
    pod_level = spec.get("resources")
    holders: list[Any] = (
        [{"resources": pod_level}]
        if isinstance(pod_level, Mapping) and (pod_level.get("requests") or pod_level.get("limits"))
        else [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]
    )
    for c in holders:
        res = (c.get("resources") if isinstance(c, dict) else None) or {}
        for name, v in (res.get("requests") or {}).items():
            amount = _amount(v)
            if name in _RESIZABLE and amount is not None and amount > 0:
                requests[name] = requests.get(name, Fraction(0)) + amount
        found: set[str] = set()
        for name, v in (res.get("limits") or {}).items():
            amount = _amount(v)
            if name in _RESIZABLE and amount is not None and amount > 0:
                found.add(name)
                limits[name] = limits.get(name, Fraction(0)) + amount
        if not found.issuperset(_RESIZABLE):
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if guaranteed and len(requests) == len(limits) and all(limits.get(n) == r for n, r in requests.items()):
        return "Guaranteed"
    return "Burstable"


def _sidecar(c: Mapping[str, Any]) -> bool:
    return c.get("restartPolicy") == "Always"


def _resources_removed(new: Mapping[str, Any] | None, old: Mapping[str, Any] | None) -> bool:
    return any(name not in (new or {}) for name in old or {})


def _without_cpu_memory_updates(c: Mapping[str, Any], old: Mapping[str, Any]) -> dict[str, Any]:
    """Upstream's dropCPUMemoryResourcesFromContainer: ``c`` with its cpu/memory amounts put back to ``old``'s.
    A list the old container did not have at all is dropped whole, as upstream does."""
    out = dict(c)
    res = c.get("resources") or {}
    old_res = old.get("resources") or {}
    munged: dict[str, Any] = {}
    for key in ("limits", "requests"):
        old_list = old_res.get(key)
        if not old_list:
            continue
        values = {k: v for k, v in (res.get(key) or {}).items() if k not in _RESIZABLE}
        values.update({k: v for k, v in old_list.items() if k in _RESIZABLE})
        munged[key] = values
    out["resources"] = munged
    return out


def _same_container(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Semantic equality of two containers: a missing or empty ``resources`` list or map is no difference."""

    def norm(c: Mapping[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in c.items() if v not in (None, [], {})}
        res = {k: v for k, v in (c.get("resources") or {}).items() if v not in (None, [], {})}
        if res:
            out["resources"] = res
        else:
            out.pop("resources", None)
        return out

    return norm(a) == norm(b)


def _resize_supported(pod: Mapping[str, Any]) -> bool:
    """Upstream's isPodResizeRequestSupported: the first running (regular) container's status tells whether its node
    reports ``resources``; a pod with no running container is given the benefit of the doubt."""
    for cs in (pod.get("status") or {}).get("containerStatuses") or []:
        if isinstance(cs, Mapping) and isinstance((cs.get("state") or {}).get("running"), Mapping):
            return cs.get("resources") is not None
    return True


def validate_pod_resize(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[FieldError]:
    """What kube-apiserver 1.35's ValidatePodResize refuses in a ``pods/resize`` (``new`` is the stored pod with
    the resize's containers' ``resources`` and ``resizePolicy`` merged in, as upstream's resize strategy leaves it).

    Since 1.34 memory limits may be lowered whatever the resizePolicy (the kubelet guards against OOM kills), so
    there is no memory-limit rule. Upstream's version-skew check applies: the first running container whose status
    reports no ``resources`` means a node without resize support (berth's kubelet reports them for every container).
    """
    old_meta = old.get("metadata") or {}
    old_spec = old.get("spec") or {}
    new_spec = new.get("spec") or {}

    def pod_level(spec: Mapping[str, Any]) -> bool:
        res = spec.get("resources") or {}
        return bool(res.get("requests") or res.get("limits"))

    if pod_level(old_spec) or pod_level(new_spec):
        return [errors.forbidden_field("", "pods with pod-level resources cannot be resized")]
    if MIRROR_POD_ANNOTATION in (old_meta.get("annotations") or {}):
        return [errors.forbidden_field("", "static pods cannot be resized")]
    if (old_spec.get("os") or {}).get("name") == "windows":
        return [errors.forbidden_field("", "windows pods cannot be resized")]
    problems: list[FieldError] = []
    # Upstream compares status.qosClass, which it computed from the same spec at creation; computing it again
    # keeps a pod whose stored class came out differently (berth's create-time defaulting) resizable.
    if pod_qos_class(old_spec) != pod_qos_class(new_spec):
        shown = str((new.get("status") or {}).get("qosClass") or "")
        problems.append(
            errors.invalid_value("spec", shown, "Pod QOS Class may not change as a result of resizing")
        )
    if not _resize_supported(old):
        problems.append(errors.forbidden_field("spec", "Pod running on node without support for resize"))
    kinds = (("initContainers", True), ("containers", False))
    pairs: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {}
    for key, _ in kinds:
        before = [c for c in old_spec.get(key) or [] if isinstance(c, dict)]
        after = [c for c in new_spec.get(key) or [] if isinstance(c, dict)]
        if len(before) != len(after) or any(
            a.get("name") != b.get("name") for a, b in zip(after, before, strict=True)
        ):
            return [*problems, errors.forbidden_field("spec", "only cpu and memory resources are mutable")]
        pairs[key] = list(zip(after, before, strict=True))
    # Removing a request or a limit is not supported (regular containers and sidecars).
    for key, init in kinds:
        for i, (c, was) in enumerate(pairs[key]):
            if init and not _sidecar(was):
                continue
            path = f"spec.{key}[{i}].resources"
            res, old_res = c.get("resources") or {}, was.get("resources") or {}
            if _resources_removed(res.get("requests"), old_res.get("requests")):
                problems.append(
                    errors.forbidden_field(f"{path}.requests", "resource requests cannot be removed")
                )
            if _resources_removed(res.get("limits"), old_res.get("limits")):
                problems.append(errors.forbidden_field(f"{path}.limits", "resource limits cannot be removed"))
    for c, was in pairs["containers"]:
        if not _same_container(_without_cpu_memory_updates(c, was), was):
            problems.append(errors.forbidden_field("spec", "only cpu and memory resources are mutable"))
    for c, was in pairs["initContainers"]:
        if _sidecar(was):
            if not _same_container(_without_cpu_memory_updates(c, was), was):
                problems.append(
                    errors.forbidden_field(
                        "spec", "only cpu and memory resources for sidecar containers are mutable"
                    )
                )
        elif not _same_container(c, was):
            problems.append(
                errors.forbidden_field("spec", "resources for non-sidecar init containers are immutable")
            )
    return problems
