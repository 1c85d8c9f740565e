"""``meta.k8s.io/v1 Table`` rendering: what ``kubectl get`` prints comes from here.

Why: kubectl asks for Tables and prints the server's columns; without them it falls back to ``NAME AGE``. So the
server must compute the same columns and cells as the real printers (k8s.io/kubernetes ``pkg/printers/
internalversion/printers.go``; for custom resources apiextensions' ``tableconvertor`` over
``additionalPrinterColumns``; for everything else the API server's default ``Name``/``Created At`` convertor).

As upstream, every column is produced, wide ones (``-o wide``) marked ``priority: 1``; kubectl hides those unless
asked. Ages use upstream ``duration.HumanDuration`` (``45s``, ``3m2s``, ``10m``, ``5h4m``, ``2d3h``, ``400d``, ``3y20d``).
Each row carries the object as ``PartialObjectMetadata`` (default), the full object (``includeObject=Object``) or
nothing (``None``): kubectl reads namespaces, labels and sort keys from it.

Pure: objects and a clock in, a Table dict out.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

Obj = dict[str, Any]
Cells = list[Any]


# -- time -----------------------------------------------------------------------------------------------------------


def parse_time(value: Any) -> dt.datetime | None:
    """RFC 3339 / Python ``isoformat`` text to an aware datetime (None when absent or unparseable)."""
    if not isinstance(value, str) or not value:
        return None
    return _parse_time_text(value)


@lru_cache(maxsize=8192)
def _parse_time_text(value: str) -> dt.datetime | None:
    text = value.strip().replace("Z", "+00:00").replace("z", "+00:00")
    try:
        parsed = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


def human_duration(delta: dt.timedelta) -> str:
    """Upstream ``duration.HumanDuration``."""
    seconds = int(delta.total_seconds())
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    if seconds < 60 * 2:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 10:
        s = seconds % 60
        return f"{minutes}m" if s == 0 else f"{minutes}m{s}s"
    if minutes < 60 * 3:
        return f"{minutes}m"
    hours = seconds // 3600
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if days == 0 else f"{hours // 24 // 365}y{days}d"
    return f"{hours // 24 // 365}y"


def age(value: Any, now: dt.datetime) -> str:
    """``translateTimestampSince``: ``<unknown>`` for a missing timestamp."""
    when = parse_time(value)
    return "<unknown>" if when is None else human_duration(now - when)


def rfc3339(value: Any) -> str:
    when = parse_time(value)
    if when is None:
        return "0001-01-01T00:00:00Z"
    return when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# -- columns ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Column:
    name: str
    type: str = "string"
    description: str = ""
    priority: int = 0
    format: str = ""

    def definition(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "format": self.format,
            "description": self.description,
            "priority": self.priority,
        }


NAME = Column("Name", "string", "Name must be unique within a namespace.", format="name")
AGE = Column(
    "Age",
    "string",
    "CreationTimestamp is a timestamp representing the server time when this object was created.",
)
CREATED_AT = Column("Created At", "date", AGE.description)


def _wide(name: str, description: str = "", type_: str = "string") -> Column:
    return Column(name, type_, description, priority=1)


CONTAINERS = _wide("Containers", "Names of each container in the template.")
IMAGES = _wide("Images", "Images referenced by each container in the template.")
SELECTOR = _wide("Selector", "Label selector for pods.")


def _get(obj: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(key)
    return obj


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _none(value: Any) -> str:
    return str(value) if value not in (None, "", [], {}) else "<none>"


def format_labels(labels: Mapping[str, Any] | None) -> str:
    """``labels.FormatLabels``: ``a=1,b=2`` (sorted), ``<none>`` when empty."""
    if not labels:
        return "<none>"
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels))


def selector_string(selector: Mapping[str, Any] | None) -> str:
    """``metav1.LabelSelectorAsSelector(...).String()``: ``app=web,tier in (a,b)``; ``<none>`` when empty."""
    if not isinstance(selector, Mapping):
        return "<none>"
    parts: list[tuple[str, str]] = []
    for key, value in (selector.get("matchLabels") or {}).items():
        parts.append((str(key), f"{key}={value}"))
    for expr in selector.get("matchExpressions") or []:
        key = str(expr.get("key", ""))
        op = expr.get("operator")
        values = ",".join(sorted(str(v) for v in expr.get("values") or []))
        if op == "In":
            parts.append((key, f"{key} in ({values})"))
        elif op == "NotIn":
            parts.append((key, f"{key} notin ({values})"))
        elif op == "Exists":
            parts.append((key, key))
        elif op == "DoesNotExist":
            parts.append((key, f"!{key}"))
    if not parts:
        return "<none>"
    return ",".join(text for _, text in sorted(parts))


def _template_containers(obj: Any, *path: str) -> tuple[str, str]:
    containers = _get(obj, *path, "containers") or []
    names = ",".join(str(c.get("name", "")) for c in containers if isinstance(c, Mapping))
    images = ",".join(str(c.get("image", "")) for c in containers if isinstance(c, Mapping))
    return names, images


def _has_condition(obj: Any, cond_type: str) -> bool:
    return any(
        isinstance(c, Mapping) and c.get("type") == cond_type and c.get("status") == "True"
        for c in _get(obj, "status", "conditions") or []
    )


# -- printers -------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Printer:
    """Columns of one kind and the function computing a row's cells."""

    columns: tuple[Column, ...]
    cells: Callable[[Obj, dt.datetime], Cells]


def _namespace(obj: Obj, now: dt.datetime) -> Cells:
    return [
        _get(obj, "metadata", "name"),
        _get(obj, "status", "phase") or "",
        age(_get(obj, "metadata", "creationTimestamp"), now),
    ]


def pod_status(pod: Obj, now: dt.datetime) -> tuple[int, int, str, str]:
    """(ready containers, total containers, STATUS reason, RESTARTS text) as ``printPod`` computes them."""
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    restarts = 0
    restartable_restarts = 0
    total = len(spec.get("containers") or [])
    ready = 0
    last_restart: dt.datetime | None = None
    last_restartable: dt.datetime | None = None
    phase = str(status.get("phase") or "")
    reason = str(status.get("reason") or phase)
    for cond in status.get("conditions") or []:
        if cond.get("type") == "PodScheduled" and cond.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"
    init_specs = {c.get("name"): c for c in spec.get("initContainers") or [] if isinstance(c, Mapping)}

    def restartable(name: Any) -> bool:
        return (init_specs.get(name) or {}).get("restartPolicy") == "Always"

    total += sum(1 for name in init_specs if restartable(name))

    def later(current: dt.datetime | None, cs: Mapping[str, Any]) -> dt.datetime | None:
        finished = parse_time(_get(cs, "lastState", "terminated", "finishedAt"))
        if finished and (current is None or finished > current):
            return finished
        return current

    init_statuses = status.get("initContainerStatuses") or []
    initializing = False
    for i, cs in enumerate(init_statuses):
        restarts += _int(cs.get("restartCount"))
        last_restart = later(last_restart, cs)
        if restartable(cs.get("name")):
            restartable_restarts += _int(cs.get("restartCount"))
            last_restartable = later(last_restartable, cs)
        state = cs.get("state") or {}
        terminated = state.get("terminated")
        waiting = state.get("waiting")
        if terminated and _int(terminated.get("exitCode")) == 0:
            continue
        if restartable(cs.get("name")) and cs.get("started"):
            if cs.get("ready"):
                ready += 1
            continue
        if terminated:
            if not terminated.get("reason"):
                if _int(terminated.get("signal")):
                    reason = f"Init:Signal:{terminated.get('signal')}"
                else:
                    reason = f"Init:ExitCode:{_int(terminated.get('exitCode'))}"
            else:
                reason = f"Init:{terminated.get('reason')}"
        elif waiting and waiting.get("reason") and waiting.get("reason") != "PodInitializing":
            reason = f"Init:{waiting.get('reason')}"
        else:
            reason = f"Init:{i}/{len(spec.get('initContainers') or [])}"
        initializing = True
        break

    if not initializing or _has_condition(pod, "Initialized"):
        restarts = restartable_restarts
        last_restart = last_restartable
        has_running = False
        for cs in reversed(status.get("containerStatuses") or []):
            restarts += _int(cs.get("restartCount"))
            last_restart = later(last_restart, cs)
            state = cs.get("state") or {}
            waiting = state.get("waiting")
            terminated = state.get("terminated")
            if waiting and waiting.get("reason"):
                reason = str(waiting["reason"])
            elif terminated and terminated.get("reason"):
                reason = str(terminated["reason"])
            elif terminated:
                if _int(terminated.get("signal")):
                    reason = f"Signal:{terminated.get('signal')}"
                else:
                    reason = f"ExitCode:{_int(terminated.get('exitCode'))}"
            elif cs.get("ready") and state.get("running") is not None:
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            reason = "Running" if _has_condition(pod, "Ready") else "NotReady"

    deleting = _get(pod, "metadata", "deletionTimestamp") is not None
    if deleting and status.get("reason") == "NodeLost":
        reason = "Unknown"
    elif deleting and phase not in ("Succeeded", "Failed"):
        reason = "Terminating"
    text = str(restarts)
    if restarts and last_restart is not None:
        text = f"{restarts} ({human_duration(now - last_restart)} ago)"
    return ready, total, reason, text


