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

The engines live in ``patch_json.py``, ``patch_strategic.py``, ``managed_fields.py`` and this module (server-side
apply); the public names are re-exported here, so callers keep one import.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from berth.cluster import errors, schema
from berth.cluster.managed_fields import (
    KEY_DEFAULTS,
    ManagedEntry,
    canon,
    compare_fields,
    created_fields,
    created_managed_fields,
    decode_fields,
    decode_managed_fields,
    element_order,
    encode_fields,
    field_set,
    ignored_fields,
    item_element,
    node_for,
    path_string,
    record_update,
    with_managed,
    without_managed,
)
from berth.cluster.patch_json import json_patch, merge_patch
from berth.cluster.patch_strategic import (
    DIRECTIVE,
    SMP_UNSUPPORTED_TYPES,
    child_merge_key,
    strategic_merge_patch,
    strip_directives,
)

Obj = dict[str, Any]
Path = tuple[str, ...]
"""A field path as FieldsV1 path elements, e.g. ``("f:spec", 'k:{"name":"web"}', "f:image")``."""

_MISSING: Any = object()

__all__ = [
    "DIRECTIVE",
    "SMP_UNSUPPORTED_TYPES",
    "ManagedEntry",
    "child_merge_key",
    "created_fields",
    "created_managed_fields",
    "decode_fields",
    "decode_managed_fields",
    "encode_fields",
    "field_set",
    "item_element",
    "json_patch",
    "merge_patch",
    "path_string",
    "record_update",
    "server_side_apply",
    "strategic_merge_patch",
    "strip_directives",
]

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


def _remove_emptied_fields(
    merged: Obj, applied: Obj, dropped: set[Path], owned: list[set[Path]], node: schema.Node
) -> None:
    """Remove the struct fields a manager's dropped fields leave empty, which nobody owns and the configuration
    does not name, deepest first.

    Upstream's prune counts every named field (a struct's declared field, not a map key or list item) above a
    dropped field as dropped too (structured-merge-diff's ``EnsureNamedFieldsAreMembers``), then adds back what
    other managers own: applying a configuration without ``spec.alerting.alertmanagers`` removes ``spec.alerting``
    rather than leaving an empty ``alerting: {}`` that the schema may refuse, and removing an object's last
    annotation removes ``metadata.annotations``. What is left non-empty (fields nobody owns) stays."""
    parents = {path[:n] for path in dropped for n in range(2 if path[0] == "f:metadata" else 1, len(path))}
    for prefix in sorted(parents, key=len, reverse=True):
        if not _named_field(node, prefix) or _at(applied, prefix) is not _MISSING:
            continue
        if _at(merged, prefix) in ({}, []) and not any(_under(p, prefix) for fields in owned for p in fields):
            _remove_path(merged, prefix)


def _named_field(node: schema.Node, path: Path) -> bool:
    """Whether the last element of ``path`` is a field its schema declares (a struct field, not a map key)."""
    parent = node
    for element in path[:-1]:
        parent = parent.field(element[2:]) if element.startswith("f:") else parent.items()
    last = path[-1]
    return last.startswith("f:") and parent.is_struct and parent.has_field(last[2:])


def _at(obj: Any, path: Path) -> Any:
    for element in path:
        obj = _step(obj, element)
        if obj is _MISSING:
            break
    return obj


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
        return all(item.get(k, KEY_DEFAULTS.get(k)) == v for k, v in keys.items())
    if kind == "v":
        return canon(item) == rest
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
    node = node or node_for(applied)
    live_clean = without_managed(live)
    ignored = ignored_fields(subresource, status_subresource, {**live_clean, **applied})
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
        _remove_emptied_fields(merged, applied, dropped, others, node)

    compare = compare_fields(live_clean, merged, node, ignored)
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
    return with_managed(merged, [*by_id.values(), me])


def _path_sort_key(path: Path) -> tuple[tuple[int, str], ...]:
    return tuple(element_order(e) for e in path)


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
