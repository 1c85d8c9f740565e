"""Bound ServiceAccount tokens die with their object; a 401 names the credential that was tried; a group without a
user to impersonate is refused (issue 19, items 4 and 7)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest
from kubernetes import client as k8s_client
from kubernetes.client.rest import ApiException

from berth.cluster import Cluster

from .conftest import Kubectl

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "app"},
    "spec": {"containers": [{"name": "c", "image": "nginx"}]},
}


def _request(cluster: Cluster, path: str, headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
    assert cluster.pki is not None
    req = urllib.request.Request(f"{cluster.url}{path}", headers=headers)
    try:
        with urllib.request.urlopen(req, context=cluster.pki.client_context(), timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _whoami(cluster: Cluster, token: str) -> tuple[int, dict[str, Any]]:
    return _request(cluster, "/api/v1/namespaces/default/pods", {"Authorization": f"Bearer {token}"})


def test_a_pod_bound_token_stops_authenticating_when_its_pod_is_deleted(
    kubectl: Kubectl, cluster: Cluster
) -> None:
    kubectl.ok("create", "serviceaccount", "bot")
    kubectl.ok(
        "apply", "-f", "-", input=json.dumps({**POD, "spec": {**POD["spec"], "serviceAccountName": "bot"}})
    )
    token = kubectl.ok(
        "create", "token", "bot", "--bound-object-kind", "Pod", "--bound-object-name", "app"
    ).strip()
    review = kubectl.ok("auth", "whoami", "--token", token, "-o", "json")
    assert json.loads(review)["status"]["userInfo"]["username"] == "system:serviceaccount:default:bot"
    kubectl.ok("delete", "pod", "app", "--wait=false")
    code, status = _whoami(cluster, token)
    assert code == 401 and status["reason"] == "Unauthorized"
    assert status["message"] == (
        "Unauthorized: the ServiceAccount token for default/bot is no longer valid: it was bound to pod app, "
        "which was deleted (or deleted and recreated)"
    )
    # a pod of the same name created again does not revive it (another uid)
    kubectl.ok(
        "apply", "-f", "-", input=json.dumps({**POD, "spec": {**POD["spec"], "serviceAccountName": "bot"}})
    )
    assert _whoami(cluster, token)[0] == 401
    denied = kubectl.run("get", "pods", "--token", token)
    assert denied.returncode != 0 and "Unauthorized" in denied.stderr


def test_a_secret_bound_token_dies_with_its_secret(kubectl: Kubectl, cluster: Cluster) -> None:
    kubectl.ok("create", "serviceaccount", "bot")
    kubectl.ok("create", "secret", "generic", "anchor", "--from-literal=a=b")
    token = kubectl.ok(
        "create", "token", "bot", "--bound-object-kind", "Secret", "--bound-object-name", "anchor"
    ).strip()
    assert _whoami(cluster, token)[0] == 403  # authenticated (the bot may not list pods)
    kubectl.ok("delete", "secret", "anchor")
    code, status = _whoami(cluster, token)
    assert code == 401 and "bound to secret anchor, which was deleted" in status["message"]


def test_binding_a_token_to_a_missing_or_other_object_is_refused(kubectl: Kubectl, k8s: Any) -> None:
    kubectl.ok("create", "serviceaccount", "bot")
    missing = kubectl.run(
        "create", "token", "bot", "--bound-object-kind", "Pod", "--bound-object-name", "nope"
    )
    assert missing.returncode != 0 and 'pods "nope" not found' in missing.stderr
    core = k8s_client.CoreV1Api(k8s)
    core.create_namespaced_pod("default", POD)  # runs as the default service account, not bot
    other = kubectl.run("create", "token", "bot", "--bound-object-kind", "Pod", "--bound-object-name", "app")
    assert other.returncode != 0
    assert (
        'cannot bind token for serviceaccount "bot" to pod running with different serviceaccount name'
        in other.stderr
    )
    core.create_namespaced_pod(
        "default", {**POD, "metadata": {"name": "mine"}, "spec": {**POD["spec"], "serviceAccountName": "bot"}}
    )
    body = {
        "spec": {
            "audiences": [],
            "boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "mine", "uid": "0000-not-the-uid"},
        }
    }
    with pytest.raises(ApiException) as err:
        core.create_namespaced_service_account_token(name="bot", namespace="default", body=body)
    assert err.value.status == 409
    assert "the UID in the bound object reference (0000-not-the-uid) does not match the UID in record" in str(
        err.value.body
    )
    with pytest.raises(ApiException) as err:
        core.create_namespaced_service_account_token(
            name="bot",
            namespace="default",
            body={"spec": {"boundObjectRef": {"kind": "ConfigMap", "apiVersion": "v1", "name": "x"}}},
        )
    assert err.value.status == 400 and "cannot bind token to object of type" in str(err.value.body)


def test_a_401_names_the_credential_that_was_tried(cluster: Cluster, kubectl: Kubectl) -> None:
    code, status = _request(cluster, "/api/v1/namespaces", {})
    assert code == 401 and status["message"].startswith("Unauthorized: no credentials were sent")
    code, status = _request(cluster, "/api/v1/namespaces", {"Authorization": "Basic YWRtaW46YWRtaW4="})
    assert code == 401 and "Basic credentials are not accepted" in status["message"]
    code, status = _whoami(cluster, "not-a-token")
    assert (
        code == 401 and "neither this cluster's admin token nor a ServiceAccount token" in status["message"]
    )
    # a token another cluster signed names the ServiceAccount it claims, without showing the token
    kubectl.ok("create", "serviceaccount", "bot")
    token = kubectl.ok("create", "token", "bot").strip()
    forged = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
    code, status = _whoami(cluster, forged)
    assert code == 401
    assert status["message"] == (
        "Unauthorized: the ServiceAccount token for default/bot was not signed by this cluster (a token of "
        "another cluster, or of an earlier one)"
    )
    assert forged not in status["message"]
    kubectl.ok("delete", "serviceaccount", "bot")
    code, status = _whoami(cluster, token)
    assert code == 401 and "that ServiceAccount was deleted" in status["message"]
    denied = kubectl.run("get", "pods", "--token", token)
    assert denied.returncode != 0 and "Unauthorized" in denied.stderr


def test_impersonating_groups_without_a_user_is_refused(cluster: Cluster) -> None:
    headers = {"Authorization": f"Bearer {cluster.token}", "Impersonate-Group": "system:masters"}
    code, status = _request(cluster, "/api/v1/namespaces", headers)
    assert code == 500 and status["reason"] == "InternalError"
    assert "without impersonating a user" in status["message"]
    code, status = _request(
        cluster, "/api/v1/namespaces", {"Authorization": f"Bearer {cluster.token}", "Impersonate-Uid": "1234"}
    )
    assert code == 500 and "requested [impersonate-uid] without impersonating a user" in status["message"]
    ok, _ = _request(cluster, "/api/v1/namespaces", {**headers, "Impersonate-User": "jane"})
    assert ok == 200  # with a user, the groups asked for are jane's (system:masters may list namespaces)


def test_token_review_says_why_a_token_failed(kubectl: Kubectl, k8s: Any) -> None:
    review = k8s_client.AuthenticationV1Api(k8s).create_token_review({"spec": {"token": "nope"}})
    assert review.status.authenticated is not True
    assert "neither this cluster's admin token nor a ServiceAccount token" in review.status.error
