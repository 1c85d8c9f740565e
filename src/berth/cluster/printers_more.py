"""Printers of the other kinds charts ship (PDBs, ingresses, storage, webhooks, autoscaling, resource claims, API
services ...), as upstream's ``printers.go``."""

from __future__ import annotations

import datetime as dt
from typing import Any

from berth.cluster.printers_core import STR, created_at_cells
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
    human_duration,
    or_none,
    selector_string,
    template_containers,
    wide,
)

MORE_PRINTERS: dict[tuple[str, str], Printer] = {}

# -- more kinds charts ship ------------------------------------------------------------------------------------------


def _pdb(obj: Obj, now: dt.datetime) -> Cells:
    spec = obj.get("spec") or {}
    return [
        dig(obj, "metadata", "name"),
        str(spec["minAvailable"]) if spec.get("minAvailable") is not None else "N/A",
        str(spec["maxUnavailable"]) if spec.get("maxUnavailable") is not None else "N/A",
        as_int(dig(obj, "status", "disruptionsAllowed")),
        age(dig(obj, "metadata", "creationTimestamp"), now),
    ]


def _lb_addresses(obj: Obj) -> str:
    ingress = dig(obj, "status", "loadBalancer", "ingress") or []
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
        dig(obj, "metadata", "name"),
        or_none(spec.get("ingressClassName")),
        hosts_text,
        _lb_addresses(obj),
        "80, 443" if spec.get("tls") else "80",
        age(dig(obj, "metadata", "creationTimestamp"), now),
    ]


def _network_policy(obj: Obj, now: dt.datetime) -> Cells:
    selector = dig(obj, "spec", "podSelector")
    text = selector_string(selector)
    return [dig(obj, "metadata", "name"), text, age(dig(obj, "metadata", "creationTimestamp"), now)]


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
    phase = str(dig(obj, "status", "phase") or "")
    if dig(obj, "metadata", "deletionTimestamp") is not None:
        phase = "Terminating"
    bound = bool(spec.get("volumeName"))
    return [
        dig(obj, "metadata", "name"),
        phase,
        spec.get("volumeName") or "",
        (dig(obj, "status", "capacity", "storage") or "") if bound else "",
        _access_modes(dig(obj, "status", "accessModes")) if bound else "",
        spec.get("storageClassName") or "",
        spec.get("volumeAttributesClassName") or "<unset>",
        age(dig(obj, "metadata", "creationTimestamp"), now),
        spec.get("volumeMode") or "Filesystem",
    ]


def _storage_class(obj: Obj, now: dt.datetime) -> Cells:
    name = str(dig(obj, "metadata", "name") or "")
    annotations = dig(obj, "metadata", "annotations") or {}
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
        age(dig(obj, "metadata", "creationTimestamp"), now),
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
    return [dig(obj, "metadata", "name"), text, age(dig(obj, "metadata", "creationTimestamp"), now)]


def _controller_revision(obj: Obj, now: dt.datetime) -> Cells:
    owner = next((o for o in dig(obj, "metadata", "ownerReferences") or [] if o.get("controller")), None)
    controller = "<none>"
    if owner:
        group = str(owner.get("apiVersion", "")).rpartition("/")[0]
        kind = str(owner.get("kind", "")).lower()
        controller = f"{kind}.{group}/{owner.get('name')}" if group else f"{kind}/{owner.get('name')}"
    return [
        dig(obj, "metadata", "name"),
        controller,
        as_int(obj.get("revision")),
        age(dig(obj, "metadata", "creationTimestamp"), now),
    ]


def _webhooks(obj: Obj, now: dt.datetime) -> Cells:
    return [
        dig(obj, "metadata", "name"),
        len(obj.get("webhooks") or []),
        age(dig(obj, "metadata", "creationTimestamp"), now),
    ]


