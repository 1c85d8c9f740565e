"""The audit log: one JSON line per request in ``DIR/audit.jsonl``.

Tests (ours and users') read it to prove the order in which an installer or scheduler touched the cluster, so
every line has the same keys: ``time, user, verb, resource, subresource, namespace, name, code``. ``verb`` is the
Kubernetes verb (create, update, patch, delete, deletecollection, get, list, watch); ``resource`` is the plural,
qualified by group for non-core kinds (``deployments.apps``). Requests to non-resource URLs (discovery, OpenAPI,
health) have an empty ``resource`` and carry the path in ``uri``. In-process writes by the controllers are logged
too, under their ``system:controller:...`` user; their reads are not.
"""

from __future__ import annotations

import json
import os
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import IO


class AuditLog:
    """Appends audit records to a file (line-buffered, thread-safe); ``path=None`` discards them."""

    def __init__(self, path: str | os.PathLike[str] | None) -> None:
        self._lock = threading.Lock()
        self._fh: IO[str] | None = None
        if path is not None:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            self._fh = open(path, "a", encoding="utf-8", buffering=1)  # noqa: SIM115 - kept open for the server's life

    def record(
        self,
        user: str,
        verb: str,
        resource: str,
        subresource: str,
        namespace: str,
        name: str,
        code: int,
        uri: str = "",
    ) -> None:
        if self._fh is None:
            return
        line: dict[str, object] = {
            "time": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            "user": user,
            "verb": verb,
            "resource": resource,
            "subresource": subresource,
            "namespace": namespace,
            "name": name,
            "code": code,
        }
        if uri:
            line["uri"] = uri
        text = json.dumps(line, separators=(",", ":")) + "\n"
        with self._lock:
            if self._fh is not None:
                self._fh.write(text)

    def close(self) -> None:
        with self._lock:
            if self._fh is not None:
                self._fh.close()
                self._fh = None
