"""The simulated kubelet: bound pods run and become Ready, Job pods and bare run-once pods finish, terminating
pods go away."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from typing import Any

import pytest

from berth.cluster.controllers import client, kubelet

from .conftest import Cluster, condition, pod, wait_for


def running(c: Cluster, name: str, ns: str = "default") -> Any:
    return wait_for(
        lambda: (p := c.get("pods", name, ns))["status"].get("phase") == "Running" and p,
        what=f"pod {name} Running",
    )


def test_bound_pod_becomes_running_and_ready(cluster: Cluster) -> None:
    cluster.api.create(
        "pods", pod("p", spec={"initContainers": [{"name": "init", "image": "busybox"}]}), "default"
    )
    p = running(cluster, "p")
    st = p["status"]
    for ctype in ("PodScheduled", "Initialized", "ContainersReady", "Ready"):
        assert condition(p, ctype)["status"] == "True", ctype  # type: ignore[index]
    assert ipaddress.ip_address(st["podIP"]) in ipaddress.ip_network("10.244.1.0/24")
    assert st["podIPs"] == [{"ip": st["podIP"]}]
    node = cluster.get("nodes", "node-1", None)
    internal = next(a["address"] for a in node["status"]["addresses"] if a["type"] == "InternalIP")
    assert st["hostIP"] == internal
    assert st["startTime"].endswith("Z")
    (cs,) = st["containerStatuses"]
    assert cs["ready"] is True and cs["started"] is True and "running" in cs["state"]
    assert cs["imageID"].startswith("docker.io/library/nginx@sha256:")
    assert cs["containerID"].startswith("containerd://")
    assert st["initContainerStatuses"][0]["state"]["terminated"]["reason"] == "Completed"


def test_pod_ips_are_unique_per_node(cluster: Cluster) -> None:
    for i in range(12):
        cluster.api.create("pods", pod(f"p{i}", node="node-2"), "default")
    wait_for(
        lambda: len([p for p in cluster.pods() if p["status"].get("podIP")]) == 12,
        what="12 running pods",
    )
    ips = [p["status"]["podIP"] for p in cluster.pods()]
    assert len(set(ips)) == 12
    assert all(ip.startswith("10.244.2.") for ip in ips)


def test_host_network_pod_uses_the_node_ip(cluster: Cluster) -> None:
    cluster.api.create("pods", pod("h", spec={"hostNetwork": True}), "default")
    p = running(cluster, "h")
    assert p["status"]["podIP"] == p["status"]["hostIP"]


@pytest.mark.parametrize(
    ("node", "why"),
    [pytest.param(None, "not bound", id="unbound"), pytest.param("ghost", "node missing", id="missing-node")],
)
def test_pods_that_cannot_run_stay_pending(cluster: Cluster, node: str | None, why: str) -> None:
    cluster.api.create("pods", pod("waiting", node=node), "default")
    cluster.api.create("pods", pod("marker"), "default")
    running(cluster, "marker")  # the kubelet has processed later work by now
    assert cluster.get("pods", "waiting")["status"]["phase"] == "Pending", why


def test_pod_starts_once_its_node_appears(cluster: Cluster) -> None:
    cluster.api.create("pods", pod("early", node="late-node"), "default")
    cluster.api.create("nodes", {"metadata": {"name": "late-node"}})
    running(cluster, "early")


def job_owned_pod(name: str, job: dict[str, Any]) -> dict[str, Any]:
    p = pod(name, spec={"restartPolicy": "Never"})
    p["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "name": job["metadata"]["name"],
            "uid": job["metadata"]["uid"],
            "controller": True,
        }
    ]
    return p


@pytest.mark.parametrize(
    ("annotations", "phase", "code", "reason"),
    [
        pytest.param({}, "Succeeded", 0, "Completed", id="succeeds"),
        pytest.param(
            {kubelet.SIMULATE_FAILURE_ANNOTATION: "true"}, "Failed", 1, "Error", id="fails-on-annotation"
        ),
    ],
)
def test_job_pods_finish(
    make_cluster: Callable[..., Cluster], annotations: dict[str, str], phase: str, code: int, reason: str
) -> None:
    cluster = make_cluster(disabled=frozenset({"job"}))  # we hand-make the Job's pod
    job = cluster.api.create(
        "jobs.batch",
        {
            "metadata": {"name": "j", "annotations": annotations},
            "spec": {
                "suspend": True,
                "template": {
                    "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}
                },
            },
        },
        "default",
    )
    cluster.api.create("pods", job_owned_pod("jp", job), "default")
    p = wait_for(lambda: (x := cluster.get("pods", "jp"))["status"].get("phase") == phase and x, what=phase)
    (cs,) = p["status"]["containerStatuses"]
    assert cs["state"]["terminated"]["exitCode"] == code
    assert cs["state"]["terminated"]["reason"] == reason
    assert cs["ready"] is False
    assert condition(p, "Ready")["status"] == "False"  # type: ignore[index]


def test_pod_annotation_alone_also_fails_a_job_pod(make_cluster: Callable[..., Cluster]) -> None:
    cluster = make_cluster(disabled=frozenset({"job"}))
    job = cluster.api.create(
        "jobs.batch",
        {
            "metadata": {"name": "j2"},
            "spec": {
                "suspend": True,
                "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "b"}]}},
            },
        },
        "default",
    )
    p = job_owned_pod("jp2", job)
    p["metadata"]["annotations"] = {kubelet.SIMULATE_FAILURE_ANNOTATION: "true"}
    cluster.api.create("pods", p, "default")
    wait_for(lambda: cluster.get("pods", "jp2")["status"].get("phase") == "Failed", what="Failed")


def test_plain_pod_keeps_running(cluster: Cluster) -> None:
    cluster.api.create("pods", pod("svc", spec={"restartPolicy": "Always"}), "default")
    cluster.api.create("pods", pod("default-policy"), "default")
    running(cluster, "svc")
    running(cluster, "default-policy")
    cluster.api.create("pods", pod("marker"), "default")
    running(cluster, "marker")  # the kubelet has processed later work by now
    assert cluster.get("pods", "svc")["status"]["phase"] == "Running"
    assert cluster.get("pods", "default-policy")["status"]["phase"] == "Running"


@pytest.mark.parametrize(
    ("policy", "annotations", "phase", "code"),
    [
        pytest.param("Never", {}, "Succeeded", 0, id="never"),
        pytest.param("OnFailure", {}, "Succeeded", 0, id="on-failure"),
        pytest.param("Never", {kubelet.SIMULATE_FAILURE_ANNOTATION: "true"}, "Failed", 1, id="never-fails"),
    ],
)
def test_bare_pod_that_does_not_restart_runs_to_completion(
    cluster: Cluster, policy: str, annotations: dict[str, str], phase: str, code: int
) -> None:
    """Helm test hooks and ``kubectl run --restart=Never`` pods: bare pods whose containers are not restarted
    finish, so ``helm test`` / ``berth install test`` and ``kubectl wait --for=jsonpath=...phase`` complete."""
    cluster.api.create(
        "pods", pod("once", spec={"restartPolicy": policy}, metadata={"annotations": annotations}), "default"
    )
    p = wait_for(lambda: (x := cluster.get("pods", "once"))["status"].get("phase") == phase and x, what=phase)
    (cs,) = p["status"]["containerStatuses"]
    assert cs["state"]["terminated"]["exitCode"] == code
    assert condition(p, "Ready")["status"] == "False"  # type: ignore[index]


def test_controlled_pod_that_is_not_a_jobs_keeps_running(cluster: Cluster) -> None:
    """Only a Job's pods finish among controlled pods, whatever their restartPolicy says."""
    holder = cluster.api.create("configmaps", {"metadata": {"name": "holder"}}, "default")
    # a live owner (the garbage collector deletes pods whose owner is gone); only the controller's kind matters
    owner = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "holder",
        "uid": holder["metadata"]["uid"],
        "controller": True,
    }
    cluster.api.create(
        "pods",
        pod("owned", spec={"restartPolicy": "Never"}, metadata={"ownerReferences": [owner]}),
        "default",
    )
    running(cluster, "owned")
    cluster.api.create("pods", pod("marker2"), "default")
    running(cluster, "marker2")
    assert cluster.get("pods", "owned")["status"]["phase"] == "Running"


