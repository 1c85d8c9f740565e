"""RBAC decisions, rules reviews and 403 wording match a real API server's."""

from __future__ import annotations

from typing import Any

import pytest

from berth.cluster import rbac

SA = rbac.service_account_user("team", "runner")
SA_GROUPS = rbac.service_account_groups("team")
G = "rbac.authorization.k8s.io"


def role(name: str, namespace: str, *rules: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "Role", "metadata": {"name": name, "namespace": namespace}, "rules": list(rules)}


def cluster_role(
    name: str,
    *rules: dict[str, Any],
    labels: dict[str, str] | None = None,
    aggregate: dict[str, str] | None = None,
) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "kind": "ClusterRole",
        "metadata": {"name": name, "labels": labels or {}},
        "rules": list(rules),
    }
    if aggregate is not None:
        obj["aggregationRule"] = {"clusterRoleSelectors": [{"matchLabels": aggregate}]}
    return obj


def binding(
    kind: str, name: str, role_kind: str, role_name: str, *subjects: dict[str, Any], namespace: str = ""
) -> dict[str, Any]:
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {
        "kind": kind,
        "metadata": meta,
        "roleRef": {"apiGroup": G, "kind": role_kind, "name": role_name},
        "subjects": list(subjects),
    }


def sa_subject(name: str = "runner", namespace: str | None = "team") -> dict[str, Any]:
    return {"kind": "ServiceAccount", "name": name, **({"namespace": namespace} if namespace else {})}


POLICY = rbac.Authorizer(
    roles=[
        role(
            "pod-reader",
            "team",
            {"apiGroups": [""], "resources": ["pods", "pods/log"], "verbs": ["get", "list"]},
        ),
        role(
            "one-cm",
            "team",
            {
                "apiGroups": [""],
                "resources": ["configmaps"],
                "resourceNames": ["settings"],
                "verbs": ["get", "update"],
            },
        ),
        role("scaler", "team", {"apiGroups": ["apps"], "resources": ["*/scale"], "verbs": ["patch"]}),
    ],
    cluster_roles=[
        cluster_role(
            "node-reader", {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]}
        ),
        cluster_role("binder", {"apiGroups": [""], "resources": ["pods/binding"], "verbs": ["create"]}),
        cluster_role("metrics", {"nonResourceURLs": ["/metrics", "/logs/*"], "verbs": ["get"]}),
        cluster_role("lease-all", {"apiGroups": ["coordination.k8s.io"], "resources": ["*"], "verbs": ["*"]}),
        cluster_role("aggregated", aggregate={"team/agg": "true"}),
        cluster_role(
            "agg-part",
            {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["create"]},
            labels={"team/agg": "true"},
        ),
    ],
    role_bindings=[
        binding("RoleBinding", "rb-pods", "Role", "pod-reader", sa_subject(namespace=None), namespace="team"),
        binding("RoleBinding", "rb-cm", "Role", "one-cm", sa_subject(), namespace="team"),
        binding(
            "RoleBinding",
            "rb-scale",
            "Role",
            "scaler",
            {"kind": "Group", "name": "system:serviceaccounts:team"},
            namespace="team",
        ),
        binding("RoleBinding", "rb-leases", "ClusterRole", "lease-all", sa_subject(), namespace="team"),
        binding("RoleBinding", "rb-agg", "ClusterRole", "aggregated", sa_subject(), namespace="team"),
        binding(
            "RoleBinding",
            "rb-bob",
            "Role",
            "pod-reader",
            {"kind": "User", "apiGroup": G, "name": "bob"},
            namespace="team",
        ),
    ],
    cluster_role_bindings=[
        binding("ClusterRoleBinding", "crb-nodes", "ClusterRole", "node-reader", sa_subject()),
        binding("ClusterRoleBinding", "crb-bind", "ClusterRole", "binder", sa_subject()),
        binding(
            "ClusterRoleBinding", "crb-metrics", "ClusterRole", "metrics", {"kind": "Group", "name": "ops"}
        ),
    ],
)


