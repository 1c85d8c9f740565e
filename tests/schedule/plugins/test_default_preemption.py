"""DefaultPreemption: args, and the algorithm on a fake handle (real NodeResourcesFit, InterPodAffinity and
PodTopologySpread as Filter plugins): eligibility, victim selection with reprieve and PDBs, candidate choice,
upstream's messages; then end to end through the Scheduler (eviction, re-queueing by controller, nomination,
binding on the nominated node) and the simulation."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from berth.schedule.framework import interface as fw
from berth.schedule.framework.types import NodeInfo, PodInfo
from berth.schedule.plugins import default_preemption as dp
from berth.schedule.plugins import helper, inter_pod_affinity, node_resources_fit, pod_topology_spread

from .support import FakeHandle, container, node, pod

PCT = "a.minCandidateNodesPercentage"
ABS = "a.minCandidateNodesAbsolute"


@pytest.mark.parametrize(
    ("raw", "problems"),
    [
        (None, []),
        ({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 1}, []),
        ({"minCandidateNodesPercentage": 100, "minCandidateNodesAbsolute": 0}, []),
        ({"minCandidateNodesPercentage": 101}, [f"{PCT}: Invalid value: 101: not in valid range [0, 100]"]),
        ({"minCandidateNodesPercentage": -1}, [f"{PCT}: Invalid value: -1: not in valid range [0, 100]"]),
        ({"minCandidateNodesAbsolute": -1}, [f"{ABS}: Invalid value: -1: not in valid range [0, inf)"]),
        (
            {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
            [
                f"{PCT}: Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute",
                f"{ABS}: Invalid value: 0: cannot be zero at the same time as minCandidateNodesPercentage",
            ],
        ),
        ({"minCandidateNodes": 5}, ['a: unknown field "minCandidateNodes"']),
    ],
    ids=[
        "defaults",
        "pct-zero",
        "abs-zero",
        "pct-above",
        "pct-negative",
        "abs-negative",
        "both-zero",
        "unknown",
    ],
)
def test_args(raw: dict[str, Any] | None, problems: list[str]) -> None:
    assert dp.DefaultPreemptionArgs.decode(raw, "a")[1] == problems


def test_defaults() -> None:
    assert dp.DefaultPreemptionArgs.decode({}, "a")[0].to_dict() == {
        "minCandidateNodesPercentage": 10,
        "minCandidateNodesAbsolute": 100,
    }


# --- the algorithm -------------------------------------------------------------------------------------------------


class PreemptionHandle(FakeHandle):
    """What DefaultPreemption needs from the scheduler: Filter on one node, PreFilter extensions, PDBs, evict."""

    def __init__(self, nodes: Sequence[NodeInfo], objects: Sequence[Mapping[str, Any]] = ()) -> None:
        super().__init__(nodes, objects)
        self.rng = random.Random(7)
        self.evicted: list[tuple[str, str, str]] = []
        specs = (node_resources_fit.SPEC, pod_topology_spread.SPEC, inter_pod_affinity.SPEC)
        self.plugins: list[tuple[str, Any]] = []
        for spec in specs:
            args = spec.args_type.decode(None, "a")[0] if spec.args_type else None
            self.plugins.append((spec.name, spec.new(args, self)))
        self.pre_filter = [(n, p) for n, p in self.plugins if isinstance(p, fw.PreFilterPlugin)]

    def run_filter(self, state: fw.CycleState, p: PodInfo, n: NodeInfo) -> fw.Status:
        for name, plugin in self.plugins:
            if name in state.skip_filter:
                continue
            st: fw.Status = plugin.filter(state, p, n)
            if not st.is_success:
                return st.with_plugin(name)
        return fw.SUCCESS

    def run_filter_with_nominated_pods(self, state: fw.CycleState, p: PodInfo, n: NodeInfo) -> fw.Status:
        return self.run_filter(state, p, n)  # no nominator here

    def promised_pods(self, p: PodInfo, node_name: str) -> Sequence[PodInfo]:
        return ()

    def extensions_live(self, state: fw.CycleState) -> bool:
        return True

    def run_pre_filter_extension_add_pod(
        self, state: fw.CycleState, p: PodInfo, to_add: PodInfo, n: NodeInfo
    ) -> fw.Status:
        return self._extensions(state, p, to_add, n, add=True)

    def run_pre_filter_extension_remove_pod(
        self, state: fw.CycleState, p: PodInfo, to_remove: PodInfo, n: NodeInfo
    ) -> fw.Status:
        return self._extensions(state, p, to_remove, n, add=False)

    def _extensions(
        self, state: fw.CycleState, p: PodInfo, other: PodInfo, n: NodeInfo, add: bool
    ) -> fw.Status:
        for name, plugin in self.pre_filter:
            ext = None if name in state.skip_filter else plugin.pre_filter_extensions()
            if ext is None:
                continue
            st: fw.Status = ext.add_pod(state, p, other, n) if add else ext.remove_pod(state, p, other, n)
            if not st.is_success:
                return st
        return fw.SUCCESS

    @property
    def evict(self) -> fw.Evict | None:
        return self._evict_one

    @property
    def evict_victims(self) -> fw.EvictVictims | None:
        return None

    def is_pod_running_preemption(self, uid: str) -> bool:
        return False

    def _evict_one(self, victim: PodInfo, preemptor: PodInfo, node_name: str) -> fw.Status:
        self.evicted.append((victim.name, preemptor.name, node_name))
        return fw.SUCCESS

    def schedule(self, p: PodInfo) -> tuple[fw.CycleState, dict[str, fw.Status]]:
        """PreFilter + Filter on every node, as the scheduler would before calling PostFilter."""
        state = fw.CycleState()
        nodes = self.snapshot().node_infos()
        for name, plugin in self.pre_filter:
            _, st = plugin.pre_filter(state, p, nodes)
            if st.is_skip:
                state.skip_filter.add(name)
            else:
                assert st.is_success, st
        return state, {n.name: self.run_filter(state, p, n) for n in nodes}


def cpu_pod(name: str, millis: int, priority: int, **kw: Any) -> PodInfo:
    return pod(name, containers=[container({"cpu": f"{millis}m"})], priority=priority, **kw)


def cpu_node(name: str, cores: int, *pods: PodInfo, **kw: Any) -> NodeInfo:
    return node(name, allocatable={"cpu": str(cores), "memory": "8Gi", "pods": 110}, pods=pods, **kw)


def preempt(
    nodes: Sequence[NodeInfo], p: PodInfo, objects: Sequence[Mapping[str, Any]] = ()
) -> tuple[fw.PostFilterResult | None, fw.Status, PreemptionHandle]:
    handle = PreemptionHandle(nodes, objects)
    state, statuses = handle.schedule(p)
    assert not any(st.is_success for st in statuses.values()), "the pod must not fit anywhere"
    plugin = dp.SPEC.new(dp.DefaultPreemptionArgs(), handle)
    assert isinstance(plugin, dp.DefaultPreemption)
    result, status = plugin.post_filter(state, p, statuses)
    return result, status, handle


def test_chooses_node_with_lowest_priority_victims() -> None:
    nodes = [
        cpu_node("a", 1, cpu_pod("a1", 1000, 5)),
        cpu_node("b", 1, cpu_pod("b1", 500, 1), cpu_pod("b2", 500, 1)),
    ]
    result, status, handle = preempt(nodes, cpu_pod("hi", 1000, 100))
    assert status.is_success
    assert result == fw.PostFilterResult("b")
    assert sorted(v for v, _, _ in handle.evicted) == ["b1", "b2"]


def test_reprieves_the_most_important_victims_first() -> None:
    nodes = [cpu_node("a", 2, cpu_pod("big", 1000, 5), cpu_pod("s1", 500, 1), cpu_pod("s2", 500, 1))]
    result, status, handle = preempt(nodes, cpu_pod("hi", 1000, 100))
    assert status.is_success and result == fw.PostFilterResult("a")
    assert sorted(v for v, _, _ in handle.evicted) == ["s1", "s2"]


def test_prefers_nodes_without_pdb_violations() -> None:
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "guard", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "guarded"}}},
        "status": {"disruptionsAllowed": 0},
    }
    nodes = [
        cpu_node("a", 1, cpu_pod("a1", 1000, 1, labels={"app": "guarded"})),
        cpu_node("b", 1, cpu_pod("b1", 1000, 1, labels={"app": "free"})),
    ]
    result, status, handle = preempt(nodes, cpu_pod("hi", 1000, 100), [pdb])
    assert status.is_success and result == fw.PostFilterResult("b")
    assert handle.evicted == [("b1", "hi", "b")]


@pytest.mark.parametrize(
    ("nodes", "p", "message"),
    [
        pytest.param(
            [cpu_node("a", 1, cpu_pod("a1", 1000, 100)), cpu_node("b", 1, cpu_pod("b1", 1000, 100))],
            cpu_pod("hi", 1000, 100),
            "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.",
            id="equal-priority-no-victims",
        ),
        pytest.param(
            [cpu_node("a", 2, cpu_pod("vip", 1500, 200), cpu_pod("a1", 500, 1))],
            cpu_pod("hi", 1000, 100),
            "preemption: 0/1 nodes are available: 1 Insufficient cpu.",
            id="does-not-fit-even-empty",
        ),
        pytest.param(
            [cpu_node("a", 1, cpu_pod("a1", 1000, 1))],
            cpu_pod("hi", 1000, 100, spec={"preemptionPolicy": "Never"}),
            "preemption: not eligible due to preemptionPolicy=Never.",
            id="preemption-policy-never",
        ),
        pytest.param(
            [
                cpu_node("a", 1),
                cpu_node("b", 1, cpu_pod("b1", 1000, 100), labels={"zone": "z"}),
            ],
            cpu_pod(
                "hi",
                1000,
                100,
                spec={
                    "topologySpreadConstraints": [
                        {
                            "maxSkew": 1,
                            "topologyKey": "zone",
                            "whenUnsatisfiable": "DoNotSchedule",
                            "labelSelector": {"matchLabels": {"app": "x"}},
                        }
                    ]
                },
            ),
            "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, "
            "1 Preemption is not helpful for scheduling.",
            id="unresolvable-node-not-helped",
        ),
        pytest.param(
            [
                cpu_node("a", 1, cpu_pod("a1", 1000, 1)),
                cpu_node("b", 1, cpu_pod("b1", 1000, 100), labels={"zone": "z"}),
            ],
            cpu_pod(
                "hi",
                1000,
                100,
                spec={
                    "topologySpreadConstraints": [
                        {
                            "maxSkew": 1,
                            "topologyKey": "zone",
                            "whenUnsatisfiable": "DoNotSchedule",
                            "labelSelector": {"matchLabels": {"app": "x"}},
                        }
                    ]
                },
            ),
            "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, "
            "1 node(s) didn't match pod topology spread constraints (missing required label).",
            id="dry-run-reason-reported",
        ),
    ],
)
def test_unhelpful_preemption_messages(nodes: list[NodeInfo], p: PodInfo, message: str) -> None:
    _, status, handle = preempt(nodes, p)
    assert status.code is fw.Code.UNSCHEDULABLE
    assert status.message() == message
    assert handle.evicted == []


def _nominated(p: PodInfo, node_name: str) -> PodInfo:
    return PodInfo({**p.pod, "status": {"nominatedNodeName": node_name}})


def _preempted_victim(name: str) -> PodInfo:
    v = cpu_pod(name, 1000, 1, terminating=True)
    cond = {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}
    v.pod["status"] = {"conditions": [cond]}
    return v


def test_waits_while_a_victim_on_its_nominated_node_terminates() -> None:
    """Upstream PodEligibleToPreemptOthers: the earlier preemption is still taking effect; no second round."""
    nodes = [cpu_node("a", 1, _preempted_victim("going")), cpu_node("b", 1, cpu_pod("b1", 1000, 1))]
    _, status, handle = preempt(nodes, _nominated(cpu_pod("hi", 1000, 100), "a"))
    assert status.code is fw.Code.UNSCHEDULABLE
    assert status.message() == "preemption: not eligible due to a terminating pod on the nominated node."
    assert handle.evicted == []


def test_an_unresolvable_nominated_node_does_not_block_preemption_elsewhere() -> None:
    """The nominated node now rejects the pod for good (a selector): the pod may preempt on another node."""
    nodes = [
        cpu_node("a", 1, _preempted_victim("going")),
        cpu_node("b", 1, cpu_pod("b1", 1000, 1), labels={"disk": "ssd"}),
    ]
    p = _nominated(cpu_pod("hi", 1000, 100, node_selector={"disk": "ssd"}), "a")
    handle = PreemptionHandle(nodes)
    state, statuses = handle.schedule(p)
    statuses["a"] = fw.unresolvable("node(s) didn't match Pod's node affinity/selector")
    plugin = dp.SPEC.new(dp.DefaultPreemptionArgs(), handle)
    result, status = plugin.post_filter(state, p, statuses)  # type: ignore[attr-defined]
    assert status.is_success and result == fw.PostFilterResult("b")
    assert handle.evicted == [("b1", "hi", "b")]


def test_anti_affinity_victim_is_found_through_prefilter_extensions() -> None:
    """The pod refuses to share a host with app=low; evicting that lower-priority pod makes room."""
    low = cpu_pod("low", 100, 1, labels={"app": "low"})
    anti = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "low"}}, "topologyKey": "kubernetes.io/hostname"}
            ]
        }
    }
    nodes = [cpu_node("a", 4, low, labels={"kubernetes.io/hostname": "a"})]
    result, status, handle = preempt(nodes, cpu_pod("hi", 100, 100, affinity=anti))
    assert status.is_success and result == fw.PostFilterResult("a")
    assert handle.evicted == [("low", "hi", "a")]


def victim(priority: int, start: str = "2026-01-01T00:00:00Z") -> PodInfo:
    p = pod(f"v{priority}-{start[-9:-7]}", priority=priority)
    p.pod["status"] = {"startTime": start}
    return p


@pytest.mark.parametrize(
    ("candidates", "want"),
    [
        pytest.param(
            [dp.Candidate("a", [victim(1)], 1), dp.Candidate("b", [victim(9)], 0)],
            "b",
            id="fewest-pdb-violations",
        ),
        pytest.param(
            [dp.Candidate("a", [victim(5)]), dp.Candidate("b", [victim(3)])], "b", id="lowest-top-priority"
        ),
        pytest.param(
            [dp.Candidate("a", [victim(3), victim(3)]), dp.Candidate("b", [victim(3), victim(1)])],
            "b",
            id="smallest-priority-sum",
        ),
        pytest.param(
            [dp.Candidate("a", [victim(3), victim(-5)]), dp.Candidate("b", [victim(3)])],
            "b",
            id="sum-shifted-so-fewer-pods-win",
        ),
        pytest.param(
            [
                dp.Candidate("a", [victim(3, "2026-01-01T00:00:00Z")]),
                dp.Candidate("b", [victim(3, "2026-01-02T00:00:00Z")]),
            ],
            "b",
            id="latest-start",
        ),
        pytest.param([dp.Candidate("a", [victim(3)]), dp.Candidate("b", [victim(3)])], "a", id="tie-first"),
    ],
)
def test_pick_one(candidates: list[dp.Candidate], want: str) -> None:
    chosen = dp.pick_one(candidates)
    assert chosen is not None and chosen.node == want


def test_pdb_split_consumes_budgets_in_order() -> None:
    pdb = dp.Budget(
        "default",
        helper.label_selector_as_selector({"matchLabels": {"app": "x"}})[0],
        1,
        frozenset({"gone"}),
    )
    pods = [pod(n, labels={"app": "x"}) for n in ("p1", "gone", "p2")]
    violating, fine = dp.split_by_pdb_violation(pods, [pdb])
    assert [p.name for p in violating] == ["p2"]
    assert [p.name for p in fine] == ["p1", "gone"]


@pytest.mark.parametrize(("nodes", "want"), [(5, 5), (500, 100), (5000, 500)], ids=["few", "absolute", "pct"])
def test_num_candidates(nodes: int, want: int) -> None:
    plugin = dp.SPEC.new(dp.DefaultPreemptionArgs(), FakeHandle())
    assert isinstance(plugin, dp.DefaultPreemption)
    assert plugin.num_candidates(nodes) == want


class NoEvictionHandle(PreemptionHandle):
    @property
    def evict(self) -> fw.Evict | None:
        return None


def test_without_eviction_the_plugin_refuses() -> None:
    plugin = dp.SPEC.new(dp.DefaultPreemptionArgs(), NoEvictionHandle([]))
    _, status = plugin.post_filter(fw.CycleState(), pod(), {})  # type: ignore[attr-defined]
    assert status.code is fw.Code.ERROR
    assert status.message() == dp.MSG_NO_EVICTION
    assert dp.SPEC.active


def test_spec_declares_what_live_preemption_sends() -> None:
    """berth schedule rbac computes the role from these: victims deleted, DisruptionTarget patched, PDBs watched."""
    assert set(dp.SPEC.api_access) == {"pods", "nodes", "poddisruptionbudgets", "pods/status", "delete:pods"}


# --- end to end through the Scheduler --------------------------------------------------------------------------------

OWNER = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "rs-uid", "controller": True}


def _obj(name: str, cpu: str, priority: int, owned: bool = False, **spec: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "default", "labels": {}}
    if owned:
        meta["ownerReferences"] = [dict(OWNER)]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {
            "containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu}}}],
            "priority": priority,
            **spec,
        },
    }


def _node(i: int, cpu: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": f"n{i}", "labels": {"kubernetes.io/hostname": f"n{i}"}},
        "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}},
    }


def _scheduler(*cpus: str, default: bool = False, on_outcome: Any = None) -> Any:
    from berth.schedule.config import PluginRef, Profile, SchedulerConfiguration, default_config
    from berth.schedule.plugins.registry import default_registry
    from berth.schedule.scheduler import Scheduler

    reg = default_registry()
    if default:
        cfg = default_config(reg)
    else:
        points: dict[str, tuple[PluginRef, ...]] = {p: () for p in fw.POINT_NAMES}
        points.update(
            queueSort=(PluginRef("PrioritySort"),),
            preFilter=(PluginRef("NodeResourcesFit"),),
            filter=(PluginRef("NodeResourcesFit"),),
            postFilter=(PluginRef(dp.NAME),),
            bind=(PluginRef("DefaultBinder"),),
        )
        cfg = SchedulerConfiguration(profiles=(Profile("default-scheduler", points, {}, None),))
    s = Scheduler(cfg, reg, seed=1, on_outcome=on_outcome)
    for i, cpu in enumerate(cpus):
        s.add_node(_node(i, cpu))
    return s


def test_default_profile_runs_default_preemption() -> None:
    s = _scheduler(default=True)
    # DynamicResources comes first (upstream's default order): it answers "no new claims to deallocate".
    assert [name for name, _ in s.frameworks["default-scheduler"].post_filter] == [
        "DynamicResources",
        dp.NAME,
    ]


@pytest.mark.parametrize("default", [False, True], ids=["minimal-profile", "default-profile"])
def test_scheduler_preempts_nominates_and_binds_on_the_nominated_node(default: bool) -> None:
    from berth.schedule.scheduler import Result

    seen: list[Any] = []
    s = _scheduler("1", "1", default=default, on_outcome=seen.append)
    s.add_pod(_obj("low", "800m", 1))
    s.add_pod(_obj("mid", "800m", 50))
    s.run_until_idle()
    low_node = {p.pod: p.node for p in s.placements}["default/low"]
    s.add_pod(_obj("high", "800m", 100))
    s.run_until_idle()
    high = [o for o in seen if o.pod == "default/high"]
    # First cycle: no node fits, preemption succeeds -> the plain FitError (no preemption part), nominated node.
    assert [(o.result, o.message, o.nominated_node) for o in high] == [
        (Result.UNSCHEDULABLE, "0/2 nodes are available: 2 Insufficient cpu.", low_node),
        (Result.SCHEDULED, "", ""),
    ]
    assert high[1].node == low_node
    assert [(p.victim, p.preemptor, p.node) for p in s.preempted] == [
        ("default/low", "default/high", low_node)
    ]
    assert {p.pod: p.node for p in s.standing_placements()} == {
        "default/mid": ({"n0", "n1"} - {low_node}).pop(),
        "default/high": low_node,
    }
    assert s.unschedulable() == []  # a bare victim is gone: nothing re-creates it
    assert s.cache.get_pod("default/low") is None
    assert not s.nominator  # the nomination ends when the pod is bound


def test_a_controller_owned_victim_is_requeued_and_reports_why_it_waits() -> None:
    s = _scheduler("1", "1")
    s.add_pod(_obj("low", "800m", 1, owned=True))
    s.add_pod(_obj("mid", "800m", 50))
    s.run_until_idle()
    s.add_pod(_obj("high", "800m", 100))
    s.run_until_idle()
    assert [p.victim for p in s.preempted] == ["default/low"]
    assert [(f.pod, f.message) for f in s.unschedulable()] == [
        (
            "default/low",
            "0/2 nodes are available: 2 Insufficient cpu. "
            "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.",
        )
    ]


def test_scheduler_messages_when_preemption_cannot_help() -> None:
    s = _scheduler("1")
    s.add_pod(_obj("low", "800m", 1))
    s.run_until_idle()
    s.add_pod(_obj("big", "2", 100))
    s.add_pod(_obj("never", "800m", 100, preemptionPolicy="Never"))
    s.run_until_idle()
    messages = {f.pod: f.message for f in s.unschedulable()}
    assert messages == {
        "default/big": "0/1 nodes are available: 1 Insufficient cpu. "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
        "default/never": "0/1 nodes are available: 1 Insufficient cpu. "
        "preemption: not eligible due to preemptionPolicy=Never.",
    }
    assert s.preempted == []


def test_room_promised_to_a_nominated_pod_is_not_taken_by_an_equal_priority_pod() -> None:
    """Upstream RunFilterPluginsWithNominatedPods: a pod nominated to n0 holds its room there until it binds."""
    s = _scheduler("1")
    s.add_pod(_obj("low", "800m", 1))
    s.run_until_idle()
    s.add_pod(_obj("high", "800m", 100))
    popped = s.schedule_one()  # fails, evicts "low", nominates n0
    assert popped is not None and popped.nominated_node == "n0"
    s.add_pod(_obj("rival", "800m", 100))  # same priority, queued after: must not take the promised room
    s.run_until_idle()
    assert {p.pod: p.node for p in s.standing_placements()} == {"default/high": "n0"}
    assert [f.pod for f in s.unschedulable()] == ["default/rival"]


def test_preemption_in_the_dry_run_counts_nominated_pods() -> None:
    """A second preemptor does not count on room already promised to the first one's nomination."""
    s = _scheduler("2")
    for name in ("l1", "l2"):
        s.add_pod(_obj(name, "1", 1))
    s.run_until_idle()
    s.add_pod(_obj("a", "1", 100))
    first = s.schedule_one()
    assert first is not None and first.nominated_node == "n0"
    assert len(s.preempted) == 1  # one low pod makes room for "a"
    s.add_pod(_obj("b", "1", 100))
    second = s.schedule_one()
    # With "a" promised 1 cpu on n0, "b" needs the other low pod gone too: a second victim, the same node.
    assert second is not None and second.pod == "default/b" and second.nominated_node == "n0"
    assert len(s.preempted) == 2
    s.run_until_idle()
    assert sorted(p.pod for p in s.standing_placements()) == ["default/a", "default/b"]


