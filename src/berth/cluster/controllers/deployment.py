"""Deployment controller: Deployment → ReplicaSets, rolling updates, and the status ``kubectl rollout status`` reads.

Why: ``kubectl rollout status``, Helm ``--wait`` and installers wait on Deployment status; they need the rollout
actually to happen: a new ReplicaSet for a changed template, scaled up while old ones scale down within
``maxSurge``/``maxUnavailable``, and status (observedGeneration, replicas, updatedReplicas, readyReplicas,
availableReplicas, unavailableReplicas, conditions Available and Progressing) written as upstream writes it.

ReplicaSets are named ``<deployment>-<pod-template-hash>``. The hash is FNV-32a over the canonical JSON of the pod
template (plus ``status.collisionCount`` when set), encoded like upstream's ``SafeEncodeString``: stable across
restarts and processes, so re-applying the same template finds the same ReplicaSet. The ReplicaSet carries the
``pod-template-hash`` label in its selector and template and a controller ownerReference to the Deployment.

One reconcile, RollingUpdate (after upstream ``rolloutRolling``)::

    find/create new RS ─▶ scale new RS up (≤ replicas + maxSurge in total) ─▶ if it scaled: write status, done
                       ─▶ scale old RSes down (keep ≥ replicas − maxUnavailable available) ─▶ write status
                       ─▶ when complete: delete old RSes beyond revisionHistoryLimit

Recreate scales every old ReplicaSet to 0, waits for their pods to go, then scales the new one up. Progress is
judged like upstream: without progress for ``progressDeadlineSeconds`` the Progressing condition turns False with
reason ``ProgressDeadlineExceeded`` (what makes ``rollout status`` fail). Orphaned ReplicaSets matching the selector are adopted.
Not simulated: proportional scaling of several live ReplicaSets during a rollout.
"""

from __future__ import annotations

import copy
import math
from typing import Any

from berth.cluster.controllers import base, client
from berth.cluster.controllers.informer import OWNER_UID_INDEX, Handler, key_of
from berth.kube.canonical import canonical_json
from berth.kube.naming import pod_template_hash as template_hash
from berth.kube.objects import Obj

RESOURCE = "deployments.apps"
RS_RESOURCE = "replicasets.apps"
HASH_LABEL = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
DESIRED = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"


def _without_hash(template: dict[str, Any]) -> str:
    t = copy.deepcopy(template)
    labels = (t.get("metadata") or {}).get("labels")
    if isinstance(labels, dict):
        labels.pop(HASH_LABEL, None)
    return canonical_json(t)


def resolve(value: Any, total: int, round_up: bool) -> int:
    """An IntOrString (``3`` or ``"25%"``) against ``total``."""
    if value is None:
        return 0
    if isinstance(value, int):
        return value
    text = str(value).strip()
    if text.endswith("%"):
        pct = float(text[:-1])
        amount = pct * total / 100.0
        return math.ceil(amount) if round_up else math.floor(amount)
    return int(text)


