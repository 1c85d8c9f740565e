"""RBAC authorization over Roles, ClusterRoles and their bindings, with upstream's answers and 403 wording.

Why: a scheduler or operator started with too few permissions must fail against the embedded cluster exactly as on
a real one -- same decision, same ``... is forbidden: User "system:serviceaccount:ns:sa" cannot list resource
"pods" in API group "" in the namespace "ns"`` message -- and ``kubectl auth can-i [--list]`` must answer truly.

The rules follow k8s.io/kubernetes ``plugin/pkg/auth/authorizer/rbac``:

- ClusterRoleBindings are consulted first, then RoleBindings of the request's namespace (RoleBindings never
  grant cluster-scoped or non-resource requests). The first rule that allows wins; there is no deny.
- A rule matches when verb, API group, resource (``pods``, ``pods/log``, ``*/scale``, ``*``) and, when the rule
  names any, the object name all match; non-resource rules match a path exactly or by a trailing ``*``.
- A ClusterRole with an ``aggregationRule`` has the rules of every ClusterRole its ``clusterRoleSelectors``
  match (what upstream's aggregation controller writes into it), followed transitively.
- ServiceAccount subjects name ``system:serviceaccount:<namespace>:<name>`` (the binding's namespace when the
  subject has none); members of ``system:masters`` are allowed everything, as the API server's privileged-group
  authorizer does.
- Writing a Role/ClusterRole or a binding must not escalate: the writer must hold every permission granted (or
  have the ``escalate`` / ``bind`` verb), checked by :meth:`Authorizer.check_role_write` and
  :meth:`Authorizer.check_binding_write` with upstream's ``attempting to grant RBAC permissions not currently
  held`` message.
- A binding whose role does not exist grants nothing and is reported in the denial reason (``RBAC:
  clusterrole.rbac.authorization.k8s.io "x" not found``), and makes a rules review ``incomplete``.

:func:`bootstrap_policy` returns the default ClusterRoles/ClusterRoleBindings a real API server creates (discovery,
basic-user, public-info-viewer, cluster-admin, and the aggregated admin/edit/view roles), so an authenticated
ServiceAccount can do discovery and ``auth can-i`` like on a real cluster.

Pure: plain dicts in, decisions out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from berth.cluster import errors
from berth.kube import selectors

Obj = dict[str, Any]

RBAC_GROUP = "rbac.authorization.k8s.io"
SUPERUSER_GROUP = "system:masters"
AUTHENTICATED = "system:authenticated"
UNAUTHENTICATED = "system:unauthenticated"
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"
SERVICE_ACCOUNTS_GROUP = "system:serviceaccounts"


def service_account_user(namespace: str, name: str) -> str:
    """``system:serviceaccount:<ns>:<name>``."""
    return f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}"


def service_account_groups(namespace: str) -> list[str]:
    """The groups a ServiceAccount token authenticates with."""
    return [SERVICE_ACCOUNTS_GROUP, f"{SERVICE_ACCOUNTS_GROUP}:{namespace}", AUTHENTICATED]


def parse_service_account(user: str) -> tuple[str, str] | None:
    """``system:serviceaccount:ns:sa`` -> ``("ns", "sa")``; None for other users."""
    if not user.startswith(SERVICE_ACCOUNT_PREFIX):
        return None
    namespace, sep, name = user[len(SERVICE_ACCOUNT_PREFIX) :].partition(":")
    return (namespace, name) if sep and namespace and name and ":" not in name else None


@dataclass(frozen=True)
class Rule:
    """One PolicyRule."""

    verbs: tuple[str, ...] = ()
    api_groups: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()
    non_resource_urls: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, rule: Mapping[str, Any]) -> Rule:
        def strs(key: str) -> tuple[str, ...]:
            return tuple(str(v) for v in rule.get(key) or ())

        return cls(
            strs("verbs"),
            strs("apiGroups"),
            strs("resources"),
            strs("resourceNames"),
            strs("nonResourceURLs"),
        )

    def allows_resource(self, verb: str, api_group: str, resource: str, subresource: str, name: str) -> bool:
        combined = f"{resource}/{subresource}" if subresource else resource
        return (
            _verb_matches(self.verbs, verb)
            and ("*" in self.api_groups or api_group in self.api_groups)
            and _resource_matches(self.resources, combined, subresource)
            and (not self.resource_names or name in self.resource_names)
        )

    def allows_path(self, verb: str, path: str) -> bool:
        return _verb_matches(self.verbs, verb) and any(
            url == "*" or url == path or (url.endswith("*") and path.startswith(url.rstrip("*")))
            for url in self.non_resource_urls
        )

    def resource_rule(self) -> dict[str, Any]:
        """As a ``ResourceRule`` of a SelfSubjectRulesReview."""
        out: dict[str, Any] = {"verbs": list(self.verbs)}
        if self.api_groups:
            out["apiGroups"] = list(self.api_groups)
        if self.resources:
            out["resources"] = list(self.resources)
        if self.resource_names:
            out["resourceNames"] = list(self.resource_names)
        return out

    def non_resource_rule(self) -> dict[str, Any]:
        return {"verbs": list(self.verbs), "nonResourceURLs": list(self.non_resource_urls)}


def _verb_matches(verbs: Sequence[str], verb: str) -> bool:
    return "*" in verbs or verb in verbs


def _resource_matches(resources: Sequence[str], combined: str, subresource: str) -> bool:
    for candidate in resources:
        if candidate in ("*", combined):
            return True
        if subresource and candidate == f"*/{subresource}":
            return True
    return False


@dataclass(frozen=True)
class Decision:
    """An authorization answer; ``reason`` is upstream's (``RBAC: allowed by ...`` or missing-role errors)."""

    allowed: bool
    reason: str = ""

    def __iter__(self) -> Any:  # lets callers write ``ok, reason = authorizer.allowed(...)``
        return iter((self.allowed, self.reason))


