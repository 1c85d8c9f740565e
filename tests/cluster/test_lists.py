"""Consistent lists (continue pins the first page's revision), resourceVersionMatch, metadata-only views and the
BOOKMARK before a watch times out (issue 19, item 5), through the official client and raw HTTP."""

from __future__ import annotations

import base64
import json
import time
import urllib.error
import urllib.request
from typing import Any

import pytest
from kubernetes import client as k8s_client
from kubernetes.client.rest import ApiException

from berth.cluster import Cluster


def _raw(cluster: Cluster, path: str, accept: str = "application/json") -> tuple[int, Any]:
    assert cluster.pki is not None
    req = urllib.request.Request(
        f"{cluster.url}{path}", headers={"Authorization": f"Bearer {cluster.token}", "Accept": accept}
    )
    try:
        with urllib.request.urlopen(req, context=cluster.pki.client_context(), timeout=30) as resp:
            body = resp.read()
            return resp.status, [
                json.loads(line) for line in body.splitlines()
            ] if b"\n{" in body else json.loads(body)
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _cms(core: Any, n: int) -> None:
    for i in range(n):
        core.create_namespaced_config_map("default", {"metadata": {"name": f"c{i}"}, "data": {"v": "old"}})


def _names(page: Any) -> list[str]:
    return [item.metadata.name for item in page.items]


def test_continue_pages_are_a_snapshot_of_the_first_page(k8s: Any) -> None:
    core = k8s_client.CoreV1Api(k8s)
    _cms(core, 5)
    first = core.list_namespaced_config_map("default", limit=2)
    assert _names(first) == ["c0", "c1"]
    rv = first.metadata.resource_version
    # writes after the first page: a new object after the cursor, a change, a deletion
    core.create_namespaced_config_map("default", {"metadata": {"name": "c9"}})
    core.patch_namespaced_config_map("c3", "default", {"data": {"v": "new"}})
    core.delete_namespaced_config_map("c4", "default")
    second = core.list_namespaced_config_map("default", limit=2, _continue=first.metadata._continue)
    third = core.list_namespaced_config_map("default", limit=2, _continue=second.metadata._continue)
    assert _names(second) + _names(third) == ["c2", "c3", "c4"]
    assert second.items[1].data == {"v": "old"}
    assert second.metadata.resource_version == third.metadata.resource_version == rv
    assert third.metadata._continue is None
    assert sorted(_names(core.list_namespaced_config_map("default"))) == ["c0", "c1", "c2", "c3", "c9"]


def test_an_expired_continue_token_is_410_with_a_fresh_token(cluster: Cluster, k8s: Any) -> None:
    core = k8s_client.CoreV1Api(k8s)
    _cms(core, 4)
    first = core.list_namespaced_config_map("default", limit=2)
    core.create_namespaced_config_map("default", {"metadata": {"name": "c9"}})
    core.create_namespaced_config_map("default", {"metadata": {"name": "c8"}})
    assert cluster.store is not None
    cluster.store.retain = 1
    cluster.store.compact()
    with pytest.raises(ApiException) as err:
        core.list_namespaced_config_map("default", limit=2, _continue=first.metadata._continue)
    assert err.value.status == 410
    status = json.loads(err.value.body)
    assert status["reason"] == "Expired"
    assert status["message"].startswith(
        "The provided continue parameter is too old to display a consistent list"
    )
    fresh = status["metadata"]["continue"]
    rest = core.list_namespaced_config_map("default", _continue=fresh)
    # the remainder, as it is now (inconsistent, as upstream warns)
    assert _names(rest) == ["c2", "c3", "c8", "c9"]


