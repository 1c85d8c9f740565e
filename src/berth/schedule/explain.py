"""Why a pod went where it went: each scheduling attempt of a chosen pod, node by node and plugin by plugin.

Why: the placement table says *where*. When a pod lands somewhere surprising the question is *why*: which Filter
plugin turned each node away, what each Score plugin gave each feasible node, how the weights added up, whether
the winner was a tie, what preemption did. kube-scheduler-simulator answers it with pod annotations; berth records
the same facts for the pods a user names (``berth schedule simulate --explain PATTERN``) and nothing for the rest,
so an explanation costs nothing when nobody asks for one.

How: the :class:`Recorder` decides which pods to follow. During such a pod's cycle the scheduler fills a
:class:`Trace` (the nodes it saw, PreFilter's narrowing, the feasible nodes, their totals before and after the
extenders, how the node was chosen) and hands it back with the cycle's outcome; :func:`build_attempt` turns the
two into an :class:`Attempt`. Scores are asked again of the plugins through their plain per-plugin forms
(``Framework.score_breakdown``; Score has no side effects), so an explanation doubles as a check of the vectorised
totals: ``consistent`` is False, and ``problem`` says why, if the two ever disagree.

Only what the cycle really did is reported, as upstream would have done it: nodes the rotating search never
reached (``percentageOfNodesToScore``) are counted as *not examined*, a rejected node names the first plugin that
rejected it (Filter stops there), and a pod whose only feasible node or nominated node was taken without scoring
shows no scores.
"""

from __future__ import annotations

import dataclasses
import fnmatch
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from berth.kube.errors import InputError
from berth.schedule.framework.interface import EXTENDER_NAME, Status

if TYPE_CHECKING:
    from berth.schedule.framework.runtime import PluginScores
    from berth.schedule.outcome import CycleOutcome, Diagnosis, Preemption

KEEP_ATTEMPTS = 10  # per pod: the newest attempts are kept (a pod can be retried many times in a long run)


class Route(StrEnum):
    """How a cycle reached its node (or its failure)."""

    SCORED = "scored"  # the highest total of the feasible nodes
    UNSCORED = "unscored"  # no Score plugins and no prioritizing extenders: every feasible node scores 1
    ONLY_FEASIBLE = "only-feasible"  # one node passed Filter: chosen without scoring (as upstream)
    NOMINATED = "nominated"  # the node an earlier preemption nominated passed Filter: taken first
    PRE_FILTER = "pre-filter"  # PreFilter rejected the pod for every node
    NONE_FEASIBLE = "none-feasible"  # no node passed Filter (PostFilter, e.g. preemption, ran next)
    NOT_RUN = "not-run"  # the cycle ended before Filter (no nodes, no profile, an error)


@dataclass
class Trace:
    """What one cycle of a followed pod saw, filled in by the scheduler as the cycle goes."""

    pod: str
    scheduler_name: str
    victims_from: int  # len(scheduler.preempted) when the cycle began
    diagnosis: Diagnosis | None = None
    route: Route = Route.NOT_RUN
    node_names: tuple[str, ...] = ()  # the snapshot's nodes, in its order
    allowed: frozenset[str] | None = None  # a PreFilterResult's narrowing
    feasible: tuple[str, ...] = ()
    plugin_totals: tuple[int, ...] = ()  # weighted Score sums, same order as feasible
    totals: tuple[int, ...] = ()  # with the extenders' scores added
    breakdown: tuple[PluginScores, ...] = ()
    breakdown_problem: str = ""
    skipped_filter: tuple[str, ...] = ()
    skipped_score: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PluginScore:
    plugin: str
    weight: int
    raw: Any  # what Score answered
    normalized: Any  # after NormalizeScore: what the weight multiplies

    @property
    def weighted(self) -> Any:
        return self.normalized * self.weight


