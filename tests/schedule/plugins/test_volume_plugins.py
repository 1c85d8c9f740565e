"""The four volume plugins together inside the real Scheduler with the default configuration: upstream's
FailedScheduling text for storage problems, and bindings that persist from one pod to the next."""

from __future__ import annotations

from typing import Any

import pytest

from berth.schedule import config as schedconfig
from berth.schedule.framework import interface as fw
from berth.schedule.plugins import (
    node_volume_limits,
    volume_binding,
    volume_restrictions,
    volume_zone,
    volumes,
)
from berth.schedule.scheduler import Scheduler

from .test_volume_binding import csi_node, pv, pvc, storage_class, vpod

SPECS = [volume_restrictions.SPEC, node_volume_limits.SPEC, volume_binding.SPEC, volume_zone.SPEC]
ZONE = volumes.LABEL_ZONE


@pytest.mark.parametrize("spec", SPECS, ids=[s.name for s in SPECS])
def test_active(spec: fw.PluginSpec) -> None:
    assert spec.active is True
    assert "filter" in spec.points and "preFilter" in spec.points


def node_obj(name: str, zone: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {volumes.LABEL_HOSTNAME: name, ZONE: zone}},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": 110}},
    }


def scheduler(objects: list[dict[str, Any]]) -> Scheduler:
    s = Scheduler(
        schedconfig.parse(
            {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
        ),
        seed=1,
    )
    assert not any("Volume" in w for w in s.warnings), s.warnings
    store = volumes.ObjectStore(objects)
    for framework in s.frameworks.values():  # what the simulation/informers wire: one shared lister
        framework.objects = store  # type: ignore[attr-defined]
    for name, zone in (("n1", "a"), ("n2", "b"), ("n3", "c")):
        s.add_node(node_obj(name, zone))
    return s


def run(s: Scheduler, *pods: Any) -> tuple[dict[str, str], dict[str, str]]:
    for p in pods:
        s.add_pod(p.pod)
    s.run_until_idle()
    return {p.pod: p.node for p in s.placements}, {f.pod: f.message for f in s.unschedulable()}


def test_missing_claim_gives_upstream_message() -> None:
    placed, failed = run(scheduler([]), vpod("web", ["data"]))
    assert placed == {}
    assert failed["default/web"].startswith(
        '0/3 nodes are available: persistentvolumeclaim "data" not found.'
    )


def test_unknown_storage_class_is_an_unbound_immediate_claim() -> None:
    _, failed = run(scheduler([pvc("data", sc="missing")]), vpod("web", ["data"]))
    assert failed["default/web"].startswith(
        "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims."
    )


def test_one_local_pv_serves_one_pod() -> None:
    objects = [
        pvc("a", sc="local"),
        pvc("b", sc="local"),
        storage_class("local", provisioner=volumes.NOT_SUPPORTED_PROVISIONER),
        pv("local-n2", sc="local", hostnames=["n2"]),
    ]
    s = scheduler(objects)
    placed, failed = run(s, vpod("first", ["a"]), vpod("second", ["b"]))
    assert placed == {"default/first": "n2"}
    assert failed["default/second"].startswith(
        "0/3 nodes are available: 3 node(s) didn't find available persistent volumes to bind."
    )
    # A third pod of the now bound claim goes where its PV is.
    placed, _ = run(s, vpod("third", ["a"]))
    assert placed["default/third"] == "n2"


def test_provisioned_claim_keeps_later_pods_in_its_zone() -> None:
    objects = [
        pvc("shared", sc="zonal", modes=["ReadWriteMany"], uid="u1"),
        storage_class("zonal", allowed_zones=["b", "c"]),
        *(csi_node(n, {"csi.example.com": None}, topology_keys=[ZONE]) for n in ("n1", "n2", "n3")),
    ]
    s = scheduler(objects)
    placed, failed = run(s, *(vpod(f"p{i}", ["shared"]) for i in range(4)))
    assert failed == {}
    zones = {"n1": "a", "n2": "b", "n3": "c"}
    assert len({zones[n] for n in placed.values()}) == 1
    assert next(iter(placed.values())) != "n1"


def test_volume_zone_and_restrictions_reasons_in_the_histogram() -> None:
    objects = [
        pvc("zonal", volume_name="pv-z", bound=True),
        pv("pv-z", sc="", labels={ZONE: "c"}, claim=("default", "zonal")),
        pvc("solo", sc="", volume_name="pv-solo", bound=True, modes=["ReadWriteOncePod"]),
        pv("pv-solo", sc="", claim=("default", "solo")),
    ]
    s = scheduler(objects)
    placed, failed = run(s, vpod("holder", ["solo"]), vpod("z", ["zonal"]))
    assert placed["default/z"] == "n3"
    _, failed = run(s, vpod("second", ["solo"]))
    assert failed["default/second"].startswith(
        "0/3 nodes are available: 3 node has pod using PersistentVolumeClaim with the same name and "
        "ReadWriteOncePod access mode."
    )


def test_ephemeral_volume_schedules_once_its_claim_exists() -> None:
    web = vpod("web", ephemeral=["scratch"])
    web.pod["spec"]["volumes"][0]["ephemeral"]["volumeClaimTemplate"] = {
        "metadata": {"labels": {"app": "web"}},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "zonal",
            "resources": {"requests": {"storage": "1Gi"}},
        },
    }
    _, failed = run(scheduler([storage_class("zonal")]), web)
    assert failed["default/web"].startswith(
        '0/3 nodes are available: waiting for ephemeral volume controller to create the persistentvolumeclaim "web-scratch".'
    )
    claims = volumes.ephemeral_claims(web.pod)
    assert [volumes.name_of(c) for c in claims] == ["web-scratch"]
    assert volumes.labels(claims[0]) == {"app": "web"}
    placed, failed = run(scheduler([storage_class("zonal"), *claims]), vpod("web", ephemeral=["scratch"]))
    assert failed == {} and set(placed) == {"default/web"}


def test_statefulset_claims_follow_the_controller_naming() -> None:
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": "prod"},
        "spec": {
            "selector": {"matchLabels": {"app": "db"}},
            "volumeClaimTemplates": [
                {
                    "metadata": {"name": "data", "labels": {"tier": "gold"}},
                    "spec": {"accessModes": ["ReadWriteOnce"]},
                }
            ],
        },
    }
    claims, pod_volumes = volumes.statefulset_claims(sts, "db-1")
    assert [(volumes.name_of(c), c["metadata"]["namespace"], volumes.labels(c)) for c in claims] == [
        ("data-db-1", "prod", {"tier": "gold", "app": "db"})
    ]
    assert pod_volumes == [{"name": "data", "persistentVolumeClaim": {"claimName": "data-db-1"}}]
