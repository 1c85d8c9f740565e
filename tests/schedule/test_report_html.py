"""The HTML placement and comparison reports: what each page says, at 4 and at 1,000 nodes.

How the pages look in a browser (nothing overflows, the screenshot is not blank) is tests/browser's job; here the
facts: every node's cpu and memory with its percentage, full profile names, a heatmap whose legend counts every
node, score cells coloured by value, and nothing loaded from the network.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from berth.cli import main
from berth.kube.htmlpage import _luminance
from berth.schedule import compare
from berth.schedule import config as schedconfig
from berth.schedule.report_html import (
    ALL_ROWS_UP_TO,
    BUSIEST,
    render_comparison_html,
    render_html,
    usage_colour,
)
from berth.schedule.scheduler import Failure, Ignored, Placement
from berth.schedule.simulate import NodeUsage, SimulationResult, simulate

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
GIB = 2**30


def small() -> SimulationResult:
    return SimulationResult(
        placements=(
            Placement("ns/a", "academy-default", "n1"),
            Placement("ns/b", "academy-concentrate", "n2"),
            Placement("ns/c", "academy-concentrate", "n2"),
        ),
        unschedulable=(Failure("ns/e", "academy-default", "0/3 nodes are available: 3 Insufficient cpu."),),
        ignored=(Ignored("ns/<f>", "other"),),
        pods=5,
        seconds=0.5,
        warnings=("a <warning>",),
        nodes=("n1", "n2", "n3"),
        profiles=("academy-default", "academy-concentrate"),
        usage=(
            NodeUsage("n1", 1, 110, 1500, 4000, 2 * GIB, 16 * GIB),
            NodeUsage("n2", 3, 110, 3000, 4000, 12 * GIB, 16 * GIB),  # one pod was there before the run
            NodeUsage("n3", 0, 110, 0, 4000, 0, 16 * GIB),
        ),
    )


def thousand() -> SimulationResult:
    """1,000 nodes: node i has i % 5 pods of one cpu each on 4 cpus (0, 25, 50, 75, 100 %)."""
    nodes = tuple(f"node-{i:04d}" for i in range(1000))
    placements = tuple(
        Placement(f"ns/p-{i}-{k}", "batch-binpack-most-allocated", n)
        for i, n in enumerate(nodes)
        for k in range(i % 5)
    )
    usage = tuple(
        NodeUsage(n, i % 5, 110, 1000 * (i % 5), 4000, GIB * (i % 5), 8 * GIB) for i, n in enumerate(nodes)
    )
    return SimulationResult(
        placements, (), (), len(placements), 1.0, (), nodes, ("batch-binpack-most-allocated",), usage=usage
    )


def test_page_is_self_contained_and_escapes() -> None:
    page = render_html(small())
    assert page.startswith("<!DOCTYPE html>")
    assert not re.search(r"(src|href)=\"?(https?:)?//", page)  # nothing fetched from the network
    assert re.findall(r"<script[^>]*>", page) == ["<script>"]  # one inline script (print: open folded parts)
    assert "ns/&lt;f&gt;" in page and "ns/<f>" not in page
    assert "a &lt;warning&gt;" in page


def test_each_node_shows_cpu_and_memory_with_numbers_next_to_the_bars() -> None:
    page = render_html(small())
    assert "1.5 of 4 cores" in page and "38%" in page  # n1: 1500m of 4 cpus
    assert "12 GiB of 16 GiB" in page and "75%" in page  # n2 memory
    assert "1 there before" in page  # n2: 3 pods, 2 of them placed by the run
    assert '<div class="card bad"><div class="value">1</div><div class="label">unschedulable</div>' in page


def test_legends_carry_full_profile_names() -> None:
    page = render_html(small())
    legend = re.search(r'<ul class="legend" aria-label="pod colours">(.*?)</ul>', page)
    assert legend is not None
    assert "academy-concentrate" in legend.group(1) and "academy-default" in legend.group(1)
    assert ">acad<" not in page


def test_a_thousand_nodes_get_heatmaps_and_their_busiest_nodes() -> None:
    page = render_html(thousand())
    # three heatmaps (cpu, memory, pods) of small tiles, one tile per node
    assert page.count('class="tiles small"') == 3
    cpu = page[page.index("<h3>Cpu requested</h3>") : page.index("<h3>Memory requested</h3>")]
    assert cpu.count('role="listitem"') == 1000
    # the legend counts every node, per band: 200 empty, 200 in each quarter
    counts = [int(n.replace(",", "")) for n in re.findall(r"<b>([\d,]+)</b> nodes", cpu)]
    assert counts == [200, 200, 200, 200, 200]
    assert 'title="node-0004: 100% cpu requested; cpu 4 of 4 cores; 4 pods' in cpu
    # the busiest nodes in full, every node folded underneath
    assert f"The {BUSIEST} nodes with the most cpu requested" in page
    assert "<summary>All 1,000 nodes, in the cluster's order</summary>" in page
    assert ALL_ROWS_UP_TO < 1000


def test_heatmap_colours_darken_with_use_and_mark_the_empty_and_the_overfull() -> None:
    assert usage_colour(0) is None
    shades = [usage_colour(v) for v in (10, 50, 100)]
    assert all(shades)
    lum = [_luminance(c) for c in shades if c]
    assert lum[0] > lum[1] > lum[2]
    assert usage_colour(130) == "#b42318"


def test_explained_scores_are_coloured_by_value() -> None:
    two = EXAMPLES / "two-profiles"
    result = simulate(
        [schedconfig.load(two / "config.yaml")],
        str(two / "nodes.yaml"),
        str(two / "workload.yaml"),
        explain_patterns=["academy/packed-*"],
    )
    page = render_html(result)
    cells = re.findall(r'<td class="score" style="background:(#[0-9a-f]{6});[^"]*"[^>]*>(\d+)</td>', page)
    assert cells
    by_score: dict[int, str] = {}
    for colour, value in cells:
        by_score.setdefault(int(value), colour)
    assert by_score.get(0) and by_score.get(100)
    assert _luminance(by_score[0]) > _luminance(by_score[100])  # a higher score is darker
    assert (
        "Node<wbr>Resources<wbr>Balanced<wbr>Allocation" in page
    )  # long plugin names may wrap between words


def test_comparison_page_puts_the_configurations_side_by_side() -> None:
    ex = EXAMPLES / "compare"
    configs = [
        (str(ex / f), schedconfig.load(ex / f)) for f in ("least-allocated.yaml", "most-allocated.yaml")
    ]
    comparison = compare.compare(configs, str(ex / "nodes.yaml"), str(ex / "workload.yaml"))
    page = render_comparison_html(comparison)
    assert page.count('<div class="panel">') == 2
    assert "<h3>least-allocated</h3>" in page and "<h3>most-allocated</h3>" in page
    moved = comparison.moved()
    assert moved and f"Pods not placed alike ({len(moved)})" in page
    pod, where = moved[0]
    assert f"<code>{pod}</code>" in page and where[1] in page
    figures = comparison.outcomes[1].figures()
    assert f"{figures['cpuOnBusiestNode']:.1f}%" in page
    # the nodes the configurations leave differently are marked, and counted
    views = [{v.node: (v.pods, v.cpu) for v in o.result.usage} for o in comparison.outcomes]
    differ = [n for n in comparison.outcomes[0].result.nodes if views[0][n] != views[1][n]]
    assert differ and f"≠ marks the {len(differ)} the configurations leave differently" in page
    assert page.count('<span class="differs"') == len(differ)


def test_compare_writes_its_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ex = EXAMPLES / "compare"
    report = tmp_path / "out" / "compare.html"
    args = ["schedule", "compare", "--config", str(ex / "least-allocated.yaml"), "--config"]
    args += [str(ex / "most-allocated.yaml"), "--cluster", str(ex / "nodes.yaml"), "--workload"]
    args += [str(ex / "workload.yaml"), "--report", str(report)]
    assert main(args) == 0
    assert f"report written to {report}" in capsys.readouterr().out
    page = report.read_text(encoding="utf-8")
    assert "<h2>Nodes, side by side</h2>" in page and page.count('<div class="panel">') == 2
