"""The terminal views: the placement table, and --explain's score table coloured only where colour can show."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.console import Console

from berth.schedule import config as schedconfig
from berth.schedule.report import print_explanations, print_table, score_colour, table_rows
from berth.schedule.scheduler import Failure, Ignored, Placement, Preemption
from berth.schedule.simulate import SimulationResult, simulate

TWO = Path(__file__).resolve().parents[2] / "examples" / "two-profiles"
COLOUR = re.compile(r"\x1b\[[0-9;]*[34]8;")  # an SGR sequence that sets a foreground or background colour


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


def explained() -> SimulationResult:
    cfg = schedconfig.load(TWO / "config.yaml")
    return simulate(
        [cfg], str(TWO / "nodes.yaml"), str(TWO / "workload.yaml"), explain_patterns=["academy/packed-*"]
    )


def test_score_cells_are_coloured_on_a_colour_terminal() -> None:
    buf = io.StringIO()
    console = Console(file=buf, width=160, force_terminal=True, color_system="truecolor")
    print_explanations(explained().explanations or (), console)
    text = buf.getvalue()
    assert COLOUR.search(text)
    assert "darker green scored higher" in text  # the legend says what the colours mean


@pytest.mark.parametrize("how", ["pipe", "no-color"])
def test_score_cells_are_plain_when_piped_or_no_color(how: str, monkeypatch: pytest.MonkeyPatch) -> None:
    buf = io.StringIO()
    if how == "no-color":
        monkeypatch.setenv("NO_COLOR", "1")
        console = Console(file=buf, width=160, force_terminal=True, color_system="truecolor")
    else:
        monkeypatch.delenv("NO_COLOR", raising=False)
        console = Console(file=buf, width=160)
    print_explanations(explained().explanations or (), console)
    text = buf.getvalue()
    assert "total" in text and "TaintToleration (x3)" in text
    assert not COLOUR.search(text)
    assert "darker green" not in text
    if how == "pipe":
        assert "\x1b" not in text


def test_score_colour_darkens_with_the_score() -> None:
    from berth.kube.htmlpage import _luminance

    low, mid, high = (score_colour(v, 0, 100) for v in (0, 50, 100))
    assert low and mid and high
    assert _luminance(low) > _luminance(mid) > _luminance(high)
    assert score_colour(7, 7, 7) == score_colour(50, 0, 100)  # no spread: the middle, not an extreme
    assert score_colour("n/a", 0, 100) is None


def test_simulate_explain_piped_has_no_escape_codes(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from berth.cli import main

    monkeypatch.delenv("FORCE_COLOR", raising=False)
    args = [
        "schedule",
        "simulate",
        "--config",
        str(TWO / "config.yaml"),
        "--cluster",
        str(TWO / "nodes.yaml"),
    ]
    args += ["--workload", str(TWO / "workload.yaml"), "--explain", "academy/packed-*"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "TaintToleration (x3)" in out and "total" in out
    assert "\x1b" not in out
