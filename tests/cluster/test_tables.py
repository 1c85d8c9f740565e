"""Tables: the columns and cells `kubectl get` prints, as the real printers compute them."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from berth.cluster import tables

NOW = dt.datetime(2026, 1, 10, 12, 0, 0, tzinfo=dt.UTC)


def ago(**kw: float) -> str:
    return (NOW - dt.timedelta(**kw)).strftime("%Y-%m-%dT%H:%M:%SZ")


def meta(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "creationTimestamp": ago(minutes=5), **extra}


def names(table: dict[str, Any]) -> list[str]:
    return [c["name"] for c in table["columnDefinitions"]]


@pytest.mark.parametrize(
    ("delta", "text"),
    [
        (dt.timedelta(seconds=-5), "<invalid>"),
        (dt.timedelta(seconds=-1), "0s"),
        (dt.timedelta(seconds=5), "5s"),
        (dt.timedelta(seconds=119), "119s"),
        (dt.timedelta(minutes=3, seconds=2), "3m2s"),
        (dt.timedelta(minutes=5), "5m"),
        (dt.timedelta(minutes=42), "42m"),
        (dt.timedelta(hours=2, minutes=59), "179m"),
        (dt.timedelta(hours=5, minutes=4), "5h4m"),
        (dt.timedelta(hours=6), "6h"),
        (dt.timedelta(hours=30), "30h"),
        (dt.timedelta(days=2, hours=3), "2d3h"),
        (dt.timedelta(days=5), "5d"),
        (dt.timedelta(days=400), "400d"),
        (dt.timedelta(days=365 * 3 + 20), "3y20d"),
        (dt.timedelta(days=365 * 9), "9y"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_human_duration(delta: dt.timedelta, text: str) -> None:
    assert tables.human_duration(delta) == text


def test_namespace_table_and_row_objects() -> None:
    ns = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": meta("team", labels={"a": "b"}),
        "status": {"phase": "Active"},
    }
    table = tables.to_table("Namespace", [ns], now=NOW)
    assert table["kind"] == "Table" and table["apiVersion"] == "meta.k8s.io/v1"
    assert names(table) == ["Name", "Status", "Age"]
    assert table["columnDefinitions"][0]["format"] == "name"
    assert table["rows"][0]["cells"] == ["team", "Active", "5m"]
    assert table["rows"][0]["object"] == {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": ns["metadata"],
    }
    full = tables.to_table("Namespace", [ns], now=NOW, include_object="Object")
    assert full["rows"][0]["object"] == ns
    bare = tables.to_table(
        "Namespace", [ns], now=NOW, include_object="None", metadata={"resourceVersion": "9"}
    )
    assert "object" not in bare["rows"][0] and bare["metadata"] == {"resourceVersion": "9"}


def running_pod(**status: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta("web-1"),
        "spec": {"containers": [{"name": "a"}, {"name": "b"}], "nodeName": "node-1"},
        "status": {
            "phase": "Running",
            "podIP": "10.0.0.5",
            "podIPs": [{"ip": "10.0.0.5"}],
            "conditions": [{"type": "Ready", "status": "True"}],
            "containerStatuses": [
                {"name": "a", "ready": True, "restartCount": 0, "state": {"running": {}}},
                {
                    "name": "b",
                    "ready": True,
                    "restartCount": 2,
                    "state": {"running": {}},
                    "lastState": {"terminated": {"finishedAt": ago(minutes=3)}},
                },
            ],
            **status,
        },
    }


def test_pod_columns_and_wide_cells() -> None:
    table = tables.to_table("Pod", [running_pod()], now=NOW)
    assert names(table) == [
        "Name",
        "Ready",
        "Status",
        "Restarts",
        "Age",
        "IP",
        "Node",
        "Nominated Node",
        "Readiness Gates",
    ]
    assert [c["priority"] for c in table["columnDefinitions"]] == [0, 0, 0, 0, 0, 1, 1, 1, 1]
    assert table["rows"][0]["cells"] == [
        "web-1",
        "2/2",
        "Running",
        "2 (3m ago)",
        "5m",
        "10.0.0.5",
        "node-1",
        "<none>",
        "<none>",
    ]
    narrow = tables.to_table("Pod", [running_pod()], now=NOW, wide=False)
    assert names(narrow) == ["Name", "Ready", "Status", "Restarts", "Age"]
    assert len(narrow["rows"][0]["cells"]) == 5


def pod_with(status: dict[str, Any], spec: dict[str, Any] | None = None, **metadata: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta("p", **metadata),
        "spec": spec or {"containers": [{"name": "c"}]},
        "status": status,
    }


@pytest.mark.parametrize(
    ("pod", "ready", "status", "restarts"),
    [
        pytest.param(pod_with({"phase": "Pending"}), "0/1", "Pending", "0", id="pending"),
        pytest.param(
            pod_with(
                {
                    "phase": "Pending",
                    "containerStatuses": [
                        {
                            "name": "c",
                            "restartCount": 0,
                            "state": {"waiting": {"reason": "ContainerCreating"}},
                        }
                    ],
                }
            ),
            "0/1",
            "ContainerCreating",
            "0",
            id="waiting-reason",
        ),
        pytest.param(
            pod_with(
                {
                    "phase": "Succeeded",
                    "containerStatuses": [
                        {"name": "c", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}
                    ],
                }
            ),
            "0/1",
            "Completed",
            "0",
            id="completed",
        ),
        pytest.param(
            pod_with(
                {
                    "phase": "Failed",
                    "containerStatuses": [{"name": "c", "state": {"terminated": {"exitCode": 3}}}],
                }
            ),
            "0/1",
            "ExitCode:3",
            "0",
            id="exit-code",
        ),
        pytest.param(
            pod_with(
                {
                    "phase": "Running",
                    "containerStatuses": [{"name": "c", "ready": True, "state": {"running": {}}}],
                },
                deletionTimestamp=ago(seconds=1),
            ),
            "1/1",
            "Terminating",
            "0",
            id="terminating",
        ),
        pytest.param(
            pod_with(
                {
                    "phase": "Pending",
                    "conditions": [{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}],
                }
            ),
            "0/1",
            "SchedulingGated",
            "0",
            id="scheduling-gated",
        ),
        pytest.param(
            pod_with(
                {
                    "phase": "Pending",
                    "initContainerStatuses": [
                        {"name": "init", "state": {"waiting": {"reason": "PodInitializing"}}}
                    ],
                },
                spec={"initContainers": [{"name": "init"}], "containers": [{"name": "c"}]},
            ),
            "0/1",
            "Init:0/1",
            "0",
            id="init-progress",
        ),
        pytest.param(
            pod_with(
                {
                    "phase": "Pending",
                    "initContainerStatuses": [
                        {
                            "name": "init",
                            "restartCount": 1,
                            "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                        }
                    ],
                },
                spec={"initContainers": [{"name": "init"}], "containers": [{"name": "c"}]},
            ),
            "0/1",
            "Init:CrashLoopBackOff",
            "1",
            id="init-crash",
        ),
        pytest.param(
            pod_with({"phase": "Running", "reason": "Evicted"}), "0/1", "Evicted", "0", id="status-reason"
        ),
    ],
)
def test_pod_status_column(pod: dict[str, Any], ready: str, status: str, restarts: str) -> None:
    cells = tables.to_table("Pod", [pod], now=NOW)["rows"][0]["cells"]
    assert cells[1:4] == [ready, status, restarts]


def test_finished_pods_carry_row_conditions() -> None:
    row = tables.to_table("Pod", [pod_with({"phase": "Succeeded"})], now=NOW)["rows"][0]
    assert row["conditions"] == [
        {
            "type": "Completed",
            "status": "True",
            "reason": "Succeeded",
            "message": "The pod has completed successfully.",
        }
    ]


def test_readiness_gates() -> None:
    pod = running_pod(conditions=[{"type": "Ready", "status": "True"}, {"type": "x/gate", "status": "True"}])
    pod["spec"]["readinessGates"] = [{"conditionType": "x/gate"}, {"conditionType": "y/gate"}]
    assert tables.to_table("Pod", [pod], now=NOW)["rows"][0]["cells"][8] == "1/2"


def test_node() -> None:
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": meta(
            "node-1", labels={"node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "w"}
        ),
        "spec": {"unschedulable": True},
        "status": {
            "conditions": [{"type": "Ready", "status": "True"}],
            "addresses": [{"type": "InternalIP", "address": "10.1.0.1"}],
            "nodeInfo": {
                "kubeletVersion": "v1.35.0",
                "osImage": "berth",
                "kernelVersion": "6.1",
                "containerRuntimeVersion": "berth://1",
            },
        },
    }
    table = tables.to_table("Node", [node], now=NOW)
    assert names(table)[:5] == ["Name", "Status", "Roles", "Age", "Version"]
    assert table["rows"][0]["cells"] == [
        "node-1",
        "Ready,SchedulingDisabled",
        "control-plane,w",
        "5m",
        "v1.35.0",
        "10.1.0.1",
        "<none>",
        "berth",
        "6.1",
        "berth://1",
    ]
    no_conditions = {"apiVersion": "v1", "kind": "Node", "metadata": meta("n"), "status": {}}
    cells = tables.to_table("Node", [no_conditions], now=NOW)["rows"][0]["cells"]
    assert cells[1:3] == ["Unknown", "<none>"]
    assert cells[5:] == ["<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"]


def workload(kind: str, spec: dict[str, Any], status: dict[str, Any]) -> dict[str, Any]:
    template = {
        "spec": {"containers": [{"name": "a", "image": "nginx:1"}, {"name": "b", "image": "busybox"}]}
    }
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": meta("web"),
        "spec": {"selector": {"matchLabels": {"app": "web", "tier": "fe"}}, "template": template, **spec},
        "status": status,
    }


@pytest.mark.parametrize(
    ("kind", "spec", "status", "columns", "cells"),
    [
        pytest.param(
            "Deployment",
            {"replicas": 3},
            {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2},
            ["Name", "Ready", "Up-to-date", "Available", "Age", "Containers", "Images", "Selector"],
            ["web", "2/3", 3, 2, "5m", "a,b", "nginx:1,busybox", "app=web,tier=fe"],
            id="deployment",
        ),
        pytest.param(
            "ReplicaSet",
            {"replicas": 3},
            {"replicas": 3, "readyReplicas": 1},
            ["Name", "Desired", "Current", "Ready", "Age", "Containers", "Images", "Selector"],
            ["web", 3, 3, 1, "5m", "a,b", "nginx:1,busybox", "app=web,tier=fe"],
            id="replicaset",
        ),
        pytest.param(
            "StatefulSet",
            {"replicas": 2},
            {"readyReplicas": 2},
            ["Name", "Ready", "Age", "Containers", "Images"],
            ["web", "2/2", "5m", "a,b", "nginx:1,busybox"],
            id="statefulset",
        ),
        pytest.param(
            "DaemonSet",
            {},
            {
                "desiredNumberScheduled": 3,
                "currentNumberScheduled": 3,
                "numberReady": 2,
                "updatedNumberScheduled": 3,
                "numberAvailable": 2,
            },
            [
                "Name",
                "Desired",
                "Current",
                "Ready",
                "Up-to-date",
                "Available",
                "Node Selector",
                "Age",
                "Containers",
                "Images",
                "Selector",
            ],
            ["web", 3, 3, 2, 3, 2, "<none>", "5m", "a,b", "nginx:1,busybox", "app=web,tier=fe"],
            id="daemonset",
        ),
    ],
)
def test_workloads(
    kind: str, spec: dict[str, Any], status: dict[str, Any], columns: list[str], cells: list[Any]
) -> None:
    table = tables.to_table(kind, [workload(kind, spec, status)], now=NOW)
    assert names(table) == columns
    assert table["rows"][0]["cells"] == cells


def job(spec: dict[str, Any], status: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta("j"),
        "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}, **spec},
        "status": status,
    }


@pytest.mark.parametrize(
    ("spec", "status", "expected"),
    [
        pytest.param(
            {"completions": 1},
            {
                "succeeded": 1,
                "startTime": ago(minutes=4),
                "completionTime": ago(minutes=3),
                "conditions": [{"type": "Complete", "status": "True"}],
            },
            ["Complete", "1/1", "60s"],
            id="complete",
        ),
        pytest.param(
            {"completions": 3},
            {"succeeded": 1, "startTime": ago(seconds=30)},
            ["Running", "1/3", "30s"],
            id="running",
        ),
        pytest.param({"parallelism": 2}, {}, ["Running", "0/1 of 2", ""], id="parallel-no-completions"),
        pytest.param(
            {}, {"conditions": [{"type": "Failed", "status": "True"}]}, ["Failed", "0/1", ""], id="failed"
        ),
        pytest.param(
            {"suspend": True},
            {"conditions": [{"type": "Suspended", "status": "True"}]},
            ["Suspended", "0/1", ""],
            id="suspended",
        ),
    ],
)
def test_job(spec: dict[str, Any], status: dict[str, Any], expected: list[str]) -> None:
    table = tables.to_table("Job", [job(spec, status)], now=NOW)
    assert names(table) == [
        "Name",
        "Status",
        "Completions",
        "Duration",
        "Age",
        "Containers",
        "Images",
        "Selector",
    ]
    assert table["rows"][0]["cells"][1:4] == expected


@pytest.mark.parametrize(
    ("spec", "status", "cells"),
    [
        pytest.param(
            {
                "type": "ClusterIP",
                "clusterIP": "10.96.0.10",
                "ports": [{"port": 53, "protocol": "UDP"}, {"port": 53, "protocol": "TCP"}],
                "selector": {"k8s-app": "dns"},
            },
            {},
            ["svc", "ClusterIP", "10.96.0.10", "<none>", "53/UDP,53/TCP", "5m", "k8s-app=dns"],
            id="clusterip",
        ),
        pytest.param(
            {"type": "NodePort", "clusterIP": "10.96.0.11", "ports": [{"port": 80, "nodePort": 30080}]},
            {},
            ["svc", "NodePort", "10.96.0.11", "<none>", "80:30080/TCP", "5m", "<none>"],
            id="nodeport",
        ),
        pytest.param(
            {"type": "LoadBalancer", "clusterIP": "10.96.0.12", "ports": [{"port": 443}]},
            {},
            ["svc", "LoadBalancer", "10.96.0.12", "<pending>", "443/TCP", "5m", "<none>"],
            id="lb-pending",
        ),
        pytest.param(
            {"type": "ExternalName", "externalName": "db.example.com"},
            {},
            ["svc", "ExternalName", "<none>", "db.example.com", "<none>", "5m", "<none>"],
            id="external-name",
        ),
    ],
)
def test_service(spec: dict[str, Any], status: dict[str, Any], cells: list[Any]) -> None:
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": meta("svc"), "spec": spec, "status": status}
    table = tables.to_table("Service", [svc], now=NOW)
    assert names(table) == ["Name", "Type", "Cluster-IP", "External-IP", "Port(s)", "Age", "Selector"]
    assert table["rows"][0]["cells"] == cells


@pytest.mark.parametrize(
    ("obj", "columns", "cells"),
    [
        pytest.param(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": meta("c"),
                "data": {"a": "1"},
                "binaryData": {"b": "AA=="},
            },
            ["Name", "Data", "Age"],
            ["c", 2, "5m"],
            id="configmap",
        ),
        pytest.param(
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": meta("s"),
                "type": "kubernetes.io/tls",
                "data": {"tls.crt": "", "tls.key": ""},
            },
            ["Name", "Type", "Data", "Age"],
            ["s", "kubernetes.io/tls", 2, "5m"],
            id="secret",
        ),
        pytest.param(
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta("default")},
            ["Name", "Secrets", "Age"],
            ["default", 0, "5m"],
            id="serviceaccount",
        ),
        pytest.param(
            {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": meta("l"),
                "spec": {"holderIdentity": "sched-1"},
            },
            ["Name", "Holder", "Age"],
            ["l", "sched-1", "5m"],
            id="lease",
        ),
        pytest.param(
            {
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "CustomResourceDefinition",
                "metadata": {"name": "widgets.example.com", "creationTimestamp": "2026-01-02T03:04:05Z"},
            },
            ["Name", "Created At"],
            ["widgets.example.com", "2026-01-02T03:04:05Z"],
            id="crd",
        ),
        pytest.param(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding",
                "metadata": meta("rb"),
                "roleRef": {"kind": "Role", "name": "r"},
                "subjects": [
                    {"kind": "User", "name": "bob"},
                    {"kind": "ServiceAccount", "name": "sa", "namespace": "ns"},
                ],
            },
            ["Name", "Role", "Age", "Users", "Groups", "ServiceAccounts"],
            ["rb", "Role/r", "5m", "bob", "", "ns/sa"],
            id="rolebinding",
        ),
        pytest.param(
            {"apiVersion": "v1", "kind": "PodTemplate", "metadata": meta("pt")},
            ["Name", "Age"],
            ["pt", "5m"],
            id="generic-fallback",
        ),
    ],
)
def test_simple_kinds(obj: dict[str, Any], columns: list[str], cells: list[Any]) -> None:
    table = tables.to_table(obj["kind"], [obj], now=NOW)
    assert names(table) == columns
    assert table["rows"][0]["cells"] == cells


def test_events_core_and_events_api() -> None:
    core = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": meta("web.1"),
        "type": "Normal",
        "reason": "Scheduled",
        "involvedObject": {"kind": "Pod", "name": "web", "fieldPath": "spec.containers{a}"},
        "source": {"component": "default-scheduler"},
        "message": " Assigned ",
        "count": 3,
        "firstTimestamp": ago(minutes=10),
        "lastTimestamp": ago(seconds=30),
    }
    table = tables.to_table("Event", [core], now=NOW)
    assert names(table) == [
        "Last Seen",
        "Type",
        "Reason",
        "Object",
        "Subobject",
        "Source",
        "Message",
        "First Seen",
        "Count",
        "Name",
    ]
    assert table["rows"][0]["cells"] == [
        "30s",
        "Normal",
        "Scheduled",
        "pod/web",
        "spec.containers{a}",
        "default-scheduler",
        "Assigned",
        "10m",
        3,
        "web.1",
    ]
    new = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": meta("e"),
        "type": "Warning",
        "reason": "Failed",
        "regarding": {"kind": "Job", "name": "j"},
        "note": "boom",
        "eventTime": "2026-01-10T11:59:00.000000Z",
        "reportingController": "berth",
        "reportingInstance": "c1",
    }
    cells = tables.to_table("Event", [new], now=NOW)["rows"][0]["cells"]
    assert cells == ["60s", "Warning", "Failed", "job/j", "", "berth, c1", "boom", "60s", 1, "e"]


WIDGET_COLUMNS = [
    {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
    {"name": "Ready", "type": "string", "jsonPath": '.status.conditions[?(@.type=="Ready")].status'},
    {"name": "First", "type": "string", "jsonPath": ".spec.items[0].name", "priority": 1},
    {"name": "Dotted", "type": "string", "jsonPath": ".metadata.labels['example.com/tier']"},
    {"name": "Flag", "type": "boolean", "jsonPath": ".spec.flag"},
    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
]


def test_custom_resource_printer_columns() -> None:
    widget = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": meta("w", labels={"example.com/tier": "gold"}),
        "spec": {"size": 3, "items": [{"name": "first"}, {"name": "second"}], "flag": False},
        "status": {
            "conditions": [{"type": "Synced", "status": "False"}, {"type": "Ready", "status": "True"}]
        },
    }
    table = tables.to_table("Widget", [widget], now=NOW, printer_columns=WIDGET_COLUMNS)
    assert names(table) == ["Name", "Size", "Ready", "First", "Dotted", "Flag", "Age"]
    assert [c["priority"] for c in table["columnDefinitions"]] == [0, 0, 0, 1, 0, 0, 0]
    assert table["rows"][0]["cells"] == ["w", 3, "True", "first", "gold", False, "5m"]
    missing = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": meta("m")}
    assert tables.to_table("Widget", [missing], now=NOW, printer_columns=WIDGET_COLUMNS)["rows"][0][
        "cells"
    ] == ["m", None, None, None, None, None, "5m"]


def test_custom_resource_without_columns_gets_age() -> None:
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": meta("w")}
    table = tables.to_table("Widget", [widget], now=NOW, printer_columns=[])
    assert names(table) == ["Name", "Age"]
    assert table["rows"][0]["cells"] == ["w", "5m"]


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        (".a.b", [1]),
        (".list[1].x", ["y"]),
        (".list[*].x", ["x", "y"]),
        ("{.a.b}", [1]),
        (".missing.b", []),
        (".list[5]", []),
        ('.list[?(@.x=="y")].n', [2]),
        (".a['b']", [1]),
    ],
    ids=["fields", "index", "star", "braces", "missing", "out-of-range", "filter", "quoted"],
)
def test_json_path(expression: str, expected: list[Any]) -> None:
    doc = {"a": {"b": 1}, "list": [{"x": "x", "n": 1}, {"x": "y", "n": 2}]}
    assert tables.json_path(doc, expression) == expected


@pytest.mark.parametrize(
    ("selector", "text"),
    [
        ({"matchLabels": {"b": "2", "a": "1"}}, "a=1,b=2"),
        (
            {
                "matchExpressions": [
                    {"key": "t", "operator": "In", "values": ["y", "x"]},
                    {"key": "e", "operator": "Exists"},
                ]
            },
            "e,t in (x,y)",
        ),
        ({}, "<none>"),
        (None, "<none>"),
    ],
    ids=["labels", "expressions", "empty", "nil"],
)
def test_selector_string(selector: dict[str, Any] | None, text: str) -> None:
    assert tables.selector_string(selector) == text


def test_unknown_age_and_python_timestamps() -> None:
    assert tables.age(None, NOW) == "<unknown>"
    assert tables.age("2026-01-10T11:59:30.849118+00:00", NOW) == "29s"


@pytest.mark.parametrize(
    ("obj", "columns", "cells"),
    [
        pytest.param(
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": meta("pdb"),
                "spec": {"minAvailable": 1},
                "status": {"disruptionsAllowed": 2},
            },
            ["Name", "Min Available", "Max Unavailable", "Allowed Disruptions", "Age"],
            ["pdb", "1", "N/A", 2, "5m"],
            id="pdb",
        ),
        pytest.param(
            {
                "apiVersion": "networking.k8s.io/v1",
                "kind": "Ingress",
                "metadata": meta("ing"),
                "spec": {"ingressClassName": "nginx", "rules": [{"host": "a.com"}, {}], "tls": [{}]},
                "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}},
            },
            ["Name", "Class", "Hosts", "Address", "Ports", "Age"],
            ["ing", "nginx", "a.com,*", "1.2.3.4", "80, 443", "5m"],
            id="ingress",
        ),
        pytest.param(
            {
                "apiVersion": "networking.k8s.io/v1",
                "kind": "NetworkPolicy",
                "metadata": meta("np"),
                "spec": {"podSelector": {"matchLabels": {"app": "db"}}},
            },
            ["Name", "Pod-Selector", "Age"],
            ["np", "app=db", "5m"],
            id="networkpolicy",
        ),
        pytest.param(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": meta("data"),
                "spec": {"volumeName": "pv-1", "storageClassName": "standard"},
                "status": {
                    "phase": "Bound",
                    "capacity": {"storage": "1Gi"},
                    "accessModes": ["ReadWriteOnce"],
                },
            },
            [
                "Name",
                "Status",
                "Volume",
                "Capacity",
                "Access Modes",
                "StorageClass",
                "VolumeAttributesClass",
                "Age",
                "VolumeMode",
            ],
            ["data", "Bound", "pv-1", "1Gi", "RWO", "standard", "<unset>", "5m", "Filesystem"],
            id="pvc",
        ),
        pytest.param(
            {
                "apiVersion": "storage.k8s.io/v1",
                "kind": "StorageClass",
                "metadata": meta(
                    "standard", annotations={"storageclass.kubernetes.io/is-default-class": "true"}
                ),
                "provisioner": "berth.dev/fake",
            },
            ["Name", "Provisioner", "ReclaimPolicy", "VolumeBindingMode", "AllowVolumeExpansion", "Age"],
            ["standard (default)", "berth.dev/fake", "Delete", "Immediate", False, "5m"],
            id="storageclass",
        ),
        pytest.param(
            {
                "apiVersion": "v1",
                "kind": "Endpoints",
                "metadata": meta("svc"),
                "subsets": [
                    {"addresses": [{"ip": f"10.0.0.{i}"} for i in range(5)], "ports": [{"port": 80}]}
                ],
            },
            ["Name", "Endpoints", "Age"],
            ["svc", "10.0.0.0:80,10.0.0.1:80,10.0.0.2:80 + 2 more...", "5m"],
            id="endpoints",
        ),
        pytest.param(
            {
                "apiVersion": "apps/v1",
                "kind": "ControllerRevision",
                "revision": 3,
                "metadata": meta(
                    "web-7d9",
                    ownerReferences=[
                        {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "controller": True}
                    ],
                ),
            },
            ["Name", "Controller", "Revision", "Age"],
            ["web-7d9", "statefulset.apps/web", 3, "5m"],
            id="controllerrevision",
        ),
        pytest.param(
            {
                "apiVersion": "admissionregistration.k8s.io/v1",
                "kind": "ValidatingWebhookConfiguration",
                "metadata": meta("vw"),
                "webhooks": [{"name": "a"}, {"name": "b"}],
            },
            ["Name", "Webhooks", "Age"],
            ["vw", 2, "5m"],
            id="webhooks",
        ),
        pytest.param(
            {
                "apiVersion": "autoscaling/v2",
                "kind": "HorizontalPodAutoscaler",
                "metadata": meta("hpa"),
                "spec": {
                    "scaleTargetRef": {"kind": "Deployment", "name": "web"},
                    "minReplicas": 1,
                    "maxReplicas": 5,
                    "metrics": [
                        {
                            "type": "Resource",
                            "resource": {
                                "name": "cpu",
                                "target": {"type": "Utilization", "averageUtilization": 80},
                            },
                        }
                    ],
                },
                "status": {"currentReplicas": 2},
            },
            ["Name", "Reference", "Targets", "MinPods", "MaxPods", "Replicas", "Age"],
            ["hpa", "Deployment/web", "cpu: <unknown>/80%", 1, 5, 2, "5m"],
            id="hpa",
        ),
    ],
)
def test_more_kinds(obj: dict[str, Any], columns: list[str], cells: list[Any]) -> None:
    table = tables.to_table(obj["kind"], [obj], now=NOW)
    assert names(table) == columns
    assert table["rows"][0]["cells"] == cells


def test_every_printer_has_one_cell_per_column() -> None:
    for (group, kind), printer in tables.PRINTERS.items():
        api_version = f"{group}/v1" if group else "v1"
        cells = printer.cells({"apiVersion": api_version, "kind": kind, "metadata": meta("x")}, NOW)
        assert len(cells) == len(printer.columns), (group, kind)


@pytest.mark.parametrize(
    ("obj", "cells"),
    [
        pytest.param(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolume",
                "metadata": meta("pv-1"),
                "spec": {
                    "capacity": {"storage": "5Gi"},
                    "accessModes": ["ReadWriteOnce", "ReadOnlyMany"],
                    "persistentVolumeReclaimPolicy": "Retain",
                    "storageClassName": "standard",
                    "claimRef": {"namespace": "ns", "name": "data"},
                },
                "status": {"phase": "Bound"},
            },
            [
                "pv-1",
                "5Gi",
                "RWO,ROX",
                "Retain",
                "Bound",
                "ns/data",
                "standard",
                "<unset>",
                "",
                "5m",
                "Filesystem",
            ],
            id="pv",
        ),
        pytest.param(
            {
                "apiVersion": "discovery.k8s.io/v1",
                "kind": "EndpointSlice",
                "metadata": meta("es"),
                "addressType": "IPv4",
                "ports": [{"port": 80}],
                "endpoints": [{"addresses": [f"10.0.0.{i}"]} for i in range(4)],
            },
            ["es", "IPv4", "80", "10.0.0.0,10.0.0.1,10.0.0.2 + 1 more...", "5m"],
            id="endpointslice",
        ),
        pytest.param(
            {
                "apiVersion": "networking.k8s.io/v1",
                "kind": "IngressClass",
                "metadata": meta("nginx"),
                "spec": {"controller": "k8s.io/ingress-nginx"},
            },
            ["nginx", "k8s.io/ingress-nginx", "<none>", "5m"],
            id="ingressclass",
        ),
        pytest.param(
            {
                "apiVersion": "v1",
                "kind": "ResourceQuota",
                "metadata": meta("q"),
                "status": {
                    "hard": {"pods": "10", "limits.cpu": "2", "requests.cpu": "1"},
                    "used": {"pods": "3"},
                },
            },
            ["q", "5m", "pods: 3/10, requests.cpu: 0/1", "limits.cpu: 0/2"],
            id="resourcequota",
        ),
        pytest.param(
            {
                "apiVersion": "v1",
                "kind": "LimitRange",
                "metadata": {"name": "lr", "creationTimestamp": "2026-01-02T03:04:05Z"},
            },
            ["lr", "2026-01-02T03:04:05Z"],
            id="limitrange",
        ),
        pytest.param(
            {
                "apiVersion": "node.k8s.io/v1",
                "kind": "RuntimeClass",
                "metadata": meta("gvisor"),
                "handler": "runsc",
            },
            ["gvisor", "runsc", "5m"],
            id="runtimeclass",
        ),
    ],
)
def test_storage_and_cluster_kinds(obj: dict[str, Any], cells: list[Any]) -> None:
    assert tables.to_table(obj["kind"], [obj], now=NOW)["rows"][0]["cells"] == cells
