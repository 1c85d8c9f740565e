"""The HTTP surface, spoken raw: auth, discovery, OpenAPI, errors as Status, watch framing, audit lines."""

from __future__ import annotations

import http.client
import json
import re
import ssl
from collections.abc import Iterator
from typing import Any

import pytest

from berth.cluster import Cluster
from berth.cluster import discovery as D


class Http:
    def __init__(self, cluster: Cluster) -> None:
        assert cluster.pki is not None
        self.ctx = ssl.create_default_context(cafile=str(cluster.pki.ca_cert))
        self.port = cluster.port
        self.token = cluster.token

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        headers: dict[str, str] | None = None,
        auth: bool = True,
    ) -> tuple[int, dict[str, str], bytes]:
        conn = http.client.HTTPSConnection("127.0.0.1", self.port, context=self.ctx, timeout=10)
        hdrs = dict(headers or {})
        if auth:
            hdrs["Authorization"] = f"Bearer {self.token}"
        data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
        conn.request(method, path, body=data, headers=hdrs)
        resp = conn.getresponse()
        out = resp.read()
        conn.close()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, out

    def json(self, method: str, path: str, body: Any = None, **kw: Any) -> tuple[int, Any]:
        code, _h, out = self.request(method, path, body, **kw)
        return code, json.loads(out) if out else None

    def stream(self, path: str) -> Iterator[dict[str, Any]]:
        conn = http.client.HTTPSConnection("127.0.0.1", self.port, context=self.ctx, timeout=10)
        conn.request("GET", path, headers={"Authorization": f"Bearer {self.token}"})
        resp = conn.getresponse()
        assert resp.status == 200
        try:
            while True:
                line = resp.readline()
                if not line:
                    return
                yield json.loads(line)
        finally:
            conn.close()


@pytest.fixture()
def h(cluster: Cluster) -> Http:
    return Http(cluster)


def test_anonymous_is_401_but_health_is_open(h: Http) -> None:
    code, body = h.json("GET", "/api/v1/namespaces", auth=False)
    assert code == 401 and body["reason"] == "Unauthorized" and body["kind"] == "Status"
    for path in ("/healthz", "/readyz", "/livez"):
        assert h.request("GET", path, auth=False)[0] == 200


def test_health_endpoints_answer_like_kube_apiserver(h: Http, cluster: Cluster) -> None:
    code, _, body = h.request("GET", "/readyz?verbose", auth=False)
    lines = body.decode().splitlines()
    assert code == 200 and lines[-1] == "readyz check passed"
    assert "[+]ping ok" in lines and "[+]informer-sync ok" in lines and "[+]shutdown ok" in lines
    assert h.request("GET", "/livez?verbose", auth=False)[2].decode().splitlines()[-1] == "livez check passed"
    assert h.request("GET", "/readyz/ping", auth=False)[::2] == (200, b"ok")
    assert h.request("GET", "/readyz/nonesuch", auth=False)[0] == 404
    cluster.server.stopping.set()  # a server shutting down is alive but no longer ready
    try:
        code, _, body = h.request("GET", "/readyz", auth=False)
        assert code == 500 and "[-]shutdown failed: reason withheld" in body.decode()
        assert body.decode().splitlines()[-1] == "readyz check failed"
        assert h.request("GET", "/livez", auth=False)[0] == 200
    finally:
        cluster.server.stopping.clear()


def test_bad_token_is_401(h: Http) -> None:
    code, _ = h.json("GET", "/api/v1/pods", headers={"Authorization": "Bearer nope"}, auth=False)
    assert code == 401


def test_version_reports_1_35(h: Http) -> None:
    code, body = h.json("GET", "/version")
    assert code == 200 and body["gitVersion"] == "v1.35.0" and body["minor"] == "35"


def test_aggregated_discovery_uses_the_exact_content_type(h: Http) -> None:
    accept = f"{D.AGGREGATED_V2},{D.AGGREGATED_V2BETA1},application/json"
    code, headers, body = h.request("GET", "/apis", headers={"Accept": accept})
    assert code == 200 and headers["content-type"] == D.AGGREGATED_V2
    doc = json.loads(body)
    groups = {g["metadata"]["name"]: g for g in doc["items"]}
    apps = groups["apps"]["versions"][0]
    deploy = next(r for r in apps["resources"] if r["resource"] == "deployments")
    assert deploy["scope"] == "Namespaced" and "all" in deploy["categories"]
    scale = next(s for s in deploy["subresources"] if s["subresource"] == "scale")
    assert scale["responseKind"] == {"group": "autoscaling", "version": "v1", "kind": "Scale"}