def test_simulation_reports_victims_and_standing_placements(tmp_path: Any) -> None:
    from berth.kube import yamlio
    from berth.schedule.config import default_config
    from berth.schedule.simulate import simulate

    cluster = tmp_path / "cluster.yaml"
    workload = tmp_path / "workload.yaml"
    old = _obj("old", "800m", 1)
    old["spec"]["nodeName"] = "n0"
    cluster.write_text(yamlio.dump_all([_node(0, "1"), old]))
    workload.write_text(yamlio.dump_all([_obj("vip", "800m", 1000)]))
    result = simulate([default_config()], str(cluster), str(workload))
    assert [(p.pod, p.node) for p in result.placements] == [("default/vip", "n0")]
    assert [(p.victim, p.preemptor, p.node) for p in result.preempted] == [
        ("default/old", "default/vip", "n0")
    ]
    assert result.to_dict()["preempted"] == [{"pod": "default/old", "preemptor": "default/vip", "node": "n0"}]
    assert result.unschedulable == ()


def test_separate_binaries_see_a_victim_of_the_other_one_go(tmp_path: Any) -> None:
    """Two configurations (separate binaries): a's high-priority pod preempts b's pod; the victim leaves both
    schedulers' caches and the report shows the preemptor placed."""
    from berth.kube import yamlio
    from berth.schedule.config import parse
    from berth.schedule.simulate import simulate

    def config(name: str) -> Any:
        api = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
        return parse({**api, "profiles": [{"schedulerName": name}]})

    cluster = tmp_path / "cluster.yaml"
    workload = tmp_path / "workload.yaml"
    low = _obj("low", "800m", 1, schedulerName="b")
    low["spec"]["nodeName"] = "n0"  # running already, in both binaries' caches
    cluster.write_text(yamlio.dump_all([_node(0, "1"), low]))
    workload.write_text(yamlio.dump_all([_obj("vip", "800m", 1000, schedulerName="a")]))
    result = simulate([config("a"), config("b")], str(cluster), str(workload))
    assert [(p.victim, p.preemptor, p.node) for p in result.preempted] == [
        ("default/low", "default/vip", "n0")
    ]
    assert [(p.pod, p.scheduler_name, p.node) for p in result.placements] == [("default/vip", "a", "n0")]
    assert result.unschedulable == ()


