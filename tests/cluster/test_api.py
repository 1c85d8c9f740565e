"""In-process Api semantics (the contract the controllers and the HTTP server share)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from berth.cluster.api import Api, ApiError
from berth.cluster.store import Store


@pytest.fixture()
def api() -> Api:
    return Api(Store(retain=50))


def deployment(name: str = "web", replicas: int | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "selector": {"matchLabels": {"app": name}},
        "template": {
            "metadata": {"labels": {"app": name}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        },
    }
    if replicas is not None:
        spec["replicas"] = replicas
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name}, "spec": spec}


def test_bootstrap_namespaces_are_active_with_finalizer(api: Api) -> None:
    items, _ = api.list("namespaces")
    names = sorted(i["metadata"]["name"] for i in items)
    assert names == ["default", "kube-node-lease", "kube-public", "kube-system"]
    ns = api.get("namespaces", "default")
    assert ns["status"]["phase"] == "Active"
    assert ns["spec"]["finalizers"] == ["kubernetes"]
    assert ns["metadata"]["labels"]["kubernetes.io/metadata.name"] == "default"


def test_create_sets_identity_and_defaults(api: Api) -> None:
    d = api.create("deployments.apps", deployment(), "default")
    meta = d["metadata"]
    assert meta["uid"] and meta["creationTimestamp"].endswith("Z") and meta["generation"] == 1
    assert d["spec"]["replicas"] == 1
    assert d["spec"]["strategy"]["rollingUpdate"] == {"maxUnavailable": "25%", "maxSurge": "25%"}
    assert d["spec"]["template"]["spec"]["schedulerName"] == "default-scheduler"


def test_pod_templates_inside_cronjobs_and_podtemplates_are_defaulted(api: Api) -> None:
    pod_spec = {"restartPolicy": "OnFailure", "containers": [{"name": "c", "image": "busybox"}]}
    cj = api.create(
        "cronjobs.batch",
        {
            "metadata": {"name": "nightly"},
            "spec": {"schedule": "0 3 * * *", "jobTemplate": {"spec": {"template": {"spec": pod_spec}}}},
        },
        "default",
    )
    job_spec = cj["spec"]["jobTemplate"]["spec"]
    tmpl = job_spec["template"]["spec"]
    assert tmpl["schedulerName"] == "default-scheduler" and tmpl["dnsPolicy"] == "ClusterFirst"
    assert tmpl["containers"][0]["terminationMessagePolicy"] == "File"
    assert "backoffLimit" not in job_spec  # the JobSpec's own defaults belong to the Jobs it creates
    pt = api.create("podtemplates", {"metadata": {"name": "t"}, "template": {"spec": pod_spec}}, "default")
    assert pt["template"]["spec"]["terminationGracePeriodSeconds"] == 30


def test_requests_default_to_limits_in_pods_not_in_pod_templates(api: Api) -> None:
    """Upstream's SetDefaults_Pod copies limits into missing requests on a Pod only, so a Deployment's template
    reads back as sent and its pods get the requests when they are created."""
    limited = {"name": "c", "image": "nginx", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}
    dep = deployment()
    dep["spec"]["template"]["spec"]["containers"] = [limited]
    created = api.create("deployments.apps", dep, "default")
    assert created["spec"]["template"]["spec"]["containers"][0]["resources"] == {
        "limits": {"cpu": "1", "memory": "1Gi"}
    }
    p = api.create(
        "pods",
        {
            "metadata": {"name": "p"},
            "spec": {
                "initContainers": [{**copy.deepcopy(limited), "name": "init"}],
                "containers": [copy.deepcopy(limited)],
            },
        },
        "default",
    )
    for c in (*p["spec"]["initContainers"], *p["spec"]["containers"]):
        assert c["resources"]["requests"] == {"cpu": "1", "memory": "1Gi"}


@pytest.mark.parametrize(
    ("pod_level", "containers", "want"),
    [
        pytest.param(
            {"limits": {"cpu": "2", "memory": "1Gi"}},
            [{}],
            {"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "2", "memory": "1Gi"}},
            id="requests-from-pod-limits",
        ),
        pytest.param(
            {"limits": {"cpu": "2", "memory": "1Gi"}},
            [{"requests": {"cpu": "300m"}}, {"requests": {"cpu": "0.2"}}],
            {"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "500m", "memory": "1Gi"}},
            id="requests-from-the-containers-aggregate",
        ),
        pytest.param(
            {"limits": {"memory": "1Gi"}, "requests": {"memory": "512Mi"}},
            [{"requests": {"memory": "256Mi"}}],
            {"limits": {"memory": "1Gi"}, "requests": {"memory": "512Mi"}},
            id="a-pod-level-request-is-kept",
        ),
        pytest.param(
            {"requests": {"cpu": "1"}},
            [{"requests": {"cpu": "100m"}}],
            {"requests": {"cpu": "1"}},
            id="requests-alone-default-nothing",
        ),
        pytest.param(
            {"requests": {"cpu": "1"}},
            [{"limits": {"hugepages-2Mi": "4Mi"}}, {"limits": {"hugepages-2Mi": "6Mi"}}],
            {"limits": {"hugepages-2Mi": "10Mi"}, "requests": {"cpu": "1", "hugepages-2Mi": "10Mi"}},
            id="hugepages-limits-from-the-containers",
        ),
        pytest.param({}, [{"requests": {"cpu": "100m"}}], {}, id="empty-is-left-alone"),
    ],
)
def test_pod_level_resources_are_defaulted_as_upstream(
    api: Api, pod_level: dict[str, Any], containers: list[dict[str, Any]], want: dict[str, Any]
) -> None:
    """PodLevelResources (beta, on in 1.35): SetDefaults_Pod fills pod-level requests from the containers'
    aggregate requests (cpu, memory) or else the pod-level limits, and pod-level hugepages limits from the
    containers', only for a pod that sets pod-level resources."""
    spec = {
        "resources": pod_level,
        "containers": [
            {"name": f"c{i}", "image": "nginx", "resources": res} for i, res in enumerate(containers)
        ],
    }
    created = api.create("pods", {"metadata": {"name": "p"}, "spec": spec}, "default")
    assert created["spec"]["resources"] == want
    no_pod_level = api.create(
        "pods", {"metadata": {"name": "q"}, "spec": {"containers": spec["containers"]}}, "default"
    )
    assert "resources" not in no_pod_level["spec"]


