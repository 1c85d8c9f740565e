"""Why a wait cannot succeed: the conditions and events a cluster already reports, read while waiting.

A hook Job whose ServiceAccount does not exist never gets a pod: the Job controller says so in a ``FailedCreate``
event on the Job at once, and a wait that only reads ``active=0 succeeded=0 failed=0`` would sit out the whole
timeout. So every wait of the live executor (:meth:`berth.install.kubeops.KubeOps.wait_ready`) also looks, about
once a second, at what the object's controller and its pods report:

    events of the object, its ReplicaSets and its pods      (Warning ones are shown as they arrive)
    the pods' container states and PodScheduled condition   (image pull failures, missing config, Unschedulable)
    a CRD's NamesAccepted condition                          (its names are another CRD's)
    a Deployment's ReplicaFailure condition                  (its ReplicaSet cannot create pods)

and turns what it reads into a :class:`Cause`: which object, which event or condition, its message, and what to
fix. A cause that does not heal by itself (a missing ServiceAccount, a refused CRD name, an image that cannot be
pulled, a missing ConfigMap) fails the wait once it has persisted for its grace period; one that may heal (a pod
that cannot be scheduled yet, a quota, a webhook not yet up) is shown and named when the wait times out. A Job's
``Failed`` condition and a Deployment's ``ProgressDeadlineExceeded`` are judged by the waits themselves.

Reading is best effort: a cluster that refuses the reads (no ``list events`` permission) still gets the plain wait.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

Obj = dict[str, Any]

CRD_GRACE_SECONDS = 2.0
"""A refused CRD name: nothing renames CRDs by itself (a second read guards against a status in transition)."""
CREATE_GRACE_SECONDS = 10.0
"""A controller that cannot create pods for a reason no retry changes (missing ServiceAccount or namespace, Pod
Security): a few of its retries, in case whatever was missing is being created right now."""
PULL_GRACE_SECONDS = 30.0
"""An image that cannot be pulled, or config a container needs that is missing: a registry blip or an object
created a moment later heals it, so a few of the kubelet's retries first."""
LOOK_INTERVAL_SECONDS = 1.0
LAST_EVENTS = 10
"""How many events a timeout or failure message lists (the newest, oldest first)."""

_SA_MISSING = re.compile(r"error looking up service account (?P<ns>[^/\s]+)/(?P<name>[^:\s]+)")
_NS_MISSING = re.compile(r'namespaces? "(?P<name>[^"]+)" not found')
_CONFIG_MISSING = re.compile(r'(?P<kind>configmap|secret) "(?P<name>[^"]+)" not found', re.IGNORECASE)


@dataclass(frozen=True)
class Cause:
    """Why a wait cannot succeed, as the cluster reports it."""

    object: str
    """``Job edge/migrate``, ``Pod edge/migrate-x7k2p``, ``CRD widgets.example.com``."""
    reason: str
    """The event reason or condition (``FailedCreate``, ``NamesAccepted=False (KindConflict)``, ``ErrImagePull``)."""
    message: str
    fix: str
    grace: float = 0.0
    """Seconds the cause must persist before the wait fails (it may be in transition)."""

    @property
    def key(self) -> str:
        return f"{self.object}|{self.reason}"

    def text(self, about: str = "") -> str:
        """``[object: ]reason: message. Fix: ...`` (the object left out when it is ``about``, the waited-on one)."""
        where = "" if self.object == about else f"{self.object}: "
        return f"{where}{self.reason}: {self.message.rstrip('.')}. Fix: {self.fix}"


@dataclass(frozen=True)
class Event:
    """A core/v1 Event as a wait shows it."""

    uid: str
    object: str
    type: str
    reason: str
    message: str
    count: int
    last: str

    def line(self) -> str:
        times = f" (x{self.count})" if self.count > 1 else ""
        return f"{self.type} {self.reason} {self.object}: {self.message}{times}"


def label(kind: str, namespace: str, name: str) -> str:
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


def event_of(raw: Obj) -> Event:
    inv = raw.get("involvedObject") or raw.get("regarding") or {}
    last = str(
        raw.get("lastTimestamp")
        or raw.get("eventTime")
        or (raw.get("metadata") or {}).get("creationTimestamp")
        or ""
    )
    return Event(
        str(inv.get("uid") or ""),
        label(str(inv.get("kind") or "?"), str(inv.get("namespace") or ""), str(inv.get("name") or "?")),
        str(raw.get("type") or "Normal"),
        str(raw.get("reason") or ""),
        str(raw.get("message") or raw.get("note") or "").strip(),
        int(raw.get("count") or ((raw.get("series") or {}).get("count")) or 1),
        last,
    )


