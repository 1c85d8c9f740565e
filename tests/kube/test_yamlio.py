"""The one YAML loader: places in errors, alias bounds, copies, strict keys, and writing what it reads back."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from berth.kube import yamlblock, yamlio, yamlscalar
from berth.kube.errors import InputError

SRC = Path(__file__).resolve().parents[2] / "src" / "berth"


def alias_bomb(levels: int) -> str:
    """The billion-laughs shape: each level is a list of nine aliases to the level before."""
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("levels", [7, 9, 20])
def test_an_alias_bomb_is_refused_naming_the_file(levels: int) -> None:
    # 9 levels are 387 million nodes when expanded; the bound stops after about a thousand, as go-yaml's does
    with pytest.raises(
        InputError, match=r"bomb.yaml, document 1, line \d+: YAML: document contains excessive"
    ):
        yamlio.load_documents(alias_bomb(levels), "bomb.yaml")


def test_modest_alias_use_is_expanded_into_independent_copies() -> None:
    (doc,) = yamlio.load_documents(alias_bomb(2) + "m: &m {k: [1]}\nq: *m\n")
    assert len(doc.body["a2"]) == 9 and doc.body["a2"][0][0] == ["lol"] * 9
    doc.body["q"]["k"].append(2)  # Go decodes every alias afresh; so must berth, or edits would leak
    assert doc.body["m"] == {"k": [1]}


def test_a_bomb_in_a_strict_read_is_refused_too() -> None:
    with pytest.raises(InputError, match="excessive aliasing"):
        yamlio.load_documents(alias_bomb(9), "config.yaml", strict=True)
    assert yamlio.duplicate_keys(alias_bomb(9)) == []  # refused input: nothing found, and no hang


def test_an_alias_that_contains_itself_is_refused() -> None:
    with pytest.raises(InputError, match=r"x.yaml, document 1, line 1: YAML: an alias refers to an anchor"):
        yamlio.load_documents("a: &a [1, *a]\n", "x.yaml")


def test_errors_name_the_document_and_the_line_in_the_whole_file() -> None:
    text = "a: 1\n---\nb: 2\n---\n# c\nc:\n  d: !!int nope\n"
    with pytest.raises(InputError) as caught:
        yamlio.load_documents(text, "f.yaml")
    assert str(caught.value) == "f.yaml, document 3, line 7: YAML: c.d: cannot decode !!str `nope` as a !!int"
    # the flow list is still open at the end of the file, line 5
    with pytest.raises(InputError, match=r"f.yaml, document 2, line 5: malformed YAML"):
        yamlio.load_documents("a: 1\n---\nb:\n  - [\n", "f.yaml")
    with pytest.raises(InputError, match=r"f.yaml, line 2: invalid YAML document separator: '\{a: 1\}'"):
        yamlio.load_documents("a: 1\n--- {a: 1}\n", "f.yaml")


def test_documents_keep_their_first_line_and_number() -> None:
    docs = yamlio.load_documents("---\n# empty\n---\na: 1\n---\n\n\nb: 2\n")
    assert [(d.index, d.line, d.body) for d in docs] == [(0, 4, {"a": 1}), (1, 8, {"b": 2})]


def test_kubernetes_scalars_in_one_document() -> None:
    body = yamlio.load_one("a: [y, n, on, 1e3, 0o17, 1_000, 1.0, =, 2001-12-14, ~]\nyes: k\n1.5: f\n")
    assert body == {
        "a": [True, False, True, 1000, 15, 1000, 1, "=", "2001-12-14", None],
        "true": "k",
        "1.5": "f",
    }


def test_a_stream_that_starts_with_a_brace_is_json_then_yaml_as_kubectl_reads_it() -> None:
    docs = yamlio.load_documents('{"a": 1e3}\n{"b": [1.5]}\n')
    assert [d.body for d in docs] == [{"a": 1000}, {"b": [1.5]}]
    assert yamlio.load_one("{a: y}\n") == {"a": True}  # not JSON: the whole stream is YAML
    with pytest.raises(InputError, match=r"j.json, document 3, line 3: malformed JSON"):
        yamlio.load_documents('{"a": 1}\n{"b": 2}\n{c: 3}\n', "j.json")


def test_strict_reads_report_every_key_set_twice() -> None:
    text = "a: 1\nl:\n- {k: 1, k: 2}\nbase: &b {x: 1}\nm:\n  x: 0\n  <<: *b\n"
    (doc,) = yamlio.load_documents(text, strict=True)
    assert [d.message() for d in doc.duplicates] == [
        'l[0]: key "k" already set in map (line 3)',
        'm: key "x" already set in map (line 7)',
    ]
    assert yamlio.load_documents(text)[0].duplicates == ()  # the ordinary read keeps the last one quietly


def test_a_file_that_is_missing_or_unreadable_is_named(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"nope.yaml: file not found"):
        yamlio.load_file(tmp_path / "nope.yaml")
    (tmp_path / "bin.yaml").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(InputError, match=r"bin.yaml: cannot read file"):
        yamlio.load_file(tmp_path / "bin.yaml")


TRICKY_STRINGS = [
    "y", "n", "N", "on", "Off", "yes", "1e3", "1_000", "0o17", "0x1F", "08", ".5", "-.5", "1.", "=", "<<", "~",
    "null", "", " ", "2001-12-14", "2001-12-14 21:59:43.10", "! x", "&a", "*a", "- x", "a: b", "#", "@x", "`x",
    "1.10", "+1", "-", ".inf", ".nan", "0b101", "true", "12:30", "x\ny", "tail ", "\t",
]  # fmt: skip


@pytest.mark.parametrize("text", TRICKY_STRINGS)
def test_dump_quotes_every_string_kubernetes_would_read_as_something_else(text: str) -> None:
    out = yamlio.dump({"v": text, text: "k"} if text else {"v": text})
    assert yamlio.load_one(out) == ({"v": text, text: "k"} if text else {"v": text})


def test_dump_writes_the_same_text_with_its_scalar_memo_cold_or_warm(monkeypatch: pytest.MonkeyPatch) -> None:
    doc = {"tricky": TRICKY_STRINGS, **{t: [t, 1, 1.5, True, None] for t in TRICKY_STRINGS if t}}
    plain = {"tricky": [t for t in TRICKY_STRINGS if t.isascii() and t.isprintable()], "n": [1, True, None]}
    monkeypatch.setattr(yamlio, "_SCALAR_TAGS", {})
    monkeypatch.setattr(yamlio, "_BLOCK_SCALARS", yamlblock.scalars(yamlio._plain_tag))
    cold_plain = yamlio.dump(plain)
    assert yamlblock.emit(plain, yamlio._plain_tag) == cold_plain == yamlio._pyyaml_dump(plain)
    monkeypatch.setattr(yamlio, "_BLOCK_SCALARS", yamlblock.scalars(yamlio._plain_tag))
    cold = yamlio.dump(doc)
    assert yamlio._SCALAR_TAGS and yamlio._BLOCK_SCALARS.seen  # remembered
    assert yamlio.dump(doc) == cold
    assert yamlio._pyyaml_dump(doc) == cold

    class Forgetful(dict):  # type: ignore[type-arg]
        def __setitem__(self, key: object, value: object) -> None:
            """Remember nothing: every scalar is resolved afresh."""

    # ... and as it is written without either memo
    monkeypatch.setattr(yamlio, "_SCALAR_TAGS", Forgetful())
    monkeypatch.setattr(yamlio, "_BLOCK_SCALARS", yamlblock.scalars(yamlio._plain_tag))
    monkeypatch.setattr(yamlio._BLOCK_SCALARS, "seen", Forgetful())
    assert yamlio.dump(doc) == cold
    assert yamlio._pyyaml_dump(doc) == cold
    assert yamlio.dump(plain) == cold_plain
    assert yamlio.load_one(cold) == doc


def test_dump_writes_a_str_as_pyyamls_general_path_does() -> None:
    """The dumper's shortcut for a plain ``str`` makes the node PyYAML's own path (alias check, the registered
    representer) makes: the same bytes, shared dicts still written once with an alias."""
    shared = {"a": "x\ny"}
    doc = {
        "tricky": TRICKY_STRINGS,
        **{t: [t, 1, 1.5, True, None, f"{t}\n{t}", f" {t}\n"] for t in TRICKY_STRINGS if t},
        "shared": [shared, shared, ["é \u2028 x", "\x85"]],
    }

    class General(yamlio._Dumper):  # type: ignore[misc]
        represent_data = yaml.representer.BaseRepresenter.represent_data

    general = yaml.dump(doc, Dumper=General, sort_keys=False, default_flow_style=False, allow_unicode=True)
    assert yamlio.dump(doc) == general
    assert "&id001" in general


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False).map(yamlscalar.json_value)
    | st.text(max_size=12),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_whatever_berth_writes_it_reads_back_unchanged(value: object) -> None:
    back = yamlio.load_one(yamlio.dump({"v": value}))
    assert back == {"v": value}


def test_integral_floats_read_as_kubernetes_stores_them() -> None:
    assert yamlio.load_one("[1.0, 1e20, 1e21, 9223372036854775807, 9223372036854775808, -0.0]") == [
        1,
        1e20,
        1e21,
        9223372036854775807,
        9.223372036854775808e18,
        0,
    ]
    assert all(not isinstance(v, float) or math.isfinite(v) for v in yamlio.load_one("[.5, 1e300]"))


def test_every_yaml_read_in_berth_goes_through_the_one_loader() -> None:
    pattern = re.compile(
        r"yaml\.(safe_load|load|load_all|safe_load_all|full_load|compose|compose_all)\(|CSafeLoader"
    )
    offenders = [
        f"{path.relative_to(SRC)}:{number}"
        for path in SRC.rglob("*.py")
        if path.name not in ("yamlio.py",)
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert offenders == []
