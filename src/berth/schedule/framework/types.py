"""What plugins read: :class:`PodInfo` (a pod with its scheduling facts parsed once) and :class:`NodeInfo` (a node
with the pods on it and their summed requests), plus :class:`QueuedPodInfo` for the queue.

Resource amounts are integers in upstream's units: cpu in millicores, everything else (memory, ephemeral-storage,
pods, extended resources) in plain units (bytes for memory), rounded up as ``Quantity.Value()`` does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from berth.kube import quantity
from berth.kube.objects import Obj

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"

# Scoring-only defaults for containers that request no cpu/memory (upstream DefaultMilliCPURequest/DefaultMemoryRequest).
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

DEFAULT_SCHEDULER_NAME = "default-scheduler"

Resources = dict[str, int]


_AMOUNTS: dict[tuple[str, str | int], int] = {}
_AMOUNTS_LIMIT = 4096  # distinct (resource, quantity) pairs remembered; a workload repeats a handful


def _amount(name: str, q: Any, where: str, path: str) -> int:
    """``quantity.resource_amount`` remembered per (resource, quantity text): every pod of a workload repeats the
    same few quantities, and parsing them (exact fractions) was a visible share of a live cycle. ``where`` and
    ``path`` name the field only when parsing fails."""
    if type(q) is str or type(q) is int:
        found = _AMOUNTS.get((name, q))
        if found is not None:
            return found
        amount = quantity.resource_amount(name, q, f"{where}.{path}.{name}")
        if len(_AMOUNTS) >= _AMOUNTS_LIMIT:
            _AMOUNTS.clear()
        _AMOUNTS[(name, q)] = amount
        return amount
    return quantity.resource_amount(name, q, f"{where}.{path}.{name}")


def _container_requests(
    container: Mapping[str, Any],
    where: str,
    non_missing: Mapping[str, int] | None,
    status: Mapping[str, Any] | None = None,
    infeasible: bool = False,
) -> Resources:
    """One container's requests. With a status that reports resources (an in-place resize the kubelet has seen):
    the largest of the spec, the running resources and what the kubelet allocated -- only the status ones when
    the resize is Infeasible (upstream ``determineContainerReqs``), so room a resize may still use stays counted."""
    raw = ((container.get("resources") or {}).get("requests")) or {}
    out: Resources = {}
    if status is None or not infeasible:
        out = {name: _amount(name, q, where, "resources.requests") for name, q in raw.items()}
    if status is not None:
        for key, values in (
            ("status.resources.requests", (status.get("resources") or {}).get("requests")),
            ("status.allocatedResources", status.get("allocatedResources")),
        ):
            for name, q in (values or {}).items():
                amount = _amount(name, q, where, key)
                if name not in out or amount > out[name]:
                    out[name] = amount
    if non_missing:
        for name, amount in non_missing.items():
            if name not in out:
                out[name] = amount
    return out


def _resized_statuses(pod: Obj) -> tuple[dict[str, Mapping[str, Any]], bool]:
    """Container statuses by name when the kubelet reports container resources (in-place resize), and whether
    the pod's resize is Infeasible; ({}, False) for the common pod, at the cost of one scan of its statuses."""
    status = pod.get("status") or {}
    found: dict[str, Mapping[str, Any]] = {}
    for key in ("containerStatuses", "initContainerStatuses"):
        for cs in status.get(key) or ():
            if isinstance(cs, Mapping) and ("resources" in cs or "allocatedResources" in cs):
                found[str(cs.get("name"))] = cs
    if not found:
        return found, False
    infeasible = any(
        isinstance(c, Mapping) and c.get("type") == "PodResizePending" and c.get("reason") == "Infeasible"
        for c in status.get("conditions") or ()
    )
    return found, infeasible


def _add_into(acc: Resources, other: Mapping[str, int]) -> None:
    for k, v in other.items():
        acc[k] = acc.get(k, 0) + v


def _max_into(acc: Resources, other: Mapping[str, int]) -> None:
    for k, v in other.items():
        if v > acc.get(k, 0):
            acc[k] = v


