"""VolumeBinding live: PreBind writes the scheduler's volume decisions through the API, as upstream's volume binder
(a static PV gets the claim's ``claimRef``; a WaitForFirstConsumer claim to provision gets the
``volume.kubernetes.io/selected-node`` annotation), and the cluster's PV controller finishes the binding."""

from __future__ import annotations

from typing import Any

from .conftest import Env, eventually, pod

SELECTED_NODE = "volume.kubernetes.io/selected-node"


def storage_class(name: str, provisioner: str) -> dict[str, Any]:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": provisioner,
        "volumeBindingMode": "WaitForFirstConsumer",
    }


def claim(name: str, storage_class_name: str, namespace: str = "default") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "storageClassName": storage_class_name,
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}},
        },
    }


def volume(name: str, storage_class_name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": {
            "storageClassName": storage_class_name,
            "capacity": {"storage": "2Gi"},
            "accessModes": ["ReadWriteOnce"],
            "hostPath": {"path": f"/data/{name}"},
        },
    }


def pod_with_claims(name: str, claims: list[str], scheduler: str = "default-scheduler") -> dict[str, Any]:
    p = pod(name, scheduler=scheduler)
    p["spec"]["volumes"] = [{"name": c, "persistentVolumeClaim": {"claimName": c}} for c in claims]
    return p


def create_storage(env: Env, namespace: str = "default", suffix: str = "") -> None:
    """A no-provisioner class with one free PV (static binding) and a provisioning class (dynamic), both WFFC."""
    for sc in (
        storage_class(f"local{suffix}", "kubernetes.io/no-provisioner"),
        storage_class(f"fast{suffix}", "csi.example.com"),
    ):
        env.call("POST", "/apis/storage.k8s.io/v1/storageclasses", sc)
    env.call("POST", "/api/v1/persistentvolumes", volume(f"pv{suffix}", f"local{suffix}"))
    for c in (claim("static", f"local{suffix}", namespace), claim("dynamic", f"fast{suffix}", namespace)):
        env.call("POST", f"/api/v1/namespaces/{namespace}/persistentvolumeclaims", c)


def test_pre_bind_writes_claim_ref_and_selected_node_through_the_api(env: Env) -> None:
    create_storage(env)
    with env.scheduler() as sched:
        assert sched.wait_synced(30)
        env.create(pod_with_claims("db", ["static", "dynamic"]))
        node = eventually(
            lambda: env.call("GET", "/api/v1/namespaces/default/pods/db")["spec"].get("nodeName"), 30, "bind"
        )
        assert sched.volume_writer.updates >= 2
    # The scheduler (not the cluster's controllers) wrote the PV and the claim (and nothing else; a retry after a
    # conflict on a loaded machine may write one of them again).
    writes = sorted(
        {
            (rec["verb"], rec["resource"], rec["name"])
            for rec in env.audit()
            if rec.get("verb") in ("update", "patch")
            and rec.get("resource") in ("persistentvolumes", "persistentvolumeclaims")
            and not str(rec.get("user") or "").startswith("system:")
            and 200 <= int(rec.get("code") or 0) < 300
        }
    )
    assert writes == [("update", "persistentvolumeclaims", "dynamic"), ("update", "persistentvolumes", "pv")]
    dynamic = env.call("GET", "/api/v1/namespaces/default/persistentvolumeclaims/dynamic")
    assert dynamic["metadata"]["annotations"][SELECTED_NODE] == node
    # The PV controller completes the static binding the scheduler chose.
    pv = eventually(
        lambda: (
            (v := env.call("GET", "/api/v1/persistentvolumes/pv"))["status"].get("phase") == "Bound" and v
        ),
        30,
        "PV bound",
    )
    assert pv["spec"]["claimRef"]["name"] == "static"
    assert pv["spec"]["claimRef"]["namespace"] == "default"
    static = env.call("GET", "/api/v1/namespaces/default/persistentvolumeclaims/static")
    assert static["spec"].get("volumeName") == "pv"


def test_a_refused_volume_write_fails_the_binding_and_the_pod_is_retried(env: Env) -> None:
    """A stale claim (changed between Reserve and PreBind) is answered 409: the pod is not bound in that cycle,
    the assumption is dropped, and the retry with the newer claim binds it."""
    create_storage(env)
    with env.scheduler() as sched:
        assert sched.wait_synced(30)
        real_update = sched.volume_writer.update
        calls: list[str] = []

        def stale_once(obj: Any) -> dict[str, Any]:
            if not calls:
                calls.append("stale")
                meta = dict(obj["metadata"])
                meta["resourceVersion"] = "1"
                obj = {**obj, "metadata": meta}
            return real_update(obj)

        sched.volume_writer.update = stale_once  # type: ignore[method-assign]
        env.create(pod_with_claims("db", ["dynamic"]))
        eventually(
            lambda: env.call("GET", "/api/v1/namespaces/default/pods/db")["spec"].get("nodeName"), 30, "bind"
        )
    assert calls == ["stale"]
    assert sorted(env.bindings_when(lambda b: len(b) >= 1).values()) == [1]
    failed = [
        rec
        for rec in env.audit()
        if rec.get("verb") == "update"
        and rec.get("resource") == "persistentvolumeclaims"
        and rec["code"] == 409
        and not str(rec.get("user") or "").startswith("system:")  # not the PV controller's own retries
    ]
    assert len(failed) == 1
