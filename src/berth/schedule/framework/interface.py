"""Extension-point contracts (kube-scheduler ``framework/interface.go``, in Python).

A plugin is a class deriving from :class:`Plugin` and from one small base per extension point it implements
(:class:`FilterPlugin`, :class:`ScorePlugin`, ...). The framework learns which points a plugin serves with
``isinstance`` -- exactly as upstream type-asserts Go interfaces -- so a plugin cannot claim a point it does not
implement. Every method returns a :class:`Status` whose code means:

- ``SUCCESS``: go on.
- ``UNSCHEDULABLE``: this node (or, from PreFilter, every node) rejects the pod, but preemption might help.
- ``UNSCHEDULABLE_AND_UNRESOLVABLE``: rejected and preemption cannot help (node is not a preemption candidate).
- ``ERROR``: something broke; the pod is retried after backoff.
- ``SKIP``: from PreFilter/PreScore, "nothing for me to do": the paired Filter/Score of this plugin is skipped for
  this pod. From Bind: "not mine, ask the next bind plugin".
- ``WAIT``: from Permit only: hold the pod, reserved on its node, until every plugin that asked to wait allows it
  (through the handle's waiting pods) or one rejects it or its timeout passes.
- ``PENDING``: the pod waits for an external event; no backoff.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import InitVar, dataclass
from enum import IntEnum
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

if TYPE_CHECKING:
    import random

    from berth.schedule.framework.extender import Extender
    from berth.schedule.framework.listers import ObjectLister, VolumeWriter
    from berth.schedule.framework.types import NodeInfo, PodInfo, QueuedPodInfo

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0
EXTENDER_NAME = "Extender"
"""Upstream ``framework.ExtenderName``: recorded as the rejecting "plugin" when HTTP extenders filtered nodes out."""


class Code(IntEnum):
    """Keep this order: it mirrors upstream's ``Code`` enum."""

    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5
    PENDING = 6

    @property
    def upstream_name(self) -> str:
        """As upstream's ``Code.String()`` spells it: ``UnschedulableAndUnresolvable``."""
        return "".join(word.capitalize() for word in self.name.split("_"))


@dataclass(frozen=True, slots=True)
class Status:
    """Outcome of a plugin call: a code, the human reasons (shown in FailedScheduling) and the plugin's name."""

    code: Code = Code.SUCCESS
    reasons: tuple[str, ...] = ()
    plugin: str = ""

    @property
    def is_success(self) -> bool:
        return self.code is Code.SUCCESS

    @property
    def is_skip(self) -> bool:
        return self.code is Code.SKIP

    @property
    def is_rejected(self) -> bool:
        """Unschedulable, UnschedulableAndUnresolvable or Pending (upstream ``IsRejected``)."""
        return self.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING)

    def message(self) -> str:
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> Status:
        return Status(self.code, self.reasons, plugin)


SUCCESS = Status()


def unschedulable(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE, reasons)


def unresolvable(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons)


def error(*reasons: str) -> Status:
    return Status(Code.ERROR, reasons)


def skip() -> Status:
    return Status(Code.SKIP)


