"""Namespace lifecycle and the ``default`` ServiceAccount in every namespace.

Why: a new namespace must read ``Active`` and carry ``kubernetes.io/metadata.name`` (namespace selectors in
NetworkPolicies and webhooks match on it); pods name ``serviceAccountName: default`` implicitly, and charts and
``kubectl create token default`` expect that account to exist. Deleting a namespace must delete everything in it
before the namespace itself disappears, or ``kubectl delete ns`` waits forever (envtest's well-known gap).

Deletion, as upstream's namespace controller does it::

    deletionTimestamp set (phase Terminating, spec.finalizers [kubernetes])
      └─▶ delete every namespaced object in it (Background) ──▶ anything left (finalizers, GC in flight)?
             yes: look again shortly                               no: remove "kubernetes" via ``finalize``
                                                                        └─▶ the Api removes the namespace
"""

from __future__ import annotations

import copy

from berth.cluster.controllers import base, client
from berth.cluster.controllers.informer import Handler, key_of
from berth.kube.objects import Obj

NAME_LABEL = "kubernetes.io/metadata.name"
FINALIZER = "kubernetes"


class NamespaceController(base.Controller):
    """Sets phase/label on live namespaces and empties terminating ones."""

    name = "namespace-controller"

    def __init__(self, ctx: base.Context) -> None:
        super().__init__(ctx)
        self.namespaces = ctx.informers.informer("namespaces")
        self.namespaces.add_handler(Handler(on_add=self._enqueue, on_update=lambda _o, n: self._enqueue(n)))
        self._attempts: dict[str, int] = {}

    def _enqueue(self, ns: Obj) -> None:
        self.queue.add(key_of(ns))

    def reconcile(self, key: str) -> None:
        ns = self.namespaces.get(key)
        if ns is None:
            self._attempts.pop(key, None)
            return
        if base.deleting(ns):
            self._terminate(key, ns)
            return
        self._attempts.pop(key, None)
        labels = base.meta(ns).get("labels") or {}
        if labels.get(NAME_LABEL) != key:
            new = copy.deepcopy(ns)
            new["metadata"].setdefault("labels", {})[NAME_LABEL] = key
            ns = self.api.update("namespaces", new, user=self.user)
        if (ns.get("status") or {}).get("phase") != "Active":
            status = copy.deepcopy(ns.get("status") or {})
            status["phase"] = "Active"
            base.write_status(self, "namespaces", ns, status)

    def _terminate(self, key: str, ns: Obj) -> None:
        remaining = 0
        for resource, _av, _kind, namespaced in client.resource_kinds(self.api):
            if not namespaced:
                continue
            try:
                items, _ = self.api.list(resource, key)
            except client.ApiError:
                continue
            for item in items:
                remaining += 1
                if base.deleting(item):
                    continue
                try:
                    self.api.delete(resource, base.meta(item).get("name", ""), key, user=self.user)
                except client.ApiError as exc:
                    if not client.is_not_found(exc):
                        raise
        if remaining:
            # Objects with finalizers (or dependents being collected) hold the namespace; look again soon.
            n = self._attempts.get(key, 0)
            self._attempts[key] = n + 1
            self.requeue_after(key, min(0.01 * (2**n), 1.0))
            return
        finalizers = list((ns.get("spec") or {}).get("finalizers") or [])
        if FINALIZER in finalizers:
            new = copy.deepcopy(ns)
            new.setdefault("spec", {})["finalizers"] = [f for f in finalizers if f != FINALIZER]
            self.api.update("namespaces", new, subresource="finalize", user=self.user)


class ServiceAccountController(base.Controller):
    """Keeps a ``default`` ServiceAccount in every active namespace (re-created if deleted)."""

    name = "serviceaccount-controller"
    ACCOUNT = "default"

    def __init__(self, ctx: base.Context) -> None:
        super().__init__(ctx)
        self.namespaces = ctx.informers.informer("namespaces")
        self.accounts = ctx.informers.informer("serviceaccounts")
        self.namespaces.add_handler(Handler(on_add=self._enqueue, on_update=lambda _o, n: self._enqueue(n)))
        self.accounts.add_handler(Handler(on_delete=self._on_sa_deleted))

    def _enqueue(self, ns: Obj) -> None:
        self.queue.add(key_of(ns))

    def _on_sa_deleted(self, sa: Obj) -> None:
        if base.meta(sa).get("name") == self.ACCOUNT:
            self.queue.add(str(base.meta(sa).get("namespace", "")))

    def reconcile(self, key: str) -> None:
        ns = self.namespaces.get(key)
        if ns is None or base.deleting(ns):
            return
        if self.accounts.get(f"{key}/{self.ACCOUNT}") is not None:
            return
        sa = {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": self.ACCOUNT, "namespace": key},
        }
        try:
            self.api.create("serviceaccounts", sa, key, user=self.user)
        except client.ApiError as exc:
            if client.is_already_exists(exc):
                return
            if exc.code == 403:  # the namespace started terminating meanwhile
                return
            raise


ROOT_CA_CONFIGMAP = "kube-root-ca.crt"
ROOT_CA_DESCRIPTION = (
    "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the "
    "internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of "
    "Kubernetes clusters."
)


class RootCACertPublisher(base.Controller):
    """Keeps the ``kube-root-ca.crt`` ConfigMap (the cluster CA, key ``ca.crt``) in every active namespace, as
    upstream's root-ca-cert-publisher does: pods' service-account token volumes project it, and charts mount it to
    verify the API server. Re-created if deleted, rewritten if changed. Off when the cluster has no CA to publish."""

    name = "root-ca-cert-publisher"

    def __init__(self, ctx: base.Context) -> None:
        super().__init__(ctx)
        self.pem = ctx.options.root_ca
        self.namespaces = ctx.informers.informer("namespaces")
        self.namespaces.add_handler(Handler(on_add=self._enqueue, on_update=lambda _o, n: self._enqueue(n)))
        if self.pem:
            self.configmaps = ctx.informers.informer("configmaps")
            self.configmaps.add_handler(
                Handler(on_update=lambda _o, n: self._on_configmap(n), on_delete=self._on_configmap)
            )

    def _enqueue(self, ns: Obj) -> None:
        if self.pem:
            self.queue.add(key_of(ns))

    def _on_configmap(self, cm: Obj) -> None:
        if base.meta(cm).get("name") == ROOT_CA_CONFIGMAP:
            self.queue.add(str(base.meta(cm).get("namespace", "")))

    def reconcile(self, key: str) -> None:
        ns = self.namespaces.get(key)
        if ns is None or base.deleting(ns) or not self.pem:
            return
        current = self.configmaps.get(f"{key}/{ROOT_CA_CONFIGMAP}")
        data = {"ca.crt": self.pem}
        try:
            if current is None:
                cm = {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {
                        "name": ROOT_CA_CONFIGMAP,
                        "namespace": key,
                        "annotations": {"kubernetes.io/description": ROOT_CA_DESCRIPTION},
                    },
                    "data": data,
                }
                self.api.create("configmaps", cm, key, user=self.user)
            elif current.get("data") != data:
                updated = copy.deepcopy(current)
                updated["data"] = data
                self.api.update("configmaps", updated, key, user=self.user)
        except client.ApiError as exc:
            if client.is_already_exists(exc) or exc.code == 403:  # raced, or the namespace is terminating
                return
            raise
