"""``berth schedule compare``: one cluster and one workload placed by several configurations, side by side.

Why: choosing between configurations -- LeastAllocated or MostAllocated, a Concentrate weight, another spreading
default -- is a question about outcomes: how many nodes the workload ends up on, how full they are, what no longer
fits, which pods land elsewhere. kube-scheduler-simulator's users ask for scenario runs that compare
configurations; here each configuration runs alone from the same start (same files, same seed, hence the same pod
names), so the configuration is the only difference.

The first configuration is the baseline: ``moved`` lists the pods that another one placed on a different node (or
could not place, or placed where the baseline could not).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from berth.schedule.config import SchedulerConfiguration
from berth.schedule.plugins.registry import Registry
from berth.schedule.simulate import NodeUsage, SimulationResult, simulate

UNPLACED = "-"


@dataclass(frozen=True)
class Outcome:
    """One configuration's run."""

    label: str
    config_path: str
    result: SimulationResult

    @property
    def nodes(self) -> dict[str, str]:
        """pod -> node where the run placed it (victims of preemption left out)."""
        return {p.pod: p.node for p in self.result.placements}

    def figures(self) -> dict[str, Any]:
        """The numbers the table shows (``-o json``'s per-configuration keys)."""
        r = self.result
        usage = r.usage
        used = [u for u in usage if u.pods]
        cpu = [_share(u.cpu, u.cpu_allocatable) for u in used]
        mem = [_share(u.memory, u.memory_allocatable) for u in used]
        return {
            "placed": r.scheduled,
            "pods": r.pods,
            "unschedulable": len(r.unschedulable),
            "preempted": len(r.preempted),
            "nodesInUse": len(used),
            "emptyNodes": len(usage) - len(used),
            "nodesGivenPods": len({p.node for p in r.placements}),
            "cpuRequested": _share(sum(u.cpu for u in usage), sum(u.cpu_allocatable for u in usage)),
            "memoryRequested": _share(sum(u.memory for u in usage), sum(u.memory_allocatable for u in usage)),
            "cpuOnBusiestNode": max(cpu, default=0.0),
            "cpuOnUsedNodesMean": statistics.fmean(cpu) if cpu else 0.0,
            "cpuOnUsedNodesStdev": statistics.pstdev(cpu) if len(cpu) > 1 else 0.0,
            "memoryOnBusiestNode": max(mem, default=0.0),
            "memoryOnUsedNodesMean": statistics.fmean(mem) if mem else 0.0,
        }


def _share(part: int, whole: int) -> float:
    return round(100.0 * part / whole, 1) if whole else 0.0


@dataclass(frozen=True)
class Comparison:
    outcomes: tuple[Outcome, ...]

    def moved(self) -> list[tuple[str, tuple[str, ...]]]:
        """(pod, node per configuration) for every pod not placed alike by all of them, in the baseline's order
        (then the others' pods it could not place)."""
        per = [o.nodes for o in self.outcomes]
        pods: list[str] = list(per[0])
        for nodes in per[1:]:
            pods.extend(p for p in nodes if p not in per[0] and p not in pods)
        for o in self.outcomes:
            pods.extend(f.pod for f in o.result.unschedulable if f.pod not in pods)
        out = []
        for pod in pods:
            where = tuple(nodes.get(pod, UNPLACED) for nodes in per)
            if len(set(where)) > 1:
                out.append((pod, where))
        return out

    def to_dict(self) -> dict[str, Any]:
        """The ``-o json`` contract."""
        return {
            "configs": [
                {"label": o.label, "config": o.config_path, **o.figures(), "placements": o.nodes}
                for o in self.outcomes
            ],
            "moved": [{"pod": pod, "nodes": list(where)} for pod, where in self.moved()],
            "usage": {o.label: [_usage_dict(u) for u in o.result.usage] for o in self.outcomes},
            **(
                {
                    "explanations": {
                        o.label: [e.to_dict() for e in o.result.explanations or ()] for o in self.outcomes
                    }
                }
                if any(o.result.explanations is not None for o in self.outcomes)
                else {}
            ),
        }


def _usage_dict(u: NodeUsage) -> dict[str, Any]:
    return {
        "node": u.node,
        "pods": u.pods,
        "cpuPercent": _share(u.cpu, u.cpu_allocatable),
        "memoryPercent": _share(u.memory, u.memory_allocatable),
    }


def labels_for(paths: Sequence[str]) -> list[str]:
    """Short names for the configurations: file names without the extension, the path where two share one."""
    stems = [Path(p).stem for p in paths]
    return [stem if stems.count(stem) == 1 else path for stem, path in zip(stems, paths, strict=True)]


def compare(
    configs: Sequence[tuple[str, SchedulerConfiguration]],
    cluster_path: str,
    workload_path: str,
    seed: int = 1,
    registry: Registry | None = None,
    explain_patterns: Sequence[str] = (),
) -> Comparison:
    """Run the workload on the cluster once per ``(path, configuration)``, each alone from the same start;
    ``explain_patterns`` follows those pods in every run (``SimulationResult.explanations``)."""
    labels = labels_for([path for path, _ in configs])
    outcomes = tuple(
        Outcome(
            label,
            path,
            simulate(
                [cfg],
                cluster_path,
                workload_path,
                seed=seed,
                registry=registry,
                explain_patterns=explain_patterns,
            ),
        )
        for label, (path, cfg) in zip(labels, configs, strict=True)
    )
    return Comparison(outcomes)