class CycleState:
    """Per-pod, per-cycle scratch space plugins share between their own extension points (PreFilter -> Filter).

    Keys are conventionally the plugin name plus a suffix. ``clone`` is shallow (plugins store immutable values or
    values with their own ``clone``), as preemption's "what if" runs need.
    """

    __slots__ = ("_data", "skip_filter", "skip_score")

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        self.skip_filter: set[str] = set()
        self.skip_score: set[str] = set()

    def read(self, key: str) -> Any:
        """The stored value; ``KeyError`` if a plugin reads state its PreFilter/PreScore never wrote."""
        return self._data[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def clone(self) -> CycleState:
        c = CycleState()
        for k, v in self._data.items():
            c._data[k] = v.clone() if hasattr(v, "clone") else v
        c.skip_filter = set(self.skip_filter)
        c.skip_score = set(self.skip_score)
        return c


@dataclass(frozen=True, slots=True)
class PreFilterResult:
    """Narrows Filter to these node names (``None`` = all nodes)."""

    node_names: frozenset[str] | None = None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        if other is None or other.node_names is None:
            return self
        if self.node_names is None:
            return other
        return PreFilterResult(self.node_names & other.node_names)


@dataclass(slots=True)
class NodeScore:
    name: str
    score: int


@dataclass(frozen=True, slots=True)
class PostFilterResult:
    """What a PostFilter plugin (preemption) achieved: the node nominated for the pod, if any."""

    nominated_node_name: str = ""


@dataclass(frozen=True, slots=True)
class ClusterEvent:
    """A cluster change that may make a rejected pod schedulable (resource + action), e.g. ("Node", "Add")."""

    resource: str
    action: str


class QueueingHint(IntEnum):
    """A plugin's answer about one event for one pod it rejected (upstream ``fwk.QueueingHint``)."""

    QUEUE_SKIP = 0  # this change cannot make the pod schedulable: leave it where it is
    QUEUE = 1  # it may: retry the pod (after its backoff)


QueueingHintFn = Callable[["PodInfo", Any, Any], QueueingHint]
"""``hint(pod, old, new)``: ``old``/``new`` are the changed object before and after (None for an add / a delete)."""


@dataclass(frozen=True)
class ClusterEventWithHint:
    """An event a plugin registers together with a function deciding, per pod and per change, whether the pod is
    worth retrying (upstream ``ClusterEventWithHint``). A hint that raises counts as QUEUE, as upstream."""

    event: ClusterEvent
    hint: QueueingHintFn | None = None


# --- handle: what the framework gives plugins ----------------------------------------------------------------------


class Snapshot(Protocol):
    """The cache's view for one scheduling cycle (shared by all profiles)."""

    def node_infos(self) -> Sequence[NodeInfo]: ...

    def get(self, node_name: str) -> NodeInfo | None: ...

    def num_nodes(self) -> int: ...

    def have_pods_with_affinity(self) -> Sequence[NodeInfo]:
        """Nodes hosting a pod with any pod (anti-)affinity term (upstream ``HavePodsWithAffinityList``)."""
        ...

    def have_pods_with_required_anti_affinity(self) -> Sequence[NodeInfo]:
        """Nodes hosting a pod with a required anti-affinity term (``HavePodsWithRequiredAntiAffinityList``)."""
        ...


class WaitingPod(Protocol):
    """A pod held at Permit, as plugins see it (upstream ``framework.WaitingPod``); the scheduler's is
    :class:`berth.schedule.framework.waiting_pods.WaitingPod`."""

    def get_pod(self) -> PodInfo: ...

    def pending_plugins(self) -> list[str]:
        """The plugins that asked to wait and have not allowed the pod yet."""
        ...

    def allow(self, plugin: str) -> None:
        """``plugin`` lets the pod go on; it is bound once every waiting plugin has allowed it."""
        ...

    def reject(self, plugin: str, message: str) -> None:
        """Refuse the pod: its binding cycle fails with Unschedulable ``message``."""
        ...


@runtime_checkable
class Handle(Protocol):
    """What the framework gives every plugin (upstream ``framework.Handle``). Every member a plugin reads is
    declared here, so renaming one in the framework is a type error, not a silent change of behaviour."""

    @property
    def profile_name(self) -> str: ...

    @property
    def objects(self) -> ObjectLister:
        """Non-pod cluster objects (upstream's informer listers; see :mod:`berth.schedule.framework.listers`)."""
        ...

    @property
    def volume_writer(self) -> VolumeWriter | None:
        """Live only: where VolumeBinding's PreBind writes PVs and claims (None in simulation)."""
        ...

    vectorised: bool
    """The vectorised path's switch: True (the default) lets plugins answer through their fused and list hooks;
    ``berth bench schedule --verify`` turns it off to run the per-node reference path
    (:func:`berth.schedule.vector.set_enabled`)."""

    @property
    def rng(self) -> random.Random:
        """The scheduler's seeded RNG (preemption's random start), so a simulation repeats exactly."""
        ...

    def snapshot(self) -> Snapshot: ...

    def bind(self, pod: PodInfo, node_name: str) -> Status:
        """Bind through the active binder (simulation records; live posts ``pods/binding``)."""
        ...

    def extenders(self) -> Sequence[Extender]:
        """The scheduler's HTTP extenders, in configuration order (upstream ``Handle.Extenders``)."""
        ...

    def iterate_over_waiting_pods(self, callback: Callable[[WaitingPod], None]) -> None:
        """Call ``callback`` with every pod held at Permit (all profiles), e.g. to allow a whole gang."""
        ...

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        """The pod with ``uid`` if it is held at Permit."""
        ...

    def reject_waiting_pod(self, uid: str) -> bool:
        """Reject the pod with ``uid`` if it is held at Permit (message ``removed``); True when it was."""
        ...


Evict = Callable[["PodInfo", "PodInfo", str], Status]
"""``evict(victim, preemptor, node_name) -> Status``: delete one preemption victim."""
EvictVictims = Callable[[Sequence["PodInfo"], "PodInfo", str], Status]
"""``evict_victims(victims, preemptor, node_name) -> Status``: delete one candidate's victims, perhaps in the
background (live: upstream's asynchronous preemption)."""


@runtime_checkable
class PreemptionHandle(Handle, Protocol):
    """What preemption needs beyond :class:`Handle` (upstream's ``PreemptHandle``: the pod nominator, the
    plugins runner and the extenders): run the Filter chain on "what if" copies of nodes and evict victims."""

    @property
    def evict(self) -> Evict | None:
        """Delete a victim; None when this scheduler cannot evict (preemption then fails with an Error)."""
        ...

    @property
    def evict_victims(self) -> EvictVictims | None:
        """Delete one candidate's victims at once (perhaps in the background); None when it cannot evict."""
        ...

    def is_pod_running_preemption(self, uid: str) -> bool:
        """Upstream ``IsPodRunningPreemption``: are this pod's preemption evictions still going out?"""
        ...

    def run_filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        """Every Filter plugin on one node, up to the first rejection."""
        ...

    def run_filter_with_nominated_pods(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        """Upstream ``RunFilterPluginsWithNominatedPods``."""
        ...

    def promised_pods(self, pod: PodInfo, node_name: str) -> Sequence[PodInfo]:
        """The pods nominated to ``node_name`` that ``pod``'s Filter must count in (empty: plain Filter will do)."""
        ...

    def extensions_live(self, state: CycleState) -> bool:
        """Would any PreFilter extension (AddPod/RemovePod) run for this pod?"""
        ...

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: PodInfo, to_add: PodInfo, node: NodeInfo
    ) -> Status: ...

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: PodInfo, to_remove: PodInfo, node: NodeInfo
    ) -> Status: ...