def _pod(obj: Obj, now: dt.datetime) -> Cells:
    ready, total, reason, restarts = pod_status(obj, now)
    status = obj.get("status") or {}
    ips = status.get("podIPs") or []
    ip = (ips[0].get("ip") if ips and isinstance(ips[0], Mapping) else None) or status.get("podIP")
    gates = _get(obj, "spec", "readinessGates") or []
    gates_text = "<none>"
    if gates:
        conditions = {c.get("type"): c.get("status") for c in status.get("conditions") or []}
        true_count = sum(1 for g in gates if conditions.get(g.get("conditionType")) == "True")
        gates_text = f"{true_count}/{len(gates)}"
    return [
        _get(obj, "metadata", "name"),
        f"{ready}/{total}",
        reason,
        restarts,
        age(_get(obj, "metadata", "creationTimestamp"), now),
        _none(ip),
        _none(_get(obj, "spec", "nodeName")),
        _none(status.get("nominatedNodeName")),
        gates_text,
    ]


def _pod_conditions(obj: Obj) -> list[dict[str, str]] | None:
    phase = _get(obj, "status", "phase")
    if phase == "Succeeded":
        return [
            {
                "type": "Completed",
                "status": "True",
                "reason": "Succeeded",
                "message": "The pod has completed successfully.",
            }
        ]
    if phase == "Failed":
        return [{"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}]
    return None


def node_roles(node: Obj) -> list[str]:
    roles: set[str] = set()
    for key, value in (_get(node, "metadata", "labels") or {}).items():
        if key.startswith("node-role.kubernetes.io/"):
            role = key[len("node-role.kubernetes.io/") :]
            if role:
                roles.add(role)
        elif key == "kubernetes.io/role" and value:
            roles.add(str(value))
    return sorted(roles)


def _node(obj: Obj, now: dt.datetime) -> Cells:
    conditions = {c.get("type"): c for c in _get(obj, "status", "conditions") or [] if isinstance(c, Mapping)}
    status = []
    if "Ready" in conditions:
        status.append("Ready" if conditions["Ready"].get("status") == "True" else "NotReady")
    if not status:
        status.append("Unknown")
    if _get(obj, "spec", "unschedulable"):
        status.append("SchedulingDisabled")
    addresses = _get(obj, "status", "addresses") or []

    def address(kind: str) -> str:
        return next((str(a.get("address")) for a in addresses if a.get("type") == kind), "<none>")

    info = _get(obj, "status", "nodeInfo") or {}
    return [
        _get(obj, "metadata", "name"),
        ",".join(status),
        ",".join(node_roles(obj)) or "<none>",
        age(_get(obj, "metadata", "creationTimestamp"), now),
        info.get("kubeletVersion", ""),
        address("InternalIP"),
        address("ExternalIP"),
        info.get("osImage") or "<unknown>",
        info.get("kernelVersion") or "<unknown>",
        info.get("containerRuntimeVersion") or "<unknown>",
    ]


def _deployment(obj: Obj, now: dt.datetime) -> Cells:
    names, images = _template_containers(obj, "spec", "template", "spec")
    status = obj.get("status") or {}
    desired = _int(_get(obj, "spec", "replicas")) if _get(obj, "spec", "replicas") is not None else 1
    return [
        _get(obj, "metadata", "name"),
        f"{_int(status.get('readyReplicas'))}/{desired}",
        _int(status.get("updatedReplicas")),
        _int(status.get("availableReplicas")),
        age(_get(obj, "metadata", "creationTimestamp"), now),
        names,
        images,
        selector_string(_get(obj, "spec", "selector")),
    ]


def _replica_set(obj: Obj, now: dt.datetime) -> Cells:
    names, images = _template_containers(obj, "spec", "template", "spec")
    status = obj.get("status") or {}
    desired = _int(_get(obj, "spec", "replicas")) if _get(obj, "spec", "replicas") is not None else 1
    return [
        _get(obj, "metadata", "name"),
        desired,
        _int(status.get("replicas")),
        _int(status.get("readyReplicas")),
        age(_get(obj, "metadata", "creationTimestamp"), now),
        names,
        images,
        selector_string(_get(obj, "spec", "selector")),
    ]


def _stateful_set(obj: Obj, now: dt.datetime) -> Cells:
    names, images = _template_containers(obj, "spec", "template", "spec")
    desired = _int(_get(obj, "spec", "replicas")) if _get(obj, "spec", "replicas") is not None else 1
    return [
        _get(obj, "metadata", "name"),
        f"{_int(_get(obj, 'status', 'readyReplicas'))}/{desired}",
        age(_get(obj, "metadata", "creationTimestamp"), now),
        names,
        images,
    ]


def _daemon_set(obj: Obj, now: dt.datetime) -> Cells:
    names, images = _template_containers(obj, "spec", "template", "spec")
    status = obj.get("status") or {}
    return [
        _get(obj, "metadata", "name"),
        _int(status.get("desiredNumberScheduled")),
        _int(status.get("currentNumberScheduled")),
        _int(status.get("numberReady")),
        _int(status.get("updatedNumberScheduled")),
        _int(status.get("numberAvailable")),
        format_labels(_get(obj, "spec", "template", "spec", "nodeSelector")),
        age(_get(obj, "metadata", "creationTimestamp"), now),
        names,
        images,
        selector_string(_get(obj, "spec", "selector")),
    ]


def job_status(job: Obj) -> str:
    """The STATUS column of a Job (kubectl 1.30+)."""
    if _has_condition(job, "Complete"):
        return "Complete"
    if _has_condition(job, "Failed"):
        return "Failed"
    if _get(job, "metadata", "deletionTimestamp") is not None:
        return "Terminating"
    if _has_condition(job, "Suspended"):
        return "Suspended"
    if _has_condition(job, "FailureTarget"):
        return "FailureTarget"
    if _has_condition(job, "SuccessCriteriaMet"):
        return "SuccessCriteriaMet"
    return "Running"


def _job(obj: Obj, now: dt.datetime) -> Cells:
    names, images = _template_containers(obj, "spec", "template", "spec")
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    succeeded = _int(status.get("succeeded"))
    if spec.get("completions") is not None:
        completions = f"{succeeded}/{_int(spec.get('completions'))}"
    elif spec.get("parallelism") is not None and _int(spec.get("parallelism")) > 1:
        completions = f"{succeeded}/1 of {_int(spec.get('parallelism'))}"
    else:
        completions = f"{succeeded}/1"
    start = parse_time(status.get("startTime"))
    end = parse_time(status.get("completionTime"))
    duration = "" if start is None else human_duration((end or now) - start)
    return [
        _get(obj, "metadata", "name"),
        job_status(obj),
        completions,
        duration,
        age(_get(obj, "metadata", "creationTimestamp"), now),
        names,
        images,
        selector_string(spec.get("selector")),
    ]


def _cron_job(obj: Obj, now: dt.datetime) -> Cells:
    names, images = _template_containers(obj, "spec", "jobTemplate", "spec", "template", "spec")
    spec = obj.get("spec") or {}
    last = _get(obj, "status", "lastScheduleTime")
    return [
        _get(obj, "metadata", "name"),
        spec.get("schedule", ""),
        _none(spec.get("timeZone")),
        "True" if spec.get("suspend") else "False",
        len(_get(obj, "status", "active") or []),
        age(last, now) if last else "<none>",
        age(_get(obj, "metadata", "creationTimestamp"), now),
        names,
        images,
        selector_string(_get(spec, "jobTemplate", "spec", "selector")),
    ]


def _service(obj: Obj, now: dt.datetime) -> Cells:
    spec = obj.get("spec") or {}
    stype = str(spec.get("type") or "ClusterIP")
    external = list(spec.get("externalIPs") or [])
    if stype == "LoadBalancer":
        ingress = _get(obj, "status", "loadBalancer", "ingress") or []
        lb = [str(i.get("ip") or i.get("hostname")) for i in ingress if i.get("ip") or i.get("hostname")]
        external_text = ",".join(lb + external) if lb or external else "<pending>"
    elif stype == "ExternalName":
        external_text = str(spec.get("externalName") or "")
    else:
        external_text = ",".join(external) if external else "<none>"
    ports = []
    for p in spec.get("ports") or []:
        proto = p.get("protocol") or "TCP"
        if p.get("nodePort"):
            ports.append(f"{p.get('port')}:{p.get('nodePort')}/{proto}")
        else:
            ports.append(f"{p.get('port')}/{proto}")
    return [
        _get(obj, "metadata", "name"),
        stype,
        _none(spec.get("clusterIP")),
        external_text,
        ",".join(ports) or "<none>",
        age(_get(obj, "metadata", "creationTimestamp"), now),
        format_labels(spec.get("selector")),
    ]


def _config_map(obj: Obj, now: dt.datetime) -> Cells:
    count = len(obj.get("data") or {}) + len(obj.get("binaryData") or {})
    return [_get(obj, "metadata", "name"), count, age(_get(obj, "metadata", "creationTimestamp"), now)]


def _secret(obj: Obj, now: dt.datetime) -> Cells:
    return [
        _get(obj, "metadata", "name"),
        obj.get("type") or "Opaque",
        len(obj.get("data") or {}),
        age(_get(obj, "metadata", "creationTimestamp"), now),
    ]


def _service_account(obj: Obj, now: dt.datetime) -> Cells:
    return [
        _get(obj, "metadata", "name"),
        len(obj.get("secrets") or []),
        age(_get(obj, "metadata", "creationTimestamp"), now),
    ]


def _event(obj: Obj, now: dt.datetime) -> Cells:
    new_api = str(obj.get("apiVersion", "")).startswith("events.k8s.io/")
    first_ts = obj.get("deprecatedFirstTimestamp") if new_api else obj.get("firstTimestamp")
    last_ts = obj.get("deprecatedLastTimestamp") if new_api else obj.get("lastTimestamp")
    first = age(first_ts, now) if parse_time(first_ts) else age(obj.get("eventTime"), now)
    last = age(last_ts, now) if parse_time(last_ts) else first
    count = _int(obj.get("deprecatedCount") if new_api else obj.get("count"))
    series = obj.get("series")
    if isinstance(series, Mapping):
        last = age(series.get("lastObservedTime"), now)
        count = _int(series.get("count"))
    elif count == 0:
        count = 1
    involved = (obj.get("regarding") if new_api else obj.get("involvedObject")) or {}
    kind = str(involved.get("kind") or "").lower()
    target = f"{kind}/{involved.get('name')}" if involved.get("name") else kind
    source = (obj.get("deprecatedSource") if new_api else obj.get("source")) or {}
    # Upstream formatEventSource: the reporting controller when the source has no component (the core shape
    # calls it reportingComponent).
    component = (
        source.get("component") or obj.get("reportingController") or obj.get("reportingComponent") or ""
    )
    instance = source.get("host") or obj.get("reportingInstance") or ""
    message = obj.get("note") if new_api else obj.get("message")
    return [
        last,
        obj.get("type", ""),
        obj.get("reason", ""),
        target,
        involved.get("fieldPath", ""),
        f"{component}, {instance}" if instance else component,
        str(message or "").strip(),
        first,
        count,
        _get(obj, "metadata", "name"),
    ]


def _lease(obj: Obj, now: dt.datetime) -> Cells:
    return [
        _get(obj, "metadata", "name"),
        _get(obj, "spec", "holderIdentity") or "",
        age(_get(obj, "metadata", "creationTimestamp"), now),
    ]


def _created_at(obj: Obj, now: dt.datetime) -> Cells:
    return [_get(obj, "metadata", "name"), rfc3339(_get(obj, "metadata", "creationTimestamp"))]


def _name_age(obj: Obj, now: dt.datetime) -> Cells:
    return [_get(obj, "metadata", "name"), age(_get(obj, "metadata", "creationTimestamp"), now)]


def _role_binding(obj: Obj, now: dt.datetime) -> Cells:
    ref = obj.get("roleRef") or {}
    users: list[str] = []
    groups: list[str] = []
    sas: list[str] = []
    for s in obj.get("subjects") or []:
        if s.get("kind") == "User":
            users.append(str(s.get("name")))
        elif s.get("kind") == "Group":
            groups.append(str(s.get("name")))
        elif s.get("kind") == "ServiceAccount":
            sas.append(f"{s.get('namespace') or ''}/{s.get('name')}")
    return [
        _get(obj, "metadata", "name"),
        f"{ref.get('kind')}/{ref.get('name')}",
        age(_get(obj, "metadata", "creationTimestamp"), now),
        ", ".join(users),
        ", ".join(groups),
        ", ".join(sas),
    ]


def _priority_class(obj: Obj, now: dt.datetime) -> Cells:
    return [
        _get(obj, "metadata", "name"),
        _int(obj.get("value")),
        bool(obj.get("globalDefault")),
        age(_get(obj, "metadata", "creationTimestamp"), now),
        obj.get("preemptionPolicy") or "PreemptLowerPriority",
    ]


_T = "string"
PRINTERS: dict[tuple[str, str], Printer] = {
    ("", "Namespace"): Printer((NAME, Column("Status", _T, "The status of the namespace"), AGE), _namespace),
    ("", "Pod"): Printer(
        (
            NAME,
            Column("Ready", _T, "The aggregate readiness state of this pod for accepting traffic."),
            Column("Status", _T, "The aggregate status of the containers in this pod."),
            Column(
                "Restarts",
                _T,
                "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.",
            ),
            AGE,
            _wide("IP", "podIP address allocated to the pod."),
            _wide("Node", "NodeName indicates in which node this pod is scheduled."),
            _wide(
                "Nominated Node",
                "nominatedNodeName is set only when this pod preempts other pods on the node.",
            ),
            _wide(
                "Readiness Gates", "If specified, all readiness gates will be evaluated for pod readiness."
            ),
        ),
        _pod,
    ),
    ("", "Node"): Printer(
        (
            NAME,
            Column("Status", _T, "The status of the node"),
            Column("Roles", _T, "The roles of the node"),
            AGE,
            Column("Version", _T, "Kubelet Version reported by the node."),
            _wide(
                "Internal-IP",
                "List of addresses reachable to the node. Queried from cloud provider, if available.",
            ),
            _wide(
                "External-IP",
                "List of addresses reachable to the node. Queried from cloud provider, if available.",
            ),
            _wide(
                "OS-Image",
                "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).",
            ),
            _wide(
                "Kernel-Version",
                "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).",
            ),
            _wide(
                "Container-Runtime",
                "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).",
            ),
        ),
        _node,
    ),
    ("apps", "Deployment"): Printer(
        (
            NAME,
            Column("Ready", _T, "Number of the pod with ready state"),
            Column(
                "Up-to-date",
                "integer",
                "Total number of non-terminated pods targeted by this deployment that have the desired template spec.",
            ),
            Column(
                "Available",
                "integer",
                "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.",
            ),
            AGE,
            CONTAINERS,
            IMAGES,
            SELECTOR,
        ),
        _deployment,
    ),
    ("apps", "ReplicaSet"): Printer(
        (
            NAME,
            Column("Desired", "integer", "Replicas is the number of desired replicas."),
            Column("Current", "integer", "Replicas is the most recently observed number of replicas."),
            Column("Ready", "integer", "The number of ready replicas for this replica set."),
            AGE,
            CONTAINERS,
            IMAGES,
            SELECTOR,
        ),
        _replica_set,
    ),
    ("apps", "StatefulSet"): Printer(
        (NAME, Column("Ready", _T, "Number of the pod with ready state"), AGE, CONTAINERS, IMAGES),
        _stateful_set,
    ),
    ("apps", "DaemonSet"): Printer(
        (
            NAME,
            Column("Desired", "integer", "The total number of nodes that should be running the daemon pod."),
            Column("Current", "integer", "The number of nodes that are running at least 1 daemon pod."),
            Column(
                "Ready",
                "integer",
                "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and ready.",
            ),
            Column("Up-to-date", "integer", "The total number of nodes that are running updated daemon pod"),
            Column(
                "Available",
                "integer",
                "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available.",
            ),
            Column(
                "Node Selector",
                _T,
                "NodeSelector is a selector which must be true for the pod to fit on a node.",
            ),
            AGE,
            CONTAINERS,
            IMAGES,
            SELECTOR,
        ),
        _daemon_set,
    ),
    ("batch", "Job"): Printer(
        (
            NAME,
            Column("Status", _T, "Status of the job."),
            Column("Completions", _T, "The completion status of the job."),
            Column("Duration", _T, "Time required to complete the job."),
            AGE,
            CONTAINERS,
            IMAGES,
            SELECTOR,
        ),
        _job,
    ),
    ("batch", "CronJob"): Printer(
        (
            NAME,
            Column("Schedule", _T, "The schedule in Cron format."),
            Column("Timezone", _T, "The time zone name for the given schedule."),
            Column("Suspend", "boolean", "This flag tells the controller to suspend subsequent executions."),
            Column("Active", "integer", "A list of pointers to currently running jobs."),
            Column(
                "Last Schedule", _T, "Information when was the last time the job was successfully scheduled."
            ),
            AGE,
            CONTAINERS,
            IMAGES,
            SELECTOR,
        ),
        _cron_job,
    ),
    ("", "Service"): Printer(
        (
            NAME,
            Column("Type", _T, "type determines how the Service is exposed."),
            Column("Cluster-IP", _T, "clusterIP is the IP address of the service."),
            Column(
                "External-IP",
                _T,
                "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.",
            ),
            Column("Port(s)", _T, "The list of ports that are exposed by this service."),
            AGE,
            _wide(
                "Selector", "Route service traffic to pods with label keys and values matching this selector."
            ),
        ),
        _service,
    ),
    ("", "ConfigMap"): Printer(
        (NAME, Column("Data", "integer", "Number of keys in the ConfigMap."), AGE), _config_map
    ),
    ("", "Secret"): Printer(
        (
            NAME,
            Column("Type", _T, "The type of the secret"),
            Column("Data", "integer", "Number of keys in the secret."),
            AGE,
        ),
        _secret,
    ),
    ("", "ServiceAccount"): Printer(
        (
            NAME,
            Column(
                "Secrets",
                "integer",
                "Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use.",
            ),
            AGE,
        ),
        _service_account,
    ),
    ("coordination.k8s.io", "Lease"): Printer(
        (
            NAME,
            Column("Holder", _T, "holderIdentity contains the identity of the holder of a current lease."),
            AGE,
        ),
        _lease,
    ),
    ("apiextensions.k8s.io", "CustomResourceDefinition"): Printer((NAME, CREATED_AT), _created_at),
    ("rbac.authorization.k8s.io", "Role"): Printer((NAME, CREATED_AT), _created_at),
    ("rbac.authorization.k8s.io", "ClusterRole"): Printer((NAME, CREATED_AT), _created_at),
    ("rbac.authorization.k8s.io", "RoleBinding"): Printer(
        (
            NAME,
            Column("Role", _T, "Role for this binding."),
            AGE,
            _wide("Users", "Users in the roleBinding"),
            _wide("Groups", "Groups in the roleBinding"),
            _wide("ServiceAccounts", "ServiceAccounts in the roleBinding"),
        ),
        _role_binding,
    ),
    ("scheduling.k8s.io", "PriorityClass"): Printer(
        (
            NAME,
            Column("Value", "integer", "The value of this priority class."),
            Column(
                "Global-Default",
                "boolean",
                "globalDefault specifies whether this PriorityClass should be considered as the default priority.",
            ),
            AGE,
            Column(
                "PreemptionPolicy",
                _T,
                "PreemptionPolicy is the Policy for preempting pods with lower priority.",
            ),
        ),
        _priority_class,
    ),
}
PRINTERS[("rbac.authorization.k8s.io", "ClusterRoleBinding")] = PRINTERS[
    ("rbac.authorization.k8s.io", "RoleBinding")
]

_EVENT_PRINTER = Printer(
    (
        Column("Last Seen", _T, "The time at which the most recent occurrence of this event was recorded."),
        Column("Type", _T, "Type of this event (Normal, Warning), new types could be added in the future"),
        Column(
            "Reason",
            _T,
            "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
        ),
        Column("Object", _T, "The object that this event is about."),
        _wide(
            "Subobject",
            "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement.",
        ),
        _wide(
            "Source", "The component reporting this event. Should be a short machine understandable string."
        ),
        Column("Message", _T, "A human-readable description of the status of this operation."),
        _wide(
            "First Seen",
            "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)",
        ),
        _wide("Count", "The number of times this event has occurred."),
        Column("Name", _T, NAME.description, priority=1, format="name"),
    ),
    _event,
)
PRINTERS[("", "Event")] = _EVENT_PRINTER
PRINTERS[("events.k8s.io", "Event")] = _EVENT_PRINTER


# -- more kinds charts ship ------------------------------------------------------------------------------------------


def _pdb(obj: Obj, now: dt.datetime) -> Cells:
    spec = obj.get("spec") or {}
    return [
        _get(obj, "metadata", "name"),
        str(spec["minAvailable"]) if spec.get("minAvailable") is not None else "N/A",
        str(spec["maxUnavailable"]) if spec.get("maxUnavailable") is not None else "N/A",
        _int(_get(obj, "status", "disruptionsAllowed")),
        age(_get(obj, "metadata", "creationTimestamp"), now),
    ]


def _lb_addresses(obj: Obj) -> str:
    ingress = _get(obj, "status", "loadBalancer", "ingress") or []
    return ",".join(
        str(i.get("ip") or i.get("hostname")) for i in ingress if i.get("ip") or i.get("hostname")
    )


def _ingress(obj: Obj, now: dt.datetime) -> Cells:
    spec = obj.get("spec") or {}
    hosts = [str(r.get("host") or "*") for r in spec.get("rules") or []]
    if len(hosts) > 3:
        hosts_text = ",".join(hosts[:3]) + f" + {len(hosts) - 3} more..."
    else:
        hosts_text = ",".join(hosts) or "*"
    return [
        _get(obj, "metadata", "name"),
        _none(spec.get("ingressClassName")),
        hosts_text,
        _lb_addresses(obj),
        "80, 443" if spec.get("tls") else "80",
        age(_get(obj, "metadata", "creationTimestamp"), now),
    ]


def _network_policy(obj: Obj, now: dt.datetime) -> Cells:
    selector = _get(obj, "spec", "podSelector")
    text = selector_string(selector)
    return [_get(obj, "metadata", "name"), text, age(_get(obj, "metadata", "creationTimestamp"), now)]


_ACCESS_MODES = {
    "ReadWriteOnce": "RWO",
    "ReadOnlyMany": "ROX",
    "ReadWriteMany": "RWX",
    "ReadWriteOncePod": "RWOP",
}


def _access_modes(modes: Any) -> str:
    return ",".join(_ACCESS_MODES.get(str(m), str(m)) for m in modes or [])


def _pvc(obj: Obj, now: dt.datetime) -> Cells:
    spec = obj.get("spec") or {}
    phase = str(_get(obj, "status", "phase") or "")
    if _get(obj, "metadata", "deletionTimestamp") is not None:
        phase = "Terminating"
    bound = bool(spec.get("volumeName"))
    return [
        _get(obj, "metadata", "name"),
        phase,
        spec.get("volumeName") or "",
        (_get(obj, "status", "capacity", "storage") or "") if bound else "",
        _access_modes(_get(obj, "status", "accessModes")) if bound else "",
        spec.get("storageClassName") or "",
        spec.get("volumeAttributesClassName") or "<unset>",
        age(_get(obj, "metadata", "creationTimestamp"), now),
        spec.get("volumeMode") or "Filesystem",
    ]


def _storage_class(obj: Obj, now: dt.datetime) -> Cells:
    name = str(_get(obj, "metadata", "name") or "")
    annotations = _get(obj, "metadata", "annotations") or {}
    default = (
        "storageclass.kubernetes.io/is-default-class",
        "storageclass.beta.kubernetes.io/is-default-class",
    )
    if any(annotations.get(a) == "true" for a in default):
        name += " (default)"
    return [
        name,
        obj.get("provisioner", ""),
        obj.get("reclaimPolicy") or "Delete",
        obj.get("volumeBindingMode") or "Immediate",
        bool(obj.get("allowVolumeExpansion")),
        age(_get(obj, "metadata", "creationTimestamp"), now),
    ]


def _endpoints(obj: Obj, now: dt.datetime) -> Cells:
    shown: list[str] = []
    total = 0
    for subset in obj.get("subsets") or []:
        ports = subset.get("ports") or [{}]
        for address in subset.get("addresses") or []:
            for port in ports:
                total += 1
                if len(shown) < 3:
                    ip = address.get("ip", "")
                    shown.append(f"{ip}:{port['port']}" if port.get("port") else str(ip))
    text = ",".join(shown) if shown else "<none>"
    if total > len(shown):
        text += f" + {total - len(shown)} more..."
    return [_get(obj, "metadata", "name"), text, age(_get(obj, "metadata", "creationTimestamp"), now)]


def _controller_revision(obj: Obj, now: dt.datetime) -> Cells:
    owner = next((o for o in _get(obj, "metadata", "ownerReferences") or [] if o.get("controller")), None)
    controller = "<none>"
    if owner:
        group = str(owner.get("apiVersion", "")).rpartition("/")[0]
        kind = str(owner.get("kind", "")).lower()
        controller = f"{kind}.{group}/{owner.get('name')}" if group else f"{kind}/{owner.get('name')}"
    return [
        _get(obj, "metadata", "name"),
        controller,
        _int(obj.get("revision")),
        age(_get(obj, "metadata", "creationTimestamp"), now),
    ]


def _webhooks(obj: Obj, now: dt.datetime) -> Cells:
    return [
        _get(obj, "metadata", "name"),
        len(obj.get("webhooks") or []),
        age(_get(obj, "metadata", "creationTimestamp"), now),
    ]


def _resource_claim(obj: Obj, now: dt.datetime) -> Cells:
    """STATE as kubectl prints it: deleted / pending / allocated, reserved or deallocating, comma-joined."""
    deleted = bool(_get(obj, "metadata", "deletionTimestamp"))
    states = ["deleted"] if deleted else []
    if not _get(obj, "status", "allocation"):
        if not deleted:
            states.append("pending")
    else:
        states.append("allocated")
        if _get(obj, "status", "reservedFor"):
            states.append("reserved")
        elif deleted:
            states.append("deallocating")
    return [
        _get(obj, "metadata", "name"),
        ",".join(states),
        age(_get(obj, "metadata", "creationTimestamp"), now),
    ]


def _resource_slice(obj: Obj, now: dt.datetime) -> Cells:
    return [
        _get(obj, "metadata", "name"),
        _get(obj, "spec", "nodeName") or "",
        _get(obj, "spec", "driver") or "",
        _get(obj, "spec", "pool", "name") or "",
        age(_get(obj, "metadata", "creationTimestamp"), now),
    ]


def _volume_attributes_class(obj: Obj, now: dt.datetime) -> Cells:
    return [_get(obj, "metadata", "name"), _get(obj, "driverName") or "", age(_created(obj), now)]


def _flow_schema(obj: Obj, now: dt.datetime) -> Cells:
    missing = "Unknown"
    for c in _get(obj, "status", "conditions") or []:
        if isinstance(c, dict) and c.get("type") == "Dangling":
            missing = str(c.get("status") or "Unknown")
    method = _get(obj, "spec", "distinguisherMethod", "type") or "<none>"
    return [
        _get(obj, "metadata", "name"),
        _get(obj, "spec", "priorityLevelConfiguration", "name") or "",
        _int(_get(obj, "spec", "matchingPrecedence")),
        method,
        age(_created(obj), now),
        missing,
    ]


def _priority_level(obj: Obj, now: dt.datetime) -> Cells:
    limited = _get(obj, "spec", "limited") or {}
    queuing = _get(limited, "limitResponse", "queuing") or {}
    shares: Any = "<none>"
    if _get(obj, "spec", "type") == "Limited":
        shares = _int(limited.get("nominalConcurrencyShares"))
    return [
        _get(obj, "metadata", "name"),
        _get(obj, "spec", "type") or "",
        shares,
        queuing.get("queues", "<none>"),
        queuing.get("handSize", "<none>"),
        queuing.get("queueLengthLimit", "<none>"),
        age(_created(obj), now),
    ]


def _service_cidr(obj: Obj, now: dt.datetime) -> Cells:
    return [
        _get(obj, "metadata", "name"),
        ",".join(_get(obj, "spec", "cidrs") or []),
        age(_created(obj), now),
    ]


def _ip_address(obj: Obj, now: dt.datetime) -> Cells:
    ref = _get(obj, "spec", "parentRef") or {}
    group = f".{ref['group']}" if ref.get("group") else ""
    parent = (
        f"{ref.get('resource', '')}{group}/{ref.get('namespace', '')}/{ref.get('name', '')}" if ref else ""
    )
    return [_get(obj, "metadata", "name"), parent]


def _created(obj: Obj) -> Any:
    return _get(obj, "metadata", "creationTimestamp")


def _api_service(obj: Obj, now: dt.datetime) -> Cells:
    svc = _get(obj, "spec", "service")
    service = f"{svc.get('namespace', '')}/{svc.get('name', '')}" if isinstance(svc, dict) else "Local"
    available = "Unknown"
    for c in _get(obj, "status", "conditions") or []:
        if isinstance(c, dict) and c.get("type") == "Available":
            status, reason = str(c.get("status", "")), str(c.get("reason") or "")
            available = f"{status} ({reason})" if status != "True" and reason else status
    return [
        _get(obj, "metadata", "name"),
        service,
        available,
        age(_get(obj, "metadata", "creationTimestamp"), now),
    ]


def _csr(obj: Obj, now: dt.datetime) -> Cells:
    kinds = {c.get("type") for c in _get(obj, "status", "conditions") or [] if isinstance(c, dict)}
    state = "Denied" if "Denied" in kinds else "Approved" if "Approved" in kinds else "Pending"
    if "Failed" in kinds:
        state += ",Failed"
    if _get(obj, "status", "certificate"):
        state += ",Issued"
    seconds = _get(obj, "spec", "expirationSeconds")
    duration = human_duration(dt.timedelta(seconds=int(seconds))) if isinstance(seconds, int) else "<none>"
    return [
        _get(obj, "metadata", "name"),
        age(_get(obj, "metadata", "creationTimestamp"), now),
        _get(obj, "spec", "signerName") or "",
        _get(obj, "spec", "username") or "",
        duration,
        state,
    ]


def _replication_controller(obj: Obj, now: dt.datetime) -> Cells:
    names, images = _template_containers(obj, "spec", "template", "spec")
    status = obj.get("status") or {}
    desired = _int(_get(obj, "spec", "replicas")) if _get(obj, "spec", "replicas") is not None else 1
    return [
        _get(obj, "metadata", "name"),
        desired,
        _int(status.get("replicas")),
        _int(status.get("readyReplicas")),
        age(_get(obj, "metadata", "creationTimestamp"), now),
        names,
        images,
        format_labels(_get(obj, "spec", "selector")),
    ]


def _hpa_targets(obj: Obj) -> str:
    parts: list[str] = []
    current = {
        str(_get(m, "resource", "name")): _get(m, "resource", "current", "averageUtilization")
        for m in _get(obj, "status", "currentMetrics") or []
        if m.get("type") == "Resource"
    }
    for metric in _get(obj, "spec", "metrics") or []:
        if metric.get("type") != "Resource":
            parts.append("<unknown>")
            continue
        name = str(_get(metric, "resource", "name"))
        target = _get(metric, "resource", "target") or {}
        now_value = current.get(name)
        shown = f"{now_value}%" if now_value is not None else "<unknown>"
        if target.get("averageUtilization") is not None:
            parts.append(f"{name}: {shown}/{target['averageUtilization']}%")
        else:
            parts.append(
                f"{name}: <unknown>/{target.get('averageValue') or target.get('value') or '<unset>'}"
            )
    if not parts:
        return "<none>"
    if len(parts) > 2:
        return ", ".join(parts[:2]) + f" + {len(parts) - 2} more..."
    return ", ".join(parts)


def _hpa(obj: Obj, now: dt.datetime) -> Cells:
    ref = _get(obj, "spec", "scaleTargetRef") or {}
    return [
        _get(obj, "metadata", "name"),
        f"{ref.get('kind')}/{ref.get('name')}",
        _hpa_targets(obj),
        _int(_get(obj, "spec", "minReplicas")) if _get(obj, "spec", "minReplicas") is not None else "<unset>",
        _int(_get(obj, "spec", "maxReplicas")),
        _int(_get(obj, "status", "currentReplicas")),
        age(_get(obj, "metadata", "creationTimestamp"), now),
    ]


PRINTERS.update(
    {
        ("policy", "PodDisruptionBudget"): Printer(
            (
                NAME,
                Column(
                    "Min Available", _T, "The minimum number of pods that must be available simultaneously."
                ),
                Column(
                    "Max Unavailable",
                    _T,
                    "The maximum number of pods that may be unavailable simultaneously.",
                ),
                Column(
                    "Allowed Disruptions",
                    "integer",
                    "Calculated number of pods that may be disrupted at this time.",
                ),
                AGE,
            ),
            _pdb,
        ),
        ("networking.k8s.io", "Ingress"): Printer(
            (
                NAME,
                Column("Class", _T, "The name of the IngressClass resource."),
                Column(
                    "Hosts", _T, "Hosts that incoming requests are matched against before the ingress rule"
                ),
                Column("Address", _T, "Address is a list containing ingress points for the load-balancer"),
                Column("Ports", _T, "Ports of TLS configurations that open"),
                AGE,
            ),
            _ingress,
        ),
        ("networking.k8s.io", "NetworkPolicy"): Printer(
            (
                NAME,
                Column("Pod-Selector", _T, "Selects the pods to which this NetworkPolicy object applies."),
                AGE,
            ),
            _network_policy,
        ),
        ("", "PersistentVolumeClaim"): Printer(
            (
                NAME,
                Column("Status", _T, "Phase represents the current phase of PersistentVolumeClaim."),
                Column("Volume", _T, "The binding reference to the PersistentVolume backing this claim."),
                Column("Capacity", _T, "The actual resources of the underlying volume."),
                Column(
                    "Access Modes",
                    _T,
                    "AccessModes contains the desired access modes the volume should have.",
                ),
                Column("StorageClass", _T, "Name of the StorageClass required by the claim."),
                Column("VolumeAttributesClass", _T, "Name of the VolumeAttributesClass used by the claim."),
                AGE,
                _wide("VolumeMode", "volumeMode defines what type of volume is required by the claim."),
            ),
            _pvc,
        ),
        ("storage.k8s.io", "StorageClass"): Printer(
            (
                NAME,
                Column("Provisioner", _T, "Indicates the type of the provisioner."),
                Column("ReclaimPolicy", _T, "Indicates the type of the reclaim policy."),
                Column(
                    "VolumeBindingMode",
                    _T,
                    "Indicates how PersistentVolumeClaims should be provisioned and bound.",
                ),
                Column(
                    "AllowVolumeExpansion", _T, "Indicates whether the storage class allow volume expand."
                ),
                AGE,
            ),
            _storage_class,
        ),
        ("", "Endpoints"): Printer(
            (NAME, Column("Endpoints", _T, "Endpoints is the list of endpoints of the service."), AGE),
            _endpoints,
        ),
        ("apps", "ControllerRevision"): Printer(
            (
                NAME,
                Column("Controller", _T, "Controller of the object, with the format <kind>/<name>"),
                Column(
                    "Revision", "integer", "Revision indicates the revision of the state represented by Data."
                ),
                AGE,
            ),
            _controller_revision,
        ),
        ("resource.k8s.io", "ResourceClaim"): Printer(
            (
                NAME,
                Column("State", _T, "A summary of the current state (allocated, pending, reserved, etc.)."),
                AGE,
            ),
            _resource_claim,
        ),
        ("resource.k8s.io", "ResourceSlice"): Printer(
            (
                NAME,
                Column("Node", _T, "The node providing the devices of this slice."),
                Column("Driver", _T, "The name of the driver providing the devices of this slice."),
                Column("Pool", _T, "The pool containing the devices in this slice."),
                AGE,
            ),
            _resource_slice,
        ),
        ("storage.k8s.io", "VolumeAttributesClass"): Printer(
            (NAME, Column("DriverName", _T, "DriverName is the name of the CSI driver."), AGE),
            _volume_attributes_class,
        ),
        ("flowcontrol.apiserver.k8s.io", "FlowSchema"): Printer(
            (
                NAME,
                Column("PriorityLevel", _T, "The priority level of this flow schema."),
                Column("MatchingPrecedence", "integer", "The matching precedence of this flow schema."),
                Column("DistinguisherMethod", _T, "The distinguisher method of this flow schema."),
                AGE,
                Column("MissingPL", _T, "Whether the priority level of this flow schema is missing."),
            ),
            _flow_schema,
        ),
        ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"): Printer(
            (
                NAME,
                Column("Type", _T, "The type of the priority level: Exempt or Limited."),
                Column("NominalConcurrencyShares", _T, "The nominal concurrency shares of a Limited level."),
                Column("Queues", _T, "The number of queues of a queuing Limited level."),
                Column("HandSize", _T, "The hand size of a queuing Limited level."),
                Column("QueueLengthLimit", _T, "The queue length limit of a queuing Limited level."),
                AGE,
            ),
            _priority_level,
        ),
        ("networking.k8s.io", "ServiceCIDR"): Printer(
            (NAME, Column("CIDRs", _T, "The CIDRs of this ServiceCIDR."), AGE),
            _service_cidr,
        ),
        ("networking.k8s.io", "IPAddress"): Printer(
            (NAME, Column("ParentRef", _T, "The object this IP address is allocated to.")),
            _ip_address,
        ),
        ("apiregistration.k8s.io", "APIService"): Printer(
            (
                NAME,
                Column("Service", "string", "The reference to the service that hosts this API endpoint."),
                Column("Available", "string", "Whether this service is available."),
                AGE,
            ),
            _api_service,
        ),
        ("certificates.k8s.io", "CertificateSigningRequest"): Printer(
            (
                NAME,
                AGE,
                Column("SignerName", "string", "Signer name of the request."),
                Column("Requestor", "string", "Name of the user who requested the certificate."),
                Column("RequestedDuration", "string", "Requested duration of the issued certificate."),
                Column(
                    "Condition", "string", "Approval state: Approved, Denied or Pending; Issued once signed."
                ),
            ),
            _csr,
        ),
        ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"): Printer(
            (NAME, Column("Webhooks", "integer", "Webhooks indicates the number of webhooks."), AGE),
            _webhooks,
        ),
        ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"): Printer(
            (NAME, Column("Webhooks", "integer", "Webhooks indicates the number of webhooks."), AGE),
            _webhooks,
        ),
        ("", "ReplicationController"): Printer(
            (
                NAME,
                Column("Desired", "integer", "Replicas is the number of desired replicas."),
                Column("Current", "integer", "Replicas is the most recently observed number of replicas."),
                Column("Ready", "integer", "The number of ready replicas for this replication controller."),
                AGE,
                CONTAINERS,
                IMAGES,
                SELECTOR,
            ),
            _replication_controller,
        ),
        ("autoscaling", "HorizontalPodAutoscaler"): Printer(
            (
                NAME,
                Column("Reference", _T, "Reference to the scaled object."),
                Column("Targets", _T, "The current and target metric values."),
                Column("MinPods", _T, "Lower limit for the number of pods."),
                Column("MaxPods", "integer", "Upper limit for the number of pods."),
                Column(
                    "Replicas", "integer", "Current number of replicas of pods managed by this autoscaler."
                ),
                AGE,
            ),
            _hpa,
        ),
    }
)


