"""The four ways a client changes an object in place: JSON patch, merge patch, strategic merge, server-side apply.

Why here and pure: every PATCH the API server serves (``kubectl apply``, ``label``, ``scale``, Helm 4's apply, the
Python client) and every controller write goes through these functions, and each one's rules are subtle enough to
deserve table-driven tests on plain dicts, away from HTTP and storage.

- :func:`json_patch` -- RFC 6902 (``application/json-patch+json``).
- :func:`merge_patch` -- RFC 7386 (``application/merge-patch+json``): ``null`` deletes, lists replace.
- :func:`strategic_merge_patch` -- ``application/strategic-merge-patch+json`` for built-in kinds: lists with a
  patch merge key merge item by item, plus the ``$patch``, ``$setElementOrder/``, ``$retainKeys`` and
  ``$deleteFromPrimitiveList/`` directives (k8s.io/apimachinery ``strategicpatch``).
- :func:`server_side_apply` and :func:`record_update` -- field ownership (``metadata.managedFields``), the model
  structured-merge-diff implements upstream:

  * Every write records, per *manager*, the set of fields it owns, encoded as FieldsV1 (``f:<field>``,
    ``k:{"name":"x"}`` for items of associative lists, ``v:<json>`` for set members, ``.`` for "this node
    itself").
  * An ``Update`` (create, PUT, any non-apply patch) adds the fields it added or changed to its manager and takes
    them away from every other manager (no conflicts: the writer asked for that exact object).
  * An ``Apply`` replaces its manager's set with the fields of the applied configuration. A field another manager
    owns whose live value the apply would change is a *conflict* (409, one cause per field) unless ``force``, which
    moves ownership. Fields this manager applied last time and omits now are removed from the object unless another
    manager owns them.

  Manager identity follows upstream: ``Apply`` entries are keyed by (manager, subresource), ``Update`` entries also
  by apiVersion; an applier never conflicts with itself but does conflict with its own ``Update`` entry.

Not modelled: version conversion of managed fields (paths are taken as version-independent), the cap of ten Update
managers (upstream folds the oldest into ``ancient-changes``) and the ``before-first-apply`` manager.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from berth.cluster import errors, schema

Obj = dict[str, Any]
Path = tuple[str, ...]
"""A field path as FieldsV1 path elements, e.g. ``("f:spec", 'k:{"name":"web"}', "f:image")``."""

_MISSING: Any = object()

# --------------------------------------------------------------------------------------------------------------
# JSON patch (RFC 6902)
# --------------------------------------------------------------------------------------------------------------


def _patch_failed(message: str) -> errors.ApiError:
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
        raise _patch_failed(f'invalid JSON pointer "{path}": must be empty or start with "/"')
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _index(token: str, length: int, path: str, allow_end: bool) -> int:
    if token == "-" and allow_end:
        return length
    if not token.isdigit() or (len(token) > 1 and token.startswith("0")):
        raise _patch_failed(f'invalid array index "{token}" in path "{path}"')
    i = int(token)
    limit = length if allow_end else length - 1
    if i > limit:
        raise _patch_failed(f'array index {i} out of bounds in path "{path}"')
    return i


def _parent(doc: Any, tokens: list[str], path: str, op: str) -> Any:
    node = doc
    for token in tokens[:-1]:
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list):
            node = node[_index(token, len(node), path, allow_end=False)]
        else:
            raise _patch_failed(
                f'{op} operation does not apply: doc is missing path: "{path}": missing value'
            )
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
    raise _patch_failed(f'{op} operation does not apply: doc is missing path: "{path}": missing value')


def _remove(doc: Any, path: Any, op: str) -> Any:
    tokens = _pointer(path)
    if not tokens:
        raise _patch_failed(f"{op} operation does not apply: cannot remove the whole document")
    parent = _parent(doc, tokens, path, op)
    last = tokens[-1]
    if isinstance(parent, dict) and last in parent:
        return parent.pop(last)
    if isinstance(parent, list):
        return parent.pop(_index(last, len(parent), path, allow_end=False))
    raise _patch_failed(f'{op} operation does not apply: doc is missing path: "{path}": missing value')


def _add(doc: Any, path: Any, value: Any, op: str, replace: bool = False) -> Any:
    """Add (or with ``replace`` overwrite an existing) value; returns the new document (root may change)."""
    tokens = _pointer(path)
    if not tokens:
        return value
    parent = _parent(doc, tokens, path, op)
    last = tokens[-1]
    if isinstance(parent, dict):
        if replace and last not in parent:
            raise _patch_failed(f"{op} operation does not apply: doc is missing key: {path}: missing value")
        parent[last] = value
    elif isinstance(parent, list):
        if replace:
            parent[_index(last, len(parent), path, allow_end=False)] = value
        else:
            parent.insert(_index(last, len(parent), path, allow_end=True), value)
    else:
        raise _patch_failed(f'{op} operation does not apply: doc is missing path: "{path}": missing value')
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
            raise _patch_failed(f'{op} operation missing "value" in {json.dumps(op_obj)}')
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
                raise _patch_failed(f"testing value {path} failed: test failed")
        else:
            raise _patch_failed(f"Unexpected kind: {op}")
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
                raise _patch_failed(
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


# --------------------------------------------------------------------------------------------------------------
# Field sets (FieldsV1) and managed fields
# --------------------------------------------------------------------------------------------------------------

_strip_directives = strip_directives  # kept for callers that used the private name

# Paths never tracked (upstream stripMetaManager).
_STRIPPED: frozenset[Path] = frozenset(
    {
        ("f:apiVersion",),
        ("f:kind",),
        ("f:metadata",),
        *(
            ("f:metadata", f"f:{name}")
            for name in (
                "name",
                "namespace",
                "creationTimestamp",
                "selfLink",
                "uid",
                "clusterName",
                "generation",
                "managedFields",
                "resourceVersion",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
            )
        ),
    }
)

# Key fields with a server default: a port applied without ``protocol`` is the live port with ``protocol: TCP``.
_KEY_DEFAULTS: dict[str, Any] = {"protocol": "TCP"}


_CANON = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# Characters JSON must escape in a string (ensure_ascii=False): quote, backslash and the C0 controls.
_JSON_ESCAPED = re.compile(r'[\x00-\x1f\\"]')


def _canon(value: Any) -> str:
    """Canonical JSON (sorted keys, no spaces); plain strings, ints and flat objects of them are written directly,
    as list-item keys almost always are (``{"name":"web"}``, ``{"containerPort":80,"protocol":"TCP"}``)."""
    kind = type(value)
    if kind is str:
        if not _JSON_ESCAPED.search(value):
            return f'"{value}"'
    elif kind is int:
        return repr(value)
    elif kind is dict and all(type(k) is str for k in value):
        parts: list[str] = []
        for key in sorted(value):
            item = value[key]
            if _JSON_ESCAPED.search(key):
                break
            if type(item) is int:
                parts.append(f'"{key}":{item!r}')
            elif type(item) is str and not _JSON_ESCAPED.search(item):
                parts.append(f'"{key}":"{item}"')
            else:
                break
        else:
            return "{" + ",".join(parts) + "}"
    return _CANON.encode(value)


def item_element(item: Any, node: schema.Node, index: int) -> str:
    """The path element of one list item: ``k:{...}`` (associative), ``v:<json>`` (set) or ``i:<n>``."""
    if node.list_type == "map" and isinstance(item, dict):
        keys = node.list_map_keys or ((node.patch_merge_key,) if node.patch_merge_key else ())
        if keys:
            ident: dict[str, Any] = {}
            for k in keys:
                if k in item:
                    ident[k] = item[k]
                elif k in _KEY_DEFAULTS:
                    ident[k] = _KEY_DEFAULTS[k]
            return "k:" + _canon(ident)
    if node.list_type == "set":
        return "v:" + _canon(item)
    return f"i:{index}"


# One walked node: (shape, value, member). shape is "leaf", "struct", "map" or "list"; value only for leaves;
# member: whether upstream's ToFieldSet would list the path itself (leaves, list items, map entries).
_Entry = tuple[str, Any, bool]


def _walk(value: Any, node: schema.Node, path: Path, member: bool, out: dict[Path, _Entry]) -> None:
    if type(value) is dict and not node.map_atomic:
        out[path] = ("struct" if node.is_struct else "map", None, member)
        _walk_children(value, node, path, out)
    elif type(value) is list and node.list_type != "atomic":
        out[path] = ("list", None, member)
        item_node = node.items()
        for i, item in enumerate(value):
            _walk(item, item_node, (*path, item_element(item, node, i)), True, out)
    else:
        out[path] = ("leaf", value, True)


def _walk_children(value: dict[str, Any], node: schema.Node, path: Path, out: dict[Path, _Entry]) -> None:
    """The fields of one object; a scalar is a leaf whatever its schema, so it is recorded without a call."""
    declared = node.declared
    for key, child in value.items():
        child_path = (*path, "f:" + key)
        kind = type(child)
        if kind is dict or kind is list:
            child_node = declared.get(key)
            if child_node is None:
                _walk(child, node.additional, child_path, True, out)
            else:
                _walk(child, child_node, child_path, child == {}, out)
        else:
            out[child_path] = ("leaf", child, True)


def _entries(obj: Any, node: schema.Node, ignored: Collection[str] = ()) -> dict[Path, _Entry]:
    """Every node of ``obj`` by path; top-level fields in ``ignored`` (``f:status``...) are not walked."""
    out: dict[Path, _Entry] = {}
    if isinstance(obj, dict):
        out[()] = ("struct", None, False)
        skipped = [key for key in obj if "f:" + key in ignored or "f:" + key in _UNWALKED]
        if skipped:
            obj = {k: v for k, v in obj.items() if k not in skipped}
        _walk_children(obj, node, (), out)
    return out


_UNWALKED = frozenset({"f:apiVersion", "f:kind"})


def _tracked(path: Path, ignored: Collection[str]) -> bool:
    return bool(path) and path not in _STRIPPED and path[0] not in ignored


def field_set(obj: Obj, node: schema.Node | None = None, ignored: Collection[str] = ()) -> set[Path]:
    """The fields an object (or apply configuration) sets, as upstream ``ToFieldSet`` computes them."""
    node = node or _node_for(obj)
    skip = _ignored_elements(ignored)
    return {p for p, e in _entries(obj, node, skip).items() if e[2] and _tracked(p, skip)}


@dataclass(frozen=True)
class _Comparison:
    added: set[Path]
    modified: set[Path]
    removed: set[Path]


def _compare(old: Any, new: Any, node: schema.Node, ignored: Collection[str]) -> _Comparison:
    before = _entries(old, node, ignored)
    after = _entries(new, node, ignored)
    # Structs are never "added" themselves (upstream's Go structs always exist); maps, lists and items are.
    added = {
        p
        for p in after.keys() - before.keys()
        if (after[p][2] or after[p][0] in ("map", "list")) and _tracked(p, ignored)
    }
    removed = {p for p in before.keys() - after.keys() if _tracked(p, ignored)}
    modified = set()
    for p, b in after.items():
        a = before.get(p)
        if a is None or (a[0] != "leaf" and b[0] != "leaf"):
            continue
        if (a[0] != b[0] or not _json_equal(a[1], b[1])) and _tracked(p, ignored):
            modified.add(p)
    return _Comparison(added, modified, removed)


# Immediate children of f:metadata that are never tracked (the depth-2 part of _STRIPPED).
_STRIPPED_META = frozenset(p[1] for p in _STRIPPED if len(p) == 2)


def created_fields(obj: Obj, node: schema.Node, ignored: Collection[str] = ()) -> dict[str, Any]:
    """The FieldsV1 a create records: ``encode_fields`` of every field ``obj`` sets, built in one walk.

    Same result as the general path (compare the object with nothing: everything is added) without walking the
    empty old object, diffing path sets and re-encoding paths -- the create fast path of :func:`record_update`.
    """
    declared = node.declared
    children: dict[str, Any] = {}
    for key, value in obj.items():
        element = "f:" + key
        if element in ignored or element in _UNWALKED:
            continue
        child_node = declared.get(key)
        if element == "f:metadata":
            sub = _created(value, child_node or node.additional, False, False, _STRIPPED_META)
        elif child_node is None:
            sub = _created(value, node.additional, True, True)
        else:
            sub = _created(value, child_node, value is None or value == {}, True)
        if sub is not None:
            children[element] = sub  # keys of a dict: every element is new
    return _finish_created(children, False) or {}


def _created(
    value: Any, node: schema.Node, member: bool, tracked: bool, untracked: frozenset[str] = frozenset()
) -> dict[str, Any] | None:
    """One walked value's FieldsV1 subtree (None when neither it nor anything below it is recorded).

    A scalar child is recorded in the loop (``{}`` when tracked) rather than by a call: whatever its schema, a value
    that is not a dict or a list is a leaf.
    """
    kind = type(value)
    if kind is dict and not node.map_atomic:
        declared = node.declared
        children: dict[str, Any] = {}
        for key, child in value.items():
            element = "f:" + key
            child_kind = type(child)
            if child_kind is dict or child_kind is list:
                child_node = declared.get(key)
                if child_node is None:
                    sub = _created(child, node.additional, True, element not in untracked)
                else:
                    sub = _created(child, child_node, child == {}, element not in untracked)
                if sub is not None:
                    children[element] = sub  # keys of a dict: every element is new
            elif element not in untracked:
                children[element] = {}
        return _finish_created(children, tracked and (member or not node.is_struct))
    if kind is list and node.list_type != "atomic":
        item_node = node.items()
        children = {}
        for i, item in enumerate(value):
            item_kind = type(item)
            sub = _created(item, item_node, True, True) if item_kind is dict or item_kind is list else {}
            if sub is not None:
                element = item_element(item, node, i)
                if element in children:
                    _merge_into(children, element, sub)
                else:
                    children[element] = sub
        return _finish_created(children, tracked)
    return {} if tracked else None


def _merge_into(children: dict[str, Any], element: str, sub: dict[str, Any]) -> None:
    """Add a subtree; two list items with the same key are one path upstream, so their fields are united."""
    have = children.get(element)
    if have is None:
        children[element] = sub
        return
    merged = dict(have)
    for k, v in sub.items():
        if k == ".":
            merged["."] = {}
        elif k in merged:
            _merge_into(merged, k, v)
        else:
            merged[k] = v
    if merged and "." not in merged and (not have or not sub):
        merged["."] = {}  # one of them was a member leaf ({}) and now has children
    children[element] = {k: merged[k] for k in sorted(merged)}


def _finish_created(children: dict[str, Any], member: bool) -> dict[str, Any] | None:
    """``children`` (a dict the caller built for this) in sorted order, after ``.`` when the node is a member."""
    if not children:
        return {} if member else None
    if not member:
        if len(children) == 1:
            return children
        return {element: children[element] for element in sorted(children)}
    out: dict[str, Any] = {".": {}}
    if len(children) == 1:
        out.update(children)
    else:
        for element in sorted(children):
            out[element] = children[element]
    return out


def _ignored_elements(ignored: Iterable[str]) -> frozenset[str]:
    return frozenset(f"f:{name}" for name in ignored)


def encode_fields(paths: Iterable[Path]) -> dict[str, Any]:
    """A set of paths as a FieldsV1 object (``.`` marks a node that is a member and has children)."""
    tree: dict[str, Any] = {}
    members: set[int] = set()  # ids of the tree nodes the paths end at (the tree keeps them alive)
    for path in paths:
        node = tree
        for element in path:
            child = node.get(element)
            if child is None:
                child = node[element] = {}
            node = child
        members.add(id(node))
    return _finish_tree(tree, members)


def _finish_tree(node: dict[str, Any], members: set[int]) -> dict[str, Any]:
    out: dict[str, Any] = {".": {}} if node and id(node) in members else {}
    for element in sorted(node):  # "." < "f:" < "i:" < "k:" < "v:", close to upstream's order
        child = node[element]
        out[element] = _finish_tree(child, members) if child else {}
    return out


def _element_order(element: str) -> tuple[int, str]:
    rank = {"f": 0, "k": 1, "v": 2, "i": 3}.get(element[:1], 4)
    return rank, element


def decode_fields(fields: Mapping[str, Any]) -> set[Path]:
    """A FieldsV1 object back to its set of member paths."""
    out: set[Path] = set()
    _decode_into(fields, (), out)
    return out


def _decode_into(node: Mapping[str, Any], prefix: Path, out: set[Path]) -> bool:
    """Add ``node``'s member paths to ``out``; True when :func:`encode_fields` of them gives ``node`` back as it is
    (same keys in the same order, ``{}`` leaves, ``.`` first and only beside children): then it can be kept."""
    canonical = type(node) is dict
    previous: str | None = None  # the element before (encoding writes "." first, then the others sorted)
    for i, (element, child) in enumerate(node.items()):
        if element == ".":
            out.add(prefix)
            canonical = canonical and i == 0 and len(node) > 1 and type(child) is dict and not child
            continue
        path = (*prefix, element)
        if type(child) is dict:
            if child:
                canonical = _decode_into(child, path, out) and canonical
            else:
                out.add(path)
        elif not isinstance(child, Mapping) or not child:
            out.add(path)
            canonical = False
        else:
            canonical = False
            _decode_into(child, path, out)
        if canonical and (type(element) is not str or (previous is not None and element <= previous)):
            canonical = False
        previous = element
    return canonical


def path_string(path: Path) -> str:
    """structured-merge-diff's text form: ``.spec.containers[name="web"].image``, ``.finalizers[="x"]``."""
    parts: list[str] = []
    for element in path:
        kind, _, rest = element.partition(":")
        if kind == "f":
            parts.append("." + rest)
        elif kind == "k":
            try:
                keys = json.loads(rest)
            except ValueError:
                keys = {}
            parts.append("[" + ",".join(f"{k}={_canon(v)}" for k, v in sorted(keys.items())) + "]")
        elif kind == "v":
            parts.append("[=" + rest + "]")
        else:
            parts.append("[" + rest + "]")
    return "".join(parts)


