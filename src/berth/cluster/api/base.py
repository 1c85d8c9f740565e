"""What every part of the API shares: the store, the type registry, the clock, the admission chain, and the few
reads (load one object, present it at a version) that reads and writes both need."""

from __future__ import annotations

import builtins
from collections.abc import Callable
from datetime import datetime

from berth.cluster import crds, eventsv1, objmeta
from berth.cluster import errors as E
from berth.cluster import resources as R
from berth.cluster import store as S
from berth.cluster.admission import Chain
from berth.cluster.errors import ApiError
from berth.cluster.resources import ResourceType
from berth.kube.objects import Obj

DEFAULT_USER = "system:controller:berth"

AuditHook = Callable[[str, str, str, str, str, str, int], None]
"""(user, verb, resource, subresource, namespace, name, code) -> None"""

Clock = Callable[[], datetime]


def ns_finalizers(rt: ResourceType, obj: Obj) -> builtins.list[str]:
    """A namespace's ``spec.finalizers`` (what keeps a terminating namespace until the namespace controller is
    done); none for every other kind."""
    if rt.resource != "namespaces":
        return []
    return list((obj.get("spec") or {}).get("finalizers") or [])


class ApiBase:
    """State and shared reads of :class:`berth.cluster.api.Api` (the read, watch, write and scale parts build on
    it)."""

    store: S.Store
    registry: R.Registry
    clock: Clock
    audit: AuditHook | None
    admission: Chain

    def now_text(self) -> str:
        """The clock's time now as Kubernetes ``Time`` text. With the real clock the second comes from
        ``time.time()`` and the text from format_time's per-second cache: no datetime object per write."""
        if self.clock is objmeta.utcnow:
            text = objmeta.cached_now_text()
            if text is not None:
                return text
        return objmeta.format_time(self.clock())

    def resource_type(self, resource: str) -> ResourceType:
        """The type for a resource key; 404 NotFound when unknown."""
        t = self.registry.get(resource)
        if t is None:
            plural, _, group = resource.partition(".")
            raise ApiError(
                404,
                E.Reason.NOT_FOUND,
                f"the server could not find the requested resource ({resource})",
                {"group": group, "kind": plural} if group else {"kind": plural},
            )
        return t

    def present(self, rtype: ResourceType, obj: Obj, version: str | None = None) -> Obj:
        """The object as served at ``version`` (apiVersion rewritten for multi-version built-ins; a custom object
        gets its storage version's defaults first, as upstream's storage decoder gives them)."""
        if rtype.custom:
            crds.default_on_read(self.store, rtype, obj)
        if version and (version != rtype.version or rtype.storage_version):
            obj["apiVersion"] = rtype.api_version_for(version)
        return obj

    @property
    def _core_events(self) -> ResourceType:
        return self.resource_type(eventsv1.CORE_RESOURCE)

    def _ns_key(self, rt: ResourceType, namespace: str | None) -> str:
        if rt.namespaced:
            if not namespace:
                raise E.bad_request(f"a namespace is required for {rt.resource}")
            return namespace
        return ""

    def _load(self, rt: ResourceType, name: str, namespace: str | None) -> Obj:
        entry = self.store.get(rt.resource, self._ns_key(rt, namespace), name)
        if entry is None:
            raise E.not_found(rt.plural, rt.group, name)
        return objmeta.loads(entry[1])

    def _objects(self, resource: str, namespace: str) -> builtins.list[Obj]:
        """Every stored object of ``resource`` in ``namespace`` (decoded; for admission, under the store lock)."""
        entries, _ = self.store.list(resource, namespace)
        return [objmeta.loads(text) for _ns, _n, (_rv, text) in entries]
