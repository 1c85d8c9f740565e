"""Human views of a simulation: the per-node x per-profile table (terminal) and a self-contained HTML page.

Why: "where did my pods go" is a matrix (nodes x scheduler profiles). The terminal table and the HTML page show the
same matrix; the page adds a grouped bar chart drawn as inline SVG, so it opens from disk with no network and no
JavaScript.
"""

from __future__ import annotations

import html
import io
from collections.abc import Callable, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from berth.schedule import compare, explain
from berth.schedule.simulate import SimulationResult

# Colour-blind-safe palette (Okabe-Ito), cycled per profile.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")


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


def print_table(result: SimulationResult, console: Console | None = None) -> None:
    """The placement matrix, then unschedulable pods with their FailedScheduling messages, pods evicted by
    preemption, then ignored pods."""
    console = console or Console()
    header, rows = table_rows(result)
    table = Table(title="Placement (pods per node and profile)")
    for i, h in enumerate(header):
        table.add_column(h, justify="left" if i == 0 else "right")
    for i, row in enumerate(rows):
        table.add_row(*row, end_section=(i == len(result.nodes) - 1))
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
    _say(console, f"explain {pod} ({a.scheduler_name}): attempt {a.number} {_headline(a)}")
    _print_attempt(a, console)


def _headline(a: explain.Attempt) -> str:
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
                cells.append(cell)
            table.add_row(f"{plugin} (x{weight})", *cells)
        if any(n.extender_score for n in scored):
            table.add_row("extenders", *(str(n.extender_score) for n in shown))
        table.add_row("total", *(str(n.total) for n in shown), end_section=True, style="bold")
        console.print(table)
        legend = "  cells: normalized score (raw Score when NormalizeScore changed it); total = sum of score x weight"
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


