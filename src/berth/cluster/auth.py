"""Who is calling, and may they: bearer tokens, ServiceAccount tokens, bootstrap RBAC policy, access reviews.

Authentication: the admin token (written into ``DIR/kubeconfig``) maps to ``kubernetes-admin`` in group
``system:masters``; ServiceAccount tokens are HMAC-signed JWTs (``kubectl create token``, legacy token Secrets)
whose signing key lives in the store, so they survive restarts and die with their ServiceAccount (uid checked).
Anything else -- no token, an unknown or expired one -- is 401, as on a real cluster with anonymous auth off.

Authorization: ``system:masters`` may do everything; every other identity goes through the RBAC authorizer in
``rbac.py`` (Roles, ClusterRoles, bindings, aggregation, resourceNames, subresources, nonResourceURLs). The bootstrap
policy below gives authenticated users discovery and self-reviews, as kube-apiserver's bootstrap roles do.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from berth.cluster import errors as E
from berth.cluster import objmeta, rbac
from berth.cluster.host import ApiHost
from berth.kube.objects import Obj

ADMIN_USER = "kubernetes-admin"
MASTERS = "system:masters"
AUTHENTICATED = "system:authenticated"
SA_PREFIX = "system:serviceaccount:"
ISSUER = "https://kubernetes.default.svc.cluster.local"
DEFAULT_TOKEN_SECONDS = 3600


@dataclass(frozen=True)
class Identity:
    """An authenticated caller."""

    name: str
    groups: tuple[str, ...] = ()
    uid: str = ""
    extra: dict[str, list[str]] = field(default_factory=dict)

    @property
    def is_admin(self) -> bool:
        return MASTERS in self.groups

    def user_info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"username": self.name, "groups": list(self.groups)}
        if self.uid:
            info["uid"] = self.uid
        if self.extra:
            info["extra"] = self.extra
        return info


ADMIN = Identity(ADMIN_USER, (MASTERS, AUTHENTICATED))


def service_account_identity(namespace: str, name: str, uid: str = "") -> Identity:
    return Identity(
        f"{SA_PREFIX}{namespace}:{name}",
        ("system:serviceaccounts", f"system:serviceaccounts:{namespace}", AUTHENTICATED),
        uid,
    )


def identity_of(api: ApiHost, user: str) -> Identity:
    """The identity behind an audit user name (in-process callers and the admin are masters)."""
    if user.startswith(SA_PREFIX):
        ns, _, name = user[len(SA_PREFIX) :].partition(":")
        return service_account_identity(ns, name)
    return Identity(user, (MASTERS, AUTHENTICATED))


# ---- keys and tokens ---------------------------------------------------------------------------------------------


_ADMIN_TOKENS: dict[int, str] = {}


def admin_token(api: ApiHost) -> str:
    """The cluster's admin bearer token (created on first use, kept in the store, cached per store)."""
    key = id(api.store)
    tok = _ADMIN_TOKENS.get(key)
    if tok is not None:
        return tok
    tok = api.store.get_meta("admin-token")
    if tok is None:
        tok = "berth-admin-" + secrets.token_hex(24)
        api.store.set_meta("admin-token", tok)
    _ADMIN_TOKENS[key] = tok
    return tok


def _signing_key(api: ApiHost) -> bytes:
    key = api.store.get_meta("sa-signing-key")
    if key is None:
        key = secrets.token_hex(32)
        api.store.set_meta("sa-signing-key", key)
    return key.encode()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def issue_token(
    api: ApiHost,
    namespace: str,
    name: str,
    uid: str,
    seconds: int | None,
    audiences: list[str] | None = None,
    bound: tuple[str, str, str] | None = None,
) -> tuple[str, int]:
    """A signed ServiceAccount JWT and its expiry (unix seconds; 0 = never, for legacy Secrets). ``bound`` is
    ``(kind, name, uid)`` of the Pod, Secret or Node the token is bound to: it dies with that object."""
    now = int(time.time())
    exp = now + seconds if seconds else 0
    payload: dict[str, Any] = {
        "iss": ISSUER,
        "sub": f"{SA_PREFIX}{namespace}:{name}",
        "aud": audiences or [ISSUER],
        "iat": now,
        "nbf": now,
        "kubernetes.io": {"namespace": namespace, "serviceaccount": {"name": name, "uid": uid}},
    }
    if bound is not None:
        kind, obj_name, obj_uid = bound
        payload["kubernetes.io"][kind.lower()] = {"name": obj_name, "uid": obj_uid}
    if exp:
        payload["exp"] = exp
    header = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = _b64(json.dumps(payload, separators=(",", ":")).encode())
    sig = _b64(hmac.new(_signing_key(api), f"{header}.{body}".encode(), hashlib.sha256).digest())
    return f"{header}.{body}.{sig}", exp


