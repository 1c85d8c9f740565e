"""Defaulting for built-in kinds on create and update, as kube-apiserver's ``SetDefaults_*`` functions do.

Why it matters: clients read defaults back. ``kubectl rollout status`` reads ``spec.replicas`` of a Deployment that
did not set it; the scheduler needs container requests copied from limits and the Pod's ``schedulerName``;
Jobs need the generated selector and controller-uid labels their pods carry; a Secret's ``stringData`` is merged
into ``data``. Only defaults a client or controller can observe are reproduced; everything else is left out.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable
from typing import Any

from berth.cluster import quota, validation
from berth.kube import quantity
from berth.kube.objects import Obj

DEFAULT_SCHEDULER = "default-scheduler"
NOT_READY_TAINT = "node.kubernetes.io/not-ready"
UNREACHABLE_TAINT = "node.kubernetes.io/unreachable"


def _pod_spec(spec: dict[str, Any]) -> None:
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", DEFAULT_SCHEDULER)
    spec.setdefault("enableServiceLinks", True)
    if "serviceAccountName" in spec or "serviceAccount" in spec:
        sa = spec.get("serviceAccountName") or spec.get("serviceAccount")
        spec["serviceAccountName"] = sa
        spec["serviceAccount"] = sa
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for c in spec.get(key) or []:
            if isinstance(c, dict):
                _container(c)
    for v in spec.get("volumes") or []:
        if isinstance(v, dict):
            for kind in ("configMap", "secret"):
                if isinstance(v.get(kind), dict):
                    v[kind].setdefault("defaultMode", 420)


def _container(c: dict[str, Any]) -> None:
    image = str(c.get("image") or "")
    tail = image.rsplit("/", 1)[-1]
    latest = "@" not in tail and (":" not in tail or tail.endswith(":latest"))
    c.setdefault("imagePullPolicy", "Always" if latest else "IfNotPresent")
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    c.setdefault("resources", {})
    for p in c.get("ports") or []:
        if isinstance(p, dict):
            p.setdefault("protocol", "TCP")


def _requests_from_limits(c: Any) -> None:
    """A container's requests default to its limits -- on a Pod only (upstream's SetDefaults_Pod), not in pod
    templates, whose pods get it when they are created."""
    res = c.get("resources") if isinstance(c, dict) else None
    if isinstance(res, dict) and isinstance(res.get("limits"), dict):
        requests = res.setdefault("requests", {})
        if isinstance(requests, dict):
            for k, v in res["limits"].items():
                requests.setdefault(k, v)


def pod(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    if not isinstance(spec, dict):
        return
    _pod_spec(spec)
    for key in ("initContainers", "containers"):
        for c in spec.get(key) or []:
            _requests_from_limits(c)
    spec.setdefault("serviceAccountName", "default")
    spec.setdefault("serviceAccount", spec["serviceAccountName"])
    tolerations = spec.setdefault("tolerations", [])
    if isinstance(tolerations, list):
        keys = {t.get("key") for t in tolerations if isinstance(t, dict)}
        for key in (NOT_READY_TAINT, UNREACHABLE_TAINT):
            if key not in keys:
                tolerations.append(
                    {"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
                )
    _pod_level_resources(spec)
    status = obj.setdefault("status", {})
    if isinstance(status, dict):
        status.setdefault("phase", "Pending")
        status.setdefault("qosClass", validation.pod_qos_class(spec))


def _pod_level_resources(spec: dict[str, Any]) -> None:
    """Upstream's SetDefaults_Pod for pod-level ``spec.resources`` (PodLevelResources, beta and on in 1.35), after
    the containers' requests were copied from their limits: only a pod that sets some pod-level resource is
    touched. Pod-level hugepages limits come from the containers' aggregate limits (defaultHugePagePodLimits;
    not where a pod-level hugepages request is set), then -- when the pod sets limits -- requests not set at pod
    level come from the containers' aggregate requests for cpu and memory, else from the pod-level limits
    (defaultPodRequests). Upstream's later defaulting of pod-level cpu/memory limits from the containers' is not
    in 1.35."""
    res = spec.get("resources")
    if not isinstance(res, dict):
        return
    limits: dict[str, Any] = res["limits"] if isinstance(res.get("limits"), dict) else {}
    requests: dict[str, Any] = res["requests"] if isinstance(res.get("requests"), dict) else {}
    if not limits and not requests:
        return
    for r, text in _aggregate_texts(spec, "limits").items():
        if r.startswith("hugepages-") and r not in requests and r not in limits:
            limits[r] = text
    if limits:
        res["limits"] = limits
    else:
        return
    for r, text in _aggregate_texts(spec, "requests").items():
        if r in ("cpu", "memory") and r not in requests:  # supported and overcommittable
            requests[r] = text
    for r, value in limits.items():
        if r not in requests and quota.pod_level_resource(r):
            requests[r] = value
    if requests:
        res["requests"] = requests


def _aggregate_texts(spec: dict[str, Any], key: str) -> dict[str, str]:
    """The containers' aggregate requests or limits as quantities: a container's own text when it alone makes the
    total, else the canonical form of the sum (in the first container's binary or decimal notation, as Go's
    Quantity.Add keeps it)."""
    first: dict[str, str] = {}
    for c in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]:
        values = ((c.get("resources") if isinstance(c, dict) else None) or {}).get(key)
        for r, v in (values if isinstance(values, dict) else {}).items():
            first.setdefault(r, str(v))
    out: dict[str, str] = {}
    for r, amount in quota.container_totals(spec, key).items():
        text = first.get(r, "")
        out[r] = (
            text
            if text and quantity.parse(text) == amount
            else quantity.canonical(amount, text.endswith("i"))
        )
    return out


def _template(obj: Obj) -> None:
    spec = obj.get("spec")
    if isinstance(spec, dict):
        tmpl = spec.get("template")
        if isinstance(tmpl, dict) and isinstance(tmpl.get("spec"), dict):
            _pod_spec(tmpl["spec"])


def deployment(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    strategy = spec.setdefault("strategy", {})
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        ru = strategy.setdefault("rollingUpdate", {})
        ru.setdefault("maxUnavailable", "25%")
        ru.setdefault("maxSurge", "25%")
    _template(obj)


def replicaset(obj: Obj) -> None:
    obj.setdefault("spec", {}).setdefault("replicas", 1)
    _template(obj)


def statefulset(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    spec.setdefault("podManagementPolicy", "OrderedReady")
    spec.setdefault("revisionHistoryLimit", 10)
    us = spec.setdefault("updateStrategy", {"type": "RollingUpdate"})
    if us.get("type") == "RollingUpdate":
        us.setdefault("rollingUpdate", {}).setdefault("partition", 0)
    spec.setdefault("persistentVolumeClaimRetentionPolicy", {"whenDeleted": "Retain", "whenScaled": "Retain"})
    _template(obj)


def daemonset(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("revisionHistoryLimit", 10)
    us = spec.setdefault("updateStrategy", {"type": "RollingUpdate"})
    if us.get("type") == "RollingUpdate":
        ru = us.setdefault("rollingUpdate", {})
        ru.setdefault("maxUnavailable", 1)
        ru.setdefault("maxSurge", 0)
    _template(obj)


def job(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
        spec["parallelism"] = 1
    spec.setdefault("parallelism", 1)
    spec.setdefault("backoffLimit", 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    spec.setdefault("podReplacementPolicy", "TerminatingOrFailed")
    spec.setdefault("manualSelector", None)
    if spec.get("manualSelector") is None:
        spec.pop("manualSelector", None)
    _template(obj)


def job_selector(obj: Obj) -> None:
    """Job ``generateSelector``: selector and template labels keyed by the Job's uid (create only)."""
    spec = obj.setdefault("spec", {})
    if spec.get("manualSelector"):
        return
    meta = obj.get("metadata") or {}
    uid, name = str(meta.get("uid", "")), str(meta.get("name", ""))
    labels = spec.setdefault("template", {}).setdefault("metadata", {}).setdefault("labels", {})
    labels.update(
        {
            "batch.kubernetes.io/controller-uid": uid,
            "batch.kubernetes.io/job-name": name,
            "controller-uid": uid,
            "job-name": name,
        }
    )
    spec["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}


def cronjob(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("concurrencyPolicy", "Allow")
    spec.setdefault("suspend", False)
    spec.setdefault("successfulJobsHistoryLimit", 3)
    spec.setdefault("failedJobsHistoryLimit", 1)
    job_template = spec.get("jobTemplate")
    if isinstance(job_template, dict):
        _template(
            job_template
        )  # upstream defaults the pod template inside (not the JobSpec: that is the Job's)


def podtemplate(obj: Obj) -> None:
    tmpl = obj.get("template")
    if isinstance(tmpl, dict) and isinstance(tmpl.get("spec"), dict):
        _pod_spec(tmpl["spec"])


def service(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    if spec["type"] != "ExternalName":
        spec.setdefault("ipFamilies", ["IPv4"])
        spec.setdefault("ipFamilyPolicy", "SingleStack")
        spec.setdefault("internalTrafficPolicy", "Cluster")
    for p in spec.get("ports") or []:
        if isinstance(p, dict):
            p.setdefault("protocol", "TCP")
            if "port" in p:
                p.setdefault("targetPort", p["port"])


def secret(obj: Obj) -> None:
    obj.setdefault("type", "Opaque")
    string_data = obj.pop("stringData", None)
    if isinstance(string_data, dict) and string_data:
        data = obj.get("data")
        if not isinstance(data, dict):
            data = {}
            obj["data"] = data
        for k, v in string_data.items():
            data[k] = base64.b64encode(str(v).encode()).decode()


def namespace(obj: Obj) -> None:
    meta = obj.setdefault("metadata", {})
    name = str(meta.get("name") or "")
    if name:
        meta.setdefault("labels", {})["kubernetes.io/metadata.name"] = name
    spec = obj.setdefault("spec", {})
    spec.setdefault("finalizers", ["kubernetes"])
    status = obj.setdefault("status", {})
    status.setdefault("phase", "Active")


def pvc(obj: Obj) -> None:
    obj.setdefault("spec", {}).setdefault("volumeMode", "Filesystem")
    obj.setdefault("status", {}).setdefault("phase", "Pending")


def priorityclass(obj: Obj) -> None:
    obj.setdefault("preemptionPolicy", "PreemptLowerPriority")


def pdb(obj: Obj) -> None:
    obj.setdefault("status", {})


DEFAULTERS: dict[str, Callable[[Obj], None]] = {
    "pods": pod,
    "deployments.apps": deployment,
    "replicasets.apps": replicaset,
    "statefulsets.apps": statefulset,
    "daemonsets.apps": daemonset,
    "jobs.batch": job,
    "cronjobs.batch": cronjob,
    "services": service,
    "secrets": secret,
    "namespaces": namespace,
    "persistentvolumeclaims": pvc,
    "priorityclasses.scheduling.k8s.io": priorityclass,
    "podtemplates": podtemplate,
    "limitranges": quota.default_limit_range,
}


def apply(resource: str, obj: Obj) -> None:
    """Fill in the defaults for ``resource`` in place (unknown resources are left alone)."""
    fn = DEFAULTERS.get(resource)
    if fn is not None:
        fn(obj)


def cluster_ip(namespace: str, name: str, taken: set[str]) -> str:
    """A stable, unused address from 10.96.0.0/12 for a Service (10.96.0.1 is kept for ``kubernetes``)."""
    seed = int(hashlib.sha256(f"{namespace}/{name}".encode()).hexdigest(), 16)
    for i in range(1 << 20):
        n = (seed + i) % ((1 << 20) - 2) + 2
        ip = f"10.{96 + (n >> 16)}.{(n >> 8) & 255}.{n & 255}"
        if ip not in taken:
            return ip
    raise RuntimeError("service IP range exhausted")
