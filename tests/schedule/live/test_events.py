"""The live scheduler's Events as kube-scheduler's ``events.k8s.io/v1`` recorder writes them: repeats of one Event
become a series (PATCHed count), a series or single Event ends after the window and the next occurrence is a new
Event, a series whose Event was deleted is created again, unanswered writes are retried and the core ``v1``
fallback keeps ``related``. Checked through the embedded cluster's API and the real kubectl, with a fake clock
instead of six-minute sleeps."""

from __future__ import annotations

import datetime as dt
import logging
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from berth.kube import tools
from berth.schedule.live import api, events

from .conftest import Env, eventually, pod
from .test_faults import PROFILE, one_profile

NOBODY = (
    "nobody"  # a scheduler name nothing serves: the embedded cluster's default-scheduler leaves these pods
)
WINDOW = dt.timedelta(seconds=events.FINISH_TIME)


class FakeClock:
    """Starts now and moves only when told (plus a microsecond a read, so Event names stay unique)."""

    def __init__(self) -> None:
        self._now = dt.datetime.now(dt.UTC)
        self._lock = threading.Lock()

    def __call__(self) -> dt.datetime:
        with self._lock:
            self._now += dt.timedelta(microseconds=1)
            return self._now

    def advance(self, delta: dt.timedelta) -> None:
        with self._lock:
            self._now += delta


def recorder_for(env: Env, clock: FakeClock, **timings: Any) -> events.EventRecorder:
    return events.EventRecorder(
        env.client,
        api.PermissionLog(logging.getLogger("test")),
        timings=events.SeriesTimings(**timings),
        clock=clock,
    )


def pod_events(env: Env, name: str, reason: str) -> list[dict[str, Any]]:
    items = env.call("GET", "/apis/events.k8s.io/v1/namespaces/default/events").get("items") or []
    found = [e for e in items if e["regarding"]["name"] == name and e.get("reason") == reason]
    return sorted(found, key=lambda e: str(e["eventTime"]))


def count(event: dict[str, Any]) -> int:
    return int((event.get("series") or {}).get("count") or 1)


