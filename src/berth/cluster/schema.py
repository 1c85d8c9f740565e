"""Schema knowledge of built-in kinds and custom resources: what strategic merge, apply and validation need.

Strategic merge patch must know which lists merge by which key (``containers`` by ``name``, ``ports`` by
``containerPort``), server-side apply must know which lists are associative (``x-kubernetes-list-type: map`` with
``x-kubernetes-list-map-keys``), sets or atomic, and which structs are atomic (``x-kubernetes-map-type``), and
validation needs types, ``required`` and ``enum``. Upstream compiles all of that into the API server from the
OpenAPI documents; we read it from a compact JSON table, ``builtin_schema.json`` beside this module, generated once
from the Kubernetes v1.35 schemas the ``kubernetes-validate`` wheel ships (descriptions dropped, every other schema
keyword and every ``x-kubernetes-*`` extension kept). The descriptions live apart, gzipped, in
``builtin_descriptions.json.gz``: only the OpenAPI documents (``kubectl explain``) read them. Regenerate both with::

    python -m berth.cluster.schema path/to/v1.35.0-local/_definitions.json

Custom resources use the same :class:`Node` over their CRD's ``openAPIV3Schema`` (see :func:`from_openapi`), so the
patch and apply engines have one view of "schema" whatever the kind.

A missing or unknown schema is not an error: :data:`ANY` gives the defaults structured-merge-diff uses for deduced
types (maps merge key by key, lists are atomic, no merge keys).

Pure module: the only read is the package-data table, loaded once on first use.
"""

from __future__ import annotations

import gzip
import json
import sys
from collections.abc import Mapping
from functools import cache, cached_property
from importlib import resources
from typing import Any

TABLE_FILE = "builtin_schema.json"
DESCRIPTIONS_FILE = "builtin_descriptions.json.gz"

# JSON-schema keywords worth keeping in the compact table (plus every ``x-kubernetes-*`` extension).
_KEPT_KEYWORDS = frozenset(
    {
        "type",
        "properties",
        "additionalProperties",
        "items",
        "$ref",
        "required",
        "enum",
        "format",
        "allOf",
        "oneOf",
        "anyOf",
        "default",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "pattern",
        "nullable",
    }
)


_JSON_KINDS: dict[str, tuple[str, ...]] = {
    "boolean": ("bool",),
    "integer": ("int",),
    "number": ("int", "float"),
    "string": ("string",),
    "array": ("array",),
    "object": ("object",),
}