def pod_requests(pod: Obj, non_missing: Mapping[str, int] | None = None, where: str = "pod") -> Resources:
    """Effective requests of a pod (KEP-753 sidecars, init containers, pod-level resources, overhead; a container
    an in-place resize is changing counts the larger of its old and new requests, see ``_container_requests``).

    S = sum over containers; walking init containers in order with R = sum of sidecars (restartPolicy Always) so
    far: a sidecar adds to S and R; a regular init container's effective value is its own + R; I = max effective.
    Result = max(S, I), then pod-level ``spec.resources.requests`` override (cpu, memory and ``hugepages-*``, upstream
    ``IsSupportedPodLevelResource``), then + ``spec.overhead``.
    ``non_missing`` fills cpu/memory of containers that set no request (scoring's non-zero defaults).
    """
    spec = pod.get("spec") or {}
    statuses, infeasible = _resized_statuses(pod)
    total: Resources = {}
    for i, c in enumerate(spec.get("containers") or []):
        cs = statuses.get(str(c.get("name"))) if statuses else None
        _add_into(total, _container_requests(c, f"{where}.spec.containers[{i}]", non_missing, cs, infeasible))
    sidecars: Resources = {}
    init_max: Resources = {}
    for i, c in enumerate(spec.get("initContainers") or []):
        cs = statuses.get(str(c.get("name"))) if statuses else None
        req = _container_requests(c, f"{where}.spec.initContainers[{i}]", non_missing, cs, infeasible)
        if c.get("restartPolicy") == "Always":
            _add_into(total, req)
            _add_into(sidecars, req)
            effective = dict(sidecars)
        else:
            effective = dict(req)
            _add_into(effective, sidecars)
        _max_into(init_max, effective)
    _max_into(total, init_max)
    pod_level = ((spec.get("resources") or {}).get("requests")) or {}
    for name, q in pod_level.items():
        if name in (CPU, MEMORY) or name.startswith("hugepages-"):  # upstream IsSupportedPodLevelResource
            total[name] = quantity.resource_amount(name, q, f"{where}.spec.resources.requests.{name}")
    for name, q in (spec.get("overhead") or {}).items():
        total[name] = total.get(name, 0) + quantity.resource_amount(name, q, f"{where}.spec.overhead.{name}")
    return total


def normalized_image_name(name: str) -> str:
    """Upstream appends ``:latest`` when an image has no tag (the last ':' is not after the last '/')."""
    if "@" in name:
        return name
    return name if name.rfind(":") > name.rfind("/") else f"{name}:latest"


@dataclass(frozen=True, slots=True)
class HostPort:
    ip: str
    protocol: str
    port: int

    def conflicts(self, other: HostPort) -> bool:
        """Same protocol + port, and same IP or either is the wildcard."""
        if self.port != other.port or self.protocol != other.protocol:
            return False
        wild = ("", "0.0.0.0")
        return self.ip == other.ip or self.ip in wild or other.ip in wild


def _host_ports(spec: Mapping[str, Any]) -> tuple[HostPort, ...]:
    containers: list[Mapping[str, Any]] = list(spec.get("containers") or [])
    containers += [c for c in spec.get("initContainers") or [] if c.get("restartPolicy") == "Always"]
    out: list[HostPort] = []
    for c in containers:
        for p in c.get("ports") or []:
            hp = int(p.get("hostPort") or 0)
            if hp > 0:
                out.append(HostPort(str(p.get("hostIP") or ""), str(p.get("protocol") or "TCP"), hp))
    return tuple(out)


