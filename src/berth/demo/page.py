"""The demo's HTML report: the placement report (per node: pods by profile, cpu and memory) plus the demo's own
sections.

Why reuse :mod:`berth.schedule.report_html`: the live placement is the same nodes x profiles matrix the simulation
shows, with the usage the live scheduler's cache held, so the page looks the same whether pods were placed in
simulation or on the cluster; the demo adds what only it knows -- the install, the RBAC phases and the measured
comparison of the two deployment shapes.
"""

from __future__ import annotations

from pathlib import Path

from berth.demo.result import DemoResult
from berth.kube import htmlpage as hp
from berth.kube import yamlio
from berth.schedule import NodeUsage, Placement, ReportPage, SimulationResult, render_report_html


def live_result(
    placements: list[Placement],
    nodes: list[str],
    profiles: list[str],
    seconds: float,
    usage: tuple[NodeUsage, ...] = (),
) -> SimulationResult:
    """The live placement in the shape the simulation reports use (so the same table and page show it); ``usage``:
    each node's requests and capacity as the live scheduler's cache held them."""
    return SimulationResult(
        placements=tuple(sorted(placements, key=lambda p: p.pod)),
        unschedulable=(),
        ignored=(),
        pods=len(placements),
        seconds=seconds,
        warnings=(),
        nodes=tuple(nodes),
        profiles=tuple(profiles),
        usage=usage,
    )


def sections(result: DemoResult) -> str:
    """The demo's own sections: the install's lines, the RBAC steps, the two shapes measured."""
    esc = hp.esc
    parts = ['<h2>Install</h2><ul class="plain">']
    parts += [f"<li>{esc(line)}</li>" for line in result.install_lines]
    parts.append("</ul>")
    if result.install_error:
        parts.append(f'<div class="callout">{esc(result.install_error)}</div>')
    parts.append("<h2>RBAC</h2>")
    parts.append(
        hp.cards(
            [
                (str(result.rules_too_small), "rule in the too-small ClusterRole", ""),
                (
                    str(len(result.forbidden)),
                    "missing permissions reported",
                    "bad" if result.forbidden else "",
                ),
                (str(result.bound_while_forbidden), "pods bound meanwhile", ""),
                (str(result.rules_minimal), "rules from berth schedule rbac", "good"),
            ]
        )
    )
    parts.append(
        f"<p>With the too-small role the scheduler reported {len(result.forbidden)} missing permission(s) and bound "
        f"{result.bound_while_forbidden} pods:</p>"
    )
    parts.append(
        '<ul class="plain">'
        + "".join(f"<li><code>{esc(line)}</code></li>" for line in result.forbidden)
        + "</ul>"
    )
    parts.append(
        f"<p>With the ClusterRole from <code>berth schedule rbac</code> ({result.rules_minimal} rules) the probe pod "
        f"was bound to <code>{esc(result.probe_node)}</code>.</p>"
    )
    if result.comparison is not None:
        c = result.comparison
        parts.append("<h2>The two deployment shapes, measured</h2>")
        rows = "".join(
            f'<tr><td class="name"><b>{esc(what)}</b></td>'
            + "".join(f'<td class="name" style="text-align:left">{esc(v)}</td>' for v in (one, two))
            + "</tr>"
            for what, one, two in c.rows()
        )
        parts.append(
            hp.scroll(
                '<table class="full"><colgroup><col style="width:22%"><col><col></colgroup><thead><tr><th></th>'
                '<th style="text-align:left">one scheduler, two profiles</th>'
                f'<th style="text-align:left">two schedulers, one profile each</th></tr></thead><tbody>{rows}</tbody>'
                "</table>"
            )
        )
        parts.append(
            f"<p>Traffic measured over {c.window:.1f} s per shape from the cluster's audit log (start, list, "
            "watch, idle); the third profile is <code>academy-binpack</code> (NodeResourcesFit MostAllocated).</p>"
        )
    return "\n".join(parts)


def write(path: Path, result: DemoResult) -> Path:
    """Write the self-contained page to ``path`` (atomically) and return it."""
    live = live_result(result.placements, result.nodes, result.profiles, result.place_seconds, result.usage)
    page = ReportPage(
        title="berth demo: two profiles on the embedded cluster",
        kicker="berth demo report",
        subtitle=hp.esc(
            f"{live.scheduled} pods of two Deployments placed by one scheduler with {len(live.profiles)} profiles on "
            f"{len(live.nodes)} nodes of an embedded cluster; then the install, the RBAC steps and the two "
            "deployment shapes, measured."
        ),
        extra=[sections(result)],
    )
    yamlio.write_atomic(path, render_report_html(live, page=page))
    return path