def _resource_claim(obj: Obj, now: dt.datetime) -> Cells:
    """STATE as kubectl prints it: deleted / pending / allocated, reserved or deallocating, comma-joined."""
    deleted = bool(dig(obj, "metadata", "deletionTimestamp"))
    states = ["deleted"] if deleted else []
    if not dig(obj, "status", "allocation"):
        if not deleted:
            states.append("pending")
    else:
        states.append("allocated")
        if dig(obj, "status", "reservedFor"):
            states.append("reserved")
        elif deleted:
            states.append("deallocating")
    return [
        dig(obj, "metadata", "name"),
        ",".join(states),
        age(dig(obj, "metadata", "creationTimestamp"), now),
    ]


def _resource_slice(obj: Obj, now: dt.datetime) -> Cells:
    return [
        dig(obj, "metadata", "name"),
        dig(obj, "spec", "nodeName") or "",
        dig(obj, "spec", "driver") or "",
        dig(obj, "spec", "pool", "name") or "",
        age(dig(obj, "metadata", "creationTimestamp"), now),
    ]


def _volume_attributes_class(obj: Obj, now: dt.datetime) -> Cells:
    return [dig(obj, "metadata", "name"), dig(obj, "driverName") or "", age(_created(obj), now)]


def _flow_schema(obj: Obj, now: dt.datetime) -> Cells:
    missing = "Unknown"
    for c in dig(obj, "status", "conditions") or []:
        if isinstance(c, dict) and c.get("type") == "Dangling":
            missing = str(c.get("status") or "Unknown")
    method = dig(obj, "spec", "distinguisherMethod", "type") or "<none>"
    return [
        dig(obj, "metadata", "name"),
        dig(obj, "spec", "priorityLevelConfiguration", "name") or "",
        as_int(dig(obj, "spec", "matchingPrecedence")),
        method,
        age(_created(obj), now),
        missing,
    ]


def _priority_level(obj: Obj, now: dt.datetime) -> Cells:
    limited = dig(obj, "spec", "limited") or {}
    queuing = dig(limited, "limitResponse", "queuing") or {}
    shares: Any = "<none>"
    if dig(obj, "spec", "type") == "Limited":
        shares = as_int(limited.get("nominalConcurrencyShares"))
    return [
        dig(obj, "metadata", "name"),
        dig(obj, "spec", "type") or "",
        shares,
        queuing.get("queues", "<none>"),
        queuing.get("handSize", "<none>"),
        queuing.get("queueLengthLimit", "<none>"),
        age(_created(obj), now),
    ]


def _service_cidr(obj: Obj, now: dt.datetime) -> Cells:
    return [
        dig(obj, "metadata", "name"),
        ",".join(dig(obj, "spec", "cidrs") or []),
        age(_created(obj), now),
    ]


def _ip_address(obj: Obj, now: dt.datetime) -> Cells:
    ref = dig(obj, "spec", "parentRef") or {}
    group = f".{ref['group']}" if ref.get("group") else ""
    parent = (
        f"{ref.get('resource', '')}{group}/{ref.get('namespace', '')}/{ref.get('name', '')}" if ref else ""
    )
    return [dig(obj, "metadata", "name"), parent]


def _created(obj: Obj) -> Any:
    return dig(obj, "metadata", "creationTimestamp")


def _api_service(obj: Obj, now: dt.datetime) -> Cells:
    svc = dig(obj, "spec", "service")
    service = f"{svc.get('namespace', '')}/{svc.get('name', '')}" if isinstance(svc, dict) else "Local"
    available = "Unknown"
    for c in dig(obj, "status", "conditions") or []:
        if isinstance(c, dict) and c.get("type") == "Available":
            status, reason = str(c.get("status", "")), str(c.get("reason") or "")
            available = f"{status} ({reason})" if status != "True" and reason else status
    return [
        dig(obj, "metadata", "name"),
        service,
        available,
        age(dig(obj, "metadata", "creationTimestamp"), now),
    ]


