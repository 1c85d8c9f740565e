"""Concentrate (berth's own plugin): same-namespace, non-terminating pods with the pod's label value count;
best node 100; pods without the label score 0 everywhere; labelKey is required."""

from __future__ import annotations

from typing import Any

import pytest

from berth.schedule.framework import interface as fw
from berth.schedule.framework.types import PodInfo
from berth.schedule.plugins import concentrate

from .support import FakeHandle, node, pod, run_score


def plugin(label_key: str = "app") -> concentrate.Concentrate:
    args, problems = concentrate.ConcentrateArgs.decode({"labelKey": label_key}, "args")
    assert problems == []
    built = concentrate.SPEC.new(args, FakeHandle())
    assert isinstance(built, concentrate.Concentrate)
    return built


def web(i: int, **kw: Any) -> PodInfo:
    return pod(f"web-{i}", labels={"app": "web"}, **kw)


@pytest.mark.parametrize(
    ("node_pods", "incoming", "want"),
    [
        ([[], [web(1), web(2)], [web(3), web(4), web(5), web(6)]], web(0), [0, 50, 100]),
        ([[], [web(1)], [web(2)]], web(0), [0, 100, 100]),
        ([[], []], web(0), [0, 0]),
        ([[web(1)], []], pod("x", labels={"other": "1"}), [0, 0]),
        ([[web(1, namespace="other")], [web(2)]], web(0), [0, 100]),
        ([[web(1, terminating=True)], [web(2)]], web(0), [0, 100]),
        ([[pod("db", labels={"app": "db"}), pod("db2", labels={"app": "db"})], [web(1)]], web(0), [0, 100]),
        ([[pod("x", labels={"tier": "web"})], [web(1)]], web(0), [0, 100]),
        ([[web(1), web(2), web(3)], [web(4)], [web(5), web(6)]], web(0), [100, 33, 66]),
    ],
    ids=[
        "0-2-4",
        "tie",
        "nobody-yet",
        "pod-without-label",
        "other-namespace-ignored",
        "terminating-ignored",
        "other-value-ignored",
        "other-key-ignored",
        "integer-division",
    ],
)
def test_score(node_pods: list[list[PodInfo]], incoming: PodInfo, want: list[int]) -> None:
    nodes = [node(f"n{i}", pods=pods) for i, pods in enumerate(node_pods)]
    assert run_score(plugin(), incoming, nodes) == want


def test_assumed_pods_count() -> None:
    """An assumed pod is just another pod in NodeInfo.pods: the next replica follows it."""
    n1, n2 = node("n1"), node("n2")
    n2.add_pod(web(1).with_node("n2"))
    assert run_score(plugin(), web(2), [n1, n2]) == [0, 100]


def test_pre_score_skips_pods_without_the_label() -> None:
    assert plugin().pre_score(fw.CycleState(), pod(labels={"x": "y"}), [node()]).is_skip
    assert plugin().pre_score(fw.CycleState(), web(0), [node()]).is_success


@pytest.mark.parametrize(
    ("raw", "problems"),
    [
        (None, ["a.labelKey: Required value: labelKey is required"]),
        ({}, ["a.labelKey: Required value: labelKey is required"]),
        ({"labelKey": ""}, ["a.labelKey: Required value: labelKey is required"]),
        (
            {"labelKey": 5},
            [
                "a.labelKey: Invalid value: 5: must be a string",
                "a.labelKey: Required value: labelKey is required",
            ],
        ),
        ({"labelKey": "app", "weight": 2}, ['a: unknown field "weight"']),
        (
            {"labelKey": "a/b/c"},
            [
                'a.labelKey: Invalid value: "a/b/c": a qualified name must consist of alphanumeric '
                "characters, '-', '_' or '.', and must start and end with an alphanumeric character "
                "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
                "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix "
                "and '/' (e.g. 'example.com/MyName')"
            ],
        ),
        ({"labelKey": "app.kubernetes.io/instance"}, []),
    ],
    ids=["no-args", "missing", "empty", "wrong-type", "unknown-field", "bad-key", "prefixed-key"],
)
def test_args(raw: dict[str, Any] | None, problems: list[str]) -> None:
    args, got = concentrate.ConcentrateArgs.decode(raw, "a")
    assert got == problems
    if not problems:
        assert args.to_dict() == raw
