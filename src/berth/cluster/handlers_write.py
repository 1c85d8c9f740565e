"""POST (create, binding, eviction, token), PUT, PATCH and DELETE (one object or a collection)."""

from __future__ import annotations

from typing import Any

from berth.cluster import auth, decoding, eviction
from berth.cluster import errors as E
from berth.cluster.http_base import PATCH_CONTENT_TYPES, HandlerBase, Request, truthy
from berth.cluster.resources import ResourceType


class WriteHandlers(HandlerBase):
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
        decoding.note_yaml_body(body, self.headers.get("Content-Type") or "")
        if not isinstance(obj, dict):
            raise E.bad_request("the request body must be a single object")
        if sub == "binding":
            api.bind(namespace, name, obj, ident.name, dry_run)
            self._send_json(
                201, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
            )
            return 201
        if sub == "eviction":
            eviction.check_eviction(api, api.do_get(rt, name, namespace))
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

    # ---- PUT and PATCH -------------------------------------------------------------------------------------

    def _put(
        self,
        rt: ResourceType,
        version: str,
        namespace: str,
        name: str,
        sub: str,
        query: dict[str, str],
        body: bytes,
        dry_run: bool,
        manager: str,
        ident: auth.Identity,
    ) -> int:
        if not name:
            raise E.method_not_allowed("update", rt.resource)
        obj = self._decode(body, rt)
        decoding.note_yaml_body(body, self.headers.get("Content-Type") or "")
        out = self.server.api.do_update(
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

    def _patch(
        self,
        rt: ResourceType,
        version: str,
        namespace: str,
        name: str,
        sub: str,
        query: dict[str, str],
        body: bytes,
        dry_run: bool,
        manager: str,
        ident: auth.Identity,
    ) -> int:
        if not name:
            raise E.method_not_allowed("patch", rt.resource)
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        ptype = PATCH_CONTENT_TYPES.get(ctype)
        if ptype is None:
            raise E.unsupported_media_type(list(PATCH_CONTENT_TYPES)[:4])
        patch = self._decode_patch(body, ptype)
        decoding.note_patch(body, ptype, patch)  # the patch's own duplicate fields, for fieldValidation
        force = truthy(query.get("force"))
        out, created = self.server.api.do_patch(
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
                orphan = truthy(query.get("orphanDependents"))
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