@dataclass
class ManagedEntry:
    """One ``metadata.managedFields`` entry, decoded."""

    manager: str
    operation: str
    api_version: str
    time: str | None
    subresource: str = ""
    fields: set[Path] = field(default_factory=set)
    # The stored FieldsV1 this entry was decoded from, when encoding ``fields`` gives it back unchanged, and the
    # paths it held: while ``fields`` still equals them, :meth:`encode` writes that object instead of re-encoding.
    # FieldsV1 objects are never changed in place, so old and new objects may share one.
    raw_fields: dict[str, Any] | None = field(default=None, repr=False, compare=False)
    raw_paths: frozenset[Path] = field(default=frozenset(), repr=False, compare=False)

    @property
    def identity(self) -> tuple[str, str, str, str]:
        """Upstream's manager identifier: Apply entries ignore the apiVersion."""
        version = "" if self.operation == "Apply" else self.api_version
        return (self.manager, self.operation, version, self.subresource)

    def describe(self) -> str:
        """How a conflict names this manager (upstream ``printManager``)."""
        text = errors.go_quote(self.manager)
        if self.subresource:
            text += f" with subresource {errors.go_quote(self.subresource)}"
        if self.operation == "Update":
            text += f" using {self.api_version}"
        return text

    def encode(self) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "manager": self.manager,
            "operation": self.operation,
            "apiVersion": self.api_version,
        }
        if self.time:
            entry["time"] = self.time
        entry["fieldsType"] = "FieldsV1"
        raw = self.raw_fields
        entry["fieldsV1"] = (
            raw if raw is not None and self.fields == self.raw_paths else encode_fields(self.fields)
        )
        if self.subresource:
            entry["subresource"] = self.subresource
        return entry