def _chart(result: SimulationResult) -> str:
    counts = result.counts()
    profiles = list(result.profiles) or ["(none)"]
    nodes = list(result.nodes)
    top = max([c for per in counts.values() for c in per.values()] + [1])
    bar_w, gap, group_gap = 18, 2, 22
    group_w = len(profiles) * (bar_w + gap) + group_gap
    plot_h, left, top_pad, bottom = 220, 40, 20, 80
    width = left + max(1, len(nodes)) * group_w + 20
    height = top_pad + plot_h + bottom + 24 * ((len(profiles) + 2) // 3)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        f'aria-label="pods per node per profile">',
        f'<line x1="{left}" y1="{top_pad + plot_h}" x2="{width - 10}" y2="{top_pad + plot_h}" stroke="#444"/>',
        f'<line x1="{left}" y1="{top_pad}" x2="{left}" y2="{top_pad + plot_h}" stroke="#444"/>',
    ]
    for tick in _ticks(top):
        y = top_pad + plot_h - plot_h * tick / top
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" font-size="11" text-anchor="end">{tick}</text>')
        parts.append(f'<line x1="{left}" y1="{y:.1f}" x2="{width - 10}" y2="{y:.1f}" stroke="#ddd"/>')
    for i, node in enumerate(nodes):
        x0 = left + 10 + i * group_w
        for j, prof in enumerate(profiles):
            value = counts.get(node, {}).get(prof, 0)
            h = plot_h * value / top
            x = x0 + j * (bar_w + gap)
            y = top_pad + plot_h - h
            parts.append(
                f'<rect x="{x}" y="{y:.1f}" width="{bar_w}" height="{h:.1f}" fill="{PALETTE[j % len(PALETTE)]}">'
                f"<title>{html.escape(node)} / {html.escape(prof)}: {value}</title></rect>"
            )
            if value:
                parts.append(
                    f'<text x="{x + bar_w / 2}" y="{y - 3:.1f}" font-size="10" text-anchor="middle">{value}</text>'
                )
        cx = x0 + len(profiles) * (bar_w + gap) / 2
        label_y = top_pad + plot_h + 14
        parts.append(
            f'<text x="{cx:.1f}" y="{label_y}" font-size="11" text-anchor="end" '
            f'transform="rotate(-35 {cx:.1f} {label_y})">{html.escape(node)}</text>'
        )
    legend_y = top_pad + plot_h + bottom
    for j, prof in enumerate(profiles):
        lx = left + (j % 3) * 220
        ly = legend_y + (j // 3) * 24
        parts.append(
            f'<rect x="{lx}" y="{ly - 10}" width="12" height="12" fill="{PALETTE[j % len(PALETTE)]}"/>'
        )
        parts.append(f'<text x="{lx + 18}" y="{ly}" font-size="12">{html.escape(prof)}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def _explanations_html(explanations: Sequence[explain.Explanation]) -> str:
    """The same facts as :func:`print_explanations`, every feasible node included."""
    esc = html.escape
    parts = [f"<h2>Explained pods ({len(explanations)})</h2>"]
    for ex in explanations:
        for a in ex.attempts:
            parts.append(
                f"<h3><code>{esc(ex.pod)}</code> ({esc(a.scheduler_name)}), attempt {a.number}: "
                f"{esc(_headline(a))}</h3>"
            )
            feasible = sum(1 for n in a.nodes if n.passed)
            parts.append(
                f"<p>{esc(a.decision)}. {len(a.nodes)} of {a.nodes_in_cluster} nodes examined, {feasible} feasible"
                + (f", {a.excluded} excluded by PreFilter" if a.excluded else "")
                + (f", {a.not_examined} not examined" if a.not_examined else "")
                + ".</p>"
            )
            if a.message and a.result != "error":
                parts.append(f"<p>{esc(a.message)}</p>")
            scored = [n for n in a.nodes if n.passed and n.total is not None]
            if scored:
                head = "".join(f"<th>{esc(n.node)}{' *' if n.node == a.node else ''}</th>" for n in scored)
                rows = []
                for i, (plugin, weight) in enumerate(a.score_plugins):
                    cells = "".join(
                        f'<td title="raw {esc(str(n.scores[i].raw))}">{esc(str(n.scores[i].normalized))}</td>'
                        for n in scored
                    )
                    rows.append(f"<tr><td>{esc(plugin)} (x{weight})</td>{cells}</tr>")
                if any(n.extender_score for n in scored):
                    cells = "".join(f"<td>{n.extender_score}</td>" for n in scored)
                    rows.append(f"<tr><td>extenders</td>{cells}</tr>")
                totals = "".join(f"<td>{n.total}</td>" for n in scored)
                rows.append(f'<tr class="sum"><td>total</td>{totals}</tr>')
                parts.append(
                    f"<table><thead><tr><th>plugin (weight)</th>{head}</tr></thead>"
                    f"<tbody>{''.join(rows)}</tbody></table>"
                )
            rejected = [n for n in a.nodes if not n.passed]
            if rejected:
                items = "".join(
                    f"<li><code>{esc(n.node)}</code>: {esc(n.plugin)}: {esc(', '.join(n.reasons))}</li>"
                    for n in rejected
                )
                parts.append(f"<p>Filtered out:</p><ul>{items}</ul>")
            if a.post_filter_message or a.nominated_node or a.victims:
                detail = a.post_filter_message or "made room"
                if a.nominated_node:
                    detail += f"; nominated node {a.nominated_node}"
                if a.victims:
                    detail += f"; evicted {', '.join(a.victims)}"
                parts.append(f"<p>PostFilter: {esc(detail)}</p>")
    return "\n".join(parts)


def _ticks(top: int) -> Sequence[int]:
    step = max(1, -(-top // 5))
    return list(range(0, top + 1, step))


def render_html(result: SimulationResult, title: str = "berth schedule simulate") -> str:
    """A complete HTML document: summary, placement table, SVG chart, unschedulable and ignored pods, warnings."""
    header, rows = table_rows(result)
    esc = html.escape
    thead = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "".join(
        "<tr"
        + (' class="sum"' if i >= len(result.nodes) else "")
        + ">"
        + "".join(f"<td>{esc(c)}</td>" for c in row)
        + "</tr>"
        for i, row in enumerate(rows)
    )
    unsched = "".join(
        f"<li><code>{esc(f.pod)}</code> ({esc(f.scheduler_name)}): {esc(f.message)}</li>"
        for f in result.unschedulable
    )
    ignored = "".join(
        f"<li><code>{esc(i.pod)}</code>: no profile named <code>{esc(i.scheduler_name)}</code></li>"
        for i in result.ignored
    )
    warnings = "".join(f"<li>{esc(w)}</li>" for w in result.warnings)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{esc(title)}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em; color: #222; }}
table {{ border-collapse: collapse; margin: 1em 0; }}
th, td {{ border: 1px solid #bbb; padding: 4px 10px; text-align: right; }}
th:first-child, td:first-child {{ text-align: left; }}
tr.sum td {{ font-weight: bold; background: #f3f3f3; }}
code {{ background: #f3f3f3; padding: 0 3px; }}
</style>
</head>
<body>
<h1>{esc(title)}</h1>
<p>{result.scheduled} of {result.pods} pods placed on {len(result.nodes)} nodes by
{len(result.profiles)} profile(s) in {result.seconds:.3f} s.</p>
<h2>Pods per node and profile</h2>
<table><thead><tr>{thead}</tr></thead><tbody>{body}</tbody></table>
<h2>Chart</h2>
{_chart(result)}
<h2>Unschedulable ({len(result.unschedulable)})</h2>
<ul>{unsched or "<li>none</li>"}</ul>
<h2>Ignored ({len(result.ignored)})</h2>
<ul>{ignored or "<li>none</li>"}</ul>
<h2>Warnings</h2>
<ul>{warnings or "<li>none</li>"}</ul>
{_explanations_html(result.explanations) if result.explanations is not None else ""}
</body>
</html>
"""
