"""Queueing hints of the in-tree plugins (kube-scheduler 1.35 registers a ``ClusterEventWithHint`` for each): which
events each plugin registers, and for each hint the changes that retry a pod it rejected (QUEUE) and those that
leave it waiting (QUEUE_SKIP); then end to end through the Scheduler's queue."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from runtime_support import node as node_obj
from runtime_support import pod as pod_obj

from berth.schedule import config as schedconfig
from berth.schedule.framework import interface as fw
from berth.schedule.framework.types import PodInfo
from berth.schedule.plugins import node_affinity as na
from berth.schedule.plugins import node_name as nn
from berth.schedule.plugins import node_ports as np_
from berth.schedule.plugins import node_resources_fit as fit
from berth.schedule.plugins import node_unschedulable as nu
from berth.schedule.plugins import pod_topology_spread as pts
from berth.schedule.plugins import taint_toleration as tt
from berth.schedule.queue import Where
from berth.schedule.scheduler import Scheduler

from .support import FakeHandle, container, node, pod

QUEUE, SKIP = fw.QueueingHint.QUEUE, fw.QueueingHint.QUEUE_SKIP


def registered(plugin: fw.EnqueueExtensions) -> list[tuple[fw.ClusterEvent, bool]]:
    """(event, has a hint) as the plugin registers them."""
    out = []
    for e in plugin.events_to_register():
        assert isinstance(e, fw.ClusterEventWithHint)
        out.append((e.event, e.hint is not None))
    return out


def hint_of(plugin: fw.EnqueueExtensions, resource: str, action: str) -> fw.QueueingHintFn:
    for e in plugin.events_to_register():
        assert isinstance(e, fw.ClusterEventWithHint)
        if e.event == fw.ClusterEvent(resource, action) and e.hint is not None:
            return e.hint
    raise AssertionError(f"no hint for {resource}/{action}")


def raw_node(name: str = "n", **kw: Any) -> dict[str, Any]:
    return node(name, **kw).node


def changed(obj: Mapping[str, Any], path: Sequence[str], value: Any) -> dict[str, Any]:
    """A deep copy of ``obj`` with ``value`` at ``path`` (what an update hands the hints: a new object)."""
    out = copy.deepcopy(dict(obj))
    at = out
    for key in path[:-1]:
        at = at.setdefault(key, {})
    at[path[-1]] = value
    return out


def with_status(p: PodInfo, **status: Any) -> dict[str, Any]:
    return changed(p.pod, ("status",), dict(status))


# --- NodeResourcesFit ----------------------------------------------------------------------------------------------


def fit_plugin(args: dict[str, Any] | None = None) -> fit.NodeResourcesFit:
    decoded, problems = fit.NodeResourcesFitArgs.decode(args or {}, "args")
    assert problems == []
    return fit.NodeResourcesFit(decoded, FakeHandle())


def test_fit_registers_pod_and_node_events_with_hints() -> None:
    assert registered(fit_plugin()) == [
        (fw.ClusterEvent("Pod", "Delete"), True),
        (fw.ClusterEvent("Pod", "UpdatePodScaleDown"), True),
        (fw.ClusterEvent("Node", "Add"), True),
        (fw.ClusterEvent("Node", "UpdateNodeAllocatable"), True),
    ]


def test_fit_deleted_pod_frees_room_only_if_it_was_assigned_or_nominated() -> None:
    hint = hint_of(fit_plugin(), "Pod", "Delete")
    target = pod("target", containers=[container({"cpu": "1"})])
    assert hint(target, pod("bound", node_name="n1").pod, None) is QUEUE
    assert hint(target, with_status(pod("nominated"), nominatedNodeName="n1"), None) is QUEUE
    assert hint(target, pod("pending").pod, None) is SKIP


def test_fit_scale_down_helps_only_the_pod_itself_or_with_a_resource_it_requests() -> None:
    hint = hint_of(fit_plugin(), "Pod", "UpdatePodScaleDown")
    target = pod("target", containers=[container({"cpu": "1", "example.com/gpu": "1"})])
    # Its own scale-down (a pending pod's update reaches only that pod).
    assert hint(target, target.pod, target.pod) is QUEUE

    def scaled(name: str, before: Mapping[str, str], after: Mapping[str, str], node_name: str = "n1") -> Any:
        old = pod(name, node_name=node_name, containers=[container(before)]).pod
        return old, pod(name, node_name=node_name, containers=[container(after)]).pod

    assert hint(target, *scaled("cpu", {"cpu": "2"}, {"cpu": "1"})) is QUEUE
    assert hint(target, *scaled("gpu", {"example.com/gpu": "2"}, {"example.com/gpu": "1"})) is QUEUE
    # A resource the target does not request, or a pod holding no room.
    assert hint(target, *scaled("memory", {"memory": "2Gi"}, {"memory": "1Gi"})) is SKIP
    assert hint(target, *scaled("pending", {"cpu": "2"}, {"cpu": "1"}, node_name="")) is SKIP


def test_fit_added_node_must_fit_the_pod_when_empty() -> None:
    hint = hint_of(fit_plugin(), "Node", "Add")
    target = pod("target", containers=[container({"cpu": "2"})])
    assert hint(target, None, raw_node(allocatable={"cpu": "4", "memory": "8Gi", "pods": 110})) is QUEUE
    assert hint(target, None, raw_node(allocatable={"cpu": "1", "memory": "8Gi", "pods": 110})) is SKIP
    assert hint(target, None, raw_node(allocatable={"cpu": "4", "memory": "8Gi", "pods": 0})) is SKIP


def test_fit_updated_node_must_grow_something_the_pod_requests() -> None:
    hint = hint_of(fit_plugin(), "Node", "UpdateNodeAllocatable")
    target = pod("target", containers=[container({"cpu": "2"})])
    small = raw_node(allocatable={"cpu": "1", "memory": "8Gi", "pods": 110})
    grown = changed(small, ("status", "allocatable", "cpu"), "4")
    assert hint(target, small, grown) is QUEUE
    assert hint(target, grown, changed(grown, ("status", "allocatable", "memory"), "16Gi")) is SKIP
    assert hint(target, grown, changed(grown, ("status", "allocatable", "pods"), 200)) is QUEUE
    # Still too small, whatever grew.
    assert hint(target, small, changed(small, ("status", "allocatable", "cpu"), "1500m")) is SKIP
    # berth's generic Node/Update without the old object counts as an add.
    assert hint(target, None, grown) is QUEUE


def test_fit_node_hint_checks_ignored_resources_too_as_upstream_is_fit() -> None:
    """Filter ignores ``ignoredResources``, upstream's hint does not: a node lacking one never retries the pod."""
    plugin = fit_plugin({"ignoredResources": ["example.com/foo"]})
    target = pod("target", containers=[container({"cpu": "1", "example.com/foo": "1"})])
    assert plugin.filter(fw.CycleState(), target, node(allocatable={"cpu": "4", "pods": 110})).is_success
    assert (
        hint_of(plugin, "Node", "Add")(target, None, raw_node(allocatable={"cpu": "4", "pods": 110})) is SKIP
    )


