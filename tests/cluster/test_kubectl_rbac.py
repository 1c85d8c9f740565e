"""RBAC enforced for ServiceAccount identities, with upstream's 403 wording, through the real kubectl."""

from __future__ import annotations

import textwrap

from .conftest import Kubectl

ROLE = textwrap.dedent(
    """\
    apiVersion: rbac.authorization.k8s.io/v1
    kind: Role
    metadata: {name: pod-reader, namespace: default}
    rules:
    - {apiGroups: [""], resources: [pods], verbs: [get, list, watch]}
    ---
    apiVersion: rbac.authorization.k8s.io/v1
    kind: RoleBinding
    metadata: {name: bot-reads-pods, namespace: default}
    roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: pod-reader}
    subjects:
    - {kind: ServiceAccount, name: bot, namespace: default}
    """
)


def test_service_account_is_denied_until_bound(kubectl: Kubectl) -> None:
    kubectl.ok("create", "serviceaccount", "bot")
    token = kubectl.ok("create", "token", "bot").strip()
    denied = kubectl.run("get", "pods", "--token", token)
    assert denied.returncode != 0
    assert (
        'pods is forbidden: User "system:serviceaccount:default:bot" cannot list resource "pods" in API group "" '
        'in the namespace "default"'
    ) in denied.stderr
    kubectl.ok("apply", "-f", "-", input=ROLE)
    allowed = kubectl.run("get", "pods", "--token", token)
    assert allowed.returncode == 0 and "No resources found" in allowed.stderr
    still = kubectl.run("create", "configmap", "x", "--token", token)
    assert still.returncode != 0 and "cannot create resource" in still.stderr


def test_auth_can_i_as_a_service_account(kubectl: Kubectl) -> None:
    kubectl.ok("create", "serviceaccount", "bot")
    kubectl.ok("apply", "-f", "-", input=ROLE)
    sa = "system:serviceaccount:default:bot"
    assert kubectl.run("auth", "can-i", "list", "pods", "--as", sa).stdout.strip() == "yes"
    no = kubectl.run("auth", "can-i", "delete", "pods", "--as", sa)
    assert no.stdout.strip() == "no" and no.returncode == 1
    listing = kubectl.ok("auth", "can-i", "--list", "--as", sa)
    assert "pods" in listing and "selfsubjectaccessreviews.authorization.k8s.io" in listing


def test_anonymous_and_bad_tokens_are_unauthorized(kubectl: Kubectl) -> None:
    proc = kubectl.run("get", "pods", "--token", "not-a-token")
    assert proc.returncode != 0
    assert "Unauthorized" in proc.stderr or "provide credentials" in proc.stderr


def test_exec_needs_create_on_pods_exec(kubectl: Kubectl) -> None:
    # kubectl exec is a websocket GET; kube-apiserver 1.35 authorizes it as create on pods/exec, so a pod reader
    # is refused before the embedded cluster says no container runs
    kubectl.ok("create", "serviceaccount", "bot")
    kubectl.ok("apply", "-f", "-", input=ROLE)
    kubectl.ok("run", "app", "--image=nginx:1.27")
    token = kubectl.ok("create", "token", "bot").strip()
    denied = kubectl.run("exec", "app", "--token", token, "--", "ls")
    assert denied.returncode != 0
    assert 'cannot create resource "pods/exec" in API group "" in the namespace "default"' in denied.stderr
