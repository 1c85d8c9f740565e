"""Label and field selectors: the string form (``a=b,c in (d),!e``), ``LabelSelector`` objects, and node
selector requirements (with ``Gt``/``Lt``). Used by the API server's list/watch filters and by scheduler plugins.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from berth.kube.errors import InputError


@dataclass(frozen=True)
class Requirement:
    """One ``key op values`` clause. ``op`` is one of In, NotIn, Exists, DoesNotExist, Gt, Lt, Equals, NotEquals."""

    key: str
    op: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        op = self.op
        if op in ("In", "Equals"):
            return present and labels[self.key] in self.values
        if op in ("NotIn", "NotEquals"):
            return not present or labels[self.key] not in self.values
        if op == "Exists":
            return present
        if op == "DoesNotExist":
            return not present
        if op in ("Gt", "Lt"):
            if not present or len(self.values) != 1:
                return False
            try:
                have, want = int(labels[self.key]), int(self.values[0])
            except ValueError:
                return False
            return have > want if op == "Gt" else have < want
        return False


@dataclass(frozen=True)
class Selector:
    """A conjunction of requirements. The empty selector matches everything."""

    requirements: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(r.matches(labels) for r in self.requirements)

    @property
    def empty(self) -> bool:
        return not self.requirements


EVERYTHING = Selector()

_TOKEN = re.compile(r"\s*(!=|==|=|\(|\)|,|!|[^\s!=(),]+)")


def parse_label_selector(text: str) -> Selector:
    """Parse the string form used in ``?labelSelector=`` and ``kubectl -l``. Raises :class:`InputError`."""
    text = text.strip()
    if not text:
        return EVERYTHING
    tokens = [t for t in _TOKEN.findall(text)]
    reqs: list[Requirement] = []
    i = 0

    def expect(cond: bool, msg: str) -> None:
        if not cond:
            raise InputError(f"unable to parse requirement: {msg}", f"label selector {text!r}")

    while i < len(tokens):
        tok = tokens[i]
        if tok == "!":
            expect(i + 1 < len(tokens), "missing key after '!'")
            reqs.append(Requirement(tokens[i + 1], "DoesNotExist"))
            i += 2
        else:
            key = tok
            nxt = tokens[i + 1] if i + 1 < len(tokens) else ","
            if nxt in ("=", "=="):
                expect(i + 2 < len(tokens) or True, "missing value")
                val = tokens[i + 2] if i + 2 < len(tokens) and tokens[i + 2] != "," else ""
                reqs.append(Requirement(key, "Equals", (val,)))
                i += 3 if val else 2
            elif nxt == "!=":
                val = tokens[i + 2] if i + 2 < len(tokens) and tokens[i + 2] != "," else ""
                reqs.append(Requirement(key, "NotEquals", (val,)))
                i += 3 if val else 2
            elif nxt in ("in", "notin"):
                expect(i + 2 < len(tokens) and tokens[i + 2] == "(", f"expected '(' after {nxt}")
                j = i + 3
                values: list[str] = []
                while j < len(tokens) and tokens[j] != ")":
                    if tokens[j] != ",":
                        values.append(tokens[j])
                    j += 1
                expect(j < len(tokens), "missing ')'")
                reqs.append(Requirement(key, "In" if nxt == "in" else "NotIn", tuple(values)))
                i = j + 1
            elif nxt in ("gt", "lt"):
                reqs.append(Requirement(key, "Gt" if nxt == "gt" else "Lt", (tokens[i + 2],)))
                i += 3
            else:
                reqs.append(Requirement(key, "Exists"))
                i += 1
        if i < len(tokens):
            expect(tokens[i] == ",", f"unexpected {tokens[i]!r}")
            i += 1
    return Selector(tuple(reqs))


def from_label_selector(sel: Mapping[str, Any] | None) -> Selector | None:
    """A ``metav1.LabelSelector`` object. ``None`` (a nil selector) matches nothing; ``{}`` matches everything."""
    if sel is None:
        return None
    reqs = [Requirement(k, "In", (str(v),)) for k, v in (sel.get("matchLabels") or {}).items()]
    for expr in sel.get("matchExpressions") or []:
        reqs.append(
            Requirement(
                str(expr.get("key", "")), str(expr.get("operator", "")), tuple(expr.get("values") or ())
            )
        )
    return Selector(tuple(reqs))


def label_selector_matches(sel: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """Convenience: does a LabelSelector object match these labels (nil matches nothing)."""
    s = from_label_selector(sel)
    return s is not None and s.matches(labels)


def from_node_selector_term(term: Mapping[str, Any]) -> tuple[Selector, Selector]:
    """(label requirements, field requirements) of a NodeSelectorTerm."""
    labels = tuple(
        Requirement(
            str(e.get("key", "")), str(e.get("operator", "")), tuple(str(v) for v in e.get("values") or ())
        )
        for e in term.get("matchExpressions") or []
    )
    fields = tuple(
        Requirement(
            str(e.get("key", "")), str(e.get("operator", "")), tuple(str(v) for v in e.get("values") or ())
        )
        for e in term.get("matchFields") or []
    )
    return Selector(labels), Selector(fields)


def node_selector_term_matches(
    term: Mapping[str, Any], node_labels: Mapping[str, str], node_name: str
) -> bool:
    """A NodeSelectorTerm matches when all its expressions and fields match; an empty term matches nothing."""
    if not term.get("matchExpressions") and not term.get("matchFields"):
        return False
    label_sel, field_sel = from_node_selector_term(term)
    return label_sel.matches(node_labels) and field_sel.matches({"metadata.name": node_name})


def node_selector_matches(
    selector: Mapping[str, Any] | None, node_labels: Mapping[str, str], node_name: str
) -> bool:
    """A NodeSelector: its terms are ORed. A selector with no terms matches nothing."""
    if selector is None:
        return True
    return any(
        node_selector_term_matches(t, node_labels, node_name) for t in selector.get("nodeSelectorTerms") or []
    )


# ---- field selectors -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FieldRequirement:
    field: str
    op: str  # "=" or "!="
    value: str


def parse_field_selector(text: str) -> tuple[FieldRequirement, ...]:
    """``metadata.name=x,spec.nodeName!=`` -> requirements. Raises :class:`InputError` on bad syntax."""
    out: list[FieldRequirement] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        m = re.match(r"^([^=!]+)(==|=|!=)(.*)$", part)
        if not m:
            raise InputError(
                f"invalid selector: {part!r}; expected field=value or field!=value", "fieldSelector"
            )
        field, op, val = m.groups()
        out.append(FieldRequirement(field.strip(), "!=" if op == "!=" else "=", val.strip()))
    return tuple(out)


def field_value(obj: Mapping[str, Any], path: str) -> str:
    """Dotted path lookup for field selectors; missing fields read as ``""``."""
    cur: Any = obj
    for part in path.split("."):
        if not isinstance(cur, Mapping):
            return ""
        cur = cur.get(part)
    if cur is None:
        return ""
    if isinstance(cur, bool):
        return "true" if cur else "false"
    return str(cur)


def fields_match(
    reqs: tuple[FieldRequirement, ...], obj: Mapping[str, Any], get: Callable[..., str] = field_value
) -> bool:
    for r in reqs:
        have = get(obj, r.field)
        if (have == r.value) != (r.op == "="):
            return False
    return True
