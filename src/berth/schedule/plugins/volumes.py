"""Storage objects for the volume plugins: where they come from, and the facts several plugins share.

Why it exists: VolumeBinding, VolumeRestrictions, VolumeZone and NodeVolumeLimits all read PersistentVolumeClaims,
PersistentVolumes, StorageClasses and CSI objects, and upstream spells the same rules (a claim's class, "not found"
errors, zone labels, node affinity of a PV) in shared helpers. Keeping them here gives each rule one home.

Where objects come from: ``handle.objects``, an :class:`~berth.schedule.framework.listers.ObjectLister` fed from
the cluster and workload files in simulation and from informers live. A claim it does not hold gets upstream's
``persistentvolumeclaim "<name>" not found`` -- never an exception.

The assume cache (upstream ``PVAssumeCache``/``PVCAssumeCache``). VolumeBinding's Reserve records the PV it picked
(``spec.claimRef`` set) or the claim it provisions for (annotation ``volume.kubernetes.io/selected-node``) here;
PreBind then records the finished binding (the PV and claim ``Bound``; a provisioned claim gets a synthesised PV
``pvc-<claim uid>``). Every plugin reads PVs and claims *through* this overlay, so two pods can never take the same
PV. One cache is shared by every plugin reading the same lister (all profiles of one scheduler), state machine::

    informer object --Reserve--> assumed --PreBind--> bound (simulation) --newer informer object--> informer wins
                                    \\--Unreserve--> informer object

An informer object whose ``metadata.resourceVersion`` differs from the one an assumption was made on replaces
the assumption (upstream keeps the newer of the two the same way). A Unreserve after PreBind leaves the completed
binding alone (API writes cannot be taken back either).

Simulation concessions (each matches what the missing controller would have done): a claim with
``status.phase: Bound`` counts as bound without the PV controller's bind-completed annotation; a PV without a
status counts as Available; a claim with no ``storageClassName`` at all gets the default StorageClass; a
StorageClass without ``volumeBindingMode`` is Immediate (the API default). :func:`statefulset_claims` and
:func:`ephemeral_claims` build the claims the StatefulSet and ephemeral-volume controllers would create.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from berth.kube import quantity, selectors
from berth.schedule.framework.interface import Code, Handle, Status
from berth.schedule.framework.listers import ObjectLister
from berth.schedule.framework.types import PodInfo

Obj = Mapping[str, Any]

PVC = "PersistentVolumeClaim"
PV = "PersistentVolume"
STORAGE_CLASS = "StorageClass"
CSI_NODE = "CSINode"
CSI_DRIVER = "CSIDriver"
CSI_STORAGE_CAPACITY = "CSIStorageCapacity"
VOLUME_ATTACHMENT = "VolumeAttachment"
KINDS: tuple[str, ...] = (
    PVC,
    PV,
    STORAGE_CLASS,
    CSI_NODE,
    CSI_DRIVER,
    CSI_STORAGE_CAPACITY,
    VOLUME_ATTACHMENT,
)

# Annotations and labels (k8s.io/api core/v1 and component-helpers/storage/volume).
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
ANN_DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"
ANN_BETA_DEFAULT_CLASS = "storageclass.beta.kubernetes.io/is-default-class"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"
LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_ZONE = "topology.kubernetes.io/zone"
LABEL_REGION = "topology.kubernetes.io/region"
LABEL_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
LABEL_BETA_REGION = "failure-domain.beta.kubernetes.io/region"

READ_WRITE_ONCE_POD = "ReadWriteOncePod"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
IMMEDIATE = "Immediate"

# API error text for a missing object (apimachinery NewNotFound: "<resource>[.<group>] \"<name>\" not found").
_RESOURCE_OF_KIND = {
    PVC: "persistentvolumeclaim",
    PV: "persistentvolume",
    STORAGE_CLASS: "storageclass.storage.k8s.io",
    CSI_NODE: "csinode.storage.k8s.io",
    CSI_DRIVER: "csidriver.storage.k8s.io",
}


def not_found(kind: str, name: str) -> str:
    """Upstream's NotFound message, e.g. ``persistentvolumeclaim "data" not found``."""
    return f'{_RESOURCE_OF_KIND.get(kind, kind.lower())} "{name}" not found'


