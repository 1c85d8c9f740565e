"""CronJobs: schedule parsing, a Job per missed schedule, concurrency policy, status and history."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from berth.cluster.controllers import cronjob

from .conftest import Cluster, wait_for


def cron(name: str, schedule: str = "* * * * *", **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "schedule": schedule,
        "jobTemplate": {
            "metadata": {"labels": {"cron": name}},
            "spec": {
                "template": {
                    "spec": {
                        "nodeName": "node-1",
                        "restartPolicy": "Never",
                        "containers": [{"name": "c", "image": "busybox"}],
                    }
                }
            },
        },
    }
    body.update(spec)
    return {"metadata": {"name": name}, "spec": body}


def backdate(c: Cluster, name: str, minutes: int) -> None:
    """Pretend the last run was ``minutes`` ago, so a schedule is due now (no waiting for the clock)."""
    cj = c.get("cronjobs.batch", name)
    stamp = (datetime.now(UTC) - timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")
    body = {
        "metadata": {"name": name, "namespace": "default"},
        "status": {**(cj.get("status") or {}), "lastScheduleTime": stamp},
    }
    c.api.update("cronjobs.batch", body, "default", subresource="status")


def jobs_of(c: Cluster, name: str) -> list[dict[str, Any]]:
    return c.api.list("jobs.batch", "default", label_selector=f"cron={name}")[0]


def test_due_schedule_creates_a_job_that_runs_to_completion(cluster: Cluster) -> None:
    cj = cluster.api.create("cronjobs.batch", cron("tick"), "default")
    backdate(cluster, "tick", 3)
    (job,) = wait_for(lambda: jobs_of(cluster, "tick"), what="job created")
    minutes = int(job["metadata"]["name"].rsplit("-", 1)[1])
    assert abs(minutes * 60 - datetime.now(UTC).timestamp()) < 120
    assert job["metadata"]["ownerReferences"][0]["uid"] == cj["metadata"]["uid"]
    assert cronjob.SCHEDULED_ANNOTATION in job["metadata"]["annotations"]
    status = wait_for(
        lambda: (
            (s := cluster.get("cronjobs.batch", "tick").get("status") or {}).get("lastSuccessfulTime") and s
        ),
        what="lastSuccessfulTime",
    )
    assert "active" not in status
    assert status["lastScheduleTime"].endswith("Z")


def test_forbid_skips_while_a_job_runs(make_cluster: Any) -> None:
    c: Cluster = make_cluster(job_duration=60)
    c.api.create("cronjobs.batch", cron("solo", concurrencyPolicy="Forbid"), "default")
    backdate(c, "solo", 3)
    wait_for(lambda: (c.get("cronjobs.batch", "solo").get("status") or {}).get("active"), what="active job")
    backdate(c, "solo", 2)
    c.api.create("cronjobs.batch", cron("marker"), "default")
    backdate(c, "marker", 2)
    wait_for(lambda: jobs_of(c, "marker"), what="marker job")
    assert len(jobs_of(c, "solo")) == 1


def test_suspended_cronjob_creates_nothing(cluster: Cluster) -> None:
    cluster.api.create("cronjobs.batch", cron("off", suspend=True), "default")
    backdate(cluster, "off", 3)
    cluster.api.create("cronjobs.batch", cron("on"), "default")
    backdate(cluster, "on", 3)
    wait_for(lambda: jobs_of(cluster, "on"), what="job of the active cronjob")
    assert not jobs_of(cluster, "off")


@pytest.mark.parametrize(
    ("schedule", "after", "expected"),
    [
        pytest.param("*/15 * * * *", "2026-01-01T10:07", "2026-01-01T10:15", id="step"),
        pytest.param(
            "0 9 * * mon-fri", "2026-01-02T09:00", "2026-01-05T09:00", id="weekday-range-skips-weekend"
        ),
        pytest.param("@daily", "2026-01-01T10:00", "2026-01-02T00:00", id="macro"),
        pytest.param("30 2 1 feb *", "2026-01-01T00:00", "2026-02-01T02:30", id="month-name"),
        pytest.param("0 0 13 * 5", "2026-01-01T00:00", "2026-01-02T00:00", id="dom-or-dow"),
        pytest.param("0 0 * * 7", "2026-01-01T00:00", "2026-01-04T00:00", id="seven-is-sunday"),
        pytest.param("5,10 1-2 * * *", "2026-01-01T01:10", "2026-01-01T02:05", id="list-and-range"),
    ],
)
def test_next_schedule_time(schedule: str, after: str, expected: str) -> None:
    start = datetime.fromisoformat(after).replace(tzinfo=UTC)
    got = cronjob.Schedule.parse(schedule).next_after(start)
    assert got == datetime.fromisoformat(expected).replace(tzinfo=UTC)


@pytest.mark.parametrize(
    ("schedule", "message"),
    [
        pytest.param("* * * *", "expected exactly 5 fields, found 4", id="too-few"),
        pytest.param("61 * * * *", "minute: '61' is outside 0-59", id="out-of-range"),
        pytest.param("* * * * funday", "day of week: 'funday' is not a number or name", id="bad-name"),
        pytest.param("*/0 * * * *", "minute: invalid step '0'", id="zero-step"),
    ],
)
def test_bad_schedules_name_the_field(schedule: str, message: str) -> None:
    with pytest.raises(cronjob.ScheduleError, match=message):
        cronjob.Schedule.parse(schedule)