def decode_managed_fields(obj: Obj) -> list[ManagedEntry]:
    """``metadata.managedFields`` of an object as :class:`ManagedEntry` values (malformed entries skipped)."""
    raw = (obj.get("metadata") or {}).get("managedFields") or []
    out: dict[tuple[str, str, str, str], ManagedEntry] = {}
    for item in raw if isinstance(raw, list) else []:
        if not isinstance(item, dict) or (not item.get("manager") and not item.get("fieldsV1")):
            continue
        raw_fields = item.get("fieldsV1") or {}
        paths: set[Path] = set()
        canonical = _decode_into(raw_fields, (), paths)
        entry = ManagedEntry(
            manager=str(item.get("manager") or ""),
            operation=str(item.get("operation") or "Update"),
            api_version=str(item.get("apiVersion") or ""),
            time=item.get("time"),
            subresource=str(item.get("subresource") or ""),
            fields=paths,
        )
        if canonical:
            entry.raw_fields, entry.raw_paths = raw_fields, frozenset(paths)
        if entry.identity in out:
            out[entry.identity].fields |= entry.fields
        else:
            out[entry.identity] = entry
    return list(out.values())


def _sorted_entries(entries: Iterable[ManagedEntry]) -> list[ManagedEntry]:
    """Upstream order: operation, time, manager, apiVersion, subresource."""
    return sorted(entries, key=lambda e: (e.operation, e.time or "", e.manager, e.api_version, e.subresource))


