"""Go arithmetic, DefaultNormalizeScore and the field-error wording every plugin relies on."""

from __future__ import annotations

import pytest

from berth.schedule.framework.interface import NodeScore
from berth.schedule.plugins import helper


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [(7, 2, 3), (-7, 2, -3), (7, -2, -3), (-7, -2, 3), (0, -5, 0), (-300, 60, -5), (-350, 60, -5)],
    ids=["pos", "neg-num", "neg-den", "both-neg", "zero", "exact-neg", "truncates-toward-zero"],
)
def test_go_div_truncates_toward_zero(a: int, b: int, want: int) -> None:
    assert helper.go_div(a, b) == want


@pytest.mark.parametrize(
    ("x", "want"),
    [(37.5, 38), (38.5, 39), (2.5, 3), (2.4999, 2), (-2.5, -3), (0.0, 0)],
    ids=["37.5", "38.5-not-banker", "2.5", "below-half", "negative-away-from-zero", "zero"],
)
def test_go_round_half_away_from_zero(x: float, want: int) -> None:
    assert helper.go_round(x) == want


@pytest.mark.parametrize(
    ("raw", "reverse", "want"),
    [
        ([2, 11, 4], False, [18, 100, 36]),
        ([0, 1, 2], True, [100, 50, 0]),
        ([0, 0], False, [0, 0]),
        ([0, 0], True, [100, 100]),
        ([3, 3, 3], False, [100, 100, 100]),
        ([1, 3], True, [67, 0]),
    ],
    ids=[
        "node-affinity-vector",
        "taint-vector",
        "all-zero",
        "all-zero-reverse",
        "all-equal",
        "reverse-truncation",
    ],
)
def test_default_normalize_score(raw: list[int], reverse: bool, want: list[int]) -> None:
    scores = [NodeScore(f"n{i}", s) for i, s in enumerate(raw)]
    helper.default_normalize_score(scores, reverse)
    assert [s.score for s in scores] == want


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("app", True),
        ("example.com/app", True),
        ("a/b/c", False),
        ("-app", False),
        ("Example.com/x", False),
        ("/x", False),
    ],
    ids=["plain", "prefixed", "two-slashes", "leading-dash", "uppercase-prefix", "empty-prefix"],
)
def test_qualified_name(value: str, ok: bool) -> None:
    problems = helper.qualified_name_problems(value, "f")
    assert (not problems) is ok
    assert all(p.startswith(f'f: Invalid value: "{value}": ') for p in problems)


def test_field_error_wording() -> None:
    assert (
        helper.invalid("a.b", 120, "not in valid range [0-100]")
        == "a.b: Invalid value: 120: not in valid range [0-100]"
    )
    assert helper.invalid("a.b", "x", "bad") == 'a.b: Invalid value: "x": bad'
    assert (
        helper.required("a.labelKey", "labelKey is required")
        == "a.labelKey: Required value: labelKey is required"
    )
    assert helper.duplicate("a[1].name", "cpu") == 'a[1].name: Duplicate value: "cpu"'
    assert (
        helper.not_supported("a.t", "X", ["A", "B"])
        == 'a.t: Unsupported value: "X": supported values: "A", "B"'
    )
    assert helper.unknown_field("a", "foo") == 'a: unknown field "foo"'


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ({"n": "x"}, 'p.n: Invalid value: "x": must be an integer'),
        ({"n": True}, "p.n: Invalid value: true: must be an integer"),
        ({"n": 1.5}, "p.n: Invalid value: 1.5: must be an integer"),
        ({"n": 1, "extra": 2}, 'p: unknown field "extra"'),
        ({"kind": "OtherArgs"}, 'p.kind: Unsupported value: "OtherArgs": supported values: "XArgs"'),
        (
            {"apiVersion": "v2"},
            'p.apiVersion: Unsupported value: "v2": supported values: "kubescheduler.config.k8s.io/v1"',
        ),
        ([1], "p: Invalid value: [1]: expected an object"),
    ],
    ids=[
        "string-for-int",
        "bool-for-int",
        "fraction",
        "unknown-field",
        "wrong-kind",
        "wrong-api-version",
        "not-object",
    ],
)
def test_args_reader_strict(raw: object, problem: str) -> None:
    problems: list[str] = []
    r = helper.ArgsReader(raw, "p", problems, "XArgs")
    r.get_int("n", 0)
    r.finish()
    assert problems == [problem]


def test_args_reader_accepts_kind_and_api_version() -> None:
    problems: list[str] = []
    r = helper.ArgsReader(
        {"apiVersion": helper.ARGS_API_VERSION, "kind": "XArgs", "n": 3}, "p", problems, "XArgs"
    )
    assert r.get_int("n", 0) == 3
    r.finish()
    assert problems == []


@pytest.mark.parametrize(
    ("shape", "problems"),
    [
        ([], ["s: Required value: at least one point must be specified"]),
        ([(10, 1), (90, 9)], []),
        (
            [(50, 1), (50, 2)],
            ["s[1].utilization: Invalid value: 50: values must be sorted in increasing order"],
        ),
        ([(0, 11)], ["s[0].score: Invalid value: 11: not in valid range [0, 10]"]),
        ([(101, 1)], ["s[0].utilization: Invalid value: 101: not in valid range [0, 100]"]),
    ],
    ids=["empty", "valid", "unsorted", "score-range", "utilization-range"],
)
def test_shape_problems(shape: list[tuple[int, int]], problems: list[str]) -> None:
    assert helper.shape_problems(shape, "s") == problems
