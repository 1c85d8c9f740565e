"""The live binder: ``POST pods/<name>/binding`` through the official client (upstream ``DefaultBinder``).

Why a module: this is the one write that places a pod, so its failure modes decide whether a pod can be lost or
bound twice. The framework calls :meth:`ApiBinder.bind` synchronously inside the binding cycle; on failure the
:class:`~berth.schedule.Scheduler` un-reserves, forgets the assumed pod and re-queues it (upstream
``handleBindingCycleError``). What each answer means:

- 201: bound. The pod stays *assumed* in the cache until the pod informer reports ``spec.nodeName`` (confirmed).
- 409 (already bound, by us in an attempt whose answer was lost, or by another scheduler): an error for this cycle;
  the pod is forgotten and re-queued, and the informer's update (it has a node now) drops it from the queue. The
  API server never binds a pod twice, so re-trying is safe.
- 404 (deleted meanwhile): same; the informer's delete drops it.
- 403: logged once as a missing permission, then as 409.
- no answer (API server restarting): same as 409 -- if the bind did land, the informer will show it.

After a 409 or no answer the pod may be bound (:data:`MAYBE_BOUND` on the failed status; :meth:`ApiBinder.settle`
for a binding made synchronously), so the live scheduler asks the server before reporting the failure, on either
path: a pod found bound gets no ``FailedScheduling`` Event and no ``PodScheduled=False``.

Preemption (:meth:`ApiBinder.evict`, upstream ``Evaluator.PreemptPod``): a ``pods/status`` strategic-merge patch
adding ``DisruptionTarget=True`` (reason ``PreemptionByScheduler``, message ``<scheduler>: preempting to
accommodate a higher priority pod``), then ``DELETE`` of the victim, then a ``Preempted`` event on it (``Preempted
by pod <preemptor uid> on node <node>``). A 404 at either step means the victim is already gone: success, no
event. A victim already being deleted (``deletionTimestamp``) is left alone, as upstream does.

The body is a ``v1.Binding`` with the pod's uid (so a pod deleted and re-created under the same name is not bound
by mistake), sent as raw JSON (:func:`berth.schedule.live.api.call`; the server answers with a ``Status``, which the
official client's typed method could not even read as a ``V1Binding``, kubernetes-client/python #547).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from berth.schedule import Placement
from berth.schedule.framework.interface import SUCCESS, Code, Status
from berth.schedule.framework.types import PodInfo
from berth.schedule.live import api, events

DISRUPTION_TARGET = "DisruptionTarget"
PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"
PREEMPTED = "Preempted"
ACTION_PREEMPTING = "Preempting"
STRATEGIC_MERGE = api.STRATEGIC_MERGE_PATCH


# Marks a failed binding after which the pod may be bound all the same: the answer was lost (the server may have
# committed it as it died) or was 409 (bound already -- by an attempt whose answer was lost, or by someone else).
MAYBE_BOUND = "binding-outcome-unknown"


def may_be_bound(status: Status) -> bool:
    """Did this failed binding leave the pod possibly bound (see :data:`MAYBE_BOUND`)?"""
    return status.plugin == MAYBE_BOUND


class ApiBinder:
    """Binds through the API; keeps counts for metrics and tests."""

    echoes_bindings = False  # the pod informer reports the bound pod back

    def __init__(self, api_client: Any, permissions: api.PermissionLog) -> None:
        self._api_client = api_client
        self._permissions = permissions
        self._lock = threading.Lock()
        self.bound: list[Placement] = []
        self.evicted: list[str] = []  # ns/name of preemption victims deleted
        self.conflicts = 0
        self.errors = 0
        self._unsettled: set[str] = set()  # pods whose last binding failed as MAYBE_BOUND (see settle())
        self.recorder: events.EventRecorder | None = (
            None  # where Preempted events go (set by the live scheduler)
        )

    def bind(self, pod: PodInfo, node_name: str) -> Status:
        return self.bind_many([(pod, node_name)])[0]

    def bind_many(self, bindings: Sequence[tuple[PodInfo, str]]) -> list[Status]:
        """Bind several pods with their requests pipelined on one connection (:func:`api.call_many`); each
        binding's Status, in order, as :meth:`bind` would answer it alone."""
        calls: list[api.Call] = []
        for pod, node_name in bindings:
            meta: dict[str, Any] = {"name": pod.name, "namespace": pod.namespace}
            uid = str((pod.pod.get("metadata") or {}).get("uid") or "")
            if uid:
                meta["uid"] = uid
            body = {
                "apiVersion": "v1",
                "kind": "Binding",
                "metadata": meta,
                "target": {"kind": "Node", "name": node_name},
            }
            path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/binding"
            calls.append(("POST", path, body, api.JSON))
        answers = api.call_many(self._api_client, calls, decode=False)  # a success answers a bare Status
        return [
            self._outcome(pod, node, answer) for (pod, node), answer in zip(bindings, answers, strict=True)
        ]

    def _outcome(self, pod: PodInfo, node_name: str, answer: Any) -> Status:
        """What one binding's answer means (see the module docstring)."""
        if isinstance(answer, api.ApiError):
            with self._lock:
                if answer.status == 409:
                    self.conflicts += 1
                    self._unsettled.add(pod.key)
                else:
                    self.errors += 1
            if answer.status == 403:
                self._permissions.forbidden("create", "pods/binding", "", pod.namespace, answer)
            plugin = MAYBE_BOUND if answer.status == 409 else ""
            return Status(Code.ERROR, (f"binding rejected: {answer.message or answer}",), plugin)
        if isinstance(answer, api.Unreachable):
            with self._lock:
                self.errors += 1
                self._unsettled.add(pod.key)
            return Status(Code.ERROR, (f"binding failed: API server unreachable: {answer}",), MAYBE_BOUND)
        with self._lock:
            self.bound.append(Placement(pod.key, pod.scheduler_name, node_name))
            self._unsettled.discard(pod.key)
        return SUCCESS

    def settle(self, key: str) -> bool:
        """Did the last binding of pod ``key`` fail as :data:`MAYBE_BOUND`? Answered once (the mark is removed):
        how the live scheduler learns it of a binding the framework made synchronously, whose Status it never
        sees."""
        with self._lock:
            if key not in self._unsettled:
                return False
            self._unsettled.discard(key)
            return True

    def evict(self, victim: PodInfo, preemptor: PodInfo, node_name: str) -> Status:
        """Preempt ``victim`` for ``preemptor`` (see the module docstring); an Error status names the failed step."""
        meta = victim.pod.get("metadata") or {}
        if meta.get("deletionTimestamp"):
            return SUCCESS
        path = f"/api/v1/namespaces/{victim.namespace}/pods/{victim.name}"
        condition = {
            "type": DISRUPTION_TARGET,
            "status": "True",
            "reason": PREEMPTION_BY_SCHEDULER,
            "message": f"{preemptor.scheduler_name}: preempting to accommodate a higher priority pod",
        }
        calls: list[tuple[str, str, str, Any, str]] = []
        if not _has_condition(victim.pod, condition):
            body = {"status": {"conditions": [{**condition, "lastTransitionTime": events.rfc3339()}]}}
            calls.append(("PATCH", "pods/status", f"{path}/status", body, STRATEGIC_MERGE))
        calls.append(("DELETE", "pods", path, None, api.JSON))
        for method, resource, url, body, content_type in calls:
            verb = method.lower()
            try:
                api.call(self._api_client, method, url, body=body, content_type=content_type)
            except api.ApiError as exc:
                if exc.status == 404:
                    return SUCCESS  # already gone
                if exc.status == 403:
                    self._permissions.forbidden(verb, resource, "", victim.namespace, exc)
                return Status(
                    Code.ERROR, (f"preemption: {verb} {resource} {victim.key}: {exc.message or exc}",)
                )
            except api.Unreachable as exc:
                return Status(
                    Code.ERROR, (f"preemption: {verb} {resource} {victim.key}: unreachable: {exc}",)
                )
        with self._lock:
            self.evicted.append(victim.key)
        if self.recorder is not None:
            uid = str((preemptor.pod.get("metadata") or {}).get("uid") or "")
            note = f"Preempted by pod {uid} on node {node_name}"
            self.recorder.record(
                events.PodEvent(
                    victim.pod,
                    preemptor.scheduler_name,
                    events.NORMAL,
                    PREEMPTED,
                    ACTION_PREEMPTING,
                    note,
                    related=preemptor.pod,
                )
            )
        return SUCCESS


