"""The HTTP plumbing under the handlers: the threaded server, request-line and header parsing, reading bodies,
decoding them (JSON, YAML, protobuf), sending responses and chunks, and the Table view ``kubectl get`` reads."""

from __future__ import annotations

import contextlib
import re
import select
import socket
import ssl
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from socketserver import BaseRequestHandler
from typing import Any

from berth.cluster import decoding, jsonfast, request_warnings
from berth.cluster import errors as E
from berth.cluster.api import Api
from berth.cluster.audit import AuditLog
from berth.cluster.metrics import ApiMetrics
from berth.cluster.openapi import OpenApi
from berth.cluster.resources import ResourceType
from berth.kube import yamlio
from berth.kube.errors import InputError
from berth.kube.objects import Obj

MAX_BODY = E.MAX_REQUEST_BODY_BYTES
DEFAULT_WATCH_TIMEOUT = 1800
BOOKMARK_EVERY = 60.0
HEALTH_PATHS = ("/healthz", "/readyz", "/livez")
PATCH_CONTENT_TYPES = {
    "application/json-patch+json": "json",
    "application/merge-patch+json": "merge",
    "application/strategic-merge-patch+json": "strategic",
    "application/apply-patch+yaml": "apply",
    "application/apply-patch+json": "apply",
}
PROTOBUF = "application/vnd.kubernetes.protobuf"
TABLE_MARK = "as=Table"
PARTIAL_MARK = "as=PartialObjectMetadata"
"""``Accept: application/json;as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1``: metadata-only views (client-go's
metadata client and informers, ``kubectl get`` of many kinds at once)."""


def partial_object(obj: Obj) -> Obj:
    """An object's ``meta.k8s.io/v1 PartialObjectMetadata``: its metadata alone."""
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": obj.get("metadata") or {},
    }


def truthy(value: str | None) -> bool:
    return (value or "").lower() in ("true", "1", "yes")


@dataclass
class Request:
    """What a resource URL names, plus what the audit line needs."""

    verb: str = ""
    group: str = ""
    version: str = ""
    resource: str = ""  # plural
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    named: bool = (
        False  # the URL names one object (metrics' scope "resource"; a create's name comes from its body)
    )
    rtype: ResourceType | None = None
    user: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


class Headers:
    """Case-insensitive request headers; the stdlib's email-based parser costs ~1 ms per request, this ~20 us."""

    __slots__ = ("_items",)

    def __init__(self, items: dict[str, list[str]] | None = None) -> None:
        self._items: dict[str, list[str]] = items if items is not None else {}

    def add(self, key: str, value: str) -> None:
        self._items.setdefault(key.lower(), []).append(value)

    def get(self, key: str, default: Any = None) -> Any:
        values = self._items.get(key.lower())
        return values[-1] if values else default

    def get_all(self, key: str, default: Any = None) -> Any:
        return list(self._items.get(key.lower(), [])) or default

    def __getitem__(self, key: str) -> Any:
        return self.get(key)

    def names(self) -> list[str]:
        """The header names sent, lower-cased."""
        return list(self._items)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key.lower() in self._items

    def __len__(self) -> int:
        return len(self._items)


REASONS = {int(code): code.phrase for code in HTTPStatus}
_date_cache: list[Any] = [0, ""]


def http_date() -> str:
    """The ``Date`` header value, formatted once per second (``email.utils.formatdate`` costs ~30 us a call)."""
    now = int(time.time())
    if _date_cache[0] != now:
        _date_cache[1] = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(now))
        _date_cache[0] = now
    return str(_date_cache[1])


MAX_HEADERS = 100
MAX_LINE = 65536
HEADER_LINE = re.compile(r"([^:\r\n]+):([^\r\n]*)\r?\n")
"""One header line of a block (every line must match: a line without a colon is a 400)."""


