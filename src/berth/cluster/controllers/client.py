"""The slice of the in-process :class:`berth.cluster.api.Api` the controllers use, as a Protocol.

Controllers talk to the cluster only through these calls (the same semantics a client sees over HTTP), so a test
can hand them an in-memory fake and the server hands them the real ``Api``. Failures arrive as
:class:`berth.cluster.errors.ApiError`; the helpers below name the codes controllers branch on.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

from berth.cluster import errors
from berth.kube.objects import Obj

ApiError = errors.ApiError


class WatchLike(Protocol):
    """A running watch: ``(type, object)`` pairs with type ADDED, MODIFIED, DELETED (or ERROR with a Status)."""

    def next_event(self, timeout: float | None = None) -> tuple[str, Obj] | None: ...

    def close(self) -> None: ...

    def __iter__(self) -> Iterator[tuple[str, Obj]]: ...


class ApiLike(Protocol):
    """What controllers call. ``resource`` is ``pods`` or ``deployments.apps`` (plural[.group])."""

    def get(self, resource: str, name: str, namespace: str | None = None) -> Obj: ...

    def list(
        self, resource: str, namespace: str | None = None, label_selector: str = "", field_selector: str = ""
    ) -> tuple[list[Obj], str]: ...

    def create(self, resource: str, obj: Obj, namespace: str | None = None, *, user: str = ...) -> Obj: ...

    def update(
        self,
        resource: str,
        obj: Obj,
        namespace: str | None = None,
        *,
        subresource: str | None = None,
        user: str = ...,
    ) -> Obj: ...

    def patch(
        self,
        resource: str,
        name: str,
        patch: Any,
        patch_type: str,
        namespace: str | None = None,
        *,
        subresource: str | None = None,
        field_manager: str | None = None,
        force: bool = False,
        user: str = ...,
    ) -> Obj: ...

    def delete(
        self,
        resource: str,
        name: str,
        namespace: str | None = None,
        *,
        propagation: str = ...,
        user: str = ...,
    ) -> Obj: ...

    def watch(
        self,
        resource: str,
        namespace: str | None = None,
        resource_version: str | None = None,
        label_selector: str = "",
        field_selector: str = "",
    ) -> WatchLike: ...


def is_not_found(exc: BaseException) -> bool:
    return isinstance(exc, ApiError) and exc.code == 404


def is_conflict(exc: BaseException) -> bool:
    """409 of either kind: stale resourceVersion (Conflict) or name taken (AlreadyExists)."""
    return isinstance(exc, ApiError) and exc.code == 409


def is_already_exists(exc: BaseException) -> bool:
    return isinstance(exc, ApiError) and exc.code == 409 and exc.reason == errors.Reason.ALREADY_EXISTS


def is_gone(exc: BaseException) -> bool:
    return isinstance(exc, ApiError) and exc.code == 410


def delete_now(api: ApiLike, resource: str, name: str, namespace: str | None, *, user: str) -> Obj:
    """The kubelet's final delete of a terminating pod (grace period 0).

    The embedded Api removes pods at once (no grace period is simulated), so a plain delete is the final one; a
    delete of an object that is already terminating only re-checks its finalizers. Should the Api grow a
    ``grace_period_seconds`` option (graceful pod deletion), it is passed as 0.
    """
    import inspect

    try:
        params = inspect.signature(api.delete).parameters
    except (TypeError, ValueError):
        params = {}  # type: ignore[assignment]
    if "grace_period_seconds" in params:
        fn: Any = api.delete
        return fn(resource, name, namespace, user=user, grace_period_seconds=0)  # type: ignore[no-any-return]
    return api.delete(resource, name, namespace, user=user)


FALLBACK_NAMESPACED = (
    "pods",
    "configmaps",
    "secrets",
    "services",
    "serviceaccounts",
    "endpoints",
    "events",
    "persistentvolumeclaims",
    "replicationcontrollers",
    "podtemplates",
    "limitranges",
    "resourcequotas",
    "deployments.apps",
    "replicasets.apps",
    "statefulsets.apps",
    "daemonsets.apps",
    "controllerrevisions.apps",
    "jobs.batch",
    "cronjobs.batch",
    "leases.coordination.k8s.io",
    "roles.rbac.authorization.k8s.io",
    "rolebindings.rbac.authorization.k8s.io",
    "poddisruptionbudgets.policy",
    "ingresses.networking.k8s.io",
    "networkpolicies.networking.k8s.io",
    "endpointslices.discovery.k8s.io",
    "horizontalpodautoscalers.autoscaling",
    "csistoragecapacities.storage.k8s.io",
)
FALLBACK_CLUSTER = (
    "nodes",
    "namespaces",
    "persistentvolumes",
    "customresourcedefinitions.apiextensions.k8s.io",
)


def resource_kinds(api: ApiLike) -> list[tuple[str, str, str, bool]]:
    """Every stored resource as ``(resource key, apiVersion, kind, namespaced)``.

    Read from the Api's type registry when it has one (custom resources included); otherwise a fixed list of the
    built-ins (what the test fake serves).
    """
    registry = getattr(api, "registry", None)
    if registry is not None:
        out = []
        for t in registry.all():
            if getattr(t, "virtual", False) or "list" not in getattr(t, "verbs", ("list",)):
                continue
            out.append((t.resource, t.api_version, t.kind, t.namespaced))
        return out
    fake_types = getattr(api, "types", None)
    if isinstance(fake_types, dict):
        return [(r, av, k, ns) for r, (av, k, ns) in fake_types.items()]
    return [(r, "", "", True) for r in FALLBACK_NAMESPACED] + [(r, "", "", False) for r in FALLBACK_CLUSTER]


def resource_for_kind(api: ApiLike, api_version: str, kind: str) -> tuple[str, bool] | None:
    """``(resource key, namespaced)`` serving ``kind`` in the group of ``api_version``; None when unknown."""
    group = api_version.split("/", 1)[0] if "/" in api_version else ""
    for resource, av, k, namespaced in resource_kinds(api):
        g = av.split("/", 1)[0] if "/" in av else ""
        if k == kind and g == group:
            return resource, namespaced
    return None
