"""Shared arithmetic and args-decoding helpers for the in-tree plugins.

Why a module of its own: every score plugin must reproduce Go's integer arithmetic bit for bit (``int64`` division
truncates toward zero, ``math.Round`` rounds half away from zero, float->int truncates), and every args type must
decode strictly and report problems in upstream's ``field.Error`` wording. Doing that once here keeps the plugin
modules short and the wording identical everywhere (upstream ``plugins/helper/normalize_score.go`` and
``apimachinery/pkg/util/validation/field/errors.go``).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Generic, TypeVar

from berth.kube import selectors
from berth.kube.durations import parse_duration
from berth.schedule.framework.interface import (
    MAX_NODE_SCORE,
    SUCCESS,
    CycleState,
    NodeScore,
    QueueingHint,
    ScorePlugin,
    Status,
)
from berth.schedule.framework.types import NodeInfo, PodInfo

ARGS_API_VERSION = "kubescheduler.config.k8s.io/v1"

# --- Go arithmetic -------------------------------------------------------------------------------------------------


def go_div(a: int, b: int) -> int:
    """Go ``int64`` division: truncates toward zero (Python ``//`` floors, which differs for negatives)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def go_round(x: float) -> int:
    """Go ``math.Round``: half away from zero (Python ``round`` is half-to-even)."""
    return math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)


def default_normalize_score(
    scores: list[NodeScore], reverse: bool, max_priority: int = MAX_NODE_SCORE
) -> None:
    """Upstream ``DefaultNormalizeScore``: scale so the best node gets ``max_priority``; ``reverse`` flips it.

    With every score 0: reverse gives all ``max_priority``, otherwise scores stay 0.
    """
    highest = max((s.score for s in scores), default=0)
    if highest == 0:
        if reverse:
            for s in scores:
                s.score = max_priority
        return
    for s in scores:
        scaled = go_div(max_priority * s.score, highest)
        s.score = max_priority - scaled if reverse else scaled


# --- field.Error wording -------------------------------------------------------------------------------------------