@dataclass(frozen=True)
class _Binding:
    kind: str  # RoleBinding | ClusterRoleBinding
    name: str
    namespace: str
    role_kind: str  # Role | ClusterRole
    role_name: str
    subjects: tuple[Mapping[str, Any], ...]

    def subject_for(self, user: str, groups: Iterable[str]) -> Mapping[str, Any] | None:
        group_set = set(groups)
        for subject in self.subjects:
            kind = subject.get("kind")
            name = str(subject.get("name") or "")
            if kind == "User" and name == user:
                return subject
            if kind == "Group" and name in group_set:
                return subject
            if kind == "ServiceAccount":
                namespace = str(subject.get("namespace") or self.namespace)
                if user == service_account_user(namespace, name):
                    return subject
        return None

    def describe(self, subject: Mapping[str, Any]) -> str:
        """Upstream ``clusterRoleBindingDescriber`` / ``roleBindingDescriber``."""
        name = self.name if self.kind == "ClusterRoleBinding" else f"{self.name}/{self.namespace}"
        return (
            f"{self.kind} {errors.go_quote(name)} of {self.role_kind} {errors.go_quote(self.role_name)} "
            f"to {_describe_subject(subject, self.namespace)}"
        )


def _describe_subject(subject: Mapping[str, Any], binding_namespace: str) -> str:
    kind = str(subject.get("kind") or "")
    name = str(subject.get("name") or "")
    if kind == "ServiceAccount":
        namespace = str(subject.get("namespace") or binding_namespace)
        return f"{kind} {errors.go_quote(name + '/' + namespace)}"
    return f"{kind} {errors.go_quote(name)}"


def _binding(obj: Mapping[str, Any], kind: str) -> _Binding:
    meta = obj.get("metadata") or {}
    ref = obj.get("roleRef") or {}
    return _Binding(
        kind=kind,
        name=str(meta.get("name") or ""),
        namespace=str(meta.get("namespace") or "") if kind == "RoleBinding" else "",
        role_kind=str(ref.get("kind") or ""),
        role_name=str(ref.get("name") or ""),
        subjects=tuple(s for s in obj.get("subjects") or () if isinstance(s, Mapping)),
    )


