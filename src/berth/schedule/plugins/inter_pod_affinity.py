"""InterPodAffinity (PreFilter + extensions, Filter, PreScore, Score, NormalizeScore): pod affinity and
anti-affinity, with kube-scheduler 1.35's verdicts and arithmetic (upstream ``plugins/interpodaffinity``).

Why: "run next to my cache" and "never two replicas per zone" are expressed as pod (anti-)affinity; berth must
place such pods exactly where kube-scheduler would.

- An *affinity term* is ``(namespaces, namespaceSelector, labelSelector, topologyKey)``; it matches a pod when
  the pod's namespace is listed (no list and no namespaceSelector = the term owner's own namespace) or the
  namespaceSelector matches the labels of the pod's namespace, and the labelSelector matches the pod's labels.
  Namespace labels come from ``handle.objects`` (:mod:`berth.schedule.framework.listers`); every namespace also
  carries the
  ``kubernetes.io/metadata.name`` label the API server guarantees, so simulations without Namespace objects
  still resolve ``namespaceSelector`` by name. ``matchLabelKeys``/``mismatchLabelKeys`` are merged into the
  selector as the API server does at pod creation (``key In/NotIn (pod's value)``; idempotent on live pods).
- PreFilter counts, per ``(topology key, value)``: (a) existing pods whose required anti-affinity matches the
  incoming pod, (b) existing pods matching *all* the incoming pod's required affinity terms, (c) existing pods
  matching any incoming required anti-affinity term. Nothing to check -> Skip. A pod whose terms do not parse ->
  UnschedulableAndUnresolvable ``parsing pod: ...`` (never an exception).
- Filter: every required affinity key must be on the node and each pair must hold a matching pod -- unless no
  pod anywhere matches and the pod matches its own terms (first pod of a group) -- else Unresolvable
  ``node(s) didn't match pod affinity rules``; then the incoming anti-affinity (Unschedulable
  ``node(s) didn't match pod anti-affinity rules``); then existing pods' anti-affinity over all the node's label
  pairs (Unschedulable ``node(s) didn't satisfy existing pods anti-affinity rules``).
- Score: per existing pod on a labelled node, at the node's value of each term key: +w for incoming preferred
  affinity terms it matches, -w for preferred anti-affinity; +``hardPodAffinityWeight`` per existing required
  affinity term the incoming pod matches; +/-w for the existing pod's preferred terms matching the incoming pod.
  A node's raw score sums ``score[key][node's value]``; normalised ``int(100 * (raw - min) / (max - min))``.
  ``ignorePreferredTermsOfExistingPods`` skips scoring when the incoming pod has no preferred terms.

Parsed terms are cached per pod (keyed by the identity of the pod's affinity dict, which each PodInfo owns), so
a cycle compares labels with dict lookups and never re-parses selectors. State shapes are mappings of
``(key, value) -> count`` (filter) and ``key -> value -> score`` (score): plain dicts on the reference path, arrays
over topology domains (:class:`~berth.schedule.vector.topology.PairCounts`, ``DomainCounts``) on the default
vectorised path, which computes them from per-node columns of the node index (:mod:`berth.schedule.vector.topology`)
-- matching pods per term, and per class of incoming pod (namespace + labels) the existing pods' terms that match
it. Terms whose namespaceSelector reads Namespace labels take the reference loops (those labels change without any
node changing).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

import numpy as np
import numpy.typing as npt

from berth.kube import selectors
from berth.schedule import vector
from berth.schedule.framework import interface as fw
from berth.schedule.framework import listers
from berth.schedule.framework.types import NodeInfo, PodInfo
from berth.schedule.plugins import helper
from berth.schedule.vector import topology

NAME = "InterPodAffinity"
ARGS_KIND = "InterPodAffinityArgs"
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"
ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't satisfy existing pods anti-affinity rules"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
_PARSE_CACHE_LIMIT = 100_000
_MATCH_TABLES_LIMIT = 64  # bounds memory: at most this many terms x nodes remembered
# Optional Snapshot methods (upstream's precomputed lists); used when the runtime's snapshot provides them.
HAVE_AFFINITY = "have_pods_with_affinity"
HAVE_REQUIRED_ANTI_AFFINITY = "have_pods_with_required_anti_affinity"


def _listing(snapshot: fw.Snapshot, which: str) -> Sequence[NodeInfo]:
    """The snapshot's precomputed list ``which`` (:data:`HAVE_AFFINITY` or :data:`HAVE_REQUIRED_ANTI_AFFINITY`)."""
    if which == HAVE_AFFINITY:
        return snapshot.have_pods_with_affinity()
    return snapshot.have_pods_with_required_anti_affinity()


