"""``berth schedule snapshot``: a running cluster written out as ``simulate`` input files.

Why: the question a scheduler change raises is "what would it do on *my* cluster". kube-scheduler-simulator's most
asked-for feature is syncing from a real cluster; here one read of the cluster gives the two files ``berth schedule
simulate`` takes -- the cluster file (nodes, the pods running on them, PriorityClasses and every object a default
plugin reads: Namespaces, Services, controllers, volumes, storage classes, CSI objects, disruption budgets) and,
optionally, a workload file of the pods still Pending -- so a new configuration can be tried on today's state
before it is deployed.

What is left out, and why: pods that finished (``Succeeded``/``Failed``: they hold no room, and kube-scheduler's
informer skips them too), pods bound to a node the listing did not return (counted in ``skipped``), server
bookkeeping that only makes the files long (``managedFields``, ``kubectl.kubernetes.io/last-applied-
configuration``). Secrets and ConfigMaps are never read. A kind the credentials may not list, or the server does
not serve, is named in ``warnings`` and left out; nodes and pods are required.

Lists are paged (``limit``/``continue``) through the live scheduler's raw JSON requests, so a large cluster is read
in pieces, with the same kubeconfig rules as ``berth schedule run``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from berth.kube import yamlio
from berth.kube.errors import InputError
from berth.kube.objects import Obj
from berth.schedule.inputs import CLUSTER_KINDS
from berth.schedule.live import api, informers
from berth.schedule.live.connection import api_client_from, configuration, resolve_kubeconfig
from berth.schedule.live.informers import Resource

PAGE = 500
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
TERMINAL_PHASES = ("Succeeded", "Failed")
# What the cluster file holds, in the order it is written (nodes first, as a reader expects).
KINDS: tuple[Resource, ...] = tuple(
    sorted(
        (r for r in informers.KNOWN.values() if r.kind in CLUSTER_KINDS),
        key=lambda r: (r.kind != "Node", r.kind != "PriorityClass", r.kind == "Pod", r.kind),
    )
)
REQUIRED = ("Node", "Pod")


@dataclass
class Snapshot:
    """What one read of the cluster gave."""

    cluster: list[Obj] = field(default_factory=list)  # the cluster file's documents
    pending: list[Obj] = field(default_factory=list)  # Pending pods (the workload file)
    counts: dict[str, int] = field(default_factory=dict)  # kind -> objects in the cluster file
    skipped: int = 0  # pods bound to nodes the listing did not return
    warnings: list[str] = field(default_factory=list)

    def summary(self) -> str:
        parts = [_count(n, kind) for kind, n in self.counts.items() if n]
        line = ", ".join(parts) or "nothing"
        if self.pending:
            line += f"; {_count(len(self.pending), 'Pending pod')}"
        if self.skipped:
            line += f"; {_count(self.skipped, 'pod')} left out (bound to nodes not listed)"
        return line


def _count(n: int, noun: str) -> str:
    """``1 Service``, ``3 PriorityClasses``, ``2 CSIStorageCapacities``."""
    if n == 1:
        return f"1 {noun}"
    if noun.endswith("s"):
        return f"{n} {noun}es"
    if noun.endswith("y"):
        return f"{n} {noun[:-1]}ies"
    return f"{n} {noun}s"


def clean(obj: Mapping[str, Any], kind: str, api_version: str) -> Obj:
    """A listed item as a file document: kind and apiVersion filled in, server bookkeeping dropped."""
    out: Obj = {"apiVersion": api_version, "kind": kind, **copy.deepcopy(dict(obj))}
    meta = out.get("metadata")
    if isinstance(meta, dict):
        meta.pop("managedFields", None)
        annotations = meta.get("annotations")
        if isinstance(annotations, dict):
            annotations.pop(LAST_APPLIED, None)
            if not annotations:
                del meta["annotations"]
    return out


def list_all(client: Any, resource: Resource) -> list[Obj]:
    """Every object of ``resource`` across namespaces, page by page (``limit``/``continue``)."""
    items: list[Obj] = []
    token = ""
    while True:
        query: list[tuple[str, Any]] = [("limit", PAGE)]
        if token:
            query.append(("continue", token))
        page = api.call(client, "GET", resource.path, query, timeout=(10.0, 120.0))
        items.extend(clean(i, resource.kind, resource.api_version) for i in page.get("items") or [])
        token = str((page.get("metadata") or {}).get("continue") or "")
        if not token:
            return items


def take(client: Any, with_pending: bool) -> Snapshot:
    """Read the cluster through ``client`` (an official ApiClient)."""
    snap = Snapshot()
    listed: dict[str, list[Obj]] = {}
    for resource in KINDS:
        try:
            listed[resource.kind] = list_all(client, resource)
        except api.ApiError as exc:
            if resource.kind in REQUIRED:
                raise InputError(
                    f"cannot list {resource.qualified}: {exc.status} {exc.reason}: {exc.message}; the snapshot "
                    f"needs nodes and pods (grant list on {resource.qualified})",
                    "--kubeconfig",
                ) from exc
            snap.warnings.append(
                f"{resource.qualified} left out: {exc.status} {exc.reason}"
                + (" (not served)" if exc.status == 404 else " (the credentials may not list them)")
            )
        except api.Unreachable as exc:
            raise InputError(f"no answer from the API server: {exc}", "--kubeconfig") from exc
    nodes = {str((n.get("metadata") or {}).get("name") or "") for n in listed.get("Node", [])}
    running: list[Obj] = []
    for pod in listed.get("Pod", []):
        spec = pod.get("spec") or {}
        phase = (pod.get("status") or {}).get("phase")
        if phase in TERMINAL_PHASES:
            continue
        node = spec.get("nodeName")
        if not node:
            if with_pending and not (pod.get("metadata") or {}).get("deletionTimestamp"):
                snap.pending.append(pod)
            continue
        if node not in nodes:
            snap.skipped += 1
            continue
        running.append(pod)
    listed["Pod"] = running
    for resource in KINDS:
        docs = listed.get(resource.kind, [])
        snap.counts[resource.kind] = len(docs)
        snap.cluster.extend(docs)
    return snap


def write(snap: Snapshot, cluster_path: str, pending_path: str | None) -> None:
    """Both files, each written atomically (a failed run leaves the previous files as they were)."""
    header = "# berth schedule snapshot: nodes, running pods and the objects the scheduler's plugins read\n"
    yamlio.write_atomic(cluster_path, header + yamlio.dump_all(snap.cluster))
    if pending_path is not None:
        pending_header = "# berth schedule snapshot: the pods that were Pending\n"
        yamlio.write_atomic(pending_path, pending_header + yamlio.dump_all(snap.pending))


def snapshot(kubeconfig: str | None, context: str | None, with_pending: bool) -> Snapshot:
    """Connect as ``berth schedule run`` does (``--kubeconfig``, ``$KUBECONFIG``, the embedded cluster's, ``~/.kube``,
    in-cluster) and take a snapshot."""
    cfg = configuration(resolve_kubeconfig(kubeconfig), context)
    client = api_client_from(cfg, 2)
    try:
        return take(client, with_pending)
    finally:
        client.close()
