"""Builders shared by the runtime/queue/cache/scheduler tests: nodes, pods, profiles and tiny test plugins.

Profiles are built programmatically here (the resolved ``config.Profile`` type) so the runtime tests pin framework
semantics independently of configuration loading; the end-to-end tests use the real loader.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from berth.schedule.config import PluginRef, Profile, SchedulerConfiguration
from berth.schedule.framework import interface as fw
from berth.schedule.framework.types import NodeInfo, PodInfo, QueuedPodInfo
from berth.schedule.plugins.registry import Registry, default_registry

PointSpec = Iterable[str | tuple[str, int]]


def refs(items: PointSpec) -> tuple[PluginRef, ...]:
    return tuple(PluginRef(i) if isinstance(i, str) else PluginRef(i[0], i[1]) for i in items)


def profile(
    name: str = "default-scheduler",
    args: Mapping[str, Any] | None = None,
    percentage: int | None = None,
    **points: PointSpec,
) -> Profile:
    """A profile with only the given points (queueSort/bind default to the in-tree PrioritySort/DefaultBinder)."""
    plugins = {p: refs(points.get(p, ())) for p in fw.POINT_NAMES}
    if "queueSort" not in points:
        plugins["queueSort"] = refs(["PrioritySort"])
    if "bind" not in points:
        plugins["bind"] = refs(["DefaultBinder"])
    return Profile(name, plugins, dict(args or {}), percentage)


def default_like(
    name: str = "default-scheduler", extra_score: Sequence[tuple[str, int]] = (), **kw: Any
) -> Profile:
    """The active part of kube-scheduler's default plugin set (spec 2.4), with optional extra score plugins."""
    return profile(
        name,
        preEnqueue=["SchedulingGates"],
        preFilter=["NodeAffinity", "NodePorts", "NodeResourcesFit"],
        filter=[
            "NodeUnschedulable",
            "NodeName",
            "TaintToleration",
            "NodeAffinity",
            "NodePorts",
            "NodeResourcesFit",
        ],
        postFilter=["DefaultPreemption"],
        preScore=["TaintToleration", "NodeAffinity", "NodeResourcesFit", "NodeResourcesBalancedAllocation"]
        + [n for n, _ in extra_score],
        score=[
            ("TaintToleration", 3),
            ("NodeAffinity", 2),
            ("NodeResourcesFit", 1),
            ("NodeResourcesBalancedAllocation", 1),
            ("ImageLocality", 1),
            *extra_score,
        ],
        **kw,
    )


def config(*profiles: Profile, **kw: Any) -> SchedulerConfiguration:
    return SchedulerConfiguration(profiles=tuple(profiles), **kw)


def node(
    name: str,
    cpu: str = "4",
    memory: str = "32Gi",
    pods: str = "110",
    labels: Mapping[str, str] | None = None,
    taints: Sequence[Mapping[str, str]] = (),
    unschedulable: bool = False,
    images: Sequence[tuple[Sequence[str], int]] = (),
) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": {},
        "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": pods}},
    }
    if taints:
        obj["spec"]["taints"] = [dict(t) for t in taints]
    if unschedulable:
        obj["spec"]["unschedulable"] = True
    if images:
        obj["status"]["images"] = [{"names": list(n), "sizeBytes": s} for n, s in images]
    return obj


def pod(
    name: str,
    cpu: str | None = "100m",
    memory: str | None = "500Mi",
    namespace: str = "default",
    scheduler: str | None = None,
    labels: Mapping[str, str] | None = None,
    node_name: str | None = None,
    priority: int | None = None,
    image: str = "registry.k8s.io/pause:3.10",
    **spec: Any,
) -> dict[str, Any]:
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    container: dict[str, Any] = {"name": "c", "image": image}
    if requests:
        container["resources"] = {"requests": requests}
    body: dict[str, Any] = {"containers": [container], **spec}
    if scheduler:
        body["schedulerName"] = scheduler
    if node_name:
        body["nodeName"] = node_name
    if priority is not None:
        body["priority"] = priority
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels or {})},
        "spec": body,
    }


def pod_info(name: str, **kw: Any) -> PodInfo:
    return PodInfo(pod(name, **kw))


