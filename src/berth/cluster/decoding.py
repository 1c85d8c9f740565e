"""What a body must be before it is an object: ``fieldValidation``'s unknown fields (against the v1.35 schema table
for built-ins) and duplicate fields (of any JSON body), as a 400 ``strict decoding error`` under ``Strict`` or
``Warning`` headers under ``Warn``, and the 400 Go's JSON decoder gives for a value of the wrong JSON type or Secret
data that is not base64."""

from __future__ import annotations

import base64
import binascii
import decimal
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from berth.cluster import errors, jsonfast, request_warnings, schema
from berth.kube import yamlio

Obj = dict[str, Any]

# -- strict field validation ----------------------------------------------------------------------------------------


def unknown_fields(
    obj: Any, node: schema.Node | None = None, path: str = "", drop: bool = False
) -> list[str]:
    """Paths of fields the schema does not declare (``fieldValidation``), e.g. ``spec.replicass``; ``drop``
    removes them from ``obj`` as decoding into Go types does (a built-in never stores an unknown field)."""
    if node is None:
        if not isinstance(obj, Mapping):
            return []
        node = schema.for_kind(str(obj.get("apiVersion") or ""), str(obj.get("kind") or ""))
        if node is None:
            return []
    out: list[str] = []
    _unknown(obj, node, path, out, drop)
    return out


def _unknown(obj: Any, node: schema.Node, path: str, out: list[str], drop: bool = False) -> None:
    kind = type(obj)
    if kind is dict:
        if node.preserve_unknown_fields or node.is_any or (node.embedded_resource and not node.is_struct):
            return
        props = node.properties
        open_map = node.is_map or isinstance(node.schema.get("additionalProperties"), Mapping)
        gone: list[str] = []
        for key, value in obj.items():
            if node.is_struct and key not in props and not open_map:
                out.append(f"{path}.{key}" if path else str(key))
                gone.append(key)
                continue
            if type(value) in (dict, list):
                _unknown(value, node.field(key), f"{path}.{key}" if path else str(key), out, drop)
        if drop:
            for key in gone:
                del obj[key]
    elif kind is list:
        item = node.items()
        for i, value in enumerate(obj):
            if type(value) in (dict, list):
                _unknown(value, item, f"{path}[{i}]", out, drop)


def strict_decoding_error(problems: Sequence[str]) -> errors.ApiError:
    """400 ``strict decoding error: unknown field "spec.x", duplicate field "spec.y"``; for a patch, the 422
    upstream's patch handler gives (:func:`patch_invalid`)."""
    text = "strict decoding error: " + ", ".join(problems)
    if _PATCH.get() is not None:
        return patch_invalid(text)
    return errors.bad_request(text)


# -- duplicate fields of a JSON body --------------------------------------------------------------------------------
# Go's strict JSON decoder (sigs.k8s.io/json) reports a key that occurs twice in one object; a Python dict keeps only
# the last value, so the HTTP layer looks at the raw body once, here, and the field-validation step reads the result.

_BODY: ContextVar[tuple[tuple[tuple[int, str], ...], dict[str, int]]] = ContextVar(
    "berth_body_duplicates", default=((), {})
)
_KEY_END = b'":'
_SPACED_KEY_END = re.compile(rb'"\s+:')


class _Pairs(list[tuple[str, Any]]):
    """One JSON object's members in document order, duplicates kept (``object_pairs_hook``)."""


def note_body(body: bytes, parsed: Any) -> None:
    """Remember the duplicate fields of the request body just decoded (``parsed``) for :func:`strict_problems`.

    Cheap for the common body: the count of ``":`` (a key's end) in the body equals that of the parsed object
    written back out unless a key was dropped (or the body spells JSON unusually); only then is the body
    parsed again keeping every member."""
    tree = _pairs_of(body, parsed) if isinstance(parsed, dict | list) else None
    if tree is None:
        _BODY.set(((), {}))
        return
    dups: list[tuple[int, str]] = []
    order: dict[str, int] = {}
    _walk(tree, "", dups, order)
    _BODY.set((tuple(dups), order))


