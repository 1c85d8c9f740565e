"""The live VolumeBinding writer: PreBind's PV and claim updates go to the API server (upstream ``bindAPIUpdate``).

Why: in simulation VolumeBinding's PreBind completes a binding itself (the PV controller and provisioner are not
there); on a cluster those controllers exist and only need the scheduler's decision, written as upstream's volume
binder writes it:

- static binding: ``PUT`` the PersistentVolume with ``spec.claimRef`` naming the claim (the PV controller then
  binds both sides);
- WaitForFirstConsumer dynamic provisioning: ``PUT`` the claim with annotation
  ``volume.kubernetes.io/selected-node: <node>`` (the external provisioner creates the volume there).

Both are full updates of the object VolumeBinding assumed at Reserve, carrying the informer's ``resourceVersion``:
if the object changed meanwhile the server answers 409, PreBind fails (``binding volumes: ...``), Unreserve drops
the assumption and the pod is retried with the newer object -- the optimistic concurrency upstream relies on too.
The informers bring the written objects back, replacing the assumptions. A 403 is logged once as a missing
permission (``update persistentvolumes``/``persistentvolumeclaims``, which ``berth schedule rbac`` grants only when
VolumeBinding is enabled).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from berth.schedule.live import api

_PLURALS = {"PersistentVolume": "persistentvolumes", "PersistentVolumeClaim": "persistentvolumeclaims"}


class ApiVolumeWriter:
    """:class:`berth.schedule.plugins.volumes.VolumeWriter` over the API; counts writes for tests and metrics."""

    def __init__(self, api_client: Any, permissions: api.PermissionLog) -> None:
        self._api_client = api_client
        self._permissions = permissions
        self.updates = 0

    def update(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        """PUT ``obj`` (a PV or a claim) and return the server's copy.

        Raises:
            api.ApiError: the server refused it (409 stale, 403 forbidden, 404 deleted ...).
            api.Unreachable: no answer.
            ValueError: not a PV or a claim (a programming error of the caller).
        """
        kind = str(obj.get("kind") or "")
        plural = _PLURALS.get(kind)
        if plural is None:
            raise ValueError(
                f"the volume writer writes PersistentVolumes and claims, not {kind or 'untyped'}"
            )
        meta = obj.get("metadata") or {}
        name = str(meta.get("name") or "")
        namespace = "" if kind == "PersistentVolume" else str(meta.get("namespace") or "default")
        path = f"/api/v1/namespaces/{namespace}/{plural}/{name}" if namespace else f"/api/v1/{plural}/{name}"
        body = {"apiVersion": "v1", **obj, "kind": kind}
        try:
            answer = api.call(self._api_client, "PUT", path, body=body)
        except api.ApiError as exc:
            if exc.status == 403:
                self._permissions.forbidden("update", plural, "", namespace, exc)
            raise
        self.updates += 1
        return answer
