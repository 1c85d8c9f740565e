"""Deployments: ReplicaSets named by template hash, rolling updates within surge/unavailable, rollout status."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from berth.cluster.controllers import deployment

from .conftest import Cluster, condition, template, wait_for


def deploy(name: str, replicas: int = 3, image: str = "nginx:1.27", **spec: Any) -> dict[str, Any]:
    labels = {"app": name}
    body: dict[str, Any] = {
        "replicas": replicas,
        "selector": {"matchLabels": labels},
        "template": template(labels, image=image),
    }
    body.update(spec)
    return {"metadata": {"name": name}, "spec": body}


def rollout_done(d: dict[str, Any]) -> bool:
    """kubectl's ``rollout status`` test for a Deployment (rollout_status.go)."""
    st = d.get("status") or {}
    want = d["spec"]["replicas"]
    return bool(
        st.get("observedGeneration", 0) >= d["metadata"]["generation"]
        and st.get("updatedReplicas", 0) >= want
        and st.get("replicas", 0) <= st.get("updatedReplicas", 0)
        and st.get("availableReplicas", 0) >= st.get("updatedReplicas", 0)
    )


def wait_rollout(c: Cluster, name: str) -> Any:
    return wait_for(
        lambda: (d := c.get("deployments.apps", name)) and rollout_done(d) and d, what=f"rollout of {name}"
    )


def set_image_and_wait(c: Cluster, name: str, image: str) -> Any:
    d = c.get("deployments.apps", name)
    d["spec"]["template"]["spec"]["containers"][0]["image"] = image
    gen = c.api.update("deployments.apps", d, "default")["metadata"]["generation"]

    def done() -> Any:
        x = c.get("deployments.apps", name)
        return x["metadata"]["generation"] == gen and rollout_done(x) and x

    return wait_for(done, what=f"rollout of {name} to {image}")


def owned_sets(c: Cluster, d: dict[str, Any]) -> list[dict[str, Any]]:
    uid = d["metadata"]["uid"]
    return [
        rs
        for rs in c.api.list("replicasets.apps", "default")[0]
        if any(r["uid"] == uid for r in rs["metadata"].get("ownerReferences", []))
    ]


def test_creates_a_replicaset_named_by_template_hash(cluster: Cluster) -> None:
    cluster.api.create("deployments.apps", deploy("web"), "default")
    d = wait_rollout(cluster, "web")
    (rs,) = owned_sets(cluster, d)
    h = deployment.template_hash(d["spec"]["template"])
    assert rs["metadata"]["name"] == f"web-{h}"
    assert rs["metadata"]["labels"]["pod-template-hash"] == h
    assert rs["spec"]["selector"]["matchLabels"] == {"app": "web", "pod-template-hash": h}
    assert rs["spec"]["template"]["metadata"]["labels"]["pod-template-hash"] == h
    (ref,) = rs["metadata"]["ownerReferences"]
    assert ref["kind"] == "Deployment" and ref["controller"] is True and ref["blockOwnerDeletion"] is True
    assert rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
    assert d["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
    assert all(p["metadata"]["labels"]["pod-template-hash"] == h for p in cluster.pods(selector="app=web"))


def test_status_and_conditions_when_available(cluster: Cluster) -> None:
    cluster.api.create("deployments.apps", deploy("web"), "default")
    d = wait_rollout(cluster, "web")
    st = d["status"]
    assert {
        k: st[k]
        for k in ("observedGeneration", "replicas", "updatedReplicas", "readyReplicas", "availableReplicas")
    } == {
        "observedGeneration": 1,
        "replicas": 3,
        "updatedReplicas": 3,
        "readyReplicas": 3,
        "availableReplicas": 3,
    }
    avail, prog = condition(d, "Available"), condition(d, "Progressing")
    assert avail is not None and (avail["status"], avail["reason"]) == ("True", "MinimumReplicasAvailable")
    assert prog is not None and (prog["status"], prog["reason"]) == ("True", "NewReplicaSetAvailable")
    assert [c["type"] for c in st["conditions"]] == ["Available", "Progressing"]


class PodTracker:
    """Follows a pod watch and records the most pods alive and the fewest ready ones (after a start point)."""

    def __init__(self, c: Cluster, selector: str) -> None:
        self.watch = c.api.watch("pods", "default", label_selector=selector)
        self.pods: dict[str, dict[str, Any]] = {}
        self.max_alive = 0
        self.min_ready: int | None = None
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self) -> None:
        while not self.stop.is_set():
            ev = self.watch.next_event(0.05)
            if ev is None:
                continue
            kind, obj = ev
            name = obj["metadata"]["name"]
            if kind == "DELETED":
                self.pods.pop(name, None)
            else:
                self.pods[name] = obj
            alive = len(self.pods)
            ready = sum(
                1 for p in self.pods.values() if (condition(p, "Ready") or {}).get("status") == "True"
            )
            self.max_alive = max(self.max_alive, alive)
            self.min_ready = ready if self.min_ready is None else min(self.min_ready, ready)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(2)
        self.watch.close()


