"""``berth schedule run --report FILE``: the cluster as the scheduler saw it when it stopped, as a placement report.

Why from the scheduler's own cache: it already holds every node with what it can allocate and every bound pod with
its requests -- the numbers the scheduler decided with -- so the report costs no request to the API server and
shows exactly the view the placements came from. The pods of this scheduler's profiles are the placements; pods of
other schedulers count in each node's usage (as "there before"); pods still waiting in the queue are the
unschedulable ones, with the plugins that last turned them away.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from berth.kube import yamlio
from berth.kube.htmlpage import esc
from berth.schedule.report_html import Page, render_html
from berth.schedule.scheduler import Failure, Placement
from berth.schedule.simulate import SimulationResult
from berth.schedule.simulate import _usage as node_usage

if TYPE_CHECKING:
    from berth.schedule.scheduler import Scheduler


def natural_key(name: str) -> list[object]:
    """``node-2`` before ``node-10``."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def live_result(sched: Scheduler, seconds: float) -> SimulationResult:
    """The placement report's input from a scheduler's cache and queue (stopped, or at least quiet)."""
    profiles = tuple(sched.frameworks)
    names = sorted(sched.cache.node_names(), key=natural_key)
    placements: list[Placement] = []
    for name in names:
        info = sched.cache.node_info(name)
        for pod in info.pods if info is not None else ():
            if pod.scheduler_name in profiles:
                placements.append(Placement(pod.key, pod.scheduler_name, name))
    waiting: list[Failure] = []
    for pending in sched.queue.pending():
        queued = pending.info
        if queued.pod_info.scheduler_name not in profiles:
            continue
        rejected = sorted(queued.unschedulable_plugins | queued.pending_plugins)
        why = f"waiting in the scheduling queue ({pending.where.value})"
        if rejected:
            why += f"; last turned away by {', '.join(rejected)}"
        waiting.append(Failure(queued.key, queued.pod_info.scheduler_name, why))
    return SimulationResult(
        placements=tuple(sorted(placements, key=lambda p: p.pod)),
        unschedulable=tuple(sorted(waiting, key=lambda f: f.pod)),
        ignored=(),
        pods=len(placements) + len(waiting),
        seconds=seconds,
        warnings=tuple(sched.warnings),
        nodes=tuple(names),
        profiles=profiles,
        usage=node_usage(sched, names),
    )


def render(sched: Scheduler, seconds: float, source: str = "") -> str:
    result = live_result(sched, seconds)
    where = f" on {source}" if source else ""
    page = Page(
        title="berth schedule run",
        kicker="placement report, at exit",
        subtitle=esc(
            f"The cluster{where} as the scheduler saw it when it stopped, after {seconds:.0f} s: "
            f"{result.scheduled:,} pods of its {len(result.profiles)} profile"
            f"{'s' if len(result.profiles) != 1 else ''} on {len(result.nodes):,} nodes, "
            f"{len(result.unschedulable):,} still waiting."
        ),
    )
    return render_html(result, page=page)


def write(path: str | Path, sched: Scheduler, seconds: float, source: str = "") -> Path:
    """Write the report atomically; returns the path."""
    yamlio.write_atomic(path, render(sched, seconds, source))
    return Path(path)
