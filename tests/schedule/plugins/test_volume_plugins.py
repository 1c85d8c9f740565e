"""The four volume plugins together inside the real Scheduler with the default configuration: upstream's
FailedScheduling text for storage problems, and bindings that persist from one pod to the next."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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
    for obj in objects:  # the scheduler's own object cache, shared by its frameworks as handle.objects
        s.add_object(obj)
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
        "0/3 nodes are available: 3 node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access "
        "mode already in-use by another pod."
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


# --- property: whatever the cluster, a PV serves one claim and a pod only lands where its volumes are ------------

ZONES = ("a", "b", "c")


@st.composite
def storage_worlds(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[Any]]:
    objects: list[dict[str, Any]] = [
        storage_class("local", provisioner=volumes.NOT_SUPPORTED_PROVISIONER),
        storage_class("zonal", allowed_zones=draw(st.lists(st.sampled_from(ZONES), min_size=1, unique=True))),
    ]
    for i in range(draw(st.integers(0, 5))):
        objects.append(
            pv(
                f"pv{i}",
                sc="local",
                size=f"{draw(st.integers(1, 4))}Gi",
                zones=[draw(st.sampled_from(ZONES))],
                modes=draw(st.sampled_from([("ReadWriteOnce",), ("ReadWriteOnce", "ReadWriteMany")])),
            )
        )
    claims = []
    for i in range(draw(st.integers(1, 5))):
        claims.append(f"c{i}")
        objects.append(
            pvc(
                f"c{i}",
                sc=draw(st.sampled_from(["local", "zonal"])),
                size=f"{draw(st.integers(1, 4))}Gi",
                modes=draw(st.sampled_from([("ReadWriteOnce",), ("ReadWriteMany",)])),
                uid=f"uid-c{i}",
            )
        )
    pods = [
        vpod(f"p{i}", draw(st.lists(st.sampled_from(claims), min_size=1, max_size=2, unique=True)))
        for i in range(draw(st.integers(1, 6)))
    ]
    return objects, pods


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(storage_worlds())
def test_bindings_are_exclusive_and_respect_topology(world: tuple[list[dict[str, Any]], list[Any]]) -> None:
    objects, pods = world
    s = scheduler(objects)
    placed, failed = run(s, *pods)
    assert set(placed) | set(failed) == {p.key for p in pods}
    view = volumes.Volumes(next(iter(s.frameworks.values())))
    zone_of = {"n1": "a", "n2": "b", "n3": "c"}
    owners: dict[str, str] = {}
    for p in pods:
        for claim_name, _ in volumes.claim_refs(p):
            claim = view.pvc("default", claim_name)
            assert claim is not None
            if p.key not in placed:
                continue
            assert volumes.is_fully_bound(claim), (p.key, claim)
            volume = view.pv(str(volumes.spec(claim)["volumeName"]))
            assert volume is not None
            assert volumes.spec(volume)["claimRef"]["name"] == claim_name
            assert owners.setdefault(volumes.name_of(volume), claim_name) == claim_name  # one claim per PV
            labels = {volumes.LABEL_HOSTNAME: placed[p.key], ZONE: zone_of[placed[p.key]]}
            assert volumes.pv_node_affinity_matches(volume, labels)
            assert volumes.pv_capacity(volume) >= (volumes.storage_request(claim) or 0)
            assert set(volumes.access_modes(claim)) <= set(volumes.access_modes(volume))
    for message in failed.values():
        assert "volume" in message.lower(), message  # only storage can stop a pod here


# --- through `berth schedule simulate`'s files ----------------------------------------------------------------------

CLUSTER = """\
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: disk-n2}
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: local
  local: {path: /mnt/disk}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [n2]}]
"""
NODE = """\
---
apiVersion: v1
kind: Node
metadata: {{name: {name}, labels: {{kubernetes.io/hostname: {name}}}}}
status: {{allocatable: {{cpu: "4", memory: 8Gi, pods: "110"}}}}
"""
WORKLOAD = """\
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data-a}
spec: {accessModes: [ReadWriteOnce], storageClassName: local, resources: {requests: {storage: 1Gi}}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data-b}
spec: {accessModes: [ReadWriteOnce], storageClassName: local, resources: {requests: {storage: 1Gi}}}
"""
POD = """\
---
apiVersion: v1
kind: Pod
metadata: {{name: {name}}}
spec:
  containers: [{{name: c, image: pause}}]
  volumes: [{{name: d, persistentVolumeClaim: {{claimName: {claim}}}}}]
"""


def test_simulation_files_carry_storage_objects(tmp_path: Path) -> None:
    from berth.schedule import simulate

    cluster = tmp_path / "nodes.yaml"
    cluster.write_text(CLUSTER + "".join(NODE.format(name=n) for n in ("n1", "n2", "n3")))
    workload = tmp_path / "workload.yaml"
    pods = [("first", "data-a"), ("second", "data-b"), ("third", "data-a"), ("lost", "nope")]
    workload.write_text(WORKLOAD + "".join(POD.format(name=n, claim=c) for n, c in pods))
    config = schedconfig.parse(
        {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
    )
    result = simulate.simulate([config], str(cluster), str(workload)).to_dict()
    assert {p["pod"]: p["node"] for p in result["placements"]} == {
        "default/first": "n2",
        "default/third": "n2",
    }
    messages = {f["pod"]: f["message"] for f in result["unschedulable"]}
    assert set(messages) == {"default/second", "default/lost"}
    # (a PostFilter such as preemption may append its own sentence)
    assert messages["default/second"].startswith(
        "0/3 nodes are available: 3 node(s) didn't find available persistent volumes to bind."
    )
    assert messages["default/lost"].startswith(
        '0/3 nodes are available: persistentvolumeclaim "nope" not found.'
    )
    assert not any("Volume" in w for w in result["warnings"])
