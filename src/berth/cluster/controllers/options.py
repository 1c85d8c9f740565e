"""The simulation's knobs and the names of the controllers it can run (below every controller module, so
:mod:`.base` reads them without importing the package that starts the controllers)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ControllerOptions:
    """Knobs of the simulation. Delays are seconds; defaults keep everything near-instant."""

    nodes: int = 0
    """Simulated nodes to create at start (``node-1..node-N``) when they do not exist."""
    node_cpu: str = "8"
    node_memory: str = "32Gi"
    node_pods: str = "110"
    node_ephemeral_storage: str = "100Gi"
    node_labels: dict[str, str] = field(default_factory=dict)
    pod_start_delay: float = 0.0
    """From bound (and seen by the kubelet) to Running/Ready."""
    job_duration: float = 0.0
    """From Running to Succeeded (or Failed) for pods that run to completion: controlled by a Job, or bare with
    restartPolicy Never/OnFailure."""
    pod_delete_delay: float = 0.0
    """From deletionTimestamp to the kubelet's final delete of a terminating pod."""
    heartbeat_interval: float = 10.0
    """How often each node's Lease in kube-node-lease is renewed."""
    lease_duration_seconds: int = 40
    events: bool = True
    """Record core/v1 Events (turn off for benchmarks that count objects)."""
    root_ca: str = ""
    """PEM of the cluster's CA, published as the ``kube-root-ca.crt`` ConfigMap in every namespace (empty: not
    published)."""
    disabled: frozenset[str] = frozenset()
    """Names of controllers not to run (e.g. ``{"kubelet"}``): see :data:`CONTROLLER_NAMES`."""


CONTAINER_RUN_SECONDS = 1.0
"""What the embedded cluster (:class:`berth.cluster.Cluster`) uses as ``job_duration`` unless told otherwise: a
container that exits at once still takes about a second on a real node (sandbox, image check, start, exit), and
clients count on that. Helm creates a hook Job and then starts watching it; with ``ttlSecondsAfterFinished: 0`` an
instant Job is finished and deleted by the TTL-after-finished controller before Helm's first list, and Helm fails
with ``not ready. status: NotFound``. In-process controller tests keep :class:`ControllerOptions`' instant default."""


CONTROLLER_NAMES: tuple[str, ...] = (
    "nodes",
    "kubelet",
    "namespace",
    "serviceaccount",
    "root-ca-cert-publisher",
    "replicaset",
    "deployment",
    "statefulset",
    "daemonset",
    "job",
    "cronjob",
    "volumes",
    "endpoints",
    "resourcequota",
    "gc",
)
"""Every controller :func:`start` can run, in start order."""