def test_the_nominated_node_is_tried_with_the_room_promised_to_others() -> None:
    """Upstream evaluateNominatedNode filters with nominated pods: a pod whose old nomination points at a node a
    higher-priority preemptor has since been promised does not take that room."""
    seen: list[Any] = []
    s = _scheduler("2", on_outcome=seen.append)
    s.add_pod(_obj("low1", "1", 1))
    s.add_pod(_obj("low2", "1", 1))
    s.run_until_idle()
    s.add_pod(_obj("a", "1", 100))
    first = s.schedule_one()  # a evicts one low pod and is nominated to n0
    assert first is not None and (first.pod, first.nominated_node) == ("default/a", "n0")
    s.add_pod(_obj("c", "2", 200))
    second = s.schedule_one()  # c pops first (priority), evicts the other low pod, is promised all of n0
    assert second is not None and (second.pod, second.nominated_node) == ("default/c", "n0")
    # Upstream prepareCandidate: c's preemption drops a's (lower-priority) nomination to n0 at once; live mode
    # clears a's status.nominatedNodeName from this outcome, once.
    assert second.unnominated == ("default/a",)
    s.run_until_idle()
    assert {p.pod: p.node for p in s.standing_placements()} == {"default/c": "n0"}
    assert [f.pod for f in s.unschedulable()] == ["default/a"]
    # a's later attempts neither carry nor clear a nomination again.
    retries = [o for o in seen if o.pod == "default/a"][1:]
    assert retries and not any(o.clear_nomination or o.nominated_node for o in retries)
    assert not s.nominator.is_nominated("default/a")


