"""One pod's scheduling and binding cycle (upstream ``schedule_one.go``), read top-down from
:meth:`SchedulingCycle.schedule_one`: pop, PreFilter, Filter (:mod:`berth.schedule.find_nodes`), PostFilter, Score,
select, assume, Reserve, Permit, then the binding cycle -- PreBind, Bind, PostBind -- and on any failure after
assume the one way back (:meth:`SchedulingCycle._binding_failed`): Unreserve with the cycle's state, forget, requeue.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from berth.kube.objects import Obj
from berth.schedule import explain, extender
from berth.schedule.eventhandlers import ASSIGNED_POD_DELETE
from berth.schedule.find_nodes import FeasibleNodes
from berth.schedule.framework.interface import SUCCESS, Code, CycleState, Status
from berth.schedule.framework.runtime import Framework
from berth.schedule.framework.types import NodeInfo, PodInfo, QueuedPodInfo
from berth.schedule.outcome import (
    NO_NODES_AVAILABLE,
    CycleOutcome,
    Diagnosis,
    Failure,
    FailureReason,
    Ignored,
    Placement,
    Result,
    diagnosis_for,
    fit_error_message,
)
from berth.schedule.scheduler_state import HeldBinding, _locked


class SchedulingCycle(FeasibleNodes):
    """The Scheduler's cycle: one pod from the queue to a binding or a failure."""

    if TYPE_CHECKING:

        def _observe_bound(self, pod: PodInfo) -> None: ...

    def schedule_one(self) -> CycleOutcome | None:
        """One step: finish the binding cycle of a pod held at Permit that was allowed or rejected (or whose wait
        ran out), else pop one pod and run its scheduling + binding cycle. None when there is nothing to do."""
        outcome = self._finish_held() if self._held else None
        if outcome is None:
            qp = self.queue.pop()
            if qp is None:
                return None
            outcome = self._cycle(qp)
        self._report(outcome)
        return outcome

    def _report_attempt(self, outcome: CycleOutcome) -> None:
        if outcome.result is not Result.WAITING:
            self.attempts[(outcome.scheduler_name, outcome.result)] += 1

    def _report(self, outcome: CycleOutcome) -> None:
        self._report_attempt(outcome)
        if self.explainer is not None:
            trace, self._trace = self._trace, None
            if trace is not None and trace.pod == outcome.pod:
                self.explainer.finish(trace, outcome, self.preempted)
            elif self.explainer.wants(outcome.pod):
                self.explainer.settle(outcome)  # a pod held at Permit finished its binding cycle
        if self.on_outcome is not None:
            self.on_outcome(outcome)

    def next_wakeup(self) -> float | None:
        """The clock time of the next thing due without any event: a backoff ending or a Permit wait running
        out (None: nothing is due)."""
        times = [
            t for t in (self.queue.next_backoff_expiry(), self.waiting_pods.next_deadline()) if t is not None
        ]
        return min(times) if times else None

    @_locked
    def _finish_held(self) -> CycleOutcome | None:
        """Upstream's binding goroutine after ``WaitOnPermit`` returns: bind an allowed pod; un-reserve, forget and
        re-queue a rejected one (its FitError names the one node it was held on)."""
        if not self._held:
            return None
        self.waiting_pods.expire()
        decided = next((w for w in self.waiting_pods.decided() if w.pod.uid in self._held), None)
        if decided is None:
            return None
        held = self._held.pop(decided.pod.uid)
        self.waiting_pods.remove(decided.pod.uid)
        status = decided.decision or SUCCESS
        if status.is_success:
            return self._binding_cycle(held)
        pod = held.assumed
        held.fw.run_unreserve(held.state, pod, held.host)
        self.cache.forget_pod(pod)
        # Upstream's FitError for one node: UnschedulablePlugins is the rejecting plugin, even "" (a removal).
        diagnosis = Diagnosis(node_to_status={held.host: status}, unschedulable_plugins={status.plugin})
        failure = Status(status.code, (fit_error_message(1, diagnosis),), status.plugin)
        outcome = self._fail(held.qp, failure, diagnosis, held=True)
        # Its room is free again (upstream: an AssignedPodDelete event, not for the rejected pod itself).
        self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, exclude=pod.key, old=pod.pod)
        return outcome

    @_locked
    def _cycle(self, qp: QueuedPodInfo) -> CycleOutcome:
        pod = qp.pod_info
        if self.explainer is not None:
            self._trace = self.explainer.start(pod.key, pod.scheduler_name, len(self.preempted))
        fw = self.frameworks.get(pod.scheduler_name)
        if fw is None:
            # Upstream logs `profile not found for scheduler name "<name>"` and drops the pod.
            self.queue.done(pod.key)
            self.ignored[pod.key] = Ignored(pod.key, pod.scheduler_name)
            return CycleOutcome(
                pod.key,
                pod.scheduler_name,
                Result.SKIPPED,
                message=f'profile not found for scheduler name "{pod.scheduler_name}"',
            )
        if pod.terminating or self.cache.is_assumed(pod.key):
            self.queue.done(pod.key)
            return CycleOutcome(
                pod.key, pod.scheduler_name, Result.SKIPPED, message=f"skip schedule deleting pod: {pod.key}"
            )
        self.cache.update_snapshot(self._snapshot)
        state = CycleState()
        host, failure, diagnosis = self._schedule_pod(fw, state, pod)
        if failure is not None:
            return self._fail(qp, failure, diagnosis)

        # Assume, Reserve, Permit.
        assumed = pod.with_node(host)
        self.cache.assume_pod(assumed)
        status = fw.run_reserve(state, assumed, host)
        if not status.is_success:
            fw.run_unreserve(state, assumed, host)
            self.cache.forget_pod(assumed)
            return self._fail(qp, status, diagnosis_for(status))
        status, _wait = fw.run_permit(state, assumed, host)
        if status.code is Code.WAIT:
            # Held, reserved on its node, until allowed, rejected or timed out (_finish_held binds it then).
            self._held[assumed.uid] = HeldBinding(qp, fw, state, assumed, host)
            return CycleOutcome(
                pod.key, pod.scheduler_name, Result.WAITING, node=host, message=status.message()
            )
        if not status.is_success:
            fw.run_unreserve(state, assumed, host)
            self.cache.forget_pod(assumed)
            return self._fail(qp, status, diagnosis_for(status))
        return self._binding_cycle(HeldBinding(qp, fw, state, assumed, host))

    def _binding_cycle(self, held: HeldBinding) -> CycleOutcome:
        """PreBind, Bind, FinishBinding, PostBind (synchronous here; upstream runs it in a goroutine)."""
        qp, fw, state, assumed, host = held.qp, held.fw, held.state, held.assumed, held.host
        pod = qp.pod_info
        self.queue.done(pod.key)
        status = fw.run_pre_bind(state, assumed, host)
        if status.is_success:
            bound = self._extenders_bind(assumed, host)
            status = bound if bound is not None else fw.run_bind(state, assumed, host)
            if status.code is Code.SKIP:
                status = Status(Code.ERROR, ("no bind plugin bound the pod (all returned Skip)",))
        if not status.is_success:
            return self._binding_failed(held, status)
        self.cache.finish_binding(assumed)
        fw.run_post_bind(state, assumed, host)
        self.placements.append(Placement(pod.key, pod.scheduler_name, host))
        self.failures.pop(pod.key, None)
        self._pending_pods.pop(pod.key, None)
        if self.binder.echoes_bindings:
            self._observe_bound(assumed)
        else:  # until the informer shows it bound: a binding that fails later needs the cycle's state
            self._in_flight[pod.key] = held
        return CycleOutcome(pod.key, pod.scheduler_name, Result.SCHEDULED, node=host)

    def _binding_failed(self, held: HeldBinding, status: Status) -> CycleOutcome:
        """Upstream ``handleBindingCycleError``: un-reserve with the cycle's own state (reverse order), forget the
        assumed pod, tell the queue its room is free, and fail the pod (an Error: backoff, nomination dropped).
        The one path for a failed PreBind or Bind -- synchronous here, or later for a binding the live binder sent
        in the background (:meth:`binding_failed`)."""
        fw, state, assumed, host = held.fw, held.state, held.assumed, held.host
        fw.run_unreserve(state, assumed, host)
        self.cache.forget_pod(assumed)
        self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, old=assumed.pod)
        error = status if status.code is Code.ERROR else Status(Code.ERROR, status.reasons, status.plugin)
        return self._fail(held.qp, error, Diagnosis())

    @_locked
    def binding_failed(self, key: str, status: Status, current: Obj | None) -> CycleOutcome | None:
        """A binding the binder accepted (``SUCCESS``) and sent in the background failed after all (live mode).
        ``current``: the pod as the informer now has it (None: deleted). Runs :meth:`_binding_failed` with the
        cycle's own state; the pod is pending again (after a backoff) unless it was deleted or bound meanwhile.
        None when the binding cycle is unknown or already settled (the bound pod was observed, or removed)."""
        held = self._in_flight.pop(key, None)
        if held is None or not self.cache.is_assumed(key):
            return None
        if current is not None and not (current.get("spec") or {}).get("nodeName"):
            held.qp.pod_info = PodInfo(current)
            self._pending_pods[key] = held.qp.pod_info
        outcome = self._binding_failed(held, status)
        self._report_attempt(outcome)
        return outcome

    def _schedule_pod(
        self, fw: Framework, state: CycleState, pod: PodInfo
    ) -> tuple[str, Status | None, Diagnosis]:
        """(chosen node, None, _) or ("", failure status, diagnosis). Unschedulable failures carry the FitError
        message; errors their own."""
        diagnosis = Diagnosis()
        all_nodes = self._snapshot.node_infos()
        num_all = len(all_nodes)
        trace = self._trace  # None unless simulate --explain follows this pod
        if trace is not None:
            trace.diagnosis = diagnosis
            trace.node_names = tuple(n.name for n in all_nodes)
        if num_all == 0:
            return "", Status(Code.ERROR, (NO_NODES_AVAILABLE,)), diagnosis

        result, status, narrowing = fw.run_pre_filter(state, pod, all_nodes)
        if trace is not None:
            trace.skipped_filter = tuple(sorted(state.skip_filter))
        if not status.is_success:
            if not status.is_rejected:
                return "", status, diagnosis
            if trace is not None:
                trace.route = explain.Route.PRE_FILTER
            diagnosis.absent_status = status
            diagnosis.pre_filter_msg = status.message()
            if status.plugin:
                diagnosis.add_plugin_status(status)
            else:
                diagnosis.unschedulable_plugins.update(narrowing)
            return "", self._post_filter(fw, state, pod, num_all, diagnosis), diagnosis

        nominated = str(((pod.pod.get("status") or {}).get("nominatedNodeName")) or "")
        if nominated:
            node = self._snapshot.get(nominated)
            if node is not None and (
                result is None or result.node_names is None or nominated in result.node_names
            ):
                st = fw.run_filter_with_nominated_pods(state, pod, node)  # upstream evaluateNominatedNode
                if st.is_success:
                    try:
                        passed = self._pass_extenders(pod, [node], diagnosis)
                    except extender.ExtenderError:
                        passed = []  # upstream logs it and looks at every node
                    if passed:
                        if trace is not None:
                            trace.route, trace.feasible = explain.Route.NOMINATED, (nominated,)
                        return nominated, None, diagnosis
                elif st.code is Code.ERROR:
                    return "", st, diagnosis

        nodes: Sequence[NodeInfo] = all_nodes
        if result is not None and result.node_names is not None:
            allowed = result.node_names
            nodes = self._snapshot.nodes_named(allowed)
            if trace is not None:
                trace.allowed = frozenset(allowed)
            diagnosis.unschedulable_plugins.update(narrowing)
            diagnosis.absent_status = Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                (f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(narrowing))}]",),
            )
        feasible, error = self._find_feasible(fw, state, pod, nodes, diagnosis)
        processed = len(feasible) + len(diagnosis.node_to_status)
        self.next_start_node_index = (self.next_start_node_index + processed) % num_all
        if error is not None:
            return "", error, diagnosis
        if self.extenders and feasible:
            try:
                feasible = self._pass_extenders(pod, feasible, diagnosis)
            except extender.ExtenderError as exc:
                return "", Status(Code.ERROR, (str(exc),)), diagnosis
        if trace is not None:
            trace.feasible = tuple(n.name for n in feasible)
        if not feasible:
            if trace is not None:
                trace.route = explain.Route.NONE_FEASIBLE
            return "", self._post_filter(fw, state, pod, num_all, diagnosis), diagnosis
        if len(feasible) == 1:
            if trace is not None:
                trace.route = explain.Route.ONLY_FEASIBLE
            return feasible[0].name, None, diagnosis

        totals: Sequence[int] | np.ndarray[Any, np.dtype[np.int64]]
        if fw.has_score_plugins or self._extenders_rank:
            status = fw.run_pre_score(state, pod, feasible)
            if not status.is_success:
                return "", status, diagnosis
            fused = self._fused_rows
            if fused is not None and fused[0] is feasible:  # rows left by the vectorised filter
                totals, status = fw.run_score_rows(state, pod, feasible, fused[1], fused[2])
            else:
                totals, status = fw.run_score(state, pod, feasible)
            if not status.is_success:
                return "", status, diagnosis
            plugin_totals = totals
            if self.extenders:
                totals = self._add_extender_scores(pod, feasible, totals)
            if trace is not None:
                self._trace_scores(trace, fw, state, pod, feasible, plugin_totals, totals)
        else:
            totals = [1] * len(feasible)
            if trace is not None:
                trace.route, trace.totals = explain.Route.UNSCORED, tuple(totals)
        return self._select_host(feasible, totals), None, diagnosis

    @staticmethod
    def _trace_scores(
        trace: explain.Trace,
        fw: Framework,
        state: CycleState,
        pod: PodInfo,
        feasible: Sequence[NodeInfo],
        plugin_totals: Sequence[int] | np.ndarray[Any, np.dtype[np.int64]],
        totals: Sequence[int] | np.ndarray[Any, np.dtype[np.int64]],
    ) -> None:
        """Record the scored route for ``simulate --explain``: the totals, and every plugin's own answers."""
        trace.route = explain.Route.SCORED
        trace.skipped_score = tuple(sorted(state.skip_score))
        trace.plugin_totals = tuple(int(t) for t in plugin_totals)
        trace.totals = tuple(int(t) for t in totals)
        breakdown, status = fw.score_breakdown(state, pod, feasible)
        trace.breakdown = tuple(breakdown)
        if not status.is_success:
            trace.breakdown_problem = f"asking the Score plugins again failed: {status.message()}"

    def _extenders_bind(self, pod: PodInfo, host: str) -> Status | None:
        """Upstream ``extendersBinding``: the first interested binder extender binds (an ignorable one that fails
        is passed over); None when no extender bound, so the bind plugins run."""
        for ext in self.extenders:
            if not ext.is_binder or not ext.is_interested(pod):
                continue
            try:
                ext.bind(pod, host)
            except extender.ExtenderError as exc:
                if ext.ignorable:
                    continue
                return Status(Code.ERROR, (str(exc),))
            return SUCCESS
        return None

    def _post_filter(
        self, fw: Framework, state: CycleState, pod: PodInfo, num_all: int, diagnosis: Diagnosis
    ) -> Status:
        diagnosis.fit_error = True
        if fw.has_post_filter_plugins:
            statuses = dict(diagnosis.node_to_status)
            if diagnosis.absent_status is not None:
                for node in self._snapshot.node_infos():
                    statuses.setdefault(node.name, diagnosis.absent_status)
            result, status = fw.run_post_filter(state, pod, statuses)
            diagnosis.post_filter_msg = status.message() if not status.is_success else ""
            if result is not None and result.nominated_node_name:
                diagnosis.nominated_node = result.nominated_node_name
                diagnosis.unnominated = self._unnominate_lower(pod, result.nominated_node_name)
            elif result is not None:
                diagnosis.clear_nomination = True
        return Status(Code.UNSCHEDULABLE, (fit_error_message(num_all, diagnosis),))

    def _fail(
        self, qp: QueuedPodInfo, status: Status, diagnosis: Diagnosis, held: bool = False
    ) -> CycleOutcome:
        """Upstream ``handleSchedulingFailure``: requeue (unschedulable or backoff) and record the message.
        ``held``: the pod was rejected while held at Permit (a gang that never completes is retried forever
        upstream; a simulation gives up on it as on errors)."""
        pod = qp.pod_info
        is_error = status.code is Code.ERROR
        if is_error:
            qp.unschedulable_plugins = set()
            qp.pending_plugins = set()
        else:
            qp.unschedulable_plugins = set(diagnosis.unschedulable_plugins)
            qp.pending_plugins = set(diagnosis.pending_plugins)
        message = status.message()
        reason = FailureReason.SCHEDULER_ERROR if is_error else FailureReason.UNSCHEDULABLE
        had = str((pod.pod.get("status") or {}).get("nominatedNodeName") or "")
        keeps = diagnosis.fit_error and not diagnosis.clear_nomination  # a PostFilter's "no change"
        clear = bool(had) and not diagnosis.nominated_node and not keeps
        if diagnosis.nominated_node or clear:
            # Remember the nomination on the pending pod (its next attempt tries that node first), or forget it.
            pod_status = {k: v for k, v in (pod.pod.get("status") or {}).items() if k != "nominatedNodeName"}
            if diagnosis.nominated_node:
                pod_status["nominatedNodeName"] = diagnosis.nominated_node
            qp.pod_info = PodInfo({**pod.pod, "status": pod_status})
            if pod.key in self._pending_pods:
                self._pending_pods[pod.key] = qp.pod_info
            if diagnosis.nominated_node:
                self.nominator.nominate(qp.pod_info, diagnosis.nominated_node)
            else:
                self.nominator.unnominate(pod.key)
        # A failure no plugin claims goes to backoff and is retried forever upstream; a simulation gives up.
        retried_blindly = held or is_error or not (qp.unschedulable_plugins or qp.pending_plugins)
        give_up = (
            retried_blindly and self.max_error_attempts is not None and qp.attempts >= self.max_error_attempts
        )
        if pod.key in self._pending_pods and not give_up:
            self.queue.add_unschedulable_if_not_present(qp)
        else:
            self.queue.done(pod.key)  # deleted or bound meanwhile, or given up by a simulation
        if pod.key in self._pending_pods:  # a pod deleted or bound meanwhile is no failure to report
            self.failures[pod.key] = Failure(pod.key, pod.scheduler_name, message, reason)
        return CycleOutcome(
            pod.key,
            pod.scheduler_name,
            Result.ERROR if is_error else Result.UNSCHEDULABLE,
            message=message,
            reason=reason,
            nominated_node=diagnosis.nominated_node,
            clear_nomination=clear,
            unnominated=tuple(diagnosis.unnominated),
        )

    @_locked
    def what_if(self, pod: Obj) -> explain.Attempt | None:
        """Where this scheduler would put the pending ``pod`` now, and why -- without doing anything: nothing is
        assumed, reserved or bound, PostFilter (preemption) does not run, the rotating start index and the
        random state are put back. None when no profile serves the pod. ``berth schedule shadow`` asks it of every
        pod another scheduler binds."""
        info = PodInfo(pod)
        fw = self.frameworks.get(info.scheduler_name)
        if fw is None:
            return None
        self.cache.update_snapshot(self._snapshot)
        start, rng_state, post_filter = self.next_start_node_index, self.rng.getstate(), fw.post_filter
        trace = explain.Trace(info.key, info.scheduler_name, len(self.preempted))
        saved, self._trace = self._trace, trace
        fw.post_filter = []
        try:
            host, failure, _diagnosis = self._schedule_pod(fw, CycleState(), info)
        finally:
            fw.post_filter = post_filter
            self._trace = saved
            self.next_start_node_index = start
            self.rng.setstate(rng_state)
            self._fused_rows = None
        if failure is None:
            outcome = CycleOutcome(info.key, info.scheduler_name, Result.SCHEDULED, node=host)
        else:
            result = Result.ERROR if failure.code is Code.ERROR else Result.UNSCHEDULABLE
            outcome = CycleOutcome(info.key, info.scheduler_name, result, message=failure.message())
        return explain.build_attempt(1, trace, outcome)

    @_locked
    def clear_nomination(self, key: str) -> None:
        """Forget the node preemption nominated for ``key`` (live mode: its binding failed in the background, and
        upstream then overrides the nomination with none)."""
        self.nominator.unnominate(key)

    def _unnominate_lower(self, pod: PodInfo, node_name: str) -> list[str]:
        """Upstream ``prepareCandidate``: pods of lower priority nominated to the node preemption chose may no
        longer fit there; their nomination is dropped so they look for room elsewhere. Returns their keys."""
        dropped = []
        for key, other in [(p.key, p) for p in self.nominator.nominated_on(node_name)]:
            if key != pod.key and other.priority < pod.priority:
                self.nominator.unnominate(key)
                dropped.append(key)
                pending = self._pending_pods.get(key)
                if pending is not None:  # its next attempt must not try the node first
                    status = {
                        k: v for k, v in (pending.pod.get("status") or {}).items() if k != "nominatedNodeName"
                    }
                    self._pending_pods[key] = PodInfo({**pending.pod, "status": status})
                    self.queue.update(self._pending_pods[key])
        return dropped
