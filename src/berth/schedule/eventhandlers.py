"""How cluster changes reach the Scheduler (upstream ``eventhandlers.go``): nodes, pods and the objects plugins
read go to the cache, pending pods to the queue, and each change is turned into the cluster events that move pods
a plugin rejected back to the queue.

Either feed drives these methods: the simulation's files or the live informers.
"""

from __future__ import annotations

from typing import Any

from berth.kube.objects import Obj
from berth.schedule.framework.interface import ClusterEvent
from berth.schedule.framework.types import NodeInfo, PodInfo
from berth.schedule.outcome import Ignored
from berth.schedule.queue import UNSCHEDULED_POD, UNSCHEDULED_POD_UPDATE
from berth.schedule.scheduler_state import SchedulerState, _locked

NODE_ADD = ClusterEvent("Node", "Add")
NODE_DELETE = ClusterEvent("Node", "Delete")
ASSIGNED_POD_ADD = ClusterEvent("Pod", "Add")
ASSIGNED_POD_DELETE = ClusterEvent("Pod", "Delete")
UNSCHEDULED_POD_ADD = ClusterEvent(UNSCHEDULED_POD, "Add")


def node_update_events(old: Obj | None, new: NodeInfo) -> list[ClusterEvent]:
    """The specific update actions a node change amounts to (upstream ``nodeSchedulingPropertiesChange``)."""
    if old is None:
        return [ClusterEvent("Node", "Update")]
    before = NodeInfo(old)
    events = []
    if before.allocatable != new.allocatable:
        events.append(ClusterEvent("Node", "UpdateNodeAllocatable"))
    if before.labels != new.labels:
        events.append(ClusterEvent("Node", "UpdateNodeLabel"))
    if before.taints != new.taints or before.unschedulable != new.unschedulable:
        events.append(ClusterEvent("Node", "UpdateNodeTaint"))
    if (old.get("status") or {}).get("conditions") != (new.node.get("status") or {}).get("conditions"):
        events.append(ClusterEvent("Node", "UpdateNodeCondition"))
    if (old.get("metadata") or {}).get("annotations") != (new.node.get("metadata") or {}).get("annotations"):
        events.append(ClusterEvent("Node", "UpdateNodeAnnotation"))
    return events


def pod_update_events(old: PodInfo, new: PodInfo) -> list[ClusterEvent]:
    """What a pod's update amounts to (upstream ``PodSchedulingPropertiesChange``): label, scale-down, toleration,
    scheduling-gate and generated-claim changes, else ``UpdatePodOther``; about an ``UnscheduledPod`` while it has
    no node. A change of status (but its resource claims), resourceVersion, generation, managedFields or
    finalizers alone is none (upstream ``isPodUpdated``): the scheduler's own status writes must not retry a pod."""
    resource = "Pod" if new.node_name else UNSCHEDULED_POD
    events = []
    if old.labels != new.labels:
        events.append(ClusterEvent(resource, "UpdatePodLabel"))
    if any(new.requests.get(k, 0) < v for k, v in old.requests.items()):
        events.append(ClusterEvent(resource, "UpdatePodScaleDown"))
    old_spec, new_spec = old.pod.get("spec") or {}, new.pod.get("spec") or {}
    if old_spec.get("schedulingGates") and not new_spec.get("schedulingGates"):
        events.append(ClusterEvent(resource, "UpdatePodSchedulingGatesEliminated"))
    if old_spec.get("tolerations") != new_spec.get("tolerations"):
        events.append(ClusterEvent(resource, "UpdatePodToleration"))
    claims = "resourceClaimStatuses"
    if (old.pod.get("status") or {}).get(claims) != (new.pod.get("status") or {}).get(claims):
        events.append(ClusterEvent(resource, "UpdatePodGeneratedResourceClaim"))
    if not events and _scheduling_relevant(old.pod) != _scheduling_relevant(new.pod):
        events.append(ClusterEvent(resource, "UpdatePodOther"))
    return events


_IRRELEVANT_METADATA = ("resourceVersion", "generation", "managedFields", "finalizers")


def _scheduling_relevant(pod: Obj) -> tuple[Any, Any]:
    """A pod without what upstream's ``isPodUpdated`` strips before comparing."""
    meta = {k: v for k, v in (pod.get("metadata") or {}).items() if k not in _IRRELEVANT_METADATA}
    return meta, pod.get("spec")


_TERMINAL_PHASES = ("Succeeded", "Failed")


