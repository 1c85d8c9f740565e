"""The scheduler's one cache: every node, every pod on a node, and the pods this scheduler has *assumed*.

Why it exists: a scheduling cycle must see its own earlier decisions before the API server confirms them, or two
pods in a row would be placed as if the first had never happened. Upstream keeps exactly one cache per process
(``pkg/scheduler/backend/cache``); every profile reads the same one, so pods assumed by profile A count for B.

Pod states (upstream ``cache/interface.go``)::

      +-------------------------------------------+  +----+
      |                            Add            |  |    |
      |                                           |  |    | Update
      +      Assume                Add            v  v    |
    Initial +--------> Assumed +------------+---> Added <--+
      ^                +   +               |       +
      |                |   |               |       |
      |         Forget |   |  Expire       |       | Remove
      |                |   |  (if told)    |       |
      +----------------+   +---------------+-------+--> gone

- Assume: the scheduler chose a node; the pod counts on it from now on.
- FinishBinding: the binder returned; an assumed pod may now expire -- but only if the cache was given a TTL
  (``assumed_ttl_seconds``) and :meth:`Cache.cleanup_assumed_pods` is called. Simulation never expires.
- Add (from the informer or the simulation's echo): confirms an assumed pod (moving it if the API put it elsewhere)
  or adds a pod someone else bound -- whatever its scheduler name, so other schedulers' placements count.
- Forget: binding failed; the pod leaves its node.

Snapshots: :meth:`Cache.update_snapshot` refreshes a :class:`Snapshot` in place, re-cloning only the nodes that
changed since the last call, so a cycle costs O(changed nodes), not O(all nodes). The node order in a snapshot
interleaves zones (upstream ``nodeTree``): zone A nodes 1-4 and zone B nodes 5-6 list as 1,5,2,6,3,4, so the
rotating filter start spreads over zones.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass

from berth.kube.errors import InputError
from berth.kube.objects import Obj
from berth.schedule.framework.types import ImageState, NodeInfo, PodInfo, normalized_image_name

ZONE_LABEL = "topology.kubernetes.io/zone"
REGION_LABEL = "topology.kubernetes.io/region"
LEGACY_ZONE_LABEL = "failure-domain.beta.kubernetes.io/zone"
LEGACY_REGION_LABEL = "failure-domain.beta.kubernetes.io/region"
CHANGES_LIMIT = 65_536  # Snapshot.changes entries kept before the log restarts (readers then resync)


def zone_key(labels: dict[str, str]) -> str:
    """Upstream ``utilnode.GetZoneKey``: region and zone joined; "" when the node has neither."""
    region = labels.get(REGION_LABEL) or labels.get(LEGACY_REGION_LABEL) or ""
    zone = labels.get(ZONE_LABEL) or labels.get(LEGACY_ZONE_LABEL) or ""
    if not region and not zone:
        return ""
    return f"{region}:\x00:{zone}"


class NodeTree:
    """Node names grouped by zone in insertion order; :meth:`ordered` interleaves the zones round-robin."""

    def __init__(self) -> None:
        self._zones: dict[str, list[str]] = {}
        self._zone_of: dict[str, str] = {}

    def add(self, name: str, labels: dict[str, str]) -> None:
        if name in self._zone_of:
            return
        zone = zone_key(labels)
        self._zones.setdefault(zone, []).append(name)
        self._zone_of[name] = zone

    def remove(self, name: str) -> None:
        zone = self._zone_of.pop(name, None)
        if zone is None:
            return
        names = self._zones[zone]
        names.remove(name)
        if not names:
            del self._zones[zone]

    def update(self, name: str, labels: dict[str, str]) -> bool:
        """Re-file a node whose zone labels changed; True if its place moved."""
        if self._zone_of.get(name) == zone_key(labels):
            return False
        self.remove(name)
        self.add(name, labels)
        return True

    def ordered(self) -> list[str]:
        zones = list(self._zones.values())
        if len(zones) == 1:
            return list(zones[0])
        out: list[str] = []
        depth = 0
        remaining = sum(len(z) for z in zones)
        while len(out) < remaining:
            for names in zones:
                if depth < len(names):
                    out.append(names[depth])
            depth += 1
        return out

    def __len__(self) -> int:
        return len(self._zone_of)


def affinity_flags(info: NodeInfo) -> tuple[bool, bool]:
    """(hosts a pod with pod (anti-)affinity, hosts a pod with *required* pod anti-affinity) -- upstream's
    ``PodsWithAffinity`` / ``PodsWithRequiredAntiAffinity`` membership (counted by the NodeInfo as pods come and
    go: a node with tens of thousands of pods is not walked on every assume)."""
    return info.pods_with_affinity > 0, info.pods_with_required_anti_affinity > 0


class Snapshot:
    """What one scheduling cycle sees: node infos (clones, never mutated during the cycle) in zone order.

    Implements :class:`berth.schedule.framework.interface.Snapshot`, plus upstream's two shortcut lists for
    inter-pod affinity: the nodes hosting pods that have pod (anti-)affinity, and those hosting pods with required
    anti-affinity -- so a plugin need not walk every pod of the cluster to find the few that constrain others.
    """

    __slots__ = (
        "_affinity_lists",
        "_by_name",
        "_index",
        "_list",
        "_with_affinity",
        "_with_required_anti",
        "changes",
        "generation",
    )

    def __init__(self) -> None:
        self._list: list[NodeInfo] = []
        self._by_name: dict[str, NodeInfo] = {}
        self._index: dict[str, int] = {}
        self._with_affinity: set[str] = set()
        self._with_required_anti: set[str] = set()
        self._affinity_lists: tuple[list[NodeInfo], list[NodeInfo]] | None = None
        self.generation = -1
        # Names re-cloned or dropped by in-place updates, oldest first, so derived per-node columns
        # (berth.schedule.vector.topology) refresh only those. Readers keep a position; when the list object is
        # replaced (it is, when it grows past CHANGES_LIMIT) or node_infos() returns a new list, they resync all.
        self.changes: list[str] = []

    def node_infos(self) -> Sequence[NodeInfo]:
        return self._list

    def have_pods_with_affinity(self) -> Sequence[NodeInfo]:
        """Nodes (in snapshot order) hosting at least one pod with podAffinity or podAntiAffinity."""
        return self._lists()[0]

    def have_pods_with_required_anti_affinity(self) -> Sequence[NodeInfo]:
        """Nodes (in snapshot order) hosting at least one pod with required podAntiAffinity."""
        return self._lists()[1]

    def _lists(self) -> tuple[list[NodeInfo], list[NodeInfo]]:
        if self._affinity_lists is None:
            aff, anti = self._with_affinity, self._with_required_anti
            self._affinity_lists = (
                [n for n in self._list if n.name in aff] if aff else [],
                [n for n in self._list if n.name in anti] if anti else [],
            )
        return self._affinity_lists

    def _note_affinity(self, name: str, info: NodeInfo | None) -> None:
        had = name in self._with_affinity or name in self._with_required_anti
        self._with_affinity.discard(name)
        self._with_required_anti.discard(name)
        if info is not None:
            aff, anti = affinity_flags(info)
            if aff:
                self._with_affinity.add(name)
            if anti:
                self._with_required_anti.add(name)
            if had or aff:
                self._affinity_lists = None
        elif had:
            self._affinity_lists = None

    def get(self, node_name: str) -> NodeInfo | None:
        return self._by_name.get(node_name)

    def nodes_named(self, names: Collection[str]) -> list[NodeInfo]:
        """The snapshot's nodes among ``names``, in snapshot order (names it does not hold are left out): what a
        PreFilterResult narrows the search to. A few names out of many nodes (a DaemonSet pod's one) are looked
        up rather than found by a walk over every node."""
        if len(names) * 8 >= len(self._list):
            return [n for n in self._list if n.name in names]
        index = self._index
        rows = sorted(i for name in names if (i := index.get(name)) is not None)
        return [self._list[i] for i in rows]

    def num_nodes(self) -> int:
        return len(self._list)

    def __iter__(self) -> Iterator[NodeInfo]:
        return iter(self._list)


@dataclass(slots=True)
class _PodState:
    pod: PodInfo
    assumed: bool = False
    binding_finished: bool = False
    deadline: float | None = None


class Cache:
    """Nodes, pods bound to them and assumed pods. Thread-safe: informer threads may feed it while a cycle runs.

    Args:
        clock: seconds, monotonic; only used for assumed-pod expiry.
        assumed_ttl_seconds: after FinishBinding an assumed pod that the API never confirmed expires after this
            long; ``None`` (the default, and upstream's since 1.27) means never.
    """

    def __init__(
        self, clock: Callable[[], float] | None = None, assumed_ttl_seconds: float | None = None
    ) -> None:
        self._lock = threading.RLock()
        self._clock = clock or (lambda: 0.0)
        self._ttl = assumed_ttl_seconds
        self._nodes: dict[str, NodeInfo] = {}
        self._removed_nodes: set[str] = (
            set()
        )  # deleted nodes still holding pods (upstream keeps them until empty)
        self._pods: dict[str, _PodState] = {}
        self._tree = NodeTree()
        self._dirty: set[str] = set()
        self._order_changed = True
        self._image_nodes: dict[str, set[str]] = {}
        self._image_size: dict[str, int] = {}
        self._images_dirty = False
        self._generation = 0

    # --- nodes ------------------------------------------------------------------------------------------------

    def add_node(self, node: Obj, where: str | None = None) -> NodeInfo:
        """Add (or replace) a node. Bad allocatable quantities raise InputError naming ``where``."""
        with self._lock:
            fresh = NodeInfo(node, where)
            name = fresh.name
            if not name:
                raise InputError("node has no metadata.name", where)
            old = self._nodes.get(name)
            if old is not None:
                return self._replace_node(old, fresh)
            self._nodes[name] = fresh
            self._removed_nodes.discard(name)
            self._tree.add(name, fresh.labels)
            self._set_images(fresh)
            self._touch(name, order=True)
            return fresh

    def update_node(self, node: Obj, where: str | None = None) -> NodeInfo:
        with self._lock:
            fresh = NodeInfo(node, where)
            old = self._nodes.get(fresh.name)
            if old is None:
                return self.add_node(node, where)
            return self._replace_node(old, fresh)

    def _replace_node(self, old: NodeInfo, fresh: NodeInfo) -> NodeInfo:
        # Keep the pods and their sums; take everything node-derived from the new object.
        old.node = fresh.node
        old.labels = fresh.labels
        old.taints = fresh.taints
        old.unschedulable = fresh.unschedulable
        old.allocatable = fresh.allocatable
        old.generation += 1
        was_removed = old.name in self._removed_nodes
        self._removed_nodes.discard(old.name)
        if was_removed:
            self._tree.add(old.name, old.labels)
            self._order_changed = True
        elif self._tree.update(old.name, old.labels):
            self._order_changed = True
        self._set_images(old)
        self._touch(old.name)
        return old

    def remove_node(self, name: str) -> None:
        """Remove a node. Pods still on it keep it alive (outside snapshots) until they are removed too."""
        with self._lock:
            info = self._nodes.get(name)
            if info is None:
                return
            self._tree.remove(name)
            self._drop_images(name)
            if info.pods:
                self._removed_nodes.add(name)
            else:
                del self._nodes[name]
            self._touch(name, order=True)

    def _set_images(self, info: NodeInfo) -> None:
        self._drop_images(info.name)
        for names, size in info.node_images():
            for raw in names:
                image = normalized_image_name(raw)
                self._image_nodes.setdefault(image, set()).add(info.name)
                self._image_size[image] = size
                self._images_dirty = True

    def _drop_images(self, node_name: str) -> None:
        for image in [i for i, nodes in self._image_nodes.items() if node_name in nodes]:
            nodes = self._image_nodes[image]
            nodes.discard(node_name)
            self._images_dirty = True
            if not nodes:
                del self._image_nodes[image]
                self._image_size.pop(image, None)

    def _refresh_image_states(self) -> None:
        """Rebuild every node's ``image_states`` (sizes and how many nodes hold each image)."""
        per_node: dict[str, dict[str, ImageState]] = {}
        for image, nodes in self._image_nodes.items():
            state = ImageState(self._image_size.get(image, 0), len(nodes))
            for n in nodes:
                per_node.setdefault(n, {})[image] = state
        for name, info in self._nodes.items():
            states = per_node.get(name, {})
            if states or info.image_states:
                info.image_states = states
                self._dirty.add(name)
        self._images_dirty = False

    # --- pods -------------------------------------------------------------------------------------------------

    def assume_pod(self, pod: PodInfo) -> None:
        """Count ``pod`` (already carrying its chosen ``node_name``) on that node before the API confirms it."""
        with self._lock:
            if pod.key in self._pods:
                raise ValueError(f"pod {pod.key} is in the cache, so can't be assumed")
            self._add_to_node(pod)
            self._pods[pod.key] = _PodState(pod, assumed=True)

    def finish_binding(self, pod: PodInfo) -> None:
        """The binder returned for an assumed pod: start its expiry clock (if a TTL is configured)."""
        with self._lock:
            st = self._pods.get(pod.key)
            if st is not None and st.assumed:
                st.binding_finished = True
                if self._ttl is not None:
                    st.deadline = self._clock() + self._ttl

    def forget_pod(self, pod: PodInfo) -> None:
        """Binding failed: the assumed pod leaves its node."""
        with self._lock:
            st = self._pods.get(pod.key)
            if st is None or not st.assumed:
                return
            self._remove_from_node(st.pod)
            del self._pods[pod.key]

    def is_assumed(self, key: str) -> bool:
        with self._lock:
            st = self._pods.get(key)
            return st is not None and st.assumed

    def add_pod(self, pod: PodInfo) -> None:
        """A bound pod was observed: confirm an assumption (moving it if bound elsewhere) or add it."""
        with self._lock:
            st = self._pods.get(pod.key)
            if st is not None:
                info = self._nodes.get(pod.node_name)
                if st.pod is pod and info is not None and info.pods and info.pods[-1] is pod:
                    # The very pod assumed, still last on its node (the simulation's own echo): removing and
                    # re-adding it would leave the node exactly as it is, so only the pod's state changes.
                    self._pods[pod.key] = _PodState(pod)
                    return
                # Confirmation or update: swap in the observed copy (it may sit on another node than assumed).
                self._remove_from_node(st.pod)
                self._add_to_node(pod)
                self._pods[pod.key] = _PodState(pod)
                return
            self._add_to_node(pod)
            self._pods[pod.key] = _PodState(pod)

    def update_pod(self, pod: PodInfo) -> None:
        with self._lock:
            self.add_pod(pod)

    def remove_pod(self, key: str) -> PodInfo | None:
        with self._lock:
            st = self._pods.pop(key, None)
            if st is None:
                return None
            self._remove_from_node(st.pod)
            return st.pod

    def get_pod(self, key: str) -> PodInfo | None:
        with self._lock:
            st = self._pods.get(key)
            return st.pod if st is not None else None

    def cleanup_assumed_pods(self) -> list[PodInfo]:
        """Expire assumed pods whose binding finished more than the TTL ago; returns them."""
        with self._lock:
            now = self._clock()
            gone = [
                st.pod
                for st in self._pods.values()
                if st.assumed and st.binding_finished and st.deadline is not None and st.deadline <= now
            ]
            for pod in gone:
                self._remove_from_node(pod)
                del self._pods[pod.key]
            return gone

    def _add_to_node(self, pod: PodInfo) -> None:
        info = self._nodes.get(pod.node_name)
        if info is None:
            # A pod bound to a node we have not seen yet (informer order): keep it on a placeholder.
            info = NodeInfo({"metadata": {"name": pod.node_name}})
            self._nodes[pod.node_name] = info
            self._removed_nodes.add(pod.node_name)
        info.add_pod(pod)
        self._touch(pod.node_name)

    def _remove_from_node(self, pod: PodInfo) -> None:
        info = self._nodes.get(pod.node_name)
        if info is None:
            return
        info.remove_pod(pod.key)
        self._touch(pod.node_name)
        if not info.pods and pod.node_name in self._removed_nodes:
            del self._nodes[pod.node_name]
            self._removed_nodes.discard(pod.node_name)

    def _touch(self, name: str, order: bool = False) -> None:
        self._dirty.add(name)
        self._generation += 1
        if order:
            self._order_changed = True

    # --- views ------------------------------------------------------------------------------------------------

    def node_count(self) -> int:
        with self._lock:
            return len(self._tree)

    def node_names(self) -> list[str]:
        """Live node names in snapshot (zone-interleaved) order."""
        with self._lock:
            return self._tree.ordered()

    def node_info(self, name: str) -> NodeInfo | None:
        """The cache's own (mutable) NodeInfo; plugins must use the snapshot instead."""
        with self._lock:
            return self._nodes.get(name)

    def pod_count(self) -> int:
        with self._lock:
            return len(self._pods)

    def update_snapshot(self, snap: Snapshot) -> Snapshot:
        """Bring ``snap`` up to date, cloning only nodes that changed since it was last updated."""
        with self._lock:
            if self._images_dirty:
                self._refresh_image_states()
            if snap.generation == self._generation:
                return snap
            full = snap.generation < 0
            if full:
                snap._by_name = {}
            for name in self._nodes if full else self._dirty:
                info = self._nodes.get(name)
                if info is None or name in self._removed_nodes:
                    snap._by_name.pop(name, None)
                    snap._note_affinity(name, None)
                    snap.changes.append(name)
                    continue
                clone = info.clone()
                snap.changes.append(name)
                snap._by_name[name] = clone
                snap._note_affinity(name, clone)
                idx = snap._index.get(name)
                if idx is not None and not self._order_changed and not full:
                    snap._list[idx] = clone
            if self._order_changed or full:
                order = self._tree.ordered()
                snap._list = [snap._by_name[n] for n in order]
                snap._index = {n: i for i, n in enumerate(order)}
                snap._affinity_lists = None
                self._order_changed = False
            self._dirty.clear()
            if len(snap.changes) > CHANGES_LIMIT:
                snap.changes = []
            snap.generation = self._generation
            return snap
