"""ResourceQuota status: ``status.hard`` and ``status.used`` kept current, per namespace.

Why: ``kubectl describe quota`` and ``kubectl get quota`` show what upstream's resource-quota controller writes,
and tenants read it to see how much room is left. Admission (:func:`berth.cluster.quota.admit`) decides from the
store itself, so this controller only reports.

Each quota's ``hard`` names map to the resources they count (pods, services, PVCs, ``count/<resource>``); the
controller watches exactly those (informers are shared, so this costs a handler call on kinds someone else already
watches) and re-adds a namespace when anything it counts changes there. Usage comes from the one implementation,
:func:`berth.cluster.quota.usage`, over the informer caches.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from berth.cluster import quota
from berth.cluster.controllers import base
from berth.cluster.controllers.informer import Handler, Informer
from berth.kube.objects import Obj

QUOTAS = "resourcequotas"
NAMESPACE_INDEX = "namespace"


def _namespace_of(obj: Obj) -> list[str]:
    return [str(base.meta(obj).get("namespace") or "")]


class ResourceQuotaController(base.Controller):
    name = "resourcequota-controller"

    def __init__(self, ctx: base.Context) -> None:
        super().__init__(ctx)
        self._lock = threading.Lock()
        self._counted: dict[str, Informer] = {}
        self.quotas = ctx.informers.informer(QUOTAS)
        self.quotas.add_index(NAMESPACE_INDEX, _namespace_of)
        self.quotas.add_handler(
            Handler(
                on_add=self._on_quota, on_update=lambda _o, n: self._on_quota(n), on_delete=self._on_quota
            )
        )

    def _on_quota(self, q: Obj) -> None:
        for name in (q.get("spec") or {}).get("hard") or {}:
            resource = quota.tracked_resource(str(name))
            if resource is not None:
                self._count(resource)
        self.queue.add(str(base.meta(q).get("namespace") or ""))

    def _count(self, resource: str) -> None:
        """Watch ``resource`` (once): a change in a namespace with a quota re-computes that namespace."""
        with self._lock:
            if resource in self._counted:
                return
            inf = self._counted[resource] = self.ctx.informers.informer(resource)
        inf.add_handler(
            Handler(
                on_add=self._on_counted,
                on_update=lambda _o, n: self._on_counted(n),
                on_delete=self._on_counted,
            )
        )

    def _on_counted(self, obj: Obj) -> None:
        ns = str(base.meta(obj).get("namespace") or "")
        if ns and self.quotas.by_index(NAMESPACE_INDEX, ns):
            self.queue.add(ns)

    def _list(self, resource: str, namespace: str) -> Iterable[Obj]:
        inf = self._counted.get(resource)
        return inf.list(namespace) if inf is not None else []

    def reconcile(self, key: str) -> None:
        quotas = self.quotas.by_index(NAMESPACE_INDEX, key)
        counted = {
            r
            for q in quotas
            for n in (q.get("spec") or {}).get("hard") or {}
            if (r := quota.tracked_resource(n))
        }
        with self._lock:
            informers = [self._counted[r] for r in counted if r in self._counted]
        if any(not inf.synced.is_set() for inf in informers):
            self.requeue_after(key, 0.05)  # a kind just added to a quota: its informer is still listing
            return
        for q in quotas:
            status = quota.status_of(q, quota.usage(q, key, self._list))
            if (q.get("status") or {}) != status:
                base.write_status(self, QUOTAS, q, status)
