"""StatefulSet controller: pods ``<name>-0 .. <name>-(N-1)`` with stable identities, in order.

Why: databases and other stateful charts ship StatefulSets and wait for them (``kubectl rollout status sts``,
Helm ``--wait``), which read readyReplicas, updatedReplicas and currentRevision/updateRevision.

Behaviour (upstream's, simplified): with ``podManagementPolicy: OrderedReady`` (the default) pod *i* is created only
when pods 0..i-1 exist and are Ready, and scale-down removes the highest ordinal first, one at a time; ``Parallel``
creates and deletes all at once. Each pod carries ``statefulset.kubernetes.io/pod-name``,
``apps.kubernetes.io/pod-index`` and ``controller-revision-hash`` (``<name>-<hash>``), ``hostname`` = pod name and
``subdomain`` = ``serviceName``. A ControllerRevision per template revision is kept. RollingUpdate replaces pods
at ordinals ≥ ``partition`` whose revision is old, highest first, one at a time once all pods are Ready; when every
pod is updated and Ready, ``currentRevision`` becomes ``updateRevision``. PersistentVolumeClaims are created from
``volumeClaimTemplates`` (``<claim>-<name>-<i>``) and stay Pending: no volume provisioner is simulated.
"""

from __future__ import annotations

import copy
from typing import Any

from berth.cluster import objmeta
from berth.cluster.controllers import base, client
from berth.cluster.controllers.informer import OWNER_UID_INDEX, Handler, key_of, split_key
from berth.kube.naming import pod_template_hash as template_hash
from berth.kube.objects import Obj

RESOURCE = "statefulsets.apps"
KIND = "StatefulSet"
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
REVISION_LABEL = "controller-revision-hash"


def ordinal(sts_name: str, pod: Obj) -> int | None:
    name = str(base.meta(pod).get("name", ""))
    prefix = f"{sts_name}-"
    if not name.startswith(prefix) or not name[len(prefix) :].isdigit():
        return None
    return int(name[len(prefix) :])