def surge_and_unavailable(d: Obj) -> tuple[int, int]:
    """Upstream ``ResolveFenceposts``: (maxSurge, maxUnavailable); both zero is read as unavailable = 1."""
    spec = d.get("spec") or {}
    strategy = spec.get("strategy") or {}
    if (strategy.get("type") or "RollingUpdate") != "RollingUpdate":
        return 0, 0
    ru = strategy.get("rollingUpdate") or {}
    desired = replicas_of(d)
    surge = resolve(ru.get("maxSurge", "25%"), desired, True)
    unavailable = resolve(ru.get("maxUnavailable", "25%"), desired, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def replicas_of(obj: Obj) -> int:
    r = (obj.get("spec") or {}).get("replicas")
    return 1 if r is None else int(r)


def _status_int(obj: Obj, field: str) -> int:
    return int((obj.get("status") or {}).get(field) or 0)


def _revision(rs: Obj) -> int:
    try:
        return int((base.meta(rs).get("annotations") or {}).get(REVISION, "0"))
    except ValueError:
        return 0


class DeploymentController(base.Controller):
    name = "deployment-controller"
    TRACK_WRITES = True

    def __init__(self, ctx: base.Context) -> None:
        super().__init__(ctx)
        self.deployments = ctx.informers.informer(RESOURCE)
        self.sets = ctx.informers.informer(RS_RESOURCE)
        self.sets.add_index(base.ORPHAN_INDEX, base.orphan_namespace)
        self.deployments.add_handler(Handler(on_add=self._enqueue, on_update=lambda _o, n: self._enqueue(n)))
        self.sets.add_handler(
            Handler(
                on_add=self._on_rs,
                on_update=lambda _o, n: self._on_rs(n),
                on_delete=self._on_rs,
            )
        )

    def _enqueue(self, obj: Obj) -> None:
        self.queue.add(key_of(obj))

    def _on_rs(self, rs: Obj) -> None:
        key = base.owner_key(rs, "Deployment")
        if key is not None:
            self.queue.add(key)

    # ---- reconcile -----------------------------------------------------------------------------------------

    def reconcile(self, key: str) -> None:
        d = self.fresher(key, self.deployments.get(key))
        if d is None:
            return
        if base.adopt_orphans(self, self.sets, RS_RESOURCE, d, "apps/v1", "Deployment"):
            return  # the adopted ReplicaSets' update events bring us back
        uid = base.uid(d)
        sets = [rs for rs in self.sets.by_index(OWNER_UID_INDEX, uid) if base.owned_by(rs, uid)]
        template = (d.get("spec") or {}).get("template") or {}
        want = _without_hash(template)
        matching = sorted(
            (rs for rs in sets if _without_hash((rs.get("spec") or {}).get("template") or {}) == want),
            key=lambda rs: str(base.meta(rs).get("creationTimestamp", "")),
        )
        new_rs = matching[0] if matching else None
        old = [rs for rs in sets if rs is not new_rs]
        spec = d.get("spec") or {}
        if base.deleting(d) or spec.get("paused"):
            self._sync_status(key, d, new_rs, old)
            return
        if (spec.get("strategy") or {}).get("type") == "Recreate":
            self._recreate(key, d, new_rs, old)
        else:
            self._rolling(key, d, new_rs, old)

    # ---- strategies ----------------------------------------------------------------------------------------

    def _rolling(self, key: str, d: Obj, new_rs: Obj | None, old: list[Obj]) -> None:
        desired = replicas_of(d)
        surge, unavailable = surge_and_unavailable(d)
        created = False
        if new_rs is None:
            current = sum(replicas_of(rs) for rs in old)
            start = (
                desired
                if not any(replicas_of(rs) for rs in old)
                else max(0, min(desired, desired + surge - current))
            )
            d, new_rs = self._create_rs(d, old, start)
            if new_rs is None:
                return
            created = True
        else:
            d, new_rs = self._sync_revision(d, new_rs, old)
        # scale the new ReplicaSet up (or down to the desired count)
        cur = replicas_of(new_rs)
        if not created and cur != desired:
            if cur > desired:
                new_rs = self._scale(d, new_rs, desired)
                self._sync_status(key, d, new_rs, old)
                return
            total = sum(replicas_of(rs) for rs in old) + cur
            room = desired + surge - total
            if room > 0:
                new_rs = self._scale(d, new_rs, cur + min(room, desired - cur))
                self._sync_status(key, d, new_rs, old)
                return
        # scale old ReplicaSets down without dropping below the minimum available
        old = self._scale_down_old(d, new_rs, old, desired, unavailable)
        if self._complete(d, new_rs, old):
            old = self._cleanup(d, old)
        self._sync_status(key, d, new_rs, old, created=created)

    def _scale_down_old(
        self, d: Obj, new_rs: Obj, old: list[Obj], desired: int, max_unavailable: int
    ) -> list[Obj]:
        live = [rs for rs in old if replicas_of(rs) > 0]
        if not live:
            return old
        all_pods = sum(replicas_of(rs) for rs in old) + replicas_of(new_rs)
        min_available = desired - max_unavailable
        new_unavailable = replicas_of(new_rs) - _status_int(new_rs, "availableReplicas")
        max_scaled_down = all_pods - min_available - new_unavailable
        if max_scaled_down <= 0:
            return old
        by_age = sorted(live, key=lambda rs: str(base.meta(rs).get("creationTimestamp", "")))
        updated: dict[str, Obj] = {}
        # first the unhealthy replicas of old sets (they cost no availability)
        cleaned = 0
        for rs in by_age:
            if cleaned >= max_scaled_down:
                break
            unhealthy = replicas_of(rs) - _status_int(rs, "availableReplicas")
            if unhealthy <= 0:
                continue
            n = min(max_scaled_down - cleaned, unhealthy)
            rs2 = self._scale(d, rs, replicas_of(rs) - n)
            updated[base.uid(rs)] = rs2
            cleaned += n
        current = [updated.get(base.uid(rs), rs) for rs in by_age]
        available = sum(min(_status_int(rs, "availableReplicas"), replicas_of(rs)) for rs in current)
        available += _status_int(new_rs, "availableReplicas")
        total_down = min(available - min_available, max_scaled_down - cleaned)
        for rs in current:
            if total_down <= 0:
                break
            n = min(replicas_of(rs), total_down)
            if n <= 0:
                continue
            updated[base.uid(rs)] = self._scale(d, rs, replicas_of(rs) - n)
            total_down -= n
        return [updated.get(base.uid(rs), rs) for rs in old]

    def _recreate(self, key: str, d: Obj, new_rs: Obj | None, old: list[Obj]) -> None:
        live = [rs for rs in old if replicas_of(rs) > 0]
        if live:
            old = [self._scale(d, rs, 0) if replicas_of(rs) > 0 else rs for rs in old]
            self._sync_status(key, d, new_rs, old)
            return
        if any(_status_int(rs, "replicas") > 0 for rs in old):
            self._sync_status(key, d, new_rs, old)  # old pods still terminating
            return
        desired = replicas_of(d)
        created = False
        if new_rs is None:
            d, new_rs = self._create_rs(d, old, desired)
            if new_rs is None:
                return
            created = True
        else:
            d, new_rs = self._sync_revision(d, new_rs, old)
            if replicas_of(new_rs) != desired:
                new_rs = self._scale(d, new_rs, desired)
        if self._complete(d, new_rs, old):
            old = self._cleanup(d, old)
        self._sync_status(key, d, new_rs, old, created=created)

    # ---- ReplicaSet writes ---------------------------------------------------------------------------------

    def _create_rs(self, d: Obj, old: list[Obj], replicas: int) -> tuple[Obj, Obj | None]:
        spec = d.get("spec") or {}
        status = d.get("status") or {}
        ns = str(base.meta(d).get("namespace", ""))
        dname = str(base.meta(d).get("name", ""))
        template = copy.deepcopy(spec.get("template") or {})
        h = template_hash(template, status.get("collisionCount"))
        tmeta = template.setdefault("metadata", {})
        tmeta.setdefault("labels", {})[HASH_LABEL] = h
        selector = copy.deepcopy(spec.get("selector") or {})
        selector.setdefault("matchLabels", {})[HASH_LABEL] = h
        revision = max((_revision(rs) for rs in old), default=0) + 1
        _surge, _ = surge_and_unavailable(d)
        rs: Obj = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": f"{dname}-{h}",
                "namespace": ns,
                "labels": dict(tmeta["labels"]),
                "annotations": {
                    REVISION: str(revision),
                    DESIRED: str(replicas_of(d)),
                    MAX_REPLICAS: str(replicas_of(d) + _surge),
                },
                "ownerReferences": [base.owner_reference(d, "apps/v1", "Deployment")],
            },
            "spec": {
                "replicas": replicas,
                "minReadySeconds": int(spec.get("minReadySeconds") or 0),
                "selector": selector,
                "template": template,
            },
        }
        try:
            created = self.api.create(RS_RESOURCE, rs, ns, user=self.user)
        except client.ApiError as exc:
            if not client.is_already_exists(exc):
                raise
            existing = self.api.get(RS_RESOURCE, f"{dname}-{h}", ns)
            if base.owned_by(existing, base.uid(d)) and _without_hash(
                (existing.get("spec") or {}).get("template") or {}
            ) == _without_hash(template):
                return d, existing
            # a hash collision: bump collisionCount so the next attempt picks another name
            bumped = copy.deepcopy(status)
            bumped["collisionCount"] = int(status.get("collisionCount") or 0) + 1
            base.write_status(self, RESOURCE, d, bumped)
            return d, None
        self.ctx.recorder.event(
            d,
            "Normal",
            "ScalingReplicaSet",
            f"Scaled up replica set {base.meta(created)['name']} from 0 to {replicas}",
        )
        return self._set_deployment_revision(d, str(revision)), created

    def _set_deployment_revision(self, d: Obj, revision: str) -> Obj:
        if (base.meta(d).get("annotations") or {}).get(REVISION) == revision:
            return d
        new = copy.deepcopy(d)
        new["metadata"].setdefault("annotations", {})[REVISION] = revision
        return self.api.update(RESOURCE, new, base.meta(d).get("namespace"), user=self.user)

    def _sync_revision(self, d: Obj, new_rs: Obj, old: list[Obj]) -> tuple[Obj, Obj]:
        """A template that returns to an older ReplicaSet makes it the newest revision again (as a rollback does)."""
        top = max((_revision(rs) for rs in old), default=0)
        if _revision(new_rs) <= top:
            rs2 = copy.deepcopy(new_rs)
            rs2["metadata"].setdefault("annotations", {})[REVISION] = str(top + 1)
            new_rs = self.api.update(RS_RESOURCE, rs2, base.meta(rs2).get("namespace"), user=self.user)
        rev = str(_revision(new_rs))
        if (base.meta(d).get("annotations") or {}).get(REVISION) != rev:
            d = self._set_deployment_revision(d, rev)
        return d, new_rs

    def _scale(self, d: Obj, rs: Obj, replicas: int) -> Obj:
        cur = replicas_of(rs)
        if cur == replicas:
            return rs
        new = copy.deepcopy(rs)
        new["spec"]["replicas"] = replicas
        ann = new["metadata"].setdefault("annotations", {})
        surge, _ = surge_and_unavailable(d)
        ann[DESIRED] = str(replicas_of(d))
        ann[MAX_REPLICAS] = str(replicas_of(d) + surge)
        out = self.api.update(RS_RESOURCE, new, base.meta(rs).get("namespace"), user=self.user)
        direction = "up" if replicas > cur else "down"
        self.ctx.recorder.event(
            d,
            "Normal",
            "ScalingReplicaSet",
            f"Scaled {direction} replica set {base.meta(rs).get('name')} from {cur} to {replicas}",
        )
        return out

    def _cleanup(self, d: Obj, old: list[Obj]) -> list[Obj]:
        limit = (d.get("spec") or {}).get("revisionHistoryLimit")
        limit = 10 if limit is None else int(limit)
        idle = [
            rs
            for rs in old
            if replicas_of(rs) == 0 and _status_int(rs, "replicas") == 0 and not base.deleting(rs)
        ]
        excess = len(idle) - limit
        if excess <= 0:
            return old
        doomed = sorted(idle, key=_revision)[:excess]
        gone = set()
        ns = str(base.meta(d).get("namespace", ""))
        for rs in doomed:
            try:
                self.api.delete(RS_RESOURCE, str(base.meta(rs).get("name")), ns, user=self.user)
            except client.ApiError as exc:
                if not client.is_not_found(exc):
                    raise
            gone.add(base.uid(rs))
        return [rs for rs in old if base.uid(rs) not in gone]

    # ---- status --------------------------------------------------------------------------------------------

    @staticmethod
    def _complete(d: Obj, new_rs: Obj | None, old: list[Obj]) -> bool:
        desired = replicas_of(d)
        if new_rs is None:
            return desired == 0 and not any(_status_int(rs, "replicas") for rs in old)
        replicas = _status_int(new_rs, "replicas") + sum(_status_int(rs, "replicas") for rs in old)
        return (
            _status_int(new_rs, "replicas") == desired
            and replicas == desired
            and _status_int(new_rs, "availableReplicas") == desired
            and replicas_of(new_rs) == desired
            and not any(replicas_of(rs) for rs in old)
        )

    def _sync_status(
        self, key: str, d: Obj, new_rs: Obj | None, old: list[Obj], *, created: bool = False
    ) -> None:
        """Write the Deployment's status and its Available and Progressing conditions (with the progress deadline)
        from its ReplicaSets. One function past the size guide on purpose: it follows upstream's ``syncRolloutStatus``
        and ``calculateStatus`` step by step, and each condition's reason depends on the ones before it."""
        sets = ([new_rs] if new_rs is not None else []) + old
        desired = replicas_of(d)
        _, max_unavailable = surge_and_unavailable(d)
        replicas = sum(_status_int(rs, "replicas") for rs in sets)
        updated = _status_int(new_rs, "replicas") if new_rs is not None else 0
        ready = sum(_status_int(rs, "readyReplicas") for rs in sets)
        available = sum(_status_int(rs, "availableReplicas") for rs in sets)
        terminating = sum(_status_int(rs, "terminatingReplicas") for rs in sets)
        prev = d.get("status") or {}
        status: dict[str, Any] = {
            "observedGeneration": base.generation(d),
            "replicas": replicas,
            "updatedReplicas": updated,
            "readyReplicas": ready,
            "availableReplicas": available,
            "unavailableReplicas": max(desired - available, 0),
        }
        if terminating:
            status["terminatingReplicas"] = terminating
        if prev.get("collisionCount") is not None:
            status["collisionCount"] = prev["collisionCount"]
        conds = copy.deepcopy(prev.get("conditions") or [])
        stamp = base.fmt_time()
        rs_name = str(base.meta(new_rs).get("name")) if new_rs is not None else ""

        def put(ctype: str, value: str, reason: str, message: str, touch: bool) -> None:
            for c in conds:
                if c.get("type") == ctype:
                    if c.get("status") != value:
                        c["lastTransitionTime"] = stamp
                        touch = True
                    if c.get("reason") != reason or c.get("message") != message:
                        touch = True
                    c.update(status=value, reason=reason, message=message)
                    if touch:
                        c["lastUpdateTime"] = stamp
                    return
            conds.append(
                {
                    "type": ctype,
                    "status": value,
                    "lastUpdateTime": stamp,
                    "lastTransitionTime": stamp,
                    "reason": reason,
                    "message": message,
                }
            )

        min_available = available >= desired - max_unavailable
        put(
            "Available",
            "True" if min_available else "False",
            "MinimumReplicasAvailable" if min_available else "MinimumReplicasUnavailable",
            "Deployment has minimum availability."
            if min_available
            else "Deployment does not have minimum availability.",
            False,
        )
        deadline = (d.get("spec") or {}).get("progressDeadlineSeconds")
        complete = self._complete(d, new_rs, old) and status["observedGeneration"] >= base.generation(d)
        progress = (
            created
            or any(
                status[f] > int(prev.get(f) or 0)
                for f in ("updatedReplicas", "readyReplicas", "availableReplicas")
            )
            or sum(_status_int(rs, "replicas") for rs in old)
            < (int(prev.get("replicas") or 0) - int(prev.get("updatedReplicas") or 0))
        )
        if complete:
            put(
                "Progressing",
                "True",
                "NewReplicaSetAvailable",
                f'ReplicaSet "{rs_name}" has successfully progressed.',
                True,
            )
        elif created:
            put("Progressing", "True", "NewReplicaSetCreated", f'Created new replica set "{rs_name}"', True)
        elif new_rs is not None:
            cur = next((c for c in conds if c.get("type") == "Progressing"), None)
            timed_out = False
            if (
                deadline is not None
                and cur is not None
                and not progress
                and cur.get("reason") != "NewReplicaSetAvailable"
            ):
                age = base.age_seconds(cur.get("lastUpdateTime"))
                timed_out = age is not None and age > float(deadline)
                if not timed_out and age is not None:
                    self.requeue_after(key, float(deadline) - age + 0.01)
            if timed_out or (
                cur is not None and cur.get("reason") == "ProgressDeadlineExceeded" and not progress
            ):
                put(
                    "Progressing",
                    "False",
                    "ProgressDeadlineExceeded",
                    f'ReplicaSet "{rs_name}" has timed out progressing.',
                    False,
                )
            elif (
                cur is None
                or progress
                or cur.get("reason") in ("NewReplicaSetAvailable", "ProgressDeadlineExceeded")
            ):
                put(
                    "Progressing",
                    "True",
                    "ReplicaSetUpdated",
                    f'ReplicaSet "{rs_name}" is progressing.',
                    True,
                )
            elif deadline is not None and cur is not None and cur.get("status") == "True":
                pass
        if deadline is not None and not complete and new_rs is not None:
            self.requeue_after(key, float(deadline) + 0.05)
        status["conditions"] = sorted(conds, key=lambda c: 0 if c.get("type") == "Available" else 1)
        if _strip_times(status) == _strip_times(prev):
            return
        base.write_status(self, RESOURCE, d, status)


def _strip_times(status: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in status.items() if k != "conditions" and v not in (0, None)}
    out["conditions"] = sorted(
        (
            {k: v for k, v in c.items() if k not in ("lastUpdateTime", "lastTransitionTime")}
            for c in status.get("conditions") or []
        ),
        key=lambda c: str(c.get("type")),
    )
    return out
