"""VolumeRestrictions: inline disk conflicts and ReadWriteOncePod claims (upstream reasons and codes)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from berth.schedule.framework import interface as fw
from berth.schedule.framework.types import PodInfo
from berth.schedule.plugins import volume_restrictions as vr

from .support import node
from .test_volume_binding import VolumeHandle, prefilter_and_filter, pvc, vpod


def disk(kind: str, read_only: bool = False, **fields: Any) -> dict[str, Any]:
    src = dict(fields)
    if read_only:
        src["readOnly"] = True
    return {"name": f"d-{kind}", kind: src}


def holder(*volumes: Mapping[str, Any], claims: tuple[str, ...] = ()) -> PodInfo:
    return vpod("holder", list(claims), extra=volumes)


GCE: dict[str, Any] = {"pdName": "pd-1"}
RBD: dict[str, Any] = {"monitors": ["m1", "m2"], "image": "img"}


@pytest.mark.parametrize(
    ("new", "existing", "conflict"),
    [
        (disk("gcePersistentDisk", **GCE), disk("gcePersistentDisk", **GCE), True),
        (disk("gcePersistentDisk", True, **GCE), disk("gcePersistentDisk", True, **GCE), False),
        (disk("gcePersistentDisk", True, **GCE), disk("gcePersistentDisk", **GCE), True),
        (disk("gcePersistentDisk", **GCE), disk("gcePersistentDisk", pdName="pd-2"), False),
        (
            disk("awsElasticBlockStore", True, volumeID="vol-1"),
            disk("awsElasticBlockStore", True, volumeID="vol-1"),
            True,
        ),
        (
            disk("awsElasticBlockStore", volumeID="vol-1"),
            disk("awsElasticBlockStore", volumeID="vol-2"),
            False,
        ),
        (disk("iscsi", iqn="iqn.a", lun=0), disk("iscsi", iqn="iqn.a", lun=1), True),
        (disk("iscsi", True, iqn="iqn.a"), disk("iscsi", True, iqn="iqn.a"), False),
        (disk("rbd", **RBD), disk("rbd", monitors=["m2", "m3"], image="img", pool="rbd"), True),
        (disk("rbd", **RBD), disk("rbd", monitors=["m3"], image="img"), False),
        (disk("rbd", **RBD), disk("rbd", monitors=["m1"], image="img", pool="other"), False),
        (disk("rbd", True, **RBD), disk("rbd", True, **RBD), False),
        (disk("gcePersistentDisk", **GCE), disk("awsElasticBlockStore", volumeID="pd-1"), False),
    ],
    ids=[
        "gce-same-disk",
        "gce-both-read-only",
        "gce-one-writer",
        "gce-other-disk",
        "ebs-same-id-even-read-only",
        "ebs-other-id",
        "iscsi-same-iqn",
        "iscsi-both-read-only",
        "rbd-shared-monitor-default-pool",
        "rbd-no-shared-monitor",
        "rbd-other-pool",
        "rbd-both-read-only",
        "different-kinds",
    ],
)
def test_disk_conflicts(new: dict[str, Any], existing: dict[str, Any], conflict: bool) -> None:
    n = node("n1", pods=[holder(existing)])
    plugin = vr.SPEC.new(None, VolumeHandle([n]))
    _, status, filtered = prefilter_and_filter(plugin, vpod(extra=[new]), [n])
    assert status.is_success
    if conflict:
        assert filtered["n1"].code is fw.Code.UNSCHEDULABLE
        assert filtered["n1"].reasons == (vr.ERR_REASON_DISK_CONFLICT,)
    else:
        assert filtered["n1"].is_success


def test_pods_without_disks_or_claims_skip() -> None:
    plugin = vr.SPEC.new(None, VolumeHandle([node("n1")]))
    assert isinstance(plugin, vr.VolumeRestrictions)
    for p in (vpod(), vpod(extra=[{"name": "e", "emptyDir": {}}])):
        assert plugin.pre_filter(fw.CycleState(), p, [])[1].is_skip


def test_missing_claim_is_unresolvable() -> None:
    plugin = vr.SPEC.new(None, VolumeHandle([node("n1")]))
    _, status, _ = prefilter_and_filter(plugin, vpod(claims=["data"]), [node("n1")])
    assert status.code is fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.message() == 'persistentvolumeclaim "data" not found'


def test_read_write_once_pod_claim_in_use_anywhere_conflicts() -> None:
    objects = [pvc("solo", modes=["ReadWriteOncePod"]), pvc("shared", modes=["ReadWriteMany"])]
    busy = node("n1", pods=[holder(claims=("solo", "shared"))])
    idle = node("n2")
    plugin = vr.SPEC.new(None, VolumeHandle([busy, idle], objects))
    _, status, filtered = prefilter_and_filter(plugin, vpod(claims=["solo"]), [busy, idle])
    assert status.is_success
    # Every node reports it (the holder may run elsewhere); Unschedulable, so preemption may evict the holder.
    assert {n: (s.code, s.reasons) for n, s in filtered.items()} == {
        n: (fw.Code.UNSCHEDULABLE, (vr.ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT,)) for n in ("n1", "n2")
    }
    # A ReadWriteMany claim may be shared; an unused ReadWriteOncePod claim is free.
    assert isinstance(plugin, vr.VolumeRestrictions)
    assert plugin.pre_filter(fw.CycleState(), vpod(claims=["shared"]), [busy, idle])[1].is_skip
    free = VolumeHandle([idle], objects)
    assert vr.SPEC.new(None, free).pre_filter(fw.CycleState(), vpod(claims=["solo"]), [idle])[1].is_skip  # type: ignore[attr-defined]


def test_other_namespace_claim_of_same_name_is_no_conflict() -> None:
    objects = [pvc("solo", modes=["ReadWriteOncePod"]), pvc("solo", ns="other", modes=["ReadWriteOncePod"])]
    user = vpod("user", ["solo"])
    user.pod["metadata"]["namespace"] = "other"
    user.namespace = "other"
    n = node("n1", pods=[user])
    plugin = vr.SPEC.new(None, VolumeHandle([n], objects))
    assert isinstance(plugin, vr.VolumeRestrictions)
    assert plugin.pre_filter(fw.CycleState(), vpod(claims=["solo"]), [n])[1].is_skip


def test_preemption_extensions_track_the_holder() -> None:
    objects = [pvc("solo", modes=["ReadWriteOncePod"])]
    holder_pod = holder(claims=("solo",))
    n = node("n1", pods=[holder_pod])
    plugin = vr.SPEC.new(None, VolumeHandle([n], objects))
    assert isinstance(plugin, vr.VolumeRestrictions)
    extensions = plugin.pre_filter_extensions()
    assert extensions is not None
    state = fw.CycleState()
    p = vpod(claims=["solo"], extra=[disk("awsElasticBlockStore", volumeID="x")])
    _, status = plugin.pre_filter(state, p, [n])
    assert status.is_success
    assert plugin.filter(state, p, n).reasons == (vr.ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT,)
    clone = state.clone()
    assert extensions.remove_pod(clone, p, holder_pod, n).is_success
    assert plugin.filter(clone, p, node("n1")).is_success  # the victim's claim is released
    assert extensions.add_pod(clone, p, holder_pod, n).is_success
    assert plugin.filter(clone, p, node("n1")).code is fw.Code.UNSCHEDULABLE
    assert plugin.filter(state, p, n).code is fw.Code.UNSCHEDULABLE  # the original state is untouched


def test_spec_is_active() -> None:
    assert vr.SPEC.active is True
    assert vr.SPEC.points == {"preFilter", "filter"}