def forget_body() -> None:
    """A new request: no body noted yet."""
    _BODY.set(((), {}))
    _PATCH.set(None)
    _YAML_BODY.set("")


_YAML_TYPES = ("application/yaml", "application/x-yaml", "text/yaml")
_YAML_ERRORS = "yaml: unmarshal errors:\n"
_YAML_BODY: ContextVar[str] = ContextVar("berth_yaml_body", default="")


def note_yaml_body(body: bytes, content_type: str) -> None:
    """Remember the keys a YAML create or update body sets twice, as go-yaml's strict decoder reports them
    (``yaml: unmarshal errors:\n  line 5: key "name" already set in map``), for :func:`strict_problems`."""
    if content_type.split(";")[0].strip().lower() not in _YAML_TYPES:
        return
    lines = _yaml_duplicates(body)
    _YAML_BODY.set(_YAML_ERRORS + "\n".join(f"  {line}" for line in lines) if lines else "")


def warn_problems(problems: Sequence[str]) -> None:
    """A ``Warning`` header per strict decoding error; go-yaml's error gives one per line (upstream's
    ``parseYAMLWarnings``)."""
    for text in problems:
        if text.startswith(_YAML_ERRORS):
            for line in text.removeprefix(_YAML_ERRORS).splitlines():
                request_warnings.warn(line.strip())
        else:
            request_warnings.warn(text)


def body_duplicates() -> list[str]:
    """Paths of the fields the current request's body sets more than once (``spec.replicas``), in order."""
    return [path for _, path in _BODY.get()[0]]


def _pairs_of(body: bytes, parsed: Any) -> Any:
    """``body`` parsed again keeping every member of each object (:class:`_Pairs`), or None when the cheap check
    of :func:`note_body` shows no key was dropped."""
    if body.count(_KEY_END) == jsonfast.dumps_bytes(parsed).count(_KEY_END) and not _SPACED_KEY_END.search(
        body
    ):
        return None
    try:
        return json.loads(body, object_pairs_hook=_Pairs)
    except ValueError:
        return None


def _walk(node: Any, path: str, dups: list[tuple[int, str]], order: dict[str, int]) -> None:
    if isinstance(node, _Pairs):
        seen: set[str] = set()
        for key, value in node:
            where = f"{path}.{key}" if path else key
            if key in seen:
                if where not in {p for _, p in dups}:
                    dups.append((len(order) + len(dups), where))
            else:
                seen.add(key)
                order.setdefault(where, len(order) + len(dups))
            _walk(value, where, dups, order)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            _walk(value, f"{path}[{i}]", dups, order)


def strict_problems(unknown: Sequence[str], custom: bool = False) -> list[str]:
    """The strict decoding errors of the current request, worded as upstream's: ``unknown field "a.b"`` and
    ``duplicate field "a.c"``. For a built-in in document order (one decoder finds both); for a custom resource
    the decoder's duplicates first, then the unknown fields pruning found (sorted), as apiextensions-apiserver.
    For a JSON, merge or strategic merge patch: the patch body's own errors, then the patched object's unknown
    fields in key order (upstream decodes the patched object from JSON with sorted keys)."""
    patch = _PATCH.get()
    if patch is not None and patch.kind != "apply":
        return [*patch.problems, *(f'unknown field "{p}"' for p in sorted(unknown, key=_path_order))]
    yaml_errors = _YAML_BODY.get()
    if yaml_errors:  # go-yaml's error first, then the unknown fields of the JSON it became (keys sorted)
        later = unknown if custom else sorted(unknown, key=_path_order)
        return [yaml_errors, *(f'unknown field "{p}"' for p in later)]
    dups, order = _BODY.get()
    unknown_text = [f'unknown field "{p}"' for p in unknown]
    if not dups:
        return unknown_text
    dup_text = [(seq, f'duplicate field "{p}"') for seq, p in dups]
    if custom:
        return [t for _, t in dup_text] + unknown_text
    last = len(order) + len(dups)
    ranked = dup_text + [(order.get(p, last), t) for p, t in zip(unknown, unknown_text, strict=True)]
    return [t for _, t in sorted(ranked, key=lambda r: r[0])]


