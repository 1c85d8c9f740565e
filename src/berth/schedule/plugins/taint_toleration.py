"""TaintToleration (Filter, PreScore, Score): NoSchedule/NoExecute taints the pod does not tolerate exclude a node;
PreferNoSchedule taints it does not tolerate make a node less attractive.

Why: taints are how operators reserve nodes (control plane, GPUs, draining). Upstream
``plugins/tainttoleration/taint_toleration.go``: the filter rejects on the first untolerated hard taint
(UnschedulableAndUnresolvable, reason ``node(s) had untolerated taint(s)`` since kubernetes#134740); the raw score
counts intolerable PreferNoSchedule taints and is reverse-normalised (fewest such taints -> 100).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from berth.kube import taints
from berth.schedule import vector
from berth.schedule.framework import interface as fw
from berth.schedule.framework.columns import BoolArray, IntArray, NodeArrays, Rows, count
from berth.schedule.framework.types import NodeInfo, PodInfo
from berth.schedule.plugins import helper
from berth.schedule.vector import kernels

NAME = "TaintToleration"
ERR_REASON_UNTOLERATED = "node(s) had untolerated taint(s)"
PRE_SCORE_STATE_KEY = "PreScore" + NAME
_HARD_EFFECTS = ("NoSchedule", "NoExecute")
PREFER_NO_SCHEDULE = "PreferNoSchedule"
UNTOLERATED = fw.unresolvable(ERR_REASON_UNTOLERATED)
_VERDICTS: tuple[fw.Status, ...] = (fw.SUCCESS, UNTOLERATED)  # filter_verdicts' table


def prefer_no_schedule_tolerations(tolerations: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tolerations that can tolerate a PreferNoSchedule taint (empty effect means every effect)."""
    return [t for t in tolerations if not t.get("effect") or t.get("effect") == PREFER_NO_SCHEDULE]


def count_intolerable_prefer_no_schedule(
    node_taints: Sequence[dict[str, Any]], tolerations: Sequence[dict[str, Any]]
) -> int:
    return sum(
        1
        for t in node_taints
        if t.get("effect") == PREFER_NO_SCHEDULE and not taints.tolerated(t, tolerations)
    )


