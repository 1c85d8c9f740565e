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

Not modelled: in-tree volumes migrated to CSI (inline or PV, e.g. ``awsElasticBlockStore`` counted as
``ebs.csi.aws.com``) are not counted, and the alpha ``VolumeLimitScaling`` driver-presence check is off as upstream.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

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
        if vol.has_volumes(pod) and vol.claim_refs(pod):
            return None, fw.SUCCESS
        return None, vol.SKIP

    def _csi_driver_info(self, objects: vol.Volumes, pvc: vol.Obj) -> tuple[str, str]:
        pv_name = str(vol.spec(pvc).get("volumeName") or "")
        pv = objects.pv(pv_name) if pv_name else None
        if pv is None:  # unbound, or its PV is gone: count under the class's provisioner
            class_name = objects.claim_class(pvc)
            sc = objects.storage_class(class_name) if class_name else None
            if sc is None:
                return "", ""
            ns = str(vol.meta(pvc).get("namespace") or "default")
            return str(sc.get("provisioner") or ""), f"{UNBOUND_HANDLE_PREFIX}-{ns}/{vol.name_of(pvc)}"
        csi = vol.spec(pv).get("csi")
        if not isinstance(csi, Mapping):
            return "", ""
        return str(csi.get("driver") or ""), str(csi.get("volumeHandle") or "")

    def _attachable(self, objects: vol.Volumes, pod: PodInfo, new_pod: bool, result: dict[str, str]) -> None:
        """Upstream ``filterAttachableVolumes``: ``result[<driver>/<handle>] = driver``."""
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
            driver, handle = self._csi_driver_info(objects, pvc)
            if driver and handle:
                result[f"{driver}/{handle}"] = driver

    def filter(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo) -> fw.Status:
        if not vol.has_volumes(pod):
            return fw.SUCCESS
        objects = vol.Volumes(self.handle)
        new: dict[str, str] = {}
        try:
            self._attachable(objects, pod, True, new)
        except _NotFound as exc:
            return fw.unresolvable(str(exc))
        except _Failed as exc:
            return fw.error(str(exc))
        if not new:
            return fw.SUCCESS
        limits = volume_limits(objects.csi_node(node.name))
        if not limits:
            return fw.SUCCESS
        attached: dict[str, str] = {}
        try:
            for existing in node.pods:
                self._attachable(objects, existing, False, attached)
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
    reads=("csinodes", "persistentvolumes", "persistentvolumeclaims", "storageclasses", "volumeattachments"),
)
