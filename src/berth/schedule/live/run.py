"""``berth schedule run``: the simulation's :class:`~berth.schedule.Scheduler`, fed by informers, binding through
the API.

Why: the same framework must place pods in simulation and on a cluster, or a policy tried in ``simulate`` would
behave differently for real. Only the two ends change (see :mod:`berth.schedule.scheduler`): events come from
informers (:mod:`.informers`) instead of files, and the binder POSTs ``pods/binding`` (:mod:`.binder`).

Threads and who owns what::

    informer threads (one per resource) ──Delta──▶ inbox ──▶ scheduling loop (one thread) ──▶ API writes
                                                              ├ applies deltas to the Scheduler (cache, queue,
                                                              │ object listers) -- the only thread touching it
                                                              └ schedule_one(): cycle + bind + events/status
    leader elector thread: acquire, renew; losing the lease stops everything (upstream exits)
    event recorder thread: posts Events; metrics server threads: /metrics /healthz /readyz

Because one thread applies every change and runs every cycle, a cycle never sees a half-applied update, and the
order of changes is the API server's order per resource. Scheduling starts once every informer has listed
(upstream ``WaitForCacheSync``) and this process leads (when ``--leader-elect``).

Where the kubeconfig comes from, and what happens when the API server goes away (re-read kubeconfig, backoff,
re-list, one log line per change of state): :mod:`.connection`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from berth import cliopts
from berth.kube import client as kube_client
from berth.kube import kubeconfig as kube_kubeconfig
from berth.kube.errors import BerthError
from berth.kube.objects import Obj, ns_name_key, object_key
from berth.schedule import explain, rbac
from berth.schedule.config import SchedulerConfiguration
from berth.schedule.framework.interface import Code, Status
from berth.schedule.framework.types import PodInfo
from berth.schedule.live import api, events, informers
from berth.schedule.live.binder import (
    ApiBinder,
    BindDone,
    PipelinedBinder,
    PreemptionDone,
    binding_needs_no_unreserve,
    may_be_bound,
)
from berth.schedule.live.connection import EMBEDDED_KUBECONFIG as EMBEDDED_KUBECONFIG
from berth.schedule.live.connection import ServerLink
from berth.schedule.live.connection import api_client_from as api_client_from
from berth.schedule.live.connection import configuration as configuration
from berth.schedule.live.connection import resolve_kubeconfig as resolve_kubeconfig
from berth.schedule.live.informers import Delta, EventType, Informer, ListWatch, Resource
from berth.schedule.live.leader import LeaderElector, default_identity
from berth.schedule.live.metrics import HealthServer, Metrics
from berth.schedule.live.shadow import ShadowLog
from berth.schedule.live.volumes import ApiVolumeWriter
from berth.schedule.scheduler import CycleOutcome, FailureReason, Result, Scheduler

log = logging.getLogger("berth.schedule.live")

_TERMINAL = ("Succeeded", "Failed")


class LeadershipLost(BerthError):
    """The lease was not renewed in time; the scheduler stopped (exit 1, like kube-scheduler)."""


# --- what to watch ------------------------------------------------------------------------------------------------


def informer_resources(cfg: SchedulerConfiguration, registry: Any, api_client: Any = None) -> list[Resource]:
    """Pods, nodes, and every other resource the enabled plugins read -- exactly the ``list, watch`` rules of
    ``berth schedule rbac``, so the scheduler watches what its minimal role grants and nothing more."""
    out: dict[tuple[str, str], Resource] = {
        (informers.PODS.group, informers.PODS.plural): informers.PODS,
        (informers.NODES.group, informers.NODES.plural): informers.NODES,
    }
    for rule in rbac.compute(cfg, registry).rules:
        if rule.resource_names or "/" in rule.resource or not {"list", "watch"} <= set(rule.verbs):
            continue
        key = (rule.group, rule.resource)
        if key in out:
            continue
        known = informers.KNOWN.get(key)
        if known is None and api_client is not None:
            known = discover(api_client, rule.group, rule.resource)
        if known is None:
            log.warning("cannot follow %s.%s: unknown resource (not served?)", rule.resource, rule.group)
            continue
        out[key] = known
    return list(out.values())


def discover(api_client: Any, group: str, plural: str) -> Resource | None:
    """Find the kind, preferred version and scope of a resource a user plugin reads (e.g. a custom resource)."""
    try:
        if group:
            version = str(
                ((api.call(api_client, "GET", f"/apis/{group}").get("preferredVersion")) or {}).get("version")
                or ""
            )
            listing = api.call(api_client, "GET", f"/apis/{group}/{version}")
        else:
            version = "v1"
            listing = api.call(api_client, "GET", "/api/v1")
    except (api.ApiError, api.Unreachable) as exc:
        log.warning("discovery of %s.%s failed: %s", plural, group, exc)
        return None
    for res in listing.get("resources") or []:
        if res.get("name") == plural:
            return Resource(str(res.get("kind") or ""), plural, group, version, bool(res.get("namespaced")))
    return None


# --- the scheduler ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LiveOptions:
    """How to run. ``wrap_source`` lets tests put a fault injector between the informers and the API."""

    kubeconfig: str | None = None
    context: str | None = None
    leader_elect: bool = False
    identity: str = ""
    metrics_port: int | None = None
    metrics_address: str = "0.0.0.0"
    seed: int | None = None
    backoff: informers.Backoff = field(default_factory=informers.Backoff)
    watch_timeout: tuple[int, int] = informers.WATCH_TIMEOUT_SECONDS
    sync_timeout: float | None = None
    wrap_source: Callable[[ListWatch], ListWatch] | None = None
    events: bool = True
    pipelined_binds: bool = True
    bind_workers: int = 1
    explain: tuple[str, ...] = ()  # pods (ns/name or name, wildcards) whose attempts are logged in full
    # berth schedule shadow: schedule nothing, judge what other schedulers bind (berth.schedule.live.shadow)
    shadow: bool = False
    # A process of its own (berth schedule run): once the informers have synced, what they loaded stays alive, so
    # it is moved out of the cyclic collector's reach (gc.freeze), and the young generation -- the many short-lived
    # dicts of each cycle and watch event -- is collected less often; as `berth cluster up` does for its server.
    settle_gc: bool = False


class LiveScheduler:
    """One scheduler process against one cluster.

    Args:
        config: the resolved configuration (``berth.schedule.config.load``).
        registry: plugin specs (the default registry plus ``--plugin`` ones).
        options: connection and runtime options.
        client_configuration: a ready ``kubernetes.client.Configuration`` (skips kubeconfig resolution).
    """

    def __init__(
        self,
        config: SchedulerConfiguration,
        registry: Any,
        options: LiveOptions | None = None,
        client_configuration: Any = None,
    ) -> None:
        self.config = config
        self.registry = registry
        self.options = options or LiveOptions()
        opts = self.options
        path: kube_kubeconfig.Location | None = None
        self.target = (
            ""  # which cluster and context, and which kubeconfig chose them: logged before any write
        )
        if client_configuration is None:
            path = resolve_kubeconfig(opts.kubeconfig)
            connection = kube_client.connect(path, opts.context)
            client_configuration, self.target = connection.api_client.configuration, connection.target_line()
        self.permissions = api.PermissionLog(log)
        self.writer = api_client_from(client_configuration, 8)
        self.inbox: queue.SimpleQueue[Delta | BindDone | PreemptionDone] = queue.SimpleQueue()
        self.api_binder = ApiBinder(self.writer, self.permissions)
        self.binder: ApiBinder | PipelinedBinder = self.api_binder
        if opts.pipelined_binds:
            self.binder = PipelinedBinder(
                self.api_binder, self._bind_in_background, self.inbox.put, opts.bind_workers
            )
        self.scheduler = Scheduler(
            config, registry, self.binder, opts.seed, clock=time.monotonic, on_outcome=self._on_outcome
        )
        self.shadow = ShadowLog(opts.explain) if opts.shadow else None
        if opts.explain and self.shadow is None:
            self.scheduler.explainer = explain.Recorder(opts.explain, keep=0, on_attempt=_log_attempt)
        # VolumeBinding's PreBind writes PV claimRefs / selected-node annotations through the API, as upstream.
        self.volume_writer = ApiVolumeWriter(self.writer, self.permissions)
        for framework in self.scheduler.frameworks.values():
            framework.volume_writer = self.volume_writer
        resources = informer_resources(config, registry, self.writer)
        self.reader = api_client_from(client_configuration, len(resources) + 2)
        # Both clients follow the server: a lost connection re-reads the kubeconfig (it may have moved).
        self.link = ServerLink(path, opts.context, [self.reader, self.writer])
        source: ListWatch = informers.ApiListWatch(self.reader)
        if opts.wrap_source is not None:
            source = opts.wrap_source(source)
        self.informers: dict[str, Informer] = {
            r.qualified: Informer(
                r,
                source,
                self.inbox.put,
                self.permissions,
                backoff=opts.backoff,
                watch_timeout=opts.watch_timeout,
                seed=opts.seed,
                on_unreachable=self.link.lost,
                on_reachable=self.link.reachable,
            )
            for r in resources
        }
        self.recorder = events.EventRecorder(self.writer, self.permissions) if opts.events else None
        self.api_binder.recorder = self.recorder  # Preempted events on preemption victims
        self.status = events.StatusWriter(self.writer, self.permissions)
        self.metrics = Metrics(self._queue_counts, self._relists)
        if self.shadow is not None:
            counter = self.metrics.shadow
            self.shadow.on_decision = lambda d: counter.labels(d.verdict, d.profile).inc()
        self.health: HealthServer | None = None
        self.elector: LeaderElector | None = None
        if opts.leader_elect:
            le = config.leader_election
            self.elector = LeaderElector(
                self.writer,
                le.resource_namespace,
                le.resource_name,
                opts.identity or default_identity(),
                le.lease_duration_seconds,
                le.renew_deadline_seconds,
                le.retry_period_seconds,
                self.permissions,
            )
        self.stop_event = threading.Event()
        self.leading = threading.Event()
        self.synced = threading.Event()
        self.lost_leadership = False
        self.failure: BaseException | None = None
        self._loop_thread: threading.Thread | None = None
        self._leader_thread: threading.Thread | None = None
        self._first_seen: dict[str, float] = {}
        self._attempts: dict[str, int] = {}
        self._cycle_started = 0.0
        self._in_background: set[str] = set()
        self._stopped = False
        self._stop_lock = threading.Lock()

    # --- lifecycle ---------------------------------------------------------------------------------------------

    def start(self) -> LiveScheduler:
        for warning in self.scheduler.warnings:
            log.warning("%s", warning)
        if self.target:
            log.info("%s", self.target)
        log.info(
            "berth scheduler starting%s: profiles %s; following %s",
            " in shadow mode (read-only: schedules nothing, judges what others bind)" if self.shadow else "",
            ", ".join(self.scheduler.scheduler_names),
            ", ".join(sorted(self.informers)),
        )
        if self.options.metrics_port is not None:
            self.health = HealthServer(
                self.metrics,
                self._healthy,
                self._ready,
                self.options.metrics_port,
                self.options.metrics_address,
            )
            log.info("serving /metrics, /healthz, /readyz on port %d", self.health.port)
        for inf in self.informers.values():
            inf.start()
        if self.elector is None:
            self.leading.set()
            self.metrics.leader.set(1)
        else:
            self._leader_thread = threading.Thread(target=self._lead, name="leader-election", daemon=True)
            self._leader_thread.start()
        self._loop_thread = threading.Thread(target=self._loop, name="scheduling-loop", daemon=True)
        self._loop_thread.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Graceful stop: finish the running cycle, stop watching, post queued events, release the lease."""
        with self._stop_lock:
            if self._stopped:
                return
            self._stopped = True
        self.stop_event.set()
        if self._loop_thread is not None and self._loop_thread is not threading.current_thread():
            self._loop_thread.join(timeout)
        if isinstance(self.binder, PipelinedBinder):
            self.binder.close()
            loop = self._loop_thread
            if loop is None or loop is threading.current_thread() or not loop.is_alive():
                self._report_late_bindings()
        for inf in self.informers.values():
            inf.stop()
        for inf in self.informers.values():
            inf.join(2.0)
        if self.recorder is not None:
            self.recorder.close(timeout=5.0)
        if self._leader_thread is not None and self._leader_thread is not threading.current_thread():
            self._leader_thread.join(timeout)
        if self.elector is not None:
            self.elector.release()
        self.metrics.leader.set(0)
        if self.health is not None:
            self.health.stop()
        for client in (self.reader, self.writer):
            keep_alive = api.KeepAlive.of(client)
            if keep_alive is not None:
                keep_alive.close()
            with contextlib.suppress(Exception):
                client.close()
        log.info("berth scheduler stopped")

    def wait(self, timeout: float | None = None) -> bool:
        """Block until stopped (by :meth:`stop`, a lost lease or a crash). True if it stopped."""
        return self.stop_event.wait(timeout)

    def wait_synced(self, timeout: float | None = None) -> bool:
        return self.synced.wait(timeout)

    def __enter__(self) -> LiveScheduler:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- status ------------------------------------------------------------------------------------------------

    def _queue_counts(self) -> Mapping[str, int]:
        counts = self.scheduler.queue.counts()
        names = {
            "activeQ": "active",
            "backoffQ": "backoff",
            "unschedulable": "unschedulable",
            "gated": "gated",
        }
        return {names[str(where)]: n for where, n in counts.items() if str(where) in names}

    def _relists(self) -> Mapping[str, int]:
        return {name: inf.relists for name, inf in self.informers.items()}

    def _healthy(self) -> tuple[bool, str]:
        if self.failure is not None:
            return False, f"scheduling loop failed: {self.failure}"
        if self._loop_thread is None or not self._loop_thread.is_alive():
            return False, "scheduling loop not running"
        return True, "ok"

    def _ready(self) -> tuple[bool, str]:
        waiting = [name for name, inf in self.informers.items() if not inf.synced.is_set()]
        if waiting:
            return False, f"informers not synced: {', '.join(sorted(waiting))}"
        return True, "ok"

    # --- leader election ---------------------------------------------------------------------------------------

    def _lead(self) -> None:
        elector = self.elector
        assert elector is not None
        if not elector.acquire(self.stop_event):
            return
        self.leading.set()
        self.metrics.leader.set(1)
        if not elector.renew_until_lost(self.stop_event):
            self.leading.clear()
            self.metrics.leader.set(0)
            self.lost_leadership = True
            self.failure = LeadershipLost(
                f"leader election lost: lease {elector.namespace}/{elector.name} was not renewed within "
                f"{elector.renew_deadline:.0f}s"
            )
            self.stop_event.set()

    # --- the scheduling loop -----------------------------------------------------------------------------------

    def _loop(self) -> None:
        try:
            self._run_loop()
        except BaseException as exc:
            log.exception("scheduling loop crashed")
            self.failure = exc
            self.stop_event.set()

    def _run_loop(self) -> None:
        sched = self.scheduler
        stop = self.stop_event
        last_tick = time.monotonic()
        while not stop.is_set():
            self._drain()
            if not self.synced.is_set():
                if all(inf.synced.is_set() for inf in self.informers.values()):
                    self._drain()
                    if self.options.settle_gc:
                        cliopts.settle_gc()
                    self.synced.set()
                    log.info(
                        "informers synced: %d nodes, %d pods pending",
                        sched.cache.node_count(),
                        len(sched.queue),
                    )
                else:
                    self._wait_inbox(0.05)
                    continue
            if not self.leading.is_set():
                self._wait_inbox(0.1)
                continue
            if self.shadow is not None:  # read-only: informers in, verdicts out, nothing scheduled
                self._wait_inbox(0.5)
                continue
            self._cycle_started = time.monotonic()
            outcome = sched.schedule_one()
            now = time.monotonic()
            if now - last_tick >= 1.0:
                sched.queue.tick()
                last_tick = now
            if outcome is None:
                expiry = sched.next_wakeup()  # a backoff ending or a Permit wait running out
                wait = 0.5 if expiry is None else max(0.0, min(0.5, expiry - now))
                self._wait_inbox(wait)

    # --- bindings sent in the background -----------------------------------------------------------------------

    def _bind_in_background(self, pod: PodInfo) -> bool:
        """Called by the binder on the loop thread: may this pod's binding go out in the background?"""
        fw = self.scheduler.frameworks.get(pod.scheduler_name)
        if fw is None or not binding_needs_no_unreserve(pod, [name for name, _ in fw.reserve]):
            return False
        self._in_background.add(pod.key)
        return True

    def _bind_done(self, done: BindDone) -> None:
        """The answer of a background binding: report success, or fail the pod through the scheduler's one
        binding-failed path (Unreserve with the cycle's state, forget, back off, nomination dropped) and report it
        as a synchronous binding failure is reported (:meth:`_report_failure`)."""
        pod = done.pod
        key = pod.key
        self._in_background.discard(key)
        profile = pod.scheduler_name
        current = self.informers[informers.PODS.qualified].get(key)
        if done.status.is_success:
            self._report_bound(key, profile, done.node, current or pod.pod)
            return
        message = f'running Bind plugin "DefaultBinder": {done.status.message()}'
        status = Status(Code.ERROR, (message,), "DefaultBinder")
        outcome = self.scheduler.binding_failed(key, status, current)
        self.metrics.attempt(str(Result.ERROR), profile, None)
        maybe_bound = self.api_binder.settle(key) or may_be_bound(done.status)
        self._report_failure(
            key, profile, f"bind {key} to {done.node}", message, outcome, pod.pod, maybe_bound
        )

    def _report_failure(
        self,
        key: str,
        profile: str,
        what: str,
        message: str,
        outcome: CycleOutcome | None,
        pod: Obj,
        maybe_bound: bool,
    ) -> None:
        """The one way a failed cycle is reported -- a scheduling failure, or a binding that failed synchronously
        or in the background: a log line, a ``FailedScheduling`` Event and ``PodScheduled=False`` (upstream
        ``handleSchedulingFailure``), the condition only on a pod still pending.

        After a binding that may have bound the pod all the same (a 409, or an answer lost: ``maybe_bound``), the
        informer's copy may not show the binding yet, so the server is asked; a pod it shows bound gets no failure
        written over its binding, and while the server cannot be asked nothing is reported (the pod is retried:
        the retry binds it or finds it bound)."""
        current = self.informers[informers.PODS.qualified].get(key)
        if maybe_bound:
            fresh = self._pod_from_server(key)
            if fresh is None:
                log.info(
                    "could not %s (%s): %s; whether it is bound is not known yet", what, profile, message
                )
                return
            node = (fresh.get("spec") or {}).get("nodeName")
            if node:
                log.info("could not %s (%s), but it is bound to %s: %s", what, profile, node, message)
                return
            current = fresh
        log.info("could not %s (%s): %s", what, profile, message)
        if self.recorder is not None:
            self.recorder.record(events.failed_event(current or pod, profile, message))
        if outcome is None or current is None or (current.get("spec") or {}).get("nodeName"):
            return  # settled meanwhile, deleted, or bound (the informer has or will have it): nothing to write
        self.status.patch(
            current,
            str(outcome.reason or FailureReason.SCHEDULER_ERROR),
            message,
            outcome.nominated_node,
            outcome.clear_nomination,
        )

    def _pod_from_server(self, key: str) -> Obj | None:
        """The pod as the API server has it now; None when it is gone or the server does not answer (or is known
        to be away: the scheduling loop does not wait out a timeout per pod during an outage)."""
        if self.link.down_since is not None:
            return None
        ns, _, name = key.partition("/")
        try:
            return api.call(self.writer, "GET", f"/api/v1/namespaces/{ns}/pods/{name}", timeout=5.0)
        except (api.ApiError, api.Unreachable) as exc:
            log.debug("could not read %s: %s", key, exc)
            return None

    def _preemption_done(self, done: PreemptionDone) -> None:
        """A background preemption answered. On failure the preemptor is activated (upstream does, so it is not
        left waiting for deletions that will not come). On success the victims' deletion events retry it; if they
        are all gone already (a victim deleted by someone else sends no new event), it is activated here."""
        key = done.preemptor.key
        sched = self.scheduler
        if not done.status.is_success:
            log.info("preemption for %s on %s failed: %s", key, done.node, done.status.message())
            sched.queue.activate([key])
            return
        if all(sched.cache.get_pod(v) is None for v in done.victims):
            sched.queue.activate([key])

    def _report_late_bindings(self) -> None:
        """Background bindings that answered after the loop stopped: report them (log line, Scheduled event, e2e
        sample) before the recorder closes, or a pod bound at a stop would go unreported."""
        while True:
            try:
                item = self.inbox.get_nowait()
            except queue.Empty:
                return
            if isinstance(item, BindDone):
                self._bind_done(item)

    def _wait_inbox(self, timeout: float) -> None:
        try:
            delta = self.inbox.get(timeout=timeout) if timeout > 0 else self.inbox.get_nowait()
        except queue.Empty:
            return
        self._apply(delta)

    def _drain(self) -> None:
        get = self.inbox.get_nowait
        while True:
            try:
                delta = get()
            except queue.Empty:
                return
            self._apply(delta)

    def _apply(self, delta: Delta | BindDone | PreemptionDone) -> None:
        if isinstance(delta, BindDone):
            self._bind_done(delta)
            return
        if isinstance(delta, PreemptionDone):
            self._preemption_done(delta)
            return
        try:
            kind = delta.resource.kind
            if kind == "Pod":
                self._apply_pod(delta)
            elif kind == "Node":
                if delta.type is EventType.DELETED:
                    self.scheduler.remove_node(delta.new)
                elif delta.type is EventType.ADDED:
                    self.scheduler.add_node(delta.new)
                else:
                    self.scheduler.update_node(delta.old, delta.new)
            elif delta.type is EventType.DELETED:
                self.scheduler.remove_object(delta.new)
            else:
                self.scheduler.add_object(delta.new)
        except BerthError as exc:
            log.warning("ignoring %s %s: %s", delta.resource.kind, object_key(delta.new), exc)

    def _apply_pod(self, delta: Delta) -> None:
        sched = self.scheduler
        new = delta.new
        key = _pod_key(new)
        if delta.type is EventType.DELETED:
            sched.remove_pod(new)
            self._first_seen.pop(key, None)
            self._attempts.pop(key, None)
            self.status.forget(key)
            self.api_binder.settle(key)
            return
        terminal = (new.get("status") or {}).get("phase") in _TERMINAL
        bound = bool((new.get("spec") or {}).get("nodeName"))
        if bound:
            self.status.forget(key)
        if terminal:
            # Upstream's informers drop finished pods: they no longer use their node's resources.
            if delta.old is not None:
                sched.remove_pod(delta.old)
            self._first_seen.pop(key, None)
            return
        if not bound and key not in self._first_seen:
            self._first_seen[key] = time.monotonic()
        if delta.type is EventType.ADDED or delta.old is None:
            sched.add_pod(new)
        else:
            if (
                self.shadow is not None
                and bound
                and self.synced.is_set()
                and not (delta.old.get("spec") or {}).get("nodeName")
            ):
                self.shadow.observe(sched, delta.old, new)  # on the cluster as it stood before this binding
            sched.update_pod(delta.old, new)

    # --- after each cycle --------------------------------------------------------------------------------------

    def _on_outcome(self, outcome: CycleOutcome) -> None:
        now = time.monotonic()
        profile = outcome.scheduler_name
        result = str(outcome.result)
        if outcome.result is not Result.WAITING:
            self.metrics.attempt(result, profile, max(0.0, now - self._cycle_started))
        if outcome.result is Result.SKIPPED:
            log.debug("skipped %s: %s", outcome.pod, outcome.message)
            return
        if outcome.result is Result.WAITING:
            # Counted (and reported) when its binding cycle ends: allowed and bound, or rejected.
            log.info(
                "holding %s on %s at Permit (%s): %s", outcome.pod, outcome.node, profile, outcome.message
            )
            return
        for key in outcome.unnominated:  # lower-priority pods this preemption took the node from
            other = self.informers[informers.PODS.qualified].get(key)
            if other is not None and not (other.get("spec") or {}).get("nodeName"):
                self.status.clear_nomination(other)
        attempts = self._attempts.get(outcome.pod, 0) + 1
        pod = self._pod(outcome.pod)
        if outcome.result is Result.SCHEDULED:
            self._attempts[outcome.pod] = attempts
            if outcome.pod in self._in_background:
                return  # reported when the API answers (_bind_done)
            self._report_bound(outcome.pod, profile, outcome.node, pod)
            return
        self._attempts[outcome.pod] = attempts
        maybe_bound = outcome.result is Result.ERROR and self.api_binder.settle(outcome.pod)
        what = f"schedule {outcome.pod}"
        self._report_failure(outcome.pod, profile, what, outcome.message, outcome, pod, maybe_bound)

    def _report_bound(self, key: str, profile: str, node: str, pod: Obj) -> None:
        attempts = self._attempts.pop(key, 1)
        started = self._first_seen.pop(key, None)
        if started is not None:
            self.metrics.scheduled(attempts, time.monotonic() - started)
        log.info("bound %s to %s (%s)", key, node, profile)
        if self.recorder is not None:
            self.recorder.record(events.scheduled_event(pod, profile, node))

    def _pod(self, key: str) -> Obj:
        current = self.informers[informers.PODS.qualified].get(key)
        if current is not None:
            return current
        ns, _, name = key.partition("/")
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"namespace": ns, "name": name}}