def _has_condition(pod: Any, want: dict[str, str]) -> bool:
    """Upstream ``UpdatePodCondition`` writes only a change: is this condition already there, as it would be set?"""
    for cond in (pod.get("status") or {}).get("conditions") or ():
        if isinstance(cond, dict) and cond.get("type") == want["type"]:
            return all(cond.get(k) == v for k, v in want.items())
    return False


@dataclass(frozen=True)
class BindDone:
    """The answer to a binding sent in the background (delivered to the scheduling loop)."""

    pod: PodInfo  # the assumed pod (with its node)
    node: str
    status: Status


@dataclass(frozen=True)
class PreemptionDone:
    """A preemption's evictions sent in the background have all answered (delivered to the scheduling loop).
    ``status`` is the first failure, if any (upstream then activates the preemptor so it is not left waiting)."""

    preemptor: PodInfo
    node: str
    victims: tuple[str, ...]
    status: Status


def binding_needs_no_unreserve(pod: PodInfo, reserve_plugins: list[str]) -> bool:
    """True when a failed binding can be undone without the cycle's state: the profile's Reserve plugins are only
    the in-tree volume/claim ones and this pod has no claims, so their Reserve did nothing to undo."""
    if any(name not in NO_OP_RESERVE_WITHOUT_CLAIMS for name in reserve_plugins):
        return False
    spec = pod.pod.get("spec") or {}
    if spec.get("resourceClaims"):
        return False
    return not any(
        isinstance(v, dict) and ("persistentVolumeClaim" in v or "ephemeral" in v)
        for v in spec.get("volumes") or []
    )