def _with_managed(obj: Obj, entries: Iterable[ManagedEntry]) -> Obj:
    kept = [e for e in _sorted_entries(entries) if e.fields]
    meta = dict(obj.get("metadata") or {})
    if kept:
        meta["managedFields"] = [e.encode() for e in kept]
    else:
        meta.pop("managedFields", None)
    out = dict(obj)
    out["metadata"] = meta
    return out


def _without_managed(obj: Any) -> Obj:
    if not isinstance(obj, dict):
        return {}
    out: Obj = dict(obj)
    meta = out.get("metadata")
    if isinstance(meta, dict) and "managedFields" in meta:
        out["metadata"] = {k: v for k, v in meta.items() if k != "managedFields"}
    return out


def _node_for(obj: Obj) -> schema.Node:
    return schema.for_kind(str(obj.get("apiVersion", "")), str(obj.get("kind", ""))) or schema.ANY


def _ignored(subresource: str, status_subresource: bool, obj: Obj) -> frozenset[str]:
    """Top-level fields a write through this endpoint does not own (upstream reset fields)."""
    if subresource == "status":
        return _ignored_elements(k for k in obj if k not in ("status", "metadata"))
    if subresource:
        return frozenset()
    return _STATUS_ONLY if status_subresource else frozenset()


_STATUS_ONLY = frozenset({"f:status"})