class Node:
    """A position in a schema: the schema of one value (object, field, list item or map value).

    Wraps a JSON-schema dict; ``$ref`` (and a single-element ``allOf``) is resolved lazily against ``defs`` so the
    recursive built-in graph costs nothing until walked. Extensions written on the referring property (say
    ``x-kubernetes-patch-merge-key`` on ``PodSpec.containers``) win over those on the referenced type.
    """

    __slots__ = ("__dict__", "_children", "_defs", "_raw")

    def __init__(self, raw: Mapping[str, Any], defs: Mapping[str, Any] | None = None) -> None:
        self._raw = raw
        self._defs: Mapping[str, Any] = defs or {}
        self._children: dict[str, Node] = {}

    @cached_property
    def schema(self) -> Mapping[str, Any]:
        """The resolved schema dict (referenced type merged under the property's own keywords)."""
        raw = self._raw
        target: Mapping[str, Any] | None = None
        ref = raw.get("$ref")
        if isinstance(ref, str):
            target = self._defs.get(ref.rsplit("/", 1)[-1])
        else:
            all_of = raw.get("allOf")
            if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], Mapping):
                inner = all_of[0].get("$ref")
                if isinstance(inner, str):
                    target = self._defs.get(inner.rsplit("/", 1)[-1])
        if target is None:
            return raw
        merged = dict(Node(target, self._defs).schema)
        merged.update({k: v for k, v in raw.items() if k not in ("$ref", "allOf")})
        return merged

    @cached_property
    def ref(self) -> str:
        """Name of the definition this position refers to (``io.k8s.api.core.v1.Container``), else ``""``."""
        ref = self._raw.get("$ref")
        if not isinstance(ref, str):
            all_of = self._raw.get("allOf")
            if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], Mapping):
                ref = all_of[0].get("$ref")
        return ref.rsplit("/", 1)[-1] if isinstance(ref, str) else ""

    # -- shape -----------------------------------------------------------------------------------------------------

    @cached_property
    def types(self) -> frozenset[str]:
        """JSON types allowed here (``null`` included when nullable); empty when unconstrained."""
        t = self.schema.get("type")
        out: set[str] = set()
        if isinstance(t, str):
            out.add(t)
        elif isinstance(t, list):
            out.update(str(x) for x in t)
        if self.schema.get("nullable") is True:
            out.add("null")
        if "object" not in out and ("properties" in self.schema or "additionalProperties" in self.schema):
            out.add("object")
        if "array" not in out and "items" in self.schema:
            out.add("array")
        return frozenset(out)

    @cached_property
    def properties(self) -> Mapping[str, Any]:
        props = self.schema.get("properties")
        return props if isinstance(props, Mapping) else {}

    @cached_property
    def is_struct(self) -> bool:
        """An object with declared fields (a Go struct or a CRD object with ``properties``)."""
        return bool(self.properties)

    @cached_property
    def is_map(self) -> bool:
        """An object keyed by arbitrary strings (``additionalProperties`` schema, e.g. labels, data)."""
        return isinstance(self.schema.get("additionalProperties"), Mapping) and not self.is_struct

    @cached_property
    def is_list(self) -> bool:
        return "array" in self.types

    @cached_property
    def int_or_string(self) -> bool:
        if self.schema.get("x-kubernetes-int-or-string") is True:
            return True
        one_of = self.schema.get("oneOf")
        if isinstance(one_of, list) and len(one_of) == 2:
            kinds = {frozenset(Node(o).types - {"null"}) for o in one_of if isinstance(o, Mapping)}
            return kinds == {frozenset({"string"}), frozenset({"integer"})}
        return False

    @cached_property
    def preserve_unknown_fields(self) -> bool:
        return self.schema.get("x-kubernetes-preserve-unknown-fields") is True

    @cached_property
    def embedded_resource(self) -> bool:
        return self.schema.get("x-kubernetes-embedded-resource") is True

    @cached_property
    def is_any(self) -> bool:
        """No constraints at all (the deduced schema)."""
        return not self.types and not self.int_or_string and not self.properties

    @cached_property
    def accepted(self) -> frozenset[str] | None:
        """JSON kinds a value here may take (``bool``, ``int``, ``float``, ``string``, ``array``, ``object``);
        None when anything goes. ``oneOf``/``anyOf`` options and int-or-string are unions."""
        if self.int_or_string:
            return frozenset({"int", "string"})
        options = self.schema.get("oneOf") or self.schema.get("anyOf")
        if isinstance(options, list) and options:
            union: set[str] = set()
            for option in options:
                if isinstance(option, Mapping):
                    accepted = self.sub(option).accepted
                    if accepted is None:
                        return None
                    union |= accepted
            return frozenset(union) or None
        kinds: set[str] = set()
        for t in self.types - {"null"}:
            kinds.update(_JSON_KINDS.get(t, ()))
        return frozenset(kinds) or None

    @cached_property
    def is_bytes(self) -> bool:
        """A base64 string (``format: byte``), e.g. Secret ``data`` values."""
        return self.schema.get("format") == "byte"

    @cached_property
    def scalar_fits(self) -> frozenset[type]:
        """Python types of JSON-decoded scalars that fit here as they are: no base64 or integral-float check.

        The decode check's fast path (most values are plain strings and numbers of the declared type); anything
        else -- containers, floats into integers, base64 strings, wrong types -- takes the full check.
        """
        accepted = self.accepted
        fits: set[type] = {type(None)}
        if accepted is None or "bool" in accepted:
            fits.add(bool)
        if accepted is None or "int" in accepted:
            fits.add(int)
        if accepted is None or "float" in accepted:
            fits.add(float)
        if (accepted is None or "string" in accepted) and not self.is_bytes:
            fits.add(str)
        return frozenset(fits)

    # -- navigation ------------------------------------------------------------------------------------------------

    def field(self, name: str) -> Node:
        """Schema of field or map entry ``name``; :data:`ANY` when undeclared (memoized: walks repeat)."""
        child = self.declared.get(name)
        return self.additional if child is None else child

    @cached_property
    def declared(self) -> Mapping[str, Node]:
        """The node of every declared field, by name (built once; hot walks look fields up here directly)."""
        return {
            name: Node(raw, self._defs) if isinstance(raw, Mapping) else ANY
            for name, raw in self.properties.items()
        }

    @cached_property
    def additional(self) -> Node:
        """Schema of any undeclared key (``additionalProperties``: map values); :data:`ANY` when none is given."""
        raw = self.schema.get("additionalProperties")
        return Node(raw, self._defs) if isinstance(raw, Mapping) else ANY

    def sub(self, raw: Mapping[str, Any]) -> Node:
        """A node over a nested schema dict (``oneOf`` options, ``additionalProperties``) sharing this graph."""
        return Node(raw, self._defs)

    def has_field(self, name: str) -> bool:
        return name in self.properties

    def items(self) -> Node:
        """Schema of the list's items; :data:`ANY` when undeclared."""
        child = self._children.get("[]")
        if child is None:
            it = self.schema.get("items")
            child = self._children["[]"] = Node(it, self._defs) if isinstance(it, Mapping) else ANY
        return child

    # -- merge semantics -------------------------------------------------------------------------------------------

    @cached_property
    def list_type(self) -> str:
        """``atomic``, ``set`` or ``map`` (associative); ``atomic`` when unspecified, as upstream deduces."""
        lt = self.schema.get("x-kubernetes-list-type")
        return lt if lt in ("atomic", "set", "map") else "atomic"

    @cached_property
    def list_map_keys(self) -> tuple[str, ...]:
        keys = self.schema.get("x-kubernetes-list-map-keys")
        return tuple(str(k) for k in keys) if isinstance(keys, list) else ()

    @cached_property
    def patch_merge_key(self) -> str:
        key = self.schema.get("x-kubernetes-patch-merge-key")
        return key if isinstance(key, str) else ""

    @cached_property
    def patch_strategies(self) -> frozenset[str]:
        """``x-kubernetes-patch-strategy`` split on commas: among ``merge``, ``replace``, ``retainKeys``."""
        ps = self.schema.get("x-kubernetes-patch-strategy")
        return frozenset(s.strip() for s in ps.split(",")) if isinstance(ps, str) else frozenset()

    @cached_property
    def map_atomic(self) -> bool:
        """``x-kubernetes-map-type: atomic``: the whole object is one value for apply."""
        return self.schema.get("x-kubernetes-map-type") == "atomic"

    @cached_property
    def required(self) -> tuple[str, ...]:
        req = self.schema.get("required")
        return tuple(str(r) for r in req) if isinstance(req, list) else ()

    def __repr__(self) -> str:
        return f"Node({dict(self._raw)!r})"