def go_value(value: Any) -> str:
    """How ``field.Error`` prints a bad value: strings quoted, numbers/bools plain, nil as ``null``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)
    return json.dumps(value, sort_keys=True, default=str)


def invalid(path: str, value: Any, detail: str) -> str:
    return f"{path}: Invalid value: {go_value(value)}: {detail}"


def required(path: str, detail: str = "") -> str:
    return f"{path}: Required value: {detail}" if detail else f"{path}: Required value"


def forbidden(path: str, detail: str) -> str:
    return f"{path}: Forbidden: {detail}"


def duplicate(path: str, value: Any) -> str:
    return f"{path}: Duplicate value: {go_value(value)}"


def not_supported(path: str, value: Any, supported: Iterable[str]) -> str:
    choices = ", ".join(json.dumps(s) for s in supported)
    return f"{path}: Unsupported value: {go_value(value)}: supported values: {choices}"


def unknown_field(path: str, key: str) -> str:
    return f'{path}: unknown field "{key}"'


# --- qualified names (metav1validation.ValidateLabelName) ----------------------------------------------------------

_NAME_PART = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def qualified_name_problems(value: str, path: str) -> list[str]:
    """Problems with a label key / qualified name (``prefix/name``), in upstream wording."""
    parts = value.split("/")
    if len(parts) == 1:
        prefix, name = "", parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            return [invalid(path, value, "prefix part must be non-empty")]
    else:
        return [
            invalid(
                path,
                value,
                "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and "
                "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
                "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix "
                "and '/' (e.g. 'example.com/MyName')",
            )
        ]
    out: list[str] = []
    if prefix and (len(prefix) > 253 or not _DNS1123_SUBDOMAIN.match(prefix)):
        out.append(
            invalid(
                path,
                value,
                "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                "'-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex "
                "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            )
        )
    if not name:
        out.append(invalid(path, value, "name part must be non-empty"))
    elif len(name) > 63:
        out.append(invalid(path, value, "name part must be no more than 63 characters"))
    elif not _NAME_PART.match(name):
        out.append(
            invalid(
                path,
                value,
                "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
                "an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
                "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            )
        )
    return out


def label_value_problems(value: str, path: str) -> list[str]:
    if len(value) > 63:
        return [invalid(path, value, "must be no more than 63 characters")]
    if not _LABEL_VALUE.match(value):
        return [
            invalid(
                path,
                value,
                "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
                "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
                "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
            )
        ]
    return []


_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


# --- label selectors (metav1.LabelSelectorAsSelector) -------------------------------------------------------------


def go_quote(value: str) -> str:
    return json.dumps(value)


def _requirement_error(key: str, values: Sequence[str], op: str) -> str | None:
    """The first problem ``labels.NewRequirement`` reports for one requirement, in its wording (paths relative)."""
    key_problems = qualified_name_problems(key, "key")
    if key_problems:
        return key_problems[0]
    shown = "[]string{" + ", ".join(go_quote(v) for v in values) + "}"
    if op in ("In", "NotIn") and not values:
        return f"values: Invalid value: {shown}: for 'in', 'notin' operators, values set can't be empty"
    if op in ("Exists", "DoesNotExist") and values:
        return f"values: Invalid value: {shown}: values set must be empty for exists and does not exist"
    for i, v in enumerate(values):
        value_problems = label_value_problems(v, f"values[{i}]")
        if value_problems:
            return value_problems[0]
    return None


def label_selector_as_selector(raw: Any) -> tuple[selectors.Selector | None, str | None]:
    """``metav1.LabelSelectorAsSelector``: (selector, error).

    ``None`` (a nil selector) gives ``(None, None)``: it matches nothing. ``{}`` gives the empty selector, which
    matches everything. A malformed selector gives ``(None, message)`` with upstream's message; callers turn it
    into the status upstream returns, never an exception.
    """
    if raw is None:
        return None, None
    if not isinstance(raw, Mapping):
        return None, f"invalid label selector: {go_value(raw)}"
    match_labels = raw.get("matchLabels") or {}
    expressions = raw.get("matchExpressions") or []
    if not isinstance(match_labels, Mapping) or not isinstance(expressions, list):
        return None, "invalid label selector: matchLabels must be a map and matchExpressions a list"
    if not match_labels and not expressions:
        return selectors.EVERYTHING, None
    reqs: list[selectors.Requirement] = []
    for k, v in match_labels.items():
        err = _requirement_error(str(k), [str(v)], "In")
        if err:
            return None, err
        reqs.append(selectors.Requirement(str(k), "In", (str(v),)))
    for expr in expressions:
        if not isinstance(expr, Mapping):
            return None, f"invalid label selector requirement: {go_value(expr)}"
        op = str(expr.get("operator") or "")
        if op not in _SELECTOR_OPERATORS:
            return None, f"{go_quote(op)} is not a valid label selector operator"
        key = str(expr.get("key") or "")
        raw_values = expr.get("values") or ()
        if not isinstance(raw_values, (list, tuple)):
            return None, f"values: Invalid value: {go_value(raw_values)}: must be a list"
        values = tuple(str(v) for v in raw_values)
        err = _requirement_error(key, values, op)
        if err:
            return None, err
        reqs.append(selectors.Requirement(key, op, values))
    return selectors.Selector(tuple(reqs)), None


def selector_matches(sel: selectors.Selector | None, labels: Mapping[str, str]) -> bool:
    """Nil matches nothing, empty matches everything."""
    return sel is not None and sel.matches(labels)


# --- strict args reading -------------------------------------------------------------------------------------------


class ArgsReader:
    """Reads one JSON object strictly: typed getters record problems; :meth:`finish` reports unknown fields.

    ``apiVersion``/``kind`` are accepted at the top level of plugin args (as upstream's typed args allow) and must
    name this plugin's args kind.
    """

    def __init__(self, raw: Any, path: str, problems: list[str], kind: str | None = None) -> None:
        self.path = path
        self.problems = problems
        self._seen: set[str] = set()
        if raw is None:
            raw = {}
        if not isinstance(raw, Mapping):
            problems.append(invalid(path, raw, "expected an object"))
            raw = {}
        self.raw: Mapping[str, Any] = raw
        if kind is not None:
            api_version = self.raw.get("apiVersion")
            if api_version is not None:
                self._seen.add("apiVersion")
                if api_version != ARGS_API_VERSION:
                    problems.append(not_supported(f"{path}.apiVersion", api_version, [ARGS_API_VERSION]))
            got_kind = self.raw.get("kind")
            if got_kind is not None:
                self._seen.add("kind")
                if got_kind != kind:
                    problems.append(not_supported(f"{path}.kind", got_kind, [kind]))

    def at(self, key: str) -> str:
        return f"{self.path}.{key}"

    def has(self, key: str) -> bool:
        return key in self.raw and self.raw[key] is not None

    def _get(self, key: str) -> Any:
        self._seen.add(key)
        return self.raw.get(key)

    def get_int(self, key: str, default: int) -> int:
        v = self._get(key)
        if v is None:
            return default
        if (
            isinstance(v, bool)
            or not isinstance(v, (int, float))
            or (isinstance(v, float) and not v.is_integer())
        ):
            self.problems.append(invalid(self.at(key), v, "must be an integer"))
            return default
        return int(v)

    def get_str(self, key: str, default: str) -> str:
        v = self._get(key)
        if v is None:
            return default
        if not isinstance(v, str):
            self.problems.append(invalid(self.at(key), v, "must be a string"))
            return default
        return v

    def get_bool(self, key: str, default: bool) -> bool:
        v = self._get(key)
        if v is None:
            return default
        if not isinstance(v, bool):
            self.problems.append(invalid(self.at(key), v, "must be a boolean"))
            return default
        return v

    def get_list(self, key: str) -> list[Any] | None:
        """The list at ``key``; None when absent (or wrong type, recorded)."""
        v = self._get(key)
        if v is None:
            return None
        if not isinstance(v, list):
            self.problems.append(invalid(self.at(key), v, "must be a list"))
            return None
        return v

    def get_str_list(self, key: str) -> tuple[str, ...]:
        items = self.get_list(key) or []
        out: list[str] = []
        for i, item in enumerate(items):
            if not isinstance(item, str):
                self.problems.append(invalid(f"{self.at(key)}[{i}]", item, "must be a string"))
                continue
            out.append(item)
        return tuple(out)

    def get_mapping(self, key: str) -> Mapping[str, Any] | None:
        v = self._get(key)
        if v is None:
            return None
        if not isinstance(v, Mapping):
            self.problems.append(invalid(self.at(key), v, "must be an object"))
            return None
        return v

    def get_duration(self, key: str, default: float) -> float:
        """Seconds of a metav1.Duration field (Go duration string)."""
        v = self._get(key)
        if v is None:
            return default
        parsed = parse_duration(v) if isinstance(v, str) else None
        if parsed is None:
            self.problems.append(invalid(self.at(key), v, 'must be a duration such as "10s" or "1m30s"'))
            return default
        return parsed

    def finish(self) -> None:
        for key in self.raw:
            if key not in self._seen:
                self.problems.append(unknown_field(self.path, str(key)))


def resource_specs_to_dict(resources: Sequence[tuple[str, int]]) -> list[dict[str, Any]]:
    return [{"name": n, "weight": w} for n, w in resources]


def decode_resource_specs(
    items: list[Any] | None, path: str, problems: list[str]
) -> tuple[tuple[str, int], ...] | None:
    """``[{name, weight}]`` lists (NodeResourcesFit/BalancedAllocation ``resources``); weight 0/unset stays 0."""
    if items is None:
        return None
    out: list[tuple[str, int]] = []
    for i, item in enumerate(items):
        r = ArgsReader(item, f"{path}[{i}]", problems)
        name = r.get_str("name", "")
        weight = r.get_int("weight", 0)
        r.finish()
        out.append((name, weight))
    return tuple(out)


def score_each(
    plugin: ScorePlugin, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
) -> tuple[list[int], Status]:
    """A batch ``score_nodes`` answered node by node with ``plugin.score`` (the fallback of the vectorised forms):
    the scores up to the first failure, and that failure's status."""
    out: list[int] = []
    for node in nodes:
        score, status = plugin.score(state, pod, node)
        if not status.is_success:
            return out, status
        out.append(score)
    return out, SUCCESS


MAX_CUSTOM_PRIORITY_SCORE = 10


def decode_shape(items: list[Any], path: str, problems: list[str]) -> tuple[tuple[int, int], ...]:
    """``[{utilization, score}]`` points of a RequestedToCapacityRatio-style shape (decoding only)."""
    out: list[tuple[int, int]] = []
    for i, item in enumerate(items):
        r = ArgsReader(item, f"{path}[{i}]", problems)
        out.append((r.get_int("utilization", 0), r.get_int("score", 0)))
        r.finish()
    return tuple(out)


def shape_problems(shape: Sequence[tuple[int, int]], path: str) -> list[str]:
    """Upstream ``validateFunctionShape``: non-empty, strictly increasing utilization, ranges [0,100] / [0,10]."""
    if not shape:
        return [required(path, "at least one point must be specified")]
    out: list[str] = []
    for i in range(1, len(shape)):
        if shape[i - 1][0] >= shape[i][0]:
            out.append(
                invalid(
                    f"{path}[{i}].utilization",
                    shape[i][0],
                    "values must be sorted in increasing order",
                )
            )
            break
    for i, (utilization, score) in enumerate(shape):
        if not 0 <= utilization <= 100:
            out.append(invalid(f"{path}[{i}].utilization", utilization, "not in valid range [0, 100]"))
        if not 0 <= score <= MAX_CUSTOM_PRIORITY_SCORE:
            out.append(
                invalid(f"{path}[{i}].score", score, f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]")
            )
    return out


def shape_to_list(shape: Sequence[tuple[int, int]]) -> list[dict[str, int]]:
    return [{"utilization": u, "score": s} for u, s in shape]


def go_shape_value(shape: Sequence[tuple[int, int]]) -> str:
    """How ``field.Invalid`` prints a shape (Go ``%#v`` of ``[]config.UtilizationShapePoint``)."""
    points = ", ".join(f"config.UtilizationShapePoint{{Utilization:{u}, Score:{s}}}" for u, s in shape)
    return f"[]config.UtilizationShapePoint{{{points}}}"


# --- queueing hints ------------------------------------------------------------------------------------------------

_T = TypeVar("_T")


class LastParsed(Generic[_T]):
    """``build(obj)`` remembered for the last object seen (by identity, and holding it so its id is not reused).

    Why: the queue asks a plugin's queueing hint about one event once per pod it rejected, always with the same
    raw old/new objects, so parsing them (quantities, host ports) once per event instead of once per pod keeps
    hints cheap. Raw objects are never changed in place once handed to the scheduler (its cache holds them too).
    """

    __slots__ = ("_build", "_last")

    def __init__(self, build: Callable[[Any], _T]) -> None:
        self._build = build
        self._last: tuple[Any, _T] | None = None

    def __call__(self, obj: Any) -> _T:
        last = self._last
        if last is not None and last[0] is obj:
            return last[1]
        value = self._build(obj)
        self._last = (obj, value)
        return value


def raw_pod_uid(pod: Mapping[str, Any]) -> str:
    """A raw pod's UID as :class:`PodInfo` reads it (``namespace/name`` when it has none), to tell whether an
    event is about the pod a hint is asked for (upstream compares ``pod.UID``)."""
    meta = pod.get("metadata") or {}
    return str(meta.get("uid") or f"{meta.get('namespace') or 'default'}/{meta.get('name') or ''}")


def raw_node_name(pod: Mapping[str, Any]) -> str:
    return str((pod.get("spec") or {}).get("nodeName") or "")


def raw_nominated_node_name(pod: Mapping[str, Any]) -> str:
    return str((pod.get("status") or {}).get("nominatedNodeName") or "")


def queue_if(condition: bool) -> QueueingHint:
    return QueueingHint.QUEUE if condition else QueueingHint.QUEUE_SKIP
