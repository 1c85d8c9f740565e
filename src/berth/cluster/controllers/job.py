"""Job controller: Job → pods until enough succeed (Complete) or too many fail (Failed), with upstream's conditions.

Why: ``kubectl wait --for=condition=complete``, Helm hooks (``--wait`` on hook Jobs) and installers that run
migrations wait on Job conditions. Since Kubernetes 1.31 a finishing Job first gets an interim condition and only
then the terminal one, once no pod is still running; clients that watch for it see the same order here:

    running ─(succeeded ≥ completions)──▶ SuccessCriteriaMet ──(no active pods)──▶ Complete + completionTime
            ─(failed > backoffLimit)───▶ FailureTarget (BackoffLimitExceeded) ─(active pods deleted)─▶ Failed
            ─(activeDeadlineSeconds)───▶ FailureTarget (DeadlineExceeded) ─────────────────────────────▶ Failed

Pods are named ``<job>-<5 chars>`` (``<job>-<index>-<5 chars>`` in Indexed mode) and labelled
``batch.kubernetes.io/job-name``, ``batch.kubernetes.io/controller-uid``, ``job-name`` and ``controller-uid``.
``parallelism`` bounds active pods; ``completions`` unset means "done when any pod succeeds" (work-queue Jobs).
``suspend: true`` deletes active pods; ``ttlSecondsAfterFinished`` deletes a finished Job. A failed pod is replaced at
once (upstream's exponential back-off delay between retries is not simulated). The kubelet decides success or
failure; a Job annotated ``berth.dev/simulate-failure: "true"`` gets failing pods (see :mod:`.kubelet`).
"""

from __future__ import annotations

import copy
from typing import Any

from berth.cluster.controllers import base, client
from berth.cluster.controllers.expectations import Expectations
from berth.cluster.controllers.informer import OWNER_UID_INDEX, Handler, key_of, split_key
from berth.cluster.controllers.replicaset import create_pods
from berth.kube.objects import Obj

RESOURCE = "jobs.batch"
KIND = "Job"
INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"


def finished(job: Obj) -> str | None:
    """``Complete`` or ``Failed`` when the Job has that terminal condition, else None."""
    for ctype in ("Complete", "Failed"):
        if base.condition_true(job, ctype):
            return ctype
    return None


def _index_of(pod: Obj) -> int | None:
    value = (base.meta(pod).get("annotations") or {}).get(INDEX_ANNOTATION)
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def format_indexes(indexes: set[int]) -> str:
    """Upstream's compressed interval form: ``{0,1,2,5}`` → ``0-2,5``."""
    out: list[str] = []
    run: list[int] = []
    for i in sorted(indexes):
        if run and i == run[-1] + 1:
            run.append(i)
            continue
        if run:
            out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
        run = [i]
    if run:
        out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return ",".join(out)


