"""Optional speed hooks a plugin may offer (berth-only), each a small runtime-checkable Protocol.

Why: the framework finds a plugin's fast forms with ``isinstance`` against these Protocols -- the way it finds
extension points with the ABCs of :mod:`~berth.schedule.framework.interface` -- so the names live in one place and
a typo in a plugin is a missing hook caught by ``isinstance`` tests, not a ``getattr`` that silently misses.
Every hook must answer exactly as the plugin's per-node method would.

List forms (both paths): :class:`BatchFilter` (``filter_nodes``), :class:`BatchScore` (``score_nodes``),
:class:`NormalizeList` (``normalize_scores``). Fused forms over rows of the profile's
:class:`~berth.schedule.vector.NodeArrays` (vectorised path only): :class:`FilterMask` (``filter_mask``),
:class:`FilterVerdicts` (``filter_verdicts``), :class:`ScoreArray` (``score_array``), :class:`NormalizeArray`
(``normalize_array``). Queue: :class:`SortKey` (``sort_key``, exactly ``less``'s order).

How :class:`~berth.schedule.framework.runtime.Framework` uses them. List forms: a Score plugin may define ``score_nodes(state, pod, nodes) -> (list[int],
Status)`` returning the raw scores of all ``nodes`` at once, ``normalize_scores(state, pod, raw) -> (list[int],
Status)`` as a list form of NormalizeScore, and a Filter plugin ``filter_nodes(state, pod, nodes)
-> list[Status]`` (one status per node, same order); the framework then calls them instead of the per-node
methods. Results must equal the per-node path. Integer scores are weighted and summed as int64 arrays.

Fused forms (vectorised path only, over rows of the profile's :class:`~berth.schedule.vector.NodeArrays`; the
scheduler uses them when Filter runs over the whole snapshot): ``filter_mask(state, pod, arrays, rows)`` -> a
boolean array (True: the node passes this plugin; False: it may not -- the per-node Filter chain decides), True
(every row passes) or None (no vector answer for this pod); ``score_array(state, pod, nodes, arrays, rows)`` ->
int64 raw scores or None; ``normalize_array(state, pod, raw)`` -> int64 or None. Hooks may answer with views of
memo columns: the framework never writes to what they return. ``filter_verdicts(state, pod, nodes, arrays,
rows)`` -> (int8 verdict per node, statuses) or None gives exact bulk rejections: 0 passes, k is ``statuses[k]``
(a rejection, equal to what the per-node Filter returns; a few shared objects, named once per chunk), so a rejected
node costs no Filter call. Exotic rows always take the per-node forms. A
QueueSort plugin may offer ``sort_key(qp)``, a key with exactly ``less``'s order, which the queue's heap compares
instead of calling ``less``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from berth.schedule.framework.interface import ClusterEvent, ClusterEventWithHint, CycleState, Status

if TYPE_CHECKING:
    from berth.schedule.framework.columns import BoolArray, IntArray, NodeArrays, Rows
    from berth.schedule.framework.types import NodeInfo, PodInfo, QueuedPodInfo

Int8Array = np.ndarray[Any, np.dtype[np.int8]]


@runtime_checkable
class BatchFilter(Protocol):
    """Filter over many nodes at once: one status per node, same order."""

    def filter_nodes(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> Sequence[Status]: ...


@runtime_checkable
class FilterMask(Protocol):
    """A boolean per row (True: passes this plugin; False: may not -- the per-node Filter decides), True (every
    row passes) or None (no vector answer for this pod)."""

    def filter_mask(
        self, state: CycleState, pod: PodInfo, arrays: NodeArrays, rows: Rows
    ) -> BoolArray | bool | None: ...


@runtime_checkable
class FilterVerdicts(Protocol):
    """Exact bulk rejections: per node an index into the returned statuses (0 passes), or None."""

    def filter_verdicts(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo], arrays: NodeArrays, rows: Rows
    ) -> tuple[Int8Array, Sequence[Status]] | None: ...


@runtime_checkable
class BatchScore(Protocol):
    """Raw scores of all ``nodes`` at once (same order)."""

    def score_nodes(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[Any, Status]: ...


@runtime_checkable
class ScoreArray(Protocol):
    """Raw scores of ``rows`` as an int64 array, or None (the list / per-node forms answer)."""

    def score_array(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo], arrays: NodeArrays, rows: Rows
    ) -> IntArray | None: ...


@runtime_checkable
class NormalizeList(Protocol):
    """NormalizeScore on a plain list of raw scores (no NodeScore objects)."""

    def normalize_scores(
        self, state: CycleState, pod: PodInfo, raw: list[int]
    ) -> tuple[list[int], Status]: ...


@runtime_checkable
class NormalizeArray(Protocol):
    """NormalizeScore on an int64 array, or None (the list form answers)."""

    def normalize_array(self, state: CycleState, pod: PodInfo, raw: IntArray) -> IntArray | None: ...


@runtime_checkable
class SortKey(Protocol):
    """A queue-sort key with exactly ``less``'s order (the heap compares keys instead of calling ``less``)."""

    def sort_key(self, qp: QueuedPodInfo) -> tuple[Any, ...]: ...


@runtime_checkable
class EnqueueExtensions(Protocol):
    """Plugins that reject pods say which cluster events may make those pods schedulable again, each optionally
    with a queueing hint (upstream ``EnqueueExtensions``). A plugin without it is interested in every event."""

    def events_to_register(self) -> Sequence[ClusterEvent | ClusterEventWithHint]: ...
