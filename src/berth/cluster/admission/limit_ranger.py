"""LimitRanger: container defaults from a namespace's LimitRanges (mutating), and their min/max/ratio constraints
(validating). The arithmetic lives in :mod:`berth.cluster.quota`; this module decides when it applies."""

from __future__ import annotations

from berth.cluster import defaults, quota
from berth.cluster.admission.chain import CREATE, Attributes, objects
from berth.cluster.host import ApiHost

LIMIT_RANGES = "limitranges"


class LimitRanger:
    name = "LimitRanger"

    def admit(self, api: ApiHost, attrs: Attributes) -> None:
        if attrs.resource != "pods" or not api.store.count(LIMIT_RANGES):
            return
        if attrs.operation == CREATE:
            obj = attrs.obj
            quota.limit_pod(obj, objects(api, LIMIT_RANGES, attrs.namespace))
            if isinstance(obj.get("status"), dict):  # upstream classes the pod after admission's defaults
                obj["status"].pop("qosClass", None)
            defaults.pod(obj)
        elif attrs.old is not None and quota.limits_update(attrs.resource, attrs.subresource):
            ranges = objects(api, LIMIT_RANGES, attrs.namespace)
            if ranges:
                quota.default_resized_pod(attrs.old, attrs.obj, ranges)

    def validate(self, api: ApiHost, attrs: Attributes) -> None:
        if not attrs.namespace or not api.store.count(LIMIT_RANGES):
            return
        if attrs.operation == CREATE:
            if attrs.resource == "persistentvolumeclaims":
                quota.limit_claim(None, attrs.obj, objects(api, LIMIT_RANGES, attrs.namespace))
        elif attrs.old is not None and quota.limits_update(attrs.resource, attrs.subresource):
            ranges = objects(api, LIMIT_RANGES, attrs.namespace)
            if ranges:
                quota.limit_update(attrs.resource, attrs.old, attrs.obj, ranges)