@dataclass
class Authorizer:
    """Decides requests from a snapshot of the RBAC objects (lists of plain dicts as stored).

    Build a new one whenever the RBAC objects change; evaluation does not mutate it.
    """

    roles: Sequence[Mapping[str, Any]] = ()
    cluster_roles: Sequence[Mapping[str, Any]] = ()
    role_bindings: Sequence[Mapping[str, Any]] = ()
    cluster_role_bindings: Sequence[Mapping[str, Any]] = ()
    superuser_groups: tuple[str, ...] = (SUPERUSER_GROUP,)
    _roles: dict[tuple[str, str], tuple[Rule, ...]] = field(init=False, repr=False)
    _cluster_roles: dict[str, tuple[Rule, ...]] = field(init=False, repr=False)
    _rb: dict[str, list[_Binding]] = field(init=False, repr=False)
    _crb: list[_Binding] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._roles = {}
        for role in self.roles:
            meta = role.get("metadata") or {}
            key = (str(meta.get("namespace") or ""), str(meta.get("name") or ""))
            self._roles[key] = tuple(Rule.from_dict(r) for r in role.get("rules") or ())
        self._cluster_roles = _aggregate(self.cluster_roles)
        self._rb = {}
        for rb in self.role_bindings:
            b = _binding(rb, "RoleBinding")
            self._rb.setdefault(b.namespace, []).append(b)
        self._crb = [_binding(crb, "ClusterRoleBinding") for crb in self.cluster_role_bindings]

    # -- rule lookup -----------------------------------------------------------------------------------------

    def _rules_of(self, binding: _Binding) -> tuple[Rule, ...] | str:
        """The bound role's rules, or upstream's not-found error text."""
        if binding.role_kind == "ClusterRole":
            rules = self._cluster_roles.get(binding.role_name)
            if rules is None:
                return f"clusterrole.{RBAC_GROUP} {errors.go_quote(binding.role_name)} not found"
            return rules
        if binding.role_kind == "Role" and binding.kind == "RoleBinding":
            found = self._roles.get((binding.namespace, binding.role_name))
            if found is None:
                return f"role.{RBAC_GROUP} {errors.go_quote(binding.role_name)} not found"
            return found
        return f"unsupported roleRef kind {binding.role_kind!r} in {binding.kind} {binding.name!r}"

    def _visit(
        self, user: str, groups: Sequence[str], namespace: str
    ) -> Iterable[tuple[_Binding, Mapping[str, Any], tuple[Rule, ...] | str]]:
        for b in self._crb:
            subject = b.subject_for(user, groups)
            if subject is not None:
                yield b, subject, self._rules_of(b)
        if namespace:
            for b in self._rb.get(namespace, ()):
                subject = b.subject_for(user, groups)
                if subject is not None:
                    yield b, subject, self._rules_of(b)

    # -- decisions -------------------------------------------------------------------------------------------

    def allowed(
        self,
        user: str,
        groups: Sequence[str],
        verb: str,
        api_group: str,
        resource: str,
        subresource: str = "",
        namespace: str = "",
        name: str = "",
    ) -> Decision:
        """May ``user`` (in ``groups``) do ``verb`` on this resource? Unpacks as ``(allowed, reason)``."""
        if any(g in self.superuser_groups for g in groups):
            return Decision(True, "")
        problems: list[str] = []
        for binding, subject, rules in self._visit(user, groups, namespace):
            if isinstance(rules, str):
                problems.append(rules)
                continue
            if any(r.allows_resource(verb, api_group, resource, subresource, name) for r in rules):
                return Decision(True, f"RBAC: allowed by {binding.describe(subject)}")
        return Decision(False, _denial_reason(problems))

    def allowed_non_resource(self, user: str, groups: Sequence[str], verb: str, path: str) -> Decision:
        """May ``user`` do ``verb`` (get, post...) on the non-resource URL ``path`` (``/healthz``, ``/api``)?"""
        if any(g in self.superuser_groups for g in groups):
            return Decision(True, "")
        problems: list[str] = []
        for binding, subject, rules in self._visit(user, groups, ""):
            if isinstance(rules, str):
                problems.append(rules)
                continue
            if any(r.allows_path(verb, path) for r in rules):
                return Decision(True, f"RBAC: allowed by {binding.describe(subject)}")
        return Decision(False, _denial_reason(problems))

    def rules_review(self, user: str, groups: Sequence[str], namespace: str) -> dict[str, Any]:
        """The ``status`` of a SelfSubjectRulesReview: every rule that applies to the user in ``namespace``."""
        resource_rules: list[dict[str, Any]] = []
        non_resource_rules: list[dict[str, Any]] = []
        problems: list[str] = []
        if any(g in self.superuser_groups for g in groups):
            resource_rules.append({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]})
            non_resource_rules.append({"verbs": ["*"], "nonResourceURLs": ["*"]})
        for _, _, rules in self._visit(user, groups, namespace):
            if isinstance(rules, str):
                problems.append(rules)
                continue
            for rule in rules:
                if rule.resources or rule.api_groups:
                    resource_rules.append(rule.resource_rule())
                if rule.non_resource_urls:
                    non_resource_rules.append(rule.non_resource_rule())
        status: dict[str, Any] = {
            "resourceRules": resource_rules,
            "nonResourceRules": non_resource_rules,
            "incomplete": bool(problems),
        }
        if problems:
            status["evaluationError"] = errors.aggregate(problems)
        return status

    def access_review(self, user: str, groups: Sequence[str], spec: Mapping[str, Any]) -> dict[str, Any]:
        """The ``status`` of a SelfSubjectAccessReview / SubjectAccessReview for its ``spec``."""
        attrs = spec.get("resourceAttributes")
        if isinstance(attrs, Mapping):
            decision = self.allowed(
                user,
                groups,
                str(attrs.get("verb") or ""),
                str(attrs.get("group") or ""),
                str(attrs.get("resource") or ""),
                str(attrs.get("subresource") or ""),
                str(attrs.get("namespace") or ""),
                str(attrs.get("name") or ""),
            )
        else:
            nra = spec.get("nonResourceAttributes") or {}
            decision = self.allowed_non_resource(
                user, groups, str(nra.get("verb") or ""), str(nra.get("path") or "")
            )
        status: dict[str, Any] = {"allowed": decision.allowed}
        if decision.reason:
            status["reason"] = decision.reason
        return status

    # -- escalation prevention -------------------------------------------------------------------------------

    def rules_for(self, user: str, groups: Sequence[str], namespace: str) -> tuple[list[Rule], list[str]]:
        """Every rule granted to the user in ``namespace`` (cluster-wide ones included), plus resolution errors."""
        if any(g in self.superuser_groups for g in groups):
            return list(FULL_AUTHORITY), []
        rules: list[Rule] = []
        problems: list[str] = []
        for _, _, found in self._visit(user, groups, namespace):
            if isinstance(found, str):
                problems.append(found)
            else:
                rules.extend(found)
        return rules, problems

    def _escalation(
        self, user: str, groups: Sequence[str], namespace: str, rules: Sequence[Rule]
    ) -> str | None:
        """Upstream ``ConfirmNoEscalation``: the error text when ``rules`` are not all held, else None."""
        owner, problems = self.rules_for(user, groups, namespace)
        missing = uncovered(owner, rules)
        if not missing:
            return None
        lines = sorted({compact_string(r) for r in compact_rules(missing)})
        quoted = "[" + " ".join(errors.go_quote(g) for g in groups) + "]"
        msg = (
            f"user {errors.go_quote(user)} (groups={quoted}) is attempting to grant RBAC permissions not currently "
            "held:\n" + "\n".join(lines)
        )
        if problems:
            msg += f"; resolution errors: [{', '.join(problems)}]"
        return msg

    def check_role_write(
        self, user: str, groups: Sequence[str], role: Mapping[str, Any], namespace: str = ""
    ) -> errors.ApiError | None:
        """Whether creating/updating this Role or ClusterRole escalates privileges (403 as upstream), else None.

        Allowed when the user holds every rule it grants, or may ``escalate`` the role; an ``aggregationRule``
        needs full authority, as upstream.
        """
        kind = str(role.get("kind") or "")
        resource = "clusterroles" if kind == "ClusterRole" else "roles"
        name = str((role.get("metadata") or {}).get("name") or "")
        ns = (
            ""
            if kind == "ClusterRole"
            else namespace or str((role.get("metadata") or {}).get("namespace") or "")
        )
        if any(g in self.superuser_groups for g in groups):
            return None
        if self.allowed(user, groups, "escalate", RBAC_GROUP, resource, "", ns, name).allowed:
            return None
        rules = [Rule.from_dict(r) for r in role.get("rules") or () if isinstance(r, Mapping)]
        problem = self._escalation(user, groups, ns, rules)
        aggregated = kind == "ClusterRole" and bool(role.get("aggregationRule"))
        if problem is None and aggregated and self._escalation(user, groups, ns, FULL_AUTHORITY) is not None:
            problem = "must have cluster-admin privileges to use the aggregationRule"
        return None if problem is None else errors.forbidden(resource, RBAC_GROUP, name, problem)

    def check_binding_write(
        self, user: str, groups: Sequence[str], binding: Mapping[str, Any], namespace: str = ""
    ) -> errors.ApiError | None:
        """Whether creating/updating this RoleBinding or ClusterRoleBinding escalates privileges, else None.

        Allowed when the user may ``bind`` the referenced role or already holds all of its rules (upstream
        ``BindingAuthorized`` then ``ConfirmNoEscalation``).
        """
        kind = str(binding.get("kind") or "")
        resource = "clusterrolebindings" if kind == "ClusterRoleBinding" else "rolebindings"
        name = str((binding.get("metadata") or {}).get("name") or "")
        ns = (
            ""
            if kind == "ClusterRoleBinding"
            else namespace or str((binding.get("metadata") or {}).get("namespace") or "")
        )
        if any(g in self.superuser_groups for g in groups):
            return None
        ref = binding.get("roleRef") or {}
        role_kind = str(ref.get("kind") or "")
        role_name = str(ref.get("name") or "")
        role_resource = "clusterroles" if role_kind == "ClusterRole" else "roles"
        if self.allowed(user, groups, "bind", RBAC_GROUP, role_resource, "", ns, role_name).allowed:
            return None
        target = _Binding(kind, name, ns, role_kind, role_name, ())
        rules = self._rules_of(target)
        if isinstance(rules, str):
            return errors.forbidden(resource, RBAC_GROUP, name, rules)
        problem = self._escalation(user, groups, ns, rules)
        return None if problem is None else errors.forbidden(resource, RBAC_GROUP, name, problem)


