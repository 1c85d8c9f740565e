"""The placement reports as self-contained HTML pages: ``simulate --report``, ``compare --report``, ``run --report``
and the demo's page.

Why these views: "where did my pods go" is a nodes x profiles matrix, but what a person weighs is how full each
node is. So each node gets its pods (by profile, plus the pods it already had) and its requested cpu and memory
against what it can allocate, as bars with the numbers beside them; a cluster of hundreds or thousands of nodes gets
a heatmap -- one small tile per node, a colour scale whose legend counts the nodes in each band -- and its busiest
nodes in detail, every node a click away. ``--explain``'s score tables are coloured by value (and list nodes as
rows, so a thousand feasible nodes make a long table, never a wide one).

The page look (CSS, meters, colour scales) is :mod:`berth.kube.htmlpage`'s, shared with the install report.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from berth.kube import htmlpage as hp
from berth.kube.htmlpage import esc
from berth.schedule import compare, explain
from berth.schedule.report import cores, headline, memory, score_colour
from berth.schedule.simulate import NodeUsage, SimulationResult

ALL_ROWS_UP_TO = (
    60  # nodes listed one per row as they come; past this, the busiest first and every node folded
)
BUSIEST = 25
LARGE_TILES_UP_TO = 48  # heatmap tiles big enough to carry the node's name and figure
HEATMAP_FROM = 13  # smaller clusters are read from the per-node rows alone
SCORE_ROWS = 20  # feasible nodes shown per explained attempt before the rest is folded
BEFORE = "#8c959f"  # pods a node had before the run (bound in the cluster file, or by other schedulers)


def profile_colours(profiles: Sequence[str]) -> dict[str, str]:
    return {p: hp.CATEGORICAL[i % len(hp.CATEGORICAL)] for i, p in enumerate(profiles)}


@dataclass(frozen=True)
class NodeView:
    """One node as the report shows it: this run's pods per profile and, when known, its usage at the end."""

    name: str
    placed: dict[str, int]
    usage: NodeUsage | None

    @property
    def run_pods(self) -> int:
        return sum(self.placed.values())

    @property
    def pods(self) -> int:
        return self.usage.pods if self.usage is not None else self.run_pods

    @property
    def before(self) -> int:
        return max(0, self.pods - self.run_pods)

    @property
    def cpu(self) -> float:
        u = self.usage
        return hp.percent(u.cpu, u.cpu_allocatable) if u is not None else 0.0

    @property
    def mem(self) -> float:
        u = self.usage
        return hp.percent(u.memory, u.memory_allocatable) if u is not None else 0.0

    @property
    def pod_share(self) -> float:
        u = self.usage
        return hp.percent(u.pods, u.allowed_pods) if u is not None else 0.0


def node_views(result: SimulationResult) -> list[NodeView]:
    counts = result.counts()
    usage = {u.node: u for u in result.usage}
    return [NodeView(n, counts.get(n, {}), usage.get(n)) for n in result.nodes]


@dataclass(frozen=True)
class Metric:
    """A per-node figure a heatmap colours: its percent, and the words a tile's tooltip uses."""

    key: str
    title: str
    value: Callable[[NodeView], float]
    detail: Callable[[NodeView], str]


def _cpu_detail(v: NodeView) -> str:
    u = v.usage
    return f"cpu {cores(u.cpu)} of {cores(u.cpu_allocatable)} cores" if u else ""


def _mem_detail(v: NodeView) -> str:
    u = v.usage
    return f"memory {memory(u.memory)} of {memory(u.memory_allocatable)}" if u else ""


def _pods_detail(v: NodeView) -> str:
    u = v.usage
    return f"{v.pods} pods of {u.allowed_pods} allowed" if u else f"{v.pods} pods"


