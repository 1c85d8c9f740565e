"""Endpoints and EndpointSlices for Services with a selector: which pod IPs back the Service, ready or not.

Why: ``kubectl get endpoints|endpointslices``, ``kubectl describe svc`` and tools that wait for a Service to have
backends read these objects; upstream's endpoint and EndpointSlice controllers write them from the pods the
Service selects. No traffic flows in the simulation, but the bookkeeping matches.

Per Service (key ``ns/name``): pods in the namespace matching ``spec.selector`` that have a pod IP and are not
finished or terminating become addresses (``ready`` from the pod's Ready condition); ports resolve
``targetPort`` (a number, or a container port name looked up in the first backing pod). One Endpoints object
(named like the Service) and one EndpointSlice (``<service>-<5 chars>``, owned by the Service, labelled
``kubernetes.io/service-name``) are kept current. Services without a selector, and ExternalName Services, are
left to their owners.
"""

from __future__ import annotations

import copy
from typing import Any

from berth.cluster.controllers import base, client
from berth.cluster.controllers.informer import Handler, key_of, split_key
from berth.kube import naming
from berth.kube.objects import Obj

SLICES = "endpointslices.discovery.k8s.io"
MANAGED_BY = "endpointslice-controller.k8s.io"
SERVICE_NAME_LABEL = "kubernetes.io/service-name"
NAMESPACE_INDEX = "namespace"


def _namespace_of(obj: Obj) -> list[str]:
    return [str(base.meta(obj).get("namespace") or "")]


def _selects(svc: Obj, labels: dict[str, str]) -> bool:
    sel = (svc.get("spec") or {}).get("selector") or {}
    return bool(sel) and all(labels.get(k) == v for k, v in sel.items())


def _resolve_port(port: dict[str, Any], pod: Obj | None) -> int | None:
    target = port.get("targetPort", port.get("port"))
    if isinstance(target, int):
        return target
    if isinstance(target, str) and target.isdigit():
        return int(target)
    for c in ((pod or {}).get("spec") or {}).get("containers") or []:
        for p in c.get("ports") or []:
            if p.get("name") == target:
                return int(p.get("containerPort") or 0) or None
    return None


