"""``fieldValidation`` as kube-apiserver applies it to request bodies: unknown *and duplicate* fields (a key given
twice in one JSON object, which a parsed dict no longer shows) are a 400 ``strict decoding error`` under ``Strict``,
one ``Warning`` header each under ``Warn`` (the default when the parameter is absent), nothing under ``Ignore``;
for built-in kinds and custom resources alike. Bodies are sent raw: kubectl and the clients cannot send a key twice."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client as k8s_client
from kubernetes.client.rest import ApiException

from berth.cluster import Cluster

from .conftest import Kubectl, send

DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"

# The body of upstream's conformance test "should detect unknown and duplicate fields of a typed object"
# (test/e2e/apimachinery/field_validation.go), with its expected message below.
DEPLOYMENT = b"""{
  "apiVersion": "apps/v1",
  "kind": "Deployment",
  "metadata": {"name": "%s", "labels": {"app": "nginx"}},
  "spec": {
    "unknownField": "foo",
    "replicas": 2,
    "replicas": 3,
    "selector": {"matchLabels": {"app": "nginx"}},
    "template": {
      "metadata": {"labels": {"app": "nginx"}},
      "spec": {"containers": [{"name": "nginx", "image": "nginx:1", "image": "nginx:latest"}]}
    }
  }
}"""
UPSTREAM_MESSAGE = 'strict decoding error: unknown field "spec.unknownField", duplicate field "spec.replicas"'


def test_strict_refuses_unknown_and_duplicate_fields_with_upstreams_message(cluster: Cluster) -> None:
    code, warnings, out = send(
        cluster, "POST", DEPLOYMENTS + "?fieldValidation=Strict", DEPLOYMENT % b"strict"
    )
    assert code == 400, out
    assert out["message"] == UPSTREAM_MESSAGE + ', duplicate field "spec.template.spec.containers[0].image"'
    assert out["reason"] == "BadRequest" and warnings == []
    assert send(cluster, "GET", DEPLOYMENTS + "/strict", b"")[0] == 404  # nothing was created


@pytest.mark.parametrize("query", ["?fieldValidation=Warn", ""])
def test_warn_and_the_default_accept_the_body_with_a_warning_per_field(cluster: Cluster, query: str) -> None:
    code, warnings, out = send(cluster, "POST", DEPLOYMENTS + query, DEPLOYMENT % b"warned")
    assert code == 201, out
    assert warnings == [
        '299 - "unknown field \\"spec.unknownField\\""',
        '299 - "duplicate field \\"spec.replicas\\""',
        '299 - "duplicate field \\"spec.template.spec.containers[0].image\\""',
    ]
    spec = out["spec"]
    assert isinstance(spec, dict)
    assert spec["replicas"] == 3 and "unknownField" not in spec  # the last value wins, as Go's decoder
    assert spec["template"]["spec"]["containers"][0]["image"] == "nginx:latest"


def test_ignore_says_nothing_and_a_clean_body_gets_no_warning(cluster: Cluster) -> None:
    code, warnings, _ = send(cluster, "POST", DEPLOYMENTS + "?fieldValidation=Ignore", DEPLOYMENT % b"quiet")
    assert code == 201 and warnings == []
    clean = json.dumps({"metadata": {"name": "clean"}, "data": {"a": "b"}}, indent=1).encode()
    code, warnings, _ = send(cluster, "POST", "/api/v1/namespaces/default/configmaps", clean)
    assert code == 201 and warnings == []


def test_errors_come_in_the_bodys_order_and_updates_are_checked_too(cluster: Cluster) -> None:
    body = b'{"metadata": {"name": "cm", "name": "cm"}, "bogus": 1, "data": {"k": "1", "k" : "2"}}'
    code, _, out = send(cluster, "POST", "/api/v1/namespaces/default/configmaps?fieldValidation=Strict", body)
    assert code == 400
    assert out["message"] == (
        'strict decoding error: duplicate field "metadata.name", unknown field "bogus", duplicate field "data.k"'
    )
    assert (
        send(cluster, "POST", "/api/v1/namespaces/default/configmaps", b'{"metadata": {"name": "cm"}}')[0]
        == 201
    )
    put = b'{"metadata": {"name": "cm"}, "data": {"k": "1"}, "data": {"k": "2"}}'
    code, _, out = send(
        cluster, "PUT", "/api/v1/namespaces/default/configmaps/cm?fieldValidation=Strict", put
    )
    assert code == 400 and out["message"] == 'strict decoding error: duplicate field "data"'


def test_kubectl_validate_warn_prints_unknown_fields_of_built_in_kinds(
    kubectl: Kubectl, tmp_path: Path
) -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "typo"}, "dataa": {"a": "b"}}
    warned = kubectl.run("create", "--validate=warn", "-f", "-", input=json.dumps(cm))
    assert warned.returncode == 0, warned.stderr
    assert 'Warning: unknown field "dataa"' in warned.stderr
    strict = kubectl.run("apply", "-f", "-", input=json.dumps({**cm, "metadata": {"name": "typo2"}}))
    assert strict.returncode != 0 and 'unknown field "dataa"' in strict.stderr


# -- patch bodies (upstream's test/integration/apiserver/field_validation_test.go, typed patch cases) -------------

VALID_DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "labels": {"app": "nginx"}},
    "spec": {
        "selector": {"matchLabels": {"app": "nginx"}},
        "template": {
            "metadata": {"labels": {"app": "nginx"}},
            "spec": {"containers": [{"name": "nginx", "image": "nginx:latest", "imagePullPolicy": "Always"}]},
        },
    },
}
PATCH_BODY = b"""{
  "spec": {
    "unknown1": "val1",
    "unknownDupe": "valDupe",
    "unknownDupe": "valDupe2",
    "paused": true,
    "paused": false,
    "template": {"spec": {"containers": [{
      "name": "nginx", "image": "nginx:latest", "unknownNested": "val1",
      "imagePullPolicy": "Always", "imagePullPolicy": "Never"}]}}
  }
}"""
PATCH_PROBLEMS = [
    'duplicate field "spec.unknownDupe"',
    'duplicate field "spec.paused"',
    'duplicate field "spec.template.spec.containers[0].imagePullPolicy"',
    'unknown field "spec.template.spec.containers[0].unknownNested"',
    'unknown field "spec.unknown1"',
    'unknown field "spec.unknownDupe"',
]
MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"


def _warning_texts(warnings: list[str]) -> list[str]:
    return [json.loads(w.removeprefix("299 - ")) for w in warnings]


@pytest.fixture
def web(cluster: Cluster) -> Cluster:
    assert send(cluster, "POST", DEPLOYMENTS, json.dumps(VALID_DEPLOYMENT).encode())[0] == 201
    return cluster


@pytest.mark.parametrize("content_type", [MERGE, STRATEGIC])
def test_strict_refuses_a_patch_with_duplicate_or_unknown_fields_as_upstreams_422(
    web: Cluster, content_type: str
) -> None:
    code, warnings, out = send(
        web, "PATCH", DEPLOYMENTS + "/web?fieldValidation=Strict", PATCH_BODY, content_type
    )
    assert code == 422 and warnings == [], out
    assert out["reason"] == "Invalid"
    assert out["message"].startswith(' "" is invalid: patch: Invalid value: "')
    assert out["message"].endswith('": strict decoding error: ' + ", ".join(PATCH_PROBLEMS))
    (cause,) = out["details"]["causes"]
    assert cause["field"] == "patch" and cause["reason"] == "FieldValueInvalid"
    if content_type == STRATEGIC:  # upstream shows the decoded patch as Go prints a map; last value wins
        assert cause["message"].startswith(
            'Invalid value: "map[spec:map[paused:false template:map[spec:map[containers:[map[image:nginx:latest '
            "imagePullPolicy:Never name:nginx unknownNested:val1]]]] unknown1:val1 unknownDupe:valDupe2]]"
        )
    else:  # a merge patch shows the patched object's JSON
        shown = json.loads(json.loads(cause["message"].split(": ", 1)[1].rsplit(": strict decoding", 1)[0]))
        assert shown["spec"]["unknown1"] == "val1" and shown["metadata"]["name"] == "web"
    stored = send(web, "GET", DEPLOYMENTS + "/web", b"")[2]
    assert "paused" not in stored["spec"] and stored["metadata"]["generation"] == 1  # nothing was written


@pytest.mark.parametrize("content_type", [MERGE, STRATEGIC])
@pytest.mark.parametrize("query", ["?fieldValidation=Warn", ""])
def test_warn_applies_the_patch_last_value_winning_and_unknown_fields_dropped(
    web: Cluster, content_type: str, query: str
) -> None:
    code, warnings, out = send(web, "PATCH", DEPLOYMENTS + "/web" + query, PATCH_BODY, content_type)
    assert code == 200, out
    assert _warning_texts(warnings) == PATCH_PROBLEMS
    stored = send(web, "GET", DEPLOYMENTS + "/web", b"")[2]
    assert stored["spec"]["paused"] is False
    assert "unknown1" not in stored["spec"] and "unknownDupe" not in stored["spec"]
    (container,) = stored["spec"]["template"]["spec"]["containers"]
    assert container["imagePullPolicy"] == "Never" and "unknownNested" not in container


def test_ignore_applies_the_patch_silently_and_still_drops_unknown_fields(web: Cluster) -> None:
    code, warnings, _ = send(web, "PATCH", DEPLOYMENTS + "/web?fieldValidation=Ignore", PATCH_BODY, MERGE)
    assert code == 200 and warnings == []
    stored = send(web, "GET", DEPLOYMENTS + "/web", b"")[2]
    assert stored["spec"]["paused"] is False and "unknown1" not in stored["spec"]


def test_a_json_patch_reports_its_operations_own_unknown_and_duplicate_fields(web: Cluster) -> None:
    ops = b"""[
      {"op": "add", "path": "/spec/unknown1", "value": "val1", "foo": "bar"},
      {"op": "add", "path": "/spec/unknown2", "path": "/spec/unknown3", "value": "val1"},
      {"op": "add", "path": "/spec/paused", "value": true}
    ]"""
    expected = [
        'json patch unknown field "[0].foo"',
        'json patch duplicate field "[1].path"',
        'unknown field "spec.unknown1"',
        'unknown field "spec.unknown3"',
    ]
    url = DEPLOYMENTS + "/web?fieldValidation="
    code, _, out = send(web, "PATCH", url + "Strict", ops, "application/json-patch+json")
    assert code == 422 and out["message"].endswith('": strict decoding error: ' + ", ".join(expected))
    code, warnings, _ = send(web, "PATCH", url + "Warn", ops, "application/json-patch+json")
    assert code == 200 and _warning_texts(warnings) == expected
    assert send(web, "GET", DEPLOYMENTS + "/web", b"")[2]["spec"]["paused"] is True


def test_an_apply_patch_with_a_key_twice_is_go_yamls_400_naming_the_lines(cluster: Cluster) -> None:
    body = json.dumps(VALID_DEPLOYMENT, indent=1).replace(
        '"selector"', '"paused": false,\n  "paused": true,\n  "selector"'
    )
    body = body.replace(
        '"imagePullPolicy": "Always"', '"imagePullPolicy": "Never",\n"imagePullPolicy": "Always"'
    )
    lines = body.splitlines()
    paused = next(i for i, text in enumerate(lines) if '"paused": true' in text) + 1
    pull = next(i for i, text in enumerate(lines) if '"imagePullPolicy": "Always"' in text) + 1
    apply = "application/apply-patch+yaml"
    url = DEPLOYMENTS + "/web?fieldManager=mgr&fieldValidation="
    code, _, out = send(cluster, "PATCH", url + "Strict", body.encode(), apply)
    assert code == 400, out
    assert out["message"] == (
        "error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n"
        f'  line {paused}: key "paused" already set in map\n'
        f'  line {pull}: key "imagePullPolicy" already set in map'
    )
    assert send(cluster, "GET", DEPLOYMENTS + "/web", b"")[0] == 404  # an apply that would create did not
    code, warnings, out = send(cluster, "PATCH", url + "Warn", body.encode(), apply)
    assert code == 201, out
    assert _warning_texts(warnings) == [
        f'line {paused}: key "paused" already set in map',
        f'line {pull}: key "imagePullPolicy" already set in map',
    ]
    assert out["spec"]["paused"] is True  # the last value wins
    yaml_body = b"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  paused: false\n  paused: true\n"
    url = url.replace("=mgr", "=other")  # the same value as mgr's: shared, no conflict
    code, _, out = send(cluster, "PATCH", url + "Strict", yaml_body, apply)
    assert code == 400 and out["message"].endswith('\n  line 7: key "paused" already set in map'), out
    code, warnings, out = send(cluster, "PATCH", url + "Ignore", yaml_body, apply)
    assert code == 200 and warnings == [], out["message"]


def test_the_official_client_gets_the_422_for_a_typo_in_a_strict_patch(web: Cluster, k8s: Any) -> None:
    apps = k8s_client.AppsV1Api(k8s)
    with pytest.raises(ApiException) as err:
        apps.patch_namespaced_deployment(
            "web", "default", {"spec": {"replicaz": 3}}, field_validation="Strict"
        )
    assert err.value.status == 422
    assert json.loads(err.value.body)["message"].endswith(
        ': strict decoding error: unknown field "spec.replicaz"'
    )
    patched = apps.patch_namespaced_deployment(
        "web", "default", {"spec": {"replicas": 2}}, field_validation="Strict"
    )
    assert patched.spec.replicas == 2


def test_kubectl_apply_of_a_changed_manifest_with_a_typo_is_refused(web: Cluster, kubectl: Kubectl) -> None:
    """Client-side ``kubectl apply`` on an existing object sends a strategic merge patch with
    ``fieldValidation=Strict``: a typo in the manifest is caught there too, and ``--validate=warn`` warns."""
    manifest = json.loads(json.dumps(VALID_DEPLOYMENT))
    kubectl.ok("apply", "-f", "-", input=json.dumps(manifest))
    manifest["spec"]["replicaz"] = 3
    refused = kubectl.run("apply", "-f", "-", input=json.dumps(manifest))
    assert refused.returncode != 0
    assert 'strict decoding error: unknown field "spec.replicaz"' in refused.stderr
    warned = kubectl.run("apply", "--validate=warn", "-f", "-", input=json.dumps(manifest))
    assert warned.returncode == 0, warned.stderr
    assert 'Warning: unknown field "spec.replicaz"' in warned.stderr
    assert "replicaz" not in json.loads(kubectl.ok("get", "deployment", "web", "-o", "json"))["spec"]


YAML_DEPLOYMENT = b"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: %s
  name: %s
  unknownMeta: x
spec:
  unknown1: val1
  unknownDupe: valDupe
  unknownDupe: valDupe2
  paused: true
  paused: false
  selector:
    matchLabels:
      app: nginx
  template:
    metadata:
      labels:
        app: nginx
    spec:
      containers:
      - name: nginx
        image: nginx:latest
        unknownNested: val1
        imagePullPolicy: Always
        imagePullPolicy: Never
"""
YAML_LINES = [
    'line 5: key "name" already set in map',
    'line 10: key "unknownDupe" already set in map',
    'line 12: key "paused" already set in map',
    'line 26: key "imagePullPolicy" already set in map',
]
YAML_UNKNOWN = [
    'unknown field "metadata.unknownMeta"',
    'unknown field "spec.template.spec.containers[0].unknownNested"',
    'unknown field "spec.unknown1"',
    'unknown field "spec.unknownDupe"',
]


def test_a_yaml_body_with_a_key_twice_is_go_yamls_error_then_the_unknown_fields(cluster: Cluster) -> None:
    """Upstream's YAML create case: go-yaml's one error listing each repeated key's line, then the unknown fields
    (sorted, as the YAML became JSON); under Warn a warning a line."""
    body = YAML_DEPLOYMENT % (b"yamled", b"yamled")
    code, _, out = send(cluster, "POST", DEPLOYMENTS + "?fieldValidation=Strict", body, "application/yaml")
    assert code == 400, out
    assert out["message"] == (
        "strict decoding error: yaml: unmarshal errors:\n"
        + "\n".join(f"  {line}" for line in YAML_LINES)
        + ", "
        + ", ".join(YAML_UNKNOWN)
    )
    code, warnings, out = send(cluster, "POST", DEPLOYMENTS, body, "application/yaml")
    assert code == 201, out
    assert _warning_texts(warnings) == YAML_LINES + YAML_UNKNOWN
    assert out["spec"]["paused"] is False
    url = DEPLOYMENTS + "/yamled?fieldValidation=Ignore"
    code, warnings, _ = send(cluster, "PUT", url, body, "application/yaml")
    assert code == 200 and warnings == []
