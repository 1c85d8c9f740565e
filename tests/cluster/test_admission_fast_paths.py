"""Admission fast paths give exactly what the general paths give: decode verdicts, create managedFields, keys.

The general paths (``decoding._type_error``, ``patch.record_update`` against an empty old object, the JSON
encoder) are the oracle; objects are drawn from the built-in schemas with random deviations (wrong types, unknown
fields, floats into integers, bad base64, nulls) so both the passing and the failing branches are compared.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import assume, event, given, settings
from hypothesis import strategies as st

from berth.cluster import decoding, managed_fields, names, patch, patch_json, schema, validation

KINDS = [
    (f"{group}/{version}" if group else version, kind)
    for group, version, kind in schema.builtin().kinds()
    if not kind.endswith("List") and kind not in ("Status", "WatchEvent", "DeleteOptions")
]
HOT_KINDS = [("v1", "ConfigMap"), ("v1", "Pod"), ("v1", "Event"), ("v1", "Secret"), ("apps/v1", "Deployment")]

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 70000),
    st.sampled_from([1.0, 2.5, -0.0]),
    st.sampled_from(["", "x", "eA==", "no base64!", "25%", 'quo"te', "tab\there", "ünï"]),
)
DEVIATIONS = st.one_of(SCALARS, st.just({}), st.just([]), st.just({"k": "v"}), st.just(["a", 1]))


def value_for(data: st.DataObject, node: schema.Node, depth: int, odds: int = 8) -> Any:
    """A value shaped by ``node``, except where a random draw (1 in ``odds``) puts a deviation instead."""
    if depth <= 0 or data.draw(st.integers(1, odds)) == 1:
        return data.draw(DEVIATIONS)
    if node.int_or_string:
        return data.draw(st.sampled_from([1, "x", "50%"]))
    options = node.schema.get("oneOf")
    if options:
        return value_for(data, node.sub(options[0]), depth, odds)
    types = node.types - {"null"}
    if node.is_struct:
        names = sorted(node.properties)
        keys = data.draw(st.lists(st.sampled_from([*names, "unknownField"]), unique=True, max_size=5))
        return {k: value_for(data, node.field(k), depth - 1, odds) for k in keys}
    if "object" in types or node.is_map:
        keys = data.draw(st.lists(st.sampled_from(["a", "b.c", "d/e"]), unique=True, max_size=2))
        return {k: value_for(data, node.field(k), depth - 1, odds) for k in keys}
    if "array" in types:
        return [value_for(data, node.items(), depth - 1, odds) for _ in range(data.draw(st.integers(0, 2)))]
    if "integer" in types:
        return data.draw(st.integers(0, 5))
    if "number" in types:
        return data.draw(st.sampled_from([1, 1.5]))
    if "boolean" in types:
        return data.draw(st.booleans())
    if "string" in types:
        return "eA==" if node.is_bytes else data.draw(st.sampled_from(["x", "web", "TCP"]))
    return data.draw(DEVIATIONS)


def draw_object(data: st.DataObject, odds: int = 8) -> tuple[dict[str, Any], schema.Node, str]:
    api_version, kind = data.draw(st.sampled_from(HOT_KINDS) | st.sampled_from(KINDS))
    node = schema.for_kind(api_version, kind)
    assert node is not None
    body = value_for(data, node, 7, odds)
    obj = body if isinstance(body, dict) else {}
    obj.update(apiVersion=api_version, kind=kind)
    return obj, node, kind


@settings(max_examples=250, deadline=None)
@given(data=st.data())
def test_decode_fast_verdict_is_the_general_verdict(data: st.DataObject) -> None:
    obj, node, kind = draw_object(data)
    general = decoding._type_error(copy.deepcopy(obj), node, (), kind)
    event("decodes" if general is None else "decode error")
    fit = decoding._decodes(obj, node)
    assert bool(fit) == (general is None)
    if fit:  # the walk's "has unknown fields" flag never misses one the naming walk finds
        assert bool(fit & decoding._UNKNOWN) or not decoding.unknown_fields(copy.deepcopy(obj), node)
    err = validation.decode_error(obj)
    assert (err is None) == (general is None)
    if err is not None:
        assert err.message.endswith(f"cannot be handled as a {kind}: {general}")


@settings(max_examples=200, deadline=None)
@given(data=st.data(), status_subresource=st.booleans())
def test_create_managed_fields_are_the_general_diff(data: st.DataObject, status_subresource: bool) -> None:
    obj, node, _ = draw_object(data, odds=30)
    assume(validation.decode_error(obj) is None)  # what reaches managedFields has decoded
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        meta.pop("managedFields", None)  # client-supplied managedFields take the general path either way
    fast = patch.record_update(
        None, copy.deepcopy(obj), "creator", now="T", node=node, status_subresource=status_subresource
    )
    general = patch.record_update(
        {}, copy.deepcopy(obj), "creator", now="T", node=node, status_subresource=status_subresource
    )
    assert json.dumps(fast) == json.dumps(general)  # byte-identical, key order included
    direct = patch.created_managed_fields(
        obj,
        "creator",
        now="T",
        api_version=str(obj["apiVersion"]),
        node=node,
        status_subresource=status_subresource,
    )
    assert json.dumps(direct) == json.dumps(general["metadata"].get("managedFields", []))


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6)
    | st.sampled_from(["web", "TCP", 'a"b', "a\\b", "\n", "\x7f", "\u2028"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=250, deadline=None)
@given(value=JSON)
def test_canonical_json_is_the_encoders(value: Any) -> None:
    expected = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert managed_fields.canon(value) == expected


def test_list_item_keys_take_the_direct_form() -> None:
    assert (
        managed_fields.canon({"containerPort": 80, "protocol": "TCP"})
        == '{"containerPort":80,"protocol":"TCP"}'
    )
    assert managed_fields.canon({"name": 'we"b'}) == '{"name":"we\\"b"}'
    assert managed_fields.canon({"n": True}) == '{"n":true}'


@settings(max_examples=300, deadline=None)
@given(
    value=st.text(max_size=70) | st.sampled_from(["default", "app", "a/b", "example.com/x", "-x", "x" * 64])
)
def test_remembered_syntax_checks_answer_as_the_checks(value: str) -> None:
    for cached, check in [
        (names.dns1123_label_problems, validation.is_dns1123_label),
        (names._qualified_name_problems, validation.is_qualified_name),
        (names._label_value_problems, validation.is_label_value),
        (names.config_key_problems, validation.is_config_map_key),
    ]:
        assert cached(value) == check(value)
        assert cached(value) == check(value)  # the second answer may come from memory


def test_remembered_syntax_checks_are_bounded() -> None:
    cached = names._KnownGood(validation.is_dns1123_label)
    for i in range(cached.LIMIT + 10):
        assert cached(f"ns-{i}") == []
    assert len(cached._ok) == cached.LIMIT
    assert cached("Bad_Name") == validation.is_dns1123_label("Bad_Name") != []


def reference_decode(fields: Any) -> set[tuple[str, ...]]:
    """decode_fields as first written (the oracle)."""
    out: set[tuple[str, ...]] = set()

    def walk(node: Any, prefix: tuple[str, ...]) -> None:
        for element, child in node.items():
            if element == ".":
                out.add(prefix)
                continue
            path = (*prefix, element)
            if not isinstance(child, dict) or not child:
                out.add(path)
            else:
                walk(child, path)

    walk(fields, ())
    return out


def reference_encode(paths: set[tuple[str, ...]]) -> dict[str, Any]:
    """encode_fields as first written (the oracle)."""
    tree: dict[str, Any] = {}
    for path in paths:
        node = tree
        for element in path:
            node = node.setdefault(element, {})

    def finish(node: dict[str, Any], prefix: tuple[str, ...]) -> dict[str, Any]:
        out: dict[str, Any] = {".": {}} if node and prefix in paths else {}
        for element in sorted(node):
            out[element] = finish(node[element], (*prefix, element))
        return out

    return finish(tree, ())


ELEMENTS = st.sampled_from([".", "f:a", "f:b", "f:c", 'k:{"name":"x"}', "i:0", 'v:"x"', ""])
FIELD_TREES = st.recursive(
    st.just({}) | st.sampled_from([None, 1, "x"]),
    lambda inner: st.dictionaries(ELEMENTS, inner, max_size=4),
    max_leaves=12,
).filter(lambda tree: isinstance(tree, dict))


@settings(max_examples=300, deadline=None)
@given(raw=FIELD_TREES)
def test_fields_v1_decoding_and_reuse(raw: dict[str, Any]) -> None:
    paths: set[tuple[str, ...]] = set()
    canonical = managed_fields._decode_into(raw, (), paths)
    event("kept as is" if canonical else "re-encoded")
    assert paths == reference_decode(raw) == patch.decode_fields(raw)
    encoded = patch.encode_fields(paths)
    assert json.dumps(encoded) == json.dumps(reference_encode(paths))
    if canonical:  # what is kept is byte for byte what re-encoding would write
        assert json.dumps(encoded) == json.dumps(raw)
    assert managed_fields._decode_into(encoded, (), set())  # whatever berth writes is kept the next time


def test_untouched_managers_keep_their_fields_object() -> None:
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"a": "1"}}
    created = patch.record_update(None, obj, "creator", now="T0")
    edited = copy.deepcopy(created)
    edited["data"]["b"] = "2"
    out = patch.record_update(created, edited, "editor", now="T1")
    entries = {e["manager"]: e for e in out["metadata"]["managedFields"]}
    assert entries["creator"]["fieldsV1"] is edited["metadata"]["managedFields"][0]["fieldsV1"]
    assert entries["editor"]["fieldsV1"] == {"f:data": {"f:b": {}}}
    edited = copy.deepcopy(out)
    edited["data"]["a"] = "3"  # the creator loses data.a: its entry is written anew
    out = patch.record_update(out, edited, "editor", now="T2")
    entries = {e["manager"]: e for e in out["metadata"]["managedFields"]}
    assert entries["creator"]["fieldsV1"] == {"f:data": {}}
    assert entries["editor"]["fieldsV1"] == {"f:data": {"f:a": {}, "f:b": {}}}


def reference_json_equal(a: Any, b: Any) -> bool:
    """patch_json._json_equal as first written (the oracle)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(reference_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(reference_json_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


CLOSE_JSON = st.recursive(
    st.sampled_from([None, True, False, 0, 1, 1.0, 0.0, "1", "", "a"]),
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from(["a", "b"]), inner, max_size=2)
    ),
    max_leaves=5,
)


@settings(max_examples=300, deadline=None)
@given(a=CLOSE_JSON, b=CLOSE_JSON)
def test_json_equality_is_the_reference(a: Any, b: Any) -> None:
    assert patch_json._json_equal(a, b) == reference_json_equal(a, b)
    assert patch_json._json_equal(a, a) and patch_json._json_equal(b, b)
