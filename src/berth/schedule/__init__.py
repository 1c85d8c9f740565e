"""Schedule: KubeSchedulerConfiguration, a multi-profile framework over one cache and one queue, plugins.

The public API other parts use (the embedded cluster runs :class:`Scheduler` as its default-scheduler; ``berth
demo`` runs :func:`run_simulation`, re-exported under that name so it never shadows the ``simulate`` module). Everything else is reached through submodules by code inside this part only.

The names are resolved on first use (PEP 562 ``__getattr__``), not at import: every submodule -- the CLI's too --
imports this package first, and ``berth schedule --help`` should not pay for numpy and the whole framework.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

# Exported name -> (module, attribute) it is read from on first use.
_LAZY = {
    "VirtualClock": ("berth.schedule.queue", "VirtualClock"),
    **{
        name: ("berth.schedule.scheduler", name)
        for name in (
            "Binder",
            "CycleOutcome",
            "Failure",
            "FailureReason",
            "Ignored",
            "Placement",
            "Result",
            "Scheduler",
            "SimulationBinder",
        )
    },
    "SimulationResult": ("berth.schedule.simulate", "SimulationResult"),
    "run_simulation": ("berth.schedule.simulate", "simulate"),
}


def __getattr__(name: str) -> object:
    """Import an exported name's module on first access and cache the name here."""
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def run_live_scheduler(kubeconfig: Any = None, **kwargs: Any) -> Any:
    """Start the live scheduler (``berth schedule run``) against the cluster of ``kubeconfig``; returns it running
    (``stop()`` ends it). Defaults: kube-scheduler's default profile. Imported lazily: the live mode pulls in the
    Kubernetes client, which plain ``import berth.schedule`` should not pay for."""
    from berth.schedule.live import run as live_run

    return live_run.run_live_scheduler(kubeconfig, **kwargs)
