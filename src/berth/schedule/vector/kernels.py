"""Array forms of the built-in plugins' per-node arithmetic (the plugins call these from their batch hooks).

Why: one place for the integer/float rules that make the vectorised path equal to the reference. Inputs are rows
of :class:`~berth.schedule.framework.columns.NodeArrays` that are not exotic, so every amount is in ``[0, 2**52]``:
products by 100 fit int64, floor division equals Go's truncation, and int -> float64 conversion is exact (so
``r / a`` is the same correctly rounded quotient Python computes).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from berth.schedule.framework.columns import LIMIT, BoolArray, IntArray, NodeArrays, Rows, count

# (resource name, read the non-zero cpu/memory sums, pod request, weight) -- ResourceAllocation.scored_items.
ScoredItem = tuple[str, bool, int, int]


def pod_values_fit(values: Sequence[int]) -> bool:
    """The pod's amounts are safe for the kernels (otherwise the caller takes the per-node path)."""
    return all(isinstance(v, int) and 0 <= v <= LIMIT for v in values)


def fit_mask(arrays: NodeArrays, rows: Rows, checks: Sequence[tuple[str, int]], empty: bool) -> BoolArray:
    """NodeResourcesFit's verdict per row: room for one more pod and, unless the pod requests nothing, every
    checked request ``<= allocatable - requested``."""
    ok: BoolArray = arrays.pod_count[rows] < arrays.allowed_pods[rows]
    if not empty:
        for name, want in checks:
            ok &= want <= arrays.allocatable(name)[rows] - arrays.requested(name)[rows]
    return ok


def _used(arrays: NodeArrays, rows: Rows, name: str, non_zero: bool) -> IntArray:
    return (arrays.non_zero(name) if non_zero else arrays.requested(name))[rows]


def allocated_scores(arrays: NodeArrays, rows: Rows, items: Sequence[ScoredItem], least: bool) -> IntArray:
    """LeastAllocated (``least``) or MostAllocated: weighted integer mean over resources the node has.

    Least: ``(a - r) * 100 // a`` when ``r <= a`` else 0; Most: ``min(r, a) * 100 // a``; node ``sum // weights``.
    """
    n = count(rows)
    columns = [
        (arrays.allocatable(name)[rows], _used(arrays, rows, name, non_zero) + pod_req, weight)
        for name, non_zero, pod_req, weight in items
    ]
    if columns and all(bool(a.all()) for a, _, _ in columns):
        # Every node has every resource (the common case): no masking needed.
        acc: IntArray | None = None
        for a, r, weight in columns:
            if least:
                term = np.where(r <= a, (a - r) * 100 // a, 0)
            else:
                term = np.minimum(r, a) * 100 // a
            acc = term * weight if acc is None else acc + term * weight
        assert acc is not None
        return acc // sum(w for _, _, w in columns)
    total = np.zeros(n, np.int64)
    weights = np.zeros(n, np.int64)
    for a, r, weight in columns:
        has = a != 0
        safe_a = np.where(has, a, 1)
        if least:
            term = np.where(has & (r <= a), (a - r) * 100 // safe_a, 0)
        else:
            term = np.where(has, np.minimum(r, a) * 100 // safe_a, 0)
        total += term * weight
        weights += np.where(has, weight, 0)
    out: IntArray = np.where(weights > 0, total // np.where(weights > 0, weights, 1), 0)
    return out


def balanced_scores(
    arrays: NodeArrays, rows: Rows, items: Sequence[tuple[str, int]]
) -> tuple[IntArray, BoolArray]:
    """BalancedAllocation (1.34/1.35) per row, and a mask of rows it could not decide (a resource missing on a
    node when more than two are configured: those rows go to the per-node path).

    Fractions ``min(r / a, 1)`` in float64; two resources ``|f1 - f2| / 2``; more: population std with the same
    left-to-right sums as the reference; score ``int((1 - std) * 100)``.
    """
    n = count(rows)
    if len(items) == 2:
        (n0, p0), (n1, p1) = items
        a0, a1 = arrays.allocatable(n0)[rows], arrays.allocatable(n1)[rows]
        if a0.all() and a1.all():  # the common case: both resources on every node
            r0 = arrays.requested(n0)[rows] + p0
            r1 = arrays.requested(n1)[rows] + p1
            f0 = np.minimum(r0 / a0, 1.0)
            f1 = np.minimum(r1 / a1, 1.0)
            two: IntArray = ((1 - np.abs((f0 - f1) / 2)) * 100).astype(np.int64)
            return two, np.zeros(n, np.bool_)
    fractions: list[np.ndarray] = []
    present = np.zeros(n, np.int64)
    for name, pod_req in items:
        a = arrays.allocatable(name)[rows]
        r = arrays.requested(name)[rows] + pod_req
        has = a != 0
        present += has
        f = np.where(r > a, 1.0, r / np.where(has, a, 1))
        fractions.append(np.where(has, f, 0.0))
    k = len(items)
    undecided: BoolArray = np.zeros(n, np.bool_)
    if k == 2:
        std = np.abs((fractions[0] - fractions[1]) / 2)
        std = np.where(present == 2, std, 0.0)
    elif k > 2:
        acc = fractions[0]
        for f in fractions[1:]:
            acc = acc + f
        mean = acc / k
        var = (fractions[0] - mean) * (fractions[0] - mean)
        for f in fractions[1:]:
            var = var + (f - mean) * (f - mean)
        std = np.sqrt(var / k)
        undecided = (present != k) & (present >= 2)
        std = np.where(present == k, std, 0.0)
    else:
        std = np.zeros(n)
    scores: IntArray = ((1 - std) * 100).astype(np.int64)
    return scores, undecided


def default_normalize(raw: Sequence[int], reverse: bool, max_priority: int = 100) -> list[int] | None:
    """Upstream ``DefaultNormalizeScore`` on a list (see ``plugins.helper.default_normalize_score``): scale so the
    highest gets ``max_priority`` with Go's truncating division; ``reverse`` flips; all-zero stays (or becomes
    ``max_priority`` when reversed). None when a score is not an int small enough for int64 arithmetic."""
    if not raw:
        return []
    arr = np.asarray(raw)
    if arr.ndim != 1 or arr.dtype.kind not in "iu":
        return None
    out = default_normalize_array(arr.astype(np.int64, copy=False), reverse, max_priority)
    return None if out is None else out.tolist()


def default_normalize_array(raw: IntArray, reverse: bool, max_priority: int = 100) -> IntArray | None:
    """:func:`default_normalize` on an int64 array (the framework's fused score path); a new array, or None when
    a score is too large for int64 arithmetic (the caller then takes the list form)."""
    if not raw.size:
        return raw.copy()
    highest = int(raw.max())
    lowest = int(raw.min())
    if max(highest, -lowest) > LIMIT // max(max_priority, 1):
        return None
    if highest == 0:
        if reverse:
            return np.full(raw.shape, max_priority, np.int64)
        return raw.copy()
    x = raw * max_priority
    if lowest >= 0 and highest > 0:  # the usual case: floor division is Go's truncation
        scaled = x // highest
    else:
        q = np.abs(x) // abs(highest)
        scaled = np.where((x >= 0) == (highest >= 0), q, -q)
    out: IntArray = max_priority - scaled if reverse else scaled
    return out
