"""DefaultPreemption (PostFilter): when no node fits, find the node where evicting the fewest/least important
lower-priority pods makes room, evict them and nominate that node (upstream ``plugins/defaultpreemption`` and
``framework/preemption``).

Why: priorities only mean something if a high-priority pod can displace lower-priority ones; the FailedScheduling
message of every unschedulable pod also carries this plugin's verdict (``preemption: 0/N nodes are available: ...``).

The algorithm, as kube-scheduler 1.35 runs it:

1. Eligibility: ``preemptionPolicy: Never`` -> ``not eligible due to preemptionPolicy=Never.``; a pod whose
   nominated node still hosts a lower-priority pod terminating because of preemption waits
   (``not eligible due to a terminating pod on the nominated node.``).
2. Candidates: only nodes whose Filter status was Unschedulable (Unresolvable nodes cannot be helped). Starting at
   a random offset, each node is dry-run on a copy: remove every lower-priority pod (PreFilter extensions
   updated), run the Filter plugins; if the pod fits, reprieve victims one by one -- PDB-violating ones first, each
   group from the most important (higher priority, then earlier start) -- keeping a victim only if the pod no
   longer fits with it back. Stop once ``max(N * minCandidateNodesPercentage / 100, minCandidateNodesAbsolute)``
   (capped at N) candidates are found and at least one violates no PDB.
3. No candidate -> ``preemption: 0/N nodes are available: <histogram>.`` where dry-run failures carry their
   reasons (``No preemption victims found for incoming pod`` or the Filter reasons) and every other node
   ``Preemption is not helpful for scheduling``.
4. Choose: fewest PDB violations, lowest highest-victim priority, smallest priority sum, fewest victims, latest
   start among the highest-priority victims, then the first in candidate order (upstream: map order).
5. Evict the victims and nominate the node (``PostFilterResult.nominated_node_name``).

What the scheduler offers through the handle (:class:`~berth.schedule.framework.interface.PreemptionHandle`):
``snapshot()``, ``run_filter_with_nominated_pods(state, pod, node)`` (upstream
``RunFilterPluginsWithNominatedPods``: the Filter plugins with the pods nominated to that node of equal or higher
priority counted in), the PreFilter plugins' extensions (``run_pre_filter_extension_add_pod/remove_pod``), the
object lister for PodDisruptionBudgets (``handle.objects``), ``rng`` (a seeded ``random.Random`` for the offset),
and ``evict(victim, preemptor, node_name) -> Status`` to delete a victim -- in simulation the victim leaves the cache (and its controller's replacement is
queued); live, the binder adds the ``DisruptionTarget`` condition, deletes the pod and records a ``Preempted``
event. A handle whose ``evict`` is None makes ``post_filter`` fail with an Error rather than pretend.

Eviction is synchronous (upstream's ``SchedulerAsyncPreemption`` sends the same API calls from a goroutine): the
preemptor fails this cycle with the plain FitError message (no preemption part -- preemption succeeded), is
nominated to the node, and is retried once the victims' deletions arrive, trying its nominated node first.
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from berth.schedule.framework import interface as fw
from berth.schedule.framework import listers
from berth.schedule.framework.extender import ExtenderError, Victims
from berth.schedule.framework.types import NodeInfo, PodInfo
from berth.schedule.plugins import helper

NAME = "DefaultPreemption"
ARGS_KIND = "DefaultPreemptionArgs"
REASON_NOT_HELPFUL = "Preemption is not helpful for scheduling"
REASON_NO_VICTIMS = "No preemption victims found for incoming pod"
MSG_POLICY_NEVER = "not eligible due to preemptionPolicy=Never."
MSG_TERMINATING_ON_NOMINATED = "not eligible due to a terminating pod on the nominated node."
MSG_NO_CANDIDATE = "no candidate node for preemption"
MSG_PREEMPTION_RUNNING = "waiting for the preemption for this pod to be finished"
MSG_NO_EVICTION = (
    "DefaultPreemption cannot run: this scheduler's binder cannot evict pods (handle.evict is missing); "
    "give the binder an evict method or disable DefaultPreemption in the profile"
)
MAX_INT32 = 2**31 - 1


@dataclass(frozen=True)
class DefaultPreemptionArgs:
    min_candidate_nodes_percentage: int = 10
    min_candidate_nodes_absolute: int = 100

    @classmethod
    def decode(cls, raw: Mapping[str, Any] | None, path: str) -> tuple[DefaultPreemptionArgs, list[str]]:
        problems: list[str] = []
        r = helper.ArgsReader(raw, path, problems, ARGS_KIND)
        pct = r.get_int("minCandidateNodesPercentage", 10)
        absolute = r.get_int("minCandidateNodesAbsolute", 100)
        r.finish()
        pct_path, abs_path = r.at("minCandidateNodesPercentage"), r.at("minCandidateNodesAbsolute")
        if not 0 <= pct <= 100:
            problems.append(helper.invalid(pct_path, pct, "not in valid range [0, 100]"))
        if absolute < 0:
            problems.append(helper.invalid(abs_path, absolute, "not in valid range [0, inf)"))
        if pct == 0 and absolute == 0:
            problems.append(
                helper.invalid(pct_path, pct, "cannot be zero at the same time as minCandidateNodesAbsolute")
            )
            problems.append(
                helper.invalid(
                    abs_path, absolute, "cannot be zero at the same time as minCandidateNodesPercentage"
                )
            )
        return cls(pct, absolute), problems

    def to_dict(self) -> dict[str, Any]:
        return {
            "minCandidateNodesPercentage": self.min_candidate_nodes_percentage,
            "minCandidateNodesAbsolute": self.min_candidate_nodes_absolute,
        }


# --- pod facts -----------------------------------------------------------------------------------------------------


def _start_time(pod: PodInfo) -> float:
    """``status.startTime`` as seconds; a pod that has not started counts as starting now (latest)."""
    raw = (pod.pod.get("status") or {}).get("startTime")
    return _parse_time(raw) if isinstance(raw, str) else math.inf


@functools.lru_cache(maxsize=4096)
def _parse_time(raw: str) -> float:
    """Cached: the dry run sorts the same victims on every node it tries."""
    try:
        return datetime.fromisoformat(raw.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return math.inf


def more_important(a: PodInfo, b: PodInfo) -> bool:
    """Upstream ``MoreImportantPod``: higher priority, then the earlier start."""
    if a.priority != b.priority:
        return a.priority > b.priority
    return _start_time(a) < _start_time(b)


def _importance_key(p: PodInfo) -> tuple[int, float]:
    return (-p.priority, _start_time(p))


def _terminating_by_preemption(p: PodInfo) -> bool:
    if not p.terminating:
        return False
    for cond in (p.pod.get("status") or {}).get("conditions") or ():
        if (
            isinstance(cond, Mapping)
            and cond.get("type") == "DisruptionTarget"
            and cond.get("reason") == "PreemptionByScheduler"
            and cond.get("status") == "True"
        ):
            return True
    return False


# --- PodDisruptionBudgets ------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Budget:
    namespace: str
    selector: Any  # selectors.Selector; None/empty match nothing
    allowed: int
    disrupted: frozenset[str]


def budgets(handle: Any) -> list[Budget]:
    out: list[Budget] = []
    for pdb in listers.list_objects(handle, "PodDisruptionBudget", None):
        meta = pdb.get("metadata") or {}
        sel, err = helper.label_selector_as_selector((pdb.get("spec") or {}).get("selector"))
        status = pdb.get("status") or {}
        try:
            allowed = int(status.get("disruptionsAllowed") or 0)
        except (TypeError, ValueError):
            allowed = 0
        out.append(
            Budget(
                str(meta.get("namespace") or "default"),
                None if err else sel,
                allowed,
                frozenset(str(k) for k in (status.get("disruptedPods") or {})),
            )
        )
    return out


def split_by_pdb_violation(
    pods: Sequence[PodInfo], pdbs: Sequence[Budget]
) -> tuple[list[PodInfo], list[PodInfo]]:
    """Upstream ``filterPodsWithPDBViolation``: (violating, non-violating), order kept; budgets are consumed in
    order, a pod already in a budget's ``disruptedPods`` does not consume it."""
    allowed = [b.allowed for b in pdbs]
    violating: list[PodInfo] = []
    fine: list[PodInfo] = []
    for p in pods:
        violated = False
        if p.labels:
            for i, b in enumerate(pdbs):
                if b.namespace != p.namespace or b.selector is None or b.selector.empty:
                    continue
                if not b.selector.matches(p.labels) or p.name in b.disrupted:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else fine).append(p)
    return violating, fine