def _pv(obj: Obj, now: dt.datetime) -> Cells:
    spec = obj.get("spec") or {}
    claim_ref = spec.get("claimRef") or {}
    claim = f"{claim_ref.get('namespace')}/{claim_ref.get('name')}" if claim_ref.get("name") else ""
    phase = str(_get(obj, "status", "phase") or "")
    if _get(obj, "metadata", "deletionTimestamp") is not None:
        phase = "Terminating"
    return [
        _get(obj, "metadata", "name"),
        _get(spec, "capacity", "storage") or "",
        _access_modes(spec.get("accessModes")),
        spec.get("persistentVolumeReclaimPolicy") or "",
        phase,
        claim,
        spec.get("storageClassName") or "",
        spec.get("volumeAttributesClassName") or "<unset>",
        _get(obj, "status", "reason") or "",
        age(_get(obj, "metadata", "creationTimestamp"), now),
        spec.get("volumeMode") or "Filesystem",
    ]


def _endpoint_slice(obj: Obj, now: dt.datetime) -> Cells:
    ports = [str(p.get("port")) for p in obj.get("ports") or [] if p.get("port") is not None]
    addresses = [str(a) for e in obj.get("endpoints") or [] for a in e.get("addresses") or []]
    shown = ",".join(addresses[:3]) if addresses else "<unset>"
    if len(addresses) > 3:
        shown += f" + {len(addresses) - 3} more..."
    return [
        _get(obj, "metadata", "name"),
        obj.get("addressType", ""),
        ",".join(ports) if ports else "<unset>",
        shown,
        age(_get(obj, "metadata", "creationTimestamp"), now),
    ]