def record_update(
    old: Obj | None,
    new: Obj,
    manager: str,
    *,
    now: str,
    operation: str = "Update",
    api_version: str | None = None,
    node: schema.Node | None = None,
    subresource: str = "",
    status_subresource: bool = True,
) -> Obj:
    """Record a non-apply write (create, PUT, JSON/merge/strategic patch) in ``new``'s managedFields.

    ``manager`` gains every field the write added or changed, other managers lose them, and everyone loses fields the
    write removed. If ``new`` carries managedFields (a client may edit them, as ``kubectl apply --server-side`` does
    when migrating from client-side apply) they are the starting point, else ``old``'s; ``[{}]`` clears them.

    Args:
        old: the live object (None for a create).
        new: the object about to be stored.
        manager: the field manager (``fieldManager`` parameter, else the User-Agent prefix).
        now: timestamp for the manager's entry (``2025-01-01T00:00:00Z``).
        operation: ``Update`` (the only non-apply operation upstream records).
        api_version: version the write used (default ``new['apiVersion']``).
        node: schema of the object (default: built-in schema of its kind, else schema-less).
        subresource: ``status``, ``scale``... when written through a subresource.
        status_subresource: whether the kind has a ``status`` subresource (then the main endpoint does not own
            ``status``).

    Returns:
        ``new`` (a shallow copy) with ``metadata.managedFields`` set.
    """
    raw_new = (new.get("metadata") or {}).get("managedFields")
    if raw_new == [{}]:
        return _with_managed(new, [])
    node = node or _node_for(new)
    ignored = _ignored(subresource, status_subresource, new)
    version = api_version or str(new.get("apiVersion", ""))
    if old is None and not raw_new:
        out = dict(new)
        meta = dict(new.get("metadata") or {})
        meta.pop("managedFields", None)
        managed = _created_managed(new, manager, now, operation, version, node, ignored, subresource)
        if managed:
            meta["managedFields"] = managed
        out["metadata"] = meta
        return out
    entries = decode_managed_fields(new) if raw_new else []
    if not entries and old is not None:
        entries = decode_managed_fields(old)
    compare = _compare(_without_managed(old), _without_managed(new), node, ignored)
    changed = compare.added | compare.modified

    me = ManagedEntry(manager, operation, version, now, subresource)
    by_id = {e.identity: e for e in entries}
    mine = by_id.pop(me.identity, None)
    if mine is not None:
        me.fields = set(mine.fields)
        me.raw_fields, me.raw_paths = mine.raw_fields, mine.raw_paths
    for other in by_id.values():
        other.fields -= changed
        other.fields -= compare.removed
    me.fields = (me.fields - compare.removed) | changed
    if mine is not None and not changed and not compare.removed:
        me.time = mine.time
    return _with_managed(new, [*by_id.values(), me])


