"""Raw JSON requests through the official ``kubernetes`` client, and the one place API failures are classified.

Why: the scheduler reads every object as plain JSON (the cache, the plugins and the simulation all work on dicts),
so building the client's typed models for thousands of pods would only cost time. Requests therefore go through
the official client's own request machinery (``ApiClient.param_serialize`` + ``call_api``: its auth, TLS and
connection pool) with ``_preload_content=False`` semantics, and the body is decoded once with :mod:`json`.

Every response body is read to the end and the connection released, or urllib3 would open (and TLS-handshake) a
new connection per request.

Failures are sorted into :class:`ApiError` (the server answered with a ``Status``: ``status`` is its HTTP code,
``reason``/``message`` its fields) and :class:`Unreachable` (no answer: refused, reset, timed out -- the API server
may be restarting). :class:`PermissionLog` turns 403s into one log line per missing permission.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Mapping, Sequence
from typing import Any

import urllib3
from kubernetes.client.exceptions import ApiException

AUTH_SETTINGS = ["BearerToken"]
JSON = "application/json"


class ApiError(Exception):
    """The API server answered with an error ``Status``."""

    def __init__(self, status: int, reason: str, message: str, body: Mapping[str, Any] | None = None) -> None:
        super().__init__(f"{status} {reason}: {message}")
        self.status = status
        self.reason = reason
        self.message = message
        self.body: Mapping[str, Any] = body or {}


class Unreachable(Exception):
    """No answer from the API server (connection refused/reset, timeout, truncated response)."""


TRANSPORT_ERRORS: tuple[type[BaseException], ...] = (urllib3.exceptions.HTTPError, OSError, ValueError)


def from_api_exception(exc: ApiException) -> ApiError | Unreachable:
    """Classify an exception of the official client (status 0 means it never got an answer)."""
    status = int(exc.status or 0)
    if status == 0:
        return Unreachable(str(exc.reason or exc))
    body: dict[str, Any] = {}
    raw = exc.body
    if raw:
        try:
            parsed = json.loads(raw)
            if isinstance(parsed, dict):
                body = parsed
        except ValueError:
            pass
    message = str(body.get("message") or exc.reason or "")
    return ApiError(status, str(body.get("reason") or exc.reason or ""), message, body)


def _check(resp: Any) -> Any:
    """Raise :class:`ApiError` for a non-2xx urllib3 response (its body is read and the connection released)."""
    if 200 <= resp.status <= 299:
        return resp
    data = resp.data
    if resp.status >= 500:
        # Do not reuse a connection whose server failed: it may be a handler left over from a server that was
        # stopped (the embedded cluster keeps serving kept-alive connections after a restart); a new connection
        # reaches whoever listens now.
        resp.close()
    resp.release_conn()
    body: dict[str, Any] = {}
    try:
        parsed = json.loads(data) if data else {}
        if isinstance(parsed, dict):
            body = parsed
    except ValueError:
        pass
    raise ApiError(
        int(resp.status), str(body.get("reason") or resp.reason or ""), str(body.get("message") or ""), body
    )


def open_request(
    api_client: Any,
    method: str,
    path: str,
    query: Sequence[tuple[str, Any]] = (),
    body: Any = None,
    content_type: str = JSON,
    timeout: float | tuple[float, float] | None = None,
) -> Any:
    """Send a request and return the unread urllib3 response (2xx only). For watches; see :func:`call` otherwise.

    Raises:
        ApiError: the server answered with an error.
        Unreachable: no answer.
    """
    headers = {"Accept": JSON}
    if body is not None:
        headers["Content-Type"] = content_type
    try:
        params = api_client.param_serialize(
            method=method,
            resource_path=path,
            query_params=list(query),
            header_params=headers,
            body=body,
            auth_settings=AUTH_SETTINGS,
        )
        rest = api_client.call_api(*params, _request_timeout=timeout)
    except ApiException as exc:
        raise from_api_exception(exc) from exc
    except TRANSPORT_ERRORS as exc:
        raise Unreachable(f"{type(exc).__name__}: {exc}") from exc
    return _check(rest.response)


def call(
    api_client: Any,
    method: str,
    path: str,
    query: Sequence[tuple[str, Any]] = (),
    body: Any = None,
    content_type: str = JSON,
    timeout: float | tuple[float, float] | None = 30.0,
) -> dict[str, Any]:
    """One request, its JSON answer decoded (``{}`` for an empty body)."""
    resp = open_request(api_client, method, path, query, body, content_type, timeout)
    return read_json(resp)


def read_json(resp: Any) -> dict[str, Any]:
    """Read a urllib3 response to the end, release its connection, decode JSON."""
    try:
        data = resp.data
    except TRANSPORT_ERRORS as exc:
        raise Unreachable(f"{type(exc).__name__}: {exc}") from exc
    finally:
        resp.release_conn()
    if not data:
        return {}
    try:
        parsed = json.loads(data)
    except ValueError as exc:
        raise Unreachable(f"malformed JSON answer: {exc}") from exc
    return parsed if isinstance(parsed, dict) else {}


def typed(fn: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
    """Call a typed method of the official client (``CoreV1Api.create_namespaced_pod_binding`` ...) with
    ``_preload_content=False`` (kubernetes-client/python #547: the binding answer is a Status the client cannot
    turn into a V1Binding) and decode the answer ourselves."""
    try:
        resp = fn(*args, _preload_content=False, **kwargs)
    except ApiException as exc:
        raise from_api_exception(exc) from exc
    except TRANSPORT_ERRORS as exc:
        raise Unreachable(f"{type(exc).__name__}: {exc}") from exc
    return read_json(resp)


class PermissionLog:
    """Logs each missing permission once: ``missing permission: list nodes (core) cluster-wide -- <server text>``.

    A scheduler bound to too small a role fails on many requests, repeatedly (informers retry, every pod needs a
    binding); the operator needs the list of what to grant, one line per permission, not a flood.
    """

    def __init__(self, logger: logging.Logger) -> None:
        self._log = logger
        self._seen: set[tuple[str, str, str]] = set()
        self._lock = threading.Lock()

    def forbidden(self, verb: str, resource: str, group: str, namespace: str, error: ApiError) -> None:
        key = (verb, group, resource)
        with self._lock:
            if key in self._seen:
                return
            self._seen.add(key)
        scope = f"in namespace {namespace}" if namespace else "cluster-wide"
        self._log.error(
            "missing permission: %s %s (%s) %s -- %s", verb, resource, group or "core", scope, error.message
        )

    @property
    def missing(self) -> list[tuple[str, str, str]]:
        """(verb, group, resource) of every permission found missing so far, in the order found."""
        with self._lock:
            return sorted(self._seen)
