"""Simulated nodes and the core controllers of the embedded cluster (in-process, KWOK-like, fast by default).

Why: a real cluster makes pods Running, rolls Deployments out and completes Jobs; clients (kubectl ``wait`` and
``rollout status``, Helm ``--wait``, installers, schedulers) depend on that. These controllers reproduce the
observable behaviour of kube-controller-manager and a kubelet against the in-process Api, with configurable delays
that default to (almost) zero so tests stay fast.

What runs (one module each, like upstream): ``nodes`` (node-1..N, Ready status, Lease heartbeats), ``kubelet``
(bound pods → Running/Ready → Succeeded|Failed for Job pods; terminating pods removed), ``namespace`` (phase, the
``default`` ServiceAccount, deletion of a namespace's contents), ``deployment``, ``replicaset``, ``statefulset``,
``daemonset``, ``job``, ``cronjob``, ``volumes``, ``endpoints`` (Endpoints and EndpointSlices of Services) (PVCs bound to simulated PersistentVolumes) and ``gc`` (ownerReference garbage collection: Background, Foreground, Orphan). There is no
scheduler here: pods without ``spec.nodeName`` stay Pending until a scheduler binds them.

Annotation ``berth.dev/simulate-failure: "true"`` on a Job makes its pods fail (exit code 1) so the Job ends
``Failed`` with reason ``BackoffLimitExceeded`` (see :mod:`.kubelet`).

Entry point: ``controllers = start(api, ControllerOptions(nodes=3))`` ... ``controllers.stop()``.
"""

from __future__ import annotations

import logging
import threading
import time

from berth.cluster.controllers import base, client
from berth.cluster.controllers.events import EventRecorder
from berth.cluster.controllers.informer import InformerFactory
from berth.cluster.controllers.kubelet import SIMULATE_FAILURE_ANNOTATION
from berth.cluster.controllers.options import CONTAINER_RUN_SECONDS, CONTROLLER_NAMES, ControllerOptions

__all__ = [
    "CONTAINER_RUN_SECONDS",
    "CONTROLLER_NAMES",
    "SIMULATE_FAILURE_ANNOTATION",
    "ControllerOptions",
    "Controllers",
    "start",
]

log = logging.getLogger(__name__)


class Controllers:
    """The running set. :meth:`stop` ends every thread (idempotent)."""

    def __init__(self, ctx: base.Context, controllers: list[base.Controller]) -> None:
        self.ctx = ctx
        self.controllers = controllers
        self._stopped = False

    def get(self, name: str) -> base.Controller | None:
        """A running controller by its :data:`CONTROLLER_NAMES` entry."""
        for c in self.controllers:
            if getattr(c, "key", c.name) == name:
                return c
        return None

    def wait_synced(self, timeout: float = 5.0) -> bool:
        """Wait until every informer has listed once."""
        return self.ctx.informers.wait_synced(timeout)

    def stop(self, timeout: float = 2.0) -> None:
        if self._stopped:
            return
        self._stopped = True
        self.ctx.stop.set()
        for c in self.controllers:
            c.shutdown()
        self.ctx.informers.stop(timeout)
        deadline = time.monotonic() + timeout
        for c in self.controllers:
            c.join(max(0.0, deadline - time.monotonic()))
        self.ctx.recorder.stop(max(0.1, deadline - time.monotonic()))


def start(api: client.ApiLike, options: ControllerOptions | None = None) -> Controllers:
    """Create the configured nodes, then start every enabled controller on daemon threads."""
    from berth.cluster.controllers import (
        cronjob,
        daemonset,
        deployment,
        endpoints,
        gc,
        job,
        kubelet,
        namespace,
        nodes,
        replicaset,
        resourcequota,
        statefulset,
        volumes,
    )

    options = options or ControllerOptions()
    unknown = set(options.disabled) - set(CONTROLLER_NAMES)
    if unknown:
        raise ValueError(
            f"ControllerOptions.disabled: unknown controller(s) {sorted(unknown)}; known: {', '.join(CONTROLLER_NAMES)}"
        )
    stop = threading.Event()
    recorder = EventRecorder(api, enabled=options.events)
    ctx = base.Context(
        api=api, options=options, informers=InformerFactory(api, stop), recorder=recorder, stop=stop
    )
    factories: dict[str, type[base.Controller]] = {
        "nodes": nodes.NodeController,
        "kubelet": kubelet.Kubelet,
        "namespace": namespace.NamespaceController,
        "serviceaccount": namespace.ServiceAccountController,
        "root-ca-cert-publisher": namespace.RootCACertPublisher,
        "replicaset": replicaset.ReplicaSetController,
        "deployment": deployment.DeploymentController,
        "statefulset": statefulset.StatefulSetController,
        "daemonset": daemonset.DaemonSetController,
        "job": job.JobController,
        "cronjob": cronjob.CronJobController,
        "volumes": volumes.VolumeBinder,
        "endpoints": endpoints.EndpointsController,
        "resourcequota": resourcequota.ResourceQuotaController,
        "gc": gc.GarbageCollector,
    }
    running: list[base.Controller] = []
    for name in CONTROLLER_NAMES:
        if name in options.disabled:
            continue
        ctrl = factories[name](ctx)
        ctrl.key = name
        running.append(ctrl)
    node_ctrl = next((c for c in running if isinstance(c, nodes.NodeController)), None)
    if node_ctrl is not None and options.nodes > 0:
        node_ctrl.ensure_nodes()
    recorder.start()
    ctx.informers.start()
    for ctrl in running:
        ctrl.start()
    return Controllers(ctx, running)
