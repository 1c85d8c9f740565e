"""Schedule: KubeSchedulerConfiguration, a multi-profile framework over one cache and one queue, plugins.

The public API other parts use: the embedded cluster runs :class:`Scheduler` as its default-scheduler; ``berth
demo`` loads a configuration, computes its RBAC, renders its deployment manifests, runs the live scheduler and shows
the placement with the simulation's reports -- all through the names below (:func:`run_simulation` is
``simulate.simulate``, renamed so it never shadows the ``simulate`` module). Everything else is reached through
submodules by code inside this part only, and by ``berth.bench``, which times inner steps (import-linter's
"protected" contract in pyproject.toml keeps it so).

The names are resolved on first use (PEP 562 ``__getattr__``), not at import: every submodule -- the CLI's too --
imports this package first, and ``berth schedule --help`` should not pay for numpy and the whole framework.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from berth.schedule.config import SchedulerConfiguration
    from berth.schedule.config import load as load_config
    from berth.schedule.config import parse as parse_config
    from berth.schedule.deploy_defaults import Shape as DeployShape
    from berth.schedule.live.api import call as api_call
    from berth.schedule.live.informers import Backoff as InformerBackoff
    from berth.schedule.live.run import LiveOptions, LiveScheduler, informer_resources
    from berth.schedule.manifests import DeployOptions
    from berth.schedule.manifests import Rendered as RenderedManifests
    from berth.schedule.manifests import render as render_manifests
    from berth.schedule.manifests import units as manifest_units
    from berth.schedule.plugins.registry import Registry, default_registry
    from berth.schedule.queue import VirtualClock
    from berth.schedule.rbac import compute as compute_rbac
    from berth.schedule.report import print_table
    from berth.schedule.report_html import Page as ReportPage
    from berth.schedule.report_html import render_html as render_report_html
    from berth.schedule.report_live import live_result
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
    from berth.schedule.simulate import NodeUsage, SimulationResult
    from berth.schedule.simulate import simulate as run_simulation

__all__ = [
    "Binder",
    "CycleOutcome",
    "DeployOptions",
    "DeployShape",
    "Failure",
    "FailureReason",
    "Ignored",
    "InformerBackoff",
    "LiveOptions",
    "LiveScheduler",
    "NodeUsage",
    "Placement",
    "Registry",
    "RenderedManifests",
    "ReportPage",
    "Result",
    "Scheduler",
    "SchedulerConfiguration",
    "SimulationBinder",
    "SimulationResult",
    "VirtualClock",
    "api_call",
    "compute_rbac",
    "default_registry",
    "informer_resources",
    "live_result",
    "load_config",
    "manifest_units",
    "parse_config",
    "print_table",
    "render_manifests",
    "render_report_html",
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
    "NodeUsage": ("berth.schedule.simulate", "NodeUsage"),
    "SimulationResult": ("berth.schedule.simulate", "SimulationResult"),
    "run_simulation": ("berth.schedule.simulate", "simulate"),
    # configuration and plugins
    "SchedulerConfiguration": ("berth.schedule.config", "SchedulerConfiguration"),
    "load_config": ("berth.schedule.config", "load"),
    "parse_config": ("berth.schedule.config", "parse"),
    "Registry": ("berth.schedule.plugins.registry", "Registry"),
    "default_registry": ("berth.schedule.plugins.registry", "default_registry"),
    # what a configuration needs to run in a cluster: its RBAC and its deployment manifests
    "compute_rbac": ("berth.schedule.rbac", "compute"),
    "DeployOptions": ("berth.schedule.manifests", "DeployOptions"),
    "DeployShape": ("berth.schedule.deploy_defaults", "Shape"),
    "RenderedManifests": ("berth.schedule.manifests", "Rendered"),
    "render_manifests": ("berth.schedule.manifests", "render"),
    "manifest_units": ("berth.schedule.manifests", "units"),
    # the reports (terminal and HTML), also of a live scheduler's placement
    "print_table": ("berth.schedule.report", "print_table"),
    "ReportPage": ("berth.schedule.report_html", "Page"),
    "render_report_html": ("berth.schedule.report_html", "render_html"),
    "live_result": ("berth.schedule.report_live", "live_result"),
    # live mode (imports the Kubernetes client)
    "LiveOptions": ("berth.schedule.live.run", "LiveOptions"),
    "LiveScheduler": ("berth.schedule.live.run", "LiveScheduler"),
    "informer_resources": ("berth.schedule.live.run", "informer_resources"),
    "InformerBackoff": ("berth.schedule.live.informers", "Backoff"),
    "api_call": ("berth.schedule.live.api", "call"),
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
