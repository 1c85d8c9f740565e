"""NodeAffinity: nodeSelector, required terms with every operator, matchFields, addedAffinity, PreFilter narrowing,
preferred-term scoring (node_affinity_test.go: raw 2, 11, 4 -> 18, 100, 36) and args validation."""

from __future__ import annotations

from typing import Any

import pytest

from berth.schedule.framework import interface as fw
from berth.schedule.framework.types import PodInfo
from berth.schedule.plugins import node_affinity as na

from .support import FakeHandle, node, pod, run_filter, run_score


def plugin(args: dict[str, Any] | None = None) -> na.NodeAffinity:
    decoded, problems = na.NodeAffinityArgs.decode(args, "args")
    assert problems == []
    built = na.SPEC.new(decoded, FakeHandle())
    assert isinstance(built, na.NodeAffinity)
    return built


def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    e: dict[str, Any] = {"key": key, "operator": op}
    if values:
        e["values"] = list(values)
    return e


def required(*terms: dict[str, Any]) -> dict[str, Any]:
    return {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}
    }


def term(*exprs: dict[str, Any], fields: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    t: dict[str, Any] = {}
    if exprs:
        t["matchExpressions"] = list(exprs)
    if fields:
        t["matchFields"] = fields
    return t


def preferred(*items: tuple[int, dict[str, Any]]) -> dict[str, Any]:
    return {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": w, "preference": t} for w, t in items
            ]
        }
    }


LABELS = {"zone": "a", "disk": "ssd", "cores": "8"}


@pytest.mark.parametrize(
    ("incoming", "fits"),
    [
        (pod(), True),
        (pod(node_selector={"zone": "a"}), True),
        (pod(node_selector={"zone": "a", "disk": "hdd"}), False),
        (pod(node_selector={"gpu": "yes"}), False),
        (pod(affinity=required(term(expr("zone", "In", "a", "b")))), True),
        (pod(affinity=required(term(expr("zone", "In", "b")))), False),
        (pod(affinity=required(term(expr("zone", "NotIn", "b")))), True),
        (pod(affinity=required(term(expr("gpu", "NotIn", "yes")))), True),
        (pod(affinity=required(term(expr("disk", "Exists")))), True),
        (pod(affinity=required(term(expr("gpu", "Exists")))), False),
        (pod(affinity=required(term(expr("gpu", "DoesNotExist")))), True),
        (pod(affinity=required(term(expr("cores", "Gt", "4")))), True),
        (pod(affinity=required(term(expr("cores", "Gt", "8")))), False),
        (pod(affinity=required(term(expr("cores", "Lt", "16")))), True),
        (pod(affinity=required(term(expr("zone", "Gt", "1")))), False),
        (pod(affinity=required(term(expr("cores", "Gt", "x")))), False),
        (pod(affinity=required(term(expr("zone", "In", "a"), expr("disk", "In", "hdd")))), False),
        (pod(affinity=required(term(expr("zone", "In", "b")), term(expr("disk", "In", "ssd")))), True),
        (pod(affinity=required(term())), False),
        (pod(affinity=required()), False),
        (pod(affinity=required(term(expr("zone", "Bogus", "a")))), False),
        (pod(affinity=required(term(expr("zone", "In")))), False),
        (pod(affinity=required(term(fields=[expr("metadata.name", "In", "n1")]))), True),
        (pod(affinity=required(term(fields=[expr("metadata.name", "NotIn", "n1")]))), False),
        (
            pod(affinity=required(term(expr("zone", "In", "a"), fields=[expr("metadata.name", "In", "n2")]))),
            False,
        ),
        (pod(node_selector={"zone": "a"}, affinity=required(term(expr("disk", "In", "hdd")))), False),
    ],
    ids=[
        "nothing",
        "selector-match",
        "selector-partial",
        "selector-missing-label",
        "in",
        "in-miss",
        "notin",
        "notin-absent-label",
        "exists",
        "exists-miss",
        "doesnotexist",
        "gt",
        "gt-equal",
        "lt",
        "gt-non-integer-label",
        "gt-non-integer-value",
        "and-within-term",
        "or-across-terms",
        "empty-term-matches-nothing",
        "no-terms",
        "bad-operator",
        "in-without-values",
        "field-name-in",
        "field-name-notin",
        "field-and-label",
        "selector-and-affinity",
    ],
)
def test_filter(incoming: PodInfo, fits: bool) -> None:
    status = run_filter(plugin(), incoming, node("n1", labels=LABELS))
    if fits:
        assert status.is_success, status
    else:
        assert status.code is fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert (
            status.reasons == (na.ERR_REASON_POD,) == ("node(s) didn't match Pod's node affinity/selector",)
        )


