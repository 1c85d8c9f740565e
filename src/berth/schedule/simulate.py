"""Simulation: read a cluster file and a workload file, expand controllers into pods, place them, report.

Why: users should see where their scheduling policy puts pods before touching a cluster. The files -- a cluster
file with Nodes (plus optionally bound Pods, PriorityClasses and objects plugins read) and a workload file with
Pods and the controllers that make them -- are read, validated and expanded by :mod:`berth.schedule.inputs`; pods
are queued in document order.

Several configurations at once (``--config a.yaml --config b.yaml``) simulate separate scheduler binaries: each
has its own cache and queue, they take turns one cycle at a time, and each sees the others' pods only once bound.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from berth.kube.errors import InputError
from berth.kube.naming import fnv32a, safe_encode
from berth.kube.naming import pod_template_hash as template_hash
from berth.kube.objects import Obj
from berth.schedule import explain
from berth.schedule.config import SchedulerConfiguration
from berth.schedule.framework.interface import SUCCESS, Status
from berth.schedule.framework.types import PodInfo
from berth.schedule.inputs import (
    ALPHANUMS,
    API_VERSIONS,
    CLUSTER_KINDS,
    OBJECT_KINDS,
    WORKLOAD_KINDS,
    ClusterInput,
    Expander,
    PriorityClasses,
    Sourced,
    WorkloadInput,
    check_amount,
    load_cluster,
    load_workload,
)
from berth.schedule.plugins.registry import Registry
from berth.schedule.queue import VirtualClock
from berth.schedule.scheduler import (
    Failure,
    Ignored,
    Placement,
    Preemption,
    Scheduler,
    replacement_pod,
    standing_placements,
)

# The input side lives in berth.schedule.inputs; these names stay importable from here.
__all__ = [
    "ALPHANUMS",
    "API_VERSIONS",
    "CLUSTER_KINDS",
    "OBJECT_KINDS",
    "WORKLOAD_KINDS",
    "BenchResult",
    "ClusterInput",
    "Expander",
    "NodeUsage",
    "PriorityClasses",
    "SimulationResult",
    "Sourced",
    "WorkloadInput",
    "check_amount",
    "fnv32a",
    "load_cluster",
    "load_workload",
    "perf_node",
    "perf_pod",
    "safe_encode",
    "scheduling_basic",
    "simulate",
    "template_hash",
]


@dataclass(frozen=True)
class NodeUsage:
    """One node after the run: what it offers and what its pods (bound before, placed by the run) request --
    millicores for cpu, bytes for memory."""

    node: str
    pods: int
    allowed_pods: int
    cpu: int
    cpu_allocatable: int
    memory: int
    memory_allocatable: int


@dataclass(frozen=True)
class SimulationResult:
    placements: tuple[Placement, ...]
    unschedulable: tuple[Failure, ...]
    ignored: tuple[Ignored, ...]
    pods: int
    seconds: float
    warnings: tuple[str, ...]
    nodes: tuple[str, ...]
    profiles: tuple[str, ...]
    preempted: tuple[Preemption, ...] = ()
    # Set when simulate() was asked to explain pods (--explain): one per followed pod that was attempted.
    explanations: tuple[explain.Explanation, ...] | None = None
    usage: tuple[NodeUsage, ...] = ()  # per node at the end, in node-file order

    @property
    def scheduled(self) -> int:
        return len(self.placements)

    @property
    def pods_per_second(self) -> float:
        return self.scheduled / self.seconds if self.seconds > 0 else 0.0

    def counts(self) -> dict[str, dict[str, int]]:
        """node -> profile -> pods placed there."""
        out: dict[str, dict[str, int]] = {n: {} for n in self.nodes}
        for p in self.placements:
            per = out.setdefault(p.node, {})
            per[p.scheduler_name] = per.get(p.scheduler_name, 0) + 1
        return out

    def to_dict(self) -> dict[str, Any]:
        """The ``-o json`` contract."""
        return {
            "placements": [
                {"pod": p.pod, "schedulerName": p.scheduler_name, "node": p.node} for p in self.placements
            ],
            "unschedulable": [
                {
                    "pod": f.pod,
                    "schedulerName": f.scheduler_name,
                    "message": f.message,
                    "reason": str(f.reason),
                }
                for f in self.unschedulable
            ],
            "ignored": [{"pod": i.pod, "schedulerName": i.scheduler_name} for i in self.ignored],
            "stats": {
                "pods": self.pods,
                "scheduled": self.scheduled,
                "seconds": round(self.seconds, 6),
                "podsPerSecond": round(self.pods_per_second, 1),
            },
            "warnings": list(self.warnings),
            "preempted": [
                {"pod": p.victim, "preemptor": p.preemptor, "node": p.node} for p in self.preempted
            ],
            "nodes": list(self.nodes),
            "profiles": list(self.profiles),
            **(
                {"explanations": [e.to_dict() for e in self.explanations]}
                if self.explanations is not None
                else {}
            ),
        }


# --- running -----------------------------------------------------------------------------------------------------


class _SharedClusterBinder:
    """Binding for separate scheduler binaries: every scheduler learns of a bound pod, as from its informer."""

    echoes_bindings = False

    def __init__(self) -> None:
        self.schedulers: list[Scheduler] = []

    def bind(self, pod: PodInfo, node_name: str) -> Status:
        before = pod.pod
        after = dict(before)
        after["spec"] = {**(before.get("spec") or {}), "nodeName": node_name}
        for s in self.schedulers:
            s.update_pod(before, after)
        return SUCCESS

    def evict(self, victim: PodInfo, preemptor: PodInfo, node_name: str) -> Status:
        """Preemption: every scheduler sees the victim deleted and its controller's replacement (if any) appear."""
        replacement = replacement_pod(victim)
        for s in self.schedulers:
            s.remove_pod(victim.key)
        if replacement is not None:
            for s in self.schedulers:
                s.add_pod(replacement)
        return SUCCESS


