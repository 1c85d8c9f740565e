"""DaemonSet controller: one pod on every node the DaemonSet fits, with the status ``rollout status ds`` reads.

Why: node agents (log shippers, CNI and CSI plugins, device plugins) ship as DaemonSets; charts wait for
``numberReady``/``updatedNumberScheduled`` to reach ``desiredNumberScheduled``.

A node fits when the template's ``nodeSelector`` and required node affinity match it and every NoSchedule/NoExecute
taint is tolerated (counting the tolerations upstream adds to every DaemonSet pod: not-ready, unreachable,
disk/memory/pid-pressure, unschedulable, and network-unavailable for hostNetwork pods). Pods are created bound:
``spec.nodeName`` preset (so they run without a scheduler) plus the ``metadata.name`` node-affinity term upstream
writes. Pods on nodes that no longer fit, duplicates and finished pods are deleted. RollingUpdate replaces pods
whose ``controller-revision-hash`` is old, at most ``maxUnavailable`` unavailable at a time (``maxSurge`` is not
simulated); OnDelete leaves them. A ControllerRevision ``<name>-<hash>`` per template feeds ``kubectl rollout
history``.
"""

from __future__ import annotations

import copy
from typing import Any

from berth.cluster.controllers import base, client
from berth.cluster.controllers.deployment import resolve
from berth.cluster.controllers.expectations import Expectations
from berth.cluster.controllers.informer import OWNER_UID_INDEX, Handler, key_of, split_key
from berth.cluster.controllers.replicaset import create_pods
from berth.kube import selectors, taints
from berth.kube.naming import pod_template_hash as template_hash
from berth.kube.objects import Obj

RESOURCE = "daemonsets.apps"
KIND = "DaemonSet"
REVISION_LABEL = "controller-revision-hash"
GENERATION_LABEL = "pod-template-generation"

DAEMON_TOLERATIONS: tuple[dict[str, Any], ...] = (
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
)
"""Tolerations upstream's DaemonSet controller adds to every pod (``util.AddOrUpdateDaemonPodTolerations``)."""
NETWORK_UNAVAILABLE = {
    "key": "node.kubernetes.io/network-unavailable",
    "operator": "Exists",
    "effect": "NoSchedule",
}


