"""Simulated nodes: create ``node-1..node-N``, make every node Ready, and keep a heartbeat Lease per node.

Why: the scheduler only places pods on Ready nodes with allocatable resources, and tools that check cluster health
(``kubectl get nodes``, node-lifecycle logic in schedulers) read node conditions and the per-node Lease in
``kube-node-lease``. KWOK's ``node-initialize`` and ``node-heartbeat`` stages do the same against a real server.

When a Node is deleted, the pods bound to it are deleted too (upstream's PodGC for orphaned pods).

Every Node is treated as simulated: one created by a user (``kubectl apply`` of a Node) that has no conditions yet
is initialised the same way (capacity defaults from the options where absent, a pod CIDR, Ready=True). A node that
already reports conditions is left as it is, so a test can mark a node NotReady through ``/status``.

Heartbeat per node (a timer, not a thread)::

    reconcile(node) ─▶ Lease missing? create (owner: the Node) ─▶ renewTime older than the interval? renew
         ▲                                                                                       │
         └────────────────────────── requeue after ``heartbeat_interval`` ◀────────────────────────┘
"""

from __future__ import annotations

import copy
import hashlib
from typing import Any

from berth.cluster.controllers import base, client
from berth.cluster.controllers.informer import Handler, key_of
from berth.kube.objects import Obj

LEASE_NAMESPACE = "kube-node-lease"
LEASES = "leases.coordination.k8s.io"
KUBELET_VERSION = "v1.35.0"
ORPHANS = "orphans:"
NODE_NAME_INDEX = "spec.nodeName"
SIMULATED_ANNOTATION = "berth.dev/simulated-node"
"""Set on nodes this controller created (``"true"``)."""


def _node_of(pod: Obj) -> list[str]:
    n = (pod.get("spec") or {}).get("nodeName")
    return [str(n)] if n else []


def node_name(index: int) -> str:
    """The name of simulated node ``index`` (1-based)."""
    return f"node-{index}"


def internal_ip(index: int) -> str:
    """A stable InternalIP per node index: 10.0.x.y, skipping .0 and .255."""
    n = index + 1
    return f"10.0.{n // 254}.{n % 254 + 1}"


def _ready_conditions() -> list[dict[str, Any]]:
    stamp = base.fmt_time()
    rows = [
        ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
        ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
        ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
    ]
    return [
        {
            "type": t,
            "status": s,
            "reason": r,
            "message": m,
            "lastHeartbeatTime": stamp,
            "lastTransitionTime": stamp,
        }
        for t, s, r, m in rows
    ]


def pod_cidr_for(index: int) -> str:
    """A valid /24 pod CIDR per node index: ``10.244.<index>.0/24`` for the first 256 nodes (as kubeadm clusters
    look), then ``10.<k // 256>.<k % 256>.0/24`` below 10.244 for larger simulated clusters (up to ~62,000 nodes)."""
    if index < 256:
        return f"10.244.{index}.0/24"
    k = index - 256
    return f"10.{(k // 256) % 244}.{k % 256}.0/24"


