"""The node index (vector/topology.py) stays equal to a from-scratch computation while the cache changes.

It follows the snapshot through ``Snapshot.changes`` (one row refresh per re-cloned node), through new node lists
(nodes added or removed, zone order changed) and through a restarted log; under hostname churn its domain ids are
renumbered instead of growing without bound.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from plugins.support import pod

from berth.schedule import cache as cache_mod
from berth.schedule.framework.types import NodeInfo, PodInfo
from berth.schedule.vector import topology

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def raw_node(name: str, zone: str | None) -> dict[str, Any]:
    labels = {HOST: name}
    if zone is not None:
        labels[ZONE] = zone
    return {
        "metadata": {"name": name, "labels": labels},
        "status": {"allocatable": {"pods": 100, "cpu": "4", "memory": "8Gi"}},
    }


def web_count(node: NodeInfo) -> int:
    return sum(1 for p in node.pods if p.labels.get("app") == "web")


def check(index: topology.NodeIndex, nodes: list[NodeInfo]) -> None:
    """Every column equals what a fresh index computes for the same nodes."""
    fresh = topology.NodeIndex()
    fresh.sync(nodes)
    assert [n.name for n in index.nodes] == [n.name for n in nodes]
    assert index.counts("web", web_count).tolist() == fresh.counts("web", web_count).tolist()
    assert index.total("web", web_count) == sum(web_count(n) for n in nodes)
    for key in (ZONE, HOST):
        mine, theirs = index.domain(key), fresh.domain(key)
        assert [mine.values[i] if i >= 0 else None for i in mine.col.tolist()] == [
            theirs.values[i] if i >= 0 else None for i in theirs.col.tolist()
        ]
        by_value = dict(zip(mine.values, index.domain_sums(key, "web", web_count).tolist(), strict=True))
        want: dict[str, int] = {}
        for n in nodes:
            if key in n.labels:
                want[n.labels[key]] = want.get(n.labels[key], 0) + web_count(n)
        assert {v: c for v, c in by_value.items() if v in want} == want
        assert all(c == 0 for v, c in by_value.items() if v not in want)
        present = index.domain(key).present()
        assert {mine.values[i] for i in np.flatnonzero(present).tolist()} == set(want)


ops = st.lists(
    st.tuples(st.sampled_from(["assume", "forget", "add-node", "remove-node", "relabel"]), st.integers(0, 7)),
    max_size=30,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=ops, log_limit=st.sampled_from([3, 1000]))
def test_index_follows_the_cache(steps: list[tuple[str, int]], log_limit: int) -> None:
    old_limit = cache_mod.CHANGES_LIMIT
    cache_mod.CHANGES_LIMIT = log_limit  # a small limit restarts the log often: the index must resync
    try:
        c = cache_mod.Cache()
        for i in range(4):
            c.add_node(raw_node(f"n{i}", f"z{i % 2}"))
        snap = cache_mod.Snapshot()
        index = topology.NodeIndex()
        assumed: list[PodInfo] = []
        for step, (what, k) in enumerate(steps):
            names = c.node_names()
            if what == "assume" and names:
                p = pod(f"p{step}", labels={"app": "web" if k % 3 else "db"}).with_node(names[k % len(names)])
                c.assume_pod(p)
                assumed.append(p)
            elif what == "forget" and assumed:
                c.forget_pod(assumed.pop(k % len(assumed)))
            elif what == "add-node":
                c.add_node(raw_node(f"n{4 + step}", None if k == 0 else f"z{k % 3}"))
            elif what == "remove-node" and names:
                c.remove_node(names[k % len(names)])
            elif what == "relabel" and names:
                c.update_node(raw_node(names[k % len(names)], f"z{k % 4}"))
            c.update_snapshot(snap)
            nodes = list(snap.node_infos())
            index.sync(snap.node_infos(), snap)
            check(index, nodes)
    finally:
        cache_mod.CHANGES_LIMIT = old_limit


def test_an_assume_refreshes_one_row() -> None:
    c = cache_mod.Cache()
    for i in range(50):
        c.add_node(raw_node(f"n{i}", f"z{i % 3}"))
    snap = c.update_snapshot(cache_mod.Snapshot())
    index = topology.NodeIndex()
    index.sync(snap.node_infos(), snap)
    index.counts("web", web_count)
    before = index.refreshes
    c.assume_pod(pod("p", labels={"app": "web"}).with_node("n7"))
    c.update_snapshot(snap)
    index.sync(snap.node_infos(), snap)
    assert index.refreshes == before + 1
    assert index.counts("web", web_count)[index.row_of["n7"]] == 1


def test_hostname_ids_are_renumbered_under_churn() -> None:
    c = cache_mod.Cache()
    snap = cache_mod.Snapshot()
    index = topology.NodeIndex()
    for i in range(300):
        c.add_node(raw_node(f"n{i}", "z"))
        if i >= 5:
            c.remove_node(f"n{i - 5}")
        c.update_snapshot(snap)
        index.sync(snap.node_infos(), snap)
        index.domain(HOST)
    assert index.domain(HOST).size <= 2 * 5 + 64 + 1
    check(index, list(snap.node_infos()))