def _denial_reason(problems: Sequence[str]) -> str:
    return f"RBAC: {errors.aggregate(problems)}" if problems else ""


FULL_AUTHORITY = (
    Rule(verbs=("*",), api_groups=("*",), resources=("*",)),
    Rule(verbs=("*",), non_resource_urls=("*",)),
)


def breakdown(rule: Rule) -> list[Rule]:
    """Upstream ``BreakdownRule``: one rule per (group, resource, verb[, name]) and per (URL, verb)."""
    out: list[Rule] = []
    for group in rule.api_groups:
        for resource in rule.resources:
            for verb in rule.verbs:
                if rule.resource_names:
                    out.extend(Rule((verb,), (group,), (resource,), (n,)) for n in rule.resource_names)
                else:
                    out.append(Rule((verb,), (group,), (resource,)))
    for url in rule.non_resource_urls:
        for verb in rule.verbs:
            out.append(Rule((verb,), non_resource_urls=(url,)))
    return out


def _covers(owner: Rule, sub: Rule) -> bool:
    """Upstream ``ruleCovers`` for one broken-down rule."""
    verbs = "*" in owner.verbs or all(v in owner.verbs for v in sub.verbs)
    groups = "*" in owner.api_groups or all(g in owner.api_groups for g in sub.api_groups)
    resources = "*" in owner.resources or all(
        r in owner.resources or ("/" in r and f"*/{r.split('/', 1)[1]}" in owner.resources)
        for r in sub.resources
    )
    urls = all(
        any(
            o == "*" or o == u or (o.endswith("*") and u.startswith(o.rstrip("*")))
            for o in owner.non_resource_urls
        )
        for u in sub.non_resource_urls
    )
    if sub.resource_names:
        names = not owner.resource_names or all(n in owner.resource_names for n in sub.resource_names)
    else:
        names = not owner.resource_names
    return verbs and groups and resources and urls and names


