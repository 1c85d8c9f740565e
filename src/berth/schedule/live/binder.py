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

The body is a ``v1.Binding`` with the pod's uid (so a pod deleted and re-created under the same name is not bound
by mistake). ``_preload_content=False``: the server answers with a ``Status`` the client cannot turn into a
``V1Binding`` (kubernetes-client/python #547).
"""

from __future__ import annotations

import threading
from typing import Any

from kubernetes import client as k8s

from berth.schedule import Placement
from berth.schedule.framework.interface import SUCCESS, Code, Status
from berth.schedule.framework.types import PodInfo
from berth.schedule.live import api


class ApiBinder:
    """Binds through the API; keeps counts for metrics and tests."""

    echoes_bindings = False  # the pod informer reports the bound pod back

    def __init__(self, api_client: Any, permissions: api.PermissionLog) -> None:
        self._core = k8s.CoreV1Api(api_client)
        self._permissions = permissions
        self._lock = threading.Lock()
        self.bound: list[Placement] = []
        self.conflicts = 0
        self.errors = 0

    def bind(self, pod: PodInfo, node_name: str) -> Status:
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
        try:
            api.typed(self._core.create_namespaced_pod_binding, pod.name, pod.namespace, body)
        except api.ApiError as exc:
            with self._lock:
                if exc.status == 409:
                    self.conflicts += 1
                else:
                    self.errors += 1
            if exc.status == 403:
                self._permissions.forbidden("create", "pods/binding", "", pod.namespace, exc)
            return Status(Code.ERROR, (f"binding rejected: {exc.message or exc}",))
        except api.Unreachable as exc:
            with self._lock:
                self.errors += 1
            return Status(Code.ERROR, (f"binding failed: API server unreachable: {exc}",))
        with self._lock:
            self.bound.append(Placement(pod.key, pod.scheduler_name, node_name))
        return SUCCESS
