"""Live mode of the scheduler: the same :class:`~berth.schedule.Scheduler` against a cluster (``berth schedule run``).

Modules: :mod:`.informers` (list + watch), :mod:`.binder` (``pods/binding``), :mod:`.events` (Events and the
PodScheduled condition), :mod:`.leader` (Lease election), :mod:`.metrics` (Prometheus, health), :mod:`.run` (the
process that ties them together), :mod:`.bench` (``berth bench schedule --live``).
"""

from berth.schedule.live.run import LiveOptions, LiveScheduler, run_live_scheduler

__all__ = ["LiveOptions", "LiveScheduler", "run_live_scheduler"]