# --- small accessors -----------------------------------------------------------------------------------------------


def meta(obj: Obj) -> Mapping[str, Any]:
    m = obj.get("metadata")
    return m if isinstance(m, Mapping) else {}


def spec(obj: Obj) -> Mapping[str, Any]:
    s = obj.get("spec")
    return s if isinstance(s, Mapping) else {}


def name_of(obj: Obj) -> str:
    return str(meta(obj).get("name") or "")


def annotations_of(obj: Obj) -> Mapping[str, Any]:
    a = meta(obj).get("annotations")
    return a if isinstance(a, Mapping) else {}


def labels(obj: Obj) -> Mapping[str, str]:
    lab = meta(obj).get("labels")
    return {str(k): str(v) for k, v in lab.items()} if isinstance(lab, Mapping) else {}


def resource_version(obj: Obj | None) -> str:
    return "" if obj is None else str(meta(obj).get("resourceVersion") or "")


SKIP = Status(Code.SKIP)  # shared: Status is immutable, and every pod without volumes returns it


def has_volumes(pod: PodInfo) -> bool:
    """The cheap test every volume plugin's PreFilter starts with (most pods have no volumes at all)."""
    spec = pod.pod.get("spec")
    return bool(spec and spec.get("volumes"))


def pod_volumes(pod: PodInfo) -> list[Mapping[str, Any]]:
    vols = (pod.pod.get("spec") or {}).get("volumes") or ()
    return [v for v in vols if isinstance(v, Mapping)]


def ephemeral_claim_name(pod: PodInfo, volume: Mapping[str, Any]) -> str:
    """Upstream ``ephemeral.VolumeClaimName``: ``<pod name>-<volume name>``."""
    return f"{pod.name}-{volume.get('name') or ''}"


def claim_refs(pod: PodInfo) -> list[tuple[str, bool]]:
    """(claim name, is generic ephemeral) for every PVC-backed volume of the pod, in volume order."""
    out: list[tuple[str, bool]] = []
    for v in pod_volumes(pod):
        src = v.get("persistentVolumeClaim")
        if isinstance(src, Mapping):
            out.append((str(src.get("claimName") or ""), False))
        elif isinstance(v.get("ephemeral"), Mapping):
            out.append((ephemeral_claim_name(pod, v), True))
    return out


def volume_is_for_pod(pod: PodInfo, pvc: Obj) -> str | None:
    """Upstream ``ephemeral.VolumeIsForPod``: the error text when the claim is not controlled by the pod."""
    pvc_ns = str(meta(pvc).get("namespace") or "default")
    owned = any(
        isinstance(ref, Mapping) and ref.get("controller") is True and str(ref.get("uid") or "") == pod.uid
        for ref in meta(pvc).get("ownerReferences") or ()
    )
    if pvc_ns != pod.namespace or not owned:
        return f"PVC {pvc_ns}/{name_of(pvc)} was not created for pod {pod.namespace}/{pod.name} (pod is not owner)"
    return None


def storage_request(pvc: Obj) -> int | None:
    """The claim's ``resources.requests.storage`` in bytes (None when absent or unreadable)."""
    raw = ((spec(pvc).get("resources") or {}).get("requests") or {}).get("storage")
    return _bytes(raw)


def pv_capacity(pv: Obj) -> int:
    return _bytes((spec(pv).get("capacity") or {}).get("storage")) or 0


def _bytes(raw: Any) -> int | None:
    if raw is None:
        return None
    try:
        return quantity.value(raw)
    except Exception:  # a malformed quantity never raises out of a plugin; it counts as absent
        return None


def access_modes(obj: Obj) -> list[str]:
    return [str(m) for m in spec(obj).get("accessModes") or ()]