class EventHandlers(SchedulerState):
    """The Scheduler's event methods (an informer feed or the simulation drives these)."""

    @_locked
    def add_node(self, node: Obj, where: str | None = None) -> None:
        self.cache.add_node(node, where)
        self.queue.move_all_to_active_or_backoff(NODE_ADD, new=node)

    @_locked
    def update_node(self, old: Obj | None, new: Obj, where: str | None = None) -> None:
        info = self.cache.update_node(new, where)
        for event in node_update_events(old, info):
            self.queue.move_all_to_active_or_backoff(event, old=old, new=new)

    @_locked
    def remove_node(self, node: Obj | str) -> None:
        name = node if isinstance(node, str) else str((node.get("metadata") or {}).get("name") or "")
        self.cache.remove_node(name)
        self.queue.move_all_to_active_or_backoff(NODE_DELETE, old=None if isinstance(node, str) else node)

    @_locked
    def add_pod(self, pod: Obj, where: str | None = None) -> None:
        """A pod appeared. Bound pods go to the cache (whatever their scheduler, so they count); pending pods of a
        configured profile go to the queue; others are ignored (and reported)."""
        info = PodInfo(pod, where)
        if info.node_name:
            self._in_flight.pop(info.key, None)
            self.cache.add_pod(info)
            self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_ADD, new=pod)
            return
        if (pod.get("status") or {}).get("phase") in _TERMINAL_PHASES:
            return
        if info.scheduler_name not in self.frameworks:
            self.ignored[info.key] = Ignored(info.key, info.scheduler_name)
            return
        self._pending_pods[info.key] = info
        self.queue.add(info)
        if self.queue.hears(UNSCHEDULED_POD):
            # A berth extension (upstream raises it only under the alpha GangScheduling gate): a plugin that
            # registered UnscheduledPod events -- a gang waiting for members -- hears new pending pods.
            self.queue.move_all_to_active_or_backoff(UNSCHEDULED_POD_ADD, exclude=info.key, new=pod)

    @_locked
    def update_pod(self, old: Obj | None, new: Obj, where: str | None = None) -> None:
        if (new.get("spec") or {}).get("nodeName") and not (
            old is not None and (old.get("spec") or {}).get("nodeName")
        ):
            # Bound now (by us -- confirming an assumption -- or by someone else).
            confirmed = self._assumed_as(new)
            info = confirmed if confirmed is not None else PodInfo(new, where)
            self.ignored.pop(info.key, None)
            self._observe_bound(info)
            return
        info = PodInfo(new, where)
        old_info = PodInfo(old) if old is not None else None
        if info.node_name:
            # An update of a bound pod.
            assert old_info is not None  # a pod bound before and after (the other case returned above)
            self.cache.update_pod(info)
            for event in pod_update_events(old_info, info):
                self.queue.move_all_to_active_or_backoff(event, old=old, new=new)
            return
        if (new.get("status") or {}).get("phase") in _TERMINAL_PHASES:
            self.remove_pod(new)
            return
        if info.scheduler_name not in self.frameworks:
            self.queue.delete(info.key)
            self._pending_pods.pop(info.key, None)
            self.ignored[info.key] = Ignored(info.key, info.scheduler_name)
            return
        self.ignored.pop(info.key, None)
        self._pending_pods[info.key] = info
        events = pod_update_events(old_info, info) if old_info is not None else [UNSCHEDULED_POD_UPDATE]
        self.queue.update(info, events, old)

    @_locked
    def add_object(self, obj: Obj) -> None:
        """A non-pod, non-node object plugins read (Service, ReplicaSet, PVC ...) appeared or changed."""
        kind = str(obj.get("kind") or "")
        meta = obj.get("metadata") or {}
        before = self.objects.get(kind, str(meta.get("namespace") or ""), str(meta.get("name") or ""))
        self.objects.add(obj)
        event = ClusterEvent(kind, "Update" if before is not None else "Add")
        self.queue.move_all_to_active_or_backoff(event, old=before, new=obj)

    @_locked
    def remove_object(self, obj: Obj) -> None:
        if self.objects.remove(obj):
            self.queue.move_all_to_active_or_backoff(
                ClusterEvent(str(obj.get("kind") or ""), "Delete"), old=obj
            )

    def _assumed_as(self, pod: Obj) -> PodInfo | None:
        """The assumed PodInfo rebased onto ``pod`` when ``pod`` shows it bound exactly as assumed (nothing to derive
        again: the live path's bound-pod confirmations were a visible share of its CPU), else None."""
        meta = pod.get("metadata") or {}
        key = f"{meta.get('namespace') or 'default'}/{meta.get('name') or ''}"
        if not self.cache.is_assumed(key):
            return None
        assumed = self.cache.get_pod(key)
        return assumed.rebased(pod) if assumed is not None and assumed.confirms(pod) else None

    def _observe_bound(self, pod: PodInfo) -> None:
        """What the informer's update does when a pod we bound shows up with ``spec.nodeName``."""
        self.nominator.unnominate(pod.key)
        self._in_flight.pop(pod.key, None)
        self.queue.delete(pod.key)
        self._pending_pods.pop(pod.key, None)
        self.cache.add_pod(pod)
        self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_ADD, new=pod.pod)

    @_locked
    def remove_pod(self, pod: Obj | str) -> None:
        if isinstance(pod, str):
            key = pod
        else:
            meta = pod.get("metadata") or {}
            key = f"{meta.get('namespace') or 'default'}/{meta.get('name') or ''}"
        self.ignored.pop(key, None)
        self.failures.pop(key, None)
        self._pending_pods.pop(key, None)
        self.nominator.unnominate(key)
        self._in_flight.pop(key, None)
        self.queue.delete(key)
        held = next((h for h in self._held.values() if h.assumed.key == key), None)
        if held is not None:
            # Upstream deletePodFromSchedulingQueue: a deleted pod held at Permit is rejected; its binding cycle
            # then un-reserves it and takes it out of the cache (finished at the next step).
            held.fw.reject_waiting_pod(held.assumed.uid)
            self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, old=held.assumed.pod)
            return
        removed = self.cache.remove_pod(key)
        if removed is not None:
            self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, old=removed.pod)
