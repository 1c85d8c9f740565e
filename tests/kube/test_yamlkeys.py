"""Duplicate-key detection in YAML text (what Kubernetes' strict decoders refuse).

The rules are go-yaml v2's UnmarshalStrict: a key is a duplicate when the decoded key was already set in the
mapping, whether by an explicit key or through a ``<<`` merge, and keys are compared after YAML 1.1 resolution.
"""

from __future__ import annotations

import pytest

from berth.kube import yamlkeys


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("a: 1\nb: 2\n", [], id="none"),
        pytest.param("a: 1\na: 2\n", ['key "a" already set in map (line 2)'], id="top-level"),
        pytest.param("x:\n  z: 1\n  z: 2\n", ['x: key "z" already set in map (line 3)'], id="nested"),
        pytest.param("l:\n- k: 1\n  k: 1\n", ['l[0]: key "k" already set in map (line 3)'], id="in-a-list"),
        pytest.param(
            "a: 1\n---\nb: 1\nb: 2\n", ['key "b" already set in map (line 4)'], id="second-document"
        ),
        pytest.param(
            "x:\n  yes: 1\n  on: 2\n", ['x: key "true" already set in map (line 3)'], id="same-bool"
        ),
        pytest.param("x:\n  1: a\n  0x1: b\n", ['x: key "1" already set in map (line 3)'], id="same-int"),
        pytest.param("base: &b {x: 1}\nm:\n  <<: *b\n", [], id="one-merge"),
        pytest.param(
            "base: &b {x: 1}\nm:\n  <<: *b\n  <<: *b\n",
            ['m: key "x" already set in map (line 4)'],
            id="merge-twice",
        ),
        pytest.param(
            "base: &b {x: 1}\nm:\n  x: 2\n  <<: *b\n",
            ['m: key "x" already set in map (line 4)'],
            id="merge-over",
        ),
        pytest.param("a: [\n", [], id="malformed-is-yamlio's-job"),
    ],
)
def test_duplicate_keys(text: str, expected: list[str]) -> None:
    assert [d.message() for d in yamlkeys.duplicate_keys(text)] == expected
