"""The Filter scan on the vectorised path (berth-only): per chunk of the rotation, every Filter plugin's mask or
verdicts over rows of the profile's :class:`~berth.schedule.vector.NodeArrays`, and the per-node forms only where
a mask may fail. See :meth:`berth.schedule.framework.runtime.Framework.find_feasible_rows` for the contract.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from berth.schedule.framework import columns
from berth.schedule.framework.interface import SUCCESS, Code, CycleState, Status
from berth.schedule.framework.types import NodeInfo, PodInfo

FilterFn = Callable[[CycleState, PodInfo, NodeInfo], Status]
BatchFilterFn = Callable[[CycleState, PodInfo, Sequence[NodeInfo]], Sequence[Status]]
MaskFn = Callable[
    [CycleState, PodInfo, columns.NodeArrays, columns.Rows],
    "columns.BoolArray | bool | None",
]
# Bulk rejections (vectorised path): per node of the chunk an index into the returned statuses (0 passes).
VerdictFn = Callable[
    [CycleState, PodInfo, Sequence[NodeInfo], columns.NodeArrays, columns.Rows],
    "tuple[np.ndarray[Any, np.dtype[np.int8]], Sequence[Status]] | None",
]
# One Filter plugin as the scan sees it: name, Filter, and its optional mask, batch and verdict forms.
FilterEntry = tuple[str, FilterFn, MaskFn | None, BatchFilterFn | None, VerdictFn | None]


def find_feasible_rows(
    entries: Sequence[FilterEntry],
    state: CycleState,
    pod: PodInfo,
    nodes: Sequence[NodeInfo],
    arrays: columns.NodeArrays,
    start: int,
    to_find: int,
    limit: int | None = None,
) -> tuple[list[NodeInfo], columns.Rows, list[tuple[str, Status]]] | None:
    n = len(nodes)
    end = n if limit is None else min(n, limit)
    skip = state.skip_filter
    if skip:
        entries = [e for e in entries if e[0] not in skip]
    ok_code = Code.SUCCESS
    feasible: list[NodeInfo] = []
    runs: list[columns.Rows] = []
    rejected: list[tuple[str, Status]] = []
    pos = 0
    while pos < end and len(feasible) < to_find:
        want = min(to_find - len(feasible), end - pos)
        i = start + pos
        if i >= n:
            i -= n
        rows = arrays.run(i, want, n)
        chunk = nodes[i : i + want] if i + want <= n else [*nodes[i:], *nodes[: i + want - n]]
        pos += want
        # Per plugin its mask answer: None (no answer: every node is asked), True (all pass) or an array; and
        # its verdicts (exact statuses per node, see filter_verdicts) where it gives them.
        answers: list[tuple[str, FilterFn, BatchFilterFn | None, Any, Any]] = []
        mask: columns.BoolArray | bool = True
        unanswered = False
        for name, fn, mask_fn, batch, verdict_fn in entries:
            v = verdict_fn(state, pod, chunk, arrays, rows) if verdict_fn is not None else None
            if v is not None:
                m = True if not v[0].any() else v[0] == 0
            else:
                m = mask_fn(state, pod, arrays, rows) if mask_fn is not None else None
            answers.append((name, fn, batch, m, v))
            if m is None:
                unanswered = True
            elif m is not True:
                mask = m if mask is True else mask & m
        exotic = arrays.exotic[rows] if arrays.flagged["exotic"] else None
        if exotic is not None and not exotic.any():
            exotic = None
        if not unanswered and exotic is None and (not isinstance(mask, np.ndarray) or bool(mask.all())):
            feasible.extend(chunk)  # every mask passes every node: the usual case
            runs.append(rows)
            continue
        # Plugin by plugin in profile order, each asked (batch form, else per node) only about the nodes still
        # alive that its mask did not pass (every node for a plugin without a mask; exotic rows always):
        # per node the plugins run in order up to the first rejection, as the reference chain does.
        ok = np.ones(want, np.bool_)
        for name, fn, batch, m, v in answers:
            if v is not None and m is not True:
                # Bulk rejections: the plugin's exact statuses, one named Status per reason (exotic rows
                # still take the per-node forms below).
                verdict, table = v
                hit = ok & ~m if exotic is None else ok & ~m & ~exotic
                idx = np.flatnonzero(hit)
                if idx.size:
                    named_by = [SUCCESS]
                    for status in table[1:]:
                        if not status.is_rejected:
                            return None
                        named_by.append(status.with_plugin(name))
                    ok[idx] = False
                    rejected.extend(
                        zip(
                            [chunk[j].name for j in idx.tolist()],
                            map(named_by.__getitem__, verdict[idx].tolist()),
                            strict=True,
                        )
                    )
                if exotic is None:
                    continue
                m = m | ~exotic  # only exotic rows left for the per-node forms
            if m is None:
                asked = ok
            elif m is True:
                if exotic is None:
                    continue
                asked = ok & exotic
            else:
                asked = ok & ~m if exotic is None else ok & (~m | exotic)
            candidates = np.flatnonzero(asked).tolist()
            if not candidates:
                continue
            subset = [chunk[j] for j in candidates]
            results = batch(state, pod, subset) if batch is not None else [fn(state, pod, x) for x in subset]
            last: Status | None = None
            named = SUCCESS
            for j, status in zip(candidates, results, strict=True):
                if status.code is ok_code:
                    continue
                if not status.is_rejected:
                    return None
                ok[j] = False
                if status is not last:  # plugins tend to hand out one Status object per reason
                    last, named = status, status.with_plugin(name)
                rejected.append((chunk[j].name, named))
        passed = np.flatnonzero(ok)
        feasible.extend([chunk[j] for j in passed.tolist()])
        runs.append((np.arange(rows.start, rows.stop) if isinstance(rows, slice) else rows)[passed])
    if len(runs) == 1:
        return feasible, runs[0], rejected
    flat = [np.arange(r.start, r.stop) if isinstance(r, slice) else r for r in runs]
    return feasible, (np.concatenate(flat) if flat else np.zeros(0, np.int64)), rejected