def _ingress_class(obj: Obj, now: dt.datetime) -> Cells:
    params = _get(obj, "spec", "parameters") or {}
    text = "<none>"
    if params:
        kind = params.get("kind", "")
        group = params.get("apiGroup")
        text = f"{kind}.{group}/{params.get('name')}" if group else f"{kind}/{params.get('name')}"
    return [
        _get(obj, "metadata", "name"),
        _get(obj, "spec", "controller") or "",
        text,
        age(_get(obj, "metadata", "creationTimestamp"), now),
    ]


def _resource_quota(obj: Obj, now: dt.datetime) -> Cells:
    hard = _get(obj, "status", "hard") or {}
    used = _get(obj, "status", "used") or {}
    requests: list[str] = []
    limits: list[str] = []
    for name in sorted(hard):
        text = f"{name}: {used.get(name, '0')}/{hard[name]}"
        (limits if str(name).split(".")[0] == "limits" and "." in str(name) else requests).append(text)
    return [
        _get(obj, "metadata", "name"),
        age(_get(obj, "metadata", "creationTimestamp"), now),
        ", ".join(requests),
        ", ".join(limits),
    ]


def _runtime_class(obj: Obj, now: dt.datetime) -> Cells:
    return [
        _get(obj, "metadata", "name"),
        obj.get("handler", ""),
        age(_get(obj, "metadata", "creationTimestamp"), now),
    ]


