"""NodeVolumeLimits (PreFilter, Filter): CSI attach limits per node (upstream ``nodevolumelimits`` CSILimits).

- PreFilter: a pod with no ``persistentVolumeClaim``/``ephemeral`` volume skips the Filter.
- Filter: the pod's CSI volumes are named ``<driver>/<volume handle>``: a bound claim's PV ``spec.csi`` driver and
  handle; an unbound claim counts under its StorageClass provisioner with a per-claim synthetic handle; claims
  without class, with an unknown class or on a non-CSI PV are not counted. A missing claim of the new pod ->
  UnschedulableAndUnresolvable ``looking up PVC <ns>/<name>: persistentvolumeclaim "<name>" not found``.
  Limits are CSINode ``spec.drivers[].allocatable.count`` of the node (no CSINode or no counts: no limit). Volumes
  already used by the node's pods count once however many pods share them (and a new volume already in use there
  needs no new slot); VolumeAttachments to the node add volumes no pod accounts for. When
  ``attached + new > count`` for a driver -> Unschedulable ``node(s) exceed max volume count``.

In-tree volumes migrated to CSI count under their CSI driver when the node has a CSINode (migration is on for
AWS EBS, GCE PD, Azure Disk, Cinder and Portworx): inline volumes and in-tree PVs (``awsElasticBlockStore`` ->
``ebs.csi.aws.com`` with the bare ``vol-...`` ID, ``gcePersistentDisk`` -> ``pd.csi.storage.gke.io`` with
``projects/UNSPECIFIED/zones/<zone>/disks/<pd>``, ...), and unbound claims of an in-tree provisioner
(``kubernetes.io/aws-ebs``). Other in-tree types (Azure File, vSphere) are not counted, as upstream.

Not modelled: the alpha ``VolumeLimitScaling`` driver-presence check (off, as upstream).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from berth.schedule.framework import interface as fw
from berth.schedule.framework.types import NodeInfo, PodInfo
from berth.schedule.plugins import volumes as vol

NAME = "NodeVolumeLimits"

ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"
# Upstream uses a random prefix per scheduler so synthetic handles never collide with real ones.
UNBOUND_HANDLE_PREFIX = "berth-unbound"


class _NotFound(Exception):
    pass


class _Failed(Exception):
    pass


@dataclass(frozen=True)
class _Migration:
    """An in-tree volume type and the CSI driver it migrated to (csi-translation-lib)."""

    plugin: str  # in-tree plugin name, also the StorageClass provisioner
    driver: str
    inline_handle: Callable[[Mapping[str, Any]], str]  # raises ValueError on an untranslatable volume
    pv_handle: Callable[[Mapping[str, Any], Mapping[str, str]], str]


_EBS_ID = re.compile(r"^vol-[^/]*$")
UNSPECIFIED = "UNSPECIFIED"


def _ebs_handle(src: Mapping[str, Any]) -> str:
    """Upstream ``KubernetesVolumeIDToEBSVolumeID``: ``aws://<zone>/vol-123`` or ``vol-123`` -> ``vol-123``."""
    volume_id = str(src.get("volumeID") or "")
    if not volume_id.startswith("aws://"):
        return volume_id
    rest = volume_id[len("aws://") :]  # "<zone>/<id>": the URL's host, then its path
    aws_id = rest.split("/", 1)[1].strip("/") if "/" in rest else ""
    if not _EBS_ID.match(aws_id):
        raise ValueError(
            f"failed to translate Kubernetes ID to EBS Volume ID invalid format for AWS volume ({volume_id})"
        )
    return aws_id


def _gce_pv_handle(src: Mapping[str, Any], pv_labels: Mapping[str, str]) -> str:
    pd = str(src.get("pdName") or "")
    zones_label = pv_labels.get(vol.LABEL_BETA_ZONE) or pv_labels.get(vol.LABEL_ZONE) or ""
    zones = zones_label.split("__")
    if len(zones) == 1 and zones[0]:
        return f"projects/{UNSPECIFIED}/zones/{zones[0]}/disks/{pd}"
    if len(zones) > 1:
        regions = {z.rsplit("-", 1)[0] for z in zones}
        if len(regions) != 1:
            raise ValueError(f"multiple or no regions found for zones {zones}")
        return f"projects/{UNSPECIFIED}/regions/{regions.pop()}/disks/{pd}"
    return f"projects/{UNSPECIFIED}/zones/{UNSPECIFIED}/disks/{pd}"