METRICS = (
    Metric("cpu", "cpu requested", lambda v: v.cpu, _cpu_detail),
    Metric("memory", "memory requested", lambda v: v.mem, _mem_detail),
    Metric("pods", "pods (of the node's pod capacity)", lambda v: v.pod_share, _pods_detail),
)
BANDS = ((0.0, 25.0, "up to 25%"), (25.0, 50.0, "25-50%"), (50.0, 75.0, "50-75%"), (75.0, 100.0, "75-100%"))


def usage_colour(value: float) -> str | None:
    """A tile's colour for ``value`` percent: None when empty (a dashed white tile), the Blues scale from a light
    tint to its darkest at 100 %, red past 100 % (more requested than allocatable)."""
    if value <= 0:
        return None
    if value > 100:
        return hp.OVER
    return hp.scale_colour(hp.BLUES, 0.15 + 0.85 * value / 100)


def _band_counts(values: Sequence[float]) -> list[tuple[str, str | None, int]]:
    """(words, colour, nodes) per band: empty, four quarters (coloured at their middle), over 100 % when any."""
    out: list[tuple[str, str | None, int]] = [("empty", None, sum(1 for v in values if v <= 0))]
    for low, high, words in BANDS:
        out.append((words, usage_colour((low + high) / 2), sum(1 for v in values if low < v <= high)))
    over = sum(1 for v in values if v > 100)
    if over:
        out.append(("over 100%", hp.OVER, over))
    return out


def tile_size(nodes: int, wide: bool = True) -> str:
    """``large`` tiles carry the node's name and figures; ``medium`` and ``small`` ones only their colour (and a
    tooltip). ``wide``: the heatmap has the page's width, not a panel's."""
    if wide and nodes <= LARGE_TILES_UP_TO:
        return "large"
    return "medium" if nodes <= 300 else "small"


def heatmap(views: Sequence[NodeView], metric: Metric, size: str) -> str:
    """One tile per node coloured by ``metric`` (Blues: darker is fuller), with a legend that counts the nodes per
    band; every tile's tooltip (and a large tile's face) names the node and its figures."""
    values = [metric.value(v) for v in views]
    tiles = []
    for v, value in zip(views, values, strict=True):
        tip = f"{v.name}: {hp.percent_text(value)} {metric.title}; {metric.detail(v)}; " + _pods_words(v)
        cls = "tile"
        style = ""
        bg = usage_colour(value)
        if bg is None:
            cls += " empty"
        else:
            style = f' style="background:{bg};color:{hp.text_on(bg)}"'
            if value > 100:
                cls += " over"
        face = ""
        if size == "large":
            others = [
                f"{m.key} {hp.percent_text(m.value(v))}" for m in METRICS[:2] if m is not metric and v.usage
            ]
            others.append(f"{v.pods} pod{'s' if v.pods != 1 else ''}")
            face = (
                f'<span class="t-name">{esc(v.name)}</span><span class="t-value">{hp.percent_text(value)}</span>'
                f"<span>{esc(' · '.join(others))}</span>"
            )
        tiles.append(f'<div class="{cls}"{style} role="listitem" title="{esc(tip)}">{face}</div>')
    legend = hp.scale_legend(_band_counts(values), "nodes")
    return (
        f'<div class="tiles {size}" role="list" aria-label="{esc(metric.title)} per node">{"".join(tiles)}</div>'
        f"{legend}"
    )


def _pods_words(v: NodeView) -> str:
    parts = [f"{p} {n}" for p, n in v.placed.items() if n]
    if v.before:
        parts.append(f"{v.before} there before")
    return f"{v.pods} pods" + (f" ({', '.join(parts)})" if parts else "")