# --- NodeAffinity --------------------------------------------------------------------------------------------------


def zone_pod(zone: str = "a", **kw: Any) -> PodInfo:
    term = {"matchExpressions": [{"key": "zone", "operator": "In", "values": [zone]}]}
    affinity = {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
    }
    return pod("target", affinity=affinity, **kw)


def affinity_plugin(args: dict[str, Any] | None = None) -> na.NodeAffinity:
    decoded, problems = na.NodeAffinityArgs.decode(args or {}, "args")
    assert problems == []
    return na.NodeAffinity(decoded, FakeHandle())


def test_node_affinity_registers_node_add_and_label_updates_only() -> None:
    assert registered(affinity_plugin()) == [
        (fw.ClusterEvent("Node", "Add"), True),
        (fw.ClusterEvent("Node", "UpdateNodeLabel"), True),
    ]


def test_node_affinity_added_node_must_match_selector_and_required_affinity() -> None:
    hint = hint_of(affinity_plugin(), "Node", "Add")
    target = zone_pod("a", node_selector={"disk": "ssd"})
    assert hint(target, None, raw_node(labels={"zone": "a", "disk": "ssd"})) is QUEUE
    assert hint(target, None, raw_node(labels={"zone": "a"})) is SKIP
    assert hint(target, None, raw_node(labels={"zone": "b", "disk": "ssd"})) is SKIP


