"""CRDs per version, as the API server treats them (own schema, defaults, pruning, subresources, printer columns,
deprecation), field validation of custom resources (Strict, Warn, Ignore) -- with the real kubectl and the official
client (issue 19, items 2 and 3)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client as k8s_client
from kubernetes.client.rest import ApiException

from .conftest import Kubectl, send

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
                                    "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
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
    # defaulted by v1's schema when written at v1, then stored at v2 (strategy None) pruned by v2's schema, which
    # has no ``color``; every read decodes the stored object with v2's defaults, served at either version
    assert as_v1["apiVersion"] == "example.com/v1" and as_v1["spec"] == {"size": 3, "shade": "dark"}
    assert as_v2["apiVersion"] == "example.com/v2" and as_v2["spec"] == {"size": 3, "shade": "dark"}
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
    # colour pruned, extra kept; v1's default (color) is lost when stored at v2, which has no such field, and
    # v2's default (shade) is given on the read from storage
    assert got["spec"] == {"size": 1, "shade": "dark", "extra": {"anything": 1}}
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


def test_a_merge_patch_of_a_custom_resource_reports_its_duplicates_then_the_pruned_fields(
    gadgets: Kubectl, cluster: Any
) -> None:
    """Upstream's CRD patch case: the patch's duplicate fields (in its order), then the fields pruning dropped from
    the patched object (sorted); a 422 on ``patch`` under Strict, a warning each under Warn (the last value wins)."""
    gadgets.ok("create", "-f", "-", input=_gadget("v2", "p", {"size": 1}))
    url = "/apis/example.com/v2/namespaces/default/gadgets/p?fieldValidation="
    body = b'{"spec": {"zeta": 1, "size": 2, "size": 3, "alpha": {"x": 1}, "alpha": 2}}'
    expected = [
        'duplicate field "spec.size"',
        'duplicate field "spec.alpha"',
        'unknown field "spec.alpha"',
        'unknown field "spec.zeta"',
    ]
    merge = "application/merge-patch+json"
    code, _, out = send(cluster, "PATCH", url + "Strict", body, merge)
    assert code == 422, out
    assert out["message"].endswith('": strict decoding error: ' + ", ".join(expected))
    code, warnings, out = send(cluster, "PATCH", url + "Warn", body, merge)
    assert code == 200, out
    assert [json.loads(w.removeprefix("299 - ")) for w in warnings] == expected
    assert out["spec"] == {"size": 3, "shade": "dark"}


def test_reads_give_the_storage_versions_defaults_including_ones_added_later(
    gadgets: Kubectl, k8s: Any
) -> None:
    """Upstream's defaulting test: the storage version's defaults are applied when an object is read from storage
    (get, list, watch), so a default added to the storage version's schema later shows on existing objects; a
    default of another version does not (it applies only to request bodies sent at that version)."""
    custom = k8s_client.CustomObjectsApi(k8s)
    gadgets.ok("create", "-f", "-", input=_gadget("v2", "old", {"size": 1}))
    crd = json.loads(gadgets.ok("get", "crd", "gadgets.example.com", "-o", "json"))
    v1, v2 = crd["spec"]["versions"]
    v2["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["mode"] = {
        "type": "string",
        "default": "m",
    }
    v1["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["tint"] = {
        "type": "string",
        "default": "t",
    }
    gadgets.ok("replace", "-f", "-", input=json.dumps(crd))
    for version in ("v1", "v2"):
        got = custom.get_namespaced_custom_object("example.com", version, "default", "gadgets", "old")
        assert got["spec"] == {"size": 1, "shade": "dark", "mode": "m"}, version
        listed = custom.list_namespaced_custom_object("example.com", version, "default", "gadgets")
        assert [i["spec"] for i in listed["items"]] == [{"size": 1, "shade": "dark", "mode": "m"}]
    for version in ("v1", "v2"):
        watch = ["get", f"gadgets.{version}.example.com", "--watch", "--output-watch-events", "-o", "json"]
        watched = gadgets.run(*watch, "--request-timeout=2s")
        event = json.loads(watched.stdout.splitlines()[0])
        assert event["object"]["spec"] == {"size": 1, "shade": "dark", "mode": "m"}, version
    stored = custom.get_namespaced_custom_object("example.com", "v2", "default", "gadgets", "old")
    assert stored["metadata"]["resourceVersion"] == got["metadata"]["resourceVersion"]  # nothing was written


def test_a_yaml_body_of_a_custom_resource_reports_repeated_keys_by_line(
    gadgets: Kubectl, cluster: Any
) -> None:
    body = b"apiVersion: example.com/v2\nkind: Gadget\nmetadata:\n  name: yml\nspec:\n  size: 1\n  size: 2\n  zeta: 1\n"
    url = "/apis/example.com/v2/namespaces/default/gadgets?fieldValidation="
    code, _, out = send(cluster, "POST", url + "Strict", body, "application/yaml")
    assert code == 400, out
    assert out["message"] == (
        'strict decoding error: yaml: unmarshal errors:\n  line 7: key "size" already set in map, '
        'unknown field "spec.zeta"'
    )
    code, warnings, out = send(cluster, "POST", url + "Warn", body, "application/yaml")
    assert code == 201, out
    assert [json.loads(w.removeprefix("299 - ")) for w in warnings] == [
        'line 7: key "size" already set in map',
        'unknown field "spec.zeta"',
    ]
    assert out["spec"] == {"size": 2, "shade": "dark"}
