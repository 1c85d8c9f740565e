"""The API as one object: the parts put together, the objects every cluster starts with, and the in-process calls
controllers and tests use (audited like HTTP requests when an audit hook is set)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from berth.cluster import auth, crds, objmeta
from berth.cluster import resources as R
from berth.cluster import store as S
from berth.cluster.admission import Chain, default_chain
from berth.cluster.api.base import DEFAULT_USER, AuditHook, Clock
from berth.cluster.api.events_v1 import EventsV1
from berth.cluster.api.watch import Watch
from berth.cluster.errors import ApiError
from berth.kube.objects import Obj


class Api(EventsV1):
    """Kubernetes API semantics over a :class:`~berth.cluster.store.Store`.

    ``resource`` arguments are resource keys (``pods``, ``deployments.apps``, ``<plural>.<crd-group>``).
    ``user`` names the caller in the audit log. In-process writes are audited when ``audit`` is set; the HTTP
    server audits its own requests and calls the ``do_*`` methods, which never audit.
    """

    def __init__(
        self,
        store: S.Store | None = None,
        registry: R.Registry | None = None,
        *,
        clock: Clock = objmeta.utcnow,
        audit: AuditHook | None = None,
        admission: Chain | None = None,
    ) -> None:
        self.store = store if store is not None else S.Store()
        self.registry = registry if registry is not None else R.Registry()
        self.clock = clock
        self.audit = audit
        self.admission = admission if admission is not None else default_chain()
        crds.load_all(self)
        self.bootstrap()

    # ---- bootstrap -----------------------------------------------------------------------------------------

    def bootstrap(self) -> None:
        """Create the namespaces and objects every cluster starts with (only those missing)."""
        for ns in ("default", "kube-system", "kube-public", "kube-node-lease"):
            if self.store.get("namespaces", "", ns) is None:
                self.do_create(
                    self.resource_type("namespaces"), {"metadata": {"name": ns}}, None, manager="berth"
                )
        for name, value in (("system-cluster-critical", 2000000000), ("system-node-critical", 2000001000)):
            if self.store.get("priorityclasses.scheduling.k8s.io", "", name) is None:
                self.do_create(
                    self.resource_type("priorityclasses.scheduling.k8s.io"),
                    {
                        "metadata": {"name": name},
                        "value": value,
                        "description": "Used for system critical pods that must run in the cluster.",
                    },
                    None,
                    manager="berth",
                )
        if self.store.get("services", "default", "kubernetes") is None:
            self.do_create(
                self.resource_type("services"),
                {
                    "metadata": {
                        "name": "kubernetes",
                        "labels": {"component": "apiserver", "provider": "kubernetes"},
                    },
                    "spec": {
                        "clusterIP": "10.96.0.1",
                        "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}],
                    },
                },
                "default",
                manager="kube-apiserver",
            )
        for res, obj in auth.bootstrap_policy():
            rt = self.resource_type(res)
            if self.store.get(res, "", obj["metadata"]["name"]) is None:
                self.do_create(rt, obj, None, manager="berth")

    # ---- audit helper --------------------------------------------------------------------------------------

    def _audited(
        self,
        user: str,
        verb: str,
        resource: str,
        sub: str | None,
        ns: str | None,
        name: str,
        fn: Callable[[], Obj],
    ) -> Obj:
        if self.audit is None:
            return fn()
        code = 200
        try:
            out = fn()
            code = 201 if verb == "create" else 200
            return out
        except ApiError as exc:
            code = exc.code
            raise
        finally:
            self.audit(user, verb, resource, sub or "", ns or "", name, code)

    def create(
        self,
        resource: str,
        obj: Obj,
        namespace: str | None = None,
        *,
        user: str = DEFAULT_USER,
        dry_run: bool = False,
        field_manager: str | None = None,
    ) -> Obj:
        rt = self.resource_type(resource)
        name = str((obj.get("metadata") or {}).get("name") or "")
        return self._audited(
            user,
            "create",
            resource,
            None,
            namespace,
            name,
            lambda: self.do_create(rt, obj, namespace, user=user, dry_run=dry_run, manager=field_manager),
        )

    def update(
        self,
        resource: str,
        obj: Obj,
        namespace: str | None = None,
        *,
        subresource: str | None = None,
        user: str = DEFAULT_USER,
        dry_run: bool = False,
        field_manager: str | None = None,
    ) -> Obj:
        rt = self.resource_type(resource)
        name = str((obj.get("metadata") or {}).get("name") or "")
        return self._audited(
            user,
            "update",
            resource,
            subresource,
            namespace,
            name,
            lambda: self.do_update(
                rt, obj, namespace, subresource=subresource, user=user, dry_run=dry_run, manager=field_manager
            ),
        )

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
        user: str = DEFAULT_USER,
        dry_run: bool = False,
    ) -> Obj:
        rt = self.resource_type(resource)
        return self._audited(
            user,
            "patch",
            resource,
            subresource,
            namespace,
            name,
            lambda: self.do_patch(
                rt,
                name,
                patch,
                patch_type,
                namespace,
                subresource=subresource,
                manager=field_manager,
                force=force,
                user=user,
                dry_run=dry_run,
            )[0],
        )

    def delete(
        self,
        resource: str,
        name: str,
        namespace: str | None = None,
        *,
        propagation: str = "Background",
        user: str = DEFAULT_USER,
        dry_run: bool = False,
        preconditions: dict[str, Any] | None = None,
    ) -> Obj:
        rt = self.resource_type(resource)
        return self._audited(
            user,
            "delete",
            resource,
            None,
            namespace,
            name,
            lambda: self.do_delete(
                rt, name, namespace, propagation=propagation, dry_run=dry_run, preconditions=preconditions
            ),
        )

    def watch(
        self,
        resource: str,
        namespace: str | None = None,
        resource_version: str | None = None,
        label_selector: str = "",
        field_selector: str = "",
    ) -> Watch:
        return self.do_watch(
            self.resource_type(resource), namespace, resource_version, label_selector, field_selector
        )
