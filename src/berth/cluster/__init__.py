"""Cluster: an embedded, kubectl-compatible Kubernetes API server with simulated nodes and controllers.

Public API of the part: :class:`Cluster` (with :class:`ClusterOptions`) starts the server in-process -- for tests,
``berth cluster up`` and the demo -- on 127.0.0.1, backed by a data directory or by memory (see
:mod:`berth.cluster.embedded`). Everything else in this package is internal. The names are resolved lazily so that
importing the CLI (``berth --help``) does not pay for the server's imports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from berth.cluster.embedded import Cluster, ClusterError, ClusterOptions

__all__ = ["Cluster", "ClusterError", "ClusterOptions"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from berth.cluster import embedded

        return getattr(embedded, name)
    raise AttributeError(f"module 'berth.cluster' has no attribute {name!r}")
