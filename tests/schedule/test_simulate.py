"""Simulation input: cluster/workload files, controller-like expansion, priority classes, and bad input."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from berth.kube import yamlio
from berth.kube.errors import InputError
from berth.schedule import config as schedconfig
from berth.schedule.simulate import (
    ALPHANUMS,
    PriorityClasses,
    load_cluster,
    load_workload,
    safe_encode,
    simulate,
    template_hash,
)

NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "n1"},
    "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
}


def template(labels: dict[str, str], **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"labels": labels},
        "spec": {
            "containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": "100m"}}}],
            **spec,
        },
    }


def controller(kind: str, name: str, replicas: int | None = 2, **spec: Any) -> dict[str, Any]:
    api = {"Deployment": "apps/v1", "ReplicaSet": "apps/v1", "StatefulSet": "apps/v1", "Job": "batch/v1"}[
        kind
    ]
    body: dict[str, Any] = {"template": template({"app": name}), **spec}
    if kind != "Job":
        body["selector"] = {"matchLabels": {"app": name}}
        if replicas is not None:
            body["replicas"] = replicas
    return {"apiVersion": api, "kind": kind, "metadata": {"name": name, "namespace": "ns"}, "spec": body}


def write(tmp_path: Path, name: str, *docs: Any) -> str:
    path = tmp_path / name
    path.write_text(yamlio.dump_all(docs), encoding="utf-8")
    return str(path)


def expand(tmp_path: Path, *docs: Any, seed: int = 1) -> list[dict[str, Any]]:
    loaded = load_workload(write(tmp_path, "w.yaml", *docs), random.Random(seed), PriorityClasses())
    return [s.obj for s in loaded.pods]


def test_deployment_expands_through_a_replicaset_named_by_the_template_hash(tmp_path: Path) -> None:
    dep = controller("Deployment", "web", replicas=3)
    pods = expand(tmp_path, dep)
    h = template_hash(dep["spec"]["template"])
    assert len(pods) == 3
    for p in pods:
        meta = p["metadata"]
        assert meta["name"].startswith(f"web-{h}-") and len(meta["name"]) == len(f"web-{h}-") + 5
        assert set(meta["name"][-5:]) <= set(ALPHANUMS)
        assert meta["labels"] == {"app": "web", "pod-template-hash": h}
        assert meta["namespace"] == "ns"
        owner = meta["ownerReferences"][0]
        assert (owner["kind"], owner["name"], owner["controller"]) == ("ReplicaSet", f"web-{h}", True)
    assert len({p["metadata"]["name"] for p in pods}) == 3
    assert len({p["metadata"]["uid"] for p in pods}) == 3


def test_expansion_is_reproducible_with_a_seed(tmp_path: Path) -> None:
    dep = controller("Deployment", "web")
    names = lambda seed: [p["metadata"]["name"] for p in expand(tmp_path, dep, seed=seed)]  # noqa: E731
    assert names(3) == names(3)
    assert names(3) != names(4)


def test_statefulset_pods_are_numbered_with_identity_labels(tmp_path: Path) -> None:
    pods = expand(tmp_path, controller("StatefulSet", "db", replicas=3, serviceName="db-headless"))
    assert [p["metadata"]["name"] for p in pods] == ["db-0", "db-1", "db-2"]
    labels = pods[1]["metadata"]["labels"]
    assert labels["statefulset.kubernetes.io/pod-name"] == "db-1"
    assert labels["apps.kubernetes.io/pod-index"] == "1"
    assert labels["controller-revision-hash"].startswith("db-")
    assert (pods[1]["spec"]["hostname"], pods[1]["spec"]["subdomain"]) == ("db-1", "db-headless")
    assert pods[0]["metadata"]["ownerReferences"][0]["kind"] == "StatefulSet"


@pytest.mark.parametrize(
    ("spec", "count"),
    [
        pytest.param({}, 1, id="defaults"),
        pytest.param({"parallelism": 3}, 3, id="parallelism"),
        pytest.param({"parallelism": 4, "completions": 2}, 2, id="fewer-completions"),
        pytest.param({"parallelism": 2, "suspend": True}, 0, id="suspended"),
    ],
)
def test_job_creates_parallelism_pods_with_job_labels(
    tmp_path: Path, spec: dict[str, Any], count: int
) -> None:
    pods = expand(tmp_path, controller("Job", "batch", **spec))
    assert len(pods) == count
    for p in pods:
        meta = p["metadata"]
        assert meta["name"].startswith("batch-") and len(meta["name"]) == len("batch-") + 5
        assert meta["labels"]["batch.kubernetes.io/job-name"] == "batch"
        assert meta["labels"]["job-name"] == "batch"
        assert meta["labels"]["controller-uid"] == meta["ownerReferences"][0]["uid"]


def test_indexed_job_pods_carry_their_index(tmp_path: Path) -> None:
    pods = expand(tmp_path, controller("Job", "ix", parallelism=2, completionMode="Indexed"))
    assert [p["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"] for p in pods] == ["0", "1"]
    assert pods[1]["metadata"]["name"].startswith("ix-1-")


def test_pods_keep_document_order_and_resolve_priority_classes(tmp_path: Path) -> None:
    high = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "high"},
        "value": 1000,
    }
    default = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "normal"},
        "value": 10,
        "globalDefault": True,
    }
    solo = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "solo"}, "spec": template({})["spec"]}
    rs = controller("ReplicaSet", "rs", replicas=1)
    rs["spec"]["template"]["spec"]["priorityClassName"] = "high"
    crit = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "crit"}, "spec": template({})["spec"]}
    crit["spec"]["priorityClassName"] = "system-node-critical"
    pods = expand(tmp_path, solo, high, rs, default, crit)
    assert [p["spec"].get("priority") for p in pods] == [10, 1000, 2000001000]
    assert [p["metadata"]["name"].split("-")[0] for p in pods] == ["solo", "rs", "crit"]
    assert pods[0]["metadata"]["namespace"] == "default"
    assert pods[0]["spec"]["priorityClassName"] == "normal"


def _pod_doc(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {**template({})["spec"], **spec},
    }


@pytest.mark.parametrize(
    ("docs", "message"),
    [
        pytest.param(
            [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "s"}}],
            r"w.yaml, document 1 \(ConfigMap s\): kind 'ConfigMap' is not supported in the workload file",
            id="unknown-kind",
        ),
        pytest.param(
            [
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": "p"},
                    "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "2x"}}}]},
                }
            ],
            r"w.yaml, document 1 \(Pod p\): spec.containers\[0\].resources.requests.cpu: invalid quantity '2x'",
            id="bad-quantity",
        ),
        pytest.param(
            [controller("Deployment", "d"), {"kind": "Deployment", "metadata": {"name": "e"}, "spec": {}}],
            r"document 2 \(Deployment e\): spec.template: Required value",
            id="no-template",
        ),
        pytest.param(
            [
                {
                    **controller("Deployment", "d"),
                    "spec": {
                        **controller("Deployment", "d")["spec"],
                        "selector": {"matchLabels": {"app": "x"}},
                    },
                }
            ],
            r"selector` does not match template `labels`",
            id="selector-mismatch",
        ),
        pytest.param(
            [{**controller("Deployment", "d"), "apiVersion": "v1"}],
            r"apiVersion: Deployment must be 'apps/v1', not 'v1'",
            id="wrong-api-version",
        ),
        pytest.param(
            [_pod_doc(priorityClassName="nope")],
            r"spec.priorityClassName: no PriorityClass with name nope was found",
            id="unknown-priority-class",
        ),
        pytest.param(
            [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {}}],
            r"spec.containers: Required value",
            id="no-containers",
        ),
        pytest.param([_pod_doc(), _pod_doc()], r"pod default/p is also created by", id="duplicate-pod"),
        pytest.param(
            [
                controller("Deployment", "d", replicas=None)
                | {"spec": {**controller("Deployment", "d")["spec"], "replicas": -1}}
            ],
            r"spec.replicas: Invalid value: -1",
            id="negative-replicas",
        ),
        pytest.param(
            ["just a string"], r"w.yaml, document 1.*expected a Kubernetes object", id="not-an-object"
        ),
    ],
)
def test_bad_workload_input_names_file_document_and_field(
    tmp_path: Path, docs: list[Any], message: str
) -> None:
    with pytest.raises(InputError, match=message):
        expand(tmp_path, *docs)


def test_malformed_yaml_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text("kind: Pod\nmetadata: {name: [\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"w.yaml, document 1, line \d+: malformed YAML"):
        load_workload(str(path), random.Random(1), PriorityClasses())


@pytest.mark.parametrize(
    ("docs", "message"),
    [
        pytest.param(
            [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "status": {}}],
            r"document 1 \(Node n1\): status.allocatable: Required value",
            id="no-allocatable",
        ),
        pytest.param(
            [{**NODE, "status": {"allocatable": {"cpu": "2x"}}}],
            r"document 1 \(Node n1\): status.allocatable.cpu: invalid quantity '2x'",
            id="bad-allocatable",
        ),
        pytest.param(
            [NODE, NODE], r"document 2 \(Node n1\): metadata.name: Duplicate value", id="duplicate-node"
        ),
        pytest.param(
            [NODE, _pod_doc()],
            r"spec.nodeName: Required value: pods in the cluster file are already running",
            id="unbound-pod",
        ),
        pytest.param(
            [NODE, _pod_doc(nodeName="n9")],
            r"spec.nodeName: no Node named 'n9' in this file",
            id="pod-on-missing-node",
        ),
        pytest.param(
            [{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}}],
            r"kind 'Deployment' is not supported in the cluster file",
            id="workload-kind-in-cluster",
        ),
        pytest.param([{"kind": "Node", "status": {}}], r"metadata.name: Required value", id="nameless-node"),
    ],
)
def test_bad_cluster_input(tmp_path: Path, docs: list[Any], message: str) -> None:
    with pytest.raises(InputError, match=message):
        load_cluster(write(tmp_path, "c.yaml", *docs))


def test_missing_file_is_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="file not found"):
        load_cluster(str(tmp_path / "nope.yaml"))


def test_bound_pods_in_the_cluster_file_take_room(tmp_path: Path) -> None:
    cluster = write(tmp_path, "c.yaml", NODE, _pod_doc(nodeName="n1") | {"metadata": {"name": "old"}})
    big = _pod_doc()
    big["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "3950m"
    workload = write(tmp_path, "w.yaml", big)
    result = simulate([schedconfig.default_config()], cluster, workload)
    # The bound pod has the same priority (0): preemption finds nothing to evict.
    assert [f.message for f in result.unschedulable] == [
        "0/1 nodes are available: 1 Insufficient cpu. "
        "no new claims to deallocate, preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    ]
    assert result.pods == 1 and result.scheduled == 0


def test_template_hash_is_stable_and_safe() -> None:
    t = template({"app": "x"})
    assert template_hash(t) == template_hash(template({"app": "x"}))
    assert template_hash(t) != template_hash(template({"app": "y"}))
    assert set(safe_encode("1234567890")) <= set(ALPHANUMS)


def test_controllers_and_services_become_objects_plugins_can_read(tmp_path: Path) -> None:
    svc = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web"},
        "spec": {"selector": {"app": "web"}},
    }
    dep = controller("Deployment", "web", replicas=1)
    sts = controller("StatefulSet", "db", replicas=1)
    loaded = load_workload(write(tmp_path, "w.yaml", svc, dep, sts), random.Random(1), PriorityClasses())
    by_kind = {o.obj["kind"]: o.obj for o in loaded.objects}
    assert set(by_kind) == {"Service", "ReplicaSet", "StatefulSet"}
    rs = by_kind["ReplicaSet"]
    pod = loaded.pods[0].obj
    assert pod["metadata"]["ownerReferences"][0]["uid"] == rs["metadata"]["uid"]
    assert rs["spec"]["selector"]["matchLabels"] == {
        "app": "web",
        "pod-template-hash": pod["metadata"]["labels"]["pod-template-hash"],
    }
    assert rs["metadata"]["ownerReferences"][0]["kind"] == "Deployment"
    assert by_kind["Service"]["metadata"]["namespace"] == "default"


def test_cluster_file_objects_are_kept(tmp_path: Path) -> None:
    sc = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "fast"}}
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team", "labels": {"tier": "gold"}}}
    cluster = load_cluster(write(tmp_path, "c.yaml", NODE, sc, ns))
    assert [o.obj["kind"] for o in cluster.objects] == ["StorageClass", "Namespace"]


@pytest.mark.parametrize(
    "spec",
    [
        pytest.param({"nodeSelector": "disk=ssd"}, id="selector-not-a-mapping"),
        pytest.param({"priority": "high"}, id="priority-not-a-number"),
    ],
)
def test_fields_of_the_wrong_type_are_input_errors(tmp_path: Path, spec: dict[str, Any]) -> None:
    cluster = write(tmp_path, "c.yaml", NODE)
    workload = write(tmp_path, "w.yaml", _pod_doc(**spec))
    with pytest.raises(InputError, match=r"w.yaml, document 1 \(Pod p\): malformed object"):
        simulate([schedconfig.default_config()], cluster, workload)


# --- amounts that cannot be: refused at load, naming file, document and field (issue 20) ---------------------------


def _cpu_pod(requests: Any = None, limits: Any = None, overhead: Any = None) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    if requests is not None:
        resources["requests"] = requests
    if limits is not None:
        resources["limits"] = limits
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "pause", "resources": resources}]}
    if overhead is not None:
        spec["overhead"] = overhead
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}


@pytest.mark.parametrize(
    ("doc", "field"),
    [
        (
            _cpu_pod(requests={"cpu": "-1"}),
            r"spec.containers\[0\].resources.requests.cpu: Invalid value: '-1'",
        ),
        (_cpu_pod(requests={"cpu": -1}), r"spec.containers\[0\].resources.requests.cpu: Invalid value: -1"),
        (_cpu_pod(limits={"memory": "-1Gi"}), r"resources.limits.memory: Invalid value: '-1Gi'"),
        (_cpu_pod(overhead={"cpu": "-100m"}), r"spec.overhead.cpu: Invalid value: '-100m'"),
        (_cpu_pod(requests={"cpu": "NaN"}), r"requests.cpu: Invalid value: 'NaN': must be a finite quantity"),
    ],
    ids=["negative-string", "negative-number", "negative-limit", "negative-overhead", "nan"],
)
def test_negative_or_non_finite_pod_amounts_are_refused(
    tmp_path: Path, doc: dict[str, Any], field: str
) -> None:
    with pytest.raises(InputError, match=r"w.yaml, document 1 \(Pod p\): .*" + field) as info:
        expand(tmp_path, doc)
    assert info.value.exit_code == 2


def test_an_infinite_number_is_refused_while_reading_naming_the_field(tmp_path: Path) -> None:
    """YAML's ``.inf`` cannot become JSON, so Kubernetes' decoder (and berth's, which reads as it does) refuses the
    file before any quantity check: the message still names the file, document, line and field."""
    with pytest.raises(InputError, match=r"w.yaml, document 1, line \d+: .*") as info:
        expand(tmp_path, _cpu_pod(requests={"cpu": float("inf")}))
    assert "spec.containers[0].resources.requests.cpu: json: unsupported value: +Inf" in str(info.value)
    assert info.value.exit_code == 2


@pytest.mark.parametrize(
    ("status", "field"),
    [
        ({"allocatable": {"cpu": "-4"}}, r"status.allocatable.cpu: Invalid value: '-4'"),
        (
            {"allocatable": {"cpu": "4"}, "capacity": {"memory": "-8Gi"}},
            r"status.capacity.memory: Invalid value",
        ),
        ({"allocatable": {"cpu": "inf"}}, r"status.allocatable.cpu: Invalid value: 'inf': must be a finite"),
    ],
    ids=["negative-allocatable", "negative-capacity", "infinite-allocatable"],
)
def test_negative_or_non_finite_node_amounts_are_refused(tmp_path: Path, status: Any, field: str) -> None:
    with pytest.raises(InputError, match=r"c.yaml, document 1 \(Node n1\): .*" + field):
        load_cluster(write(tmp_path, "c.yaml", {**NODE, "status": status}))


def test_an_empty_cluster_file_is_refused_naming_it(tmp_path: Path) -> None:
    empty = tmp_path / "empty.yaml"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(InputError, match="the cluster file holds no objects") as info:
        load_cluster(str(empty))
    assert str(empty) in str(info.value)


def test_a_negative_request_exits_2_through_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from berth.cli import main

    cluster = write(tmp_path, "c.yaml", NODE)
    workload = write(tmp_path, "w.yaml", _cpu_pod(requests={"cpu": "-1"}))
    config = tmp_path / "config.yaml"
    config.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n")
    code = main(
        ["schedule", "simulate", "--config", str(config), "--cluster", cluster, "--workload", workload]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert "w.yaml, document 1 (Pod p)" in err and "requests.cpu: Invalid value: '-1'" in err


# --- generated names (upstream generateName retries on conflict) -------------------------------------------------


@pytest.mark.parametrize("kind", ["Deployment", "ReplicaSet", "Job"])
def test_generated_names_are_unique_for_any_size_and_repeat_per_seed(tmp_path: Path, kind: str) -> None:
    replicas = 10_000
    extra = {"parallelism": replicas, "completions": replicas} if kind == "Job" else {}
    doc = controller(kind, "big", replicas=replicas if kind != "Job" else None, **extra)
    if kind == "ReplicaSet":
        doc["metadata"]["uid"] = "rs-uid"
    pods = expand(tmp_path, doc, seed=3)
    names = [p["metadata"]["name"] for p in pods]
    assert len(names) == replicas == len(set(names))
    assert names == [p["metadata"]["name"] for p in expand(tmp_path, doc, seed=3)]