# -- field validation of patch bodies ------------------------------------------------------------------------------
# Upstream's patch handler (apiserver endpoints/handlers/patch.go) decodes a JSON, merge or strategic merge patch
# strictly (sigs.k8s.io/json) before applying it, so a key given twice in the patch is a strict error; the patched
# object is then decoded strictly too (its unknown fields). Both together are one 422 on the field ``patch``. An
# apply patch is read as YAML: its duplicate keys are go-yaml's ``line N: key "x" already set in map``, a 400.

_JSON_PATCH_FIELDS = frozenset({"op", "path", "from", "value"})
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


@dataclass
class _Patch:
    """The patch of the current request: its type, its own strict errors, and what the error shows as the bad
    value (the decoded patch for a strategic merge patch, the patched object for the others)."""

    kind: str
    problems: tuple[str, ...]
    body: Any
    patched: Any = None


_PATCH: ContextVar[_Patch | None] = ContextVar("berth_patch_body", default=None)


def note_patch(body: bytes, patch_type: str, parsed: Any) -> None:
    """Remember the strict errors of the patch body just decoded (``parsed``), for :func:`strict_problems` and
    :func:`apply_strict_errors`: duplicate fields, and for a JSON patch the unknown fields of its operations
    (``json patch unknown field "[0].foo"``)."""
    if patch_type == "apply":
        _PATCH.set(_Patch("apply", tuple(_yaml_duplicates(body)), parsed))
        return
    problems: list[str] = []
    tree = _pairs_of(body, parsed) if isinstance(parsed, dict | list) else None
    if patch_type == "json":
        _json_patch_problems(tree if tree is not None else parsed, problems)
    elif tree is not None:
        dups: list[tuple[int, str]] = []
        _walk(tree, "", dups, {})
        problems = [f'duplicate field "{p}"' for _, p in dups]
    _PATCH.set(_Patch(patch_type, tuple(problems), parsed))


def _json_patch_problems(ops: Any, out: list[str]) -> None:
    """``json patch unknown field "[0].foo"`` / ``json patch duplicate field "[1].path"``, in document order."""
    if not isinstance(ops, list):
        return
    for i, op in enumerate(ops):
        members = list(op) if isinstance(op, _Pairs) else list(op.items()) if isinstance(op, dict) else []
        seen: set[str] = set()
        for key, value in members:
            where = f"[{i}].{key}"
            if key in seen:
                out.append(f'json patch duplicate field "{where}"')
            elif key not in _JSON_PATCH_FIELDS:
                out.append(f'json patch unknown field "{where}"')
            seen.add(key)
            dups: list[tuple[int, str]] = []
            _walk(value, where, dups, {})
            out.extend(f'json patch duplicate field "{p}"' for _, p in dups)


def patched(obj: Any) -> None:
    """The object the current JSON or merge patch made (what a strict decoding error shows as its bad value)."""
    patch = _PATCH.get()
    if patch is not None:
        patch.patched = obj


def patch_invalid(detail: str) -> errors.ApiError:
    """422 ``"" is invalid: patch: Invalid value: "<object>": <detail>`` as upstream's patch handler words a
    patched object that does not decode: the bad value is the patched object's JSON (a strategic merge patch
    shows the patch itself, printed as Go prints a map)."""
    patch = _PATCH.get()
    if patch is None or patch.kind == "strategic":
        value = go_print(patch.body if patch is not None else None)
    else:
        value = _go_json(patch.patched)
    return errors.invalid("", "", [errors.invalid_value("patch", value, detail)])


