"""The simulated kubelet: pods bound to a node start, run, finish and go away without any container runtime.

Why: clients wait on pod state (``kubectl wait``, ``rollout status``, Helm ``--wait``, Job completion), so a bound
pod must move through the same phases a real node would drive it through. These are KWOK's default pod stages:

    bound (spec.nodeName set, node exists)
       │ after ``pod_start_delay``
       ▼
    Running + Ready (conditions PodScheduled/Initialized/ContainersReady/Ready, podIP, containers running)
       │ pods that run to completion, after ``job_duration``: those controlled by a Job, and bare pods
       │ (no controller) whose restartPolicy is Never or OnFailure -- Helm test hooks, ``kubectl run --restart=Never``
       ▼
    Succeeded (exit 0)   or   Failed (exit 1) when the Job or the pod carries
                              the annotation ``berth.dev/simulate-failure: "true"``
    any state ──deletionTimestamp set──▶ removed (a delete with grace period 0) after ``pod_delete_delay``

Other pods (restartPolicy Always, the default, and every pod of a ReplicaSet, StatefulSet or DaemonSet) run until
deleted. A simulation cannot know whether a container's command exits: a bare pod that must keep running uses
restartPolicy Always. A failing bare OnFailure pod ends Failed here, where a real kubelet would restart it. Pod IPs come from the node's ``spec.podCIDR`` (10.244.<n>.0/24), hostIP from the
node's InternalIP. The kubelet records Pulled/Created/Started events per container.

In-place resize (``pods/resize``, KEP-1287) runs as the 1.35 kubelet's allocation manager reports it, one status
write per step (``metadata.generation`` ahead of ``status.observedGeneration`` says the spec changed):

    spec resources != running ones
       │ the pod's new requests exceed the node's allocatable   ──▶ PodResizePending Infeasible (Warning event)
       │ they do not fit beside the other pods' allocations now ──▶ PodResizePending Deferred (retried)
       ▼ they fit
    allocatedResources = new requests, PodResizeInProgress (event ResizeStarted)
       ▼
    containerStatuses[].resources = spec, PodResizeInProgress cleared (event ResizeCompleted); a container whose
    resizePolicy says RestartContainer for a changed resource is restarted (restartCount + 1)

Like a 1.35 kubelet, every container status the kubelet writes carries ``resources`` (what the container runs with:
its spec's limits and requests, ``{}`` when it has none) and ``allocatedResources`` (its allocated requests), from
the moment it starts. kube-apiserver refuses a resize of a pod whose running container reports no ``resources``
(a node without resize support), ResourceQuota charges a pending resize the larger of spec and status, and the
scheduler counts it so; a pod started by an older berth gets them on the kubelet's next look.

The failure annotation is the documented way for tests and demos to make a Job fail: every pod of such a Job exits
with code 1, the Job controller counts failures against ``backoffLimit`` and the Job ends ``Failed``
(``BackoffLimitExceeded``).
"""

from __future__ import annotations

import copy
import hashlib
import ipaddress
import json
import math
import threading
import time
from fractions import Fraction
from typing import Any

from berth.cluster import objmeta, quota
from berth.cluster.controllers import base, client, nodes
from berth.cluster.controllers.informer import Handler, key_of, split_key
from berth.kube import quantity
from berth.kube.objects import Obj

SIMULATE_FAILURE_ANNOTATION = "berth.dev/simulate-failure"
"""Set to ``"true"`` on a Job (or a pod) to make its pods fail with exit code 1 instead of succeeding."""

NODE_NAME_INDEX = nodes.NODE_NAME_INDEX
_node_of = nodes._node_of


def image_id(image: str) -> str:
    """A containerd-style image ID: the normalised repository plus a stable fake digest."""
    ref = image.split("@", 1)[0]
    last = ref.rsplit("/", 1)[-1]
    repo = ref.rsplit(":", 1)[0] if ":" in last else ref
    first = repo.split("/", 1)[0]
    if "/" not in repo:
        repo = f"docker.io/library/{repo}"
    elif "." not in first and ":" not in first and first != "localhost":
        repo = f"docker.io/{repo}"
    return f"{repo}@sha256:{hashlib.sha256(image.encode()).hexdigest()}"


def container_id(pod_uid: str, name: str) -> str:
    return "containerd://" + hashlib.sha256(f"{pod_uid}/{name}".encode()).hexdigest()


