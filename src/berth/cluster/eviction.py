"""Evictions (``POST pods/<name>/eviction``): refused with 429 while a PodDisruptionBudget would be broken, as
upstream's eviction storage checks before it deletes."""

from __future__ import annotations

from typing import Any

from berth.cluster import errors as E
from berth.cluster.host import ApiHost
from berth.kube import selectors
from berth.kube.objects import Obj


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


def check_eviction(api: ApiHost, pod: Obj) -> None:
    """429 when evicting ``pod`` would break a PodDisruptionBudget (computed from the live pods, as the
    disruption controller would: healthy = Ready pods the budget selects)."""
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