def _log_attempt(pod: str, attempt: explain.Attempt) -> None:
    """``--explain``: each attempt of a followed pod as the simulation prints it, one multi-line record."""
    from berth.schedule import report  # rich's table renderer: only loaded when someone asked

    log.info("%s", report.attempt_text(pod, attempt))


def _pod_key(pod: Obj) -> str:
    """The one object key, a missing namespace read as ``default`` (the pod cache keys pods as PodInfo does)."""
    meta = pod.get("metadata") or {}
    return ns_name_key(str(meta.get("namespace") or "default"), str(meta.get("name") or ""))


def run_live_scheduler(
    kubeconfig: str | os.PathLike[str] | None = None,
    config: SchedulerConfiguration | None = None,
    registry: Any = None,
    options: LiveOptions | None = None,
) -> LiveScheduler:
    """Start a live scheduler (default configuration and registry unless given) and return it running; call
    ``stop()`` to end it. The embedded cluster's ``default-scheduler`` is started this way."""
    from berth.schedule import config as config_mod
    from berth.schedule.plugins import registry as registry_mod

    reg = registry if registry is not None else registry_mod.default_registry()
    cfg = config if config is not None else config_mod.default_config(reg)
    opts = options or LiveOptions()
    if kubeconfig is not None:
        opts = _replace(opts, kubeconfig=str(kubeconfig))
    return LiveScheduler(cfg, reg, opts).start()


def _replace(opts: LiveOptions, **changes: Any) -> LiveOptions:
    import dataclasses

    return dataclasses.replace(opts, **changes)
