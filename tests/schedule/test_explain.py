"""``simulate --explain``: each attempt of a followed pod, node by node and plugin by plugin.

The figures asserted are worked out by hand from kube-scheduler's formulas (LeastAllocated, TaintToleration), so
the explanation is checked against the arithmetic a user would do, not against itself; the totals are also checked
against the cycle's own (vectorised) totals, which decide the placement.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from runtime_support import node, pod

from berth.cli import main
from berth.kube import yamlio
from berth.kube.errors import InputError
from berth.schedule import config as schedconfig
from berth.schedule import explain
from berth.schedule.plugins.registry import default_registry, load_user_plugin
from berth.schedule.scheduler import Result, Scheduler
from berth.schedule.simulate import SimulationResult, simulate

GANG = Path(__file__).resolve().parents[2] / "examples" / "gang"
API = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
TAINT = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}


def write(tmp_path: Path, name: str, *docs: Any) -> str:
    path = tmp_path / name
    path.write_text(yamlio.dump_all(docs), encoding="utf-8")
    return str(path)


def run(tmp_path: Path, nodes: list[Any], pods: list[Any], *patterns: str, **config: Any) -> SimulationResult:
    cfg = schedconfig.parse({**API, **config}) if config else schedconfig.default_config()
    return simulate(
        [cfg],
        write(tmp_path, "nodes.yaml", *nodes),
        write(tmp_path, "workload.yaml", *pods),
        explain_patterns=patterns,
    )


def only(result: SimulationResult, key: str) -> explain.Explanation:
    assert result.explanations is not None
    (ex,) = [e for e in result.explanations if e.pod == key]
    return ex


def three_nodes() -> list[Any]:
    """a: empty; b: half its cpu and memory taken by a bound pod; c: tainted."""
    return [
        node("a", cpu="4", memory="16Gi"),
        node("b", cpu="4", memory="16Gi"),
        node("c", cpu="4", memory="16Gi", taints=[TAINT]),
        pod("busy", cpu="2", memory="8Gi", node_name="b"),
    ]


def test_scores_per_plugin_add_up_to_the_totals_and_name_the_rejecting_plugin(tmp_path: Path) -> None:
    result = run(tmp_path, three_nodes(), [pod("web", cpu="1", memory="4Gi")], "web")
    (attempt,) = only(result, "default/web").attempts
    assert (attempt.result, attempt.node, attempt.route) == ("scheduled", "a", explain.Route.SCORED)
    assert [p.node for p in result.placements] == ["a"]
    by_node = {n.node: n for n in attempt.nodes}
    assert set(by_node) == {"a", "b", "c"} and attempt.not_examined == 0
    rejected = by_node["c"]
    assert not rejected.passed and rejected.plugin == "TaintToleration"
    assert rejected.reasons == ("node(s) had untolerated taint(s)",)
    assert rejected.code == "UnschedulableAndUnresolvable"
    fit = {n: {s.plugin: s for s in by_node[n].scores}["NodeResourcesFit"] for n in ("a", "b")}
    # LeastAllocated, cpu and memory weighted 1: a ((4-1)/4 + (16-4)/16) / 2 = 75; b ((4-3)/4 + (16-12)/16) / 2 = 25.
    assert (fit["a"].raw, fit["b"].raw) == (75, 25)
    assert fit["a"].weight == 1 and fit["a"].weighted == 75
    for n in ("a", "b"):
        scores = by_node[n].scores
        assert by_node[n].total == sum(s.normalized * s.weight for s in scores)
    assert by_node["a"].total is not None and by_node["b"].total is not None
    assert by_node["a"].total > by_node["b"].total
    assert attempt.nodes[0].node == "a"  # best first, then the others, rejected last
    assert attempt.consistent and attempt.ties == 1
    assert attempt.decision == f"highest total score {by_node['a'].total}"
    # Plugins that had nothing to score for this pod (PreScore Skip) are named, not shown as zeros.
    assert "InterPodAffinity" in attempt.skipped_score
    assert all(s.plugin not in attempt.skipped_score for s in by_node["a"].scores)


def test_normalize_score_is_shown_beside_the_raw_score(tmp_path: Path) -> None:
    """TaintToleration scores the count of intolerable PreferNoSchedule taints, then reverses: raw 1 -> 0, raw 0
    -> 100 (DefaultNormalizeScore with reverse, max 1)."""
    soft = {"key": "spot", "value": "yes", "effect": "PreferNoSchedule"}
    nodes = [node("a"), node("b", taints=[soft])]
    (attempt,) = only(run(tmp_path, nodes, [pod("web")], "web"), "default/web").attempts
    taint = {n.node: next(s for s in n.scores if s.plugin == "TaintToleration") for n in attempt.nodes}
    assert (taint["a"].raw, taint["a"].normalized) == (0, 100)
    assert (taint["b"].raw, taint["b"].normalized) == (1, 0)
    assert taint["a"].weight == 3 and attempt.node == "a"


def test_a_tie_is_reported_as_one(tmp_path: Path) -> None:
    (attempt,) = only(run(tmp_path, [node("a"), node("b")], [pod("web")], "web"), "default/web").attempts
    assert attempt.ties == 2 and "shared by 2 nodes (tie broken at random)" in attempt.decision
    assert attempt.nodes[0].total == attempt.nodes[1].total


def test_nodes_the_search_did_not_reach_are_counted_not_examined(tmp_path: Path) -> None:
    """percentageOfNodesToScore 10 of 200 nodes: the search stops at its floor of 100 feasible nodes."""
    nodes = [node(f"n{i:03}") for i in range(200)]
    result = run(
        tmp_path,
        nodes,
        [pod("web")],
        "web",
        percentageOfNodesToScore=10,
        profiles=[{"schedulerName": "default-scheduler"}],
    )
    (attempt,) = only(result, "default/web").attempts
    assert len(attempt.nodes) == 100 and attempt.not_examined == 100
    assert all(n.passed for n in attempt.nodes) and attempt.consistent


def test_the_only_feasible_node_is_taken_unscored_and_pre_filter_narrowing_is_counted(tmp_path: Path) -> None:
    """A required node affinity on metadata.name is a PreFilterResult: the other nodes are excluded, not
    examined; one node left is taken without scoring, as upstream."""
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["b"]}]}
                ]
            }
        }
    }
    nodes = [node("a"), node("b"), node("c")]
    (attempt,) = only(run(tmp_path, nodes, [pod("web", affinity=affinity)], "web"), "default/web").attempts
    assert (attempt.route, attempt.node) == (explain.Route.ONLY_FEASIBLE, "b")
    assert attempt.excluded == 2 and "NodeAffinity" in attempt.excluded_reason
    assert [(n.node, n.passed, n.total) for n in attempt.nodes] == [("b", True, None)]
    assert attempt.not_examined == 0
    assert attempt.decision == "the only feasible node (chosen without scoring)"


def test_preemption_attempts_name_the_victims_then_the_nominated_node(tmp_path: Path) -> None:
    nodes = [node("a", cpu="2"), pod("low", cpu="2", node_name="a", priority=0)]
    result = run(tmp_path, nodes, [pod("high", cpu="2", priority=100)], "high")
    first, second = only(result, "default/high").attempts
    assert (first.number, first.result, first.route) == (1, "unschedulable", explain.Route.NONE_FEASIBLE)
    assert first.message.startswith("0/1 nodes are available: 1 Insufficient cpu.")
    assert first.nominated_node == "a" and first.victims == ("default/low",)
    assert [(n.node, n.plugin) for n in first.nodes] == [("a", "NodeResourcesFit")]
    assert (second.number, second.result, second.node) == (2, "scheduled", "a")
    assert second.route is explain.Route.NOMINATED and second.not_examined == 0


def test_a_pod_held_at_permit_takes_its_binding_result() -> None:
    """A gang member waits at Permit (attempt result ``waiting``); when the last member arrives its binding
    cycle finishes and the same attempt reads ``scheduled``."""
    sys.path.insert(0, str(GANG))
    try:
        reg = default_registry()
        reg.register(load_user_plugin("berth_gang:Gang"))
        cfg = schedconfig.parse(
            {
                **API,
                "profiles": [
                    {
                        "schedulerName": "default-scheduler",
                        "plugins": {"multiPoint": {"enabled": [{"name": "Gang"}]}},
                    }
                ],
            },
            registry=reg,
        )
        s = Scheduler(cfg, reg, seed=1)
        s.explainer = explain.Recorder(["m0"])
        s.add_node(node("n0"))
        labels = {"gang.berth.dev/name": "g", "gang.berth.dev/min-member": "2"}
        s.add_pod(pod("m0", labels=labels))
        out = s.schedule_one()
        assert out is not None and out.result is Result.WAITING
        (held,) = s.explainer.explanations()[0].attempts
        assert held.result == "waiting"
        s.add_pod(pod("m1", labels=labels))
        s.run_until_idle()
        (done,) = s.explainer.explanations()[0].attempts
        assert (done.result, done.node) == ("scheduled", "n0")
    finally:
        sys.path.remove(str(GANG))
        sys.modules.pop("berth_gang", None)


def test_only_matching_pods_are_followed_and_patterns_take_wildcards(tmp_path: Path) -> None:
    pods = [pod("web-1"), pod("web-2"), pod("db-1"), pod("web-9", namespace="other")]
    result = run(tmp_path, [node("a")], pods, "default/web-*")
    assert result.explanations is not None
    assert [e.pod for e in result.explanations] == ["default/web-1", "default/web-2"]
    assert explain.pod_pattern_matches("web-?", "other/web-9")
    assert not explain.pod_pattern_matches("default/web-?", "other/web-9")


def test_a_pattern_matching_no_pod_is_refused_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(
        InputError, match=r"--explain 'wbe' matches no pod of the workload \(pods are named like"
    ):
        run(tmp_path, [node("a")], [pod("web")], "wbe")


def test_without_explain_nothing_is_recorded(tmp_path: Path) -> None:
    result = run(tmp_path, [node("a")], [pod("web")])
    assert result.explanations is None and "explanations" not in result.to_dict()


def test_explanations_agree_with_the_vectorised_totals_on_a_busy_cluster(tmp_path: Path) -> None:
    """Forty nodes of uneven sizes and load, pods of several shapes with spreading: for every attempt the plugins'
    plain answers add up to the totals the vectorised cycle used, and the chosen node has the best total."""
    nodes: list[Any] = []
    for i in range(40):
        nodes.append(
            node(f"n{i:02}", cpu=str(2 + i % 5), memory=f"{8 + 4 * (i % 3)}Gi", labels={"zone": f"z{i % 3}"})
        )
        if i % 4 == 0:
            nodes.append(pod(f"bound-{i}", cpu=f"{200 * (1 + i % 3)}m", memory="1Gi", node_name=f"n{i:02}"))
    spread = [
        {
            "maxSkew": 1,
            "topologyKey": "zone",
            "whenUnsatisfiable": "ScheduleAnyway",
            "labelSelector": {"matchLabels": {"app": "w"}},
        }
    ]
    pods = [
        pod(
            f"w{i}",
            cpu=f"{100 * (1 + i % 4)}m",
            memory=f"{256 * (1 + i % 3)}Mi",
            labels={"app": "w"},
            topologySpreadConstraints=spread,
        )
        for i in range(30)
    ]
    result = run(tmp_path, nodes, pods, "w*")
    assert result.explanations is not None and len(result.explanations) == 30
    placed = {p.pod: p.node for p in result.placements}
    for ex in result.explanations:
        for a in ex.attempts:
            assert a.consistent, a.problem
            if a.route is explain.Route.SCORED:
                best = max(n.total or 0 for n in a.nodes if n.passed)
                chosen = next(n for n in a.nodes if n.node == a.node)
                assert chosen.total == best
        assert ex.attempts[-1].node == placed[ex.pod]


def test_cli_prints_the_breakdown_and_json_carries_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nodes_path = write(tmp_path, "nodes.yaml", *three_nodes())
    workload = write(tmp_path, "workload.yaml", pod("web", cpu="1", memory="4Gi"))
    cfg = write(tmp_path, "config.yaml", {**API, "profiles": [{"schedulerName": "default-scheduler"}]})
    args = ["schedule", "simulate", "--config", cfg, "--cluster", nodes_path, "--workload", workload]
    assert main([*args, "--explain", "web"]) == 0
    out = capsys.readouterr().out
    assert "explain default/web (default-scheduler): attempt 1 scheduled on a" in out
    assert "NodeResourcesFit (x1)" in out and "a *" in out
    assert "filtered out by TaintToleration: node(s) had untolerated taint(s): c" in out
    assert main([*args, "--explain", "web", "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (entry,) = doc["explanations"]
    (attempt,) = entry["attempts"]
    assert entry["pod"] == "default/web" and attempt["node"] == "a"
    scored = {n["node"]: n for n in attempt["nodes"] if n["filter"] == "passed"}
    assert scored["a"]["scores"]["NodeResourcesFit"] == {
        "raw": 75,
        "normalized": 75,
        "weight": 1,
        "weighted": 75,
    }
    assert {n["node"]: n["plugin"] for n in attempt["nodes"] if n["filter"] == "rejected"} == {
        "c": "TaintToleration"
    }
    page = tmp_path / "report.html"
    assert main([*args, "--explain", "web", "--report", str(page)]) == 0
    capsys.readouterr()
    text = page.read_text(encoding="utf-8")
    assert "<h2>Explained pods (1)</h2>" in text and '<td class="node">a ★</td>' in text
    assert "<b>1</b> by TaintToleration: node(s) had untolerated taint(s)" in text
    assert "<code>c</code>" in text
    assert main([*args, "--explain", "nope"]) == 2
    err = capsys.readouterr().err
    assert "--explain 'nope' matches no pod of the workload" in err


@pytest.fixture(autouse=True)
def _no_leftover_gang() -> Iterator[None]:
    yield
    sys.modules.pop("berth_gang", None)


def test_the_table_always_shows_the_chosen_node(capsys: pytest.CaptureFixture[str]) -> None:
    """Twenty nodes tie and the draw picks the last: it takes the last column, marked with ``*``."""
    from rich.console import Console

    from berth.schedule import report

    score = (explain.PluginScore("NodeResourcesFit", 1, 90, 90),)
    nodes = tuple(explain.NodeResult(f"n{i:02}", True, scores=score, total=90) for i in range(20))
    attempt = explain.Attempt(
        number=1, scheduler_name="default-scheduler", result="scheduled", node="n19", message="",
        decision="highest total score 90, shared by 20 nodes (tie broken at random)", route=explain.Route.SCORED,
        nodes_in_cluster=20, nodes=nodes, not_examined=0, ties=20,
    )  # fmt: skip
    report.print_attempt("default/web", attempt, Console(width=200))
    header = next(line for line in capsys.readouterr().out.splitlines() if "plugin (weight)" in line)
    assert "n19 *" in header and "n06" in header and "n07" not in header