PRINTERS.update(
    {
        ("", "PersistentVolume"): Printer(
            (
                NAME,
                Column(
                    "Capacity",
                    _T,
                    "capacity is the description of the persistent volume's resources and capacity.",
                ),
                Column("Access Modes", _T, "accessModes contains all ways the volume can be mounted."),
                Column(
                    "Reclaim Policy", _T, "What happens to a persistent volume when released from its claim."
                ),
                Column(
                    "Status",
                    _T,
                    "phase indicates if a volume is available, bound to a claim, or released by a claim.",
                ),
                Column(
                    "Claim",
                    _T,
                    "claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim.",
                ),
                Column(
                    "StorageClass",
                    _T,
                    "storageClassName is the name of StorageClass to which this persistent volume belongs.",
                ),
                Column(
                    "VolumeAttributesClass",
                    _T,
                    "Name of VolumeAttributesClass to which this persistent volume belongs.",
                ),
                Column("Reason", _T, "reason is a brief CamelCase string that describes any failure."),
                AGE,
                _wide(
                    "VolumeMode",
                    "volumeMode defines if a volume is intended to be used with a formatted filesystem or to remain in raw block state.",
                ),
            ),
            _pv,
        ),
        ("discovery.k8s.io", "EndpointSlice"): Printer(
            (
                NAME,
                Column(
                    "AddressType",
                    _T,
                    "addressType specifies the type of address carried by this EndpointSlice.",
                ),
                Column(
                    "Ports",
                    _T,
                    "ports specifies the list of network ports exposed by each endpoint in this slice.",
                ),
                Column("Endpoints", _T, "endpoints is a list of unique endpoints in this slice."),
                AGE,
            ),
            _endpoint_slice,
        ),
        ("networking.k8s.io", "IngressClass"): Printer(
            (
                NAME,
                Column("Controller", _T, "Controller that is responsible for handling this class"),
                Column("Parameters", _T, "A reference to a resource with additional parameters"),
                AGE,
            ),
            _ingress_class,
        ),
        ("", "ResourceQuota"): Printer(
            (
                NAME,
                AGE,
                Column(
                    "Request",
                    _T,
                    "Request represents a minimum amount of cpu/memory that a container may consume.",
                ),
                Column(
                    "Limit",
                    _T,
                    "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.",
                ),
            ),
            _resource_quota,
        ),
        ("", "LimitRange"): Printer((NAME, CREATED_AT), _created_at),
        ("node.k8s.io", "RuntimeClass"): Printer(
            (NAME, Column("Handler", _T, "The name of the CRI handler"), AGE), _runtime_class
        ),
    }
)

