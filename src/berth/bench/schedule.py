"""scheduler_perf-like workloads in simulation, timed, with an optional check against the reference path.

Why: the issue's speed targets (SchedulingBasic >= 2x upstream's 680 pods/s, TopologySpreading >= 460,
pod anti-affinity >= 90) are claims about *this* scheduler making *kube-scheduler's* decisions; a number is only
worth reporting if the vectorised path it measures decides exactly as the per-node reference path does.
:func:`run_benchmark` therefore can re-run a sample of the measured pods on the reference path (``verify``) and
count ``mismatches``.

Workloads (templates as scheduler_perf's ``templates/node-default.yaml`` and ``pod-default.yaml``: nodes with 110
pods, 4 cpu, 32Gi; one pause container requesting 100m / 500Mi):

- ``scheduling-basic``: 5,000 nodes, 1,000 init pods, 10,000 measured pods (SchedulingBasic/5000Nodes_10000Pods).
- ``topology-spreading``: 5,000 nodes labelled ``topology.kubernetes.io/zone`` moon-1..3, 1,000 init pods, 2,000
  measured pods labelled ``color: blue`` with a DoNotSchedule zone constraint (maxSkew 5) on that label.
- ``pod-anti-affinity``: 5,000 nodes, 1,000 init + 2,000 measured pods labelled ``color: green`` with required
  anti-affinity to ``color: green`` on ``kubernetes.io/hostname``.
- ``preemption``: scheduler_perf's PreemptionBasic (``default_preemption/performance-config.yaml``; upstream runs it
  at 1,000 nodes / 4,000 init / 1,000 measured, no threshold): 500 nodes filled by 2,000 low-priority pods
  (``pod-low-priority.yaml``: no priority, 900m / 500Mi), then 500 pods of priority 10 asking 3 cpu
  (``pod-high-priority.yaml``) that each evict three low pods, are nominated, and bind on the next attempt. The low
  pods are bare (no controller), so victims are gone for good; ``preempted`` counts them.

How verification works: for every k-th measured pod the cycle is first run on the reference path (plugins
switched to their per-node methods, PostFilter left out so nothing is evicted) from the same state -- same
snapshot, same rotating start index, same random state -- and its chosen node and per-node rejection reasons are
compared with the vectorised cycle's. The time spent in those reference runs is not counted in ``seconds``.
"""

from __future__ import annotations

import gc
import resource
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from berth.kube.errors import InputError
from berth.kube.objects import Obj
from berth.schedule import vector
from berth.schedule.config import SchedulerConfiguration, default_config
from berth.schedule.framework.interface import CycleState, Status
from berth.schedule.framework.runtime import Framework
from berth.schedule.framework.types import PodInfo
from berth.schedule.plugins.registry import Registry, default_registry
from berth.schedule.queue import VirtualClock
from berth.schedule.scheduler import CycleOutcome, Diagnosis, Scheduler
from berth.schedule.simulate import perf_node, perf_pod

ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
VERIFY_SAMPLES = 200  # reference re-runs per benchmark with verify on (evenly spread over the measured pods)
NAMED_NODE = "scheduler-perf-node"  # templates/node-with-name.yaml

NodeFn = Callable[[int], Obj]
PodFn = Callable[[str, int], Obj]


def _labelled(pod: Obj, **labels: str) -> Obj:
    pod["metadata"]["labels"] = dict(labels)
    return pod


def zoned_node(i: int) -> Obj:
    """node-default.yaml plus a zone label (moon-1..3), as scheduler_perf's labelNodePrepareStrategy does."""
    node = perf_node(i)
    node["metadata"]["labels"][ZONE] = f"moon-{i % 3 + 1}"
    return node


def zone1_node(i: int) -> Obj:
    """node-default.yaml labelled ``topology.kubernetes.io/zone: zone1`` (the affinity workloads' nodes)."""
    node = perf_node(i)
    node["metadata"]["labels"][ZONE] = "zone1"
    return node


