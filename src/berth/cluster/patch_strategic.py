"""Strategic merge patch for built-in kinds (k8s.io/apimachinery ``strategicpatch``): lists with a patch merge key
merge item by item, plus the ``$patch``, ``$setElementOrder/``, ``$retainKeys`` and ``$deleteFromPrimitiveList/``
directives."""

from __future__ import annotations

import copy
import json
from typing import Any

from berth.cluster import errors, schema
from berth.cluster.patch_json import patch_failed

Obj = dict[str, Any]
Path = tuple[str, ...]
"""A field path as FieldsV1 path elements, e.g. ``("f:spec", 'k:{"name":"web"}', "f:image")``."""

_MISSING: Any = object()

# --------------------------------------------------------------------------------------------------------------
# Strategic merge patch
# --------------------------------------------------------------------------------------------------------------

DIRECTIVE = "$patch"
RETAIN_KEYS = "$retainKeys"
SET_ELEMENT_ORDER = "$setElementOrder/"
DELETE_FROM_PRIMITIVE_LIST = "$deleteFromPrimitiveList/"
_DELETE: Any = object()

SMP_UNSUPPORTED_TYPES = (
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/apply-patch+yaml",
)
"""What a custom resource accepts instead of strategic merge (upstream's 415 lists these)."""