def test_node_affinity_updated_node_queues_only_when_it_starts_to_match() -> None:
    hint = hint_of(affinity_plugin(), "Node", "UpdateNodeLabel")
    target = zone_pod("a")
    other = raw_node(labels={"zone": "b"})
    matching = changed(other, ("metadata", "labels", "zone"), "a")
    assert hint(target, other, matching) is QUEUE
    assert hint(target, matching, changed(matching, ("metadata", "labels", "extra"), "x")) is SKIP
    assert hint(target, other, changed(other, ("metadata", "labels", "extra"), "x")) is SKIP
    assert hint(target, None, matching) is QUEUE  # berth's generic update without the old node


def test_node_affinity_hint_requires_the_added_affinity() -> None:
    added = {
        "addedAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "pool", "operator": "Exists"}]}]
            }
        }
    }
    hint = hint_of(affinity_plugin(added), "Node", "Add")
    assert hint(zone_pod("a"), None, raw_node(labels={"zone": "a"})) is SKIP
    assert hint(zone_pod("a"), None, raw_node(labels={"zone": "a", "pool": "x"})) is QUEUE


def test_node_affinity_term_that_does_not_parse_queues_as_upstreams_error() -> None:
    """Upstream's selector returns an error when no term matched and one failed to parse (a hint's error is
    QUEUE); a nodeSelector mismatch is decided before the terms, without an error."""
    bad = {"matchExpressions": [{"key": "zone", "operator": "Bogus", "values": ["a"]}]}
    affinity = {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [bad]}}
    }
    target = pod("target", affinity=affinity, node_selector={"disk": "ssd"})
    hint = hint_of(affinity_plugin(), "Node", "Add")
    assert hint(target, None, raw_node(labels={"zone": "a", "disk": "ssd"})) is QUEUE
    assert hint(target, None, raw_node(labels={"zone": "a"})) is SKIP


def test_node_affinity_hint_sees_the_pods_current_spec() -> None:
    """The compiled affinity is remembered per pod object, so a changed pod (a new object) is not judged by the
    old one's."""
    plugin = affinity_plugin()
    hint = hint_of(plugin, "Node", "Add")
    zone_b = raw_node(labels={"zone": "b"})
    assert hint(zone_pod("a"), None, zone_b) is SKIP
    assert hint(zone_pod("b"), None, zone_b) is QUEUE


# --- TaintToleration -----------------------------------------------------------------------------------------------


def taint(key: str, effect: str = "NoSchedule") -> dict[str, str]:
    return {"key": key, "effect": effect}


def test_taint_toleration_registers_node_and_toleration_events_with_hints() -> None:
    assert registered(tt.TaintToleration(None, FakeHandle())) == [
        (fw.ClusterEvent("Node", "Add"), True),
        (fw.ClusterEvent("Node", "UpdateNodeTaint"), True),
        (fw.ClusterEvent("Pod", "UpdatePodToleration"), True),
    ]


def test_taint_toleration_added_node_must_have_no_untolerated_hard_taint() -> None:
    hint = hint_of(tt.TaintToleration(None, FakeHandle()), "Node", "Add")
    target = pod("target", tolerations=[{"key": "gpu", "operator": "Exists"}])
    assert hint(target, None, raw_node()) is QUEUE
    assert hint(target, None, raw_node(taints=[taint("gpu"), taint("soft", "PreferNoSchedule")])) is QUEUE
    assert hint(target, None, raw_node(taints=[taint("dedicated")])) is SKIP
    assert hint(target, None, raw_node(taints=[taint("dedicated", "NoExecute")])) is SKIP