ADDED = {
    "addedAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["batch"]}]}
            ]
        }
    }
}


@pytest.mark.parametrize(
    ("labels", "incoming", "reason"),
    [
        ({"pool": "batch"}, pod(), None),
        ({"pool": "web"}, pod(), na.ERR_REASON_ENFORCED),
        ({"pool": "web"}, pod(node_selector={"x": "y"}), na.ERR_REASON_ENFORCED),
        ({"pool": "batch"}, pod(node_selector={"x": "y"}), na.ERR_REASON_POD),
    ],
    ids=["added-match", "added-miss", "added-checked-first", "then-pod"],
)
def test_added_affinity(labels: dict[str, str], incoming: PodInfo, reason: str | None) -> None:
    status = run_filter(plugin(ADDED), incoming, node("n", labels=labels))
    assert status.reasons == (() if reason is None else (reason,))
    assert na.ERR_REASON_ENFORCED == "node(s) didn't match scheduler-enforced node affinity"


def name_term(*names: str, op: str = "In") -> dict[str, Any]:
    return term(fields=[expr("metadata.name", op, *names)])


@pytest.mark.parametrize(
    ("incoming", "code", "names"),
    [
        (pod(), fw.Code.SKIP, None),
        (pod(node_selector={"a": "b"}), fw.Code.SUCCESS, None),
        (pod(affinity=required(term(expr("zone", "In", "a")))), fw.Code.SUCCESS, None),
        (pod(affinity=required(name_term("n1", "n2"))), fw.Code.SUCCESS, {"n1", "n2"}),
        (pod(affinity=required(name_term("n1"), name_term("n3"))), fw.Code.SUCCESS, {"n1", "n3"}),
        (pod(affinity=required(name_term("n1"), term(expr("zone", "In", "a")))), fw.Code.SUCCESS, None),
        (
            pod(
                affinity=required(
                    term(
                        fields=[
                            expr("metadata.name", "In", "n1", "n2"),
                            expr("metadata.name", "In", "n2", "n3"),
                        ]
                    )
                )
            ),
            fw.Code.SUCCESS,
            {"n2"},
        ),
        (
            pod(
                affinity=required(
                    term(fields=[expr("metadata.name", "In", "n1"), expr("metadata.name", "In", "n2")])
                )
            ),
            fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            None,
        ),
        (pod(affinity=required(name_term("n1", op="NotIn"))), fw.Code.SUCCESS, None),
    ],
    ids=[
        "nothing-to-check",
        "selector-only",
        "label-term",
        "one-term-names",
        "union-across-terms",
        "unpinned-term-means-all",
        "intersection-within-term",
        "conflict",
        "notin-does-not-narrow",
    ],
)
def test_pre_filter(incoming: PodInfo, code: fw.Code, names: set[str] | None) -> None:
    result, status = plugin().pre_filter(fw.CycleState(), incoming, [node("n1")])
    assert status.code is code
    if code is fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
        assert status.reasons == (na.ERR_REASON_CONFLICT,) == ("pod affinity terms conflict",)
    got = None if result is None else result.node_names
    assert got == (None if names is None else frozenset(names))


def test_pre_filter_runs_for_added_affinity_only() -> None:
    _, status = plugin(ADDED).pre_filter(fw.CycleState(), pod(), [node("n1")])
    assert status.is_success


UPSTREAM_PREFERRED = preferred(
    (2, term(expr("foo", "In", "bar"))),
    (4, term(expr("key", "In", "value"))),
    (5, term(expr("az", "In", "az1"))),
)