NO_OP_RESERVE_WITHOUT_CLAIMS = frozenset({"VolumeBinding", "DynamicResources"})


@dataclass(frozen=True)
class _Binding:
    """A binding queued for a worker."""

    pod: PodInfo
    node: str


_NOTHING: Any = object()  # a worker's "no job taken yet"


class PipelinedBinder:
    """Sends bindings from worker threads so the next pod's cycle overlaps this pod's round trip (upstream runs
    each binding cycle in its own goroutine).

    Only pods for which :func:`binding_needs_no_unreserve` holds go to the background (``eligible``): the framework
    has then finished the binding cycle optimistically, and the answer arrives later through ``deliver`` as a
    :class:`BindDone`; on failure the scheduling loop forgets the assumed pod and re-queues it, exactly what the
    synchronous path does. Other pods are bound synchronously by ``sync``. At most ``max_in_flight`` bindings are
    outstanding (``bind`` waits beyond that). A worker takes every binding queued by the time it is free (up to
    ``batch``) and sends them pipelined on its connection (:meth:`ApiBinder.bind_many`): one round trip and one
    write for the lot, which costs both processes less CPU per binding than one request at a time.
    """

    echoes_bindings = False

    def __init__(
        self,
        sync: ApiBinder,
        eligible: Callable[[PodInfo], bool],
        deliver: Callable[[BindDone | PreemptionDone], None],
        workers: int = 4,
        max_in_flight: int = 32,
        batch: int = 16,
    ) -> None:
        self.sync = sync
        self._eligible = eligible
        self._deliver = deliver
        # Plain worker threads on one queue (a ThreadPoolExecutor's Future per binding cost as much of the
        # scheduling loop's CPU as the rest of handing a binding over).
        self._work: queue.SimpleQueue[_Binding | Callable[[], None] | None] = queue.SimpleQueue()
        self._batch = max(1, batch)
        self._closed = False
        self._closing = threading.Lock()
        self._workers = [
            threading.Thread(target=self._run, name=f"binder_{i}", daemon=True) for i in range(workers)
        ]
        for worker in self._workers:
            worker.start()
        self._slots = threading.BoundedSemaphore(max_in_flight)

    def _run(self) -> None:
        get, get_nowait = self._work.get, self._work.get_nowait
        while True:
            job = get()
            while isinstance(job, _Binding):
                # Bindings queued meanwhile go along, pipelined on this worker's connection (up to ``batch``).
                batch = [job]
                job = _NOTHING
                while len(batch) < self._batch:
                    try:
                        more = get_nowait()
                    except queue.Empty:
                        break
                    if not isinstance(more, _Binding):
                        job = more
                        break
                    batch.append(more)
                self._send(batch)
            if job is None:
                return
            if job is not _NOTHING:
                job()

    def _submit(self, job: _Binding | Callable[[], None]) -> bool:
        """Queue ``job`` for a worker; False once :meth:`close` was called."""
        with self._closing:
            if self._closed:
                return False
            self._work.put(job)
            return True

    @property
    def bound(self) -> list[Placement]:
        return self.sync.bound

    @property
    def conflicts(self) -> int:
        return self.sync.conflicts

    @property
    def errors(self) -> int:
        return self.sync.errors

    def evict(self, victim: PodInfo, preemptor: PodInfo, node_name: str) -> Status:
        """One victim, synchronously (callers that cannot wait for :meth:`evict_async`)."""
        return self.sync.evict(victim, preemptor, node_name)

    def evict_async(
        self, victims: list[PodInfo], preemptor: PodInfo, node_name: str, release: Callable[[], None]
    ) -> Status:
        """Upstream ``prepareCandidateAsync``: evict ``victims`` from a worker thread while the scheduling loop
        goes on, then ``release()`` (the preemptor stops running preemption) and deliver a
        :class:`PreemptionDone`.

        Upstream releases before the *last* deletion so that its event finds the preemptor un-gated; a deletion
        event that overtakes the release is then lost for it. Here every deletion comes first -- so the first
        victim's event cannot start a cycle that preempts again while the others are still going -- and
        PreemptionDone, delivered after the release, activates the preemptor if its victims' events already came
        (DefaultPreemption's PreEnqueue re-checks it on those that come later)."""
        if not self._submit(lambda: self._preempt(victims, preemptor, node_name, release)):
            return Status(Code.ERROR, ("preemption: the scheduler is stopping",))
        return SUCCESS

    def _preempt(
        self, victims: list[PodInfo], preemptor: PodInfo, node_name: str, release: Callable[[], None]
    ) -> None:
        status = SUCCESS
        try:
            for victim in victims:
                status = self.sync.evict(victim, preemptor, node_name)
                if not status.is_success:
                    break
        except Exception as exc:
            status = Status(Code.ERROR, (f"preemption: {type(exc).__name__}: {exc}",))
        finally:
            release()
        self._deliver(PreemptionDone(preemptor, node_name, tuple(v.key for v in victims), status))

    def bind(self, pod: PodInfo, node_name: str) -> Status:
        if not self._eligible(pod):
            return self.sync.bind(pod, node_name)
        self._slots.acquire()
        bound = pod if pod.node_name == node_name else pod.with_node(node_name)  # the framework's is assumed
        if not self._submit(_Binding(bound, node_name)):
            self._slots.release()
            return Status(Code.ERROR, ("binding failed: the scheduler is stopping",))
        return SUCCESS

    def _send(self, batch: list[_Binding]) -> None:
        try:
            statuses = self.sync.bind_many([(b.pod, b.node) for b in batch])
        except Exception as exc:
            failed = Status(Code.ERROR, (f"binding failed: {type(exc).__name__}: {exc}",))
            statuses = [failed for _ in batch]
        finally:
            for _ in batch:
                self._slots.release()
        for b, status in zip(batch, statuses, strict=True):
            self._deliver(BindDone(b.pod, b.node, status))

    def close(self) -> None:
        """Wait for the bindings in flight (and refuse new ones)."""
        with self._closing:
            if self._closed:
                return
            self._closed = True
            for _ in self._workers:
                self._work.put(None)  # after every job already queued
        for worker in self._workers:
            worker.join()
