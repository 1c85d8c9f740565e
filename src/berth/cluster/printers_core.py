"""Printers of the core and workload kinds (pods, nodes, namespaces, services, deployments, jobs, events, RBAC
...), as upstream's ``printers.go``: the columns and how each row's cells are computed."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from berth.cluster.table_cells import (
    AGE,
    CONTAINERS,
    CREATED_AT,
    IMAGES,
    NAME,
    SELECTOR,
    Cells,
    Column,
    Obj,
    Printer,
    age,
    as_int,
    dig,
    format_labels,
    has_condition,
    human_duration,
    or_none,
    parse_time,
    rfc3339,
    selector_string,
    template_containers,
    wide,
)


def _namespace(obj: Obj, now: dt.datetime) -> Cells:
    return [
        dig(obj, "metadata", "name"),
        dig(obj, "status", "phase") or "",
        age(dig(obj, "metadata", "creationTimestamp"), now),
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
        finished = parse_time(dig(cs, "lastState", "terminated", "finishedAt"))
        if finished and (current is None or finished > current):
            return finished
        return current

    init_statuses = status.get("initContainerStatuses") or []
    initializing = False
    for i, cs in enumerate(init_statuses):
        restarts += as_int(cs.get("restartCount"))
        last_restart = later(last_restart, cs)
        if restartable(cs.get("name")):
            restartable_restarts += as_int(cs.get("restartCount"))
            last_restartable = later(last_restartable, cs)
        state = cs.get("state") or {}
        terminated = state.get("terminated")
        waiting = state.get("waiting")
        if terminated and as_int(terminated.get("exitCode")) == 0:
            continue
        if restartable(cs.get("name")) and cs.get("started"):
            if cs.get("ready"):
                ready += 1
            continue
        if terminated:
            if not terminated.get("reason"):
                if as_int(terminated.get("signal")):
                    reason = f"Init:Signal:{terminated.get('signal')}"
                else:
                    reason = f"Init:ExitCode:{as_int(terminated.get('exitCode'))}"
            else:
                reason = f"Init:{terminated.get('reason')}"
        elif waiting and waiting.get("reason") and waiting.get("reason") != "PodInitializing":
            reason = f"Init:{waiting.get('reason')}"
        else:
            reason = f"Init:{i}/{len(spec.get('initContainers') or [])}"
        initializing = True
        break

    if not initializing or has_condition(pod, "Initialized"):
        restarts = restartable_restarts
        last_restart = last_restartable
        has_running = False
        for cs in reversed(status.get("containerStatuses") or []):
            restarts += as_int(cs.get("restartCount"))
            last_restart = later(last_restart, cs)
            state = cs.get("state") or {}
            waiting = state.get("waiting")
            terminated = state.get("terminated")
            if waiting and waiting.get("reason"):
                reason = str(waiting["reason"])
            elif terminated and terminated.get("reason"):
                reason = str(terminated["reason"])
            elif terminated:
                if as_int(terminated.get("signal")):
                    reason = f"Signal:{terminated.get('signal')}"
                else:
                    reason = f"ExitCode:{as_int(terminated.get('exitCode'))}"
            elif cs.get("ready") and state.get("running") is not None:
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            reason = "Running" if has_condition(pod, "Ready") else "NotReady"

    deleting = dig(pod, "metadata", "deletionTimestamp") is not None
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
    gates = dig(obj, "spec", "readinessGates") or []
    gates_text = "<none>"
    if gates:
        conditions = {c.get("type"): c.get("status") for c in status.get("conditions") or []}
        true_count = sum(1 for g in gates if conditions.get(g.get("conditionType")) == "True")
        gates_text = f"{true_count}/{len(gates)}"
    return [
        dig(obj, "metadata", "name"),
        f"{ready}/{total}",
        reason,
        restarts,
        age(dig(obj, "metadata", "creationTimestamp"), now),
        or_none(ip),
        or_none(dig(obj, "spec", "nodeName")),
        or_none(status.get("nominatedNodeName")),
        gates_text,
    ]


def pod_conditions(obj: Obj) -> list[dict[str, str]] | None:
    phase = dig(obj, "status", "phase")
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
    for key, value in (dig(node, "metadata", "labels") or {}).items():
        if key.startswith("node-role.kubernetes.io/"):
            role = key[len("node-role.kubernetes.io/") :]
            if role:
                roles.add(role)
        elif key == "kubernetes.io/role" and value:
            roles.add(str(value))
    return sorted(roles)


def _node(obj: Obj, now: dt.datetime) -> Cells:
    conditions = {c.get("type"): c for c in dig(obj, "status", "conditions") or [] if isinstance(c, Mapping)}
    status = []
    if "Ready" in conditions:
        status.append("Ready" if conditions["Ready"].get("status") == "True" else "NotReady")
    if not status:
        status.append("Unknown")
    if dig(obj, "spec", "unschedulable"):
        status.append("SchedulingDisabled")
    addresses = dig(obj, "status", "addresses") or []

    def address(kind: str) -> str:
        return next((str(a.get("address")) for a in addresses if a.get("type") == kind), "<none>")

    info = dig(obj, "status", "nodeInfo") or {}
    return [
        dig(obj, "metadata", "name"),
        ",".join(status),
        ",".join(node_roles(obj)) or "<none>",
        age(dig(obj, "metadata", "creationTimestamp"), now),
        info.get("kubeletVersion", ""),
        address("InternalIP"),
        address("ExternalIP"),
        info.get("osImage") or "<unknown>",
        info.get("kernelVersion") or "<unknown>",
        info.get("containerRuntimeVersion") or "<unknown>",
    ]


def _deployment(obj: Obj, now: dt.datetime) -> Cells:
    names, images = template_containers(obj, "spec", "template", "spec")
    status = obj.get("status") or {}
    desired = as_int(dig(obj, "spec", "replicas")) if dig(obj, "spec", "replicas") is not None else 1
    return [
        dig(obj, "metadata", "name"),
        f"{as_int(status.get('readyReplicas'))}/{desired}",
        as_int(status.get("updatedReplicas")),
        as_int(status.get("availableReplicas")),
        age(dig(obj, "metadata", "creationTimestamp"), now),
        names,
        images,
        selector_string(dig(obj, "spec", "selector")),
    ]


def _replica_set(obj: Obj, now: dt.datetime) -> Cells:
    names, images = template_containers(obj, "spec", "template", "spec")
    status = obj.get("status") or {}
    desired = as_int(dig(obj, "spec", "replicas")) if dig(obj, "spec", "replicas") is not None else 1
    return [
        dig(obj, "metadata", "name"),
        desired,
        as_int(status.get("replicas")),
        as_int(status.get("readyReplicas")),
        age(dig(obj, "metadata", "creationTimestamp"), now),
        names,
        images,
        selector_string(dig(obj, "spec", "selector")),
    ]


def _stateful_set(obj: Obj, now: dt.datetime) -> Cells:
    names, images = template_containers(obj, "spec", "template", "spec")
    desired = as_int(dig(obj, "spec", "replicas")) if dig(obj, "spec", "replicas") is not None else 1
    return [
        dig(obj, "metadata", "name"),
        f"{as_int(dig(obj, 'status', 'readyReplicas'))}/{desired}",
        age(dig(obj, "metadata", "creationTimestamp"), now),
        names,
        images,
    ]


def _daemon_set(obj: Obj, now: dt.datetime) -> Cells:
    names, images = template_containers(obj, "spec", "template", "spec")
    status = obj.get("status") or {}
    return [
        dig(obj, "metadata", "name"),
        as_int(status.get("desiredNumberScheduled")),
        as_int(status.get("currentNumberScheduled")),
        as_int(status.get("numberReady")),
        as_int(status.get("updatedNumberScheduled")),
        as_int(status.get("numberAvailable")),
        format_labels(dig(obj, "spec", "template", "spec", "nodeSelector")),
        age(dig(obj, "metadata", "creationTimestamp"), now),
        names,
        images,
        selector_string(dig(obj, "spec", "selector")),
    ]


def job_status(job: Obj) -> str:
    """The STATUS column of a Job (kubectl 1.30+)."""
    if has_condition(job, "Complete"):
        return "Complete"
    if has_condition(job, "Failed"):
        return "Failed"
    if dig(job, "metadata", "deletionTimestamp") is not None:
        return "Terminating"
    if has_condition(job, "Suspended"):
        return "Suspended"
    if has_condition(job, "FailureTarget"):
        return "FailureTarget"
    if has_condition(job, "SuccessCriteriaMet"):
        return "SuccessCriteriaMet"
    return "Running"


def _job(obj: Obj, now: dt.datetime) -> Cells:
    names, images = template_containers(obj, "spec", "template", "spec")
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    succeeded = as_int(status.get("succeeded"))
    if spec.get("completions") is not None:
        completions = f"{succeeded}/{as_int(spec.get('completions'))}"
    elif spec.get("parallelism") is not None and as_int(spec.get("parallelism")) > 1:
        completions = f"{succeeded}/1 of {as_int(spec.get('parallelism'))}"
    else:
        completions = f"{succeeded}/1"
    start = parse_time(status.get("startTime"))
    end = parse_time(status.get("completionTime"))
    duration = "" if start is None else human_duration((end or now) - start)
    return [
        dig(obj, "metadata", "name"),
        job_status(obj),
        completions,
        duration,
        age(dig(obj, "metadata", "creationTimestamp"), now),
        names,
        images,
        selector_string(spec.get("selector")),
    ]


def _cron_job(obj: Obj, now: dt.datetime) -> Cells:
    names, images = template_containers(obj, "spec", "jobTemplate", "spec", "template", "spec")
    spec = obj.get("spec") or {}
    last = dig(obj, "status", "lastScheduleTime")
    return [
        dig(obj, "metadata", "name"),
        spec.get("schedule", ""),
        or_none(spec.get("timeZone")),
        "True" if spec.get("suspend") else "False",
        len(dig(obj, "status", "active") or []),
        age(last, now) if last else "<none>",
        age(dig(obj, "metadata", "creationTimestamp"), now),
        names,
        images,
        selector_string(dig(spec, "jobTemplate", "spec", "selector")),
    ]


def _service(obj: Obj, now: dt.datetime) -> Cells:
    spec = obj.get("spec") or {}
    stype = str(spec.get("type") or "ClusterIP")
    external = list(spec.get("externalIPs") or [])
    if stype == "LoadBalancer":
        ingress = dig(obj, "status", "loadBalancer", "ingress") or []
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
        dig(obj, "metadata", "name"),
        stype,
        or_none(spec.get("clusterIP")),
        external_text,
        ",".join(ports) or "<none>",
        age(dig(obj, "metadata", "creationTimestamp"), now),
        format_labels(spec.get("selector")),
    ]


def _config_map(obj: Obj, now: dt.datetime) -> Cells:
    count = len(obj.get("data") or {}) + len(obj.get("binaryData") or {})
    return [dig(obj, "metadata", "name"), count, age(dig(obj, "metadata", "creationTimestamp"), now)]


def _secret(obj: Obj, now: dt.datetime) -> Cells:
    return [
        dig(obj, "metadata", "name"),
        obj.get("type") or "Opaque",
        len(obj.get("data") or {}),
        age(dig(obj, "metadata", "creationTimestamp"), now),
    ]


def _service_account(obj: Obj, now: dt.datetime) -> Cells:
    return [
        dig(obj, "metadata", "name"),
        len(obj.get("secrets") or []),
        age(dig(obj, "metadata", "creationTimestamp"), now),
    ]


def _event(obj: Obj, now: dt.datetime) -> Cells:
    new_api = str(obj.get("apiVersion", "")).startswith("events.k8s.io/")
    first_ts = obj.get("deprecatedFirstTimestamp") if new_api else obj.get("firstTimestamp")
    last_ts = obj.get("deprecatedLastTimestamp") if new_api else obj.get("lastTimestamp")
    first = age(first_ts, now) if parse_time(first_ts) else age(obj.get("eventTime"), now)
    last = age(last_ts, now) if parse_time(last_ts) else first
    count = as_int(obj.get("deprecatedCount") if new_api else obj.get("count"))
    series = obj.get("series")
    if isinstance(series, Mapping):
        last = age(series.get("lastObservedTime"), now)
        count = as_int(series.get("count"))
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
        dig(obj, "metadata", "name"),
    ]


def _lease(obj: Obj, now: dt.datetime) -> Cells:
    return [
        dig(obj, "metadata", "name"),
        dig(obj, "spec", "holderIdentity") or "",
        age(dig(obj, "metadata", "creationTimestamp"), now),
    ]


def created_at_cells(obj: Obj, now: dt.datetime) -> Cells:
    return [dig(obj, "metadata", "name"), rfc3339(dig(obj, "metadata", "creationTimestamp"))]


def name_age_cells(obj: Obj, now: dt.datetime) -> Cells:
    return [dig(obj, "metadata", "name"), age(dig(obj, "metadata", "creationTimestamp"), now)]


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
        dig(obj, "metadata", "name"),
        f"{ref.get('kind')}/{ref.get('name')}",
        age(dig(obj, "metadata", "creationTimestamp"), now),
        ", ".join(users),
        ", ".join(groups),
        ", ".join(sas),
    ]


def _priority_class(obj: Obj, now: dt.datetime) -> Cells:
    return [
        dig(obj, "metadata", "name"),
        as_int(obj.get("value")),
        bool(obj.get("globalDefault")),
        age(dig(obj, "metadata", "creationTimestamp"), now),
        obj.get("preemptionPolicy") or "PreemptLowerPriority",
    ]


STR = "string"
PRINTERS: dict[tuple[str, str], Printer] = {
    ("", "Namespace"): Printer((NAME, Column("Status", STR, "The status of the namespace"), AGE), _namespace),
    ("", "Pod"): Printer(
        (
            NAME,
            Column("Ready", STR, "The aggregate readiness state of this pod for accepting traffic."),
            Column("Status", STR, "The aggregate status of the containers in this pod."),
            Column(
                "Restarts",
                STR,
                "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.",
            ),
            AGE,
            wide("IP", "podIP address allocated to the pod."),
            wide("Node", "NodeName indicates in which node this pod is scheduled."),
            wide(
                "Nominated Node",
                "nominatedNodeName is set only when this pod preempts other pods on the node.",
            ),
            wide("Readiness Gates", "If specified, all readiness gates will be evaluated for pod readiness."),
        ),
        _pod,
    ),
    ("", "Node"): Printer(
        (
            NAME,
            Column("Status", STR, "The status of the node"),
            Column("Roles", STR, "The roles of the node"),
            AGE,
            Column("Version", STR, "Kubelet Version reported by the node."),
            wide(
                "Internal-IP",
                "List of addresses reachable to the node. Queried from cloud provider, if available.",
            ),
            wide(
                "External-IP",
                "List of addresses reachable to the node. Queried from cloud provider, if available.",
            ),
            wide(
                "OS-Image",
                "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).",
            ),
            wide(
                "Kernel-Version",
                "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).",
            ),
            wide(
                "Container-Runtime",
                "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).",
            ),
        ),
        _node,
    ),
    ("apps", "Deployment"): Printer(
        (
            NAME,
            Column("Ready", STR, "Number of the pod with ready state"),
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
        (NAME, Column("Ready", STR, "Number of the pod with ready state"), AGE, CONTAINERS, IMAGES),
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
                STR,
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
            Column("Status", STR, "Status of the job."),
            Column("Completions", STR, "The completion status of the job."),
            Column("Duration", STR, "Time required to complete the job."),
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
            Column("Schedule", STR, "The schedule in Cron format."),
            Column("Timezone", STR, "The time zone name for the given schedule."),
            Column("Suspend", "boolean", "This flag tells the controller to suspend subsequent executions."),
            Column("Active", "integer", "A list of pointers to currently running jobs."),
            Column(
                "Last Schedule", STR, "Information when was the last time the job was successfully scheduled."
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
            Column("Type", STR, "type determines how the Service is exposed."),
            Column("Cluster-IP", STR, "clusterIP is the IP address of the service."),
            Column(
                "External-IP",
                STR,
                "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.",
            ),
            Column("Port(s)", STR, "The list of ports that are exposed by this service."),
            AGE,
            wide(
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
            Column("Type", STR, "The type of the secret"),
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
            Column("Holder", STR, "holderIdentity contains the identity of the holder of a current lease."),
            AGE,
        ),
        _lease,
    ),
    ("apiextensions.k8s.io", "CustomResourceDefinition"): Printer((NAME, CREATED_AT), created_at_cells),
    ("rbac.authorization.k8s.io", "Role"): Printer((NAME, CREATED_AT), created_at_cells),
    ("rbac.authorization.k8s.io", "ClusterRole"): Printer((NAME, CREATED_AT), created_at_cells),
    ("rbac.authorization.k8s.io", "RoleBinding"): Printer(
        (
            NAME,
            Column("Role", STR, "Role for this binding."),
            AGE,
            wide("Users", "Users in the roleBinding"),
            wide("Groups", "Groups in the roleBinding"),
            wide("ServiceAccounts", "ServiceAccounts in the roleBinding"),
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
                STR,
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
        Column("Last Seen", STR, "The time at which the most recent occurrence of this event was recorded."),
        Column("Type", STR, "Type of this event (Normal, Warning), new types could be added in the future"),
        Column(
            "Reason",
            STR,
            "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
        ),
        Column("Object", STR, "The object that this event is about."),
        wide(
            "Subobject",
            "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement.",
        ),
        wide(
            "Source", "The component reporting this event. Should be a short machine understandable string."
        ),
        Column("Message", STR, "A human-readable description of the status of this operation."),
        wide(
            "First Seen",
            "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)",
        ),
        wide("Count", "The number of times this event has occurred."),
        Column("Name", STR, NAME.description, priority=1, format="name"),
    ),
    _event,
)
PRINTERS[("", "Event")] = _EVENT_PRINTER
PRINTERS[("events.k8s.io", "Event")] = _EVENT_PRINTER
