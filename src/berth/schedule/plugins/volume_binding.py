"""VolumeBinding (PreFilter, Filter, PreScore, Score, Reserve, PreBind): PVCs, PVs and where they can be used.

Upstream ``volumebinding`` at the level a simulation can honour:

- PreFilter: a pod without PVC-backed volumes (``persistentVolumeClaim`` or generic ``ephemeral``) is skipped.
  Otherwise every claim must exist (``persistentvolumeclaim "<name>" not found``; for an ephemeral volume
  ``waiting for ephemeral volume controller to create the persistentvolumeclaim "<name>"``), not be Lost or being
  deleted, and an ephemeral claim must be owned by the pod -- each UnschedulableAndUnresolvable with upstream's text.
  Claims are sorted into bound (``spec.volumeName`` + bind-completed), unbound WaitForFirstConsumer and unbound
  immediate ones; any unbound immediate claim (no class, an unknown class, or an Immediate class) rejects the pod:
  ``pod has unbound immediate PersistentVolumeClaims``. Bound PVs pinned by ``kubernetes.io/hostname In`` narrow the
  nodes (PreFilterResult).
- Filter, per node (all reasons UnschedulableAndUnresolvable, in upstream's order): a bound PV whose node affinity
  rejects the node -> ``node(s) didn't match PersistentVolume's node affinity``; a WaitForFirstConsumer claim whose
  selected-node annotation names another node, or with no matching PV and no way to provision on this node
  (no provisioner / ``kubernetes.io/no-provisioner``, or ``allowedTopologies`` exclude the node) ->
  ``node(s) didn't find available persistent volumes to bind``; CSIStorageCapacity too small for a driver that
  opted into capacity tracking -> ``node(s) did not have enough free storage``; a bound claim whose PV is missing ->
  ``node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)``. Matching a claim to a PV follows
  ``FindMatchingVolume``: a PV pre-bound to the claim wins; else the smallest Available PV of the claim's class with
  enough capacity, the same volume mode and attributes class, the claim's selector, node affinity matching the node
  and every access mode of the claim. Claims are matched smallest request first; one PV per claim.
- Reserve assumes the choice in the shared assume cache (:mod:`berth.schedule.plugins.volumes`): the PV gets the
  claim's ``claimRef``, a provisioned claim gets ``volume.kubernetes.io/selected-node``; Unreserve reverts it.
  PreBind (simulation) completes the binding as the PV controller and a provisioner would: PV and claim Bound; a
  provisioned claim gets a PV ``pvc-<claim uid>`` whose node affinity holds the selected node's values of the
  driver's CSINode ``topologyKeys``. Later pods therefore see bound claims and can never take the same PV.
- PreScore/Score: upstream scores only with the alpha ``StorageCapacityScoring`` gate (``shape`` is rejected below
  as upstream rejects it with the gate off), so PreScore always skips.

Live: a handle with a ``volume_writer`` (:class:`berth.schedule.framework.listers.VolumeWriter`) gets the PV and
claim updates in PreBind instead of the simulated completion (upstream ``bindAPIUpdate``); a failed write is an
Error ``binding volumes: ...``.

Not modelled: in-tree to CSI translation of PVs for node affinity (``tryTranslatePVToCSI``), the wait of up to
``bindTimeoutSeconds`` for the PV controller (a simulated binding completes at once; live, berth does not wait).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from berth.kube import objects, selectors
from berth.schedule.framework import interface as fw
from berth.schedule.framework.listers import VolumeWriter
from berth.schedule.framework.types import NodeInfo, PodInfo
from berth.schedule.plugins import helper
from berth.schedule.plugins import volumes as vol

NAME = "VolumeBinding"
ARGS_KIND = "VolumeBindingArgs"
DEFAULT_BIND_TIMEOUT_SECONDS = 600
STATE_KEY = NAME

# Reasons (upstream ``volumebinding`` ConflictReasons and PreFilter texts).
ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
# Wording of current releases, as observed on 1.34+ clusters (older: "node(s) had volume node affinity conflict").
ERR_REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
ERR_REASON_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"


@dataclass(frozen=True)
class VolumeBindingArgs:
    bind_timeout_seconds: int = DEFAULT_BIND_TIMEOUT_SECONDS
    shape: tuple[tuple[int, int], ...] | None = None

    @classmethod
    def decode(cls, raw: Mapping[str, Any] | None, path: str) -> tuple[VolumeBindingArgs, list[str]]:
        problems: list[str] = []
        r = helper.ArgsReader(raw, path, problems, ARGS_KIND)
        timeout = r.get_int("bindTimeoutSeconds", DEFAULT_BIND_TIMEOUT_SECONDS)
        shape_raw = r.get_list("shape")
        r.finish()
        shape = helper.decode_shape(shape_raw, r.at("shape"), problems) if shape_raw is not None else None
        if timeout < 0:
            problems.append(
                helper.invalid(
                    r.at("bindTimeoutSeconds"),
                    timeout,
                    "invalid BindTimeoutSeconds, should not be a negative value",
                )
            )
        if shape is not None:
            problems.append(
                f"{r.at('shape')}: Invalid value: {helper.go_shape_value(shape)}: unexpected field `shape`, remove it "
                "or turn on the feature gate StorageCapacityScoring"
            )
        return cls(timeout, shape), problems

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"bindTimeoutSeconds": self.bind_timeout_seconds}
        if self.shape is not None:
            out["shape"] = helper.shape_to_list(self.shape)
        return out


@dataclass
class PodVolumes:
    """What one node needs for the pod: static (claim, PV) bindings and claims to provision."""

    static_bindings: list[tuple[vol.Obj, vol.Obj]] = field(default_factory=list)  # (pvc, pv)
    dynamic_provisions: list[vol.Obj] = field(default_factory=list)


@dataclass
class _State:
    bound: list[vol.Obj] = field(default_factory=list)
    delay: list[vol.Obj] = field(default_factory=list)
    pvs_by_class: dict[str, list[vol.Obj]] = field(default_factory=dict)
    by_node: dict[str, PodVolumes] = field(default_factory=dict)
    all_bound: bool = True

    def clone(self) -> _State:
        return self  # upstream shares the same state data between clones too


_NO_CLAIMS = _State()  # shared by every pod without claims; never written to (its Filter is skipped)


def _claim_key(pvc: vol.Obj) -> str:
    return f"{vol.meta(pvc).get('namespace') or 'default'}/{vol.name_of(pvc)}"


def _pvc_status_error(pvc: vol.Obj) -> str | None:
    if (pvc.get("status") or {}).get("phase") == "Lost":
        return (
            f'persistentvolumeclaim "{vol.name_of(pvc)}" bound to non-existent persistentvolume '
            f'"{vol.spec(pvc).get("volumeName") or ""}"'
        )
    if vol.meta(pvc).get("deletionTimestamp"):
        return f'persistentvolumeclaim "{vol.name_of(pvc)}" is being deleted'
    return None


def is_volume_bound_to_claim(pv: vol.Obj, pvc: vol.Obj) -> bool:
    """Upstream ``IsVolumeBoundToClaim``: the PV's claimRef names this claim (and its uid, when set)."""
    ref = vol.spec(pv).get("claimRef")
    if not isinstance(ref, Mapping):
        return False
    pm = vol.meta(pvc)
    if ref.get("name") != pm.get("name") or str(ref.get("namespace") or "") != str(
        pm.get("namespace") or "default"
    ):
        return False
    uid = str(ref.get("uid") or "")
    return not uid or uid == str(pm.get("uid") or "")


