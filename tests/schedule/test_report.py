"""The placement table and the self-contained HTML report."""

from __future__ import annotations

import io
import re

from rich.console import Console

from berth.schedule.report import print_table, render_html, table_rows
from berth.schedule.scheduler import Failure, Ignored, Placement, Preemption
from berth.schedule.simulate import SimulationResult


def result() -> SimulationResult:
    return SimulationResult(
        placements=(
            Placement("ns/a", "spread", "n1"),
            Placement("ns/b", "spread", "n2"),
            Placement("ns/c", "pack", "n2"),
            Placement("ns/d", "pack", "n2"),
        ),
        unschedulable=(Failure("ns/e", "pack", "0/2 nodes are available: 2 Insufficient cpu."),),
        ignored=(Ignored("ns/<f>", "other"),),
        pods=6,
        seconds=0.5,
        warnings=('profile "spread": plugin X is accepted but not active yet in berth (it is skipped)',),
        nodes=("n1", "n2", "n3"),
        profiles=("spread", "pack"),
        preempted=(Preemption("ns/low", "ns/a", "n1"),),
    )


def test_table_rows_count_pods_per_node_and_profile() -> None:
    header, rows = table_rows(result())
    assert header == ["node", "spread", "pack", "total"]
    assert rows == [
        ["n1", "1", "0", "1"],
        ["n2", "1", "2", "3"],
        ["n3", "0", "0", "0"],
        ["placed", "2", "2", "4"],
        ["unschedulable", "0", "1", "1"],
    ]


def test_printed_table_lists_unschedulable_preempted_and_ignored_pods() -> None:
    buf = io.StringIO()
    print_table(result(), Console(file=buf, width=120))
    text = buf.getvalue()
    assert "unschedulable ns/e (pack): 0/2 nodes are available: 2 Insufficient cpu." in text
    assert "ignored ns/<f>: no profile named 'other' (left Pending)" in text
    assert "preempted ns/low on n1: made room for ns/a" in text
    assert "4/6 pods placed" in text


def test_html_is_self_contained_and_escapes() -> None:
    page = render_html(result())
    assert page.startswith("<!DOCTYPE html>")
    assert not re.search(r"(src|href)=\"(https?:)?//", page)  # nothing fetched from the network
    assert "<script" not in page
    assert "ns/&lt;f&gt;" in page and "ns/<f>" not in page
    # One bar per node and profile, titled with its count.
    assert page.count("<rect") >= 6 + 2  # bars + legend swatches
    assert "<title>n2 / pack: 2</title>" in page
    assert "<td>unschedulable</td><td>0</td><td>1</td><td>1</td>" in page