def _field(name: str) -> Callable[[Mapping[str, Any]], str]:
    return lambda src: str(src.get(name) or "")


MIGRATIONS: dict[str, _Migration] = {
    "awsElasticBlockStore": _Migration(
        "kubernetes.io/aws-ebs", "ebs.csi.aws.com", _ebs_handle, lambda src, _labels: _ebs_handle(src)
    ),
    "gcePersistentDisk": _Migration(
        "kubernetes.io/gce-pd",
        "pd.csi.storage.gke.io",
        lambda src: f"projects/{UNSPECIFIED}/zones/{UNSPECIFIED}/disks/{src.get('pdName') or ''}",
        _gce_pv_handle,
    ),
    "azureDisk": _Migration(
        "kubernetes.io/azure-disk",
        "disk.csi.azure.com",
        _field("diskURI"),
        lambda s, _l: _field("diskURI")(s),
    ),
    "cinder": _Migration(
        "kubernetes.io/cinder",
        "cinder.csi.openstack.org",
        _field("volumeID"),
        lambda s, _l: _field("volumeID")(s),
    ),
    "portworxVolume": _Migration(
        "kubernetes.io/portworx-volume",
        "pxd.portworx.com",
        _field("volumeID"),
        lambda s, _l: _field("volumeID")(s),
    ),
}
_BY_PLUGIN = {m.plugin: m for m in MIGRATIONS.values()}
# Inline types the translator can express as CSI (those without a migration above are never counted).
INLINE_MIGRATABLE = (*MIGRATIONS, "azureFile", "vsphereVolume")


def _migrated_source(obj: Mapping[str, Any]) -> tuple[_Migration, Mapping[str, Any]] | None:
    for key, migration in MIGRATIONS.items():
        src = obj.get(key)
        if isinstance(src, Mapping):
            return migration, src
    return None


def is_inline_migratable(volume: Mapping[str, Any]) -> bool:
    return any(isinstance(volume.get(k), Mapping) for k in INLINE_MIGRATABLE)


def volume_limits(csi_node: vol.Obj | None) -> dict[str, int]:
    """Driver name -> ``allocatable.count`` from a CSINode (upstream ``getVolumeLimits``)."""
    out: dict[str, int] = {}
    if csi_node is None:
        return out
    for d in vol.spec(csi_node).get("drivers") or ():
        if not isinstance(d, Mapping):
            continue
        count = (d.get("allocatable") or {}).get("count")
        if isinstance(count, int) and not isinstance(count, bool):
            out[str(d.get("name") or "")] = count
    return out