ANY = Node({})
"""The schema that says nothing: apply treats maps as granular and lists as atomic; SMP replaces lists."""


_UNKNOWN_KINDS_KEPT = 4096
"""How many (apiVersion, kind) lookups :meth:`Schemas.for_kind` memoizes before it stops adding unknown ones."""


class Schemas:
    """The built-in type graph, indexed by group/version/kind."""

    def __init__(self, defs: Mapping[str, Any]) -> None:
        self.defs = defs
        index: dict[tuple[str, str, str], str] = {}
        for name, schema in defs.items():
            for gvk in schema.get("x-kubernetes-group-version-kind") or []:
                index[(str(gvk.get("group", "")), str(gvk.get("version", "")), str(gvk.get("kind", "")))] = (
                    name
                )
        self._by_gvk = index
        self._roots: dict[str, Node] = {}
        self._kinds: dict[tuple[str, str], Node | None] = {}

    def definition_name(self, api_version: str, kind: str) -> str | None:
        """``apps/v1``, ``Deployment`` -> ``io.k8s.api.apps.v1.Deployment`` (None when unknown)."""
        group, _, version = api_version.rpartition("/")
        return self._by_gvk.get((group, version, kind))

    def for_kind(self, api_version: str, kind: str) -> Node | None:
        """Schema of a whole object of a built-in kind, or None when the kind is not built in.

        Memoized per (apiVersion, kind): every write asks several times. Unknown pairs are remembered too, but only
        up to a bound, since clients choose them (custom kinds, typos).
        """
        key = (api_version, kind)
        if key in self._kinds:
            return self._kinds[key]
        name = self.definition_name(api_version, kind)
        node = self.definition(name) if name else None
        if node is not None or len(self._kinds) < _UNKNOWN_KINDS_KEPT:
            self._kinds[key] = node
        return node

    def definition(self, name: str) -> Node:
        """The (memoized) node of one definition, e.g. ``io.k8s.api.core.v1.PodSpec``."""
        node = self._roots.get(name)
        if node is None:
            node = self._roots[name] = Node({"$ref": name}, self.defs)
        return node

    def kinds(self) -> list[tuple[str, str, str]]:
        """Every built-in (group, version, kind), sorted."""
        return sorted(self._by_gvk)