def uncovered(owner: Sequence[Rule], servant: Iterable[Rule]) -> list[Rule]:
    """Upstream ``Covers``: the broken-down servant rules no owner rule covers."""
    return [sub for rule in servant for sub in breakdown(rule) if not any(_covers(o, sub) for o in owner)]


def compact_rules(rules: Sequence[Rule]) -> list[Rule]:
    """Upstream ``CompactRules``: simple rules on the same group/resource(/name) merged into one verb list."""
    out: list[Rule] = []
    simple: dict[tuple[str, str, tuple[str, ...]], Rule] = {}
    for rule in rules:
        is_simple = (
            len(rule.api_groups) == 1
            and len(rule.resources) == 1
            and len(rule.resource_names) <= 1
            and not rule.non_resource_urls
        )
        if not is_simple:
            out.append(rule)
            continue
        key = (rule.api_groups[0], rule.resources[0], rule.resource_names)
        if key in simple:
            prev = simple[key]
            simple[key] = Rule(prev.verbs + rule.verbs, prev.api_groups, prev.resources, prev.resource_names)
        else:
            simple[key] = rule
    return out + list(simple.values())


def compact_string(rule: Rule) -> str:
    """Upstream ``CompactString``: ``{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}``."""

    def q(values: Sequence[str]) -> str:
        return "[" + " ".join(errors.go_quote(v) for v in values) + "]"

    parts = []
    if rule.api_groups:
        parts.append(f"APIGroups:{q(rule.api_groups)}")
    if rule.resources:
        parts.append(f"Resources:{q(rule.resources)}")
    if rule.non_resource_urls:
        parts.append(f"NonResourceURLs:{q(rule.non_resource_urls)}")
    if rule.resource_names:
        parts.append(f"ResourceNames:{q(rule.resource_names)}")
    if rule.verbs:
        parts.append(f"Verbs:{q(rule.verbs)}")
    return "{" + ", ".join(parts) + "}"


