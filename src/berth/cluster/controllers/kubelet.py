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

The failure annotation is the documented way for tests and demos to make a Job fail: every pod of such a Job exits
with code 1, the Job controller counts failures against ``backoffLimit`` and the Job ends ``Failed``
(``BackoffLimitExceeded``).
"""

from __future__ import annotations

import copy
import hashlib
import ipaddress
import threading
import time
from typing import Any

from berth.cluster.controllers import base, client, nodes
from berth.cluster.controllers.informer import Handler, key_of, split_key
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
            Handler(on_add=self._on_pod, on_update=lambda _o, n: self._on_pod(n), on_delete=self._on_pod_gone)
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
        job = self.jobs.get(f"{ns}/{ref.get('name', '')}")
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