def claim_class(pvc: Obj, objects: ObjectLister | None = None) -> str:
    """Upstream ``GetPersistentVolumeClaimClass``: the beta annotation, else ``spec.storageClassName``.

    A claim with no ``storageClassName`` at all (not even "") gets the default StorageClass when ``objects`` is
    given, as the DefaultStorageClass admission plugin (and the PV controller, retroactively) would have set it.
    """
    ann = annotations_of(pvc)
    if ANN_BETA_STORAGE_CLASS in ann:
        return str(ann[ANN_BETA_STORAGE_CLASS])
    s = spec(pvc)
    if "storageClassName" in s and s["storageClassName"] is not None:
        return str(s["storageClassName"])
    return default_class(objects) if objects is not None else ""


def default_class(objects: ObjectLister) -> str:
    """The default StorageClass (annotation ``is-default-class: "true"``); the newest wins, then the name."""
    defaults = [
        sc
        for sc in objects.list(STORAGE_CLASS)
        if str(
            annotations_of(sc).get(ANN_DEFAULT_CLASS) or annotations_of(sc).get(ANN_BETA_DEFAULT_CLASS) or ""
        )
        == "true"
    ]
    if not defaults:
        return ""
    defaults.sort(key=lambda sc: (str(meta(sc).get("creationTimestamp") or ""), name_of(sc)), reverse=True)
    newest = str(meta(defaults[0]).get("creationTimestamp") or "")
    return min(name_of(sc) for sc in defaults if str(meta(sc).get("creationTimestamp") or "") == newest)


def pv_class(pv: Obj) -> str:
    """Upstream ``GetPersistentVolumeClass``: the beta annotation, else ``spec.storageClassName``."""
    ann = annotations_of(pv)
    if ANN_BETA_STORAGE_CLASS in ann:
        return str(ann[ANN_BETA_STORAGE_CLASS])
    return str(spec(pv).get("storageClassName") or "")


def binding_mode(sc: Obj) -> str:
    """``volumeBindingMode``; the API server defaults an unset mode to Immediate."""
    return str(sc.get("volumeBindingMode") or IMMEDIATE)


def is_fully_bound(pvc: Obj) -> bool:
    """Upstream ``isPVCFullyBound``: ``spec.volumeName`` set and the PV controller's bind-completed annotation.

    A claim written by hand in a cluster file often says ``status.phase: Bound`` without the annotation the PV
    controller would have added; that counts as bound too (a live claim with that phase always has both).
    """
    if not spec(pvc).get("volumeName"):
        return False
    return ANN_BIND_COMPLETED in annotations_of(pvc) or (pvc.get("status") or {}).get("phase") == "Bound"


def pv_node_affinity_matches(pv: Obj, node_labels: Mapping[str, str]) -> bool:
    """Upstream ``CheckNodeAffinity``: the PV's required node selector against a node known only by its labels."""
    required = (spec(pv).get("nodeAffinity") or {}).get("required")
    if not isinstance(required, Mapping):
        return True
    return selectors.node_selector_matches(required, node_labels, "")


def local_pv_node_names(pv: Obj) -> set[str] | None:
    """Upstream ``GetLocalPersistentVolumeNodeNames``: hostnames a PV's node affinity pins it to (None: no pin).

    Per term the ``kubernetes.io/hostname In`` expressions are intersected; terms are unioned.
    """
    required = (spec(pv).get("nodeAffinity") or {}).get("required")
    if not isinstance(required, Mapping):
        return None
    result: set[str] | None = None
    for term in required.get("nodeSelectorTerms") or ():
        nodes: set[str] | None = None
        for expr in (term or {}).get("matchExpressions") or ():
            if expr.get("key") == LABEL_HOSTNAME and expr.get("operator") == "In":
                vals = {str(v) for v in expr.get("values") or ()}
                nodes = vals if nodes is None else nodes & vals
        if nodes is not None:
            result = nodes if result is None else result | nodes
    return result if result else None