def node_or_tainted(i: int) -> Obj:
    """SchedulingWithNodeInclusionPolicy's nodes: one in five is ``node-with-taint.yaml`` (``foo:NoSchedule``),
    as upstream's 1,000 tainted of 5,000 (there created after the others; here interleaved)."""
    node = perf_node(i)
    if i % 5 == 4:
        node["spec"]["taints"] = [{"key": "foo", "effect": "NoSchedule"}]
    return node


def named_node_first(i: int) -> Obj:
    """SchedulingDaemonset's nodes: ``node-with-name.yaml`` (90,000 pods) first, then node-default.yaml ones."""
    if i:
        return perf_node(i)
    node = perf_node(0)
    node["metadata"] = {"name": NAMED_NODE, "labels": {HOSTNAME: NAMED_NODE}}
    for key in ("capacity", "allocatable"):
        node["status"][key]["pods"] = "90000"
    return node


def spreading_pod(namespace: str, i: int) -> Obj:
    """templates/pod-with-topology-spreading.yaml: ``color: blue``, zone constraint maxSkew 5, DoNotSchedule."""
    return _spread_by_zone(namespace, i, "DoNotSchedule")


def preferred_spreading_pod(namespace: str, i: int) -> Obj:
    """templates/pod-with-preferred-topology-spreading.yaml: the same constraint with ScheduleAnyway."""
    return _spread_by_zone(namespace, i, "ScheduleAnyway")


def _spread_by_zone(namespace: str, i: int, when: str) -> Obj:
    pod = _labelled(perf_pod(namespace, i), color="blue")
    pod["spec"]["topologySpreadConstraints"] = [
        {
            "maxSkew": 5,
            "topologyKey": ZONE,
            "whenUnsatisfiable": when,
            "labelSelector": {"matchLabels": {"color": "blue"}},
        }
    ]
    return pod


def inclusion_policy_pod(namespace: str, i: int) -> Obj:
    """templates/pod-with-node-inclusion-policy.yaml: ``foo: bar``, hostname constraint maxSkew 1, DoNotSchedule,
    nodeAffinityPolicy and nodeTaintsPolicy Honor."""
    pod = _labelled(perf_pod(namespace, i), foo="bar")
    pod["spec"]["topologySpreadConstraints"] = [
        {
            "maxSkew": 1,
            "topologyKey": HOSTNAME,
            "whenUnsatisfiable": "DoNotSchedule",
            "nodeAffinityPolicy": "Honor",
            "nodeTaintsPolicy": "Honor",
            "labelSelector": {"matchLabels": {"foo": "bar"}},
        }
    ]
    return pod


def _affinity_term(color: str, topology_key: str) -> dict[str, Any]:
    return {
        "labelSelector": {"matchLabels": {"color": color}},
        "topologyKey": topology_key,
        "namespaces": ["sched-1", "sched-0"],
    }


def anti_affinity_pod(namespace: str, i: int) -> Obj:
    """templates/pod-with-pod-anti-affinity.yaml: ``color: green``, required anti-affinity to green on hostname."""
    pod = _labelled(perf_pod(namespace, i), color="green")
    pod["spec"]["affinity"] = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [_affinity_term("green", HOSTNAME)]
        }
    }
    return pod


def green_pod(namespace: str, i: int) -> Obj:
    """templates/pod-with-pod-anti-affinity-label.yaml: a plain pod labelled ``color: green`` (existing pods'
    anti-affinity must be checked against it)."""
    return _labelled(perf_pod(namespace, i), color="green")


def affinity_pod(namespace: str, i: int) -> Obj:
    """templates/pod-with-pod-affinity.yaml: ``color: blue``, required affinity to blue on the zone."""
    pod = _labelled(perf_pod(namespace, i), color="blue")
    pod["spec"]["affinity"] = {
        "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_affinity_term("blue", ZONE)]}
    }
    return pod


