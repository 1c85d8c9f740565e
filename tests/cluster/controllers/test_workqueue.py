"""The work queue de-duplicates keys, never hands one key to two workers, and honours delays."""

from __future__ import annotations

import time

import pytest

from berth.cluster.controllers.workqueue import WorkQueue


def test_duplicate_adds_collapse_into_one_item() -> None:
    q = WorkQueue()
    for _ in range(3):
        q.add("a")
    q.add("b")
    assert [q.get(0.01), q.get(0.01), q.get(0.01)] == ["a", "b", None]


def test_key_added_while_processing_comes_back_after_done() -> None:
    q = WorkQueue()
    q.add("a")
    assert q.get(0.01) == "a"
    q.add("a")
    assert q.get(0.01) is None, "a key being processed must not be handed out twice"
    q.done("a")
    assert q.get(0.01) == "a"


def test_add_after_delivers_later_keys_in_due_order() -> None:
    q = WorkQueue()
    q.add_after("late", 0.08)
    q.add_after("early", 0.02)
    assert q.get(1.0) == "early"
    assert q.get(1.0) == "late"


def test_rate_limited_backoff_grows_and_forget_resets() -> None:
    q = WorkQueue(base_delay=0.001, max_delay=0.004)
    for _ in range(4):
        q.add_rate_limited("k")
        assert q.get(1.0) == "k"
        q.done("k")
    assert q._failures["k"] == 4
    q.forget("k")
    assert "k" not in q._failures


def test_shutdown_wakes_a_blocked_get() -> None:
    q = WorkQueue()
    q.shutdown()
    start = time.monotonic()
    assert q.get(5.0) is None
    assert time.monotonic() - start < 5.0
    q.add("x")
    assert len(q) == 0


@pytest.mark.parametrize("delay", [0.0, -1.0], ids=["zero", "negative"])
def test_non_positive_delay_is_immediate(delay: float) -> None:
    q = WorkQueue()
    q.add_after("k", delay)
    assert q.get(0.01) == "k"