def test_terminating_pod_is_removed_once_finalizers_are_gone(cluster: Cluster) -> None:
    cluster.api.create("pods", pod("fin", metadata={"finalizers": ["example.com/hold"]}), "default")
    running(cluster, "fin")
    cluster.api.delete("pods", "fin", "default")
    p = cluster.get("pods", "fin")
    assert p["metadata"].get("deletionTimestamp")
    p["metadata"]["finalizers"] = []
    cluster.api.update("pods", p, "default")
    wait_for(lambda: not [x for x in cluster.pods() if x["metadata"]["name"] == "fin"], what="pod removed")


def test_kubelet_records_container_events(cluster: Cluster) -> None:
    cluster.api.create("pods", pod("ev"), "default")
    running(cluster, "ev")
    cluster.controllers.ctx.recorder.flush()
    events = wait_for(
        lambda: [
            e for e in cluster.api.list("events", "default")[0] if e["involvedObject"].get("name") == "ev"
        ],
        what="events",
    )
    reasons = {e["reason"]: e for e in events}
    assert {"Pulled", "Created", "Started"} <= set(reasons)
    assert reasons["Started"]["source"] == {"component": "kubelet", "host": "node-1"}
    assert reasons["Created"]["message"] == "Created container: main"


@pytest.mark.parametrize(
    ("image", "repo"),
    [
        pytest.param("nginx", "docker.io/library/nginx", id="library"),
        pytest.param("nginx:1.27", "docker.io/library/nginx", id="tag"),
        pytest.param("bitnami/redis:7", "docker.io/bitnami/redis", id="user-repo"),
        pytest.param("registry.k8s.io/pause:3.10", "registry.k8s.io/pause", id="registry"),
        pytest.param("localhost:5000/app:v1", "localhost:5000/app", id="registry-port"),
    ],
)
def test_image_id_normalises_repository(image: str, repo: str) -> None:
    ident = kubelet.image_id(image)
    assert ident.startswith(repo + "@sha256:")
    assert ident == kubelet.image_id(image)