GENERIC = Printer((NAME, AGE), _name_age)
"""Built-in kinds without a printer here: ``NAME AGE`` (what most upstream printers start with)."""


# -- custom resources: additionalPrinterColumns ------------------------------------------------------------------------

_TOKEN = re.compile(
    r"""\.([A-Za-z0-9_\-$]+)|\[(\d+|\*)\]|\[['"]([^'"]+)['"]\]|\[\?\(@\.([A-Za-z0-9_.\-]+)\s*==\s*['"]?([^'")]*)['"]?\)\]"""
)


def json_path(obj: Any, expression: str) -> list[Any]:
    """The values a printer-column JSONPath selects (subset: ``.a.b``, ``[0]``, ``[*]``, ``['k.x']``,
    ``[?(@.type=="Ready")]``), in document order."""
    expr = expression.strip()
    if expr.startswith("{") and expr.endswith("}"):
        expr = expr[1:-1]
    if expr.startswith("$"):
        expr = expr[1:]
    current: list[Any] = [obj]
    pos = 0
    while pos < len(expr):
        match = _TOKEN.match(expr, pos)
        if match is None:
            return []
        field, index, quoted, filter_key, filter_value = match.groups()
        nxt: list[Any] = []
        for value in current:
            if field is not None or quoted is not None:
                key = field if field is not None else quoted
                if isinstance(value, Mapping) and key in value:
                    nxt.append(value[key])
            elif index is not None:
                if isinstance(value, list):
                    if index == "*":
                        nxt.extend(value)
                    elif int(index) < len(value):
                        nxt.append(value[int(index)])
            elif filter_key is not None and isinstance(value, list):
                for item in value:
                    found: Any = item
                    for part in filter_key.split("."):
                        found = found.get(part) if isinstance(found, Mapping) else None
                    if (
                        found is not None
                        and str(found if not isinstance(found, bool) else str(found).lower()) == filter_value
                    ):
                        nxt.append(item)
        current = nxt
        pos = match.end()
    return current