@dataclass(frozen=True, slots=True)
class NodeResult:
    """One examined node: it passed Filter (then ``scores`` and ``total`` when the cycle scored), or ``plugin``
    rejected it for ``reasons`` (``code``: Unschedulable, UnschedulableAndUnresolvable or Pending)."""

    node: str
    passed: bool
    plugin: str = ""
    code: str = ""
    reasons: tuple[str, ...] = ()
    scores: tuple[PluginScore, ...] = ()
    extender_score: int = 0
    total: int | None = None

    def to_dict(self) -> dict[str, Any]:
        if not self.passed:
            return {
                "node": self.node,
                "filter": "rejected",
                "plugin": self.plugin,
                "code": self.code,
                "reasons": list(self.reasons),
            }
        out: dict[str, Any] = {"node": self.node, "filter": "passed"}
        if self.total is not None:
            out["scores"] = {
                s.plugin: {
                    "raw": s.raw,
                    "normalized": s.normalized,
                    "weight": s.weight,
                    "weighted": s.weighted,
                }
                for s in self.scores
            }
            out["extenderScore"] = self.extender_score
            out["total"] = self.total
        return out


@dataclass(frozen=True, slots=True)
class Attempt:
    """One scheduling cycle of a followed pod."""

    number: int
    scheduler_name: str
    result: str  # the cycle's Result: scheduled, unschedulable, error, waiting, skipped
    node: str  # chosen (or nominated for a waiting pod); "" when none
    message: str  # the FitError or error text
    decision: str  # one line: how the node was chosen, or why none was
    route: Route
    nodes_in_cluster: int
    nodes: tuple[NodeResult, ...]  # examined nodes: passed (best total first), then rejected (snapshot order)
    not_examined: int  # nodes the rotating search did not reach
    excluded: int = 0  # nodes a PreFilterResult left out
    excluded_reason: str = ""
    pre_filter_message: str = ""
    skipped_filter: tuple[str, ...] = ()
    skipped_score: tuple[str, ...] = ()
    post_filter_message: str = ""
    nominated_node: str = ""
    victims: tuple[str, ...] = ()
    ties: int = 0
    consistent: bool = True
    problem: str = ""

    @property
    def best_nodes(self) -> tuple[str, ...]:
        """The nodes this attempt would have taken as readily as the one it chose: the highest total's ties, every
        feasible node when nothing scores, the one node taken unscored; empty when none was chosen."""
        if not self.node:
            return ()
        if self.route is Route.SCORED:
            best = max((n.total or 0) for n in self.nodes if n.passed)
            return tuple(n.node for n in self.nodes if n.passed and n.total == best)
        if self.route is Route.UNSCORED:
            return tuple(n.node for n in self.nodes if n.passed)
        return (self.node,)

    @property
    def score_plugins(self) -> tuple[tuple[str, int], ...]:
        """(plugin, weight) of the scores shown, in profile order."""
        for n in self.nodes:
            if n.scores:
                return tuple((s.plugin, s.weight) for s in n.scores)
        return ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "attempt": self.number,
            "schedulerName": self.scheduler_name,
            "result": self.result,
            "node": self.node,
            "decision": self.decision,
            "nodesInCluster": self.nodes_in_cluster,
            "nodesExamined": len(self.nodes),
            "feasibleNodes": sum(1 for n in self.nodes if n.passed),
            "notExamined": self.not_examined,
        }
        if self.message:
            out["message"] = self.message
        if self.excluded:
            out["excludedByPreFilter"] = {"nodes": self.excluded, "reason": self.excluded_reason}
        if self.pre_filter_message:
            out["preFilterMessage"] = self.pre_filter_message
        if self.skipped_filter:
            out["skippedFilterPlugins"] = list(self.skipped_filter)
        if self.skipped_score:
            out["skippedScorePlugins"] = list(self.skipped_score)
        if self.route is Route.SCORED:
            out["ties"] = self.ties
        if self.post_filter_message or self.nominated_node or self.victims:
            out["postFilter"] = {
                "message": self.post_filter_message,
                "nominatedNode": self.nominated_node,
                "victims": list(self.victims),
            }
        if not self.consistent:
            out["problem"] = self.problem
        out["nodes"] = [n.to_dict() for n in self.nodes]
        return out


@dataclass(frozen=True, slots=True)
class Explanation:
    """Every kept attempt of one pod, oldest first."""

    pod: str
    attempts: tuple[Attempt, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"pod": self.pod, "attempts": [a.to_dict() for a in self.attempts]}


def pod_pattern_matches(pattern: str, key: str) -> bool:
    """``ns/name`` against a pattern: with a ``/`` the whole key, else the name in any namespace; ``*``, ``?`` and
    ``[...]`` as in shell globs."""
    if "/" in pattern:
        return fnmatch.fnmatchcase(key, pattern)
    return fnmatch.fnmatchcase(key.partition("/")[2], pattern)