def authenticate(api: ApiHost, authorization: str | None) -> Identity:
    """The identity for an ``Authorization`` header; raises 401 for anonymous or invalid credentials, naming which
    credential was tried and why it failed (never the token itself)."""
    if not authorization:
        raise E.unauthorized(
            "Unauthorized: no credentials were sent (this server takes bearer tokens: the admin token of the "
            "cluster's kubeconfig, or a ServiceAccount token)"
        )
    scheme, _, rest = authorization.strip().partition(" ")
    if scheme.lower() != "bearer":
        raise E.unauthorized(
            f"Unauthorized: {scheme} credentials are not accepted; this server takes bearer tokens only"
        )
    token = rest.strip()
    if hmac.compare_digest(token, admin_token(api)):
        return ADMIN
    ident, problem = check_token(api, token)
    if ident is None:
        raise E.unauthorized(f"Unauthorized: {problem}")
    return ident


def impersonate(api: ApiHost, ident: Identity, user: str, groups: list[str]) -> Identity:
    """``kubectl --as USER [--as-group G]``: act as another identity. Only ``system:masters`` may impersonate
    (upstream checks the ``impersonate`` verb; the admin holds it through cluster-admin)."""
    if not user:
        raise E.internal(
            f"requested [{', '.join(f'group {g}' for g in groups)}] without impersonating a user"
        )
    if not ident.is_admin:
        raise rbac.forbidden_error(ident.name, "impersonate", "users", "", name=user)
    if user.startswith(SA_PREFIX) and not groups:
        ns, _, name = user[len(SA_PREFIX) :].partition(":")
        return service_account_identity(ns, name)
    out = tuple(dict.fromkeys([*groups, AUTHENTICATED]))
    return Identity(user, out)


def verify_token(api: ApiHost, token: str) -> Identity | None:
    """The identity of a ServiceAccount token this cluster issued and that is still valid, else None."""
    return check_token(api, token)[0]


BOUND_KINDS = {"Pod": "pods", "Secret": "secrets", "Node": "nodes"}
"""What a token may be bound to (``boundObjectRef.kind`` -> resource), as upstream's TokenRequest allows."""


