"""NodeVolumeLimits: CSINode allocatable counts against the unique CSI volumes a node would have attached."""

from __future__ import annotations

from typing import Any

import pytest

from berth.schedule.framework import interface as fw
from berth.schedule.framework.types import NodeInfo, PodInfo
from berth.schedule.plugins import node_volume_limits as nvl

from .support import node
from .test_volume_binding import (
    ZONE,
    VolumeHandle,
    csi_node,
    prefilter_and_filter,
    pv,
    pvc,
    storage_class,
    vpod,
)

EBS = "ebs.csi.aws.com"
GCE = "pd.csi.storage.gke.io"


def bound(name: str, handle: str, driver: str = EBS) -> list[dict[str, Any]]:
    """A bound claim ``name`` on a CSI PV ``pv-<name>`` with volume handle ``handle``."""
    return [
        pvc(name, volume_name=f"pv-{name}", bound=True),
        pv(f"pv-{name}", claim=("default", name), csi=(driver, handle), phase="Bound"),
    ]


OBJECTS: list[dict[str, Any]] = [
    *bound("a", "vol-a"),
    *bound("b", "vol-b"),
    *bound("c", "vol-c"),
    *bound("a-again", "vol-a"),  # another claim on the same disk
    *bound("g", "disk-g", GCE),
    pvc("unbound-1", sc="ebs"),
    pvc("unbound-2", sc="ebs"),
    storage_class("ebs", provisioner=EBS),
    pvc("no-class", sc=""),
    pvc("nfs", volume_name="pv-nfs", bound=True),
    pv("pv-nfs", claim=("default", "nfs")),  # not a CSI volume
    csi_node("n1", {EBS: 2, GCE: None}),
]


def n1(*pods: PodInfo) -> NodeInfo:
    return node("n1", pods=pods)


@pytest.mark.parametrize(
    ("existing", "new", "ok"),
    [
        ((), ["a", "b"], True),
        ((), ["a", "b", "c"], False),
        ((vpod("x", ["a"]),), ["b"], True),
        ((vpod("x", ["a", "b"]),), ["c"], False),
        ((vpod("x", ["a", "b"]),), ["a"], True),
        ((vpod("x", ["a", "b"]),), ["a-again"], True),
        ((vpod("x", ["a"]), vpod("y", ["a"])), ["b"], True),
        ((vpod("x", ["a", "b"]),), ["g"], True),
        ((), ["unbound-1", "unbound-2"], True),
        ((vpod("x", ["a"]),), ["unbound-1", "unbound-2"], False),
        ((vpod("x", ["unbound-1"]),), ["unbound-1", "a"], True),
        ((vpod("x", ["a", "b"]),), ["no-class", "nfs"], True),
        ((vpod("x", ["a", "b", "gone"]),), ["nfs"], True),
    ],
    ids=[
        "two-of-two",
        "three-of-two",
        "one-attached-one-new",
        "full-node",
        "shared-volume-needs-no-slot",
        "same-handle-through-another-claim",
        "shared-by-two-pods-counts-once",
        "other-driver-has-no-limit",
        "unbound-claims-count-by-provisioner",
        "unbound-claims-over-limit",
        "unbound-claim-shared-with-existing-pod",
        "uncounted-claims",
        "existing-pod-with-missing-claim-is-ignored",
    ],
)
def test_filter(existing: tuple[PodInfo, ...], new: list[str], ok: bool) -> None:
    n = n1(*existing)
    plugin = nvl.SPEC.new(None, VolumeHandle([n], OBJECTS))
    _, status, filtered = prefilter_and_filter(plugin, vpod(claims=new), [n])
    assert status.is_success
    if ok:
        assert filtered["n1"].is_success, filtered["n1"]
    else:
        assert filtered["n1"].code is fw.Code.UNSCHEDULABLE
        assert filtered["n1"].reasons == (nvl.ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,)


def test_no_csinode_or_no_count_means_no_limit() -> None:
    crowded = [vpod("x", ["a", "b"])]
    for objects in (OBJECTS[:-1], [*OBJECTS[:-1], csi_node("n1", {EBS: None})]):
        n = n1(*crowded)
        plugin = nvl.SPEC.new(None, VolumeHandle([n], objects))
        assert prefilter_and_filter(plugin, vpod(claims=["c"]), [n])[2]["n1"].is_success


def test_volume_attachments_count_volumes_no_pod_holds() -> None:
    def attachment(name: str, pv_name: str, node_name: str = "n1") -> dict[str, Any]:
        return {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "VolumeAttachment",
            "metadata": {"name": name},
            "spec": {"attacher": EBS, "nodeName": node_name, "source": {"persistentVolumeName": pv_name}},
        }

    n = n1(vpod("x", ["a"]))
    # vol-a is held by pod x (counted once); vol-c is attached with no pod: the node is full for a new volume.
    objects = [
        *OBJECTS,
        attachment("va-a", "pv-a"),
        attachment("va-c", "pv-c"),
        attachment("va-far", "pv-b", "n9"),
    ]
    plugin = nvl.SPEC.new(None, VolumeHandle([n], objects))
    status = prefilter_and_filter(plugin, vpod(claims=["b"]), [n])[2]["n1"]
    assert status.reasons == (nvl.ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,)
    without_c = [o for o in objects if o["metadata"]["name"] != "va-c"]
    plugin = nvl.SPEC.new(None, VolumeHandle([n], without_c))
    assert prefilter_and_filter(plugin, vpod(claims=["b"]), [n])[2]["n1"].is_success


