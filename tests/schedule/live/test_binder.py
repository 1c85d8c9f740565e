"""The pipelined binder: bindings queued while a worker is busy go out together, each answered in its place."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from berth.schedule.framework.interface import SUCCESS, Code, Status
from berth.schedule.framework.types import PodInfo
from berth.schedule.live.binder import BindDone, PipelinedBinder, PreemptionDone

from .conftest import pod


class GatedBinder:
    """Stands in for ApiBinder: the first batch waits for ``gate``; pod ``bad`` is refused."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.entered = threading.Event()
        self.batches: list[list[str]] = []

    def bind_many(self, bindings: Sequence[tuple[PodInfo, str]]) -> list[Status]:
        if not self.batches:
            self.entered.set()
            self.gate.wait(10)
        self.batches.append([p.name for p, _ in bindings])
        return [
            Status(Code.ERROR, ("binding rejected: no",)) if p.name == "bad" else SUCCESS for p, _ in bindings
        ]


def test_bindings_queued_meanwhile_go_out_as_one_batch_in_order() -> None:
    fake = GatedBinder()
    done: list[BindDone | PreemptionDone] = []
    binder = PipelinedBinder(fake, lambda _p: True, done.append, workers=1)  # type: ignore[arg-type]
    assert binder.bind(PodInfo(pod("first")), "node-1").is_success  # accepted: answered later
    assert fake.entered.wait(10)  # the worker is busy with it
    for name in ["a", "bad", "b", "c"]:
        assert binder.bind(PodInfo(pod(name)), "node-1").is_success
    fake.gate.set()
    binder.close()
    assert fake.batches == [["first"], ["a", "bad", "b", "c"]]
    assert [(d.pod.name, d.node, d.status.is_success) for d in done if isinstance(d, BindDone)] == [
        ("first", "node-1", True),
        ("a", "node-1", True),
        ("bad", "node-1", False),
        ("b", "node-1", True),
        ("c", "node-1", True),
    ]
    assert all(d.pod.node_name == "node-1" for d in done if isinstance(d, BindDone))