@pytest.mark.parametrize(
    ("cpus", "spec", "cleared"),
    [
        pytest.param((), {}, True, id="error-no-nodes-clears"),
        pytest.param(("1",), {"preemptionPolicy": "Never"}, False, id="not-eligible-keeps"),
        pytest.param(("1",), {}, True, id="no-candidate-clears"),
    ],
)
def test_what_a_failure_does_to_an_existing_nomination(
    cpus: tuple[str, ...], spec: dict[str, Any], cleared: bool
) -> None:
    """Upstream: a FitError leaves the nomination to the PostFilter (nil result: keep; empty: clear); any other
    failure clears it."""
    seen: list[Any] = []
    s = _scheduler(*cpus, on_outcome=seen.append)
    s.add_pod(_obj("low", "800m", 100))
    s.run_until_idle()
    nominated = _obj("p", "800m", 100, **spec)
    nominated["status"] = {"nominatedNodeName": "n0"}
    s.add_pod(nominated)
    s.run_until_idle()
    first = next(o for o in seen if o.pod == "default/p")
    assert first.clear_nomination is cleared


@pytest.mark.parametrize("seed", range(12))
def test_filter_with_nominated_pods_vectorised_equals_per_node(seed: int) -> None:
    """Only the nodes carrying nominated pods of >= priority are filtered with them added; the rest take the
    vectorised path. Same feasible nodes in the same order, same statuses and the same rows for Score as the
    per-node scan, from any start (also when a node drops out only because of the pods promised to it)."""
    from berth.schedule import vector
    from berth.schedule.framework.interface import CycleState
    from berth.schedule.scheduler import Diagnosis

    rng = random.Random(seed)
    s = _scheduler(*(rng.choice(["1", "2", "4"]) for _ in range(14)), default=True)
    for i in range(20):
        s.add_pod(
            {
                **_obj(f"low{i}", f"{rng.choice([200, 500, 900])}m", 1),
                "spec": {
                    **_obj(f"low{i}", f"{rng.choice([200, 500, 900])}m", 1)["spec"],
                    "nodeName": f"n{rng.randrange(14)}",
                },
            }
        )
    for i in range(rng.randrange(1, 6)):
        nominee = PodInfo(_obj(f"nom{i}", f"{rng.choice([500, 1000, 1500])}m", rng.choice([1, 50, 100])))
        s.nominator.nominate(nominee, f"n{rng.randrange(14)}")
    fwk = s.frameworks["default-scheduler"]
    for trial in range(6):
        p = PodInfo(_obj(f"probe{trial}", f"{rng.choice([100, 600, 1200])}m", rng.choice([1, 50, 100])))
        s.next_start_node_index = rng.randrange(14)
        got = []
        for on in (True, False):
            vector.set_enabled(fwk, on)
            s.cache.update_snapshot(s._snapshot)
            nodes = s._snapshot.node_infos()
            state = CycleState()
            fwk.run_pre_filter(state, p, nodes)
            diagnosis = Diagnosis()
            feasible, error = s._find_feasible(fwk, state, p, nodes, diagnosis)
            assert error is None
            if on and s._fused_rows is not None:
                rows_of = s._fused_rows[1].rows(feasible)
                assert list(s._fused_rows[2]) == list(rows_of)
            got.append(([n.name for n in feasible], dict(diagnosis.node_to_status)))
        vector.set_enabled(fwk, True)
        assert got[0] == got[1]