def test_pod_level_limits_make_a_pod_guaranteed_once_defaulted(api: Api) -> None:
    spec = {
        "resources": {"limits": {"cpu": "1", "memory": "1Gi"}},
        "containers": [{"name": "c", "image": "x"}],
    }
    created = api.create("pods", {"metadata": {"name": "g"}, "spec": spec}, "default")
    assert created["status"]["qosClass"] == "Guaranteed"


@pytest.mark.parametrize(
    ("resource", "obj", "namespace", "code", "reason"),
    [
        ("configmaps", {"metadata": {"name": "Bad_Name"}}, "default", 422, "Invalid"),
        ("configmaps", {"metadata": {"name": "a"}}, "missing", 404, "NotFound"),
        ("configmaps", {"metadata": {"name": "a", "namespace": "other"}}, "default", 400, "BadRequest"),
        ("configmaps", {"metadata": {"name": "a", "resourceVersion": "3"}}, "default", 500, "InternalError"),
        ("nosuchthings", {"metadata": {"name": "a"}}, "default", 404, "NotFound"),
    ],
    ids=["bad-name", "missing-namespace", "namespace-mismatch", "preset-rv", "unknown-resource"],
)
def test_create_errors(
    api: Api, resource: str, obj: dict[str, Any], namespace: str, code: int, reason: str
) -> None:
    with pytest.raises(ApiError) as info:
        api.create(resource, obj, namespace)
    assert (info.value.code, info.value.reason) == (code, reason)


