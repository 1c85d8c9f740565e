"""ReplicaSet controller: keep ``spec.replicas`` active pods from the template, and report how many are ready.

Why: Deployments work through ReplicaSets, and a chart may ship a bare ReplicaSet; both need pods created, surplus
pods deleted, and ``status`` (replicas, readyReplicas, availableReplicas, fullyLabeledReplicas,
observedGeneration) kept current, because the Deployment controller and ``kubectl`` read it.

Pods are named ``<rs>-<5 chars>`` (what ``generateName`` would give), carry the template's labels and annotations,
a controller ownerReference (``blockOwnerDeletion``), and ``schedulerName`` from the template
(``default-scheduler`` when unset). Surplus pods are deleted in upstream's order of preference: unscheduled before
scheduled, Pending before Running, not-ready before ready, newest first. Orphaned pods that match the selector are adopted
first (upstream's ``ClaimPods``), so a ReplicaSet re-created after ``--cascade=orphan`` takes its pods back.
Creations and deletions are tracked with
:class:`~.expectations.Expectations` so a burst of events never makes duplicates.
"""

from __future__ import annotations

from typing import Any

from berth.cluster.controllers import base, client
from berth.cluster.controllers.expectations import Expectations
from berth.cluster.controllers.informer import OWNER_UID_INDEX, Handler, key_of, split_key
from berth.kube import naming
from berth.kube.objects import Obj

RESOURCE = "replicasets.apps"
KIND = "ReplicaSet"


def generated_name(base_name: str) -> str:
    """``<base>-<5 chars>``, truncated like ``generateName``."""
    return naming.generated_name(f"{base_name}-")


def _rank(pod: Obj) -> tuple[int, int, int, str]:
    """Lower sorts first = deleted first (upstream ``ActivePods`` ordering, simplified)."""
    phase_rank = {"Pending": 0, "Unknown": 1, "Running": 2}.get(base.pod_phase(pod), 1)
    scheduled = 1 if (pod.get("spec") or {}).get("nodeName") else 0
    ready = 1 if base.pod_ready(pod) else 0
    created = str(base.meta(pod).get("creationTimestamp", ""))
    # newest first: invert the timestamp ordering by sorting on its negated characters
    inverted = "".join(chr(0x10FFFF - ord(ch)) for ch in created)
    return (scheduled, phase_rank, ready, inverted)


def create_pods(
    ctrl: base.Controller,
    owner: Obj,
    owner_api_version: str,
    kind: str,
    template: dict[str, Any],
    names: list[str],
    extra_labels: dict[str, str] | None = None,
    mutate: Any = None,
) -> int:
    """Create one pod per name (a name ending in ``-`` gets a random suffix); returns how many were created.

    Stops at the first failure other than a name clash (e.g. the namespace is terminating, a quota is full),
    records a FailedCreate event, as upstream's slow-start batch does, and asks for a retry with a growing delay.
    """
    ns = str(base.meta(owner).get("namespace", ""))
    ref = base.owner_reference(owner, owner_api_version, kind)
    created = 0
    for wanted in names:
        for _attempt in range(5):
            name = generated_name(wanted[:-1]) if wanted.endswith("-") else wanted
            pod = base.pod_from_template(template, ns, name, ref, extra_labels or {})
            if mutate is not None:
                mutate(pod)
            try:
                ctrl.api.create("pods", pod, ns, user=ctrl.user)
            except client.ApiError as exc:
                if client.is_already_exists(exc) and wanted.endswith("-"):
                    continue
                ctrl.ctx.recorder.event(owner, "Warning", "FailedCreate", f"Error creating: {exc.message}")
                ctrl.back_off(key_of(owner))
                return created
            ctrl.ctx.recorder.event(owner, "Normal", "SuccessfulCreate", f"Created pod: {name}")
            created += 1
            break
    if created == len(names):
        ctrl.back_off_reset(key_of(owner))
    return created


