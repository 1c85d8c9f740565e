"""Patch engines and field ownership: what `kubectl patch`, `kubectl apply` (both sides) and Helm rely on."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from berth.cluster import errors, patch, schema

T0 = "2026-01-01T00:00:00Z"
T1 = "2026-01-01T00:01:00Z"


def cm(data: dict[str, str] | None = None, **meta: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", **meta}}
    if data is not None:
        obj["data"] = data
    return obj


def deployment(containers: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": containers}},
            **spec,
        },
    }


def containers_of(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return list(obj["spec"]["template"]["spec"]["containers"])


# ---------------------------------------------------------------------------------------------------------------
# JSON patch
# ---------------------------------------------------------------------------------------------------------------

DOC = {"a": {"b": 1, "c": [1, 2, 3]}, "d": "x"}


@pytest.mark.parametrize(
    ("ops", "expected"),
    [
        pytest.param(
            [{"op": "add", "path": "/a/e", "value": 5}],
            {"a": {"b": 1, "c": [1, 2, 3], "e": 5}, "d": "x"},
            id="add-key",
        ),
        pytest.param(
            [{"op": "add", "path": "/a/c/1", "value": 9}],
            {"a": {"b": 1, "c": [1, 9, 2, 3]}, "d": "x"},
            id="add-insert-index",
        ),
        pytest.param(
            [{"op": "add", "path": "/a/c/-", "value": 4}],
            {"a": {"b": 1, "c": [1, 2, 3, 4]}, "d": "x"},
            id="add-append",
        ),
        pytest.param([{"op": "remove", "path": "/a/b"}], {"a": {"c": [1, 2, 3]}, "d": "x"}, id="remove-key"),
        pytest.param(
            [{"op": "remove", "path": "/a/c/0"}], {"a": {"b": 1, "c": [2, 3]}, "d": "x"}, id="remove-index"
        ),
        pytest.param(
            [{"op": "replace", "path": "/d", "value": "y"}],
            {"a": {"b": 1, "c": [1, 2, 3]}, "d": "y"},
            id="replace",
        ),
        pytest.param(
            [{"op": "move", "from": "/d", "path": "/a/d"}],
            {"a": {"b": 1, "c": [1, 2, 3], "d": "x"}},
            id="move",
        ),
        pytest.param(
            [{"op": "copy", "from": "/a/b", "path": "/z"}],
            {"a": {"b": 1, "c": [1, 2, 3]}, "d": "x", "z": 1},
            id="copy",
        ),
        pytest.param(
            [{"op": "test", "path": "/a/b", "value": 1}, {"op": "remove", "path": "/d"}],
            {"a": {"b": 1, "c": [1, 2, 3]}},
            id="test-then-remove",
        ),
        pytest.param(
            [{"op": "add", "path": "/a~1b", "value": 1}],
            {"a": {"b": 1, "c": [1, 2, 3]}, "d": "x", "a/b": 1},
            id="escaped-slash",
        ),
        pytest.param(
            [{"op": "replace", "path": "", "value": {"new": True}}], {"new": True}, id="replace-root"
        ),
    ],
)
def test_json_patch_applies(ops: list[dict[str, Any]], expected: dict[str, Any]) -> None:
    before = copy.deepcopy(DOC)
    assert patch.json_patch(DOC, ops) == expected
    assert before == DOC  # input untouched


@pytest.mark.parametrize(
    ("ops", "cause"),
    [
        pytest.param(
            [{"op": "test", "path": "/a/b", "value": 2}],
            "testing value /a/b failed: test failed",
            id="failed-test",
        ),
        pytest.param(
            [{"op": "test", "path": "/a/b", "value": True}],
            "testing value /a/b failed: test failed",
            id="test-bool-is-not-int",
        ),
        pytest.param(
            [{"op": "remove", "path": "/nope"}],
            'remove operation does not apply: doc is missing path: "/nope": missing value',
            id="remove-missing",
        ),
        pytest.param(
            [{"op": "replace", "path": "/nope", "value": 1}],
            "replace operation does not apply: doc is missing key: /nope: missing value",
            id="replace-missing",
        ),
        pytest.param(
            [{"op": "add", "path": "/a/c/7", "value": 1}],
            'array index 7 out of bounds in path "/a/c/7"',
            id="index-out-of-range",
        ),
        pytest.param(
            [{"op": "add", "path": "/x/y", "value": 1}],
            'add operation does not apply: doc is missing path: "/x/y": missing value',
            id="missing-parent",
        ),
        pytest.param([{"op": "frobnicate", "path": "/a"}], "Unexpected kind: frobnicate", id="unknown-op"),
    ],
)
def test_json_patch_failures_are_422(ops: list[dict[str, Any]], cause: str) -> None:
    with pytest.raises(errors.ApiError) as exc:
        patch.json_patch(DOC, ops)
    assert exc.value.code == 422 and exc.value.reason == "Invalid"
    assert exc.value.causes == [{"message": cause}]


@pytest.mark.parametrize("body", [{"op": "add"}, "nope", [1]], ids=["object", "string", "list-of-numbers"])
def test_json_patch_that_is_not_a_list_of_ops_is_400(body: Any) -> None:
    with pytest.raises(errors.ApiError) as exc:
        patch.json_patch(DOC, body)
    assert exc.value.code == 400


# ---------------------------------------------------------------------------------------------------------------
# Merge patch
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "body", "expected"),
    [  # RFC 7386 appendix A, selected
        ({"a": "b"}, {"a": "c"}, {"a": "c"}),
        ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
        ({"a": "b"}, {"a": None}, {}),
        ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
        ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
        (["a", "b"], {"a": "c"}, {"a": "c"}),
        ({"a": "foo"}, None, None),
        ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
    ],
    ids=[
        "replace",
        "add",
        "delete",
        "list-replaces",
        "nested",
        "non-object-target",
        "null-patch",
        "nested-null",
    ],
)
def test_merge_patch(target: Any, body: Any, expected: Any) -> None:
    assert patch.merge_patch(target, body) == expected


# ---------------------------------------------------------------------------------------------------------------
# Strategic merge patch
# ---------------------------------------------------------------------------------------------------------------

NGINX = {"name": "nginx", "image": "nginx:1", "env": [{"name": "A", "value": "1"}], "args": ["-a", "-b"]}
SIDE = {"name": "side", "image": "busybox"}


@pytest.mark.parametrize(
    ("body", "expected_containers"),
    [
        pytest.param(
            {"spec": {"template": {"spec": {"containers": [{"name": "nginx", "image": "nginx:2"}]}}}},
            [{**NGINX, "image": "nginx:2"}, SIDE],
            id="merge-by-name",
        ),
        pytest.param(
            {"spec": {"template": {"spec": {"containers": [{"name": "new", "image": "x"}]}}}},
            [NGINX, SIDE, {"name": "new", "image": "x"}],
            id="append-new-key",
        ),
        pytest.param(
            {"spec": {"template": {"spec": {"containers": [{"name": "side", "$patch": "delete"}]}}}},
            [NGINX],
            id="delete-directive",
        ),
        pytest.param(
            {
                "spec": {
                    "template": {
                        "spec": {"containers": [{"name": "solo", "image": "s"}, {"$patch": "replace"}]}
                    }
                }
            },
            [{"name": "solo", "image": "s"}],
            id="replace-list-directive",
        ),
        pytest.param(
            {
                "spec": {
                    "template": {
                        "spec": {"containers": [{"name": "nginx", "env": [{"name": "B", "value": "2"}]}]}
                    }
                }
            },
            [{**NGINX, "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]}, SIDE],
            id="nested-env-merge",
        ),
        pytest.param(
            {"spec": {"template": {"spec": {"containers": [{"name": "nginx", "args": ["-z"]}]}}}},
            [{**NGINX, "args": ["-z"]}, SIDE],
            id="atomic-args-replace",
        ),
        pytest.param(
            {"spec": {"template": {"spec": {"containers": [{"name": "nginx", "image": None}]}}}},
            [{k: v for k, v in NGINX.items() if k != "image"}, SIDE],
            id="null-deletes-field",
        ),
        pytest.param(
            {
                "spec": {
                    "template": {
                        "spec": {
                            "$setElementOrder/containers": [{"name": "side"}, {"name": "nginx"}],
                            "containers": [{"name": "nginx", "image": "nginx:3"}],
                        }
                    }
                }
            },
            [SIDE, {**NGINX, "image": "nginx:3"}],
            id="set-element-order",
        ),
    ],
)
def test_strategic_merge_containers(body: dict[str, Any], expected_containers: list[dict[str, Any]]) -> None:
    live = deployment([NGINX, SIDE])
    out = patch.strategic_merge_patch(live, body)
    assert containers_of(out) == expected_containers
    assert containers_of(live) == [NGINX, SIDE]


@pytest.mark.parametrize(
    ("live_spec", "body", "expected_spec"),
    [
        pytest.param(
            {"finalizers": ["a", "b"]},
            {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}},
            {"finalizers": ["b"]},
            id="delete-from-primitive-list",
        ),
        pytest.param(
            {"finalizers": ["a"]},
            {"metadata": {"finalizers": ["b", "a"]}},
            {"finalizers": ["a", "b"]},
            id="primitive-merge-list-union",
        ),
        pytest.param(
            {"labels": {"a": "1", "b": "2"}},
            {"metadata": {"labels": {"$patch": "replace", "c": "3"}}},
            {"labels": {"c": "3"}},
            id="replace-map",
        ),
        pytest.param(
            {"labels": {"a": "1"}}, {"metadata": {"labels": {"$patch": "delete"}}}, {}, id="delete-map"
        ),
    ],
)
def test_strategic_merge_metadata(
    live_spec: dict[str, Any], body: dict[str, Any], expected_spec: dict[str, Any]
) -> None:
    live = cm({"k": "v"})
    live["metadata"].update(live_spec)
    out = patch.strategic_merge_patch(live, body)
    assert {k: v for k, v in out["metadata"].items() if k != "name"} == expected_spec


def test_strategic_merge_ports_merge_by_container_port() -> None:
    live = deployment([{"name": "c", "image": "i", "ports": [{"containerPort": 80, "name": "http"}]}])
    body = {
        "spec": {
            "template": {
                "spec": {
                    "containers": [
                        {
                            "name": "c",
                            "ports": [{"containerPort": 80, "hostPort": 8080}, {"containerPort": 443}],
                        }
                    ]
                }
            }
        }
    }
    out = patch.strategic_merge_patch(live, body)
    assert containers_of(out)[0]["ports"] == [
        {"containerPort": 80, "name": "http", "hostPort": 8080},
        {"containerPort": 443},
    ]


def test_strategic_merge_tolerations_are_replaced() -> None:
    live = deployment([NGINX])
    live["spec"]["template"]["spec"]["tolerations"] = [{"key": "a", "operator": "Exists"}]
    body = {"spec": {"template": {"spec": {"tolerations": [{"key": "b", "operator": "Exists"}]}}}}
    out = patch.strategic_merge_patch(live, body)
    assert out["spec"]["template"]["spec"]["tolerations"] == [{"key": "b", "operator": "Exists"}]


def test_strategic_merge_retain_keys_clears_other_strategy_fields() -> None:
    live = deployment([NGINX], strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}})
    body = {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}
    out = patch.strategic_merge_patch(live, body)
    assert out["spec"]["strategy"] == {"type": "Recreate"}


def test_strategic_merge_conditions_by_type() -> None:
    live = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [NGINX]},
        "status": {
            "conditions": [{"type": "Ready", "status": "False"}, {"type": "PodScheduled", "status": "True"}]
        },
    }
    out = patch.strategic_merge_patch(live, {"status": {"conditions": [{"type": "Ready", "status": "True"}]}})
    assert out["status"]["conditions"] == [
        {"type": "Ready", "status": "True"},
        {"type": "PodScheduled", "status": "True"},
    ]


@pytest.mark.parametrize(
    ("obj", "body", "code"),
    [
        pytest.param(
            {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}},
            {"spec": {}},
            415,
            id="custom-resource",
        ),
        pytest.param(cm(), ["not", "a", "map"], 400, id="not-an-object"),
        pytest.param(
            deployment([NGINX]),
            {"spec": {"template": {"spec": {"containers": [{"image": "x"}]}}}},
            400,
            id="item-without-merge-key",
        ),
        pytest.param(cm(), {"$patch": "explode"}, 400, id="unknown-directive"),
    ],
)
def test_strategic_merge_errors(obj: dict[str, Any], body: Any, code: int) -> None:
    with pytest.raises(errors.ApiError) as exc:
        patch.strategic_merge_patch(obj, body)
    assert exc.value.code == code


# ---------------------------------------------------------------------------------------------------------------
# Field sets
# ---------------------------------------------------------------------------------------------------------------


def test_field_set_encoding_round_trips() -> None:
    obj = deployment([{"name": "c", "image": "i", "ports": [{"containerPort": 80}]}], replicas=2)
    fields = patch.field_set(obj)
    encoded = patch.encode_fields(fields)
    assert encoded == {
        "f:spec": {
            "f:replicas": {},
            "f:selector": {},
            "f:template": {
                "f:metadata": {"f:labels": {"f:app": {}}},
                "f:spec": {
                    "f:containers": {
                        'k:{"name":"c"}': {
                            ".": {},
                            "f:image": {},
                            "f:name": {},
                            "f:ports": {
                                'k:{"containerPort":80,"protocol":"TCP"}': {".": {}, "f:containerPort": {}}
                            },
                        }
                    }
                },
            },
        }
    }
    assert patch.decode_fields(encoded) == fields


@pytest.mark.parametrize(
    ("path", "text"),
    [
        (("f:data", "f:a"), ".data.a"),
        (("f:spec", 'k:{"name":"web"}', "f:image"), '.spec[name="web"].image'),
        (("f:metadata", "f:finalizers", 'v:"x"'), '.metadata.finalizers[="x"]'),
        (("f:ports", 'k:{"protocol":"TCP","containerPort":80}'), '.ports[containerPort=80,protocol="TCP"]'),
        (("f:args", "i:0"), ".args[0]"),
    ],
    ids=["fields", "keyed", "set-value", "multi-key-sorted", "index"],
)
def test_path_string(path: tuple[str, ...], text: str) -> None:
    assert patch.path_string(path) == text


# ---------------------------------------------------------------------------------------------------------------
# Managed fields: Update and Apply
# ---------------------------------------------------------------------------------------------------------------


def managers(obj: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(e["manager"], e["operation"]): e["fieldsV1"] for e in obj["metadata"].get("managedFields", [])}


def test_create_records_update_entry() -> None:
    out = patch.record_update(None, cm({"a": "1"}), "kubectl-create", now=T0)
    assert out["metadata"]["managedFields"] == [
        {
            "manager": "kubectl-create",
            "operation": "Update",
            "apiVersion": "v1",
            "time": T0,
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:data": {".": {}, "f:a": {}}},
        }
    ]


POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "p",
        "namespace": "default",
        "labels": {"app": "web", "empty": ""},
        "annotations": {},
        "finalizers": ["a/b", "a/b"],
        "ownerReferences": [{"apiVersion": "v1", "kind": "X", "name": "o", "uid": "u1"}],
        "uid": "123",
        "resourceVersion": "9",
        "creationTimestamp": None,
    },
    "spec": {
        "containers": [
            {
                "name": "main",
                "image": "pause",
                "env": [
                    {"name": "A", "value": "1"},
                    {"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "x"}}},
                ],
                "ports": [{"containerPort": 80}, {"containerPort": 80, "protocol": "TCP", "name": "http"}],
                "resources": {"requests": {"cpu": "100m"}, "limits": {}},
                "securityContext": None,
            },
            {"name": "side", "image": "busybox", "args": ["a", "a"]},
        ],
        "nodeSelector": {"zone": "a"},
        "tolerations": [{"key": "k", "operator": "Exists"}],
    },
    "status": {"phase": "Pending", "conditions": [{"type": "Ready", "status": "False"}]},
}

SERVICE = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": {"name": "s"},
    "spec": {
        "ports": [{"port": 80}, {"port": 80, "protocol": "UDP"}],
        "selector": {"a": "b"},
        "clusterIP": "1.2.3.4",
    },
}


@pytest.mark.parametrize(
    ("obj", "status_subresource"),
    [
        (cm({"a": "1"}), True),
        (cm({}, labels={"x": "y"}), True),
        (cm(None), True),
        (POD, True),
        (POD, False),
        (SERVICE, True),
        (
            deployment(
                [{"name": "a", "image": "x"}, {"name": "a", "image": "y", "ports": [{"containerPort": 1}]}]
            ),
            True,
        ),
        (
            {
                "apiVersion": "example.com/v1",
                "kind": "Thing",
                "metadata": {"name": "t"},
                "spec": {"x": [1, {"a": None}]},
            },
            True,
        ),
    ],
    ids=[
        "configmap",
        "configmap-empty-data",
        "configmap-no-data",
        "pod",
        "pod-owns-status",
        "service",
        "deployment-dup-keys",
        "custom",
    ],
)
def test_create_fast_path_records_what_the_general_path_does(
    obj: dict[str, Any], status_subresource: bool
) -> None:
    # record_update(None, ...) takes the one-walk create path; an empty old object takes the general diff path.
    fast = patch.record_update(
        None, copy.deepcopy(obj), "creator", now=T0, status_subresource=status_subresource
    )
    general = patch.record_update(
        {}, copy.deepcopy(obj), "creator", now=T0, status_subresource=status_subresource
    )
    assert fast == general


def test_update_moves_changed_fields_and_keeps_others() -> None:
    created = patch.record_update(None, cm({"a": "1", "b": "1"}), "creator", now=T0)
    patched = patch.record_update(
        created, patch.merge_patch(created, {"data": {"a": "2"}}), "kubectl-patch", now=T1
    )
    assert managers(patched) == {
        ("creator", "Update"): {"f:data": {".": {}, "f:b": {}}},
        ("kubectl-patch", "Update"): {"f:data": {"f:a": {}}},
    }


def test_update_that_removes_fields_takes_them_from_everyone() -> None:
    created = patch.record_update(None, cm({"a": "1", "b": "1"}), "creator", now=T0)
    patched = patch.record_update(
        created, patch.merge_patch(created, {"data": {"a": None}}), "kubectl-patch", now=T1
    )
    assert managers(patched) == {("creator", "Update"): {"f:data": {".": {}, "f:b": {}}}}


def test_update_honours_client_supplied_managed_fields_and_reset() -> None:
    created = patch.record_update(None, cm({"a": "1"}), "creator", now=T0)
    cleared = copy.deepcopy(created)
    cleared["metadata"]["managedFields"] = [{}]
    assert "managedFields" not in patch.record_update(created, cleared, "x", now=T1)["metadata"]
    rewritten = copy.deepcopy(created)
    rewritten["metadata"]["managedFields"][0]["manager"] = "renamed"
    assert ("renamed", "Update") in managers(patch.record_update(created, rewritten, "x", now=T1))


def test_apply_creates_and_owns_applied_fields() -> None:
    out = patch.server_side_apply(None, cm({"a": "1"}), "kubectl", now=T0)
    assert out["data"] == {"a": "1"}
    assert out["metadata"]["managedFields"] == [
        {
            "manager": "kubectl",
            "operation": "Apply",
            "apiVersion": "v1",
            "time": T0,
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:data": {"f:a": {}}},
        }
    ]


def test_patch_then_apply_conflicts_like_a_real_cluster() -> None:
    live = patch.server_side_apply(None, cm({"a": "1"}), "kubectl", now=T0)
    live = patch.record_update(live, patch.merge_patch(live, {"data": {"a": "2"}}), "kubectl-patch", now=T1)
    with pytest.raises(errors.ApiError) as exc:
        patch.server_side_apply(live, cm({"a": "3"}), "kubectl", now=T1)
    status = exc.value.status()
    assert status["code"] == 409 and status["reason"] == "Conflict"
    assert (
        status["message"] == 'Apply failed with 1 conflict: conflict with "kubectl-patch" using v1: .data.a'
    )
    assert status["details"]["causes"] == [
        {
            "reason": "FieldManagerConflict",
            "message": 'conflict with "kubectl-patch" using v1',
            "field": ".data.a",
        }
    ]


def test_apply_of_the_same_value_shares_ownership_without_conflict() -> None:
    live = patch.record_update(None, cm({"a": "1"}), "kubectl-create", now=T0)
    out = patch.server_side_apply(live, cm({"a": "1"}), "kubectl", now=T1)
    assert managers(out) == {
        ("kubectl", "Apply"): {"f:data": {"f:a": {}}},
        ("kubectl-create", "Update"): {"f:data": {".": {}, "f:a": {}}},
    }


def test_force_moves_ownership() -> None:
    live = patch.record_update(None, cm({"a": "1", "b": "1"}), "other", now=T0)
    out = patch.server_side_apply(live, cm({"a": "2"}), "kubectl", now=T1, force=True)
    assert out["data"] == {"a": "2", "b": "1"}
    assert managers(out) == {
        ("kubectl", "Apply"): {"f:data": {"f:a": {}}},
        ("other", "Update"): {"f:data": {".": {}, "f:b": {}}},
    }


def test_several_conflicts_are_grouped_by_manager() -> None:
    live = patch.record_update(None, cm({"a": "1", "b": "1"}), "m1", now=T0)
    live = patch.server_side_apply(live, cm({"c": "1"}), "m2", now=T0)
    with pytest.raises(errors.ApiError) as exc:
        patch.server_side_apply(live, cm({"a": "2", "b": "2", "c": "2"}), "kubectl", now=T1)
    assert exc.value.message == (
        'Apply failed with 3 conflicts: conflicts with "m1" using v1:\n- .data.a\n- .data.b\n'
        'conflicts with "m2":\n- .data.c'
    )
    assert [c["field"] for c in exc.value.causes] == [".data.a", ".data.b", ".data.c"]


def test_apply_removes_fields_it_no_longer_applies_unless_others_own_them() -> None:
    live = patch.server_side_apply(None, cm({"a": "1", "b": "1", "c": "1"}), "kubectl", now=T0)
    live = patch.server_side_apply(live, cm({"c": "1"}), "helm", now=T0)
    out = patch.server_side_apply(live, cm({"a": "1"}), "kubectl", now=T1)
    assert out["data"] == {"a": "1", "c": "1"}


def test_apply_removes_the_struct_fields_its_dropped_fields_leave_empty() -> None:
    """As upstream's prune (named fields above a dropped field are dropped too): the last annotation takes
    ``metadata.annotations`` with it, and a CR's ``spec.alerting`` goes with ``alerting.alertmanagers`` rather than
    staying as an empty object its schema may refuse; map entries and what another manager owns stay."""
    live = patch.server_side_apply(None, cm({"a": "1"}, annotations={"x": "1"}), "helm", now=T0)
    out = patch.server_side_apply(live, cm(), "helm", now=T1)
    assert "annotations" not in out["metadata"] and "data" not in out
    node = schema.from_openapi(
        {
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "properties": {
                        "alerting": {
                            "type": "object",
                            "required": ["alertmanagers"],
                            "properties": {"alertmanagers": {"type": "array", "items": {"type": "string"}}},
                        },
                        "replicas": {"type": "integer"},
                    },
                }
            },
        }
    )
    prom = {"apiVersion": "example.com/v1", "kind": "Prom", "metadata": {"name": "p"}}
    applied = {**prom, "spec": {"alerting": {"alertmanagers": ["am"]}, "replicas": 1}}
    live = patch.server_side_apply(None, applied, "helm", now=T0, node=node)
    out = patch.server_side_apply(live, {**prom, "spec": {"replicas": 1}}, "helm", now=T1, node=node)
    assert out["spec"] == {"replicas": 1}
    shared = patch.server_side_apply(live, {**prom, "spec": {"alerting": {}}}, "other", now=T1, node=node)
    out = patch.server_side_apply(shared, {**prom, "spec": {"replicas": 1}}, "helm", now=T1, node=node)
    assert out["spec"] == {"alerting": {}, "replicas": 1}  # "other" owns spec.alerting itself


def test_apply_merges_associative_lists_and_keeps_other_items() -> None:
    live = patch.server_side_apply(None, deployment([{"name": "a", "image": "1"}]), "kubectl", now=T0)
    live = patch.record_update(
        live,
        patch.strategic_merge_patch(
            live, {"spec": {"template": {"spec": {"containers": [{"name": "b", "image": "2"}]}}}}
        ),
        "injector",
        now=T0,
    )
    out = patch.server_side_apply(live, deployment([{"name": "a", "image": "3"}]), "kubectl", now=T1)
    assert containers_of(out) == [{"name": "a", "image": "3"}, {"name": "b", "image": "2"}]


def test_apply_keeps_live_identity_metadata() -> None:
    live = patch.record_update(None, cm({"a": "1"}, uid="u1", resourceVersion="7"), "c", now=T0)
    out = patch.server_side_apply(
        live, cm({"a": "1"}, resourceVersion="3", labels={"x": "y"}), "kubectl", now=T1
    )
    assert out["metadata"]["uid"] == "u1" and out["metadata"]["resourceVersion"] == "7"
    assert out["metadata"]["labels"] == {"x": "y"}


def test_status_is_not_owned_through_the_main_endpoint() -> None:
    obj = deployment([NGINX])
    obj["status"] = {"replicas": 1}
    out = patch.record_update(None, obj, "kubectl-create", now=T0)
    assert "f:status" not in managers(out)[("kubectl-create", "Update")]
    status_write = patch.record_update(
        out, {**out, "status": {"replicas": 2}}, "ctrl", now=T1, subresource="status"
    )
    entry = next(e for e in status_write["metadata"]["managedFields"] if e["manager"] == "ctrl")
    assert entry["subresource"] == "status" and entry["fieldsV1"] == {"f:status": {"f:replicas": {}}}


def test_custom_resource_schema_drives_list_merging() -> None:
    node = schema.from_openapi(
        {
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "properties": {
                        "items": {
                            "type": "array",
                            "x-kubernetes-list-type": "map",
                            "x-kubernetes-list-map-keys": ["id"],
                            "items": {
                                "type": "object",
                                "properties": {"id": {"type": "string"}, "v": {"type": "integer"}},
                            },
                        }
                    },
                }
            },
        }
    )
    cr = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w"},
        "spec": {"items": [{"id": "a", "v": 1}]},
    }
    live = patch.record_update(None, cr, "creator", now=T0, node=node)
    applied = {**cr, "spec": {"items": [{"id": "b", "v": 2}]}}
    out = patch.server_side_apply(live, applied, "kubectl", now=T1, node=node)
    assert out["spec"]["items"] == [{"id": "a", "v": 1}, {"id": "b", "v": 2}]


@pytest.mark.parametrize(
    ("applied", "manager", "code"),
    [
        pytest.param(cm({"a": "1"}), "", 422, id="no-field-manager"),
        pytest.param(
            {**cm(), "metadata": {"name": "x", "managedFields": [{"manager": "m"}]}},
            "m",
            400,
            id="managed-fields-in-config",
        ),
        pytest.param(["not-an-object"], "m", 400, id="not-an-object"),
    ],
)
def test_apply_rejects_bad_requests(applied: Any, manager: str, code: int) -> None:
    with pytest.raises(errors.ApiError) as exc:
        patch.server_side_apply(None, applied, manager, now=T0)
    assert exc.value.code == code
    if code == 422:
        assert exc.value.message == (
            'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch'
        )


def test_reapplying_the_same_configuration_is_a_no_op() -> None:
    live = patch.server_side_apply(None, cm({"a": "1"}), "kubectl", now=T0)
    again = patch.server_side_apply(live, cm({"a": "1"}), "kubectl", now=T1)
    assert again == live
    changed = patch.server_side_apply(live, cm({"a": "2"}), "kubectl", now=T1)
    assert changed["metadata"]["managedFields"][0]["time"] == T1


def test_repeating_an_update_keeps_the_entry_time() -> None:
    live = patch.record_update(None, cm({"a": "1"}), "ctrl", now=T0)
    again = patch.record_update(live, copy.deepcopy(live), "ctrl", now=T1)
    assert again["metadata"]["managedFields"] == live["metadata"]["managedFields"]


def test_dropping_a_list_item_others_touched_keeps_it_and_its_key() -> None:
    live = patch.server_side_apply(
        None, deployment([{"name": "a", "image": "1"}, {"name": "b", "image": "2"}]), "kubectl", now=T0
    )
    injected = copy.deepcopy(live)
    injected["spec"]["template"]["spec"]["containers"][1]["env"] = [{"name": "X", "value": "1"}]
    live = patch.record_update(live, injected, "injector", now=T0)
    out = patch.server_side_apply(live, deployment([{"name": "a", "image": "1"}]), "kubectl", now=T1)
    assert containers_of(out) == [
        {"name": "a", "image": "1"},
        {"name": "b", "env": [{"name": "X", "value": "1"}]},
    ]


def test_dropping_a_list_item_nobody_else_owns_removes_it() -> None:
    live = patch.server_side_apply(
        None, deployment([{"name": "a", "image": "1"}, {"name": "b", "image": "2"}]), "kubectl", now=T0
    )
    out = patch.server_side_apply(live, deployment([{"name": "a", "image": "1"}]), "kubectl", now=T1)
    assert containers_of(out) == [{"name": "a", "image": "1"}]


def test_labels_added_by_another_manager_survive_reapply() -> None:
    live = patch.server_side_apply(None, cm({"a": "1"}, labels={"team": "x"}), "kubectl", now=T0)
    labelled = patch.merge_patch(live, {"metadata": {"labels": {"extra": "y"}}})
    live = patch.record_update(live, labelled, "kubectl-label", now=T0)
    out = patch.server_side_apply(live, cm({"a": "1"}), "kubectl", now=T1)
    assert out["metadata"]["labels"] == {"extra": "y"}


# ---------------------------------------------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------------------------------------------


KEYS = st.sampled_from(["a", "b", "c", "d"])
VALUES = st.sampled_from(["1", "2", "3"])
DATA = st.dictionaries(KEYS, VALUES, max_size=4)
CONTAINERS = st.lists(
    st.fixed_dictionaries({"name": st.sampled_from(["x", "y", "z"]), "image": VALUES}),
    max_size=3,
    unique_by=lambda c: c["name"],
)


@settings(max_examples=60, deadline=None)
@given(first=DATA, second=DATA, other=DATA)
def test_apply_config_always_wins_with_force_and_reapply_is_a_no_op(
    first: dict[str, str], second: dict[str, str], other: dict[str, str]
) -> None:
    live = patch.server_side_apply(None, cm(first), "kubectl", now=T0)
    live = patch.record_update(live, patch.merge_patch(live, {"data": other}), "editor", now=T0)
    out = patch.server_side_apply(live, cm(second), "kubectl", now=T1, force=True)
    assert {k: out["data"][k] for k in second} == second
    # an Update owns only what it changed: those keys survive; what only kubectl owned and dropped is gone
    edited = {k for k, v in other.items() if first.get(k) != v}
    for key in set(first) - set(second) - edited:
        assert key not in (out.get("data") or {})
    for key in edited - set(second):
        assert out["data"][key] == other[key]
    assert patch.server_side_apply(out, cm(second), "kubectl", now=T1) == out


@settings(max_examples=60, deadline=None)
@given(first=CONTAINERS, second=CONTAINERS)
def test_apply_keeps_exactly_the_applied_containers_when_alone(
    first: list[dict[str, str]], second: list[dict[str, str]]
) -> None:
    live = patch.server_side_apply(None, deployment(first), "kubectl", now=T0)
    out = patch.server_side_apply(live, deployment(second), "kubectl", now=T1)
    got = out["spec"]["template"]["spec"].get("containers", [])
    assert sorted(got, key=lambda c: c["name"]) == sorted(second, key=lambda c: c["name"])


@settings(max_examples=60, deadline=None)
@given(target=DATA, body=st.dictionaries(KEYS, st.one_of(st.none(), VALUES), max_size=4))
def test_merge_patch_is_idempotent_and_strategic_agrees_on_maps(
    target: dict[str, str], body: dict[str, str | None]
) -> None:
    once = patch.merge_patch(cm(target), {"data": body})
    assert patch.merge_patch(once, {"data": body}) == once
    assert patch.strategic_merge_patch(cm(target), {"data": body}) == once


def test_apply_through_an_endpoint_changes_only_what_it_may() -> None:
    live = deployment([NGINX])
    live["status"] = {"replicas": 1}
    live = patch.record_update(None, live, "creator", now=T0)
    main = deployment([NGINX], replicas=3)
    main["status"] = {"replicas": 99}
    out = patch.server_side_apply(live, main, "kubectl", now=T1)
    assert out["spec"]["replicas"] == 3 and out["status"] == {"replicas": 1}
    status_only = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {"replicas": 7},
        "status": {"replicas": 2},
    }
    out = patch.server_side_apply(out, status_only, "ctrl", now=T1, subresource="status")
    assert out["spec"]["replicas"] == 3 and out["status"] == {"replicas": 2}
    entry = next(e for e in out["metadata"]["managedFields"] if e["manager"] == "ctrl")
    assert entry["subresource"] == "status" and entry["fieldsV1"] == {"f:status": {"f:replicas": {}}}