class NodeVolumeLimits(fw.PreFilterPlugin, fw.FilterPlugin):
    NAME = NAME

    def pre_filter(
        self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[fw.PreFilterResult | None, fw.Status]:
        if vol.has_volumes(pod) and any(
            "persistentVolumeClaim" in v or "ephemeral" in v or is_inline_migratable(v)
            for v in vol.pod_volumes(pod)
        ):
            return None, fw.SUCCESS
        return None, vol.SKIP

    def _csi_driver_info(
        self, objects: vol.Volumes, csi_node: vol.Obj | None, pvc: vol.Obj
    ) -> tuple[str, str]:
        pv_name = str(vol.spec(pvc).get("volumeName") or "")
        pv = objects.pv(pv_name) if pv_name else None
        if pv is None:  # unbound, or its PV is gone: count under the class's provisioner
            class_name = objects.claim_class(pvc)
            sc = objects.storage_class(class_name) if class_name else None
            if sc is None:
                return "", ""
            ns = str(vol.meta(pvc).get("namespace") or "default")
            provisioner = str(sc.get("provisioner") or "")
            migration = _BY_PLUGIN.get(provisioner)
            if migration is not None:
                if csi_node is None:  # migration needs the node's CSINode
                    return "", ""
                provisioner = migration.driver
            return provisioner, f"{UNBOUND_HANDLE_PREFIX}-{ns}/{vol.name_of(pvc)}"
        csi = vol.spec(pv).get("csi")
        if not isinstance(csi, Mapping):
            found = _migrated_source(vol.spec(pv))
            if found is None or csi_node is None:
                return "", ""
            migration, src = found
            try:
                return migration.driver, migration.pv_handle(src, vol.labels(pv))
            except ValueError:  # upstream logs an untranslatable PV and does not count it
                return "", ""
        return str(csi.get("driver") or ""), str(csi.get("volumeHandle") or "")

    def _attachable(
        self,
        objects: vol.Volumes,
        csi_node: vol.Obj | None,
        pod: PodInfo,
        new_pod: bool,
        result: dict[str, str],
    ) -> None:
        """Upstream ``filterAttachableVolumes``: ``result[<driver>/<handle>] = driver``."""
        for v in vol.pod_volumes(pod):
            if "persistentVolumeClaim" in v or "ephemeral" in v or csi_node is None:
                continue
            found = _migrated_source(v)
            if found is None:
                continue
            migration, src = found
            try:
                handle = migration.inline_handle(src)
            except ValueError as exc:
                raise _Failed(f"converting volume({v.get('name') or ''}) from inline to csi: {exc}") from exc
            result[f"{migration.driver}/{handle}"] = migration.driver
        for claim_name, ephemeral in vol.claim_refs(pod):
            if not claim_name:
                raise _Failed("PersistentVolumeClaim had no name")
            pvc = objects.pvc(pod.namespace, claim_name)
            if pvc is None:
                if new_pod:
                    raise _NotFound(
                        f"looking up PVC {pod.namespace}/{claim_name}: {vol.not_found(vol.PVC, claim_name)}"
                    )
                continue
            if ephemeral:
                problem = vol.volume_is_for_pod(pod, pvc)
                if problem is not None:
                    raise _Failed(problem)
            driver, handle = self._csi_driver_info(objects, csi_node, pvc)
            if driver and handle:
                result[f"{driver}/{handle}"] = driver

    def filter(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo) -> fw.Status:
        if not vol.has_volumes(pod):
            return fw.SUCCESS
        objects = vol.Volumes(self.handle)
        csi_node = objects.csi_node(node.name)
        new: dict[str, str] = {}
        try:
            self._attachable(objects, csi_node, pod, True, new)
        except _NotFound as exc:
            return fw.unresolvable(str(exc))
        except _Failed as exc:
            return fw.error(str(exc))
        if not new:
            return fw.SUCCESS
        limits = volume_limits(csi_node)
        if not limits:
            return fw.SUCCESS
        attached: dict[str, str] = {}
        try:
            for existing in node.pods:
                self._attachable(objects, csi_node, existing, False, attached)
        except (_NotFound, _Failed) as exc:
            return fw.error(str(exc))
        attached_count: dict[str, int] = {}
        for unique, driver in attached.items():
            new.pop(unique, None)  # a volume shared with a pod on the node needs no new slot
            attached_count[driver] = attached_count.get(driver, 0) + 1
        for unique, driver in self._attachments(objects, node.name).items():
            if unique not in attached:
                attached_count[driver] = attached_count.get(driver, 0) + 1
        new_count: dict[str, int] = {}
        for driver in new.values():
            new_count[driver] = new_count.get(driver, 0) + 1
        for driver, count in new_count.items():
            limit = limits.get(driver)
            if limit is not None and attached_count.get(driver, 0) + count > limit:
                return fw.unschedulable(ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
        return fw.SUCCESS

    @staticmethod
    def _attachments(objects: vol.Volumes, node_name: str) -> dict[str, str]:
        """VolumeAttachments to the node: ``<attacher>/<PV csi handle>`` -> attacher."""
        out: dict[str, str] = {}
        for va in objects.list(vol.VOLUME_ATTACHMENT):
            s = vol.spec(va)
            if s.get("nodeName") != node_name or not s.get("attacher"):
                continue
            pv_name = (s.get("source") or {}).get("persistentVolumeName")
            pv = objects.pv(str(pv_name)) if pv_name else None
            csi = vol.spec(pv).get("csi") if pv is not None else None
            if isinstance(csi, Mapping):
                out[f"{s['attacher']}/{csi.get('volumeHandle') or ''}"] = str(s["attacher"])
        return out

    def events_to_register(self) -> Sequence[fw.ClusterEvent]:
        return (
            fw.ClusterEvent("CSINode", "Add"),
            fw.ClusterEvent("CSINode", "Update"),
            fw.ClusterEvent("Pod", "Delete"),
            fw.ClusterEvent("PersistentVolumeClaim", "Add"),
            fw.ClusterEvent("VolumeAttachment", "Delete"),
        )


SPEC = fw.PluginSpec(
    name=NAME,
    plugin_class=NodeVolumeLimits,
    api_access=(
        "csinodes",
        "persistentvolumes",
        "persistentvolumeclaims",
        "storageclasses",
        "volumeattachments",
    ),
)