def _claims(token: str) -> dict[str, Any] | None:
    """The payload of a JWT-shaped token, unverified (to name what it claims in a 401)."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        payload = json.loads(_unb64(parts[1]))
    except (ValueError, TypeError):
        return None
    return payload if isinstance(payload, dict) else None


def check_token(api: ApiHost, token: str) -> tuple[Identity | None, str]:
    """``(identity, "")`` for a valid ServiceAccount token, else ``(None, why)``: why names the credential (the
    ServiceAccount and bound object it claims) and what is wrong with it."""
    payload = _claims(token)
    if payload is None:
        return None, (
            "the bearer token is neither this cluster's admin token nor a ServiceAccount token (a token of "
            "another cluster, or mistyped)"
        )
    k8s: Any = payload.get("kubernetes.io")
    try:
        ns, name, uid = k8s["namespace"], k8s["serviceaccount"]["name"], k8s["serviceaccount"]["uid"]
    except (KeyError, TypeError):
        return None, "the bearer token is a JWT but not a Kubernetes ServiceAccount token"
    what = f"the ServiceAccount token for {ns}/{name}"
    parts = token.split(".")
    want = _b64(hmac.new(_signing_key(api), f"{parts[0]}.{parts[1]}".encode(), hashlib.sha256).digest())
    if not hmac.compare_digest(want, parts[2]):
        return (
            None,
            f"{what} was not signed by this cluster (a token of another cluster, or of an earlier one)",
        )
    exp = int(payload.get("exp") or 0)
    if exp and exp < time.time():
        stamp = objmeta.format_time(datetime.fromtimestamp(exp, UTC))
        return None, f"{what} expired at {stamp}"
    entry = api.store.get("serviceaccounts", ns, name)
    if entry is None or json.loads(entry[1]).get("metadata", {}).get("uid") != uid:
        return None, f"{what} is no longer valid: that ServiceAccount was deleted (or deleted and recreated)"
    for kind, resource in BOUND_KINDS.items():
        ref = k8s.get(kind.lower())
        if not isinstance(ref, dict):
            continue
        obj_ns = "" if kind == "Node" else ns
        bound = api.store.get(resource, obj_ns, str(ref.get("name") or ""))
        meta = json.loads(bound[1]).get("metadata", {}) if bound is not None else {}
        if bound is None or meta.get("uid") != ref.get("uid"):
            return None, (
                f"{what} is no longer valid: it was bound to {kind.lower()} {ref.get('name')}, which was deleted "
                "(or deleted and recreated)"
            )
        if meta.get("deletionTimestamp") and kind == "Pod":
            return (
                None,
                f"{what} is no longer valid: it was bound to pod {ref.get('name')}, which is being deleted",
            )
    return service_account_identity(ns, name, uid), ""


def _bound_object(api: ApiHost, namespace: str, sa_name: str, ref: Any) -> tuple[str, str, str] | None:
    """Check a TokenRequest's ``boundObjectRef`` as upstream's TokenRequest storage does; ``(kind, name, uid)``."""
    if not ref:
        return None
    if not isinstance(ref, dict):
        raise E.bad_request("spec.boundObjectRef must be an object")
    kind, name = str(ref.get("kind") or ""), str(ref.get("name") or "")
    api_version = str(ref.get("apiVersion") or "v1")
    resource = BOUND_KINDS.get(kind)
    if resource is None or api_version != "v1":
        group = api_version.rpartition("/")[0]
        raise E.bad_request(
            f"cannot bind token to object of type {kind}.{api_version.rpartition('/')[2]}.{group}"
            if group
            else f"cannot bind token to object of type /{api_version}, Kind={kind}"
        )
    obj = api.do_get(api.resource_type(resource), name, None if kind == "Node" else namespace)
    if kind == "Pod" and (obj.get("spec") or {}).get("serviceAccountName", "default") != sa_name:
        raise E.bad_request(
            f'cannot bind token for serviceaccount "{sa_name}" to pod running with different serviceaccount name.'
        )
    uid = str((obj.get("metadata") or {}).get("uid") or "")
    want = str(ref.get("uid") or "")
    if want and want != uid:
        raise E.conflict(
            kind,
            "",
            name,
            f"the UID in the bound object reference ({want}) does not match the UID in record. The object might "
            "have been deleted and then recreated",
        )
    ref["uid"] = uid
    return kind, name, uid


def token_request(api: ApiHost, namespace: str, sa_name: str, request: Obj) -> Obj:
    """Answer ``POST serviceaccounts/<sa>/token`` with a TokenRequest carrying a signed token."""
    sa = api.do_get(api.resource_type("serviceaccounts"), sa_name, namespace)
    spec = dict(request.get("spec") or {})
    seconds = int(spec.get("expirationSeconds") or DEFAULT_TOKEN_SECONDS)
    if seconds < 600:
        raise E.invalid(
            "TokenRequest",
            sa_name,
            [
                E.invalid_value(
                    "spec.expirationSeconds", seconds, "may not specify a duration less than 10 minutes"
                )
            ],
            "authentication.k8s.io",
        )
    bound = _bound_object(api, namespace, sa_name, spec.get("boundObjectRef"))
    token, exp = issue_token(
        api, namespace, sa_name, str(sa["metadata"]["uid"]), seconds, spec.get("audiences"), bound
    )
    spec.setdefault("audiences", [ISSUER])
    spec["expirationSeconds"] = seconds
    return {
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {"name": sa_name, "namespace": namespace, "creationTimestamp": None},
        "spec": spec,
        "status": {
            "token": token,
            "expirationTimestamp": objmeta.format_time(datetime.fromtimestamp(exp, UTC)),
        },
    }


def fill_service_account_secret(api: ApiHost, secret: Obj) -> None:
    """Legacy token Secrets (type ``kubernetes.io/service-account-token``) get a non-expiring token at create."""
    if secret.get("type") != "kubernetes.io/service-account-token":
        return
    meta = secret.get("metadata") or {}
    ann = meta.get("annotations") or {}
    sa_name = ann.get("kubernetes.io/service-account.name")
    ns = str(meta.get("namespace") or "")
    if not sa_name:
        return
    entry = api.store.get("serviceaccounts", ns, str(sa_name))
    if entry is None:
        return
    uid = json.loads(entry[1])["metadata"]["uid"]
    token, _ = issue_token(api, ns, str(sa_name), uid, None)
    ann["kubernetes.io/service-account.uid"] = uid
    data = secret.setdefault("data", {})
    data["token"] = base64.b64encode(token.encode()).decode()
    data["namespace"] = base64.b64encode(ns.encode()).decode()


def token_review(api: ApiHost, review: Obj) -> Obj:
    token = str((review.get("spec") or {}).get("token") or "")
    ident, problem = (
        (ADMIN, "") if token and hmac.compare_digest(token, admin_token(api)) else check_token(api, token)
    )
    review["status"] = (
        {"authenticated": True, "user": ident.user_info(), "audiences": [ISSUER]}
        if ident is not None
        else {"authenticated": False, "error": problem}
    )
    return review


# ---- authorization -------------------------------------------------------------------------------------------------

_AUTHZ_CACHE: dict[int, tuple[int, rbac.Authorizer]] = {}
_AUTHZ_LOCK = threading.Lock()


def _objects(api: ApiHost, resource: str) -> list[Obj]:
    items, _ = api.store.list(resource)
    return [json.loads(text) for _ns, _n, (_rv, text) in items]


def authorizer(api: ApiHost) -> rbac.Authorizer:
    """An RBAC authorizer over the current Roles/ClusterRoles/bindings (rebuilt when the store has changed)."""
    rev = api.store.revision
    with _AUTHZ_LOCK:
        hit = _AUTHZ_CACHE.get(id(api))
        if hit is not None and hit[0] == rev:
            return hit[1]
    built = rbac.Authorizer(
        roles=_objects(api, "roles.rbac.authorization.k8s.io"),
        cluster_roles=_objects(api, "clusterroles.rbac.authorization.k8s.io"),
        role_bindings=_objects(api, "rolebindings.rbac.authorization.k8s.io"),
        cluster_role_bindings=_objects(api, "clusterrolebindings.rbac.authorization.k8s.io"),
    )
    with _AUTHZ_LOCK:
        _AUTHZ_CACHE[id(api)] = (rev, built)
    return built


def review(api: ApiHost, ident: Identity, spec: dict[str, Any]) -> dict[str, Any]:
    """The ``status`` of an access review for ``ident`` and the review's ``spec``."""
    return authorizer(api).access_review(ident.name, list(ident.groups), spec)