@pytest.mark.parametrize(
    ("verb", "group", "resource", "sub", "ns", "name", "allowed"),
    [
        pytest.param("list", "", "pods", "", "team", "", True, id="role-in-namespace"),
        pytest.param("list", "", "pods", "", "other", "", False, id="role-not-in-other-namespace"),
        pytest.param("delete", "", "pods", "", "team", "p", False, id="verb-not-granted"),
        pytest.param("get", "", "pods", "log", "team", "p", True, id="subresource-rule"),
        pytest.param("get", "", "pods", "exec", "team", "p", False, id="other-subresource"),
        pytest.param("get", "", "configmaps", "", "team", "settings", True, id="resource-name-match"),
        pytest.param("get", "", "configmaps", "", "team", "other", False, id="resource-name-mismatch"),
        pytest.param("list", "", "configmaps", "", "team", "", False, id="resource-names-deny-list"),
        pytest.param("list", "", "nodes", "", "", "", True, id="cluster-role-binding-cluster-scope"),
        pytest.param("list", "", "nodes", "", "team", "", True, id="cluster-role-binding-any-namespace"),
        pytest.param("create", "", "pods", "binding", "anywhere", "p", True, id="pods-binding"),
        pytest.param("create", "", "pods", "", "anywhere", "", False, id="binding-rule-is-not-pods"),
        pytest.param(
            "patch", "apps", "deployments", "scale", "team", "web", True, id="star-slash-subresource-group"
        ),
        pytest.param("patch", "apps", "deployments", "", "team", "web", False, id="star-scale-not-parent"),
        pytest.param("delete", "coordination.k8s.io", "leases", "", "team", "l", True, id="wildcards"),
        pytest.param(
            "delete", "coordination.k8s.io", "leases", "", "", "l", False, id="rolebinding-no-cluster-scope"
        ),
        pytest.param("get", "apps", "pods", "", "team", "", False, id="api-group-must-match"),
        pytest.param("create", "batch", "jobs", "", "team", "", True, id="aggregated-cluster-role"),
    ],
)
def test_service_account_decisions(
    verb: str, group: str, resource: str, sub: str, ns: str, name: str, allowed: bool
) -> None:
    decision = POLICY.allowed(SA, SA_GROUPS, verb, group, resource, sub, ns, name)
    assert decision.allowed is allowed


def test_allow_reason_names_the_binding() -> None:
    ok, reason = POLICY.allowed(SA, SA_GROUPS, "list", "", "pods", "", "team", "")
    assert ok
    assert (
        reason
        == 'RBAC: allowed by RoleBinding "rb-pods/team" of Role "pod-reader" to ServiceAccount "runner/team"'
    )
    ok, reason = POLICY.allowed(SA, SA_GROUPS, "get", "", "nodes", "", "", "n1")
    assert reason == (
        'RBAC: allowed by ClusterRoleBinding "crb-nodes" of ClusterRole "node-reader" to ServiceAccount "runner/team"'
    )


@pytest.mark.parametrize(
    ("user", "groups", "allowed"),
    [
        ("bob", [], True),
        ("alice", [], False),
        ("alice", ["system:masters"], True),
        (rbac.service_account_user("other", "runner"), rbac.service_account_groups("other"), False),
    ],
    ids=["user-subject", "unbound-user", "superuser-group", "same-sa-name-other-namespace"],
)
def test_subjects(user: str, groups: list[str], allowed: bool) -> None:
    assert POLICY.allowed(user, groups, "get", "", "pods", "", "team", "p").allowed is allowed


@pytest.mark.parametrize(
    ("path", "groups", "allowed"),
    [
        ("/metrics", ["ops"], True),
        ("/logs/kubelet.log", ["ops"], True),
        ("/logs", ["ops"], False),
        ("/metrics", ["dev"], False),
    ],
    ids=["exact", "trailing-star", "star-needs-prefix", "not-bound"],
)
def test_non_resource_urls(path: str, groups: list[str], allowed: bool) -> None:
    assert POLICY.allowed_non_resource("u", groups, "get", path).allowed is allowed


