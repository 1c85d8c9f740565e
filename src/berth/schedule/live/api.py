"""Raw JSON requests over the official ``kubernetes`` client's connection pool, and the one place API failures are
classified.

Why: the scheduler reads every object as plain JSON (the cache, the plugins and the simulation all work on dicts),
so building the client's typed models for thousands of pods would only cost time. Requests therefore use the
official client's configuration -- its auth (``Configuration.auth_settings``, token refresh hooks included), TLS
settings, proxy and urllib3 connection pool (``ApiClient.rest_client.pool_manager``) -- but not its per-request
machinery: ``param_serialize`` walks every body to sanitise it, ``call_api``/``RESTClientObject.request`` re-encode
it, and the typed methods validate their arguments with pydantic. Measured on the live benchmark, that machinery
cost as much client CPU per pod as the scheduling cycle itself; here a body is encoded once with :mod:`json` and the
answer decoded once.

Every response body is read to the end and the connection released, or urllib3 would open (and TLS-handshake) a
new connection per request.

Failures are sorted into :class:`ApiError` (the server answered with a ``Status``: ``status`` is its HTTP code,
``reason``/``message`` its fields) and :class:`Unreachable` (no answer: refused, reset, timed out -- the API server
may be restarting). :class:`PermissionLog` turns 403s into one log line per missing permission.

A client can carry a :class:`LinkReporter` (:func:`report_to`): every request then tells it whether the server
answered, so any reader or writer -- informers, binder, Events, status patches, the lease -- notices an outage and
its end (the scheduler's :class:`~berth.schedule.live.connection.ServerLink`).
"""

from __future__ import annotations

import json
import logging
import ssl
import threading
import urllib.parse
import weakref
from collections.abc import Iterator, Sequence
from typing import Any, Protocol

import orjson
import urllib3
from kubernetes.client.exceptions import ApiException

from berth.kube import client as kube_client
from berth.schedule.live import http11

JSON = "application/json"


def dumps(body: Any) -> bytes:
    """Compact JSON (orjson: the live path encodes a binding, an Event or a patch per pod; orjson does it several
    times faster than :mod:`json`). Values orjson refuses (integers beyond 64 bits) take :mod:`json`."""
    try:
        return orjson.dumps(body)
    except TypeError:
        return json.dumps(body, separators=(",", ":")).encode()


def loads(data: bytes | str) -> Any:
    """Decode JSON (orjson; ``ValueError`` for malformed input, as :func:`json.loads`)."""
    return orjson.loads(data)


STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"  # lists such as conditions merge by key


ApiError = kube_client.StatusError
"""The API server answered with an error ``Status`` (the one client error tree's; a subclass per code)."""
Unreachable = kube_client.Unreachable
"""No answer from the API server (connection refused/reset, timeout, truncated response)."""
status_error = kube_client.status_error


class LinkReporter(Protocol):
    """Told of each request's fate on a client: the server at ``url`` did not answer, or answered."""

    def lost(self, detail: str = "", url: str = "") -> None: ...

    def reachable(self, url: str = "", sent_in: int | None = None) -> None: ...

    @property
    def outages(self) -> int:
        """How many outages began so far: a request notes it when sent (``sent_in``), so an answer to a request
        sent before the current outage began is not taken for the server's return."""
        ...


def report_to(api_client: Any, reporter: LinkReporter | None) -> None:
    """Make every :func:`call` and :func:`open_request` on ``api_client`` report to ``reporter`` (None: stop)."""
    api_client._berth_link = reporter


def _reporter(api_client: Any) -> LinkReporter | None:
    reporter: LinkReporter | None = getattr(api_client, "_berth_link", None)
    return reporter


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
            parsed = loads(raw)
            if isinstance(parsed, dict):
                body = parsed
        except ValueError:
            pass
    message = str(body.get("message") or exc.reason or "")
    return status_error(status, str(body.get("reason") or exc.reason or ""), message, body)


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
        parsed = loads(data) if data else {}
        if isinstance(parsed, dict):
            body = parsed
    except ValueError:
        pass
    raise status_error(
        int(resp.status), str(body.get("reason") or resp.reason or ""), str(body.get("message") or ""), body
    )