def test_duplicate_create_is_already_exists(api: Api) -> None:
    api.create(
        "pods", {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "x"}]}}, "default"
    )
    with pytest.raises(ApiError) as info:
        api.create("pods", {"metadata": {"name": "p"}, "spec": {"containers": []}}, "default")
    assert info.value.code == 409 and info.value.message == 'pods "p" already exists'


def test_stale_update_conflicts_and_generation_tracks_spec(api: Api) -> None:
    d = api.create("deployments.apps", deployment(), "default")
    d["spec"]["replicas"] = 3
    d2 = api.update("deployments.apps", d, "default")
    assert d2["metadata"]["generation"] == 2
    with pytest.raises(ApiError) as info:
        api.update("deployments.apps", d, "default")
    assert info.value.code == 409 and "the object has been modified" in info.value.message
    d2["metadata"]["labels"] = {"x": "y"}
    d3 = api.update("deployments.apps", d2, "default")
    assert d3["metadata"]["generation"] == 2


def test_status_subresource_is_separate_from_main_endpoint(api: Api) -> None:
    d = api.create("deployments.apps", deployment(), "default")
    d["status"] = {"replicas": 5}
    d2 = api.update("deployments.apps", d, "default")
    assert d2.get("status") == {}
    d2["status"] = {"replicas": 5}
    d2["spec"]["replicas"] = 9
    d3 = api.update("deployments.apps", d2, "default", subresource="status")
    assert d3["status"] == {"replicas": 5} and d3["spec"]["replicas"] == 1


def test_noop_update_keeps_resource_version(api: Api) -> None:
    cm = api.create("configmaps", {"metadata": {"name": "a"}, "data": {"k": "v"}}, "default")
    again = api.update("configmaps", cm, "default")
    assert again["metadata"]["resourceVersion"] == cm["metadata"]["resourceVersion"]


def test_finalizers_hold_deletion_until_removed(api: Api) -> None:
    cm = api.create("configmaps", {"metadata": {"name": "a", "finalizers": ["x/y"]}}, "default")
    gone = api.delete("configmaps", "a", "default")
    assert gone["metadata"]["deletionTimestamp"]
    cur = api.get("configmaps", "a", "default")
    cur["metadata"]["finalizers"] = []
    api.update("configmaps", cur, "default")
    with pytest.raises(ApiError) as info:
        api.get("configmaps", "a", "default")
    assert info.value.code == 404
    assert cm["metadata"]["uid"]


def test_namespace_delete_goes_terminating_and_blocks_new_content(api: Api) -> None:
    api.create("namespaces", {"metadata": {"name": "team"}})
    ns = api.delete("namespaces", "team")
    assert ns["status"]["phase"] == "Terminating"
    with pytest.raises(ApiError) as info:
        api.create("configmaps", {"metadata": {"name": "a"}}, "team")
    assert info.value.code == 403 and info.value.causes[0]["reason"] == "NamespaceTerminating"
    api.update(
        "namespaces", {"metadata": {"name": "team"}, "spec": {"finalizers": []}}, subresource="finalize"
    )
    with pytest.raises(ApiError):
        api.get("namespaces", "team")


def test_watch_replays_from_revision_and_reports_selector_transitions(api: Api) -> None:
    cm = api.create("configmaps", {"metadata": {"name": "a", "labels": {"app": "x"}}}, "default")
    w = api.watch("configmaps", "default", cm["metadata"]["resourceVersion"], label_selector="app=x")
    api.patch("configmaps", "a", {"data": {"k": "v"}}, "merge", "default")
    api.patch("configmaps", "a", {"metadata": {"labels": {"app": "y"}}}, "merge", "default")
    api.patch("configmaps", "a", {"metadata": {"labels": {"app": "x"}}}, "merge", "default")
    got = [w.next_event(1) for _ in range(3)]
    assert [e[0] for e in got if e] == ["MODIFIED", "DELETED", "ADDED"]
    assert w.next_event(0.01) is None
    w.close()