def apply_strict_errors(field_validation: str) -> None:
    """An apply patch's duplicate keys: a 400 ``error strict decoding YAML: ...`` under ``Strict``, one warning a
    key under ``Warn`` (the default), nothing under ``Ignore``."""
    patch = _PATCH.get()
    if patch is None or patch.kind != "apply" or not patch.problems or field_validation == "Ignore":
        return
    if field_validation == "Strict":
        lines = "".join(f"\n  {p}" for p in patch.problems)
        raise errors.bad_request(
            f"error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:{lines}"
        )
    warn_problems(patch.problems)


def _yaml_duplicates(body: bytes) -> list[str]:
    """go-yaml's ``line N: key "x" already set in map`` for each key an apply body sets twice (JSON is YAML)."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return []
    try:
        json.loads(text)
    except ValueError:
        found = [(d.key, d.line) for d in yamlio.duplicate_keys(text)]
    else:
        found = _json_duplicate_lines(text)
    return [f"line {line}: key {errors.go_quote(key)} already set in map" for key, line in found]


def _json_duplicate_lines(text: str) -> list[tuple[str, int]]:
    """Each key a (valid) JSON text sets twice in one object, with the 1-based line of the repeat."""
    out: list[tuple[str, int]] = []
    open_keys: list[set[str] | None] = []  # per open container: the object's keys so far (None: an array)
    expect_key = False
    i, end, line = 0, len(text), 1
    while i < end:
        ch = text[i]
        if ch == '"':
            match = _JSON_STRING.match(text, i)
            if match is None:
                return out
            key, i = json.loads(match.group()), match.end()
            if expect_key and open_keys and open_keys[-1] is not None:
                if key in open_keys[-1]:
                    out.append((key, line))
                open_keys[-1].add(key)
                expect_key = False
            continue
        if ch == "{":
            open_keys.append(set())
            expect_key = True
        elif ch == "[":
            open_keys.append(None)
        elif ch in "]}":
            open_keys.pop()
        elif ch == ",":
            expect_key = bool(open_keys) and open_keys[-1] is not None
        elif ch == "\n":
            line += 1
        i += 1
    return out


def _path_order(path: str) -> list[tuple[int, str, int]]:
    """Sort key of a field path (``spec.ports[10].name``): by name at each level, list indexes as numbers."""
    return [
        (1, "", int(part[1:-1])) if part.startswith("[") else (0, part, 0)
        for part in re.findall(r"\[\d+\]|[^.\[]+", path)
    ]


def _go_json(value: Any) -> str:
    """``json.Marshal``'s text: compact, map keys sorted, ``<``, ``>`` and ``&`` escaped."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def go_print(value: Any) -> str:
    """Go's ``fmt.Sprintf("%+v", v)`` of a decoded JSON value: ``map[spec:map[replicas:3]]``, ``[a b]``."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_print(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_print(v) for v in value) + "]"
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _go_float(value)
    return str(value)


def _go_float(value: float) -> str:
    """``%v`` of a float64 (``%g`` at the shortest precision): the shortest digits, in exponent form when the
    exponent is below -4 or at least 6 (``1e+06``)."""
    if value != value or value in (float("inf"), float("-inf")):
        return {"nan": "NaN", "inf": "+Inf", "-inf": "-Inf"}[repr(value)]
    digits = decimal.Decimal(repr(value)).normalize()
    sign, nums, exp = digits.as_tuple()
    assert isinstance(exp, int)
    point = len(nums) + exp  # where the decimal point falls after the first digit string
    if point - 1 < -4 or point - 1 >= 6:
        mantissa = str(nums[0]) + ("." + "".join(map(str, nums[1:])) if len(nums) > 1 else "")
        power = point - 1
        return f"{'-' if sign else ''}{mantissa}e{'-' if power < 0 else '+'}{abs(power):02d}"
    return format(digits, "f")


# -- nulls: what Go's JSON decoder makes of them ----------------------------------------------------------------------


def drop_nulls(obj: Obj) -> None:
    """Give a built-in body's ``null`` values the meaning Go's decoder gives them, in place: a struct field set to
    ``null`` is its zero value, which the API omits (``omitempty``), so the field is gone; a map entry set to
    ``null`` is the zero value of the map's type (``data: {k: null}`` stores ``k: ""``). Charts render such nulls
    (``httpHeaders: null``); a real API server never returns them, and neither must this one, or every later diff
    of the object against its manifest sees a change."""
    node = schema.for_kind(str(obj.get("apiVersion") or ""), str(obj.get("kind") or ""))
    _drop_nulls(obj, node if node is not None else schema.ANY)


def _drop_nulls(value: Any, node: schema.Node) -> None:
    if type(value) is dict:
        open_map = node.is_map
        for key in [k for k, v in value.items() if v is None]:
            item = node.field(key)
            if open_map and "string" in item.types:
                value[key] = ""
            else:
                del value[key]
        for key, child in value.items():
            if type(child) in (dict, list):
                _drop_nulls(child, node.field(key))
    elif type(value) is list:
        item = node.items()
        for child in value:
            if type(child) in (dict, list):
                _drop_nulls(child, item)


# -- decoding built-ins: the type errors Go's JSON decoder reports --------------------------------------------------


def _go_type(node: schema.Node) -> str:
    """How Go names the type at ``node`` (``int32``, ``[]v1.Container``, ``map[string]string``, ``v1.PodSpec``)."""
    if node.ref:
        package, _, name = node.ref.rpartition(".")
        return f"{package.rpartition('.')[2]}.{name}"
    types = node.types - {"null"}
    fmt = node.schema.get("format")
    if "array" in types:
        return "[]" + _go_type(node.items())
    if "object" in types:
        extra = node.schema.get("additionalProperties")
        return (
            "map[string]" + _go_type(node.sub(extra))
            if isinstance(extra, Mapping)
            else "map[string]interface {}"
        )
    if "integer" in types:
        return str(fmt) if fmt in ("int32", "int64") else "int64"
    if "number" in types:
        return "float64"
    if "boolean" in types:
        return "bool"
    if "string" in types:
        return "[]uint8" if fmt == "byte" else "string"
    return "interface {}"


_KIND_OF: dict[type, str] = {
    bool: "bool",
    int: "int",
    float: "float",
    str: "string",
    list: "array",
    dict: "object",
}
_GO_JSON_NAME = {"bool": "bool", "int": "number", "float": "number", "string": "string", "array": "array"}


def _json_kind(value: Any) -> str:
    """The JSON type name Go's decoder prints (``bool``, ``number``, ``string``, ``array``, ``object``)."""
    return _GO_JSON_NAME.get(_KIND_OF.get(type(value), "object"), "object")


