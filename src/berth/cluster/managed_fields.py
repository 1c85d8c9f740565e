"""Field sets (FieldsV1) and ``metadata.managedFields``: which manager owns which fields, and what an ``Update``
(create, PUT, any non-apply patch) records (see :mod:`berth.cluster.patch` for the model)."""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from berth.cluster import errors, schema
from berth.cluster.patch_json import _json_equal

Obj = dict[str, Any]
Path = tuple[str, ...]
"""A field path as FieldsV1 path elements, e.g. ``("f:spec", 'k:{"name":"web"}', "f:image")``."""

_MISSING: Any = object()

# --------------------------------------------------------------------------------------------------------------
# Field sets (FieldsV1) and managed fields
# --------------------------------------------------------------------------------------------------------------


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
KEY_DEFAULTS: dict[str, Any] = {"protocol": "TCP"}


_CANON = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# Characters JSON must escape in a string (ensure_ascii=False): quote, backslash and the C0 controls.
_JSON_ESCAPED = re.compile(r'[\x00-\x1f\\"]')


def canon(value: Any) -> str:
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
                elif k in KEY_DEFAULTS:
                    ident[k] = KEY_DEFAULTS[k]
            return "k:" + canon(ident)
    if node.list_type == "set":
        return "v:" + canon(item)
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
    node = node or node_for(obj)
    skip = _ignored_elements(ignored)
    return {p for p, e in _entries(obj, node, skip).items() if e[2] and _tracked(p, skip)}


@dataclass(frozen=True)
class _Comparison:
    added: set[Path]
    modified: set[Path]
    removed: set[Path]


def compare_fields(old: Any, new: Any, node: schema.Node, ignored: Collection[str]) -> _Comparison:
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


def element_order(element: str) -> tuple[int, str]:
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
            parts.append("[" + ",".join(f"{k}={canon(v)}" for k, v in sorted(keys.items())) + "]")
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


def with_managed(obj: Obj, entries: Iterable[ManagedEntry]) -> Obj:
    kept = [e for e in _sorted_entries(entries) if e.fields]
    meta = dict(obj.get("metadata") or {})
    if kept:
        meta["managedFields"] = [e.encode() for e in kept]
    else:
        meta.pop("managedFields", None)
    out = dict(obj)
    out["metadata"] = meta
    return out


def without_managed(obj: Any) -> Obj:
    if not isinstance(obj, dict):
        return {}
    out: Obj = dict(obj)
    meta = out.get("metadata")
    if isinstance(meta, dict) and "managedFields" in meta:
        out["metadata"] = {k: v for k, v in meta.items() if k != "managedFields"}
    return out


def node_for(obj: Obj) -> schema.Node:
    return schema.for_kind(str(obj.get("apiVersion", "")), str(obj.get("kind", ""))) or schema.ANY


def ignored_fields(subresource: str, status_subresource: bool, obj: Obj) -> frozenset[str]:
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
        return with_managed(new, [])
    node = node or node_for(new)
    ignored = ignored_fields(subresource, status_subresource, new)
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
    compare = compare_fields(without_managed(old), without_managed(new), node, ignored)
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
    return with_managed(new, [*by_id.values(), me])


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
