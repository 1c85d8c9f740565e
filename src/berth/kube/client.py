"""The one client wrapper: an official ``kubernetes`` ApiClient from a kubeconfig path and optional context.

Every part that talks to a cluster (install's apply executor, the scheduler's informers and binder, the tests of
the embedded cluster) builds its client here, so the embedded cluster and a real one take the same path and the
same kubeconfig rules (``$KUBECONFIG``, ``current-context``) apply everywhere.
"""

from __future__ import annotations

import os
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
    return Connection(k8s_client.ApiClient(configuration), resolved.name, resolved.server, resolved.namespace)


def api_client(path: str | os.PathLike[str] | None = None, context: str | None = None) -> Any:
    """Shortcut for ``connect(path, context).api_client``."""
    return connect(path, context).api_client


def current_context(path: str | os.PathLike[str] | None = None, context: str | None = None) -> str:
    """The context name a client built with the same arguments would use."""
    return kubeconfig.current_context(path, context)
