"""LimitRanger and ResourceQuota admission on creates and updates (pure functions, the Api, and the HTTP server
through the official client and kubectl), and quantity formatting."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from berth.cluster import Cluster, ClusterOptions, quota
from berth.cluster.api import Api, ApiError
from berth.cluster.store import Store
from berth.kube import client as kube_client
from berth.kube import quantity

from .conftest import Kubectl, kubectl_for


def pod(name: str = "p", *containers: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": list(containers) or [{"name": "c", "image": "nginx"}], **spec},
    }


def container(
    name: str = "c", requests: dict[str, str] | None = None, limits: dict[str, str] | None = None
) -> dict[str, Any]:
    res: dict[str, Any] = {}
    if requests:
        res["requests"] = requests
    if limits:
        res["limits"] = limits
    return {"name": name, "image": "nginx", "resources": res}


def limit_range(**item: Any) -> dict[str, Any]:
    lr = {"metadata": {"name": "lr"}, "spec": {"limits": [{"type": "Container", **item}]}}
    quota.default_limit_range(lr)
    return lr


@pytest.mark.parametrize(
    ("value", "binary", "text"),
    [
        (Fraction(0), False, "0"),
        (Fraction(3, 2), False, "1500m"),
        (Fraction(2), False, "2"),
        (Fraction(3000), False, "3k"),
        (Fraction(1500), False, "1500"),
        (Fraction(192 * 2**20), True, "192Mi"),
        (Fraction(2**30), True, "1Gi"),
        (Fraction(1000), True, "1k"),  # below 1024 a binary quantity prints as decimal
        (Fraction(3000), True, "3000"),
    ],
)
def test_format_quantity_like_upstream(value: Fraction, binary: bool, text: str) -> None:
    assert quantity.canonical(value, binary) == text


def test_limit_range_item_defaults_chain_from_max_and_min() -> None:
    lr = limit_range(max={"cpu": "2"}, min={"memory": "64Mi"}, default={"memory": "256Mi"})
    item = lr["spec"]["limits"][0]
    assert item["default"] == {"memory": "256Mi", "cpu": "2"}
    assert item["defaultRequest"] == {"memory": "256Mi", "cpu": "2"}  # from default, which wins over min


def test_limit_ranger_fills_defaults_and_says_so() -> None:
    p = pod("p", container("app", requests={"cpu": "50m"}), container("side"))
    quota.limit_pod(
        p, [limit_range(default={"cpu": "500m"}, defaultRequest={"cpu": "100m", "memory": "64Mi"})]
    )
    app, side = p["spec"]["containers"]
    assert app["resources"] == {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"cpu": "500m"}}
    assert side["resources"] == {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "500m"}}
    assert p["metadata"]["annotations"][quota.LIMIT_RANGER_ANNOTATION] == (
        "LimitRanger plugin set: memory request for container app; cpu limit for container app; "
        "cpu, memory request for container side; cpu limit for container side"
    )


def test_limit_ranger_refuses_what_breaks_min_max_and_ratio() -> None:
    lr = limit_range(min={"cpu": "100m"}, max={"cpu": "1"}, maxLimitRequestRatio={"cpu": "4"})
    with pytest.raises(ApiError) as low:
        quota.limit_pod(pod("p", container(requests={"cpu": "50m"}, limits={"cpu": "150m"})), [lr])
    assert low.value.code == 403
    assert (
        low.value.message
        == 'pods "p" is forbidden: minimum cpu usage per Container is 100m, but request is 50m'
    )
    with pytest.raises(ApiError) as several:
        quota.limit_pod(pod("q", container(requests={"cpu": "200m"}, limits={"cpu": "2"})), [lr])
    assert several.value.message == (
        'pods "q" is forbidden: [maximum cpu usage per Container is 1, but limit is 2, '
        "cpu max limit to request ratio per Container is 4, but provided ratio is 10.000000]"
    )


def test_pod_usage_counts_requests_limits_and_init_containers() -> None:
    p = pod(
        "p",
        container("a", requests={"cpu": "250m", "memory": "64Mi"}, limits={"cpu": "500m"}),
        container("b", requests={"cpu": "250m"}),
        initContainers=[container("init", requests={"cpu": "2"})],
    )
    used = quota.object_usage("pods", p)
    assert used["pods"] == 1 and used["count/pods"] == 1
    assert used["requests.cpu"] == used["cpu"] == 2  # the init container's 2 beats the sum, 500m
    assert used["requests.memory"] == 64 * 2**20 and used["limits.cpu"] == Fraction(1, 2)
    finished = pod("done")
    finished["status"] = {"phase": "Succeeded"}
    assert quota.object_usage("pods", finished) == {"count/pods": 1}  # no compute, still an object


def test_scoped_quota_counts_only_its_pods() -> None:
    best_effort = {"spec": {"hard": {"pods": "1"}, "scopes": ["BestEffort"]}}
    assert quota.matches(best_effort, "pods", pod())
    assert not quota.matches(best_effort, "pods", pod("p", container(requests={"cpu": "1"})))
    assert not quota.matches(best_effort, "services", {"spec": {}})
    high = {
        "spec": {
            "hard": {"pods": "1"},
            "scopeSelector": {
                "matchExpressions": [{"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}]
            },
        }
    }
    assert quota.matches(high, "pods", pod(priorityClassName="high"))
    assert not quota.matches(high, "pods", pod(priorityClassName="low"))


# ---- through the Api -------------------------------------------------------------------------------------------


@pytest.fixture()
def api() -> Api:
    return Api(Store(retain=50))


def test_quota_refuses_the_pod_that_would_exceed_it(api: Api) -> None:
    api.create(
        "resourcequotas",
        {
            "metadata": {"name": "q"},
            "spec": {"hard": {"pods": "2", "requests.cpu": "1", "requests.memory": "1Gi"}},
        },
        "default",
    )
    small = container(requests={"cpu": "400m", "memory": "256Mi"})
    api.create("pods", pod("a", small), "default")
    api.create("pods", pod("b", small), "default")
    with pytest.raises(ApiError) as over:
        api.create("pods", pod("c", small), "default")
    assert over.value.code == 403
    assert over.value.message == (
        'pods "c" is forbidden: exceeded quota: q, requested: pods=1,requests.cpu=400m, '
        "used: pods=2,requests.cpu=800m, limited: pods=2,requests.cpu=1"
    )
    with pytest.raises(ApiError) as unset:
        api.create("pods", pod("d", container("x"), container("y", requests={"cpu": "1m"})), "default")
    assert unset.value.message == (
        'pods "d" is forbidden: failed quota: q: must specify requests.cpu for: x; requests.memory for: x,y'
    )
    # a finished pod no longer counts, so there is room again
    done = api.get("pods", "a", "default")
    done["status"] = {"phase": "Succeeded"}
    api.update("pods", done, "default", subresource="status")
    api.create("pods", pod("c", small), "default")
    # other namespaces are not limited by it
    api.create("namespaces", {"metadata": {"name": "free"}})
    api.create("pods", pod("e"), "free")


def test_count_quota_limits_any_resource(api: Api) -> None:
    api.create(
        "resourcequotas", {"metadata": {"name": "q"}, "spec": {"hard": {"count/configmaps": "1"}}}, "default"
    )
    api.create("configmaps", {"metadata": {"name": "one"}}, "default")
    with pytest.raises(ApiError) as over:
        api.create("configmaps", {"metadata": {"name": "two"}}, "default")
    assert "exceeded quota: q, requested: count/configmaps=1, used: count/configmaps=1" in over.value.message


def test_limit_range_defaults_pods_through_the_api(api: Api) -> None:
    api.create(
        "limitranges",
        {
            "metadata": {"name": "lr"},
            "spec": {"limits": [{"type": "Container", "default": {"memory": "128Mi"}}]},
        },
        "default",
    )
    lr = api.get("limitranges", "lr", "default")
    assert lr["spec"]["limits"][0]["defaultRequest"] == {"memory": "128Mi"}
    created = api.create("pods", pod("p"), "default")
    res = created["spec"]["containers"][0]["resources"]
    assert res == {"limits": {"memory": "128Mi"}, "requests": {"memory": "128Mi"}}
    assert (
        "memory request for container c" in created["metadata"]["annotations"][quota.LIMIT_RANGER_ANNOTATION]
    )


# ---- updates: pure pieces ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("resource", "subresource", "counted"),
    [
        ("pods", "resize", True),  # in-place resize: upstream's pod evaluator handles UPDATE only here
        ("pods", None, False),  # a plain pod update cannot change resources
        ("pods", "status", False),
        ("pods", "ephemeralcontainers", False),
        ("services", None, True),  # a type can change
        ("services", "status", False),
        ("persistentvolumeclaims", "", True),  # storage can grow
        ("persistentvolumeclaims", "status", False),
        ("configmaps", None, False),  # object counts change on create only
        ("deployments.apps", "scale", False),
    ],
    ids=lambda v: str(v),
)
def test_which_updates_quota_evaluates(resource: str, subresource: str | None, counted: bool) -> None:
    assert quota.counts_update(resource, subresource) is counted


def test_a_pending_resize_is_charged_the_larger_of_spec_and_status() -> None:
    p = pod("p", container("c", requests={"cpu": "1"}, limits={"cpu": "2"}))
    p["status"] = {
        "containerStatuses": [
            {
                "name": "c",
                "allocatedResources": {"cpu": "1500m"},
                "resources": {"requests": {"cpu": "1200m"}, "limits": {"cpu": "3"}},
            }
        ]
    }
    used = quota.object_usage("pods", p)
    assert used["requests.cpu"] == Fraction(3, 2) and used["limits.cpu"] == 3
    # a resize the kubelet marked Infeasible is charged what runs, not what the spec asks
    p["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "4"}, "limits": {"cpu": "4"}}
    p["status"]["conditions"] = [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}]
    used = quota.object_usage("pods", p)
    assert used["requests.cpu"] == Fraction(3, 2) and used["limits.cpu"] == 3


def _runs_as_reported(api: Api, name: str, cpu: str | None = None) -> None:
    """Write the status a 1.35 kubelet writes for a running pod: each container's ``resources`` and
    ``allocatedResources`` (``cpu``, when given: what it runs with after an actuated resize)."""
    p = api.get("pods", name, "default")
    statuses = []
    for c in p["spec"]["containers"]:
        requests = dict(c["resources"]["requests"])
        if cpu is not None:
            requests["cpu"] = cpu
        statuses.append(
            {
                "name": c["name"],
                "image": c["image"],
                "imageID": "",
                "ready": True,
                "restartCount": 0,
                "state": {"running": {"startedAt": "2026-12-01T00:00:00Z"}},
                "allocatedResources": requests,
                "resources": {"requests": requests},
            }
        )
    p["status"] = {"phase": "Running", "containerStatuses": statuses}
    api.update("pods", p, "default", subresource="status")


def test_a_first_resize_down_frees_nothing_until_actuated(api: Api) -> None:
    """With what runs in the status from the start (as the kubelet writes it), a pod's very first resize is charged
    as upstream's evaluator charges it: the larger of spec and status, so lowering it frees quota only once the
    kubelet reports the new size."""
    api.create(
        "resourcequotas", {"metadata": {"name": "q"}, "spec": {"hard": {"requests.cpu": "1"}}}, "default"
    )
    api.create("pods", pod("big", container(requests={"cpu": "800m"})), "default")
    _runs_as_reported(api, "big")
    patch = {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "200m"}}}]}}
    api.patch("pods", "big", patch, "strategic", "default", subresource="resize")
    with pytest.raises(ApiError) as refused:
        api.create("pods", pod("next", container(requests={"cpu": "500m"})), "default")
    assert refused.value.message == (
        'pods "next" is forbidden: exceeded quota: q, requested: requests.cpu=500m, used: requests.cpu=800m, '
        "limited: requests.cpu=1"
    )
    # growing it again is charged only what it adds over what it already holds (1100m over 800m)
    grow = {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1100m"}}}]}}
    with pytest.raises(ApiError) as over:
        api.patch("pods", "big", grow, "strategic", "default", subresource="resize")
    assert over.value.message == (
        'pods "big" is forbidden: exceeded quota: q, requested: requests.cpu=300m, used: requests.cpu=800m, '
        "limited: requests.cpu=1"
    )
    _runs_as_reported(api, "big", cpu="200m")  # actuated
    api.create("pods", pod("next", container(requests={"cpu": "500m"})), "default")


def test_pod_level_resources_take_the_place_of_the_containers_aggregate() -> None:
    """Upstream's PodRequests/PodLimits (PodLevelResources on in 1.35): the cpu/memory the pod sets at pod level
    replace the containers' sum; other resources still come from the containers; overhead is added on top."""
    p = pod(
        "p",
        container("a", requests={"cpu": "100m", "memory": "64Mi", "ephemeral-storage": "1Gi"}),
        container("b", requests={"cpu": "100m"}, limits={"cpu": "200m"}),
        resources={"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"memory": "2Gi"}},
        overhead={"cpu": "50m"},
    )
    used = quota.object_usage("pods", p)
    assert used["requests.cpu"] == used["cpu"] == Fraction(21, 20)  # 1 + 50m overhead, not 200m
    assert used["requests.memory"] == 2**30
    assert used["requests.ephemeral-storage"] == 2**30  # not a pod-level resource
    assert used["limits.memory"] == 2 * 2**30
    assert used["limits.cpu"] == Fraction(1, 4)  # no pod-level cpu limit: the containers', plus overhead
    # pod-level limits alone decide limits, and requests stay the containers' (no pod-level request)
    only_limits = pod("q", container("a", requests={"cpu": "100m"}), resources={"limits": {"cpu": "3"}})
    used = quota.object_usage("pods", only_limits)
    assert used["limits.cpu"] == 3 and used["requests.cpu"] == Fraction(1, 10)


def test_quota_and_limit_ranger_count_pod_level_resources(api: Api) -> None:
    api.create(
        "resourcequotas", {"metadata": {"name": "q"}, "spec": {"hard": {"requests.cpu": "2"}}}, "default"
    )
    # the containers state their cpu (the quota still asks every container to), the pod-level request is larger
    big = pod("big", container(requests={"cpu": "100m"}), resources={"limits": {"cpu": "1500m"}})
    created = api.create("pods", big, "default")
    assert created["spec"]["resources"]["requests"] == {"cpu": "100m"}  # defaulted from the containers' sum
    wide = pod("wide", container(requests={"cpu": "100m"}), resources={"requests": {"cpu": "1950m"}})
    with pytest.raises(ApiError) as over:
        api.create("pods", wide, "default")
    assert over.value.message == (
        'pods "wide" is forbidden: exceeded quota: q, requested: requests.cpu=1950m, used: requests.cpu=100m, '
        "limited: requests.cpu=2"
    )
    api.create(
        "limitranges",
        {"metadata": {"name": "lr"}, "spec": {"limits": [{"type": "Pod", "max": {"cpu": "1"}}]}},
        "default",
    )
    with pytest.raises(ApiError) as capped:
        api.create(
            "pods",
            pod(
                "capped",
                container(requests={"cpu": "100m"}, limits={"cpu": "100m"}),
                resources={"limits": {"cpu": "2"}},
            ),
            "default",
        )
    assert (
        capped.value.message == 'pods "capped" is forbidden: maximum cpu usage per Pod is 1, but limit is 2'
    )


def test_sidecars_add_to_the_pod_and_to_later_init_containers() -> None:
    p = pod(
        "p",
        container("app", requests={"cpu": "1"}),
        initContainers=[
            {**container("proxy", requests={"cpu": "500m"}), "restartPolicy": "Always"},
            container("migrate", requests={"cpu": "2"}),
        ],
    )
    # app + proxy = 1500m; migrate runs beside proxy = 2500m, the larger
    assert quota.object_usage("pods", p)["requests.cpu"] == Fraction(5, 2)


def test_claims_services_and_their_update_increase() -> None:
    claim = {
        "metadata": {"name": "data"},
        "spec": {"storageClassName": "fast", "resources": {"requests": {"storage": "10Gi"}}},
        "status": {"allocatedResources": {"storage": "12Gi"}},  # an expansion under way stays charged
    }
    used = quota.object_usage("persistentvolumeclaims", claim)
    assert used["requests.storage"] == used["fast.storageclass.storage.k8s.io/requests.storage"] == 12 * 2**30
    lb = {"spec": {"type": "LoadBalancer", "allocateLoadBalancerNodePorts": False, "ports": [{"port": 80}]}}
    assert quota.object_usage("services", lb)["services.nodeports"] == 0  # no node port asked for
    lb["spec"]["ports"].append({"port": 81, "nodePort": 30001})
    assert quota.object_usage("services", lb)["services.nodeports"] == 1


def test_limit_ranger_words_request_over_max_and_missing_ratio_inputs_as_upstream() -> None:
    lr = limit_range(max={"cpu": "1"}, maxLimitRequestRatio={"memory": "2"})
    lr["spec"]["limits"][0].pop("default")
    lr["spec"]["limits"][0].pop("defaultRequest")
    with pytest.raises(ApiError) as refused:
        quota.limit_pod(
            pod("p", container(requests={"cpu": "2", "memory": "1Gi"}, limits={"cpu": "1"})), [lr]
        )
    assert refused.value.message == (
        'pods "p" is forbidden: [maximum cpu usage per Container is 1, but request is 2, '
        "memory max limit to request ratio per Container is 2, but no limit is specified or limit is 0]"
    )


# ---- updates through the HTTP server -----------------------------------------------------------------------------


def _refusal(exc: Any) -> tuple[int, str]:
    """(HTTP status, Status message) of an official-client ApiException."""
    return exc.status, json.loads(exc.body)["message"]


def _wait_used(core: Any, name: str, key: str, want: str, namespace: str = "default") -> dict[str, str]:
    """status.used of quota ``name`` once ``key`` reads ``want`` (the quota controller writes it)."""
    used: dict[str, str] = {}
    for _ in range(600):  # a guard against a hang, not a speed check
        # status is None until the controller first writes it
        status = core.read_namespaced_resource_quota(name, namespace).status
        used = dict((status and status.used) or {})
        if used.get(key) == want:
            return used
        time.sleep(0.05)
    raise AssertionError(f"quota {name}: status.used[{key}] never became {want}: {used}")


@pytest.fixture()
def live(tmp_path: Path) -> Iterator[tuple[Any, Kubectl]]:
    """A cluster with its controllers (PV binding, the quota status controller), the official client and kubectl."""
    c = Cluster(ClusterOptions(data_dir=tmp_path / "data")).start()
    api_client = kube_client.api_client(c.kubeconfig)
    try:
        yield client.CoreV1Api(api_client), kubectl_for(c.kubeconfig, tmp_path / "home")
    finally:
        api_client.close()
        c.stop()


def test_pvc_resize_is_charged_its_increase_and_quota_status_follows(live: tuple[Any, Kubectl]) -> None:
    core, kubectl = live
    kubectl.ok(
        "apply",
        "-f",
        "-",
        input="""\
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fast}
provisioner: berth.dev/simulated
allowVolumeExpansion: true
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: storage}
spec:
  hard: {requests.storage: 20Gi, fast.storageclass.storage.k8s.io/requests.storage: 12Gi}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  storageClassName: fast
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 10Gi}}
""",
    )
    kubectl.ok("wait", "--for=jsonpath={.status.phase}=Bound", "pvc/data", "--timeout=30s", timeout=60)
    _wait_used(core, "storage", "requests.storage", "10Gi")
    grow = '{"spec":{"resources":{"requests":{"storage":"13Gi"}}}}'
    refused = kubectl.run("patch", "pvc", "data", "-p", grow)
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        'Error from server (Forbidden): persistentvolumeclaims "data" is forbidden: exceeded quota: storage, '
        "requested: fast.storageclass.storage.k8s.io/requests.storage=3Gi, "
        "used: fast.storageclass.storage.k8s.io/requests.storage=10Gi, "
        "limited: fast.storageclass.storage.k8s.io/requests.storage=12Gi"
    )
    assert core.read_namespaced_persistent_volume_claim("data", "default").spec.resources.requests == {
        "storage": "10Gi"
    }
    # within the quota: allowed, and the quota controller reports the new usage
    core.patch_namespaced_persistent_volume_claim(
        "data", "default", {"spec": {"resources": {"requests": {"storage": "12Gi"}}}}
    )
    used = _wait_used(core, "storage", "requests.storage", "12Gi")
    assert used["fast.storageclass.storage.k8s.io/requests.storage"] == "12Gi"
    # the namespace is now full: labels still change, a dry-run resize is still refused
    core.patch_namespaced_persistent_volume_claim("data", "default", {"metadata": {"labels": {"tier": "db"}}})
    with pytest.raises(client.ApiException) as dry:
        core.patch_namespaced_persistent_volume_claim(
            "data", "default", {"spec": {"resources": {"requests": {"storage": "13Gi"}}}}, dry_run="All"
        )
    assert _refusal(dry.value) == (
        403,
        'persistentvolumeclaims "data" is forbidden: exceeded quota: storage, '
        "requested: fast.storageclass.storage.k8s.io/requests.storage=1Gi, "
        "used: fast.storageclass.storage.k8s.io/requests.storage=12Gi, "
        "limited: fast.storageclass.storage.k8s.io/requests.storage=12Gi",
    )