def _csr(obj: Obj, now: dt.datetime) -> Cells:
    kinds = {c.get("type") for c in dig(obj, "status", "conditions") or [] if isinstance(c, dict)}
    state = "Denied" if "Denied" in kinds else "Approved" if "Approved" in kinds else "Pending"
    if "Failed" in kinds:
        state += ",Failed"
    if dig(obj, "status", "certificate"):
        state += ",Issued"
    seconds = dig(obj, "spec", "expirationSeconds")
    duration = human_duration(dt.timedelta(seconds=int(seconds))) if isinstance(seconds, int) else "<none>"
    return [
        dig(obj, "metadata", "name"),
        age(dig(obj, "metadata", "creationTimestamp"), now),
        dig(obj, "spec", "signerName") or "",
        dig(obj, "spec", "username") or "",
        duration,
        state,
    ]


def _replication_controller(obj: Obj, now: dt.datetime) -> Cells:
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
        format_labels(dig(obj, "spec", "selector")),
    ]


def _hpa_targets(obj: Obj) -> str:
    parts: list[str] = []
    current = {
        str(dig(m, "resource", "name")): dig(m, "resource", "current", "averageUtilization")
        for m in dig(obj, "status", "currentMetrics") or []
        if m.get("type") == "Resource"
    }
    for metric in dig(obj, "spec", "metrics") or []:
        if metric.get("type") != "Resource":
            parts.append("<unknown>")
            continue
        name = str(dig(metric, "resource", "name"))
        target = dig(metric, "resource", "target") or {}
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
    ref = dig(obj, "spec", "scaleTargetRef") or {}
    return [
        dig(obj, "metadata", "name"),
        f"{ref.get('kind')}/{ref.get('name')}",
        _hpa_targets(obj),
        as_int(dig(obj, "spec", "minReplicas")) if dig(obj, "spec", "minReplicas") is not None else "<unset>",
        as_int(dig(obj, "spec", "maxReplicas")),
        as_int(dig(obj, "status", "currentReplicas")),
        age(dig(obj, "metadata", "creationTimestamp"), now),
    ]


