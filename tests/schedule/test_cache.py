"""Cache: the assumed-pod state machine, incremental snapshots, zone interleaving, image states."""

from __future__ import annotations

import pytest
from runtime_support import node, pod_info

from berth.kube.errors import InputError
from berth.schedule.cache import Cache, NodeTree, Snapshot
from berth.schedule.framework.types import ImageState
from berth.schedule.queue import VirtualClock


def names(snap: Snapshot) -> list[str]:
    return [n.name for n in snap.node_infos()]


def test_assume_counts_the_pod_then_forget_removes_it() -> None:
    cache = Cache()
    cache.add_node(node("n1"))
    snap = Snapshot()
    p = pod_info("a").with_node("n1")
    cache.assume_pod(p)
    assert cache.is_assumed("default/a")
    info = cache.update_snapshot(snap).get("n1")
    assert info is not None and info.requested == {"cpu": 100, "memory": 500 * 2**20}
    cache.forget_pod(p)
    info = cache.update_snapshot(snap).get("n1")
    assert info is not None and info.pods == [] and info.requested["cpu"] == 0


def test_add_confirms_an_assumed_pod_even_on_another_node() -> None:
    cache = Cache()
    cache.add_node(node("n1"))
    cache.add_node(node("n2"))
    cache.assume_pod(pod_info("a").with_node("n1"))
    cache.add_pod(pod_info("a", node_name="n2"))
    assert not cache.is_assumed("default/a")
    snap = cache.update_snapshot(Snapshot())
    assert [len(n.pods) for n in snap.node_infos()] == [0, 1]


@pytest.mark.parametrize(
    "echo_first", [True, False], ids=["echo-of-the-last-assumed", "echo-of-an-earlier-one"]
)
def test_confirming_the_assumed_object_leaves_the_node_as_remove_and_add_would(echo_first: bool) -> None:
    """The simulation echoes the very PodInfo it assumed; the cache then keeps the node as it is (the pod is last on
    it) or moves the pod to the end (another pod was assumed after it), as removing and re-adding does."""
    cache = Cache()
    cache.add_node(node("n1"))
    a, b = pod_info("a").with_node("n1"), pod_info("b").with_node("n1")
    cache.assume_pod(a)
    if not echo_first:
        cache.assume_pod(b)
    cache.add_pod(a)
    assert not cache.is_assumed("default/a")
    info = cache.update_snapshot(Snapshot()).get("n1")
    assert info is not None
    assert [p.name for p in info.pods] == (["a"] if echo_first else ["b", "a"])
    assert info.requested["cpu"] == (100 if echo_first else 200)
    cache.remove_pod("default/a")
    info = cache.update_snapshot(Snapshot()).get("n1")
    assert info is not None and [p.name for p in info.pods] == ([] if echo_first else ["b"])


def test_assumed_pods_expire_only_when_a_ttl_is_given() -> None:
    clock = VirtualClock()
    for ttl, expected in ((None, []), (30.0, ["default/a"])):
        cache = Cache(clock=clock, assumed_ttl_seconds=ttl)
        cache.add_node(node("n1"))
        p = pod_info("a").with_node("n1")
        cache.assume_pod(p)
        cache.finish_binding(p)
        clock.advance(60)
        assert [x.key for x in cache.cleanup_assumed_pods()] == expected


def test_assuming_a_pod_twice_is_refused() -> None:
    cache = Cache()
    cache.add_node(node("n1"))
    cache.assume_pod(pod_info("a").with_node("n1"))
    with pytest.raises(ValueError, match="can't be assumed"):
        cache.assume_pod(pod_info("a").with_node("n1"))


def test_bound_pods_of_any_scheduler_count() -> None:
    cache = Cache()
    cache.add_node(node("n1"))
    cache.add_pod(pod_info("x", scheduler="someone-else", node_name="n1"))
    info = cache.update_snapshot(Snapshot()).get("n1")
    assert info is not None and [p.key for p in info.pods] == ["default/x"]


def test_snapshot_reclones_only_changed_nodes() -> None:
    cache = Cache()
    for n in ("n1", "n2", "n3"):
        cache.add_node(node(n))
    snap = cache.update_snapshot(Snapshot())
    before = {n.name: n for n in snap.node_infos()}
    cache.add_pod(pod_info("a", node_name="n2"))
    cache.update_snapshot(snap)
    after = {n.name: n for n in snap.node_infos()}
    assert after["n1"] is before["n1"] and after["n3"] is before["n3"]
    assert after["n2"] is not before["n2"] and len(after["n2"].pods) == 1
    assert len(before["n2"].pods) == 0  # the old snapshot clone was never mutated


def test_snapshot_follows_node_removal_and_readdition() -> None:
    cache = Cache()
    for n in ("n1", "n2"):
        cache.add_node(node(n))
    snap = cache.update_snapshot(Snapshot())
    cache.add_pod(pod_info("a", node_name="n1"))
    cache.remove_node("n1")
    assert names(cache.update_snapshot(snap)) == ["n2"]
    assert snap.get("n1") is None
    cache.add_node(node("n1"))  # comes back with its pod still counted
    info = cache.update_snapshot(snap).get("n1")
    assert info is not None and len(info.pods) == 1


