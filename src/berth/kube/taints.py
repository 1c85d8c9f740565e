"""Taints and tolerations, as the scheduler's TaintToleration/NodeUnschedulable plugins and the API server use them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

Taint = Mapping[str, Any]
Toleration = Mapping[str, Any]


def tolerates(toleration: Toleration, taint: Taint) -> bool:
    """Upstream ``Toleration.ToleratesTaint``: effect empty or equal, then key/operator/value rules."""
    t_effect = toleration.get("effect") or ""
    if t_effect and t_effect != taint.get("effect"):
        return False
    t_key = toleration.get("key") or ""
    if t_key and t_key != taint.get("key"):
        return False
    op = toleration.get("operator") or "Equal"
    if op == "Exists":
        return True
    if op == "Equal":
        # Upstream compares values even for an empty key (API validation forbids that combination anyway).
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return False


def tolerated(taint: Taint, tolerations: Iterable[Toleration]) -> bool:
    return any(tolerates(t, taint) for t in tolerations)


def first_untolerated(
    taints: Sequence[Taint], tolerations: Sequence[Toleration], effects: tuple[str, ...]
) -> Taint | None:
    """The first taint with one of ``effects`` that no toleration tolerates (upstream FindMatchingUntoleratedTaint)."""
    for taint in taints:
        if taint.get("effect") in effects and not tolerated(taint, tolerations):
            return taint
    return None