_AFFINITY_NOT_MATCH = fw.unresolvable(ERR_REASON_AFFINITY_RULES_NOT_MATCH)
_ANTI_AFFINITY_NOT_MATCH = fw.unschedulable(ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
_EXISTING_ANTI_AFFINITY_NOT_MATCH = fw.unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
_VERDICTS = (fw.SUCCESS, _AFFINITY_NOT_MATCH, _ANTI_AFFINITY_NOT_MATCH, _EXISTING_ANTI_AFFINITY_NOT_MATCH)
_PODS_OF = attrgetter("pods")
_AFFINITY_OF = attrgetter("affinity")

TopologyPair = tuple[str, str]
IntArray = topology.IntArray
PairCounts = dict[TopologyPair, int] | topology.PairCounts


@dataclass(frozen=True)
class InterPodAffinityArgs:
    hard_pod_affinity_weight: int = 1
    ignore_preferred_terms_of_existing_pods: bool = False

    @classmethod
    def decode(cls, raw: Mapping[str, Any] | None, path: str) -> tuple[InterPodAffinityArgs, list[str]]:
        problems: list[str] = []
        r = helper.ArgsReader(raw, path, problems, ARGS_KIND)
        weight = r.get_int("hardPodAffinityWeight", 1)
        ignore = r.get_bool("ignorePreferredTermsOfExistingPods", False)
        r.finish()
        if not 0 <= weight <= 100:
            problems.append(
                helper.invalid(r.at("hardPodAffinityWeight"), weight, "not in valid range [0, 100]")
            )
        return cls(weight, ignore), problems

    def to_dict(self) -> dict[str, Any]:
        return {
            "hardPodAffinityWeight": self.hard_pod_affinity_weight,
            "ignorePreferredTermsOfExistingPods": self.ignore_preferred_terms_of_existing_pods,
        }


# --- namespaces ----------------------------------------------------------------------------------------------------


class NamespaceLabels:
    """Labels of namespaces for one cycle, listed lazily (only when a term has a real namespaceSelector)."""

    __slots__ = ("_by_name", "_handle", "_memo")

    def __init__(self, handle: Any) -> None:
        self._handle = handle
        self._by_name: dict[str, Mapping[str, Any]] | None = None
        self._memo: dict[str, dict[str, str]] = {}

    def get(self, namespace: str) -> Mapping[str, str]:
        hit = self._memo.get(namespace)
        if hit is not None:
            return hit
        if self._by_name is None:
            self._by_name = {}
            for obj in listers.list_objects(self._handle, "Namespace", None):
                meta = obj.get("metadata") or {}
                self._by_name[str(meta.get("name") or "")] = meta.get("labels") or {}
        labels = {str(k): str(v) for k, v in self._by_name.get(namespace, {}).items()}
        labels.setdefault(NAMESPACE_NAME_LABEL, namespace)
        self._memo[namespace] = labels
        return labels


# --- terms ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AffinityTerm:
    """A parsed PodAffinityTerm. ``selector``/``ns_selector`` None = nil (matches nothing); empty = everything."""

    namespaces: frozenset[str]
    ns_selector: selectors.Selector | None
    selector: selectors.Selector | None
    topology_key: str

    def matches(self, pod: PodInfo, ns_labels: NamespaceLabels) -> bool:
        """Upstream ``AffinityTerm.Matches``: namespace (listed or selected), then the label selector."""
        if pod.namespace not in self.namespaces:
            ns_sel = self.ns_selector
            if ns_sel is None:
                return False
            if ns_sel.requirements and not ns_sel.matches(ns_labels.get(pod.namespace)):
                return False
        sel = self.selector
        return sel is not None and sel.matches(pod.labels)


@dataclass(frozen=True, slots=True)
class WeightedTerm:
    term: AffinityTerm
    weight: int


@dataclass(frozen=True, slots=True)
class PodTerms:
    """A pod's parsed (anti-)affinity terms. ``error`` aggregates what failed to parse (those lists stay empty)."""

    required_affinity: tuple[AffinityTerm, ...] = ()
    required_anti: tuple[AffinityTerm, ...] = ()
    preferred_affinity: tuple[WeightedTerm, ...] = ()
    preferred_anti: tuple[WeightedTerm, ...] = ()
    error: str | None = None

    @property
    def has_any(self) -> bool:
        return bool(
            self.required_affinity or self.required_anti or self.preferred_affinity or self.preferred_anti
        )


NO_TERMS = PodTerms()


def _merge_label_keys(raw: Mapping[str, Any], labels: Mapping[str, str]) -> Mapping[str, Any] | None:
    """The labelSelector with ``matchLabelKeys``/``mismatchLabelKeys`` applied as the API server does (KEP-3633);
    a nil selector stays nil."""
    sel = raw.get("labelSelector")
    match_keys = raw.get("matchLabelKeys") or ()
    mismatch_keys = raw.get("mismatchLabelKeys") or ()
    if sel is None or not isinstance(sel, Mapping) or (not match_keys and not mismatch_keys):
        return sel
    raw_exprs = sel.get("matchExpressions") or ()
    if not isinstance(raw_exprs, (list, tuple)):
        return sel  # label_selector_as_selector reports it
    exprs = list(raw_exprs)
    for keys, op in ((match_keys, "In"), (mismatch_keys, "NotIn")):
        for key in keys if isinstance(keys, list) else ():
            if str(key) in labels:
                exprs.append({"key": str(key), "operator": op, "values": [labels[str(key)]]})
    return {**sel, "matchExpressions": exprs}


def parse_term(raw: Any, pod: PodInfo) -> tuple[AffinityTerm | None, str | None]:
    """Upstream ``newAffinityTerm`` (+ the API server's label-key merge): (term, error)."""
    if not isinstance(raw, Mapping):
        return None, f"invalid pod affinity term: {helper.go_value(raw)}"
    sel, err = helper.label_selector_as_selector(_merge_label_keys(raw, pod.labels))
    if err is not None:
        return None, err
    ns_raw = raw.get("namespaceSelector")
    ns_sel, err = helper.label_selector_as_selector(ns_raw)
    if err is not None:
        return None, err
    raw_namespaces = raw.get("namespaces") or ()
    if not isinstance(raw_namespaces, (list, tuple)):
        return None, f"namespaces: Invalid value: {helper.go_value(raw_namespaces)}: must be a list"
    listed = [str(n) for n in raw_namespaces]
    namespaces = frozenset(listed) if listed or ns_raw is not None else frozenset((pod.namespace,))
    return AffinityTerm(namespaces, ns_sel, sel, str(raw.get("topologyKey") or "")), None


def _parse_list(items: Any, pod: PodInfo) -> tuple[tuple[AffinityTerm, ...], str | None]:
    if items is not None and not isinstance(items, list):
        return (), f"Invalid value: {helper.go_value(items)}: must be a list"
    out: list[AffinityTerm] = []
    for raw in items or ():
        term, err = parse_term(raw, pod)
        if term is None:
            return (), err
        out.append(term)
    return tuple(out), None


def _parse_weighted(items: Any, pod: PodInfo) -> tuple[tuple[WeightedTerm, ...], str | None]:
    if items is not None and not isinstance(items, list):
        return (), f"Invalid value: {helper.go_value(items)}: must be a list"
    out: list[WeightedTerm] = []
    for raw in items or ():
        if not isinstance(raw, Mapping):
            return (), f"invalid weighted pod affinity term: {helper.go_value(raw)}"
        term, err = parse_term(raw.get("podAffinityTerm"), pod)
        if term is None:
            return (), err
        weight = raw.get("weight")
        if isinstance(weight, bool) or not isinstance(weight, (int, float)):
            return (), f"weight: Invalid value: {helper.go_value(weight)}: must be an integer"
        out.append(WeightedTerm(term, int(weight)))
    return tuple(out), None


def parse_pod_terms(pod: PodInfo) -> PodTerms:
    """All four term lists of a pod (upstream ``PodInfo.Update``); parse errors aggregated like upstream.
    Malformed input (wrong types) is an error, never an exception."""
    try:
        return _parse_pod_terms(pod)
    except (TypeError, ValueError, AttributeError) as exc:
        return PodTerms(error=f"invalid pod affinity: {exc}")


def _parse_pod_terms(pod: PodInfo) -> PodTerms:
    aff = pod.affinity.get("podAffinity") or {}
    anti = pod.affinity.get("podAntiAffinity") or {}
    if not isinstance(aff, Mapping) or not isinstance(anti, Mapping):
        return PodTerms(error="podAffinity and podAntiAffinity must be objects")
    errors: list[str] = []
    req_aff, err = _parse_list(aff.get(REQUIRED), pod)
    if err:
        errors.append(f"requiredAffinityTerms: {err}")
    req_anti, err = _parse_list(anti.get(REQUIRED), pod)
    if err:
        errors.append(f"requiredAntiAffinityTerms: {err}")
    pref_aff, err = _parse_weighted(aff.get(PREFERRED), pod)
    if err:
        errors.append(f"preferredAffinityTerms: {err}")
    pref_anti, err = _parse_weighted(anti.get(PREFERRED), pod)
    if err:
        errors.append(f"preferredAntiAffinityTerms: {err}")
    error = None if not errors else errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
    return PodTerms(req_aff, req_anti, pref_aff, pref_anti, error)


def _has_preferred(pod: PodInfo) -> bool:
    for kind in ("podAffinity", "podAntiAffinity"):
        section = pod.affinity.get(kind)
        if isinstance(section, Mapping) and section.get(PREFERRED):
            return True
    return False


def _memoizable(terms: Iterable[AffinityTerm]) -> bool:
    """Counts for these terms depend on pod labels only (no namespaceSelector reading Namespace labels, which
    may change without any node changing), so they can be remembered per node."""
    return all(t.ns_selector is None or not t.ns_selector.requirements for t in terms)


def _bump(counts: PairCounts, labels: Mapping[str, str], key: str, delta: int) -> None:
    """Add ``delta`` at the node's value of ``key`` (if it has the label); entries that reach 0 are dropped."""
    value = labels.get(key)
    if value is None:
        return
    pair = (key, value)
    n = counts.get(pair, 0) + delta
    if n:
        counts[pair] = n
    else:
        counts.pop(pair, None)


def _all_counter(terms: tuple[AffinityTerm, ...], ns_labels: NamespaceLabels) -> Callable[[NodeInfo], int]:
    """A node's number of pods matching all ``terms`` (a node-index column; the terms read no Namespace labels)."""

    def count(node: NodeInfo) -> int:
        return sum(1 for p in node.pods if _matches_all(terms, p, ns_labels))

    return count


def _filter_rows(
    s: PreFilterState, nodes: Sequence[NodeInfo], index: topology.NodeIndex
) -> list[fw.Status] | None:
    """Filter by array lookups when ``nodes`` are rows of the index the state was built on: the same checks as
    :meth:`InterPodAffinity.filter`, in the same order (the first failing one names the status)."""
    verdict = _verdict_rows(s, nodes, index)
    if verdict is None:
        return None
    if not verdict.any():
        return [fw.SUCCESS] * len(verdict)
    return list(map(_VERDICTS.__getitem__, verdict.tolist()))


def _verdict_rows(
    s: PreFilterState, nodes: Sequence[NodeInfo], index: topology.NodeIndex
) -> npt.NDArray[np.int8] | None:
    """Per node of ``nodes`` its verdict (an index into ``_VERDICTS``), or None when ``nodes`` are not rows of
    the index the state was built on (or its counts cannot be read as arrays)."""
    affinity, anti, existing = s.affinity, s.anti, s.existing_anti
    if not (
        isinstance(affinity, topology.PairCounts)
        and isinstance(anti, topology.PairCounts)
        and isinstance(existing, topology.PairCounts)
    ) or (affinity.extra or anti.extra or existing.extra):
        return None
    for counts in (affinity, anti, existing):
        if not all(index.same_domains(key, ids) for key, ids in counts.ids.items()):
            return None
    rows = index.rows_of(nodes)
    if rows is None:
        return None
    cached = s.verdicts
    if cached is None or cached[0] != index.version:
        cached = s.verdicts = (index.version, _row_verdicts(s, index, affinity, anti, existing))
    verdict: npt.NDArray[np.int8] = cached[1][rows]
    return verdict


def _row_verdicts(
    s: PreFilterState,
    index: topology.NodeIndex,
    affinity: topology.PairCounts,
    anti: topology.PairCounts,
    existing: topology.PairCounts,
) -> npt.NDArray[np.int8]:
    """Every row's verdict (an index into ``_VERDICTS``) for this cycle's pod, computed once per pod: the
    scheduler filters several chunks per pod, each then costs one take."""
    n = index.size
    verdict = np.zeros(n, np.int8)
    req_aff = s.terms.required_affinity
    if req_aff:
        missing = np.zeros(n, np.bool_)
        exist = np.ones(n, np.bool_)
        for t in req_aff:
            ids = index.domain(t.topology_key).col
            missing |= ids < 0
            have = affinity.arrays.get(t.topology_key)
            if have is None:
                exist[:] = False
            else:
                exist &= topology.lookup(have, ids) > 0
        first_of_group = not affinity and s.self_match
        verdict[missing if first_of_group else missing | ~exist] = 1
    if anti:
        for t in s.terms.required_anti:
            have = anti.arrays.get(t.topology_key)
            if have is not None:
                ids = index.domain(t.topology_key).col
                verdict[(verdict == 0) & (topology.lookup(have, ids) > 0)] = 2
    if existing:
        for key, have in existing.arrays.items():
            ids = index.domain(key).col
            verdict[(verdict == 0) & (topology.lookup(have, ids) > 0)] = 3
    return verdict


def _matches_all(terms: Sequence[AffinityTerm], pod: PodInfo, ns_labels: NamespaceLabels) -> bool:
    """Upstream ``podMatchesAllAffinityTerms``: False for no terms."""
    if not terms:
        return False
    return all(t.matches(pod, ns_labels) for t in terms)


# --- states --------------------------------------------------------------------------------------------------------


@dataclass(slots=True)
class PreFilterState:
    terms: PodTerms  # the incoming pod's
    ns_labels: NamespaceLabels
    existing_anti: PairCounts  # existing pods whose required anti-affinity matches the pod
    affinity: PairCounts  # existing pods matching all of the pod's required affinity terms
    anti: PairCounts  # existing pods matching one of the pod's required anti-affinity terms
    self_match: bool  # the pod matches all its own required affinity terms
    index: topology.NodeIndex | None = None  # the vectorised path's rows (the maps are then PairCounts)
    verdicts: tuple[int, npt.NDArray[np.int8]] | None = None  # (index version, every row's Filter verdict)

    def clone(self) -> PreFilterState:
        return PreFilterState(
            self.terms,
            self.ns_labels,
            self.existing_anti.copy(),
            self.affinity.copy(),
            self.anti.copy(),
            self.self_match,
            self.index,
        )


@dataclass(slots=True)
class PreScoreState:
    """``key -> value -> score``; on the vectorised path the inner maps are DomainCounts over the index's domain
    ids and ``index`` is set, so :meth:`InterPodAffinity.score_nodes` can answer by array lookups."""

    topology_score: Mapping[str, Mapping[str, int]]
    index: topology.NodeIndex | None = None


# --- the plugin ----------------------------------------------------------------------------------------------------


class InterPodAffinity(fw.PreFilterPlugin, fw.FilterPlugin, fw.PreScorePlugin, fw.ScorePlugin):
    NAME = NAME
    args: InterPodAffinityArgs

    def __init__(self, args: InterPodAffinityArgs | None, handle: fw.Handle) -> None:
        super().__init__(args or InterPodAffinityArgs(), handle)
        self._parsed: dict[int, tuple[Mapping[str, Any], str, PodTerms]] = {}
        self._tables: dict[tuple[Any, ...], dict[str, tuple[NodeInfo, int, Any]]] = {}

    def _table(self, key: tuple[Any, ...]) -> dict[str, tuple[NodeInfo, int, Any]]:
        """Remembered per-node counts of pods matching a term (or all of a term tuple), bounded in number."""
        table = self._tables.get(key)
        if table is None:
            if len(self._tables) >= _MATCH_TABLES_LIMIT:
                self._tables.clear()
            table = self._tables[key] = {}
        return table

    def terms_of(self, pod: PodInfo) -> PodTerms:
        """Parsed terms of ``pod``, cached by its affinity dict (a PodInfo and its assumed copies share it)."""
        aff = pod.affinity
        if not aff or ("podAffinity" not in aff and "podAntiAffinity" not in aff):
            return NO_TERMS
        hit = self._parsed.get(id(aff))
        if hit is not None and hit[0] is aff and hit[1] == pod.namespace:
            return hit[2]
        terms = parse_pod_terms(pod)
        if len(self._parsed) >= _PARSE_CACHE_LIMIT:
            self._parsed.clear()
        self._parsed[id(aff)] = (aff, pod.namespace, terms)
        return terms

    def _nodes_hosting(self, which: str, nodes: Sequence[NodeInfo]) -> Sequence[NodeInfo]:
        """Nodes that may host pods with pod (anti-)affinity terms: the snapshot's precomputed list (upstream's
        ``HavePodsWithAffinityList`` / ``HavePodsWithRequiredAntiAffinityList``)."""
        return _listing(self.handle.snapshot(), which)

    def _none_listed(self, which: str) -> bool:
        """The snapshot's list ``which`` is empty."""
        return not _listing(self.handle.snapshot(), which)

    def _existing_anti_pairs(
        self, pod: PodInfo, node: NodeInfo, ns_labels: NamespaceLabels
    ) -> tuple[tuple[TopologyPair, ...], bool]:
        """The node's (key, value) pair once per existing required anti-affinity term matching ``pod``, and
        whether the answer may be remembered (no term consulted Namespace labels)."""
        labels = node.labels
        pairs: list[TopologyPair] = []
        reusable = True
        for existing in node.pods:
            if not existing.affinity:
                continue
            for t in self.terms_of(existing).required_anti:
                if t.ns_selector is not None and t.ns_selector.requirements:
                    reusable = False
                if t.matches(pod, ns_labels):
                    value = labels.get(t.topology_key)
                    if value is not None:
                        pairs.append((t.topology_key, value))
        return tuple(pairs), reusable

    def _scores_others(self, existing: PodInfo) -> bool:
        """Whether ``existing`` has terms that score other pods (required affinity or preferred terms)."""
        if not existing.affinity:
            return False
        t = self.terms_of(existing)
        return bool(t.required_affinity or t.preferred_affinity or t.preferred_anti)

    # --- PreFilter / Filter ------------------------------------------------------------------------------------

    def pre_filter(
        self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[fw.PreFilterResult | None, fw.Status]:
        terms = self.terms_of(pod)
        if terms.error is not None:
            return None, fw.unresolvable(f"parsing pod: {terms.error}")
        if (
            not terms.required_affinity
            and not terms.required_anti
            and self._none_listed(HAVE_REQUIRED_ANTI_AFFINITY)
        ):
            return (
                None,
                fw.skip(),
            )  # nothing to check (the common case): no need to bring the node index in step
        ns_labels = NamespaceLabels(self.handle)
        if vector.enabled(self.handle):
            vectorised = self._pre_filter_vectorised(pod, terms, ns_labels, nodes)
            if vectorised is not None:
                if not vectorised.existing_anti and not terms.required_affinity and not terms.required_anti:
                    return None, fw.skip()
                state.write(PRE_FILTER_STATE_KEY, vectorised)
                return None, fw.SUCCESS
        existing_anti: dict[TopologyPair, int] = {}
        affinity: dict[TopologyPair, int] = {}
        anti: dict[TopologyPair, int] = {}
        req_aff, req_anti = terms.required_affinity, terms.required_anti
        # (a) existing pods whose required anti-affinity matches the pod: only nodes hosting such pods. A node's
        # matched pairs depend on its pods and on the pod's namespace and labels: remembered per node object and
        # generation for pods that look alike (replicas), unless a term reads Namespace labels.
        seen = self._table(("existing-anti", pod.namespace, frozenset(pod.labels.items())))
        for node in self._nodes_hosting(HAVE_REQUIRED_ANTI_AFFINITY, nodes):
            hit = seen.get(node.name)
            if hit is not None and hit[0] is node and hit[1] == node.generation:
                pairs = hit[2]
            else:
                pairs, reusable = self._existing_anti_pairs(pod, node, ns_labels)
                if reusable:
                    seen[node.name] = (node, node.generation, pairs)
            for pair in pairs:
                existing_anti[pair] = existing_anti.get(pair, 0) + 1
        # (b), (c): existing pods matching the pod's own required terms, on every node. Per node the number of
        # matching pods is remembered per term (node object + generation), so a cycle recounts changed nodes only.
        if req_aff or req_anti:
            aff_table = self._table(("affinity", req_aff)) if req_aff and _memoizable(req_aff) else None
            anti_plan = [(t, self._table(("anti", t)) if _memoizable((t,)) else None) for t in req_anti]
            for node in nodes:
                pods = node.pods
                if not pods:
                    continue
                labels, name, generation = node.labels, node.name, node.generation
                if req_aff:
                    hit = aff_table.get(name) if aff_table is not None else None
                    if hit is not None and hit[0] is node and hit[1] == generation:
                        n = hit[2]
                    else:
                        n = sum(1 for p in pods if _matches_all(req_aff, p, ns_labels))
                        if aff_table is not None:
                            aff_table[name] = (node, generation, n)
                    if n:
                        for t in req_aff:
                            _bump(affinity, labels, t.topology_key, n)
                for t, table in anti_plan:
                    hit = table.get(name) if table is not None else None
                    if hit is not None and hit[0] is node and hit[1] == generation:
                        n = hit[2]
                    else:
                        n = sum(1 for p in pods if t.matches(p, ns_labels))
                        if table is not None:
                            table[name] = (node, generation, n)
                    if n:
                        _bump(anti, labels, t.topology_key, n)
        if not existing_anti and not req_aff and not req_anti:
            return None, fw.skip()
        self_match = _matches_all(req_aff, pod, ns_labels)
        state.write(
            PRE_FILTER_STATE_KEY, PreFilterState(terms, ns_labels, existing_anti, affinity, anti, self_match)
        )
        return None, fw.SUCCESS

    def _pre_filter_vectorised(
        self, pod: PodInfo, terms: PodTerms, ns_labels: NamespaceLabels, nodes: Sequence[NodeInfo]
    ) -> PreFilterState | None:
        """PreFilter over the node index: per-node columns of matching pods (per term, or all affinity terms at
        once) and of existing anti-affinity terms matching this class of pod (namespace + labels), tallied per
        topology domain with one bincount each. None when a term reads Namespace labels (the reference loop then
        runs: those labels may change without any node changing)."""
        req_aff, req_anti = terms.required_affinity, terms.required_anti
        if not _memoizable(req_aff) or not _memoizable(req_anti):
            return None
        index = topology.synced_index(self.handle, self, nodes)
        if index.total(("ipa-unkeyable-anti",), self._unkeyable_anti):
            return None
        existing_anti = topology.PairCounts()
        if index.total(("ipa-anti-terms",), self._anti_terms):
            class_key = ("ipa-existing-anti", pod.namespace, frozenset(pod.labels.items()))
            columns = index.keyed(
                class_key,
                lambda node: self._existing_anti_keys(pod, node, ns_labels),
                lambda: np.flatnonzero(index.counts(("ipa-anti-terms",), self._anti_terms)),
            )
            for key in list(columns):
                sums = index.keyed_sums(key, class_key, key)
                if sums.any():
                    existing_anti.add_array(key, index.domain(key).ids, sums)
        affinity = topology.PairCounts()
        if req_aff and index.total(("ipa-all", req_aff), _all_counter(req_aff, ns_labels)):
            for t in req_aff:
                key = t.topology_key
                sums = index.domain_sums(key, ("ipa-all", req_aff), _all_counter(req_aff, ns_labels))
                affinity.add_array(key, index.domain(key).ids, sums)
        anti = topology.PairCounts()
        for t in req_anti:
            if index.total(("ipa-one", t), _all_counter((t,), ns_labels)):
                key = t.topology_key
                sums = index.domain_sums(key, ("ipa-one", t), _all_counter((t,), ns_labels))
                anti.add_array(key, index.domain(key).ids, sums)
        self_match = _matches_all(req_aff, pod, ns_labels)
        return PreFilterState(terms, ns_labels, existing_anti, affinity, anti, self_match, index)

    def _anti_terms(self, node: NodeInfo) -> int:
        """Required anti-affinity terms of the node's pods (a node-index column: which nodes to look at)."""
        return sum(len(self.terms_of(p).required_anti) for p in node.pods if p.affinity)

    def _unkeyable_anti(self, node: NodeInfo) -> int:
        """Required anti-affinity terms on the node that read Namespace labels (their matches cannot be kept)."""
        return sum(
            1
            for p in node.pods
            if p.affinity
            for t in self.terms_of(p).required_anti
            if not _memoizable((t,))
        )

    def _existing_anti_keys(self, pod: PodInfo, node: NodeInfo, ns_labels: NamespaceLabels) -> dict[str, int]:
        """Per topology key the node carries: existing required anti-affinity terms on it matching ``pod`` (only
        its namespace and labels are read: the column stands for every pod of that class)."""
        out: dict[str, int] = {}
        labels = node.labels
        for existing in node.pods:
            if not existing.affinity:
                continue
            for t in self.terms_of(existing).required_anti:
                key = t.topology_key
                if key in labels and t.matches(pod, ns_labels):
                    out[key] = out.get(key, 0) + 1
        return out

    def pre_filter_extensions(self) -> fw.PreFilterExtensions | None:
        return self

    def _update_with_pod(
        self, state: fw.CycleState, pod: PodInfo, other: PodInfo, node: NodeInfo, delta: int
    ) -> fw.Status:
        s: PreFilterState | None = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return fw.SUCCESS
        s.verdicts = None
        labels = node.labels
        for t in self.terms_of(other).required_anti:
            if t.matches(pod, s.ns_labels):
                _bump(s.existing_anti, labels, t.topology_key, delta)
        req_aff = s.terms.required_affinity
        if req_aff and _matches_all(req_aff, other, s.ns_labels):
            for t in req_aff:
                _bump(s.affinity, labels, t.topology_key, delta)
        for t in s.terms.required_anti:
            if t.matches(other, s.ns_labels):
                _bump(s.anti, labels, t.topology_key, delta)
        return fw.SUCCESS

    def add_pod(self, state: fw.CycleState, pod: PodInfo, to_add: PodInfo, node: NodeInfo) -> fw.Status:
        return self._update_with_pod(state, pod, to_add, node, 1)

    def remove_pod(self, state: fw.CycleState, pod: PodInfo, to_remove: PodInfo, node: NodeInfo) -> fw.Status:
        return self._update_with_pod(state, pod, to_remove, node, -1)

    def filter(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo) -> fw.Status:
        s: PreFilterState | None = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return fw.error(f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
        labels = node.labels
        req_aff = s.terms.required_affinity
        if req_aff:
            pods_exist = True
            for t in req_aff:
                value = labels.get(t.topology_key)
                if value is None:
                    return fw.unresolvable(ERR_REASON_AFFINITY_RULES_NOT_MATCH)
                if s.affinity.get((t.topology_key, value), 0) <= 0:
                    pods_exist = False
            # The first pod of a group with affinity to itself may go anywhere its terms' keys exist.
            if not pods_exist and not (not s.affinity and s.self_match):
                return fw.unresolvable(ERR_REASON_AFFINITY_RULES_NOT_MATCH)
        if s.anti:
            for t in s.terms.required_anti:
                value = labels.get(t.topology_key)
                if value is not None and s.anti.get((t.topology_key, value), 0) > 0:
                    return fw.unschedulable(ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
        if s.existing_anti:
            for pair in labels.items():
                if s.existing_anti.get(pair, 0) > 0:
                    return fw.unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
        return fw.SUCCESS

    def filter_verdicts(
        self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo], arrays: Any, rows: Any
    ) -> tuple[npt.NDArray[np.int8], Sequence[fw.Status]] | None:
        """The runtime's bulk-rejection hook: per node of ``nodes`` an index into the returned statuses (0 passes),
        exactly :meth:`filter`'s answer, so a rejected node costs no Python call; None where only the per-node
        forms can tell."""
        s: PreFilterState | None = state.get(PRE_FILTER_STATE_KEY)
        if s is None or s.index is None:
            return None
        verdict = _verdict_rows(s, nodes, s.index)
        return None if verdict is None else (verdict, _VERDICTS)

    def filter_nodes(self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> list[fw.Status]:
        """:meth:`filter` for many nodes at once (the runtime's batch hook); same checks in the same order."""
        s: PreFilterState | None = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return [self.filter(state, pod, n) for n in nodes]
        if s.index is not None:
            by_rows = _filter_rows(s, nodes, s.index)
            if by_rows is not None:
                return by_rows
        affinity, anti, existing = s.affinity, s.anti, s.existing_anti
        aff_keys = [t.topology_key for t in s.terms.required_affinity]
        first_of_group = not affinity and s.self_match
        anti_keys = [t.topology_key for t in s.terms.required_anti] if anti else []
        out: list[fw.Status] = []
        for node in nodes:
            labels = node.labels
            status = fw.SUCCESS
            if aff_keys:
                pods_exist = True
                for key in aff_keys:
                    value = labels.get(key)
                    if value is None:
                        status = _AFFINITY_NOT_MATCH
                        break
                    if affinity.get((key, value), 0) <= 0:
                        pods_exist = False
                if status is fw.SUCCESS and not pods_exist and not first_of_group:
                    status = _AFFINITY_NOT_MATCH
            if status is fw.SUCCESS:
                for key in anti_keys:
                    value = labels.get(key)
                    if value is not None and anti.get((key, value), 0) > 0:
                        status = _ANTI_AFFINITY_NOT_MATCH
                        break
            if status is fw.SUCCESS and existing:
                for pair in labels.items():
                    if existing.get(pair, 0) > 0:
                        status = _EXISTING_ANTI_AFFINITY_NOT_MATCH
                        break
            out.append(status)
        return out

    # --- PreScore / Score / NormalizeScore ---------------------------------------------------------------------

    def pre_score(self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> fw.Status:
        has_constraints = _has_preferred(pod)
        if self.args.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return fw.skip()
        terms = self.terms_of(pod)
        if terms.error is not None:
            return fw.error(f"failed to parse pod: {terms.error}")
        all_nodes: Sequence[NodeInfo] = self.handle.snapshot().node_infos()
        if not has_constraints and self._none_listed(HAVE_AFFINITY):
            return fw.skip()  # no pod with terms anywhere: nothing scores this pod
        if vector.enabled(self.handle):
            vectorised = self._pre_score_vectorised(pod, terms, has_constraints, all_nodes)
            if vectorised is not None:
                if not vectorised.topology_score:
                    return fw.skip()
                state.write(PRE_SCORE_STATE_KEY, vectorised)
                return fw.SUCCESS
        if not has_constraints:
            # Only pods with (anti-)affinity terms of their own can contribute.
            all_nodes = self._nodes_hosting(HAVE_AFFINITY, all_nodes)
        ns_labels = NamespaceLabels(self.handle)
        hard = self.args.hard_pod_affinity_weight
        topo: dict[str, dict[str, int]] = {}

        def add(term: AffinityTerm, labels: Mapping[str, str], amount: int) -> None:
            value = labels.get(term.topology_key)
            if value is not None:
                scores = topo.setdefault(term.topology_key, {})
                scores[value] = scores.get(value, 0) + amount

        pref_aff, pref_anti = terms.preferred_affinity, terms.preferred_anti
        # Without preferences of its own, the pod is scored only by existing pods' required affinity and
        # preferred terms; nodes hosting none (e.g. only anti-affinity pods) are remembered and skipped.
        relevant = None if has_constraints else self._table(("score-relevant",))
        for node in all_nodes:
            labels = node.labels
            if not labels:
                continue
            if relevant is not None:
                hit = relevant.get(node.name)
                if hit is None or hit[0] is not node or hit[1] != node.generation:
                    hit = (node, node.generation, any(map(self._scores_others, node.pods)))
                    relevant[node.name] = hit
                if not hit[2]:
                    continue
            for existing in node.pods:
                if not existing.affinity and not has_constraints:
                    continue
                other = self.terms_of(existing)
                for wt in pref_aff:
                    if wt.term.matches(existing, ns_labels):
                        add(wt.term, labels, wt.weight)
                for wt in pref_anti:
                    if wt.term.matches(existing, ns_labels):
                        add(wt.term, labels, -wt.weight)
                if other is NO_TERMS:
                    continue
                if hard > 0:
                    for t in other.required_affinity:
                        if t.matches(pod, ns_labels):
                            add(t, labels, hard)
                for wt in other.preferred_affinity:
                    if wt.term.matches(pod, ns_labels):
                        add(wt.term, labels, wt.weight)
                for wt in other.preferred_anti:
                    if wt.term.matches(pod, ns_labels):
                        add(wt.term, labels, -wt.weight)
        if not topo:
            return fw.skip()
        state.write(PRE_SCORE_STATE_KEY, PreScoreState(topo))
        return fw.SUCCESS

    def _pre_score_vectorised(
        self, pod: PodInfo, terms: PodTerms, has_constraints: bool, all_nodes: Sequence[NodeInfo]
    ) -> PreScoreState | None:
        """PreScore over the node index: the pod's preferred terms as weighted per-node counts of matching pods,
        existing pods' terms matching this class of pod (namespace + labels) as keyed columns, each tallied per
        topology domain. Keys whose every domain sums to 0 are left out: like an absent key they add 0 to every
        node (and no keys at all gives Skip, whose total is the same 0 as normalising all-zero scores).
        None when a term reads Namespace labels (the reference loop then runs)."""
        pref_aff, pref_anti = terms.preferred_affinity, terms.preferred_anti
        if not _memoizable([wt.term for wt in pref_aff + pref_anti]):
            return None
        index = topology.synced_index(self.handle, self, all_nodes)
        if index.total(("ipa-unkeyable-score",), self._unkeyable_scoring):
            return None
        ns_labels = NamespaceLabels(self.handle)
        sums: dict[str, IntArray] = {}

        def add(key: str, values: IntArray) -> None:  # values: the index's sums, never changed here
            have = sums.get(key)
            sums[key] = values.copy() if have is None else have + values

        for wt, sign in [(wt, 1) for wt in pref_aff] + [(wt, -1) for wt in pref_anti]:
            counter = _all_counter((wt.term,), ns_labels)
            if wt.weight and index.total(("ipa-one", wt.term), counter):
                key = wt.term.topology_key
                add(key, sign * wt.weight * index.domain_sums(key, ("ipa-one", wt.term), counter))
        hard = self.args.hard_pod_affinity_weight
        if index.total(("ipa-scoring-pods", hard), self._scoring_pods):
            class_key = ("ipa-existing-score", pod.namespace, frozenset(pod.labels.items()), hard)
            columns = index.keyed(
                class_key,
                lambda node: self._existing_score_keys(pod, node, ns_labels),
                lambda: np.flatnonzero(index.counts(("ipa-scoring-pods", hard), self._scoring_pods)),
            )
            for key in list(columns):
                add(key, index.keyed_sums(key, class_key, key))
        topo: dict[str, Mapping[str, int]] = {}
        for key, values in sums.items():
            if values.any():
                topo[key] = topology.DomainCounts(
                    index.domain(key).ids, values, np.ones(len(values), np.bool_)
                )
        return PreScoreState(topo, index)

    def _scoring_terms(self, existing: PodInfo) -> list[tuple[AffinityTerm, int]]:
        """(term, amount) of ``existing``'s terms that score an incoming pod they match: required affinity at
        ``hardPodAffinityWeight`` (when > 0), preferred affinity at +weight, preferred anti-affinity at -weight."""
        if not existing.affinity:
            return []
        t = self.terms_of(existing)
        if t is NO_TERMS:
            return []
        hard = self.args.hard_pod_affinity_weight
        out = [(term, hard) for term in t.required_affinity] if hard > 0 else []
        out.extend((wt.term, wt.weight) for wt in t.preferred_affinity)
        out.extend((wt.term, -wt.weight) for wt in t.preferred_anti)
        return out

    def _scoring_pods(self, node: NodeInfo) -> int:
        """Pods on the node with terms that score other pods (a node-index column)."""
        return sum(1 for p in node.pods if self._scoring_terms(p))

    def _unkeyable_scoring(self, node: NodeInfo) -> int:
        """Scoring terms on the node that read Namespace labels."""
        return sum(1 for p in node.pods for term, _ in self._scoring_terms(p) if not _memoizable((term,)))

    def _existing_score_keys(
        self, pod: PodInfo, node: NodeInfo, ns_labels: NamespaceLabels
    ) -> dict[str, int]:
        """Per topology key the node carries: what its pods' terms matching ``pod`` add (only ``pod``'s namespace
        and labels are read: the column stands for every pod of that class)."""
        out: dict[str, int] = {}
        labels = node.labels
        for existing in node.pods:
            for term, amount in self._scoring_terms(existing):
                key = term.topology_key
                if key in labels and term.matches(pod, ns_labels):
                    out[key] = out.get(key, 0) + amount
        return out

    def score_nodes(
        self, state: fw.CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[list[int], fw.Status]:
        """:meth:`score` for many nodes (the runtime's batch hook): array lookups on the vectorised path."""
        s: PreScoreState | None = state.get(PRE_SCORE_STATE_KEY)
        if s is not None and s.index is not None:
            rows = s.index.rows_of(nodes)
            if rows is not None:
                total = np.zeros(len(rows), np.int64)
                for key, values in s.topology_score.items():
                    if not isinstance(values, topology.DomainCounts) or not s.index.same_domains(
                        key, values.ids
                    ):
                        break
                    total += topology.lookup(values.counts, s.index.domain(key).col[rows])
                else:
                    return total.tolist(), fw.SUCCESS
        return helper.score_each(self, state, pod, nodes)

    def score(self, state: fw.CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, fw.Status]:
        s: PreScoreState | None = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            return 0, fw.error(f'reading "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
        labels = node.labels
        total = 0
        for key, values in s.topology_score.items():
            value = labels.get(key)
            if value is not None:
                total += values.get(value, 0)
        return total, fw.SUCCESS

    def normalize_score(self, state: fw.CycleState, pod: PodInfo, scores: list[fw.NodeScore]) -> fw.Status:
        s: PreScoreState | None = state.get(PRE_SCORE_STATE_KEY)
        if s is None or not s.topology_score or not scores:
            return fw.SUCCESS
        lowest = min(ns.score for ns in scores)
        spread = max(ns.score for ns in scores) - lowest
        for ns in scores:
            ns.score = int(fw.MAX_NODE_SCORE * ((ns.score - lowest) / spread)) if spread > 0 else 0
        return fw.SUCCESS

    def events_to_register(self) -> Sequence[fw.ClusterEvent]:
        return (
            fw.ClusterEvent("Pod", "Add"),
            fw.ClusterEvent("Pod", "UpdatePodLabel"),
            fw.ClusterEvent("Pod", "Delete"),
            fw.ClusterEvent("Node", "Add"),
            fw.ClusterEvent("Node", "UpdateNodeLabel"),
        )


SPEC = fw.PluginSpec(
    name=NAME,
    plugin_class=InterPodAffinity,
    args_type=InterPodAffinityArgs,
    api_access=("pods", "nodes", "namespaces"),
)
