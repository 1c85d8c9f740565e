"""One profile's plugins, built once and run point by point (upstream ``framework/runtime/framework.go``).

Why: a profile is a pipeline -- which plugins run at each extension point, in which order, with which score
weights and args. :class:`Framework` builds it from a resolved :class:`~berth.schedule.config.Profile` and a
:class:`~berth.schedule.plugins.registry.Registry`, refusing what kube-scheduler refuses, with its words:
``FilterPlugin "Foo" does not exist``, ``plugin "Foo" does not extend FilterPlugin plugin``,
``at least one bind plugin is needed for profile with scheduler name "x"``.

Semantics kept from upstream:

- PreFilter runs in order; SKIP removes that plugin's Filter for this pod; results narrow the nodes (intersection);
  UnschedulableAndUnresolvable stops at once, Unschedulable lets later PreFilters run.
- Filter stops at the first rejecting plugin for a node (so order decides the reported reason).
- PreScore SKIP removes that plugin's Score; Score -> NormalizeScore -> range check [0, 100] -> x weight.
- Reserve in order, Unreserve in *reverse* order; Permit; PreBind; Bind until a plugin does not SKIP; PostBind.
- Plugins whose spec is inactive (accepted in config, behaviour not built yet) are never built or run; the
  framework lists a warning for each in :attr:`Framework.warnings`.

A plugin raising an exception is a bug in that plugin, not a crash of the scheduler: the call becomes an
``Error`` status naming the plugin.

Speed hooks (optional, berth-only: list forms, fused forms over the node columns, a queue sort key) are found
with ``isinstance`` against :mod:`~berth.schedule.framework.hooks`, which says how the framework uses each.
"""

from __future__ import annotations

import operator
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import TYPE_CHECKING, Any

import numpy as np

from berth.kube.errors import InputError
from berth.schedule.framework import columns, fused, hooks
from berth.schedule.framework import interface as fw
from berth.schedule.framework.interface import (
    EXTENDER_NAME,
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    SUCCESS,
    ClusterEvent,
    Code,
    CycleState,
    NodeScore,
    PluginSpec,
    PostFilterResult,
    PreFilterResult,
    Status,
)
from berth.schedule.framework.listers import ObjectCache, ObjectLister, VolumeWriter
from berth.schedule.framework.types import NodeInfo, PodInfo, QueuedPodInfo
from berth.schedule.framework.waiting_pods import MAX_PERMIT_TIMEOUT, WaitingPod, WaitingPods

if TYPE_CHECKING:
    from berth.schedule.framework.extender import Extender

# Upstream (framework.go, pre-hints behaviour): a plugin that registers no events is requeued on any of these.
ALL_EVENTS: tuple[ClusterEvent, ...] = (ClusterEvent("*", "*"),)

Binder = Callable[[PodInfo, str], Status]
Evict = fw.Evict
EvictVictims = fw.EvictVictims
FilterFn = fused.FilterFn
BatchFilterFn = fused.BatchFilterFn
MaskFn = fused.MaskFn
VerdictFn = fused.VerdictFn
IntArray = columns.IntArray


@dataclass(frozen=True, slots=True)
class PluginScores:
    """One Score plugin's answers for a list of nodes (same order): ``raw`` from Score, ``normalized`` after
    NormalizeScore (what the weight multiplies). Empty, with ``skipped``, when PreScore said Skip."""

    plugin: str
    weight: int
    raw: tuple[Any, ...]
    normalized: tuple[Any, ...]
    skipped: bool = False


class FrameworkError(InputError):
    """A profile that cannot be built (unknown plugin, wrong extension point, no bind plugin ...). Exit code 2."""

    def __init__(self, scheduler_name: str, detail: str) -> None:
        super().__init__(
            f"initializing profiles: creating profile for scheduler name {scheduler_name}: {detail}",
        )
        self.scheduler_name = scheduler_name
        self.detail = detail


def _int_array(raw: Sequence[int]) -> np.ndarray[Any, np.dtype[np.int64]] | None:
    """``raw`` as an int64 array when every score is a Python/numpy int that fits (else None: plain-Python path)."""
    try:
        arr = np.asarray(raw)
    except (TypeError, ValueError):
        return None
    if arr.ndim != 1 or arr.dtype.kind not in "iu":
        return None
    return arr.astype(np.int64, copy=False)


def _invalid_score(name: str, bad: Any) -> Status:
    return Status(
        Code.ERROR,
        (
            f'applying score defaultWeights on Score plugins: plugin "{name}" returns an invalid '
            f"score {bad}, it should in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing",
        ),
        name,
    )


# run_score_rows checks both score bounds with one unsigned maximum, which needs the lower bound to be 0.
assert MIN_NODE_SCORE == 0


def _out_of_range(names: Sequence[str], parts: Sequence[IntArray]) -> Status | None:
    """The error :meth:`Framework.run_score` reports for the first plugin (in order) with a score outside
    [MIN_NODE_SCORE, MAX_NODE_SCORE], or None."""
    for name, raw in zip(names, parts, strict=True):
        bad = np.flatnonzero((raw > MAX_NODE_SCORE) | (raw < MIN_NODE_SCORE))
        if bad.size:
            return _invalid_score(name, int(raw[bad[0]]))
    return None


