"""StatefulSets: ordinal pods created in order, identity labels, ordered scale-down and rolling updates."""

from __future__ import annotations

import threading
from typing import Any

from berth.cluster.controllers import statefulset

from .conftest import Cluster, condition, template, wait_for


def sts(name: str, replicas: int = 3, **spec: Any) -> dict[str, Any]:
    labels = {"app": name}
    body: dict[str, Any] = {
        "replicas": replicas,
        "serviceName": name,
        "selector": {"matchLabels": labels},
        "template": template(labels),
    }
    body.update(spec)
    return {"metadata": {"name": name}, "spec": body}


def rollout_done(s: dict[str, Any]) -> bool:
    """kubectl's ``rollout status`` test for a StatefulSet with RollingUpdate (rollout_status.go)."""
    st = s.get("status") or {}
    want = s["spec"]["replicas"]
    if st.get("observedGeneration", 0) == 0 or s["metadata"]["generation"] > st.get("observedGeneration", 0):
        return False
    if st.get("readyReplicas", 0) < want:
        return False
    partition = ((s["spec"].get("updateStrategy") or {}).get("rollingUpdate") or {}).get("partition")
    if partition is not None and st.get("updatedReplicas", 0) < want - partition:
        return False
    return bool(st.get("updateRevision") == st.get("currentRevision"))


def wait_done(c: Cluster, name: str) -> Any:
    return wait_for(
        lambda: (s := c.get("statefulsets.apps", name)) and rollout_done(s) and s, what=f"sts {name}"
    )


class Recorder:
    """Records, from a pod watch, the order of pod creations and of Ready transitions."""

    def __init__(self, c: Cluster) -> None:
        self.watch = c.api.watch("pods", "default")
        self.log: list[tuple[str, str]] = []
        self.ready: set[str] = set()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self) -> None:
        while True:
            # once asked to stop, drain what the watch already holds (what the test saw in the store is in it)
            ev = self.watch.next_event(0 if self.stop.is_set() else 0.05)
            if ev is None:
                if self.stop.is_set():
                    return
                continue
            kind, obj = ev
            name = obj["metadata"]["name"]
            if kind == "ADDED":
                self.log.append(("created", name))
            elif kind == "DELETED":
                self.log.append(("deleted", name))
                self.ready.discard(name)
            if (
                kind != "DELETED"
                and (condition(obj, "Ready") or {}).get("status") == "True"
                and name not in self.ready
            ):
                self.ready.add(name)
                self.log.append(("ready", name))

    def close(self) -> None:
        self.stop.set()
        self.thread.join(2)
        self.watch.close()


def test_pods_are_created_in_order_after_the_previous_is_ready(cluster: Cluster) -> None:
    rec = Recorder(cluster)
    try:
        cluster.api.create("statefulsets.apps", sts("db"), "default")
        wait_done(cluster, "db")
    finally:
        rec.close()
    assert [e for e in rec.log if e[0] in ("created", "ready")] == [
        ("created", "db-0"),
        ("ready", "db-0"),
        ("created", "db-1"),
        ("ready", "db-1"),
        ("created", "db-2"),
        ("ready", "db-2"),
    ]


def test_pod_identity_labels_and_status(cluster: Cluster) -> None:
    cluster.api.create("statefulsets.apps", sts("db", replicas=2), "default")
    s = wait_done(cluster, "db")
    st = s["status"]
    assert st["replicas"] == st["readyReplicas"] == st["currentReplicas"] == st["updatedReplicas"] == 2
    assert st["availableReplicas"] == 2
    assert st["currentRevision"] == st["updateRevision"]
    assert st["updateRevision"].startswith("db-")
    p = cluster.get("pods", "db-1")
    labels = p["metadata"]["labels"]
    assert labels["statefulset.kubernetes.io/pod-name"] == "db-1"
    assert labels["apps.kubernetes.io/pod-index"] == "1"
    assert labels["controller-revision-hash"] == st["updateRevision"]
    assert p["spec"]["hostname"] == "db-1" and p["spec"]["subdomain"] == "db"
    rev = cluster.get("controllerrevisions.apps", st["updateRevision"])
    assert rev["revision"] == 1
    assert rev["metadata"]["ownerReferences"][0]["kind"] == "StatefulSet"


