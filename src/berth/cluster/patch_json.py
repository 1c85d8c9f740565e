"""JSON patch (RFC 6902, ``application/json-patch+json``) and JSON merge patch (RFC 7386: ``null`` deletes, lists
replace), and the JSON equality both use."""

from __future__ import annotations

import copy
import json
from typing import Any

from berth.cluster import errors

Obj = dict[str, Any]
Path = tuple[str, ...]
"""A field path as FieldsV1 path elements, e.g. ``("f:spec", 'k:{"name":"web"}', "f:image")``."""

_MISSING: Any = object()


# --------------------------------------------------------------------------------------------------------------
# JSON patch (RFC 6902)
# --------------------------------------------------------------------------------------------------------------


def patch_failed(message: str) -> errors.ApiError:
    """422 as upstream reports a JSON patch that does not apply (``NewGenericServerResponse``)."""
    return errors.ApiError(
        422,
        errors.Reason.INVALID,
        "the server rejected our request due to an error in our request",
        {"causes": [{"message": message}]},
    )


def _pointer(path: Any) -> list[str]:
    if not isinstance(path, str):
        raise errors.bad_request(f"json patch path must be a string, got {json.dumps(path)}")
    if path == "":
        return []
    if not path.startswith("/"):
        raise patch_failed(f'invalid JSON pointer "{path}": must be empty or start with "/"')
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _index(token: str, length: int, path: str, allow_end: bool) -> int:
    if token == "-" and allow_end:
        return length
    if not token.isdigit() or (len(token) > 1 and token.startswith("0")):
        raise patch_failed(f'invalid array index "{token}" in path "{path}"')
    i = int(token)
    limit = length if allow_end else length - 1
    if i > limit:
        raise patch_failed(f'array index {i} out of bounds in path "{path}"')
    return i


def _parent(doc: Any, tokens: list[str], path: str, op: str) -> Any:
    node = doc
    for token in tokens[:-1]:
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list):
            node = node[_index(token, len(node), path, allow_end=False)]
        else:
            raise patch_failed(f'{op} operation does not apply: doc is missing path: "{path}": missing value')
    return node


def _get(doc: Any, path: Any, op: str) -> Any:
    tokens = _pointer(path)
    if not tokens:
        return doc
    parent = _parent(doc, tokens, path, op)
    last = tokens[-1]
    if isinstance(parent, dict) and last in parent:
        return parent[last]
    if isinstance(parent, list):
        return parent[_index(last, len(parent), path, allow_end=False)]
    raise patch_failed(f'{op} operation does not apply: doc is missing path: "{path}": missing value')


def _remove(doc: Any, path: Any, op: str) -> Any:
    tokens = _pointer(path)
    if not tokens:
        raise patch_failed(f"{op} operation does not apply: cannot remove the whole document")
    parent = _parent(doc, tokens, path, op)
    last = tokens[-1]
    if isinstance(parent, dict) and last in parent:
        return parent.pop(last)
    if isinstance(parent, list):
        return parent.pop(_index(last, len(parent), path, allow_end=False))
    raise patch_failed(f'{op} operation does not apply: doc is missing path: "{path}": missing value')


def _add(doc: Any, path: Any, value: Any, op: str, replace: bool = False) -> Any:
    """Add (or with ``replace`` overwrite an existing) value; returns the new document (root may change)."""
    tokens = _pointer(path)
    if not tokens:
        return value
    parent = _parent(doc, tokens, path, op)
    last = tokens[-1]
    if isinstance(parent, dict):
        if replace and last not in parent:
            raise patch_failed(f"{op} operation does not apply: doc is missing key: {path}: missing value")
        parent[last] = value
    elif isinstance(parent, list):
        if replace:
            parent[_index(last, len(parent), path, allow_end=False)] = value
        else:
            parent.insert(_index(last, len(parent), path, allow_end=True), value)
    else:
        raise patch_failed(f'{op} operation does not apply: doc is missing path: "{path}": missing value')
    return doc


def json_patch(obj: Any, ops: Any) -> Any:
    """Apply an RFC 6902 JSON patch to a copy of ``obj`` and return it.

    Raises:
        ApiError 400: the patch is not a list of operation objects (upstream cannot decode it).
        ApiError 422: an operation does not apply (missing path, index out of range, failed ``test``).
    """
    if not isinstance(ops, list):
        raise errors.bad_request(
            f"json: cannot unmarshal {_json_kind(ops)} into Go value of type jsonpatch.Patch"
        )
    doc = copy.deepcopy(obj)
    for op_obj in ops:
        if not isinstance(op_obj, dict):
            raise errors.bad_request(
                f"json: cannot unmarshal {_json_kind(op_obj)} into Go value of type jsonpatch.Operation"
            )
        op = op_obj.get("op")
        path: Any = op_obj.get("path")
        if op in ("add", "replace", "test") and "value" not in op_obj:
            raise patch_failed(f'{op} operation missing "value" in {json.dumps(op_obj)}')
        if op == "add":
            doc = _add(doc, path, copy.deepcopy(op_obj["value"]), "add")
        elif op == "remove":
            _remove(doc, path, "remove")
        elif op == "replace":
            doc = _add(doc, path, copy.deepcopy(op_obj["value"]), "replace", replace=True)
        elif op == "move":
            value = _remove(doc, op_obj.get("from"), "move")
            doc = _add(doc, path, value, "move")
        elif op == "copy":
            value = copy.deepcopy(_get(doc, op_obj.get("from"), "copy"))
            doc = _add(doc, path, value, "copy")
        elif op == "test":
            try:
                current = _get(doc, path, "test")
            except errors.ApiError:
                current = _MISSING
            if current is _MISSING or not _json_equal(current, op_obj["value"]):
                raise patch_failed(f"testing value {path} failed: test failed")
        else:
            raise patch_failed(f"Unexpected kind: {op}")
    return doc


def _json_kind(value: Any) -> str:
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    if value is None:
        return "null"
    return "number"


_JSON_SCALARS = frozenset({str, int, float, bool, type(None)})


def _json_equal(a: Any, b: Any) -> bool:
    """Equality as JSON sees it (``1 == 1.0`` but ``True != 1``)."""
    kind = type(a)
    if kind is type(b) and kind in _JSON_SCALARS:
        return bool(a == b)  # two strings, two numbers of one type, two bools, two nulls
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


# --------------------------------------------------------------------------------------------------------------
# JSON merge patch (RFC 7386)
# --------------------------------------------------------------------------------------------------------------


def merge_patch(obj: Any, patch: Any) -> Any:
    """RFC 7386: objects merge recursively, ``null`` deletes a key, anything else (lists too) replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(obj) if isinstance(obj, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result