def find_matching_volume(
    pvc: vol.Obj,
    claim_class: str,
    pvs: Sequence[vol.Obj],
    node_labels: Mapping[str, str],
    excluded: set[str],
) -> vol.Obj | None:
    """Upstream ``FindMatchingVolume`` on the scheduler path (a node is given, delayed binding)."""
    cs = vol.spec(pvc)
    claim_vac = str(cs.get("volumeAttributesClassName") or "")
    requested = vol.storage_request(pvc) or 0
    claim_mode = str(cs.get("volumeMode") or "Filesystem")
    sel_raw = cs.get("selector")
    selector = selectors.from_label_selector(sel_raw) if isinstance(sel_raw, Mapping) else None
    wanted_modes = vol.access_modes(pvc)
    smallest: vol.Obj | None = None
    smallest_qty = 0
    for pv in pvs:
        name = vol.name_of(pv)
        if name in excluded:
            continue
        ps = vol.spec(pv)
        if isinstance(ps.get("claimRef"), Mapping) and not is_volume_bound_to_claim(pv, pvc):
            continue
        qty = vol.pv_capacity(pv)
        if qty < requested:
            continue
        if str(ps.get("volumeMode") or "Filesystem") != claim_mode:
            continue
        if claim_vac and claim_vac != str(ps.get("volumeAttributesClassName") or ""):
            continue
        if vol.meta(pv).get("deletionTimestamp"):
            continue
        affinity_ok = vol.pv_node_affinity_matches(pv, node_labels)
        if is_volume_bound_to_claim(pv, pvc):
            return pv if affinity_ok else None
        # A PV written without status is one the PV controller would have made Available at once.
        if str((pv.get("status") or {}).get("phase") or "Available") != "Available":
            continue
        if selector is not None and not selector.matches(vol.labels(pv)):
            continue
        if vol.pv_class(pv) != claim_class:
            continue
        if not affinity_ok:
            continue
        pv_modes = set(vol.access_modes(pv))
        if any(m not in pv_modes for m in wanted_modes):
            continue
        if smallest is None or smallest_qty > qty:
            smallest, smallest_qty = pv, qty
    return smallest


