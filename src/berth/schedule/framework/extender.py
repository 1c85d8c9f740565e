"""What the framework and the plugins know of a scheduler extender (upstream ``framework/extender.go``).

Why here: the scheduler's extenders are HTTP webhooks (:mod:`berth.schedule.extender`), built from the
configuration; plugins reach them through ``handle.extenders()`` (DefaultPreemption lets them trim its candidates).
Declaring the contract in the framework -- as upstream's ``framework.Extender`` interface -- keeps the framework
and the plugins below the configuration and the HTTP client: they import this module, never those.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from berth.schedule.framework.types import NodeInfo, PodInfo


class ExtenderError(Exception):
    """An extender call failed (transport, HTTP status, undecodable answer, or the ``error`` it returned)."""


@dataclass(frozen=True)
class Victims:
    """The pods preemption would evict on one node, and how many PodDisruptionBudgets that violates."""

    pods: tuple[PodInfo, ...]
    num_pdb_violations: int = 0


class Extender(Protocol):
    """One configured extender as plugins see it (the members of upstream's ``framework.Extender`` they use)."""

    @property
    def name(self) -> str:
        """Upstream names an extender by its URL prefix (in logs and score breakdowns)."""
        ...

    @property
    def ignorable(self) -> bool:
        """Its failures are skipped (upstream ``IsIgnorable``)."""
        ...

    @property
    def supports_preemption(self) -> bool: ...

    def is_interested(self, pod: PodInfo) -> bool:
        """False when the extender manages resources the pod neither requests nor limits."""
        ...

    def process_preemption(
        self, pod: PodInfo, victims: Mapping[str, Victims], nodes: Mapping[str, NodeInfo]
    ) -> dict[str, Victims]:
        """The candidates the extender keeps, with the victims it chose; raises :class:`ExtenderError`."""
        ...