class Recorder:
    """Follows the pods whose ``ns/name`` matches one of ``patterns`` and keeps their newest ``keep`` attempts.

    ``on_attempt(pod, attempt)`` is called as each attempt ends (live mode logs it there and keeps none: a long
    run would otherwise hold every followed pod's attempts).
    """

    # Pod keys whose match (and attempt count) is remembered; forgotten all at once past this, as live pods churn.
    WANTED_CACHE = 100_000

    def __init__(
        self,
        patterns: Sequence[str],
        keep: int = KEEP_ATTEMPTS,
        on_attempt: Callable[[str, Attempt], None] | None = None,
    ) -> None:
        self.patterns = tuple(patterns)
        self.keep = keep
        self.on_attempt = on_attempt
        self._wanted: dict[str, bool] = {}
        self._attempts: dict[str, list[Attempt]] = {}
        self._counts: dict[str, int] = {}

    def check(self, keys: Sequence[str]) -> None:
        """Raise InputError naming the first pattern no key matches (a typo would otherwise explain nothing)."""
        for pattern in self.patterns:
            if not any(pod_pattern_matches(pattern, k) for k in keys):
                example = f" (pods are named like {keys[0]})" if keys else " (the workload has no pods)"
                raise InputError(
                    f"--explain {pattern!r} matches no pod of the workload{example}; give ns/name or a name, "
                    "with * and ? as wildcards",
                    "--explain",
                )

    def wants(self, key: str) -> bool:
        hit = self._wanted.get(key)
        if hit is None:
            if len(self._wanted) >= self.WANTED_CACHE:
                self._wanted.clear()
            hit = self._wanted[key] = any(pod_pattern_matches(p, key) for p in self.patterns)
        return hit

    def start(self, key: str, scheduler_name: str, victims_from: int) -> Trace | None:
        return Trace(key, scheduler_name, victims_from) if self.wants(key) else None

    def finish(self, trace: Trace, outcome: CycleOutcome, preempted: Sequence[Preemption]) -> None:
        number = self._counts.get(trace.pod, 0) + 1
        if len(self._counts) >= self.WANTED_CACHE:
            self._counts.clear()
        self._counts[trace.pod] = number
        victims = tuple(p.victim for p in preempted[trace.victims_from :] if p.preemptor == trace.pod)
        attempt = build_attempt(number, trace, outcome, victims)
        if self.on_attempt is not None:
            self.on_attempt(trace.pod, attempt)
        if self.keep:
            kept = self._attempts.setdefault(trace.pod, [])
            kept.append(attempt)
            del kept[: max(0, len(kept) - self.keep)]

    def settle(self, outcome: CycleOutcome) -> None:
        """A pod held at Permit finished its binding cycle: its last attempt (``waiting``) takes the result."""
        kept = self._attempts.get(outcome.pod)
        if kept and kept[-1].result == "waiting":
            kept[-1] = dataclasses.replace(
                kept[-1],
                result=str(outcome.result),
                node=outcome.node or kept[-1].node,
                message=outcome.message,
            )

    def explanations(self, order: Mapping[str, int] | None = None) -> tuple[Explanation, ...]:
        """One per followed pod that was attempted, in ``order`` (pod -> rank; unknown pods last) or by name."""
        keys = sorted(self._attempts, key=lambda k: (order.get(k, len(order)) if order else 0, k))
        return tuple(Explanation(k, tuple(self._attempts[k])) for k in keys)


