"""VolumeRestrictions (PreFilter, Filter): volumes two pods cannot share.

Upstream ``volumerestrictions``:

- PreFilter reads every ``persistentVolumeClaim`` of the pod (a missing one -> UnschedulableAndUnresolvable
  ``persistentvolumeclaim "<name>" not found``) and collects those with the ReadWriteOncePod access mode. Each such
  claim already used by a pod anywhere in the cluster (assumed pods included) counts as a conflict, and Filter then
  rejects every node with Unschedulable ``node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod
  access mode already in-use by another pod`` (Unschedulable, so preemption may evict the holder; AddPod/RemovePod keep the count
  right during preemption's what-ifs). A pod with no inline disk and no conflict skips the Filter.
- Filter: the old disk conflicts with pods already on the node -> Unschedulable ``node(s) had no available disk``:
  the same GCE PD unless both mounts are read-only, the same AWS EBS volume ID (always), the same iSCSI IQN unless
  both read-only, the same RBD image (a shared Ceph monitor, same pool -- API default ``rbd`` -- and image) unless
  both read-only. Then the ReadWriteOncePod verdict from PreFilter.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from berth.schedule.framework import interface as fw
from berth.schedule.framework.types import NodeInfo, PodInfo
from berth.schedule.plugins import volumes as vol

NAME = "VolumeRestrictions"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME

ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
# Wording of current releases, as observed on 1.34+ clusters (older: "node has pod using PersistentVolumeClaim with
# the same name and ReadWriteOncePod access mode").
ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
    "already in-use by another pod"
)

_DISK_SOURCES = ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi")
DEFAULT_RBD_POOL = "rbd"


@dataclass
class PreFilterState:
    """Names of the pod's ReadWriteOncePod claims and how many scheduled pods use them."""

    read_write_once_pod_claims: frozenset[str]
    conflicting_claim_refs: int

    def clone(self) -> PreFilterState:
        return PreFilterState(self.read_write_once_pod_claims, self.conflicting_claim_refs)

    def update_with_pod(self, other: PodInfo, multiplier: int) -> None:
        """Upstream counts by claim name only (no namespace check); kept."""
        refs = sum(
            1
            for v in vol.pod_volumes(other)
            if isinstance(v.get("persistentVolumeClaim"), Mapping)
            and str(v["persistentVolumeClaim"].get("claimName") or "") in self.read_write_once_pod_claims
        )
        self.conflicting_claim_refs += multiplier * refs


def needs_restrictions_check(volume: Mapping[str, Any]) -> bool:
    return any(isinstance(volume.get(k), Mapping) for k in _DISK_SOURCES)


def _same(a: Any, b: Any, key: str) -> bool:
    return isinstance(a, Mapping) and isinstance(b, Mapping) and a.get(key) == b.get(key)


def _both_read_only(a: Any, b: Any) -> bool:
    return bool(a.get("readOnly")) and bool(b.get("readOnly"))


def is_volume_conflict(volume: Mapping[str, Any], existing_pod: PodInfo) -> bool:
    """Upstream ``isVolumeConflict``: does ``volume`` clash with any inline disk of ``existing_pod``."""
    for existing in vol.pod_volumes(existing_pod):
        a, b = volume.get("gcePersistentDisk"), existing.get("gcePersistentDisk")
        if _same(a, b, "pdName") and not _both_read_only(a, b):
            return True
        a, b = volume.get("awsElasticBlockStore"), existing.get("awsElasticBlockStore")
        if _same(a, b, "volumeID"):
            return True
        a, b = volume.get("iscsi"), existing.get("iscsi")
        if _same(a, b, "iqn") and not _both_read_only(a, b):
            return True
        a, b = volume.get("rbd"), existing.get("rbd")
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            same_pool = (a.get("pool") or DEFAULT_RBD_POOL) == (b.get("pool") or DEFAULT_RBD_POOL)
            overlap = bool(set(a.get("monitors") or ()) & set(b.get("monitors") or ()))
            if (
                overlap
                and same_pool
                and a.get("image") == b.get("image")
                and not (a.get("readOnly") and b.get("readOnly"))
            ):
                return True
    return False


def _claims_in_use(handle: Any) -> set[str]:
    """``namespace/claim`` of every claim used by a pod in the snapshot (upstream ``StorageInfos().IsPVCUsedByPods``)."""
    used: set[str] = set()
    for node in handle.snapshot().node_infos():
        for p in node.pods:
            for v in vol.pod_volumes(p):
                src = v.get("persistentVolumeClaim")
                if isinstance(src, Mapping):
                    used.add(f"{p.namespace}/{src.get('claimName') or ''}")
    return used


class VolumeRestrictions(fw.PreFilterPlugin, fw.FilterPlugin):
    NAME = NAME

    def pre_filter(
        self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[fw.PreFilterResult | None, fw.Status]:
        if not vol.has_volumes(pod):
            return None, vol.SKIP
        volumes = vol.pod_volumes(pod)
        needs_check = any(needs_restrictions_check(v) for v in volumes)
        rwop: set[str] = set()
        objects: vol.Volumes | None = None
        for v in volumes:
            src = v.get("persistentVolumeClaim")
            if not isinstance(src, Mapping):
                continue
            objects = objects or vol.Volumes(self.handle)
            claim_name = str(src.get("claimName") or "")
            pvc = objects.pvc(pod.namespace, claim_name)
            if pvc is None:
                return None, fw.unresolvable(vol.not_found(vol.PVC, claim_name))
            if vol.READ_WRITE_ONCE_POD in vol.access_modes(pvc):
                rwop.add(vol.name_of(pvc))
        conflicts = 0
        if rwop:
            used = _claims_in_use(self.handle)
            conflicts = sum(1 for c in rwop if f"{pod.namespace}/{c}" in used)
        if not needs_check and conflicts == 0:
            return None, vol.SKIP
        state.write(PRE_FILTER_STATE_KEY, PreFilterState(frozenset(rwop), conflicts))
        return None, fw.SUCCESS

    def pre_filter_extensions(self) -> fw.PreFilterExtensions | None:
        return self

    def add_pod(self, state: fw.CycleState, pod: PodInfo, to_add: PodInfo, node: NodeInfo) -> fw.Status:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, PreFilterState):
            return fw.error(f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState')
        s.update_with_pod(to_add, 1)
        return fw.SUCCESS

    def remove_pod(self, state: fw.CycleState, pod: PodInfo, to_remove: PodInfo, node: NodeInfo) -> fw.Status:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, PreFilterState):
            return fw.error(f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState')
        s.update_with_pod(to_remove, -1)
        return fw.SUCCESS

    def filter(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo) -> fw.Status:
        for v in vol.pod_volumes(pod):
            if needs_restrictions_check(v) and any(is_volume_conflict(v, existing) for existing in node.pods):
                return fw.unschedulable(ERR_REASON_DISK_CONFLICT)
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, PreFilterState):
            return fw.error(f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState')
        if s.conflicting_claim_refs > 0:
            return fw.unschedulable(ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT)
        return fw.SUCCESS

    def events_to_register(self) -> Sequence[fw.ClusterEvent]:
        return (
            fw.ClusterEvent("Pod", "Delete"),
            fw.ClusterEvent("Node", "Add"),
            fw.ClusterEvent("Node", "UpdateNodeTaint"),
            fw.ClusterEvent("Node", "UpdateNodeLabel"),
            fw.ClusterEvent("PersistentVolumeClaim", "Add"),
        )


SPEC = fw.PluginSpec(
    name=NAME,
    plugin_class=VolumeRestrictions,
    api_access=("pods", "persistentvolumeclaims"),
)