def test_pod_resize_is_checked_against_quota_and_status_follows(live: tuple[Any, Kubectl]) -> None:
    core, kubectl = live
    core.create_namespaced_resource_quota(
        "default",
        {
            "metadata": {"name": "compute"},
            "spec": {"hard": {"requests.cpu": "1", "limits.cpu": "2", "pods": "1"}},
        },
    )
    core.create_namespaced_pod(
        "default",
        pod("web", container("app", requests={"cpu": "400m"}, limits={"cpu": "800m"})),
    )
    _wait_used(core, "compute", "requests.cpu", "400m")
    resize = '{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"1200m"},"limits":{"cpu":"1200m"}}}]}}'
    refused = kubectl.run("patch", "pod", "web", "--subresource", "resize", "-p", resize)
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        'Error from server (Forbidden): pods "web" is forbidden: exceeded quota: compute, '
        "requested: requests.cpu=800m, used: requests.cpu=400m, limited: requests.cpu=1"
    )
    # within the quota (and the replace verb of pods/resize): allowed; status.used follows
    current = core.read_namespaced_pod("web", "default")
    current.spec.containers[0].resources.requests = {"cpu": "1"}
    current.spec.containers[0].resources.limits = {"cpu": "2"}
    core.replace_namespaced_pod_resize("web", "default", current)
    used = _wait_used(core, "compute", "requests.cpu", "1")
    assert used["limits.cpu"] == "2" and used["pods"] == "1"
    # the namespace is full: a label change and a resize that lowers usage still go through
    core.patch_namespaced_pod("web", "default", {"metadata": {"labels": {"tier": "front"}}})
    kubectl.ok(
        "patch",
        "pod",
        "web",
        "--subresource",
        "resize",
        "-p",
        '{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"900m"}}}]}}',
    )
    _wait_used(core, "compute", "requests.cpu", "900m")