class EndpointsController(base.Controller):
    name = "endpointslice-controller"

    def __init__(self, ctx: base.Context) -> None:
        super().__init__(ctx)
        self.services = ctx.informers.informer("services")
        self.pods = ctx.informers.informer("pods")
        self.pods.add_index(NAMESPACE_INDEX, _namespace_of)
        self.services.add_handler(
            Handler(on_add=self._enqueue, on_update=lambda _o, n: self._enqueue(n), on_delete=self._enqueue)
        )
        self.pods.add_handler(
            Handler(on_add=self._on_pod, on_update=self._on_pod_update, on_delete=self._on_pod)
        )

    def _enqueue(self, obj: Obj) -> None:
        self.queue.add(key_of(obj))

    def _on_pod(self, pod: Obj) -> None:
        labels = base.meta(pod).get("labels") or {}
        for svc in self.services.list(str(base.meta(pod).get("namespace") or "")):
            if _selects(svc, labels):
                self.queue.add(key_of(svc))

    def _on_pod_update(self, old: Obj, new: Obj) -> None:
        self._on_pod(new)
        if base.meta(old).get("labels") != base.meta(new).get("labels"):
            self._on_pod(old)

    def reconcile(self, key: str) -> None:
        ns, name = split_key(key)
        svc = self.services.get(key)
        if svc is None or base.deleting(svc):
            self._delete("endpoints", name, ns)
            return
        spec = svc.get("spec") or {}
        if not spec.get("selector") or spec.get("type") == "ExternalName":
            return
        backing = sorted(
            (
                p
                for p in self.pods.by_index(NAMESPACE_INDEX, ns)
                if _selects(svc, base.meta(p).get("labels") or {})
                and (p.get("status") or {}).get("podIP")
                and not base.pod_finished(p)
                and not base.deleting(p)
            ),
            key=lambda p: str(base.meta(p).get("name", "")),
        )
        first = backing[0] if backing else None
        ports = []
        for p in spec.get("ports") or []:
            number = _resolve_port(p, first)
            if number is None:
                continue
            entry: dict[str, Any] = {"port": number, "protocol": p.get("protocol") or "TCP"}
            if p.get("name"):
                entry["name"] = p["name"]
            if p.get("appProtocol"):
                entry["appProtocol"] = p["appProtocol"]
            ports.append(entry)
        self._sync_endpoints(svc, ns, name, backing, ports)
        self._sync_slice(svc, ns, name, backing, ports)

    @staticmethod
    def _target(pod: Obj) -> dict[str, Any]:
        m = base.meta(pod)
        return {"kind": "Pod", "namespace": m.get("namespace"), "name": m.get("name"), "uid": m.get("uid")}

    def _sync_endpoints(
        self, svc: Obj, ns: str, name: str, pods: list[Obj], ports: list[dict[str, Any]]
    ) -> None:
        ready: list[dict[str, Any]] = []
        not_ready: list[dict[str, Any]] = []
        for p in pods:
            addr = {
                "ip": p["status"]["podIP"],
                "nodeName": (p.get("spec") or {}).get("nodeName"),
                "targetRef": self._target(p),
            }
            (ready if base.pod_ready(p) else not_ready).append(addr)
        subset: dict[str, Any] = {}
        if ready:
            subset["addresses"] = ready
        if not_ready:
            subset["notReadyAddresses"] = not_ready
        if subset and ports:
            subset["ports"] = ports
        desired: Obj = {
            "apiVersion": "v1",
            "kind": "Endpoints",
            "metadata": {"name": name, "namespace": ns, "labels": dict(base.meta(svc).get("labels") or {})},
            "subsets": [subset] if subset and ports else [],
        }
        self._upsert("endpoints", ns, name, desired, ("subsets",))

    def _sync_slice(self, svc: Obj, ns: str, name: str, pods: list[Obj], ports: list[dict[str, Any]]) -> None:
        slice_name = f"{name}-"[:58] + naming.short_hash(base.uid(svc))[:5]
        endpoints = []
        for p in pods:
            ready = base.pod_ready(p)
            ep: dict[str, Any] = {
                "addresses": [p["status"]["podIP"]],
                "conditions": {"ready": ready, "serving": ready, "terminating": False},
                "targetRef": self._target(p),
            }
            if (p.get("spec") or {}).get("nodeName"):
                ep["nodeName"] = p["spec"]["nodeName"]
            endpoints.append(ep)
        labels = dict(base.meta(svc).get("labels") or {})
        labels.update({SERVICE_NAME_LABEL: name, "endpointslice.kubernetes.io/managed-by": MANAGED_BY})
        desired: Obj = {
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": {
                "name": slice_name,
                "namespace": ns,
                "labels": labels,
                "ownerReferences": [base.owner_reference(svc, "v1", "Service")],
            },
            "addressType": "IPv4",
            "endpoints": endpoints,
            "ports": ports,
        }
        self._upsert(SLICES, ns, slice_name, desired, ("endpoints", "ports", "addressType"))

    def _upsert(self, resource: str, ns: str, name: str, desired: Obj, fields: tuple[str, ...]) -> None:
        try:
            current = self.api.get(resource, name, ns)
        except client.ApiError as exc:
            if not client.is_not_found(exc):
                raise
            self.api.create(resource, desired, ns, user=self.user)
            return
        same = all(current.get(f) == desired.get(f) for f in fields) and (
            base.meta(current).get("labels") == desired["metadata"]["labels"]
        )
        if same:
            return
        new = copy.deepcopy(current)
        for f in fields:
            new[f] = desired.get(f)
        new["metadata"]["labels"] = desired["metadata"]["labels"]
        self.api.update(resource, new, ns, user=self.user)

    def _delete(self, resource: str, name: str, ns: str) -> None:
        try:
            self.api.delete(resource, name, ns, user=self.user)
        except client.ApiError as exc:
            if not client.is_not_found(exc):
                raise
