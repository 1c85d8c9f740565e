"""Simulated volume binding and provisioning: PersistentVolumeClaims become Bound to a PersistentVolume.

Why: StatefulSets with ``volumeClaimTemplates`` and charts with PVCs are common, and Helm ``--wait`` (like kstatus)
treats a claim as ready only once it is ``Bound``; pods whose claims stay Pending never start on a real cluster.
There is no storage here, so this controller plays upstream's PV binder plus a provisioner:

    PVC Pending ─▶ names a PV (spec.volumeName)?  bind to it when it is free
                ─▶ a matching Available PV?        bind it (class, access modes, capacity)
                ─▶ otherwise provision ``pvc-<uid>`` (hostPath under /var/lib/berth/pv, the claim's class and
                   size, reclaim policy from the StorageClass) and bind it
    WaitForFirstConsumer classes wait until a pod using the claim is bound to a node (or the scheduler annotates
    ``volume.kubernetes.io/selected-node``); the PV then gets node affinity for that node.
    PV created without a phase ─▶ Available.   PVC deleted ─▶ its provisioned PV is deleted (reclaimPolicy Delete) or marked Released (Retain).
"""

from __future__ import annotations

import copy
from typing import Any

from berth.cluster.controllers import base, client
from berth.cluster.controllers.informer import Handler, key_of, split_key
from berth.kube import quantity
from berth.kube.objects import Obj

PVCS = "persistentvolumeclaims"
PVS = "persistentvolumes"
CLASSES = "storageclasses.storage.k8s.io"
PROVISIONER = "berth.dev/simulated"
DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"
SELECTED_NODE = "volume.kubernetes.io/selected-node"


def _request(pvc: Obj) -> str:
    return str(
        (((pvc.get("spec") or {}).get("resources") or {}).get("requests") or {}).get("storage") or "1Gi"
    )


