"""The official ``kubernetes`` Python client against the embedded cluster (through berth's client wrapper)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, watch
from kubernetes.client.exceptions import ApiException

from berth.cluster import Cluster, ClusterOptions
from berth.kube import client as kube_client


def _lease(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15}}


def test_lease_replace_with_stale_version_conflicts(k8s: Any) -> None:
    coord: Any = client.CoordinationV1Api(k8s)
    with pytest.raises(ApiException) as info:
        coord.read_namespaced_lease("lk", "default")
    assert info.value.status == 404
    assert json.loads(str(info.value.body))["message"] == 'leases.coordination.k8s.io "lk" not found'
    coord.create_namespaced_lease("default", _lease("lk"))
    lease = coord.read_namespaced_lease("lk", "default")
    lease.spec.holder_identity = "b"
    coord.replace_namespaced_lease("lk", "default", lease)
    lease.spec.holder_identity = "c"
    with pytest.raises(ApiException) as info:
        coord.replace_namespaced_lease("lk", "default", lease)
    assert info.value.status == 409


def test_binding_answers_status_and_binds(k8s: Any) -> None:
    core: Any = client.CoreV1Api(k8s)
    core.create_namespaced_pod(
        "default", {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "x"}]}}
    )
    body = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "p"},
        "target": {"kind": "Node", "name": "n1"},
    }
    resp = core.create_namespaced_binding("default", body, _preload_content=False)
    assert resp.status == 201 and json.loads(resp.data)["status"] == "Success"
    assert core.read_namespaced_pod("p", "default").spec.node_name == "n1"
    with pytest.raises(ApiException) as info:
        core.create_namespaced_pod_binding("p", "default", body, _preload_content=False)
    assert info.value.status == 409


def test_server_side_apply_requires_field_manager_and_upserts(k8s: Any) -> None:
    core: Any = client.CoreV1Api(k8s)
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa"}, "data": {"a": "1"}}
    with pytest.raises(ApiException) as info:
        core.patch_namespaced_config_map("ssa", "default", body, _content_type="application/apply-patch+yaml")
    assert info.value.status == 422 and "fieldManager" in str(info.value.body)
    cm = core.patch_namespaced_config_map(
        "ssa", "default", body, field_manager="m", _content_type="application/apply-patch+yaml"
    )
    assert cm.data == {"a": "1"} and cm.metadata.managed_fields[0].operation == "Apply"


def test_dry_run_create_and_delete_options_as_query(k8s: Any) -> None:
    core: Any = client.CoreV1Api(k8s)
    out = core.create_namespaced_config_map("default", {"metadata": {"name": "dry"}}, dry_run="All")
    assert out.metadata.uid
    with pytest.raises(ApiException):
        core.read_namespaced_config_map("dry", "default")
    core.create_namespaced_config_map("default", {"metadata": {"name": "del"}})
    core.delete_namespaced_config_map(
        "del", "default", propagation_policy="Background", grace_period_seconds=0
    )
    with pytest.raises(ApiException) as info:
        core.read_namespaced_config_map("del", "default")
    assert info.value.status == 404


def test_python_timestamps_are_accepted_on_events(k8s: Any) -> None:
    import datetime

    core: Any = client.CoreV1Api(k8s)
    now = datetime.datetime.now(datetime.UTC)
    ev = core.create_namespaced_event(
        "default",
        client.CoreV1Event(
            metadata=client.V1ObjectMeta(generate_name="x-"),
            involved_object=client.V1ObjectReference(kind="Pod", name="p", namespace="default"),
            reason="Tested",
            message="hello",
            first_timestamp=now,
            last_timestamp=now,
            type="Normal",
        ),
    )
    assert ev.metadata.name.startswith("x-")
    listed = core.list_namespaced_event("default", field_selector="reason=Tested")
    assert [e.message for e in listed.items] == ["hello"]


def test_watch_stream_sees_changes_and_resumes_after_restart(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with Cluster(ClusterOptions(data_dir=data, run_controllers=False)) as c:
        core: Any = client.CoreV1Api(kube_client.api_client(c.kubeconfig))
        core.create_namespaced_config_map("default", {"metadata": {"name": "a"}})
        rv = core.list_namespaced_config_map("default").metadata.resource_version
        core.create_namespaced_config_map("default", {"metadata": {"name": "b"}})
        port = c.port
    with Cluster(ClusterOptions(data_dir=data, port=port, run_controllers=False)) as c:
        core = client.CoreV1Api(kube_client.api_client(c.kubeconfig))
        core.create_namespaced_config_map("default", {"metadata": {"name": "c"}})
        seen: list[tuple[str, str]] = []
        w = watch.Watch()  # type: ignore[no-untyped-call]
        for ev in w.stream(  # type: ignore[no-untyped-call]
            core.list_namespaced_config_map, "default", resource_version=rv, timeout_seconds=2
        ):
            seen.append((ev["type"], ev["object"].metadata.name))
            if len(seen) == 2:
                w.stop()  # type: ignore[no-untyped-call]
        assert seen == [("ADDED", "b"), ("ADDED", "c")]


def test_watch_delivers_live_events_in_order(k8s: Any) -> None:
    core: Any = client.CoreV1Api(k8s)
    rv = core.list_namespaced_config_map("default").metadata.resource_version
    got: list[str] = []
    started = threading.Event()

    def consume() -> None:
        w = watch.Watch()  # type: ignore[no-untyped-call]
        started.set()
        for ev in w.stream(  # type: ignore[no-untyped-call]
            core.list_namespaced_config_map, "default", resource_version=rv, timeout_seconds=5
        ):
            got.append(f"{ev['type']}:{ev['object'].metadata.name}")
            if len(got) == 3:
                w.stop()  # type: ignore[no-untyped-call]

    t = threading.Thread(target=consume)
    t.start()
    started.wait()
    core.create_namespaced_config_map("default", {"metadata": {"name": "x"}})
    core.patch_namespaced_config_map("x", "default", {"data": {"k": "v"}})
    core.delete_namespaced_config_map("x", "default")
    t.join(10)
    assert got == ["ADDED:x", "MODIFIED:x", "DELETED:x"]