# --- candidates ----------------------------------------------------------------------------------------------------


@dataclass(slots=True)
class Candidate:
    node: str
    victims: list[PodInfo]  # most important first
    pdb_violations: int = 0


@dataclass(slots=True)
class DryRun:
    candidates: list[Candidate] = field(default_factory=list)
    statuses: dict[str, fw.Status] = field(default_factory=dict)  # nodes tried without success


def fit_error(num_nodes: int, statuses: Mapping[str, fw.Status], absent_reason: str) -> str:
    """``0/N nodes are available: <histogram>.`` counting reasons; nodes without a status get ``absent_reason``."""
    counts: dict[str, int] = {}
    for st in statuses.values():
        for reason in st.reasons:
            counts[reason] = counts.get(reason, 0) + 1
    absent = num_nodes - len(statuses)
    if absent > 0:
        counts[absent_reason] = counts.get(absent_reason, 0) + absent
    histogram = ", ".join(sorted(f"{n} {reason}" for reason, n in counts.items()))
    return f"0/{num_nodes} nodes are available: {histogram}."


def pick_one(candidates: Sequence[Candidate]) -> Candidate | None:
    """Upstream ``pickOneNodeForPreemption``: each criterion keeps the best-scoring candidates until one is left."""
    if not candidates:
        return None

    def earliest_top_start(c: Candidate) -> float:
        top = c.victims[0].priority
        return min(_start_time(v) for v in c.victims if v.priority == top)

    criteria = (
        lambda c: -c.pdb_violations,
        lambda c: -c.victims[0].priority,
        lambda c: -sum(v.priority + MAX_INT32 + 1 for v in c.victims),
        lambda c: -len(c.victims),
        earliest_top_start,
    )
    remaining = list(candidates)
    for score in criteria:
        best = max(score(c) for c in remaining)
        remaining = [c for c in remaining if score(c) == best]
        if len(remaining) == 1:
            break
    return remaining[0]