def kubectl(env: Env, home: Path, *args: str) -> str:
    home.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        [tools.find("kubectl").path, "--kubeconfig", str(env.cluster.kubeconfig), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={"HOME": str(home), "KUBECACHEDIR": str(home / "cache"), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert proc.returncode == 0, f"kubectl {' '.join(args)}: {proc.stderr}"
    return proc.stdout


def settled(recorder: events.EventRecorder, posted: int, aggregated: int = 0) -> bool:
    return recorder.pending == 0 and (recorder.posted, recorder.aggregated) == (posted, aggregated)


def test_repeats_are_one_event_whose_series_count_is_patched_then_a_new_event_after_the_window(
    env: Env, tmp_path: Path
) -> None:
    p = env.create(pod("p", scheduler=NOBODY))
    clock = FakeClock()
    recorder = recorder_for(env, clock)
    try:
        for i in range(5):  # the note is not part of what makes Events isomorphic
            recorder.record(events.failed_event(p, PROFILE, f"0/4 nodes are available (try {i})"))
        # 1st: created; 2nd: series count 2 PATCHed; 3rd-5th: counted in the cache only.
        eventually(lambda: settled(recorder, posted=2, aggregated=3), 30, "two writes")
        (event,) = pod_events(env, "p", "FailedScheduling")
        assert (event["note"], event["series"]["count"]) == ("0/4 nodes are available (try 0)", 2)
        assert event["regarding"]["resourceVersion"] == p["metadata"]["resourceVersion"]
        first_seen = event["series"]["lastObservedTime"]

        recorder.refresh_series()  # upstream's 30-minute refresh writes the count the cache holds
        (event,) = pod_events(env, "p", "FailedScheduling")
        assert event["series"]["count"] == 5 and event["series"]["lastObservedTime"] > first_seen
        wide = kubectl(
            env,
            tmp_path / "home",
            "get",
            "events",
            "-o",
            "wide",
            "--field-selector",
            "reason=FailedScheduling",
        )
        header, row = wide.splitlines()
        at = header.index("COUNT")
        assert row[at:].split()[0] == "5", wide
        assert f"{PROFILE}, {PROFILE}-" in row, wide  # SOURCE: reporting controller, instance
        assert "(x5 over" in kubectl(env, tmp_path / "home", "describe", "pod", "p")

        recorder.record(events.failed_event(p, PROFILE, "still no room"))
        eventually(lambda: settled(recorder, posted=3, aggregated=4), 30, "counted")
        clock.advance(WINDOW - dt.timedelta(seconds=1))
        recorder.finish_series()  # last observed less than the window ago: the series goes on
        assert recorder.series == 1
        clock.advance(dt.timedelta(seconds=2))
        recorder.finish_series()  # now it ended: its final count is written and it is forgotten
        assert recorder.series == 0
        assert [count(e) for e in pod_events(env, "p", "FailedScheduling")] == [6]

        recorder.record(events.failed_event(p, PROFILE, "after the window"))
        eventually(lambda: len(pod_events(env, "p", "FailedScheduling")) == 2, 30, "a new Event")
        old, new = pod_events(env, "p", "FailedScheduling")
        assert (count(old), count(new), new["note"], "series" in new) == (6, 1, "after the window", False)
        assert new["metadata"]["name"] != old["metadata"]["name"]
    finally:
        recorder.close(timeout=5.0)


def test_a_single_event_is_forgotten_after_the_window(env: Env) -> None:
    p = env.create(pod("p", scheduler=NOBODY))
    clock = FakeClock()
    recorder = recorder_for(env, clock)
    try:
        recorder.record(events.scheduled_event(p, PROFILE, "node-1"))
        eventually(lambda: settled(recorder, posted=1), 30, "created")
        clock.advance(WINDOW + dt.timedelta(seconds=1))
        recorder.finish_series()
        assert recorder.series == 0
        recorder.record(events.scheduled_event(p, PROFILE, "node-1"))
        eventually(lambda: settled(recorder, posted=2), 30, "created again")
        assert [count(e) for e in pod_events(env, "p", "Scheduled")] == [1, 1]
    finally:
        recorder.close(timeout=5.0)


def test_a_series_whose_event_was_deleted_is_created_again_under_its_name(env: Env) -> None:
    """Upstream ``recordEvent``: a series PATCH answered 404 POSTs the Event whole, series included."""
    p = env.create(pod("p", scheduler=NOBODY))
    recorder = recorder_for(env, FakeClock())
    try:
        for _ in range(2):
            recorder.record(events.failed_event(p, PROFILE, "no room"))
        eventually(lambda: settled(recorder, posted=2), 30, "a series")
        (event,) = pod_events(env, "p", "FailedScheduling")
        name = event["metadata"]["name"]
        env.call("DELETE", f"/apis/events.k8s.io/v1/namespaces/default/events/{name}")
        recorder.record(events.failed_event(p, PROFILE, "no room"))
        eventually(lambda: settled(recorder, posted=2, aggregated=1), 30, "counted")
        assert pod_events(env, "p", "FailedScheduling") == []
        recorder.refresh_series()
        (again,) = pod_events(env, "p", "FailedScheduling")
        assert (again["metadata"]["name"], again["series"]["count"]) == (name, 3)
        assert recorder.failed == 0
    finally:
        recorder.close(timeout=5.0)


def test_periodic_upkeep_writes_the_final_count_by_itself(env: Env) -> None:
    """The upkeep thread runs ``finish_series`` every ``finish`` seconds (a short period here, the fake clock past
    the window) without anyone calling it."""
    p = env.create(pod("p", scheduler=NOBODY))
    clock = FakeClock()
    recorder = recorder_for(env, clock, finish=0.05)
    try:
        for _ in range(4):
            recorder.record(events.failed_event(p, PROFILE, "no room"))
        eventually(lambda: settled(recorder, posted=2, aggregated=2), 30, "a series")
        clock.advance(WINDOW + dt.timedelta(seconds=1))
        final = eventually(
            lambda: [count(e) for e in pod_events(env, "p", "FailedScheduling")] == [4], 30, "the final count"
        )
        assert final and recorder.series == 0
    finally:
        recorder.close(timeout=5.0)


def test_failed_scheduling_of_one_pod_becomes_a_series(env: Env, caplog: pytest.LogCaptureFixture) -> None:
    """The live scheduler on the embedded cluster: a pod that never fits, retried each time a bound pod goes
    away (the verdict, and so its ``PodScheduled`` condition, stays the same). Its first failure regards the pod
    before that condition was written (another resourceVersion), so it can be an Event of its own; the later
    failures are one Event with a series, as on a real cluster."""
    smalls = [f"small-{i}" for i in range(4)]
    with caplog.at_level(logging.INFO, logger="berth.schedule.live"), env.scheduler(one_profile()) as sched:
        assert sched.wait_synced(30)
        for name in smalls:
            env.create(pod(name, scheduler=PROFILE))
        eventually(
            lambda: all(env.bindings().get(f"default/{n}") for n in smalls), 30, "the small pods bound"
        )
        env.create(pod("huge", scheduler=PROFILE, cpu="100"))

        def failures() -> int:
            return sum("could not schedule default/huge" in r.getMessage() for r in caplog.records)

        deleted: list[str] = []

        def series_shown() -> bool:
            if any(count(e) >= 2 for e in pod_events(env, "huge", "FailedScheduling")):
                return True
            if failures() > len(deleted) and len(deleted) < len(smalls):  # retried: let it retry once more
                deleted.append(smalls[len(deleted)])
                env.call("DELETE", f"/api/v1/namespaces/default/pods/{deleted[-1]}")
            return False

        eventually(series_shown, 60, "a FailedScheduling series")
        recorder = sched.recorder
        assert recorder is not None
        # Every failure handled: each small pod's Scheduled and each first or second occurrence was a write, the
        # rest were counted into the series.
        eventually(
            lambda: (
                recorder.pending == 0 and recorder.posted + recorder.aggregated == len(smalls) + failures()
            ),
            30,
            "every failure recorded",
        )
        recorder.refresh_series()
        shown = pod_events(env, "huge", "FailedScheduling")
        assert 1 <= len(shown) <= 2, shown
        assert sum(count(e) for e in shown) == failures()
        assert (recorder.failed, sched.permissions.missing) == (0, [])


@pytest.mark.parametrize(
    ("change", "isomorphic"),
    [
        pytest.param(lambda b: b.update(note="other words"), True, id="note-differs"),
        pytest.param(lambda b: b["regarding"].update(resourceVersion="99"), False, id="resource-version"),
        pytest.param(lambda b: b.update(related={"kind": "Pod", "name": "vip"}), False, id="related"),
        pytest.param(lambda b: b.update(type="Normal"), False, id="type"),
        pytest.param(lambda b: b.update(action="Binding"), False, id="action"),
        pytest.param(lambda b: b.update(reportingInstance="other-host"), False, id="instance"),
        pytest.param(lambda b: b["metadata"].update(name="p.2"), True, id="name-differs"),
    ],
)
def test_series_key_is_upstreams_get_key(change: Any, isomorphic: bool) -> None:
    def body() -> dict[str, Any]:
        return {
            "metadata": {"name": "p.1", "namespace": "default"},
            "type": "Warning",
            "action": "Scheduling",
            "reason": "FailedScheduling",
            "reportingController": "s",
            "reportingInstance": "s-host",
            "regarding": {
                "kind": "Pod",
                "namespace": "default",
                "name": "p",
                "uid": "u",
                "resourceVersion": "7",
            },
            "note": "words",
        }

    other = body()
    change(other)
    assert (events.series_key(body()) == events.series_key(other)) is isomorphic


def test_unanswered_writes_are_retried_then_given_up_with_the_outage_logged_once(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    tries: list[str] = []

    def unreachable(_client: Any, method: str, url: str, **_kwargs: Any) -> dict[str, Any]:
        tries.append(method)
        raise api.Unreachable("ConnectionRefusedError: [Errno 111] Connection refused")

    monkeypatch.setattr(api, "call", unreachable)
    recorder = events.EventRecorder(
        object(),
        api.PermissionLog(logging.getLogger("test")),
        timings=events.SeriesTimings(retry_sleep=0.01, max_tries=3),
    )
    with caplog.at_level(logging.INFO, logger="berth.schedule.live"):
        for i in range(10):
            recorder.record(events.scheduled_event(pod(f"p{i}"), "s", "node-1"))
        eventually(lambda: recorder.failed == 10, 30, "every Event given up")
        recorder.close(timeout=2.0)
    assert len([r for r in caplog.records if "API server unreachable" in r.getMessage()]) == 1
    assert len([r for r in caplog.records if "after 3 tries; giving up" in r.getMessage()]) == 10
    assert (tries.count("POST"), recorder.posted, recorder.dropped) == (30, 0, 0)


def test_retries_still_waiting_at_shutdown_are_dropped(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    tries: list[str] = []

    def unreachable(_client: Any, method: str, url: str, **_kwargs: Any) -> dict[str, Any]:
        tries.append(url)
        raise api.Unreachable("ConnectionRefusedError: [Errno 111] Connection refused")

    monkeypatch.setattr(api, "call", unreachable)
    recorder = events.EventRecorder(object(), api.PermissionLog(logging.getLogger("test")))
    with caplog.at_level(logging.INFO, logger="berth.schedule.live"):
        for i in range(5):
            recorder.record(events.scheduled_event(pod(f"p{i}"), "s", "node-1"))
        eventually(lambda: len(tries) == 5, 10, "every Event tried once")
        recorder.close(timeout=2.0)  # their retries are 10 s away
    assert (recorder.posted, recorder.failed, recorder.dropped) == (0, 0, 5)
    assert any("at shutdown" in r.getMessage() for r in caplog.records)


def test_a_series_create_that_finds_the_event_exists_is_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    """The race upstream's comment describes: the PATCH of the 2nd occurrence finds no Event, its POST then finds the
    1st occurrence's Event created meanwhile (AlreadyExists) -- tried again, the PATCH lands."""
    calls: list[tuple[str, str]] = []
    created: set[str] = set()

    def call(_client: Any, method: str, url: str, body: Any = None, **_kwargs: Any) -> dict[str, Any]:
        calls.append((method, url))
        if method == "PATCH":
            name = url.rsplit("/", 1)[1]
            if name not in created:
                created.add(name)  # the first occurrence's POST lands just after this PATCH is refused
                raise api.ApiError(404, "NotFound", "not found", {"details": {"name": name}})
            return {}
        if "series" in body:
            raise api.ApiError(
                409, "AlreadyExists", "exists", {"details": {"name": body["metadata"]["name"]}}
            )
        return {}

    monkeypatch.setattr(api, "call", call)
    recorder = events.EventRecorder(
        object(), api.PermissionLog(logging.getLogger("test")), timings=events.SeriesTimings(retry_sleep=0.01)
    )
    p = pod("p")
    for _ in range(2):
        recorder.record(events.failed_event(p, "s", "no room"))
    eventually(lambda: recorder.posted == 2, 10, "create, then the series after a retry")
    recorder.close(timeout=2.0)
    assert [m for m, _ in calls] == ["POST", "PATCH", "POST", "PATCH"]
    assert recorder.failed == 0


def test_core_fallback_keeps_related(monkeypatch: pytest.MonkeyPatch) -> None:
    """A server without events.k8s.io/v1 (404 with no details) gets core v1 Events: ``regarding`` becomes
    ``involvedObject`` and ``related`` (the preemptor of a ``Preempted`` event) stays."""
    posted: list[tuple[str, dict[str, Any]]] = []

    def call(_client: Any, method: str, url: str, body: Any = None, **_kwargs: Any) -> dict[str, Any]:
        if url.startswith("/apis/events.k8s.io/"):
            raise api.ApiError(404, "NotFound", "the server could not find the requested resource")
        posted.append((url, body))
        return {}

    monkeypatch.setattr(api, "call", call)
    recorder = events.EventRecorder(object(), api.PermissionLog(logging.getLogger("test")), workers=1)
    victim, preemptor = pod("victim"), pod("vip")
    preemptor["metadata"]["uid"] = "uid-vip"
    recorder.record(events.PodEvent(victim, "s", events.NORMAL, "Preempted", "Preempting", "note", preemptor))
    recorder.record(events.scheduled_event(victim, "s", "node-1"))
    eventually(lambda: recorder.posted == 2, 10, "both posted")
    recorder.close(timeout=2.0)
    assert [url for url, _ in posted] == ["/api/v1/namespaces/default/events"] * 2
    first, second = (body for _, body in posted)
    assert first["involvedObject"]["name"] == "victim" and first["message"] == "note"
    assert (first["related"]["name"], first["related"]["uid"]) == ("vip", "uid-vip")
    assert (first["count"], second["count"]) == (1, 1)
    assert "related" not in second


def test_events_queued_meanwhile_are_posted_pipelined_and_in_order(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the worker waits on one write, the Events queued behind it go out as one pipelined batch of creates; a
    repeat among them (a series update) is written after the batch that creates its Event."""
    entered, gate = threading.Event(), threading.Event()
    real_call, real_many = api.call, api.call_many
    batches: list[int] = []

    def first_waits(*args: Any, **kwargs: Any) -> dict[str, Any]:
        if not entered.is_set():
            entered.set()
            gate.wait(10)
        return real_call(*args, **kwargs)

    def counted(client: Any, calls: Any, timeout: float | None = 30.0, decode: bool = True) -> Any:
        batches.append(len(calls))
        return real_many(client, calls, timeout, decode)

    monkeypatch.setattr(api, "call", first_waits)
    monkeypatch.setattr(api, "call_many", counted)
    recorder = recorder_for(env, FakeClock())
    recorder.record(events.scheduled_event(pod("q0"), "s", "node-1"))
    assert entered.wait(10)
    for i in range(1, 9):
        recorder.record(events.scheduled_event(pod(f"q{i}"), "s", "node-1"))
    recorder.record(events.scheduled_event(pod("q3"), "s", "node-1"))  # again: a series
    gate.set()
    eventually(lambda: settled(recorder, 10), 30, "nine Events created and one series written")
    recorder.close()
    assert batches == [8]
    assert [count(e) for e in pod_events(env, "q3", "Scheduled")] == [2]
    assert all(len(pod_events(env, f"q{i}", "Scheduled")) == 1 for i in range(9))
