"""The resolved KubeSchedulerConfiguration: what :mod:`berth.schedule.config` produces and the framework, the
scheduler and the live mode consume (profiles with per-point plugin lists and weights, leader election, client
connection, extenders). Plain frozen dataclasses, below the decoder so consumers need not import it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from berth.schedule import defaults
from berth.schedule.framework.interface import POINT_NAMES


@dataclass(frozen=True)
class PluginRef:
    """An enabled plugin at one extension point.

    ``weight`` is resolved for the ``score`` point only (unset/0 -> 1; a ``score.enabled`` entry beats
    ``multiPoint``); it is 0 at every other point, where upstream ignores weights.
    """

    name: str
    weight: int = 0


@dataclass(frozen=True)
class Profile:
    """One fully resolved profile: per extension point the ordered enabled plugins, and decoded args per plugin.

    ``plugins`` has every extension point of ``POINT_NAMES`` as a key (empty tuple when nothing runs there).
    ``plugin_args`` maps plugin name -> decoded args object for every ``pluginConfig`` entry (user given or
    defaulted); a plugin without an args type has no entry (its args are None).
    """

    scheduler_name: str
    plugins: Mapping[str, tuple[PluginRef, ...]]
    plugin_args: Mapping[str, Any]
    percentage_of_nodes_to_score: int | None = None

    def names(self, point: str) -> tuple[str, ...]:
        """Plugin names enabled at ``point``, in run order."""
        return tuple(ref.name for ref in self.plugins.get(point, ()))

    def enabled_plugins(self) -> tuple[str, ...]:
        """Every plugin the framework instantiates for this profile (each once, first-seen in cycle order)."""
        seen: dict[str, None] = {}
        for point in POINT_NAMES:
            for ref in self.plugins.get(point, ()):
                seen.setdefault(ref.name, None)
        return tuple(seen)

    def score_weights(self) -> dict[str, int]:
        return {ref.name: ref.weight for ref in self.plugins.get("score", ())}


@dataclass(frozen=True)
class LeaderElection:
    leader_elect: bool = defaults.LEADER_ELECT
    lease_duration_seconds: float = defaults.LEASE_DURATION_SECONDS
    renew_deadline_seconds: float = defaults.RENEW_DEADLINE_SECONDS
    retry_period_seconds: float = defaults.RETRY_PERIOD_SECONDS
    resource_lock: str = defaults.RESOURCE_LOCK
    resource_name: str = defaults.RESOURCE_NAME
    resource_namespace: str = defaults.RESOURCE_NAMESPACE


@dataclass(frozen=True)
class ClientConnection:
    kubeconfig: str = ""
    accept_content_types: str = ""
    content_type: str = defaults.CLIENT_CONTENT_TYPE
    qps: float = defaults.CLIENT_QPS
    burst: int = defaults.CLIENT_BURST


@dataclass(frozen=True)
class ManagedResource:
    name: str
    ignored_by_scheduler: bool = False


@dataclass(frozen=True)
class Extender:
    """An HTTP scheduler extender (decoded and validated; berth's simulation does not call extenders)."""

    url_prefix: str
    filter_verb: str = ""
    preempt_verb: str = ""
    prioritize_verb: str = ""
    bind_verb: str = ""
    weight: int = 0
    enable_https: bool = False
    tls_config: Mapping[str, Any] | None = None
    http_timeout_seconds: float = 0.0
    node_cache_capable: bool = False
    managed_resources: tuple[ManagedResource, ...] = ()
    ignorable: bool = False

    @property
    def is_filter(self) -> bool:
        return bool(self.filter_verb)

    @property
    def is_prioritizer(self) -> bool:
        return bool(self.prioritize_verb)

    @property
    def is_binder(self) -> bool:
        return bool(self.bind_verb)


@dataclass(frozen=True)
class SchedulerConfiguration:
    profiles: tuple[Profile, ...]
    parallelism: int = defaults.PARALLELISM
    percentage_of_nodes_to_score: int = defaults.PERCENTAGE_OF_NODES_TO_SCORE
    pod_initial_backoff_seconds: int = defaults.POD_INITIAL_BACKOFF_SECONDS
    pod_max_backoff_seconds: int = defaults.POD_MAX_BACKOFF_SECONDS
    leader_election: LeaderElection = field(default_factory=LeaderElection)
    extenders: tuple[Extender, ...] = ()
    raw: Mapping[str, Any] = field(default_factory=dict)  # the decoded, defaulted document (for display)
    client_connection: ClientConnection = field(default_factory=ClientConnection)
    enable_profiling: bool = defaults.ENABLE_PROFILING
    enable_contention_profiling: bool = True
    delay_cache_until_active: bool = defaults.DELAY_CACHE_UNTIL_ACTIVE
    source: str = "<defaults>"

    def profile(self, scheduler_name: str) -> Profile | None:
        """The profile serving ``spec.schedulerName`` (None: pods with that name are left alone)."""
        for p in self.profiles:
            if p.scheduler_name == scheduler_name:
                return p
        return None

    @property
    def scheduler_names(self) -> tuple[str, ...]:
        return tuple(p.scheduler_name for p in self.profiles)