@pytest.mark.parametrize("graceful", [True, False], ids=["api-with-grace-option", "api-without"])
def test_final_delete_asks_for_grace_period_zero_when_supported(graceful: bool) -> None:
    calls: list[dict[str, Any]] = []

    class WithGrace:
        def delete(
            self,
            resource: str,
            name: str,
            namespace: str | None = None,
            *,
            user: str = "",
            grace_period_seconds: int | None = None,
        ) -> dict[str, Any]:
            calls.append({"grace": grace_period_seconds})
            return {}

    class Without:
        def delete(
            self, resource: str, name: str, namespace: str | None = None, *, user: str = ""
        ) -> dict[str, Any]:
            calls.append({})
            return {}

    api: Any = WithGrace() if graceful else Without()
    client.delete_now(api, "pods", "p", "default", user="u")
    assert calls == ([{"grace": 0}] if graceful else [{}])


# ---- in-place resize (pods/resize) as the 1.35 kubelet reports it ---------------------------------------------------


def sized(name: str, cpu: str, memory_policy: str = "NotRequired") -> dict[str, Any]:
    resources = {"requests": {"cpu": cpu, "memory": "64Mi"}, "limits": {"memory": "64Mi"}}
    policy = [{"resourceName": "memory", "restartPolicy": memory_policy}]
    return pod(
        name,
        spec={
            "containers": [{"name": "main", "image": "nginx", "resources": resources, "resizePolicy": policy}]
        },
    )


def resize(c: Cluster, name: str, resources: dict[str, Any]) -> None:
    patch = {"spec": {"containers": [{"name": "main", "resources": resources}]}}
    c.api.patch("pods", name, patch, "strategic", "default", subresource="resize")


def settled(c: Cluster, name: str, generation: int) -> Any:
    """The pod once the kubelet has seen ``generation`` and no resize condition is left."""
    return wait_for(
        lambda: (
            (p := c.get("pods", name))["status"].get("observedGeneration") == generation
            and not [x for x in p["status"].get("conditions") or [] if x["type"].startswith("PodResize")]
            and p
        ),
        what=f"pod {name} resized to generation {generation}",
    )


def pending(c: Cluster, name: str, reason: str) -> Any:
    return wait_for(
        lambda: (
            (p := c.get("pods", name))
            and (condition(p, "PodResizePending") or {}).get("reason") == reason
            and p
        ),
        what=f"pod {name} resize {reason}",
    )


def resize_events(c: Cluster, name: str) -> list[tuple[str, str, str]]:
    c.controllers.ctx.recorder.flush()
    return [
        (e["type"], e["reason"], e["message"])
        for e in c.api.list("events", "default")[0]
        if e["involvedObject"].get("name") == name and e["reason"].startswith("Resize")
    ]