def _aggregate(cluster_roles: Sequence[Mapping[str, Any]]) -> dict[str, tuple[Rule, ...]]:
    """Each ClusterRole's effective rules, aggregation rules followed transitively (cycles are cut)."""
    by_name: dict[str, Mapping[str, Any]] = {}
    for role in cluster_roles:
        by_name[str((role.get("metadata") or {}).get("name") or "")] = role
    done: dict[str, tuple[Rule, ...]] = {}

    def resolve(name: str, stack: frozenset[str]) -> tuple[Rule, ...]:
        if name in done:
            return done[name]
        role = by_name[name]
        rule_spec = role.get("aggregationRule")
        if not isinstance(rule_spec, Mapping):
            rules = tuple(Rule.from_dict(r) for r in role.get("rules") or ())
            done[name] = rules
            return rules
        collected: list[Rule] = []
        for selector in rule_spec.get("clusterRoleSelectors") or ():
            for other_name in sorted(by_name):
                if other_name == name or other_name in stack:
                    continue
                labels = (by_name[other_name].get("metadata") or {}).get("labels") or {}
                if selectors.label_selector_matches(selector, labels):
                    for rule in resolve(other_name, stack | {name}):
                        if rule not in collected:
                            collected.append(rule)
        result = tuple(collected)
        if not stack:
            done[name] = result
        return result

    return {name: resolve(name, frozenset()) for name in by_name}


# --------------------------------------------------------------------------------------------------------------
# 403 messages
# --------------------------------------------------------------------------------------------------------------


def forbidden_message(
    user: str,
    verb: str,
    resource: str,
    group: str,
    subresource: str = "",
    namespace: str = "",
    name: str = "",
    reason: str = "",
) -> str:
    """Upstream's 403 text for a resource request, e.g.

    ``pods is forbidden: User "system:serviceaccount:ns:sa" cannot list resource "pods" in API group "" in the
    namespace "ns"``; ``nodes "n1" is forbidden: ... at the cluster scope``.
    """
    target = f"{resource}/{subresource}" if subresource else resource
    why = f"User {errors.go_quote(user)} cannot {verb} resource {errors.go_quote(target)} in API group {errors.go_quote(group)}"
    why += f" in the namespace {errors.go_quote(namespace)}" if namespace else " at the cluster scope"
    if reason:
        why += f": {reason}"
    return errors.forbidden(resource, group, name, why).message