def _truthy(value: Any) -> bool:
    return str(value).strip().lower() in ("true", "1", "yes")


class Kubelet(base.Controller):
    """One simulated kubelet for every node (keyed by pod)."""

    name = "kubelet"

    def __init__(self, ctx: base.Context) -> None:
        super().__init__(ctx)
        self.pods = ctx.informers.informer("pods")
        self.nodes = ctx.informers.informer("nodes")
        self.jobs = ctx.informers.informer("jobs.batch")
        self.pods.add_index(NODE_NAME_INDEX, _node_of)
        self.pods.add_handler(
            Handler(
                on_add=self._on_pod,
                on_update=lambda _old, new: self._on_pod(new),
                on_delete=self._on_pod_gone,
            )
        )
        self.nodes.add_handler(Handler(on_add=self._on_node))
        self._lock = threading.Lock()
        self._seen_bound: dict[str, float] = {}
        self._started: dict[str, float] = {}
        self._ips: dict[str, tuple[str, str]] = {}  # pod uid -> (node, ip)
        self._node_ips: dict[str, dict[str, str]] = {}  # node -> ip -> pod uid
        self._cursor: dict[str, int] = {}

    # ---- event handlers ------------------------------------------------------------------------------------

    def _on_pod(self, pod: Obj) -> None:
        if (pod.get("spec") or {}).get("nodeName"):
            self.queue.add(key_of(pod))

    def _on_pod_gone(self, pod: Obj) -> None:
        uid = base.uid(pod)
        with self._lock:
            self._seen_bound.pop(uid, None)
            self._started.pop(uid, None)
        self._release_ip(uid)

    def _on_node(self, node: Obj) -> None:
        for pod in self.pods.by_index(NODE_NAME_INDEX, base.meta(node).get("name", "")):
            self.queue.add(key_of(pod))

    # ---- IPs -----------------------------------------------------------------------------------------------

    def _allocate_ip(self, pod: Obj, node: Obj) -> str | None:
        """Next free address of the node's pod CIDR (next-fit; seeded from running pods on first use)."""
        node_name = str(base.meta(node).get("name", ""))
        uid = base.uid(pod)
        cidr = (node.get("spec") or {}).get("podCIDR")
        if not cidr:
            return None
        with self._lock:
            if uid in self._ips:
                return self._ips[uid][1]
            taken = self._node_ips.get(node_name)
            if taken is None:
                taken = {
                    str((p.get("status") or {}).get("podIP")): base.uid(p)
                    for p in self.pods.by_index(NODE_NAME_INDEX, node_name)
                    if (p.get("status") or {}).get("podIP") and not base.pod_finished(p)
                }
                self._node_ips[node_name] = taken
            network = ipaddress.ip_network(cidr, strict=False)
            first = int(network.network_address) + 2  # .1 is the node's bridge
            size = max(1, network.num_addresses - 3)
            cursor = self._cursor.get(node_name, 0)
            for step in range(size):
                offset = (cursor + step) % size
                ip = str(ipaddress.ip_address(first + offset))
                if ip not in taken:
                    self._cursor[node_name] = offset + 1
                    break
            else:
                # Exhausted: share an address rather than never starting the pod.
                ip = str(
                    ipaddress.ip_address(first + int(hashlib.sha256(uid.encode()).hexdigest()[:6], 16) % size)
                )
            taken[ip] = uid
            self._ips[uid] = (node_name, ip)
            return ip

    def _release_ip(self, uid: str) -> None:
        with self._lock:
            where = self._ips.pop(uid, None)
            if where is not None:
                taken = self._node_ips.get(where[0])
                if taken is not None and taken.get(where[1]) == uid:
                    del taken[where[1]]

    @staticmethod
    def _host_ip(node: Obj) -> str:
        for a in (node.get("status") or {}).get("addresses") or []:
            if a.get("type") == "InternalIP":
                return str(a.get("address"))
        return "10.0.0.1"

    # ---- reconcile -----------------------------------------------------------------------------------------

    def reconcile(self, key: str) -> None:
        pod = self.pods.get(key)
        if pod is None:
            return
        node_name = (pod.get("spec") or {}).get("nodeName")
        if not node_name:
            return
        if base.deleting(pod):
            self._finish_deletion(key, pod)
            return
        phase = base.pod_phase(pod)
        if phase in ("Succeeded", "Failed"):
            return
        node = self.nodes.get(str(node_name))
        if node is None:
            return  # bound to a node that does not exist (yet): stays Pending, like a real cluster
        uid = base.uid(pod)
        mono = time.monotonic()
        if not self._is_started(pod):
            with self._lock:
                first = self._seen_bound.setdefault(uid, mono)
            wait = self.options.pod_start_delay - (mono - first)
            if wait > 0:
                self.requeue_after(key, wait)
                return
            self._start(pod, node)
            with self._lock:
                self._started[uid] = time.monotonic()
            return  # our status write comes back as an update event and drives the next stage
        if self._ephemeral_waiting(pod):
            self._start_ephemeral(pod)
            return
        reported = _with_status_resources(pod)
        if reported is not None:
            base.write_status(self, "pods", pod, reported)
            return
        if self._resize_due(pod):
            self._resize(key, pod, node)
            return
        if self._runs_to_completion(pod):
            with self._lock:
                started = self._started.setdefault(uid, mono)
            wait = self.options.job_duration - (mono - started)
            if wait > 0:
                self.requeue_after(key, wait)
                return
            self._complete(pod, failed=self._should_fail(pod))

    @staticmethod
    def _is_started(pod: Obj) -> bool:
        st = pod.get("status") or {}
        return st.get("phase") == "Running" and bool(st.get("podIP"))

    @staticmethod
    def _runs_to_completion(pod: Obj) -> bool:
        ref = base.controller_ref(pod)
        if ref is not None:
            return ref.get("kind") == "Job"
        return (pod.get("spec") or {}).get("restartPolicy") in ("Never", "OnFailure")

    def _should_fail(self, pod: Obj) -> bool:
        if _truthy(base.meta(pod).get("annotations", {}).get(SIMULATE_FAILURE_ANNOTATION, "")):
            return True
        ref = base.controller_ref(pod)
        if ref is None or ref.get("kind") != "Job":
            return False
        ns = base.meta(pod).get("namespace", "")
        job = self.jobs.get(objmeta.ns_name_key(ns, str(ref.get("name", ""))))
        if job is None:
            try:
                job = self.api.get("jobs.batch", str(ref.get("name", "")), ns)
            except client.ApiError:
                return False
        return _truthy((base.meta(job).get("annotations") or {}).get(SIMULATE_FAILURE_ANNOTATION, ""))

    def _finish_deletion(self, key: str, pod: Obj) -> None:
        ts = base.parse_time(base.meta(pod).get("deletionTimestamp"))
        elapsed = (base.now() - ts).total_seconds() if ts else 0.0
        wait = self.options.pod_delete_delay - elapsed
        if wait > 0:
            self.requeue_after(key, wait)
            return
        if base.meta(pod).get("finalizers"):
            return  # someone else's finalizer holds it; the pod goes when they remove it
        ns, name = split_key(key)
        try:
            client.delete_now(self.api, "pods", name, ns, user=self.user)
        except client.ApiError as exc:
            if not client.is_not_found(exc):
                raise

    # ---- status writers ------------------------------------------------------------------------------------

    def _start(self, pod: Obj, node: Obj) -> None:
        spec = pod.get("spec") or {}
        host_ip = self._host_ip(node)
        pod_ip = host_ip if spec.get("hostNetwork") else self._allocate_ip(pod, node)
        if pod_ip is None:
            self.requeue_after(key_of(pod), 0.05)
            return
        st: dict[str, Any] = copy.deepcopy(pod.get("status") or {})
        stamp = base.fmt_time()
        uid = base.uid(pod)
        st["phase"] = "Running"
        st["hostIP"] = host_ip
        st["hostIPs"] = [{"ip": host_ip}]
        st["podIP"] = pod_ip
        st["podIPs"] = [{"ip": pod_ip}]
        st.setdefault("startTime", stamp)
        for ctype in ("PodReadyToStartContainers", "Initialized", "ContainersReady", "Ready", "PodScheduled"):
            base.set_condition(st, ctype, "True")
        if spec.get("initContainers"):
            st["initContainerStatuses"] = [
                self._status(
                    c,
                    uid,
                    {
                        "terminated": {
                            "exitCode": 0,
                            "reason": "Completed",
                            "startedAt": stamp,
                            "finishedAt": stamp,
                            "containerID": container_id(uid, c.get("name", "")),
                        }
                    },
                    ready=True,
                    started=False,
                )
                for c in spec["initContainers"]
            ]
        st["containerStatuses"] = [
            self._status(c, uid, {"running": {"startedAt": stamp}}, ready=True, started=True)
            for c in spec.get("containers") or []
        ]
        base.write_status(self, "pods", pod, st)
        node_name = str(base.meta(node).get("name", ""))
        for c in spec.get("containers") or []:
            cname, image = c.get("name", ""), c.get("image", "")
            self.ctx.recorder.event(
                pod,
                "Normal",
                "Pulled",
                f'Container image "{image}" already present on machine',
                f"kubelet/{node_name}",
            )
            self.ctx.recorder.event(
                pod, "Normal", "Created", f"Created container: {cname}", f"kubelet/{node_name}"
            )
            self.ctx.recorder.event(
                pod, "Normal", "Started", f"Started container {cname}", f"kubelet/{node_name}"
            )

    @staticmethod
    def _ephemeral_waiting(pod: Obj) -> bool:
        """Whether ``kubectl debug`` added an ephemeral container this kubelet has not started yet."""
        wanted = (pod.get("spec") or {}).get("ephemeralContainers") or []
        have = {s.get("name") for s in (pod.get("status") or {}).get("ephemeralContainerStatuses") or []}
        return any(c.get("name") not in have for c in wanted)

    def _start_ephemeral(self, pod: Obj) -> None:
        st: dict[str, Any] = copy.deepcopy(pod.get("status") or {})
        uid, stamp = base.uid(pod), base.fmt_time()
        have = {s.get("name"): s for s in st.get("ephemeralContainerStatuses") or []}
        st["ephemeralContainerStatuses"] = [
            have.get(c.get("name"))
            or self._status(c, uid, {"running": {"startedAt": stamp}}, ready=False, started=True)
            for c in (pod.get("spec") or {}).get("ephemeralContainers") or []
        ]
        base.write_status(self, "pods", pod, st)
        node = f"kubelet/{(pod.get('spec') or {}).get('nodeName', '')}"
        for c in (pod.get("spec") or {}).get("ephemeralContainers") or []:
            if c.get("name") not in have:
                self.ctx.recorder.event(
                    pod, "Normal", "Started", f"Started container {c.get('name', '')}", node
                )

    # ---- in-place resize -----------------------------------------------------------------------------------

    @staticmethod
    def _resize_due(pod: Obj) -> bool:
        """Whether a resize waits for this kubelet: a spec newer than the status speaks of, an allocation not yet
        actuated, or a Deferred resize to try again. Never-resized pods answer on the first comparison."""
        st = pod.get("status") or {}
        if base.generation(pod) > int(st.get("observedGeneration") or 1):
            return True
        return any(
            c.get("type") == RESIZE_IN_PROGRESS
            or (c.get("type") == RESIZE_PENDING and c.get("reason") == "Deferred")
            for c in st.get("conditions") or []
        )

    def _resize(self, key: str, pod: Obj, node: Obj) -> None:
        """One step of an in-place resize (upstream's handlePodResourcesResize, then the runtime's actuation)."""
        st: dict[str, Any] = copy.deepcopy(pod.get("status") or {})
        generation = base.generation(pod)
        statuses = {
            str(cs.get("name")): cs
            for field in ("containerStatuses", "initContainerStatuses")
            for cs in st.get(field) or []
        }
        wanted = {str(c.get("name")): c for c in _resizable(pod)}
        involved = {n: cs for n, cs in statuses.items() if n in wanted and cs.get("resources") is not None}
        in_progress = base.condition(pod, RESIZE_IN_PROGRESS)
        if in_progress is not None and int(in_progress.get("observedGeneration") or 0) == generation:
            self._actuate(pod, st, involved, wanted)
        elif all(
            _same(_requirements(wanted[n].get("resources")), cs["resources"]) for n, cs in involved.items()
        ):
            _drop_conditions(st, RESIZE_PENDING, RESIZE_IN_PROGRESS)  # the spec asks for what runs
        else:
            self._allocate(key, pod, node, st, involved, wanted, generation)
        st["observedGeneration"] = generation
        if st != (pod.get("status") or {}):
            base.write_status(self, "pods", pod, st)

    def _allocate(
        self,
        key: str,
        pod: Obj,
        node: Obj,
        st: dict[str, Any],
        statuses: dict[str, dict[str, Any]],
        wanted: dict[str, dict[str, Any]],
        generation: int,
    ) -> None:
        """Admit the new requests against the node (Infeasible, Deferred) or allocate them (InProgress)."""
        allocatable = (node.get("status") or {}).get("allocatable") or {}
        need = _requests(pod)
        capacity = {r: quantity.parse(allocatable.get(r) or 0) for r in _RESIZED}
        reason = message = ""
        if need["memory"] > capacity["memory"] or need["cpu"] > capacity["cpu"]:
            r = "memory" if need["memory"] > capacity["memory"] else "cpu"
            reason = "Infeasible"
            message = (
                f"Node didn't have enough capacity: {r}, requested: {_count(r, need[r])}, "
                f"capacity: {_count(r, capacity[r])}"
            )
        else:
            used = self._allocated_on_node(pod)
            for r in _RESIZED:
                if used[r] + need[r] > capacity[r]:
                    reason = "Deferred"
                    message = (
                        f"Node didn't have enough resource: {r}, requested: {_count(r, need[r])}, "
                        f"used: {_count(r, used[r])}, capacity: {_count(r, capacity[r])}"
                    )
                    break
        source = f"kubelet/{(pod.get('spec') or {}).get('nodeName', '')}"
        if reason:
            was = base.condition(pod, RESIZE_PENDING) or {}
            _set_condition(st, RESIZE_PENDING, reason, message, generation)
            if (was.get("reason"), was.get("message"), int(was.get("observedGeneration") or 0)) != (
                reason,
                message,
                generation,
            ):
                event = "ResizeInfeasible" if reason == "Infeasible" else "ResizeDeferred"
                summary = _resize_summary(pod, generation, message)
                self.ctx.recorder.event(pod, "Warning", event, f"Pod resize {reason}: {summary}", source)
            if reason == "Deferred":
                self.requeue_after(key, RESIZE_RETRY_SECONDS)
            return
        for name, c in wanted.items():
            cs = statuses.get(name)
            if cs is not None:
                cs.pop("allocatedResources", None)
                allocated = _status_resources(c).get("allocatedResources")
                if allocated is not None:
                    cs["allocatedResources"] = allocated
        _drop_conditions(st, RESIZE_PENDING, RESIZE_IN_PROGRESS)
        _set_condition(st, RESIZE_IN_PROGRESS, "", "", generation)
        summary = _resize_summary(pod, generation, "")
        self.ctx.recorder.event(pod, "Normal", "ResizeStarted", f"Pod resize started: {summary}", source)

    def _actuate(
        self,
        pod: Obj,
        st: dict[str, Any],
        statuses: dict[str, dict[str, Any]],
        wanted: dict[str, dict[str, Any]],
    ) -> None:
        """The runtime applies the allocation: status resources follow the spec; containers whose resizePolicy
        says RestartContainer for a changed resource restart."""
        stamp = base.fmt_time()
        for name, c in wanted.items():
            cs = statuses.get(name)
            if cs is None:
                continue
            now = _status_resources(c)["resources"]
            restart = {
                str(p.get("resourceName"))
                for p in c.get("resizePolicy") or []
                if p.get("restartPolicy") == "RestartContainer"
            }
            if any(_changed(cs.get("resources"), now, r) for r in restart):
                running = (cs.get("state") or {}).get("running") or {}
                cs["lastState"] = {
                    "terminated": {
                        "exitCode": 0,
                        "reason": "Completed",
                        "startedAt": running.get("startedAt", stamp),
                        "finishedAt": stamp,
                        "containerID": cs.get("containerID", ""),
                    }
                }
                cs["state"] = {"running": {"startedAt": stamp}}
                cs["restartCount"] = int(cs.get("restartCount") or 0) + 1
            cs["resources"] = now
        _drop_conditions(st, RESIZE_IN_PROGRESS)
        source = f"kubelet/{(pod.get('spec') or {}).get('nodeName', '')}"
        summary = _resize_summary(pod, base.generation(pod), "")
        self.ctx.recorder.event(pod, "Normal", "ResizeCompleted", f"Pod resize completed: {summary}", source)

    def _allocated_on_node(self, pod: Obj) -> dict[str, Fraction]:
        """The cpu/memory the node's other running pods hold: their allocated requests where a resize is pending
        (upstream's getAllocatedPods), else their spec's."""
        node_name = str((pod.get("spec") or {}).get("nodeName", ""))
        uid = base.uid(pod)
        used = {r: Fraction(0) for r in _RESIZED}
        for other in self.pods.by_index(NODE_NAME_INDEX, node_name):
            if base.uid(other) == uid or base.pod_finished(other):
                continue
            usage = quota.object_usage("pods", {"spec": _allocated_spec(other)})
            for r in _RESIZED:
                used[r] += usage.get(f"requests.{r}", Fraction(0))
        return used

    @staticmethod
    def _status(
        c: dict[str, Any], uid: str, state: dict[str, Any], *, ready: bool, started: bool
    ) -> dict[str, Any]:
        image = str(c.get("image", ""))
        return {
            "name": c.get("name", ""),
            "image": image,
            "imageID": image_id(image),
            "containerID": container_id(uid, str(c.get("name", ""))),
            "ready": ready,
            "started": started,
            "restartCount": 0,
            "state": state,
            "lastState": {},
            **_status_resources(c),
        }

    def _complete(self, pod: Obj, failed: bool) -> None:
        st: dict[str, Any] = copy.deepcopy(pod.get("status") or {})
        stamp = base.fmt_time()
        uid = base.uid(pod)
        st["phase"] = "Failed" if failed else "Succeeded"
        reason = "PodFailed" if failed else "PodCompleted"
        base.set_condition(st, "PodReadyToStartContainers", "False")
        base.set_condition(st, "ContainersReady", "False", reason)
        base.set_condition(st, "Ready", "False", reason)
        code = 1 if failed else 0
        statuses = []
        for c in (pod.get("spec") or {}).get("containers") or []:
            prev: dict[str, Any] = next(
                (
                    s
                    for s in (pod.get("status") or {}).get("containerStatuses") or []
                    if s.get("name") == c.get("name")
                ),
                {},
            )
            started_at = ((prev.get("state") or {}).get("running") or {}).get("startedAt", stamp)
            term = {
                "exitCode": code,
                "reason": "Error" if failed else "Completed",
                "startedAt": started_at,
                "finishedAt": stamp,
                "containerID": container_id(uid, str(c.get("name", ""))),
            }
            statuses.append(self._status(c, uid, {"terminated": term}, ready=False, started=False))
        st["containerStatuses"] = statuses
        base.write_status(self, "pods", pod, st)
        self._release_ip(uid)