def test_zones_interleave_in_node_order() -> None:
    tree = NodeTree()
    for i in range(1, 7):
        tree.add(str(i), {"topology.kubernetes.io/zone": "A" if i <= 4 else "B"})
    assert tree.ordered() == ["1", "5", "2", "6", "3", "4"]
    tree.update("5", {"topology.kubernetes.io/zone": "A"})
    assert tree.ordered() == ["1", "6", "2", "3", "4", "5"]


def test_snapshot_uses_zone_order() -> None:
    cache = Cache()
    for i in range(1, 5):
        cache.add_node(node(f"n{i}", labels={"topology.kubernetes.io/zone": "A" if i <= 2 else "B"}))
    assert names(cache.update_snapshot(Snapshot())) == ["n1", "n3", "n2", "n4"]


def test_image_states_count_nodes_per_normalised_image() -> None:
    cache = Cache()
    cache.add_node(node("n1", images=[(["nginx", "docker.io/nginx:1.0"], 300)]))
    cache.add_node(node("n2", images=[(["nginx:latest"], 300)]))
    cache.add_node(node("n3"))
    snap = cache.update_snapshot(Snapshot())
    n1, n2, n3 = (snap.get(n) for n in ("n1", "n2", "n3"))
    assert n1 is not None and n2 is not None and n3 is not None
    assert n1.image_states == {
        "nginx:latest": ImageState(300, 2),
        "docker.io/nginx:1.0": ImageState(300, 1),
    }
    assert n2.image_states == {"nginx:latest": ImageState(300, 2)}
    assert n3.image_states == {}
    cache.remove_node("n2")
    n1 = cache.update_snapshot(snap).get("n1")
    assert n1 is not None and n1.image_states["nginx:latest"] == ImageState(300, 1)


def test_bad_allocatable_names_the_place() -> None:
    with pytest.raises(
        InputError, match=r"nodes.yaml, document 2: status.allocatable.cpu: invalid quantity '2x'"
    ):
        Cache().add_node(node("n1", cpu="2x"), where="nodes.yaml, document 2")


def test_snapshot_lists_nodes_hosting_pods_with_pod_affinity() -> None:
    anti = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "kubernetes.io/hostname"}
            ]
        }
    }
    preferred = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": []}}
    node_only = {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}
    }
    cache = Cache()
    for n in ("n1", "n2", "n3", "n4"):
        cache.add_node(node(n))
    snap = cache.update_snapshot(Snapshot())
    assert snap.have_pods_with_affinity() == []
    cache.add_pod(pod_info("a", node_name="n3", affinity=anti))
    cache.add_pod(pod_info("b", node_name="n1", affinity=preferred))
    cache.add_pod(pod_info("c", node_name="n2", affinity=node_only))
    cache.update_snapshot(snap)
    assert [n.name for n in snap.have_pods_with_affinity()] == ["n1", "n3"]
    assert [n.name for n in snap.have_pods_with_required_anti_affinity()] == ["n3"]
    assert snap.have_pods_with_affinity()[1] is snap.get("n3")  # the cycle's clones, not stale ones
    cache.remove_pod("default/a")
    cache.update_snapshot(snap)
    assert [n.name for n in snap.have_pods_with_affinity()] == ["n1"]
    assert snap.have_pods_with_required_anti_affinity() == []


def test_nodes_named_keeps_snapshot_order_and_drops_unknown_names() -> None:
    """A PreFilterResult's names, in the snapshot's order whichever way they are found (looked up when few,
    walked when many)."""
    cache = Cache()
    for i in range(40):
        cache.add_node(node(f"n{i:02}"))
    snap = cache.update_snapshot(Snapshot())
    few = snap.nodes_named({"n30", "n03", "missing"})
    assert [n.name for n in few] == ["n03", "n30"] and few[0] is snap.get("n03")
    many = {f"n{i:02}" for i in range(0, 40, 2)}
    assert [n.name for n in snap.nodes_named(many)] == sorted(many)


def test_node_info_counts_pods_with_affinity_through_clones() -> None:
    anti = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "kubernetes.io/hostname"}
            ]
        }
    }
    cache = Cache()
    cache.add_node(node("n1"))
    cache.add_pod(pod_info("a", node_name="n1", affinity=anti))
    cache.add_pod(pod_info("b", node_name="n1"))
    info = cache.update_snapshot(Snapshot()).get("n1")
    assert info is not None and (info.pods_with_affinity, info.pods_with_required_anti_affinity) == (1, 1)
    clone = info.clone()
    clone.remove_pod("default/a")
    assert (clone.pods_with_affinity, clone.pods_with_required_anti_affinity) == (0, 0)
    assert (info.pods_with_affinity, info.pods_with_required_anti_affinity) == (1, 1)