@cache
def builtin() -> Schemas:
    """The built-in schemas (Kubernetes v1.35), loaded once from package data."""
    text = resources.files("berth.cluster").joinpath(TABLE_FILE).read_text(encoding="utf-8")
    return Schemas(json.loads(text))


@cache
def descriptions() -> Mapping[str, Mapping[str, str]]:
    """Per built-in definition, its description (key ``""``) and each property's (key: the property name)."""
    data = resources.files("berth.cluster").joinpath(DESCRIPTIONS_FILE).read_bytes()
    table: dict[str, dict[str, str]] = json.loads(gzip.decompress(data))
    return table


def for_kind(api_version: str, kind: str) -> Node | None:
    """Shortcut: :meth:`Schemas.for_kind` on the built-in table."""
    return builtin().for_kind(api_version, kind)


OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


def from_openapi(schema: Mapping[str, Any] | None) -> Node:
    """A :class:`Node` over a CRD version's ``openAPIV3Schema`` (or :data:`ANY` when it has none).

    The object's ``apiVersion``, ``kind`` and ``metadata`` are added when the schema does not declare them, as the
    API server does for every custom resource, and ``metadata`` keeps the built-in ObjectMeta semantics.
    """
    if not schema:
        return ANY
    root = dict(schema)
    props = dict(root.get("properties") or {})
    props.setdefault("apiVersion", {"type": "string"})
    props.setdefault("kind", {"type": "string"})
    props["metadata"] = {"$ref": OBJECT_META}
    root["properties"] = props
    root.setdefault("type", "object")
    return Node(root, builtin().defs)


# -- table generation ------------------------------------------------------------------------------------------------


def _strip(value: Any, in_properties: bool = False) -> Any:
    if isinstance(value, dict):
        if in_properties:
            return {k: _strip(v) for k, v in value.items()}
        out: dict[str, Any] = {}
        for key, item in value.items():
            if key == "properties":
                out[key] = _strip(item, in_properties=True)
            elif key.startswith("x-kubernetes"):
                out[key] = item  # extension values are data, not schemas
            elif key in _KEPT_KEYWORDS:
                if key == "$ref" and isinstance(item, str):
                    item = item.rsplit("/", 1)[-1]
                out[key] = item if key in ("enum", "default", "required") else _strip(item)
        return out
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def build_table(definitions: Mapping[str, Any]) -> dict[str, Any]:
    """The compact table from a ``_definitions.json`` document (``$defs`` or ``definitions``)."""
    defs = definitions.get("$defs") or definitions.get("definitions") or {}
    return {name: _strip(schema) for name, schema in sorted(defs.items())}


def build_descriptions(definitions: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    """What ``kubectl explain`` prints, from a ``_definitions.json`` document: per definition its own description
    (key ``""``) and its properties' (Kubernetes definitions nest no inline objects: deeper fields are refs)."""
    defs = definitions.get("$defs") or definitions.get("definitions") or {}
    out: dict[str, dict[str, str]] = {}
    for name, schema in sorted(defs.items()):
        found: dict[str, str] = {}
        if isinstance(schema.get("description"), str):
            found[""] = schema["description"]
        for prop, sub in (schema.get("properties") or {}).items():
            if isinstance(sub, dict) and isinstance(sub.get("description"), str):
                found[prop] = sub["description"]
        if found:
            out[name] = found
    return out


def main(argv: list[str] | None = None) -> int:
    """Regenerate ``builtin_schema.json`` and ``builtin_descriptions.json.gz`` from a kubernetes-validate
    ``_definitions.json``."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m berth.cluster.schema <_definitions.json>", file=sys.stderr)
        return 2
    with open(args[0], encoding="utf-8") as fh:
        definitions = json.load(fh)
    table = build_table(definitions)
    target = resources.files("berth.cluster").joinpath(TABLE_FILE)
    with open(str(target), "w", encoding="utf-8") as fh:
        json.dump(table, fh, separators=(",", ":"), sort_keys=True)
        fh.write("\n")
    texts = json.dumps(build_descriptions(definitions), separators=(",", ":"), sort_keys=True).encode()
    described = resources.files("berth.cluster").joinpath(DESCRIPTIONS_FILE)
    with open(str(described), "wb") as out:
        # mtime=0: the same input gives the same bytes, so a regeneration diff shows only real changes
        out.write(gzip.compress(texts, compresslevel=9, mtime=0))
    print(f"wrote {len(table)} definitions to {target} and their descriptions to {described}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