def created_managed_fields(
    new: Obj,
    manager: str,
    *,
    now: str,
    api_version: str,
    node: schema.Node,
    status_subresource: bool = True,
) -> list[dict[str, Any]]:
    """The managedFields a create through the main endpoint records: what :func:`record_update` puts in
    ``record_update(None, new, ...)`` when ``new`` carries no managedFields, without copying ``new`` to return it
    (an empty list: no entry)."""
    ignored = _STATUS_ONLY if status_subresource else frozenset()
    return _created_managed(new, manager, now, "Update", api_version, node, ignored, "")


def _created_managed(
    new: Obj,
    manager: str,
    now: str,
    operation: str,
    version: str,
    node: schema.Node,
    ignored: frozenset[str],
    subresource: str,
) -> list[dict[str, Any]]:
    """A create: every field is the manager's; one walk builds the FieldsV1 (see created_fields)."""
    fields = created_fields(new, node, ignored)
    if not fields:
        return []
    entry: dict[str, Any] = {"manager": manager, "operation": operation, "apiVersion": version}
    if now:
        entry["time"] = now
    entry["fieldsType"] = "FieldsV1"
    entry["fieldsV1"] = fields
    if subresource:
        entry["subresource"] = subresource
    return [entry]


# --------------------------------------------------------------------------------------------------------------
# Server-side apply
# --------------------------------------------------------------------------------------------------------------


def _merge(live: Any, config: Any, node: schema.Node) -> Any:
    """structured-merge-diff ``Merge``: the configuration wins; granular maps and lists merge."""
    if live is _MISSING or live is None:
        return _drop_nulls(copy.deepcopy(config))
    if isinstance(config, dict) and isinstance(live, dict) and not node.map_atomic:
        out = dict(live)
        for key, value in config.items():
            if value is None:
                out.pop(key, None)
            else:
                out[key] = _merge(live.get(key, _MISSING), value, node.field(key))
        return out
    if isinstance(config, list) and isinstance(live, list) and node.list_type in ("map", "set"):
        return _merge_list(live, config, node)
    return _drop_nulls(copy.deepcopy(config))