# ---- in-place resize helpers ----------------------------------------------------------------------------------------

RESIZE_PENDING = "PodResizePending"
RESIZE_IN_PROGRESS = "PodResizeInProgress"
RESIZE_RETRY_SECONDS = 1.0
"""How soon a Deferred resize is tried again (upstream retries when pods leave and every few minutes)."""
_RESIZED = ("cpu", "memory")


_STATUS_FIELDS = ("containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses")


def _status_resources(c: dict[str, Any]) -> dict[str, Any]:
    """What a 1.35 kubelet reports of a container's resources in its status: ``allocatedResources`` (the allocated
    requests; absent without requests) and ``resources`` (limits and requests it runs with, and its claims; ``{}``
    when it has none -- always present, which is how kube-apiserver tells a node that supports resize)."""
    res = c.get("resources") or {}
    out: dict[str, Any] = {}
    running = _requirements(res)
    if res.get("claims"):
        running["claims"] = copy.deepcopy(res["claims"])
    if running.get("requests"):
        out["allocatedResources"] = dict(running["requests"])
    out["resources"] = running
    return out


def _with_status_resources(pod: Obj) -> dict[str, Any] | None:
    """The pod's status with ``resources``/``allocatedResources`` filled into the statuses of its containers that
    lack them (a pod an older berth started), as a 1.35 kubelet's next status sync reports them; None when none
    lacks them (a status naming no container of the spec is left alone, so this never writes in a loop)."""
    st = pod.get("status") or {}
    if all("resources" in cs for field in _STATUS_FIELDS for cs in st.get(field) or []):
        return None
    spec = pod.get("spec") or {}
    containers = {
        str(c.get("name")): c
        for key in ("initContainers", "containers", "ephemeralContainers")
        for c in spec.get(key) or []
    }
    out: dict[str, Any] = copy.deepcopy(st)
    changed = False
    for field in _STATUS_FIELDS:
        for cs in out.get(field) or []:
            c = containers.get(str(cs.get("name")))
            if c is not None and "resources" not in cs:
                cs.update(_status_resources(c))
                changed = True
    return out if changed else None


