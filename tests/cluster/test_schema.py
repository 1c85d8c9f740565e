"""The built-in schema table carries what patching and apply depend on; CRD schemas read the same way."""

from __future__ import annotations

import json

import pytest

from berth.cluster import schema


def pod_spec() -> schema.Node:
    node = schema.for_kind("v1", "Pod")
    assert node is not None
    return node.field("spec")


@pytest.mark.parametrize(
    ("path", "merge_key", "strategies", "list_type", "map_keys"),
    [
        (("containers",), "name", {"merge"}, "map", ("name",)),
        (("initContainers",), "name", {"merge"}, "map", ("name",)),
        (("ephemeralContainers",), "name", {"merge"}, "map", ("name",)),
        (("volumes",), "name", {"merge", "retainKeys"}, "map", ("name",)),
        (("imagePullSecrets",), "name", {"merge"}, "map", ("name",)),
        (("tolerations",), "", set(), "atomic", ()),
        (("containers", "[]", "env"), "name", {"merge"}, "map", ("name",)),
        (("containers", "[]", "ports"), "containerPort", {"merge"}, "map", ("containerPort", "protocol")),
        (("containers", "[]", "volumeMounts"), "mountPath", {"merge"}, "map", ("mountPath",)),
        (("containers", "[]", "args"), "", set(), "atomic", ()),
    ],
    ids=lambda v: (
        "/".join(v) if isinstance(v, tuple) and v and isinstance(v[0], str) and "[]" not in v[0] else None
    ),
)
def test_pod_spec_list_semantics(
    path: tuple[str, ...], merge_key: str, strategies: set[str], list_type: str, map_keys: tuple[str, ...]
) -> None:
    node = pod_spec()
    for step in path:
        node = node.items() if step == "[]" else node.field(step)
    assert node.patch_merge_key == merge_key
    assert set(node.patch_strategies) == strategies
    assert node.list_type == list_type
    assert node.list_map_keys == map_keys


@pytest.mark.parametrize(
    ("api_version", "kind", "definition"),
    [
        ("v1", "Pod", "io.k8s.api.core.v1.Pod"),
        ("apps/v1", "Deployment", "io.k8s.api.apps.v1.Deployment"),
        (
            "apiextensions.k8s.io/v1",
            "CustomResourceDefinition",
            "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition",
        ),
        ("coordination.k8s.io/v1", "Lease", "io.k8s.api.coordination.v1.Lease"),
        ("example.com/v1", "Widget", None),
    ],
    ids=["pod", "deployment", "crd", "lease", "custom-resource"],
)
def test_kind_index(api_version: str, kind: str, definition: str | None) -> None:
    assert schema.builtin().definition_name(api_version, kind) == definition


def test_struct_map_and_atomic_shapes() -> None:
    deployment = schema.for_kind("apps/v1", "Deployment")
    assert deployment is not None
    spec = deployment.field("spec")
    assert spec.is_struct and not spec.is_map
    assert spec.field("selector").map_atomic
    labels = deployment.field("metadata").field("labels")
    assert labels.is_map and not labels.is_struct
    assert spec.field("strategy").field("rollingUpdate").field("maxSurge").int_or_string
    assert spec.field("no-such-field") is schema.ANY
    assert schema.ANY.list_type == "atomic" and not schema.ANY.map_atomic and schema.ANY.is_any


def test_fields_are_memoized_nodes() -> None:
    pod = schema.for_kind("v1", "Pod")
    assert pod is not None and schema.for_kind("v1", "Pod") is pod
    spec = pod.field("spec")
    assert spec is pod.field("spec") is pod.declared["spec"]
    assert set(spec.declared) == set(spec.properties)
    labels = pod.field("metadata").field("labels")
    assert labels.field("app") is labels.field("tier") is labels.additional
    assert labels.additional.types - {"null"} == {"string"}
    assert spec.additional is schema.ANY and spec.field("no-such-field") is schema.ANY


def test_unknown_kinds_are_remembered_up_to_a_bound() -> None:
    table = schema.Schemas(schema.builtin().defs)
    for i in range(schema._UNKNOWN_KINDS_KEPT + 5):
        assert table.for_kind("example.com/v1", f"Thing{i}") is None
    assert table.for_kind("v1", "Pod") is table.definition("io.k8s.api.core.v1.Pod")
    assert len(table._kinds) == schema._UNKNOWN_KINDS_KEPT + 1


