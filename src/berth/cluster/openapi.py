"""OpenAPI v3 documents: enough for ``kubectl apply`` to validate server-side and for ``kubectl explain``.

kubectl (cli-runtime ``query_param_verifier_v3``) fetches ``/openapi/v3``, follows the ``serverRelativeURL`` of the
group-version it is about to write, and checks that the kind's PATCH operation lists the ``fieldValidation``
query parameter; if it does, kubectl sends ``fieldValidation=Strict`` and skips client-side validation. Without that
(a kind the documents lack) it falls back to ``/openapi/v2`` as protobuf, which the server answers with a valid
document without definitions (server.py): an unknown kind is then not validated there and fails at the REST mapping
with kube-apiserver's message; client-side apply uses compiled-in patch metadata for what v3 does not cover. Schemas come from the Kubernetes v1.35 definitions table (``schema.py``) for
built-ins and from each CRD version's ``openAPIV3Schema``; documents are cached per registry generation.
"""

from __future__ import annotations

import copy
import hashlib
import importlib
import json
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from berth.cluster.resources import ResourceType

if TYPE_CHECKING:
    from berth.cluster.api import Api

_PATCH_PARAMS = [
    {"name": "dryRun", "in": "query", "schema": {"type": "string", "uniqueItems": True}},
    {"name": "fieldManager", "in": "query", "schema": {"type": "string", "uniqueItems": True}},
    {"name": "fieldValidation", "in": "query", "schema": {"type": "string", "uniqueItems": True}},
    {"name": "force", "in": "query", "schema": {"type": "boolean", "uniqueItems": True}},
]
_WRITE_PARAMS = _PATCH_PARAMS[:3]
_PATCH_TYPES = (
    "application/apply-patch+yaml",
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
)