def build_attempt(number: int, trace: Trace, outcome: CycleOutcome, victims: tuple[str, ...] = ()) -> Attempt:
    """The Attempt a finished cycle amounts to (``trace`` as the cycle left it, ``outcome`` as it ended)."""
    diagnosis = trace.diagnosis
    statuses = diagnosis.node_to_status if diagnosis is not None else {}
    n_all = len(trace.node_names)
    passed, consistent, problem = _passed_nodes(trace)
    # Extenders may also name nodes the snapshot does not list: those come last.
    known = set(trace.node_names)
    names = [n for n in trace.node_names if n in statuses] + [n for n in statuses if n not in known]
    rejected = [_rejected(name, statuses[name]) for name in names]
    excluded = 0
    excluded_reason = ""
    if trace.allowed is not None:
        excluded = sum(1 for n in trace.node_names if n not in trace.allowed)
        absent = diagnosis.absent_status if diagnosis is not None else None
        excluded_reason = absent.message() if absent is not None else ""
    pre_filter_message = diagnosis.pre_filter_msg if diagnosis is not None else ""
    examined = len(passed) + sum(1 for r in rejected if r.node in known)
    not_examined = (
        0 if trace.route in (Route.PRE_FILTER, Route.NOT_RUN) else max(0, n_all - excluded - examined)
    )
    ties = 0
    if trace.route is Route.SCORED and trace.totals:
        best = max(trace.totals)
        ties = sum(1 for t in trace.totals if t == best)
    return Attempt(
        number=number,
        scheduler_name=trace.scheduler_name,
        result=str(outcome.result),
        node=outcome.node,
        message=outcome.message,
        decision=_decision(trace, outcome, ties),
        route=trace.route,
        nodes_in_cluster=n_all,
        nodes=(*passed, *rejected),
        not_examined=not_examined,
        excluded=excluded,
        excluded_reason=excluded_reason,
        pre_filter_message=pre_filter_message,
        skipped_filter=trace.skipped_filter,
        skipped_score=trace.skipped_score,
        post_filter_message=diagnosis.post_filter_msg if diagnosis is not None else "",
        nominated_node=(diagnosis.nominated_node if diagnosis is not None else "") or outcome.nominated_node,
        victims=victims,
        ties=ties,
        consistent=consistent,
        problem=problem,
    )


def _rejected(name: str, status: Status) -> NodeResult:
    # Filter plugins' statuses carry their name; the only plugin-less rejections are HTTP extenders' (upstream
    # records them under framework.ExtenderName too).
    plugin = status.plugin or EXTENDER_NAME
    return NodeResult(name, False, plugin, status.code.upstream_name, tuple(status.reasons))


def _passed_nodes(trace: Trace) -> tuple[list[NodeResult], bool, str]:
    """The feasible nodes, best total first, with each plugin's scores; and whether the plugins' plain answers
    add up to the totals the cycle used."""
    if trace.route not in (Route.SCORED, Route.UNSCORED):
        return [NodeResult(name, True) for name in trace.feasible], True, ""
    columns = [c for c in trace.breakdown if not c.skipped]
    problem = trace.breakdown_problem
    out: list[NodeResult] = []
    for i, name in enumerate(trace.feasible):
        scores = tuple(PluginScore(c.plugin, c.weight, c.raw[i], c.normalized[i]) for c in columns)
        total = trace.totals[i] if i < len(trace.totals) else 0
        plugin_total = trace.plugin_totals[i] if i < len(trace.plugin_totals) else total
        if not problem and trace.route is Route.SCORED and sum(s.weighted for s in scores) != plugin_total:
            problem = (
                f"node {name}: the plugins' scores add up to {sum(s.weighted for s in scores)}, "
                f"the cycle used {plugin_total}"
            )
        out.append(NodeResult(name, True, scores=scores, extender_score=total - plugin_total, total=total))
    out.sort(key=lambda r: -(r.total or 0))  # stable: equal totals keep the snapshot's order
    return out, not problem, problem


def _decision(trace: Trace, outcome: CycleOutcome, ties: int) -> str:
    route = trace.route
    if route is Route.SCORED:
        best = max(trace.totals) if trace.totals else 0
        how = f"highest total score {best}"
        if ties > 1:
            how += f", shared by {ties} nodes (tie broken at random)"
        return how
    if route is Route.UNSCORED:
        return (
            f"no Score plugins: each of the {len(trace.feasible)} feasible nodes scores 1 (picked at random)"
        )
    if route is Route.ONLY_FEASIBLE:
        return "the only feasible node (chosen without scoring)"
    if route is Route.NOMINATED:
        return (
            f"its nominated node {trace.feasible[0]} passed Filter: taken without looking at the other nodes"
        )
    if route is Route.PRE_FILTER:
        return "PreFilter rejected the pod for every node"
    if route is Route.NONE_FEASIBLE:
        return "no node passed Filter"
    return outcome.message or f"the cycle ended before Filter ({outcome.result})"