def _score_pair(result: Any) -> bool:
    """Is a Score answer the ``(int, Status)`` pair the contract asks for?"""
    return (
        type(result) is tuple
        and len(result) == 2
        and isinstance(result[0], int | np.integer)
        and not isinstance(result[0], bool)
        and isinstance(result[1], Status)
    )


def _wrong_score(name: str, node: str, result: Any) -> Status:
    """The cycle's error for a Score answer of the wrong shape: the plugin, the node and what it returned."""
    shown = repr(result)
    if len(shown) > 200:
        shown = shown[:197] + "..."
    return Status(
        Code.ERROR,
        (
            f'running Score plugins: plugin "{name}" returned {shown} for node "{node}"; '
            "Score must return (score: int, status: Status)",
        ),
        name,
    )


def inactive_warning(profile: str, plugin: str) -> str:
    return f'profile "{profile}": plugin {plugin} is accepted but not active yet in berth (it is skipped)'


def _crash(plugin: str, point: str, exc: BaseException) -> Status:
    return Status(Code.ERROR, (f"plugin {plugin} raised in {point}: {type(exc).__name__}: {exc}",), plugin)


class Framework:
    """The plugins of one profile, per extension point, and the code that runs them; also the plugins'
    :class:`~berth.schedule.framework.interface.PreemptionHandle` (every member declared there).

    One class past the size guide's 600 lines (about 830), as upstream's ``frameworkImpl``: every ``run_*`` method
    reads the per-point lists and speed forms built once in ``__init__`` (docs/decisions.md, "The house").

    Args:
        profile: a resolved profile (``berth.schedule.config.Profile``): per point the ordered enabled plugins.
        registry: where plugin names resolve to specs.
        snapshot: returns the snapshot of the running cycle.
        binder: what ``handle.bind`` calls (simulation records; live posts ``pods/binding``).
        objects: what ``handle.objects`` returns (non-pod cluster objects plugins read; empty when None).
    """

    def __init__(
        self,
        profile: fw.ProfileSpec,
        registry: fw.PluginLookup,
        *,
        snapshot: Callable[[], fw.Snapshot] | None = None,
        binder: Binder | None = None,
        objects: ObjectLister | None = None,
        rng: random.Random | None = None,
        evict: Evict | None = None,
        evict_victims: EvictVictims | None = None,
        running_preemption: Callable[[str], bool] | None = None,
        nominated: Callable[[str], Sequence[PodInfo]] | None = None,
        waiting_pods: WaitingPods | None = None,
        extenders: Sequence[Extender] = (),
    ) -> None:
        self._profile_name: str = profile.scheduler_name
        # Pods held at Permit, shared by the scheduler's profiles (a framework alone keeps its own, on wall time).
        self.waiting_pods = waiting_pods if waiting_pods is not None else WaitingPods(time.monotonic)
        # The scheduler's HTTP extenders (berth.schedule.extender.HTTPExtender): DefaultPreemption asks them.
        self._extenders: tuple[Extender, ...] = tuple(extenders)
        # The vectorised path's switch (Handle.vectorised; berth.schedule.vector.set_enabled turns it off).
        self.vectorised = True
        # Listers of non-pod objects (``list(kind)``, ``get(kind, namespace, name)``) for plugins that read them.
        self.objects: ObjectLister = objects if objects is not None else ObjectCache()
        # Live only: VolumeBinding's PreBind writes PV/claim bindings through it (set by berth.schedule.live.run).
        self.volume_writer: VolumeWriter | None = None
        # The scheduler's seeded RNG (preemption's random start) and its eviction service (None: cannot evict).
        self.rng = rng if rng is not None else random.Random()
        self._evict = evict
        self._evict_victims = evict_victims
        self._running_preemption = running_preemption
        # The scheduler's nominator: the pods preemption promised room on a node (None: no nominator).
        self._nominated = nominated
        self.percentage_of_nodes_to_score: int | None = profile.percentage_of_nodes_to_score
        self._snapshot_fn = snapshot
        self._binder = binder
        self.warnings: list[str] = []
        self.plugins: dict[str, fw.Plugin] = {}
        self.specs: dict[str, PluginSpec] = {}
        self.inactive: list[str] = []
        plugin_sets: Mapping[str, Sequence[Any]] = profile.plugins
        unknown_points = sorted(set(plugin_sets) - set(fw.POINT_NAMES))
        if unknown_points:
            raise FrameworkError(
                self._profile_name, f"unknown extension point(s) {', '.join(unknown_points)}"
            )

        self._build_plugins(plugin_sets, profile.plugin_args, registry)
        lists = self._point_lists(plugin_sets)
        self.queue_sort: list[tuple[str, fw.QueueSortPlugin]] = [
            (n, p) for n, p, _ in lists["queueSort"] if isinstance(p, fw.QueueSortPlugin)
        ]
        self.queue_sort_name = plugin_sets["queueSort"][0].name
        self.pre_enqueue = [(n, p) for n, p, _ in lists["preEnqueue"] if isinstance(p, fw.PreEnqueuePlugin)]
        self.pre_filter = [(n, p) for n, p, _ in lists["preFilter"] if isinstance(p, fw.PreFilterPlugin)]
        self.filter = [(n, p) for n, p, _ in lists["filter"] if isinstance(p, fw.FilterPlugin)]
        self.post_filter = [(n, p) for n, p, _ in lists["postFilter"] if isinstance(p, fw.PostFilterPlugin)]
        self.pre_score = [(n, p) for n, p, _ in lists["preScore"] if isinstance(p, fw.PreScorePlugin)]
        self.score = [(n, p, w) for n, p, w in lists["score"] if isinstance(p, fw.ScorePlugin)]
        self.reserve = [(n, p) for n, p, _ in lists["reserve"] if isinstance(p, fw.ReservePlugin)]
        self.permit = [(n, p) for n, p, _ in lists["permit"] if isinstance(p, fw.PermitPlugin)]
        self.pre_bind = [(n, p) for n, p, _ in lists["preBind"] if isinstance(p, fw.PreBindPlugin)]
        self.bind_plugins = [(n, p) for n, p, _ in lists["bind"] if isinstance(p, fw.BindPlugin)]
        self.post_bind = [(n, p) for n, p, _ in lists["postBind"] if isinstance(p, fw.PostBindPlugin)]
        self._find_speed_hooks()

    def _build_plugins(
        self,
        plugin_sets: Mapping[str, Sequence[Any]],
        args_by_name: Mapping[str, Any],
        registry: fw.PluginLookup,
    ) -> None:
        """Build every needed plugin once, in the order they first appear (inactive ones only listed, with a
        warning); a plugin whose args or constructor fail is a :class:`FrameworkError` naming it."""
        needed: list[str] = []
        for point in fw.POINT_NAMES:
            for ref in plugin_sets.get(point, ()):
                if ref.name not in needed:
                    needed.append(ref.name)
        for name in needed:
            spec = registry.get(name)
            if spec is None:
                continue  # _point_lists reports it with the point that names it
            self.specs[name] = spec
            if not spec.active:
                self.inactive.append(name)
                self.warnings.append(inactive_warning(self._profile_name, name))
                continue
            args = args_by_name.get(name)
            if args is None and spec.args_type is not None:
                args, problems = spec.args_type.decode(None, f"pluginConfig[{name}].args")
                if problems:
                    raise FrameworkError(self._profile_name, f'initializing plugin "{name}": {problems[0]}')
            try:
                self.plugins[name] = spec.new(args, self)
            except InputError as exc:
                raise FrameworkError(self._profile_name, f'initializing plugin "{name}": {exc}') from exc
            except Exception as exc:
                raise FrameworkError(
                    self._profile_name, f'initializing plugin "{name}": {type(exc).__name__}: {exc}'
                ) from exc

    def _point_lists(
        self, plugin_sets: Mapping[str, Sequence[Any]]
    ) -> dict[str, list[tuple[str, fw.Plugin, int]]]:
        """Per extension point its (name, plugin, weight) entries in run order, refusing what kube-scheduler
        refuses: an unknown plugin, one that does not extend the point, a duplicate, not exactly one queue sort,
        no bind plugin."""
        lists: dict[str, list[tuple[str, fw.Plugin, int]]] = {}
        for point, base in fw.EXTENSION_POINTS:
            seen: set[str] = set()
            entries: list[tuple[str, fw.Plugin, int]] = []
            for ref in plugin_sets.get(point, ()):
                spec = self.specs.get(ref.name)
                if spec is None:
                    raise FrameworkError(self._profile_name, f'{base.__name__} "{ref.name}" does not exist')
                if not issubclass(spec.plugin_class, base):
                    raise FrameworkError(
                        self._profile_name, f'plugin "{ref.name}" does not extend {base.__name__} plugin'
                    )
                if ref.name in seen:
                    raise FrameworkError(
                        self._profile_name, f'plugin "{ref.name}" already registered as "{base.__name__}"'
                    )
                seen.add(ref.name)
                plugin = self.plugins.get(ref.name)
                if plugin is None:
                    continue  # inactive
                entries.append((ref.name, plugin, int(ref.weight or 0) or 1))
            lists[point] = entries

        configured_sorts = len(plugin_sets.get("queueSort", ()))
        if configured_sorts != 1:
            raise FrameworkError(
                self._profile_name,
                f'only one queue sort plugin required for profile with scheduler name "{self._profile_name}", '
                f"but got {configured_sorts}",
            )
        if not plugin_sets.get("bind"):
            raise FrameworkError(
                self._profile_name,
                f'at least one bind plugin is needed for profile with scheduler name "{self._profile_name}"',
            )

        return lists

    def _find_speed_hooks(self) -> None:
        """The optional list and fused forms (berth-only speed hooks, found with ``isinstance`` against
        :mod:`~berth.schedule.framework.hooks`), ready per plugin so a cycle does no lookups."""
        self._score_batch: list[tuple[str, fw.ScorePlugin, int, Any]] = [
            (n, p, w, p.score_nodes if isinstance(p, hooks.BatchScore) else None) for n, p, w in self.score
        ]
        self._filter_fns: list[tuple[str, FilterFn]] = [(n, p.filter) for n, p in self.filter]
        # Optional batch forms (berth-only speed hooks; must agree with the per-node methods).
        self.batch_filters: dict[str, BatchFilterFn] = {
            n: p.filter_nodes for n, p in self.filter if isinstance(p, hooks.BatchFilter)
        }
        # Fused forms (berth-only, vectorised path; see the module docstring): per Filter plugin its
        # ``filter_mask``, per Score plugin its ``score_array`` and ``normalize_array`` (None where absent).
        self._filter_entries: list[
            tuple[str, FilterFn, MaskFn | None, BatchFilterFn | None, VerdictFn | None]
        ] = [
            (
                n,
                p.filter,
                p.filter_mask if isinstance(p, hooks.FilterMask) else None,
                self.batch_filters.get(n),
                p.filter_verdicts if isinstance(p, hooks.FilterVerdicts) else None,
            )
            for n, p in self.filter
        ]
        self._score_arrays: list[tuple[str, fw.ScorePlugin, int, Any, Any, Any]] = [
            (
                n,
                p,
                w,
                b,
                p.score_array if isinstance(p, hooks.ScoreArray) else None,
                p.normalize_array if isinstance(p, hooks.NormalizeArray) else None,
            )
            for n, p, w, b in self._score_batch
        ]
        self._score_pool: list[NodeScore] = []
        # Score plugins whose normalize_score is the base no-op can skip building NodeScore lists.
        # Optional list form of NormalizeScore (berth-only): ``normalize_scores(state, pod, raw) -> (list[int],
        # Status)``, equal to normalize_score on NodeScores, called instead of building NodeScore objects.
        self._normalize_lists: dict[str, Any] = {
            n: p.normalize_scores for n, p, _ in self.score if isinstance(p, hooks.NormalizeList)
        }
        self._normalizes: dict[str, bool] = {
            n: type(p).normalize_score is not fw.ScorePlugin.normalize_score for n, p, _ in self.score
        }

    # --- Handle -----------------------------------------------------------------------------------------------

    @property
    def profile_name(self) -> str:
        return self._profile_name

    def snapshot(self) -> fw.Snapshot:
        if self._snapshot_fn is None:
            raise RuntimeError("this framework was built without a snapshot source")
        return self._snapshot_fn()

    def bind(self, pod: PodInfo, node_name: str) -> Status:
        if self._binder is None:
            return Status(Code.ERROR, ("no binder configured",))
        return self._binder(pod, node_name)

    def extenders(self) -> tuple[Extender, ...]:
        """The scheduler's HTTP extenders, in configuration order (upstream ``Handle.Extenders``)."""
        return self._extenders

    def iterate_over_waiting_pods(self, callback: Callable[[WaitingPod], None]) -> None:
        for waiting in self.waiting_pods:
            callback(waiting)

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return self.waiting_pods.get(uid)

    def reject_waiting_pod(self, uid: str) -> bool:
        waiting = self.waiting_pods.get(uid)
        if waiting is None:
            return False
        waiting.reject("", "removed")
        return True

    @property
    def evict(self) -> Evict | None:
        """``evict(victim, preemptor, node_name) -> Status``: delete a preemption victim (None when unavailable)."""
        return self._evict

    @property
    def evict_victims(self) -> EvictVictims | None:
        """``evict_victims(victims, preemptor, node_name) -> Status``: delete one candidate's victims, perhaps in
        the background (live: upstream's asynchronous preemption); None when the scheduler cannot evict."""
        return self._evict_victims

    def is_pod_running_preemption(self, uid: str) -> bool:
        """Upstream ``IsPodRunningPreemption``: are this pod's preemption evictions still going out?"""
        return self._running_preemption is not None and self._running_preemption(uid)

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: PodInfo, to_add: PodInfo, node: NodeInfo
    ) -> Status:
        """Upstream ``RunPreFilterExtensionAddPod``: tell each (non-skipped) PreFilter plugin a pod was added."""
        return self._run_extensions(state, pod, to_add, node, add=True)

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: PodInfo, to_remove: PodInfo, node: NodeInfo
    ) -> Status:
        """Upstream ``RunPreFilterExtensionRemovePod``."""
        return self._run_extensions(state, pod, to_remove, node, add=False)

    def _run_extensions(
        self, state: CycleState, pod: PodInfo, other: PodInfo, node: NodeInfo, add: bool
    ) -> Status:
        for name, plugin in self.pre_filter:
            if name in state.skip_filter:
                continue
            try:
                ext = plugin.pre_filter_extensions()
                if ext is None:
                    continue
                status = (
                    ext.add_pod(state, pod, other, node) if add else ext.remove_pod(state, pod, other, node)
                )
            except Exception as exc:
                return _crash(name, "PreFilterExtensions", exc)
            if not status.is_success:
                what = "AddPod" if add else "RemovePod"
                return Status(
                    Code.ERROR, (f'running {what} on PreFilter plugin "{name}": {status.message()}',), name
                )
        return SUCCESS

    # --- facts ------------------------------------------------------------------------------------------------

    @property
    def has_filter_plugins(self) -> bool:
        return bool(self.filter)

    @property
    def has_score_plugins(self) -> bool:
        return bool(self.score)

    @property
    def has_post_filter_plugins(self) -> bool:
        return bool(self.post_filter)

    def queue_sort_less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return self.queue_sort[0][1].less(a, b) if self.queue_sort else a.timestamp < b.timestamp

    @property
    def queue_sort_key(self) -> Callable[[QueuedPodInfo], tuple[Any, ...]] | None:
        """The queueSort plugin's optional ``sort_key(qp)`` (berth-only speed hook: a key with exactly ``less``'s
        order), or None."""
        plugin = self.queue_sort[0][1] if self.queue_sort else None
        return plugin.sort_key if isinstance(plugin, hooks.SortKey) else None

    def events_to_register(self) -> dict[str, tuple[fw.ClusterEventWithHint, ...]]:
        """Plugin name -> the cluster events (with their queueing hints) that may make pods it rejected schedulable
        again. A plugin that registers nothing is interested in every event."""
        every = tuple(fw.ClusterEventWithHint(e) for e in ALL_EVENTS)
        out: dict[str, tuple[fw.ClusterEventWithHint, ...]] = {}
        for name, plugin in self.plugins.items():
            events = tuple(plugin.events_to_register()) if isinstance(plugin, hooks.EnqueueExtensions) else ()
            out[name] = (
                tuple(
                    e if isinstance(e, fw.ClusterEventWithHint) else fw.ClusterEventWithHint(e)
                    for e in events
                )
                or every
            )
        if self._extenders:
            # A pod an extender filtered out is retried on any cluster event (extenders register none).
            out[EXTENDER_NAME] = every
        return out

    # --- extension points -------------------------------------------------------------------------------------

    def run_pre_enqueue(self, pod: PodInfo) -> Status:
        for name, plugin in self.pre_enqueue:
            try:
                status = plugin.pre_enqueue(pod)
            except Exception as exc:
                return _crash(name, "PreEnqueue", exc)
            if not status.is_success:
                return status.with_plugin(name)
        return SUCCESS

    def run_pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status, set[str]]:
        """(merged result, status, plugins that narrowed the nodes). Sets ``state.skip_filter``."""
        result: PreFilterResult | None = None
        returned = SUCCESS
        with_nodes: list[str] = []
        skip: set[str] = set()
        for name, plugin in self.pre_filter:
            try:
                r, status = plugin.pre_filter(state, pod, nodes)
            except Exception as exc:
                return None, _crash(name, "PreFilter", exc), set()
            code = status.code
            if code is Code.SKIP:
                skip.add(name)
                continue
            if code is not Code.SUCCESS:
                if code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                    return None, status.with_plugin(name), set()
                if code is Code.UNSCHEDULABLE:
                    returned = status.with_plugin(name)
                    continue
                return (
                    None,
                    Status(Code.ERROR, (f'running PreFilter plugin "{name}": {status.message()}',), name),
                    set(),
                )
            if r is not None and r.node_names is not None:
                with_nodes.append(name)
                result = r if result is None else result.merge(r)
                if result.node_names is not None and not result.node_names:
                    names = sorted(with_nodes)
                    if len(names) == 1:
                        msg = f"node(s) didn't satisfy plugin {names[0]}"
                    else:
                        msg = f"node(s) didn't satisfy plugin(s) [{' '.join(names)}] simultaneously"
                    return result, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (msg,)), set(with_nodes)
        state.skip_filter = skip
        return result, returned, set(with_nodes)

    def filters_for(self, state: CycleState) -> list[tuple[str, FilterFn]]:
        """The Filter calls to make for this pod (minus plugins whose PreFilter said SKIP)."""
        skip = state.skip_filter
        if not skip:
            return self._filter_fns
        return [(n, f) for n, f in self._filter_fns if n not in skip]

    def run_filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        """All Filter plugins on one node; stops at the first that does not succeed."""
        for name, fn in self.filters_for(state):
            try:
                status = fn(state, pod, node)
            except Exception as exc:
                return _crash(name, "Filter", exc)
            if status.code is not Code.SUCCESS:
                if not status.is_rejected:
                    return Status(Code.ERROR, (f'running "{name}" filter plugin: {status.message()}',), name)
                return status.with_plugin(name)
        return SUCCESS

    # --- the fused vectorised path (berth-only) ---------------------------------------------------------------

    def node_arrays(self) -> columns.NodeArrays:
        """The node columns this profile's plugins share on the vectorised path."""
        return columns.arrays_for(self, self)

    def find_feasible_rows(
        self,
        state: CycleState,
        pod: PodInfo,
        nodes: Sequence[NodeInfo],
        arrays: columns.NodeArrays,
        start: int,
        to_find: int,
        limit: int | None = None,
    ) -> tuple[list[NodeInfo], columns.Rows, list[tuple[str, Status]]] | None:
        """Filter on the vectorised path: the scheduler's rotating scan over the snapshot's node list ``nodes``
        (just passed to ``arrays.sync``) from position ``start`` until ``to_find`` nodes pass (or ``limit`` nodes
        were examined: the scheduler scans the nodes without nominated pods this way, between those with).

        Chunks are exactly as long as the nodes still needed, so the nodes examined are the plain scan's. Per chunk
        every Filter plugin with a ``filter_mask`` answers for all its rows at once. When every mask passes every
        node (the usual case) the chunk is feasible as it is. Otherwise the plugins run in profile order, plugin by
        plugin as in the plain scan, but each is asked (batch form, else per node) only about the nodes still alive
        that its own mask did not pass -- every node for a plugin without a mask, exotic rows always -- so per node
        the plugins still run in order up to the first rejection, a rejected node's status (reason, code, plugin) is
        the reference's, and a node a mask only *may* fail can still pass. Filter plugins are side-effect free, so
        the evaluation order does not change any verdict.

        Returns (feasible nodes in rotation order, their rows, (node name, status) of the rejected nodes), or
        None when a plugin errors or raises: the caller then runs the plain scan, which reports it exactly.
        """
        try:
            return fused.find_feasible_rows(
                self._filter_entries, state, pod, nodes, arrays, start, to_find, limit
            )
        except Exception:
            return None

    def promised_pods(self, pod: PodInfo, node_name: str) -> list[PodInfo]:
        """The pods nominated to ``node_name`` that ``pod``'s Filter must count in (equal or higher priority, not
        ``pod`` itself); empty where :meth:`run_filter_with_nominated_pods` is plain :meth:`run_filter`."""
        if self._nominated is None:
            return []
        return [p for p in self._nominated(node_name) if p.key != pod.key and p.priority >= pod.priority]

    def run_filter_with_nominated_pods(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        """Upstream ``RunFilterPluginsWithNominatedPods``: where pods of equal or higher priority are nominated to
        ``node`` (preemption promised them the room), the pod must pass with them added and without them."""
        promised = self.promised_pods(pod, node.name)
        if promised:
            status = self.run_filter_with_pods_added(state, pod, node, promised)
            if not status.is_success:
                return status
        return self.run_filter(state, pod, node)

    def run_filter_with_pods_added(
        self, state: CycleState, pod: PodInfo, node: NodeInfo, promised: Sequence[PodInfo]
    ) -> Status:
        """The first half of :meth:`run_filter_with_nominated_pods`: Filter on a copy of ``node`` with ``promised``
        added (PreFilter extensions told, on a copy of ``state`` -- shared when no extension would run, as Filter
        does not write it). A promised pod already bound to ``node``'s name is added as it is."""
        live = self.extensions_live(state)
        state_with, node_with = (state.clone() if live else state), node.clone()
        for other in promised:
            placed = other if other.node_name == node.name else other.with_node(node.name)
            node_with.add_pod(placed)
            if live:
                status = self.run_pre_filter_extension_add_pod(state_with, pod, placed, node_with)
                if not status.is_success:
                    return status
        return self.run_filter(state_with, pod, node_with)

    def extensions_live(self, state: CycleState) -> bool:
        """Would any PreFilter extension (AddPod/RemovePod) run for this pod? Not when every plugin with
        extensions skipped it at PreFilter (pods without spread constraints or (anti-)affinity): then "what if"
        runs need no copy of the CycleState."""
        skip = state.skip_filter
        try:
            return any(
                name not in skip and plugin.pre_filter_extensions() is not None
                for name, plugin in self.pre_filter
            )
        except Exception:  # the extension runs report it
            return True

    def run_post_filter(
        self, state: CycleState, pod: PodInfo, statuses: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        result: PostFilterResult | None = None
        reasons: list[str] = []
        rejector = ""
        for name, plugin in self.post_filter:
            try:
                r, status = plugin.post_filter(state, pod, statuses)
            except Exception as exc:
                return None, _crash(name, "PostFilter", exc)
            if status.is_success:
                return r, status
            if status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return r, status.with_plugin(name)
            if not status.is_rejected:
                return None, Status(Code.ERROR, status.reasons, name)
            if r is not None:
                result = r
            reasons.extend(status.reasons)
            rejector = rejector or name
        return result, Status(Code.UNSCHEDULABLE, tuple(reasons), rejector)

    def run_pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        skip: set[str] = set()
        for name, plugin in self.pre_score:
            try:
                status = plugin.pre_score(state, pod, nodes)
            except Exception as exc:
                return _crash(name, "PreScore", exc)
            if status.code is Code.SKIP:
                skip.add(name)
                continue
            if not status.is_success:
                return Status(Code.ERROR, (f'running PreScore plugin "{name}": {status.message()}',), name)
        state.skip_score = skip
        return SUCCESS

    def run_score(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[list[int], Status]:
        """Weighted total per node (same order as ``nodes``)."""
        totals = [0] * len(nodes)
        acc: np.ndarray[Any, np.dtype[np.int64]] | None = None  # the int64 part of the totals
        skip = state.skip_score
        for name, plugin, weight, batch in self._score_batch:
            if name in skip:
                continue
            raw, failed = self._plugin_scores(name, plugin, batch, state, pod, nodes)
            if failed is not None:
                return totals, failed
            arr = _int_array(raw)
            if arr is not None:  # integer scores: range check, weight and sum as int64 array operations
                if arr.size and (arr.max() > MAX_NODE_SCORE or arr.min() < MIN_NODE_SCORE):
                    pass  # reported below with the plain-Python code
                else:
                    acc = arr * weight if acc is None else acc + arr * weight
                    continue
            if acc is not None:
                totals = list(map(operator.add, totals, acc.tolist()))
                acc = None
            if raw and (max(raw) > MAX_NODE_SCORE or min(raw) < MIN_NODE_SCORE):
                bad = next(s for s in raw if s > MAX_NODE_SCORE or s < MIN_NODE_SCORE)
                return totals, _invalid_score(name, bad)
            if weight != 1:
                raw = list(map(operator.mul, raw, repeat(weight, len(raw))))
            totals = list(map(operator.add, totals, raw))
        if acc is not None:
            totals = acc.tolist() if not any(totals) else list(map(operator.add, totals, acc.tolist()))
        return totals, SUCCESS

    def run_score_rows(
        self,
        state: CycleState,
        pod: PodInfo,
        nodes: Sequence[NodeInfo],
        arrays: columns.NodeArrays,
        rows: columns.Rows,
    ) -> tuple[IntArray | list[int], Status]:
        """:meth:`run_score` on the vectorised path, for ``nodes`` that are ``rows`` of ``arrays`` (none exotic):
        plugins with ``score_array``/``normalize_array`` answer as int64 arrays, the others through their list or
        per-node forms; totals are one int64 array. Same results and the same error statuses as :meth:`run_score`.
        Whatever the array forms cannot answer exactly -- scores that are not integers, a hook raising, a row that
        turned out exotic -- sends the whole call to :meth:`run_score` (Score is side-effect free, so asking again
        is safe)."""
        if arrays.flagged["exotic"] and arrays.exotic[rows].any():  # amounts the kernels cannot hold
            return self.run_score(state, pod, nodes)
        marker = arrays.changes()
        names: list[str] = []
        parts: list[IntArray] = []  # normalised scores per plugin so far (to name the first out of range)
        acc: IntArray | None = None
        in_range = True
        skip = state.skip_score
        for name, plugin, weight, batch, score_array, normalize_array in self._score_arrays:
            if name in skip:
                continue
            values: list[Any] | None = None  # set when the plugin answers (or normalises) as a list
            failed: Status | None = None
            try:
                raw = score_array(state, pod, nodes, arrays, rows) if score_array is not None else None
                if raw is not None and normalize_array is not None:
                    normalised = normalize_array(state, pod, raw)
                    if normalised is None:  # beyond the array form: the list form of NormalizeScore
                        values, failed = self._normalized(name, plugin, state, pod, nodes, raw.tolist())
                    raw = normalised
                elif raw is not None and (name in self._normalize_lists or self._normalizes[name]):
                    values, failed = self._normalized(name, plugin, state, pod, nodes, raw.tolist())
                elif raw is None:
                    values, failed = self._plugin_scores(name, plugin, batch, state, pod, nodes)
            except Exception:  # the plain path reports it exactly (or, on an exotic row, does not raise)
                return self.run_score(state, pod, nodes)
            if values is not None:
                if failed is not None:
                    if arrays.changes() != marker and arrays.flagged["exotic"] and arrays.exotic[rows].any():
                        return self.run_score(state, pod, nodes)
                    return [], _out_of_range(names, parts) or failed  # run_score stops at the first problem
                raw = _int_array(values)
                if raw is None:
                    return self.run_score(state, pod, nodes)
            assert raw is not None
            raw = raw.astype(np.int64, copy=False)
            names.append(name)
            parts.append(raw)
            # One reduction checks both bounds (MIN_NODE_SCORE is 0): a negative int64 seen as uint64 is huge.
            if raw.size and int(raw.view(np.uint64).max()) > MAX_NODE_SCORE:
                in_range = False
            if acc is None:  # a new array: hooks may answer with views of their memo columns
                acc = raw * weight if weight != 1 else raw.copy()
            else:
                acc = acc + raw * weight if weight != 1 else acc + raw
        if arrays.changes() != marker and arrays.flagged["exotic"] and arrays.exotic[rows].any():
            return self.run_score(state, pod, nodes)  # a hook made a column that showed a row exotic
        if not in_range:
            problem = _out_of_range(names, parts)
            assert problem is not None
            return [], problem
        if acc is None:
            return np.zeros(len(nodes), np.int64), SUCCESS
        return acc, SUCCESS

    def score_breakdown(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[list[PluginScores], Status]:
        """Each Score plugin's raw and normalised scores for ``nodes``, with its weight, in profile order -- what
        ``simulate --explain`` shows. Called after the cycle's own Score with the same state and nodes (Score is
        side-effect free), through the plain per-plugin forms, so it is also the oracle for the totals the
        vectorised path produced. Plugins PreScore skipped are listed with ``skipped`` set and no scores."""
        out: list[PluginScores] = []
        for name, plugin, weight, batch in self._score_batch:
            if name in state.skip_score:
                out.append(PluginScores(name, weight, (), (), skipped=True))
                continue
            raw, failed = self._raw_scores(name, plugin, batch, state, pod, nodes)
            if failed is not None:
                return out, failed
            normalized, failed = self._normalized(name, plugin, state, pod, nodes, list(raw))
            if failed is not None:
                return out, failed
            out.append(PluginScores(name, weight, tuple(raw), tuple(normalized)))
        return out, SUCCESS

    def _plugin_scores(
        self,
        name: str,
        plugin: fw.ScorePlugin,
        batch: Any,
        state: CycleState,
        pod: PodInfo,
        nodes: Sequence[NodeInfo],
    ) -> tuple[list[Any], Status | None]:
        """One plugin's normalised scores for ``nodes`` (its batch hook or per-node Score, then NormalizeScore);
        or the error status :meth:`run_score` reports."""
        raw, failed = self._raw_scores(name, plugin, batch, state, pod, nodes)
        if failed is not None:
            return [], failed
        return self._normalized(name, plugin, state, pod, nodes, raw)

    def _raw_scores(
        self,
        name: str,
        plugin: fw.ScorePlugin,
        batch: Any,
        state: CycleState,
        pod: PodInfo,
        nodes: Sequence[NodeInfo],
    ) -> tuple[list[Any], Status | None]:
        """One plugin's Score answers for ``nodes`` before NormalizeScore (its batch hook or per-node Score)."""
        try:
            if batch is not None:
                raw, status = batch(state, pod, nodes)
                if not status.is_success:
                    return [], self._score_failed(name, status)
            else:
                score = plugin.score
                results = [score(state, pod, node) for node in nodes]
                for node, result in zip(nodes, results, strict=True):
                    if not _score_pair(result):
                        return [], _wrong_score(name, node.name, result)
                raw_t, codes = zip(*results, strict=True) if results else ((), ())
                raw = list(raw_t)
                if codes.count(SUCCESS) != len(codes):
                    for status in codes:
                        if not status.is_success:
                            return [], self._score_failed(name, status)
        except Exception as exc:
            return [], _crash(name, "Score", exc)
        return raw, None

    def _normalized(
        self,
        name: str,
        plugin: fw.ScorePlugin,
        state: CycleState,
        pod: PodInfo,
        nodes: Sequence[NodeInfo],
        raw: list[Any],
    ) -> tuple[list[Any], Status | None]:
        """NormalizeScore of one plugin on a list (its list hook, or NodeScore objects; as is when it has none)."""
        try:
            normalize_list = self._normalize_lists.get(name)
            if normalize_list is not None:
                raw, status = normalize_list(state, pod, raw)
            elif self._normalizes[name]:
                scores = self._node_scores(nodes, raw)
                status = plugin.normalize_score(state, pod, scores)
                raw = [ns.score for ns in scores]
            else:
                return raw, None
        except Exception as exc:
            return [], _crash(name, "Score", exc)
        if not status.is_success:
            return [], Status(
                Code.ERROR,
                (f'running Normalize on Score plugins: plugin "{name}" failed with: {status.message()}',),
                name,
            )
        return raw, None

    def _node_scores(self, nodes: Sequence[NodeInfo], raw: Sequence[int]) -> list[NodeScore]:
        """The NormalizeScore list, reusing NodeScore objects across calls (creating hundreds per plugin per pod
        was a visible cost). Plugins rewrite it in place during the call and must not keep it."""
        pool = self._score_pool
        while len(pool) < len(nodes):
            pool.append(NodeScore("", 0))
        scores = pool[: len(nodes)]
        for ns, node, s in zip(scores, nodes, raw, strict=True):
            ns.name = node.name
            ns.score = s
        return scores

    @staticmethod
    def _score_failed(name: str, status: Status) -> Status:
        return Status(
            Code.ERROR, (f'running Score plugins: plugin "{name}" failed with: {status.message()}',), name
        )

    def run_reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        for name, plugin in self.reserve:
            try:
                status = plugin.reserve(state, pod, node_name)
            except Exception as exc:
                return _crash(name, "Reserve", exc)
            if not status.is_success:
                if status.is_rejected:
                    return status.with_plugin(name)
                return Status(Code.ERROR, (f'running Reserve plugin "{name}": {status.message()}',), name)
        return SUCCESS

    def run_unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        """Every Reserve plugin's Unreserve, in reverse order (they must be idempotent)."""
        for _name, plugin in reversed(self.reserve):
            try:
                plugin.unreserve(state, pod, node_name)
            except Exception:
                continue

    def run_permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status, float]:
        """(status, longest wait requested). When plugins ask to WAIT (and none rejects) the pod is added to the
        waiting pods with each plugin's timeout (capped at 15 minutes) and the status is WAIT (upstream
        ``RunPermitPlugins``); the binding cycle then waits for :meth:`WaitingPod.decision`."""
        waits: dict[str, float] = {}
        for name, plugin in self.permit:
            try:
                status, timeout = plugin.permit(state, pod, node_name)
            except Exception as exc:
                return _crash(name, "Permit", exc), 0.0
            if status.is_success:
                continue
            if status.is_rejected:
                return status.with_plugin(name), 0.0
            if status.code is Code.WAIT:
                waits[name] = min(float(timeout), MAX_PERMIT_TIMEOUT)
                continue
            return Status(Code.ERROR, (f'running Permit plugin "{name}": {status.message()}',), name), 0.0
        if waits:
            self.waiting_pods.add(pod, node_name, waits)
            message = f'one or more plugins asked to wait and no plugin rejected pod "{pod.name}"'
            return Status(Code.WAIT, (message,), next(iter(waits))), max(waits.values())
        return SUCCESS, 0.0

    def run_pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        for name, plugin in self.pre_bind:
            try:
                status = plugin.pre_bind(state, pod, node_name)
            except Exception as exc:
                return _crash(name, "PreBind", exc)
            if status.code is Code.SKIP:
                continue
            if not status.is_success:
                if status.is_rejected:
                    return status.with_plugin(name)
                return Status(Code.ERROR, (f'running PreBind plugin "{name}": {status.message()}',), name)
        return SUCCESS

    def run_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        """Bind plugins in order until one does not SKIP. All skipping is itself a failure (SKIP)."""
        status = Status(Code.SKIP)
        for name, plugin in self.bind_plugins:
            try:
                status = plugin.bind(state, pod, node_name)
            except Exception as exc:
                return _crash(name, "Bind", exc)
            if status.code is Code.SKIP:
                continue
            if not status.is_success:
                if status.is_rejected:
                    return status.with_plugin(name)
                return Status(Code.ERROR, (f'running Bind plugin "{name}": {status.message()}',), name)
            return SUCCESS
        return status

    def run_post_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        for _name, plugin in self.post_bind:
            try:
                plugin.post_bind(state, pod, node_name)
            except Exception:
                continue