def strategic_merge_patch(obj: Obj, patch: Any, node: schema.Node | None = None) -> Obj:
    """Apply a strategic merge patch to a copy of ``obj``.

    Args:
        obj: the live object.
        patch: the decoded patch body (a JSON object).
        node: schema of the object; by default the built-in schema of ``obj``'s apiVersion/kind.

    Raises:
        ApiError 415: the kind is not built in (custom resources do not support strategic merge).
        ApiError 400: the patch is not an object or a directive is malformed.
    """
    if node is None:
        node = schema.for_kind(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
        if node is None:
            raise errors.unsupported_media_type(SMP_UNSUPPORTED_TYPES)
    if not isinstance(patch, dict):
        raise errors.bad_request("strategic merge patch must be a JSON object")
    result = _smp_map(obj, patch, node)
    return {} if result is _DELETE else result


def strip_directives(value: Any) -> Any:
    """A patch value with every SMP directive removed (used where the value replaces instead of merging)."""
    if isinstance(value, dict):
        return {
            k: strip_directives(v)
            for k, v in value.items()
            if k not in (DIRECTIVE, RETAIN_KEYS)
            and not k.startswith(SET_ELEMENT_ORDER)
            and not k.startswith(DELETE_FROM_PRIMITIVE_LIST)
        }
    if isinstance(value, list):
        return [strip_directives(v) for v in value if not (isinstance(v, dict) and DIRECTIVE in v)]
    return value


def _smp_map(original: Any, patch: dict[str, Any], node: schema.Node) -> Any:
    patch = dict(patch)
    directive = patch.pop(DIRECTIVE, None)
    if directive == "replace":
        return strip_directives(patch)
    if directive == "delete":
        return _DELETE
    if directive not in (None, "merge"):
        raise errors.bad_request(
            f"Unknown patch type: {directive} in map: {json.dumps(patch, sort_keys=True)}"
        )
    result: dict[str, Any] = dict(original) if isinstance(original, dict) else {}

    retain = patch.pop(RETAIN_KEYS, None)
    if retain is not None:
        if not isinstance(retain, list):
            raise errors.bad_request("doesn't match the format of $retainKeys: must be a list of field names")
        for key, value in patch.items():
            if not key.startswith("$") and value is not None and key not in retain:
                raise patch_failed(
                    f"The $retainKeys list does not contain all the keys of the patch: {key} is missing"
                )
        result = {k: v for k, v in result.items() if k in retain}

    orders: dict[str, list[Any]] = {}
    for key in [k for k in patch if k.startswith(SET_ELEMENT_ORDER)]:
        order = patch.pop(key)
        if not isinstance(order, list):
            raise errors.bad_request(f"invalid {key}: must be a list")
        orders[key[len(SET_ELEMENT_ORDER) :]] = order
    for key in [k for k in patch if k.startswith(DELETE_FROM_PRIMITIVE_LIST)]:
        doomed = patch.pop(key)
        if not isinstance(doomed, list):
            raise errors.bad_request(f"invalid {key}: must be a list of primitives")
        name = key[len(DELETE_FROM_PRIMITIVE_LIST) :]
        current = result.get(name)
        if isinstance(current, list):
            result[name] = [item for item in current if item not in doomed]

    for key, value in patch.items():
        child = node.field(key)
        if value is None:
            result.pop(key, None)
            continue
        current = result.get(key, _MISSING)
        if isinstance(value, dict):
            if "replace" in child.patch_strategies:
                result[key] = strip_directives(value)
                continue
            merged = _smp_map(current if isinstance(current, dict) else {}, value, child)
            if merged is _DELETE:
                result.pop(key, None)
            else:
                result[key] = merged
        elif isinstance(value, list):
            base = current if isinstance(current, list) else []
            result[key] = _smp_list(base, value, child, orders.get(key))
        else:
            result[key] = value

    for key, order in orders.items():
        if key not in patch and isinstance(result.get(key), list):
            result[key] = _order_by(
                result[key], order, result[key], child_merge_key(node.field(key), result[key])
            )
    return result


def child_merge_key(node: schema.Node, items: list[Any]) -> str:
    """The merge key of a list when its items are objects ("" for primitive lists)."""
    return node.patch_merge_key if any(isinstance(i, dict) for i in items) else ""


def _smp_list(original: list[Any], patch: list[Any], node: schema.Node, order: list[Any] | None) -> list[Any]:
    if "merge" not in node.patch_strategies:
        return [strip_directives(i) for i in patch]
    if any(isinstance(i, dict) and i.get(DIRECTIVE) == "replace" for i in patch):
        return [strip_directives(i) for i in patch if not (isinstance(i, dict) and DIRECTIVE in i)]
    key = child_merge_key(node, [*original, *patch])
    if not key:
        result = list(original)
        for item in patch:
            if item not in result:
                result.append(copy.deepcopy(item))
        return _order_by(result, order, original, "") if order is not None else result

    result = list(original)
    item_node = node.items()
    for item in patch:
        if not isinstance(item, dict):
            raise errors.bad_request(f"list of maps expected for merge key {key!r}, got {json.dumps(item)}")
        if key not in item:
            raise errors.bad_request(
                f"map: {json.dumps(item, sort_keys=True)} does not contain declared merge key: {key}"
            )
        if item.get(DIRECTIVE) == "delete":
            result = [r for r in result if not (isinstance(r, dict) and r.get(key) == item[key])]
            continue
        at = next((i for i, r in enumerate(result) if isinstance(r, dict) and r.get(key) == item[key]), None)
        if at is None:
            merged = _smp_map({}, item, item_node)
            if merged is not _DELETE:
                result.append(merged)
        else:
            merged = _smp_map(result[at], item, item_node)
            if merged is _DELETE:
                del result[at]
            else:
                result[at] = merged
    return _order_by(result, order, original, key) if order is not None else result


def _order_by(merged: list[Any], patch_order: list[Any], server_order: list[Any], key: str) -> list[Any]:
    """``$setElementOrder``: upstream ``normalizeElementOrder`` + ``mergeSortedSlice``.

    Items named in the order list come in that order; the others keep their place relative to the live list.
    """

    def ident(item: Any) -> Any:
        return json.dumps(item.get(key) if key and isinstance(item, dict) else item, sort_keys=True)

    wanted = [ident(o) for o in patch_order]
    server = [ident(o) for o in server_order]
    in_patch = sorted((m for m in merged if ident(m) in wanted), key=lambda m: wanted.index(ident(m)))
    server_only = [m for m in merged if ident(m) not in wanted]
    server_only.sort(key=lambda m: server.index(ident(m)) if ident(m) in server else len(server))

    out: list[Any] = []
    i = j = 0
    while i < len(server_only) or j < len(in_patch):
        if i >= len(server_only):
            out.append(in_patch[j])
            j += 1
        elif j >= len(in_patch):
            out.append(server_only[i])
            i += 1
        else:
            li = server.index(ident(server_only[i])) if ident(server_only[i]) in server else -1
            ri = server.index(ident(in_patch[j])) if ident(in_patch[j]) in server else -1
            if li >= 0 and ri >= 0 and li < ri:
                out.append(server_only[i])
                i += 1
            else:
                out.append(in_patch[j])
                j += 1
    return out