def test_service_type_changes_are_charged(k8s: Any) -> None:
    core = client.CoreV1Api(k8s)
    core.create_namespaced_resource_quota(
        "default",
        {
            "metadata": {"name": "svc"},
            "spec": {"hard": {"services.nodeports": "1", "services.loadbalancers": "0"}},
        },
    )
    ports = [{"name": "http", "port": 80}, {"name": "https", "port": 443}]
    core.create_namespaced_service("default", {"metadata": {"name": "web"}, "spec": {"ports": ports}})
    with pytest.raises(client.ApiException) as nodeport:
        core.patch_namespaced_service("web", "default", {"spec": {"type": "NodePort"}})
    assert _refusal(nodeport.value) == (
        403,
        'services "web" is forbidden: exceeded quota: svc, requested: services.nodeports=2, '
        "used: services.nodeports=0, limited: services.nodeports=1",
    )
    with pytest.raises(client.ApiException) as lb:
        core.patch_namespaced_service("web", "default", {"spec": {"type": "LoadBalancer"}})
    assert _refusal(lb.value) == (
        403,
        'services "web" is forbidden: exceeded quota: svc, requested: services.loadbalancers=1,'
        "services.nodeports=2, used: services.loadbalancers=0,services.nodeports=0, "
        "limited: services.loadbalancers=0,services.nodeports=1",
    )
    assert core.read_namespaced_service("web", "default").spec.type == "ClusterIP"
    # one node port fits (a PUT: a strategic merge patch would keep the other port)
    svc = core.read_namespaced_service("web", "default")
    svc.spec.type, svc.spec.ports = "NodePort", svc.spec.ports[:1]
    core.replace_namespaced_service("web", "default", svc)
    assert core.read_namespaced_service("web", "default").spec.type == "NodePort"
    # the quota is lowered below what is used: label changes still go through, a new node port does not
    core.patch_namespaced_resource_quota("svc", "default", {"spec": {"hard": {"services.nodeports": "0"}}})
    core.patch_namespaced_service("web", "default", {"metadata": {"labels": {"app": "web"}}})
    with pytest.raises(client.ApiException) as more:
        core.patch_namespaced_service(
            "web",
            "default",
            {"spec": {"ports": [{"name": "http", "port": 80}, {"name": "https", "port": 443}]}},
        )
    assert _refusal(more.value)[1] == (
        'services "web" is forbidden: exceeded quota: svc, requested: services.nodeports=1, '
        "used: services.nodeports=1, limited: services.nodeports=0"
    )


