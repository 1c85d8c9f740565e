"""Lease leader election (client-go ``leaderelection`` with a ``coordination.k8s.io/v1`` Lease).

Why: two replicas of a scheduler must never bind at the same time (they would over-commit nodes between each
other's assumptions). Only the holder of the Lease schedules; the others keep their informers warm and wait.

The algorithm, every ``retryPeriod`` (timings from the configuration's ``leaderElection``)::

    GET lease ── 404 ──▶ CREATE (holder = me)           409 AlreadyExists: someone was faster -> not leader
        │
        ├─ held by another and its record changed less than leaseDuration ago (by *our* clock) -> not leader
        └─ otherwise PUT with the read resourceVersion: holder = me, renewTime = now
                                                        (acquireTime and leaseTransitions on a takeover)
                                                        409 Conflict: stale resourceVersion, lost the race

A leader that cannot renew within ``renewDeadline`` has lost the lease: :meth:`LeaderElector.run` returns and the
caller stops scheduling (upstream kube-scheduler exits). On a graceful stop the leader releases the lease (holder
cleared, duration 1 s) so a standby takes over at once instead of after ``leaseDuration``.
"""

from __future__ import annotations

import logging
import random
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from kubernetes import client as k8s

from berth.schedule.live import api
from berth.schedule.live.events import micro_time

log = logging.getLogger("berth.schedule.live")


def default_identity() -> str:
    import socket

    return f"{socket.gethostname()}_{uuid.uuid4()}"