class PodInfo:
    """A pod with everything the scheduler asks of it parsed once.

    Build with :meth:`from_pod`; bad quantities raise :class:`~berth.kube.errors.InputError` naming the field.
    """

    __slots__ = (
        "affinity",
        "has_pod_affinity",
        "has_required_anti_affinity",
        "host_ports",
        "images",
        "key",
        "labels",
        "name",
        "namespace",
        "node_name",
        "node_selector",
        "non_zero_requests",
        "pod",
        "priority",
        "requests",
        "scheduler_name",
        "terminating",
        "tolerations",
        "uid",
    )

    def __init__(self, pod: Obj, where: str | None = None) -> None:
        meta = pod.get("metadata") or {}
        spec = pod.get("spec") or {}
        self.pod = pod
        self.name: str = str(meta.get("name") or "")
        self.namespace: str = str(meta.get("namespace") or "default")
        self.key = f"{self.namespace}/{self.name}"
        self.uid: str = str(meta.get("uid") or self.key)
        self.labels: dict[str, str] = dict(meta.get("labels") or {})
        self.priority: int = int(spec.get("priority") or 0)
        self.scheduler_name: str = str(spec.get("schedulerName") or DEFAULT_SCHEDULER_NAME)
        self.node_name: str = str(spec.get("nodeName") or "")
        self.terminating: bool = bool(meta.get("deletionTimestamp"))
        w = where or f"pod {self.key}"
        self.requests: Resources = pod_requests(pod, None, w)
        self.non_zero_requests: Resources = pod_requests(
            pod, {CPU: DEFAULT_MILLI_CPU_REQUEST, MEMORY: DEFAULT_MEMORY_REQUEST}, w
        )
        self.host_ports = _host_ports(spec)
        self.tolerations: list[dict[str, Any]] = list(spec.get("tolerations") or [])
        self.node_selector: dict[str, str] = dict(spec.get("nodeSelector") or {})
        self.affinity: dict[str, Any] = dict(spec.get("affinity") or {})
        # Upstream's PodsWithAffinity / PodsWithRequiredAntiAffinity membership, which NodeInfo counts.
        self.has_pod_affinity = bool(self.affinity.get("podAffinity") or self.affinity.get("podAntiAffinity"))
        anti = self.affinity.get("podAntiAffinity")  # junk is the plugins' to report, not a crash here
        self.has_required_anti_affinity = isinstance(anti, dict) and bool(
            anti.get("requiredDuringSchedulingIgnoredDuringExecution")
        )
        images = [c.get("image") for c in (spec.get("initContainers") or []) + (spec.get("containers") or [])]
        self.images: tuple[str, ...] = tuple(normalized_image_name(str(i)) for i in images if i)

    @classmethod
    def from_pod(cls, pod: Obj, where: str | None = None) -> PodInfo:
        return cls(pod, where)

    def with_node(self, node_name: str) -> PodInfo:
        """A copy bound to ``node_name`` (what the cache assumes)."""
        pod = dict(self.pod)
        pod["spec"] = dict(self.pod.get("spec") or {})
        pod["spec"]["nodeName"] = node_name
        clone = PodInfo.__new__(PodInfo)
        for slot in PodInfo.__slots__:
            setattr(clone, slot, getattr(self, slot))
        clone.pod = pod
        clone.node_name = node_name
        return clone

    def confirms(self, pod: Obj) -> bool:
        """Is ``pod`` (an informer's copy) this assumed pod exactly as it was assumed -- same uid, spec (node
        included), labels and deletion state, no resize in its status -- so that everything derived from it is
        the same? Then :meth:`rebased` may stand for it without deriving it again."""
        meta = pod.get("metadata") or {}
        mine = self.pod.get("metadata") or {}
        return (
            pod.get("spec") == self.pod.get("spec")
            and meta.get("uid") == mine.get("uid")
            and (meta.get("labels") or {}) == (mine.get("labels") or {})
            and meta.get("deletionTimestamp") == mine.get("deletionTimestamp")
            and not _resized_statuses(pod)[0]
        )

    def rebased(self, pod: Obj) -> PodInfo:
        """This PodInfo over ``pod``, which :meth:`confirms` it (no field derived again)."""
        clone = PodInfo.__new__(PodInfo)
        for slot in PodInfo.__slots__:
            setattr(clone, slot, getattr(self, slot))
        clone.pod = pod
        return clone

    def __repr__(self) -> str:
        return f"PodInfo({self.key})"


@dataclass(frozen=True, slots=True)
class ImageState:
    """An image on a node: its size and on how many nodes of the cluster it is present."""

    size: int
    num_nodes: int