def preferred_affinity_pod(namespace: str, i: int) -> Obj:
    """templates/pod-with-preferred-pod-affinity.yaml: ``color: red``, preferred (weight 1) affinity to red on
    the hostname."""
    pod = _labelled(perf_pod(namespace, i), color="red")
    term = {"weight": 1, "podAffinityTerm": _affinity_term("red", HOSTNAME)}
    pod["spec"]["affinity"] = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [term]}}
    return pod


def preferred_anti_affinity_pod(namespace: str, i: int) -> Obj:
    """templates/pod-with-preferred-pod-anti-affinity.yaml: ``color: yellow``, preferred (weight 1)
    anti-affinity to yellow on the hostname."""
    pod = _labelled(perf_pod(namespace, i), color="yellow")
    term = {"weight": 1, "podAffinityTerm": _affinity_term("yellow", HOSTNAME)}
    pod["spec"]["affinity"] = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [term]}}
    return pod


def node_affinity_pod(namespace: str, i: int) -> Obj:
    """templates/pod-with-node-affinity.yaml: required node affinity ``zone In (zone1, zone2)``."""
    pod = perf_pod(namespace, i)
    term = {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["zone1", "zone2"]}]}
    pod["spec"]["affinity"] = {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
    }
    return pod


def daemonset_pod(namespace: str, i: int) -> Obj:
    """templates/daemonset-pod.yaml: no requests, required affinity to ``metadata.name`` of the named node (a
    PreFilterResult of one node, as DaemonSet pods have)."""
    pod = perf_pod(namespace, i)
    del pod["spec"]["containers"][0]["resources"], pod["spec"]["containers"][0]["ports"]
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [NAMED_NODE]}]}
    pod["spec"]["affinity"] = {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
    }
    return pod


def service_pod(namespace: str, i: int) -> Obj:
    """templates/pod-with-label.yaml: ``app: scheduler-perf``, no requests: selected by the Service, so the
    default (system) topology spreading applies."""
    pod = _labelled(perf_pod(namespace, i), app="scheduler-perf")
    del pod["spec"]["containers"][0]["resources"], pod["spec"]["containers"][0]["ports"]
    return pod


def service(namespace: str) -> Obj:
    """templates/service.yaml: selects ``app: scheduler-perf``."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "service-0", "namespace": namespace},
        "spec": {
            "selector": {"app": "scheduler-perf"},
            "ports": [{"protocol": "TCP", "port": 80, "targetPort": 8000}],
        },
    }


def _priority_pod(namespace: str, i: int, priority: int | None, cpu: str) -> Obj:
    pod = perf_pod(namespace, i)
    if priority is not None:
        pod["spec"]["priority"] = priority
    res = pod["spec"]["containers"][0]["resources"]
    res["requests"]["cpu"] = res["limits"]["cpu"] = cpu
    return pod


def low_priority_pod(namespace: str, i: int) -> Obj:
    """scheduler_perf ``templates/pod-low-priority.yaml``: no priority (0), 900m / 500Mi."""
    return _priority_pod(namespace, i, None, "900m")


def high_priority_pod(namespace: str, i: int) -> Obj:
    """scheduler_perf ``templates/pod-high-priority.yaml``: priority 10, 3000m / 500Mi."""
    return _priority_pod(namespace, i, 10, "3")


def high_priority_large_cpu_pod(namespace: str, i: int) -> Obj:
    """templates/pod-high-priority-large-cpu.yaml: priority 10, requests 9 cpu (no limits) -- more than any node
    has, so it never fits and preemption cannot help."""
    pod = _priority_pod(namespace, i, 10, "9")
    del pod["spec"]["containers"][0]["resources"]["limits"]
    return pod


def light_pod(namespace: str, i: int) -> Obj:
    """templates/light-pod.yaml: one pause container, no requests, terminationGracePeriodSeconds 0."""
    pod = perf_pod(namespace, i)
    del pod["spec"]["containers"][0]["resources"], pod["spec"]["containers"][0]["ports"]
    pod["spec"]["terminationGracePeriodSeconds"] = 0
    return pod


def gated_pod(namespace: str, i: int) -> Obj:
    """templates/gated-pod.yaml: a pause pod with the scheduling gate ``test.k8s.io/hold`` (never scheduled)."""
    pod = light_pod(namespace, i)
    del pod["spec"]["terminationGracePeriodSeconds"]
    pod["spec"]["schedulingGates"] = [{"name": "test.k8s.io/hold"}]
    return pod


def churn_node(i: int) -> Obj:
    """templates/churn/node-default.yaml: a Ready node that takes no pods (``pods: 0``)."""
    node = perf_node(i)
    name = f"node-churn-{i}"
    node["metadata"] = {"name": name, "labels": {HOSTNAME: name}}
    node["status"]["capacity"] = {"pods": "0"}
    node["status"]["allocatable"] = {"pods": "0"}
    return node


def churn_service(i: int) -> Obj:
    """templates/churn/service-default.yaml: a Service selecting ``app: foo`` (no pod has it)."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": f"service-churn-{i}", "namespace": "churn"},
        "spec": {
            "selector": {"app": "foo"},
            "ports": [{"protocol": "TCP", "port": 8080, "targetPort": 8080}],
        },
    }


