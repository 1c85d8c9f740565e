"""ImageLocality (Score): prefer nodes that already hold the pod's container images, weighted by image size and
damped by how widespread each image is (an image on every node says nothing about this one).

Why: pulling large images dominates start-up time. Upstream ``plugins/imagelocality/image_locality.go``:
``sum += int(size * nodesWithImage / allNodes)`` over the pod's init and regular containers present on the node,
clamped to ``[23 MiB, 1000 MiB x containers]`` and scaled to 0..100 with integer division.

Image facts come from ``NodeInfo.image_states`` ({normalised image name: ImageState(size, num_nodes)}), which the
scheduler cache fills. If a node lists ``status.images`` but its ``image_states`` is empty (a cache that does not
fill it), the plugin derives the same table once per cycle from the snapshot and keeps it in CycleState.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from berth.schedule import vector
from berth.schedule.framework import interface as fw
from berth.schedule.framework.columns import IntArray, NodeArrays, Rows, count
from berth.schedule.framework.types import ImageState, NodeInfo, PodInfo, normalized_image_name
from berth.schedule.plugins import helper

NAME = "ImageLocality"
MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB
_FALLBACK_STATE_KEY = NAME + "/imageStates"


def scaled_image_score(state: ImageState, total_num_nodes: int) -> int:
    """``int64(float64(size) * float64(numNodes)/float64(totalNumNodes))``."""
    spread = state.num_nodes / total_num_nodes
    return int(float(state.size) * spread)


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    return helper.go_div(fw.MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD), max_threshold - MIN_THRESHOLD)


def image_states_of(nodes: list[NodeInfo] | tuple[NodeInfo, ...]) -> dict[str, dict[str, ImageState]]:
    """Per node name, its image table computed from every node's ``status.images`` (the cache's job, redone)."""
    sizes: dict[str, int] = {}
    holders: dict[str, set[str]] = {}
    per_node: dict[str, set[str]] = {}
    for n in nodes:
        names: set[str] = set()
        for image_names, size in n.node_images():
            for raw in image_names:
                name = normalized_image_name(raw)
                sizes[name] = size
                holders.setdefault(name, set()).add(n.name)
                names.add(name)
        per_node[n.name] = names
    return {
        node: {name: ImageState(sizes[name], len(holders[name])) for name in names}
        for node, names in per_node.items()
    }


def _num_containers(pod: PodInfo) -> int:
    spec: dict[str, Any] = pod.pod.get("spec") or {}
    return len(spec.get("initContainers") or []) + len(spec.get("containers") or [])


class ImageLocality(fw.ScorePlugin):
    NAME = NAME

    def _states(self, state: fw.CycleState, node: NodeInfo) -> dict[str, ImageState]:
        if node.image_states:
            return node.image_states
        if not (node.node.get("status") or {}).get("images"):
            return {}
        table: dict[str, dict[str, ImageState]] | None = state.get(_FALLBACK_STATE_KEY)
        if table is None:
            table = image_states_of(tuple(self.handle.snapshot().node_infos()))
            state.write(_FALLBACK_STATE_KEY, table)
        return table.get(node.name, {})

    def _sum(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo, total_nodes: int) -> int:
        states = node.image_states or self._states(state, node)
        total = 0
        if states:
            for image in pod.images:
                st = states.get(image)
                if st is not None:
                    total += scaled_image_score(st, total_nodes)
        return total

    def score(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, fw.Status]:
        if not pod.images:
            return 0, fw.SUCCESS
        total = self._sum(state, pod, node, self.handle.snapshot().num_nodes())
        if total < MIN_THRESHOLD:  # clamps to the minimum: score 0 whatever the container count
            return 0, fw.SUCCESS
        return calculate_priority(total, _num_containers(pod)), fw.SUCCESS

    def score_array(
        self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo], arrays: NodeArrays, rows: Rows
    ) -> IntArray:
        """The framework's fused Score hook: nodes holding no image score 0; the others are asked per node."""
        out = np.zeros(count(rows), np.int64)
        if pod.images and arrays.flagged["has_images"]:
            for j in np.flatnonzero(arrays.has_images[rows]).tolist():
                out[j] = self.score(state, pod, nodes[j])[0]
        return out

    def score_nodes(
        self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[list[int], fw.Status]:
        """All nodes at once (the framework's batch hook); equal to :meth:`score` per node."""
        if not pod.images:
            return [0] * len(nodes), fw.SUCCESS
        if vector.enabled(self.handle):
            # Nodes that hold no image at all score 0: only the others need the per-node sum.
            arrays = vector.arrays_for(self.handle, self)
            rows = arrays.rows(nodes, state)
            fast = [0] * len(nodes)
            for j in np.flatnonzero(arrays.has_images[rows] | arrays.exotic[rows]).tolist():
                fast[j] = self.score(state, pod, nodes[j])[0]
            return fast, fw.SUCCESS
        total_nodes = self.handle.snapshot().num_nodes()
        containers = _num_containers(pod)
        images = pod.images
        out: list[int] = []
        for n in nodes:
            states = n.image_states
            if not states:
                if not (n.node.get("status") or {}).get("images"):
                    out.append(0)
                    continue
                states = self._states(state, n)
            total = 0
            for image in images:
                st = states.get(image)
                if st is not None:
                    total += scaled_image_score(st, total_nodes)
            out.append(0 if total < MIN_THRESHOLD else calculate_priority(total, containers))
        return out, fw.SUCCESS


SPEC = fw.PluginSpec(name=NAME, plugin_class=ImageLocality, api_access=("nodes",))