def _drop_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


def _merge_list(live: list[Any], config: list[Any], node: schema.Node) -> list[Any]:
    """Associative/set list merge keeping upstream's order (a port of ``mergingWalker.visitListItems``)."""
    item_node = node.items()
    lhs = [(item_element(v, node, i), v) for i, v in enumerate(live)]
    rhs = [(item_element(v, node, i), v) for i, v in enumerate(config)]
    observed_lhs = dict(lhs)
    observed_rhs = dict(rhs)
    shared = [pe for pe, _ in rhs if pe in observed_lhs]
    next_shared: str | None = shared.pop(0) if shared else None
    merged_rhs: set[str] = set()
    out: list[Any] = []
    li = ri = 0
    while li < len(lhs) or ri < len(rhs):
        if li < len(lhs) and ri < len(rhs):
            pe = lhs[li][0]
            if pe == rhs[ri][0]:
                merged_rhs.add(pe)
                out.append(_merge(observed_lhs[pe], observed_rhs[pe], item_node))
                li += 1
                ri += 1
                next_shared = shared.pop(0) if shared else None
                continue
            if pe in observed_rhs and next_shared is not None and next_shared != pe:
                li += 1
                continue
        if li < len(lhs):
            pe, value = lhs[li]
            if pe not in observed_rhs:
                out.append(value)
                li += 1
                continue
            if pe in merged_rhs:
                li += 1
                continue
        if ri < len(rhs):
            pe = rhs[ri][0]
            merged_rhs.add(pe)
            out.append(_merge(observed_lhs.get(pe, _MISSING), observed_rhs[pe], item_node))
            ri += 1
            if next_shared is not None and next_shared == pe:
                next_shared = shared.pop(0) if shared else None
            continue
    return out


def _remove_path(obj: Any, path: Path) -> None:
    """Delete the node at ``path`` from ``obj`` in place (no-op when absent)."""
    if not path:
        return
    parent = obj
    for element in path[:-1]:
        parent = _step(parent, element)
        if parent is _MISSING:
            return
    last = path[-1]
    if isinstance(parent, dict) and last.startswith("f:"):
        parent.pop(last[2:], None)
    elif isinstance(parent, list):
        for i, item in enumerate(parent):
            if _matches(item, last, i):
                del parent[i]
                return


def _step(node: Any, element: str) -> Any:
    if isinstance(node, dict) and element.startswith("f:"):
        return node.get(element[2:], _MISSING)
    if isinstance(node, list):
        for i, item in enumerate(node):
            if _matches(item, element, i):
                return item
    return _MISSING


def _matches(item: Any, element: str, index: int) -> bool:
    kind, _, rest = element.partition(":")
    if kind == "k":
        if not isinstance(item, dict):
            return False
        keys = json.loads(rest)
        return all(item.get(k, _KEY_DEFAULTS.get(k)) == v for k, v in keys.items())
    if kind == "v":
        return _canon(item) == rest
    if kind == "i":
        return str(index) == rest
    return False


_SERVER_METADATA = (
    "uid",
    "creationTimestamp",
    "resourceVersion",
    "generation",
    "deletionTimestamp",
    "selfLink",
)


def _is_key_field(path: Path) -> bool:
    """Whether ``path`` is a key field of an associative list item (removing it would orphan the item)."""
    if len(path) < 2 or not path[-1].startswith("f:") or not path[-2].startswith("k:"):
        return False
    try:
        keys = json.loads(path[-2][2:])
    except ValueError:
        return False
    return isinstance(keys, dict) and path[-1][2:] in keys


def _under(path: Path, prefix: Path) -> bool:
    return path[: len(prefix)] == prefix