def init_pod_key(template: int, i: int) -> str:
    """The key :func:`run_benchmark` gives the ``i``-th init pod of the ``template``-th init template."""
    return f"sched-0/pod-{i}" if template == 0 else f"sched-0/pod-{template}-{i}"


ChurnFn = Callable[[Scheduler, int, int], None]  # (scheduler, step k from 0, init pods per template)


@dataclass(frozen=True)
class Churn:
    """scheduler_perf's ``churn`` / ``deletePods`` ops: ``step`` runs every ``interval`` seconds of wall time
    while the measured pods are scheduled (as upstream, where they run beside the scheduler)."""

    interval: float
    step: ChurnFn


def _create_churn_pod(template: PodFn) -> ChurnFn:
    """Churn ``mode: create``: a new pod of ``template`` every interval, for as long as the measurement runs."""

    def step(s: Scheduler, k: int, _init: int) -> None:
        s.add_pod(template("churn", k))

    return step


def _recreate_mixed(s: Scheduler, k: int, _init: int) -> None:
    """SchedulingWithMixedChurn's ``mode: recreate, number: 1``: each interval the node, the unschedulable pod and
    the Service of the previous step go and new ones come."""
    if k:
        s.remove_node(f"node-churn-{k - 1}")
        s.remove_pod(f"churn/pod-{k - 1}")
        s.remove_object(churn_service(k - 1))
    s.add_node(churn_node(k))
    s.add_pod(high_priority_large_cpu_pod("churn", k))
    s.add_object(churn_service(k))