def _cell_for_json_value(column_type: str, value: Any, now: dt.datetime) -> Any:
    """apiextensions ``cellForJSONValue`` (plus string printing of non-string values, as its JSONPath printer does)."""
    if value is None:
        return None
    if column_type == "integer":
        if isinstance(value, bool):
            return None
        if isinstance(value, int | float):
            return int(value)
        return None
    if column_type == "number":
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
    if column_type == "boolean":
        return value if isinstance(value, bool) else None
    if column_type == "date":
        if isinstance(value, str):
            when = parse_time(value)
            return "<invalid>" if when is None else human_duration(now - when)
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def custom_resource_printer(
    printer_columns: Sequence[Mapping[str, Any]],
) -> tuple[list[Column], Callable[[Obj, dt.datetime], Cells]]:
    """Columns and cell function for a CRD version's ``additionalPrinterColumns`` (default: ``Age``)."""
    specs = list(printer_columns) or [
        {
            "name": "Age",
            "type": "date",
            "jsonPath": ".metadata.creationTimestamp",
            "description": AGE.description,
        }
    ]
    columns = [NAME] + [
        Column(
            str(c.get("name", "")),
            str(c.get("type", "string")),
            str(c.get("description", "")),
            int(c.get("priority", 0) or 0),
            str(c.get("format", "")),
        )
        for c in specs
    ]

    def cells(obj: Obj, now: dt.datetime) -> Cells:
        out: Cells = [_get(obj, "metadata", "name")]
        for c in specs:
            found = json_path(obj, str(c.get("jsonPath", "")))
            out.append(_cell_for_json_value(str(c.get("type", "string")), found[0] if found else None, now))
        return out

    return columns, cells