def _accepts(node: schema.Node, value: Any) -> bool:
    if value is None:
        return True
    accepted = node.accepted
    if accepted is None:
        return True
    kind = _KIND_OF.get(type(value), "object")
    return kind in accepted or (kind == "float" and "int" in accepted and float(value).is_integer())


def _type_error(value: Any, node: schema.Node, path: tuple[str, ...], struct: str) -> str | None:
    if not _accepts(node, value):
        where = ".".join(path)
        return f"json: cannot unmarshal {_json_kind(value)} into Go struct field {struct}.{where} of type {_go_type(node)}"
    kind = type(value)
    if kind is str:
        if node.is_bytes:
            try:
                base64.b64decode(value.encode("ascii"), validate=True)
            except (binascii.Error, ValueError, UnicodeEncodeError):
                return f"illegal base64 data at input byte {_bad_base64_offset(value)}"
    elif kind is dict:
        if node.is_any or node.preserve_unknown_fields:
            return None
        inner = node.ref.rpartition(".")[2] if node.ref else struct
        props = node.properties
        strict = node.is_struct and not node.is_map
        for key, child in value.items():
            if strict and key not in props:
                continue  # unknown fields are a strict-validation matter, not a decode error
            problem = _type_error(child, node.field(key), (*path, key), inner)
            if problem:
                return problem
    elif kind is list:
        item = node.items()
        for child in value:
            problem = _type_error(child, item, path, struct)
            if problem:
                return problem
    return None