def test_concurrent_resizes_cannot_both_squeeze_under_the_quota(k8s: Any) -> None:
    core = client.CoreV1Api(k8s)
    core.create_namespaced_resource_quota(
        "default", {"metadata": {"name": "storage"}, "spec": {"hard": {"requests.storage": "16Gi"}}}
    )
    for name in ("a", "b"):
        core.create_namespaced_persistent_volume_claim(
            "default",
            {
                "metadata": {"name": name},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "5Gi"}}},
            },
        )
    results: dict[str, int] = {}
    start = threading.Barrier(2)

    def grow(name: str) -> None:
        start.wait()
        try:
            core.patch_namespaced_persistent_volume_claim(
                name, "default", {"spec": {"resources": {"requests": {"storage": "9Gi"}}}}
            )
            results[name] = 200
        except client.ApiException as exc:
            results[name] = exc.status

    threads = [threading.Thread(target=grow, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(results.values()) == [200, 403]  # 5+9 fits 16, 9+9 does not
    sizes = sorted(
        core.read_namespaced_persistent_volume_claim(n, "default").spec.resources.requests["storage"]
        for n in ("a", "b")
    )
    assert sizes == ["5Gi", "9Gi"]


LIMITS = {
    "metadata": {"name": "cpu"},
    "spec": {
        "limits": [
            {
                "type": "Container",
                "max": {"cpu": "1"},
                "min": {"cpu": "100m"},
                "maxLimitRequestRatio": {"cpu": "2"},
                "default": {"memory": "256Mi"},
            }
        ]
    },
}


def test_limit_range_checks_a_resize_as_upstream(k8s: Any, kubectl: Kubectl) -> None:
    core = client.CoreV1Api(k8s)
    core.create_namespaced_pod(
        "default",
        pod(
            "web",
            container("app", requests={"cpu": "200m"}, limits={"cpu": "400m"}),
            container("side", requests={"cpu": "2"}, limits={"cpu": "2"}),
        ),
    )
    core.create_namespaced_limit_range("default", LIMITS)  # after the pod: "side" is over its max
    # kube-apiserver 1.35 checks the whole resized pod, so a container the resize leaves alone is named too
    refused = kubectl.run(
        "patch",
        "pod",
        "web",
        "--subresource",
        "resize",
        "-p",
        '{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"200m"},"limits":{"cpu":"1500m"}}}]}}',
    )
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        'Error from server (Forbidden): pods "web" is forbidden: [maximum cpu usage per Container is 1, '
        "but limit is 1500m, cpu max limit to request ratio per Container is 2, but provided ratio is 7.500000, "
        "maximum cpu usage per Container is 1, but limit is 2]"
    )
    # resizing "side" into range passes; the memory defaults are filled in again, the annotation is not set
    resized = core.patch_namespaced_pod_resize(
        "web",
        "default",
        {
            "spec": {
                "containers": [
                    {"name": "side", "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "1"}}}
                ]
            }
        },
    )
    side = resized.spec.containers[1].resources
    # (the item's defaultRequest is its default, as upstream defaults a LimitRange item)
    assert side.requests == {"cpu": "1", "memory": "256Mi"} and side.limits == {"cpu": "1", "memory": "256Mi"}
    assert "kubernetes.io/limit-ranger" not in (resized.metadata.annotations or {})
    # plain pod updates are not LimitRanger's business (upstream's SupportsAttributes)
    core.patch_namespaced_pod("web", "default", {"metadata": {"labels": {"tier": "front"}}})


def test_a_pod_limit_range_defaults_is_classed_by_them(k8s: Any) -> None:
    core = client.CoreV1Api(k8s)
    core.create_namespaced_limit_range(
        "default",
        {
            "metadata": {"name": "defaults"},
            "spec": {"limits": [{"type": "Container", "default": {"cpu": "500m", "memory": "128Mi"}}]},
        },
    )
    created = core.create_namespaced_pod("default", pod("web"))
    res = created.spec.containers[0].resources
    assert res.requests == res.limits == {"cpu": "500m", "memory": "128Mi"}
    assert created.status.qos_class == "Guaranteed"  # not the BestEffort of the pod as sent


RESIZE_E2E_PLUGINS = {
    "quota": (
        "resourcequotas",
        {"metadata": {"name": "resize-resource-quota"}, "spec": {"hard": {"cpu": "800m", "memory": "800Mi"}}},
        "exceeded quota: resize-resource-quota, requested: memory=350Mi, used: memory=700Mi, limited: memory=800Mi",
        "exceeded quota: resize-resource-quota, requested: cpu=200m, used: cpu=700m, limited: cpu=800m",
    ),
    "limit-ranger": (
        "limitranges",
        {
            "metadata": {"name": "resize-limit-ranger"},
            "spec": {
                "limits": [
                    {
                        "type": "Container",
                        "max": {"cpu": "500m", "memory": "500Mi"},
                        "min": {"cpu": "50m", "memory": "50Mi"},
                        "default": {"cpu": "100m", "memory": "100Mi"},
                        "defaultRequest": {"cpu": "50m", "memory": "50Mi"},
                    }
                ]
            },
        },
        "maximum memory usage per Container is 500Mi, but limit is 750Mi",
        "maximum cpu usage per Container is 500m, but limit is 600m",
    ),
}


@pytest.mark.parametrize("plugin", sorted(RESIZE_E2E_PLUGINS))
def test_upstream_resize_admission_e2e_cases(k8s: Any, plugin: str) -> None:
    """kubernetes/kubernetes test/e2e/node/pod_resize.go doPodResizeAdmissionPluginsTests, step by step."""
    resource, body, want_memory, want_cpu = RESIZE_E2E_PLUGINS[plugin]
    core = client.CoreV1Api(k8s)
    if resource == "resourcequotas":
        core.create_namespaced_resource_quota("default", body)
    else:
        core.create_namespaced_limit_range("default", body)

    def sized(cpu: str, memory: str) -> dict[str, Any]:
        return {"requests": {"cpu": cpu, "memory": memory}, "limits": {"cpu": cpu, "memory": memory}}

    for name in ("testpod1", "testpod2"):
        core.create_namespaced_pod(
            "default", pod(name, {"name": "c1", "image": "nginx", "resources": sized("300m", "300Mi")})
        )

    def resize(resources: dict[str, Any]) -> Any:
        patch = {"spec": {"containers": [{"name": "c1", "resources": resources}]}}
        return core.patch_namespaced_pod_resize("testpod1", "default", patch)

    resized = resize(sized("400m", "400Mi"))
    assert resized.spec.containers[0].resources.requests == {"cpu": "400m", "memory": "400Mi"}
    with pytest.raises(client.ApiException) as memory:
        resize(sized("250m", "750Mi"))
    assert _refusal(memory.value) == (403, f'pods "testpod1" is forbidden: {want_memory}')
    with pytest.raises(client.ApiException) as cpu:
        resize({"requests": {"cpu": "600m"}, "limits": {"cpu": "600m"}})
    assert _refusal(cpu.value) == (403, f'pods "testpod1" is forbidden: {want_cpu}')
    unchanged = core.read_namespaced_pod("testpod1", "default").spec.containers[0].resources
    assert unchanged.requests == unchanged.limits == {"cpu": "400m", "memory": "400Mi"}


def test_limit_range_bounds_claims_on_create_and_resize(k8s: Any, kubectl: Kubectl) -> None:
    core = client.CoreV1Api(k8s)
    core.create_namespaced_limit_range(
        "default",
        {
            "metadata": {"name": "storage"},
            "spec": {
                "limits": [
                    {"type": "PersistentVolumeClaim", "min": {"storage": "1Gi"}, "max": {"storage": "10Gi"}}
                ]
            },
        },
    )

    def claim(name: str, size: str) -> dict[str, Any]:
        return {
            "metadata": {"name": name},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}},
        }

    with pytest.raises(client.ApiException) as big:
        core.create_namespaced_persistent_volume_claim("default", claim("big", "20Gi"))
    assert _refusal(big.value) == (
        403,
        'persistentvolumeclaims "big" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi, '
        "but request is 20Gi",
    )
    with pytest.raises(client.ApiException) as small:
        core.create_namespaced_persistent_volume_claim("default", claim("small", "500Mi"))
    assert _refusal(small.value)[1] == (
        'persistentvolumeclaims "small" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, '
        "but request is 500Mi"
    )
    core.create_namespaced_persistent_volume_claim("default", claim("data", "5Gi"))
    refused = kubectl.run(
        "patch", "pvc", "data", "-p", '{"spec":{"resources":{"requests":{"storage":"15Gi"}}}}'
    )
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        'Error from server (Forbidden): persistentvolumeclaims "data" is forbidden: maximum storage usage per '
        "PersistentVolumeClaim is 10Gi, but request is 15Gi"
    )
    kubectl.ok("patch", "pvc", "data", "-p", '{"spec":{"resources":{"requests":{"storage":"8Gi"}}}}')
    assert core.read_namespaced_persistent_volume_claim("data", "default").spec.resources.requests == {
        "storage": "8Gi"
    }
    # kube-apiserver 1.35 checks the whole claim on every update: once a range no longer allows it, even a
    # label change is refused (kubernetes/kubernetes#142170 relaxes this after 1.35)
    core.patch_namespaced_limit_range(
        "storage",
        "default",
        {"spec": {"limits": [{"type": "PersistentVolumeClaim", "max": {"storage": "6Gi"}}]}},
    )
    with pytest.raises(client.ApiException) as labels:
        core.patch_namespaced_persistent_volume_claim("data", "default", {"metadata": {"labels": {"a": "b"}}})
    assert _refusal(labels.value)[1] == (
        'persistentvolumeclaims "data" is forbidden: maximum storage usage per PersistentVolumeClaim is 6Gi, '
        "but request is 8Gi"
    )
