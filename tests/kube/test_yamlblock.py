"""yamlblock writes exactly what PyYAML's dumper (yamlio's) writes, or declines.

The oracle is PyYAML with libyaml's emitter, the writer of every YAML file berth wrote before yamlblock existed:
each generated tree is dumped by both; where yamlblock writes, the bytes must be the same, and the trees it must
accept (the shapes of berth's indexes and plans) it must not decline.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from berth.kube import yamlblock, yamlio

REPO = Path(__file__).resolve().parents[2]


def oracle(value: Any) -> str:
    return yamlio._pyyaml_dump(value)


def emit(value: Any) -> str | None:
    return yamlblock.emit(value, yamlio._plain_tag)


# Characters that decide a scalar's style: indicators, quotes, spaces (folding), digits and letters (numbers,
# booleans, nulls, timestamps as Go or PyYAML read them).
_ALPHABET = " abcnulyestrfoxe0123456789-.:#'\"?,[]{}&*!|>%@`/_=~+TZ"
_WORDS = st.sampled_from(
    ["", " ", "-", "--- x", "...", "a: b", "a:", ":a", "a #b", "#a", "- a", "? a", "y", "yes", "No", "on", "null",
     "~", "1", "0x1F", "0o17", "1e3", "1_000", ".5", "2001-12-14", "2001-12-14T21:59:43Z", "=", "<<", "'", "it's",
     "a  b", "a b", " a", "a ", "true", "-1", "+1", ".inf", "NaN", "0.", "a'b'c"]
)  # fmt: skip
_TEXT = st.one_of(_WORDS, st.text(_ALPHABET, max_size=12), st.text(_ALPHABET, min_size=40, max_size=180))
_SCALAR = st.one_of(_TEXT, st.integers(-(2**70), 2**70), st.booleans(), st.none())
_TREE = st.recursive(
    _SCALAR,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.dictionaries(st.one_of(_WORDS, st.text(_ALPHABET, max_size=30)), inner, max_size=5),
    ),
    max_leaves=40,
)


@settings(max_examples=600, deadline=None)
@given(
    st.one_of(st.dictionaries(_TEXT, _TREE, min_size=1, max_size=6), st.lists(_TREE, min_size=1, max_size=6))
)
def test_same_bytes_as_pyyaml_or_declined(tree: Any) -> None:
    got = emit(tree)
    if got is not None:
        assert got == oracle(tree)


@settings(max_examples=300, deadline=None)
@given(
    st.integers(0, 50),  # past depth ~40 the indentation itself passes column 80
    st.lists(st.sampled_from(["word", "a", "x" * 30, "it's", "k: v", "#", "a  b"]), min_size=2, max_size=30),
    st.booleans(),
)
def test_long_texts_fold_as_libyaml_folds_them(depth: int, words: list[str], quoted: bool) -> None:
    """Plain and single-quoted scalars past column 80, at every depth (libyaml folds at single spaces)."""
    text = " ".join(words) + (": quoted" if quoted else "")
    tree: Any = {"reason": text, "list": [text, {"k": text}]}
    for n in range(depth):
        tree = {f"level{n}": tree} if n % 2 else [tree, text]
    got = emit(tree)
    assert got is not None, "plain ASCII text must not be declined"
    assert got == oracle(tree)


def test_the_shapes_berth_writes_are_not_declined() -> None:
    index = {
        "apiVersion": "berth.dev/v1alpha1",
        "kind": "ManifestIndex",
        "metadata": {"name": "kai-manifest-index"},
        "spec": {
            "files": [
                {"file": "manifests/x.yaml", "kind": "ConfigMap", "name": "x", "namespace": "", "order": 3,
                 "installOnly": True, "labels": {}, "items": []},
            ],
            "reason": "crds/ folder CRD: Helm never upgrades it",
            "runBy": "berth install script --work-dir /some/very/long/path/that/goes/on/and/on --action install",
        },
    }  # fmt: skip
    got = emit(index)
    assert got is not None
    assert got == oracle(index)
    assert "namespace: ''\n" in got and "labels: {}\n" in got and "items: []\n" in got


@pytest.mark.parametrize(
    "tree",
    [
        {"a": 1.5},  # floats: PyYAML's own repr rules
        {"a": "é"},  # non-ASCII
        {"a": "two\nlines"},  # literal block
        {"a": "tab\there"},
        {1: "int key"},
        {"k" * 101: "long key"},
        {"a": 2**64},  # Go reads it as a float: PyYAML writes an explicit tag
        {"a": ("tuple",)},
        {},
        [],
        "scalar",
    ],
)
def test_declines_what_it_does_not_write(tree: Any) -> None:
    assert emit(tree) is None


def test_declines_a_container_seen_twice() -> None:
    shared = {"x": 1}
    tree = {"a": shared, "b": shared}
    assert emit(tree) is None
    assert "&id001" in yamlio.dump(tree)  # PyYAML's anchor, through the fallback


def test_dump_falls_back_to_pyyaml() -> None:
    tree = {"a": 1.5, "b": "two\nlines\n"}
    assert yamlio.dump(tree) == oracle(tree) == "a: 1.5\nb: |\n  two\n  lines\n"


def test_every_yaml_file_of_the_repo() -> None:
    """Every document of every YAML file in the repository (charts, examples, configs, fixtures): written the same,
    and most of them written by yamlblock."""
    written = declined = 0
    for path in sorted(REPO.rglob("*.yaml")):
        if any(part.startswith(".") for part in path.relative_to(REPO).parts):
            continue
        try:
            docs = yamlio.load_documents(path.read_text(encoding="utf-8"), str(path))
        except Exception:  # templates and deliberately broken fixtures
            continue
        for doc in docs:
            got = emit(doc.body)
            if got is None:
                declined += 1
                continue
            written += 1
            assert got == oracle(doc.body), f"{path} document {doc.index + 1}"
    assert written > 100 and written > 3 * declined
