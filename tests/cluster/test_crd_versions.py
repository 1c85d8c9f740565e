"""CRDs per version, as the API server treats them (own schema, defaults, pruning, subresources, printer columns,
deprecation), field validation of custom resources (Strict, Warn, Ignore) -- with the real kubectl and the official
client (issue 19, items 2 and 3)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client as k8s_client
from kubernetes.client.rest import ApiException

from .conftest import Kubectl

CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "gadgets.example.com"},
    "spec": {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": False,
                "deprecated": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "description": "v1 spec",
                                "properties": {
                                    "size": {"type": "integer", "maximum": 5},
                                    "color": {"type": "string", "default": "red", "description": "v1 color"},
                                    "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                                },
                            }
                        },
                    }
                },
                "additionalPrinterColumns": [{"name": "Size", "type": "integer", "jsonPath": ".spec.size"}],
            },
            {
                "name": "v2",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "properties": {
                                    "size": {"type": "integer", "maximum": 50},
                                    "shade": {"type": "string", "default": "dark", "description": "v2 shade"},
                                },
                            },
                            "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}},
                        },
                    }
                },
                "subresources": {"status": {}},
                "additionalPrinterColumns": [{"name": "Shade", "type": "string", "jsonPath": ".spec.shade"}],
            },
        ],
    },
}


def _gadget(version: str, name: str, spec: dict[str, Any]) -> str:
    return json.dumps(
        {"apiVersion": f"example.com/{version}", "kind": "Gadget", "metadata": {"name": name}, "spec": spec}
    )


@pytest.fixture
def gadgets(kubectl: Kubectl) -> Kubectl:
    kubectl.ok("apply", "-f", "-", input=json.dumps(CRD))
    kubectl.ok("wait", "--for=condition=Established", "crd/gadgets.example.com", "--timeout=30s")
    return kubectl


def test_each_version_validates_and_defaults_with_its_own_schema(gadgets: Kubectl, k8s: Any) -> None:
    too_big = gadgets.run("create", "-f", "-", input=_gadget("v1", "a", {"size": 10}))
    assert too_big.returncode != 0
    assert (
        "spec.size: Invalid value: 10: spec.size in body should be less than or equal to 5" in too_big.stderr
    )
    gadgets.ok("create", "-f", "-", input=_gadget("v2", "b", {"size": 10}))
    gadgets.ok("create", "-f", "-", input=_gadget("v1", "a", {"size": 3}))
    custom = k8s_client.CustomObjectsApi(k8s)
    as_v1 = custom.get_namespaced_custom_object("example.com", "v1", "default", "gadgets", "a")
    as_v2 = custom.get_namespaced_custom_object("example.com", "v2", "default", "gadgets", "a")
    # defaulted by v1's schema when written at v1; stored once, served at either version (strategy None)
    assert as_v1["apiVersion"] == "example.com/v1" and as_v1["spec"] == {"size": 3, "color": "red"}
    assert as_v2["apiVersion"] == "example.com/v2" and as_v2["spec"] == {"size": 3, "color": "red"}
    b = custom.get_namespaced_custom_object("example.com", "v2", "default", "gadgets", "b")
    assert b["spec"] == {"size": 10, "shade": "dark"}
    listed = custom.list_namespaced_custom_object("example.com", "v1", "default", "gadgets")
    assert {i["apiVersion"] for i in listed["items"]} == {"example.com/v1"}


def test_subresources_and_printer_columns_are_per_version(gadgets: Kubectl, k8s: Any) -> None:
    gadgets.ok("create", "-f", "-", input=_gadget("v2", "g", {"size": 7}))
    custom = k8s_client.CustomObjectsApi(k8s)
    patched = custom.patch_namespaced_custom_object_status(
        "example.com", "v2", "default", "gadgets", "g", {"status": {"ready": True}}
    )
    assert patched["status"] == {"ready": True}
    with pytest.raises(ApiException) as err:
        custom.patch_namespaced_custom_object_status(
            "example.com", "v1", "default", "gadgets", "g", {"status": {"ready": False}}
        )
    assert err.value.status == 404
    v1_table = gadgets.ok("get", "gadgets.v1.example.com", "g")
    v2_table = gadgets.ok("get", "gadgets.v2.example.com", "g")
    # a CRD version's own columns (no AGE unless listed, as upstream)
    assert v1_table.splitlines()[0].split() == ["NAME", "SIZE"] and v1_table.splitlines()[1].split() == [
        "g",
        "7",
    ]
    assert v2_table.splitlines()[0].split() == ["NAME", "SHADE"]
    resources = json.loads(gadgets.ok("get", "--raw", "/apis/example.com/v1"))["resources"]
    assert [r["name"] for r in resources] == ["gadgets"]
    resources = json.loads(gadgets.ok("get", "--raw", "/apis/example.com/v2"))["resources"]
    assert [r["name"] for r in resources] == ["gadgets", "gadgets/status"]


def test_a_deprecated_version_warns(gadgets: Kubectl) -> None:
    got = gadgets.run("get", "gadgets.v1.example.com")
    assert got.returncode == 0
    assert "Warning: example.com/v1 Gadget is deprecated; use example.com/v2 Gadget" in got.stderr
    assert "deprecated" not in gadgets.run("get", "gadgets.v2.example.com").stderr


def test_explain_shows_each_versions_schema(gadgets: Kubectl) -> None:
    v1 = gadgets.ok("explain", "gadgets.spec", "--api-version=example.com/v1")
    v2 = gadgets.ok("explain", "gadgets.spec", "--api-version=example.com/v2")
    assert "color" in v1 and "shade" not in v1
    assert "shade" in v2 and "color" not in v2


def test_webhook_conversion_is_refused_at_creation(kubectl: Kubectl) -> None:
    crd = json.loads(json.dumps(CRD))
    crd["spec"]["conversion"] = {
        "strategy": "Webhook",
        "webhook": {
            "conversionReviewVersions": ["v1"],
            "clientConfig": {"url": "https://example.com/convert"},
        },
    }
    refused = kubectl.run("apply", "-f", "-", input=json.dumps(crd))
    assert refused.returncode != 0
    assert (
        "spec.conversion.strategy: Forbidden: Webhook conversion is not served by berth's embedded cluster"
        in (refused.stderr)
    )


def test_field_validation_strict_warn_and_ignore(gadgets: Kubectl, k8s: Any) -> None:
    body = _gadget("v1", "f", {"size": 1, "colour": "blue", "extra": {"anything": 1}})
    strict = gadgets.run("apply", "-f", "-", input=body)  # kubectl's default --validate=strict
    assert strict.returncode != 0
    assert 'strict decoding error: unknown field "spec.colour"' in strict.stderr
    assert "anything" not in strict.stderr  # x-kubernetes-preserve-unknown-fields keeps it
    warned = gadgets.run("apply", "--validate=warn", "-f", "-", input=body)
    assert warned.returncode == 0 and 'Warning: unknown field "spec.colour"' in warned.stderr
    custom = k8s_client.CustomObjectsApi(k8s)
    got = custom.get_namespaced_custom_object("example.com", "v1", "default", "gadgets", "f")
    assert got["spec"] == {"size": 1, "color": "red", "extra": {"anything": 1}}  # pruned, kept, defaulted
    ignored = gadgets.run("apply", "--validate=false", "-f", "-", input=body.replace('"f"', '"h"'))
    assert ignored.returncode == 0 and "unknown field" not in ignored.stderr
    with pytest.raises(ApiException) as err:
        custom.create_namespaced_custom_object(
            "example.com",
            "v2",
            "default",
            "gadgets",
            {
                "apiVersion": "example.com/v2",
                "kind": "Gadget",
                "metadata": {"name": "x"},
                "spec": {"a": 1},
                "b": 2,
            },
            field_validation="Strict",
        )
    assert err.value.status == 400
    message = json.loads(err.value.body)["message"]
    assert message == 'strict decoding error: unknown field "b", unknown field "spec.a"'


def test_duplicate_fields_of_a_custom_resource_come_before_its_unknown_ones(
    gadgets: Kubectl, tmp_path: Any
) -> None:
    """apiextensions-apiserver: the JSON decoder's duplicates first, then the unknown fields pruning found."""
    body = tmp_path / "gadget.json"
    body.write_text(
        '{"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "d"},'
        ' "spec": {"size": 1, "colour": "x", "size": 2}}'
    )
    path = "/apis/example.com/v1/namespaces/default/gadgets"
    strict = gadgets.run("create", "--raw", path + "?fieldValidation=Strict", "-f", str(body))
    assert strict.returncode != 0
    assert 'strict decoding error: duplicate field "spec.size", unknown field "spec.colour"' in strict.stderr
    warned = gadgets.run("create", "--raw", path, "-f", str(body))
    assert warned.returncode == 0, warned.stderr
    assert 'Warning: duplicate field "spec.size"' in warned.stderr
    assert json.loads(warned.stdout)["spec"]["size"] == 2
