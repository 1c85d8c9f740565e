"""Builders for plugin tests: pods and nodes as raw objects, a fake framework handle, and a runner that drives a
plugin through PreFilter/Filter or PreScore/Score/NormalizeScore the way the framework does."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from berth.schedule.framework import interface as fw
from berth.schedule.framework.listers import ObjectCache, ObjectLister, VolumeWriter
from berth.schedule.framework.types import ImageState, NodeInfo, PodInfo, normalized_image_name
from berth.schedule.framework.waiting_pods import WaitingPod


def container(
    requests: Mapping[str, Any] | None = None,
    *,
    name: str = "c",
    image: str = "pause",
    ports: Sequence[Mapping[str, Any]] = (),
    restart_policy: str | None = None,
) -> dict[str, Any]:
    c: dict[str, Any] = {"name": name, "image": image}
    if requests is not None:
        c["resources"] = {"requests": dict(requests)}
    if ports:
        c["ports"] = [dict(p) for p in ports]
    if restart_policy:
        c["restartPolicy"] = restart_policy
    return c


def pod(
    name: str = "p",
    *,
    namespace: str = "default",
    containers: Sequence[Mapping[str, Any]] | None = None,
    init_containers: Sequence[Mapping[str, Any]] = (),
    labels: Mapping[str, str] | None = None,
    node_name: str = "",
    priority: int | None = None,
    tolerations: Sequence[Mapping[str, Any]] = (),
    node_selector: Mapping[str, str] | None = None,
    affinity: Mapping[str, Any] | None = None,
    overhead: Mapping[str, Any] | None = None,
    terminating: bool = False,
    spec: Mapping[str, Any] | None = None,
) -> PodInfo:
    s: dict[str, Any] = {
        "containers": [dict(c) for c in containers] if containers is not None else [container()]
    }
    if init_containers:
        s["initContainers"] = [dict(c) for c in init_containers]
    if node_name:
        s["nodeName"] = node_name
    if priority is not None:
        s["priority"] = priority
    if tolerations:
        s["tolerations"] = [dict(t) for t in tolerations]
    if node_selector is not None:
        s["nodeSelector"] = dict(node_selector)
    if affinity is not None:
        s["affinity"] = dict(affinity)
    if overhead is not None:
        s["overhead"] = dict(overhead)
    s.update(spec or {})
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "labels": dict(labels or {})}
    if terminating:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return PodInfo({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": s})


def node(
    name: str = "n",
    *,
    allocatable: Mapping[str, Any] | None = None,
    labels: Mapping[str, str] | None = None,
    taints: Sequence[Mapping[str, Any]] = (),
    unschedulable: bool = False,
    images: Sequence[tuple[Sequence[str], int]] = (),
    pods: Iterable[PodInfo] = (),
) -> NodeInfo:
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = [dict(t) for t in taints]
    if unschedulable:
        spec["unschedulable"] = True
    status: dict[str, Any] = {"allocatable": dict(allocatable or {"cpu": "4", "memory": "8Gi", "pods": 110})}
    if images:
        status["images"] = [{"names": list(n), "sizeBytes": size} for n, size in images]
    ni = NodeInfo(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": dict(labels or {})},
            "spec": spec,
            "status": status,
        }
    )
    for p in pods:
        ni.add_pod(p.with_node(name))
    return ni


def fill_image_states(nodes: Sequence[NodeInfo]) -> None:
    """What the scheduler cache does: {normalised image: ImageState(size, nodes holding it)} on every node."""
    holders: dict[str, int] = {}
    for n in nodes:
        for names, _ in n.node_images():
            for raw in set(map(normalized_image_name, names)):
                holders[raw] = holders.get(raw, 0) + 1
    for n in nodes:
        n.image_states = {
            normalized_image_name(raw): ImageState(size, holders[normalized_image_name(raw)])
            for names, size in n.node_images()
            for raw in names
        }


class FakeSnapshot:
    """The :class:`~berth.schedule.framework.interface.Snapshot` contract over a fixed list of nodes."""

    def __init__(self, nodes: Sequence[NodeInfo]) -> None:
        self._nodes = nodes if isinstance(nodes, list) else list(nodes)  # a test may change its list in place

    def node_infos(self) -> Sequence[NodeInfo]:
        return self._nodes

    def get(self, node_name: str) -> NodeInfo | None:
        return next((n for n in self._nodes if n.name == node_name), None)

    def num_nodes(self) -> int:
        return len(self._nodes)

    def have_pods_with_affinity(self) -> Sequence[NodeInfo]:
        return [n for n in self._nodes if n.pods_with_affinity > 0]

    def have_pods_with_required_anti_affinity(self) -> Sequence[NodeInfo]:
        return [n for n in self._nodes if n.pods_with_required_anti_affinity > 0]


class FakeHandle:
    """The :class:`~berth.schedule.framework.interface.Handle` contract for plugin tests: a fixed snapshot, an
    object lister over ``objects``, a seeded RNG, no extenders and no pods waiting at Permit; ``bind`` records."""

    def __init__(self, nodes: Sequence[NodeInfo] = (), objects: Iterable[Mapping[str, Any]] = ()) -> None:
        self._snapshot = FakeSnapshot(nodes)
        self.bound: list[tuple[str, str]] = []
        self.objects: ObjectLister = ObjectCache(objects)
        self.volume_writer: VolumeWriter | None = None
        self.rng = random.Random(0)
        self.vectorised = True

    @property
    def profile_name(self) -> str:
        return "default-scheduler"

    def snapshot(self) -> FakeSnapshot:
        return self._snapshot

    def bind(self, pod: PodInfo, node_name: str) -> fw.Status:
        self.bound.append((pod.key, node_name))
        return fw.SUCCESS

    def extenders(self) -> Sequence[Any]:
        return ()

    def iterate_over_waiting_pods(self, callback: Callable[[WaitingPod], None]) -> None:
        return None

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return None

    def reject_waiting_pod(self, uid: str) -> bool:
        return False


def run_filter(plugin: fw.Plugin, p: PodInfo, n: NodeInfo) -> fw.Status:
    """PreFilter (if any) then Filter on one node, as the framework would; a PreFilter Skip means Success."""
    state = fw.CycleState()
    if isinstance(plugin, fw.PreFilterPlugin):
        _, status = plugin.pre_filter(state, p, [n])
        if status.is_skip:
            return fw.SUCCESS
        if not status.is_success:
            return status
    assert isinstance(plugin, fw.FilterPlugin)
    return plugin.filter(state, p, n)


def run_score(plugin: fw.Plugin, p: PodInfo, nodes: Sequence[NodeInfo], normalize: bool = True) -> list[int]:
    """PreScore (Skip -> all 0), Score per node (and ``score_nodes`` if the plugin has it, which must agree),
    NormalizeScore; returns the scores in node order."""
    state = fw.CycleState()
    if isinstance(plugin, fw.PreScorePlugin):
        status = plugin.pre_score(state, p, nodes)
        if status.is_skip:
            return [0] * len(nodes)
        assert status.is_success, status
    assert isinstance(plugin, fw.ScorePlugin)
    scores = []
    for n in nodes:
        s, status = plugin.score(state, p, n)
        assert status.is_success, status
        scores.append(fw.NodeScore(n.name, s))
    batch = getattr(plugin, "score_nodes", None)
    if batch is not None:  # the framework's batch hook must agree with the per-node path exactly
        batch_scores, status = batch(state, p, nodes)
        assert status.is_success, status
        assert batch_scores == [s.score for s in scores]
    if normalize:
        assert plugin.normalize_score(state, p, scores).is_success
    return [s.score for s in scores]