def topology_terms_match(terms: Any, node_labels: Mapping[str, str]) -> bool:
    """Upstream ``MatchTopologySelectorTerms`` (StorageClass ``allowedTopologies``): no terms match everything;
    a term matches when each of its ``matchLabelExpressions`` has the node's value among its values."""
    if not terms:
        return True
    for term in terms:
        exprs = (term or {}).get("matchLabelExpressions") or ()
        if not exprs:
            continue
        if all(
            (vals := [str(v) for v in e.get("values") or ()])
            and str(e.get("key") or "") in node_labels
            and node_labels[str(e.get("key") or "")] in vals
            for e in exprs
        ):
            return True
    return False


# --- the assume cache ----------------------------------------------------------------------------------------------


@dataclass
class _Assumed:
    obj: Obj
    base_version: str  # resourceVersion of the informer object the assumption was made on
    synthetic: bool = False  # made here (a provisioned PV): no informer object existed


@dataclass
class AssumeCache:
    """Assumed PVs (by name) and claims (by ``namespace/name``) layered over a lister. See the module docstring."""

    pvs: dict[str, _Assumed] = field(default_factory=dict)
    pvcs: dict[str, _Assumed] = field(default_factory=dict)

    def _resolve(self, table: dict[str, _Assumed], key: str, informer: Obj | None) -> Obj | None:
        entry = table.get(key)
        if entry is None:
            return informer
        if informer is None:
            if entry.synthetic:
                return entry.obj
            del table[key]  # the object was deleted: the assumption goes with it
            return None
        if not entry.synthetic and resource_version(informer) == entry.base_version:
            return entry.obj
        del table[key]  # a newer informer object wins
        return informer

    def pv(self, objects: ObjectLister, name: str) -> Obj | None:
        return self._resolve(self.pvs, name, objects.get(PV, "", name))

    def pvc(self, objects: ObjectLister, namespace: str, name: str) -> Obj | None:
        return self._resolve(self.pvcs, f"{namespace}/{name}", objects.get(PVC, namespace, name))

    def list_pvs(self, objects: ObjectLister) -> list[Obj]:
        out: list[Obj] = []
        seen: set[str] = set()
        for informer in objects.list(PV):
            n = name_of(informer)
            seen.add(n)
            obj = self._resolve(self.pvs, n, informer)
            if obj is not None:
                out.append(obj)
        for n, entry in sorted(self.pvs.items()):
            if n not in seen and entry.synthetic:
                out.append(entry.obj)
        return out

    def assume_pv(self, objects: ObjectLister, new: Obj) -> None:
        n = name_of(new)
        informer = objects.get(PV, "", n)
        self.pvs[n] = _Assumed(new, resource_version(informer), informer is None)

    def assume_pvc(self, objects: ObjectLister, new: Obj) -> None:
        ns, n = str(meta(new).get("namespace") or "default"), name_of(new)
        informer = objects.get(PVC, ns, n)
        self.pvcs[f"{ns}/{n}"] = _Assumed(new, resource_version(informer), informer is None)

    def restore_pv(self, name: str) -> None:
        self.pvs.pop(name, None)

    def restore_pvc(self, key: str) -> None:
        self.pvcs.pop(key, None)


_SHARED: weakref.WeakKeyDictionary[ObjectLister, AssumeCache] = weakref.WeakKeyDictionary()


def assume_cache_for(objects: ObjectLister) -> AssumeCache:
    """The one assume cache of a lister (so every profile's plugins see the same assumptions)."""
    cache = _SHARED.get(objects)
    if cache is None:
        cache = _SHARED[objects] = AssumeCache()
    return cache