# --- asynchronous preemption (SchedulerAsyncPreemption): the binder sends the evictions in the background -------


class _BackgroundBinder:
    """A simulation binder whose evictions are sent "later": the test decides when they answer."""

    echoes_bindings = True

    def __init__(self) -> None:
        from berth.schedule.scheduler import SimulationBinder

        self.inner = SimulationBinder()
        self.sent: list[tuple[list[PodInfo], Any]] = []

    def bind(self, pod: PodInfo, node_name: str) -> fw.Status:
        return self.inner.bind(pod, node_name)

    def evict(self, victim: PodInfo, preemptor: PodInfo, node_name: str) -> fw.Status:
        raise AssertionError("a binder with evict_async is asked for the whole candidate at once")

    def evict_async(
        self, victims: list[PodInfo], preemptor: PodInfo, node_name: str, release: Any
    ) -> fw.Status:
        self.sent.append((victims, release))
        return fw.SUCCESS


def test_a_preemptor_waits_outside_the_queue_until_its_evictions_answered() -> None:
    from berth.schedule.config import default_config
    from berth.schedule.plugins.registry import default_registry
    from berth.schedule.queue import Where
    from berth.schedule.scheduler import Result, Scheduler

    reg = default_registry()
    binder = _BackgroundBinder()
    s = Scheduler(default_config(reg), reg, binder=binder, seed=1)
    for i in range(2):
        s.add_node(_node(i, "1"))
    s.add_pod(_obj("low", "800m", 1))
    s.add_pod(_obj("mid", "800m", 50))
    s.run_until_idle()
    low_node = {p.pod: p.node for p in s.placements}["default/low"]
    s.add_pod(_obj("high", "800m", 100))
    first = s.schedule_one()
    assert first is not None and (first.result, first.nominated_node) == (Result.UNSCHEDULABLE, low_node)
    # The evictions went to the binder in one call; nothing is deleted yet, the preemptor runs preemption.
    ((victims, release),) = binder.sent
    assert [v.key for v in victims] == ["default/low"]
    high_uid = s._pending_pods["default/high"].uid
    assert s.is_pod_running_preemption(high_uid)
    assert s.frameworks["default-scheduler"].run_pre_enqueue(s._pending_pods["default/high"]) == fw.Status(
        fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (dp.MSG_PREEMPTION_RUNNING,), dp.NAME
    )
    # Room appears elsewhere meanwhile: the pod is looked at again, but PreEnqueue keeps it out of the queue.
    s.remove_pod("default/mid")
    assert s.queue.where("default/high") is Where.GATED
    assert s.schedule_one() is None
    # The evictions answer, then the victim's deletion arrives: the pod is queued again and binds where it was
    # nominated.
    release()
    assert not s.is_pod_running_preemption(high_uid)
    s.remove_pod("default/low")
    assert s.queue.where("default/high") is Where.ACTIVE
    s.run_until_idle()
    assert {p.pod: p.node for p in s.standing_placements()}["default/high"] == low_node
    assert [(p.victim, p.preemptor) for p in s.preempted] == [("default/low", "default/high")]


def test_a_background_eviction_that_cannot_be_sent_fails_the_cycle_and_releases_the_pod() -> None:
    from berth.schedule.config import default_config
    from berth.schedule.plugins.registry import default_registry
    from berth.schedule.scheduler import Result, Scheduler

    class Refusing(_BackgroundBinder):
        def evict_async(
            self, victims: list[PodInfo], preemptor: PodInfo, node_name: str, release: Any
        ) -> fw.Status:
            return fw.error("preemption: the scheduler is stopping")

    reg = default_registry()
    s = Scheduler(default_config(reg), reg, binder=Refusing(), seed=1)
    s.add_node(_node(0, "1"))
    s.add_pod(_obj("low", "800m", 1))
    s.run_until_idle()
    s.add_pod(_obj("high", "800m", 100))
    out = s.schedule_one()
    # As a synchronous eviction that fails: PostFilter's error is the FitError's preemption part.
    assert out is not None and out.result is Result.UNSCHEDULABLE
    assert out.message.endswith("preemption: preempting on node n0: preemption: the scheduler is stopping")
    assert not out.nominated_node
    assert not s.is_pod_running_preemption(s._pending_pods["default/high"].uid)