def test_legacy_discovery_lists_subresources(h: Http) -> None:
    code, body = h.json("GET", "/api/v1")
    names = {r["name"]: r for r in body["resources"]}
    assert code == 200 and {"pods", "pods/status", "pods/log", "pods/binding", "namespaces/finalize"} <= set(
        names
    )
    assert names["namespaces"]["namespaced"] is False and names["pods"]["shortNames"] == ["po"]
    code, groups = h.json("GET", "/apis")
    assert any(g["name"] == "apps" for g in groups["groups"])


def test_openapi_v3_patch_operations_advertise_field_validation(h: Http) -> None:
    code, root = h.json("GET", "/openapi/v3")
    url = root["paths"]["apis/apps/v1"]["serverRelativeURL"]
    code, doc = h.json("GET", url)
    item = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]
    params = {p["name"] for p in item["patch"]["parameters"]}
    assert code == 200 and {"fieldValidation", "fieldManager", "dryRun", "force"} <= params
    assert item["patch"]["x-kubernetes-group-version-kind"]["kind"] == "Deployment"
    # /openapi/v2 is a valid document without definitions (kubectl and Helm fall back to it for unknown kinds).
    code, v2 = h.json("GET", "/openapi/v2")
    assert code == 200 and v2["swagger"] == "2.0" and v2["definitions"] == {}


