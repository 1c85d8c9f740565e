"""Schedule: KubeSchedulerConfiguration, a multi-profile framework over one cache and one queue, plugins.

The public API other parts use (the embedded cluster runs :class:`Scheduler` as its default-scheduler; ``berth
demo`` runs :func:`run_simulation`, re-exported under that name so it never shadows the ``simulate`` module). Everything else is reached through submodules by code inside this part only.
"""

from typing import Any

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
from berth.schedule.simulate import SimulationResult
from berth.schedule.simulate import simulate as run_simulation

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
    "run_live_scheduler",
    "run_simulation",
]


def run_live_scheduler(kubeconfig: Any = None, **kwargs: Any) -> Any:
    """Start the live scheduler (``berth schedule run``) against the cluster of ``kubeconfig``; returns it running
    (``stop()`` ends it). Defaults: kube-scheduler's default profile. Imported lazily: the live mode pulls in the
    Kubernetes client, which plain ``import berth.schedule`` should not pay for."""
    from berth.schedule.live import run as live_run

    return live_run.run_live_scheduler(kubeconfig, **kwargs)
