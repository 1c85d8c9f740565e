"""Per-node columns for the topology plugins (PodTopologySpread, InterPodAffinity), kept in step with the snapshot.

Why: both plugins' PreFilter/PreScore need, for *every* node of the cluster, "how many pods on this node match
selector S" and "which topology domain is this node in". Walking 5,000 nodes and their pods in Python per pod is
what held topology-spreading and pod-anti-affinity to ~90 and ~50 pods/s. Here :class:`NodeIndex` keeps one row
per node, in the snapshot's own order (row ``i`` is ``snapshot.node_infos()[i]``), with

- *domain columns*: per topology key, an int32 id of the node's value (-1: the node lacks the key), values
  interned once (:class:`Domains`), so per-domain tallies are one ``np.bincount``;
- *count columns*: per caller-chosen key, ``fn(node)`` for every row (e.g. matching pods for ``(selector,
  namespace)``), computed once and then only for rows whose node changed;
- *keyed columns*: ``fn(node) -> {topology key: int}`` spread over one column per topology key (existing pods'
  anti-affinity terms matching a class of incoming pods);
- *per-domain sums* of a count or keyed column over a key's domains, updated with each row refresh, so a PreFilter
  over the whole cluster costs O(domains), plus each domain's row count and first row.

Domain ids of a key are never reused while its :class:`Domains` lives; when most ids belong to nodes long gone
(hostnames under node churn) a new node list starts the key afresh, and cycle states check that the id map they
hold is still the index's (:meth:`NodeIndex.same_domains`) before reading columns with it.

Staying in step costs O(changed nodes): the cache appends the names it re-clones to ``Snapshot.changes``
(:mod:`berth.schedule.cache`); :meth:`NodeIndex.sync` reads the log from where it stopped. A new node list (nodes
added/removed, zone order changed), a restarted log or a list that is not the snapshot's falls back to comparing
row objects and generations, and reuses the values of unchanged nodes, so correctness never depends on the log.

Row order = snapshot order matters: PodTopologySpread's critical paths depend on the order in which domains are
first met (:func:`critical_paths`), and the scheduler's rotating filter chunks are runs of consecutive rows
(:meth:`NodeIndex.rows_of`).

Counts are exact: int64 sums of per-node integers (bincount's float64 weights are exact below 2**53; totals here
are bounded by pods in the cluster).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from itertools import repeat
from operator import attrgetter, is_
from typing import Any

import numpy as np
import numpy.typing as npt

from berth.schedule.framework.columns import PerHandle
from berth.schedule.framework.types import NodeInfo

IntArray = npt.NDArray[np.int64]
DomArray = npt.NDArray[np.int32]
BoolArray = npt.NDArray[np.bool_]

COLUMNS_LIMIT = 64  # count/keyed columns kept per index (least recently used dropped first)
MAX_INT32 = 2**31 - 1
_NAME = attrgetter("name")

CountFn = Callable[[NodeInfo], int]
Source = tuple[Any, ...]  # ("count", count key) or ("keyed", keyed key, topology key)
KeyedFn = Callable[[NodeInfo], Mapping[str, int]]


class Domains:
    """One topology key: value -> id (ids never reused), the id column over rows (-1 = no such label), how many
    rows each id has, and (computed when asked, after labels changed) the first row of each id."""

    __slots__ = ("_first", "_rows", "col", "ids", "key", "values")

    def __init__(self, key: str, size: int) -> None:
        self.key = key
        self.ids: dict[str, int] = {}
        self.values: list[str] = []
        self.col: DomArray = np.full(size, -1, np.int32)
        self._rows: IntArray = np.zeros(8, np.int64)
        self._first: IntArray | None = None

    def id_of(self, value: str) -> int:
        i = self.ids.get(value)
        if i is None:
            i = self.ids[value] = len(self.values)
            self.values.append(value)
            self._first = None
            if i >= len(self._rows):
                self._rows = np.concatenate([self._rows, np.zeros(len(self._rows), np.int64)])
        return i

    def set_row(self, row: int, labels: Mapping[str, str]) -> None:
        value = labels.get(self.key)
        new = -1 if value is None else self.id_of(value)
        old = int(self.col[row])
        if old != new:
            self.col[row] = new
            if old >= 0:
                self._rows[old] -= 1
            if new >= 0:
                self._rows[new] += 1
            self._first = None

    def recount(self) -> None:
        """Rows per id from the column (after rows moved)."""
        ids = self.col[self.col >= 0]
        self._rows = np.zeros(max(8, len(self.values)), np.int64)
        self._rows[: len(self.values)] = np.bincount(ids, minlength=len(self.values))
        self._first = None

    @property
    def size(self) -> int:
        return len(self.values)

    def present(self) -> BoolArray:
        """Ids that some row carries."""
        out: BoolArray = self._rows[: len(self.values)] > 0
        return out

    def first_rows(self) -> IntArray:
        """Per id, the first row carrying it (``len(col)`` when none does)."""
        if self._first is None:
            rows = np.flatnonzero(self.col >= 0)
            first = np.full(len(self.values), len(self.col), np.int64)
            uniq, pos = np.unique(self.col[rows], return_index=True)
            first[uniq] = rows[pos]
            self._first = first
        return self._first


class _Count:
    __slots__ = ("col", "fn", "total")

    def __init__(self, fn: CountFn, col: IntArray) -> None:
        self.fn = fn
        self.col = col
        self.total = int(col.sum())


class _Keyed:
    __slots__ = ("cols", "fn")

    def __init__(self, fn: KeyedFn) -> None:
        self.fn = fn
        self.cols: dict[str, IntArray] = {}

    def set_row(self, row: int, node: NodeInfo, size: int) -> None:
        for col in self.cols.values():
            col[row] = 0
        for key, value in self.fn(node).items():
            have = self.cols.get(key)
            if have is None:  # first row with this key: every other row is 0 for it
                have = self.cols[key] = np.zeros(size, np.int64)
            have[row] = value


class NodeIndex:
    """Rows = the snapshot's node list; columns derived from each row's NodeInfo, refreshed per changed row."""

    def __init__(self) -> None:
        self.nodes: list[NodeInfo] = []  # row -> the NodeInfo the row's values were computed from
        self.row_of: dict[str, int] = {}
        self._gens: list[int] = []
        self._list: Sequence[NodeInfo] | None = None  # the list mirrored (held: its id cannot be reused)
        self._log: list[str] | None = None
        self._pos = 0
        self.domains: dict[str, Domains] = {}
        self._counts: OrderedDict[Hashable, _Count] = OrderedDict()
        self._keyed: OrderedDict[Hashable, _Keyed] = OrderedDict()
        self._sums: dict[tuple[str, Source], IntArray] = {}  # (topology key, column) -> per-id sums
        self.refreshes = 0  # rows recomputed, for tests
        self.version = 0  # grows whenever any row or the row order changes (for caches of whole-row results)

    @property
    def size(self) -> int:
        return len(self.nodes)

    # --- keeping in step -------------------------------------------------------------------------------------

    def sync(self, nodes: Sequence[NodeInfo], snapshot: Any = None) -> None:
        """Make the rows mirror ``nodes`` (normally ``snapshot.node_infos()``)."""
        log: list[str] | None = getattr(snapshot, "changes", None) if snapshot is not None else None
        if log is not None and nodes is self._list and log is self._log and snapshot.node_infos() is nodes:
            end = len(log)
            if self._pos != end:
                for name in log[self._pos : end]:
                    row = self.row_of.get(name)
                    if row is not None and nodes[row] is not self.nodes[row]:
                        self._refresh(row, nodes[row])
                self._pos = end
            return
        self._rebuild(nodes)
        self._list = nodes
        if log is not None and snapshot.node_infos() is nodes:
            self._log, self._pos = log, len(log)
        else:
            self._log, self._pos = None, 0

    def _rebuild(self, nodes: Sequence[NodeInfo]) -> None:
        """Rows for ``nodes``: a row whose name sits on the same row with the same NodeInfo and generation keeps
        its values (moved if the order changed); the others are recomputed."""
        n = len(nodes)
        old_nodes, old_gens, old_row = self.nodes, self._gens, self.row_of
        src: list[int] = []
        stale: list[int] = []
        for i, node in enumerate(nodes):
            j = old_row.get(node.name, -1)
            if j >= 0 and old_nodes[j] is node and old_gens[j] == node.generation:
                src.append(j)
            else:
                src.append(-1)
                stale.append(i)
        if (
            n == len(old_nodes)
            and all(j in (i, -1) for i, j in enumerate(src))
            and all(old_nodes[i].name == node.name for i, node in enumerate(nodes))
        ):
            for i in stale:  # same rows: refresh the changed ones in place
                self._refresh(i, nodes[i])
            return
        src_arr = np.array(src, np.int64)
        keep = src_arr >= 0
        from_rows = src_arr[keep]

        def moved(col: Any, fill: Any) -> Any:
            new = np.full(n, fill, col.dtype)
            new[keep] = col[from_rows]
            return new

        self._sums.clear()
        self.version += 1
        for key, d in list(self.domains.items()):
            if d.size > 2 * n + 64:  # values of nodes long gone (hostnames under churn): start the key afresh
                del self.domains[key]
                continue
            d.col = moved(d.col, -1)
            d.recount()
        for count in self._counts.values():
            count.col = moved(count.col, 0)
        for keyed in self._keyed.values():
            keyed.cols = {k: moved(c, 0) for k, c in keyed.cols.items()}
        self.nodes = list(nodes)
        self._gens = [node.generation for node in nodes]
        self.row_of = {node.name: i for i, node in enumerate(nodes)}
        for i in stale:
            self._refresh(i, nodes[i])
        for count in self._counts.values():
            count.total = int(count.col.sum())

    def same_domains(self, key: str, ids: Mapping[str, int]) -> bool:
        """Whether ``ids`` (kept by a cycle state) is still ``key``'s id map (not replaced by a fresh one)."""
        d = self.domains.get(key)
        return d is not None and d.ids is ids

    def _source(self, source: Source) -> IntArray | None:
        """The column a sum adds up: ``("count", key)`` or ``("keyed", key, topology key)`` (None: not there)."""
        if source[0] == "count":
            count = self._counts.get(source[1])
            return None if count is None else count.col
        keyed = self._keyed.get(source[1])
        return None if keyed is None else keyed.cols.get(source[2])

    def _value(self, source: Source, row: int) -> int:
        col = self._source(source)
        return 0 if col is None else int(col[row])

    def _refresh(self, row: int, node: NodeInfo) -> None:
        sums = self._sums
        before = [(k, int(self.domains[k[0]].col[row]), self._value(k[1], row)) for k in sums] if sums else ()
        self._refresh_row(row, node)
        for k, old_id, old_value in before:
            arr = sums[k]
            if old_id >= 0:
                arr[old_id] -= old_value
            new_id = int(self.domains[k[0]].col[row])
            if new_id >= 0:
                if new_id >= len(arr):
                    arr = sums[k] = np.concatenate([arr, np.zeros(new_id + 1 - len(arr), np.int64)])
                arr[new_id] += self._value(k[1], row)

    def _refresh_row(self, row: int, node: NodeInfo) -> None:
        self.refreshes += 1
        self.version += 1
        self.nodes[row] = node
        self._gens[row] = node.generation
        labels = node.labels
        for d in self.domains.values():
            d.set_row(row, labels)
        for count in self._counts.values():
            col = count.col
            value = count.fn(node)
            count.total += value - int(col[row])
            col[row] = value
        size = len(self.nodes)
        for keyed in self._keyed.values():
            keyed.set_row(row, node, size)

    # --- columns ---------------------------------------------------------------------------------------------

    def domain(self, key: str) -> Domains:
        d = self.domains.get(key)
        if d is None:
            d = self.domains[key] = Domains(key, len(self.nodes))
            for i, node in enumerate(self.nodes):
                d.set_row(i, node.labels)
        return d

    def counts(self, key: Hashable, fn: CountFn) -> IntArray:
        """``fn(node)`` for every row, remembered under ``key`` (``fn`` must depend only on the node)."""
        return self.column(key, fn).col

    def total(self, key: Hashable, fn: CountFn) -> int:
        """The sum of :meth:`counts` over all rows, kept as rows change (an O(1) "does any node have one?")."""
        return self.column(key, fn).total

    def column(self, key: Hashable, fn: CountFn) -> _Count:
        hit = self._counts.get(key)
        if hit is not None:
            self._counts.move_to_end(key)
            return hit
        if len(self._counts) >= COLUMNS_LIMIT:
            gone, _ = self._counts.popitem(last=False)
            for k in [k for k in self._sums if k[1] == ("count", gone)]:
                del self._sums[k]
        count = self._counts[key] = _Count(fn, np.fromiter(map(fn, self.nodes), np.int64, len(self.nodes)))
        return count

    def keyed(
        self, key: Hashable, fn: KeyedFn, only: Callable[[], IntArray] | None = None
    ) -> dict[str, IntArray]:
        """``fn(node)`` (topology key -> int) for every row as one column per topology key. ``only``: gives the
        rows where ``fn`` can be non-empty (the others are not asked when the columns are first built)."""
        hit = self._keyed.get(key)
        if hit is not None:
            self._keyed.move_to_end(key)
            return hit.cols
        if len(self._keyed) >= COLUMNS_LIMIT:
            gone, _ = self._keyed.popitem(last=False)
            for k in [k for k in self._sums if k[1][0] == "keyed" and k[1][1] == gone]:
                del self._sums[k]
        keyed = self._keyed[key] = _Keyed(fn)
        size = len(self.nodes)
        rows = range(size) if only is None else only().tolist()
        nodes = self.nodes
        for i in rows:
            keyed.set_row(i, nodes[i], size)
        return keyed.cols

    def domain_sums(self, key: str, count_key: Hashable, fn: CountFn) -> IntArray:
        """Per domain id of ``key``: the column ``count_key`` summed over the rows carrying it, kept up to date
        row by row (so a PreFilter over every node costs O(domains)). Read-only for callers."""
        self.column(count_key, fn)
        return self._sum(key, ("count", count_key))

    def keyed_sums(self, key: str, keyed_key: Hashable, column: str) -> IntArray:
        """:meth:`domain_sums` for the ``column`` (a topology key) of the keyed columns ``keyed_key`` (which
        :meth:`keyed` must have built). Read-only for callers."""
        return self._sum(key, ("keyed", keyed_key, column))

    def _sum(self, key: str, source: Source) -> IntArray:
        d = self.domain(key)
        arr = self._sums.get((key, source))
        if arr is None:
            arr = self._sums[(key, source)] = self.tally(key, self._source(source))
        if len(arr) < d.size:
            arr = self._sums[(key, source)] = np.concatenate([arr, np.zeros(d.size - len(arr), np.int64)])
        return arr[: d.size]

    def tally(self, key: str, weights: IntArray | None, mask: BoolArray | None = None) -> IntArray:
        """Per domain id of ``key``: the sum of ``weights`` over rows (in ``mask``) that carry the key."""
        d = self.domain(key)
        has = d.col >= 0
        if mask is not None:
            has &= mask
        ids = d.col[has]
        if weights is None:
            return np.zeros(d.size, np.int64)
        return np.bincount(ids, weights=weights[has], minlength=d.size).astype(np.int64)

    # --- chunks ----------------------------------------------------------------------------------------------

    def rows_of(self, nodes: Sequence[NodeInfo]) -> IntArray | None:
        """Rows of ``nodes`` when each is the very NodeInfo a row was computed from (else None: use the per-node
        path). The scheduler's filter chunks are runs of consecutive rows (wrapping), checked in one pass."""
        n = len(nodes)
        size = len(self.nodes)
        if n == 0 or n > size:
            return None
        r0 = self.row_of.get(nodes[0].name)
        if r0 is None:
            return None
        end = r0 + n
        mine = self.nodes[r0:end] if end <= size else self.nodes[r0:] + self.nodes[: end - size]
        if all(map(is_, nodes, mine)):
            rows = np.arange(r0, end, dtype=np.int64)
            if end > size:
                rows %= size
            return rows
        out = np.fromiter(map(self.row_of.get, map(_NAME, nodes), repeat(-1)), np.int64, n)
        if bool((out < 0).any()) or not all(map(is_, nodes, map(self.nodes.__getitem__, out.tolist()))):
            return None
        return out


