"""The embedded cluster's ``default-scheduler``: berth's own scheduler with kube-scheduler's default profile.

Why: pods that name no scheduler get ``schedulerName: default-scheduler`` and would stay Pending forever on a
cluster without one. Rather than a second, simplified scheduler, the cluster runs the real one -- the same
:class:`berth.schedule.Scheduler` as ``berth schedule run`` -- as a client of its own API (its kubeconfig with the
admin token), so it sees exactly what any external scheduler would, through the official client. Pods naming
another scheduler are left Pending for that scheduler.

Layering: the cluster reaches the scheduler only through the public package ``berth.schedule``.

Use (from ``Cluster`` start/stop)::

    handle = default_scheduler.start(kubeconfig_path)   # after the kubeconfig is written
    ...
    handle.stop()
"""

from __future__ import annotations

import os
from typing import Protocol


class Handle(Protocol):
    """A running scheduler; ``stop()`` ends it gracefully."""

    def stop(self, timeout: float = 10.0) -> None: ...


def start(kubeconfig_path: str | os.PathLike[str]) -> Handle:
    """Start berth's scheduler with the default profile (``schedulerName: default-scheduler``) against the cluster
    the kubeconfig points at; returns it running."""
    from berth.schedule import run_live_scheduler

    return run_live_scheduler(kubeconfig_path)  # type: ignore[no-any-return]