def simulate(
    configs: Sequence[SchedulerConfiguration],
    cluster_path: str,
    workload_path: str,
    seed: int = 1,
    registry: Registry | None = None,
    max_error_attempts: int = 10,
    explain_patterns: Sequence[str] = (),
) -> SimulationResult:
    """Place the workload on the cluster with one scheduler per configuration (usually one) and report.

    ``explain_patterns``: pods (``ns/name`` or name, shell wildcards) whose every attempt is recorded, node by
    node and plugin by plugin, in ``SimulationResult.explanations`` (a pattern matching no pod is an InputError).
    """
    cluster = load_cluster(cluster_path)
    rng = random.Random(seed)
    workload = load_workload(workload_path, rng, cluster.priority_classes)
    pods = workload.pods
    clock = VirtualClock()
    shared = _SharedClusterBinder() if len(configs) > 1 else None
    schedulers = [
        Scheduler(cfg, registry, binder=shared, seed=seed + i, clock=clock) for i, cfg in enumerate(configs)
    ]
    if shared is not None:
        shared.schedulers = schedulers
    names = [n for s in schedulers for n in s.scheduler_names]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise InputError(
            f"scheduler name(s) {', '.join(duplicates)} appear in more than one configuration; "
            "two binaries must not serve the same schedulerName",
            "--config",
        )
    order: list[Placement] = []
    preempted: list[Preemption] = []
    index = {f"{p.obj['metadata']['namespace']}/{p.obj['metadata']['name']}": i for i, p in enumerate(pods)}
    recorder = explain.Recorder(explain_patterns) if explain_patterns else None
    if recorder is not None:
        recorder.check(list(index))
        for s in schedulers:
            s.explainer = recorder

    for s in schedulers:
        for obj in (*cluster.objects, *workload.objects):
            s.add_object(obj.obj)
        for node in cluster.nodes:
            _feed(s.add_node, node)
        for bound in cluster.bound_pods:
            _feed(s.add_pod, bound)
        for made in pods:
            _feed(s.add_pod, made)

    started = time.perf_counter()
    if len(schedulers) == 1:
        schedulers[0].run_until_idle(max_error_attempts)
        order, preempted = list(schedulers[0].placements), list(schedulers[0].preempted)
    else:
        order, preempted = _run_separately(schedulers, clock, max_error_attempts)
    seconds = time.perf_counter() - started
    order = standing_placements(
        order, preempted
    )  # victims of preemption are no longer where they were placed

    placed = {p.pod for p in order}
    failures: dict[str, Failure] = {}
    for s in schedulers:
        for f in s.unschedulable():
            if f.pod not in placed:
                failures[f.pod] = f
    served = set(names)
    ignored: dict[str, Ignored] = {}
    for s in schedulers:
        for key, ign in s.ignored.items():
            if ign.scheduler_name not in served and key in index and key not in placed:
                ignored[key] = ign
    workload_unbound = sum(1 for p in pods if not (p.obj.get("spec") or {}).get("nodeName"))
    warnings: list[str] = []
    for s in schedulers:
        warnings.extend(w for w in s.warnings if w not in warnings)
    return SimulationResult(
        placements=tuple(order),
        unschedulable=tuple(sorted(failures.values(), key=lambda f: index.get(f.pod, len(index)))),
        ignored=tuple(sorted(ignored.values(), key=lambda i: index.get(i.pod, len(index)))),
        pods=workload_unbound,
        seconds=seconds,
        warnings=tuple(warnings),
        nodes=tuple(str(n.obj["metadata"]["name"]) for n in cluster.nodes),
        profiles=tuple(names),
        preempted=tuple(preempted),
        explanations=recorder.explanations(index) if recorder is not None else None,
        usage=_usage(schedulers[0], [str(n.obj["metadata"]["name"]) for n in cluster.nodes]),
    )


