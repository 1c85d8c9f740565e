"""VolumeZone: PV zone/region labels (GA and legacy failure-domain keys) against node labels."""

from __future__ import annotations

from typing import Any

import pytest

from berth.schedule.framework import interface as fw
from berth.schedule.plugins import volume_zone as vz
from berth.schedule.plugins import volumes

from .support import node
from .test_volume_binding import VolumeHandle, prefilter_and_filter, pv, pvc, storage_class, vpod

GA_ZONE, GA_REGION = volumes.LABEL_ZONE, volumes.LABEL_REGION
BETA_ZONE, BETA_REGION = volumes.LABEL_BETA_ZONE, volumes.LABEL_BETA_REGION


@pytest.mark.parametrize(
    ("pv_labels", "node_labels", "ok"),
    [
        ({GA_ZONE: "a"}, {GA_ZONE: "a"}, True),
        ({GA_ZONE: "a"}, {GA_ZONE: "b"}, False),
        ({GA_ZONE: "a__b"}, {GA_ZONE: "b"}, True),
        ({GA_ZONE: "a__b"}, {GA_ZONE: "c"}, False),
        ({GA_ZONE: "a"}, {}, True),
        ({GA_ZONE: "a"}, {"other": "x"}, True),
        ({GA_ZONE: "a"}, {GA_REGION: "r1"}, False),
        ({BETA_ZONE: "a"}, {GA_ZONE: "a"}, True),
        ({BETA_ZONE: "a"}, {GA_ZONE: "b"}, False),
        ({GA_ZONE: "a"}, {BETA_ZONE: "a"}, False),
        ({BETA_REGION: "r1", BETA_ZONE: "a"}, {BETA_REGION: "r1", BETA_ZONE: "a"}, True),
        ({GA_REGION: "r1", GA_ZONE: "a"}, {GA_REGION: "r2", GA_ZONE: "a"}, False),
        ({GA_ZONE: "a__"}, {GA_ZONE: "b"}, True),
    ],
    ids=[
        "same-zone",
        "other-zone",
        "multi-zone-hit",
        "multi-zone-miss",
        "node-without-topology-labels",
        "node-with-unrelated-labels",
        "node-has-region-only",
        "beta-pv-ga-node",
        "beta-pv-ga-node-mismatch",
        "ga-pv-beta-node-is-not-translated",
        "beta-region-and-zone",
        "region-mismatch",
        "unparsable-value-is-ignored",
    ],
)
def test_filter(pv_labels: dict[str, str], node_labels: dict[str, str], ok: bool) -> None:
    objects = [
        pvc("data", volume_name="pv1", bound=True),
        pv("pv1", labels=pv_labels, claim=("default", "data")),
    ]
    n = node("n1", labels=node_labels)
    plugin = vz.SPEC.new(None, VolumeHandle([n], objects))
    result, status, filtered = prefilter_and_filter(plugin, vpod(claims=["data"]), [n])
    if status.is_skip:
        assert ok  # no usable PV label: nothing to check
        return
    assert status.is_success and result is None
    if ok:
        assert filtered["n1"].is_success
    else:
        assert filtered["n1"].code is fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert filtered["n1"].reasons == (vz.ERR_REASON_CONFLICT,)


@pytest.mark.parametrize(
    ("claim", "objects", "message"),
    [
        ("", [], "PersistentVolumeClaim had no name"),
        ("data", [], 'persistentvolumeclaim "data" not found'),
        ("data", [pvc("data", sc="")], "PersistentVolumeClaim had no pv name and storageClass name"),
        ("data", [pvc("data", sc="fast")], 'storageclass.storage.k8s.io "fast" not found'),
        (
            "data",
            [pvc("data", sc="fast"), storage_class("fast", mode="Immediate")],
            "PersistentVolume had no name",
        ),
        ("data", [pvc("data", volume_name="gone", bound=True)], 'persistentvolume "gone" not found'),
    ],
    ids=[
        "no-claim-name",
        "missing-claim",
        "no-pv-no-class",
        "unknown-class",
        "unbound-immediate",
        "missing-pv",
    ],
)
def test_pre_filter_rejects(claim: str, objects: list[dict[str, Any]], message: str) -> None:
    plugin = vz.SPEC.new(None, VolumeHandle([node("n1")], objects))
    _, status, _ = prefilter_and_filter(plugin, vpod(claims=[claim]), [node("n1")])
    assert status.code is fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.message() == message


@pytest.mark.parametrize(
    "p",
    [vpod(), vpod(claims=["late"]), vpod(claims=["plain"]), vpod(ephemeral=["scratch"])],
    ids=["no-volumes", "wait-for-first-consumer", "pv-without-zone-labels", "ephemeral-only"],
)
def test_skips(p: Any) -> None:
    objects = [
        pvc("late", sc="wffc"),
        storage_class("wffc"),
        pvc("plain", volume_name="pv-plain", bound=True),
        pv("pv-plain", claim=("default", "plain")),
    ]
    plugin = vz.SPEC.new(None, VolumeHandle([node("n1")], objects))
    assert isinstance(plugin, vz.VolumeZone)
    assert plugin.pre_filter(fw.CycleState(), p, [])[1].is_skip


def test_filter_without_pre_filter_state_computes_it() -> None:
    objects = [pvc("data", volume_name="pv1", bound=True), pv("pv1", labels={GA_ZONE: "a"})]
    plugin = vz.SPEC.new(None, VolumeHandle([], objects))
    assert isinstance(plugin, vz.VolumeZone)
    p = vpod(claims=["data"])
    assert plugin.filter(fw.CycleState(), p, node("n1", labels={GA_ZONE: "b"})).reasons == (
        vz.ERR_REASON_CONFLICT,
    )
    assert plugin.filter(fw.CycleState(), p, node("n2", labels={GA_ZONE: "a"})).is_success


def test_label_zones_to_set() -> None:
    assert vz.label_zones_to_set("a__ b ") == frozenset({"a", "b"})
    assert vz.label_zones_to_set("a____b") is None


def test_spec_is_active() -> None:
    assert vz.SPEC.active is True
    assert vz.SPEC.points == {"preFilter", "filter"}
