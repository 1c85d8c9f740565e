"""CEL validation rules of custom resources (``x-kubernetes-validations``), evaluated with ``cel-python``.

Each schema node may carry rules: ``rule`` (a CEL expression over ``self``, the node's value, and for transition
rules ``oldSelf``, its stored value), ``message`` or ``messageExpression`` (a CEL expression giving the message),
``reason`` (``FieldValueInvalid`` -- the default --, ``FieldValueForbidden``, ``FieldValueRequired``,
``FieldValueDuplicate``) and ``fieldPath`` (where under the node the error points). As upstream: a rule that
refers to ``oldSelf`` runs only on updates where the node existed before (with ``optionalOldSelf: true`` on
creates too, ``oldSelf`` then being an optional value); a node absent from the object is not
checked; the error is ``<path>: Invalid value: "<schema type>": <message>``, with ``failed rule: <rule>`` when no
message is given. Rules are compiled when the CRD is written (a rule that does not compile is a 422 there) and
cached by text.

The Kubernetes CEL library functions rules commonly use are provided on top of CEL's standard ones:
``lowerAscii``, ``upperAscii``, ``trim``, ``split``, ``join``, ``replace``, ``indexOf``, ``lastIndexOf``,
``isSorted``, ``sum``, ``min``, ``max`` and ``matches`` (standard), and the quantity, URL, IP/CIDR, format, regex
and optional libraries (:mod:`berth.cluster.cel_library`).

Cost limits, so a rule cannot hang the server: a rule runs with a meter (:data:`METERED_CALL_LIMIT`), charged
as it evaluates; one that uses it up is stopped at once with upstream's ``'operation cancelled: actual cost limit
exceeded': no further validation rules will be run due to call cost exceeds limit for rule: ...``, and once one
object's rules have used :data:`METERED_OBJECT_LIMIT` the rest are not run (``validation failed due to running out
of cost budget``). The units are berth's own, not cel-go's, so which rules pass the limits is close to, not the
same as, upstream; rules are not costed when the CRD is written (upstream's static estimate).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from functools import lru_cache
from typing import Any

import celpy
from celpy import celtypes
from celpy.adapter import json_to_cel
from celpy.evaluation import Evaluator, base_functions

from berth.cluster import cel_library, errors
from berth.cluster.errors import FieldError

METERED_CALL_LIMIT = 100_000
"""The most one rule (or message expression) may use while it runs (upstream's ``PerCallLimit`` is 1,000,000 of
cel-go's units), in berth's units: one per expression node evaluated, plus the size of each list or map (its
entries) or string (a tenth of its length) that a call, a literal or a ``+`` makes. cel-python takes tens of
microseconds a node where cel-go takes nanoseconds, so the limit is set by time -- a rule stops within a few
seconds, under the store's write lock -- rather than copied from upstream."""
METERED_OBJECT_LIMIT = 300_000
"""What all rules of one object may use together (upstream's ``RuntimeCELCostBudget``, 10,000,000 cel-go units)."""
_MADE_BY = frozenset({"member_dot_arg", "ident_arg", "dot_ident_arg", "list_lit", "map_lit"})
"""Expression nodes whose value is made by the node (a call, a literal), so its size is charged; a field access or
a node that passes its child's value up is charged one."""
_OLD_SELF = re.compile(r"\boldSelf\b")
_REASONS = ("FieldValueInvalid", "FieldValueForbidden", "FieldValueRequired", "FieldValueDuplicate")


def _text(value: Any) -> str:
    return str(value)


def _library() -> dict[str, Callable[..., Any]]:
    """The Kubernetes CEL library functions berth provides (member form: ``x.f(args)`` calls ``f(x, args)``)."""

    def lower_ascii(s: Any) -> Any:
        return celtypes.StringType(_text(s).lower())

    def upper_ascii(s: Any) -> Any:
        return celtypes.StringType(_text(s).upper())

    def trim(s: Any) -> Any:
        return celtypes.StringType(_text(s).strip())

    def split(s: Any, sep: Any, limit: Any = None) -> Any:
        parts = _text(s).split(_text(sep)) if limit is None else _text(s).split(_text(sep), int(limit) - 1)
        return celtypes.ListType([celtypes.StringType(p) for p in parts])

    def join(items: Any, sep: Any = "") -> Any:
        return celtypes.StringType(_text(sep).join(_text(i) for i in items))

    def replace(s: Any, old: Any, new: Any, count: Any = -1) -> Any:
        return celtypes.StringType(_text(s).replace(_text(old), _text(new), int(count)))

    def index_of(s: Any, sub: Any) -> Any:
        if isinstance(s, list):
            return celtypes.IntType(s.index(sub) if sub in s else -1)
        return celtypes.IntType(_text(s).find(_text(sub)))

    def last_index_of(s: Any, sub: Any) -> Any:
        if isinstance(s, list):
            return celtypes.IntType(len(s) - 1 - s[::-1].index(sub) if sub in s else -1)
        return celtypes.IntType(_text(s).rfind(_text(sub)))

    def is_sorted(items: Any) -> Any:
        return celtypes.BoolType(all(a <= b for a, b in zip(items, list(items)[1:], strict=False)))

    def total(items: Any) -> Any:
        out: Any = celtypes.IntType(0)
        for i in items:
            out = out + i
        return out

    def smallest(items: Any) -> Any:
        return min(items)

    def largest(items: Any) -> Any:
        return max(items)

    return {
        "lowerAscii": lower_ascii,
        "upperAscii": upper_ascii,
        "trim": trim,
        "split": split,
        "join": join,
        "replace": replace,
        "indexOf": index_of,
        "lastIndexOf": last_index_of,
        "isSorted": is_sorted,
        "sum": total,
        "min": smallest,
        "max": largest,
    }


class _CostLimit(BaseException):
    """A running rule used up its meter. A BaseException, so cel-python's handlers of ``Exception`` (which turn
    errors into CEL error values that ``||`` may absorb) let it through and the evaluation stops at once."""


class _Meter:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0


_METER: ContextVar[_Meter | None] = ContextVar("berth_cel_meter", default=None)


def _size(value: Any) -> int:
    if isinstance(value, list | dict):
        return len(value)
    if isinstance(value, str | bytes):
        return len(value) // 10
    return 0


class _MeteredEvaluator(Evaluator):
    """cel-python's tree-walking evaluator, charging the current meter for each node it evaluates."""

    def _visit_tree(self, tree: Any) -> Any:  # lark's per-node dispatch: every node of the rule passes here
        result = super()._visit_tree(tree)
        meter = _METER.get()
        if meter is not None:
            made = tree.data in _MADE_BY or (tree.data == "addition" and len(tree.children) > 1)
            meter.used += 1 + _size(result) if made else 1
            if meter.used > meter.limit:
                raise _CostLimit
        return result

    def sub_evaluator(self, ast: Any) -> Evaluator:  # a macro's body, evaluated once per element
        return _MeteredEvaluator(ast, activation=self.activation)


class _MeteredRunner(celpy.InterpretedRunner):
    def evaluate(self, context: Any) -> Any:
        return _MeteredEvaluator(ast=self.ast, activation=self.new_activation()).evaluate(context)


def _metered(expression: str, activation: dict[str, Any], limit: int) -> tuple[Any, int]:
    """Evaluate ``expression`` with a meter of ``limit``: (result, units used); raises :class:`_CostLimit`."""
    meter = _Meter(limit)
    token = _METER.set(meter)
    try:
        return compiled(expression).evaluate(activation), meter.used
    finally:
        _METER.reset(token)


def _charged(operator: str) -> Callable[[Any, Any], Any]:
    """A CEL operator that walks its operands (``in``, ``==``, ``!=``), charging the meter their size first."""
    base: Callable[[Any, Any], Any] = base_functions[operator]

    def run(left: Any, right: Any) -> Any:
        meter = _METER.get()
        if meter is not None:
            meter.used += _size(right)
            if meter.used > meter.limit:
                raise _CostLimit
        return base(left, right)

    return run


_ENV = celpy.Environment(runner_class=_MeteredRunner)
_FUNCTIONS = {
    **_library(),
    **cel_library.functions(),
    **{op: _charged(op) for op in ("_in_", "_==_", "_!=_")},
}


@lru_cache(maxsize=1024)
def compiled(expression: str) -> Any:
    """The program for an expression (cached by text); raises ValueError with the parser's words."""
    try:
        return _ENV.program(_ENV.compile(expression), functions=_FUNCTIONS)
    except Exception as exc:  # cel-python's parse and compile errors share no base class but Exception
        raise ValueError(f"compilation failed: {exc}".strip()) from exc


def compile_errors(schema: Any, path: str, uncorrelatable: str = "") -> list[FieldError]:
    """Every rule in a CRD version's schema that does not compile (422 at CRD creation, as upstream), and every
    transition rule (one that reads ``oldSelf``) where old and new values cannot be correlated: under the items of
    a list that is not ``x-kubernetes-list-type: map`` or the fields of an ``x-kubernetes-map-type: atomic``
    object; ``uncorrelatable`` is the highest such ancestor's path, which upstream's message names."""
    out: list[FieldError] = []
    if not isinstance(schema, Mapping):
        return out
    for i, rule in enumerate(schema.get("x-kubernetes-validations") or []):
        where = f"{path}.x-kubernetes-validations[{i}]"
        if not isinstance(rule, Mapping) or not isinstance(rule.get("rule"), str):
            out.append(errors.required(f"{where}.rule"))
            continue
        for key in ("rule", "messageExpression"):
            text = rule.get(key)
            if isinstance(text, str):
                try:
                    compiled(text)
                except ValueError as exc:
                    out.append(errors.invalid_value(f"{where}.{key}", text, str(exc)))
        if rule.get("reason") and rule.get("reason") not in _REASONS:
            out.append(errors.not_supported(f"{where}.reason", rule.get("reason"), list(_REASONS)))
        uses_old_self = bool(_OLD_SELF.search(str(rule.get("rule") or "")))
        if rule.get("optionalOldSelf") is not None and not uses_old_self:
            out.append(
                errors.invalid_value(
                    f"{where}.optionalOldSelf",
                    rule.get("optionalOldSelf"),
                    "may not be set if oldSelf is not used in rule",
                )
            )
        if uncorrelatable and uses_old_self:
            out.append(
                errors.invalid_value(
                    f"{where}.rule",
                    rule.get("rule"),
                    f"oldSelf cannot be used on the uncorrelatable portion of the schema within {uncorrelatable}",
                )
            )
    fields_under = uncorrelatable or (path if schema.get("x-kubernetes-map-type") == "atomic" else "")
    for key, sub in (schema.get("properties") or {}).items():
        out += compile_errors(sub, f"{path}.properties[{key}]", fields_under)
    out += compile_errors(schema.get("additionalProperties"), f"{path}.additionalProperties", fields_under)
    items_under = uncorrelatable or (path if schema.get("x-kubernetes-list-type") != "map" else "")
    out += compile_errors(schema.get("items"), f"{path}.items", items_under)
    return out


class _Budget:
    def __init__(self) -> None:
        self.left = METERED_OBJECT_LIMIT
        self.exhausted = False


def validate(schema: Any, value: Any, old: Any, path: str = "") -> list[FieldError]:
    """Every failed rule of ``schema``'s nodes over ``value`` (``old``: the stored value, for transition rules)."""
    return _walk(schema, value, old, path, _Budget())


def _walk(schema: Any, value: Any, old: Any, path: str, budget: _Budget) -> list[FieldError]:
    if not isinstance(schema, Mapping) or value is None or budget.exhausted:
        return []
    out = _node_rules(schema, value, old, path, budget)
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        for key, child in value.items():
            sub = props.get(key, extra if isinstance(extra, Mapping) else None)
            child_old = old.get(key) if isinstance(old, dict) else None
            out += _walk(sub, child, child_old, f"{path}.{key}" if path else str(key), budget)
    elif isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        olds = _old_items(schema, value, old)
        for i, item in enumerate(value):
            out += _walk(schema["items"], item, olds[i], f"{path}[{i}]", budget)
    return out


def _old_items(schema: Mapping[str, Any], value: list[Any], old: Any) -> list[Any]:
    """Each item's old self, as upstream correlates them: the old item with the same ``x-kubernetes-list-map-keys``
    values in an ``x-kubernetes-list-type: map`` list; none in any other list (atomic lists and sets are not
    correlated, so transition rules under their items are refused when the CRD is written)."""
    keys = schema.get("x-kubernetes-list-map-keys")
    if (
        schema.get("x-kubernetes-list-type") != "map"
        or not isinstance(old, list)
        or not isinstance(keys, list)
    ):
        return [None] * len(value)

    def key_of(item: Any) -> tuple[str, ...] | None:
        if not isinstance(item, dict):
            return None
        return tuple(json.dumps(item.get(k), sort_keys=True) for k in keys)

    by_key = {key_of(item): item for item in old if key_of(item) is not None}
    return [by_key.get(key_of(item)) if key_of(item) is not None else None for item in value]


def _node_rules(
    schema: Mapping[str, Any], value: Any, old: Any, path: str, budget: _Budget
) -> list[FieldError]:
    out: list[FieldError] = []
    rules = schema.get("x-kubernetes-validations") or []
    where = path or "<root>"
    type_name = str(schema.get("type") or "object")
    for rule in rules:
        if not isinstance(rule, Mapping) or not isinstance(rule.get("rule"), str):
            continue
        text = str(rule["rule"])
        transition = "oldSelf" in text
        optional = transition and rule.get("optionalOldSelf") is True
        if transition and old is None and not optional:
            continue  # a transition rule runs on updates of a value that existed before
        activation = {**cel_library.NAMES, "self": json_to_cel(value)}
        if optional:  # runs on creates too: oldSelf is an optional (hasValue, value, orValue)
            activation["oldSelf"] = cel_library.Optional(
                None if old is None else json_to_cel(old), old is not None
            )
        elif transition:
            activation["oldSelf"] = json_to_cel(old)
        limit = min(METERED_CALL_LIMIT, budget.left)
        try:
            result, used = _metered(text, activation, limit)
        except _CostLimit:
            budget.exhausted = True
            if limit < METERED_CALL_LIMIT:
                detail = "validation failed due to running out of cost budget, no further validation rules will be run"
            else:
                detail = (
                    "'operation cancelled: actual cost limit exceeded': no further validation rules will be run due"
                    f" to call cost exceeds limit for rule: {_rule_text(rule)}"
                )
            out.append(errors.invalid_value(where, type_name, detail))
            break
        except Exception as exc:  # an evaluation error (no such key, a division by zero) fails the rule
            out.append(errors.invalid_value(where, type_name, f"{_message(rule, activation)}: {exc}"))
            continue
        budget.left -= used
        if result is True or (isinstance(result, celtypes.BoolType) and bool(result)):
            continue
        out.append(_failure(rule, where, type_name, _message(rule, activation)))
    return out


def _rule_text(rule: Mapping[str, Any]) -> str:
    """Upstream's ``ruleErrorString``: the rule's message, else the rule."""
    return str(rule.get("message") or rule.get("rule") or "").strip()


def _message(rule: Mapping[str, Any], activation: dict[str, Any]) -> str:
    expression = rule.get("messageExpression")
    if isinstance(expression, str):
        try:
            text, _ = _metered(expression, activation, METERED_CALL_LIMIT)
            if isinstance(text, str) and text.strip():
                return str(text)
        except (Exception, _CostLimit):  # upstream falls back to message when messageExpression fails
            pass
    if rule.get("message"):
        return str(rule["message"])
    return f"failed rule: {rule.get('rule')}"


def _failure(rule: Mapping[str, Any], where: str, type_name: str, message: str) -> FieldError:
    field_path = str(rule.get("fieldPath") or "")
    if field_path:
        where = (where if where != "<root>" else "") + field_path
        where = where.lstrip(".")
    reason = rule.get("reason") or "FieldValueInvalid"
    if reason == "FieldValueForbidden":
        return errors.forbidden_field(where, message)
    if reason == "FieldValueRequired":
        return errors.required(where, message)
    if reason == "FieldValueDuplicate":
        return errors.duplicate(where, type_name)
    return errors.invalid_value(where, type_name, message)