def test_resize_is_allocated_then_actuated(cluster: Cluster) -> None:
    cluster.api.create("pods", sized("r", "500m"), "default")
    (cs,) = running(cluster, "r")["status"]["containerStatuses"]
    # what runs is reported from the start, as a 1.35 kubelet does
    assert cs["resources"] == {"limits": {"memory": "64Mi"}, "requests": {"cpu": "500m", "memory": "64Mi"}}
    assert cs["allocatedResources"] == {"cpu": "500m", "memory": "64Mi"}
    assert "observedGeneration" not in cluster.get("pods", "r")["status"]
    resize(cluster, "r", {"requests": {"cpu": "800m"}})
    p = settled(cluster, "r", 2)
    (cs,) = p["status"]["containerStatuses"]
    assert cs["resources"] == {"limits": {"memory": "64Mi"}, "requests": {"cpu": "800m", "memory": "64Mi"}}
    assert cs["allocatedResources"] == {"cpu": "800m", "memory": "64Mi"}
    assert cs["restartCount"] == 0  # cpu's resizePolicy is NotRequired (unset)
    summary = '{"containers":[{"name":"main","resources":{"limits":{"memory":"64Mi"},"requests":{"cpu":"800m","memory":"64Mi"}}}],"generation":2}'
    assert resize_events(cluster, "r") == [
        ("Normal", "ResizeStarted", f"Pod resize started: {summary}"),
        ("Normal", "ResizeCompleted", f"Pod resize completed: {summary}"),
    ]


def test_every_container_status_reports_its_resources_from_the_start(cluster: Cluster) -> None:
    """1.35's kubelet writes ``resources`` (limits, requests, claims as allocated; ``{}`` when none) and
    ``allocatedResources`` (requests; absent without) into every container status, init and ephemeral ones too."""
    spec = {
        "initContainers": [
            {"name": "setup", "image": "busybox", "resources": {"requests": {"cpu": "50m"}}},
            {
                "name": "proxy",
                "image": "envoy",
                "restartPolicy": "Always",
                "resources": {"limits": {"cpu": "1"}},
            },
        ],
        "containers": [
            {"name": "main", "image": "nginx", "resources": {"limits": {"memory": "1Gi"}}},
            {"name": "plain", "image": "busybox"},
        ],
    }
    cluster.api.create("pods", pod("all", spec=spec), "default")
    st = running(cluster, "all")["status"]
    got = {
        cs["name"]: (cs["resources"], cs.get("allocatedResources"))
        for field in ("initContainerStatuses", "containerStatuses")
        for cs in st[field]
    }
    assert got == {
        "setup": ({"requests": {"cpu": "50m"}}, {"cpu": "50m"}),
        # requests defaulted from limits on create, so they are allocated too
        "proxy": ({"limits": {"cpu": "1"}, "requests": {"cpu": "1"}}, {"cpu": "1"}),
        "main": ({"limits": {"memory": "1Gi"}, "requests": {"memory": "1Gi"}}, {"memory": "1Gi"}),
        "plain": ({}, None),
    }
    patch = {
        "spec": {"ephemeralContainers": [{"name": "dbg", "image": "busybox", "targetContainerName": "main"}]}
    }
    cluster.api.patch("pods", "all", patch, "strategic", "default", subresource="ephemeralcontainers")
    (dbg,) = wait_for(
        lambda: cluster.get("pods", "all")["status"].get("ephemeralContainerStatuses"), what="debug container"
    )
    assert dbg["resources"] == {} and "allocatedResources" not in dbg


def test_a_pod_started_without_status_resources_gets_them(cluster: Cluster) -> None:
    """A pod an older berth started (no ``resources`` in its statuses) is reported again, as an upgraded kubelet's
    next status sync does, so it can be resized."""
    cluster.api.create("pods", sized("old", "300m"), "default")
    p = running(cluster, "old")
    for cs in p["status"]["containerStatuses"]:
        cs.pop("resources")
        cs.pop("allocatedResources")
    cluster.api.update("pods", p, "default", subresource="status")
    (cs,) = wait_for(
        lambda: [cs for cs in cluster.get("pods", "old")["status"]["containerStatuses"] if "resources" in cs],
        what="status resources written again",
    )
    assert cs["resources"]["requests"] == {"cpu": "300m", "memory": "64Mi"}
    assert cs["allocatedResources"] == {"cpu": "300m", "memory": "64Mi"}