class Volumes:
    """What a plugin reads in one call: the lister plus the shared assume cache, with upstream's lookups."""

    __slots__ = ("cache", "objects")

    def __init__(self, handle: Handle) -> None:
        self.objects = handle.objects
        self.cache = assume_cache_for(self.objects)

    def pvc(self, namespace: str, name: str) -> Obj | None:
        return self.cache.pvc(self.objects, namespace, name)

    def pv(self, name: str) -> Obj | None:
        return self.cache.pv(self.objects, name)

    def pvs(self) -> list[Obj]:
        return self.cache.list_pvs(self.objects)

    def storage_class(self, name: str) -> Obj | None:
        return self.objects.get(STORAGE_CLASS, "", name)

    def csi_node(self, node_name: str) -> Obj | None:
        return self.objects.get(CSI_NODE, "", node_name)

    def csi_driver(self, name: str) -> Obj | None:
        return self.objects.get(CSI_DRIVER, "", name)

    def list(self, kind: str) -> Iterable[Obj]:
        return self.objects.list(kind)

    def claim_class(self, pvc: Obj) -> str:
        return claim_class(pvc, self.objects)


# --- claims controllers would create (for a simulation that expands workloads) ------------------------------------


def statefulset_claims(sts: Obj, pod_name: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The claims the StatefulSet controller creates for its pod ``pod_name`` and the pod volumes naming them.

    Per ``spec.volumeClaimTemplates[]``: a claim ``<template name>-<pod name>`` in the set's namespace, labelled with
    the template's labels plus the set's ``selector.matchLabels``; the pod gets a volume named after the template
    (replacing a pod-template volume of that name) with ``persistentVolumeClaim.claimName`` set to it. Claims
    already present in a cluster are reused by name, as the controller does.
    """
    s = spec(sts)
    ns = str(meta(sts).get("namespace") or "default")
    match_labels = dict((s.get("selector") or {}).get("matchLabels") or {})
    claims: list[dict[str, Any]] = []
    pod_vols: list[dict[str, Any]] = []
    for template in s.get("volumeClaimTemplates") or ():
        if not isinstance(template, Mapping):
            continue
        tmeta = template.get("metadata") or {}
        tname = str(tmeta.get("name") or "")
        claim_name = f"{tname}-{pod_name}"
        claim_meta: dict[str, Any] = {
            "name": claim_name,
            "namespace": ns,
            "labels": {**dict(tmeta.get("labels") or {}), **match_labels},
        }
        if tmeta.get("annotations"):
            claim_meta["annotations"] = dict(tmeta["annotations"])
        claims.append(
            {
                "apiVersion": "v1",
                "kind": PVC,
                "metadata": claim_meta,
                "spec": dict(template.get("spec") or {}),
            }
        )
        pod_vols.append({"name": tname, "persistentVolumeClaim": {"claimName": claim_name}})
    return claims, pod_vols


def ephemeral_claims(pod: Obj) -> list[dict[str, Any]]:
    """The claims the ephemeral volume controller creates for a pod's generic ephemeral volumes: ``<pod>-<volume>``
    from ``ephemeral.volumeClaimTemplate``, controlled by the pod (so VolumeBinding accepts them as the pod's)."""
    pm = meta(pod)
    pod_name = str(pm.get("name") or "")
    ns = str(pm.get("namespace") or "default")
    uid = str(pm.get("uid") or f"{ns}/{pod_name}")  # PodInfo's uid fallback, so ownership checks agree
    out: list[dict[str, Any]] = []
    for v in (pod.get("spec") or {}).get("volumes") or ():
        eph = v.get("ephemeral") if isinstance(v, Mapping) else None
        if not isinstance(eph, Mapping):
            continue
        template = eph.get("volumeClaimTemplate") or {}
        tmeta = template.get("metadata") or {}
        claim_meta: dict[str, Any] = {
            "name": f"{pod_name}-{v.get('name') or ''}",
            "namespace": ns,
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": pod_name,
                    "uid": uid,
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        }
        for key in ("labels", "annotations"):
            if tmeta.get(key):
                claim_meta[key] = dict(tmeta[key])
        out.append(
            {
                "apiVersion": "v1",
                "kind": PVC,
                "metadata": claim_meta,
                "spec": dict(template.get("spec") or {}),
            }
        )
    return out
