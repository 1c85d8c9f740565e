"""Custom resources against their CRD version's structural schema: pruning (fields the schema does not declare go,
unless ``x-kubernetes-preserve-unknown-fields``), defaulting (``default``) and OpenAPI v3 validation with
kube-openapi's messages (type, nullable, required, enum, bounds, lengths, pattern, item counts, list-map key
uniqueness, int-or-string, embedded resources) and the CEL rules of ``x-kubernetes-validations``
(:mod:`berth.cluster.cel_rules`)."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from berth.cluster import cel_rules, errors
from berth.cluster.errors import FieldError
from berth.cluster.names import validate_metadata

Obj = dict[str, Any]

# -- custom resources: prune, default, validate ---------------------------------------------------------------------

_ROOT_META = ("apiVersion", "kind", "metadata")
_JSON_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
}


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def prune(
    value: Any, s: Mapping[str, Any], root: bool = False, path: str = "", dropped: list[str] | None = None
) -> Any:
    """Drop fields the structural schema does not declare, and nulls of non-nullable fields (in a copy). The paths
    of dropped fields go into ``dropped`` (what ``fieldValidation`` reports as unknown fields)."""
    if isinstance(value, dict):
        if s.get("x-kubernetes-preserve-unknown-fields") is True and not s.get("properties"):
            return value
        props = s.get("properties") or {}
        extra = s.get("additionalProperties")
        out: dict[str, Any] = {}
        for key, child in value.items():
            where = f"{path}.{key}" if path else str(key)
            if root and key in _ROOT_META:
                out[key] = child
            elif key in props:
                if child is None and not (
                    isinstance(props[key], Mapping) and props[key].get("nullable") is True
                ):
                    continue  # upstream drops nulls of non-nullable fields before defaulting
                out[key] = prune(child, props[key], path=where, dropped=dropped)
            elif isinstance(extra, Mapping):
                out[key] = prune(child, extra, path=where, dropped=dropped)
            elif (
                extra is True
                or s.get("x-kubernetes-preserve-unknown-fields") is True
                or (s.get("x-kubernetes-embedded-resource") is True and key in _ROOT_META)
            ):
                out[key] = child
            elif dropped is not None:
                dropped.append(where)
        return out
    if isinstance(value, list):
        items = s.get("items")
        if not isinstance(items, Mapping):
            return value
        return [prune(v, items, path=f"{path}[{i}]", dropped=dropped) for i, v in enumerate(value)]
    return value


def apply_defaults(value: Any, s: Mapping[str, Any]) -> Any:
    """Fill ``default`` values of missing properties (recursively, in a copy)."""
    if isinstance(value, dict):
        out = dict(value)
        props = s.get("properties") or {}
        for key, sub in props.items():
            if key not in out and isinstance(sub, Mapping) and "default" in sub:
                out[key] = copy.deepcopy(sub["default"])
            if key in out and isinstance(sub, Mapping):
                out[key] = apply_defaults(out[key], sub)
        extra = s.get("additionalProperties")
        if isinstance(extra, Mapping):
            for key in out:
                if key not in props:
                    out[key] = apply_defaults(out[key], extra)
        return out
    if isinstance(value, list):
        items = s.get("items")
        return [apply_defaults(v, items) for v in value] if isinstance(items, Mapping) else value
    return value


def validate_schema(value: Any, s: Mapping[str, Any], path: str) -> list[FieldError]:
    """OpenAPI v3 (structural subset) validation with kube-openapi's messages: the type first (a value of the
    wrong type gets that one message), then every keyword that applies to the value's kind, then ``allOf``,
    ``anyOf`` and ``oneOf``."""
    where = path or "<root>"
    if value is None:
        if s.get("nullable") is True or not s or not s.get("type"):
            return []
        return [errors.invalid_value(where, None, f'{where} in body must be of type {s["type"]}: "null"')]
    wrong = _type_problem(value, s, where)
    if wrong is not None:
        return [wrong]
    out = _enum_problems(value, s, where)
    if isinstance(value, bool):
        pass
    elif isinstance(value, int | float):
        out += _number_problems(value, s, where)
    elif isinstance(value, str):
        out += _string_problems(value, s, where)
    elif isinstance(value, list):
        out += _array_problems(value, s, path, where)
    elif isinstance(value, dict):
        out += _object_problems(value, s, path, where)
    return out + _combinator_problems(value, s, path, where)


def _type_problem(value: Any, s: Mapping[str, Any], where: str) -> FieldError | None:
    stype = s.get("type")
    if s.get("x-kubernetes-int-or-string") is True:
        if isinstance(value, str) or _JSON_TYPES["integer"](value):
            return None
        stype = "integer,string"
    elif not isinstance(stype, str) or stype not in _JSON_TYPES or _JSON_TYPES[stype](value):
        return None
    kind = _json_type(value)
    return errors.invalid_value(where, kind, f'{where} in body must be of type {stype}: "{kind}"')


def _enum_problems(value: Any, s: Mapping[str, Any], where: str) -> list[FieldError]:
    enum = s.get("enum")
    if isinstance(enum, list) and value not in enum:
        return [errors.not_supported(where, value, [str(e) if not isinstance(e, str) else e for e in enum])]
    return []


def _number_problems(value: float, s: Mapping[str, Any], where: str) -> list[FieldError]:
    out: list[FieldError] = []
    if "maximum" in s:
        bound = s["maximum"]
        if value > bound or (s.get("exclusiveMaximum") and value == bound):
            op = "less than" if s.get("exclusiveMaximum") else "less than or equal to"
            out.append(errors.invalid_value(where, value, f"{where} in body should be {op} {bound}"))
    if "minimum" in s:
        bound = s["minimum"]
        if value < bound or (s.get("exclusiveMinimum") and value == bound):
            op = "greater than" if s.get("exclusiveMinimum") else "greater than or equal to"
            out.append(errors.invalid_value(where, value, f"{where} in body should be {op} {bound}"))
    return out


def _string_problems(value: str, s: Mapping[str, Any], where: str) -> list[FieldError]:
    out: list[FieldError] = []
    if "maxLength" in s and len(value) > s["maxLength"]:
        out.append(
            errors.FieldError(
                errors.CauseType.TOO_LONG, where, errors.OMIT, f"may not be more than {s['maxLength']} bytes"
            )
        )
    if "minLength" in s and len(value) < s["minLength"]:
        out.append(
            errors.invalid_value(
                where, value, f"{where} in body should be at least {s['minLength']} chars long"
            )
        )
    pattern = s.get("pattern")
    if isinstance(pattern, str) and not re.search(pattern, value):
        out.append(errors.invalid_value(where, value, f"{where} in body should match '{pattern}'"))
    return out


def _array_problems(value: list[Any], s: Mapping[str, Any], path: str, where: str) -> list[FieldError]:
    out: list[FieldError] = []
    if "maxItems" in s and len(value) > s["maxItems"]:
        out.append(
            errors.FieldError(
                errors.CauseType.TOO_MANY, where, len(value), f"must have at most {s['maxItems']} items"
            )
        )
    if "minItems" in s and len(value) < s["minItems"]:
        out.append(
            errors.invalid_value(
                where, len(value), f"{where} in body should have at least {s['minItems']} items"
            )
        )
    items = s.get("items")
    if isinstance(items, Mapping):
        for i, item in enumerate(value):
            out += validate_schema(item, items, f"{path}[{i}]")
    return out + _list_uniqueness(value, s, path)


def _object_problems(value: dict[str, Any], s: Mapping[str, Any], path: str, where: str) -> list[FieldError]:
    props = s.get("properties") or {}
    out = [
        errors.required(f"{path}.{key}" if path else key)
        for key in s.get("required") or []
        if key not in value
    ]
    extra = s.get("additionalProperties")
    for key, child in value.items():
        child_path = f"{path}.{key}" if path else str(key)
        if key in props and isinstance(props[key], Mapping):
            out += validate_schema(child, props[key], child_path)
        elif isinstance(extra, Mapping):
            out += validate_schema(child, extra, child_path)
    if "maxProperties" in s and len(value) > s["maxProperties"]:
        out.append(
            errors.FieldError(
                errors.CauseType.TOO_MANY, where, len(value), f"must have at most {s['maxProperties']} items"
            )
        )
    return out


def _combinator_problems(value: Any, s: Mapping[str, Any], path: str, where: str) -> list[FieldError]:
    out: list[FieldError] = []
    for sub in s.get("allOf") or []:
        if isinstance(sub, Mapping):
            out += validate_schema(value, sub, path)
    for sub_key in ("anyOf", "oneOf"):
        options = [o for o in s.get(sub_key) or [] if isinstance(o, Mapping)]
        if options:
            passing = sum(1 for o in options if not validate_schema(value, o, path))
            if passing == 0 or (sub_key == "oneOf" and passing > 1):
                what = (
                    "must validate one and only one schema (oneOf)"
                    if sub_key == "oneOf"
                    else "must validate at least one schema (anyOf)"
                )
                out.append(errors.invalid_value(where, _short(value), f"{where} in body {what}"))
    return out


def _short(value: Any) -> Any:
    return value if not isinstance(value, dict | list) else json.dumps(value, sort_keys=True)[:80]


def _list_uniqueness(value: list[Any], s: Mapping[str, Any], path: str) -> list[FieldError]:
    list_type = s.get("x-kubernetes-list-type")
    out: list[FieldError] = []
    if list_type == "set":
        seen: list[Any] = []
        for i, item in enumerate(value):
            if item in seen:
                out.append(errors.duplicate(f"{path}[{i}]", item))
            seen.append(item)
    elif list_type == "map":
        keys = s.get("x-kubernetes-list-map-keys") or []
        seen_keys: list[tuple[Any, ...]] = []
        for i, item in enumerate(value):
            if not isinstance(item, Mapping):
                continue
            ident = tuple(item.get(k) for k in keys)
            if ident in seen_keys:
                out.append(errors.duplicate(f"{path}[{i}]", {k: item.get(k) for k in keys}))
            seen_keys.append(ident)
    return out


def admit_custom_resource(
    obj: Mapping[str, Any],
    open_api_schema: Mapping[str, Any] | None,
    dropped: list[str] | None = None,
    old: Mapping[str, Any] | None = None,
) -> tuple[Obj, list[FieldError]]:
    """Prune, default and validate a custom resource against its CRD version's ``openAPIV3Schema``.

    Returns the object to store and every problem (metadata included); the paths of the unknown fields pruning
    dropped go into ``dropped``. A version without a schema only gets the metadata checks.
    """
    stored: Obj = copy.deepcopy(dict(obj))
    problems = validate_metadata(stored)
    if not open_api_schema:
        return stored, problems
    s = dict(open_api_schema)
    stored = prune(stored, s, root=True, dropped=dropped)
    stored = apply_defaults(stored, s)
    body = {k: v for k, v in stored.items() if k not in _ROOT_META}
    body_schema = dict(s)
    body_schema["properties"] = {k: v for k, v in (s.get("properties") or {}).items() if k not in _ROOT_META}
    body_schema["required"] = [r for r in s.get("required") or [] if r not in _ROOT_META]
    schema_problems = validate_schema(body, body_schema, "")
    problems += schema_problems
    if not schema_problems:  # CEL rules see only values of their declared types
        old_body = {k: v for k, v in (old or {}).items() if k not in _ROOT_META} if old is not None else None
        problems += cel_rules.validate(body_schema, body, old_body)
    return stored, problems


def field_errors_text(problems: Iterable[FieldError]) -> list[str]:
    """Each problem as ``<field>: <body>`` (for logs and CLI output)."""
    return [p.error() for p in problems]
