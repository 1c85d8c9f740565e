"""The slice of the API that the modules under it call back into: a Protocol, so they never import the API.

Authentication (``auth.py``), CRD handling (``crds.py``), the review kinds (``reviews.py``) and the admission
plugins (``admission/``) need the store, the type registry, the clock and a few reads; :class:`berth.cluster.api.Api`
provides them. Typing them against this Protocol keeps the import arrows pointing down: the API imports these
modules, they import only this one (as kube-apiserver's admission plugins see an ``admission.Attributes`` and
listers, never the REST storage that calls them).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Protocol

from berth.cluster.resources import Registry, ResourceType
from berth.cluster.store import Store
from berth.kube.objects import Obj


class ApiHost(Protocol):
    """What the modules below the API read from it."""

    store: Store
    registry: Registry
    clock: Callable[[], datetime]

    def now_text(self) -> str:
        """The clock's time now as Kubernetes ``Time`` text."""
        ...

    def resource_type(self, resource: str) -> ResourceType:
        """The type for a resource key; 404 when unknown."""
        ...

    def do_get(self, rt: ResourceType, name: str, namespace: str | None, version: str | None = None) -> Obj:
        """One object as served (404 when missing)."""
        ...

    def list(
        self, resource: str, namespace: str | None = None, label_selector: str = "", field_selector: str = ""
    ) -> tuple[list[Obj], str]:
        """Every object of ``resource`` (in ``namespace``) matching the selectors, and the list's revision."""
        ...

    def bind(self, namespace: str, pod_name: str, binding: Obj, user: str, dry_run: bool = False) -> None:
        """Bind a pod to the node a ``Binding`` names (``pods/binding``)."""
        ...
