"""The default plugin set and the top-level defaults of ``KubeSchedulerConfiguration`` v1 (kube-scheduler 1.35).

Why a module of its own: upstream keeps the ordered default plugin list with its weights in exactly one file
(``pkg/scheduler/apis/config/v1/default_plugins.go``) and the scalar defaults in ``v1/defaults.go``. Order matters:
Filter plugins run in this order and stop at the first rejection, so the order decides which reason a pod's
FailedScheduling message reports. Every other berth module reads these tables from here; a test pins them whole.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DefaultPlugin:
    """One entry of the default ``multiPoint`` set. ``weight`` is set only for plugins that score."""

    name: str
    weight: int | None = None


# All in multiPoint, in this order. DynamicResources sits before DefaultPreemption (DRA is GA and on in 1.34/1.35):
# freeing an idle ResourceClaim is preferred to evicting a running pod. The cloud volume-limit plugins (EBSLimits,
# GCEPDLimits, AzureDiskLimits, CinderLimits) were removed in 1.32.
DEFAULT_PLUGINS: tuple[DefaultPlugin, ...] = (
    DefaultPlugin("SchedulingGates"),
    DefaultPlugin("PrioritySort"),
    DefaultPlugin("NodeUnschedulable"),
    DefaultPlugin("NodeName"),
    DefaultPlugin("TaintToleration", 3),
    DefaultPlugin("NodeAffinity", 2),
    DefaultPlugin("NodePorts"),
    DefaultPlugin("NodeResourcesFit", 1),
    DefaultPlugin("VolumeRestrictions"),
    DefaultPlugin("NodeVolumeLimits"),
    DefaultPlugin("VolumeBinding"),
    DefaultPlugin("VolumeZone"),
    DefaultPlugin("PodTopologySpread", 2),
    DefaultPlugin("InterPodAffinity", 2),
    DefaultPlugin("DynamicResources"),
    DefaultPlugin("DefaultPreemption"),
    DefaultPlugin("NodeResourcesBalancedAllocation", 1),
    DefaultPlugin("ImageLocality", 1),
    DefaultPlugin("DefaultBinder"),
)

# Plugin names v1 refuses outright (``was invalid in version ...``): removed in-tree plugins.
REMOVED_IN_V1: tuple[str, ...] = ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")

DEFAULT_SCHEDULER_NAME = "default-scheduler"

# Top-level scalar defaults (v1/defaults.go, component-base RecommendedDefaultLeaderElectionConfiguration).
PARALLELISM = 16
PERCENTAGE_OF_NODES_TO_SCORE = 0  # 0 = adaptive, see berth.schedule.percentage
POD_INITIAL_BACKOFF_SECONDS = 1
POD_MAX_BACKOFF_SECONDS = 10
ENABLE_PROFILING = True
DELAY_CACHE_UNTIL_ACTIVE = False

CLIENT_CONTENT_TYPE = "application/vnd.kubernetes.protobuf"
CLIENT_QPS = 50.0
CLIENT_BURST = 100

LEADER_ELECT = True
LEASE_DURATION_SECONDS = 15.0
RENEW_DEADLINE_SECONDS = 10.0
RETRY_PERIOD_SECONDS = 2.0
RESOURCE_LOCK = "leases"
RESOURCE_NAME = "kube-scheduler"
RESOURCE_NAMESPACE = "kube-system"