def test_watch_from_zero_lists_current_objects_first(api: Api) -> None:
    api.create("configmaps", {"metadata": {"name": "a"}}, "default")
    w = api.watch("configmaps", "default")
    first = w.next_event(1)
    assert first is not None and first[0] == "ADDED" and first[1]["metadata"]["name"] == "a"


def test_watch_below_compaction_is_gone(api: Api) -> None:
    for i in range(120):
        api.create("configmaps", {"metadata": {"name": f"c{i}"}}, "default")
    api.store.compact()
    with pytest.raises(ApiError) as info:
        api.watch("configmaps", "default", "2")
    assert info.value.code == 410 and "too old resource version" in info.value.message


def test_list_pages_with_continue_and_field_selectors(api: Api) -> None:
    rt = api.resource_type("configmaps")
    for i in range(5):
        api.create("configmaps", {"metadata": {"name": f"c{i}"}}, "default")
    page1 = api.do_list(rt, "default", limit=2)
    assert [i["metadata"]["name"] for i in page1.items] == ["c0", "c1"] and page1.remaining == 3
    page2 = api.do_list(rt, "default", limit=2, continue_token=page1.continue_token)
    assert [i["metadata"]["name"] for i in page2.items] == ["c2", "c3"]
    items, _ = api.list("configmaps", "default", field_selector="metadata.name=c4")
    assert [i["metadata"]["name"] for i in items] == ["c4"]
    with pytest.raises(ApiError) as info:
        api.list("configmaps", "default", field_selector="data.x=1")
    assert info.value.code == 400


def test_scale_subresource_maps_onto_replicas(api: Api) -> None:
    api.create("deployments.apps", deployment(replicas=2), "default")
    rt = api.resource_type("deployments.apps")
    scale = api.get_scale(rt, "web", "default")
    assert (
        scale["kind"] == "Scale"
        and scale["spec"]["replicas"] == 2
        and scale["status"]["selector"] == "app=web"
    )
    out = api.patch(
        "deployments.apps", "web", {"spec": {"replicas": 4}}, "merge", "default", subresource="scale"
    )
    assert out["kind"] == "Scale" and api.get("deployments.apps", "web", "default")["spec"]["replicas"] == 4


def test_binding_sets_node_and_condition_then_conflicts(api: Api) -> None:
    api.create(
        "pods", {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "x"}]}}, "default"
    )
    binding = {"metadata": {"name": "p"}, "target": {"kind": "Node", "name": "node-1"}}
    status = api.create("bindings", binding, "default")
    assert status["status"] == "Success" and status["code"] == 201
    pod = api.get("pods", "p", "default")
    assert pod["spec"]["nodeName"] == "node-1"
    assert any(c["type"] == "PodScheduled" and c["status"] == "True" for c in pod["status"]["conditions"])
    with pytest.raises(ApiError) as info:
        api.create("bindings", binding, "default")
    assert info.value.code == 409


def test_dry_run_stores_nothing(api: Api) -> None:
    out = api.create("configmaps", {"metadata": {"name": "a"}}, "default", dry_run=True)
    assert out["metadata"]["uid"]
    with pytest.raises(ApiError):
        api.get("configmaps", "a", "default")