def forbidden_error(
    user: str,
    verb: str,
    resource: str,
    group: str,
    subresource: str = "",
    namespace: str = "",
    name: str = "",
    reason: str = "",
) -> errors.ApiError:
    """The 403 :class:`ApiError` for a denied resource request (details name the resource, as upstream)."""
    err = errors.forbidden(resource, group, name, "")
    err.message = forbidden_message(user, verb, resource, group, subresource, namespace, name, reason)
    err.args = (err.message,)
    return err


def forbidden_non_resource_error(user: str, verb: str, path: str, reason: str = "") -> errors.ApiError:
    """403 for a non-resource URL: ``forbidden: User "u" cannot get path "/metrics"``."""
    why = f"User {errors.go_quote(user)} cannot {verb} path {errors.go_quote(path)}"
    if reason:
        why += f": {reason}"
    return errors.forbidden("", "", "", why)


# --------------------------------------------------------------------------------------------------------------
# Bootstrap policy
# --------------------------------------------------------------------------------------------------------------

_BOOTSTRAP_LABELS = {"kubernetes.io/bootstrapping": "rbac-defaults"}
_AUTOUPDATE = {"rbac.authorization.kubernetes.io/autoupdate": "true"}

_READ = ["get", "list", "watch"]
_WRITE = ["create", "delete", "deletecollection", "patch", "update"]


def _cluster_role(
    name: str, rules: list[Obj], labels: Mapping[str, str] | None = None, aggregate_from: str = ""
) -> Obj:
    role: Obj = {
        "apiVersion": f"{RBAC_GROUP}/v1",
        "kind": "ClusterRole",
        "metadata": {
            "name": name,
            "labels": {**_BOOTSTRAP_LABELS, **(labels or {})},
            "annotations": dict(_AUTOUPDATE),
        },
        "rules": rules,
    }
    if aggregate_from:
        role["aggregationRule"] = {
            "clusterRoleSelectors": [{"matchLabels": {f"{RBAC_GROUP}/aggregate-to-{aggregate_from}": "true"}}]
        }
    return role


def _cluster_binding(name: str, role: str, groups: Sequence[str]) -> Obj:
    return {
        "apiVersion": f"{RBAC_GROUP}/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": name, "labels": dict(_BOOTSTRAP_LABELS), "annotations": dict(_AUTOUPDATE)},
        "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": role},
        "subjects": [{"apiGroup": RBAC_GROUP, "kind": "Group", "name": g} for g in groups],
    }