@pytest.mark.parametrize(
    ("args", "incoming", "node_labels", "want"),
    [
        (
            None,
            UPSTREAM_PREFERRED,
            [{"foo": "bar"}, {"foo": "bar", "key": "value", "az": "az1"}, {"key": "value"}],
            [18, 100, 36],
        ),
        (None, preferred((2, term(expr("foo", "In", "bar")))), [{}, {"x": "y"}], [0, 0]),
        (None, preferred((0, term(expr("foo", "In", "bar"))), (3, term())), [{"foo": "bar"}, {}], [0, 0]),
        (
            {
                "addedAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 3,
                            "preference": {
                                "matchExpressions": [{"key": "pool", "operator": "In", "values": ["a"]}]
                            },
                        }
                    ]
                }
            },
            preferred((1, term(expr("foo", "In", "bar")))),
            [{"pool": "a"}, {"foo": "bar"}, {}],
            [100, 33, 0],
        ),
        (
            {
                "addedAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 3,
                            "preference": {
                                "matchExpressions": [{"key": "pool", "operator": "In", "values": ["a"]}]
                            },
                        }
                    ]
                }
            },
            {},
            [{"pool": "a"}, {}],
            [100, 0],
        ),
    ],
    ids=[
        "upstream-18-100-36",
        "no-match",
        "zero-weight-and-empty-term-ignored",
        "added-plus-pod",
        "added-only",
    ],
)
def test_score(
    args: dict[str, Any] | None, incoming: dict[str, Any], node_labels: list[dict[str, str]], want: list[int]
) -> None:
    nodes = [node(f"n{i}", labels=labels) for i, labels in enumerate(node_labels)]
    assert run_score(plugin(args), pod(affinity=incoming), nodes) == want


def test_pre_score_skips_without_preferred_terms() -> None:
    assert plugin().pre_score(fw.CycleState(), pod(), [node()]).is_skip
    assert not plugin().pre_score(fw.CycleState(), pod(affinity=UPSTREAM_PREFERRED), [node()]).is_skip


def test_pre_score_errors_on_unparseable_preferred_term() -> None:
    bad = preferred((1, term(expr("cores", "Gt", "many"))))
    status = plugin().pre_score(fw.CycleState(), pod(affinity=bad), [node()])
    assert status.code is fw.Code.ERROR
    assert "for 'Gt', 'Lt' operators, the value must be an integer" in status.message()


P = "a.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"


@pytest.mark.parametrize(
    ("raw", "problems"),
    [
        (
            {
                "addedAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "k", "operator": "Foo", "values": ["v"]}]}
                        ]
                    }
                }
            },
            [f'{P}.matchExpressions[0].operator: Unsupported value: "Foo"'],
        ),
        (
            {
                "addedAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": [{"key": "k", "operator": "In"}]}]
                    }
                }
            },
            [
                f"{P}.matchExpressions[0].values: Required value: for 'in', 'notin' operators, values set can't be empty"
            ],
        ),
        (
            {
                "addedAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchFields": [
                                    {"key": "metadata.namespace", "operator": "In", "values": ["v"]}
                                ]
                            }
                        ]
                    }
                }
            },
            [f'{P}.matchFields[0].key: Invalid value: "metadata.namespace": not a valid field selector key'],
        ),
        (
            {
                "addedAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 1,
                            "preference": {
                                "matchExpressions": [{"key": "k", "operator": "Exists", "values": ["v"]}]
                            },
                        }
                    ]
                }
            },
            [
                "a.addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].values: "
                "Forbidden: values set must be empty for exists and does not exist"
            ],
        ),
        (
            {
                "addedAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "k", "operator": "Exists", "extra": 1}]}
                        ]
                    }
                }
            },
            [f'{P}.matchExpressions[0]: unknown field "extra"'],
        ),
        (
            {"addedAffinity": {"requiredDuringSchedulingRequiredDuringExecution": {}}},
            ['a.addedAffinity: unknown field "requiredDuringSchedulingRequiredDuringExecution"'],
        ),
    ],
    ids=[
        "bad-operator",
        "in-without-values",
        "bad-field-key",
        "exists-with-values",
        "unknown-expr-field",
        "unknown-affinity-field",
    ],
)
def test_args_problems(raw: dict[str, Any], problems: list[str]) -> None:
    assert na.NodeAffinityArgs.decode(raw, "a")[1] == problems


def test_args_round_trip() -> None:
    assert na.NodeAffinityArgs.decode(None, "a")[0].to_dict() == {}
    args, problems = na.NodeAffinityArgs.decode(ADDED, "a")
    assert problems == []
    assert args.to_dict() == ADDED
