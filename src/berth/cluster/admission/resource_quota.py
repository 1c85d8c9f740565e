"""ResourceQuota: a create or update that would exceed a namespace's quota is refused (the usage arithmetic lives in
:mod:`berth.cluster.quota`, shared with the quota controller)."""

from __future__ import annotations

from berth.cluster import quota
from berth.cluster.admission.chain import CREATE, Attributes, objects
from berth.cluster.host import ApiHost
from berth.kube.objects import Obj

QUOTAS = "resourcequotas"


class ResourceQuota:
    name = "ResourceQuota"

    def validate(self, api: ApiHost, attrs: Attributes) -> None:
        ns = attrs.namespace
        if not ns or not api.store.count(QUOTAS):
            return

        def lister(resource: str, namespace: str) -> list[Obj]:
            return objects(api, resource, namespace)

        if attrs.operation == CREATE:
            quotas = lister(QUOTAS, ns)
            if quotas:
                quota.admit(attrs.resource, attrs.obj, ns, quotas, lister)
        elif attrs.old is not None and quota.counts_update(attrs.resource, attrs.subresource):
            quota.admit_update(attrs.resource, attrs.old, attrs.obj, ns, lister)