class StatefulSetController(base.Controller):
    name = "statefulset-controller"
    TRACK_WRITES = True

    def __init__(self, ctx: base.Context) -> None:
        super().__init__(ctx)
        self.sets = ctx.informers.informer(RESOURCE)
        self.pods = ctx.informers.informer("pods")
        self.revisions = ctx.informers.informer(base.REVISIONS)
        self.sets.add_handler(Handler(on_add=self._enqueue, on_update=lambda _o, n: self._enqueue(n)))
        self.pods.add_handler(
            Handler(on_add=self._on_pod, on_update=lambda _o, n: self._on_pod(n), on_delete=self._on_pod)
        )

    def _enqueue(self, obj: Obj) -> None:
        self.queue.add(key_of(obj))

    def _on_pod(self, pod: Obj) -> None:
        key = base.owner_key(pod, KIND)
        if key is not None:
            self.queue.add(key)

    # ---- revisions -----------------------------------------------------------------------------------------

    def _ensure_revision(self, sts: Obj, rev_name: str, h: str) -> None:
        base.ensure_revision(self, self.revisions, sts, KIND, rev_name, h)

    # ---- reconcile -----------------------------------------------------------------------------------------

    def reconcile(self, key: str) -> None:
        sts = self.fresher(key, self.sets.get(key))
        if sts is None:
            return
        ns, name = split_key(key)
        spec = sts.get("spec") or {}
        uid = base.uid(sts)
        pods = [p for p in self.pods.by_index(OWNER_UID_INDEX, uid) if base.owned_by(p, uid)]
        by_ordinal: dict[int, Obj] = {}
        for p in pods:
            i = ordinal(name, p)
            if i is not None:
                by_ordinal[i] = p
        replicas = base.int_field(spec, "replicas", 1)
        h = template_hash(spec.get("template") or {})
        update_rev = f"{name}-{h}"
        prev = sts.get("status") or {}
        current_rev = str(prev.get("currentRevision") or update_rev)
        if not base.deleting(sts):
            self._ensure_revision(sts, update_rev, h)
            self._manage(sts, name, ns, by_ordinal, replicas, update_rev, current_rev)
        self._update_status(key, sts, by_ordinal, replicas, update_rev, current_rev)

    def _manage(
        self,
        sts: Obj,
        name: str,
        ns: str,
        pods: dict[int, Obj],
        replicas: int,
        update_rev: str,
        current_rev: str,
    ) -> None:
        spec = sts.get("spec") or {}
        parallel = spec.get("podManagementPolicy") == "Parallel"
        strategy = spec.get("updateStrategy") or {}
        partition = int(((strategy.get("rollingUpdate") or {}).get("partition")) or 0)
        # failed or finished pods are deleted so they can be recreated
        for _i, pod in sorted(pods.items()):
            if base.pod_finished(pod) and not base.deleting(pod):
                self._delete(sts, ns, pod)
                return
        # scale up (in order unless Parallel)
        for i in range(replicas):
            existing = pods.get(i)
            if existing is None:
                rev = update_rev if i >= partition or current_rev == update_rev else current_rev
                self._create(sts, name, ns, i, rev)
                if not parallel:
                    return
                continue
            if not parallel and (base.deleting(existing) or not base.pod_ready(existing)):
                return  # OrderedReady: wait for this one before touching the next
        if parallel and any(i not in pods for i in range(replicas)):
            return
        # scale down, highest ordinal first
        condemned = sorted((i for i in pods if i >= replicas), reverse=True)
        if condemned:
            if parallel:
                for i in condemned:
                    if not base.deleting(pods[i]):
                        self._delete(sts, ns, pods[i])
                return
            if any(base.deleting(pods[i]) for i in condemned):
                return
            if all(base.pod_ready(pods[i]) for i in range(replicas) if i in pods):
                self._delete(sts, ns, pods[condemned[0]])
            return
        # rolling update: highest stale ordinal ≥ partition, once everything is Ready
        if (strategy.get("type") or "RollingUpdate") != "RollingUpdate":
            return
        if not all(base.pod_ready(pods[i]) and not base.deleting(pods[i]) for i in range(replicas)):
            return
        for i in range(replicas - 1, partition - 1, -1):
            labels = base.meta(pods[i]).get("labels") or {}
            if labels.get(REVISION_LABEL) != update_rev:
                self._delete(sts, ns, pods[i])
                return

    def _create(self, sts: Obj, name: str, ns: str, i: int, rev: str) -> None:
        spec = sts.get("spec") or {}
        template = copy.deepcopy(spec.get("template") or {})
        if rev != f"{name}-{template_hash(template)}":
            # an older revision: use the template stored with it when we have it
            stored = self.revisions.get(objmeta.ns_name_key(ns, rev))
            if stored is not None:
                t = copy.deepcopy(((stored.get("data") or {}).get("spec") or {}).get("template") or {})
                t.pop("$patch", None)
                template = t or template
        pod_name = f"{name}-{i}"
        labels = {POD_NAME_LABEL: pod_name, POD_INDEX_LABEL: str(i), REVISION_LABEL: rev}
        pod = base.pod_from_template(
            template, ns, pod_name, base.owner_reference(sts, "apps/v1", KIND), labels
        )
        pod["spec"]["hostname"] = pod_name
        if spec.get("serviceName"):
            pod["spec"]["subdomain"] = spec["serviceName"]
        volumes: list[dict[str, Any]] = pod["spec"].setdefault("volumes", [])
        for vct in spec.get("volumeClaimTemplates") or []:
            claim = str(base.meta(vct).get("name", ""))
            claim_name = f"{claim}-{pod_name}"
            self._ensure_claim(sts, ns, vct, claim_name)
            volumes[:] = [v for v in volumes if v.get("name") != claim]
            volumes.append({"name": claim, "persistentVolumeClaim": {"claimName": claim_name}})
        if not volumes:
            pod["spec"].pop("volumes")
        try:
            self.api.create("pods", pod, ns, user=self.user)
        except client.ApiError as exc:
            if client.is_already_exists(exc):
                return
            self.ctx.recorder.event(
                sts,
                "Warning",
                "FailedCreate",
                f"create Pod {pod_name} in StatefulSet {name} failed error: {exc.message}",
            )
            raise
        self.ctx.recorder.event(
            sts, "Normal", "SuccessfulCreate", f"create Pod {pod_name} in StatefulSet {name} successful"
        )

    def _ensure_claim(self, sts: Obj, ns: str, vct: Obj, claim_name: str) -> None:
        labels = dict((base.meta(vct).get("labels")) or {})
        labels.update(((sts.get("spec") or {}).get("selector") or {}).get("matchLabels") or {})
        pvc = {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": claim_name, "namespace": ns, "labels": labels},
            "spec": copy.deepcopy(vct.get("spec") or {}),
        }
        try:
            self.api.create("persistentvolumeclaims", pvc, ns, user=self.user)
        except client.ApiError as exc:
            if not client.is_already_exists(exc):
                raise

    def _delete(self, sts: Obj, ns: str, pod: Obj) -> None:
        pname = str(base.meta(pod).get("name", ""))
        try:
            self.api.delete("pods", pname, ns, user=self.user)
        except client.ApiError as exc:
            if not client.is_not_found(exc):
                raise
            return
        self.ctx.recorder.event(
            sts,
            "Normal",
            "SuccessfulDelete",
            f"delete Pod {pname} in StatefulSet {base.meta(sts).get('name')} successful",
        )

    def _update_status(
        self, key: str, sts: Obj, pods: dict[int, Obj], replicas: int, update_rev: str, current_rev: str
    ) -> None:
        spec = sts.get("spec") or {}
        min_ready = int(spec.get("minReadySeconds") or 0)
        live = [p for p in pods.values() if not base.deleting(p)]
        ready = [p for p in live if base.pod_ready(p)]
        available = [p for p in ready if base.pod_available(p, min_ready)]

        def at(rev: str) -> int:
            return sum(1 for p in live if (base.meta(p).get("labels") or {}).get(REVISION_LABEL) == rev)

        updated = at(update_rev)
        if updated == len(live) == replicas and len(ready) == replicas:
            current_rev = update_rev
        prev = sts.get("status") or {}
        status: dict[str, Any] = {
            "observedGeneration": base.generation(sts),
            "replicas": len(live),
            "readyReplicas": len(ready),
            "currentReplicas": at(current_rev),
            "updatedReplicas": updated,
            "availableReplicas": len(available),
            "currentRevision": current_rev,
            "updateRevision": update_rev,
            "collisionCount": int(prev.get("collisionCount") or 0),
        }
        if min_ready and len(available) < len(ready):
            self.requeue_after(key, float(min_ready))
        if prev.get("conditions"):
            status["conditions"] = prev["conditions"]
        if status == prev:
            return
        base.write_status(self, RESOURCE, sts, status)
