"""Schedule: KubeSchedulerConfiguration, a multi-profile framework over one cache and one queue, plugins.

The public API other parts use (the embedded cluster runs :class:`Scheduler` as its default-scheduler; ``berth
demo`` runs :func:`simulate`). Everything else is reached through submodules by code inside this part only.
"""

from berth.schedule.queue import VirtualClock
from berth.schedule.scheduler import (
    Binder,
    CycleOutcome,
    Failure,
    FailureReason,
    Ignored,
    Placement,
    Result,
    Scheduler,
    SimulationBinder,
)
from berth.schedule.simulate import SimulationResult, simulate

__all__ = [
    "Binder",
    "CycleOutcome",
    "Failure",
    "FailureReason",
    "Ignored",
    "Placement",
    "Result",
    "Scheduler",
    "SimulationBinder",
    "SimulationResult",
    "VirtualClock",
    "simulate",
]