class DefaultPreemption(fw.PreEnqueuePlugin, fw.PostFilterPlugin):
    NAME = NAME
    args: DefaultPreemptionArgs

    handle: fw.PreemptionHandle

    def __init__(self, args: DefaultPreemptionArgs | None, handle: fw.PreemptionHandle) -> None:
        super().__init__(args or DefaultPreemptionArgs(), handle)

    # --- handle services ---------------------------------------------------------------------------------------

    def _rng(self) -> random.Random:
        return self.handle.rng

    def _extensions_live(self, state: fw.CycleState) -> bool:
        """Would any PreFilter extension run for this pod? When none would, the dry run shares ``state`` across
        nodes instead of cloning it and skips the calls (all no-ops)."""
        return self.handle.extensions_live(state)

    def _filter_for(self, pod: PodInfo, node_name: str) -> Any:
        """The Filter run to use on ``node_name`` during the dry run: the plain one where no pod of equal or higher
        priority is nominated (the handle's ``promised_pods`` says so), else the one counting nominated pods in."""
        if not self.handle.promised_pods(pod, node_name):
            return self.handle.run_filter
        return self.handle.run_filter_with_nominated_pods

    def _run_filter(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo) -> fw.Status:
        return self.handle.run_filter_with_nominated_pods(state, pod, node)

    def _run_extension(
        self, state: fw.CycleState, pod: PodInfo, other: PodInfo, node: NodeInfo, add: bool
    ) -> fw.Status:
        if add:
            return self.handle.run_pre_filter_extension_add_pod(state, pod, other, node)
        return self.handle.run_pre_filter_extension_remove_pod(state, pod, other, node)

    # --- the algorithm -----------------------------------------------------------------------------------------

    def eligible(
        self, pod: PodInfo, statuses: Mapping[str, fw.Status], nodes: Sequence[NodeInfo]
    ) -> str | None:
        """None when the pod may preempt, else upstream's reason (``PodEligibleToPreemptOthers``)."""
        if (pod.pod.get("spec") or {}).get("preemptionPolicy") == "Never":
            return MSG_POLICY_NEVER
        nominated = str((pod.pod.get("status") or {}).get("nominatedNodeName") or "")
        if nominated:
            st = statuses.get(nominated)
            if st is not None and st.code is fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return None
            for n in nodes:
                if n.name == nominated:
                    if any(p.priority < pod.priority and _terminating_by_preemption(p) for p in n.pods):
                        return MSG_TERMINATING_ON_NOMINATED
                    break
        return None

    def num_candidates(self, num_nodes: int) -> int:
        n = num_nodes * self.args.min_candidate_nodes_percentage // 100
        n = max(n, self.args.min_candidate_nodes_absolute)
        return min(n, num_nodes)

    def select_victims(
        self,
        state: fw.CycleState,
        pod: PodInfo,
        node: NodeInfo,
        pdbs: Sequence[Budget],
        extensions: bool = True,
    ) -> tuple[list[PodInfo], int, fw.Status]:
        """Upstream ``SelectVictimsOnNode`` on ``node`` (a copy) and ``state`` (a copy; with ``extensions`` False
        -- no PreFilter extension would run -- it may be shared, as Filter does not write it)."""
        potential = [p for p in node.pods if p.priority < pod.priority]
        if not potential:
            return [], 0, fw.unresolvable(REASON_NO_VICTIMS)
        for p in potential:
            node.remove_pod(p.key)
            if extensions:
                st = self._run_extension(state, pod, p, node, add=False)
                if not st.is_success:
                    return [], 0, fw.error(st.message())
        run_filter = self._filter_for(pod, node.name)
        st = run_filter(state, pod, node)
        if not st.is_success:
            return [], 0, st
        potential.sort(key=_importance_key)
        violating, fine = split_by_pdb_violation(potential, pdbs)
        victims: list[PodInfo] = []
        violations = 0
        for group, counts in ((violating, True), (fine, False)):
            for p in group:
                node.add_pod(p)
                if extensions:
                    st = self._run_extension(state, pod, p, node, add=True)
                    if not st.is_success:
                        return [], 0, fw.error(st.message())
                if run_filter(state, pod, node).is_success:
                    continue
                node.remove_pod(p.key)
                if extensions:
                    st = self._run_extension(state, pod, p, node, add=False)
                    if not st.is_success:
                        return [], 0, fw.error(st.message())
                victims.append(p)
                violations += 1 if counts else 0
        if violating and fine:
            victims.sort(key=_importance_key)
        return victims, violations, fw.SUCCESS

    def dry_run(
        self, state: fw.CycleState, pod: PodInfo, potential: Sequence[NodeInfo], pdbs: Sequence[Budget]
    ) -> DryRun:
        out = DryRun()
        if not potential:
            return out
        offset = self._rng().randrange(len(potential))
        wanted = self.num_candidates(len(potential))
        fine: list[Candidate] = []
        violating: list[Candidate] = []
        extensions = self._extensions_live(state)
        for i in range(len(potential)):
            node = potential[(offset + i) % len(potential)]
            if not any(p.priority < pod.priority for p in node.pods):  # nothing to evict: no copies needed
                out.statuses[node.name] = fw.unresolvable(REASON_NO_VICTIMS)
                continue
            victims, violations, st = self.select_victims(
                state.clone() if extensions else state, pod, node.clone(), pdbs, extensions
            )
            if st.is_success and victims:
                (violating if violations else fine).append(Candidate(node.name, victims, violations))
                if fine and len(fine) + len(violating) >= wanted:
                    break
                continue
            if st.is_success:
                st = fw.error(f'expected at least one victim pod on node "{node.name}"')
            out.statuses[node.name] = st
        out.candidates = fine + violating
        return out

    def preempt(
        self, state: fw.CycleState, pod: PodInfo, statuses: Mapping[str, fw.Status]
    ) -> tuple[fw.PostFilterResult | None, fw.Status]:
        all_nodes: Sequence[NodeInfo] = self.handle.snapshot().node_infos()
        reason = self.eligible(pod, statuses, all_nodes)
        if reason is not None:
            return None, fw.unschedulable(reason)
        potential = [
            n
            for n in all_nodes
            if (st := statuses.get(n.name)) is not None and st.code is fw.Code.UNSCHEDULABLE
        ]
        run = self.dry_run(state, pod, potential, budgets(self.handle))
        if not run.candidates:
            errors = [st for st in run.statuses.values() if st.code is fw.Code.ERROR]
            if errors:
                return None, errors[0]
            message = fit_error(len(all_nodes), run.statuses, REASON_NOT_HELPFUL)
            return fw.PostFilterResult(""), fw.unschedulable(message)
        candidates, status = self.call_extenders(pod, run.candidates, all_nodes)
        if not status.is_success:
            return None, status
        best = pick_one(candidates)
        if best is None:
            return None, fw.unschedulable(MSG_NO_CANDIDATE)
        evict = self.handle.evict
        evict_victims = self.handle.evict_victims
        to_delete: list[PodInfo] = []
        for victim in best.victims:
            # Upstream preemptPod: a victim held at Permit is rejected ("preempted"), not deleted.
            held = self.handle.get_waiting_pod(victim.uid)
            if held is not None:
                held.reject(self.NAME, "preempted")
                continue
            to_delete.append(victim)
        if evict_victims is not None:  # the scheduler's: perhaps in the background (asynchronous preemption)
            st = evict_victims(to_delete, pod, best.node)
            if not st.is_success:
                return None, fw.error(f"preempting on node {best.node}: {st.message()}")
        elif evict is not None:
            for victim in to_delete:
                st = evict(victim, pod, best.node)
                if not st.is_success:
                    return None, fw.error(f"preempting {victim.key}: {st.message()}")
        return fw.PostFilterResult(best.node), fw.SUCCESS

    def pre_enqueue(self, pod: PodInfo) -> fw.Status:
        """Upstream PreEnqueue (``SchedulerAsyncPreemption``): a pod whose evictions are still going out waits
        outside the queue, so it does not preempt again before they land."""
        if self.handle.is_pod_running_preemption(pod.uid):
            return fw.unresolvable(MSG_PREEMPTION_RUNNING)
        return fw.SUCCESS

    def events_to_register(self) -> Sequence[fw.ClusterEventWithHint]:
        """A pod gated at PreEnqueue is looked at again when an assigned pod is deleted: a victim's deletion
        event may come after its preemption stopped running (upstream registers AssignedPod/Delete)."""
        return (fw.ClusterEventWithHint(fw.ClusterEvent("Pod", "Delete")),)

    def call_extenders(
        self, pod: PodInfo, candidates: list[Candidate], all_nodes: Sequence[NodeInfo]
    ) -> tuple[list[Candidate], fw.Status]:
        """Upstream ``callExtenders``: each interested extender with a preempt verb may drop candidate nodes or change
        their victims; an empty victim list is an error (ignorable extenders: the node is dropped)."""
        found = tuple(self.handle.extenders())
        if not found or not candidates:
            return candidates, fw.SUCCESS
        victims = {c.node: Victims(tuple(c.victims), c.pdb_violations) for c in candidates}
        nodes = {n.name: n for n in all_nodes}
        for ext in found:
            if not ext.supports_preemption or not ext.is_interested(pod):
                continue
            try:
                answer: dict[str, Victims] = ext.process_preemption(pod, victims, nodes)
            except ExtenderError as exc:
                if ext.ignorable:
                    continue
                return [], fw.error(str(exc))
            for node_name in list(answer):
                if not answer[node_name].pods:
                    if ext.ignorable:
                        del answer[node_name]
                        continue
                    return [], fw.error(f'expected at least one victim pod on node "{node_name}"')
            victims = answer
            if not victims:
                break
        order = {
            c.node: i for i, c in enumerate(candidates)
        }  # upstream rebuilds from a map: order is arbitrary
        kept = sorted(victims, key=lambda name: order.get(name, len(order)))
        return [Candidate(n, list(victims[n].pods), victims[n].num_pdb_violations) for n in kept], fw.SUCCESS

    def post_filter(
        self, state: fw.CycleState, pod: PodInfo, statuses: Mapping[str, fw.Status]
    ) -> tuple[fw.PostFilterResult | None, fw.Status]:
        if self.handle.evict is None:
            return None, fw.error(MSG_NO_EVICTION)
        result, status = self.preempt(state, pod, statuses)
        if status.reasons:
            status = fw.Status(status.code, ("preemption: " + status.message(),), status.plugin)
        return result, status


SPEC = fw.PluginSpec(
    name=NAME,
    plugin_class=DefaultPreemption,
    args_type=DefaultPreemptionArgs,
    # Live mode: victims are listed from the pod informer, PDBs from their own; eviction patches the victim's
    # DisruptionTarget condition (pods/status) and deletes it. Priorities come resolved in spec.priority.
    api_access=("pods", "nodes", "poddisruptionbudgets", "pods/status", "delete:pods"),
)