def authorize(api: ApiHost, ident: Identity, attrs: dict[str, Any]) -> None:
    """Raise 403 Forbidden (upstream wording) unless ``ident`` may do ``attrs``: a resource request
    (verb, group, resource, subresource, namespace, name) or, with ``path``, a non-resource URL."""
    if ident.is_admin:
        return
    az = authorizer(api)
    if "path" in attrs:
        verb, path = str(attrs.get("verb") or "get"), str(attrs["path"])
        decision = az.allowed_non_resource(ident.name, list(ident.groups), verb, path)
        if not decision.allowed:
            raise rbac.forbidden_non_resource_error(ident.name, verb, path, decision.reason)
        return
    args = [
        str(attrs.get(k) or "") for k in ("verb", "group", "resource", "subresource", "namespace", "name")
    ]
    decision = az.allowed(ident.name, list(ident.groups), *args)
    if not decision.allowed:
        verb, group, resource, sub, ns, name = args
        raise rbac.forbidden_error(ident.name, verb, resource, group, sub, ns, name, decision.reason)


def rules_for(api: ApiHost, ident: Identity, namespace: str) -> dict[str, Any]:
    """``SelfSubjectRulesReview.status`` for ``ident`` in ``namespace``."""
    return authorizer(api).rules_review(ident.name, list(ident.groups), namespace)


def bootstrap_policy() -> list[tuple[str, Obj]]:
    """The cluster roles and bindings a fresh cluster has (``rbac.bootstrap_policy``), keyed by resource."""
    out: list[tuple[str, Obj]] = []
    for obj in rbac.bootstrap_policy():
        plural = "clusterroles" if obj.get("kind") == "ClusterRole" else "clusterrolebindings"
        out.append((f"{plural}.rbac.authorization.k8s.io", obj))
    return out