class VolumeBinding(
    fw.PreFilterPlugin, fw.FilterPlugin, fw.PreScorePlugin, fw.ScorePlugin, fw.ReservePlugin, fw.PreBindPlugin
):
    NAME = NAME

    # --- PreFilter ------------------------------------------------------------------------------------------------

    def pre_filter(
        self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[fw.PreFilterResult | None, fw.Status]:
        refs = vol.claim_refs(pod) if vol.has_volumes(pod) else ()
        if not refs:
            state.write(STATE_KEY, _NO_CLAIMS)
            return None, vol.SKIP
        v = vol.Volumes(self.handle)
        claims: list[vol.Obj] = []
        for claim_name, ephemeral in refs:  # upstream podHasPVCs
            pvc = v.pvc(pod.namespace, claim_name)
            if pvc is None:
                if ephemeral:
                    return None, fw.unresolvable(
                        f'waiting for ephemeral volume controller to create the persistentvolumeclaim "{claim_name}"'
                    )
                return None, fw.unresolvable(vol.not_found(vol.PVC, claim_name))
            problem = _pvc_status_error(pvc)
            if problem is None and ephemeral:
                problem = vol.volume_is_for_pod(pod, pvc)
            if problem is not None:
                return None, fw.unresolvable(problem)
            claims.append(pvc)
        s = _State()
        immediate = 0
        for pvc in claims:  # upstream GetPodVolumeClaims
            if vol.is_fully_bound(pvc):
                s.bound.append(pvc)
                continue
            cls = v.claim_class(pvc)
            sc = v.storage_class(cls) if cls else None
            delay = sc is not None and vol.binding_mode(sc) == vol.WAIT_FOR_FIRST_CONSUMER
            if delay and not vol.spec(pvc).get("volumeName"):
                s.delay.append(pvc)
            else:
                immediate += 1  # prebound claims count as immediate too
        if immediate:
            return None, fw.unresolvable(ERR_REASON_UNBOUND_IMMEDIATE)
        if s.delay:
            all_pvs = sorted(v.pvs(), key=vol.name_of)
            for pvc in s.delay:
                cls = v.claim_class(pvc)
                if cls not in s.pvs_by_class:
                    s.pvs_by_class[cls] = [pv for pv in all_pvs if vol.pv_class(pv) == cls]
        state.write(STATE_KEY, s)
        eligible = self._eligible_nodes(v, s.bound)
        return (fw.PreFilterResult(frozenset(eligible)) if eligible is not None else None), fw.SUCCESS

    @staticmethod
    def _eligible_nodes(v: vol.Volumes, bound: Sequence[vol.Obj]) -> set[str] | None:
        """Upstream ``GetEligibleNodes``: the intersection of the hostnames local bound PVs are pinned to."""
        eligible: set[str] | None = None
        for pvc in bound:
            pv = v.pv(str(vol.spec(pvc).get("volumeName") or ""))
            if pv is None:
                continue
            names = vol.local_pv_node_names(pv)
            if names:
                eligible = set(names) if eligible is None else eligible & names
        return eligible

    # --- Filter ---------------------------------------------------------------------------------------------------

    def filter(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo) -> fw.Status:
        s = state.get(STATE_KEY)
        if not isinstance(s, _State):
            return fw.error(f'reading "{STATE_KEY}" from cycleState: not found')
        if s is _NO_CLAIMS:  # a caller that ignored the PreFilter Skip: nothing to check, nothing to record
            return fw.SUCCESS
        v = vol.Volumes(self.handle)
        try:
            pod_volumes, reasons = self._find_pod_volumes(v, s, node)
        except _BinderError as exc:
            return fw.error(str(exc))
        if reasons:
            return fw.unresolvable(*reasons)
        s.by_node[node.name] = pod_volumes
        return fw.SUCCESS

    def _find_pod_volumes(self, v: vol.Volumes, s: _State, node: NodeInfo) -> tuple[PodVolumes, list[str]]:
        """Upstream ``FindPodVolumes``: the node's PodVolumes and its conflict reasons, in upstream's order."""
        out = PodVolumes()
        bound_ok = unbound_ok = enough_space = pvs_found = True

        def reasons() -> list[str]:
            r: list[str] = []
            if not bound_ok:
                r.append(ERR_REASON_NODE_CONFLICT)
            if not unbound_ok:
                r.append(ERR_REASON_BIND_CONFLICT)
            if not enough_space:
                r.append(ERR_REASON_NOT_ENOUGH_SPACE)
            if not pvs_found:
                r.append(ERR_REASON_PV_NOT_EXIST)
            return r

        for pvc in s.bound:  # checkBoundClaims
            pv = v.pv(str(vol.spec(pvc).get("volumeName") or ""))
            if pv is None:
                pvs_found = False
                break
            if not vol.pv_node_affinity_matches(pv, node.labels):
                bound_ok = False
                break
        if s.delay:
            to_provision: list[vol.Obj] = []
            to_match: list[vol.Obj] = []
            for pvc in s.delay:
                selected = vol.annotations_of(pvc).get(vol.ANN_SELECTED_NODE)
                if selected is not None:
                    if str(selected) != node.name:
                        unbound_ok = False
                        return out, reasons()
                    to_provision.append(pvc)
                else:
                    to_match.append(pvc)
            if to_match:
                unbound_ok, unmatched = self._find_matching(v, s, to_match, node, out)
                to_provision.extend(unmatched)
            if to_provision:
                unbound_ok, enough_space = self._check_provisions(v, to_provision, node, out)
        return out, reasons()

    @staticmethod
    def _find_matching(
        v: vol.Volumes, s: _State, claims: Sequence[vol.Obj], node: NodeInfo, out: PodVolumes
    ) -> tuple[bool, list[vol.Obj]]:
        chosen: set[str] = set()
        found = True
        unmatched: list[vol.Obj] = []
        for pvc in sorted(claims, key=lambda c: vol.storage_request(c) or 0):
            cls = v.claim_class(pvc)
            pv = find_matching_volume(pvc, cls, s.pvs_by_class.get(cls, ()), node.labels, chosen)
            if pv is None:
                unmatched.append(pvc)
                found = False
                continue
            chosen.add(vol.name_of(pv))
            out.static_bindings.append((pvc, pv))
        return found, unmatched

    @staticmethod
    def _check_provisions(
        v: vol.Volumes, claims: Sequence[vol.Obj], node: NodeInfo, out: PodVolumes
    ) -> tuple[bool, bool]:
        """Upstream ``checkVolumeProvisions``: (provisioning possible, enough storage)."""
        for pvc in claims:
            cls = v.claim_class(pvc)
            if not cls:
                raise _BinderError(f'no class for claim "{_claim_key(pvc)}"')
            sc = v.storage_class(cls)
            if sc is None:
                raise _BinderError(f'failed to find storage class "{cls}"')
            provisioner = str(sc.get("provisioner") or "")
            if not provisioner or provisioner == vol.NOT_SUPPORTED_PROVISIONER:
                return False, True
            if not vol.topology_terms_match(sc.get("allowedTopologies"), node.labels):
                return False, True
            if not _has_enough_capacity(v, provisioner, pvc, cls, node):
                return True, False
            out.dynamic_provisions.append(pvc)
        return True, True

    # --- PreScore / Score (StorageCapacityScoring is alpha and off) ----------------------------------------------

    def pre_score(self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> fw.Status:
        return vol.SKIP

    def score(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, fw.Status]:
        return 0, fw.SUCCESS

    # --- Reserve / Unreserve / PreBind ----------------------------------------------------------------------------

    def reserve(self, state: fw.CycleState, pod: PodInfo, node_name: str) -> fw.Status:
        s = state.get(STATE_KEY)
        if not isinstance(s, _State):
            return fw.error(f'reading "{STATE_KEY}" from cycleState: not found')
        if s is _NO_CLAIMS:
            return fw.SUCCESS
        pod_volumes = s.by_node.get(node_name)
        if pod_volumes is None or (not pod_volumes.static_bindings and not pod_volumes.dynamic_provisions):
            s.all_bound = True  # all of the pod's claims are bound
            return fw.SUCCESS
        v = vol.Volumes(self.handle)
        assumed_bindings: list[tuple[vol.Obj, vol.Obj]] = []
        for pvc, pv in pod_volumes.static_bindings:
            new_pv = _bind_volume_to_claim(pv, pvc)
            if new_pv is not pv:
                v.cache.assume_pv(v.objects, new_pv)
            assumed_bindings.append((pvc, new_pv))
        assumed_claims: list[vol.Obj] = []
        for pvc in pod_volumes.dynamic_provisions:
            clone = copy.deepcopy(dict(pvc))
            clone.setdefault("metadata", {}).setdefault("annotations", {})[vol.ANN_SELECTED_NODE] = node_name
            v.cache.assume_pvc(v.objects, clone)
            assumed_claims.append(clone)
        pod_volumes.static_bindings = assumed_bindings
        pod_volumes.dynamic_provisions = assumed_claims
        s.all_bound = False
        return fw.SUCCESS

    def unreserve(self, state: fw.CycleState, pod: PodInfo, node_name: str) -> None:
        s = state.get(STATE_KEY)
        if not isinstance(s, _State):
            return
        pod_volumes = s.by_node.get(node_name)
        if pod_volumes is None:
            return
        cache = vol.Volumes(self.handle).cache
        for _pvc, pv in pod_volumes.static_bindings:
            cache.restore_pv(vol.name_of(pv))
        for pvc in pod_volumes.dynamic_provisions:
            cache.restore_pvc(_claim_key(pvc))

    def pre_bind(self, state: fw.CycleState, pod: PodInfo, node_name: str) -> fw.Status:
        s = state.get(STATE_KEY)
        if not isinstance(s, _State):
            return fw.error(f'reading "{STATE_KEY}" from cycleState: not found')
        if s.all_bound:
            return fw.SUCCESS
        pod_volumes = s.by_node.get(node_name)
        if pod_volumes is None:
            return fw.error(f'no pod volumes found for node "{node_name}"')
        writer = self.handle.volume_writer
        if writer is not None:
            return self._write_bindings(writer, pod_volumes)
        v = vol.Volumes(self.handle)
        for pvc, pv in pod_volumes.static_bindings:
            _complete_binding(v, pvc, pv)
        if pod_volumes.dynamic_provisions:
            node = self.handle.snapshot().get(node_name)
            node_labels = node.labels if node is not None else {}
            for pvc in pod_volumes.dynamic_provisions:
                _complete_binding(v, pvc, _provisioned_pv(v, pvc, node_name, node_labels))
        # The bindings are now what the API would hold: a later Unreserve (a failed Bind) must not undo them,
        # just as upstream's revert cannot undo API writes.
        pod_volumes.static_bindings = []
        pod_volumes.dynamic_provisions = []
        s.all_bound = True
        return fw.SUCCESS

    @staticmethod
    def _write_bindings(writer: VolumeWriter, pod_volumes: PodVolumes) -> fw.Status:
        """Live: upstream ``bindAPIUpdate`` -- the PVs with their claimRef, then the claims to provision with their
        selected node. The PV controller and the provisioner finish the binding; the informers bring the result
        back (a newer resourceVersion replaces the assumptions). Upstream then waits up to ``bindTimeoutSeconds``
        for that; berth does not hold the binding cycle (the kubelet waits for the volumes anyway)."""
        try:
            for _pvc, pv in pod_volumes.static_bindings:
                writer.update(pv)
            for pvc in pod_volumes.dynamic_provisions:
                writer.update(pvc)
        except Exception as exc:  # the writer's API error: the binding cycle fails, Unreserve reverts
            return fw.error(f"binding volumes: {exc}")
        return fw.SUCCESS

    def events_to_register(self) -> Sequence[fw.ClusterEvent]:
        return (
            fw.ClusterEvent("StorageClass", "Add"),
            fw.ClusterEvent("StorageClass", "Update"),
            fw.ClusterEvent("PersistentVolumeClaim", "Add"),
            fw.ClusterEvent("PersistentVolumeClaim", "Update"),
            fw.ClusterEvent("PersistentVolume", "Add"),
            fw.ClusterEvent("PersistentVolume", "Update"),
            fw.ClusterEvent("Node", "Add"),
            fw.ClusterEvent("Node", "UpdateNodeLabel"),
            fw.ClusterEvent("Node", "UpdateNodeTaint"),
            fw.ClusterEvent("CSINode", "Add"),
            fw.ClusterEvent("CSINode", "Update"),
            fw.ClusterEvent("CSIDriver", "Update"),
            fw.ClusterEvent("CSIStorageCapacity", "Add"),
            fw.ClusterEvent("CSIStorageCapacity", "Update"),
        )


class _BinderError(Exception):
    """An upstream binder error: the Filter returns it as an Error status."""


def _has_enough_capacity(
    v: vol.Volumes, provisioner: str, pvc: vol.Obj, class_name: str, node: NodeInfo
) -> bool:
    """Upstream ``hasEnoughCapacity``: only CSI drivers with ``spec.storageCapacity: true`` are checked, against
    CSIStorageCapacity objects of the class whose ``nodeTopology`` selects the node."""
    size = vol.storage_request(pvc)
    if size is None:
        return True
    driver = v.csi_driver(provisioner)
    if driver is None or vol.spec(driver).get("storageCapacity") is not True:
        return True
    for cap in v.list(vol.CSI_STORAGE_CAPACITY):
        if str(cap.get("storageClassName") or "") != class_name:
            continue
        limit_raw = (
            cap.get("maximumVolumeSize") if cap.get("maximumVolumeSize") is not None else cap.get("capacity")
        )
        limit = vol._bytes(limit_raw)
        if limit is None or limit < size:
            continue
        topology = cap.get("nodeTopology")
        if isinstance(topology, Mapping) and selectors.label_selector_matches(topology, node.labels):
            return True
    return False


def _bind_volume_to_claim(pv: vol.Obj, pvc: vol.Obj) -> vol.Obj:
    """Upstream ``GetBindVolumeToClaim``: a copy of the PV whose claimRef names the claim (the same object when it
    already does)."""
    if is_volume_bound_to_claim(pv, pvc):
        return pv
    new = copy.deepcopy(dict(pv))
    new.setdefault("spec", {})["claimRef"] = objects.object_reference(pvc, "PersistentVolumeClaim")
    new.setdefault("metadata", {}).setdefault("annotations", {})[vol.ANN_BOUND_BY_CONTROLLER] = "yes"
    return new


def _complete_binding(v: vol.Volumes, pvc: vol.Obj, pv: vol.Obj) -> None:
    """What the PV controller does once the scheduler's choice is written: both objects Bound to each other."""
    new_pv = copy.deepcopy(dict(_bind_volume_to_claim(pv, pvc)))
    new_pv["status"] = {**(new_pv.get("status") or {}), "phase": "Bound"}
    v.cache.assume_pv(v.objects, new_pv)
    new_pvc = copy.deepcopy(dict(pvc))
    new_pvc.setdefault("spec", {})["volumeName"] = vol.name_of(new_pv)
    new_pvc.setdefault("metadata", {}).setdefault("annotations", {})[vol.ANN_BIND_COMPLETED] = "yes"
    new_pvc["status"] = {
        **(new_pvc.get("status") or {}),
        "phase": "Bound",
        "accessModes": vol.access_modes(new_pv),
        "capacity": dict(vol.spec(new_pv).get("capacity") or {}),
    }
    v.cache.assume_pvc(v.objects, new_pvc)


def _provisioned_pv(v: vol.Volumes, pvc: vol.Obj, node_name: str, node_labels: Mapping[str, str]) -> vol.Obj:
    """The PV a provisioner would create for ``pvc`` on ``node_name`` (external-provisioner's shape: its node
    affinity pins the node's values of the driver's CSINode topology keys)."""
    pm = vol.meta(pvc)
    uid = str(pm.get("uid") or f"{pm.get('namespace') or 'default'}-{pm.get('name') or ''}")
    name = f"pvc-{uid}"
    cls = v.claim_class(pvc)
    sc = v.storage_class(cls) or {}
    provisioner = str(sc.get("provisioner") or "")
    size = (vol.spec(pvc).get("resources") or {}).get("requests", {}).get("storage")
    pv_spec: dict[str, Any] = {
        "capacity": {"storage": size} if size is not None else {},
        "accessModes": vol.access_modes(pvc),
        "storageClassName": cls,
        "persistentVolumeReclaimPolicy": str(sc.get("reclaimPolicy") or "Delete"),
        "volumeMode": str(vol.spec(pvc).get("volumeMode") or "Filesystem"),
        "csi": {"driver": provisioner, "volumeHandle": name},
    }
    keys: list[str] = []
    csi_node = v.csi_node(node_name)
    drivers = vol.spec(csi_node).get("drivers") or () if csi_node is not None else ()
    for d in drivers:
        if isinstance(d, Mapping) and d.get("name") == provisioner:
            keys = [str(k) for k in d.get("topologyKeys") or ()]
    exprs = [{"key": k, "operator": "In", "values": [node_labels[k]]} for k in keys if k in node_labels]
    if exprs:
        pv_spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": exprs}]}}
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name, "annotations": {"pv.kubernetes.io/provisioned-by": provisioner}},
        "spec": pv_spec,
        "status": {"phase": "Available"},
    }


SPEC = fw.PluginSpec(
    name=NAME,
    plugin_class=VolumeBinding,
    args_type=VolumeBindingArgs,
    api_access=(
        "persistentvolumes",
        "persistentvolumeclaims",
        "storageclasses",
        "csinodes",
        "csidrivers",  # storageCapacity: true opts a driver into capacity checks (upstream's csiDriverLister)
        "csistoragecapacities",
        # PreBind, live: the PV's claimRef and the claim's selected-node annotation (upstream bindAPIUpdate PUTs).
        "update:persistentvolumes",
        "update:persistentvolumeclaims",
    ),
)
