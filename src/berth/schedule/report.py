"""Terminal views of a simulation: the per-node x per-profile table, ``--explain``'s score tables, ``compare``'s
outcomes.

Why: "where did my pods go" is a matrix (nodes x scheduler profiles); the HTML reports
(:mod:`berth.schedule.report_html`) show the same matrix with each node's cpu and memory. Score cells are coloured
by value through rich styles, which rich drops by itself when NO_COLOR is set or the output is not a terminal, so a
pipe or a log gets plain text.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from berth.kube import htmlpage
from berth.schedule import compare, explain
from berth.schedule.simulate import SimulationResult


def table_rows(result: SimulationResult) -> tuple[list[str], list[list[str]]]:
    """(header, rows): one row per node, one column per profile, plus a total column and summary rows."""
    counts = result.counts()
    profiles = list(result.profiles)
    header = ["node", *profiles, "total"]
    rows: list[list[str]] = []
    for node in result.nodes:
        per = counts.get(node, {})
        rows.append([node, *(str(per.get(p, 0)) for p in profiles), str(sum(per.values()))])
    totals = [sum(counts.get(n, {}).get(p, 0) for n in result.nodes) for p in profiles]
    rows.append(["placed", *(str(t) for t in totals), str(sum(totals))])
    unsched = [sum(1 for f in result.unschedulable if f.scheduler_name == p) for p in profiles]
    rows.append(["unschedulable", *(str(u) for u in unsched), str(len(result.unschedulable))])
    return header, rows


def cores(millicores: int) -> str:
    """Millicores as cores, as few digits as needed: ``1500`` -> ``1.5`` (the terminal and the HTML reports)."""
    if millicores % 1000 == 0:
        return str(millicores // 1000)
    return f"{millicores / 1000:.2f}".rstrip("0").rstrip(".")


def memory(amount: int) -> str:
    """Bytes in the largest binary unit that fits, one decimal: ``1.5 GiB``."""
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if amount >= size:
            return f"{amount / size:.1f}".removesuffix(".0") + f" {unit}"
    return f"{amount} B"


def usage_cells(result: SimulationResult) -> dict[str, tuple[str, str]]:
    """Per node, cpu and memory requested at the end of the run of what it offers (``-o wide``'s columns)."""
    return {
        u.node: (
            f"{cores(u.cpu)}/{cores(u.cpu_allocatable)} {htmlpage.percent_text(htmlpage.percent(u.cpu, u.cpu_allocatable))}",
            f"{memory(u.memory)}/{memory(u.memory_allocatable)} "
            f"{htmlpage.percent_text(htmlpage.percent(u.memory, u.memory_allocatable))}",
        )
        for u in result.usage
    }


def print_table(result: SimulationResult, console: Console | None = None, wide: bool = False) -> None:
    """The placement matrix (``wide``: with each node's cpu and memory requested), then unschedulable pods with
    their FailedScheduling messages, pods evicted by preemption, then ignored pods."""
    console = console or Console()
    header, rows = table_rows(result)
    table = Table(title="Placement (pods per node and profile)")
    for i, h in enumerate(header):
        table.add_column(h, justify="left" if i == 0 else "right")
    usage = usage_cells(result) if wide else {}
    if wide:
        table.add_column("cpu requested", justify="right")
        table.add_column("memory requested", justify="right")
    for i, row in enumerate(rows):
        extra = usage.get(row[0], ("", "")) if wide and i < len(result.nodes) else ("", "") if wide else ()
        table.add_row(*row, *extra, end_section=(i == len(result.nodes) - 1))
    console.print(table)
    for f in result.unschedulable:
        console.print(
            f"unschedulable {f.pod} ({f.scheduler_name}): {f.message}", markup=False, highlight=False
        )
    for p in result.preempted:
        console.print(
            f"preempted {p.victim} on {p.node}: made room for {p.preemptor}", markup=False, highlight=False
        )
    for ig in result.ignored:
        console.print(
            f"ignored {ig.pod}: no profile named {ig.scheduler_name!r} (left Pending)",
            markup=False,
            highlight=False,
        )
    console.print(
        f"{result.scheduled}/{result.pods} pods placed in {result.seconds:.3f}s "
        f"({result.pods_per_second:.0f} pods/s)",
        markup=False,
        highlight=False,
    )


EXPLAIN_COLUMNS = 8  # feasible nodes shown side by side per explained attempt (all of them are in -o json)
EXPLAIN_REJECTED_NAMES = 5  # node names listed per rejection reason


def print_explanations(explanations: Sequence[explain.Explanation], console: Console | None = None) -> None:
    """Per followed pod, every kept attempt: the best feasible nodes side by side with each Score plugin's score
    and the totals, then the nodes Filter turned away (grouped by plugin and reason), then what PostFilter did."""
    console = console or Console()
    for ex in explanations:
        for a in ex.attempts:
            console.print()
            print_attempt(ex.pod, a, console)


def attempt_text(pod: str, attempt: explain.Attempt, width: int = 120) -> str:
    """:func:`print_attempt` as a string (live mode logs it)."""
    buffer = io.StringIO()
    print_attempt(pod, attempt, Console(file=buffer, width=width, no_color=True, force_terminal=False))
    return buffer.getvalue().rstrip("\n")


def print_attempt(pod: str, a: explain.Attempt, console: Console) -> None:
    """One attempt: its headline, how the node was chosen, the score table, rejections, PostFilter."""
    _say(console, f"explain {pod} ({a.scheduler_name}): attempt {a.number} {headline(a)}")
    _print_attempt(a, console)


def headline(a: explain.Attempt) -> str:
    if a.result == "scheduled":
        return f"scheduled on {a.node}"
    if a.result == "waiting":
        return f"waiting at Permit on {a.node}"
    if a.result == "error" and a.message:
        return f"error: {a.message}"
    return a.result


def _print_attempt(a: explain.Attempt, console: Console) -> None:
    feasible = [n for n in a.nodes if n.passed]
    rejected = [n for n in a.nodes if not n.passed]
    seen = f"{len(a.nodes)} of {a.nodes_in_cluster} nodes examined, {len(feasible)} feasible"
    if a.excluded:
        seen += f", {a.excluded} excluded by PreFilter ({a.excluded_reason})"
    if a.not_examined:
        seen += f", {a.not_examined} not examined (enough feasible nodes found: percentageOfNodesToScore)"
    _say(console, f"  {a.decision}" if a.route is explain.Route.NOMINATED else f"  {a.decision}; {seen}")
    if a.message and a.result != "error":
        _say(console, f"  message: {a.message}")
    if a.pre_filter_message:
        _say(console, f"  PreFilter: {a.pre_filter_message}")
    if a.skipped_score:  # (the Filter plugins PreFilter skipped are in -o json: usually most of them)
        _say(
            console,
            f"  not scored (PreScore said Skip: nothing to score for this pod): {', '.join(a.skipped_score)}",
        )
    scored = [n for n in feasible if n.total is not None]
    if scored:
        shown = scored[:EXPLAIN_COLUMNS]
        # A tie among more nodes than are shown: the chosen one is always among them.
        if a.node and all(n.node != a.node for n in shown):
            shown[-1] = next(n for n in scored if n.node == a.node)
        table = Table(show_edge=True)
        table.add_column("plugin (weight)", justify="left")
        for n in shown:
            table.add_column(n.node + (" *" if n.node == a.node else ""), justify="right")
        for i, (plugin, weight) in enumerate(a.score_plugins):
            cells = []
            for n in shown:
                score = n.scores[i]
                cell = str(score.normalized)
                if score.raw != score.normalized:
                    cell += f" ({score.raw})"
                cells.append(Text(cell, style=score_style(score.normalized, 0, 100)))
            table.add_row(f"{plugin} (x{weight})", *cells)
        if any(n.extender_score for n in scored):
            table.add_row("extenders", *(str(n.extender_score) for n in shown))
        totals = [n.total or 0 for n in scored]
        table.add_row(
            "total",
            *(Text(str(n.total), style=score_style(n.total, min(totals), max(totals))) for n in shown),
            end_section=True,
            style="bold",
        )
        console.print(table)
        legend = "  cells: normalized score (raw Score when NormalizeScore changed it); total = sum of score x weight"
        if console.is_terminal and not console.no_color:
            legend += "; darker green scored higher (total: from the lowest to the highest)"
        if a.node:
            legend += "; * chosen"
        _say(console, legend)
        if len(scored) > len(shown):
            _say(
                console, f"  ... and {len(scored) - len(shown)} more feasible nodes (all of them in -o json)"
            )
    elif feasible and a.route is not explain.Route.NOMINATED:
        _say(console, f"  passed Filter: {_some([n.node for n in feasible])}")
    groups: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for n in rejected:
        groups.setdefault((n.plugin, n.reasons), []).append(n.node)
    for (plugin, reasons), names in groups.items():
        who = f"{plugin}: " if plugin else ""
        _say(console, f"  filtered out by {who}{', '.join(reasons)}: {_some(names)}")
    if a.post_filter_message or a.nominated_node or a.victims:
        line = "  PostFilter: " + (a.post_filter_message or "made room")
        if a.nominated_node:
            line += f"; nominated node {a.nominated_node}"
        if a.victims:
            line += f"; evicted {', '.join(a.victims)}"
        _say(console, line)
    if not a.consistent:
        _say(console, f"  warning: {a.problem}")


def score_colour(value: object, low: float, high: float) -> str | None:
    """Where a score sits between ``low`` and ``high``, as a colour of the Greens scale (darker scored higher);
    None for a value that is not a number. The HTML report and the terminal share it."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    fraction = (float(value) - low) / (high - low) if high > low else 0.5
    # The scale's light two thirds: a table of high scores stays readable, black text on every cell.
    return htmlpage.scale_colour(htmlpage.GREENS, 0.04 + 0.56 * min(1.0, max(0.0, fraction)))


def score_style(value: object, low: float, high: float) -> str:
    """:func:`score_colour` as a rich style: a background with legible text. Rich drops it when NO_COLOR is set or
    the console is not a terminal (a pipe, a log)."""
    bg = score_colour(value, low, high)
    return f"{htmlpage.text_on(bg)} on {bg}" if bg else ""


def _some(names: Sequence[str]) -> str:
    """The first few names, then how many more."""
    listed = ", ".join(names[:EXPLAIN_REJECTED_NAMES])
    if len(names) > EXPLAIN_REJECTED_NAMES:
        listed += f" (+{len(names) - EXPLAIN_REJECTED_NAMES} more)"
    return listed


def _say(console: Console, text: str) -> None:
    console.print(text, markup=False, highlight=False)


COMPARE_MOVED_LINES = 20  # pods listed under the comparison table (all of them in -o json)


def print_comparison(comparison: compare.Comparison, console: Console | None = None) -> None:
    """Configurations as columns, outcome figures as rows, then the pods that did not land alike."""
    console = console or Console()
    outcomes = comparison.outcomes
    figures = [o.figures() for o in outcomes]
    table = Table(title="Same cluster, same workload, one run per configuration")
    table.add_column("", justify="left")
    for o in outcomes:
        table.add_column(o.label, justify="right")

    def row(label: str, cell: Callable[[dict[str, Any]], str], end: bool = False) -> None:
        table.add_row(label, *(cell(f) for f in figures), end_section=end)

    row("placed", lambda f: f"{f['placed']}/{f['pods']}")
    row("unschedulable", lambda f: str(f["unschedulable"]))
    row("pods preempted", lambda f: str(f["preempted"]), end=True)
    row("nodes in use", lambda f: str(f["nodesInUse"]))
    row("empty nodes", lambda f: str(f["emptyNodes"]))
    row("nodes given pods by the run", lambda f: str(f["nodesGivenPods"]), end=True)
    row("cpu requested, whole cluster", lambda f: f"{f['cpuRequested']:.1f} %")
    row("cpu, busiest node", lambda f: f"{f['cpuOnBusiestNode']:.1f} %")
    row(
        "cpu, nodes in use (mean ± sd)",
        lambda f: f"{f['cpuOnUsedNodesMean']:.1f} ± {f['cpuOnUsedNodesStdev']:.1f} %",
        end=True,
    )
    row("memory requested, whole cluster", lambda f: f"{f['memoryRequested']:.1f} %")
    row("memory, busiest node", lambda f: f"{f['memoryOnBusiestNode']:.1f} %")
    row("memory, nodes in use (mean)", lambda f: f"{f['memoryOnUsedNodesMean']:.1f} %")
    console.print(table)
    moved = comparison.moved()
    baseline = outcomes[0].label
    _say(
        console,
        f"{len(moved)} pods not placed alike ({' / '.join(o.label for o in outcomes)}; '-': not placed)",
    )
    for pod, where in moved[:COMPARE_MOVED_LINES]:
        _say(console, f"  {pod}: {' / '.join(where)}")
    if len(moved) > COMPARE_MOVED_LINES:
        _say(console, f"  ... and {len(moved) - COMPARE_MOVED_LINES} more (all of them in -o json)")
    if not moved:
        _say(console, f"  every pod went where {baseline} put it")