@dataclass(frozen=True)
class NodeTable:
    """How a table of nodes is drawn: a column per profile (with its full name) unless ``compact``, a stacked bar
    of the node's pods, and its cpu and memory when the run knows them."""

    profiles: tuple[str, ...]
    colours: dict[str, str]
    most_pods: int  # the pods bar's full length: the fullest node's pods
    with_usage: bool
    compact: bool = False  # side by side: no per-profile columns, no memory

    def head(self) -> str:
        cells = ['<th class="name">node</th>']
        if not self.compact:
            cells += [f'<th class="count">{hp.swatch(self.colours[p])}{esc(p)}</th>' for p in self.profiles]
        cells.append('<th class="bar">pods</th>')
        if self.with_usage:
            cells.append('<th class="bar">cpu requested</th>')
            if not self.compact:
                cells.append('<th class="bar">memory requested</th>')
        return f"<thead><tr>{''.join(cells)}</tr></thead>"

    def row(self, v: NodeView) -> str:
        parts = [(float(n), self.colours.get(p, BEFORE), f"{p}: {n}") for p, n in v.placed.items()]
        if v.before:
            parts.append((float(v.before), BEFORE, f"there before the run: {v.before}"))
        cells = [f'<td class="name">{esc(v.name)}</td>']
        if not self.compact:
            cells += [f'<td class="count">{v.placed.get(p, 0):,}</td>' for p in self.profiles]
        sub = f"{v.before} there before" if v.before else ""
        cells.append(f'<td class="bar">{hp.stacked(parts, self.most_pods, f"{v.pods:,}", sub)}</td>')
        u = v.usage
        if self.with_usage and u is not None:
            cpu_sub = f"{cores(u.cpu)} of {cores(u.cpu_allocatable)} cores"
            cells.append(f'<td class="bar">{hp.meter(v.cpu, hp.percent_text(v.cpu), sub=cpu_sub)}</td>')
            if not self.compact:
                mem_sub = f"{memory(u.memory)} of {memory(u.memory_allocatable)}"
                cells.append(f'<td class="bar">{hp.meter(v.mem, hp.percent_text(v.mem), sub=mem_sub)}</td>')
        elif self.with_usage:
            cells.append('<td class="note">not known</td>' * (1 if self.compact else 2))
        return f"<tr>{''.join(cells)}</tr>"

    def table(self, views: Sequence[NodeView]) -> str:
        rows = "".join(self.row(v) for v in views)
        return hp.scroll(f'<table class="full nodes">{self.head()}<tbody>{rows}</tbody></table>')


def busiest(views: Sequence[NodeView], with_usage: bool, n: int = BUSIEST) -> list[NodeView]:
    """The ``n`` nodes with the most cpu requested (then memory, pods); the most pods when usage is not known."""
    if with_usage:
        return sorted(views, key=lambda v: (v.cpu, v.mem, v.pods), reverse=True)[:n]
    return sorted(views, key=lambda v: v.pods, reverse=True)[:n]


def nodes_section(result: SimulationResult, colours: dict[str, str]) -> str:
    """Per node: its pods per profile, a bar of them, cpu and memory (all nodes, or the busiest with every node
    folded underneath)."""
    views = node_views(result)
    with_usage = bool(result.usage)
    table = NodeTable(tuple(result.profiles), colours, max([v.pods for v in views] + [1]), with_usage)
    legend = _profile_legend(result.profiles, colours, any(v.before for v in views))
    parts = [f"<h2>Nodes ({len(views):,})</h2>", legend]
    if len(views) <= ALL_ROWS_UP_TO:
        parts.append(table.table(views))
    else:
        top = busiest(views, with_usage)
        what = "cpu requested" if with_usage else "pods"
        parts.append(f"<h3>The {len(top)} nodes with the most {what}</h3>")
        parts.append(table.table(top))
        parts.append(hp.details(f"All {len(views):,} nodes, in the cluster's order", table.table(views)))
    return "\n".join(parts)


def _profile_legend(profiles: Sequence[str], colours: dict[str, str], before: bool) -> str:
    items = [f"<li>{hp.swatch(colours[p])}{esc(p)}</li>" for p in profiles]
    if before:
        items.append(f"<li>{hp.swatch(BEFORE)}there before the run</li>")
    return f'<ul class="legend" aria-label="pod colours">{"".join(items)}</ul>'


