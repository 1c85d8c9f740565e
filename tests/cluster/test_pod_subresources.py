"""pods/ephemeralcontainers (``kubectl debug``) and pods/resize: each changes only its part of the pod, and a resize
only what kube-apiserver 1.35 lets it change (through the HTTP server, the official client and kubectl)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from berth.cluster import Cluster, ClusterOptions
from berth.cluster.api import Api, ApiError
from berth.cluster.store import Store
from berth.kube import client as kube_client

from .conftest import Kubectl, kubectl_for


@pytest.fixture()
def api() -> Api:
    a = Api(Store(retain=50))
    a.create(
        "pods",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p"},
            "spec": {
                "containers": [
                    {"name": "app", "image": "nginx", "resources": {"requests": {"cpu": "100m"}}},
                    {"name": "side", "image": "envoy"},
                ]
            },
        },
        "default",
    )
    return a


def debugger(name: str = "dbg", **extra: Any) -> dict[str, Any]:
    return {"name": name, "image": "busybox", "targetContainerName": "app", **extra}


def add(api: Api, *containers: dict[str, Any]) -> dict[str, Any]:
    patch = {"spec": {"ephemeralContainers": list(containers)}}
    return api.patch("pods", "p", patch, "strategic", "default", subresource="ephemeralcontainers")


def causes(exc: pytest.ExceptionInfo[ApiError]) -> list[tuple[str, str]]:
    return [(c["field"], c["reason"]) for c in exc.value.causes]


def test_ephemeral_container_is_added_and_nothing_else_changes(api: Api) -> None:
    before = api.get("pods", "p", "default")
    patch = {"spec": {"ephemeralContainers": [debugger()], "containers": [{"name": "app", "image": "evil"}]}}
    after = api.patch("pods", "p", patch, "strategic", "default", subresource="ephemeralcontainers")
    assert after["spec"]["ephemeralContainers"] == [debugger()]
    assert after["spec"]["containers"] == before["spec"]["containers"]
    assert int(after["metadata"]["resourceVersion"]) > int(before["metadata"]["resourceVersion"])
    # a second debug session adds beside the first (strategic merge by name)
    again = add(api, debugger("dbg2"))
    assert [c["name"] for c in again["spec"]["ephemeralContainers"]] == ["dbg", "dbg2"]


def test_ephemeral_containers_may_not_be_changed_or_removed(api: Api) -> None:
    add(api, debugger())
    with pytest.raises(ApiError) as changed:
        api.update(
            "pods",
            {**api.get("pods", "p", "default"), "spec": {"ephemeralContainers": [debugger(image="alpine")]}},
            "default",
            subresource="ephemeralcontainers",
        )
    assert changed.value.code == 422
    assert causes(changed) == [("spec.ephemeralContainers[0]", "FieldValueForbidden")]
    cur = api.get("pods", "p", "default")
    with pytest.raises(ApiError) as removed:
        api.update(
            "pods",
            {**cur, "spec": {**cur["spec"], "ephemeralContainers": []}},
            "default",
            subresource="ephemeralcontainers",
        )
    assert removed.value.code == 422
    assert 'existing ephemeral containers "dbg" may not be removed' in removed.value.message


def test_ephemeral_container_names_are_unique_and_images_required(api: Api) -> None:
    with pytest.raises(ApiError) as bad:
        add(api, debugger("side"), {"name": "noimage"}, debugger("withport", ports=[{"containerPort": 80}]))
    assert bad.value.code == 422
    assert causes(bad) == [
        ("spec.ephemeralContainers[0].name", "FieldValueDuplicate"),
        ("spec.ephemeralContainers[1].image", "FieldValueRequired"),
        ("spec.ephemeralContainers[2].ports", "FieldValueForbidden"),
    ]
    assert "ephemeralContainers" not in api.get("pods", "p", "default")["spec"]


def test_resize_changes_only_container_resources(api: Api) -> None:
    patch = {
        "spec": {
            "containers": [{"name": "app", "image": "evil", "resources": {"requests": {"cpu": "250m"}}}],
            "nodeName": "elsewhere",
        }
    }
    out = api.patch("pods", "p", patch, "strategic", "default", subresource="resize")
    app, side = out["spec"]["containers"]
    assert app["image"] == "nginx" and app["resources"] == {"requests": {"cpu": "250m"}}
    assert side["image"] == "envoy" and "nodeName" not in out["spec"]


def test_other_subresources_are_not_found(api: Api) -> None:
    with pytest.raises(ApiError) as exc:
        api.patch("pods", "p", {"spec": {}}, "merge", "default", subresource="exec")
    assert exc.value.code == 404


# ---- pods/resize validation through the HTTP server (kube-apiserver 1.35's ValidatePodResize) -----------------------


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Kubectl]]:
    """One server for the resize table (no controllers: validation only), the official client and kubectl."""
    tmp = tmp_path_factory.mktemp("resize")
    c = Cluster(ClusterOptions(data_dir=tmp / "data", run_controllers=False)).start()
    api_client = kube_client.api_client(c.kubeconfig)
    try:
        yield client.CoreV1Api(api_client), kubectl_for(c.kubeconfig, tmp / "home")
    finally:
        api_client.close()
        c.stop()


def _res(requests: dict[str, str] | None = None, limits: dict[str, str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if requests:
        out["requests"] = requests
    if limits:
        out["limits"] = limits
    return out


GUARANTEED = _res({"cpu": "100m", "memory": "64Mi"}, {"cpu": "100m", "memory": "64Mi"})
BURSTABLE = _res({"cpu": "100m", "memory": "64Mi"}, {"cpu": "200m", "memory": "128Mi"})


def _resize_pod(name: str, case: str) -> dict[str, Any]:
    """The pod each case resizes: a Burstable app container, a plain init container and a sidecar."""
    meta: dict[str, Any] = {"name": name}
    spec: dict[str, Any] = {
        "initContainers": [
            {"name": "setup", "image": "busybox", "resources": _res({"cpu": "50m"})},
            {"name": "proxy", "image": "envoy", "restartPolicy": "Always", "resources": _res({"cpu": "50m"})},
        ],
        "containers": [{"name": "app", "image": "nginx", "resources": BURSTABLE}],
    }
    if case == "guaranteed":
        spec.pop("initContainers")
        spec["containers"][0]["resources"] = GUARANTEED
    elif case == "static":
        meta["annotations"] = {"kubernetes.io/config.mirror": "mirror"}
    elif case == "windows":
        spec["os"] = {"name": "windows"}
        spec.pop("initContainers")
    elif case == "pod-level":
        spec["resources"] = {"limits": {"cpu": "1", "memory": "1Gi"}}
        spec.pop("initContainers")
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def _app(resources: Any = None, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"name": "app", **extra}
    if resources is not None:
        body["resources"] = resources
    return {"spec": {"containers": [body]}}


@pytest.mark.parametrize(
    ("case", "patch", "message"),
    [
        pytest.param(
            "guaranteed",
            _app(_res(limits={"cpu": "300m"})),
            'spec: Invalid value: "Guaranteed": Pod QOS Class may not change as a result of resizing',
            id="qos-class-may-not-change",
        ),
        pytest.param(
            "burstable",
            _app(_res({"memory": None})),  # type: ignore[dict-item]
            "spec.containers[0].resources.requests: Forbidden: resource requests cannot be removed",
            id="requests-cannot-be-removed",
        ),
        pytest.param(
            "burstable",
            _app(_res(limits={"cpu": None})),  # type: ignore[dict-item]
            "spec.containers[0].resources.limits: Forbidden: resource limits cannot be removed",
            id="limits-cannot-be-removed",
        ),
        pytest.param(
            "burstable",
            {"spec": {"initContainers": [{"name": "proxy", "resources": {"requests": {"cpu": None}}}]}},
            "spec.initContainers[1].resources.requests: Forbidden: resource requests cannot be removed",
            id="sidecar-requests-cannot-be-removed",
        ),
        pytest.param(
            "burstable",
            _app(_res({"ephemeral-storage": "1Gi"})),
            "spec: Forbidden: only cpu and memory resources are mutable",
            id="only-cpu-and-memory",
        ),
        pytest.param(
            "burstable",
            _app(resizePolicy=[{"resourceName": "cpu", "restartPolicy": "RestartContainer"}]),
            "spec: Forbidden: only cpu and memory resources are mutable",
            id="resize-policy-is-immutable",
        ),
        pytest.param(
            "burstable",
            {"spec": {"initContainers": [{"name": "setup", "resources": {"requests": {"cpu": "80m"}}}]}},
            "spec: Forbidden: resources for non-sidecar init containers are immutable",
            id="init-containers-are-immutable",
        ),
        pytest.param(
            "burstable",
            {
                "spec": {
                    "initContainers": [
                        {"name": "proxy", "resources": {"requests": {"ephemeral-storage": "1Gi"}}}
                    ]
                }
            },
            "spec: Forbidden: only cpu and memory resources for sidecar containers are mutable",
            id="sidecar-only-cpu-and-memory",
        ),
        pytest.param(
            "static",
            _app(_res({"cpu": "150m"})),
            ": Forbidden: static pods cannot be resized",  # an empty field path, printed as upstream's field.Error does
            id="static-pods",
        ),
        pytest.param(
            "windows",
            _app(_res({"cpu": "150m"})),
            ": Forbidden: windows pods cannot be resized",  # an empty field path, printed as upstream's field.Error does
            id="windows-pods",
        ),
        pytest.param(
            "pod-level",
            _app(_res({"cpu": "150m"})),
            ": Forbidden: pods with pod-level resources cannot be resized",  # an empty field path, printed as upstream's field.Error does
            id="pod-level-resources",
        ),
    ],
)
def test_resize_is_refused_as_upstream(
    served: tuple[Any, Kubectl],
    case: str,
    patch: dict[str, Any],
    message: str,
    request: pytest.FixtureRequest,
) -> None:
    core, _ = served
    name = request.node.callspec.id
    core.create_namespaced_pod("default", _resize_pod(name, case))
    with pytest.raises(ApiException) as refused:
        core.patch_namespaced_pod_resize(name, "default", patch)
    assert refused.value.status == 422
    status = json.loads(refused.value.body)
    assert status["message"] == f'Pod "{name}" is invalid: {message}'
    if message.startswith(": "):  # the cause of an empty path has no field (omitempty)
        assert [sorted(c) for c in status["details"]["causes"]] == [["message", "reason"]]


def test_resize_of_a_pod_whose_node_reports_no_status_resources_is_refused(
    served: tuple[Any, Kubectl],
) -> None:
    """Upstream's version-skew rule: the first running container's status must report ``resources`` (a 1.35
    kubelet always does; an older node does not support resize). A pod with nothing running yet may be resized."""
    core, kubectl = served
    core.create_namespaced_pod("default", _resize_pod("skew", "burstable"))
    patch = _app(_res({"cpu": "150m"}))
    core.patch_namespaced_pod_resize("skew", "default", patch)  # nothing runs yet: allowed
    running = {
        "name": "app",
        "image": "nginx",
        "imageID": "",
        "ready": True,
        "restartCount": 0,
        "state": {"running": {"startedAt": "2026-12-01T00:00:00Z"}},
    }
    core.patch_namespaced_pod_status("skew", "default", {"status": {"containerStatuses": [running]}})
    refused = kubectl.run(
        "patch", "pod", "skew", "--subresource", "resize", "-p", json.dumps(_app(_res({"cpu": "160m"})))
    )
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        'The Pod "skew" is invalid: spec: Forbidden: Pod running on node without support for resize'
    )
    reported = {**running, "resources": {"requests": {"cpu": "150m", "memory": "64Mi"}}}
    core.patch_namespaced_pod_status("skew", "default", {"status": {"containerStatuses": [reported]}})
    kubectl.ok(
        "patch", "pod", "skew", "--subresource", "resize", "-p", json.dumps(_app(_res({"cpu": "160m"})))
    )
    assert core.read_namespaced_pod("skew", "default").spec.containers[0].resources.requests["cpu"] == "160m"


def test_allowed_resizes_through_kubectl(served: tuple[Any, Kubectl]) -> None:
    """What 1.35 allows: cpu/memory of containers and sidecars, a memory limit lowered with resizePolicy
    NotRequired (allowed since 1.34), and each accepted resize bumps metadata.generation."""
    core, kubectl = served
    core.create_namespaced_pod("default", _resize_pod("fine", "burstable"))
    patch = {
        "spec": {
            "initContainers": [{"name": "proxy", "resources": {"requests": {"cpu": "75m"}}}],
            "containers": [{"name": "app", "resources": _res({"cpu": "150m"}, {"memory": "96Mi"})}],
        }
    }
    kubectl.ok("patch", "pod", "fine", "--subresource", "resize", "-p", json.dumps(patch))
    pod = core.read_namespaced_pod("fine", "default")
    assert pod.metadata.generation == 2
    assert pod.spec.init_containers[1].resources.requests == {"cpu": "75m"}
    assert pod.spec.containers[0].resources.limits == {"cpu": "200m", "memory": "96Mi"}
    assert pod.spec.containers[0].resources.requests == {"cpu": "150m", "memory": "64Mi"}
    refused = kubectl.run(
        "patch",
        "pod",
        "fine",
        "--subresource",
        "resize",
        "-p",
        json.dumps(_app(_res(limits={"cpu": None}))),  # type: ignore[dict-item]
    )
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        'The Pod "fine" is invalid: spec.containers[0].resources.limits: Forbidden: resource limits cannot be removed'
    )


@pytest.mark.parametrize(
    ("policy", "restart", "message"),
    [
        pytest.param(
            [{"resourceName": "gpu", "restartPolicy": "NotRequired"}],
            "Always",
            'spec.containers[0].resizePolicy: Unsupported value: "gpu": supported values: "cpu", "memory"',
            id="resource",
        ),
        pytest.param(
            [{"resourceName": "cpu", "restartPolicy": "Sometimes"}],
            "Always",
            'spec.containers[0].resizePolicy: Unsupported value: "Sometimes": supported values: "NotRequired", '
            '"RestartContainer"',
            id="policy",
        ),
        pytest.param(
            [{"resourceName": "cpu", "restartPolicy": "NotRequired"}] * 2,
            "Always",
            'spec.containers[0].resizePolicy[1]: Duplicate value: "cpu"',
            id="duplicate",
        ),
        pytest.param(
            [{"resourceName": "memory", "restartPolicy": "RestartContainer"}],
            "Never",
            "spec.containers[0].resizePolicy: Invalid value: \"RestartContainer\": must be 'NotRequired' when "
            "`restartPolicy` is 'Never'",
            id="restart-never",
        ),
    ],
)
def test_resize_policy_is_validated_on_create(
    served: tuple[Any, Kubectl], policy: list[dict[str, str]], restart: str, message: str
) -> None:
    core, _ = served
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "policy"},
        "spec": {
            "restartPolicy": restart,
            "containers": [{"name": "app", "image": "nginx", "resizePolicy": policy}],
        },
    }
    with pytest.raises(ApiException) as refused:
        core.create_namespaced_pod("default", body)
    assert refused.value.status == 422
    assert json.loads(refused.value.body)["message"] == f'Pod "policy" is invalid: {message}'