def _delete_scheduled_light_pod(s: Scheduler, k: int, init: int) -> None:
    """SchedulingWhileGated's ``deletePods`` (50/s): the scheduled light pods (init templates 1 and 2) go one by
    one, each an AssignedPodDelete event the queue weighs against the gated pods."""
    if k < 2 * init:
        s.remove_pod(init_pod_key(1 + k // init, k % init))


@dataclass(frozen=True)
class Workload:
    """One scheduler_perf workload: ``nodes`` from ``node``; ``init_pods`` of each template in ``init`` placed
    first (namespace sched-0, not timed); then ``pods`` of ``pod`` (namespace ``namespace``) timed.
    ``upstream``/``threshold``: the scheduler_perf test it mirrors and that test's pods/s lower bound (None: it has
    none)."""

    name: str
    upstream: str
    threshold: int | None
    nodes: int
    init_pods: int
    pods: int
    node: NodeFn
    init: tuple[PodFn, ...]
    pod: PodFn
    needs: str = ""  # a plugin that must be active for the workload to mean anything
    namespace: str = "sched-1"
    objects: tuple[Obj, ...] = ()  # Services and the like, added before the nodes
    churn: tuple[Churn, ...] = ()  # what runs beside the measured pods (wall-clock intervals)


WORKLOADS: Mapping[str, Workload] = {
    w.name: w
    for w in (
        Workload(
            "scheduling-basic", "SchedulingBasic/5000Nodes_10000Pods", 680,
            5000, 1000, 10000, perf_node, (perf_pod,), perf_pod,
        ),
        Workload(
            "topology-spreading", "TopologySpreading/5000Nodes_5000Pods", 460,
            5000, 5000, 5000, zoned_node, (perf_pod,), spreading_pod,
        ),
        Workload(
            "preferred-topology-spreading", "PreferredTopologySpreading/5000Nodes_5000Pods", 340,
            5000, 5000, 5000, zoned_node, (perf_pod,), preferred_spreading_pod,
        ),
        Workload(
            "default-topology-spreading", "DefaultTopologySpreading/5000Nodes_50000Pods", 160,
            5000, 5000, 50000, zoned_node, (perf_pod,), service_pod,
            namespace="service-ns", objects=(service("service-ns"),),
        ),
        Workload(
            "node-inclusion-policy", "SchedulingWithNodeInclusionPolicy/5000Nodes", 270,
            5000, 0, 4000, node_or_tainted, (), inclusion_policy_pod,
        ),
        Workload(
            "pod-anti-affinity", "SchedulingPodAntiAffinity/5000Nodes_2000Pods", 60,
            5000, 1000, 2000, perf_node, (anti_affinity_pod,), anti_affinity_pod,
        ),
        Workload(
            "pod-matching-anti-affinity", "SchedulingPodMatchingAntiAffinity/5000Nodes_5000Pods_QueueingHintsEnabled",
            543, 5000, 1000, 5000, perf_node, (anti_affinity_pod,), green_pod,
        ),
        Workload(
            "pod-affinity", "SchedulingPodAffinity/5000Nodes_5000Pods", 35,
            5000, 5000, 5000, zone1_node, (affinity_pod,), affinity_pod,
        ),
        Workload(
            "preferred-pod-affinity", "SchedulingPreferredPodAffinity/5000Nodes_5000Pods", 90,
            5000, 5000, 5000, perf_node, (preferred_affinity_pod,), preferred_affinity_pod,
        ),
        Workload(
            "preferred-pod-anti-affinity", "SchedulingPreferredPodAntiAffinity/5000Nodes_5000Pods", 90,
            5000, 5000, 5000, perf_node, (preferred_anti_affinity_pod,), preferred_anti_affinity_pod,
        ),
        Workload(
            "node-affinity", "SchedulingNodeAffinity/5000Nodes_10000Pods", 220,
            5000, 5000, 10000, zone1_node, (node_affinity_pod,), node_affinity_pod,
        ),
        Workload(
            "mixed-scheduling-base-pod", "MixedSchedulingBasePod/5000Nodes_5000Pods", 140,
            5000, 2000, 5000, zone1_node,
            (perf_pod, affinity_pod, anti_affinity_pod, preferred_affinity_pod, preferred_anti_affinity_pod),
            perf_pod,
        ),
        Workload(
            "daemonset", "SchedulingDaemonset/15000Nodes", 1100,
            15001, 0, 30000, named_node_first, (), daemonset_pod,
        ),
        Workload(
            "unschedulable", "Unschedulable/5kNodes/100Init/10kPods", 590,
            5000, 100, 10000, perf_node, (perf_pod,), perf_pod,
            churn=(Churn(0.2, _create_churn_pod(high_priority_large_cpu_pod)),),
        ),
        Workload(
            "unschedulable-20k-init", "Unschedulable/5kNodes/20kInit/10kPods", 600,
            5000, 20000, 10000, perf_node, (perf_pod,), perf_pod,
            churn=(Churn(0.2, _create_churn_pod(high_priority_large_cpu_pod)),),
        ),
        Workload(
            "preemption-async", "PreemptionAsync/5000Nodes", 570,
            5000, 20000, 5000, perf_node, (low_priority_pod,), perf_pod, "DefaultPreemption",
            churn=(Churn(0.2, _create_churn_pod(high_priority_pod)),),
        ),
        Workload(
            "mixed-churn", "SchedulingWithMixedChurn/5000Nodes_10000Pods", 710,
            5000, 0, 10000, perf_node, (), perf_pod, churn=(Churn(1.0, _recreate_mixed),),
        ),
        Workload(
            "while-gated", "SchedulingWhileGated/1Node_10000GatedPods", 910,
            1, 10000, 20000, named_node_first, (gated_pod, light_pod, light_pod), light_pod,
            churn=(Churn(0.02, _delete_scheduled_light_pod),),
        ),
        Workload(
            "preemption", "PreemptionBasic/1000Nodes (run at half size)", None,
            500, 2000, 500, perf_node, (low_priority_pod,), high_priority_pod, "DefaultPreemption",
        ),
    )
}  # fmt: skip


def peak_memory_mib() -> float:
    """Peak resident set size of this process so far (the whole interpreter, not just the scheduler)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


class VerifyingScheduler(Scheduler):
    """A Scheduler that, for chosen pods, first runs the cycle's placement on the reference path and compares.

    Only ``_schedule_pod`` (PreFilter .. selectHost) is shadowed; the rotating start index and the random state
    are restored before the real (vectorised) run, so both see exactly the same inputs.
    """

    def __init__(self, *args: Any, sample_every: int = 0, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sample_every = sample_every
        self.cycles = 0
        self.checked = 0
        self.mismatches: list[str] = []
        self.reference_seconds = 0.0
        self.reference_cpu_seconds = 0.0

    def _schedule_pod(
        self, fw: Framework, state: CycleState, pod: PodInfo
    ) -> tuple[str, Status | None, Diagnosis]:
        self.cycles += 1
        if not self.sample_every or self.cycles % self.sample_every:
            return super()._schedule_pod(fw, state, pod)
        started, cpu_started = time.perf_counter(), time.process_time()
        start_index, rng_state = self.next_start_node_index, self.rng.getstate()
        post_filter = fw.post_filter
        vector.set_enabled(fw, False)
        fw.post_filter = []
        try:
            ref = super()._schedule_pod(fw, CycleState(), pod)
        finally:
            vector.set_enabled(fw, True)
            fw.post_filter = post_filter
            self.next_start_node_index = start_index
            self.rng.setstate(rng_state)
        self.reference_seconds += time.perf_counter() - started
        self.reference_cpu_seconds += time.process_time() - cpu_started
        got = super()._schedule_pod(fw, state, pod)
        self.checked += 1
        if _decision(ref) != _decision(got):
            self.mismatches.append(f"{pod.key}: reference {_decision(ref)!r}, vectorised {_decision(got)!r}")
        return got


def _decision(
    outcome: tuple[str, Status | None, Diagnosis],
) -> tuple[str, tuple[tuple[str, tuple[str, ...]], ...]]:
    host, _failure, diagnosis = outcome
    reasons = tuple(sorted((name, st.reasons) for name, st in diagnosis.node_to_status.items()))
    return host, reasons


def preemption_active(registry: Registry) -> bool:
    spec = registry.get("DefaultPreemption")
    return spec is not None and spec.active


def run_benchmark(
    workload: str = "scheduling-basic",
    nodes: int | None = None,
    pods: int | None = None,
    verify: bool = False,
    seed: int = 1,
    *,
    init_pods: int | None = None,
    config: SchedulerConfiguration | None = None,
    registry: Registry | None = None,
    vectorised: bool = True,
    freeze: bool = True,
) -> dict[str, Any]:
    """Build ``workload`` (sizes default to the workload's), place the init pods untimed, then time the measured
    pods. Returns ``{workload, nodes, pods, initPods, scheduled, seconds, podsPerSecond, cpuSeconds,
    podsPerCpuSecond, mismatches, verified, peakMemoryMiB, loadAverage}``; ``mismatches`` is None without verify.
    ``vectorised=False`` times the reference path instead. ``freeze`` moves every object that exists when the clock
    starts (nodes, init pods, queued pods) out of the cyclic garbage collector's reach (``gc.freeze``), as a
    long-running scheduler process would; without it each full collection re-walks the whole cluster.

    Raises:
        InputError: unknown workload name.
    """
    w = WORKLOADS.get(workload)
    if w is None:
        raise InputError(
            f"unknown workload {workload!r}; known: {', '.join(sorted(WORKLOADS))}", "--workload"
        )
    n_nodes = w.nodes if nodes is None else nodes
    n_pods = w.pods if pods is None else pods
    n_init = w.init_pods if init_pods is None else init_pods
    reg = registry if registry is not None else default_registry()
    base: dict[str, Any] = {
        "workload": w.name,
        "upstream": w.upstream,
        "threshold": w.threshold,
        "nodes": n_nodes,
        "pods": n_pods,
        "initPods": n_init * len(w.init),
    }
    if w.needs and not preemption_active(reg):
        return {**base, "available": False, "reason": f"{w.needs} is not active in berth yet"}
    cfg = config if config is not None else default_config(reg)
    every = max(1, n_pods // VERIFY_SAMPLES) if verify else 0
    s = VerifyingScheduler(cfg, reg, seed=seed, sample_every=0)
    for fw in s.frameworks.values():
        vector.set_enabled(fw, vectorised)
    for obj in w.objects:
        s.add_object(obj)
    for i in range(n_nodes):
        s.add_node(w.node(i))
    for t, template in enumerate(w.init):
        for i in range(n_init):
            init = template("sched-0", i)
            if t:  # several templates in one namespace: keep names and uids apart
                init["metadata"]["name"] = f"pod-{t}-{i}"
                init["metadata"]["uid"] = f"sched-0-{t}-{i}"
            s.add_pod(init)
    s.run_until_idle()
    before, evicted_before = len(s.placements), len(s.preempted)
    for i in range(n_pods):
        s.add_pod(w.pod(w.namespace, i))
    measured = f"{w.namespace}/"
    s.sample_every = every
    if freeze:
        gc.collect()
        gc.freeze()  # the cluster and the queued pods are long-lived: keep the cyclic GC from re-walking them
    try:
        started, cpu_started = time.perf_counter(), time.process_time()
        if w.churn:
            churned = _run_with_churn(s, w.churn, n_init, measured, n_pods)
        else:
            s.run_until_idle()
            churned = 0
        seconds = time.perf_counter() - started - s.reference_seconds
    finally:
        if freeze:
            gc.unfreeze()
    cpu = time.process_time() - cpu_started - s.reference_cpu_seconds
    scheduled = len({p.pod for p in s.placements[before:] if p.pod.startswith(measured)})
    load = _load_average()
    out = {
        **base,
        "available": True,
        "scheduled": scheduled,
        "seconds": round(seconds, 3),
        "podsPerSecond": round(scheduled / seconds, 1) if seconds > 0 else 0.0,
        "cpuSeconds": round(cpu, 3),
        "podsPerCpuSecond": round(scheduled / cpu, 1) if cpu > 0 else 0.0,
        "preempted": len(s.preempted) - evicted_before,
        "churnSteps": churned,
        "mismatches": len(s.mismatches) if verify else None,
        "verified": s.checked,
        "peakMemoryMiB": round(peak_memory_mib(), 1),
        "loadAverage": load,
        "path": "vectorised" if vectorised else "reference",
        "gcFrozen": freeze,
    }
    if s.mismatches:
        out["mismatchExamples"] = s.mismatches[:5]
    return out


STALL_SECONDS = 10.0  # a churn run stops when no measured pod has been placed for this long (wall time)


def _run_with_churn(s: Scheduler, churn: tuple[Churn, ...], init: int, measured: str, want: int) -> int:
    """Schedule until ``want`` pods of the ``measured`` namespace prefix were placed, running each churn step when
    its wall-clock interval comes (upstream's churn ops run beside the scheduler). Idle moments advance the
    virtual backoff clock or sleep until the next step. Returns the churn steps run."""
    placed: set[str] = set()
    previous = s.on_outcome

    def count(outcome: CycleOutcome) -> None:
        if outcome.node and outcome.pod.startswith(measured):
            placed.add(outcome.pod)
        if previous is not None:
            previous(outcome)

    s.on_outcome = count
    start = last_progress = time.perf_counter()
    due = [start + c.interval for c in churn]
    steps = [0] * len(churn)
    clock = s.clock
    try:
        while len(placed) < want:
            now = time.perf_counter()
            for i, c in enumerate(churn):
                # One step per tick; ticks missed while a cycle ran are dropped, as a Go ticker drops them.
                if now >= due[i]:
                    c.step(s, steps[i], init)
                    steps[i] += 1
                    due[i] = max(due[i] + c.interval, now)
            before = len(placed)
            if s.schedule_one() is not None:
                if len(placed) != before:
                    last_progress = now
                continue
            if now - last_progress > STALL_SECONDS:
                break  # measured pods left that nothing will place: report how many were
            expiry = s.next_wakeup()
            if expiry is not None and isinstance(clock, VirtualClock):
                clock.advance_to(expiry)
                s.queue.tick()
                continue
            time.sleep(max(0.0, min(due) - time.perf_counter()))
    finally:
        s.on_outcome = previous
    return sum(steps)


def _load_average() -> float | None:
    try:
        with open("/proc/loadavg", encoding="ascii") as f:
            return float(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def format_result(result: Mapping[str, Any]) -> str:
    """One human line for ``berth bench schedule``."""
    if not result.get("available", True):
        return f"{result['workload']}: not available ({result.get('reason', '')})"
    verify = (
        ""
        if result.get("mismatches") is None
        else f", mismatches {result['mismatches']}/{result['verified']}"
    )
    if result.get("preempted"):
        verify += f", {result['preempted']} pods preempted"
    if result.get("churnSteps"):
        verify += f", {result['churnSteps']} churn steps beside them"
    return (
        f"{result['workload']}: {result['nodes']} nodes, {result['initPods']} init pods, "
        f"{result['scheduled']}/{result['pods']} pods in {result['seconds']:.2f}s = {result['podsPerSecond']:.0f} "
        f"pods/s ({result['cpuSeconds']:.2f} CPU s = {result['podsPerCpuSecond']:.0f} pods per CPU second){verify}; "
        f"peak {result['peakMemoryMiB']:.0f} MiB; load average {result['loadAverage']}{_against(result)}"
    )


def _against(result: Mapping[str, Any]) -> str:
    """The upstream threshold the figure is compared with, when the workload has one."""
    threshold = result.get("threshold")
    upstream = result.get("upstream", "")
    if threshold is None:
        return f"; upstream {upstream} (no threshold)" if upstream else ""
    w = WORKLOADS.get(str(result["workload"]))
    if w is not None and (result["nodes"], result["initPods"], result["pods"]) != (
        w.nodes,
        w.init_pods * len(w.init),
        w.pods,
    ):
        return f"; upstream {upstream} threshold {threshold} pods/s (at its own sizes, not these)"
    verdict = "met" if result["podsPerSecond"] >= threshold else "below"
    return f"; upstream {upstream} threshold {threshold} pods/s: {verdict}"