def _resizable(pod: Obj) -> list[dict[str, Any]]:
    """The containers a resize may change: regular ones and sidecars (restartable init containers)."""
    spec = pod.get("spec") or {}
    sidecars = [c for c in spec.get("initContainers") or [] if c.get("restartPolicy") == "Always"]
    return [*sidecars, *(spec.get("containers") or [])]


def _requirements(resources: Any) -> dict[str, Any]:
    """A container's limits and requests as the status reports them (no empty lists, no claims), in the order
    upstream's JSON has them."""
    out: dict[str, Any] = {}
    for key in ("limits", "requests"):
        values = (resources or {}).get(key) or {}
        if values:
            out[key] = dict(values)
    return out


def _value(values: Any, r: str) -> Fraction | None:
    v = (values or {}).get(r)
    return None if v is None else quantity.parse(v)


def _changed(a: Any, b: Any, r: str) -> bool:
    """Whether resource ``r``'s request or limit differs between two requirements (as quantities)."""
    return any(_value((a or {}).get(k), r) != _value((b or {}).get(k), r) for k in ("requests", "limits"))


def _same(a: Any, b: Any) -> bool:
    """Two requirements alike in what a resize changes (cpu/memory, ``1`` equal to ``1000m``)."""
    return not any(_changed(a, b, r) for r in _RESIZED)