@pytest.mark.parametrize(
    ("surge", "unavailable", "max_alive", "min_ready"),
    [
        pytest.param(1, 0, 5, 4, id="surge-1-unavailable-0"),
        pytest.param(0, 1, 4, 3, id="surge-0-unavailable-1"),
        pytest.param("50%", "25%", 6, 3, id="percentages"),
    ],
)
def test_rolling_update_respects_surge_and_unavailable(
    cluster: Cluster, surge: Any, unavailable: Any, max_alive: int, min_ready: int
) -> None:
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": surge, "maxUnavailable": unavailable}}
    cluster.api.create("deployments.apps", deploy("roll", replicas=4, strategy=strategy), "default")
    wait_rollout(cluster, "roll")
    tracker = PodTracker(cluster, "app=roll")
    try:
        wait_for(lambda: len(tracker.pods) == 4, what="tracker synced")
        tracker.max_alive, tracker.min_ready = 0, None
        d = cluster.get("deployments.apps", "roll")
        d["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.28"
        cluster.api.update("deployments.apps", d, "default")
        done = wait_for(
            lambda: (
                (x := cluster.get("deployments.apps", "roll"))["metadata"]["generation"] == 2
                and rollout_done(x)
                and x
            ),
            what="second rollout",
        )
        wait_for(
            lambda: (
                len(tracker.pods) == 4
                and all(p["spec"]["containers"][0]["image"] == "nginx:1.28" for p in tracker.pods.values())
            ),
            what="tracker caught up",
        )
    finally:
        tracker.close()
    assert tracker.max_alive <= max_alive
    assert tracker.min_ready is not None and tracker.min_ready >= min_ready
    sets = owned_sets(cluster, done)
    assert sorted(
        (rs["spec"]["replicas"], rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"])
        for rs in sets
    ) == [(0, "1"), (4, "2")]
    assert done["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"


def test_recreate_scales_old_to_zero_before_new(cluster: Cluster) -> None:
    cluster.api.create(
        "deployments.apps", deploy("rec", replicas=2, strategy={"type": "Recreate"}), "default"
    )
    wait_rollout(cluster, "rec")
    tracker = PodTracker(cluster, "app=rec")
    try:
        wait_for(lambda: len(tracker.pods) == 2, what="tracker synced")
        d = cluster.get("deployments.apps", "rec")
        d["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.28"
        cluster.api.update("deployments.apps", d, "default")
        wait_for(
            lambda: (
                (x := cluster.get("deployments.apps", "rec"))["metadata"]["generation"] == 2
                and rollout_done(x)
            ),
            what="recreate rollout",
        )
        wait_for(
            lambda: (
                len(tracker.pods) == 2
                and all(p["spec"]["containers"][0]["image"] == "nginx:1.28" for p in tracker.pods.values())
            ),
            what="tracker caught up",
        )
    finally:
        tracker.close()
    assert tracker.min_ready == 0, "Recreate has a moment with no pods"
    assert tracker.max_alive <= 2


def test_rollback_to_an_old_template_reuses_its_replicaset(cluster: Cluster) -> None:
    cluster.api.create("deployments.apps", deploy("back", replicas=1), "default")
    first = wait_rollout(cluster, "back")
    (rs1,) = owned_sets(cluster, first)
    for image in ("nginx:1.28", "nginx:1.27"):
        set_image_and_wait(cluster, "back", image)
    d = cluster.get("deployments.apps", "back")
    sets = {rs["metadata"]["name"]: rs for rs in owned_sets(cluster, d)}
    assert len(sets) == 2
    assert sets[rs1["metadata"]["name"]]["spec"]["replicas"] == 1
    assert (
        sets[rs1["metadata"]["name"]]["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "3"
    )


def test_scaling_changes_the_current_replicaset(cluster: Cluster) -> None:
    cluster.api.create("deployments.apps", deploy("sc", replicas=2), "default")
    wait_rollout(cluster, "sc")
    d = cluster.get("deployments.apps", "sc")
    d["spec"]["replicas"] = 5
    cluster.api.update("deployments.apps", d, "default")
    done = wait_for(
        lambda: (
            (x := cluster.get("deployments.apps", "sc"))["status"].get("availableReplicas") == 5
            and rollout_done(x)
            and x
        ),
        what="scaled to 5",
    )
    (rs,) = owned_sets(cluster, done)
    assert rs["spec"]["replicas"] == 5


def test_progress_deadline_exceeded_when_pods_never_run(cluster: Cluster) -> None:
    body = deploy("stuck", replicas=1, progressDeadlineSeconds=1)
    del body["spec"]["template"]["spec"]["nodeName"]  # no scheduler binds it
    cluster.api.create("deployments.apps", body, "default")
    d = wait_for(
        lambda: (
            (x := cluster.get("deployments.apps", "stuck"))
            and (condition(x, "Progressing") or {}).get("reason") == "ProgressDeadlineExceeded"
            and x
        ),
        timeout=30,
        what="ProgressDeadlineExceeded",
    )
    assert condition(d, "Progressing")["status"] == "False"  # type: ignore[index]
    assert condition(d, "Available")["status"] == "False"  # type: ignore[index]


def test_revision_history_limit_prunes_old_sets(cluster: Cluster) -> None:
    cluster.api.create("deployments.apps", deploy("hist", replicas=1, revisionHistoryLimit=1), "default")
    wait_rollout(cluster, "hist")
    for image in ("a:1", "a:2", "a:3"):
        set_image_and_wait(cluster, "hist", image)
    d = cluster.get("deployments.apps", "hist")
    wait_for(lambda: len(owned_sets(cluster, d)) == 2, what="history pruned to 1 old set")


def test_scaling_replica_set_events(cluster: Cluster) -> None:
    cluster.api.create("deployments.apps", deploy("evd", replicas=2), "default")
    d = wait_rollout(cluster, "evd")
    cluster.controllers.ctx.recorder.flush()
    (rs,) = owned_sets(cluster, d)
    msgs = [
        e["message"]
        for e in cluster.api.list("events", "default")[0]
        if e["involvedObject"].get("name") == "evd" and e["reason"] == "ScalingReplicaSet"
    ]
    assert msgs == [f"Scaled up replica set {rs['metadata']['name']} from 0 to 2"]


@pytest.mark.parametrize(
    ("value", "total", "up", "want"),
    [
        pytest.param("25%", 4, True, 1, id="pct-up-exact"),
        pytest.param("25%", 3, True, 1, id="pct-up-rounds-up"),
        pytest.param("25%", 3, False, 0, id="pct-down-rounds-down"),
        pytest.param(2, 10, False, 2, id="int"),
        pytest.param("3", 10, True, 3, id="int-string"),
        pytest.param(None, 10, True, 0, id="unset"),
    ],
)
def test_resolve_int_or_percent(value: Any, total: int, up: bool, want: int) -> None:
    assert deployment.resolve(value, total, up) == want


def test_template_hash_is_stable_and_ignores_its_own_label() -> None:
    t = {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
    h = deployment.template_hash(t)
    assert h == deployment.template_hash({"spec": t["spec"], "metadata": {"labels": {"app": "x"}}})
    labelled = {"metadata": {"labels": {"app": "x", "pod-template-hash": h}}, "spec": t["spec"]}
    assert deployment.template_hash(labelled) == h
    assert deployment.template_hash(t, collision_count=1) != h
    assert set(h) <= set("bcdfghjklmnpqrstvwxz2456789")