def queued(name: str, timestamp: float = 0.0, sequence: int = 0, **kw: Any) -> QueuedPodInfo:
    return QueuedPodInfo(pod_info(name, **kw), timestamp=timestamp, sequence=sequence)


# --- tiny plugins that record what the framework does --------------------------------------------------------------


class Journal:
    """Where test plugins write which of their methods ran, in order."""

    def __init__(self) -> None:
        self.calls: list[str] = []


JOURNAL_KEY = "journal"


def _journal(state: fw.CycleState) -> list[str]:
    j: list[str] | None = state.get(JOURNAL_KEY)
    if j is None:
        j = []
        state.write(JOURNAL_KEY, j)
    return j


class LabelFilter(fw.PreFilterPlugin, fw.FilterPlugin):
    """Rejects nodes lacking label ``ok``; PreFilter skips for pods labelled ``skip-label-filter``."""

    NAME = "LabelFilter"
    REASON = "node(s) lacked label ok"

    def pre_filter(
        self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[fw.PreFilterResult | None, fw.Status]:
        _journal(state).append(f"{self.NAME}.pre_filter")
        if "skip-label-filter" in pod.labels:
            return None, fw.skip()
        return None, fw.SUCCESS

    def filter(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo) -> fw.Status:
        _journal(state).append(f"{self.NAME}.filter:{node.name}")
        return fw.SUCCESS if "ok" in node.labels else fw.unschedulable(self.REASON)


class AlwaysReject(fw.FilterPlugin):
    NAME = "AlwaysReject"
    REASON = "rejected by AlwaysReject"

    def filter(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo) -> fw.Status:
        _journal(state).append(f"{self.NAME}.filter:{node.name}")
        return fw.unresolvable(self.REASON)


class PinTo(fw.PreFilterPlugin):
    """PreFilter narrowing to the nodes named in the pod's ``pin`` label (comma-separated via '.')."""

    NAME = "PinTo"

    def pre_filter(
        self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[fw.PreFilterResult | None, fw.Status]:
        pin = pod.labels.get("pin")
        if pin is None:
            return None, fw.SUCCESS
        return fw.PreFilterResult(frozenset(pin.split(".")) if pin else frozenset()), fw.SUCCESS


class PinToo(PinTo):
    NAME = "PinToo"

    def pre_filter(
        self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[fw.PreFilterResult | None, fw.Status]:
        pin = pod.labels.get("pin2")
        if pin is None:
            return None, fw.SUCCESS
        return fw.PreFilterResult(frozenset(pin.split("."))), fw.SUCCESS


class PreFilterReject(fw.PreFilterPlugin):
    NAME = "PreFilterReject"
    REASON = "the pod asked to be rejected"

    def pre_filter(
        self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[fw.PreFilterResult | None, fw.Status]:
        if "reject" in pod.labels:
            return None, fw.unresolvable(self.REASON)
        return None, fw.SUCCESS


class NameScore(fw.ScorePlugin):
    """Raw score = the number at the end of the node name (n3 -> 3)."""

    NAME = "NameScore"

    def score(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, fw.Status]:
        return int(node.name.lstrip("n") or 0), fw.SUCCESS


class NormalizedNameScore(NameScore):
    """NameScore normalised so the best node gets 100 (upstream DefaultNormalizeScore)."""

    NAME = "NormalizedNameScore"

    def normalize_score(self, state: fw.CycleState, pod: PodInfo, scores: list[fw.NodeScore]) -> fw.Status:
        top = max(s.score for s in scores) or 1
        for s in scores:
            s.score = 100 * s.score // top
        return fw.SUCCESS


class ReverseNameScore(fw.ScorePlugin):
    NAME = "ReverseNameScore"

    def score(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, fw.Status]:
        return 10 - int(node.name.lstrip("n") or 0), fw.SUCCESS


class OutOfRangeScore(fw.ScorePlugin):
    NAME = "OutOfRangeScore"

    def score(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, fw.Status]:
        return 101, fw.SUCCESS


class SkippingScore(fw.PreScorePlugin, fw.ScorePlugin):
    NAME = "SkippingScore"

    def pre_score(self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> fw.Status:
        return fw.skip()

    def score(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, fw.Status]:
        raise AssertionError("Score must not run after PreScore said Skip")


class Crashing(fw.FilterPlugin):
    NAME = "Crashing"

    def filter(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo) -> fw.Status:
        raise ZeroDivisionError("boom")


def _reserve_plugin(name: str, fail: bool = False) -> type[fw.Plugin]:
    class _R(fw.ReservePlugin):
        NAME = name

        def reserve(self, state: fw.CycleState, pod: PodInfo, node_name: str) -> fw.Status:
            _journal(state).append(f"{name}.reserve")
            return fw.unschedulable(f"{name} refused") if fail else fw.SUCCESS

        def unreserve(self, state: fw.CycleState, pod: PodInfo, node_name: str) -> None:
            _journal(state).append(f"{name}.unreserve")

    _R.__name__ = name
    return _R


ReserveA = _reserve_plugin("ReserveA")
ReserveB = _reserve_plugin("ReserveB")
ReserveFail = _reserve_plugin("ReserveFail", fail=True)


class PermitReject(fw.PermitPlugin):
    NAME = "PermitReject"

    def permit(self, state: fw.CycleState, pod: PodInfo, node_name: str) -> tuple[fw.Status, float]:
        return fw.unschedulable("not permitted"), 0.0


class SkipBinder(fw.BindPlugin):
    NAME = "SkipBinder"

    def bind(self, state: fw.CycleState, pod: PodInfo, node_name: str) -> fw.Status:
        _journal(state).append("SkipBinder.bind")
        return fw.skip()


class RecordingPostBind(fw.PostBindPlugin):
    NAME = "RecordingPostBind"

    def post_bind(self, state: fw.CycleState, pod: PodInfo, node_name: str) -> None:
        _journal(state).append(f"RecordingPostBind.post_bind:{node_name}")


class FifoSort(fw.QueueSortPlugin):
    NAME = "FifoSort"

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return a.timestamp < b.timestamp


class EvictLowest(fw.PostFilterPlugin):
    """A tiny preemption: on the first node, evict the lowest-priority pod below the preemptor's priority."""

    NAME = "EvictLowest"

    def post_filter(
        self, state: fw.CycleState, pod: PodInfo, statuses: Mapping[str, fw.Status]
    ) -> tuple[fw.PostFilterResult | None, fw.Status]:
        evict = getattr(self.handle, "evict", None)
        if evict is None:
            return None, fw.error("no eviction available")
        for node in self.handle.snapshot().node_infos():
            victims = sorted((p for p in node.pods if p.priority < pod.priority), key=lambda p: p.priority)
            if victims:
                status: fw.Status = evict(victims[0], pod, node.name)
                if not status.is_success:
                    return None, status
                return fw.PostFilterResult(node.name), fw.SUCCESS
        return None, fw.unschedulable("preemption: no victims")


TEST_PLUGINS: tuple[type[fw.Plugin], ...] = (
    EvictLowest,
    LabelFilter,
    AlwaysReject,
    PinTo,
    PinToo,
    PreFilterReject,
    NameScore,
    NormalizedNameScore,
    ReverseNameScore,
    OutOfRangeScore,
    SkippingScore,
    Crashing,
    ReserveA,
    ReserveB,
    ReserveFail,
    PermitReject,
    SkipBinder,
    RecordingPostBind,
    FifoSort,
)


class Dormant(fw.PreFilterPlugin, fw.FilterPlugin):
    """Registered inactive: accepted in a profile, never built or run."""

    NAME = "Dormant"

    def pre_filter(
        self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[fw.PreFilterResult | None, fw.Status]:
        raise AssertionError("an inactive plugin ran")

    def filter(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo) -> fw.Status:
        raise AssertionError("an inactive plugin ran")


def registry() -> Registry:
    """The real in-tree plugins plus the test plugins above (``Dormant`` registered inactive)."""
    reg = default_registry()
    for cls in TEST_PLUGINS:
        reg.register(fw.PluginSpec(name=cls.NAME, plugin_class=cls))
    reg.register(fw.PluginSpec(name=Dormant.NAME, plugin_class=Dormant, active=False))
    return reg
