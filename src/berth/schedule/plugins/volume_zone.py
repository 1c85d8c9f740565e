"""VolumeZone (PreFilter, Filter): pods follow the zone and region labels of their bound PersistentVolumes.

Upstream ``volumezone``:

- PreFilter collects, for every ``persistentVolumeClaim`` of the pod, the zone/region labels of its PV
  (``failure-domain.beta.kubernetes.io/zone|region`` and ``topology.kubernetes.io/zone|region``; a value may list
  several zones joined by ``__``). An unbound claim of a WaitForFirstConsumer class is left to VolumeBinding; other
  gaps are UnschedulableAndUnresolvable with upstream's text: ``PersistentVolumeClaim had no name``,
  ``persistentvolumeclaim "<name>" not found``, ``PersistentVolumeClaim had no pv name and storageClass name``,
  ``storageclass.storage.k8s.io "<name>" not found``, ``PersistentVolume had no name`` (unbound, Immediate class),
  ``persistentvolume "<name>" not found``. No labelled PV -> Skip.
- Filter: a node with none of the four labels passes (single-zone clusters). Otherwise each PV label must be on the
  node (a beta key may be matched by the node's GA key) with a value in the PV's set, else
  UnschedulableAndUnresolvable ``node(s) had no available volume zone``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from berth.schedule.framework import interface as fw
from berth.schedule.framework.types import NodeInfo, PodInfo
from berth.schedule.plugins import volumes as vol

NAME = "VolumeZone"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME

ERR_REASON_CONFLICT = "node(s) had no available volume zone"

TOPOLOGY_LABELS: tuple[str, ...] = (
    vol.LABEL_BETA_ZONE,
    vol.LABEL_BETA_REGION,
    vol.LABEL_ZONE,
    vol.LABEL_REGION,
)
_GA_LABEL = {vol.LABEL_BETA_ZONE: vol.LABEL_ZONE, vol.LABEL_BETA_REGION: vol.LABEL_REGION}
MULTI_ZONE_DELIMITER = "__"


@dataclass(frozen=True)
class PVTopology:
    pv_name: str
    key: str
    values: frozenset[str]


def label_zones_to_set(value: str) -> frozenset[str] | None:
    """Upstream ``LabelZonesToSet``: ``a__b`` -> {a, b}; None when any element is blank."""
    zones = [z.strip() for z in value.split(MULTI_ZONE_DELIMITER)]
    if any(not z for z in zones):
        return None
    return frozenset(zones)


def pv_topologies(pv: vol.Obj) -> list[PVTopology]:
    labels = vol.labels(pv)
    out: list[PVTopology] = []
    for key in TOPOLOGY_LABELS:
        if key in labels:
            zones = label_zones_to_set(labels[key])
            if zones is not None:  # upstream logs an unparsable value and ignores the label
                out.append(PVTopology(vol.name_of(pv), key, zones))
    return out


class VolumeZone(fw.PreFilterPlugin, fw.FilterPlugin):
    NAME = NAME

    def _topologies(self, pod: PodInfo) -> tuple[list[PVTopology], fw.Status]:
        claims = [
            str(v["persistentVolumeClaim"].get("claimName") or "")
            for v in vol.pod_volumes(pod)
            if isinstance(v.get("persistentVolumeClaim"), Mapping)
        ]
        out: list[PVTopology] = []
        if not claims:
            return out, fw.SUCCESS
        objects = vol.Volumes(self.handle)
        for claim_name in claims:
            if not claim_name:
                return [], fw.unresolvable("PersistentVolumeClaim had no name")
            pvc = objects.pvc(pod.namespace, claim_name)
            if pvc is None:
                return [], fw.unresolvable(vol.not_found(vol.PVC, claim_name))
            pv_name = str(vol.spec(pvc).get("volumeName") or "")
            if not pv_name:
                class_name = objects.claim_class(pvc)
                if not class_name:
                    return [], fw.unresolvable("PersistentVolumeClaim had no pv name and storageClass name")
                sc = objects.storage_class(class_name)
                if sc is None:
                    return [], fw.unresolvable(vol.not_found(vol.STORAGE_CLASS, class_name))
                if vol.binding_mode(sc) == vol.WAIT_FOR_FIRST_CONSUMER:
                    continue  # VolumeBinding decides where an unbound delayed claim goes
                return [], fw.unresolvable("PersistentVolume had no name")
            pv = objects.pv(pv_name)
            if pv is None:
                return [], fw.unresolvable(vol.not_found(vol.PV, pv_name))
            out.extend(pv_topologies(pv))
        return out, fw.SUCCESS

    def pre_filter(
        self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[fw.PreFilterResult | None, fw.Status]:
        if not vol.has_volumes(pod):
            return None, vol.SKIP
        topologies, status = self._topologies(pod)
        if not status.is_success:
            return None, status
        if not topologies:
            return None, vol.SKIP
        state.write(PRE_FILTER_STATE_KEY, tuple(topologies))
        return None, fw.SUCCESS

    def filter(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo) -> fw.Status:
        if not vol.has_volumes(pod):
            return fw.SUCCESS
        topologies = state.get(PRE_FILTER_STATE_KEY)
        if topologies is None:  # PreFilter did not run: compute here, as upstream falls back to
            computed, status = self._topologies(pod)
            if not status.is_success:
                return status
            topologies = tuple(computed)
        labels = node.labels
        if not any(key in labels for key in TOPOLOGY_LABELS):
            return fw.SUCCESS
        for t in topologies:
            value = labels.get(t.key)
            if value is None:
                value = labels.get(_GA_LABEL.get(t.key, t.key))
            if value is None or value not in t.values:
                return fw.unresolvable(ERR_REASON_CONFLICT)
        return fw.SUCCESS

    def events_to_register(self) -> Sequence[fw.ClusterEvent]:
        return (
            fw.ClusterEvent("StorageClass", "Add"),
            fw.ClusterEvent("Node", "Add"),
            fw.ClusterEvent("Node", "UpdateNodeLabel"),
            fw.ClusterEvent("Node", "UpdateNodeTaint"),
            fw.ClusterEvent("PersistentVolumeClaim", "Add"),
            fw.ClusterEvent("PersistentVolumeClaim", "Update"),
            fw.ClusterEvent("PersistentVolume", "Add"),
            fw.ClusterEvent("PersistentVolume", "Update"),
        )


SPEC = fw.PluginSpec(
    name=NAME,
    plugin_class=VolumeZone,
    api_access=("persistentvolumes", "persistentvolumeclaims", "storageclasses"),
)
