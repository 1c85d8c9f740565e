"""Node columns for the vectorised path, kept in step with the snapshot one changed row at a time.

Why: a kernel needs, for the nodes it is shown, arrays of allocatable/requested amounts, pod counts, taint
signatures ... Rebuilding them per pod would cost as much as the per-node path; instead :class:`NodeArrays` keeps
one row per node name and refreshes a row only when the :class:`~berth.schedule.framework.types.NodeInfo` shown for
it is a different object or has another ``generation`` (the cache clones a node into the snapshot whenever a pod is
assumed, forgotten, added or removed there, so an assume costs one row refresh).

Why in the framework: the columns are a profile's view of the snapshot, and the framework's fused Filter scan and
Score path (:mod:`~berth.schedule.framework.fused`, :mod:`~berth.schedule.framework.runtime`) run over them; the
kernels and topology indexes the plugins compute on them sit above, in :mod:`berth.schedule.vector` (which
re-exports the names here that plugins use through it: ``vector.arrays_for``, ``vector.enabled`` ...).

A row is *exotic* when some amount on the node is negative or beyond :data:`LIMIT` (2**52: sums of two stay exact in float64; above it int64
products may overflow and float64 loses integers); kernels send exotic rows to the per-node path.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from itertools import repeat
from operator import attrgetter, is_
from typing import Any, Generic, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from berth.schedule.framework.types import CPU, MEMORY, NodeInfo

T = TypeVar("T")

LIMIT = 2**52
MEMO_COLUMNS = 16  # memo columns kept per NodeArrays (least recently used dropped first)
_FEW_ROWS = 16  # up to this many changed rows a memo column asks the per-node form
REFRESH_LOG_LIMIT = 65_536  # refreshed rows remembered before the log restarts (memo columns then recompute)

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
# A run of rows: a slice (numpy indexes it as a view, no copy) or row numbers.
Rows = slice | IntArray

_generation = attrgetter("generation")


class Switch(Protocol):
    """What carries the vectorised path's switch: the plugins' handle (``Handle.vectorised``; a Framework sets it
    True when built)."""

    vectorised: bool


def enabled(handle: Switch) -> bool:
    """True unless the handle (a profile's framework) was switched to the reference path."""
    return handle.vectorised


def set_enabled(handle: Switch, on: bool) -> None:
    """Switch a framework between the vectorised (True, the default) and the per-node reference path."""
    handle.vectorised = on


def count(rows: Rows) -> int:
    """How many rows ``rows`` names (slices made by :meth:`NodeArrays.run` have a start, a stop and no step)."""
    if isinstance(rows, slice):
        return int(rows.stop) - int(rows.start)
    return len(rows)


def _fits(value: int) -> bool:
    return 0 <= value <= LIMIT


def _taint_signature(taints: Sequence[Any]) -> tuple[Any, ...] | None:
    """What toleration matching reads of a node's taints (None: something unhashable or malformed)."""
    try:
        sig = tuple((t.get("key"), t.get("value"), t.get("effect")) for t in taints)
        hash(sig)
    except (AttributeError, TypeError):
        return None
    return sig


class NodeArrays:
    """One row per node name; columns are numpy arrays indexed by row.

    Fixed columns: ``gen``, ``pod_count``, ``allowed_pods``, ``unschedulable``, ``taint_sig`` (0 = no taints),
    ``has_ports``, ``has_images``, ``exotic``. Resource columns are created on first use by :meth:`allocatable`,
    :meth:`requested` and :meth:`non_zero` and filled for every existing row.
    """

    def __init__(self, capacity: int = 64) -> None:
        self.size = 0
        self._cap = max(capacity, 1)
        self.by_name: dict[str, int] = {}
        self._by_id: dict[int, int] = {}
        self.objs: list[NodeInfo | None] = []
        self.gen = np.zeros(self._cap, np.int64)
        self.ids = np.zeros(self._cap, np.int64)  # id() of the NodeInfo each row was built from
        self.pod_count = np.zeros(self._cap, np.int64)
        self.allowed_pods = np.zeros(self._cap, np.int64)
        self.unschedulable = np.zeros(self._cap, np.bool_)
        self.taint_sig = np.zeros(self._cap, np.int64)
        self.has_ports = np.zeros(self._cap, np.bool_)
        self.has_images = np.zeros(self._cap, np.bool_)
        self.exotic = np.zeros(self._cap, np.bool_)
        self._alloc: dict[str, IntArray] = {}
        self._req: dict[str, IntArray] = {}
        self._nz: dict[str, IntArray] = {}
        # Taint signatures: id -> the taint list of the first node seen with it (0 is "no taints").
        self._sig_ids: dict[tuple[Any, ...], int] = {(): 0}
        self.sig_taints: list[Sequence[Any]] = [()]
        # (cycle, list object, a copy of it, length, rows) of the last lookup.
        self._memo: tuple[object, Sequence[NodeInfo] | None, list[NodeInfo] | None, int, IntArray] = (
            None,
            None,
            None,
            0,
            np.zeros(0, np.int64),
        )
        self.refreshes = 0  # rows (re)built, for tests and the benchmark
        self.columns_made = 0  # resource columns created (filling one may mark rows exotic)
        # How many rows have each boolean column set (rows of removed nodes included, so 0 means "none"): a
        # kernel asks the column only when some row has it.
        self.flagged: dict[str, int] = {"exotic": 0, "unschedulable": 0, "has_ports": 0, "has_images": 0}
        # Rows refreshed, oldest first (restarted past REFRESH_LOG_LIMIT, which bumps the epoch), and the memo
        # columns: key -> (values over all rows, epoch, log position they are current to).
        self._refresh_log: list[int] = []
        self._epoch = 0
        self._memos: OrderedDict[Hashable, tuple[np.ndarray[Any, Any], int, int]] = OrderedDict()
        # What :meth:`sync` last saw: (the snapshot's node list, its change log, how far the log was read,
        # position -> row or None when position i is row i).
        self._layout: tuple[Sequence[NodeInfo] | None, list[str] | None, int, IntArray | None] = (
            None,
            None,
            0,
            None,
        )

    # --- columns ------------------------------------------------------------------------------------------------

    def _fixed(self) -> list[str]:
        return [
            "gen",
            "ids",
            "pod_count",
            "allowed_pods",
            "unschedulable",
            "taint_sig",
            "has_ports",
            "has_images",
            "exotic",
        ]

    def _grow(self) -> None:
        cap = self._cap * 2
        for name in self._fixed():
            old = getattr(self, name)
            new = np.zeros(cap, old.dtype)
            new[: self._cap] = old
            setattr(self, name, new)
        for table in (self._alloc, self._req, self._nz):
            for key, old in table.items():
                new = np.zeros(cap, np.int64)
                new[: self._cap] = old
                table[key] = new
        self._cap = cap

    def _column(self, table: dict[str, IntArray], name: str, source: str) -> IntArray:
        col = table.get(name)
        if col is None:
            self.columns_made += 1
            col = np.zeros(self._cap, np.int64)
            table[name] = col
            for i, node in enumerate(self.objs):
                if node is not None:
                    self._set_amount(col, i, getattr(node, source).get(name, 0))
        return col

    def allocatable(self, name: str) -> IntArray:
        return self._column(self._alloc, name, "allocatable")

    def requested(self, name: str) -> IntArray:
        return self._column(self._req, name, "requested")

    def non_zero(self, name: str) -> IntArray:
        """cpu/memory with the scoring defaults (``NodeInfo.non_zero_requested``)."""
        return self._column(self._nz, name, "non_zero_requested")

    def _set_amount(self, col: IntArray, i: int, value: Any) -> None:
        if isinstance(value, int) and _fits(value):
            col[i] = value
        else:
            col[i] = 0
            self._mark_exotic(i)

    def _mark_exotic(self, i: int) -> None:
        if not self.exotic[i]:
            self.exotic[i] = True
            self.flagged["exotic"] += 1

    def _set_flag(self, name: str, i: int, value: bool) -> None:
        col = getattr(self, name)
        if bool(col[i]) != value:
            col[i] = value
            self.flagged[name] += 1 if value else -1

    # --- rows ---------------------------------------------------------------------------------------------------

    def rows(self, nodes: Sequence[NodeInfo], cycle: object = None) -> IntArray:
        """Row numbers of ``nodes`` (same order), refreshing rows whose NodeInfo changed.

        With ``cycle`` (the pod's CycleState) the answer is remembered for that cycle: the framework hands the same
        nodes to each Filter (or Score) plugin of one pod, and a snapshot's NodeInfo objects do not change during a
        cycle (the cache clones a changed node into the next snapshot). A hit needs the same cycle and the very same
        NodeInfo objects in the same order.
        """
        memo_cycle, memo_orig, memo_list, memo_len, memo_rows = self._memo
        n = len(nodes)
        if (
            memo_list is not None
            and cycle is not None
            and cycle is memo_cycle
            and n == memo_len
            and (nodes is memo_orig or all(map(is_, nodes, memo_list)))
        ):
            if nodes is not memo_orig:  # same nodes in another list (the feasible list): remember that list
                self._memo = (cycle, nodes, memo_list, n, memo_rows)
            return memo_rows
        fast = self._contiguous(nodes, n)
        if fast is not None:
            self._memo = (cycle, nodes, list(nodes), n, fast)
            return fast
        idx = np.fromiter(map(self._by_id.get, map(id, nodes), repeat(-1)), np.int64, n)
        if n:
            gens = np.fromiter(map(_generation, nodes), np.int64, n)
            known = idx >= 0
            stale = ~known
            stale[known] = self.gen[idx[known]] != gens[known]
            for j in np.flatnonzero(stale).tolist():
                idx[j] = self._refresh(nodes[j])
        self._memo = (cycle, nodes, list(nodes), n, idx)
        return idx

    def _contiguous(self, nodes: Sequence[NodeInfo], n: int) -> IntArray | None:
        """Rows of ``nodes`` when they sit on consecutive rows (wrapping around), as the scheduler's rotating filter
        chunks do once the arrays have seen the snapshot in order; None otherwise (the caller maps node by node).

        Changed nodes (new clones) are found by comparing object ids with the ``ids`` column in one array
        operation and refreshed; in-place mutation is caught by the sum of generations (a NodeInfo's generation
        only grows).
        """
        size = self.size
        if n == 0 or n > size:
            return None
        r0 = self._by_id.get(id(nodes[0]))
        if r0 is None:
            return None
        rows = np.arange(r0, r0 + n, dtype=np.int64)
        if r0 + n > size:
            rows %= size
        ids = np.fromiter(map(id, nodes), np.int64, n)
        changed = np.flatnonzero(ids != self.ids[rows]).tolist()
        if len(changed) > n // 4:
            return None
        by_name = self.by_name
        for j in changed:
            node = nodes[j]
            if by_name.get(node.name) != rows[j]:
                return None
            self._refresh(node)
        if sum(map(_generation, nodes)) != int(self.gen[rows].sum()):
            return None
        return rows

    def sync(self, snapshot: Any) -> None:
        """Bring the rows in step with ``snapshot`` (a :class:`berth.schedule.cache.Snapshot`) and remember which row
        each position of its node list is, for :meth:`run`.

        O(changed nodes): the cache logs the names it re-clones in ``snapshot.changes``, and only those rows are
        refreshed. A new node list (nodes added or removed, zone order changed) or a restarted log maps every node
        again (:meth:`rows`, which reuses unchanged rows). Relies on the snapshot's contract that its NodeInfo
        objects are never mutated in place (the cache clones a changed node into it).
        """
        nodes: Sequence[NodeInfo] = snapshot.node_infos()
        changes: list[str] = snapshot.changes
        known, log, pos, perm = self._layout
        if known is not None and log is not None and nodes is known and changes is log:
            if pos == len(changes):
                return
            get, by_name, objs = snapshot.get, self.by_name, self.objs
            for name in changes[pos:]:
                node = get(name)
                if node is None:
                    continue
                i = by_name.get(name)
                if i is None:  # a node this layout never saw: map everything again
                    break
                if objs[i] is not node:
                    self._refresh(node)
            else:
                self._layout = (known, log, len(changes), perm)
                return
        rows = self.rows(nodes)
        n = len(nodes)
        identity = n == 0 or bool((rows == np.arange(n)).all())
        self._layout = (nodes, changes, len(changes), None if identity else rows)

    def run(self, start: int, count: int, n: int) -> Rows:
        """Rows of the snapshot positions ``start, start + 1, ...`` (``count`` of them, wrapping at ``n``, the
        length of the node list last passed to :meth:`sync`): a slice when they are consecutive rows."""
        perm = self._layout[3]
        end = start + count
        if perm is None:
            if end <= n:
                return slice(start, end)
            return np.concatenate(
                (np.arange(start, n, dtype=np.int64), np.arange(0, end - n, dtype=np.int64))
            )
        if end <= n:
            return perm[start:end]
        return np.concatenate((perm[start:], perm[: end - n]))

    def changes(self) -> tuple[int, int]:
        """A marker that moves whenever a row may have become exotic (a row refreshed, a column created)."""
        return self.refreshes, self.columns_made

    def memo_column(
        self,
        key: Hashable,
        compute: Callable[[Rows], np.ndarray[Any, Any]],
        compute_node: Callable[[NodeInfo], Any] | None = None,
    ) -> np.ndarray[Any, Any]:
        """``compute(rows)`` for every row, kept current: a per-row value that depends only on the row's node and
        on ``key`` (e.g. a pod's requests) is computed once for all rows, then only for rows refreshed since (a
        cycle refreshes about one) -- with ``compute_node(node)``, the per-node form, when there are only a few
        (a kernel's dozen array operations cost as much for one row as for thousands). Index the result with the
        rows wanted; it is the memo itself, so do not write to it.

        Why: pods of one workload ask the same question of mostly unchanged nodes, pod after pod; this turns a
        kernel's array operations per pod into one lookup. Both forms must give the same value for a node that is
        not exotic (what the kernels and the plugins' per-node methods already guarantee).
        """
        memo = self._memos.get(key)
        log = self._refresh_log
        if memo is not None and memo[1] == self._epoch and len(memo[0]) == self._cap:
            values, _, pos = memo
            if pos < len(log):
                changed = set(log[pos:])
                if compute_node is not None and len(changed) <= _FEW_ROWS:
                    objs = self.objs
                    for i in changed:
                        node = objs[i]
                        if node is not None:
                            values[i] = compute_node(node)
                else:
                    rows = np.fromiter(changed, np.int64, len(changed))
                    values[rows] = compute(rows)
                self._memos[key] = (values, self._epoch, len(log))
            self._memos.move_to_end(key)
            return values
        first = compute(slice(0, self.size))
        values = np.zeros(self._cap, first.dtype)
        values[: self.size] = first
        self._memos[key] = (values, self._epoch, len(log))
        if len(self._memos) > MEMO_COLUMNS:
            self._memos.popitem(last=False)
        return values

    def forget_memo(self) -> None:
        self._memo = (None, None, None, 0, self._memo[4])

    def row_of(self, node: NodeInfo) -> int:
        """One node's row (refreshed if needed)."""
        i = self._by_id.get(id(node), -1)
        if i < 0 or self.gen[i] != node.generation:
            i = self._refresh(node)
        return i

    def _refresh(self, node: NodeInfo) -> int:
        i = self.by_name.get(node.name)
        if i is None:
            if self.size == self._cap:
                self._grow()
            i = self.size
            self.size += 1
            self.by_name[node.name] = i
            self.objs.append(None)
        old = self.objs[i]
        if old is not None and self._by_id.get(id(old)) == i:
            del self._by_id[id(old)]
        self.objs[i] = node  # held, so id(node) cannot be reused while it maps to this row
        self._by_id[id(node)] = i
        self.refreshes += 1
        log = self._refresh_log
        log.append(i)
        if len(log) > REFRESH_LOG_LIMIT:
            self._refresh_log = []
            self._epoch += 1
        self.gen[i] = node.generation
        self.ids[i] = id(node)
        # A clone of the row's node with other pods only (what an assume or a bind makes): the node's own parts
        # (allocatable, taints, images ...) are the very same objects, so only the pod-derived columns change.
        same_node = (
            old is not None
            and old is not node
            and old.node is node.node
            and old.allocatable is node.allocatable
            and old.taints is node.taints
            and old.image_states is node.image_states
            and old.unschedulable == node.unschedulable
            and not self.exotic[i]
        )
        if not same_node:
            self._set_flag("exotic", i, False)
            self._set_amount(self.allowed_pods, i, node.allocatable.get("pods", 0))
            self._set_flag("unschedulable", i, bool(node.unschedulable))
            images = bool(node.image_states) or bool((node.node.get("status") or {}).get("images"))
            self._set_flag("has_images", i, images)
            self.taint_sig[i] = self._signature_id(node, i)
            for name, col in self._alloc.items():
                self._set_amount(col, i, node.allocatable.get(name, 0))
        self.pod_count[i] = len(node.pods)
        self._set_flag("has_ports", i, bool(node.used_ports))
        for name, col in self._req.items():
            self._set_amount(col, i, node.requested.get(name, 0))
        for name, col in self._nz.items():
            self._set_amount(col, i, node.non_zero_requested.get(name, 0))
        return i

    def _signature_id(self, node: NodeInfo, i: int) -> int:
        if not node.taints:
            return 0
        sig = _taint_signature(node.taints)
        if sig is None:
            self._mark_exotic(i)
            return 0
        sid = self._sig_ids.get(sig)
        if sid is None:
            sid = len(self.sig_taints)
            self._sig_ids[sig] = sid
            self.sig_taints.append(list(node.taints))
        return sid

    @property
    def num_signatures(self) -> int:
        return len(self.sig_taints)


class PerHandle(Generic[T]):
    """One ``T`` per handle (a profile's framework), shared by its plugins; a private one kept on ``owner`` (as
    ``attr``) when the handle cannot be weakly referenced (test doubles)."""

    def __init__(self, factory: Callable[[], T], attr: str) -> None:
        self._by_handle: weakref.WeakKeyDictionary[Any, T] = weakref.WeakKeyDictionary()
        self._factory = factory
        self._attr = attr

    def get(self, handle: Any, owner: Any) -> T:
        try:
            value = self._by_handle.get(handle)
            if value is None:
                value = self._by_handle[handle] = self._factory()
            return value
        except TypeError:
            found: T | None = getattr(owner, self._attr, None)
            if found is None:
                found = self._factory()
                setattr(owner, self._attr, found)
            return found


_ARRAYS: PerHandle[NodeArrays] = PerHandle(NodeArrays, "_berth_node_arrays")

__all__ = [
    "CPU",
    "LIMIT",
    "MEMORY",
    "NodeArrays",
    "PerHandle",
    "Rows",
    "arrays_for",
    "count",
    "enabled",
    "set_enabled",
]


def arrays_for(handle: Any, owner: Any) -> NodeArrays:
    """The NodeArrays shared by the plugins of ``handle`` (see :class:`PerHandle`)."""
    return _ARRAYS.get(handle, owner)