# --- extension points ----------------------------------------------------------------------------------------------


class Plugin(ABC):
    """Base of every plugin. ``NAME`` is the name used in KubeSchedulerConfiguration."""

    NAME: ClassVar[str]

    def __init__(self, args: Any, handle: Handle) -> None:
        """Plugins are built once per profile with their decoded args (or None) and the framework handle."""
        self.args = args
        self.handle = handle

    def name(self) -> str:
        return self.NAME


class QueueSortPlugin(Plugin):
    @abstractmethod
    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """True when ``a`` should be popped before ``b``."""


class PreEnqueuePlugin(Plugin):
    @abstractmethod
    def pre_enqueue(self, pod: PodInfo) -> Status:
        """Gate a pod before it enters activeQ; a non-success parks it as gated."""


class PreFilterExtensions(Protocol):
    """Incremental updates of PreFilter state when preemption simulates adding/removing pods on a node."""

    def add_pod(self, state: CycleState, pod: PodInfo, to_add: PodInfo, node: NodeInfo) -> Status: ...

    def remove_pod(self, state: CycleState, pod: PodInfo, to_remove: PodInfo, node: NodeInfo) -> Status: ...


class PreFilterPlugin(Plugin):
    @abstractmethod
    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]:
        """Compute per-pod state; reject for all nodes; or narrow the nodes. SKIP skips this plugin's Filter."""

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None


class FilterPlugin(Plugin):
    @abstractmethod
    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        """Can ``pod`` run on ``node``? Reasons become the FailedScheduling histogram entries."""


class PostFilterPlugin(Plugin):
    @abstractmethod
    def post_filter(
        self, state: CycleState, pod: PodInfo, statuses: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        """Called when no node passed Filter (``statuses`` maps node name -> its rejection)."""


class PreScorePlugin(Plugin):
    @abstractmethod
    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        """Per-pod preparation for Score over the feasible ``nodes``. SKIP skips this plugin's Score."""


class ScorePlugin(Plugin):
    @abstractmethod
    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]:
        """Raw score of ``node``; NormalizeScore (if any) must bring all scores into [0, 100]."""

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status:
        """Rewrite ``scores`` in place. The default leaves them unchanged (raw must already be in range)."""
        return SUCCESS


class ReservePlugin(Plugin):
    @abstractmethod
    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status: ...

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        """Undo ``reserve``; must be idempotent."""
        return None