def lookup(values: IntArray, ids: DomArray | IntArray) -> IntArray:
    """``values[ids]`` with 0 for ids that are -1 or beyond ``values`` (domains met after ``values`` was built)."""
    n = len(values)
    ok = (ids >= 0) & (ids < n)
    if bool(ok.all()):
        return values[ids]
    out = np.zeros(len(ids), np.int64)
    out[ok] = values[ids[ok]]
    return out


_BIG = np.iinfo(np.int64).max
_SMALL = 32  # domains up to which critical paths are found in plain Python


def critical_paths(
    values: Sequence[str],
    counts: IntArray,
    present: BoolArray,
    dom_seq: DomArray | None,
    first_rows: IntArray | None = None,
) -> list[list[Any]]:
    """PodTopologySpread's two critical paths as its sequential ``update`` would leave them after visiting the
    present domains in order of first appearance in ``dom_seq`` (domain ids of eligible rows, in row order) --
    or, given ``first_rows`` (each domain's first eligible row), in that order without scanning the rows.

    Streaming "keep the two smallest" with strict comparisons keeps, for the smallest count, the domain met first;
    for the second path, the first-met domain with the smallest count among the rest. Empty: sentinels.
    """
    paths: list[list[Any]] = [["", MAX_INT32], ["", MAX_INT32]]
    if first_rows is not None and len(counts) <= _SMALL:
        # A few domains (zones): plain Python on lists is cheaper than a dozen array calls.
        order = sorted(
            (first, i)
            for i, (first, here) in enumerate(zip(first_rows.tolist(), present.tolist(), strict=True))
            if here
        )
        values_list = counts.tolist()
        for slot in range(2):
            best = -1
            for _, i in order:
                if best < 0 or values_list[i] < values_list[best]:
                    best = i
            if best < 0:
                break
            paths[slot] = [values[best], values_list[best]]
            order = [(f, i) for f, i in order if i != best]
        return paths
    if not bool(present.any()):
        return paths
    masked = np.where(present, counts, _BIG)

    def first_met(low: int) -> int:
        if first_rows is not None:
            candidates = np.flatnonzero(masked == low)
            return int(candidates[int(np.argmin(first_rows[candidates]))])
        assert dom_seq is not None
        return int(dom_seq[int(np.argmax((masked == low)[dom_seq]))])

    low = int(masked.min())
    first = first_met(low)
    paths[0] = [values[first], low]
    masked[first] = _BIG
    low2 = int(masked.min())
    if low2 != _BIG:
        second = first_met(low2)
        paths[1] = [values[second], low2]
    return paths


