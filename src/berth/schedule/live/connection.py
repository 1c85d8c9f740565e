"""The scheduler's link to the API server: where the kubeconfig comes from, the clients built from it, and what
happens when the server goes away.

Why: an API server that restarts -- killed, upgraded, or an embedded cluster brought up again on another port --
must not strand the scheduler. Every reader and writer reports a failed connection here (:meth:`ServerLink.lost`:
the informers, and every request on the link's clients through :func:`berth.schedule.live.api.report_to`, so a
binding, an Event or a status patch that finds the server gone counts as much as a broken watch);
the link then drops every pooled connection and re-reads the kubeconfig (the server may have come back elsewhere:
a new URL, CA or credentials are applied to the running clients), while the informers and writers retry with
jittered backoff and the informers re-list. Operators see one line per change of state, naming the server and the
kubeconfig -- ``lost the API server ...``, ``kubeconfig ... now points at ...``, ``API server ... reachable again``
-- not one per failed request::

    up ──request fails (unreachable)──▶ down: drop connections, re-read kubeconfig (at most once a second)
     ▲                                    │ kubeconfig names another server: clients switch to it
     └──────a list or watch succeeds──────┘

Where the kubeconfig comes from: :func:`berth.kube.kubeconfig.locate`, as for every part (``--kubeconfig``, else
``$KUBECONFIG`` merged, else ``~/.kube/config``, as kubectl; then the embedded cluster's
``./.berth/cluster/kubeconfig``, then the in-cluster ServiceAccount).
"""

from __future__ import annotations

import contextlib
import copy
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from kubernetes import client as k8s_client
from kubernetes.client import rest as k8s_rest

from berth.kube import client as kube_client
from berth.kube import kubeconfig as kube_kubeconfig
from berth.schedule.live import api

log = logging.getLogger("berth.schedule.live")

EMBEDDED_KUBECONFIG = kube_kubeconfig.EMBEDDED
REREAD_SECONDS = 1.0  # while the server is away, the kubeconfig is read again at most this often
# What a kubeconfig decides about a connection: a change of any of these is a new server for the clients.
_LINK_FIELDS = (
    "host",
    "ssl_ca_cert",
    "cert_file",
    "key_file",
    "verify_ssl",
    "api_key",
    "api_key_prefix",
    "username",
    "password",
)


def resolve_kubeconfig(
    explicit: str | os.PathLike[str] | None, cwd: Path | None = None
) -> kube_kubeconfig.Location:
    """Where the cluster comes from: :func:`berth.kube.kubeconfig.locate`, the same rule for every part."""
    return kube_kubeconfig.locate(explicit, cwd)


def configuration(kubeconfig: str | kube_kubeconfig.Location | None, context: str | None) -> Any:
    """A ``kubernetes.client.Configuration`` for the kubeconfig or in-cluster, through berth's client wrapper."""
    return kube_client.connect(kubeconfig, context).api_client.configuration


def api_client_from(cfg: Any, pool_size: int) -> Any:
    """A separate ApiClient (own connection pool) on a copy of ``cfg``, its token refresh hook throttled
    (:func:`berth.kube.client.throttle_token_refresh`)."""
    mine = copy.deepcopy(cfg)
    mine.connection_pool_maxsize = pool_size
    kube_client.throttle_token_refresh(mine)
    return k8s_client.ApiClient(mine)