MORE_PRINTERS.update(
    {
        ("policy", "PodDisruptionBudget"): Printer(
            (
                NAME,
                Column(
                    "Min Available", STR, "The minimum number of pods that must be available simultaneously."
                ),
                Column(
                    "Max Unavailable",
                    STR,
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
                Column("Class", STR, "The name of the IngressClass resource."),
                Column(
                    "Hosts", STR, "Hosts that incoming requests are matched against before the ingress rule"
                ),
                Column("Address", STR, "Address is a list containing ingress points for the load-balancer"),
                Column("Ports", STR, "Ports of TLS configurations that open"),
                AGE,
            ),
            _ingress,
        ),
        ("networking.k8s.io", "NetworkPolicy"): Printer(
            (
                NAME,
                Column("Pod-Selector", STR, "Selects the pods to which this NetworkPolicy object applies."),
                AGE,
            ),
            _network_policy,
        ),
        ("", "PersistentVolumeClaim"): Printer(
            (
                NAME,
                Column("Status", STR, "Phase represents the current phase of PersistentVolumeClaim."),
                Column("Volume", STR, "The binding reference to the PersistentVolume backing this claim."),
                Column("Capacity", STR, "The actual resources of the underlying volume."),
                Column(
                    "Access Modes",
                    STR,
                    "AccessModes contains the desired access modes the volume should have.",
                ),
                Column("StorageClass", STR, "Name of the StorageClass required by the claim."),
                Column("VolumeAttributesClass", STR, "Name of the VolumeAttributesClass used by the claim."),
                AGE,
                wide("VolumeMode", "volumeMode defines what type of volume is required by the claim."),
            ),
            _pvc,
        ),
        ("storage.k8s.io", "StorageClass"): Printer(
            (
                NAME,
                Column("Provisioner", STR, "Indicates the type of the provisioner."),
                Column("ReclaimPolicy", STR, "Indicates the type of the reclaim policy."),
                Column(
                    "VolumeBindingMode",
                    STR,
                    "Indicates how PersistentVolumeClaims should be provisioned and bound.",
                ),
                Column(
                    "AllowVolumeExpansion", STR, "Indicates whether the storage class allow volume expand."
                ),
                AGE,
            ),
            _storage_class,
        ),
        ("", "Endpoints"): Printer(
            (NAME, Column("Endpoints", STR, "Endpoints is the list of endpoints of the service."), AGE),
            _endpoints,
        ),
        ("apps", "ControllerRevision"): Printer(
            (
                NAME,
                Column("Controller", STR, "Controller of the object, with the format <kind>/<name>"),
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
                Column("State", STR, "A summary of the current state (allocated, pending, reserved, etc.)."),
                AGE,
            ),
            _resource_claim,
        ),
        ("resource.k8s.io", "ResourceSlice"): Printer(
            (
                NAME,
                Column("Node", STR, "The node providing the devices of this slice."),
                Column("Driver", STR, "The name of the driver providing the devices of this slice."),
                Column("Pool", STR, "The pool containing the devices in this slice."),
                AGE,
            ),
            _resource_slice,
        ),
        ("storage.k8s.io", "VolumeAttributesClass"): Printer(
            (NAME, Column("DriverName", STR, "DriverName is the name of the CSI driver."), AGE),
            _volume_attributes_class,
        ),
        ("flowcontrol.apiserver.k8s.io", "FlowSchema"): Printer(
            (
                NAME,
                Column("PriorityLevel", STR, "The priority level of this flow schema."),
                Column("MatchingPrecedence", "integer", "The matching precedence of this flow schema."),
                Column("DistinguisherMethod", STR, "The distinguisher method of this flow schema."),
                AGE,
                Column("MissingPL", STR, "Whether the priority level of this flow schema is missing."),
            ),
            _flow_schema,
        ),
        ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"): Printer(
            (
                NAME,
                Column("Type", STR, "The type of the priority level: Exempt or Limited."),
                Column("NominalConcurrencyShares", STR, "The nominal concurrency shares of a Limited level."),
                Column("Queues", STR, "The number of queues of a queuing Limited level."),
                Column("HandSize", STR, "The hand size of a queuing Limited level."),
                Column("QueueLengthLimit", STR, "The queue length limit of a queuing Limited level."),
                AGE,
            ),
            _priority_level,
        ),
        ("networking.k8s.io", "ServiceCIDR"): Printer(
            (NAME, Column("CIDRs", STR, "The CIDRs of this ServiceCIDR."), AGE),
            _service_cidr,
        ),
        ("networking.k8s.io", "IPAddress"): Printer(
            (NAME, Column("ParentRef", STR, "The object this IP address is allocated to.")),
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
                Column("Reference", STR, "Reference to the scaled object."),
                Column("Targets", STR, "The current and target metric values."),
                Column("MinPods", STR, "Lower limit for the number of pods."),
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
    phase = str(dig(obj, "status", "phase") or "")
    if dig(obj, "metadata", "deletionTimestamp") is not None:
        phase = "Terminating"
    return [
        dig(obj, "metadata", "name"),
        dig(spec, "capacity", "storage") or "",
        _access_modes(spec.get("accessModes")),
        spec.get("persistentVolumeReclaimPolicy") or "",
        phase,
        claim,
        spec.get("storageClassName") or "",
        spec.get("volumeAttributesClassName") or "<unset>",
        dig(obj, "status", "reason") or "",
        age(dig(obj, "metadata", "creationTimestamp"), now),
        spec.get("volumeMode") or "Filesystem",
    ]


def _endpoint_slice(obj: Obj, now: dt.datetime) -> Cells:
    ports = [str(p.get("port")) for p in obj.get("ports") or [] if p.get("port") is not None]
    addresses = [str(a) for e in obj.get("endpoints") or [] for a in e.get("addresses") or []]
    shown = ",".join(addresses[:3]) if addresses else "<unset>"
    if len(addresses) > 3:
        shown += f" + {len(addresses) - 3} more..."
    return [
        dig(obj, "metadata", "name"),
        obj.get("addressType", ""),
        ",".join(ports) if ports else "<unset>",
        shown,
        age(dig(obj, "metadata", "creationTimestamp"), now),
    ]


def _ingress_class(obj: Obj, now: dt.datetime) -> Cells:
    params = dig(obj, "spec", "parameters") or {}
    text = "<none>"
    if params:
        kind = params.get("kind", "")
        group = params.get("apiGroup")
        text = f"{kind}.{group}/{params.get('name')}" if group else f"{kind}/{params.get('name')}"
    return [
        dig(obj, "metadata", "name"),
        dig(obj, "spec", "controller") or "",
        text,
        age(dig(obj, "metadata", "creationTimestamp"), now),
    ]


def _resource_quota(obj: Obj, now: dt.datetime) -> Cells:
    hard = dig(obj, "status", "hard") or {}
    used = dig(obj, "status", "used") or {}
    requests: list[str] = []
    limits: list[str] = []
    for name in sorted(hard):
        text = f"{name}: {used.get(name, '0')}/{hard[name]}"
        (limits if str(name).split(".")[0] == "limits" and "." in str(name) else requests).append(text)
    return [
        dig(obj, "metadata", "name"),
        age(dig(obj, "metadata", "creationTimestamp"), now),
        ", ".join(requests),
        ", ".join(limits),
    ]


def _runtime_class(obj: Obj, now: dt.datetime) -> Cells:
    return [
        dig(obj, "metadata", "name"),
        obj.get("handler", ""),
        age(dig(obj, "metadata", "creationTimestamp"), now),
    ]


MORE_PRINTERS.update(
    {
        ("", "PersistentVolume"): Printer(
            (
                NAME,
                Column(
                    "Capacity",
                    STR,
                    "capacity is the description of the persistent volume's resources and capacity.",
                ),
                Column("Access Modes", STR, "accessModes contains all ways the volume can be mounted."),
                Column(
                    "Reclaim Policy", STR, "What happens to a persistent volume when released from its claim."
                ),
                Column(
                    "Status",
                    STR,
                    "phase indicates if a volume is available, bound to a claim, or released by a claim.",
                ),
                Column(
                    "Claim",
                    STR,
                    "claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim.",
                ),
                Column(
                    "StorageClass",
                    STR,
                    "storageClassName is the name of StorageClass to which this persistent volume belongs.",
                ),
                Column(
                    "VolumeAttributesClass",
                    STR,
                    "Name of VolumeAttributesClass to which this persistent volume belongs.",
                ),
                Column("Reason", STR, "reason is a brief CamelCase string that describes any failure."),
                AGE,
                wide(
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
                    STR,
                    "addressType specifies the type of address carried by this EndpointSlice.",
                ),
                Column(
                    "Ports",
                    STR,
                    "ports specifies the list of network ports exposed by each endpoint in this slice.",
                ),
                Column("Endpoints", STR, "endpoints is a list of unique endpoints in this slice."),
                AGE,
            ),
            _endpoint_slice,
        ),
        ("networking.k8s.io", "IngressClass"): Printer(
            (
                NAME,
                Column("Controller", STR, "Controller that is responsible for handling this class"),
                Column("Parameters", STR, "A reference to a resource with additional parameters"),
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
                    STR,
                    "Request represents a minimum amount of cpu/memory that a container may consume.",
                ),
                Column(
                    "Limit",
                    STR,
                    "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.",
                ),
            ),
            _resource_quota,
        ),
        ("", "LimitRange"): Printer((NAME, CREATED_AT), created_at_cells),
        ("node.k8s.io", "RuntimeClass"): Printer(
            (NAME, Column("Handler", STR, "The name of the CRI handler"), AGE), _runtime_class
        ),
    }
)
