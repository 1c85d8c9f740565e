"""GET of one object or a list (JSON, or a Table for ``kubectl get``), and pod logs."""

from __future__ import annotations

from typing import Any

from berth.cluster import auth
from berth.cluster import errors as E
from berth.cluster.http_base import PARTIAL_MARK, TABLE_MARK, HandlerBase, partial_object, truthy
from berth.cluster.resources import ResourceType
from berth.kube.objects import Obj


class ReadHandlers(HandlerBase):
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
        compact_accept = accept.replace(" ", "")
        table = TABLE_MARK in compact_accept
        partial = not table and PARTIAL_MARK in compact_accept
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
            if not table and not partial and not sub:
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
                        version=version,
                    ),
                )
            elif partial:
                self._send_json(200, partial_object(obj))
            else:
                self._send_json(200, obj)
            return 200
        try:
            limit = int(query.get("limit") or 0)
        except ValueError as exc:
            raise E.bad_request(f"invalid limit {query.get('limit')!r}") from exc
        res = api.do_list(
            rt,
            namespace or None,
            query.get("labelSelector", ""),
            query.get("fieldSelector", ""),
            limit=limit,
            continue_token=query.get("continue", ""),
            version=version,
            resource_version=query.get("resourceVersion", ""),
            resource_version_match=query.get("resourceVersionMatch", ""),
        )
        if table:
            self._send_json(
                200,
                self._table(
                    rt, res.items, res.resource_version, res.continue_token, query, res.remaining, version
                ),
            )
            return 200
        meta: dict[str, Any] = {"resourceVersion": res.resource_version}
        if res.continue_token:
            meta["continue"] = res.continue_token
            if res.remaining is not None:
                meta["remainingItemCount"] = res.remaining
        if partial:
            out = {
                "kind": "PartialObjectMetadataList",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": meta,
                "items": [partial_object(o) for o in res.items],
            }
        else:
            out = {
                "kind": rt.kind_list,
                "apiVersion": rt.api_version_for(version),
                "metadata": meta,
                "items": res.items,
            }
        self._send_json(200, out)
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
        spec = pod.get("spec") or {}
        others = [
            c.get("name") for key in ("initContainers", "ephemeralContainers") for c in spec.get(key) or []
        ]
        if container not in containers and container not in others:
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
        if not truthy(query.get("follow")) or phase in ("Succeeded", "Failed"):
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


def simulated_log(pod: Obj, container: str) -> list[str]:
    """The text ``kubectl logs`` shows: the pod's ``berth.dev/log`` annotation if set, else a start-up note."""
    meta = pod.get("metadata") or {}
    custom = (meta.get("annotations") or {}).get("berth.dev/log")
    if custom is not None:
        return str(custom).splitlines()
    image = ""
    spec = pod.get("spec") or {}
    for key in ("containers", "initContainers", "ephemeralContainers"):
        for c in spec.get(key) or []:
            if c.get("name") == container:
                image = str(c.get("image") or "")
    node = (pod.get("spec") or {}).get("nodeName", "")
    started = (pod.get("status") or {}).get("startTime", "")
    return [
        f"berth simulated container {container!r} (image {image}) of pod {meta.get('namespace')}/{meta.get('name')}",
        f"started {started} on node {node}; no process runs in the embedded cluster, so this is all it prints",
    ]