# -- the Table -------------------------------------------------------------------------------------------------------

INCLUDE_METADATA = "Metadata"
INCLUDE_OBJECT = "Object"
INCLUDE_NONE = "None"


def _row_object(obj: Obj, include_object: str) -> Any:
    if include_object == INCLUDE_OBJECT:
        return obj
    meta = dict(obj.get("metadata") or {})
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": meta}


def printer_for(kind: str, api_group: str) -> Printer:
    """The printer of a built-in kind (``GENERIC`` when there is none)."""
    return PRINTERS.get((api_group, kind)) or GENERIC


def to_table(
    kind: str,
    objects: Sequence[Obj],
    *,
    now: dt.datetime,
    api_group: str | None = None,
    wide: bool = True,
    include_object: str = INCLUDE_METADATA,
    printer_columns: Sequence[Mapping[str, Any]] | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> Obj:
    """Render ``objects`` (all of ``kind``) as a ``meta.k8s.io/v1`` Table.

    Args:
        kind: the objects' kind.
        objects: the objects, in the order rows should appear.
        now: the clock for AGE columns (aware datetime, UTC).
        api_group: the kind's group; default from the first object's apiVersion.
        wide: include ``priority: 1`` columns (the real server always does; kubectl hides them without ``-o wide``).
        include_object: ``Metadata`` (PartialObjectMetadata), ``Object`` (full objects) or ``None``.
        printer_columns: for a custom resource, its version's ``additionalPrinterColumns`` (``[]`` for none, which
            gives ``NAME AGE``); leave None for built-in kinds.
        metadata: Table ``metadata`` (``resourceVersion``, ``continue``).
    """
    if api_group is None:
        api_group = str((objects[0] if objects else {}).get("apiVersion", "")).rpartition("/")[0]
    if printer_columns is not None:
        columns, cell_fn = custom_resource_printer(printer_columns)
    else:
        printer = printer_for(kind, api_group)
        columns, cell_fn = list(printer.columns), printer.cells
    keep = [i for i, c in enumerate(columns) if wide or c.priority == 0]
    rows: list[Obj] = []
    for obj in objects:
        cells = cell_fn(obj, now)
        row: Obj = {"cells": [cells[i] if i < len(cells) else None for i in keep]}
        if kind == "Pod" and printer_columns is None:
            conditions = _pod_conditions(obj)
            if conditions:
                row["conditions"] = conditions
        if include_object != INCLUDE_NONE:
            row["object"] = _row_object(obj, include_object)
        rows.append(row)
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": dict(metadata or {}),
        "columnDefinitions": [columns[i].definition() for i in keep],
        "rows": rows,
    }