def test_crd_registers_a_type_and_defaults_custom_objects(api: Api) -> None:
    schema = {
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": {"size": {"type": "integer", "default": 3}}}},
    }
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [
                {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}
            ],
        },
    }
    out = api.create("customresourcedefinitions.apiextensions.k8s.io", crd)
    conds = {c["type"]: c["status"] for c in out["status"]["conditions"]}
    assert conds == {"NamesAccepted": "True", "Established": "True"}
    w = api.create(
        "widgets.example.com",
        {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}},
        "default",
    )
    assert w["metadata"]["generation"] == 1
    api.patch("widgets.example.com", "w", {"spec": {}}, "merge", "default")
    assert api.get("widgets.example.com", "w", "default")["spec"] == {"size": 3}
    api.delete("customresourcedefinitions.apiextensions.k8s.io", "widgets.example.com")
    with pytest.raises(ApiError) as info:
        api.resource_type("widgets.example.com")
    assert info.value.code == 404


def test_in_process_writes_are_audited() -> None:
    lines: list[tuple[Any, ...]] = []
    api = Api(Store(), audit=lambda *a: lines.append(a))
    api.create("configmaps", {"metadata": {"name": "a"}}, "default", user="tester")
    with pytest.raises(ApiError):
        api.delete("configmaps", "zzz", "default", user="tester")
    assert lines == [
        ("tester", "create", "configmaps", "", "default", "a", 201),
        ("tester", "delete", "configmaps", "", "default", "zzz", 404),
    ]


@pytest.mark.parametrize(
    ("send_initial", "rv", "first"),
    [
        (None, None, "ADDED:old"),
        (True, None, "ADDED:old"),
        (False, None, "ADDED:new"),
        (None, "0", "ADDED:old"),
    ],
    ids=["unset", "send-initial", "no-initial", "rv-0"],
)
def test_watch_start_points(api: Api, send_initial: bool | None, rv: str | None, first: str) -> None:
    api.create("configmaps", {"metadata": {"name": "old"}}, "default")
    w = api.do_watch(api.resource_type("configmaps"), "default", rv, send_initial_events=send_initial)
    api.create("configmaps", {"metadata": {"name": "new"}}, "default")
    ev = w.next_event(1)
    assert ev is not None and f"{ev[0]}:{ev[1]['metadata']['name']}" == first
    if send_initial:
        bookmark = w.next_event(1)
        assert bookmark is not None and bookmark[0] == "BOOKMARK"


def test_system_namespaces_may_not_be_deleted(api: Api) -> None:
    with pytest.raises(ApiError) as info:
        api.delete("namespaces", "kube-system")
    assert info.value.code == 403
    assert info.value.message == 'namespaces "kube-system" is forbidden: this namespace may not be deleted'


def test_events_k8s_io_is_a_view_of_core_events(api: Api) -> None:
    new = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "p.1"},
        "regarding": {"kind": "Pod", "name": "p", "namespace": "default"},
        "reason": "Scheduled",
        "note": "Successfully assigned default/p to node-1",
        "type": "Normal",
        "action": "Binding",
        "reportingController": "default-scheduler",
        "reportingInstance": "default-scheduler-x",
        "eventTime": "2026-01-01T00:00:00.000000Z",
    }
    w = api.watch("events", "default", str(api.store.revision))
    out = api.create("events.events.k8s.io", new, "default")
    assert out["apiVersion"] == "events.k8s.io/v1" and out["note"].startswith("Successfully")
    core = api.get("events", "p.1", "default")
    assert core["involvedObject"]["name"] == "p" and core["message"] == new["note"]
    assert core["reportingComponent"] == "default-scheduler"
    items, _ = api.list("events", "default", field_selector="involvedObject.name=p,reason=Scheduled")
    assert [i["metadata"]["name"] for i in items] == ["p.1"]
    v1items, _ = api.list("events.events.k8s.io", "default", field_selector="regarding.name=p")
    assert v1items[0]["regarding"]["kind"] == "Pod" and "involvedObject" not in v1items[0]
    ev = w.next_event(1)
    assert ev is not None and ev[1]["message"] == new["note"]
    patched = api.patch("events.events.k8s.io", "p.1", {"note": "changed"}, "merge", "default")
    assert patched["note"] == "changed" and api.get("events", "p.1", "default")["message"] == "changed"
    api.delete("events.events.k8s.io", "p.1", "default")
    assert api.list("events", "default")[0] == []