class JobController(base.Controller):
    name = "job-controller"
    TRACK_WRITES = True

    def __init__(self, ctx: base.Context) -> None:
        super().__init__(ctx)
        self.jobs = ctx.informers.informer(RESOURCE)
        self.pods = ctx.informers.informer("pods")
        self.expectations = Expectations()
        self.jobs.add_handler(
            Handler(
                on_add=self._enqueue, on_update=lambda _o, n: self._enqueue(n), on_delete=self._on_job_deleted
            )
        )
        self.pods.add_handler(
            Handler(on_add=self._on_pod_add, on_update=self._on_pod_update, on_delete=self._on_pod_delete)
        )

    def _enqueue(self, obj: Obj) -> None:
        self.queue.add(key_of(obj))

    def _on_job_deleted(self, obj: Obj) -> None:
        self.expectations.forget(key_of(obj))

    def _on_pod_add(self, pod: Obj) -> None:
        key = base.owner_key(pod, KIND)
        if key is not None:
            self.expectations.creation_observed(key)
            self.queue.add(key)

    def _on_pod_update(self, _old: Obj, new: Obj) -> None:
        key = base.owner_key(new, KIND)
        if key is not None:
            if base.deleting(new):
                self.expectations.deletion_observed(key, base.uid(new))
            self.queue.add(key)

    def _on_pod_delete(self, pod: Obj) -> None:
        key = base.owner_key(pod, KIND)
        if key is not None:
            self.expectations.deletion_observed(key, base.uid(pod))
            self.queue.add(key)

    # ---- reconcile -----------------------------------------------------------------------------------------

    def reconcile(self, key: str) -> None:
        job = self.fresher(key, self.jobs.get(key))
        if job is None:
            self.expectations.forget(key)
            return
        if finished(job):
            self._ttl(key, job)
            return
        if base.deleting(job):
            return
        uid = base.uid(job)
        pods = [p for p in self.pods.by_index(OWNER_UID_INDEX, uid) if base.owned_by(p, uid)]
        spec = job.get("spec") or {}
        prev = job.get("status") or {}
        status: dict[str, Any] = copy.deepcopy(prev)
        active = [p for p in pods if base.pod_active(p)]
        succeeded_pods = [p for p in pods if base.pod_phase(p) == "Succeeded"]
        failed_pods = [p for p in pods if base.pod_phase(p) == "Failed"]
        indexed = spec.get("completionMode") == "Indexed"
        completions = spec.get("completions")
        parallelism = base.int_field(spec, "parallelism", 1)
        backoff_limit = base.int_field(spec, "backoffLimit", 6)
        done_indexes: set[int] = set()
        if indexed:
            done_indexes = {i for p in succeeded_pods if (i := _index_of(p)) is not None}
            succeeded = len(done_indexes)
        else:
            succeeded = max(int(prev.get("succeeded") or 0), len(succeeded_pods))
        failed = max(int(prev.get("failed") or 0), len(failed_pods))
        suspended = bool(spec.get("suspend"))
        if not suspended and not status.get("startTime"):
            status["startTime"] = base.fmt_time()
        job_ref = job
        if base.condition_true(job, "FailureTarget") or base.condition_true(job, "SuccessCriteriaMet"):
            target = base.condition(job, "FailureTarget")
            self._delete_pods(key, job, active)
            remaining = [p for p in active if base.meta(p).get("finalizers")]
            if not remaining:
                if target is not None and target.get("status") == "True":
                    self._condition(
                        status, "Failed", str(target.get("reason", "")), str(target.get("message", ""))
                    )
                else:
                    self._condition(
                        status, "Complete", "CompletionsReached", "Reached expected number of succeeded pods"
                    )
                    status["completionTime"] = base.fmt_time()
                    self.ctx.recorder.event(job_ref, "Normal", "Completed", "Job completed")
                active = []
        else:
            deadline = spec.get("activeDeadlineSeconds")
            age = base.age_seconds(status.get("startTime"))
            if failed > backoff_limit:
                msg = "Job has reached the specified backoff limit"
                self._condition(status, "FailureTarget", "BackoffLimitExceeded", msg)
                self.ctx.recorder.event(job_ref, "Warning", "BackoffLimitExceeded", msg)
                self.requeue_after(key, 0.0)
            elif deadline is not None and age is not None and not suspended and age >= float(deadline):
                msg = "Job was active longer than specified deadline"
                self._condition(status, "FailureTarget", "DeadlineExceeded", msg)
                self.ctx.recorder.event(job_ref, "Warning", "DeadlineExceeded", msg)
                self.requeue_after(key, 0.0)
            elif (completions is not None and succeeded >= int(completions)) or (
                completions is None and succeeded > 0 and not active
            ):
                self._condition(
                    status,
                    "SuccessCriteriaMet",
                    "CompletionsReached",
                    "Reached expected number of succeeded pods",
                )
                self.requeue_after(key, 0.0)
            else:
                if deadline is not None and age is not None and not suspended:
                    self.requeue_after(key, float(deadline) - age + 0.01)
                if self.expectations.satisfied(key):
                    if suspended:
                        self._delete_pods(key, job, active)
                        active = []
                    else:
                        active = self._manage(
                            key, job, active, succeeded, done_indexes, completions, parallelism, indexed
                        )
        status["active"] = len([p for p in active if base.pod_active(p)])
        status["succeeded"] = succeeded
        status["failed"] = failed
        status["ready"] = len([p for p in active if base.pod_ready(p)])
        status["terminating"] = len([p for p in pods if base.deleting(p)])
        if indexed:
            status["completedIndexes"] = format_indexes(done_indexes)
        status.setdefault("uncountedTerminatedPods", {})
        for k in ("active", "succeeded", "failed", "terminating"):
            if not status.get(k):
                status.pop(k, None)
        if status == prev:
            return
        base.write_status(self, RESOURCE, job, status)

    @staticmethod
    def _condition(status: dict[str, Any], ctype: str, reason: str, message: str) -> None:
        conds: list[dict[str, Any]] = status.setdefault("conditions", [])
        stamp = base.fmt_time()
        for c in conds:
            if c.get("type") == ctype:
                return
        conds.append(
            {
                "type": ctype,
                "status": "True",
                "lastProbeTime": stamp,
                "lastTransitionTime": stamp,
                "reason": reason,
                "message": message,
            }
        )

    def _manage(
        self,
        key: str,
        job: Obj,
        active: list[Obj],
        succeeded: int,
        done_indexes: set[int],
        completions: Any,
        parallelism: int,
        indexed: bool,
    ) -> list[Obj]:
        if completions is None:
            want = 0 if succeeded > 0 else parallelism
        else:
            want = max(0, min(parallelism, int(completions) - succeeded))
        diff = want - len(active)
        spec = job.get("spec") or {}
        name = str(base.meta(job).get("name", ""))
        uid = base.uid(job)
        extra = {
            "batch.kubernetes.io/controller-uid": uid,
            "batch.kubernetes.io/job-name": name,
            "controller-uid": uid,
            "job-name": name,
        }
        if diff > 0:
            if indexed and completions is not None:
                busy = {i for p in active if (i := _index_of(p)) is not None}
                todo = [i for i in range(int(completions)) if i not in done_indexes and i not in busy][:diff]
                self.expectations.expect_creations(key, len(todo))
                made = 0
                for i in todo:

                    def mutate(pod: Obj, i: int = i) -> None:
                        pod["metadata"].setdefault("annotations", {})[INDEX_ANNOTATION] = str(i)
                        pod["metadata"]["labels"][INDEX_ANNOTATION] = str(i)
                        pod["spec"].setdefault("hostname", f"{name}-{i}")

                    made += create_pods(
                        self,
                        job,
                        "batch/v1",
                        KIND,
                        spec.get("template") or {},
                        [f"{name}-{i}-"],
                        extra,
                        mutate,
                    )
                for _ in range(len(todo) - made):
                    self.expectations.creation_observed(key)
            else:
                self.expectations.expect_creations(key, diff)
                made = create_pods(
                    self, job, "batch/v1", KIND, spec.get("template") or {}, [f"{name}-"] * diff, extra
                )
                for _ in range(diff - made):
                    self.expectations.creation_observed(key)
        elif diff < 0:
            victims = sorted(
                active, key=lambda p: (base.pod_ready(p), str(base.meta(p).get("creationTimestamp", "")))
            )[:-diff]
            self._delete_pods(key, job, victims)
            active = [p for p in active if p not in victims]
        return active

    def _delete_pods(self, key: str, job: Obj, pods: list[Obj]) -> None:
        if not pods:
            return
        ns, _ = split_key(key)
        self.expectations.expect_deletions(key, [base.uid(p) for p in pods])
        for pod in pods:
            if base.deleting(pod):
                continue
            pname = str(base.meta(pod).get("name", ""))
            try:
                self.api.delete("pods", pname, ns, user=self.user)
                self.ctx.recorder.event(job, "Normal", "SuccessfulDelete", f"Deleted pod: {pname}")
            except client.ApiError as exc:
                self.expectations.deletion_observed(key, base.uid(pod))
                if not client.is_not_found(exc):
                    raise

    def _ttl(self, key: str, job: Obj) -> None:
        ttl = (job.get("spec") or {}).get("ttlSecondsAfterFinished")
        if ttl is None or base.deleting(job):
            return
        status = job.get("status") or {}
        cond = base.condition(job, finished(job) or "Complete") or {}
        age = base.age_seconds(status.get("completionTime") or cond.get("lastTransitionTime"))
        if age is None:
            return
        if age < float(ttl):
            self.requeue_after(key, float(ttl) - age + 0.01)
            return
        ns, name = split_key(key)
        try:
            self.api.delete(RESOURCE, name, ns, propagation="Background", user=self.user)
        except client.ApiError as exc:
            if not client.is_not_found(exc):
                raise