class ServerLink:
    """The state of the scheduler's connection (up / down) for every client built from one kubeconfig.

    Args:
        kubeconfig: the file to re-read when the server goes away (None: in-cluster, nothing to re-read).
        context: its context.
        clients: the ApiClients to keep pointed at the server (reader, writer ...); each reports its requests'
            fate here.
    """

    def __init__(
        self,
        kubeconfig: str | kube_kubeconfig.Location | None,
        context: str | None,
        clients: Sequence[Any],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        in_cluster = isinstance(kubeconfig, kube_kubeconfig.Location) and kubeconfig.in_cluster
        self.kubeconfig = None if in_cluster else kubeconfig
        self.context = context
        self.clients = list(clients)
        self.url = str(self.clients[0].configuration.host) if self.clients else ""
        self.down_since: float | None = None
        self.outages = 0  # how many times the server went away (for tests and metrics)
        self.switches = 0  # how many times the kubeconfig sent the clients to another server
        self._clock = clock
        self._lock = threading.Lock()
        self._last_read = float("-inf")
        self._last_drop = float("-inf")
        for client in self.clients:
            api.report_to(client, self)  # every request on them tells the link whether the server answered

    @property
    def where(self) -> str:
        if isinstance(self.kubeconfig, kube_kubeconfig.Location):
            return f"kubeconfig {self.kubeconfig.describe()}"
        return f"kubeconfig {self.kubeconfig}" if self.kubeconfig else "in-cluster configuration"

    def lost(self, detail: str = "", url: str = "") -> None:
        """A request to ``url`` could not reach the server: drop pooled connections and re-read the kubeconfig; the
        first report of an outage is logged (later ones are not: the state did not change). A request sent to a
        server the clients have since left is old news (its thread may report it after the new server answered)."""
        with self._lock:
            if url and url != self.url:
                return
            now = self._clock()
            if self.down_since is None:
                self.down_since = now
                self.outages += 1
                log.warning(
                    "lost the API server at %s%s; retrying with backoff and re-reading the %s",
                    self.url,
                    f" ({detail})" if detail else "",
                    self.where,
                )
            if now - self._last_drop >= REREAD_SECONDS:
                self._last_drop = now
                self._drop_connections()
            if now - self._last_read >= REREAD_SECONDS:
                self._last_read = now
                self._reread()

    def reachable(self, url: str = "", sent_in: int | None = None) -> None:
        """A request reached the server (at ``url``, if known): if it was away, say it is back (once). An answer to
        a request sent before this outage began (``sent_in``, the :attr:`outages` count when it was sent) says
        nothing about now: another thread's request may have been answered just before the server went away."""
        if self.down_since is None:
            return
        with self._lock:
            if self.down_since is None or (url and url != self.url):
                return
            if sent_in is not None and sent_in < self.outages:
                return
            away = self._clock() - self.down_since
            self.down_since = None
            log.warning("API server at %s reachable again after %.1fs (%s)", self.url, away, self.where)

    def _drop_connections(self) -> None:
        """Close every pooled connection, so that no later request reuses a kept-alive connection to a server
        that has since stopped or restarted."""
        for client in self.clients:
            with contextlib.suppress(Exception):
                client.rest_client.pool_manager.clear()
            keep_alive = api.KeepAlive.of(client)
            if keep_alive is not None:
                keep_alive.reset()

    def _reread(self) -> None:
        if self.kubeconfig is None:
            return
        try:
            fresh = configuration(self.kubeconfig, self.context)
        except Exception as exc:  # missing or half-written while the cluster restarts: try again later
            log.debug("re-reading %s: %s", self.kubeconfig, exc)
            return
        current = self.clients[0].configuration if self.clients else None
        if current is not None and all(
            getattr(fresh, name, None) == getattr(current, name, None) for name in _LINK_FIELDS
        ):
            return
        log.warning("%s now points at %s (was %s): reconnecting there", self.where, fresh.host, self.url)
        for client in self.clients:
            point_at(client, fresh)
        self.url = str(fresh.host)
        self.switches += 1


def point_at(client: Any, fresh: Any) -> None:
    """Make a running ApiClient talk to the server ``fresh`` describes: its connection fields copied into the
    client's own configuration (pool size kept), ``fresh``'s token refresh hook (the old one belongs to the old
    kubeconfig and would write the old server's host, CA and token back on its next run), a new urllib3 pool and
    new kept-alive connections."""
    cfg = client.configuration
    for name in _LINK_FIELDS:
        value = getattr(fresh, name, None)
        setattr(cfg, name, copy.deepcopy(value) if isinstance(value, dict) else value)
    hook = getattr(fresh, "refresh_api_key_hook", None)
    cfg.refresh_api_key_hook = copy.deepcopy(hook)  # a throttled hook: one throttle per client
    keep_alive = api.KeepAlive.of(client)
    if keep_alive is not None:
        keep_alive.close()
    with contextlib.suppress(AttributeError):
        del client._berth_keepalive  # rebuilt from the new configuration on next use
    old = client.rest_client
    client.rest_client = k8s_rest.RESTClientObject(cfg)
    with contextlib.suppress(Exception):
        old.pool_manager.clear()