def test_missing_claim_of_the_new_pod_is_unresolvable() -> None:
    plugin = nvl.SPEC.new(None, VolumeHandle([n1()], OBJECTS))
    status = prefilter_and_filter(plugin, vpod(claims=["nope"]), [n1()])[2]["n1"]
    assert status.code is fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.message() == 'looking up PVC default/nope: persistentvolumeclaim "nope" not found'


def test_pods_without_claims_skip() -> None:
    plugin = nvl.SPEC.new(None, VolumeHandle([n1()], OBJECTS))
    assert isinstance(plugin, nvl.NodeVolumeLimits)
    assert plugin.pre_filter(fw.CycleState(), vpod(extra=[{"name": "e", "emptyDir": {}}]), [])[1].is_skip
    assert plugin.pre_filter(fw.CycleState(), vpod(ephemeral=["s"]), [])[1].is_success


def test_spec_is_active() -> None:
    assert nvl.SPEC.active is True
    assert nvl.SPEC.points == {"preFilter", "filter"}


# --- in-tree volumes migrated to CSI -----------------------------------------------------------------------------

MIGRATED_NODE = csi_node("n1", {EBS: 2, GCE: 1})


def ebs_inline(volume_id: str, name: str = "disk") -> dict[str, Any]:
    return {"name": name, "awsElasticBlockStore": {"volumeID": volume_id}}


@pytest.mark.parametrize(
    ("existing", "new", "objects", "ok"),
    [
        ((), [ebs_inline("vol-1"), ebs_inline("aws://us-east-1a/vol-2", "d2")], [MIGRATED_NODE], True),
        (
            (vpod("x", extra=[ebs_inline("vol-1")]),),
            [ebs_inline("vol-2"), ebs_inline("vol-3", "d2")],
            [MIGRATED_NODE],
            False,
        ),
        (
            (vpod("x", extra=[ebs_inline("aws://us-east-1a/vol-1")]),),
            [ebs_inline("vol-1")],
            [MIGRATED_NODE],
            True,
        ),
        (
            (vpod("x", extra=[ebs_inline("vol-1"), ebs_inline("vol-2", "d2")]),),
            [ebs_inline("vol-3")],
            [],
            True,
        ),
        (
            (vpod("x", extra=[{"name": "g", "gcePersistentDisk": {"pdName": "pd-1"}}]),),
            [{"name": "g", "gcePersistentDisk": {"pdName": "pd-2"}}],
            [MIGRATED_NODE],
            False,
        ),
        (
            (vpod("x", extra=[{"name": "f", "azureFile": {"shareName": "s", "secretName": "x"}}]),),
            [ebs_inline("vol-1"), ebs_inline("vol-2", "d2")],
            [MIGRATED_NODE],
            True,
        ),
    ],
    ids=[
        "two-inline-ebs",
        "inline-ebs-over-limit",
        "same-ebs-id-in-both-spellings",
        "no-csinode-no-migration",
        "gce-pd-limit",
        "azure-file-not-counted",
    ],
)
def test_inline_migrated_volumes(
    existing: tuple[PodInfo, ...], new: list[dict[str, Any]], objects: list[dict[str, Any]], ok: bool
) -> None:
    n = n1(*existing)
    plugin = nvl.SPEC.new(None, VolumeHandle([n], objects))
    _, status, filtered = prefilter_and_filter(plugin, vpod(extra=new), [n])
    assert status.is_success
    assert filtered["n1"].is_success is ok, filtered["n1"]


def test_in_tree_pv_and_provisioner_count_under_the_csi_driver() -> None:
    objects = [
        MIGRATED_NODE,
        pvc("old", volume_name="pv-old", bound=True),
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": "pv-old"},
            "spec": {
                "awsElasticBlockStore": {"volumeID": "aws://us-east-1a/vol-9"},
                "capacity": {"storage": "1Gi"},
            },
        },
        pvc("fresh", sc="gp2"),
        storage_class("gp2", provisioner="kubernetes.io/aws-ebs"),
    ]
    n = n1(vpod("x", ["old"]))
    plugin = nvl.SPEC.new(None, VolumeHandle([n], objects))
    # vol-9 (via the PV) + the new claim = 2 of 2; one inline EBS more is one too many, unless it is vol-9 itself.
    assert prefilter_and_filter(plugin, vpod(claims=["fresh"]), [n])[2]["n1"].is_success
    crowded = vpod(claims=["fresh"], extra=[ebs_inline("vol-8")])
    assert prefilter_and_filter(plugin, crowded, [n])[2]["n1"].reasons == (
        nvl.ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,
    )
    shared = vpod(claims=["fresh"], extra=[ebs_inline("vol-9")])
    assert prefilter_and_filter(plugin, shared, [n])[2]["n1"].is_success


def test_untranslatable_inline_volume_is_an_error() -> None:
    plugin = nvl.SPEC.new(None, VolumeHandle([n1()], [MIGRATED_NODE]))
    status = prefilter_and_filter(plugin, vpod(extra=[ebs_inline("aws://zone-only")]), [n1()])[2]["n1"]
    assert status.code is fw.Code.ERROR
    assert status.message() == (
        "converting volume(disk) from inline to csi: failed to translate Kubernetes ID to EBS Volume ID "
        "invalid format for AWS volume (aws://zone-only)"
    )


def test_gce_pv_handles() -> None:
    src = {"pdName": "pd"}
    assert (
        nvl._gce_pv_handle(src, {ZONE: "us-central1-a"})
        == "projects/UNSPECIFIED/zones/us-central1-a/disks/pd"
    )
    assert (
        nvl._gce_pv_handle(src, {ZONE: "us-central1-a__us-central1-b"})
        == "projects/UNSPECIFIED/regions/us-central1/disks/pd"
    )
    assert nvl._gce_pv_handle(src, {}) == "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/pd"