class PermitPlugin(Plugin):
    @abstractmethod
    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status, float]:
        """Approve, reject or WAIT (with a timeout in seconds) before binding."""


class PreBindPlugin(Plugin):
    @abstractmethod
    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status: ...


class BindPlugin(Plugin):
    @abstractmethod
    def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        """Bind or return SKIP to let the next bind plugin try."""


class PostBindPlugin(Plugin):
    @abstractmethod
    def post_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> None: ...


# Config names of the extension points, in cycle order, and the base class serving each.
EXTENSION_POINTS: tuple[tuple[str, type[Plugin]], ...] = (
    ("preEnqueue", PreEnqueuePlugin),
    ("queueSort", QueueSortPlugin),
    ("preFilter", PreFilterPlugin),
    ("filter", FilterPlugin),
    ("postFilter", PostFilterPlugin),
    ("preScore", PreScorePlugin),
    ("score", ScorePlugin),
    ("reserve", ReservePlugin),
    ("permit", PermitPlugin),
    ("preBind", PreBindPlugin),
    ("bind", BindPlugin),
    ("postBind", PostBindPlugin),
)
POINT_NAMES: tuple[str, ...] = tuple(name for name, _ in EXTENSION_POINTS)


def points_of(plugin_class: type[Plugin]) -> frozenset[str]:
    """The config extension points a plugin class implements."""
    return frozenset(name for name, base in EXTENSION_POINTS if issubclass(plugin_class, base))


# --- plugin args -----------------------------------------------------------------------------------------------------


class PluginArgs(Protocol):
    """Typed, defaulted, validated args of one plugin (``pluginConfig[].args``).

    ``decode`` never raises for user mistakes: it returns the defaulted args plus every problem found, each prefixed
    with ``path`` (e.g. ``profiles[0].pluginConfig[1].args.labelKey: Required value``).
    """

    @classmethod
    def decode(cls, raw: Mapping[str, Any] | None, path: str) -> tuple[Any, list[str]]: ...

    def to_dict(self) -> dict[str, Any]: ...


class PluginRefSpec(Protocol):
    """One enabled plugin at an extension point (``berth.schedule.config.PluginRef`` is one)."""

    @property
    def name(self) -> str: ...

    @property
    def weight(self) -> int: ...


class ProfileSpec(Protocol):
    """What a framework is built from: a resolved profile (``berth.schedule.config.Profile`` is one). Declared here
    so the framework imports no configuration module (the configuration imports the framework)."""

    @property
    def scheduler_name(self) -> str: ...

    @property
    def plugins(self) -> Mapping[str, Sequence[PluginRefSpec]]:
        """Per extension point the enabled plugins, in run order."""
        ...

    @property
    def plugin_args(self) -> Mapping[str, Any]:
        """Decoded args per plugin name."""
        ...

    @property
    def percentage_of_nodes_to_score(self) -> int | None: ...


class PluginLookup(Protocol):
    """Where plugin names resolve to specs (``berth.schedule.plugins.registry.Registry`` is one)."""

    def get(self, name: str) -> PluginSpec | None: ...


@dataclass(frozen=True)
class PluginSpec:
    """A registered plugin: its name, class, args type and how to build it.

    ``active`` is False for plugins accepted in configuration whose behaviour berth does not implement yet; the
    scheduler reports them and never pretends they ran.
    """

    name: str
    plugin_class: type[Plugin]
    args_type: type[PluginArgs] | None = None
    active: bool = True
    factory: Any = None  # Callable[[Any, Handle], Plugin]; defaults to plugin_class(args, handle)
    # The API access the plugin needs (for `schedule rbac`): resources it reads through informers and the writes it
    # makes with their verbs, e.g. ("pods", "update:persistentvolumes"). See berth.schedule.rbac for the grammar.
    api_access: tuple[str, ...] = ()
    # The field's former name (it always carried writes too); still accepted so existing plugin modules load.
    reads: InitVar[tuple[str, ...]] = ()

    def __post_init__(self, reads: tuple[str, ...]) -> None:
        if reads and not self.api_access:
            object.__setattr__(self, "api_access", tuple(reads))

    def new(self, args: Any, handle: Handle) -> Plugin:
        build = self.factory or self.plugin_class
        plugin: Plugin = build(args, handle)
        return plugin

    @property
    def points(self) -> frozenset[str]:
        return points_of(self.plugin_class)