class TaintToleration(fw.FilterPlugin, fw.PreScorePlugin, fw.ScorePlugin):
    NAME = NAME

    def filter(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo) -> fw.Status:
        if not node.taints:
            return fw.SUCCESS
        if taints.first_untolerated(node.taints, pod.tolerations, _HARD_EFFECTS) is None:
            return fw.SUCCESS
        return UNTOLERATED

    def pre_score(self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> fw.Status:
        state.write(PRE_SCORE_STATE_KEY, prefer_no_schedule_tolerations(pod.tolerations))
        return fw.SUCCESS

    def score(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, fw.Status]:
        if not node.taints:
            return 0, fw.SUCCESS
        tolerations = state.get(PRE_SCORE_STATE_KEY)
        if tolerations is None:
            tolerations = prefer_no_schedule_tolerations(pod.tolerations)
        return count_intolerable_prefer_no_schedule(node.taints, tolerations), fw.SUCCESS

    def filter_nodes(self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> list[fw.Status]:
        """Filter for all ``nodes`` (the framework's batch hook). Vectorised: nodes are grouped by taint signature
        and each distinct signature is checked once against the pod's tolerations."""
        if not vector.enabled(self.handle):
            return [self.filter(state, pod, n) for n in nodes]
        arrays = vector.arrays_for(self.handle, self)
        rows = arrays.rows(nodes, state)
        sigs = arrays.taint_sig[rows]
        bad = arrays.exotic[rows].copy()
        if arrays.num_signatures > 1:
            for sig in np.unique(sigs).tolist():
                if sig and taints.first_untolerated(arrays.sig_taints[sig], pod.tolerations, _HARD_EFFECTS):
                    bad |= sigs == sig
        out = [fw.SUCCESS] * len(nodes)
        for j in np.flatnonzero(bad).tolist():
            out[j] = self.filter(state, pod, nodes[j])
        return out

    def filter_mask(
        self, state: fw.CycleState, pod: PodInfo, arrays: NodeArrays, rows: Rows
    ) -> BoolArray | bool:
        """The framework's fused Filter hook (vectorised path): one verdict per distinct taint signature among
        ``rows``; True everywhere when no node has taints."""
        bad = self._untolerated_rows(pod, arrays, rows)
        if bad is None:
            return True
        ok: BoolArray = ~bad
        return ok

    def filter_verdicts(
        self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo], arrays: NodeArrays, rows: Rows
    ) -> tuple[npt.NDArray[np.int8], Sequence[fw.Status]] | None:
        """The runtime's bulk-rejection hook: per node 0 (passes) or 1 (:data:`UNTOLERATED`, exactly
        :meth:`filter`'s answer), so a tainted node costs no Python call -- where one in five nodes is tainted,
        that was most of a cycle. Exotic rows are asked per node by the runtime, as for the mask."""
        bad = self._untolerated_rows(pod, arrays, rows)
        if bad is None:
            return np.zeros(len(nodes), np.int8), _VERDICTS
        return bad.astype(np.int8), _VERDICTS

    @staticmethod
    def _untolerated_rows(pod: PodInfo, arrays: NodeArrays, rows: Rows) -> BoolArray | None:
        """Per row whether its taints include a hard one the pod does not tolerate (None: no row has one)."""
        if arrays.num_signatures == 1:
            return None
        sigs = arrays.taint_sig[rows]
        table = np.zeros(arrays.num_signatures, np.bool_)
        for sig in np.unique(sigs).tolist():
            if sig and taints.first_untolerated(arrays.sig_taints[sig], pod.tolerations, _HARD_EFFECTS):
                table[sig] = True
        if not table.any():
            return None
        bad: BoolArray = table[sigs]
        return bad

    def score_array(
        self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo], arrays: NodeArrays, rows: Rows
    ) -> IntArray:
        """The framework's fused Score hook: intolerable PreferNoSchedule taints per node, one count per distinct
        taint signature."""
        if arrays.num_signatures == 1:
            return np.zeros(count(rows), np.int64)
        tolerations = state.get(PRE_SCORE_STATE_KEY)
        if tolerations is None:
            tolerations = prefer_no_schedule_tolerations(pod.tolerations)
        sigs = arrays.taint_sig[rows]
        table = np.zeros(arrays.num_signatures, np.int64)
        for sig in np.unique(sigs).tolist():
            if sig:
                table[sig] = count_intolerable_prefer_no_schedule(arrays.sig_taints[sig], tolerations)
        counts: IntArray = table[sigs]
        return counts

    def normalize_array(self, state: fw.CycleState, pod: PodInfo, raw: IntArray) -> IntArray | None:
        """NormalizeScore on an int64 array (the framework's fused hook); equal to :meth:`normalize_score`."""
        return kernels.default_normalize_array(raw, reverse=True)

    def score_nodes(
        self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[list[int], fw.Status]:
        """All nodes at once (the framework's batch hook); equal to :meth:`score` per node. Vectorised: one count per
        distinct taint signature, looked up per node."""
        tolerations = state.get(PRE_SCORE_STATE_KEY)
        if tolerations is None:
            tolerations = prefer_no_schedule_tolerations(pod.tolerations)
        if not vector.enabled(self.handle):
            return [self.score(state, pod, n)[0] for n in nodes], fw.SUCCESS
        arrays = vector.arrays_for(self.handle, self)
        rows = arrays.rows(nodes, state)
        if arrays.num_signatures == 1:
            counts = np.zeros(len(nodes), np.int64)
        else:
            sigs = arrays.taint_sig[rows]
            table = np.zeros(arrays.num_signatures, np.int64)
            for sig in np.unique(sigs).tolist():
                if sig:
                    table[sig] = count_intolerable_prefer_no_schedule(arrays.sig_taints[sig], tolerations)
            counts = table[sigs]
        out: list[int] = counts.tolist()
        for j in np.flatnonzero(arrays.exotic[rows]).tolist():
            out[j] = self.score(state, pod, nodes[j])[0]
        return out, fw.SUCCESS

    def normalize_score(self, state: fw.CycleState, pod: PodInfo, scores: list[fw.NodeScore]) -> fw.Status:
        helper.default_normalize_score(scores, reverse=True)
        return fw.SUCCESS

    def normalize_scores(
        self, state: fw.CycleState, pod: PodInfo, raw: list[int]
    ) -> tuple[list[int], fw.Status]:
        """NormalizeScore on a plain list (the framework's batch hook); equal to :meth:`normalize_score`."""
        out = kernels.default_normalize(raw, reverse=True) if vector.enabled(self.handle) else None
        if out is None:
            scores = [fw.NodeScore(str(i), s) for i, s in enumerate(raw)]
            status = self.normalize_score(state, pod, scores)
            return [s.score for s in scores], status
        return out, fw.SUCCESS

    # Requeueing ------------------------------------------------------------------------------------------------

    def events_to_register(self) -> Sequence[fw.ClusterEventWithHint]:
        """Upstream 1.35 (queueing hints on): nodes added or whose taints changed, and pods whose tolerations
        changed, each with a hint."""
        node_hint = self.is_schedulable_after_node_change
        return (
            fw.ClusterEventWithHint(fw.ClusterEvent("Node", "Add"), node_hint),
            fw.ClusterEventWithHint(fw.ClusterEvent("Node", "UpdateNodeTaint"), node_hint),
            fw.ClusterEventWithHint(
                fw.ClusterEvent("Pod", "UpdatePodToleration"), is_schedulable_after_pod_toleration_change
            ),
        )

    def is_schedulable_after_node_change(self, pod: PodInfo, old: Any, new: Any) -> fw.QueueingHint:
        """Upstream ``isSchedulableAfterNodeChange``: only a node that had a NoSchedule/NoExecute taint the pod
        does not tolerate (or did not exist) and now has none."""
        was_untolerated = old is None or _untolerated(old, pod) is not None
        return helper.queue_if(was_untolerated and _untolerated(new, pod) is None)


def _untolerated(node: Any, pod: PodInfo) -> taints.Taint | None:
    """The raw node's first hard taint ``pod`` does not tolerate, as Filter looks for it."""
    node_taints = (node.get("spec") or {}).get("taints") or ()
    return taints.first_untolerated(node_taints, pod.tolerations, _HARD_EFFECTS) if node_taints else None


def is_schedulable_after_pod_toleration_change(pod: PodInfo, old: Any, new: Any) -> fw.QueueingHint:
    """Upstream ``isSchedulableAfterPodTolerationChange`` (TaintToleration's): the pod's own new toleration may
    help it; another pod's never does."""
    return helper.queue_if(helper.raw_pod_uid(new) == pod.uid)


SPEC = fw.PluginSpec(name=NAME, plugin_class=TaintToleration, api_access=("nodes",))