def create_cause(obj: str, reason: str, message: str) -> Cause | None:
    """A controller's failure to create pods (a ``FailedCreate`` event or ``ReplicaFailure`` condition) that no
    retry heals; None for one that may (a quota, an admission webhook not up yet)."""
    sa = _SA_MISSING.search(message)
    if sa:
        ns, name = sa.group("ns"), sa.group("name")
        return Cause(
            obj, reason, message,
            f"create the ServiceAccount {ns}/{name} (kubectl create serviceaccount {name} -n {ns}) or correct the "
            "serviceAccountName the chart renders; a hook runs before the release's own objects exist, so a "
            "ServiceAccount the chart renders as a release object is not there yet for a pre-install hook (render "
            "it as a hook of the same event with a lower weight)",
            CREATE_GRACE_SECONDS,
        )  # fmt: skip
    ns_missing = _NS_MISSING.search(message)
    if ns_missing:
        name = ns_missing.group("name")
        return Cause(obj, reason, message, f"create the namespace {name} (kubectl create namespace {name})",
                     CREATE_GRACE_SECONDS)  # fmt: skip
    if "violates PodSecurity" in message:
        return Cause(
            obj, reason, message,
            "the namespace's Pod Security level refuses the pod: change the pod's securityContext in the chart's "
            "values, or the namespace's pod-security.kubernetes.io/enforce label",
            CREATE_GRACE_SECONDS,
        )  # fmt: skip
    return None


def event_cause(ev: Event) -> Cause | None:
    """The cause a Warning event reports, if it is one a wait should fail on."""
    if ev.type != "Warning":
        return None
    if ev.reason == "FailedCreate":
        return create_cause(ev.object, ev.reason, ev.message)
    if ev.reason == "InspectFailed" or "InvalidImageName" in ev.message:
        return Cause(ev.object, ev.reason, ev.message, "correct the image reference the chart renders")
    return None


def _container_causes(pod_label: str, statuses: list[Obj]) -> list[Cause]:
    out: list[Cause] = []
    for st in statuses:
        waiting = (st.get("state") or {}).get("waiting") or {}
        reason, message = str(waiting.get("reason") or ""), str(waiting.get("message") or "").strip()
        where = f"{pod_label} (container {st.get('name')})"
        image = st.get("image") or "its image"
        if reason == "InvalidImageName":
            out.append(Cause(where, reason, message or f"invalid image {image}",
                             f"correct the image reference {image} the chart renders"))  # fmt: skip
        elif reason in ("ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull"):
            out.append(Cause(
                where, reason, message or f"cannot pull {image}",
                f"check that {image} exists (name and tag), that the registry is reachable from the nodes, and "
                "that the pod's imagePullSecrets can read it",
                PULL_GRACE_SECONDS,
            ))  # fmt: skip
        elif reason == "CreateContainerConfigError":
            missing = _CONFIG_MISSING.search(message)
            fix = (
                f"create the {missing.group('kind').capitalize()} {missing.group('name')} the container needs"
                if missing
                else "create the ConfigMap or Secret (or the key in it) the container's env or volumes name"
            )
            out.append(Cause(where, reason, message, fix, PULL_GRACE_SECONDS))
    return out


def pod_causes(pod: Obj) -> tuple[list[Cause], list[str]]:
    """Causes a pod's status reports, and notes that may heal (a pod not scheduled yet), each as one line."""
    meta, st = pod.get("metadata") or {}, pod.get("status") or {}
    pod_label = label("Pod", str(meta.get("namespace") or ""), str(meta.get("name") or ""))
    causes = _container_causes(
        pod_label, [*(st.get("initContainerStatuses") or []), *(st.get("containerStatuses") or [])]
    )
    notes = []
    for c in st.get("conditions") or []:
        if c.get("type") == "PodScheduled" and c.get("status") == "False":
            notes.append(
                f"{pod_label}: not scheduled ({c.get('reason') or 'Unschedulable'}): {c.get('message') or ''}".rstrip(
                    ": "
                )
            )
    return causes, notes


def crd_cause(crd: Obj) -> Cause | None:
    for c in (crd.get("status") or {}).get("conditions") or []:
        if c.get("type") == "NamesAccepted" and c.get("status") == "False":
            spec = crd.get("spec") or {}
            group = spec.get("group") or "its group"
            return Cause(
                label("CRD", "", str((crd.get("metadata") or {}).get("name") or "")),
                f"NamesAccepted=False ({c.get('reason') or 'NameConflict'})",
                str(c.get("message") or "its names are in use").strip(),
                f"another CRD of group {group} already uses that name: delete or rename that CRD (kubectl get crd "
                f"-o name | grep {group}), or install a chart version whose CRD does not clash",
                CRD_GRACE_SECONDS,
            )
    return None