def test_taint_toleration_updated_node_queues_only_when_the_last_untolerated_taint_goes() -> None:
    hint = hint_of(tt.TaintToleration(None, FakeHandle()), "Node", "UpdateNodeTaint")
    target = pod("target")
    two = raw_node(taints=[taint("a"), taint("b", "NoExecute")])
    one = changed(two, ("spec", "taints"), [taint("b", "NoExecute")])
    none_left = changed(two, ("spec", "taints"), [taint("c", "PreferNoSchedule")])
    assert hint(target, one, none_left) is QUEUE
    assert hint(target, two, one) is SKIP
    assert (
        hint(target, none_left, changed(none_left, ("spec", "taints"), [])) is SKIP
    )  # it was tolerated before


def test_taint_toleration_only_the_pods_own_toleration_change_counts() -> None:
    hint = hint_of(tt.TaintToleration(None, FakeHandle()), "Pod", "UpdatePodToleration")
    target = pod("target", tolerations=[{"key": "a", "operator": "Exists"}])
    assert hint(target, pod("target").pod, target.pod) is QUEUE
    assert hint(target, pod("other").pod, pod("other", tolerations=[{"operator": "Exists"}]).pod) is SKIP


# --- NodeUnschedulable ---------------------------------------------------------------------------------------------


def test_node_unschedulable_registers_node_and_toleration_events_with_hints() -> None:
    assert registered(nu.NodeUnschedulable(None, FakeHandle())) == [
        (fw.ClusterEvent("Node", "Add"), True),
        (fw.ClusterEvent("Node", "UpdateNodeTaint"), True),
        (fw.ClusterEvent("Pod", "UpdatePodToleration"), True),
    ]


def test_node_unschedulable_queues_for_a_schedulable_new_node_or_an_uncordon() -> None:
    plugin = nu.NodeUnschedulable(None, FakeHandle())
    add, update = hint_of(plugin, "Node", "Add"), hint_of(plugin, "Node", "UpdateNodeTaint")
    target = pod("target")
    cordoned, open_ = raw_node(unschedulable=True), raw_node()
    assert add(target, None, open_) is QUEUE
    assert add(target, None, cordoned) is SKIP
    assert update(target, cordoned, open_) is QUEUE
    assert update(target, open_, cordoned) is SKIP
    assert update(target, open_, changed(open_, ("spec", "taints"), [taint("x")])) is SKIP


def test_node_unschedulable_queues_when_the_pod_comes_to_tolerate_the_cordon() -> None:
    hint = hint_of(nu.NodeUnschedulable(None, FakeHandle()), "Pod", "UpdatePodToleration")
    cordon = {"key": nu.TAINT_NODE_UNSCHEDULABLE, "operator": "Exists", "effect": "NoSchedule"}
    tolerating = pod("target", tolerations=[cordon])
    unrelated = pod("target", tolerations=[{"key": "gpu", "operator": "Exists"}])
    assert hint(tolerating, pod("target").pod, tolerating.pod) is QUEUE
    assert hint(unrelated, pod("target").pod, unrelated.pod) is SKIP
    assert hint(pod("target"), pod("other").pod, pod("other", tolerations=[cordon]).pod) is SKIP


# --- NodePorts -----------------------------------------------------------------------------------------------------


def with_port(name: str, port: int, node_name: str = "n1", ip: str = "", protocol: str = "TCP") -> PodInfo:
    spec: dict[str, Any] = {"containerPort": 80, "hostPort": port, "protocol": protocol}
    if ip:
        spec["hostIP"] = ip
    return pod(name, node_name=node_name, containers=[container(ports=[spec])])