class NodeInfo:
    """A node, the pods on it (assumed ones included) and what they request.

    ``generation`` increases on every change so snapshots and vectorised caches can tell what moved.
    """

    __slots__ = (
        "allocatable",
        "generation",
        "image_states",
        "labels",
        "name",
        "node",
        "non_zero_requested",
        "pods",
        "pods_with_affinity",
        "pods_with_required_anti_affinity",
        "requested",
        "taints",
        "unschedulable",
        "used_ports",
    )

    def __init__(self, node: Obj, where: str | None = None) -> None:
        meta = node.get("metadata") or {}
        spec = node.get("spec") or {}
        status = node.get("status") or {}
        self.node = node
        self.name: str = str(meta.get("name") or "")
        self.labels: dict[str, str] = dict(meta.get("labels") or {})
        self.taints: list[dict[str, Any]] = list(spec.get("taints") or [])
        self.unschedulable: bool = bool(spec.get("unschedulable"))
        w = where or f"node {self.name}"
        self.allocatable: Resources = {
            k: quantity.resource_amount(k, v, f"{w}: status.allocatable.{k}")
            for k, v in (status.get("allocatable") or {}).items()
        }
        self.pods: list[PodInfo] = []
        # How many of ``pods`` have pod (anti-)affinity / required anti-affinity (upstream keeps the lists), kept
        # as pods come and go so the snapshot's shortcut lists never walk a node's pods.
        self.pods_with_affinity = 0
        self.pods_with_required_anti_affinity = 0
        self.requested: Resources = {}
        self.non_zero_requested: Resources = {CPU: 0, MEMORY: 0}
        self.used_ports: list[HostPort] = []
        self.image_states: dict[str, ImageState] = {}
        self.generation = 0

    def add_pod(self, pi: PodInfo) -> None:
        self.pods.append(pi)
        if pi.has_pod_affinity:
            self.pods_with_affinity += 1
            self.pods_with_required_anti_affinity += pi.has_required_anti_affinity
        _add_into(self.requested, pi.requests)
        self.non_zero_requested[CPU] += pi.non_zero_requests.get(CPU, 0)
        self.non_zero_requested[MEMORY] += pi.non_zero_requests.get(MEMORY, 0)
        self.used_ports.extend(pi.host_ports)
        self.generation += 1

    def remove_pod(self, pod_key: str) -> PodInfo | None:
        for i, pi in enumerate(self.pods):
            if pi.key == pod_key:
                del self.pods[i]
                if pi.has_pod_affinity:
                    self.pods_with_affinity -= 1
                    self.pods_with_required_anti_affinity -= pi.has_required_anti_affinity
                for k, v in pi.requests.items():
                    self.requested[k] = self.requested.get(k, 0) - v
                self.non_zero_requested[CPU] -= pi.non_zero_requests.get(CPU, 0)
                self.non_zero_requested[MEMORY] -= pi.non_zero_requests.get(MEMORY, 0)
                for hp in pi.host_ports:
                    self.used_ports.remove(hp)
                self.generation += 1
                return pi
        return None

    def clone(self) -> NodeInfo:
        c = NodeInfo.__new__(NodeInfo)
        c.node = self.node
        c.name = self.name
        c.labels = self.labels
        c.taints = self.taints
        c.unschedulable = self.unschedulable
        c.allocatable = self.allocatable
        c.pods = list(self.pods)
        c.pods_with_affinity = self.pods_with_affinity
        c.pods_with_required_anti_affinity = self.pods_with_required_anti_affinity
        c.requested = dict(self.requested)
        c.non_zero_requested = dict(self.non_zero_requested)
        c.used_ports = list(self.used_ports)
        c.image_states = self.image_states
        c.generation = self.generation
        return c

    def node_images(self) -> Iterable[tuple[list[str], int]]:
        """(names, sizeBytes) of ``status.images``."""
        for img in (self.node.get("status") or {}).get("images") or []:
            yield [str(n) for n in img.get("names") or []], int(img.get("sizeBytes") or 0)

    def __repr__(self) -> str:
        return f"NodeInfo({self.name}, pods={len(self.pods)})"


@dataclass(slots=True)
class QueuedPodInfo:
    """A pod in the scheduling queue with its bookkeeping."""

    pod_info: PodInfo
    timestamp: float  # when it was (re)added to the queue; PrioritySort's tie-breaker
    attempts: int = 0
    initial_attempt_timestamp: float | None = None
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    gated: bool = False
    sequence: int = 0  # insertion counter, a deterministic tie-breaker after timestamp
    in_flight_since: int = 0  # the queue's event counter when popped: later events are replayed if it fails

    @property
    def key(self) -> str:
        return self.pod_info.key