class DomainCounts(Mapping[str, int]):
    """``topology value -> count`` for one constraint, backed by an array over a key's domain ids (the mapping
    PodTopologySpread's per-node Filter and preemption's AddPod/RemovePod read and update). Only *present* domains
    are entries (``len`` counts them), as in the dict the reference path builds. Invariant: a domain that is not
    present counts 0 in the array, so array lookups need no presence test."""

    __slots__ = ("_n", "counts", "extra", "ids", "present")

    def __init__(self, ids: Mapping[str, int], counts: IntArray, present: BoolArray) -> None:
        self.ids = ids
        self.counts = counts
        self.present = present
        self.extra: dict[str, int] = {}  # values without an id below len(counts)
        self._n = int(np.count_nonzero(present))

    def _slot(self, value: str) -> int:
        i = self.ids.get(value)
        return -1 if i is None or i >= len(self.counts) else i

    def __getitem__(self, value: str) -> int:
        i = self._slot(value)
        if i < 0:
            return self.extra[value]
        if not self.present[i]:
            raise KeyError(value)
        return int(self.counts[i])

    def __setitem__(self, value: str, num: int) -> None:
        i = self._slot(value)
        if i < 0:
            if value not in self.extra:
                self._n += 1
            self.extra[value] = num
            return
        if not self.present[i]:
            self.present[i] = True
            self._n += 1
        self.counts[i] = num

    def __len__(self) -> int:
        return self._n

    def __iter__(self) -> Iterator[str]:
        inverse = {i: v for v, i in self.ids.items()}
        for i in np.flatnonzero(self.present).tolist():
            yield inverse[i]
        yield from self.extra

    def __repr__(self) -> str:
        return f"DomainCounts({dict(self)!r})"

    def copy(self) -> DomainCounts:
        out = DomainCounts(self.ids, self.counts.copy(), self.present.copy())
        out.extra = dict(self.extra)
        out._n = self._n
        return out