def test_scale_down_removes_highest_ordinals_first(cluster: Cluster) -> None:
    cluster.api.create("statefulsets.apps", sts("db", replicas=3), "default")
    wait_done(cluster, "db")
    rec = Recorder(cluster)
    try:
        s = cluster.get("statefulsets.apps", "db")
        s["spec"]["replicas"] = 1
        cluster.api.update("statefulsets.apps", s, "default")
        wait_for(lambda: [p["metadata"]["name"] for p in cluster.pods()] == ["db-0"], what="scaled to 1")
        wait_done(cluster, "db")
    finally:
        rec.close()
    assert [e for e in rec.log if e[0] == "deleted"] == [("deleted", "db-2"), ("deleted", "db-1")]


def test_rolling_update_replaces_pods_from_the_top(cluster: Cluster) -> None:
    cluster.api.create("statefulsets.apps", sts("db", replicas=3), "default")
    before = wait_done(cluster, "db")["status"]["updateRevision"]
    rec = Recorder(cluster)
    try:
        s = cluster.get("statefulsets.apps", "db")
        s["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.28"
        cluster.api.update("statefulsets.apps", s, "default")
        after = wait_for(
            lambda: (
                (x := cluster.get("statefulsets.apps", "db"))["status"].get("updateRevision") != before
                and rollout_done(x)
                and x
            ),
            what="rolled",
        )
    finally:
        rec.close()
    assert [e for e in rec.log if e[0] == "deleted"] == [
        ("deleted", "db-2"),
        ("deleted", "db-1"),
        ("deleted", "db-0"),
    ]
    assert after["status"]["currentRevision"] == after["status"]["updateRevision"]
    for p in cluster.pods():
        assert p["spec"]["containers"][0]["image"] == "nginx:1.28"
        assert p["metadata"]["labels"]["controller-revision-hash"] == after["status"]["updateRevision"]


def test_partition_keeps_low_ordinals_on_the_old_revision(cluster: Cluster) -> None:
    body = sts("db", replicas=3, updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 2}})
    cluster.api.create("statefulsets.apps", body, "default")
    wait_done(cluster, "db")
    s = cluster.get("statefulsets.apps", "db")
    s["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.28"
    cluster.api.update("statefulsets.apps", s, "default")
    wait_for(
        lambda: cluster.get("pods", "db-2")["spec"]["containers"][0]["image"] == "nginx:1.28",
        what="db-2 updated",
    )
    st = wait_for(
        lambda: (
            (x := cluster.get("statefulsets.apps", "db"))["status"].get("updatedReplicas") == 1
            and x["status"].get("readyReplicas") == 3
            and x["status"]
        ),
        what="partitioned status",
    )
    assert st["currentRevision"] != st["updateRevision"]
    assert cluster.get("pods", "db-0")["spec"]["containers"][0]["image"] == "nginx:1.27"


def test_parallel_policy_creates_all_at_once(cluster: Cluster) -> None:
    body = sts("par", replicas=3, podManagementPolicy="Parallel")
    del body["spec"]["template"]["spec"]["nodeName"]  # pods never become Ready
    cluster.api.create("statefulsets.apps", body, "default")
    wait_for(lambda: len(cluster.pods()) == 3, what="3 pods without waiting for readiness")


def test_volume_claim_templates_make_claims(cluster: Cluster) -> None:
    vct = {
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    cluster.api.create("statefulsets.apps", sts("vol", replicas=1, volumeClaimTemplates=[vct]), "default")
    pvc = wait_for(lambda: cluster.get("persistentvolumeclaims", "data-vol-0"), what="claim")
    assert pvc["spec"]["resources"]["requests"]["storage"] == "1Gi"
    p = wait_for(lambda: cluster.get("pods", "vol-0"), what="pod")
    assert {"name": "data", "persistentVolumeClaim": {"claimName": "data-vol-0"}} in p["spec"]["volumes"]


def test_ordinal_parsing() -> None:
    assert statefulset.ordinal("db", {"metadata": {"name": "db-12"}}) == 12
    assert statefulset.ordinal("db", {"metadata": {"name": "db-x"}}) is None
    assert statefulset.ordinal("db", {"metadata": {"name": "dbx-1"}}) is None
