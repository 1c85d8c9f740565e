"""The one client wrapper: an official ``kubernetes`` ApiClient from a kubeconfig path and optional context.

Every part that talks to a cluster (install's apply executor, the scheduler's informers and binder, the tests of
the embedded cluster) builds its client here, so the embedded cluster and a real one take the same path and the
same kubeconfig rules (``$KUBECONFIG``, ``current-context``) apply everywhere.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubernetes import client as k8s_client
from kubernetes import config as k8s_config
from kubernetes.config.config_exception import ConfigException

from berth.kube import kubeconfig
from berth.kube.errors import InputError


@dataclass(frozen=True)
class Connection:
    """An ApiClient plus where it points."""

    api_client: Any  # kubernetes.client.ApiClient
    context: str
    server: str
    namespace: str


def connect(path: str | os.PathLike[str] | None = None, context: str | None = None) -> Connection:
    """Build an ApiClient for ``context`` (default: current-context) of the kubeconfig at ``path``
    (default: ``$KUBECONFIG`` or ``~/.kube/config``). Raises :class:`InputError` naming the file on problems."""
    cfg_path = str(path) if path is not None else kubeconfig.default_path()
    resolved = kubeconfig.resolve(cfg_path, context)
    configuration = k8s_client.Configuration()
    try:
        k8s_config.load_kube_config(  # type: ignore[no-untyped-call]
            config_file=cfg_path, context=resolved.name, client_configuration=configuration
        )
    except (ConfigException, OSError, ValueError) as exc:
        raise InputError(f"cannot use context {resolved.name!r}: {exc}", cfg_path) from exc
    throttle_token_refresh(configuration)
    return Connection(k8s_client.ApiClient(configuration), resolved.name, resolved.server, resolved.namespace)


def api_client(path: str | os.PathLike[str] | None = None, context: str | None = None) -> Any:
    """Shortcut for ``connect(path, context).api_client``."""
    return connect(path, context).api_client


def current_context(path: str | os.PathLike[str] | None = None, context: str | None = None) -> str:
    """The context name a client built with the same arguments would use."""
    return kubeconfig.current_context(path, context)


TOKEN_REFRESH_SECONDS = 10.0


def throttle_token_refresh(configuration: Any, interval: float = TOKEN_REFRESH_SECONDS) -> None:
    """Run ``configuration``'s token refresh hook at most once per ``interval`` seconds.

    The kubeconfig loader installs a hook that runs before *every* request and re-assigns the host, which re-reads
    the whole proxy environment: about a fifth of a small request's client CPU. Tokens live for minutes to hours,
    so a throttled hook still re-reads an expired one in time. Idempotent.
    """
    hook = getattr(configuration, "refresh_api_key_hook", None)
    if hook is not None and not isinstance(hook, _Throttled):
        configuration.refresh_api_key_hook = _Throttled(hook, interval)


class _Throttled:
    """A refresh hook that calls ``fn(cfg)`` at most once per ``interval`` seconds (the first call always runs),
    and stays installed: the kubeconfig loader's hook re-installs itself on ``cfg`` each time it runs."""

    def __init__(self, fn: Callable[[Any], Any], interval: float) -> None:
        self._fn = fn
        self._interval = interval
        self._next = 0.0
        self._lock = threading.Lock()

    def __call__(self, arg: Any) -> None:
        now = time.monotonic()
        with self._lock:
            if now < self._next:
                return
            self._next = now + self._interval
        try:
            self._fn(arg)
        finally:
            arg.refresh_api_key_hook = self

    def __deepcopy__(self, memo: dict[int, Any]) -> _Throttled:
        # a copied Configuration gets its own throttle (a lock cannot be deep-copied)
        return _Throttled(self._fn, self._interval)