def pod_tolerations(pod_spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The template's tolerations plus the DaemonSet defaults (no duplicates by key+effect)."""
    out = [dict(t) for t in pod_spec.get("tolerations") or []]
    extra = list(DAEMON_TOLERATIONS) + ([NETWORK_UNAVAILABLE] if pod_spec.get("hostNetwork") else [])
    have = {(t.get("key"), t.get("effect")) for t in out}
    for t in extra:
        if (t["key"], t["effect"]) not in have:
            out.append(dict(t))
    return out


def node_taints(node: Obj) -> list[dict[str, Any]]:
    found = [dict(t) for t in (node.get("spec") or {}).get("taints") or []]
    if (node.get("spec") or {}).get("unschedulable"):
        found.append({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"})
    return found


def fits(pod_spec: dict[str, Any], node: Obj) -> bool:
    """Does a DaemonSet pod with this spec belong on ``node`` (selector, required affinity, taints)?"""
    labels = base.meta(node).get("labels") or {}
    name = str(base.meta(node).get("name", ""))
    for k, v in (pod_spec.get("nodeSelector") or {}).items():
        if labels.get(k) != v:
            return False
    required = ((pod_spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    if required is not None and not selectors.node_selector_matches(required, labels, name):
        return False
    return (
        taints.first_untolerated(node_taints(node), pod_tolerations(pod_spec), ("NoSchedule", "NoExecute"))
        is None
    )


def _pod_node(pod: Obj) -> str:
    return str((pod.get("spec") or {}).get("nodeName") or "")


class DaemonSetController(base.Controller):
    name = "daemonset-controller"
    TRACK_WRITES = True

    def __init__(self, ctx: base.Context) -> None:
        super().__init__(ctx)
        self.sets = ctx.informers.informer(RESOURCE)
        self.pods = ctx.informers.informer("pods")
        self.nodes = ctx.informers.informer("nodes")
        self.revisions = ctx.informers.informer(base.REVISIONS)
        self.expectations = Expectations()
        self.sets.add_handler(Handler(on_add=self._enqueue, on_update=lambda _o, n: self._enqueue(n)))
        self.pods.add_handler(
            Handler(on_add=self._on_pod_add, on_update=lambda _o, n: self._on_pod(n), on_delete=self._on_pod)
        )
        self.nodes.add_handler(
            Handler(on_add=self._on_node, on_update=self._on_node_update, on_delete=self._on_node)
        )

    def _enqueue(self, obj: Obj) -> None:
        self.queue.add(key_of(obj))

    def _on_pod(self, pod: Obj) -> None:
        key = base.owner_key(pod, KIND)
        if key is not None:
            self.queue.add(key)

    def _on_pod_add(self, pod: Obj) -> None:
        key = base.owner_key(pod, KIND)
        if key is not None:
            self.expectations.creation_observed(key)
            self.queue.add(key)

    def _on_node(self, _node: Obj) -> None:
        for ds in self.sets.list():
            self.queue.add(key_of(ds))

    def _on_node_update(self, old: Obj, new: Obj) -> None:
        if base.meta(old).get("labels") != base.meta(new).get("labels") or old.get("spec") != new.get("spec"):
            self._on_node(new)

    def reconcile(self, key: str) -> None:
        ds = self.fresher(key, self.sets.get(key))
        if ds is None:
            return
        ns, name = split_key(key)
        spec = ds.get("spec") or {}
        template = spec.get("template") or {}
        pod_spec = template.get("spec") or {}
        h = template_hash(template)
        uid = base.uid(ds)
        pods = [p for p in self.pods.by_index(OWNER_UID_INDEX, uid) if base.owned_by(p, uid)]
        nodes = {str(base.meta(n).get("name", "")): n for n in self.nodes.list() if not base.deleting(n)}
        wanted = {n for n, node in nodes.items() if fits(pod_spec, node)}
        by_node: dict[str, list[Obj]] = {}
        for p in pods:
            if not base.deleting(p):
                by_node.setdefault(_pod_node(p), []).append(p)
        if not base.deleting(ds):
            base.ensure_revision(self, self.revisions, ds, KIND, f"{name}-{h}", h)
        if (
            not base.deleting(ds)
            and self.expectations.satisfied(key)
            and self._manage(key, ds, name, ns, h, wanted, by_node)
        ):
            return  # wrote pods; the pod events bring us back for the status
        self._update_status(key, ds, h, wanted, by_node)

    def _manage(
        self, key: str, ds: Obj, name: str, ns: str, h: str, wanted: set[str], by_node: dict[str, list[Obj]]
    ) -> bool:
        spec = ds.get("spec") or {}
        doomed: list[Obj] = []
        missing: list[str] = []
        for node_name, pods in by_node.items():
            if node_name not in wanted:
                doomed.extend(pods)
                continue
            finished = [p for p in pods if base.pod_finished(p)]
            doomed.extend(finished)
            alive = sorted(
                (p for p in pods if not base.pod_finished(p)),
                key=lambda p: str(base.meta(p).get("creationTimestamp", "")),
            )
            doomed.extend(alive[1:])
        for node_name in sorted(wanted):
            if not [p for p in by_node.get(node_name, []) if not base.pod_finished(p)]:
                missing.append(node_name)
        # rolling update of stale pods within maxUnavailable
        strategy = spec.get("updateStrategy") or {}
        if (strategy.get("type") or "RollingUpdate") == "RollingUpdate" and not doomed:
            max_unavailable = (
                resolve((strategy.get("rollingUpdate") or {}).get("maxUnavailable", 1), len(wanted), True)
                or 1
            )
            current = [by_node[n][0] for n in wanted if by_node.get(n)]
            unavailable = len(missing) + sum(1 for p in current if not base.pod_ready(p))
            stale = [p for p in current if (base.meta(p).get("labels") or {}).get(REVISION_LABEL) != h]
            stale.sort(key=lambda p: base.pod_ready(p))  # replace unready stale pods first
            budget = max_unavailable - unavailable
            for p in stale:
                if not base.pod_ready(p):
                    doomed.append(p)
                elif budget > 0:
                    doomed.append(p)
                    budget -= 1
        for pod in doomed:
            pname = str(base.meta(pod).get("name", ""))
            try:
                self.api.delete("pods", pname, ns, user=self.user)
                self.ctx.recorder.event(ds, "Normal", "SuccessfulDelete", f"Deleted pod: {pname}")
            except client.ApiError as exc:
                if not client.is_not_found(exc):
                    raise
        template = spec.get("template") or {}
        extra = {REVISION_LABEL: h, GENERATION_LABEL: str(base.generation(ds))}
        made = 0
        self.expectations.expect_creations(key, len(missing))
        for node_name in missing:

            def bind(pod: Obj, node_name: str = node_name) -> None:
                pspec = pod["spec"]
                pspec["nodeName"] = node_name
                pspec["tolerations"] = pod_tolerations(pspec)
                affinity = pspec.setdefault("affinity", {})
                affinity.setdefault("nodeAffinity", {})["requiredDuringSchedulingIgnoredDuringExecution"] = {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
                    ]
                }

            made += create_pods(self, ds, "apps/v1", KIND, copy.deepcopy(template), [f"{name}-"], extra, bind)
        for _ in range(len(missing) - made):
            self.expectations.creation_observed(key)
        return bool(doomed or made)

    def _update_status(
        self, key: str, ds: Obj, h: str, wanted: set[str], by_node: dict[str, list[Obj]]
    ) -> None:
        spec = ds.get("spec") or {}
        min_ready = int(spec.get("minReadySeconds") or 0)
        scheduled = [n for n in wanted if by_node.get(n)]
        first = {n: by_node[n][0] for n in scheduled}
        ready = sum(1 for p in first.values() if base.pod_ready(p))
        available = sum(1 for p in first.values() if base.pod_available(p, min_ready))
        updated = sum(
            1 for p in first.values() if (base.meta(p).get("labels") or {}).get(REVISION_LABEL) == h
        )
        prev = ds.get("status") or {}
        status: dict[str, Any] = {
            "currentNumberScheduled": len(scheduled),
            "desiredNumberScheduled": len(wanted),
            "numberMisscheduled": sum(1 for n in by_node if n not in wanted and n),
            "numberReady": ready,
            "numberAvailable": available,
            "numberUnavailable": max(len(wanted) - available, 0),
            "updatedNumberScheduled": updated,
            "observedGeneration": base.generation(ds),
        }
        if min_ready and available < ready:
            self.requeue_after(key, float(min_ready))
        if prev.get("conditions"):
            status["conditions"] = prev["conditions"]
        if prev.get("collisionCount") is not None:
            status["collisionCount"] = prev["collisionCount"]
        for k in ("numberAvailable", "numberUnavailable", "updatedNumberScheduled"):
            if not status[k]:
                status.pop(k)
        if status == prev:
            return
        base.write_status(self, RESOURCE, ds, status)