def _usage(s: Scheduler, names: Sequence[str]) -> tuple[NodeUsage, ...]:
    """Each node's requests and capacity as the scheduler's cache holds them once the run is over."""
    out: list[NodeUsage] = []
    for name in names:
        info = s.cache.node_info(name)
        if info is None:
            continue
        alloc, req = info.allocatable, info.requested
        out.append(
            NodeUsage(
                name,
                len(info.pods),
                int(alloc.get("pods", 0)),
                int(req.get("cpu", 0)),
                int(alloc.get("cpu", 0)),
                int(req.get("memory", 0)),
                int(alloc.get("memory", 0)),
            )
        )
    return tuple(out)


def _feed(add: Callable[[Obj, str], None], item: Sourced) -> None:
    """Hand an object to the scheduler; a field of the wrong type becomes an InputError naming the object."""
    try:
        add(item.obj, item.where)
    except InputError:
        raise
    except (TypeError, ValueError, AttributeError, KeyError) as exc:
        raise InputError(
            f"malformed object ({type(exc).__name__}: {exc}); check the field types against the Kubernetes API",
            item.where,
        ) from exc


def _run_separately(
    schedulers: Sequence[Scheduler], clock: VirtualClock, max_error_attempts: int
) -> tuple[list[Placement], list[Preemption]]:
    """Separate binaries: one cycle each in turn; virtual time moves only when none of them has work. Returns the
    merged placement log and the evictions, each indexed into that merged log."""
    order: list[Placement] = []
    preempted: list[Preemption] = []
    for s in schedulers:
        s.max_error_attempts = max_error_attempts
    while True:
        progressed = False
        for s in schedulers:
            before, evicted = len(s.placements), len(s.preempted)
            if s.schedule_one() is not None:
                progressed = True
                # A cycle either places its pod or fails (evicting, perhaps): never both.
                preempted.extend(
                    Preemption(p.victim, p.preemptor, p.node, len(order)) for p in s.preempted[evicted:]
                )
                order.extend(s.placements[before:])
        if progressed:
            continue
        expiries = [e for s in schedulers if (e := s.next_wakeup()) is not None]
        if not expiries:
            return order, preempted
        clock.advance_to(min(expiries))
        for s in schedulers:
            s.queue.tick()


# --- scheduler_perf-like benchmark -------------------------------------------------------------------------------


@dataclass(frozen=True)
class BenchResult:
    workload: str
    nodes: int
    pods: int
    init_pods: int
    scheduled: int
    seconds: float
    cpu_seconds: float  # process CPU time in the measured interval (robust to a busy machine)

    @property
    def pods_per_second(self) -> float:
        return self.scheduled / self.seconds if self.seconds > 0 else 0.0

    @property
    def pods_per_cpu_second(self) -> float:
        return self.scheduled / self.cpu_seconds if self.cpu_seconds > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "workload": self.workload,
            "nodes": self.nodes,
            "pods": self.pods,
            "initPods": self.init_pods,
            "scheduled": self.scheduled,
            "seconds": round(self.seconds, 3),
            "podsPerSecond": round(self.pods_per_second, 1),
            "cpuSeconds": round(self.cpu_seconds, 3),
            "podsPerCpuSecond": round(self.pods_per_cpu_second, 1),
        }


def perf_node(i: int) -> Obj:
    """scheduler_perf ``templates/node-default.yaml``: 110 pods, 4 cpu, 32Gi."""
    resources = {"pods": "110", "cpu": "4", "memory": "32Gi"}
    name = f"scheduler-perf-{i}"
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "spec": {},
        "status": {
            "capacity": dict(resources),
            "allocatable": dict(resources),
            "conditions": [{"type": "Ready", "status": "True"}],
            "phase": "Running",
        },
    }


def perf_pod(namespace: str, i: int) -> Obj:
    """scheduler_perf ``templates/pod-default.yaml``: one pause container, requests = limits = 100m / 500Mi."""
    resources = {"cpu": "100m", "memory": "500Mi"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"pod-{i}", "namespace": namespace, "uid": f"{namespace}-{i}"},
        "spec": {
            "containers": [
                {
                    "name": "pause",
                    "image": "registry.k8s.io/pause:3.10",
                    "ports": [{"containerPort": 80}],
                    "resources": {"requests": dict(resources), "limits": dict(resources)},
                }
            ]
        },
    }


def scheduling_basic(
    config: SchedulerConfiguration,
    nodes: int = 5000,
    pods: int = 10000,
    init_pods: int = 1000,
    seed: int = 1,
    registry: Registry | None = None,
) -> BenchResult:
    """scheduler_perf ``SchedulingBasic``: create nodes, schedule ``init_pods`` (not measured), then measure the
    time to schedule ``pods`` more. Pod creation (queueing) is outside the measured interval."""
    s = Scheduler(config, registry, seed=seed)
    for i in range(nodes):
        s.add_node(perf_node(i))
    for i in range(init_pods):
        s.add_pod(perf_pod("sched-0", i))
    s.run_until_idle()
    before = len(s.placements)
    for i in range(pods):
        s.add_pod(perf_pod("sched-1", i))
    started, cpu_started = time.perf_counter(), time.process_time()
    s.run_until_idle()
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    return BenchResult("SchedulingBasic", nodes, pods, init_pods, len(s.placements) - before, seconds, cpu)
