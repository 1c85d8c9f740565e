"""NodeArrays bookkeeping: rows follow the snapshot incrementally (a changed node costs one row refresh, also
through the snapshot's change log), rotating chunks map to consecutive rows, memo columns follow refreshed rows,
and amounts the kernels cannot hold exactly mark the row exotic."""

from __future__ import annotations

import numpy as np
import pytest
from plugins.support import container, node, pod

from berth.schedule.cache import Cache, Snapshot
from berth.schedule.framework.columns import NodeArrays, Rows
from berth.schedule.scheduler import rotated_slice


def test_only_changed_nodes_are_refreshed_and_chunks_wrap_around() -> None:
    nodes = [node(f"n{i}") for i in range(6)]
    arrays = NodeArrays(capacity=2)  # grows while rows are added
    assert arrays.rows(nodes).tolist() == [0, 1, 2, 3, 4, 5]
    assert arrays.refreshes == 6
    clone = nodes[4].clone()  # what the cache does when a pod is assumed there
    clone.add_pod(pod("x").with_node("n4"))
    nodes[4] = clone
    wrapped = nodes[3:] + nodes[:2]
    assert arrays.rows(wrapped).tolist() == [3, 4, 5, 0, 1]
    assert arrays.refreshes == 7  # just n4
    assert arrays.pod_count[4] == 1
    assert arrays.requested("cpu")[4] == 0 and arrays.non_zero("cpu")[4] == 100


def test_in_place_change_is_seen_through_the_generation() -> None:
    nodes = [node(f"n{i}") for i in range(3)]
    arrays = NodeArrays()
    arrays.rows(nodes)
    nodes[1].add_pod(
        pod("x", containers=[{"name": "c", "resources": {"requests": {"cpu": "1"}}}]).with_node("n1")
    )
    assert arrays.rows(list(nodes)).tolist() == [0, 1, 2]
    assert arrays.requested("cpu")[1] == 1000


@pytest.mark.parametrize(
    ("allocatable", "exotic"),
    [
        ({"cpu": "4", "memory": "8Gi", "pods": 110}, False),
        ({"cpu": "4", "memory": 2**70, "pods": 110}, True),
        ({"cpu": "4", "memory": "8Gi", "pods": 2**60}, True),
    ],
    ids=["ordinary", "memory-beyond-int64", "pods-beyond-limit"],
)
def test_amounts_beyond_the_limit_mark_the_row_exotic(allocatable: dict[str, object], exotic: bool) -> None:
    arrays = NodeArrays()
    row = arrays.row_of(node("n", allocatable=allocatable))
    arrays.allocatable("memory")
    assert bool(arrays.exotic[row]) is exotic


def testrotated_slice_equals_slicing_the_rotation() -> None:
    for n in range(6):
        items = [node(f"n{i}") for i in range(n)]
        for start in range(max(n, 1)):
            rotated = items[start:] + items[:start]
            for pos in range(n + 2):
                for count in range(n + 2):
                    assert rotated_slice(items, start, pos, count) == rotated[pos : pos + count]


def _cache_with(names: list[str]) -> tuple[Cache, Snapshot]:
    cache = Cache()
    for name in names:
        cache.add_node(
            {"metadata": {"name": name}, "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": 10}}}
        )
    snap = Snapshot()
    cache.update_snapshot(snap)
    return cache, snap


def test_sync_refreshes_only_the_nodes_the_snapshot_re_cloned() -> None:
    cache, snap = _cache_with([f"n{i}" for i in range(5)])
    arrays = NodeArrays()
    arrays.sync(snap)
    assert arrays.refreshes == 5
    assert arrays.run(3, 4, 5).tolist() == [3, 4, 0, 1]  # type: ignore[union-attr]  # wraps: row numbers
    assert arrays.run(1, 2, 5) == slice(1, 3)  # consecutive rows: a slice, indexed as a view
    cache.assume_pod(pod("x", containers=[container({"cpu": "1"})]).with_node("n2"))
    cache.update_snapshot(snap)
    arrays.sync(snap)
    assert arrays.refreshes == 6  # just n2
    assert arrays.requested("cpu")[2] == 1000
    cache.remove_node("n0")  # a new node list: every position is mapped again (rows are kept)
    cache.update_snapshot(snap)
    arrays.sync(snap)
    names = [n.name for n in snap.node_infos()]
    rows = arrays.run(0, len(names), len(names))
    assert [arrays.objs[r].name for r in np.arange(5)[rows].tolist()] == names  # type: ignore[union-attr]


def test_memo_columns_are_recomputed_for_refreshed_rows_only() -> None:
    nodes = [node(f"n{i}") for i in range(4)]
    arrays = NodeArrays()
    arrays.rows(nodes)
    calls: list[int] = []

    def pods_plus_one(rows: Rows) -> np.ndarray:  # type: ignore[type-arg]
        values = arrays.pod_count[rows] + 1
        calls.append(len(values))
        return values

    assert arrays.memo_column("k", pods_plus_one)[:4].tolist() == [1, 1, 1, 1]
    clone = nodes[1].clone()
    clone.add_pod(pod("x").with_node("n1"))
    nodes[1] = clone
    arrays.rows(nodes)
    assert arrays.memo_column("k", pods_plus_one)[:4].tolist() == [1, 2, 1, 1]
    assert calls == [4, 1]
    assert arrays.memo_column("k", pods_plus_one)[:4].tolist() == [1, 2, 1, 1]
    assert calls == [4, 1]  # nothing changed: nothing computed