@pytest.mark.parametrize(
    ("method", "path", "body", "code", "reason"),
    [
        ("GET", "/api/v1/nosuch", None, 404, "NotFound"),
        ("GET", "/apis/nope.io/v1/things", None, 404, "NotFound"),
        ("GET", "/api/v1/namespaces/default/configmaps/missing", None, 404, "NotFound"),
        ("POST", "/api/v1/namespaces/default/configmaps", b"{not json", 400, "BadRequest"),
        ("POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "UPPER"}}, 422, "Invalid"),
        (
            "POST",
            "/api/v1/namespaces/default/configmaps",
            b"x" * (3 * 1024 * 1024 + 1),
            413,
            "RequestEntityTooLarge",
        ),
        ("GET", "/api/v1/pods?fieldSelector=spec.bogus%3Dx", None, 400, "BadRequest"),
    ],
    ids=[
        "unknown-resource",
        "unknown-group",
        "missing-object",
        "malformed-json",
        "bad-name",
        "too-large",
        "bad-field",
    ],
)
def test_errors_are_status_objects(
    h: Http, method: str, path: str, body: Any, code: int, reason: str
) -> None:
    got, out = h.json(method, path, body)
    assert got == code and out["kind"] == "Status" and out["reason"] == reason and out["code"] == code
    assert h.json("GET", "/version")[0] == 200  # still serving


def test_missing_content_type_is_json_and_create_is_201(h: Http) -> None:
    code, out = h.json(
        "POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "a"}, "data": {"k": "v"}}
    )
    assert code == 201 and out["metadata"]["resourceVersion"]
    code, out = h.json(
        "PUT",
        "/api/v1/namespaces/default/configmaps/a",
        {**out, "metadata": {**out["metadata"], "resourceVersion": "1"}},
    )
    assert code == 409 and out["reason"] == "Conflict"


def test_watch_list_sends_initial_events_then_marked_bookmark(h: Http) -> None:
    h.json("POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "w"}})
    events = h.stream(
        "/api/v1/namespaces/default/configmaps?watch=true&sendInitialEvents=true&allowWatchBookmarks=true"
        "&resourceVersionMatch=NotOlderThan&fieldSelector=metadata.name%3Dw&timeoutSeconds=1"
    )
    first, second = next(events), next(events)
    assert first["type"] == "ADDED" and first["object"]["metadata"]["name"] == "w"
    assert second["type"] == "BOOKMARK"
    assert second["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    # then, as upstream's watch cache does shortly before the timeout, a plain BOOKMARK; the stream ends at
    # timeoutSeconds
    rest = list(events)
    assert [e["type"] for e in rest] == ["BOOKMARK"]
    assert "annotations" not in rest[0]["object"]["metadata"]


def test_watch_from_a_compacted_revision_is_an_error_event(cluster: Cluster, h: Http) -> None:
    assert cluster.store is not None
    cluster.store.retain = 5
    for i in range(20):
        h.json("POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": f"c{i}"}})
    cluster.store.compact()
    events = list(
        h.stream("/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=2&timeoutSeconds=2")
    )
    assert len(events) == 1 and events[0]["type"] == "ERROR"
    assert events[0]["object"]["code"] == 410 and "too old resource version" in events[0]["object"]["message"]


def test_table_output_has_rows_and_partial_objects(h: Http) -> None:
    accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
    code, _hd, body = h.request("GET", "/api/v1/namespaces?limit=500", headers={"Accept": accept})
    table = json.loads(body)
    assert code == 200 and table["kind"] == "Table" and table["columnDefinitions"][0]["name"] == "Name"
    assert table["rows"][0]["object"]["kind"] == "PartialObjectMetadata"


def test_every_request_is_one_audit_line(cluster: Cluster, h: Http) -> None:
    h.json("POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "aud"}})
    h.json("GET", "/api/v1/namespaces/default/configmaps/aud")
    h.json("DELETE", "/api/v1/namespaces/default/configmaps/aud")
    assert cluster.data_dir is not None
    lines = [json.loads(x) for x in (cluster.data_dir / "audit.jsonl").read_text().splitlines()]
    mine = [x for x in lines if x["resource"] == "configmaps" and x["name"] == "aud"]
    assert [(x["verb"], x["code"]) for x in mine] == [("create", 201), ("get", 200), ("delete", 200)]
    assert set(mine[0]) >= {"time", "user", "verb", "resource", "subresource", "namespace", "name", "code"}
    assert mine[0]["user"] == "kubernetes-admin" and mine[0]["namespace"] == "default"


def _pod(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {
            "containers": [{"name": "main", "image": "nginx:1.27"}, {"name": "side", "image": "busybox"}]
        },
    }


def test_deletecollection_by_label(h: Http) -> None:
    for i, app in enumerate(["a", "a", "b"]):
        h.json(
            "POST",
            "/api/v1/namespaces/default/configmaps",
            {"metadata": {"name": f"dc{i}", "labels": {"app": app}}},
        )
    code, out = h.json("DELETE", "/api/v1/namespaces/default/configmaps?labelSelector=app%3Da")
    assert code == 200 and sorted(i["metadata"]["name"] for i in out["items"]) == ["dc0", "dc1"]
    _, left = h.json("GET", "/api/v1/namespaces/default/configmaps?labelSelector=app")
    assert [i["metadata"]["name"] for i in left["items"]] == ["dc2"]


def test_strategic_merge_patch_merges_containers_by_name(h: Http) -> None:
    h.json("POST", "/api/v1/namespaces/default/pods", _pod("smp"))
    patch = {"spec": {"containers": [{"name": "side", "image": "busybox:1.37"}]}}
    code, _hd, body = h.request(
        "PATCH",
        "/api/v1/namespaces/default/pods/smp",
        json.dumps(patch).encode(),
        headers={"Content-Type": "application/strategic-merge-patch+json"},
    )
    images = {c["name"]: c["image"] for c in json.loads(body)["spec"]["containers"]}
    assert code == 200 and images == {"main": "nginx:1.27", "side": "busybox:1.37"}


def test_apply_patch_accepts_yaml_and_creates_with_201(h: Http) -> None:
    body = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fromyaml\ndata:\n  k: v\n"
    code, _hd, out = h.request(
        "PATCH",
        "/api/v1/namespaces/default/configmaps/fromyaml?fieldManager=tester",
        body,
        headers={"Content-Type": "application/apply-patch+yaml"},
    )
    assert code == 201 and json.loads(out)["data"] == {"k": "v"}


def test_logs_wait_for_the_container_then_print_simulated_text(h: Http) -> None:
    pod = _pod("logged")
    pod["metadata"]["annotations"] = {"berth.dev/log": "one\ntwo\nthree"}
    h.json("POST", "/api/v1/namespaces/default/pods", pod)
    code, out = h.json("GET", "/api/v1/namespaces/default/pods/logged/log?container=main")
    assert code == 400 and "is waiting to start" in out["message"]
    code, out = h.json("GET", "/api/v1/namespaces/default/pods/logged/log")
    assert code == 400 and "a container name must be specified" in out["message"]
    _, cur = h.json("GET", "/api/v1/namespaces/default/pods/logged")
    cur["status"] = {"phase": "Running"}
    assert h.json("PUT", "/api/v1/namespaces/default/pods/logged/status", cur)[0] == 200
    code, headers, text = h.request(
        "GET", "/api/v1/namespaces/default/pods/logged/log?container=main&tailLines=2"
    )
    assert code == 200 and headers["content-type"].startswith("text/plain") and text == b"two\nthree\n"


def test_eviction_removes_the_pod(h: Http) -> None:
    h.json("POST", "/api/v1/namespaces/default/pods", _pod("evicted"))
    body = {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": "evicted", "namespace": "default"},
    }
    code, out = h.json("POST", "/api/v1/namespaces/default/pods/evicted/eviction", body)
    assert code == 201 and out["status"] == "Success"
    assert h.json("GET", "/api/v1/namespaces/default/pods/evicted")[0] == 404


def test_strict_field_validation_rejects_unknown_fields(h: Http) -> None:
    body = {"metadata": {"name": "strict"}, "data": {}, "bogus": 1}
    code, out = h.json("POST", "/api/v1/namespaces/default/configmaps?fieldValidation=Strict", body)
    assert code == 400 and out["message"] == 'strict decoding error: unknown field "bogus"'
    code, _ = h.json("POST", "/api/v1/namespaces/default/configmaps?fieldValidation=Ignore", body)
    assert code == 201


@pytest.mark.parametrize(
    "raw",
    [b"GARBAGE\r\n\r\n", b"GET / HTTP/1.1\r\nno-colon-header\r\n\r\n", b"\x16\x03\x01garbage-not-tls", b""],
    ids=["bad-request-line", "bad-header", "broken-tls", "hang-up"],
)
def test_server_survives_malformed_connections(cluster: Cluster, h: Http, raw: bytes) -> None:
    import socket

    with socket.create_connection(("127.0.0.1", cluster.port), timeout=5) as s:
        if raw.startswith(b"\x16") or not raw:
            s.sendall(raw)
        else:
            with h.ctx.wrap_socket(s, server_hostname="127.0.0.1") as tls:
                tls.sendall(raw)
                assert tls.recv(100).startswith(b"HTTP/1.")
    assert h.json("GET", "/version")[0] == 200


def test_pipelined_answers_leave_in_one_write_and_a_lone_one_at_once(cluster: Cluster, h: Http) -> None:
    """Three requests sent in one write get their three answers, in order, in one TLS record (the server flushes
    once no further request is waiting); a request sent alone afterwards on the same connection is answered
    without waiting for another."""
    import socket

    def get(path: str) -> bytes:
        return f"GET {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {h.token}\r\n\r\n".encode()

    with (
        socket.create_connection(("127.0.0.1", cluster.port), timeout=10) as s,
        h.ctx.wrap_socket(s, server_hostname="127.0.0.1") as tls,
    ):
        tls.sendall(get("/version") + get("/api/v1/namespaces/nope") + get("/api/v1/namespaces/default"))
        data = b""
        while data.count(b"HTTP/1.1 ") < 3 or not data.endswith(b"}"):
            chunk = tls.recv(1 << 20)
            assert chunk, f"connection closed after {data!r}"
            if not data:
                first = chunk
            data += chunk
        assert first == data  # one record: all three answers came in the first read
        assert re.findall(rb"HTTP/1\.1 (\d{3}) ", data) == [b"200", b"404", b"200"]
        tls.sendall(get("/version"))
        assert tls.recv(1 << 20).startswith(b"HTTP/1.1 200 ")


def test_eviction_respects_disruption_budgets(h: Http) -> None:
    for i in range(2):
        h.json("POST", "/api/v1/namespaces/default/pods", _pod(f"guarded{i}", {"app": "g"}))
        _, cur = h.json("GET", f"/api/v1/namespaces/default/pods/guarded{i}")
        cur["status"] = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
        h.json("PUT", f"/api/v1/namespaces/default/pods/guarded{i}/status", cur)
    pdb = {
        "metadata": {"name": "keep-one"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "g"}}},
    }
    assert h.json("POST", "/apis/policy/v1/namespaces/default/poddisruptionbudgets", pdb)[0] == 201
    body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "guarded0"}}
    assert h.json("POST", "/api/v1/namespaces/default/pods/guarded0/eviction", body)[0] == 201
    code, out = h.json("POST", "/api/v1/namespaces/default/pods/guarded1/eviction", body)
    assert code == 429 and out["reason"] == "TooManyRequests"
    assert (
        out["details"]["causes"][0]["message"]
        == "The disruption budget keep-one needs 1 healthy pods and has 1 currently"
    )


