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
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

_quote = json.encoder.encode_basestring_ascii  # the C string encoder json.dumps uses: '"text"' with escapes
# One (second, text) pair, replaced whole, so two threads never combine one second with another's text.
_second: list[tuple[int, str]] = [(-1, "")]


def _timestamp() -> str:
    """``2026-11-30T20:00:00.123456Z`` (UTC); the part up to the second is formatted once per second."""
    now = time.time()
    sec = int(now)
    cached_sec, text = _second[0]
    if cached_sec != sec:
        text = datetime.fromtimestamp(sec, UTC).strftime("%Y-%m-%dT%H:%M:%S")
        _second[0] = (sec, text)
    return f"{text}.{int((now - sec) * 1_000_000):06d}Z"


class AuditLog:
    """Appends audit records to a file (line-buffered, thread-safe); ``path=None`` discards them."""

    def __init__(self, path: str | os.PathLike[str] | None) -> None:
        self._lock = threading.Lock()
        self._fh: IO[str] | None = None
        if path is not None:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            # 0600: the log names every caller and object (the data directory is 0700 as well)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            self._fh = os.fdopen(fd, "a", encoding="utf-8", buffering=1)  # kept open for the server's life

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
        q = _quote
        text = (
            f'{{"time":"{_timestamp()}","user":{q(user)},"verb":{q(verb)},"resource":{q(resource)},'
            f'"subresource":{q(subresource)},"namespace":{q(namespace)},"name":{q(name)},"code":{int(code)}'
            + (f',"uri":{q(uri)}}}\n' if uri else "}\n")
        )
        with self._lock:
            if self._fh is not None:
                self._fh.write(text)

    def close(self) -> None:
        with self._lock:
            if self._fh is not None:
                self._fh.close()
                self._fh = None