def test_node_ports_registers_pod_delete_with_a_hint_and_node_add_without() -> None:
    assert registered(np_.NodePorts(None, FakeHandle())) == [
        (fw.ClusterEvent("Pod", "Delete"), True),
        (fw.ClusterEvent("Node", "Add"), False),
    ]


def test_node_ports_deleted_pod_must_free_a_conflicting_port() -> None:
    hint = hint_of(np_.NodePorts(None, FakeHandle()), "Pod", "Delete")
    target = with_port("target", 8080, node_name="")
    assert hint(target, with_port("holder", 8080).pod, None) is QUEUE
    assert (
        hint(target, with_port("holder", 8080, ip="10.0.0.1").pod, None) is QUEUE
    )  # the target's is 0.0.0.0
    assert hint(target, with_port("other", 9090).pod, None) is SKIP
    assert hint(target, with_port("udp", 8080, protocol="UDP").pod, None) is SKIP
    assert hint(target, pod("no-ports", node_name="n1").pod, None) is SKIP
    assert hint(target, with_port("pending", 8080, node_name="").pod, None) is SKIP
    nominated = with_status(with_port("nominated", 8080, node_name=""), nominatedNodeName="n1")
    assert hint(target, nominated, None) is QUEUE


# --- NodeName ------------------------------------------------------------------------------------------------------


def test_node_name_registers_node_add_without_a_hint_as_upstream() -> None:
    assert registered(nn.NodeName(None, FakeHandle())) == [(fw.ClusterEvent("Node", "Add"), False)]


# --- PodTopologySpread --------------------------------------------------------------------------------------------


def spread_pod(name: str = "target", honor_taints: bool = False, **kw: Any) -> PodInfo:
    constraint: dict[str, Any] = {
        "maxSkew": 1,
        "topologyKey": "zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "web"}},
    }
    if honor_taints:
        constraint["nodeTaintsPolicy"] = "Honor"
    return pod(name, labels={"app": "web"}, spec={"topologySpreadConstraints": [constraint]}, **kw)


def spread_plugin() -> pts.PodTopologySpread:
    return pts.PodTopologySpread(None, FakeHandle())


def test_pod_topology_spread_registers_pod_and_node_events_with_hints() -> None:
    pod_actions = ("Add", "UpdatePodLabel", "UpdatePodToleration", "Delete")
    node_actions = ("Add", "Delete", "UpdateNodeLabel", "UpdateNodeTaint")
    assert registered(spread_plugin()) == [(fw.ClusterEvent("Pod", a), True) for a in pod_actions] + [
        (fw.ClusterEvent("Node", a), True) for a in node_actions
    ]


def test_pod_topology_spread_added_or_deleted_pod_must_be_assigned_here_and_selected() -> None:
    plugin = spread_plugin()
    add, delete = hint_of(plugin, "Pod", "Add"), hint_of(plugin, "Pod", "Delete")
    target = spread_pod()
    assert add(target, None, pod("w", node_name="n1", labels={"app": "web"}).pod) is QUEUE
    assert add(target, None, pod("db", node_name="n1", labels={"app": "db"}).pod) is SKIP
    assert add(target, None, pod("w", node_name="n1", namespace="other", labels={"app": "web"}).pod) is SKIP
    assert add(target, None, pod("w", labels={"app": "web"}).pod) is SKIP  # not assigned
    assert delete(target, pod("w", node_name="n1", labels={"app": "web"}).pod, None) is QUEUE
    assert delete(target, pod("db", node_name="n1", labels={"app": "db"}).pod, None) is SKIP


def test_pod_topology_spread_label_update_must_change_a_selector_match() -> None:
    hint = hint_of(spread_plugin(), "Pod", "UpdatePodLabel")
    target = spread_pod()
    web = pod("w", node_name="n1", labels={"app": "web"}).pod
    db = changed(web, ("metadata", "labels"), {"app": "db"})
    assert hint(target, db, web) is QUEUE
    assert hint(target, web, db) is QUEUE
    assert hint(target, web, changed(web, ("metadata", "labels", "tier"), "front")) is SKIP
    assert hint(target, web, changed(web, ("metadata", "annotations"), {"a": "b"})) is SKIP