def test_crd_appears_in_discovery_and_openapi_at_once_and_leaves_with_its_deletion(h: Http) -> None:
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.demo.io"},
        "spec": {
            "group": "demo.io",
            "scope": "Cluster",
            "names": {"plural": "things", "kind": "Thing", "categories": ["all"]},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                    },
                    "subresources": {"status": {}},
                }
            ],
        },
    }
    assert h.json("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)[0] == 201
    code, doc = h.json("GET", "/apis/demo.io/v1")
    names = {r["name"]: r for r in doc["resources"]}
    assert code == 200 and names["things"]["namespaced"] is False and "things/status" in names
    _, root = h.json("GET", "/openapi/v3")
    url = root["paths"]["apis/demo.io/v1"]["serverRelativeURL"]
    _, gv = h.json("GET", url)
    assert "fieldValidation" in {
        p["name"] for p in gv["paths"]["/apis/demo.io/v1/things/{name}"]["patch"]["parameters"]
    }
    assert (
        h.json(
            "POST",
            "/apis/demo.io/v1/things",
            {"apiVersion": "demo.io/v1", "kind": "Thing", "metadata": {"name": "t"}},
        )[0]
        == 201
    )
    assert (
        h.json("DELETE", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/things.demo.io")[0] == 200
    )
    assert h.json("GET", "/apis/demo.io/v1")[0] == 404
    assert h.json("GET", "/apis/demo.io/v1/things/t")[0] == 404
    _, root = h.json("GET", "/openapi/v3")
    assert "apis/demo.io/v1" not in root["paths"]


def test_stop_closes_kept_alive_connections(tmp_path: Any) -> None:
    from berth.cluster import ClusterOptions

    cluster = Cluster(ClusterOptions(data_dir=tmp_path / "c", run_controllers=False)).start()
    raw = Http(cluster)
    conn = http.client.HTTPSConnection("127.0.0.1", raw.port, context=raw.ctx, timeout=10)
    headers = {"Authorization": f"Bearer {raw.token}"}
    conn.request("GET", "/api/v1/namespaces/default", headers=headers)
    first = conn.getresponse()
    first.read()
    assert first.status == 200 and not first.will_close
    cluster.stop()
    # the same connection must not be served by the stopped cluster
    with pytest.raises((OSError, http.client.HTTPException)):
        conn.request("GET", "/api/v1/namespaces/default", headers=headers)
        conn.getresponse().read()
    conn.close()


def test_a_finished_watch_says_it_closes_the_connection_and_others_keep_it(h: Http) -> None:
    """A watch stream ends with its connection: the response says ``Connection: close``, so a client that read
    it to the end (urllib3, the official client) does not pool the connection and meet the close on its next
    request (RemoteDisconnected). Ordinary responses keep the connection alive."""
    conn = http.client.HTTPSConnection("127.0.0.1", h.port, context=h.ctx, timeout=10)
    headers = {"Authorization": f"Bearer {h.token}"}
    try:
        conn.request("GET", "/api/v1/namespaces/default/configmaps", headers=headers)
        plain = conn.getresponse()
        plain.read()
        assert plain.status == 200 and not plain.will_close
        conn.request(
            "GET", "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1", headers=headers
        )
        watch = conn.getresponse()
        watch.read()
        assert watch.status == 200 and watch.will_close
        assert (watch.getheader("Connection") or "").lower() == "close"
    finally:
        conn.close()
