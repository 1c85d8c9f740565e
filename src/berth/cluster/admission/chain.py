"""The admission chain's types: what a plugin is told about a write, the two plugin kinds, and the ordered chain."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from berth.cluster import objmeta
from berth.cluster.host import ApiHost
from berth.cluster.resources import ResourceType
from berth.kube.objects import Obj

CREATE = "CREATE"
UPDATE = "UPDATE"


@dataclass
class Attributes:
    """One write as admission sees it (upstream's ``admission.Attributes``). ``obj`` is the object to be stored
    (mutating plugins change it in place); ``old`` is the stored object on update."""

    operation: str
    rt: ResourceType
    obj: Obj
    old: Obj | None
    namespace: str
    user: str
    subresource: str = ""

    @property
    def resource(self) -> str:
        return self.rt.resource


class MutatingPlugin(Protocol):
    """A plugin that may change the object (and may refuse it)."""

    name: str

    def admit(self, api: ApiHost, attrs: Attributes) -> None: ...


class ValidatingPlugin(Protocol):
    """A plugin that only judges the final object."""

    name: str

    def validate(self, api: ApiHost, attrs: Attributes) -> None: ...


class Chain:
    """Mutating plugins in order, then validating plugins in order."""

    def __init__(self, mutating: Sequence[MutatingPlugin], validating: Sequence[ValidatingPlugin]) -> None:
        self.mutating = tuple(mutating)
        self.validating = tuple(validating)

    @property
    def names(self) -> tuple[list[str], list[str]]:
        """The plugin names of each phase, in order (what ``--enable-admission-plugins`` would list)."""
        return [p.name for p in self.mutating], [p.name for p in self.validating]

    def admit(self, api: ApiHost, attrs: Attributes) -> None:
        for plugin in self.mutating:
            plugin.admit(api, attrs)

    def validate(self, api: ApiHost, attrs: Attributes) -> None:
        for plugin in self.validating:
            plugin.validate(api, attrs)


def objects(api: ApiHost, resource: str, namespace: str) -> list[Obj]:
    """Every stored object of ``resource`` in ``namespace``, decoded (plugins run under the store lock)."""
    entries, _ = api.store.list(resource, namespace)
    return [objmeta.loads(text) for _ns, _n, (_rv, text) in entries]