def test_new_uids_are_random_version_4_uuids() -> None:
    import uuid

    from berth.cluster.api import new_uid

    uids = [new_uid() for _ in range(2000)]
    assert len(set(uids)) == len(uids)
    for text in uids[:200]:
        parsed = uuid.UUID(text)
        assert str(parsed) == text
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122


def test_created_objects_carry_a_fresh_uid_and_second_precision_timestamp() -> None:
    import re

    api = Api(Store())
    a = api.create("configmaps", {"metadata": {"name": "a"}}, namespace="default")
    b = api.create("configmaps", {"metadata": {"name": "b"}}, namespace="default")
    assert a["metadata"]["uid"] != b["metadata"]["uid"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", a["metadata"]["creationTimestamp"])


def test_a_pod_naming_a_missing_service_account_is_refused(api: Api) -> None:
    def pod(name: str, sa: str) -> dict[str, Any]:
        return {
            "metadata": {"name": name},
            "spec": {"serviceAccountName": sa, "containers": [{"name": "c", "image": "x"}]},
        }

    with pytest.raises(ApiError) as refused:
        api.create("pods", pod("p", "builder"), "default")
    assert refused.value.code == 403
    assert refused.value.message == (
        'pods "p" is forbidden: error looking up service account default/builder: serviceaccount "builder" not found'
    )
    api.create("serviceaccounts", {"metadata": {"name": "builder"}}, "default")
    assert api.create("pods", pod("p", "builder"), "default")["spec"]["serviceAccount"] == "builder"
    api.create("pods", pod("q", "default"), "default")  # the namespace's default account is not looked up


def _qos_pod(name: str, containers: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": containers, **spec},
    }


def _c(
    name: str, requests: dict[str, str] | None = None, limits: dict[str, str] | None = None
) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    if requests:
        resources["requests"] = requests
    if limits:
        resources["limits"] = limits
    return {"name": name, "image": "nginx", "resources": resources}


@pytest.mark.parametrize(
    ("containers", "spec", "qos"),
    [
        pytest.param([_c("a")], {}, "BestEffort", id="nothing"),
        pytest.param([_c("a", {"cpu": "0"}, None)], {}, "BestEffort", id="zero-is-nothing"),
        pytest.param(
            [_c("a", {"cpu": "1", "memory": "1Gi"}, {"cpu": "1000m", "memory": "1024Mi"})],
            {},
            "Guaranteed",
            id="equal-quantities-in-other-units",
        ),
        pytest.param([_c("a", None, {"cpu": "1", "memory": "1Gi"})], {}, "Guaranteed", id="limits-only"),
        pytest.param(
            [_c("a", None, {"cpu": "1", "memory": "1Gi"})],
            {"initContainers": [_c("side", {"cpu": "100m"}) | {"restartPolicy": "Always"}]},
            "Burstable",
            id="a-requests-only-sidecar",
        ),
        pytest.param(
            [_c("a", {"nvidia.com/gpu": "1"}, {"nvidia.com/gpu": "1"})], {}, "BestEffort", id="gpu-only"
        ),
        pytest.param(
            [_c("a")],
            {
                "resources": {
                    "requests": {"cpu": "2", "memory": "2Gi"},
                    "limits": {"cpu": "2", "memory": "2Gi"},
                }
            },
            "Guaranteed",
            id="pod-level-resources",
        ),
    ],
)
def test_the_qos_class_is_upstreams(
    api: Api, containers: list[dict[str, Any]], spec: dict[str, Any], qos: str
) -> None:
    """status.qosClass as upstream's ComputePodQOS: quantities compared as quantities, init containers (sidecars)
    counted, cpu/memory only, pod-level resources when set."""
    created = api.create("pods", _qos_pod("p", containers, **spec), "default")
    assert created["status"]["qosClass"] == qos
