"""Informer semantics without a cluster: a re-list after 410 reports exactly what changed while the watch was down,
watch events update the local copy in order, and errors back off."""

from __future__ import annotations

import json
import logging
import random
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from berth.schedule.live import api, informers
from berth.schedule.live.informers import Delta, Informer, Resource


def _pod(name: str, rv: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "default", "resourceVersion": rv}}


class _Stream:
    def __init__(self, events: list[dict[str, Any]]) -> None:
        self.events = events

    def __iter__(self) -> Iterator[dict[str, Any]]:
        yield from self.events

    def close(self) -> None:
        pass


class Script:
    """Lists and watches answered from a script; the informer is stopped when the script runs out."""

    def __init__(
        self, lists: list[dict[str, Any]], watches: list[list[dict[str, Any]]], stop: threading.Event
    ) -> None:
        self.lists = lists
        self.watches = watches
        self.stop = stop
        self.watch_rvs: list[str] = []

    def list(self, resource: Resource, continue_token: str, limit: int) -> dict[str, Any]:
        return self.lists.pop(0)

    def watch(self, resource: Resource, resource_version: str, timeout_seconds: int) -> _Stream:
        if self.stop.is_set():
            return _Stream([])  # the informer may watch once more before the test stops it (a loaded machine)
        self.watch_rvs.append(resource_version)
        if not self.watches:
            self.stop.set()
            return _Stream([])
        return _Stream(self.watches.pop(0))


def _run(
    lists: list[dict[str, Any]], watches: list[list[dict[str, Any]]]
) -> tuple[list[Delta], Informer, Script]:
    got: list[Delta] = []
    stop = threading.Event()
    script = Script(lists, watches, stop)
    inf = Informer(
        informers.PODS,
        script,
        got.append,
        api.PermissionLog(logging.getLogger("test")),
        backoff=informers.Backoff(initial=0.001, cap=0.001, jitter=0.0),
    )
    inf.start()
    assert stop.wait(10)
    inf.stop()
    inf.join(5)
    return got, inf, script


def _summary(deltas: list[Delta]) -> list[tuple[str, str, str]]:
    return [(str(d.type), d.new["metadata"]["name"], d.new["metadata"]["resourceVersion"]) for d in deltas]


def test_relist_after_410_reports_what_changed_meanwhile() -> None:
    first = {"metadata": {"resourceVersion": "10"}, "items": [_pod("a", "5"), _pod("b", "6")]}
    second = {"metadata": {"resourceVersion": "30"}, "items": [_pod("b", "25"), _pod("c", "28")]}
    gone = {"type": "ERROR", "object": {"kind": "Status", "code": 410, "message": "too old resource version"}}
    got, inf, script = _run([first, second], [[{"type": "MODIFIED", "object": _pod("a", "12")}, gone]])
    assert _summary(got) == [
        ("ADDED", "a", "5"),
        ("ADDED", "b", "6"),
        ("MODIFIED", "a", "12"),
        ("DELETED", "a", "12"),  # gone while the watch was down: its last known state
        ("MODIFIED", "b", "25"),
        ("ADDED", "c", "28"),
    ]
    assert got[4].old is not None and got[4].old["metadata"]["resourceVersion"] == "6"
    assert all(d.new["kind"] == "Pod" and d.new["apiVersion"] == "v1" for d in got)
    assert inf.relists == 1
    assert script.watch_rvs == ["10", "30"]
    assert sorted(inf.store) == ["default/b", "default/c"]


def test_watch_resumes_from_the_last_resource_version_and_bookmarks() -> None:
    listing = {"metadata": {"resourceVersion": "10"}, "items": []}
    watches = [
        [{"type": "ADDED", "object": _pod("a", "11")}],
        [{"type": "BOOKMARK", "object": {"kind": "Pod", "metadata": {"resourceVersion": "15"}}}],
        [{"type": "DELETED", "object": _pod("a", "16")}],
    ]
    got, inf, script = _run([listing], watches)
    assert _summary(got) == [("ADDED", "a", "11"), ("DELETED", "a", "16")]
    assert script.watch_rvs == ["10", "11", "15", "16"]
    assert inf.relists == 0
    assert inf.store == {}


def test_cached_objects_lose_managed_fields_and_share_their_strings() -> None:
    """As kube-scheduler's pod informer, managedFields are dropped (no plugin reads them); listed and watched
    objects keep one copy of each key and short value, so 10,000 cached pods cost half as much: values are interned,
    keys come shared from the API's decoder (orjson's key cache)."""
    listed = {**_pod("a", "5"), "status": {"phase": "Running"}}
    listed["metadata"]["managedFields"] = [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}]
    listed = api.loads(json.dumps(listed))
    watched = api.loads(json.dumps({**_pod("b", "11"), "status": {"phase": "Running"}}))
    got, inf, _ = _run(
        [{"metadata": {"resourceVersion": "10"}, "items": [listed]}], [[{"type": "ADDED", "object": watched}]]
    )
    a, b = inf.store["default/a"], inf.store["default/b"]
    assert "managedFields" not in a["metadata"] and a["metadata"]["resourceVersion"] == "5"
    assert got[0].new is a
    assert a["status"]["phase"] is b["status"]["phase"]
    assert next(iter(a["status"])) is next(iter(b["status"]))


@pytest.mark.parametrize(
    ("failures", "expected"),
    [(1, 0.8), (2, 1.6), (3, 3.2), (6, 25.6), (7, 30.0), (20, 30.0)],
    ids=["first", "second", "third", "sixth", "capped", "long-outage"],
)
def test_backoff_doubles_to_the_cap(failures: int, expected: float) -> None:
    assert informers.Backoff(jitter=0.0).delay(failures, random.Random(1)) == pytest.approx(expected)
    jittered = informers.Backoff().delay(failures, random.Random(1))
    assert expected <= jittered <= 2 * expected
