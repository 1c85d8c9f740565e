"""Which nodes can run the pod (upstream ``findNodesThatFitPod``, ``findNodesThatPassFilters``,
``findNodesThatPassExtenders``, ``prioritizeNodes``' extender part and ``selectHost``).

Filter runs from the shared rotating start index until enough nodes pass
(:func:`~berth.schedule.percentage.num_feasible_nodes_to_find`): on the vectorised path over the profile's node
columns when it can, else plugin by plugin over chunks; where pods are nominated (preemption promised them room)
the nodes carrying them are filtered with them added, as upstream's ``RunFilterPluginsWithNominatedPods``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from berth.schedule import extender, percentage, vector
from berth.schedule.framework.interface import MAX_NODE_SCORE, SUCCESS, Code, CycleState, Status
from berth.schedule.framework.runtime import Framework
from berth.schedule.framework.types import NodeInfo, PodInfo
from berth.schedule.outcome import Diagnosis
from berth.schedule.scheduler_state import SchedulerState


class FeasibleNodes(SchedulerState):
    """The Scheduler's Filter scan, extenders' filter and prioritize, and host selection."""

    def _find_feasible(
        self, fw: Framework, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo], diagnosis: Diagnosis
    ) -> tuple[list[NodeInfo], Status | None]:
        """Filter from the rotating start until enough nodes pass (upstream ``findNodesThatPassFilters``)."""
        self._fused_rows = None
        n = len(nodes)
        if n == 0:
            return [], None
        to_find = percentage.num_feasible_nodes_to_find(
            n,
            self.config.percentage_of_nodes_to_score,
            fw.percentage_of_nodes_to_score,
            fw.has_score_plugins,
            has_extenders=self._extenders_rank,
        )
        start = self.next_start_node_index % n
        if not fw.has_filter_plugins:
            return rotated_slice(nodes, start, 0, to_find), None
        promised = self.nominator.promised_nodes(pod)
        if promised:
            if vector.enabled(fw) and nodes is self._snapshot.node_infos():
                mixed = self._find_feasible_mixed(
                    fw, state, pod, nodes, start, to_find, set(promised), diagnosis
                )
                if mixed is not None:
                    return mixed
            ordered = list(nodes[start:]) + list(nodes[:start]) if start else nodes
            return self._find_feasible_with_nominated(fw, state, pod, ordered, to_find, diagnosis)
        if vector.enabled(fw) and nodes is self._snapshot.node_infos():
            # The vectorised path: masks over rows of the node columns (same nodes examined, same verdicts).
            arrays = fw.node_arrays()
            arrays.sync(self._snapshot)
            found = fw.find_feasible_rows(state, pod, nodes, arrays, start, to_find)
            if found is not None:
                passed, rows, rejected = found
                diagnosis.add_rejections(rejected)
                self._fused_rows = (passed, arrays, rows)
                return passed, None
        filters = fw.filters_for(state)
        batch_filters = fw.batch_filters
        feasible: list[NodeInfo] = []
        statuses = diagnosis.node_to_status
        ok = Code.SUCCESS
        name = ""
        # Plugin-major over chunks of exactly as many nodes as are still needed: per node the plugins still run in
        # order and stop at the first rejection, and exactly the nodes the sequential loop would visit are
        # visited -- but each plugin runs in a tight comprehension (Filter plugins are side-effect free; upstream
        # runs them in parallel).
        pos = 0
        try:
            while pos < n and len(feasible) < to_find:
                want = to_find - len(feasible)
                chunk = rotated_slice(nodes, start, pos, want)  # no copy of the whole rotated list
                pos += len(chunk)
                for name, fn in filters:
                    batch = batch_filters.get(name)
                    if batch is not None:
                        results = list(batch(state, pod, chunk))
                    else:
                        results = [fn(state, pod, node) for node in chunk]
                    if results.count(SUCCESS) == len(results):
                        continue
                    keep = []
                    for node, status in zip(chunk, results, strict=True):
                        if status.code is ok:
                            keep.append(node)
                            continue
                        if not status.is_rejected:
                            return feasible, Status(
                                Code.ERROR, (f'running "{name}" filter plugin: {status.message()}',), name
                            )
                        status = status.with_plugin(name)
                        statuses[node.name] = status
                        diagnosis.add_plugin_status(status)
                    chunk = keep
                    if not chunk:
                        break
                feasible.extend(chunk)
        except Exception as exc:
            return feasible, Status(
                Code.ERROR, (f"plugin {name} raised in Filter: {type(exc).__name__}: {exc}",), name
            )
        return feasible, None

    def _find_feasible_mixed(
        self,
        fw: Framework,
        state: CycleState,
        pod: PodInfo,
        nodes: Sequence[NodeInfo],
        start: int,
        to_find: int,
        promised_set: set[str],
        diagnosis: Diagnosis,
    ) -> tuple[list[NodeInfo], Status | None] | None:
        """Upstream's rule, fast: the rotation is scanned on the vectorised path, then only the nodes examined that
        carry nominated pods of equal or higher priority are filtered again with them added (per node). Adding pods
        can only turn a pass into a rejection, so when a node drops out the scan goes on from where it stopped:
        same nodes examined, same early stop, same order and statuses as :meth:`_find_feasible_with_nominated`.
        None when the vectorised path declines or a plugin errors (or raises): the caller then runs the per-node
        scan, which reports it with exactly its nodes examined."""
        n = len(nodes)
        arrays = fw.node_arrays()
        arrays.sync(self._snapshot)
        feasible: list[NodeInfo] = []
        runs: list[np.ndarray[Any, np.dtype[np.int64]]] = []
        rejected: list[tuple[str, Status]] = []
        pos = 0  # rotation offset of the next node to examine
        while pos < n and len(feasible) < to_find:
            first = start + pos if start + pos < n else start + pos - n
            found = fw.find_feasible_rows(state, pod, nodes, arrays, first, to_find - len(feasible), n - pos)
            if found is None:
                return None
            passed, rows, rejections = found
            pos += len(passed) + len(rejections)
            # run_filter_with_nominated_pods is "with the pods added, then without": the scan gave the second.
            for name, status in rejections:
                if name in promised_set:
                    node = self._snapshot.get(name)
                    if node is None:
                        return None
                    added = fw.run_filter_with_pods_added(state, pod, node, fw.promised_pods(pod, name))
                    if added.code is Code.ERROR:
                        return None  # the per-node scan reports it with exactly its nodes examined
                    if not added.is_success:
                        status = added
                rejected.append((name, status))
            keep: list[int] = []
            for j, node in enumerate(passed):
                if node.name in promised_set:
                    added = fw.run_filter_with_pods_added(state, pod, node, fw.promised_pods(pod, node.name))
                    if added.code is Code.ERROR:
                        return None
                    if not added.is_success:
                        rejected.append((node.name, added))
                        continue
                keep.append(j)
            arr = np.arange(rows.start, rows.stop) if isinstance(rows, slice) else rows
            if len(keep) == len(passed):
                feasible.extend(passed)
                runs.append(arr)
            else:
                feasible.extend([passed[j] for j in keep])
                runs.append(arr[keep])
        diagnosis.add_rejections(rejected)
        self._fused_rows = (feasible, arrays, runs[0] if len(runs) == 1 else np.concatenate(runs))
        return feasible, None

    def _find_feasible_with_nominated(
        self,
        fw: Framework,
        state: CycleState,
        pod: PodInfo,
        ordered: Sequence[NodeInfo],
        to_find: int,
        diagnosis: Diagnosis,
    ) -> tuple[list[NodeInfo], Status | None]:
        """Filter with nominated pods counted in (``Framework.run_filter_with_nominated_pods``), node by node."""
        feasible: list[NodeInfo] = []
        for node in ordered:
            status = fw.run_filter_with_nominated_pods(state, pod, node)
            if status.code is Code.ERROR:
                return feasible, status
            if status.is_success:
                feasible.append(node)
                if len(feasible) >= to_find:
                    break
                continue
            diagnosis.node_to_status[node.name] = status
            diagnosis.add_plugin_status(status)
        return feasible, None

    def _pass_extenders(self, pod: PodInfo, feasible: list[NodeInfo], diagnosis: Diagnosis) -> list[NodeInfo]:
        """Upstream ``findNodesThatPassExtenders``: each interested filter extender narrows the feasible nodes in
        turn; its failed nodes get statuses (unresolvable ones win). Raises ExtenderError for a failing extender
        that is not ignorable."""
        before = len(feasible)
        for ext in self.extenders:
            if not feasible:
                break
            if not ext.is_filter or not ext.is_interested(pod):
                continue
            try:
                passed, failed, unresolvable = ext.filter(pod, feasible)
            except extender.ExtenderError:
                if ext.ignorable:
                    continue
                raise
            for node_name, reason in unresolvable.items():
                diagnosis.node_to_status[node_name] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (reason,))
            for node_name, reason in failed.items():
                if node_name not in unresolvable:
                    diagnosis.node_to_status[node_name] = Status(Code.UNSCHEDULABLE, (reason,))
            feasible = passed
        if len(feasible) != before:
            # Extenders register no events: a pod they rejected is retried on any cluster event (upstream #122019).
            diagnosis.unschedulable_plugins.add(extender.EXTENDER_NAME)
        return feasible

    def _add_extender_scores(
        self,
        pod: PodInfo,
        feasible: Sequence[NodeInfo],
        totals: Sequence[int] | np.ndarray[Any, np.dtype[np.int64]],
    ) -> list[int]:
        """Upstream ``prioritizeNodes``: each interested extender's score x weight x (100 / 10) is added; a failing
        prioritizer is skipped (its nodes get nothing from it)."""
        out = [int(t) for t in totals]
        index = {n.name: i for i, n in enumerate(feasible)}
        scale = MAX_NODE_SCORE // extender.MAX_EXTENDER_PRIORITY
        for ext in self.extenders:
            if not ext.is_interested(pod):
                continue
            try:
                scores, weight = ext.prioritize(pod, feasible)
            except extender.ExtenderError:
                continue
            for host, score in scores:
                i = index.get(host)
                if i is not None:
                    out[i] += score * weight * scale
        return out

    def _select_host(
        self, nodes: Sequence[NodeInfo], totals: Sequence[int] | np.ndarray[Any, np.dtype[np.int64]]
    ) -> str:
        """Highest total wins; ties are broken uniformly at random with the seeded RNG.

        kube-scheduler 1.34 walks the ties with reservoir sampling (the k-th tie replaces the pick with probability
        1/k), which picks each tied node with probability 1/ties; one draw over the tied list gives exactly that
        distribution with one random number instead of one per tie.
        """
        arr = np.asarray(totals)
        if arr.ndim == 1 and arr.dtype.kind in "iu":  # the usual int totals: one array pass instead of a loop
            tied: Sequence[int] | np.ndarray[Any, np.dtype[np.intp]] = np.flatnonzero(arr == arr.max())
        else:
            best = max(totals)
            tied = [i for i, total in enumerate(totals) if total == best]
        chosen = tied[0] if len(tied) == 1 else tied[self.rng.randrange(len(tied))]
        return nodes[int(chosen)].name


def rotated_slice(nodes: Sequence[NodeInfo], start: int, pos: int, count: int) -> list[NodeInfo]:
    """``(nodes[start:] + nodes[:start])[pos:pos + count]`` without building the rotated list."""
    n = len(nodes)
    pos = min(pos, n)
    count = max(0, min(count, n - pos))
    i = start + pos
    if i >= n:
        i -= n
    end = i + count
    if end <= n:
        return list(nodes[i:end])
    return list(nodes[i:]) + list(nodes[: end - n])