def condition_causes(obj: Obj, obj_label: str) -> list[Cause]:
    """A Deployment's (or ReplicaSet's) ``ReplicaFailure`` condition: its pods cannot be created."""
    out = []
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == "ReplicaFailure" and c.get("status") == "True":
            cause = create_cause(
                obj_label,
                f"ReplicaFailure ({c.get('reason') or 'FailedCreate'})",
                str(c.get("message") or ""),
            )
            if cause is not None:
                out.append(cause)
    return out


class Reader(Protocol):
    """What a :class:`Watch` reads (a :class:`berth.install.kubeops.KubeOps` in practice); each call may raise."""

    def list_objects(
        self, api_version: str, kind: str, namespace: str, label_selector: str = ""
    ) -> list[Obj]: ...


def _owned_by(obj: Obj, uids: set[str]) -> bool:
    return any(r.get("uid") in uids for r in (obj.get("metadata") or {}).get("ownerReferences") or [])


def _selector(obj: Obj) -> str:
    labels = (((obj.get("spec") or {}).get("selector") or {}).get("matchLabels")) or {}
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


@dataclass
class Watch:
    """What one wait has seen of an object: events shown, causes and when each was first seen."""

    reader: Reader
    kind: str
    namespace: str
    clock: Callable[[], float]
    on_event: Callable[[str], None] = lambda line: None
    events: dict[tuple[str, str], Event] = field(default_factory=dict)
    """The newest event of each (object uid, reason): a controller retrying writes one event per attempt."""
    notes: list[str] = field(default_factory=list)
    causes: list[Cause] = field(default_factory=list)
    _first_seen: dict[str, float] = field(default_factory=dict)
    _next_look: float = 0.0
    _blind: bool = False

    def look(self, obj: Obj | None, force: bool = False) -> Cause | None:
        """Read what the cluster reports about ``obj`` (at most once per :data:`LOOK_INTERVAL_SECONDS` unless
        ``force``); show new Warning events; return a cause that has persisted past its grace (the wait should
        fail), else None."""
        now = self.clock()
        if obj is None or (now < self._next_look and not force):
            return None
        self._next_look = now + LOOK_INTERVAL_SECONDS
        meta = obj.get("metadata") or {}
        obj_label = label(self.kind, self.namespace, str(meta.get("name") or ""))
        causes: list[Cause] = []
        if self.kind == "CustomResourceDefinition":
            cause = crd_cause(obj)
            causes = [cause] if cause else []
        elif not self._blind:
            try:
                causes = self._read(obj, obj_label)
            except Exception:  # best effort: a refused read (403) or an API hiccup leaves the plain wait
                self._blind = True
        for key in [k for k in self._first_seen if k not in {c.key for c in causes}]:
            del self._first_seen[key]  # healed
        self.causes = causes
        for cause in causes:
            first = self._first_seen.setdefault(cause.key, now)
            if now - first >= cause.grace:
                return cause
        return None

    def _read(self, obj: Obj, obj_label: str) -> list[Cause]:
        uid = str((obj.get("metadata") or {}).get("uid") or "")
        causes = condition_causes(obj, obj_label)
        owners = {uid}
        if self.kind == "Deployment":
            for rs in self.reader.list_objects("apps/v1", "ReplicaSet", self.namespace, _selector(obj)):
                if _owned_by(rs, {uid}):
                    owners.add(str((rs.get("metadata") or {}).get("uid") or ""))
        if self.kind == "Pod":
            pods = [obj]
        else:
            selector = f"controller-uid={uid}" if self.kind == "Job" else _selector(obj)
            pods = [
                p
                for p in self.reader.list_objects("v1", "Pod", self.namespace, selector)
                if _owned_by(p, owners)
            ]
        notes: list[str] = []
        for pod in pods:
            owners.add(str((pod.get("metadata") or {}).get("uid") or ""))
            pc, pn = pod_causes(pod)
            causes += pc
            notes += pn
        self.notes = notes
        raw = self.reader.list_objects("v1", "Event", self.namespace)
        mine = sorted((event_of(e) for e in raw), key=lambda e: e.last)
        for ev in mine:
            if ev.uid not in owners:
                continue
            key = (ev.uid, ev.reason)
            if key not in self.events and ev.type == "Warning":
                self.on_event(ev.line())
            self.events[key] = ev
            cause = event_cause(ev)
            if cause is not None:
                causes.append(cause)
        return causes

    def last_events(self, n: int = LAST_EVENTS) -> list[str]:
        """The newest ``n`` events seen (oldest first) and the notes that may heal, one line each."""
        newest = sorted(self.events.values(), key=lambda e: e.last)[-n:]
        return [e.line() for e in newest] + self.notes

    def report(self, reported: Cause | None = None) -> str:
        """What a timeout or failure message adds: the causes still open (but ``reported``) and the last events."""
        lines = [f"not healed yet: {c.text()}" for c in self.causes if c != reported]
        lines += self.last_events()
        return ("\n--- last events ---\n" + "\n".join(lines)) if lines else ""
