"""The HTTP face of the embedded cluster: kube-apiserver's URL space over the in-process :class:`Api`.

One request, top to bottom (``Handler._handle``)::

    read body (413 over 3 MiB) -> health endpoints (no auth) -> authenticate (401) -> route:
      /version | /api, /apis (legacy or aggregated discovery) | /openapi/v3[/<gv>] | /openapi/v2 (no definitions)
      | resource URL -> authorize (RBAC, 403) -> decode body (JSON, YAML, protobuf) -> Api.do_* -> encode
        (JSON, or a meta.k8s.io Table for kubectl's human output) | watch stream
    -> audit line

Watches are chunked ``application/json`` streams, one event per line, flushed per event, ended after
``timeoutSeconds`` or when the client goes away. ``sendInitialEvents=true`` (kubectl's watch-list) gets the current
objects as ADDED, then a BOOKMARK annotated ``k8s.io/initial-events-end``, then changes. A failure anywhere becomes a
``Status`` body; an unexpected exception is a 500 and the server keeps serving.
"""

from __future__ import annotations

import contextlib
import json
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
from typing import Any
from urllib.parse import parse_qs, urlsplit

from berth.cluster import admission, auth, discovery
from berth.cluster import errors as E
from berth.cluster.api import Api, ApiError, Watch
from berth.cluster.audit import AuditLog
from berth.cluster.openapi import OpenApi
from berth.cluster.resources import NO_CONTAINER_SUBRESOURCES, ResourceType
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


OPENAPI_V2_JSON: dict[str, Any] = {
    "swagger": "2.0",
    "info": {"title": "Kubernetes", "version": "v1.35.0"},
    "paths": {},
    "definitions": {},
}
OPENAPI_V2_PROTOBUF_TYPE = "application/octet-stream"  # Go cannot parse the "@" of the Accept type
# The same document as gnostic's openapi_v2.Document: swagger (1), info (2: title 1, version 2), empty paths (8) and
# definitions (9).
OPENAPI_V2_PROTOBUF = (
    b"\x0a\x032.0" + b"\x12\x15" + b"\x0a\x0aKubernetes" + b"\x12\x07v1.35.0" + b"\x42\x00" + b"\x4a\x00"
)


def _truthy(value: str | None) -> bool:
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

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key.lower() in self._items

    def __len__(self) -> int:
        return len(self._items)


_REASONS = {int(code): code.phrase for code in HTTPStatus}
_date_cache: list[Any] = [0, ""]


def _http_date() -> str:
    """The ``Date`` header value, formatted once per second (``email.utils.formatdate`` costs ~30 us a call)."""
    now = int(time.time())
    if _date_cache[0] != now:
        _date_cache[1] = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(now))
        _date_cache[0] = now
    return str(_date_cache[1])


MAX_HEADERS = 100
MAX_LINE = 65536
_HEADER_LINE = re.compile(r"([^:\r\n]+):([^\r\n]*)\r?\n")
"""One header line of a block (every line must match: a line without a colon is a 400)."""