class ReplicaSetController(base.Controller):
    name = "replicaset-controller"
    TRACK_WRITES = True

    def __init__(self, ctx: base.Context) -> None:
        super().__init__(ctx)
        self.sets = ctx.informers.informer(RESOURCE)
        self.pods = ctx.informers.informer("pods")
        self.pods.add_index(base.ORPHAN_INDEX, base.orphan_namespace)
        self.expectations = Expectations()
        self.sets.add_handler(
            Handler(
                on_add=self._enqueue,
                on_update=lambda _o, n: self._enqueue(n),
                on_delete=self._on_set_deleted,
            )
        )
        self.pods.add_handler(
            Handler(on_add=self._on_pod_add, on_update=self._on_pod_update, on_delete=self._on_pod_delete)
        )

    def _enqueue(self, obj: Obj) -> None:
        self.queue.add(key_of(obj))

    def _on_set_deleted(self, obj: Obj) -> None:
        self.expectations.forget(key_of(obj))

    def _on_pod_add(self, pod: Obj) -> None:
        key = base.owner_key(pod, KIND)
        if key is not None:
            if base.deleting(pod):
                self.expectations.deletion_observed(key, base.uid(pod))
            else:
                self.expectations.creation_observed(key)
            self.queue.add(key)

    def _on_pod_update(self, old: Obj, new: Obj) -> None:
        key = base.owner_key(new, KIND)
        old_key = base.owner_key(old, KIND)
        if old_key is not None and old_key != key:
            self.queue.add(old_key)
        if key is not None:
            if base.deleting(new):
                self.expectations.deletion_observed(key, base.uid(new))
            self.queue.add(key)

    def _on_pod_delete(self, pod: Obj) -> None:
        key = base.owner_key(pod, KIND)
        if key is not None:
            self.expectations.deletion_observed(key, base.uid(pod))
            self.queue.add(key)

    def owned_pods(self, rs: Obj) -> list[Obj]:
        uid = base.uid(rs)
        return [p for p in self.pods.by_index(OWNER_UID_INDEX, uid) if base.owned_by(p, uid)]

    def reconcile(self, key: str) -> None:
        rs = self.fresher(key, self.sets.get(key))
        if rs is None:
            self.expectations.forget(key)
            return
        if base.adopt_orphans(self, self.pods, "pods", rs, "apps/v1", KIND):
            return  # the adopted pods' update events bring us back with them counted
        active = [p for p in self.owned_pods(rs) if base.pod_active(p)]
        if self.expectations.satisfied(key) and not base.deleting(rs):
            self._manage(key, rs, active)
            active = [p for p in self.owned_pods(rs) if base.pod_active(p)]
        self._update_status(key, rs, active)

    def _manage(self, key: str, rs: Obj, active: list[Obj]) -> None:
        spec = rs.get("spec") or {}
        want = int(spec.get("replicas", 1) if spec.get("replicas") is not None else 1)
        diff = len(active) - want
        name = str(base.meta(rs).get("name", ""))
        if diff < 0:
            count = min(-diff, 500)
            self.expectations.expect_creations(key, count)
            made = create_pods(self, rs, "apps/v1", KIND, spec.get("template") or {}, [f"{name}-"] * count)
            for _ in range(count - made):
                self.expectations.creation_observed(key)
        elif diff > 0:
            victims = sorted(active, key=_rank)[:diff]
            self.expectations.expect_deletions(key, [base.uid(p) for p in victims])
            ns, _ = split_key(key)
            for pod in victims:
                pname = str(base.meta(pod).get("name", ""))
                try:
                    self.api.delete("pods", pname, ns, user=self.user)
                    self.ctx.recorder.event(rs, "Normal", "SuccessfulDelete", f"Deleted pod: {pname}")
                except client.ApiError as exc:
                    self.expectations.deletion_observed(key, base.uid(pod))
                    if not client.is_not_found(exc):
                        raise

    def _update_status(self, key: str, rs: Obj, active: list[Obj]) -> None:
        spec = rs.get("spec") or {}
        min_ready = int(spec.get("minReadySeconds") or 0)
        tlabels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        ready = [p for p in active if base.pod_ready(p)]
        available = [p for p in ready if base.pod_available(p, min_ready)]
        fully = [
            p
            for p in active
            if all((base.meta(p).get("labels") or {}).get(k) == v for k, v in tlabels.items())
        ]
        old = rs.get("status") or {}
        status: dict[str, Any] = {
            "replicas": len(active),
            "fullyLabeledReplicas": len(fully),
            "readyReplicas": len(ready),
            "availableReplicas": len(available),
            "observedGeneration": base.generation(rs),
        }
        terminating = sum(1 for p in self.owned_pods(rs) if base.deleting(p))
        if terminating:
            status["terminatingReplicas"] = terminating
        if old.get("conditions"):
            status["conditions"] = old["conditions"]
        if min_ready and len(available) < len(ready):
            self.requeue_after(key, float(min_ready))
        if {k: v for k, v in old.items() if v not in (0, None)} == {
            k: v for k, v in status.items() if v not in (0, None)
        }:
            return
        base.write_status(self, RESOURCE, rs, status)