def test_missing_role_is_the_denial_reason_and_makes_review_incomplete() -> None:
    authz = rbac.Authorizer(
        cluster_role_bindings=[binding("ClusterRoleBinding", "b", "ClusterRole", "ghost", sa_subject())]
    )
    decision = authz.allowed(SA, SA_GROUPS, "get", "", "pods", "", "team", "")
    assert decision == rbac.Decision(False, 'RBAC: clusterrole.rbac.authorization.k8s.io "ghost" not found')
    review = authz.rules_review(SA, SA_GROUPS, "team")
    assert review["incomplete"] is True
    assert review["evaluationError"] == 'clusterrole.rbac.authorization.k8s.io "ghost" not found'


def test_aggregation_is_transitive_and_cycle_safe() -> None:
    authz = rbac.Authorizer(
        cluster_roles=[
            cluster_role("top", aggregate={"to-top": "true"}),
            cluster_role("middle", labels={"to-top": "true"}, aggregate={"to-middle": "true"}),
            cluster_role(
                "leaf",
                {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]},
                labels={"to-middle": "true"},
            ),
            cluster_role(
                "loop", labels={"to-top": "true", "to-middle": "true"}, aggregate={"to-top": "true"}
            ),
        ],
        cluster_role_bindings=[binding("ClusterRoleBinding", "b", "ClusterRole", "top", sa_subject())],
    )
    assert authz.allowed(SA, SA_GROUPS, "get", "", "secrets", "", "team", "s").allowed


def test_rules_review_lists_applicable_rules() -> None:
    review = POLICY.rules_review(SA, SA_GROUPS, "team")
    assert review["incomplete"] is False
    assert {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods", "pods/log"]} in review[
        "resourceRules"
    ]
    assert {
        "verbs": ["get", "update"],
        "apiGroups": [""],
        "resources": ["configmaps"],
        "resourceNames": ["settings"],
    } in review["resourceRules"]
    assert {"verbs": ["create"], "apiGroups": ["batch"], "resources": ["jobs"]} in review["resourceRules"]
    assert review["nonResourceRules"] == []
    other = POLICY.rules_review(SA, SA_GROUPS, "other")
    assert {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods", "pods/log"]} not in other[
        "resourceRules"
    ]


def test_access_review_spec() -> None:
    spec = {
        "resourceAttributes": {"namespace": "team", "verb": "get", "resource": "pods", "subresource": "log"}
    }
    status = POLICY.access_review(SA, SA_GROUPS, spec)
    assert status["allowed"] is True and status["reason"].startswith("RBAC: allowed by RoleBinding")
    assert POLICY.access_review(
        SA, SA_GROUPS, {"nonResourceAttributes": {"path": "/metrics", "verb": "get"}}
    ) == {"allowed": False}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            ("system:serviceaccount:ns:sa", "list", "pods", "", "", "ns", ""),
            'pods is forbidden: User "system:serviceaccount:ns:sa" cannot list resource "pods" in API group "" '
            'in the namespace "ns"',
            id="namespaced-list",
        ),
        pytest.param(
            ("u", "get", "nodes", "", "", "", "n1"),
            'nodes "n1" is forbidden: User "u" cannot get resource "nodes" in API group "" at the cluster scope',
            id="cluster-scope-named",
        ),
        pytest.param(
            ("u", "create", "pods", "", "binding", "ns", "p"),
            'pods "p" is forbidden: User "u" cannot create resource "pods/binding" in API group "" in the '
            'namespace "ns"',
            id="subresource",
        ),
        pytest.param(
            ("u", "list", "deployments", "apps", "", "ns", ""),
            'deployments.apps is forbidden: User "u" cannot list resource "deployments" in API group "apps" in '
            'the namespace "ns"',
            id="group",
        ),
    ],
)
def test_forbidden_messages(args: tuple[str, ...], message: str) -> None:
    assert rbac.forbidden_message(*args) == message
    err = rbac.forbidden_error(*args)
    assert err.code == 403 and err.reason == "Forbidden" and err.message == message