_FITS = 1
_UNKNOWN = 2  # fits, and has a field its schema does not declare (what field validation reports)


def _decodes(value: Any, node: schema.Node) -> int:
    """Whether ``value`` fits ``node`` for Go's decoder (0 if not): exactly ``_type_error(...) is None``, without
    building paths; ``_FITS | _UNKNOWN`` when it fits but some struct has an undeclared field.

    The common case (a body that decodes) takes only this walk; :func:`_type_error` runs only to word a failure and
    :func:`unknown_fields` only to name the unknown fields. Scalars of a type :attr:`schema.Node.scalar_fits` lists
    are accepted without a call.
    """
    kind = type(value)
    if kind is dict:
        accepted = node.accepted
        if accepted is not None and "object" not in accepted:
            return 0
        if node.is_any or node.preserve_unknown_fields:
            return _FITS
        seen = _FITS
        if node.is_struct:  # unknown fields are a field-validation matter, not a decode error
            declared = node.declared
            for key, child in value.items():
                sub = declared.get(key)
                if sub is None:
                    seen = _FITS | _UNKNOWN
                elif type(child) not in sub.scalar_fits:
                    fit = _decodes(child, sub)
                    if not fit:
                        return 0
                    seen |= fit
            return seen
        return _decodes_each(value.values(), node.additional)
    if kind is list:
        accepted = node.accepted
        if accepted is not None and "array" not in accepted:
            return 0
        return _decodes_each(value, node.items())
    return _FITS if _type_error(value, node, (), "") is None else 0


def _decodes_each(children: Iterable[Any], node: schema.Node) -> int:
    """:func:`_decodes` over a map's values or a list's items, all of schema ``node``."""
    fits = node.scalar_fits
    seen = _FITS
    for child in children:
        if type(child) not in fits:
            fit = _decodes(child, node)
            if not fit:
                return 0
            seen |= fit
    return seen


def _bad_base64_offset(text: str) -> int:
    alphabet = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
    for i, ch in enumerate(text):
        if ch not in alphabet and ch != "=":
            return i
    return max(len(text) - (len(text) % 4 or 4), 0)


def decode_error(obj: Mapping[str, Any]) -> errors.ApiError | None:
    """The 400 a real server gives when a built-in object's JSON does not fit its Go types, else None.

    E.g. ``Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal string into Go
    struct field DeploymentSpec.spec.replicas of type int32``; invalid base64 in Secret ``data`` likewise.
    """
    return decode(obj)[0]


def decode(obj: Mapping[str, Any]) -> tuple[errors.ApiError | None, bool]:
    """:func:`decode_error`, and whether the object has fields its schema does not declare (one walk for both)."""
    api_version = str(obj.get("apiVersion") or "")
    kind = str(obj.get("kind") or "")
    node = schema.for_kind(api_version, kind)
    if node is None:
        return None, False
    value = obj if type(obj) is dict else dict(obj)
    fit = _decodes(value, node)
    if fit:
        return None, bool(fit & _UNKNOWN)
    problem = _type_error(value, node, (), kind)
    if problem is None:
        return None, True
    patch = _PATCH.get()
    if patch is not None and patch.kind != "apply":
        return patch_invalid(problem), False
    version = api_version.rpartition("/")[2]
    return errors.bad_request(
        f'{kind} in version "{version}" cannot be handled as a {kind}: {problem}'
    ), False