def heatmaps_section(result: SimulationResult) -> str:
    """Up to :data:`LARGE_TILES_UP_TO` nodes: one heatmap of cpu whose tiles also say memory and pods; more: one
    heatmap per figure (cpu, memory, pods), a small tile per node."""
    if len(result.nodes) < HEATMAP_FROM:
        return ""
    views = node_views(result)
    size = tile_size(len(views))
    parts = [
        "<h2>Heatmap</h2>",
        f'<p class="note">One tile per node ({len(views):,}), in the cluster\'s order; darker is fuller'
        + ("" if size == "large" else "; hover a tile for its node and figures")
        + ".</p>",
    ]
    if not result.usage:
        parts.append('<p class="note">Requests and capacities are not known for this run.</p>')
        return "\n".join(parts)
    for m in METRICS[:1] if size == "large" else METRICS:
        parts.append(f"<h3>{esc(m.title.capitalize())}</h3>{heatmap(views, m, size)}")
    return "\n".join(parts)


def summary_cards(result: SimulationResult) -> str:
    views = node_views(result)
    used = sum(1 for v in views if v.pods)
    items = [
        (
            f"{result.scheduled:,} <small>of {result.pods:,}</small>",
            "pods placed",
            "good" if result.scheduled == result.pods else "",
        ),
        (f"{len(result.unschedulable):,}", "unschedulable", "bad" if result.unschedulable else ""),
        (f"{used:,} <small>of {len(views):,}</small>", "nodes with pods", ""),
    ]
    if result.usage:
        cpu = hp.percent(sum(u.cpu for u in result.usage), sum(u.cpu_allocatable for u in result.usage))
        mem = hp.percent(sum(u.memory for u in result.usage), sum(u.memory_allocatable for u in result.usage))
        items += [
            (hp.percent_text(cpu), "cpu requested, cluster", ""),
            (hp.percent_text(mem), "memory requested, cluster", ""),
        ]
    if result.preempted:
        items.append((f"{len(result.preempted):,}", "pods preempted", "bad"))
    return hp.cards(items)