def test_forbidden_error_details_and_reason_suffix() -> None:
    err = rbac.forbidden_error(
        "u",
        "get",
        "deployments",
        "apps",
        "",
        "ns",
        "web",
        reason='RBAC: clusterrole.rbac.authorization.k8s.io "x" not found',
    )
    assert err.status()["details"] == {"name": "web", "group": "apps", "kind": "deployments"}
    assert err.message.endswith(': RBAC: clusterrole.rbac.authorization.k8s.io "x" not found')


def test_forbidden_non_resource() -> None:
    err = rbac.forbidden_non_resource_error("u", "get", "/metrics")
    assert err.message == 'forbidden: User "u" cannot get path "/metrics"' and err.code == 403


@pytest.mark.parametrize(
    ("user", "parsed"),
    [("system:serviceaccount:ns:sa", ("ns", "sa")), ("admin", None), ("system:serviceaccount:ns", None)],
    ids=["sa", "plain-user", "malformed"],
)
def test_parse_service_account(user: str, parsed: tuple[str, str] | None) -> None:
    assert rbac.parse_service_account(user) == parsed


def test_bootstrap_policy_gives_authenticated_users_discovery_and_can_i_and_aggregates_view() -> None:
    policy = rbac.bootstrap_policy()
    authz = rbac.Authorizer(
        cluster_roles=[o for o in policy if o["kind"] == "ClusterRole"],
        cluster_role_bindings=[o for o in policy if o["kind"] == "ClusterRoleBinding"]
        + [binding("ClusterRoleBinding", "v", "ClusterRole", "view", sa_subject())],
    )
    assert authz.allowed_non_resource(SA, SA_GROUPS, "get", "/apis/apps/v1").allowed
    assert authz.allowed(SA, SA_GROUPS, "create", "authorization.k8s.io", "selfsubjectaccessreviews").allowed
    assert authz.allowed(SA, SA_GROUPS, "list", "apps", "deployments", "", "team").allowed
    assert not authz.allowed(SA, SA_GROUPS, "delete", "apps", "deployments", "", "team", "web").allowed
    assert not authz.allowed("anon", ["system:unauthenticated"], "get", "", "pods", "", "team").allowed
    assert authz.allowed_non_resource("anon", ["system:unauthenticated"], "get", "/healthz").allowed
    admin = rbac.Authorizer(
        cluster_roles=[o for o in policy if o["kind"] == "ClusterRole"],
        cluster_role_bindings=[binding("ClusterRoleBinding", "a", "ClusterRole", "admin", sa_subject())],
    )
    assert admin.allowed(SA, SA_GROUPS, "create", G, "rolebindings", "", "team").allowed
    assert admin.allowed(SA, SA_GROUPS, "delete", "apps", "deployments", "", "team", "web").allowed
    assert admin.allowed(SA, SA_GROUPS, "watch", "", "pods", "", "team").allowed


