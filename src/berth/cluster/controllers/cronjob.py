"""CronJob controller: create a Job at each scheduled time, keep ``status.active``/``lastScheduleTime``, prune history.

Why: charts ship CronJobs (backups, cleanups) and tools read their status; without this a CronJob would never run.
Schedules use the standard five fields (minute hour day-of-month month day-of-week) with ``*``, lists, ranges,
steps, month/day names and the ``@hourly``-style macros, evaluated in ``spec.timeZone`` (UTC by default), as
upstream's robfig/cron parser does (day-of-month and day-of-week are ORed when both are restricted).

One reconcile (after upstream ``syncCronJob``)::

    refresh status.active from owned Jobs ─▶ suspended? stop ─▶ the latest missed schedule time t since
    lastScheduleTime (or creation), within startingDeadlineSeconds ─▶ concurrencyPolicy (Allow | Forbid: skip while
    one runs | Replace: delete the running ones) ─▶ create Job ``<name>-<t in minutes>`` ─▶ prune finished Jobs
    beyond successfulJobsHistoryLimit / failedJobsHistoryLimit ─▶ requeue at the next schedule time
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from berth.cluster.controllers import base, client
from berth.cluster.controllers.informer import OWNER_UID_INDEX, Handler, key_of, split_key
from berth.cluster.controllers.job import finished
from berth.kube.objects import Obj

RESOURCE = "cronjobs.batch"
JOBS = "jobs.batch"
KIND = "CronJob"
SCHEDULED_ANNOTATION = "batch.kubernetes.io/cronjob-scheduled-timestamp"

MACROS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_MONTHS = {
    m: i + 1
    for i, m in enumerate(
        ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    )
}
_DAYS = {d: i for i, d in enumerate(["sun", "mon", "tue", "wed", "thu", "fri", "sat"])}


class ScheduleError(ValueError):
    """A schedule that does not parse; the message names the field and the offending text."""


def _field(text: str, lo: int, hi: int, names: dict[str, int], what: str) -> tuple[set[int], bool]:
    """Values of one field and whether it was restricted (not ``*``/``?``)."""
    out: set[int] = set()
    star = False
    for part in text.lower().split(","):
        rng, _, step_text = part.partition("/")
        step = 1
        if step_text:
            if not step_text.isdigit() or int(step_text) == 0:
                raise ScheduleError(f"{what}: invalid step {step_text!r} in {text!r}")
            step = int(step_text)
        if rng in ("*", "?"):
            start, end = lo, hi
            star = star or not step_text
        else:
            a, dash, b = rng.partition("-")

            def num(tok: str) -> int:
                if tok in names:
                    return names[tok]
                if not tok.isdigit():
                    raise ScheduleError(f"{what}: {tok!r} is not a number or name in {text!r}")
                return int(tok)

            start = num(a)
            end = num(b) if dash else (hi if step_text else start)
        if not (lo <= start <= hi and lo <= end <= hi) or start > end:
            raise ScheduleError(f"{what}: {rng!r} is outside {lo}-{hi} in {text!r}")
        out.update(range(start, end + 1, step))
    if what == "day of week" and 7 in out:  # 7 is Sunday too
        out.discard(7)
        out.add(0)
    return out, not star


@dataclass(frozen=True)
class Schedule:
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]
    days_restricted: bool
    weekdays_restricted: bool

    @classmethod
    def parse(cls, text: str) -> Schedule:
        spec = MACROS.get(text.strip().lower(), text.strip())
        fields = spec.split()
        if len(fields) != 5:
            raise ScheduleError(f"expected exactly 5 fields, found {len(fields)}: {text!r}")
        mi, _ = _field(fields[0], 0, 59, {}, "minute")
        ho, _ = _field(fields[1], 0, 23, {}, "hour")
        dom, dom_r = _field(fields[2], 1, 31, {}, "day of month")
        mo, _ = _field(fields[3], 1, 12, _MONTHS, "month")
        dow, dow_r = _field(fields[4], 0, 7, _DAYS, "day of week")
        return cls(frozenset(mi), frozenset(ho), frozenset(dom), frozenset(mo), frozenset(dow), dom_r, dow_r)

    def _day_matches(self, t: datetime) -> bool:
        dom = t.day in self.days
        dow = (t.isoweekday() % 7) in self.weekdays
        if self.days_restricted and self.weekdays_restricted:
            return dom or dow
        return dom and dow

    def matches(self, t: datetime) -> bool:
        return (
            t.minute in self.minutes
            and t.hour in self.hours
            and t.month in self.months
            and self._day_matches(t)
        )

    def next_after(self, t: datetime, limit_days: int = 366 * 5) -> datetime | None:
        """The first matching minute strictly after ``t`` (same tzinfo), or None within ``limit_days``."""
        cur = t.replace(second=0, microsecond=0) + timedelta(minutes=1)
        end = t + timedelta(days=limit_days)
        while cur <= end:
            if cur.month not in self.months:
                cur = (cur.replace(day=1, hour=0, minute=0) + timedelta(days=32)).replace(day=1)
                continue
            if not self._day_matches(cur):
                cur = cur.replace(hour=0, minute=0) + timedelta(days=1)
                continue
            if cur.hour not in self.hours:
                cur = cur.replace(minute=0) + timedelta(hours=1)
                continue
            if cur.minute not in self.minutes:
                cur += timedelta(minutes=1)
                continue
            return cur
        return None


def _zone(cj: Obj) -> ZoneInfo:
    name = (cj.get("spec") or {}).get("timeZone") or "UTC"
    try:
        return ZoneInfo(str(name))
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


class CronJobController(base.Controller):
    name = "cronjob-controller"
    TRACK_WRITES = True

    def __init__(self, ctx: base.Context) -> None:
        super().__init__(ctx)
        self.cronjobs = ctx.informers.informer(RESOURCE)
        self.jobs = ctx.informers.informer(JOBS)
        self.cronjobs.add_handler(Handler(on_add=self._enqueue, on_update=lambda _o, n: self._enqueue(n)))
        self.jobs.add_handler(
            Handler(on_add=self._on_job, on_update=lambda _o, n: self._on_job(n), on_delete=self._on_job)
        )

    def _enqueue(self, obj: Obj) -> None:
        self.queue.add(key_of(obj))

    def _on_job(self, job: Obj) -> None:
        key = base.owner_key(job, KIND)
        if key is not None:
            self.queue.add(key)

    def reconcile(self, key: str) -> None:
        cj = self.fresher(key, self.cronjobs.get(key))
        if cj is None or base.deleting(cj):
            return
        ns, name = split_key(key)
        spec = cj.get("spec") or {}
        uid = base.uid(cj)
        jobs = [j for j in self.jobs.by_index(OWNER_UID_INDEX, uid) if base.owned_by(j, uid)]
        running = [j for j in jobs if not finished(j) and not base.deleting(j)]
        prev = cj.get("status") or {}
        status: dict[str, Any] = copy.deepcopy(prev)
        successes = [j for j in jobs if finished(j) == "Complete"]
        if successes:
            last = max(str((j.get("status") or {}).get("completionTime") or "") for j in successes)
            if last:
                status["lastSuccessfulTime"] = last
        try:
            schedule = Schedule.parse(str(spec.get("schedule") or ""))
        except ScheduleError as exc:
            self.ctx.recorder.event(cj, "Warning", "UnparseableSchedule", f"unparseable schedule: {exc}")
            self._write(cj, status, running)
            return
        zone = _zone(cj)
        now = base.now().astimezone(zone)
        if not spec.get("suspend"):
            since_text = prev.get("lastScheduleTime") or base.meta(cj).get("creationTimestamp")
            since = (base.parse_time(since_text) or base.now()).astimezone(zone)
            due: datetime | None = None
            t = schedule.next_after(since)
            while t is not None and t <= now:
                due = t
                t = schedule.next_after(t)
            deadline = spec.get("startingDeadlineSeconds")
            if due is not None and deadline is not None and (now - due).total_seconds() > float(deadline):
                self.ctx.recorder.event(
                    cj, "Warning", "MissSchedule", f"Missed scheduled time to start a job: {due}"
                )
                status["lastScheduleTime"] = base.fmt_time(due)
                due = None
            if due is not None:
                policy = spec.get("concurrencyPolicy") or "Allow"
                if policy == "Forbid" and running:
                    self.ctx.recorder.event(
                        cj,
                        "Normal",
                        "JobAlreadyActive",
                        "Not starting job because prior execution is running and concurrency policy is Forbid",
                    )
                else:
                    if policy == "Replace":
                        for j in running:
                            self._delete_job(cj, ns, j)
                        running = []
                    job = self._create_job(cj, ns, name, due)
                    if job is not None:
                        running.append(job)
                    status["lastScheduleTime"] = base.fmt_time(due)
            if t is not None:
                self.requeue_after(key, max(0.05, (t - now).total_seconds()))
        self._prune(cj, ns, jobs)
        self._write(cj, status, running)

    def _create_job(self, cj: Obj, ns: str, name: str, due: datetime) -> Obj | None:
        template = copy.deepcopy((cj.get("spec") or {}).get("jobTemplate") or {})
        tmeta = template.get("metadata") or {}
        minutes = int(due.timestamp() // 60)
        job_name = f"{name}-{minutes}"
        annotations = dict(tmeta.get("annotations") or {})
        annotations[SCHEDULED_ANNOTATION] = due.isoformat()
        job = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "name": job_name,
                "namespace": ns,
                "labels": dict(tmeta.get("labels") or {}),
                "annotations": annotations,
                "ownerReferences": [base.owner_reference(cj, "batch/v1", KIND)],
            },
            "spec": template.get("spec") or {},
        }
        try:
            created = self.api.create(JOBS, job, ns, user=self.user)
        except client.ApiError as exc:
            if client.is_already_exists(exc):
                return None
            self.ctx.recorder.event(cj, "Warning", "FailedCreate", f"Error creating job: {exc.message}")
            raise
        self.ctx.recorder.event(cj, "Normal", "SuccessfulCreate", f"Created job {job_name}")
        return created

    def _delete_job(self, cj: Obj, ns: str, job: Obj) -> None:
        jname = str(base.meta(job).get("name", ""))
        try:
            self.api.delete(JOBS, jname, ns, propagation="Background", user=self.user)
        except client.ApiError as exc:
            if not client.is_not_found(exc):
                raise
            return
        self.ctx.recorder.event(cj, "Normal", "SuccessfulDelete", f"Deleted job {jname}")

    def _prune(self, cj: Obj, ns: str, jobs: list[Obj]) -> None:
        spec = cj.get("spec") or {}
        for outcome, field, default in (
            ("Complete", "successfulJobsHistoryLimit", 3),
            ("Failed", "failedJobsHistoryLimit", 1),
        ):
            limit = base.int_field(spec, field, default)
            done = sorted(
                (j for j in jobs if finished(j) == outcome and not base.deleting(j)),
                key=lambda j: str(base.meta(j).get("creationTimestamp", "")),
            )
            for j in done[: max(0, len(done) - limit)]:
                self._delete_job(cj, ns, j)

    def _write(self, cj: Obj, status: dict[str, Any], running: list[Obj]) -> None:
        if running:
            status["active"] = [
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "name": base.meta(j).get("name"),
                    "namespace": base.meta(j).get("namespace"),
                    "uid": base.uid(j),
                    "resourceVersion": base.meta(j).get("resourceVersion"),
                }
                for j in sorted(running, key=lambda j: str(base.meta(j).get("name", "")))
            ]
        else:
            status.pop("active", None)
        if status != (cj.get("status") or {}):
            base.write_status(self, RESOURCE, cj, status)