class ApiServer(ThreadingHTTPServer):
    """The threaded HTTP server; one handler thread per connection. Binds 127.0.0.1 only."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(
        self,
        api: Api,
        port: int = 0,
        audit: AuditLog | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.api = api
        self.audit = audit or AuditLog(None)
        self.openapi = OpenApi(api)
        self.ready = threading.Event()
        self.stopping = threading.Event()
        self.tls = ssl_context is not None
        self._conns: set[socket.socket] = set()
        self._conns_lock = threading.Lock()
        super().__init__(("127.0.0.1", port), Handler)
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


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Buffered writes: headers and body leave in one send (one TLS record) when the handler flushes.
    wbufsize = 1 << 16
    # Errors raised by the stdlib's own request parsing are Status objects too.
    error_content_type = "application/json"
    error_message_format = (
        '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"%(message)s",'
        '"reason":"BadRequest","code":%(code)d}'
    )
    server: ApiServer
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
            pairs = _HEADER_LINE.findall(block)
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

    def _health(self, path: str, query: dict[str, str]) -> tuple[int, str]:
        """``/healthz``, ``/livez``, ``/readyz`` as kube-apiserver answers them: ``ok``, or with ``?verbose`` one
        ``[+]check ok`` line per check and ``<endpoint> check passed``; ``/<endpoint>/<check>`` for one check
        (404 for a check that does not exist); a failed check is ``[-]check failed`` and a 500."""
        endpoint, _, only = path.strip("/").partition("/")
        checks = {"ping": True, "log": True, "store": True}
        if endpoint == "readyz":
            checks["informer-sync"] = self.server.ready.is_set()
            checks["shutdown"] = not self.server.stopping.is_set()
        if only:
            if only not in checks:
                return 404, "404 page not found\n"
            return (200, "ok") if checks[only] else (500, f"internal server error: {only} failed\n")
        passed = all(checks.values())
        if not passed or "verbose" in query:
            lines = [
                f"[+]{name} ok" if good else f"[-]{name} failed: reason withheld"
                for name, good in checks.items()
            ]
            verdict = "passed" if passed else "failed"
            return (200 if passed else 500), "\n".join([*lines, f"{endpoint} check {verdict}", ""])
        return 200, "ok"

    # ---- verbs ---------------------------------------------------------------------------------------------

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PUT(self) -> None:
        self._handle("PUT")

    def do_PATCH(self) -> None:
        self._handle("PATCH")

    def do_DELETE(self) -> None:
        self._handle("DELETE")

    def do_HEAD(self) -> None:
        self._handle("HEAD")

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
        if self.close_connection:
            extra += "Connection: close\r\n"  # a client must not pool a connection we are about to close
        head = (
            f"HTTP/1.1 {code} {_REASONS.get(code, '')}\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {len(body)}\r\nCache-Control: no-cache, private\r\nDate: {_http_date()}\r\n"
            f"{extra}\r\n"
        ).encode("latin-1")
        self.wfile.write(head if self.command == "HEAD" else head + body)

    def _send_json(self, code: int, obj: Any, content_type: str = "application/json") -> None:
        self._send(code, json.dumps(obj, separators=(",", ":")).encode(), content_type)

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

    def _handle(self, method: str) -> None:
        req = Request()
        code = 500
        raw_path, sep, raw_query = self.path.partition("?")
        if raw_path.startswith("/"):
            url_path = raw_path.partition("#")[0]
        else:  # absolute-form request target
            url_path = urlsplit(self.path).path
            raw_query = urlsplit(self.path).query
        path = url_path.rstrip("/") or "/"
        query = (
            {k: v[-1] for k, v in parse_qs(raw_query.partition("#")[0], keep_blank_values=True).items()}
            if sep
            else {}
        )
        api = self.server.api
        try:
            body = self._read_body() if method in ("POST", "PUT", "PATCH", "DELETE") else b""
            if path in HEALTH_PATHS or path.startswith(tuple(p + "/" for p in HEALTH_PATHS)):
                code, text = self._health(path, query)
                self._send(code, text.encode(), "text/plain; charset=utf-8")
                return
            ident = auth.authenticate(api, self.headers.get("Authorization"))
            req.user = ident.name
            as_user = self.headers.get("Impersonate-User")
            if as_user:
                ident = auth.impersonate(api, ident, as_user, self.headers.get_all("Impersonate-Group") or [])
                req.user = ident.name
            code = self._route(method, path, query, body, ident, req)
        except ApiError as exc:
            code = exc.code
            self._send_json(exc.code, exc.status())
        except (ConnectionError, BrokenPipeError):
            self.close_connection = True
            code = 499
        except Exception as exc:
            traceback.print_exc()
            err = E.internal(f"{type(exc).__name__}: {exc}")
            code = 500
            try:
                self._send_json(500, err.status())
            except OSError:
                self.close_connection = True
        finally:
            res = req.resource
            if req.rtype is not None:
                res = req.rtype.resource
            self.server.audit.record(
                req.user or "system:anonymous",
                req.verb or ("get" if method in ("GET", "HEAD") else method.lower()),
                res,
                req.subresource,
                req.namespace,
                req.name,
                code,
                "" if res else url_path,
            )

    # ---- routing -------------------------------------------------------------------------------------------

    def _route(
        self, method: str, path: str, query: dict[str, str], body: bytes, ident: auth.Identity, req: Request
    ) -> int:
        api = self.server.api
        accept = self.headers.get("Accept", "") or ""
        seg = [s for s in path.split("/") if s]
        if not seg:
            self._nonresource(ident, path, req)
            self._send_json(
                200,
                {
                    "paths": [
                        "/api",
                        "/api/v1",
                        "/apis",
                        "/healthz",
                        "/livez",
                        "/openapi/v3",
                        "/readyz",
                        "/version",
                    ]
                },
            )
            return 200
        if seg[0] == "version" and len(seg) == 1:
            self._nonresource(ident, path, req)
            self._send_json(200, discovery.VERSION_INFO)
            return 200
        if seg[0] == "openapi":
            self._nonresource(ident, path, req)
            return self._openapi(seg)
        if seg[0] == "api":
            if len(seg) == 1:
                self._nonresource(ident, path, req)
                return self._discovery_root(accept, core=True)
            if seg[1] != "v1":
                raise E.path_not_found()
            group, version, rest = "", "v1", seg[2:]
        elif seg[0] == "apis":
            if len(seg) == 1:
                self._nonresource(ident, path, req)
                return self._discovery_root(accept, core=False)
            if len(seg) == 2:
                self._nonresource(ident, path, req)
                doc = discovery.api_group(api.registry, seg[1])
                if doc is None:
                    raise E.path_not_found()
                self._send_json(200, doc)
                return 200
            group, version, rest = seg[1], seg[2], seg[3:]
        else:
            raise E.path_not_found()
        if not rest:
            self._nonresource(ident, path, req)
            doc = discovery.resource_list(api.registry, group, version)
            if doc is None:
                raise E.path_not_found()
            self._send_json(200, doc)
            return 200
        return self._resource(method, group, version, rest, query, body, accept, ident, req)

    def _nonresource(self, ident: auth.Identity, path: str, req: Request) -> None:
        req.verb = "get"
        auth.authorize(self.server.api, ident, {"path": path, "verb": "get", "nonResource": True})

    def _discovery_root(self, accept: str, core: bool) -> int:
        api = self.server.api
        agg = discovery.aggregated_type(accept)
        if agg is not None:
            self._send_json(200, discovery.aggregated(api.registry, core, agg), agg)
        elif core:
            self._send_json(200, discovery.api_versions())
        else:
            self._send_json(200, discovery.api_group_list(api.registry))
        return 200

    def _openapi(self, seg: list[str]) -> int:
        if len(seg) >= 2 and seg[1] == "v3":
            oa = self.server.openapi
            if len(seg) == 2:
                self._send_json(200, oa.root())
                return 200
            rest = seg[2:]
            doc = None
            if rest[0] == "api" and len(rest) == 2:
                doc = oa.document("", rest[1])
            elif rest[0] == "apis" and len(rest) == 3:
                doc = oa.document(rest[1], rest[2])
            if doc is None:
                raise E.path_not_found()
            self._send(200, doc[0], "application/json", {"Etag": f'"{doc[1]}"'})
            return 200
        if len(seg) == 2 and seg[1] == "v2":
            # A valid Swagger 2.0 document without definitions: kubectl and Helm fall back to it only for kinds the
            # v3 documents lack (an unknown kind, a CRD not created yet), and a kind it does not define is not
            # validated there -- so they go on to the REST mapping and its "no matches for kind ... ensure CRDs
            # are installed first", as against kube-apiserver. (A 404 here made them fail with "error validating
            # data: the server could not find the requested resource".)
            if "protobuf" in str(self.headers.get("Accept") or ""):
                self._send(200, OPENAPI_V2_PROTOBUF, OPENAPI_V2_PROTOBUF_TYPE)
            else:
                self._send_json(200, OPENAPI_V2_JSON)
            return 200
        raise E.path_not_found()

    def _resource(
        self,
        method: str,
        group: str,
        version: str,
        rest: list[str],
        query: dict[str, str],
        body: bytes,
        accept: str,
        ident: auth.Identity,
        req: Request,
    ) -> int:
        api = self.server.api
        registry = api.registry
        namespace = ""
        # /namespaces/<ns>/<plural>... unless this is the namespaces resource itself
        if rest[0] == "namespaces" and len(rest) >= 3 and group == "":
            maybe = registry.lookup(group, version, rest[2])
            if maybe is not None and maybe.namespaced:
                namespace, rest = rest[1], rest[2:]
            elif rest[2] in ("status", "finalize") and len(rest) == 3:
                pass
            else:
                raise E.path_not_found()
        elif rest[0] == "namespaces" and len(rest) >= 3 and group != "":
            namespace, rest = rest[1], rest[2:]
        rt = registry.lookup(group, version, rest[0])
        if rt is None:
            raise E.path_not_found()
        if namespace and not rt.namespaced:
            raise E.path_not_found()
        req.rtype, req.group, req.version, req.resource = rt, group, version, rt.plural
        req.namespace = namespace
        name = rest[1] if len(rest) > 1 else ""
        sub = rest[2] if len(rest) > 2 else ""
        if len(rest) > 3 and sub != "proxy":  # pods/NAME/proxy/<path> carries a path of its own
            raise E.path_not_found()
        req.name, req.subresource = name, sub
        if sub and sub not in rt.subresources:
            raise E.path_not_found()
        verb = self._verb(method, name, sub, query)
        req.verb = verb
        self._field_validation = query.get("fieldValidation", "")
        attrs = {
            "verb": verb,
            "group": group,
            "version": version,
            "resource": rt.plural,
            "subresource": sub,
            "namespace": namespace,
            "name": name,
        }
        auth.authorize(api, ident, attrs)
        if sub in NO_CONTAINER_SUBRESOURCES:
            raise E.bad_request(
                f"pods/{sub} is not served: no container runs in berth's embedded cluster, so there is nothing to "
                "exec into, attach to, port-forward or proxy to (use a real cluster for that)"
            )
        if method == "HEAD":
            method = "GET"
        if verb == "watch":
            return self._watch(rt, version, namespace, name, query, accept)
        if method == "GET":
            return self._get(rt, version, namespace, name, sub, query, accept, ident)
        dry_run = query.get("dryRun") == "All"
        if query.get("dryRun") not in (None, "", "All"):
            raise E.bad_request(
                f'dryRun: Unsupported value: "{query.get("dryRun")}": supported values: "All"'
            )
        manager = query.get("fieldManager") or self._default_manager()
        if method == "POST":
            return self._post(rt, version, namespace, name, sub, body, dry_run, manager, ident, req)
        if method == "PUT":
            if not name:
                raise E.method_not_allowed("update", rt.resource)
            obj = self._decode(body, rt)
            out = api.do_update(
                rt,
                obj,
                namespace or None,
                subresource=sub or None,
                user=ident.name,
                dry_run=dry_run,
                manager=manager,
                version=version,
                name=name,
                field_validation=query.get("fieldValidation", ""),
            )
            self._send_json(200, out)
            return 200
        if method == "PATCH":
            if not name:
                raise E.method_not_allowed("patch", rt.resource)
            ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
            ptype = PATCH_CONTENT_TYPES.get(ctype)
            if ptype is None:
                raise E.unsupported_media_type(list(PATCH_CONTENT_TYPES)[:4])
            patch = self._decode_patch(body, ptype)
            force = _truthy(query.get("force"))
            out, created = api.do_patch(
                rt,
                name,
                patch,
                ptype,
                namespace or None,
                subresource=sub or None,
                manager=query.get("fieldManager") if ptype == "apply" else manager,
                force=force,
                user=ident.name,
                dry_run=dry_run,
                version=version,
                field_validation=query.get("fieldValidation", ""),
            )
            code = 201 if created else 200
            self._send_json(code, out)
            return code
        if method == "DELETE":
            return self._delete(rt, version, namespace, name, sub, query, body, dry_run)
        raise E.method_not_allowed(method.lower(), rt.resource)

    def _default_manager(self) -> str:
        agent = self.headers.get("User-Agent") or ""
        return agent.split("/")[0] or "unknown"

    def _verb(self, method: str, name: str, sub: str, query: dict[str, str]) -> str:
        if sub in ("attach", "exec", "portforward"):
            return (
                "create"  # a websocket upgrade is a GET, authorized as create (as kube-apiserver 1.35 does)
            )
        if method in ("GET", "HEAD"):
            if _truthy(query.get("watch")):
                return "watch"
            return "get" if name else "list"
        if method == "POST":
            return "create"
        if method == "PUT":
            return "update"
        if method == "PATCH":
            return "patch"
        if method == "DELETE":
            return "delete" if name else "deletecollection"
        return method.lower()

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
            return json.loads(body)
        except (ValueError, UnicodeDecodeError) as exc:
            raise E.bad_request(f"couldn't get version/kind; json parse error: {exc}") from exc

    def _decode_patch(self, body: bytes, ptype: str) -> Any:
        if not body:
            raise E.bad_request("the patch body is empty")
        try:
            return json.loads(body)
        except (ValueError, UnicodeDecodeError) as exc:
            if ptype != "apply":
                raise E.bad_request(f"error decoding patch: {exc}") from exc
        try:
            return yamlio.load_one(body.decode("utf-8"), "request body")
        except (InputError, UnicodeDecodeError) as exc:
            raise E.bad_request(f"error decoding YAML: {exc}") from exc

    # ---- GET -----------------------------------------------------------------------------------------------

    def _get(
        self,
        rt: ResourceType,
        version: str,
        namespace: str,
        name: str,
        sub: str,
        query: dict[str, str],
        accept: str,
        ident: auth.Identity,
    ) -> int:
        api = self.server.api
        table = TABLE_MARK in accept.replace(" ", "")
        if name:
            if sub == "log":
                return self._log(namespace, name, query)
            if sub == "scale":
                self._send_json(200, api.get_scale(rt, name, namespace or None))
                return 200
            # the subresources that are a view of the whole object are read like it (kubectl patch --subresource GETs)
            views = ("ephemeralcontainers", "approval", "resize")
            if sub and sub != "status" and not (sub in views and sub in rt.subresources):
                raise E.method_not_allowed("get", f"{rt.plural}/{sub}")
            if not table and not sub:
                stored = api.stored_json(rt, name, namespace or None, version)
                if stored is not None:
                    self._send(200, stored[1].encode())
                    return 200
            obj = api.do_get(rt, name, namespace or None, version)
            if table:
                self._send_json(
                    200,
                    self._table(
                        rt,
                        [obj],
                        str(obj["metadata"].get("resourceVersion", "")),
                        "",
                        query,
                    ),
                )
            else:
                self._send_json(200, obj)
            return 200
        try:
            limit = int(query.get("limit") or 0)
        except ValueError as exc:
            raise E.bad_request(f"invalid limit {query.get('limit')!r}") from exc
        # resourceVersion / resourceVersionMatch on a list are served from the current state (no history reads).
        res = api.do_list(
            rt,
            namespace or None,
            query.get("labelSelector", ""),
            query.get("fieldSelector", ""),
            limit=limit,
            continue_token=query.get("continue", ""),
            version=version,
        )
        if table:
            self._send_json(
                200,
                self._table(rt, res.items, res.resource_version, res.continue_token, query, res.remaining),
            )
            return 200
        meta: dict[str, Any] = {"resourceVersion": res.resource_version}
        if res.continue_token:
            meta["continue"] = res.continue_token
            if res.remaining is not None:
                meta["remainingItemCount"] = res.remaining
        out = {
            "kind": rt.kind_list,
            "apiVersion": rt.api_version_for(version),
            "metadata": meta,
            "items": res.items,
        }
        self._send_json(200, out)
        return 200

    def _table(
        self,
        rt: ResourceType,
        items: list[Obj],
        rv: str,
        cont: str,
        query: dict[str, str],
        remaining: int | None = None,
    ) -> Obj:
        include = query.get("includeObject") or "Metadata"
        if include not in ("None", "Metadata", "Object"):
            raise E.bad_request(f'includeObject: Unsupported value: "{include}"')
        printer_columns: list[Any] | None = None
        if rt.custom:
            from berth.cluster import crds

            crd = crds.crd_of(self.server.api, rt) or {}
            printer_columns = list(crds.version_of(crd, rt.version).get("additionalPrinterColumns") or [])
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

    # ---- POST ----------------------------------------------------------------------------------------------

    def _post(
        self,
        rt: ResourceType,
        version: str,
        namespace: str,
        name: str,
        sub: str,
        body: bytes,
        dry_run: bool,
        manager: str,
        ident: auth.Identity,
        req: Request,
    ) -> int:
        api = self.server.api
        if name and not sub:
            raise E.method_not_allowed("create", f"{rt.plural}/{name}")
        obj = self._decode(body, rt)
        if not isinstance(obj, dict):
            raise E.bad_request("the request body must be a single object")
        if sub == "binding":
            admission.api_bind(api, namespace, name, obj, ident.name, dry_run)
            self._send_json(
                201, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
            )
            return 201
        if sub == "eviction":
            admission.check_eviction(api, api.do_get(rt, name, namespace))
            if not dry_run:
                api.do_delete(rt, name, namespace)
            self._send_json(
                201, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
            )
            return 201
        if sub == "token":
            out = auth.token_request(api, namespace, name, obj)
            self._send_json(201, out)
            return 201
        if sub:
            raise E.method_not_allowed("create", f"{rt.plural}/{sub}")
        if rt.virtual:
            out = api.do_create(
                rt, obj, namespace or None, user=ident.name, dry_run=dry_run, manager=manager, version=version
            )
            self._send_json(201, out)
            return 201
        meta = obj.get("metadata") or {}
        req.name = str(meta.get("name") or meta.get("generateName") or "")
        out = api.do_create(
            rt,
            obj,
            namespace or None,
            user=ident.name,
            dry_run=dry_run,
            manager=manager,
            version=version,
            field_validation=self._field_validation,
            owned=True,
        )
        req.name = str((out.get("metadata") or {}).get("name") or req.name)
        self._send_object(201, rt, version, out)
        return 201

    # ---- DELETE --------------------------------------------------------------------------------------------

    def _delete(
        self,
        rt: ResourceType,
        version: str,
        namespace: str,
        name: str,
        sub: str,
        query: dict[str, str],
        body: bytes,
        dry_run: bool,
    ) -> int:
        api = self.server.api
        if sub:
            raise E.method_not_allowed("delete", f"{rt.plural}/{sub}")
        opts: dict[str, Any] = {}
        if body:
            decoded = self._decode(body)
            if isinstance(decoded, dict):
                opts = decoded
        propagation = opts.get("propagationPolicy") or query.get("propagationPolicy")
        if propagation is None:
            orphan = opts.get("orphanDependents")
            if orphan is None and "orphanDependents" in query:
                orphan = _truthy(query.get("orphanDependents"))
            if orphan is True:
                propagation = "Orphan"
        if "All" in (opts.get("dryRun") or []):
            dry_run = True
        preconditions = opts.get("preconditions") if isinstance(opts.get("preconditions"), dict) else None
        if not name:
            deleted = api.delete_collection(
                rt,
                namespace or None,
                query.get("labelSelector", ""),
                query.get("fieldSelector", ""),
                propagation=propagation,
                dry_run=dry_run,
            )
            out = {
                "kind": rt.kind_list,
                "apiVersion": rt.api_version_for(version),
                "metadata": {"resourceVersion": str(api.store.revision)},
                "items": deleted,
            }
            self._send_json(200, out)
            return 200
        obj = api.do_delete(
            rt,
            name,
            namespace or None,
            propagation=propagation,
            dry_run=dry_run,
            preconditions=preconditions,
            version=version,
        )
        self._send_json(200, obj)
        return 200

    # ---- logs ----------------------------------------------------------------------------------------------

    def _log(self, namespace: str, name: str, query: dict[str, str]) -> int:
        api = self.server.api
        rt = api.resource_type("pods")
        pod = api.do_get(rt, name, namespace)
        containers = [c.get("name") for c in (pod.get("spec") or {}).get("containers") or []]
        container = query.get("container") or ""
        if not container:
            default = ((pod.get("metadata") or {}).get("annotations") or {}).get(
                "kubectl.kubernetes.io/default-container"
            )
            if default:
                container = default
            elif len(containers) == 1:
                container = str(containers[0])
            else:
                raise E.bad_request(
                    f"a container name must be specified for pod {name}, choose one of: [{' '.join(map(str, containers))}]"
                )
        inits = [c.get("name") for c in (pod.get("spec") or {}).get("initContainers") or []]
        if container not in containers and container not in inits:
            raise E.bad_request(f"container {container} is not valid for pod {name}")
        phase = (pod.get("status") or {}).get("phase", "Pending")
        if phase == "Pending":
            raise E.bad_request(
                f'container "{container}" in pod "{name}" is waiting to start: ContainerCreating'
            )
        lines = simulated_log(pod, container)
        tail = query.get("tailLines")
        if tail and tail.lstrip("-").isdigit() and int(tail) >= 0:
            lines = lines[-int(tail) :] if int(tail) else []
        text = "".join(line + "\n" for line in lines).encode()
        if not _truthy(query.get("follow")) or phase in ("Succeeded", "Failed"):
            self._send(200, text, "text/plain")
            return 200
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        self._chunk(text)
        w = api.do_watch(rt, namespace, None, field_selector=f"metadata.name={name}")
        try:
            w.next_event(0)  # the synthetic ADDED
            while not self._client_gone():
                ev = w.next_event(0.5)
                if ev is None:
                    continue
                if ev[0] == "DELETED" or (ev[1].get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                    break
        finally:
            w.close()
        self._chunk(b"")
        return 200

    # ---- watch ---------------------------------------------------------------------------------------------

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

    def _watch(
        self, rt: ResourceType, version: str, namespace: str, name: str, query: dict[str, str], accept: str
    ) -> int:
        api = self.server.api
        field_selector = query.get("fieldSelector", "")
        if name:
            field_selector = ",".join(filter(None, [field_selector, f"metadata.name={name}"]))
        send_initial = query.get("sendInitialEvents")
        initial: bool | None = None if send_initial is None else _truthy(send_initial)
        bookmarks = _truthy(query.get("allowWatchBookmarks"))
        if initial is not None:
            if query.get("resourceVersionMatch") != "NotOlderThan":
                raise E.invalid(
                    "ListOptions",
                    "",
                    [
                        E.forbidden_field(
                            "resourceVersionMatch",
                            "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                        )
                    ],
                    "meta.k8s.io",
                )
            if initial and not bookmarks:
                raise E.invalid(
                    "ListOptions",
                    "",
                    [
                        E.forbidden_field(
                            "allowWatchBookmarks",
                            "sendInitialEvents requires setting allowWatchBookmarks to true",
                        )
                    ],
                    "meta.k8s.io",
                )
        try:
            timeout = float(query.get("timeoutSeconds") or DEFAULT_WATCH_TIMEOUT)
        except ValueError as exc:
            raise E.bad_request(f"invalid timeoutSeconds {query.get('timeoutSeconds')!r}") from exc
        table = TABLE_MARK in accept.replace(" ", "")
        error: ApiError | None = None
        w: Watch | None = None
        try:
            w = api.do_watch(
                rt,
                namespace or None,
                query.get("resourceVersion"),
                query.get("labelSelector", ""),
                field_selector,
                send_initial_events=initial,
                version=version,
            )
        except ApiError as exc:
            if exc.code != 410:
                raise
            error = exc
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Cache-Control", "no-cache, private")
        self.send_header("Transfer-Encoding", "chunked")
        # The connection ends with the stream. Said in a header, or a client that read the stream to its end puts
        # the connection back in its pool and its next request meets the close (RemoteDisconnected).
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.flush()
        self.close_connection = True
        if error is not None or w is None:
            assert error is not None
            self._chunk(json.dumps({"type": "ERROR", "object": error.status()}).encode() + b"\n")
            self._chunk(b"")
            return 200
        deadline = time.monotonic() + timeout
        last_sent = time.monotonic()
        try:
            while not self.server.stopping.is_set():
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                try:
                    ev = w.next_event(min(left, 1.0))
                except ApiError as exc:
                    self._chunk(json.dumps({"type": "ERROR", "object": exc.status()}).encode() + b"\n")
                    break
                if ev is None:
                    if w.closed or self._client_gone():
                        break
                    if bookmarks and time.monotonic() - last_sent > BOOKMARK_EVERY:
                        self._chunk(json.dumps({"type": "BOOKMARK", "object": w.bookmark()}).encode() + b"\n")
                        last_sent = time.monotonic()
                    continue
                typ, obj = ev
                if typ == "BOOKMARK" and not bookmarks:
                    continue
                if table and typ != "BOOKMARK":
                    obj = self._table(
                        rt, [obj], str((obj.get("metadata") or {}).get("resourceVersion", "")), "", query
                    )
                self._chunk(json.dumps({"type": typ, "object": obj}, separators=(",", ":")).encode() + b"\n")
                last_sent = time.monotonic()
            self._chunk(b"")
        except (ConnectionError, BrokenPipeError, OSError):
            pass
        finally:
            w.close()
        return 200


def simulated_log(pod: Obj, container: str) -> list[str]:
    """The text ``kubectl logs`` shows: the pod's ``berth.dev/log`` annotation if set, else a start-up note."""
    meta = pod.get("metadata") or {}
    custom = (meta.get("annotations") or {}).get("berth.dev/log")
    if custom is not None:
        return str(custom).splitlines()
    image = ""
    for c in (pod.get("spec") or {}).get("containers") or []:
        if c.get("name") == container:
            image = str(c.get("image") or "")
    node = (pod.get("spec") or {}).get("nodeName", "")
    started = (pod.get("status") or {}).get("startTime", "")
    return [
        f"berth simulated container {container!r} (image {image}) of pod {meta.get('namespace')}/{meta.get('name')}",
        f"started {started} on node {node}; no process runs in the embedded cluster, so this is all it prints",
    ]