ESC = rbac.Authorizer(
    roles=[
        role(
            "rbac-editor",
            "team",
            {"apiGroups": [""], "resources": ["pods", "configmaps"], "verbs": ["get", "list"]},
            {"apiGroups": [G], "resources": ["roles", "rolebindings"], "verbs": ["create", "update"]},
        )
    ],
    cluster_roles=[
        cluster_role(
            "binder",
            {"apiGroups": [G], "resources": ["clusterroles"], "verbs": ["bind"], "resourceNames": ["view"]},
        ),
        cluster_role("view", {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get"]}),
        cluster_role("escalator", {"apiGroups": [G], "resources": ["roles"], "verbs": ["escalate"]}),
    ],
    role_bindings=[
        binding("RoleBinding", "rb", "Role", "rbac-editor", sa_subject(), namespace="team"),
        binding("RoleBinding", "rb-bind", "ClusterRole", "binder", sa_subject(), namespace="team"),
    ],
)


def new_role(*rules: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "Role", "metadata": {"name": "new", "namespace": "team"}, "rules": list(rules)}


def test_role_granting_only_held_permissions_is_allowed() -> None:
    ok = new_role({"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]})
    assert ESC.check_role_write(SA, SA_GROUPS, ok, "team") is None


def test_role_escalation_is_forbidden_with_upstream_message() -> None:
    bad = new_role({"apiGroups": [""], "resources": ["pods", "secrets"], "verbs": ["get", "list", "delete"]})
    err = ESC.check_role_write(SA, SA_GROUPS, bad, "team")
    assert err is not None and err.code == 403
    assert err.message == (
        'roles.rbac.authorization.k8s.io "new" is forbidden: user "system:serviceaccount:team:runner" '
        '(groups=["system:serviceaccounts" "system:serviceaccounts:team" "system:authenticated"]) is attempting to '
        "grant RBAC permissions not currently held:\n"
        '{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}\n'
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list" "delete"]}'
    )


def test_escalate_verb_and_superusers_skip_the_check() -> None:
    bad = new_role({"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]})
    assert ESC.check_role_write("root", ["system:masters"], bad, "team") is None
    escalator = rbac.Authorizer(
        cluster_roles=ESC.cluster_roles,
        role_bindings=[
            binding("RoleBinding", "e", "ClusterRole", "escalator", sa_subject(), namespace="team")
        ],
    )
    assert escalator.check_role_write(SA, SA_GROUPS, bad, "team") is None


def test_aggregation_rule_needs_full_authority() -> None:
    agg = {
        "kind": "ClusterRole",
        "metadata": {"name": "agg"},
        "aggregationRule": {"clusterRoleSelectors": []},
    }
    err = ESC.check_role_write(SA, SA_GROUPS, agg)
    assert err is not None and err.message.endswith(
        "must have cluster-admin privileges to use the aggregationRule"
    )


@pytest.mark.parametrize(
    ("role_ref", "allowed"),
    [
        pytest.param({"kind": "Role", "name": "rbac-editor"}, True, id="holds-all-rules"),
        pytest.param({"kind": "ClusterRole", "name": "view"}, True, id="bind-verb-on-that-role"),
        pytest.param({"kind": "ClusterRole", "name": "escalator"}, False, id="would-escalate"),
        pytest.param({"kind": "ClusterRole", "name": "ghost"}, False, id="missing-role"),
    ],
)
def test_binding_escalation(role_ref: dict[str, str], allowed: bool) -> None:
    rb = binding(
        "RoleBinding", "new-rb", role_ref["kind"], role_ref["name"], sa_subject("other"), namespace="team"
    )
    err = ESC.check_binding_write(SA, SA_GROUPS, rb, "team")
    assert (err is None) is allowed
    if err is not None:
        assert err.code == 403 and err.message.startswith(
            'rolebindings.rbac.authorization.k8s.io "new-rb" is forbidden'
        )


@pytest.mark.parametrize(
    ("owner", "servant", "missing"),
    [
        pytest.param(
            [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}],
            [{"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["delete"]}],
            [],
            id="wildcards",
        ),
        pytest.param(
            [{"apiGroups": [""], "resources": ["*/status"], "verbs": ["update"]}],
            [{"apiGroups": [""], "resources": ["pods/status"], "verbs": ["update"]}],
            [],
            id="star-subresource",
        ),
        pytest.param(
            [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"], "resourceNames": ["a"]}],
            [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}],
            ['{APIGroups:[""], Resources:["pods"], Verbs:["get"]}'],
            id="named-does-not-cover-all",
        ),
        pytest.param(
            [{"nonResourceURLs": ["/logs/*"], "verbs": ["get"]}],
            [{"nonResourceURLs": ["/logs/a", "/metrics"], "verbs": ["get"]}],
            ['{NonResourceURLs:["/metrics"], Verbs:["get"]}'],
            id="non-resource",
        ),
    ],
)
def test_rule_coverage(
    owner: list[dict[str, Any]], servant: list[dict[str, Any]], missing: list[str]
) -> None:
    left = rbac.uncovered([rbac.Rule.from_dict(r) for r in owner], [rbac.Rule.from_dict(r) for r in servant])
    assert sorted(rbac.compact_string(r) for r in rbac.compact_rules(left)) == missing