class NodeController(base.Controller):
    """Creates the configured nodes, initialises node status, assigns pod CIDRs and renews node Leases."""

    name = "node-lifecycle"

    def __init__(self, ctx: base.Context) -> None:
        super().__init__(ctx)
        self.nodes = ctx.informers.informer("nodes")
        self.pods = ctx.informers.informer("pods")
        self.pods.add_index(NODE_NAME_INDEX, _node_of)
        self.nodes.add_handler(
            Handler(
                on_add=self._enqueue,
                on_update=lambda _o, n: self._enqueue(n),
                on_delete=lambda n: self.queue.add(ORPHANS + key_of(n)),
            )
        )

    def _enqueue(self, node: Obj) -> None:
        self.queue.add(key_of(node))

    # ---- creation at start-up ------------------------------------------------------------------------------

    def node_object(self, index: int) -> Obj:
        name = node_name(index)
        labels = {
            "beta.kubernetes.io/arch": "amd64",
            "beta.kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64",
            "kubernetes.io/hostname": name,
            "kubernetes.io/os": "linux",
        }
        labels.update(self.options.node_labels)
        cidr = pod_cidr_for(index)
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": name,
                "labels": labels,
                "annotations": {SIMULATED_ANNOTATION: "true", "node.alpha.kubernetes.io/ttl": "0"},
            },
            "spec": {"podCIDR": cidr, "podCIDRs": [cidr]},
        }

    def ensure_nodes(self) -> list[Obj]:
        """Create ``node-1..node-N`` that do not exist yet and give them Ready status (synchronously)."""
        out: list[Obj] = []
        for i in range(1, self.options.nodes + 1):
            try:
                node = self.api.get("nodes", node_name(i))
            except client.ApiError as exc:
                if not client.is_not_found(exc):
                    raise
                try:
                    node = self.api.create("nodes", self.node_object(i), user=self.user)
                except client.ApiError as exc2:
                    if not client.is_already_exists(exc2):
                        raise
                    node = self.api.get("nodes", node_name(i))
            out.append(self.initialize(node, i))
        return out

    # ---- status --------------------------------------------------------------------------------------------

    def _capacity(self) -> dict[str, str]:
        o = self.options
        return {
            "cpu": o.node_cpu,
            "memory": o.node_memory,
            "pods": o.node_pods,
            "ephemeral-storage": o.node_ephemeral_storage,
            "hugepages-1Gi": "0",
            "hugepages-2Mi": "0",
        }

    def _index_of(self, node: Obj) -> int:
        name = base.meta(node).get("name", "")
        if name.startswith("node-") and name[5:].isdigit():
            return int(name[5:])
        return 0

    def _pod_cidr(self, node: Obj) -> str | None:
        spec = node.get("spec") or {}
        if spec.get("podCIDR"):
            return None
        used = {
            str((n.get("spec") or {}).get("podCIDR", ""))
            for n in self.nodes.list()
            if (n.get("spec") or {}).get("podCIDR")
        }
        i = self._index_of(node)
        if i and pod_cidr_for(i) not in used:
            return pod_cidr_for(i)
        for k in range(100, 256):
            if f"10.244.{k}.0/24" not in used:
                return f"10.244.{k}.0/24"
        return None

    def initialize(self, node: Obj, index: int = 0) -> Obj:
        """KWOK ``node-initialize``: a node without conditions becomes Ready with capacity, addresses, nodeInfo."""
        name = str(base.meta(node).get("name", ""))
        cidr = self._pod_cidr(node)
        if cidr is not None:
            node = copy.deepcopy(node)
            node.setdefault("spec", {}).update({"podCIDR": cidr, "podCIDRs": [cidr]})
            node = self.api.update("nodes", node, user=self.user)
        status = node.get("status") or {}
        if status.get("conditions"):
            return node
        index = (
            index or self._index_of(node) or (int(hashlib.sha256(name.encode()).hexdigest()[:4], 16) + 1000)
        )
        new = copy.deepcopy(node)
        st: dict[str, Any] = new.setdefault("status", {})
        cap = dict(self._capacity())
        cap.update(st.get("capacity") or {})
        st["capacity"] = cap
        alloc = dict(cap)
        alloc.update(st.get("allocatable") or {})
        st["allocatable"] = alloc
        st["conditions"] = _ready_conditions()
        st.setdefault(
            "addresses",
            [{"type": "InternalIP", "address": internal_ip(index)}, {"type": "Hostname", "address": name}],
        )
        st["daemonEndpoints"] = {"kubeletEndpoint": {"Port": 10250}}
        digest = hashlib.sha256(name.encode()).hexdigest()
        st["nodeInfo"] = {
            "machineID": digest[:32],
            "systemUUID": f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}",
            "bootID": digest[32:64],
            "kernelVersion": "6.8.0-berth",
            "osImage": "berth simulated node",
            "containerRuntimeVersion": "containerd://2.1.0",
            "kubeletVersion": KUBELET_VERSION,
            "kubeProxyVersion": "",
            "operatingSystem": "linux",
            "architecture": "amd64",
        }
        st.setdefault("images", [])
        out = self.api.update("nodes", new, subresource="status", user=self.user)
        self.ctx.recorder.event(
            out, "Normal", "NodeReady", f"Node {name} status is now: NodeReady", "kubelet"
        )
        return out

    # ---- pod garbage collection ---------------------------------------------------------------------------

    def _delete_orphans(self, node_name: str) -> None:
        """Upstream PodGC: pods bound to a node that no longer exists are deleted."""
        if self.nodes.get(node_name) is not None:
            return
        for pod in self.pods.by_index(NODE_NAME_INDEX, node_name):
            m = base.meta(pod)
            try:
                self.api.delete(
                    "pods",
                    str(m.get("name", "")),
                    str(m.get("namespace", "")),
                    user="system:controller:pod-garbage-collector",
                )
            except client.ApiError as exc:
                if not client.is_not_found(exc):
                    raise

    # ---- heartbeat -----------------------------------------------------------------------------------------

    def renew_lease(self, node: Obj) -> None:
        name = str(base.meta(node).get("name", ""))
        interval = self.options.heartbeat_interval
        try:
            lease = self.api.get(LEASES, name, LEASE_NAMESPACE)
        except client.ApiError as exc:
            if not client.is_not_found(exc):
                raise
            stamp = base.fmt_micro()
            lease = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {
                    "name": name,
                    "namespace": LEASE_NAMESPACE,
                    "ownerReferences": [
                        {"apiVersion": "v1", "kind": "Node", "name": name, "uid": base.uid(node)}
                    ],
                },
                "spec": {
                    "holderIdentity": name,
                    "leaseDurationSeconds": self.options.lease_duration_seconds,
                    "renewTime": stamp,
                },
            }
            self.api.create(LEASES, lease, LEASE_NAMESPACE, user=self.user)
            return
        age = base.age_seconds((lease.get("spec") or {}).get("renewTime"))
        if age is not None and age < interval * 0.9:
            return
        lease.setdefault("spec", {})["renewTime"] = base.fmt_micro()
        self.api.update(LEASES, lease, LEASE_NAMESPACE, user=self.user)

    def reconcile(self, key: str) -> None:
        if key.startswith(ORPHANS):
            self._delete_orphans(key[len(ORPHANS) :])
            return
        node = self.nodes.get(key)
        if node is None or base.deleting(node):
            return
        node = self.initialize(node)
        self.renew_lease(node)
        self.requeue_after(key, self.options.heartbeat_interval)