class ServerBase(ThreadingHTTPServer):
    """The threaded HTTP server; one handler thread per connection. Binds 127.0.0.1 only. (:class:`berth.cluster.server.ApiServer`
    names the handler class.)"""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(
        self,
        api: Api,
        port: int = 0,
        audit: AuditLog | None = None,
        ssl_context: ssl.SSLContext | None = None,
        handler: type[BaseRequestHandler] | None = None,
    ) -> None:
        self.api = api
        self.audit = audit or AuditLog(None)
        self.openapi = OpenApi(api)
        self.metrics = ApiMetrics(api.store.counts)
        self.ready = threading.Event()
        self.stopping = threading.Event()
        self.tls = ssl_context is not None
        self._conns: set[socket.socket] = set()
        self._conns_lock = threading.Lock()
        super().__init__(("127.0.0.1", port), handler or BaseRequestHandler)
        if ssl_context is not None:
            # Handshakes happen in the handler thread (Handler.setup), never in the accept loop.
            self.socket = ssl_context.wrap_socket(
                self.socket, server_side=True, do_handshake_on_connect=False
            )

    # ---- open connections: closed on stop, so a kept-alive client is not served by a stopped cluster ----------

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._conns_lock:
            self._conns.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._conns_lock:
            self._conns.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        """End every open connection: a handler waiting for the next request on a kept-alive connection (or
        streaming a watch) sees end-of-stream and returns."""
        with self._conns_lock:
            conns = list(self._conns)
        for conn in conns:
            with contextlib.suppress(OSError):
                # the plain socket's shutdown: SSLSocket.shutdown would drop its TLS state under the handler
                socket.socket.shutdown(conn, socket.SHUT_RDWR)

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hangs up mid-response is not an error worth a traceback.
        exc = sys.exc_info()[1]
        if isinstance(exc, ConnectionError | BrokenPipeError | TimeoutError | ssl.SSLError):
            return
        traceback.print_exc()