def test_status_resources_are_filled_only_for_containers_of_the_spec() -> None:
    """A status naming a container the spec does not have (upstream tolerates them) is left alone, so the kubelet
    has nothing to write and never writes in a loop."""
    spec = {"containers": [{"name": "main", "resources": {"requests": {"cpu": "1"}}}]}
    ghost = {"name": "ghost", "state": {"running": {}}}
    assert kubelet._with_status_resources({"spec": spec, "status": {"containerStatuses": [ghost]}}) is None
    old = {"name": "main", "state": {"running": {}}}
    pod_ = {"spec": spec, "status": {"containerStatuses": [old, ghost]}}
    filled = kubelet._with_status_resources(pod_)
    assert filled is not None
    assert filled["containerStatuses"][0]["resources"] == {"requests": {"cpu": "1"}}
    assert filled["containerStatuses"][0]["allocatedResources"] == {"cpu": "1"}
    assert (
        "resources" not in filled["containerStatuses"][1] and "resources" not in old
    )  # the cached pod is untouched
    reported = {**old, "resources": {"requests": {"cpu": "1"}}}
    assert kubelet._with_status_resources({"spec": spec, "status": {"containerStatuses": [reported]}}) is None


def test_restart_container_policy_restarts_only_for_its_resource(cluster: Cluster) -> None:
    cluster.api.create("pods", sized("rc", "500m", memory_policy="RestartContainer"), "default")
    running(cluster, "rc")
    resize(cluster, "rc", {"requests": {"cpu": "600m"}})
    assert settled(cluster, "rc", 2)["status"]["containerStatuses"][0]["restartCount"] == 0
    resize(cluster, "rc", {"requests": {"memory": "32Mi"}, "limits": {"memory": "32Mi"}})
    (cs,) = settled(cluster, "rc", 3)["status"]["containerStatuses"]
    assert cs["restartCount"] == 1 and "running" in cs["state"] and "terminated" in cs["lastState"]
    assert cs["resources"]["limits"] == {"memory": "32Mi"}


def test_resize_infeasible_then_deferred_until_room(make_cluster: Callable[..., Cluster]) -> None:
    c = make_cluster(nodes=1, node_cpu="2")
    c.api.create("pods", sized("a", "500m"), "default")
    c.api.create("pods", sized("b", "1"), "default")
    running(c, "a")
    running(c, "b")
    resize(c, "a", {"requests": {"cpu": "3"}})
    p = pending(c, "a", "Infeasible")
    cond = condition(p, "PodResizePending")
    assert cond is not None and cond["observedGeneration"] == 2 and cond["status"] == "True"
    assert cond["message"] == "Node didn't have enough capacity: cpu, requested: 3000, capacity: 2000"
    # what runs is still the old size, and it is what the status says
    (cs,) = p["status"]["containerStatuses"]
    assert cs["resources"]["requests"]["cpu"] == "500m" and cs["allocatedResources"]["cpu"] == "500m"
    resize(c, "a", {"requests": {"cpu": "1200m"}})
    p = pending(c, "a", "Deferred")
    assert condition(p, "PodResizePending")["message"] == (  # type: ignore[index]
        "Node didn't have enough resource: cpu, requested: 1200, used: 1000, capacity: 2000"
    )
    c.api.delete("pods", "b", "default")
    (cs,) = settled(c, "a", 3)["status"]["containerStatuses"]
    assert cs["resources"]["requests"]["cpu"] == "1200m" and cs["allocatedResources"]["cpu"] == "1200m"
    kinds = [(kind, reason) for kind, reason, _ in resize_events(c, "a")]
    assert kinds == [
        ("Warning", "ResizeInfeasible"),
        ("Warning", "ResizeDeferred"),
        ("Normal", "ResizeStarted"),
        ("Normal", "ResizeCompleted"),
    ]


def test_quota_charge_of_a_pending_resize_falls_back_once_actuated(
    make_cluster: Callable[..., Cluster],
) -> None:
    """ResourceQuota charges the larger of spec and status while a resize is pending (upstream's pod evaluator),
    and only the new size once the kubelet has actuated it."""
    c = make_cluster(nodes=1, node_cpu="2")
    quota = {"metadata": {"name": "q"}, "spec": {"hard": {"requests.cpu": "10"}}}
    c.api.create("resourcequotas", quota, "default")

    def used() -> str:
        return str(((c.get("resourcequotas", "q").get("status") or {}).get("used") or {}).get("requests.cpu"))

    c.api.create("pods", sized("a", "500m"), "default")
    c.api.create("pods", sized("b", "1"), "default")
    running(c, "a")
    running(c, "b")
    wait_for(lambda: used() == "1500m", what="quota used 1500m")
    resize(c, "a", {"requests": {"cpu": "1200m"}})
    pending(c, "a", "Deferred")
    wait_for(lambda: used() == "2200m", what="a Deferred resize charged at its new size")
    resize(c, "a", {"requests": {"cpu": "300m"}})
    settled(c, "a", 3)
    wait_for(lambda: used() == "1300m", what="the charge back to what runs once actuated")