@pytest.mark.parametrize(
    ("path", "fits"),
    [
        (("spec", "replicas"), {type(None), int}),
        (("spec", "paused"), {type(None), bool}),
        (("spec", "minReadySeconds"), {type(None), int}),
        (("metadata", "name"), {type(None), str}),
        (("spec", "strategy", "rollingUpdate", "maxSurge"), {type(None), int, str}),
        (("spec", "template", "metadata", "annotations", "x"), {type(None), str}),
        (("no-such-field",), {type(None), bool, int, float, str}),
    ],
    ids=["int32", "bool", "int32-seconds", "string", "int-or-string", "map-value", "undeclared"],
)
def test_scalars_that_fit_without_a_closer_look(path: tuple[str, ...], fits: set[type]) -> None:
    node = schema.for_kind("apps/v1", "Deployment")
    assert node is not None
    for name in path:
        node = node.field(name)
    assert node.scalar_fits == fits


def test_base64_strings_always_get_a_closer_look() -> None:
    secret = schema.for_kind("v1", "Secret")
    assert secret is not None
    assert str not in secret.field("data").additional.scalar_fits
    assert str in secret.field("stringData").additional.scalar_fits


def test_conditions_merge_by_type() -> None:
    pod = schema.for_kind("v1", "Pod")
    assert pod is not None
    conditions = pod.field("status").field("conditions")
    assert conditions.patch_merge_key == "type"
    assert conditions.list_map_keys == ("type",)


def test_finalizers_and_owner_references() -> None:
    pod = schema.for_kind("v1", "Pod")
    assert pod is not None
    meta = pod.field("metadata")
    assert meta.field("finalizers").list_type == "set"
    assert meta.field("ownerReferences").list_map_keys == ("uid",)


def test_from_openapi_adds_object_meta_and_reads_extensions() -> None:
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
                            "items": {"type": "object"},
                        },
                        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                        "nullable": {"type": "string", "nullable": True},
                    },
                }
            },
        }
    )
    assert node.field("metadata").field("labels").is_map
    items = node.field("spec").field("items")
    assert items.list_type == "map" and items.list_map_keys == ("id",)
    assert node.field("spec").field("free").preserve_unknown_fields
    assert "null" in node.field("spec").field("nullable").types
    assert schema.from_openapi(None) is schema.ANY


def test_build_table_strips_descriptions_and_keeps_extensions() -> None:
    source = {
        "$defs": {
            "x.Y": {
                "description": "drop me",
                "type": "object",
                "properties": {
                    "a": {"description": "drop", "$ref": "#/$defs/x.Z", "x-kubernetes-patch-merge-key": "n"}
                },
                "x-kubernetes-group-version-kind": [{"group": "g", "version": "v1", "kind": "Y"}],
            }
        }
    }
    table = schema.build_table(source)
    assert table == {
        "x.Y": {
            "type": "object",
            "properties": {"a": {"$ref": "x.Z", "x-kubernetes-patch-merge-key": "n"}},
            "x-kubernetes-group-version-kind": [{"group": "g", "version": "v1", "kind": "Y"}],
        }
    }
    assert "description" not in json.dumps(table)


def test_descriptions_are_kept_apart_per_definition_and_property() -> None:
    source = {
        "$defs": {
            "a.v1.Thing": {
                "description": "A thing.",
                "properties": {
                    "spec": {"$ref": "#/$defs/a.v1.Spec", "description": "What the thing should be."},
                    "count": {"type": "integer"},
                },
            },
            "a.v1.Bare": {"type": "string"},
        }
    }
    assert schema.build_descriptions(source) == {
        "a.v1.Thing": {"": "A thing.", "spec": "What the thing should be."}
    }
    shipped = schema.descriptions()
    assert shipped["io.k8s.api.apps.v1.DeploymentSpec"]["replicas"].startswith("Number of desired pods.")
    assert shipped["io.k8s.api.core.v1.Pod"][""].startswith("Pod is a collection of containers")
    # every described definition is one the schema table knows (the two files come from one generation)
    assert set(shipped) <= set(schema.builtin().defs)