def _requests(pod: Obj) -> dict[str, Fraction]:
    usage = quota.object_usage("pods", {"spec": pod.get("spec") or {}})
    return {r: usage.get(f"requests.{r}", Fraction(0)) for r in _RESIZED}


def _allocated_spec(pod: Obj) -> dict[str, Any]:
    """``pod``'s spec with each container's requests replaced by what the kubelet allocated, where it says."""
    spec: dict[str, Any] = pod.get("spec") or {}
    allocated = {
        str(cs.get("name")): cs["allocatedResources"]
        for field in ("containerStatuses", "initContainerStatuses")
        for cs in (pod.get("status") or {}).get(field) or []
        if cs.get("allocatedResources") is not None
    }
    if not allocated:
        return spec
    out = dict(spec)
    for key in ("containers", "initContainers"):
        if key in spec:
            out[key] = [
                {**c, "resources": {**(c.get("resources") or {}), "requests": allocated[str(c.get("name"))]}}
                if str(c.get("name")) in allocated
                else c
                for c in spec[key]
            ]
    return out


def _count(r: str, amount: Fraction) -> int:
    """Upstream's message numbers: cpu in millicores, memory in bytes (rounded up, as MilliValue/Value)."""
    return math.ceil(amount * 1000) if r == "cpu" else math.ceil(amount)


