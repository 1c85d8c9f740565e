"""Priority: a pod's ``priority`` (and ``preemptionPolicy``) from its PriorityClass, or the global default one."""

from __future__ import annotations

from berth.cluster import errors as E
from berth.cluster import objmeta
from berth.cluster.admission.chain import CREATE, Attributes
from berth.cluster.host import ApiHost

PRIORITY_CLASSES = "priorityclasses.scheduling.k8s.io"


class Priority:
    name = "Priority"

    def admit(self, api: ApiHost, attrs: Attributes) -> None:
        if attrs.operation != CREATE or attrs.resource != "pods":
            return
        obj = attrs.obj
        spec = obj.get("spec") or {}
        pc_name = spec.get("priorityClassName")
        if pc_name:
            entry = api.store.get(PRIORITY_CLASSES, "", str(pc_name))
            if entry is None:
                pod = str(objmeta.meta_of(obj).get("name", ""))
                raise E.ApiError(
                    403,
                    E.Reason.FORBIDDEN,
                    f'pods "{pod}" is forbidden: no PriorityClass with name {pc_name} was found',
                    {"name": pod, "kind": "pods"},
                )
            pc = objmeta.loads(entry[1])
            spec["priority"] = int(pc.get("value", 0))
            spec.setdefault("preemptionPolicy", pc.get("preemptionPolicy", "PreemptLowerPriority"))
        else:
            default_pc = None
            entries, _ = api.store.list(PRIORITY_CLASSES)
            for _ns, _n, (_rv, text) in entries:
                pc = objmeta.loads(text)
                if pc.get("globalDefault"):
                    default_pc = pc
            if default_pc is not None:
                spec["priorityClassName"] = default_pc["metadata"]["name"]
                spec["priority"] = int(default_pc.get("value", 0))
                spec.setdefault(
                    "preemptionPolicy", default_pc.get("preemptionPolicy", "PreemptLowerPriority")
                )
            else:
                spec.setdefault("priority", 0)
        if spec.get("preemptionPolicy") is None:
            spec["preemptionPolicy"] = "PreemptLowerPriority"
