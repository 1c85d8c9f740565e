"""``fieldValidation`` as kube-apiserver applies it to request bodies: unknown *and duplicate* fields (a key given
twice in one JSON object, which a parsed dict no longer shows) are a 400 ``strict decoding error`` under ``Strict``,
one ``Warning`` header each under ``Warn`` (the default when the parameter is absent), nothing under ``Ignore``;
for built-in kinds and custom resources alike. Bodies are sent raw: kubectl and the clients cannot send a key twice."""

from __future__ import annotations

import http.client
import json
import ssl
from pathlib import Path

import pytest

from berth.cluster import Cluster

from .conftest import Kubectl

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


def send(cluster: Cluster, method: str, path: str, body: bytes) -> tuple[int, list[str], dict[str, object]]:
    """The status, every ``Warning`` header (in order) and the JSON answer."""
    assert cluster.pki is not None
    ctx = ssl.create_default_context(cafile=str(cluster.pki.ca_cert))
    conn = http.client.HTTPSConnection("127.0.0.1", cluster.port, context=ctx, timeout=10)
    headers = {"Authorization": f"Bearer {cluster.token}", "Content-Type": "application/json"}
    conn.request(method, path, body=body, headers=headers)
    resp = conn.getresponse()
    out = json.loads(resp.read() or b"{}")
    conn.close()
    return resp.status, [v for k, v in resp.getheaders() if k.lower() == "warning"], out


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
