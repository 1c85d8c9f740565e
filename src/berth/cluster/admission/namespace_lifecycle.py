"""NamespaceLifecycle: no new content in a namespace that does not exist or is being terminated."""

from __future__ import annotations

from berth.cluster import errors as E
from berth.cluster import objmeta
from berth.cluster.admission.chain import CREATE, Attributes
from berth.cluster.host import ApiHost


class NamespaceLifecycle:
    name = "NamespaceLifecycle"

    def admit(self, api: ApiHost, attrs: Attributes) -> None:
        ns = attrs.namespace
        if attrs.operation != CREATE or not ns:
            return
        entry = api.store.get("namespaces", "", ns)
        if entry is None:
            raise E.not_found("namespaces", "", ns)
        if '"deletionTimestamp"' in entry[1] and (objmeta.loads(entry[1]).get("metadata") or {}).get(
            "deletionTimestamp"
        ):
            raise E.ApiError(
                403,
                E.Reason.FORBIDDEN,
                f"unable to create new content in namespace {ns} because it is being terminated",
                {
                    "name": ns,
                    "kind": "namespaces",
                    "causes": [
                        {
                            "reason": "NamespaceTerminating",
                            "message": f"namespace {ns} is being terminated",
                            "field": "metadata.namespace",
                        }
                    ],
                },
            )
