"""Duplicate-key detection in YAML text (what Kubernetes' strict decoders refuse)."""

from __future__ import annotations

import pytest

from berth.kube import yamlkeys


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("a: 1\nb: 2\n", [], id="none"),
        pytest.param("a: 1\na: 2\n", ['key "a" already set in map (line 2)'], id="top-level"),
        pytest.param("x:\n  y: 1\n  y: 2\n", ['x: key "y" already set in map (line 3)'], id="nested"),
        pytest.param("l:\n- k: 1\n  k: 1\n", ['l[0]: key "k" already set in map (line 3)'], id="in-a-list"),
        pytest.param(
            "a: 1\n---\nb: 1\nb: 2\n", ['key "b" already set in map (line 4)'], id="second-document"
        ),
        pytest.param("base: &b {x: 1}\nm:\n  <<: *b\n  <<: *b\n", [], id="merge-keys-may-repeat"),
        pytest.param("a: [\n", [], id="malformed-is-yamlio's-job"),
    ],
)
def test_duplicate_keys(text: str, expected: list[str]) -> None:
    assert [d.message() for d in yamlkeys.duplicate_keys(text)] == expected