class LeaderElector:
    """Acquire and keep one Lease.

    Args:
        api_client: the official client's ApiClient.
        namespace, name: the Lease.
        identity: this candidate's ``holderIdentity``.
        lease_duration, renew_deadline, retry_period: seconds (``leaderElection`` of the configuration).
        permissions: 403s are logged once per missing permission.
        clock: monotonic seconds (tests may pass their own).
    """

    def __init__(
        self,
        api_client: Any,
        namespace: str,
        name: str,
        identity: str,
        lease_duration: float,
        renew_deadline: float,
        retry_period: float,
        permissions: api.PermissionLog,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._api = k8s.CoordinationV1Api(api_client)
        self.namespace = namespace
        self.name = name
        self.identity = identity
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self._permissions = permissions
        self._clock = clock
        self._observed_record: tuple[Any, ...] | None = None
        self._observed_time = 0.0
        self._rng = random.Random()
        self.is_leader = threading.Event()
        self.transitions_seen = 0

    # --- one attempt -------------------------------------------------------------------------------------------

    def try_acquire_or_renew(self) -> bool:
        """One round of the algorithm above. True when we hold the lease afterwards."""
        now_wall = micro_time()
        try:
            lease = api.typed(self._api.read_namespaced_lease, self.name, self.namespace)
        except api.ApiError as exc:
            if exc.status == 404:
                return self._create(now_wall)
            self._report(exc, "get")
            return False
        except api.Unreachable as exc:
            log.warning("leader election: cannot read lease %s/%s: %s", self.namespace, self.name, exc)
            return False
        spec = lease.get("spec") or {}
        holder = str(spec.get("holderIdentity") or "")
        record = (
            holder,
            spec.get("renewTime"),
            spec.get("acquireTime"),
            spec.get("leaseDurationSeconds"),
            spec.get("leaseTransitions"),
        )
        now = self._clock()
        if record != self._observed_record:
            self._observed_record = record
            self._observed_time = now
        duration = float(spec.get("leaseDurationSeconds") or self.lease_duration)
        if holder and holder != self.identity and self._observed_time + duration > now:
            return False
        new_spec = dict(spec)
        new_spec["holderIdentity"] = self.identity
        new_spec["leaseDurationSeconds"] = int(self.lease_duration)
        new_spec["renewTime"] = now_wall
        if holder != self.identity:
            new_spec["acquireTime"] = now_wall
            new_spec["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + 1
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": lease.get("metadata") or {},
            "spec": new_spec,
        }
        try:
            updated = api.typed(self._api.replace_namespaced_lease, self.name, self.namespace, body)
        except api.ApiError as exc:
            if exc.status == 409:
                log.info(
                    "leader election: lost the race for lease %s/%s (stale resourceVersion)",
                    self.namespace,
                    self.name,
                )
            else:
                self._report(exc, "update")
            return False
        except api.Unreachable as exc:
            log.warning("leader election: cannot update lease %s/%s: %s", self.namespace, self.name, exc)
            return False
        self._observe(updated)
        return True

    def _create(self, now_wall: str) -> bool:
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "spec": {
                "holderIdentity": self.identity,
                "leaseDurationSeconds": int(self.lease_duration),
                "acquireTime": now_wall,
                "renewTime": now_wall,
                "leaseTransitions": 0,
            },
        }
        try:
            created = api.typed(self._api.create_namespaced_lease, self.namespace, body)
        except api.ApiError as exc:
            if exc.status == 409:
                return False
            self._report(exc, "create")
            return False
        except api.Unreachable as exc:
            log.warning("leader election: cannot create lease %s/%s: %s", self.namespace, self.name, exc)
            return False
        self._observe(created)
        return True

    def _observe(self, lease: dict[str, Any]) -> None:
        spec = lease.get("spec") or {}
        self._observed_record = (
            str(spec.get("holderIdentity") or ""),
            spec.get("renewTime"),
            spec.get("acquireTime"),
            spec.get("leaseDurationSeconds"),
            spec.get("leaseTransitions"),
        )
        self._observed_time = self._clock()

    def _report(self, exc: api.ApiError, verb: str) -> None:
        if exc.status == 403:
            self._permissions.forbidden(verb, "leases", "coordination.k8s.io", self.namespace, exc)
        else:
            log.warning("leader election: %s lease %s/%s: %s", verb, self.namespace, self.name, exc)

    # --- the loops ---------------------------------------------------------------------------------------------

    def acquire(self, stop: threading.Event) -> bool:
        """Try every ``retryPeriod`` (jittered) until we lead (True) or ``stop`` is set (False)."""
        log.info(
            "leader election: waiting to acquire lease %s/%s as %s", self.namespace, self.name, self.identity
        )
        while not stop.is_set():
            if self.try_acquire_or_renew():
                log.info("leader election: acquired lease %s/%s", self.namespace, self.name)
                self.is_leader.set()
                return True
            stop.wait(self.retry_period * (1.0 + 1.2 * self._rng.random()))
        return False

    def renew_until_lost(self, stop: threading.Event) -> bool:
        """Renew every ``retryPeriod``; returns False when a renewal did not succeed within ``renewDeadline``
        (leadership lost), True when ``stop`` was set (we still hold the lease; call :meth:`release`)."""
        last_renew = self._clock()
        while not stop.wait(self.retry_period):
            if self.try_acquire_or_renew():
                last_renew = self._clock()
                continue
            if self._clock() - last_renew >= self.renew_deadline:
                self.is_leader.clear()
                log.error(
                    "leader election: lost lease %s/%s (not renewed within %.0fs)",
                    self.namespace,
                    self.name,
                    self.renew_deadline,
                )
                return False
        return True

    def release(self) -> None:
        """Give the lease up (only if we still hold it). A 403 is reported like any other missing permission."""
        if not self.is_leader.is_set():
            return
        self.is_leader.clear()
        verb = "get"
        try:
            lease = api.typed(self._api.read_namespaced_lease, self.name, self.namespace)
            spec = lease.get("spec") or {}
            if spec.get("holderIdentity") != self.identity:
                return
            now_wall = micro_time()
            spec = dict(
                spec, holderIdentity=None, leaseDurationSeconds=1, renewTime=now_wall, acquireTime=now_wall
            )
            body = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": lease.get("metadata") or {},
                "spec": spec,
            }
            verb = "update"
            api.typed(self._api.replace_namespaced_lease, self.name, self.namespace, body)
            log.info("leader election: released lease %s/%s", self.namespace, self.name)
        except api.ApiError as exc:
            if exc.status == 403:
                self._report(exc, verb)
            log.warning("leader election: could not release lease %s/%s: %s", self.namespace, self.name, exc)
        except api.Unreachable as exc:
            log.warning("leader election: could not release lease %s/%s: %s", self.namespace, self.name, exc)
