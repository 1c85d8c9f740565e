"""``berth schedule shadow``: try a configuration on live traffic without scheduling anything.

Why: ``compare`` and ``simulate`` answer "what would this configuration do" on files; the question before a
rollout is whether it would decide as the scheduler in charge does on the pods that really arrive. In shadow
mode berth follows the cluster read-only and, each time another scheduler binds a pod one of its profiles serves,
asks its own framework where it would have put that pod on the cluster as it stood just before
(:meth:`berth.schedule.Scheduler.what_if`), and records the verdict:

- ``agree``: the same node;
- ``tie``: another node of the same best total (the pick among ties is random, upstream as here);
- ``disagree``: the other scheduler's node passed this configuration's Filter but scored lower;
- ``filtered``: this configuration's Filter would not have allowed that node;
- ``unschedulable``: this configuration finds no node at all.

Nothing is written to the cluster: no bindings, no status, no Events, no Lease. The view is the informers',
so a decision is weighed against the state berth had seen when the binding arrived -- pods bound in the same
instant by the other scheduler may not be counted yet, which makes rare disagreements on a busy cluster.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from berth.kube.objects import Obj
from berth.schedule import explain
from berth.schedule.scheduler import Scheduler

log = logging.getLogger("berth.schedule.live")

VERDICTS = ("agree", "tie", "disagree", "filtered", "unschedulable")
KEEP_DIFFERENCES = 50  # listed in the summary (the counts cover every decision)


@dataclass(frozen=True)
class Decision:
    pod: str
    profile: str
    theirs: str
    ours: str
    verdict: str
    detail: str


@dataclass
class ShadowLog:
    """Every decision compared, counted by verdict; the latest differences kept."""

    explain_patterns: tuple[str, ...] = ()
    counts: Counter[str] = field(default_factory=Counter)
    differences: list[Decision] = field(default_factory=list)
    on_decision: Callable[[Decision], None] | None = None  # live mode counts it in /metrics

    def observe(self, scheduler: Scheduler, pending: Obj, bound: Obj) -> Decision | None:
        """``pending`` was just bound as ``bound`` by another scheduler: what would ``scheduler`` have done?"""
        theirs = str((bound.get("spec") or {}).get("nodeName") or "")
        meta = pending.get("metadata") or {}
        key = f"{meta.get('namespace') or 'default'}/{meta.get('name') or ''}"
        attempt = scheduler.what_if(_unbound(pending))
        if attempt is None:
            return None
        decision = judge(key, theirs, attempt)
        self.counts[decision.verdict] += 1
        if self.on_decision is not None:
            self.on_decision(decision)
        if decision.verdict not in ("agree", "tie"):
            self.differences.append(decision)
            del self.differences[: max(0, len(self.differences) - KEEP_DIFFERENCES)]
        log.info(
            "shadow %s (%s): bound to %s; berth: %s -- %s",
            key,
            decision.profile,
            theirs,
            decision.ours or "no node",
            decision.verdict + (f" ({decision.detail})" if decision.detail else ""),
        )
        if self.explain_patterns and any(explain.pod_pattern_matches(p, key) for p in self.explain_patterns):
            from berth.schedule import report

            log.info("%s", report.attempt_text(key, attempt))
        return decision

    def summary(self) -> str:
        total = sum(self.counts.values())
        if not total:
            return "shadow: no pod was bound by another scheduler meanwhile"
        same = self.counts["agree"] + self.counts["tie"]
        parts = ", ".join(f"{self.counts[v]} {v}" for v in VERDICTS if self.counts[v])
        lines = [f"shadow: {total} pods bound by another scheduler; berth would have agreed on {same} "
                 f"({100 * same / total:.0f} %): {parts}"]  # fmt: skip
        lines += [
            f"  {d.pod}: bound to {d.theirs}, berth: {d.ours or 'no node'} ({d.verdict}: {d.detail})"
            for d in self.differences
        ]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "counts": {v: self.counts[v] for v in VERDICTS},
            "differences": [d.__dict__ for d in self.differences],
        }


def judge(key: str, theirs: str, attempt: explain.Attempt) -> Decision:
    """The verdict on one decision (see the module docstring)."""
    profile = attempt.scheduler_name
    if not attempt.node:
        return Decision(key, profile, theirs, "", "unschedulable", attempt.message)
    if attempt.node == theirs:
        return Decision(key, profile, theirs, attempt.node, "agree", "")
    if theirs in attempt.best_nodes:
        return Decision(key, profile, theirs, attempt.node, "tie", f"{len(attempt.best_nodes)} nodes tie")
    result = next((n for n in attempt.nodes if n.node == theirs), None)
    if result is not None and not result.passed:
        reasons = ", ".join(result.reasons)
        return Decision(key, profile, theirs, attempt.node, "filtered", f"{result.plugin}: {reasons}")
    chosen = next((n for n in attempt.nodes if n.node == attempt.node), None)
    if result is not None and result.total is not None and chosen is not None and chosen.total is not None:
        detail = f"total {chosen.total} on {attempt.node} against {result.total} on {theirs}"
        drivers = _drivers(chosen, result)
        if drivers:
            detail += f"; most of it: {drivers}"
    elif result is None:
        detail = f"{theirs} was not examined (percentageOfNodesToScore)"
    else:
        detail = attempt.decision
    return Decision(key, profile, theirs, attempt.node, "disagree", detail)


def _drivers(ours: explain.NodeResult, theirs: explain.NodeResult, most: int = 2) -> str:
    """The Score plugins whose weighted scores favour our node most: ``NodeResourcesFit +74, Concentrate +50``."""
    theirs_by = {sc.plugin: sc.weighted for sc in theirs.scores}
    gaps = sorted(
        ((sc.weighted - theirs_by.get(sc.plugin, 0), sc.plugin) for sc in ours.scores),
        key=lambda gap: -gap[0],
    )
    return ", ".join(f"{plugin} +{gap}" for gap, plugin in gaps[:most] if gap > 0)


def _unbound(pod: Obj) -> Obj:
    """The pod as it was pending (an informer's old object normally is; never trust it to be)."""
    spec = dict(pod.get("spec") or {})
    spec.pop("nodeName", None)
    return {**pod, "spec": spec}
