"""VolumeBinding: args, claim classification (PreFilter), per-node verdicts (Filter), and the simulated binding
(Reserve/Unreserve/PreBind) that keeps two pods from taking one PV. Builders here are shared by the other volume
plugin tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from berth.schedule.framework import interface as fw
from berth.schedule.framework.types import NodeInfo, PodInfo
from berth.schedule.plugins import volume_binding as vb
from berth.schedule.plugins import volumes

from .support import FakeHandle, node, pod

ZONE = volumes.LABEL_ZONE
HOST = volumes.LABEL_HOSTNAME

# --- builders ------------------------------------------------------------------------------------------------------


def pvc(
    name: str,
    *,
    ns: str = "default",
    sc: str | None = "wffc",
    volume_name: str = "",
    bound: bool = False,
    modes: Sequence[str] = ("ReadWriteOnce",),
    size: str | None = "1Gi",
    annotations: Mapping[str, str] | None = None,
    phase: str | None = None,
    uid: str = "",
    selector: Mapping[str, Any] | None = None,
    deleting: bool = False,
    owner_uid: str = "",
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": ns, "annotations": dict(annotations or {})}
    if uid:
        meta["uid"] = uid
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    if owner_uid:
        meta["ownerReferences"] = [{"kind": "Pod", "name": "x", "uid": owner_uid, "controller": True}]
    spec: dict[str, Any] = {"accessModes": list(modes)}
    if size is not None:
        spec["resources"] = {"requests": {"storage": size}}
    if sc is not None:
        spec["storageClassName"] = sc
    if volume_name:
        spec["volumeName"] = volume_name
    if selector is not None:
        spec["selector"] = dict(selector)
    obj: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": meta,
        "spec": spec,
    }
    if bound:
        meta["annotations"][volumes.ANN_BIND_COMPLETED] = "yes"
    if phase:
        obj["status"] = {"phase": phase}
    return obj


def pv(
    name: str,
    *,
    sc: str = "wffc",
    size: str = "1Gi",
    modes: Sequence[str] = ("ReadWriteOnce",),
    claim: tuple[str, str] | None = None,
    phase: str | None = "Available",
    zones: Sequence[str] | None = None,
    hostnames: Sequence[str] | None = None,
    labels: Mapping[str, str] | None = None,
    csi: tuple[str, str] | None = None,
    volume_mode: str | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {"capacity": {"storage": size}, "accessModes": list(modes), "storageClassName": sc}
    exprs = []
    if zones is not None:
        exprs.append({"key": ZONE, "operator": "In", "values": list(zones)})
    if hostnames is not None:
        exprs.append({"key": HOST, "operator": "In", "values": list(hostnames)})
    if exprs:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": exprs}]}}
    if claim is not None:
        spec["claimRef"] = {"namespace": claim[0], "name": claim[1]}
    if csi is not None:
        spec["csi"] = {"driver": csi[0], "volumeHandle": csi[1]}
    if volume_mode is not None:
        spec["volumeMode"] = volume_mode
    obj: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name, "labels": dict(labels or {})},
        "spec": spec,
    }
    if phase is not None:
        obj["status"] = {"phase": phase}
    return obj


def storage_class(
    name: str,
    *,
    mode: str | None = "WaitForFirstConsumer",
    provisioner: str = "csi.example.com",
    allowed_zones: Sequence[str] | None = None,
    default: bool = False,
) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": provisioner,
    }
    if mode is not None:
        obj["volumeBindingMode"] = mode
    if allowed_zones is not None:
        obj["allowedTopologies"] = [{"matchLabelExpressions": [{"key": ZONE, "values": list(allowed_zones)}]}]
    if default:
        obj["metadata"]["annotations"] = {volumes.ANN_DEFAULT_CLASS: "true"}
    return obj


def csi_node(
    name: str, drivers: Mapping[str, int | None], topology_keys: Sequence[str] = ()
) -> dict[str, Any]:
    ds = []
    for driver, count in drivers.items():
        d: dict[str, Any] = {"name": driver, "nodeID": name, "topologyKeys": list(topology_keys)}
        if count is not None:
            d["allocatable"] = {"count": count}
        ds.append(d)
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSINode",
        "metadata": {"name": name},
        "spec": {"drivers": ds},
    }


def vpod(
    name: str = "p",
    claims: Sequence[str] = (),
    *,
    ephemeral: Sequence[str] = (),
    extra: Sequence[Mapping[str, Any]] = (),
    uid: str = "",
    node_name: str = "",
) -> PodInfo:
    vols: list[dict[str, Any]] = [
        {"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(claims)
    ]
    vols += [{"name": e, "ephemeral": {"volumeClaimTemplate": {"spec": {}}}} for e in ephemeral]
    vols += [dict(v) for v in extra]
    p = pod(name, node_name=node_name, spec={"volumes": vols})
    if uid:
        p.pod["metadata"]["uid"] = uid
        p.uid = uid
    return p


def zone_node(name: str, zone: str | None = None, **labels: str) -> NodeInfo:
    lab = {HOST: name, **labels}
    if zone is not None:
        lab[ZONE] = zone
    return node(name, labels=lab)


VolumeHandle = FakeHandle


def prefilter_and_filter(
    plugin: fw.Plugin, p: PodInfo, nodes: Sequence[NodeInfo], state: fw.CycleState | None = None
) -> tuple[fw.PreFilterResult | None, fw.Status, dict[str, fw.Status]]:
    """PreFilter, then Filter on every node (none when PreFilter rejected or skipped)."""
    state = state if state is not None else fw.CycleState()
    assert isinstance(plugin, fw.PreFilterPlugin) and isinstance(plugin, fw.FilterPlugin)
    result, status = plugin.pre_filter(state, p, nodes)
    if not status.is_success:
        return result, status, {}
    return result, status, {n.name: plugin.filter(state, p, n) for n in nodes}


def verdicts(statuses: Mapping[str, fw.Status]) -> dict[str, str]:
    return {n: ("ok" if s.is_success else f"{s.code.name}: {s.message()}") for n, s in statuses.items()}


NODES = [zone_node("n1", "a"), zone_node("n2", "b"), zone_node("n3", "c")]
WFFC = storage_class("wffc")
NOPROV = storage_class("local", provisioner=volumes.NOT_SUPPORTED_PROVISIONER)

# --- args ------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "problems"),
    [
        (None, []),
        ({"bindTimeoutSeconds": 0}, []),
        (
            {"bindTimeoutSeconds": -1},
            [
                "a.bindTimeoutSeconds: Invalid value: -1: invalid BindTimeoutSeconds, should not be a negative value"
            ],
        ),
        (
            {"shape": [{"utilization": 0, "score": 0}]},
            [
                "a.shape: Invalid value: []config.UtilizationShapePoint{config.UtilizationShapePoint{Utilization:0, "
                "Score:0}}: unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring"
            ],
        ),
        (
            {"shape": [{"utilization": 0, "scor": 0}]},
            [
                'a.shape[0]: unknown field "scor"',
                "a.shape: Invalid value: []config.UtilizationShapePoint{config.UtilizationShapePoint{Utilization:0, "
                "Score:0}}: unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring",
            ],
        ),
        ({"bindTimeout": 5}, ['a: unknown field "bindTimeout"']),
    ],
    ids=["defaults", "zero", "negative", "shape-needs-gate", "shape-shape", "unknown"],
)
def test_args(raw: dict[str, Any] | None, problems: list[str]) -> None:
    assert vb.VolumeBindingArgs.decode(raw, "a")[1] == problems


def test_defaults() -> None:
    assert vb.VolumeBindingArgs.decode(None, "a")[0].to_dict() == {"bindTimeoutSeconds": 600}


def test_spec_is_active_at_upstream_points() -> None:
    assert vb.SPEC.active is True
    assert vb.SPEC.points == {"preFilter", "filter", "preScore", "score", "reserve", "preBind"}


# --- PreFilter -------------------------------------------------------------------------------------------------------

UNRESOLVABLE = fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE


@pytest.mark.parametrize(
    ("p", "objects", "message"),
    [
        (vpod(claims=["data"]), [], 'persistentvolumeclaim "data" not found'),
        (
            vpod("web", ephemeral=["scratch"]),
            [],
            'waiting for ephemeral volume controller to create the persistentvolumeclaim "web-scratch"',
        ),
        (
            vpod("web", ephemeral=["scratch"], uid="u1"),
            [pvc("web-scratch", owner_uid="other")],
            "PVC default/web-scratch was not created for pod default/web (pod is not owner)",
        ),
        (
            vpod(claims=["data"]),
            [pvc("data", volume_name="gone", phase="Lost")],
            'persistentvolumeclaim "data" bound to non-existent persistentvolume "gone"',
        ),
        (
            vpod(claims=["data"]),
            [pvc("data", deleting=True)],
            'persistentvolumeclaim "data" is being deleted',
        ),
        (vpod(claims=["data"]), [pvc("data", sc=None)], vb.ERR_REASON_UNBOUND_IMMEDIATE),
        (vpod(claims=["data"]), [pvc("data", sc="nope")], vb.ERR_REASON_UNBOUND_IMMEDIATE),
        (
            vpod(claims=["data"]),
            [pvc("data", sc="fast"), storage_class("fast", mode="Immediate")],
            vb.ERR_REASON_UNBOUND_IMMEDIATE,
        ),
        (
            vpod(claims=["data"]),
            [pvc("data", sc="fast"), storage_class("fast", mode=None)],
            vb.ERR_REASON_UNBOUND_IMMEDIATE,
        ),
        (
            vpod(claims=["data"]),
            [pvc("data", volume_name="pv1"), WFFC, pv("pv1")],
            vb.ERR_REASON_UNBOUND_IMMEDIATE,
        ),
    ],
    ids=[
        "missing-claim",
        "ephemeral-not-created",
        "ephemeral-not-owned",
        "claim-lost",
        "claim-deleting",
        "no-class-unbound",
        "unknown-class",
        "immediate-class-unbound",
        "class-without-mode-defaults-immediate",
        "prebound-not-complete",
    ],
)
def test_pre_filter_rejects(p: PodInfo, objects: list[dict[str, Any]], message: str) -> None:
    plugin = vb.SPEC.new(None, VolumeHandle(NODES, objects))
    _, status, _ = prefilter_and_filter(plugin, p, NODES)
    assert status.code is UNRESOLVABLE
    assert status.message() == message


def test_pod_without_claims_is_skipped_and_reserve_is_a_no_op() -> None:
    plugin = vb.SPEC.new(None, VolumeHandle(NODES))
    state = fw.CycleState()
    p = vpod(extra=[{"name": "tmp", "emptyDir": {}}])
    assert isinstance(plugin, vb.VolumeBinding)
    assert plugin.pre_filter(state, p, NODES)[1].is_skip
    assert plugin.reserve(state, p, "n1").is_success
    assert plugin.pre_bind(state, p, "n1").is_success
    assert plugin.pre_score(state, p, NODES).is_skip
    assert plugin.filter(state, p, NODES[0]).is_success  # even if called despite the Skip
    assert state.read(vb.STATE_KEY).by_node == {}


def test_handle_without_objects_reports_missing_claim() -> None:
    plugin = vb.SPEC.new(None, FakeHandle(NODES))
    _, status, _ = prefilter_and_filter(plugin, vpod(claims=["data"]), NODES)
    assert status.message() == 'persistentvolumeclaim "data" not found'


def test_bound_local_pvs_narrow_nodes_to_their_hostnames() -> None:
    objects = [
        pvc("a", volume_name="pv-a", bound=True),
        pvc("b", volume_name="pv-b", phase="Bound"),
        pv("pv-a", hostnames=["n1", "n2"], claim=("default", "a"), phase="Bound"),
        pv("pv-b", hostnames=["n2", "n3"], claim=("default", "b"), phase="Bound"),
    ]
    plugin = vb.SPEC.new(None, VolumeHandle(NODES, objects))
    result, status, filtered = prefilter_and_filter(plugin, vpod(claims=["a", "b"]), NODES)
    assert status.is_success
    assert result == fw.PreFilterResult(frozenset({"n2"}))
    assert verdicts(filtered) == {
        "n1": f"UNSCHEDULABLE_AND_UNRESOLVABLE: {vb.ERR_REASON_NODE_CONFLICT}",
        "n2": "ok",
        "n3": f"UNSCHEDULABLE_AND_UNRESOLVABLE: {vb.ERR_REASON_NODE_CONFLICT}",
    }


# --- Filter ------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("objects", "expected"),
    [
        (
            [pvc("data", volume_name="pv1", bound=True), pv("pv1", zones=["b"], claim=("default", "data"))],
            {"n1": vb.ERR_REASON_NODE_CONFLICT, "n2": "ok", "n3": vb.ERR_REASON_NODE_CONFLICT},
        ),
        (
            [pvc("data", volume_name="pv1", bound=True)],
            {n: vb.ERR_REASON_PV_NOT_EXIST for n in ("n1", "n2", "n3")},
        ),
        (
            [
                pvc("data", sc="local"),
                NOPROV,
                pv("pv1", sc="local", zones=["a"]),
                pv("pv2", sc="local", zones=["c"]),
            ],
            {"n1": "ok", "n2": vb.ERR_REASON_BIND_CONFLICT, "n3": "ok"},
        ),
        (
            [pvc("data", sc="local", size="5Gi"), NOPROV, pv("pv1", sc="local", size="2Gi")],
            {n: vb.ERR_REASON_BIND_CONFLICT for n in ("n1", "n2", "n3")},
        ),
        (
            [pvc("data", sc="local", modes=["ReadWriteMany"]), NOPROV, pv("pv1", sc="local")],
            {n: vb.ERR_REASON_BIND_CONFLICT for n in ("n1", "n2", "n3")},
        ),
        (
            [pvc("data", sc="local"), NOPROV, pv("pv1", sc="other")],
            {n: vb.ERR_REASON_BIND_CONFLICT for n in ("n1", "n2", "n3")},
        ),
        (
            [pvc("data", sc="local"), NOPROV, pv("pv1", sc="local", volume_mode="Block")],
            {n: vb.ERR_REASON_BIND_CONFLICT for n in ("n1", "n2", "n3")},
        ),
        (
            [pvc("data", sc="local"), NOPROV, pv("pv1", sc="local", phase="Released")],
            {n: vb.ERR_REASON_BIND_CONFLICT for n in ("n1", "n2", "n3")},
        ),
        (
            [pvc("data", sc="local"), NOPROV, pv("pv1", sc="local", claim=("default", "someone-else"))],
            {n: vb.ERR_REASON_BIND_CONFLICT for n in ("n1", "n2", "n3")},
        ),
        (
            [
                pvc("data", sc="local", selector={"matchLabels": {"tier": "gold"}}),
                NOPROV,
                pv("pv1", sc="local", zones=["a"], labels={"tier": "silver"}),
                pv("pv2", sc="local", zones=["b"], labels={"tier": "gold"}),
            ],
            {"n1": vb.ERR_REASON_BIND_CONFLICT, "n2": "ok", "n3": vb.ERR_REASON_BIND_CONFLICT},
        ),
        (
            [pvc("data", sc="local"), NOPROV, pv("pv1", sc="local", phase=None)],
            {"n1": "ok", "n2": "ok", "n3": "ok"},
        ),
        (
            [pvc("data"), storage_class("wffc", allowed_zones=["a", "c"])],
            {"n1": "ok", "n2": vb.ERR_REASON_BIND_CONFLICT, "n3": "ok"},
        ),
        (
            [pvc("data", annotations={volumes.ANN_SELECTED_NODE: "n3"}), WFFC],
            {"n1": vb.ERR_REASON_BIND_CONFLICT, "n2": vb.ERR_REASON_BIND_CONFLICT, "n3": "ok"},
        ),
        (
            [pvc("data", sc="wffc", size="10Gi"), WFFC, pv("small", size="1Gi", zones=["a"])],
            {"n1": "ok", "n2": "ok", "n3": "ok"},
        ),
        (
            [pvc("data", sc=None), storage_class("wffc", default=True), pv("pv1", zones=["b"])],
            {"n1": "ok", "n2": "ok", "n3": "ok"},
        ),
    ],
    ids=[
        "bound-pv-zone-affinity",
        "bound-pv-missing",
        "static-pv-by-node-affinity",
        "static-pv-too-small",
        "static-pv-access-modes",
        "static-pv-other-class",
        "static-pv-volume-mode",
        "static-pv-not-available",
        "static-pv-claimed-by-other",
        "static-pv-claim-selector",
        "static-pv-without-status-is-available",
        "provisioning-allowed-topologies",
        "selected-node-fast-path",
        "falls-back-to-provisioning",
        "default-class-applies",
    ],
)
def test_filter(objects: list[dict[str, Any]], expected: dict[str, str]) -> None:
    plugin = vb.SPEC.new(None, VolumeHandle(NODES, objects))
    _, status, filtered = prefilter_and_filter(plugin, vpod(claims=["data"]), NODES)
    assert status.is_success, status
    assert {n: (s.message() if not s.is_success else "ok") for n, s in filtered.items()} == expected
    assert all(s.is_success or s.code is UNRESOLVABLE for s in filtered.values())


def test_reasons_come_in_upstream_order() -> None:
    objects = [
        pvc("bound", volume_name="pv-z", bound=True),
        pv("pv-z", zones=["b"], claim=("default", "bound")),
        pvc("late", sc="local"),
        NOPROV,
    ]
    plugin = vb.SPEC.new(None, VolumeHandle(NODES, objects))
    _, _, filtered = prefilter_and_filter(plugin, vpod(claims=["bound", "late"]), NODES)
    assert filtered["n1"].reasons == (vb.ERR_REASON_NODE_CONFLICT, vb.ERR_REASON_BIND_CONFLICT)
    assert filtered["n2"].reasons == (vb.ERR_REASON_BIND_CONFLICT,)


def test_smallest_matching_pv_is_chosen_and_claims_take_distinct_pvs() -> None:
    objects = [
        pvc("small", sc="local", size="1Gi"),
        pvc("big", sc="local", size="3Gi"),
        NOPROV,
        pv("pv-10g", sc="local", size="10Gi"),
        pv("pv-2g", sc="local", size="2Gi"),
        pv("pv-4g", sc="local", size="4Gi"),
    ]
    plugin = vb.SPEC.new(None, VolumeHandle(NODES, objects))
    state = fw.CycleState()
    _, status, filtered = prefilter_and_filter(plugin, vpod(claims=["big", "small"]), NODES, state)
    assert status.is_success and filtered["n1"].is_success
    chosen = {
        volumes.name_of(c): volumes.name_of(p)
        for c, p in state.read(vb.STATE_KEY).by_node["n1"].static_bindings
    }
    assert chosen == {"small": "pv-2g", "big": "pv-4g"}


def test_storage_capacity_tracking() -> None:
    driver = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIDriver",
        "metadata": {"name": "csi.example.com"},
        "spec": {"storageCapacity": True},
    }

    def capacity(zone: str, size: str) -> dict[str, Any]:
        return {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSIStorageCapacity",
            "metadata": {"name": f"cap-{zone}", "namespace": "kube-system"},
            "storageClassName": "wffc",
            "capacity": size,
            "nodeTopology": {"matchLabels": {ZONE: zone}},
        }

    objects = [pvc("data", size="5Gi"), WFFC, driver, capacity("a", "10Gi"), capacity("b", "1Gi")]
    plugin = vb.SPEC.new(None, VolumeHandle(NODES, objects))
    _, _, filtered = prefilter_and_filter(plugin, vpod(claims=["data"]), NODES)
    assert verdicts(filtered) == {
        "n1": "ok",
        "n2": f"UNSCHEDULABLE_AND_UNRESOLVABLE: {vb.ERR_REASON_NOT_ENOUGH_SPACE}",
        "n3": f"UNSCHEDULABLE_AND_UNRESOLVABLE: {vb.ERR_REASON_NOT_ENOUGH_SPACE}",
    }


# --- Reserve / Unreserve / PreBind -----------------------------------------------------------------------------------


def _schedule(
    plugin: fw.Plugin, p: PodInfo, node_name: str, nodes: Sequence[NodeInfo] = NODES
) -> fw.CycleState:
    assert isinstance(plugin, vb.VolumeBinding)
    state = fw.CycleState()
    _, status, filtered = prefilter_and_filter(plugin, p, nodes, state)
    assert status.is_success and filtered[node_name].is_success, (status, filtered)
    assert plugin.reserve(state, p, node_name).is_success
    return state


def test_two_pods_cannot_take_the_same_pv() -> None:
    objects = [pvc("a", sc="local"), pvc("b", sc="local"), NOPROV, pv("only", sc="local")]
    handle = VolumeHandle(NODES, objects)
    plugin = vb.SPEC.new(None, handle)
    assert isinstance(plugin, vb.VolumeBinding)
    first = vpod("first", ["a"])
    state = _schedule(plugin, first, "n1")
    # Reserved but not yet bound: the PV already carries the claimRef, so the second claim finds nothing.
    _, _, filtered = prefilter_and_filter(plugin, vpod("second", ["b"]), NODES)
    assert {s.message() for s in filtered.values()} == {vb.ERR_REASON_BIND_CONFLICT}
    assert plugin.pre_bind(state, first, "n1").is_success
    bound_pvc = volumes.Volumes(handle).pvc("default", "a")
    assert bound_pvc is not None and volumes.is_fully_bound(bound_pvc)
    assert volumes.spec(bound_pvc)["volumeName"] == "only"
    bound_pv = volumes.Volumes(handle).pv("only")
    assert bound_pv is not None and bound_pv["status"]["phase"] == "Bound"
    assert volumes.spec(bound_pv)["claimRef"]["name"] == "a"
    _, _, filtered = prefilter_and_filter(plugin, vpod("second", ["b"]), NODES)
    assert {s.message() for s in filtered.values()} == {vb.ERR_REASON_BIND_CONFLICT}
    # A Bind failure after PreBind unreserves, but a completed binding stays (as API writes would).
    plugin.unreserve(state, first, "n1")
    assert volumes.is_fully_bound(volumes.Volumes(handle).pvc("default", "a") or {})
    assert (volumes.Volumes(handle).pv("only") or {}).get("status", {}).get("phase") == "Bound"
    # The informer objects themselves were never modified.
    assert "claimRef" not in handle.objects.get("PersistentVolume", "", "only")["spec"]  # type: ignore[index]


def test_unreserve_releases_the_pv() -> None:
    objects = [pvc("a", sc="local"), pvc("b", sc="local"), NOPROV, pv("only", sc="local")]
    handle = VolumeHandle(NODES, objects)
    plugin = vb.SPEC.new(None, handle)
    assert isinstance(plugin, vb.VolumeBinding)
    first = vpod("first", ["a"])
    state = _schedule(plugin, first, "n1")
    plugin.unreserve(state, first, "n1")
    plugin.unreserve(state, first, "n1")  # idempotent
    _, _, filtered = prefilter_and_filter(plugin, vpod("second", ["b"]), NODES)
    assert all(s.is_success for s in filtered.values())


def test_plugins_sharing_a_lister_share_assumptions() -> None:
    objects = [pvc("a", sc="local"), pvc("b", sc="local"), NOPROV, pv("only", sc="local")]
    handle = VolumeHandle(NODES, objects)
    profile_one, profile_two = vb.SPEC.new(None, handle), vb.SPEC.new(None, handle)
    _schedule(profile_one, vpod("first", ["a"]), "n2")
    _, _, filtered = prefilter_and_filter(profile_two, vpod("second", ["b"]), NODES)
    assert {s.message() for s in filtered.values()} == {vb.ERR_REASON_BIND_CONFLICT}


def test_newer_informer_object_replaces_an_assumption() -> None:
    claim = pvc("a", sc="local")
    volume = pv("only", sc="local")
    volume["metadata"]["resourceVersion"] = "1"
    handle = VolumeHandle(NODES, [claim, NOPROV, volume])
    plugin = vb.SPEC.new(None, handle)
    _schedule(plugin, vpod("first", ["a"]), "n1")
    assert volumes.spec(volumes.Volumes(handle).pv("only") or {}).get("claimRef") is not None
    fresh = pv("only", sc="local")
    fresh["metadata"]["resourceVersion"] = "2"
    handle.objects.add(fresh)
    assert volumes.spec(volumes.Volumes(handle).pv("only") or {}).get("claimRef") is None


def test_provisioning_pins_the_claim_to_the_chosen_topology() -> None:
    objects = [
        pvc("data", uid="u-data"),
        WFFC,
        *(csi_node(n.name, {"csi.example.com": None}, topology_keys=[ZONE]) for n in NODES),
    ]
    handle = VolumeHandle(NODES, objects)
    plugin = vb.SPEC.new(None, handle)
    assert isinstance(plugin, vb.VolumeBinding)
    first = vpod("first", ["data"])
    state = _schedule(plugin, first, "n2")
    # Reserved: the claim carries the selected node, so a second pod of the claim must follow it.
    _, _, filtered = prefilter_and_filter(plugin, vpod("second", ["data"]), NODES)
    assert verdicts(filtered)["n2"] == "ok"
    assert filtered["n1"].message() == vb.ERR_REASON_BIND_CONFLICT
    assert plugin.pre_bind(state, first, "n2").is_success
    made = volumes.Volumes(handle).pv("pvc-u-data")
    assert made is not None
    assert volumes.spec(made)["csi"] == {"driver": "csi.example.com", "volumeHandle": "pvc-u-data"}
    assert volumes.spec(made)["nodeAffinity"]["required"]["nodeSelectorTerms"] == [
        {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["b"]}]}
    ]
    # Now bound: later pods see a bound claim whose PV lives in zone b.
    extra = zone_node("n4", "b")
    nodes = [*NODES, extra]
    _, _, filtered = prefilter_and_filter(plugin, vpod("third", ["data"]), nodes)
    assert {n for n, s in filtered.items() if s.is_success} == {"n2", "n4"}
    assert filtered["n1"].message() == vb.ERR_REASON_NODE_CONFLICT


def test_pre_bind_without_reserve_state_is_an_error() -> None:
    plugin = vb.SPEC.new(None, VolumeHandle(NODES))
    assert isinstance(plugin, vb.VolumeBinding)
    status = plugin.pre_bind(fw.CycleState(), vpod(), "n1")
    assert status.code is fw.Code.ERROR


class RecordingWriter:
    def __init__(self, fail: str = "") -> None:
        self.updates: list[tuple[str, str]] = []
        self.fail = fail

    def update(self, obj: Mapping[str, Any]) -> Mapping[str, Any]:
        if self.fail:
            raise RuntimeError(self.fail)
        self.updates.append((str(obj["kind"]), volumes.name_of(obj)))
        return obj


def test_live_pre_bind_writes_the_pv_and_the_claim_to_provision() -> None:
    objects = [pvc("static", sc="local"), NOPROV, pv("only", sc="local"), pvc("dynamic"), WFFC]
    handle = VolumeHandle(NODES, objects)
    handle.volume_writer = RecordingWriter()  # type: ignore[attr-defined]
    plugin = vb.SPEC.new(None, handle)
    assert isinstance(plugin, vb.VolumeBinding)
    p = vpod("p", ["static", "dynamic"])
    state = _schedule(plugin, p, "n1")
    assert plugin.pre_bind(state, p, "n1").is_success
    assert handle.volume_writer.updates == [  # type: ignore[attr-defined]
        ("PersistentVolume", "only"),
        ("PersistentVolumeClaim", "dynamic"),
    ]
    # Nothing is completed locally: the informers bring the PV controller's result.
    claim = volumes.Volumes(handle).pvc("default", "dynamic") or {}
    assert not volumes.is_fully_bound(claim)
    assert volumes.annotations_of(claim)[volumes.ANN_SELECTED_NODE] == "n1"


def test_live_pre_bind_failure_is_an_error() -> None:
    handle = VolumeHandle(NODES, [pvc("dynamic"), WFFC])
    handle.volume_writer = RecordingWriter(fail="409 Conflict")  # type: ignore[attr-defined]
    plugin = vb.SPEC.new(None, handle)
    assert isinstance(plugin, vb.VolumeBinding)
    p = vpod("p", ["dynamic"])
    state = _schedule(plugin, p, "n1")
    status = plugin.pre_bind(state, p, "n1")
    assert status.code is fw.Code.ERROR
    assert status.message() == "binding volumes: 409 Conflict"
    plugin.unreserve(state, p, "n1")
    assert volumes.ANN_SELECTED_NODE not in volumes.annotations_of(
        volumes.Volumes(handle).pvc("default", "dynamic") or {}
    )
