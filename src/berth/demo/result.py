"""What ``berth demo`` found (:class:`DemoResult`): filled in by :mod:`berth.demo.main` step by step, read by the
HTML report (:mod:`berth.demo.page`) and the tests. A module of its own so the report does not import the steps.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from berth.demo.shapes import Comparison
from berth.schedule import NodeUsage, Placement

TOO_SMALL_RULES: list[dict[str, Any]] = [
    {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}
]
"""The deliberately too-small role of step 3: the scheduler may read pods, nothing else."""


@dataclass
class DemoResult:
    """What the demo found, for the report and the tests."""

    data_dir: Path
    url: str = ""
    report: Path | None = None
    install_lines: list[str] = field(default_factory=list)
    install_error: str = ""
    forbidden: list[str] = field(default_factory=list)
    bound_while_forbidden: int = -1
    rules_too_small: int = len(TOO_SMALL_RULES)
    rules_minimal: int = 0
    probe_node: str = ""
    placement: dict[str, dict[str, int]] = field(default_factory=dict)
    placements: list[Placement] = field(default_factory=list)
    nodes: list[str] = field(default_factory=list)
    profiles: list[str] = field(default_factory=list)
    place_seconds: float = 0.0
    usage: tuple[NodeUsage, ...] = ()
    """Each node's requests and capacity once the workload is placed, as the live scheduler's cache held them."""
    separate_placement: dict[str, dict[str, int]] = field(default_factory=dict)
    """The same workload placed by the separate shape (step 5)."""
    comparison: Comparison | None = None
    cluster_stopped: bool = False
    seconds: float = 0.0

    def per_profile(self, profile: str) -> list[int]:
        """Pods of ``profile`` per node, in node order."""
        return [self.placement.get(n, {}).get(profile, 0) for n in self.nodes]