def profiles_section(result: SimulationResult, colours: dict[str, str]) -> str:
    counts = result.counts()
    total = max(1, result.scheduled)
    rows = []
    for p in result.profiles:
        placed = sum(per.get(p, 0) for per in counts.values())
        failed = sum(1 for f in result.unschedulable if f.scheduler_name == p)
        nodes = sum(1 for per in counts.values() if per.get(p))
        share = hp.percent(placed, total)
        rows.append(
            f'<tr><td class="name">{hp.swatch(colours[p])}{esc(p)}</td><td>{placed:,}</td><td>{failed:,}</td>'
            f'<td>{nodes:,}</td><td class="bar">{hp.meter(share, hp.percent_text(share), colours[p])}</td></tr>'
        )
    return f"<h2>Profiles ({len(result.profiles)})</h2>" + hp.scroll(
        '<table class="full"><colgroup><col style="width:34%"><col><col><col><col style="width:30%"></colgroup>'
        "<thead><tr><th>profile</th><th>placed</th><th>unschedulable</th><th>nodes given pods</th>"
        f"<th>share of the placed pods</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def problems_section(result: SimulationResult) -> str:
    """Unschedulable pods grouped by profile and message, preemptions, ignored pods, warnings."""
    groups: dict[tuple[str, str], list[str]] = {}
    for f in result.unschedulable:
        groups.setdefault((f.scheduler_name, f.message), []).append(f.pod)
    items = []
    for (profile, message), pods in groups.items():
        names = ", ".join(f"<code>{esc(p)}</code>" for p in pods[:5])
        more = f" and {len(pods) - 5:,} more" if len(pods) > 5 else ""
        items.append(
            f"<li><b>{len(pods):,} pod{'s' if len(pods) != 1 else ''}</b> ({esc(profile)}): {esc(message)}"
            f'<br><span class="note">{names}{more}</span></li>'
        )
    parts = [f"<h2>Unschedulable ({len(result.unschedulable):,})</h2>"]
    parts.append(
        f'<ul class="plain">{"".join(items)}</ul>'
        if items
        else '<p class="note">None: every pod found a node.</p>'
    )
    if result.preempted:
        pre = "".join(
            f"<li><code>{esc(p.victim)}</code> on <code>{esc(p.node)}</code>, for <code>{esc(p.preemptor)}</code></li>"
            for p in result.preempted
        )
        parts.append(f'<h2>Preempted ({len(result.preempted):,})</h2><ul class="plain">{pre}</ul>')
    if result.ignored:
        ign = "".join(
            f"<li><code>{esc(i.pod)}</code>: no profile named <code>{esc(i.scheduler_name)}</code> (left Pending)</li>"
            for i in result.ignored
        )
        parts.append(f'<h2>Ignored ({len(result.ignored):,})</h2><ul class="plain">{ign}</ul>')
    if result.warnings:
        warn = "".join(f"<li>{esc(w)}</li>" for w in result.warnings)
        parts.append(f'<h2>Warnings ({len(result.warnings)})</h2><ul class="plain">{warn}</ul>')
    return "\n".join(parts)


# ---- --explain -----------------------------------------------------------------------------------------------


def score_cell(value: object, low: float, high: float, title: str = "", strong: bool = False) -> str:
    """A score coloured by where it sits between ``low`` and ``high`` (Greens: darker scored higher), the number
    always in it."""
    bg = score_colour(value, low, high)
    style = f"background:{bg};color:{hp.text_on(bg)}" if bg else ""
    if strong:
        style += ";font-weight:650"
    tip = f' title="{esc(title)}"' if title else ""
    return f'<td class="score" style="{style}"{tip}>{esc(value)}</td>'


def _breakable(name: str) -> str:
    """A CamelCase plugin name that may wrap between its words (NodeResources|Balanced|Allocation)."""
    return re.sub(r"(?<=[a-z])(?=[A-Z])", "<wbr>", esc(name))


def score_table(a: explain.Attempt) -> str:
    """Feasible nodes as rows (best total first), Score plugins as columns; plugin cells coloured on the plugins'
    0-100 range, totals from the lowest to the highest total of this attempt."""
    scored = [n for n in a.nodes if n.passed and n.total is not None]
    if not scored:
        return ""
    plugins = a.score_plugins
    extenders = any(n.extender_score for n in scored)
    totals = [float(n.total or 0) for n in scored]
    low, high = min(totals), max(totals)
    head = "".join(f"<th>{_breakable(p)} <small>×{w}</small></th>" for p, w in plugins)
    head += "<th>extenders</th>" if extenders else ""

    def row(n: explain.NodeResult) -> str:
        mark = " ★" if n.node == a.node else ""
        cells = [f'<td class="node">{esc(n.node)}{mark}</td>']
        for s in n.scores:
            raw = f"raw {s.raw}; " if s.raw != s.normalized else ""
            cells.append(score_cell(s.normalized, 0, 100, f"{raw}× {s.weight} = {s.weighted}"))
        if extenders:
            cells.append(f"<td>{n.extender_score}</td>")
        cells.append(score_cell(n.total, low, high, strong=True))
        return f"<tr>{''.join(cells)}</tr>"

    table_head = f'<thead><tr><th class="node">node</th>{head}<th>total</th></tr></thead>'
    first = "".join(row(n) for n in scored[:SCORE_ROWS])
    out = hp.scroll(f"<table>{table_head}<tbody>{first}</tbody></table>")
    if len(scored) > SCORE_ROWS:
        rest = "".join(row(n) for n in scored[SCORE_ROWS:])
        out += hp.details(
            f"{len(scored) - SCORE_ROWS:,} more feasible nodes",
            hp.scroll(f"<table>{table_head}<tbody>{rest}</tbody></table>"),
        )
    legend = (
        '<p class="note">Cells: the normalized score (hover for the raw score and the weighted one); darker green '
        "scored higher, on the plugins' 0-100 scale, and for the total from this attempt's lowest to its highest."
        + (" ★ chosen." if a.node else "")
        + "</p>"
    )
    return legend + out


def attempt_html(pod: str, a: explain.Attempt) -> str:
    feasible = sum(1 for n in a.nodes if n.passed)
    seen = f"{len(a.nodes):,} of {a.nodes_in_cluster:,} nodes examined, {feasible:,} feasible"
    if a.excluded:
        seen += f", {a.excluded:,} excluded by PreFilter"
    if a.not_examined:
        seen += f", {a.not_examined:,} not examined (percentageOfNodesToScore)"
    parts = [
        f"<h3><code>{esc(pod)}</code> ({esc(a.scheduler_name)}), attempt {a.number}: {esc(headline(a))}</h3>",
        f"<p>{esc(a.decision)}. {seen}.</p>",
    ]
    if a.message and a.result != "error":
        parts.append(f"<p>{esc(a.message)}</p>")
    if a.skipped_score:
        parts.append(
            f'<p class="note">Not scored (PreScore said Skip): {esc(", ".join(a.skipped_score))}</p>'
        )
    parts.append(score_table(a))
    groups: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for n in a.nodes:
        if not n.passed:
            groups.setdefault((n.plugin, n.reasons), []).append(n.node)
    if groups:
        items = []
        for (plugin, reasons), names in groups.items():
            listed = ", ".join(f"<code>{esc(x)}</code>" for x in names[:8])
            more = f" and {len(names) - 8:,} more" if len(names) > 8 else ""
            who = f"{esc(plugin)}: " if plugin else ""
            items.append(
                f'<li><b>{len(names):,}</b> by {who}{esc(", ".join(reasons))} <span class="note">{listed}{more}</span></li>'
            )
        parts.append(f'<p>Filtered out:</p><ul class="plain">{"".join(items)}</ul>')
    if a.post_filter_message or a.nominated_node or a.victims:
        detail = a.post_filter_message or "made room"
        if a.nominated_node:
            detail += f"; nominated node {a.nominated_node}"
        if a.victims:
            detail += f"; evicted {', '.join(a.victims)}"
        parts.append(f"<p>PostFilter: {esc(detail)}</p>")
    if not a.consistent:
        parts.append(f'<div class="callout warn">{esc(a.problem)}</div>')
    return "\n".join(parts)


def explanations_section(explanations: Sequence[explain.Explanation], heading: str = "Explained pods") -> str:
    parts = [f"<h2>{esc(heading)} ({len(explanations)})</h2>"]
    if not explanations:
        parts.append('<p class="note">No followed pod was attempted.</p>')
    for ex in explanations:
        parts.extend(attempt_html(ex.pod, a) for a in ex.attempts)
    return "\n".join(parts)


# ---- pages ---------------------------------------------------------------------------------------------------


@dataclass
class Page:
    """What a placement page says above its sections."""

    title: str = "Placement report"
    kicker: str = "berth schedule simulate"
    subtitle: str = ""  # trusted HTML; by default the run's figures in one sentence
    extra: list[str] = field(default_factory=list)  # trusted HTML sections appended at the end


def render_html(
    result: SimulationResult, title: str = "berth schedule simulate", page: Page | None = None
) -> str:
    """The placement report of one run: figures, profiles, nodes (rows and, for larger clusters, heatmaps), the
    placement table, unschedulable pods, warnings, and the explanations when asked for."""
    page = page or Page(title=title, kicker="placement report")
    colours = profile_colours(result.profiles)
    subtitle = page.subtitle or esc(
        f"{result.scheduled:,} of {result.pods:,} pods placed on {len(result.nodes):,} nodes by "
        f"{len(result.profiles)} profile{'s' if len(result.profiles) != 1 else ''} in {result.seconds:.3f} s."
    )
    body = [
        summary_cards(result),
        profiles_section(result, colours),
        heatmaps_section(result),
        nodes_section(result, colours),
        problems_section(result),
    ]
    if result.explanations is not None:
        body.append(explanations_section(result.explanations))
    body.extend(page.extra)
    return hp.document(page.title, "\n".join(b for b in body if b), kicker=page.kicker, subtitle=subtitle)


def render_comparison_html(comparison: compare.Comparison, title: str = "berth schedule compare") -> str:
    """Configurations side by side: the outcome figures, each configuration's nodes, the pods not placed alike."""
    outcomes = comparison.outcomes
    first = outcomes[0].result
    body = [
        hp.cards(
            [
                (str(len(outcomes)), "configurations", ""),
                (f"{first.pods:,}", "pods in the workload", ""),
                (f"{len(first.nodes):,}", "nodes", ""),
                (f"{len(comparison.moved()):,}", "pods not placed alike", ""),
            ]
        ),
        _figures_table(outcomes),
        _side_by_side(outcomes),
        _moved_section(comparison),
    ]
    for o in outcomes:
        if o.result.explanations is not None:
            body.append(explanations_section(o.result.explanations, f"Why, with {o.label}"))
    subtitle = (
        f"One workload ({first.pods:,} pods) on one cluster ({len(first.nodes):,} nodes), placed by each "
        f"configuration alone from the same start; {esc(outcomes[0].label)} is the baseline."
    )
    return hp.document(title, "\n".join(body), kicker="comparison report", subtitle=subtitle)


FIGURE_ROWS: tuple[tuple[str, str, bool], ...] = (
    ("placed", "placed", False),
    ("unschedulable", "unschedulable", False),
    ("preempted", "pods preempted", False),
    ("nodesInUse", "nodes in use", False),
    ("emptyNodes", "empty nodes", False),
    ("cpuRequested", "cpu requested, whole cluster", True),
    ("cpuOnBusiestNode", "cpu, busiest node", True),
    ("cpuOnUsedNodesMean", "cpu, nodes in use (mean)", True),
    ("memoryRequested", "memory requested, whole cluster", True),
    ("memoryOnBusiestNode", "memory, busiest node", True),
    ("memoryOnUsedNodesMean", "memory, nodes in use (mean)", True),
)


def _figures_table(outcomes: Sequence[compare.Outcome]) -> str:
    figures = [o.figures() for o in outcomes]
    head = "".join(f'<th class="name">{esc(o.label)}</th>' for o in outcomes)
    rows = []
    for key, words, is_percent in FIGURE_ROWS:
        cells = []
        for f in figures:
            value = f[key]
            if is_percent:
                cells.append(
                    f'<td style="min-width:9em">{hp.meter(float(value), f"{float(value):.1f}%")}</td>'
                )
            elif key == "placed":
                cells.append(f"<td>{value:,} / {f['pods']:,}</td>")
            else:
                cells.append(f"<td>{value:,}</td>")
        rows.append(f"<tr><td>{esc(words)}</td>{''.join(cells)}</tr>")
    return "<h2>Outcomes</h2>" + hp.scroll(
        f'<table class="full"><thead><tr><th></th>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
    )


def _side_by_side(outcomes: Sequence[compare.Outcome]) -> str:
    """Each configuration's cluster next to the others': a heatmap of cpu requested, then its busiest nodes (one
    pods scale and one profile colouring for every panel)."""
    views_of = [node_views(o.result) for o in outcomes]
    most_pods = max([v.pods for views in views_of for v in views] + [1])
    profiles = tuple(dict.fromkeys(p for o in outcomes for p in o.result.profiles))
    colours = profile_colours(profiles)
    panels = []
    for o, views in zip(outcomes, views_of, strict=True):
        with_usage = bool(o.result.usage)
        table = NodeTable(profiles, colours, most_pods, with_usage, compact=True)
        inner = [f"<h3>{esc(o.label)}</h3>", f'<p class="note"><code>{esc(o.config_path)}</code></p>']
        if with_usage:
            inner.append(heatmap(views, METRICS[0], tile_size(len(views), wide=False)))
        inner.append(f'<p class="note">The {min(10, len(views))} busiest nodes:</p>')
        inner.append(table.table(busiest(views, with_usage, 10)))
        panels.append(f'<div class="panel">{"".join(inner)}</div>')
    before = any(v.before for views in views_of for v in views)
    return (
        "<h2>Nodes, side by side</h2>"
        '<p class="note">Cpu requested per node after each run (darker is fuller), then the busiest nodes with '
        "their pods by profile:</p>"
        f'{_profile_legend(profiles, colours, before)}<div class="panels">{"".join(panels)}</div>'
        f"{_per_node_comparison(outcomes)}"
    )


def _per_node_comparison(outcomes: Sequence[compare.Outcome]) -> str:
    """Every node, one row: per configuration its pods and cpu requested."""
    per = [{v.name: v for v in node_views(o.result)} for o in outcomes]
    nodes = outcomes[0].result.nodes
    head = "".join(f'<th class="bar">{esc(o.label)}</th>' for o in outcomes)
    rows = []
    differ = 0
    for name in nodes:
        cells = []
        seen: set[tuple[int, int] | None] = set()
        for views in per:
            v = views.get(name)
            if v is None:
                cells.append("<td></td>")
                seen.add(None)
                continue
            seen.add((v.pods, v.usage.cpu if v.usage else 0))
            pods = f"{v.pods} pod{'s' if v.pods != 1 else ''}"
            cells.append(f'<td class="bar">{hp.meter(v.cpu, hp.percent_text(v.cpu), sub=pods)}</td>')
        mark = ""
        if len(seen) > 1:
            differ += 1
            mark = ' <span class="differs" title="the configurations leave this node differently">≠</span>'
        rows.append(f'<tr><td class="name">{esc(name)}{mark}</td>{"".join(cells)}</tr>')
    table = hp.scroll(
        f'<table class="full"><thead><tr><th class="name">node</th>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )
    words = (
        f"Every node ({len(nodes):,}): cpu requested and pods, per configuration; ≠ marks the {differ:,} "
        "the configurations leave differently"
    )
    return hp.details(words, table, open_=len(nodes) <= ALL_ROWS_UP_TO)


def _moved_section(comparison: compare.Comparison) -> str:
    moved = comparison.moved()
    outcomes = comparison.outcomes
    if not moved:
        return (
            f"<h2>Pods not placed alike (0)</h2><p>Every pod went where {esc(outcomes[0].label)} put it.</p>"
        )
    head = "".join(f'<th class="name">{esc(o.label)}</th>' for o in outcomes)

    def rows(items: Sequence[tuple[str, tuple[str, ...]]]) -> str:
        return "".join(
            f'<tr><td class="name"><code>{esc(pod)}</code></td>'
            + "".join(
                f'<td class="name">{esc(n) if n != compare.UNPLACED else "<i>not placed</i>"}</td>'
                for n in where
            )
            + "</tr>"
            for pod, where in items
        )

    table_head = f'<thead><tr><th class="name">pod</th>{head}</tr></thead>'
    out = f"<h2>Pods not placed alike ({len(moved):,})</h2>" + hp.scroll(
        f'<table class="full">{table_head}<tbody>{rows(moved[:BUSIEST])}</tbody></table>'
    )
    if len(moved) > BUSIEST:
        out += hp.details(
            f"{len(moved) - BUSIEST:,} more",
            hp.scroll(f'<table class="full">{table_head}<tbody>{rows(moved[BUSIEST:])}</tbody></table>'),
        )
    return out