class VolumeBinder(base.Controller):
    name = "persistentvolume-binder"

    def __init__(self, ctx: base.Context) -> None:
        super().__init__(ctx)
        self.claims = ctx.informers.informer(PVCS)
        self.volumes = ctx.informers.informer(PVS)
        self.classes = ctx.informers.informer(CLASSES)
        self.pods = ctx.informers.informer("pods")
        self.claims.add_handler(
            Handler(
                on_add=self._enqueue,
                on_update=lambda _o, n: self._enqueue(n),
                on_delete=self._on_claim_deleted,
            )
        )
        self.pods.add_handler(Handler(on_add=self._on_pod, on_update=lambda _o, n: self._on_pod(n)))
        self.volumes.add_handler(Handler(on_add=self._on_volume))

    def _on_volume(self, pv: Obj) -> None:
        if not (pv.get("status") or {}).get("phase"):
            self.queue.add(f"pv:{key_of(pv)}")

    def _enqueue(self, pvc: Obj) -> None:
        self.queue.add("pvc:" + key_of(pvc))

    def _on_claim_deleted(self, pvc: Obj) -> None:
        name = (pvc.get("spec") or {}).get("volumeName")
        if name:
            self.queue.add(f"pv:{name}")

    def _on_pod(self, pod: Obj) -> None:
        if not (pod.get("spec") or {}).get("nodeName"):
            return
        ns = base.meta(pod).get("namespace", "")
        for v in (pod.get("spec") or {}).get("volumes") or []:
            claim = (v.get("persistentVolumeClaim") or {}).get("claimName")
            if claim:
                self.queue.add(f"pvc:{ns}/{claim}")

    # ---- reconcile -----------------------------------------------------------------------------------------

    def reconcile(self, key: str) -> None:
        what, _, rest = key.partition(":")
        if what == "pv":
            self._reclaim(rest)
            return
        pvc = self.claims.get(rest)
        if pvc is None or base.deleting(pvc) or (pvc.get("status") or {}).get("phase") == "Bound":
            return
        spec = pvc.get("spec") or {}
        if spec.get("volumeName"):
            pv = self.volumes.get(str(spec["volumeName"])) or self._get_pv(str(spec["volumeName"]))
            if pv is not None and self._free_for(pv, pvc):
                self._bind(pvc, pv)
            return
        sc = self._class_of(pvc)
        node: str | None = None
        if sc is not None and sc.get("volumeBindingMode") == "WaitForFirstConsumer":
            # Upstream shouldDelayBinding: no static match either until a consumer has a node -- the scheduler
            # chooses the PV (its claimRef) or the node (selected-node annotation) first.
            node = self._consumer_node(pvc)
            if node is None:
                return
        pv = self._find_static(pvc)
        if pv is not None:
            self._bind(pvc, pv)
            return
        self._bind(pvc, self._provision(pvc, sc, node))

    def _get_pv(self, name: str) -> Obj | None:
        try:
            return self.api.get(PVS, name)
        except client.ApiError as exc:
            if client.is_not_found(exc):
                return None
            raise

    @staticmethod
    def _free_for(pv: Obj, pvc: Obj) -> bool:
        ref = (pv.get("spec") or {}).get("claimRef")
        if not ref:
            return True
        m = base.meta(pvc)
        return bool(ref.get("name") == m.get("name") and ref.get("namespace") == m.get("namespace"))

    def _class_of(self, pvc: Obj) -> Obj | None:
        name = (pvc.get("spec") or {}).get("storageClassName")
        if name:
            return self.classes.get(str(name))
        if name == "":
            return None
        for sc in self.classes.list():
            if (base.meta(sc).get("annotations") or {}).get(DEFAULT_CLASS) == "true":
                return sc
        return None

    def _find_static(self, pvc: Obj) -> Obj | None:
        spec = pvc.get("spec") or {}
        want = quantity.value(_request(pvc))
        modes = set(spec.get("accessModes") or [])
        klass = spec.get("storageClassName") or ""
        best: tuple[int, Obj] | None = None
        m = base.meta(pvc)
        for pv in self.volumes.list():
            pspec = pv.get("spec") or {}
            ref = pspec.get("claimRef") or {}
            if (
                ref.get("name") == m.get("name")
                and ref.get("namespace") == m.get("namespace")
                and ref.get("uid") in (None, "", m.get("uid"))
                and (pv.get("status") or {}).get("phase") in (None, "Available")
            ):
                return pv  # pre-bound to this claim (by the scheduler's VolumeBinding): upstream prefers it
            if (pv.get("status") or {}).get("phase") not in (None, "Available") or pspec.get("claimRef"):
                continue
            if (pspec.get("storageClassName") or "") != klass or not modes <= set(
                pspec.get("accessModes") or []
            ):
                continue
            size = quantity.value(str((pspec.get("capacity") or {}).get("storage") or "0"))
            if size >= want and (best is None or size < best[0]):
                best = (size, pv)
        return best[1] if best else None

    def _consumer_node(self, pvc: Obj) -> str | None:
        annotated = (base.meta(pvc).get("annotations") or {}).get(SELECTED_NODE)
        if annotated:
            return str(annotated)
        ns, name = base.meta(pvc).get("namespace"), base.meta(pvc).get("name")
        for pod in self.pods.list(str(ns)):
            node = (pod.get("spec") or {}).get("nodeName")
            if node and any(
                (v.get("persistentVolumeClaim") or {}).get("claimName") == name
                for v in (pod.get("spec") or {}).get("volumes") or []
            ):
                return str(node)
        return None

    def _provision(self, pvc: Obj, sc: Obj | None, node: str | None) -> Obj:
        m = base.meta(pvc)
        spec = pvc.get("spec") or {}
        name = f"pvc-{m.get('uid', '')}"
        existing = self.volumes.get(name) or self._get_pv(name)
        if existing is not None:
            return existing
        pv_spec: dict[str, Any] = {
            "capacity": {"storage": _request(pvc)},
            "accessModes": list(spec.get("accessModes") or ["ReadWriteOnce"]),
            "persistentVolumeReclaimPolicy": (sc or {}).get("reclaimPolicy") or "Delete",
            "volumeMode": spec.get("volumeMode") or "Filesystem",
            "hostPath": {"path": f"/var/lib/berth/pv/{name}", "type": "DirectoryOrCreate"},
        }
        if spec.get("storageClassName") or sc is not None:
            pv_spec["storageClassName"] = spec.get("storageClassName") or base.meta(sc or {}).get("name")
        if node:
            pv_spec["nodeAffinity"] = {
                "required": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}
                            ]
                        }
                    ]
                }
            }
        pv = {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": name, "annotations": {"pv.kubernetes.io/provisioned-by": PROVISIONER}},
            "spec": pv_spec,
        }
        try:
            created = self.api.create(PVS, pv, user=self.user)
        except client.ApiError as exc:
            if not client.is_already_exists(exc):
                raise
            created = self.api.get(PVS, name)
        self.ctx.recorder.event(
            pvc, "Normal", "ProvisioningSucceeded", f"Successfully provisioned volume {name}", PROVISIONER
        )
        return created

    def _bind(self, pvc: Obj, pv: Obj) -> None:
        m = base.meta(pvc)
        pv_name = str(base.meta(pv).get("name", ""))
        new_pv = copy.deepcopy(pv)
        new_pv.setdefault("spec", {})["claimRef"] = {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "namespace": m.get("namespace"),
            "name": m.get("name"),
            "uid": m.get("uid"),
        }
        if new_pv != pv:
            new_pv = self.api.update(PVS, new_pv, user=self.user)
        base.write_status(self, PVS, new_pv, {"phase": "Bound"})
        new_pvc = copy.deepcopy(pvc)
        new_pvc.setdefault("spec", {})["volumeName"] = pv_name
        ann = new_pvc["metadata"].setdefault("annotations", {})
        ann["pv.kubernetes.io/bind-completed"] = "yes"
        ann["pv.kubernetes.io/bound-by-controller"] = "yes"
        ns, _ = split_key(key_of(pvc))
        new_pvc = self.api.update(PVCS, new_pvc, ns, user=self.user)
        pspec = pv.get("spec") or {}
        base.write_status(
            self,
            PVCS,
            new_pvc,
            {
                "phase": "Bound",
                "accessModes": list(pspec.get("accessModes") or []),
                "capacity": dict(pspec.get("capacity") or {}),
            },
        )

    def _reclaim(self, pv_name: str) -> None:
        pv = self.volumes.get(pv_name)
        if pv is None:
            return
        ref = (pv.get("spec") or {}).get("claimRef") or {}
        if not ref:
            if not (pv.get("status") or {}).get("phase"):
                base.write_status(self, PVS, pv, {"phase": "Available"})
            return
        if self.claims.get(f"{ref.get('namespace')}/{ref.get('name')}") is not None:
            return
        policy = (pv.get("spec") or {}).get("persistentVolumeReclaimPolicy") or "Retain"
        provisioned = (base.meta(pv).get("annotations") or {}).get(
            "pv.kubernetes.io/provisioned-by"
        ) == PROVISIONER
        if policy == "Delete" and provisioned:
            try:
                self.api.delete(PVS, pv_name, user=self.user)
            except client.ApiError as exc:
                if not client.is_not_found(exc):
                    raise
        elif (pv.get("status") or {}).get("phase") != "Released":
            base.write_status(self, PVS, pv, {"phase": "Released"})