def bootstrap_policy() -> list[Obj]:
    """The default ClusterRoles and ClusterRoleBindings of a fresh API server (a condensed upstream set).

    ``admin``/``edit``/``view`` are aggregated from ``system:aggregate-to-*`` roles through the
    ``rbac.authorization.k8s.io/aggregate-to-<role>`` labels, so CRD authors' aggregated roles extend them as on a
    real cluster.
    """
    core_view = ["configmaps", "endpoints", "persistentvolumeclaims", "pods", "replicationcontrollers",
                 "replicationcontrollers/scale", "serviceaccounts", "services", "bindings", "events", "limitranges",
                 "namespaces/status", "pods/log", "pods/status", "replicationcontrollers/status", "resourcequotas",
                 "resourcequotas/status", "namespaces"]  # fmt: skip
    apps = ["daemonsets", "deployments", "deployments/scale", "replicasets", "replicasets/scale", "statefulsets",
            "statefulsets/scale"]  # fmt: skip
    view_rules: list[Obj] = [
        {"apiGroups": [""], "resources": core_view, "verbs": _READ},
        {"apiGroups": ["apps"], "resources": [*apps, "controllerrevisions"], "verbs": _READ},
        {
            "apiGroups": ["batch"],
            "resources": ["cronjobs", "jobs", "cronjobs/status", "jobs/status"],
            "verbs": _READ,
        },
        {"apiGroups": ["autoscaling"], "resources": ["horizontalpodautoscalers"], "verbs": _READ},
        {"apiGroups": ["policy"], "resources": ["poddisruptionbudgets"], "verbs": _READ},
        {"apiGroups": ["networking.k8s.io"], "resources": ["ingresses", "networkpolicies"], "verbs": _READ},
        {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": _READ},
    ]
    edit_rules: list[Obj] = [
        {
            "apiGroups": [""],
            "resources": [
                "pods/attach",
                "pods/exec",
                "pods/portforward",
                "pods/proxy",
                "secrets",
                "services/proxy",
            ],
            "verbs": _READ,
        },
        {"apiGroups": [""], "resources": ["serviceaccounts"], "verbs": ["impersonate"]},
        {
            "apiGroups": [""],
            "resources": ["pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy"],
            "verbs": _WRITE,
        },
        {"apiGroups": [""], "resources": ["pods/eviction"], "verbs": ["create"]},
        {
            "apiGroups": [""],
            "resources": [
                "configmaps",
                "events",
                "persistentvolumeclaims",
                "replicationcontrollers",
                "replicationcontrollers/scale",
                "secrets",
                "serviceaccounts",
                "services",
                "services/proxy",
            ],
            "verbs": _WRITE,
        },
        {"apiGroups": [""], "resources": ["serviceaccounts/token"], "verbs": ["create"]},
        {"apiGroups": ["apps"], "resources": apps, "verbs": _WRITE},
        {"apiGroups": ["batch"], "resources": ["cronjobs", "jobs"], "verbs": _WRITE},
        {"apiGroups": ["autoscaling"], "resources": ["horizontalpodautoscalers"], "verbs": _WRITE},
        {"apiGroups": ["policy"], "resources": ["poddisruptionbudgets"], "verbs": _WRITE},
        {"apiGroups": ["networking.k8s.io"], "resources": ["ingresses", "networkpolicies"], "verbs": _WRITE},
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": [*_READ, *_WRITE]},
    ]
    admin_rules: list[Obj] = [
        {
            "apiGroups": ["authorization.k8s.io"],
            "resources": ["localsubjectaccessreviews"],
            "verbs": ["create"],
        },
        {"apiGroups": [RBAC_GROUP], "resources": ["rolebindings", "roles"], "verbs": [*_READ, *_WRITE]},
    ]
    discovery_urls = ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*",
                      "/readyz", "/version", "/version/"]  # fmt: skip
    public_urls = ["/healthz", "/livez", "/readyz", "/version", "/version/"]
    return [
        _cluster_role(
            "cluster-admin",
            [
                {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                {"nonResourceURLs": ["*"], "verbs": ["*"]},
            ],
        ),
        _cluster_role("system:discovery", [{"nonResourceURLs": discovery_urls, "verbs": ["get"]}]),
        _cluster_role("system:public-info-viewer", [{"nonResourceURLs": public_urls, "verbs": ["get"]}]),
        _cluster_role(
            "system:basic-user",
            [
                {
                    "apiGroups": ["authorization.k8s.io"],
                    "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                    "verbs": ["create"],
                },
                {
                    "apiGroups": ["authentication.k8s.io"],
                    "resources": ["selfsubjectreviews"],
                    "verbs": ["create"],
                },
            ],
        ),
        _cluster_role("admin", [], aggregate_from="admin"),
        _cluster_role("edit", [], {f"{RBAC_GROUP}/aggregate-to-admin": "true"}, aggregate_from="edit"),
        _cluster_role(
            "view",
            [],
            {f"{RBAC_GROUP}/aggregate-to-edit": "true"},
            aggregate_from="view",
        ),
        _cluster_role("system:aggregate-to-admin", admin_rules, {f"{RBAC_GROUP}/aggregate-to-admin": "true"}),
        _cluster_role("system:aggregate-to-edit", edit_rules, {f"{RBAC_GROUP}/aggregate-to-edit": "true"}),
        _cluster_role("system:aggregate-to-view", view_rules, {f"{RBAC_GROUP}/aggregate-to-view": "true"}),
        _cluster_binding("cluster-admin", "cluster-admin", [SUPERUSER_GROUP]),
        _cluster_binding("system:discovery", "system:discovery", [AUTHENTICATED]),
        _cluster_binding("system:basic-user", "system:basic-user", [AUTHENTICATED]),
        _cluster_binding(
            "system:public-info-viewer", "system:public-info-viewer", [AUTHENTICATED, UNAUTHENTICATED]
        ),
    ]