def _gv_path(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def _builtin_defs() -> dict[str, Any]:
    """The built-in definitions with their descriptions put back (what ``kubectl explain`` prints)."""
    try:
        mod = importlib.import_module("berth.cluster.schema")
    except ImportError:
        return {}
    texts = mod.descriptions()
    return {name: _described(sch, texts.get(name) or {}) for name, sch in mod.builtin().defs.items()}


def _described(schema: dict[str, Any], texts: Mapping[str, str]) -> dict[str, Any]:
    """``schema`` with its own and its properties' descriptions. A property that is a bare ``$ref`` becomes
    ``allOf: [$ref]`` beside its description, as kube-apiserver publishes it (siblings of ``$ref`` are ignored in
    OpenAPI 3.0)."""
    if not texts:
        return schema
    out = dict(schema)
    if "" in texts:
        out["description"] = texts[""]
    props = schema.get("properties")
    if isinstance(props, dict):
        described: dict[str, Any] = {}
        for prop, sub in props.items():
            text = texts.get(prop)
            if prop in ("apiVersion", "kind") and isinstance(sub, dict) and "enum" in sub:
                # the validation table pins them per kind; kube-apiserver's documents do not (nor explain's output)
                sub = {k: v for k, v in sub.items() if k != "enum"}
            if text is None or not isinstance(sub, dict):
                described[prop] = sub
            elif "$ref" in sub:
                rest = {k: v for k, v in sub.items() if k != "$ref"}
                described[prop] = {**rest, "description": text, "allOf": [{"$ref": sub["$ref"]}]}
            else:
                described[prop] = {**sub, "description": text}
        out["properties"] = described
    return out


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{name}"}


def _rewrite_refs(value: Any, in_properties: bool = False) -> Any:
    """Definitions table -> OpenAPI 3.0: refs point into components, JSON-schema ``type: [t, "null"]`` becomes
    ``type: t`` (kubectl explain's templates compare ``type`` with a string)."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if in_properties:
                out[k] = _rewrite_refs(v)
            elif k == "$ref" and isinstance(v, str) and not v.startswith("#/"):
                out[k] = f"#/components/schemas/{v}"
            elif k == "type" and isinstance(v, list):
                kinds = [t for t in v if t != "null"]
                if kinds:
                    out[k] = kinds[0]
            elif k in ("enum", "default", "required", "example") or k.startswith("x-kubernetes"):
                out[k] = v
            else:
                out[k] = _rewrite_refs(v, in_properties=k == "properties")
        return out
    if isinstance(value, list):
        return [_rewrite_refs(v) for v in value]
    return value


def _collect(defs: dict[str, Any], root: str, out: dict[str, Any]) -> None:
    stack = [root]
    while stack:
        name = stack.pop()
        if name in out or name not in defs:
            continue
        out[name] = _rewrite_refs(defs[name])
        text = json.dumps(defs[name])
        idx = 0
        while True:
            idx = text.find('"$ref": "', idx)
            if idx < 0:
                break
            end = text.find('"', idx + 9)
            stack.append(text[idx + 9 : end])
            idx = end


class OpenApi:
    """Builds and caches the v3 root and per-group-version documents for one :class:`Api`."""

    def __init__(self, api: Api) -> None:
        self._api = api
        self._lock = threading.Lock()
        self._cache: dict[tuple[int, str], tuple[bytes, str]] = {}
        self._defs: dict[str, Any] | None = None
        self._index: dict[tuple[str, str, str], str] = {}

    def _definitions(self) -> dict[str, Any]:
        if self._defs is None:
            self._defs = _builtin_defs()
            for name, sch in self._defs.items():
                for gvk in sch.get("x-kubernetes-group-version-kind") or []:
                    self._index[(gvk.get("group", ""), gvk.get("version", ""), gvk.get("kind", ""))] = name
        return self._defs

    def root(self) -> dict[str, Any]:
        paths: dict[str, Any] = {}
        for group, versions in self._api.registry.group_versions():
            for v in versions:
                _body, digest = self.document(group, v) or (b"", "")
                paths[_gv_path(group, v)] = {
                    "serverRelativeURL": f"/openapi/v3/{_gv_path(group, v)}?hash={digest}"
                }
        return {"paths": paths}

    def document(self, group: str, version: str) -> tuple[bytes, str] | None:
        """The serialized document for a group-version and its hash (None if not served)."""
        key = (self._api.registry.generation, _gv_path(group, version))
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                return hit
        types = [t for t in self._api.registry.all() if t.group == group and version in t.all_versions]
        if not types:
            return None
        doc = self._build(group, version, types)
        body = json.dumps(doc, separators=(",", ":")).encode()
        digest = hashlib.sha512(body).hexdigest()[:128].upper()
        with self._lock:
            self._cache[key] = (body, digest)
        return body, digest

    def _kind_schema(self, t: ResourceType, version: str, schemas: dict[str, Any]) -> str:
        gvk = {"group": t.group, "version": version, "kind": t.kind}
        if t.custom:
            from berth.cluster import crds

            crd = crds.crd_of(self._api, t) or {}
            raw = copy.deepcopy(
                ((crds.version_of(crd, version).get("schema") or {}).get("openAPIV3Schema")) or {}
            )
            raw.setdefault("type", "object")
            props = raw.setdefault("properties", {})
            props.setdefault("apiVersion", {"type": "string"})
            props.setdefault("kind", {"type": "string"})
            props["metadata"] = _ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
            raw["x-kubernetes-group-version-kind"] = [gvk]
            rev = ".".join(reversed(t.group.split(".")))
            name = f"{rev}.{version}.{t.kind}"
            schemas[name] = raw
            defs = self._definitions()
            _collect(defs, "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", schemas)
            return name
        defs = self._definitions()
        known = self._index.get((t.group, version, t.kind))
        if known is None:
            name = f"berth.{t.group or 'core'}.{version}.{t.kind}"
            schemas[name] = {
                "type": "object",
                "x-kubernetes-preserve-unknown-fields": True,
                "x-kubernetes-group-version-kind": [gvk],
            }
            return name
        _collect(defs, known, schemas)
        return known

    def _build(self, group: str, version: str, types: list[ResourceType]) -> dict[str, Any]:
        schemas: dict[str, Any] = {}
        paths: dict[str, Any] = {}
        prefix = "/" + _gv_path(group, version)
        for t in sorted(types, key=lambda x: x.plural):
            sname = self._kind_schema(t, version, schemas)
            gvk = {"group": t.group, "version": version, "kind": t.kind}
            body = {"content": {"application/json": {"schema": _ref(sname)}}}
            ok = {"200": {"description": "OK", "content": {"application/json": {"schema": _ref(sname)}}}}
            base = f"{prefix}/namespaces/{{namespace}}/{t.plural}" if t.namespaced else f"{prefix}/{t.plural}"
            op_base = f"{t.kind}{'Namespaced' if t.namespaced else ''}"
            coll: dict[str, Any] = {}
            if "create" in t.verbs:
                coll["post"] = {
                    "operationId": f"create{op_base}",
                    "parameters": list(_WRITE_PARAMS),
                    "requestBody": body,
                    "responses": {"201": ok["200"], **ok},
                    "x-kubernetes-action": "post",
                    "x-kubernetes-group-version-kind": gvk,
                }
            if "list" in t.verbs:
                coll["get"] = {
                    "operationId": f"list{op_base}",
                    "responses": {"200": {"description": "OK"}},
                    "x-kubernetes-action": "list",
                    "x-kubernetes-group-version-kind": gvk,
                }
            if coll:
                paths[base] = coll
            if t.virtual:
                continue
            item: dict[str, Any] = {
                "get": {
                    "operationId": f"read{op_base}",
                    "responses": ok,
                    "x-kubernetes-action": "get",
                    "x-kubernetes-group-version-kind": gvk,
                },
                "put": {
                    "operationId": f"replace{op_base}",
                    "parameters": list(_WRITE_PARAMS),
                    "requestBody": body,
                    "responses": ok,
                    "x-kubernetes-action": "put",
                    "x-kubernetes-group-version-kind": gvk,
                },
                "patch": {
                    "operationId": f"patch{op_base}",
                    "parameters": list(_PATCH_PARAMS),
                    "requestBody": {
                        "content": {ct: {"schema": {"type": "object"}} for ct in _PATCH_TYPES},
                        "required": True,
                    },
                    "responses": ok,
                    "x-kubernetes-action": "patch",
                    "x-kubernetes-group-version-kind": gvk,
                },
                "delete": {
                    "operationId": f"delete{op_base}",
                    "responses": {"200": {"description": "OK"}},
                    "x-kubernetes-action": "delete",
                    "x-kubernetes-group-version-kind": gvk,
                },
                "parameters": [
                    {"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}
                ],
            }
            paths[f"{base}/{{name}}"] = item
            for sub in t.subresources:
                if sub in ("status", "scale"):
                    paths[f"{base}/{{name}}/{sub}"] = {
                        "patch": {
                            "operationId": f"patch{op_base}{sub.capitalize()}",
                            "parameters": list(_PATCH_PARAMS),
                            "responses": {"200": {"description": "OK"}},
                            "x-kubernetes-action": "patch",
                            "x-kubernetes-group-version-kind": gvk
                            if sub == "status"
                            else {"group": "autoscaling", "version": "v1", "kind": "Scale"},
                        }
                    }
        return {
            "openapi": "3.0.0",
            "info": {"title": "Kubernetes", "version": "v1.35.0"},
            "paths": paths,
            "components": {
                "schemas": schemas,
                "securitySchemes": {
                    "BearerToken": {"type": "apiKey", "name": "authorization", "in": "header"}
                },
            },
        }
