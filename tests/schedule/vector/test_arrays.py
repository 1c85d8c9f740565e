"""NodeArrays bookkeeping: rows follow the snapshot incrementally (a changed node costs one row refresh), rotating
chunks map to consecutive rows, and amounts the kernels cannot hold exactly mark the row exotic."""

from __future__ import annotations

import pytest
from plugins.support import node, pod

from berth.schedule.scheduler import _rotated_slice
from berth.schedule.vector import NodeArrays


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


def test_rotated_slice_equals_slicing_the_rotation() -> None:
    for n in range(6):
        items = [node(f"n{i}") for i in range(n)]
        for start in range(max(n, 1)):
            rotated = items[start:] + items[:start]
            for pos in range(n + 2):
                for count in range(n + 2):
                    assert _rotated_slice(items, start, pos, count) == rotated[pos : pos + count]
