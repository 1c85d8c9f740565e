"""Human views of a simulation: the per-node x per-profile table (terminal) and a self-contained HTML page.

Why: "where did my pods go" is a matrix (nodes x scheduler profiles). The terminal table and the HTML page show the
same matrix; the page adds a grouped bar chart drawn as inline SVG, so it opens from disk with no network and no
JavaScript.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

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
</body>
</html>
"""