def test_pod_topology_spread_own_toleration_counts_only_when_a_constraint_honours_taints() -> None:
    hint = hint_of(spread_plugin(), "Pod", "UpdatePodToleration")
    for honor, expected in ((True, QUEUE), (False, SKIP)):
        before = spread_pod(honor_taints=honor)
        after = spread_pod(honor_taints=honor, tolerations=[{"key": "gpu", "operator": "Exists"}])
        assert hint(after, before.pod, after.pod) is expected


def test_pod_topology_spread_node_must_carry_every_topology_key() -> None:
    plugin = spread_plugin()
    add, delete = hint_of(plugin, "Node", "Add"), hint_of(plugin, "Node", "Delete")
    update = hint_of(plugin, "Node", "UpdateNodeLabel")
    target = spread_pod()
    zoned, bare = raw_node(labels={"zone": "a"}), raw_node()
    assert add(target, None, zoned) is QUEUE
    assert add(target, None, bare) is SKIP
    assert delete(target, zoned, None) is QUEUE
    assert delete(target, bare, None) is SKIP
    assert update(target, bare, zoned) is QUEUE
    assert update(target, zoned, bare) is QUEUE
    assert update(target, zoned, changed(zoned, ("metadata", "labels", "zone"), "b")) is QUEUE
    assert update(target, zoned, changed(zoned, ("spec", "taints"), [taint("x")])) is QUEUE
    assert update(target, zoned, changed(zoned, ("metadata", "labels", "rack"), "r1")) is SKIP
    assert update(target, bare, changed(bare, ("spec", "taints"), [taint("x")])) is SKIP


# --- end to end: the Scheduler's queue asks the hints -------------------------------------------------------------


def scheduler() -> Scheduler:
    api = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
    return Scheduler(schedconfig.parse(api), seed=1)


def test_a_pod_rejected_by_node_affinity_moves_only_for_a_matching_node() -> None:
    s = scheduler()
    s.add_node(node_obj("n0", labels={"zone": "b"}))
    s.add_pod(pod_obj("p", nodeSelector={"zone": "a"}))
    s.run_until_idle()
    assert s.queue.where("default/p") is Where.UNSCHEDULABLE
    s.add_node(node_obj("n1", labels={"zone": "c"}))
    relabelled = node_obj("n0", labels={"zone": "b", "rack": "r1"})
    s.update_node(node_obj("n0", labels={"zone": "b"}), relabelled)
    assert s.queue.where("default/p") is Where.UNSCHEDULABLE
    s.add_node(node_obj("n2", labels={"zone": "a"}))
    assert s.queue.where("default/p") in (Where.ACTIVE, Where.BACKOFF)
    s.run_until_idle()
    assert {p.pod: p.node for p in s.placements} == {"default/p": "n2"}


def test_a_pod_waiting_for_a_host_port_moves_only_when_its_holder_goes() -> None:
    s = scheduler()
    s.add_node(node_obj("n0"))
    port = {"name": "c", "image": "pause", "ports": [{"containerPort": 80, "hostPort": 8080}]}
    s.add_pod(pod_obj("holder", node_name="n0", containers=[port]))
    s.add_pod(pod_obj("bystander", node_name="n0"))
    s.add_pod(pod_obj("p", containers=[port]))
    s.run_until_idle()
    assert s.queue.where("default/p") is Where.UNSCHEDULABLE
    s.remove_pod("default/bystander")
    assert s.queue.where("default/p") is Where.UNSCHEDULABLE
    s.remove_pod("default/holder")
    assert s.queue.where("default/p") in (Where.ACTIVE, Where.BACKOFF)
    s.run_until_idle()
    assert {p.pod: p.node for p in s.placements} == {"default/p": "n0"}