def _set_condition(st: dict[str, Any], ctype: str, reason: str, message: str, generation: int) -> None:
    """Set a resize condition as upstream's status manager builds it (updatedPodResizeCondition): the generation
    it speaks of, lastTransitionTime moved only when the reason changes. An identical one is left alone, so that a
    Deferred retry that finds nothing new writes nothing."""
    was = next((c for c in st.get("conditions") or [] if c.get("type") == ctype), None)
    if was is not None and (was.get("reason", ""), was.get("message", ""), was.get("observedGeneration")) == (
        reason,
        message,
        generation,
    ):
        return
    _drop_conditions(st, ctype)
    stamp = base.fmt_time()
    cond: dict[str, Any] = {"type": ctype, "status": "True", "observedGeneration": generation}
    cond["lastProbeTime"] = stamp
    same_reason = was is not None and was.get("reason", "") == reason
    cond["lastTransitionTime"] = (was or {}).get("lastTransitionTime") if same_reason else stamp
    if reason:
        cond["reason"] = reason
    if message:
        cond["message"] = message
    st.setdefault("conditions", []).append(cond)


def _drop_conditions(st: dict[str, Any], *ctypes: str) -> None:
    if any(c.get("type") in ctypes for c in st.get("conditions") or []):
        st["conditions"] = [c for c in st["conditions"] if c.get("type") not in ctypes]


def _resize_summary(pod: Obj, generation: int, error: str) -> str:
    """The JSON upstream's resize events carry: each container's resources, the generation, any error."""
    spec = pod.get("spec") or {}
    out: dict[str, Any] = {}
    for key in ("initContainers", "containers"):
        if spec.get(key):
            out[key] = [
                {"name": c.get("name", ""), "resources": _requirements(c.get("resources"))} for c in spec[key]
            ]
    out["generation"] = generation
    if error:
        out["error"] = error
    return json.dumps(out, separators=(",", ":"), sort_keys=False)