class PairCounts(Mapping[tuple[str, str], int]):
    """``(topology key, value) -> count`` backed by one array per key over its domain ids (InterPodAffinity's
    PreFilter maps). Zero means absent, as the reference path drops entries that reach 0."""

    __slots__ = ("_nonzero", "arrays", "extra", "ids")

    def __init__(self) -> None:
        self.arrays: dict[str, IntArray] = {}
        self.ids: dict[str, Mapping[str, int]] = {}
        self.extra: dict[tuple[str, str], int] = {}
        self._nonzero = 0

    def add_array(self, key: str, ids: Mapping[str, int], values: IntArray) -> None:
        """Add per-domain ``values`` (over ``ids``' domains) for ``key``."""
        have = self.arrays.get(key)
        if have is None:
            self.arrays[key] = values.copy()
            self.ids[key] = ids
        else:
            if len(have) < len(values):
                have = np.concatenate([have, np.zeros(len(values) - len(have), np.int64)])
            have[: len(values)] += values
            self.arrays[key] = have
        self._nonzero = sum(int(np.count_nonzero(a)) for a in self.arrays.values()) + len(self.extra)

    def _slot(self, pair: tuple[str, str]) -> int:
        ids = self.ids.get(pair[0])
        if ids is None:
            return -1
        i = ids.get(pair[1])
        return -1 if i is None or i >= len(self.arrays[pair[0]]) else i

    def __getitem__(self, pair: tuple[str, str]) -> int:
        i = self._slot(pair)
        if i < 0:
            return self.extra[pair]
        n = int(self.arrays[pair[0]][i])
        if not n:
            raise KeyError(pair)
        return n

    def __setitem__(self, pair: tuple[str, str], num: int) -> None:
        i = self._slot(pair)
        if i < 0:
            before = self.extra.get(pair, 0)
            if num:
                self.extra[pair] = num
            else:
                self.extra.pop(pair, None)
        else:
            arr = self.arrays[pair[0]]
            before = int(arr[i])
            arr[i] = num
        self._nonzero += (1 if num else 0) - (1 if before else 0)

    def pop(self, pair: tuple[str, str], default: int | None = None) -> int | None:
        have = self.get(pair, 0)
        if have:
            self[pair] = 0
            return have
        return default

    def __len__(self) -> int:
        return self._nonzero

    def __iter__(self) -> Iterator[tuple[str, str]]:
        for key, arr in self.arrays.items():
            inverse = {i: v for v, i in self.ids[key].items()}
            for i in np.flatnonzero(arr).tolist():
                yield key, inverse[i]
        yield from self.extra

    def __repr__(self) -> str:
        return f"PairCounts({dict(self)!r})"

    def copy(self) -> PairCounts:
        out = PairCounts()
        out.arrays = {k: a.copy() for k, a in self.arrays.items()}
        out.ids = dict(self.ids)
        out.extra = dict(self.extra)
        out._nonzero = self._nonzero
        return out


_INDEXES: PerHandle[NodeIndex] = PerHandle(NodeIndex, "_berth_node_index")


def index_for(handle: Any, owner: Any) -> NodeIndex:
    """The NodeIndex shared by the plugins of ``handle`` (see :class:`~berth.schedule.framework.columns.PerHandle`)."""
    return _INDEXES.get(handle, owner)


def synced_index(handle: Any, owner: Any, nodes: Sequence[NodeInfo]) -> NodeIndex:
    """:func:`index_for`, brought in step with ``nodes`` (the snapshot's list when the handle has a snapshot)."""
    index = index_for(handle, owner)
    index.sync(nodes, handle.snapshot())
    return index
