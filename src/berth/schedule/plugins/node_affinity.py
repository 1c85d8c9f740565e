"""NodeAffinity (PreFilter, Filter, PreScore, Score): ``spec.nodeSelector``, required and preferred node affinity,
plus the profile-wide ``addedAffinity`` from args.

Why: node affinity is how pods pick hardware, zones and pools. Upstream ``plugins/nodeaffinity/node_affinity.go``
with ``component-helpers/scheduling/corev1/nodeaffinity``:

- Filter: ``addedAffinity`` required terms first (``node(s) didn't match scheduler-enforced node affinity``), then
  nodeSelector (every pair) and the pod's required terms (ORed terms of ANDed expressions), reason
  ``node(s) didn't match Pod's node affinity/selector``; both UnschedulableAndUnresolvable. A term that fails to
  parse (bad operator, value count, non-integer Gt/Lt) never matches, as upstream's lazy-error selector does.
- PreFilter: Skip when there is nothing to check; when every required term pins ``metadata.name In`` it narrows
  Filter to those names (per-term intersection, union across terms) and an empty union is
  ``pod affinity terms conflict``.
- Score: sum of weights of matching preferred terms (pod's and ``addedAffinity``'s); normalised with
  ``DefaultNormalizeScore(reverse=False)``; PreScore Skip when neither has preferred terms.

Terms are compiled once per pod in PreFilter/PreScore (CycleState), so the per-node calls only compare labels.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from berth.kube import selectors
from berth.schedule import vector
from berth.schedule.framework import interface as fw
from berth.schedule.framework.columns import IntArray
from berth.schedule.framework.types import NodeInfo, PodInfo
from berth.schedule.plugins import helper
from berth.schedule.vector import kernels

NAME = "NodeAffinity"
ARGS_KIND = "NodeAffinityArgs"
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME
OBJECT_NAME_FIELD = "metadata.name"
_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


# --- compiled node selector terms ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CompiledTerm:
    """One NodeSelectorTerm: label requirements and ``metadata.name`` requirements, all ANDed.

    ``valid`` is False when the term failed to parse; such a term matches no node.
    """

    labels: tuple[selectors.Requirement, ...]
    fields: tuple[selectors.Requirement, ...]
    valid: bool = True

    def matches(self, node_labels: Mapping[str, str], node_name: str) -> bool:
        if not self.valid:
            return False
        for r in self.labels:
            if not r.matches(node_labels):
                return False
        if self.fields:
            name = {OBJECT_NAME_FIELD: node_name}
            for r in self.fields:
                if not r.matches(name):
                    return False
        return True


def _requirement_problems(
    expr: Mapping[str, Any], path: str
) -> tuple[selectors.Requirement | None, list[str]]:
    """A label requirement of a NodeSelectorTerm, checked like ``labels.NewRequirement``."""
    key = str(expr.get("key", ""))
    op = str(expr.get("operator", ""))
    values = tuple(str(v) for v in expr.get("values") or ())
    problems: list[str] = []
    if op not in _OPERATORS:
        return None, [f"{path}.operator: Unsupported value: {helper.go_value(op)}"]
    problems.extend(helper.qualified_name_problems(key, f"{path}.key"))
    if op in ("In", "NotIn") and not values:
        problems.append(
            helper.required(f"{path}.values", "for 'in', 'notin' operators, values set can't be empty")
        )
    elif op in ("Exists", "DoesNotExist") and values:
        problems.append(
            helper.forbidden(f"{path}.values", "values set must be empty for exists and does not exist")
        )
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            problems.append(
                helper.required(f"{path}.values", "for 'Gt', 'Lt' operators, exactly one value is required")
            )
        else:
            try:
                int(values[0])
            except ValueError:
                problems.append(
                    helper.invalid(
                        f"{path}.values[0]",
                        values[0],
                        "for 'Gt', 'Lt' operators, the value must be an integer",
                    )
                )
    if op in ("In", "NotIn"):
        for i, v in enumerate(values):
            problems.extend(helper.label_value_problems(v, f"{path}.values[{i}]"))
    return (None if problems else selectors.Requirement(key, op, values)), problems


def _field_problems(expr: Mapping[str, Any], path: str) -> tuple[selectors.Requirement | None, list[str]]:
    key = str(expr.get("key", ""))
    op = str(expr.get("operator", ""))
    values = tuple(str(v) for v in expr.get("values") or ())
    problems: list[str] = []
    if key != OBJECT_NAME_FIELD:
        problems.append(helper.invalid(f"{path}.key", key, "not a valid field selector key"))
    if op not in ("In", "NotIn"):
        problems.append(helper.invalid(f"{path}.operator", op, "not a valid selector operator"))
    if len(values) != 1:
        problems.append(helper.invalid(f"{path}.values", list(values), "must have one element"))
    return (None if problems else selectors.Requirement(key, op, values)), problems


def compile_term(term: Mapping[str, Any], path: str) -> tuple[CompiledTerm, list[str]]:
    """Compile a NodeSelectorTerm; problems carry field paths (used for ``addedAffinity`` validation)."""
    problems: list[str] = []
    labels: list[selectors.Requirement] = []
    fields: list[selectors.Requirement] = []
    for i, expr in enumerate(term.get("matchExpressions") or []):
        req, errs = _requirement_problems(
            expr if isinstance(expr, Mapping) else {}, f"{path}.matchExpressions[{i}]"
        )
        problems.extend(errs)
        if req is not None:
            labels.append(req)
    for i, expr in enumerate(term.get("matchFields") or []):
        req, errs = _field_problems(expr if isinstance(expr, Mapping) else {}, f"{path}.matchFields[{i}]")
        problems.extend(errs)
        if req is not None:
            fields.append(req)
    empty = not term.get("matchExpressions") and not term.get("matchFields")
    return CompiledTerm(tuple(labels), tuple(fields), valid=not problems and not empty), problems


def compile_node_selector(
    selector: Mapping[str, Any], path: str
) -> tuple[tuple[CompiledTerm, ...], list[str]]:
    problems: list[str] = []
    terms: list[CompiledTerm] = []
    for i, term in enumerate(selector.get("nodeSelectorTerms") or []):
        compiled, errs = compile_term(
            term if isinstance(term, Mapping) else {}, f"{path}.nodeSelectorTerms[{i}]"
        )
        problems.extend(errs)
        terms.append(compiled)
    return tuple(terms), problems


@dataclass(frozen=True, slots=True)
class PreferredTerm:
    weight: int
    term: CompiledTerm


def compile_preferred(items: Sequence[Any], path: str) -> tuple[tuple[PreferredTerm, ...], list[str]]:
    """Preferred terms; weight-0 and empty terms are dropped as upstream does."""
    problems: list[str] = []
    out: list[PreferredTerm] = []
    for i, item in enumerate(items):
        item = item if isinstance(item, Mapping) else {}
        pref = item.get("preference") or {}
        weight = int(item.get("weight") or 0)
        if weight == 0 or (not pref.get("matchExpressions") and not pref.get("matchFields")):
            continue
        compiled, errs = compile_term(pref, f"{path}[{i}].preference")
        problems.extend(errs)
        out.append(PreferredTerm(weight, compiled))
    return tuple(out), problems


def preferred_score(terms: Sequence[PreferredTerm], node: NodeInfo) -> int:
    return sum(t.weight for t in terms if t.term.matches(node.labels, node.name))


# --- args ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NodeAffinityArgs:
    added_affinity: Mapping[str, Any] | None = None

    @classmethod
    def decode(cls, raw: Mapping[str, Any] | None, path: str) -> tuple[NodeAffinityArgs, list[str]]:
        problems: list[str] = []
        r = helper.ArgsReader(raw, path, problems, ARGS_KIND)
        added = r.get_mapping("addedAffinity")
        r.finish()
        if added is None:
            return cls(None), problems
        ap = r.at("addedAffinity")
        ar = helper.ArgsReader(added, ap, problems)
        req = ar.get_mapping("requiredDuringSchedulingIgnoredDuringExecution")
        pref = ar.get_list("preferredDuringSchedulingIgnoredDuringExecution")
        ar.finish()
        if req is not None:
            rp = ar.at("requiredDuringSchedulingIgnoredDuringExecution")
            rr = helper.ArgsReader(req, rp, problems)
            terms = rr.get_list("nodeSelectorTerms")
            rr.finish()
            for i, term in enumerate(terms or []):
                _check_term_shape(term, f"{rp}.nodeSelectorTerms[{i}]", problems)
            problems.extend(compile_node_selector(req, rp)[1])
        if pref:
            pp = ar.at("preferredDuringSchedulingIgnoredDuringExecution")
            for i, item in enumerate(pref):
                ir = helper.ArgsReader(item, f"{pp}[{i}]", problems)
                ir.get_int("weight", 0)
                term = ir.get_mapping("preference")
                ir.finish()
                if term is not None:
                    _check_term_shape(term, f"{pp}[{i}].preference", problems)
            problems.extend(compile_preferred(pref, pp)[1])
        return cls(dict(added)), problems

    def to_dict(self) -> dict[str, Any]:
        return {} if self.added_affinity is None else {"addedAffinity": dict(self.added_affinity)}


def _check_term_shape(term: Any, path: str, problems: list[str]) -> None:
    """Strict decoding of a NodeSelectorTerm: only matchExpressions/matchFields of {key, operator, values}."""
    tr = helper.ArgsReader(term, path, problems)
    for key in ("matchExpressions", "matchFields"):
        for j, expr in enumerate(tr.get_list(key) or []):
            er = helper.ArgsReader(expr, f"{tr.at(key)}[{j}]", problems)
            er.get_str("key", "")
            er.get_str("operator", "")
            er.get_str_list("values")
            er.finish()
    tr.finish()


# --- the plugin ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RequiredAffinity:
    """What Filter checks per node: nodeSelector pairs and the required terms (None = no required affinity)."""

    node_selector: tuple[tuple[str, str], ...]
    terms: tuple[CompiledTerm, ...] | None

    def matches(self, node: NodeInfo) -> bool:
        return self.matches_labels(node.labels, node.name)

    def matches_labels(self, labels: Mapping[str, str], node_name: str) -> bool:
        for k, v in self.node_selector:
            if labels.get(k) != v:
                return False
        if self.terms is None:
            return True
        return any(t.matches(labels, node_name) for t in self.terms)


def required_node_affinity(pod: PodInfo) -> RequiredAffinity:
    return required_node_affinity_and_problems(pod)[0]


def required_node_affinity_and_problems(pod: PodInfo) -> tuple[RequiredAffinity, list[str]]:
    """The pod's required affinity and what in its terms failed to parse (those terms never match)."""
    required = (pod.affinity.get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
    terms, problems = (None, []) if required is None else compile_node_selector(required, "")
    return RequiredAffinity(tuple(sorted(pod.node_selector.items())), terms), problems


def pod_preferred_terms(pod: PodInfo) -> tuple[tuple[PreferredTerm, ...] | None, list[str]]:
    items = (pod.affinity.get("nodeAffinity") or {}).get("preferredDuringSchedulingIgnoredDuringExecution")
    if items is None:
        return None, []
    return compile_preferred(
        items, "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution"
    )


class NodeAffinity(fw.PreFilterPlugin, fw.FilterPlugin, fw.PreScorePlugin, fw.ScorePlugin):
    NAME = NAME
    args: NodeAffinityArgs

    def __init__(self, args: NodeAffinityArgs | None, handle: fw.Handle) -> None:
        super().__init__(args or NodeAffinityArgs(), handle)
        added = self.args.added_affinity or {}
        req = added.get("requiredDuringSchedulingIgnoredDuringExecution")
        self._added_terms: tuple[CompiledTerm, ...] | None = (
            None if req is None else compile_node_selector(req, "")[0]
        )
        pref = added.get("preferredDuringSchedulingIgnoredDuringExecution")
        self._added_preferred: tuple[PreferredTerm, ...] | None = (
            compile_preferred(pref, "")[0] if pref else None
        )
        # pod key -> (the pod object, its compiled required affinity), for the queueing hint: it is asked about
        # every node event once per pod this plugin rejected, and compiling is most of its cost.
        self._hint_required: dict[str, tuple[Any, RequiredAffinity, bool]] = {}

    def _added_matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        if self._added_terms is None:
            return True
        return any(t.matches(labels, node_name) for t in self._added_terms)

    def pre_filter(
        self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[fw.PreFilterResult | None, fw.Status]:
        required = (pod.affinity.get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
        if required is None and self._added_terms is None and not pod.node_selector:
            return None, fw.skip()
        state.write(PRE_FILTER_STATE_KEY, required_node_affinity(pod))
        terms = (required or {}).get("nodeSelectorTerms") or []
        if not terms:
            return None, fw.SUCCESS
        node_names: set[str] | None = None
        for term in terms:
            term_names: set[str] | None = None
            for r in term.get("matchFields") or []:
                if r.get("key") == OBJECT_NAME_FIELD and r.get("operator") == "In":
                    values = {str(v) for v in r.get("values") or ()}
                    term_names = values if term_names is None else term_names & values
            if term_names is None:
                return None, fw.SUCCESS  # this term does not pin names; terms are ORed, so all nodes qualify
            node_names = term_names if node_names is None else node_names | term_names
        if node_names is not None and not node_names:
            return None, fw.unresolvable(ERR_REASON_CONFLICT)
        return fw.PreFilterResult(frozenset(node_names) if node_names else None), fw.SUCCESS

    def filter(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo) -> fw.Status:
        if not self._added_matches(node.labels, node.name):
            return fw.unresolvable(ERR_REASON_ENFORCED)
        required: RequiredAffinity | None = state.get(PRE_FILTER_STATE_KEY)
        if required is None:
            required = required_node_affinity(pod)
        if not required.matches(node):
            return fw.unresolvable(ERR_REASON_POD)
        return fw.SUCCESS

    def pre_score(self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> fw.Status:
        terms, problems = pod_preferred_terms(pod)
        if problems:
            return fw.error(*problems)
        if terms is None and self._added_preferred is None:
            return fw.skip()
        state.write(PRE_SCORE_STATE_KEY, terms or ())
        return fw.SUCCESS

    def score(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, fw.Status]:
        count = 0
        if self._added_preferred:
            count += preferred_score(self._added_preferred, node)
        terms: tuple[PreferredTerm, ...] | None = state.get(PRE_SCORE_STATE_KEY)
        if terms is None:
            terms, problems = pod_preferred_terms(pod)
            if problems:
                return 0, fw.error(*problems)
        if terms:
            count += preferred_score(terms, node)
        return count, fw.SUCCESS

    def score_nodes(
        self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[list[int], fw.Status]:
        """All nodes at once (the framework's batch hook); equal to :meth:`score` per node."""
        terms: tuple[PreferredTerm, ...] | None = state.get(PRE_SCORE_STATE_KEY)
        if terms is None:
            terms, problems = pod_preferred_terms(pod)
            if problems:
                return [0] * len(nodes), fw.error(*problems)
        all_terms = (self._added_preferred or ()) + (terms or ())
        return [preferred_score(all_terms, n) for n in nodes], fw.SUCCESS

    def normalize_score(self, state: fw.CycleState, pod: PodInfo, scores: list[fw.NodeScore]) -> fw.Status:
        helper.default_normalize_score(scores, reverse=False)
        return fw.SUCCESS

    def normalize_array(self, state: fw.CycleState, pod: PodInfo, raw: IntArray) -> IntArray | None:
        """NormalizeScore on an int64 array (the framework's fused hook); equal to :meth:`normalize_score`."""
        return kernels.default_normalize_array(raw, reverse=False)

    def normalize_scores(
        self, state: fw.CycleState, pod: PodInfo, raw: list[int]
    ) -> tuple[list[int], fw.Status]:
        """NormalizeScore on a plain list (the framework's batch hook); equal to :meth:`normalize_score`."""
        out = kernels.default_normalize(raw, reverse=False) if vector.enabled(self.handle) else None
        if out is None:
            scores = [fw.NodeScore(str(i), s) for i, s in enumerate(raw)]
            status = self.normalize_score(state, pod, scores)
            return [s.score for s in scores], status
        return out, fw.SUCCESS

    # Requeueing ------------------------------------------------------------------------------------------------

    def events_to_register(self) -> Sequence[fw.ClusterEventWithHint]:
        """Upstream 1.35 (queueing hints on): nodes added or relabelled, with a hint. No pod event: the API lets a
        pod's node affinity change only while it is scheduling-gated, before any plugin could reject it."""
        hint = self.is_schedulable_after_node_change
        return (
            fw.ClusterEventWithHint(fw.ClusterEvent("Node", "Add"), hint),
            fw.ClusterEventWithHint(fw.ClusterEvent("Node", "UpdateNodeLabel"), hint),
        )

    def is_schedulable_after_node_change(self, pod: PodInfo, old: Any, new: Any) -> fw.QueueingHint:
        """Upstream ``isSchedulableAfterNodeChange``: the new node must match ``addedAffinity`` and the pod's
        nodeSelector and required affinity; an added node (or berth's generic update without the old node) then
        queues the pod, an updated one only if the old node did not match."""
        labels, name = _labels_and_name(new)
        if not self._added_matches(labels, name):
            return fw.QueueingHint.QUEUE_SKIP
        required, unparsable = self._required_for_hint(pod)
        if not required.matches_labels(labels, name):
            # Upstream's selector reports a term that failed to parse as an error when no term matched (the
            # nodeSelector did), and a hint's error counts as QUEUE.
            selected = all(labels.get(k) == v for k, v in required.node_selector)
            return helper.queue_if(unparsable and selected)
        if old is None:
            return fw.QueueingHint.QUEUE
        return helper.queue_if(not required.matches_labels(*_labels_and_name(old)))

    def _required_for_hint(self, pod: PodInfo) -> tuple[RequiredAffinity, bool]:
        """The pod's required affinity, and whether a term of it failed to parse."""
        cached = self._hint_required.get(pod.key)
        if cached is not None and cached[0] is pod.pod:
            return cached[1], cached[2]
        if len(self._hint_required) >= HINT_CACHE_SIZE:
            self._hint_required.clear()
        required, problems = required_node_affinity_and_problems(pod)
        self._hint_required[pod.key] = (pod.pod, required, bool(problems))
        return required, bool(problems)


# Pods whose compiled required affinity the queueing hint remembers (then it forgets them all).
HINT_CACHE_SIZE = 16384


def _labels_and_name(node: Mapping[str, Any]) -> tuple[Mapping[str, str], str]:
    meta = node.get("metadata") or {}
    return meta.get("labels") or {}, str(meta.get("name") or "")


SPEC = fw.PluginSpec(name=NAME, plugin_class=NodeAffinity, args_type=NodeAffinityArgs, api_access=("nodes",))