class HandlerBase(BaseHTTPRequestHandler):
    """Parsing and sending: what every handler part shares."""

    protocol_version = "HTTP/1.1"
    # Buffered writes: headers and body leave in one send (one TLS record) when the handler flushes.
    wbufsize = 1 << 16
    # Errors raised by the stdlib's own request parsing are Status objects too.
    error_content_type = "application/json"
    error_message_format = (
        '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"%(message)s",'
        '"reason":"BadRequest","code":%(code)d}'
    )
    server: ServerBase
    _field_validation = ""
    server_version = "berth"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:
        return

    def parse_request(self) -> bool:
        """Request line and headers, without ``email.parser`` (the hot path of every request)."""
        self.command = ""
        self.request_version = version = self.default_request_version
        self.close_connection = True
        requestline = str(getattr(self, "raw_requestline", b""), "iso-8859-1").rstrip("\r\n")
        self.requestline = requestline
        words = requestline.split()
        if len(words) != 3 or not words[2].startswith("HTTP/"):
            self.request_version = "HTTP/1.1"
            self.send_error(400, "bad request line")
            return False
        self.command, self.path, version = words
        self.request_version = version
        items: dict[str, list[str]] = {}
        rfile = self.rfile
        # Fast path: the whole header block is already buffered (it arrives with the request line): take it in
        # one read and split it with one regex scan instead of a readline + decode + strip per header.
        buffered = rfile.peek(MAX_LINE)  # type: ignore[attr-defined]
        end = 0 if buffered.startswith(b"\r\n") else buffered.find(b"\r\n\r\n") + 2
        if end >= 2 or buffered.startswith(b"\r\n"):
            block = rfile.read(end + 2)[:end].decode("iso-8859-1")
            pairs = HEADER_LINE.findall(block)
            if len(pairs) != block.count("\n"):
                self.send_error(400, "Malformed header line")
                return False
        else:
            pairs = []
            while True:
                line = rfile.readline(MAX_LINE + 1)
                if len(line) > MAX_LINE:
                    self.send_error(431, "Line too long")
                    return False
                if line in (b"\r\n", b"\n", b""):
                    break
                key, sep, value = line.decode("iso-8859-1").partition(":")
                if not sep:
                    self.send_error(400, "Malformed header line")
                    return False
                pairs.append((key, value))
                if len(pairs) > MAX_HEADERS:
                    break
        if len(pairs) > MAX_HEADERS:
            self.send_error(431, "Too many headers")
            return False
        for key, value in pairs:
            key = key.strip().lower()
            values = items.get(key)
            if values is None:
                items[key] = [value.strip()]
            else:
                values.append(value.strip())
        self.headers = headers = Headers(items)  # type: ignore[assignment]
        conn = items["connection"][-1].lower() if "connection" in items else ""
        if (version >= "HTTP/1.1" and conn != "close") or conn == "keep-alive":
            self.close_connection = False
        if (
            "expect" in items
            and str(headers.get("Expect")).lower() == "100-continue"
            and version >= "HTTP/1.1"
        ):
            self.send_response_only(100)
            self.end_headers()
            self.wfile.flush()
        return True

    def handle_one_request(self) -> None:
        """The stdlib's, except that the answer is flushed only when no further request is already waiting: the
        answers to a pipelined batch (the scheduler's bindings and Events) then leave in one write and one TLS
        record instead of one each. An answer is never held while the server waits for its client."""
        try:
            self.raw_requestline = self.rfile.readline(65537)
            if len(self.raw_requestline) > 65536:
                self.requestline = ""
                self.request_version = ""
                self.command = ""
                self.send_error(HTTPStatus.REQUEST_URI_TOO_LONG)
                return
            if not self.raw_requestline:
                self.close_connection = True
                return
            if not self.parse_request():
                return  # an error answer was sent (and flushed by the caller's finish)
            method = getattr(self, "do_" + self.command, None)
            if method is None:
                self.send_error(HTTPStatus.NOT_IMPLEMENTED, f"Unsupported method ({self.command!r})")
                return
            method()
            if self.close_connection or not self._next_request_buffered():
                self.wfile.flush()
        except TimeoutError as exc:  # a read or a write timed out: discard this connection
            self.log_error("Request timed out: %r", exc)
            self.close_connection = True

    def _next_request_buffered(self) -> bool:
        """Has the client sent more already (it pipelines)? Looks without waiting: the socket is non-blocking
        for the peek, so an empty buffer answers False instead of blocking with the answer unsent."""
        sock = self.connection
        timeout = sock.gettimeout()
        try:
            sock.settimeout(0.0)
            return bool(self.rfile.peek(1))  # type: ignore[attr-defined]
        except (OSError, ValueError):  # nothing there yet (ssl.SSLWantReadError, BlockingIOError) or gone
            return False
        finally:
            with contextlib.suppress(OSError):
                sock.settimeout(timeout)

    def setup(self) -> None:
        conn = self.request
        # Small request/response pairs: Nagle + delayed ACK would add ~40 ms to every exchange.
        with contextlib.suppress(OSError):
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if isinstance(conn, ssl.SSLSocket):
            conn.settimeout(10)
            conn.do_handshake()
            conn.settimeout(None)
        super().setup()

    # ---- plumbing ------------------------------------------------------------------------------------------

    def _send(
        self,
        code: int,
        body: bytes,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> None:
        # One buffered write of status line, headers and body (send_response/send_header cost ~25 calls).
        extra = "".join(f"{k}: {v}\r\n" for k, v in headers.items()) if headers else ""
        found = request_warnings.current()
        if found:
            extra += "".join(f"Warning: {request_warnings.header_value(w)}\r\n" for w in found)
        if self.close_connection:
            extra += "Connection: close\r\n"  # a client must not pool a connection we are about to close
        head = (
            f"HTTP/1.1 {code} {REASONS.get(code, '')}\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {len(body)}\r\nCache-Control: no-cache, private\r\nDate: {http_date()}\r\n"
            f"{extra}\r\n"
        ).encode("latin-1")
        self.wfile.write(head if self.command == "HEAD" else head + body)

    def _send_json(self, code: int, obj: Any, content_type: str = "application/json") -> None:
        self._send(code, jsonfast.dumps_bytes(obj), content_type)

    def _send_object(self, code: int, rt: ResourceType, version: str, obj: Obj) -> None:
        """Send an object just written: the store's JSON text of it when that is the same revision (it was
        encoded once on the way in), else encode it."""
        meta = obj.get("metadata") or {}
        name, namespace = str(meta.get("name") or ""), str(meta.get("namespace") or "")
        stored = self.server.api.stored_json(rt, name, namespace or None, version) if name else None
        if stored is not None and str(stored[0]) == meta.get("resourceVersion"):
            self._send(code, stored[1].encode())
        else:
            self._send_json(code, obj)

    def _read_body(self) -> bytes:
        length = self.headers.get("Content-Length")
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            total = 0
            while True:
                size = int(self.rfile.readline().strip().split(b";")[0] or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                total += size
                if total > MAX_BODY:
                    self.close_connection = True
                    raise E.request_entity_too_large()
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        if not length:
            return b""
        n = int(length)
        if n > MAX_BODY:
            # Drain (bounded) so the client reads our 413 instead of a connection reset mid-upload.
            self.close_connection = True
            left = min(n, 64 * MAX_BODY)
            while left > 0:
                got = self.rfile.read(min(left, 1 << 20))
                if not got:
                    break
                left -= len(got)
            raise E.request_entity_too_large()
        return self.rfile.read(n)

    def _default_manager(self) -> str:
        agent = self.headers.get("User-Agent") or ""
        return agent.split("/")[0] or "unknown"

    # ---- bodies --------------------------------------------------------------------------------------------

    def _decode(self, body: bytes, rt: ResourceType | None = None) -> Any:
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if not body:
            raise E.bad_request("the request body is empty; expected a JSON object")
        if ctype == PROTOBUF:
            from berth.cluster import protobuf  # first protobuf body pays for the decoder tables

            return protobuf.decode(body)
        if ctype in ("application/yaml", "application/x-yaml", "text/yaml"):
            try:
                return yamlio.load_one(body.decode("utf-8"), "request body")
            except (InputError, UnicodeDecodeError) as exc:
                raise E.bad_request(f"error converting YAML to JSON: {exc}") from exc
        try:
            parsed = jsonfast.loads(body)
        except (ValueError, UnicodeDecodeError) as exc:
            raise E.bad_request(f"couldn't get version/kind; json parse error: {exc}") from exc
        decoding.note_body(body, parsed)  # duplicate fields, which the parsed dict no longer shows
        return parsed

    def _decode_patch(self, body: bytes, ptype: str) -> Any:
        if not body:
            raise E.bad_request("the patch body is empty")
        try:
            return jsonfast.loads(body)
        except (ValueError, UnicodeDecodeError) as exc:
            if ptype != "apply":
                raise E.bad_request(f"error decoding patch: {exc}") from exc
        try:
            return yamlio.load_one(body.decode("utf-8"), "request body")
        except (InputError, UnicodeDecodeError) as exc:
            raise E.bad_request(f"error decoding YAML: {exc}") from exc

    def _table(
        self,
        rt: ResourceType,
        items: list[Obj],
        rv: str,
        cont: str,
        query: dict[str, str],
        remaining: int | None = None,
        version: str | None = None,
    ) -> Obj:
        include = query.get("includeObject") or "Metadata"
        if include not in ("None", "Metadata", "Object"):
            raise E.bad_request(f'includeObject: Unsupported value: "{include}"')
        printer_columns: list[Any] | None = None
        if rt.custom:
            from berth.cluster import crds

            crd = crds.crd_of(self.server.api, rt) or {}
            printer_columns = list(
                crds.version_of(crd, version or rt.version).get("additionalPrinterColumns") or []
            )
        from berth.cluster import tables  # loaded on the first human-readable `kubectl get`

        table: Obj = tables.to_table(
            rt.kind,
            items,
            now=datetime.now(UTC),
            api_group=rt.group,
            include_object=include,
            printer_columns=printer_columns,
        )
        meta = table.setdefault("metadata", {})
        meta["resourceVersion"] = rv
        if cont:
            meta["continue"] = cont
            if remaining is not None:
                meta["remainingItemCount"] = remaining
        return table

    # ---- streams ---------------------------------------------------------------------------------------------

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _client_gone(self) -> bool:
        try:
            sock: socket.socket = self.connection
            readable, _, _ = select.select([sock], [], [], 0)
            # A streaming client sends nothing; readable means EOF or a TLS close_notify.
            return bool(readable)
        except (OSError, ValueError):
            return True