def server_side_apply(
    live: Obj | None,
    applied: Obj,
    manager: str,
    *,
    now: str,
    force: bool = False,
    api_version: str | None = None,
    node: schema.Node | None = None,
    subresource: str = "",
    status_subresource: bool = True,
) -> Obj:
    """Server-side apply ``applied`` (the decoded ``application/apply-patch+yaml`` body) onto ``live``.

    Args:
        live: the current object, or None when the apply creates it.
        applied: the apply configuration (a partial object with apiVersion, kind, metadata.name).
        manager: the ``fieldManager`` query parameter (required upstream: the caller rejects an empty one).
        now: timestamp for the manager's entry.
        force: ``force=true``: take ownership of conflicting fields instead of failing.
        api_version: version of the request (default ``applied['apiVersion']``).
        node: schema of the object (default: built-in schema of its kind, else schema-less; pass
            :func:`schema.from_openapi` of the CRD version for custom resources).
        subresource: set when applying through a subresource (``status``: only ``status`` and ``metadata`` of
            the configuration are applied).
        status_subresource: whether the kind has a ``status`` subresource (then the main endpoint does not apply
            the configuration's ``status``, as upstream's reset fields).

    Returns:
        The merged object with ``metadata.managedFields`` updated (identity/server fields come from ``live``).

    Raises:
        ApiError 400: the configuration is not an object or carries managedFields.
        ApiError 409: conflicts with other managers, one cause per field (unless ``force``).
    """
    if not isinstance(applied, dict):
        raise errors.bad_request("apply configuration must be a JSON or YAML object")
    if (applied.get("metadata") or {}).get("managedFields"):
        raise errors.bad_request("metadata.managedFields must be nil")
    if not manager:
        raise errors.invalid(
            "PatchOptions",
            "",
            [errors.required("fieldManager", "is required for apply patch")],
            group="meta.k8s.io",
        )
    node = node or _node_for(applied)
    live_clean = _without_managed(live)
    ignored = _ignored(subresource, status_subresource, {**live_clean, **applied})
    # Reset fields (upstream ResetFieldsStrategy): what this endpoint may not change is not applied at all.
    applied = {k: v for k, v in applied.items() if f"f:{k}" not in ignored}
    version = api_version or str(applied.get("apiVersion", ""))
    entries = decode_managed_fields(live) if live is not None else []

    me = ManagedEntry(manager, "Apply", version, now, subresource)
    by_id = {e.identity: e for e in entries}
    previous = by_id.pop(me.identity, None)
    me.fields = {p for p in field_set(applied, node) if p and p[0] not in ignored}

    merged = _merge(live_clean if live is not None else _MISSING, applied, node)
    if not isinstance(merged, dict):
        merged = {}
    if live is not None:
        # Identity and server-owned metadata stay the live object's (the caller checks resourceVersion).
        live_meta = live_clean.get("metadata") or {}
        meta = dict(merged.get("metadata") or {})
        for key in _SERVER_METADATA:
            if key in live_meta:
                meta[key] = live_meta[key]
            else:
                meta.pop(key, None)
        merged["metadata"] = meta

    if previous is not None:
        dropped = previous.fields - me.fields
        others = [e.fields for e in by_id.values()] + [me.fields]
        for path in sorted(dropped, key=len):
            if _is_key_field(path) or any(_under(p, path) for fields in others for p in fields):
                continue
            _remove_path(merged, path)

    compare = _compare(live_clean, merged, node, ignored)
    changed = compare.added | compare.modified
    conflicts: list[tuple[ManagedEntry, Path]] = []
    for other in by_id.values():
        for path in sorted(other.fields & changed, key=_path_sort_key):
            conflicts.append((other, path))
    if conflicts and not force:
        raise _conflict_error(conflicts)
    before = {e.identity: set(e.fields) for e in entries}
    for other in by_id.values():
        other.fields -= changed
        other.fields -= compare.removed
    if (
        live is not None
        and previous is not None
        and merged == live_clean
        and previous.fields == me.fields
        and all(before[e.identity] == e.fields for e in by_id.values())
    ):
        # A no-op apply changes nothing, not even the entry's time (so the object keeps its resourceVersion).
        me.time = previous.time
    return _with_managed(merged, [*by_id.values(), me])


def _path_sort_key(path: Path) -> tuple[tuple[int, str], ...]:
    return tuple(_element_order(e) for e in path)


def _conflict_error(conflicts: list[tuple[ManagedEntry, Path]]) -> errors.ApiError:
    """409 with upstream's message (``Apply failed with N conflict(s)``) and one cause per field."""
    conflicts = sorted(conflicts, key=lambda c: (c[0].manager, c[0].describe(), _path_sort_key(c[1])))
    causes = [
        {
            "reason": str(errors.CauseType.FIELD_MANAGER_CONFLICT),
            "message": f"conflict with {entry.describe()}",
            "field": path_string(path),
        }
        for entry, path in conflicts
    ]
    if len(conflicts) == 1:
        entry, path = conflicts[0]
        message = f"Apply failed with 1 conflict: conflict with {entry.describe()}: {path_string(path)}"
    else:
        lines: list[str] = []
        seen: list[str] = []
        for entry, _ in conflicts:
            if entry.describe() not in seen:
                seen.append(entry.describe())
        for who in seen:
            lines.append(f"conflicts with {who}:")
            lines.extend(f"- {path_string(p)}" for e, p in conflicts if e.describe() == who)
        message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    return errors.apply_conflict(message, causes)
