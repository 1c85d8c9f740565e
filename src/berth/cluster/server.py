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

import ssl
import time
import traceback
from typing import Any, cast
from urllib.parse import parse_qs, urlsplit

from berth.cluster import auth, crds, decoding, discovery, metrics, request_warnings
from berth.cluster import errors as E
from berth.cluster.api import Api, ApiError
from berth.cluster.audit import AuditLog
from berth.cluster.handlers_read import ReadHandlers, simulated_log
from berth.cluster.handlers_watch import BOOKMARK_EVERY, DEFAULT_WATCH_TIMEOUT, WatchHandlers
from berth.cluster.handlers_write import WriteHandlers
from berth.cluster.http_base import MAX_BODY, Headers, Request, ServerBase, truthy
from berth.cluster.resources import NO_CONTAINER_SUBRESOURCES

__all__ = [
    "BOOKMARK_EVERY",
    "DEFAULT_WATCH_TIMEOUT",
    "HEALTH_PATHS",
    "MAX_BODY",
    "ApiServer",
    "Handler",
    "Headers",
    "Request",
    "simulated_log",
]

HEALTH_PATHS = ("/healthz", "/readyz", "/livez")
_HEALTH_PREFIXES = tuple(p + "/" for p in HEALTH_PATHS)

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


class ApiServer(ServerBase):
    """The cluster's HTTPS server, serving :class:`Handler`."""

    def __init__(
        self,
        api: Api,
        port: int = 0,
        audit: AuditLog | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        super().__init__(api, port, audit, ssl_context, Handler)


class Handler(ReadHandlers, WriteHandlers, WatchHandlers):
    """One connection's requests: health, authentication, routing to the read, write and watch handlers."""

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
        started = time.monotonic()
        request_warnings.begin()
        decoding.forget_body()
        meters = self.server.metrics
        if truthy(query.get("watch")) or "/watch/" in path:
            gauge = meters.longrunning
        else:
            gauge = meters.read_only if method in ("GET", "HEAD") else meters.mutating
        gauge.inc()
        try:
            body = self._read_body() if method in ("POST", "PUT", "PATCH", "DELETE") else b""
            if path in HEALTH_PATHS or path.startswith(_HEALTH_PREFIXES):
                code, text = self._health(path, query)
                self._send(code, text.encode(), "text/plain; charset=utf-8")
                return
            ident = auth.authenticate(api, self.headers.get("Authorization"))
            req.user = ident.name
            as_user = self.headers.get("Impersonate-User")
            as_groups = self.headers.get_all("Impersonate-Group") or []
            if as_user:
                ident = auth.impersonate(api, ident, as_user, as_groups)
                req.user = ident.name
            else:
                names = cast(Headers, self.headers).names()
                asked = [h for h in names if h.startswith(("impersonate-uid", "impersonate-extra-"))]
                if as_groups or asked:
                    # upstream's impersonation filter answers this with an internal error, before authorization
                    what = ", ".join([*(f"group {g}" for g in as_groups), *asked])
                    raise E.internal(f"requested [{what}] without impersonating a user")
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
            gauge.dec()
            res = req.resource
            if req.rtype is not None:
                res = req.rtype.resource
            if req.verb or req.resource:
                meters.observe(
                    req.verb,
                    method,
                    req.group,
                    req.version,
                    req.resource,
                    req.subresource,
                    "resource" if req.named else "namespace" if req.namespace else "cluster",
                    query.get("dryRun") == "All",
                    method == "PATCH" and "apply-patch" in (self.headers.get("Content-Type") or ""),
                    code,
                    time.monotonic() - started,
                )
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
        if seg == ["metrics"]:
            self._nonresource(ident, path, req)
            self._send(200, self.server.metrics.render(), metrics.CONTENT_TYPE)
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
        req.name, req.subresource, req.named = name, sub, bool(name)
        if sub and sub not in rt.subresources_at(version):
            raise E.path_not_found()
        if rt.custom:
            deprecated = crds.deprecation_warning(crds.crd_of(api, rt) or {}, version)
            if deprecated:
                request_warnings.warn(deprecated)
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
            return self._put(rt, version, namespace, name, sub, query, body, dry_run, manager, ident)
        if method == "PATCH":
            return self._patch(rt, version, namespace, name, sub, query, body, dry_run, manager, ident)
        if method == "DELETE":
            return self._delete(rt, version, namespace, name, sub, query, body, dry_run)
        raise E.method_not_allowed(method.lower(), rt.resource)

    def _verb(self, method: str, name: str, sub: str, query: dict[str, str]) -> str:
        if sub in ("attach", "exec", "portforward"):
            return (
                "create"  # a websocket upgrade is a GET, authorized as create (as kube-apiserver 1.35 does)
            )
        if method in ("GET", "HEAD"):
            if truthy(query.get("watch")):
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