@pytest.mark.parametrize("soft_taint_left", [False, True])
def test_a_tainted_node_retries_the_pod_only_when_its_hard_taints_go(soft_taint_left: bool) -> None:
    s = scheduler()
    tainted = node_obj("n0", taints=[{"key": "dedicated", "value": "x", "effect": "NoSchedule"}])
    s.add_node(tainted)
    s.add_pod(pod_obj("p"))
    s.run_until_idle()
    assert s.queue.where("default/p") is Where.UNSCHEDULABLE
    retainted = node_obj("n0", taints=[{"key": "other", "effect": "NoExecute"}])
    s.update_node(tainted, retainted)
    assert s.queue.where("default/p") is Where.UNSCHEDULABLE
    soft = [{"key": "soft", "effect": "PreferNoSchedule"}] if soft_taint_left else []
    s.update_node(retainted, node_obj("n0", taints=soft))
    assert s.queue.where("default/p") in (Where.ACTIVE, Where.BACKOFF)


def test_a_pod_too_big_for_every_node_moves_only_when_a_node_grows_what_it_requests() -> None:
    s = scheduler()
    s.add_node(node_obj("n0", cpu="1"))
    s.add_pod(pod_obj("p", cpu="2"))
    s.run_until_idle()
    assert s.queue.where("default/p") is Where.UNSCHEDULABLE
    s.add_node(node_obj("small", cpu="1500m"))
    s.update_node(node_obj("n0", cpu="1"), node_obj("n0", cpu="1", memory="64Gi"))
    assert s.queue.where("default/p") is Where.UNSCHEDULABLE
    s.add_pod(pod_obj("bystander", node_name="n0"))
    s.remove_pod("default/bystander")  # a deleted assigned pod may free room: retried
    assert s.queue.where("default/p") in (Where.ACTIVE, Where.BACKOFF)
    s.run_until_idle()
    assert s.queue.where("default/p") is Where.UNSCHEDULABLE
    s.update_node(node_obj("n0", cpu="1", memory="64Gi"), node_obj("n0", cpu="4", memory="64Gi"))
    assert s.queue.where("default/p") in (Where.ACTIVE, Where.BACKOFF)
    s.run_until_idle()
    assert {p.pod: p.node for p in s.placements} == {"default/p": "n0"}


def test_a_pod_kept_off_a_tainted_node_moves_when_it_gains_the_toleration() -> None:
    s = scheduler()
    s.add_node(node_obj("n0", taints=[{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]))
    before = pod_obj("p")
    s.add_pod(before)
    s.add_pod(pod_obj("other"))
    s.run_until_idle()
    assert s.queue.where("default/p") is Where.UNSCHEDULABLE
    other_tolerating = pod_obj("other", tolerations=[{"key": "dedicated", "operator": "Exists"}])
    s.update_pod(pod_obj("other"), other_tolerating)  # another pod's toleration does not help this one
    assert s.queue.where("default/p") is Where.UNSCHEDULABLE
    s.update_pod(before, pod_obj("p", tolerations=[{"key": "dedicated", "operator": "Exists"}]))
    assert s.queue.where("default/p") in (Where.ACTIVE, Where.BACKOFF)
    s.run_until_idle()
    assert {p.pod: p.node for p in s.placements} == {"default/p": "n0", "default/other": "n0"}


def test_a_cordoned_node_retries_its_pods_only_when_uncordoned() -> None:
    s = scheduler()
    cordoned = node_obj("n0", unschedulable=True)
    s.add_node(cordoned)
    s.add_pod(pod_obj("p"))
    s.run_until_idle()
    assert s.queue.where("default/p") is Where.UNSCHEDULABLE
    s.add_node(node_obj("n1", unschedulable=True))
    assert s.queue.where("default/p") is Where.UNSCHEDULABLE
    s.update_node(cordoned, node_obj("n0"))
    assert s.queue.where("default/p") in (Where.ACTIVE, Where.BACKOFF)
    s.run_until_idle()
    assert {p.pod: p.node for p in s.placements} == {"default/p": "n0"}