def test_resource_version_match(cluster: Cluster, k8s: Any) -> None:
    core = k8s_client.CoreV1Api(k8s)
    _cms(core, 2)
    at = core.list_namespaced_config_map("default").metadata.resource_version
    core.patch_namespaced_config_map("c0", "default", {"data": {"v": "new"}})
    core.create_namespaced_config_map("default", {"metadata": {"name": "c5"}})
    exact = core.list_namespaced_config_map("default", resource_version=at, resource_version_match="Exact")
    assert _names(exact) == ["c0", "c1"] and exact.items[0].data == {"v": "old"}
    assert exact.metadata.resource_version == at
    newer = core.list_namespaced_config_map(
        "default", resource_version=at, resource_version_match="NotOlderThan"
    )
    assert _names(newer) == ["c0", "c1", "c5"] and int(newer.metadata.resource_version) > int(at)
    # the legacy form: a resourceVersion and a limit without a match is exact
    legacy = core.list_namespaced_config_map("default", resource_version=at, limit=10)
    assert _names(legacy) == ["c0", "c1"]
    too_large = str(int(newer.metadata.resource_version) + 100)
    with pytest.raises(ApiException) as err:
        core.list_namespaced_config_map("default", resource_version=too_large, resource_version_match="Exact")
    assert err.value.status == 504 and "Too large resource version" in err.value.body
    for kwargs, message in [
        (
            {"resource_version_match": "Exact"},
            "resourceVersionMatch is forbidden unless resourceVersion is provided",
        ),
        (
            {"resource_version": "0", "resource_version_match": "Exact"},
            'resourceVersionMatch \\"exact\\" is forbidden',
        ),
        ({"resource_version": at, "resource_version_match": "Newest"}, 'Unsupported value: \\"Newest\\"'),
    ]:
        with pytest.raises(ApiException) as err:
            core.list_namespaced_config_map("default", **kwargs)
        assert err.value.status == 422 and message in err.value.body, err.value.body
    assert cluster.store is not None
    cluster.store.retain = 1
    cluster.store.compact()
    with pytest.raises(ApiException) as err:
        core.list_namespaced_config_map("default", resource_version=at, resource_version_match="Exact")
    assert err.value.status == 410
    assert "The resourceVersion for the provided list is too old." in err.value.body


def test_partial_object_metadata_for_as_accept_headers(cluster: Cluster, k8s: Any) -> None:
    core = k8s_client.CoreV1Api(k8s)
    core.create_namespaced_config_map(
        "default", {"metadata": {"name": "c", "labels": {"a": "b"}}, "data": {"k": "v"}}
    )
    accept = (
        "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,"
        "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
    )
    code, body = _raw(cluster, "/api/v1/namespaces/default/configmaps", accept)
    assert (
        code == 200 and body["kind"] == "PartialObjectMetadataList" and body["apiVersion"] == "meta.k8s.io/v1"
    )
    assert body["metadata"]["resourceVersion"]
    [item] = body["items"]
    assert item["kind"] == "PartialObjectMetadata" and item["metadata"]["labels"] == {"a": "b"}
    assert "data" not in item
    code, one = _raw(
        cluster,
        "/api/v1/namespaces/default/configmaps/c",
        "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
    )
    assert code == 200 and one["kind"] == "PartialObjectMetadata" and one["metadata"]["name"] == "c"
    assert set(one) == {"kind", "apiVersion", "metadata"}


def test_a_bookmark_comes_before_the_watch_times_out(cluster: Cluster, k8s: Any) -> None:
    core = k8s_client.CoreV1Api(k8s)
    rv = core.list_namespaced_config_map("default").metadata.resource_version
    core.create_namespaced_config_map("default", {"metadata": {"name": "c"}})
    assert cluster.api is not None
    cluster.api.create("secrets", {"metadata": {"name": "s"}}, "default")  # a later write of another resource
    newest = str(cluster.store.revision if cluster.store else 0)
    started = time.monotonic()
    code, events = _raw(
        cluster,
        f"/api/v1/namespaces/default/configmaps?watch=1&resourceVersion={rv}&allowWatchBookmarks=true&timeoutSeconds=3",
        "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json",
    )
    assert code == 200 and time.monotonic() - started >= 2.5
    assert [e["type"] for e in events] == ["ADDED", "BOOKMARK"]
    assert events[0]["object"]["kind"] == "PartialObjectMetadata" and "data" not in events[0]["object"]
    assert events[1]["object"]["metadata"]["resourceVersion"] == newest


def test_continue_tokens_are_opaque_but_checked(k8s: Any) -> None:
    core = k8s_client.CoreV1Api(k8s)
    with pytest.raises(ApiException) as err:
        core.list_namespaced_config_map("default", _continue=base64.urlsafe_b64encode(b"{}").decode())
    assert err.value.status == 400 and "continue key is not valid" in err.value.body