def _prepare(
    api_client: Any,
    path: str,
    query: Sequence[tuple[str, Any]],
    body: Any,
    content_type: str,
    headers: dict[str, str] | None = None,
) -> tuple[str, bytes | None, dict[str, str]]:
    """The path with its query, the encoded body and the headers (auth from the client's configuration; or
    ``headers``, made by an earlier call for a body of the same content type, shared as they are)."""
    data: bytes | None = None
    if body is not None:
        data = body if isinstance(body, bytes) else dumps(body)
    if headers is None or (body is None) != ("Content-Type" not in headers):
        headers = dict(api_client.default_headers)
        headers["Accept"] = JSON
        if body is not None:
            headers["Content-Type"] = content_type
        try:
            auths = api_client.configuration.auth_settings().values()
        except ApiException as exc:  # raised by some auth refresh hooks of the official client
            raise from_api_exception(exc) from exc
        for auth in auths:
            if auth.get("in") == "header" and auth.get("value"):
                headers[auth["key"]] = auth["value"]
    if query:
        path += "?" + urllib.parse.urlencode([(k, _query_value(v)) for k, v in query])
    return path, data, headers


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

    ``body`` is JSON-encoded unless it is already ``bytes``.

    Raises:
        ApiError: the server answered with an error.
        Unreachable: no answer.
    """
    target, data, headers = _prepare(api_client, path, query, body, content_type)
    host = str(api_client.configuration.host)
    reporter = _reporter(api_client)
    sent_in = reporter.outages if reporter is not None else 0
    try:
        resp = api_client.rest_client.pool_manager.request(
            method,
            f"{host}{target}",
            body=data,
            headers=headers,
            timeout=_timeout(timeout),
            preload_content=False,
        )
    except TRANSPORT_ERRORS as exc:
        lost = Unreachable(f"{type(exc).__name__}: {exc}", host)
        if reporter is not None:
            reporter.lost(f"{method} {path}: {lost}", host)
        raise lost from exc
    if reporter is not None:
        reporter.reachable(host, sent_in)
    return _check(resp)


def open_stream(
    api_client: Any,
    path: str,
    query: Sequence[tuple[str, Any]] = (),
    timeout: tuple[float, float] = (10.0, 60.0),
) -> tuple[http11.Connection, Iterator[bytes]] | None:
    """A ``GET`` whose answer streams (a watch) on a connection of its own (:meth:`http11.Connection.stream`):
    the connection (to close) and the answer's lines. ``timeout``: to connect, then to wait for each read. None
    when the client's configuration needs urllib3 (a proxy ...): use :func:`open_request` then.

    Raises:
        ApiError: the server answered with an error.
        Unreachable: no answer.
    """
    fast = KeepAlive.of(api_client)
    if fast is None:
        return None
    target, _, headers = _prepare(api_client, path, query, None, JSON)
    reporter = _reporter(api_client)
    sent_in = reporter.outages if reporter is not None else 0
    conn = http11.Connection(fast.host, fast.port, fast.context)
    try:
        conn.connect(timeout[0])
        resp, lines = conn.stream("GET", fast.prefix + target, headers, timeout[1])
    except (OSError, ValueError) as exc:
        conn.close()
        lost = Unreachable(f"{type(exc).__name__}: {exc}", fast.url)
        if reporter is not None:
            reporter.lost(f"GET {path}: {lost}", fast.url)
        raise lost from exc
    if reporter is not None:
        reporter.reachable(fast.url, sent_in)
    if not 200 <= resp.status <= 299:
        conn.close()
        raise _api_error(resp.status, resp.reason, resp.body)
    return conn, lines


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _timeout(timeout: float | tuple[float, float] | None) -> urllib3.Timeout | None:
    if timeout is None:
        return None
    if isinstance(timeout, tuple):
        return urllib3.Timeout(connect=timeout[0], read=timeout[1])
    return urllib3.Timeout(total=timeout)


def call(
    api_client: Any,
    method: str,
    path: str,
    query: Sequence[tuple[str, Any]] = (),
    body: Any = None,
    content_type: str = JSON,
    timeout: float | tuple[float, float] | None = 30.0,
) -> dict[str, Any]:
    """One request, its JSON answer decoded (``{}`` for an empty body).

    Sent over this thread's kept-alive connection (:class:`KeepAlive`) when the configuration allows it, else
    through the client's urllib3 pool.
    """
    fast = KeepAlive.of(api_client)
    if fast is None:
        return read_json(open_request(api_client, method, path, query, body, content_type, timeout))
    target, data, headers = _prepare(api_client, path, query, body, content_type)
    reporter = _reporter(api_client)
    sent_in = reporter.outages if reporter is not None else 0
    try:
        status, reason, raw = fast.request(method, target, data, headers, timeout)
    except Unreachable as exc:
        if reporter is not None:
            reporter.lost(f"{method} {path}: {exc}", exc.url)
        raise
    if reporter is not None:
        reporter.reachable(fast.url, sent_in)
    if not 200 <= status <= 299:
        raise _api_error(status, reason, raw)
    return _decode(raw)


Call = tuple[str, str, Any, str]
"""One request of :func:`call_many`: method, path, body (JSON-encoded unless ``bytes``; None for none), content type."""


def call_many(
    api_client: Any, calls: Sequence[Call], timeout: float | None = 30.0, decode: bool = True
) -> list[dict[str, Any] | ApiError | Unreachable]:
    """Several requests, pipelined on this thread's kept-alive connection (one write, the answers read in order:
    one round trip and one TLS record for all of them instead of one each); each answer decoded, or its failure in
    its place (not raised). Without a kept-alive connection (a proxy ...), one :func:`call` after another.
    ``decode=False``: a caller that only needs to know which requests succeeded gets ``{}`` for each success (an
    Event's create answer is the whole Event again: decoding it would cost the recorder more than sending it).

    A request whose answer was lost is :class:`Unreachable` -- like any request that got no answer, it may or may
    not have been carried out."""
    fast = KeepAlive.of(api_client)
    if fast is None or len(calls) <= 1:
        return [_call_or_error(api_client, *one, timeout) for one in calls]
    try:
        # The headers (auth included) once per content type and batch: the requests go out together.
        headers: dict[str, dict[str, str]] = {}
        prepared: list[tuple[str, str, bytes | None, dict[str, str]]] = []
        for method, path, body, ctype in calls:
            target, data, hdrs = _prepare(api_client, path, (), body, ctype, headers.get(ctype))
            headers[ctype] = hdrs
            prepared.append((method, target, data, hdrs))
    except ApiError as exc:
        return [exc for _ in calls]
    reporter = _reporter(api_client)
    sent_in = reporter.outages if reporter is not None else 0
    answers, failure = fast.request_many(prepared, timeout)
    # in the order they happened: the answers that came, then the failure (the other way round, the answers
    # would end the outage the failure just began, and the next failure would begin another)
    if answers and reporter is not None:
        reporter.reachable(fast.url, sent_in)
    if failure is not None and reporter is not None:
        reporter.lost(
            f"{len(calls) - len(answers)} of {len(calls)} pipelined requests: {failure}", failure.url
        )
    out: list[dict[str, Any] | ApiError | Unreachable] = []
    for status, reason, raw in answers:
        if not 200 <= status <= 299:
            out.append(_api_error(status, reason, raw))
            continue
        if not decode:
            out.append({})
            continue
        try:
            out.append(_decode(raw))
        except Unreachable as exc:
            out.append(exc)
    lost = failure or Unreachable("no answer", fast.url)
    out.extend(lost for _ in range(len(calls) - len(answers)))
    return out


def _call_or_error(
    api_client: Any, method: str, path: str, body: Any, content_type: str, timeout: float | None
) -> dict[str, Any] | ApiError | Unreachable:
    try:
        return call(api_client, method, path, body=body, content_type=content_type, timeout=timeout)
    except (ApiError, Unreachable) as exc:
        return exc


def _api_error(status: int, reason: str, raw: bytes) -> ApiError:
    body: dict[str, Any] = {}
    try:
        parsed = loads(raw) if raw else {}
        if isinstance(parsed, dict):
            body = parsed
    except ValueError:
        pass
    return status_error(status, str(body.get("reason") or reason or ""), str(body.get("message") or ""), body)


def _decode(data: bytes) -> dict[str, Any]:
    if not data:
        return {}
    try:
        parsed = loads(data)
    except ValueError as exc:
        raise Unreachable(f"malformed JSON answer: {exc}") from exc
    return parsed if isinstance(parsed, dict) else {}


_UNSET = object()


class KeepAlive:
    """One kept-alive HTTPS connection per thread to the API server, for request/answer calls.

    Why: urllib3's pool costs as much client CPU per request as ``http.client`` itself (pool lookup, retries,
    response wrapping), and ``http.client`` as much again as :mod:`.http11`; the scheduler's writers (binding
    workers, the event recorder, status patches) each send one request after another from their own thread, so a
    plain connection per thread does the same job at a quarter of the cost. Used only for a direct connection -- no proxy, no ``tls-server-name`` -- else :func:`call` uses the
    pool. A kept-alive connection the server closed meanwhile is re-opened once (as urllib3 does); any other
    failure is :class:`Unreachable`. :meth:`reset` (the API server went away) makes every thread reconnect.
    """

    def __init__(self, configuration: Any) -> None:
        self.url = str(configuration.host)  # as the configuration says it (what a LinkReporter compares)
        url = urllib.parse.urlsplit(self.url)
        self.https = url.scheme == "https"
        self.host = url.hostname or "localhost"
        self.port = url.port or (443 if self.https else 80)
        self.prefix = url.path.rstrip("/")
        self.context: ssl.SSLContext | None = None
        if self.https:
            ctx = ssl.create_default_context(cafile=configuration.ssl_ca_cert or None)
            if getattr(configuration, "ca_cert_data", None):
                ctx.load_verify_locations(cadata=configuration.ca_cert_data)
            if not configuration.verify_ssl:
                ctx.check_hostname = False
                ctx.verify_mode = ssl.CERT_NONE
            if configuration.cert_file:
                ctx.load_cert_chain(configuration.cert_file, configuration.key_file)
            self.context = ctx
        self.generation = 0
        self._local = threading.local()
        self._lock = threading.Lock()
        self._open: weakref.WeakSet[http11.Connection] = weakref.WeakSet()

    @staticmethod
    def of(api_client: Any) -> KeepAlive | None:
        """The client's connections (created on first use), or None when the configuration needs urllib3."""
        known: Any = getattr(api_client, "_berth_keepalive", _UNSET)
        if known is _UNSET:
            cfg = getattr(
                api_client, "configuration", None
            )  # None: a stand-in client (tests) -- call() decides
            usable = (
                cfg is not None and not cfg.proxy and not cfg.tls_server_name and cfg.assert_hostname is None
            )
            known = KeepAlive(cfg) if usable else None
            if cfg is not None:
                api_client._berth_keepalive = known
        return known if isinstance(known, KeepAlive) else None

    def reset(self) -> None:
        """Every thread opens a new connection for its next request."""
        self.generation += 1

    def close(self) -> None:
        """Close every thread's connection (at shutdown; a thread still using one sees :class:`Unreachable`)."""
        self.generation += 1
        with self._lock:
            conns = list(self._open)
            self._open.clear()
        for conn in conns:
            conn.close()

    def _connection(self) -> tuple[http11.Connection, bool]:
        """This thread's connection, and whether it is a new one."""
        conn: http11.Connection | None = getattr(self._local, "conn", None)
        if conn is not None and self._local.generation == self.generation:
            return conn, False
        if conn is not None:
            conn.close()
        conn = http11.Connection(self.host, self.port, self.context)
        self._local.conn, self._local.generation = conn, self.generation
        with self._lock:
            self._open.add(conn)
        return conn, True

    def _drop(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
        self._local.conn = None

    def request(
        self,
        method: str,
        target: str,
        data: bytes | None,
        headers: dict[str, str],
        timeout: float | tuple[float, float] | None,
    ) -> tuple[int, str, bytes]:
        """Send one request; the answer's status, reason and body (read to the end)."""
        seconds = max(timeout) if isinstance(timeout, tuple) else timeout
        while True:
            conn, fresh = self._connection()
            try:
                resp = conn.request(method, self.prefix + target, headers, data, seconds)
            except ConnectionError as exc:  # reset, broken pipe, closed before answering (not a timeout)
                self._drop()
                if not fresh:
                    continue  # the server closed the kept-alive connection: open a new one, once
                raise Unreachable(f"{type(exc).__name__}: {exc}", self.url) from exc
            except (OSError, ValueError) as exc:  # timeouts, TLS errors, malformed answers
                self._drop()
                raise Unreachable(f"{type(exc).__name__}: {exc}", self.url) from exc
            if resp.status >= 500 or resp.will_close:
                # As _check: never reuse a connection to a failing server (it may be a stopped server's handler).
                self._drop()
            return resp.status, resp.reason, resp.body

    def request_many(
        self,
        requests: Sequence[tuple[str, str, bytes | None, dict[str, str]]],
        timeout: float | tuple[float, float] | None,
    ) -> tuple[list[tuple[int, str, bytes]], Unreachable | None]:
        """Send ``(method, target, body, headers)`` requests pipelined; the answers read (status, reason, body), in
        order, and the failure that ended the batch early (None when every request was answered). As
        :meth:`request`, a kept-alive connection the server had closed before answering anything is re-opened
        once; requests after an answer that closed the connection were not read by the server and are sent
        again on a new one."""
        seconds = max(timeout) if isinstance(timeout, tuple) else timeout
        done: list[http11.Response] = []
        pending = list(requests)
        while pending:
            conn, fresh = self._connection()
            batch = [
                (method, self.prefix + target, headers, data) for method, target, data, headers in pending
            ]
            try:
                answers = conn.pipeline(batch, seconds)
            except (OSError, ValueError) as exc:
                got = conn.answered
                self._drop()
                done.extend(got)
                pending = pending[len(got) :]
                if isinstance(exc, ConnectionError) and not got and not fresh:
                    continue  # the server closed the kept-alive connection: open a new one, once
                return _triples(done), Unreachable(f"{type(exc).__name__}: {exc}", self.url)
            done.extend(answers)
            pending = pending[len(answers) :]
            if any(a.status >= 500 or a.will_close for a in answers):
                self._drop()
        return _triples(done), None


def _triples(answers: list[http11.Response]) -> list[tuple[int, str, bytes]]:
    return [(a.status, a.reason, a.body) for a in answers]


def read_json(resp: Any) -> dict[str, Any]:
    """Read a urllib3 response to the end, release its connection, decode JSON."""
    try:
        data = resp.data
    except TRANSPORT_ERRORS as exc:
        raise Unreachable(f"{type(exc).__name__}: {exc}") from exc
    finally:
        resp.release_conn()
    return _decode(data)


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
