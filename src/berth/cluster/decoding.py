"""What a built-in body must be before it is an object: ``fieldValidation=Strict``'s unknown fields (400 ``strict
decoding error``) against the v1.35 schema table, and the 400 Go's JSON decoder gives for a value of the wrong JSON
type or Secret data that is not base64."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from typing import Any

from berth.cluster import errors, schema

Obj = dict[str, Any]

# -- strict field validation ----------------------------------------------------------------------------------------


def unknown_fields(obj: Any, node: schema.Node | None = None, path: str = "") -> list[str]:
    """Paths of fields the schema does not declare (``fieldValidation=Strict``), e.g. ``spec.replicass``."""
    if node is None:
        if not isinstance(obj, Mapping):
            return []
        node = schema.for_kind(str(obj.get("apiVersion") or ""), str(obj.get("kind") or ""))
        if node is None:
            return []
    out: list[str] = []
    _unknown(obj, node, path, out)
    return out


def _unknown(obj: Any, node: schema.Node, path: str, out: list[str]) -> None:
    kind = type(obj)
    if kind is dict:
        if node.preserve_unknown_fields or node.is_any or (node.embedded_resource and not node.is_struct):
            return
        props = node.properties
        open_map = node.is_map or isinstance(node.schema.get("additionalProperties"), Mapping)
        for key, value in obj.items():
            if node.is_struct and key not in props and not open_map:
                out.append(f"{path}.{key}" if path else str(key))
                continue
            if type(value) in (dict, list):
                _unknown(value, node.field(key), f"{path}.{key}" if path else str(key), out)
    elif kind is list:
        item = node.items()
        for i, value in enumerate(obj):
            if type(value) in (dict, list):
                _unknown(value, item, f"{path}[{i}]", out)


def strict_decoding_error(paths: Sequence[str]) -> errors.ApiError:
    """400 ``strict decoding error: unknown field "spec.x", unknown field "spec.y"``."""
    return errors.bad_request("strict decoding error: " + ", ".join(f'unknown field "{p}"' for p in paths))


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


def _decodes(value: Any, node: schema.Node) -> bool:
    """Whether ``value`` fits ``node`` for Go's decoder: exactly ``_type_error(...) is None``, without building paths.

    The common case (a body that decodes) takes only this walk; :func:`_type_error` runs only to word a failure.
    Scalars of a type :attr:`schema.Node.scalar_fits` lists are accepted without a call.
    """
    kind = type(value)
    if kind is dict:
        accepted = node.accepted
        if accepted is not None and "object" not in accepted:
            return False
        if node.is_any or node.preserve_unknown_fields:
            return True
        if node.is_struct:  # unknown fields are a strict-validation matter, not a decode error
            declared = node.declared
            for key, child in value.items():
                sub = declared.get(key)
                if sub is not None and type(child) not in sub.scalar_fits and not _decodes(child, sub):
                    return False
            return True
        sub = node.additional
        fits = sub.scalar_fits
        for child in value.values():  # noqa: SIM110 - a loop, not all() over a generator: most maps are short
            if type(child) not in fits and not _decodes(child, sub):
                return False
        return True
    if kind is list:
        accepted = node.accepted
        if accepted is not None and "array" not in accepted:
            return False
        item = node.items()
        fits = item.scalar_fits
        for child in value:  # noqa: SIM110 - as above
            if type(child) not in fits and not _decodes(child, item):
                return False
        return True
    return _type_error(value, node, (), "") is None


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
    api_version = str(obj.get("apiVersion") or "")
    kind = str(obj.get("kind") or "")
    node = schema.for_kind(api_version, kind)
    if node is None:
        return None
    value = obj if type(obj) is dict else dict(obj)
    if _decodes(value, node):
        return None
    problem = _type_error(value, node, (), kind)
    if problem is None:
        return None
    version = api_version.rpartition("/")[2]
    return errors.bad_request(f'{kind} in version "{version}" cannot be handled as a {kind}: {problem}')
