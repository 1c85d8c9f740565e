"""PrioritySort: higher priority first, then earlier queue timestamp, then insertion sequence."""

from __future__ import annotations

import functools

import pytest

from berth.schedule.framework.types import QueuedPodInfo
from berth.schedule.plugins import priority_sort

from .support import FakeHandle, pod


def qp(priority: int, timestamp: float, sequence: int = 0) -> QueuedPodInfo:
    return QueuedPodInfo(pod(priority=priority), timestamp=timestamp, sequence=sequence)


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [
        (qp(10, 5.0), qp(1, 1.0), True),
        (qp(1, 1.0), qp(10, 5.0), False),
        (qp(0, 1.0), qp(0, 2.0), True),
        (qp(0, 2.0), qp(0, 1.0), False),
        (qp(0, 1.0, 1), qp(0, 1.0, 2), True),
        (qp(0, 1.0, 2), qp(0, 1.0, 1), False),
        (qp(-5, 0.0), qp(0, 9.0), False),
    ],
    ids=[
        "higher-priority-first",
        "lower-priority-later",
        "earlier-first",
        "later-second",
        "sequence-tiebreak",
        "sequence-tiebreak-reverse",
        "negative-priority",
    ],
)
def test_less(a: QueuedPodInfo, b: QueuedPodInfo, want: bool) -> None:
    plugin = priority_sort.SPEC.new(None, FakeHandle())
    assert isinstance(plugin, priority_sort.PrioritySort)
    assert plugin.less(a, b) is want


def test_sorting_a_queue() -> None:
    plugin = priority_sort.PrioritySort(None, FakeHandle())
    items = [qp(0, 3.0, 0), qp(100, 4.0, 1), qp(0, 1.0, 2), qp(100, 2.0, 3)]

    def cmp(x: QueuedPodInfo, y: QueuedPodInfo) -> int:
        return -1 if plugin.less(x, y) else (1 if plugin.less(y, x) else 0)

    ordered = sorted(items, key=functools.cmp_to_key(cmp))
    assert [(q.pod_info.priority, q.timestamp) for q in ordered] == [
        (100, 2.0),
        (100, 4.0),
        (0, 1.0),
        (0, 3.0),
    ]
