"""The one look of berth's HTML reports: a self-contained page (inline CSS, no network), meters, cards, legends and
the colour scales, shared by the placement, comparison, demo and install reports.

Why one module: every report should read the same way -- a title, a line of context, key figures as cards, then
sections -- and obey the same rules: nothing is fetched (the pages open from disk or an e-mail attachment), nothing
is wider than the page (wide tables scroll inside their own box, long names wrap), no fact is told by colour alone
(every bar has its number next to it, every colour scale its legend with ranges), and the page prints as it shows
(collapsed sections open for printing, backgrounds kept).

The colour scales are ColorBrewer's single-hue sequential ones (Blues for how full something is, Greens for how well
a node scored): their lightness alone orders the values, so they read the same to colour-blind eyes and in grey.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence

# Okabe-Ito: distinguishable with every common colour-vision deficiency; one per category (profile, step kind).
CATEGORICAL = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")

BLUES = ("#f7fbff", "#deebf7", "#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5", "#08519c", "#08306b")
GREENS = ("#f7fcf5", "#e5f5e0", "#c7e9c0", "#a1d99b", "#74c476", "#41ab5d", "#238b45", "#006d2c", "#00441b")

EMPTY = "#ffffff"  # a tile with nothing on it: white with a dashed border (see .tile.empty)
OVER = "#b42318"  # over 100 %: the scale's end colour would hide it


def esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def scale_colour(stops: Sequence[str], fraction: float) -> str:
    """The colour at ``fraction`` (clamped to 0..1) along ``stops``, interpolated in RGB."""
    f = min(1.0, max(0.0, fraction)) * (len(stops) - 1)
    i = min(int(f), len(stops) - 2)
    t = f - i
    a, b = _rgb(stops[i]), _rgb(stops[i + 1])
    return "#" + "".join(f"{round(x + (y - x) * t):02x}" for x, y in zip(a, b, strict=True))


def text_on(background: str) -> str:
    """Black or white text, whichever contrasts more with ``background`` (WCAG relative luminance)."""
    lum = _luminance(background)
    return "#000000" if (lum + 0.05) / 0.05 >= 1.05 / (lum + 0.05) else "#ffffff"


def _rgb(colour: str) -> tuple[int, int, int]:
    c = colour.lstrip("#")
    return int(c[0:2], 16), int(c[2:4], 16), int(c[4:6], 16)


def _luminance(colour: str) -> float:
    def channel(v: int) -> float:
        s = v / 255
        return s / 12.92 if s <= 0.03928 else ((s + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(v) for v in _rgb(colour))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def percent(part: float, whole: float) -> float:
    return 100.0 * part / whole if whole else 0.0


def percent_text(value: float) -> str:
    """``38%``; ``<1%`` for a sliver (so a non-zero value never reads as nothing)."""
    if 0 < value < 1:
        return "<1%"
    return f"{value:.0f}%"


def meter(value: float, label: str, colour: str = "#2171b5", title: str = "", sub: str = "") -> str:
    """A horizontal bar filled to ``value`` percent (clamped; over 100 shown full, in red) with ``label`` (trusted
    HTML, usually the percentage) beside it and ``sub`` (trusted HTML, the absolute figures) under it: the number is
    always there, the bar only pictures it."""
    width = min(100.0, max(0.0, value))
    fill = OVER if value > 100 else colour
    track = f'<span class="fill" style="width:{width:.1f}%;background:{fill}"></span>'
    return _bar(track, label, title, sub)


def stacked(parts: Sequence[tuple[float, str, str]], whole: float, label: str, sub: str = "") -> str:
    """One bar of segments ``(value, colour, title)`` out of ``whole``, with ``label`` beside it."""
    segs = "".join(
        f'<span class="seg" style="width:{percent(v, whole):.2f}%;background:{c}" title="{esc(t)}"></span>'
        for v, c, t in parts
        if v > 0
    )
    return _bar(segs, label, "", sub)


def _bar(track: str, label: str, title: str, sub: str) -> str:
    tip = f' title="{esc(title)}"' if title else ""
    under = f'<span class="sub">{sub}</span>' if sub else ""
    return (
        f'<span class="mbar"{tip}><span class="meter"><span class="track">{track}</span>'
        f'<span class="num">{label}</span></span>{under}</span>'
    )


def swatch(colour: str) -> str:
    return f'<span class="swatch" style="background:{colour}" aria-hidden="true"></span>'


def cards(items: Iterable[tuple[str, str, str]]) -> str:
    """Key figures: ``(value, label, tone)`` with tone ``""``, ``"good"`` or ``"bad"``."""
    out = []
    for value, label, tone in items:
        cls = f"card {tone}".strip()
        out.append(
            f'<div class="{cls}"><div class="value">{value}</div><div class="label">{esc(label)}</div></div>'
        )
    return f'<div class="cards">{"".join(out)}</div>'


def scale_legend(bands: Sequence[tuple[str, str | None, int]], unit: str) -> str:
    """A colour scale's legend: per band its colour (None: the empty tile), its range in words and how many
    items fall in it."""
    items = []
    for text, colour, count in bands:
        mark = swatch(colour) if colour else '<span class="swatch empty" aria-hidden="true"></span>'
        items.append(f"<li>{mark}{esc(text)}: <b>{count:,}</b> {esc(unit)}</li>")
    return f'<ul class="legend">{"".join(items)}</ul>'


def scroll(inner: str) -> str:
    """A box that scrolls sideways when its content (a wide table) is wider than the page, so the page is not."""
    return f'<div class="scroll" tabindex="0">{inner}</div>'


def details(summary: str, inner: str, open_: bool = False) -> str:
    return f"<details{' open' if open_ else ''}><summary>{summary}</summary>{inner}</details>"


CSS = """
:root { --ink: #1f2328; --muted: #57606a; --line: #d0d7de; --soft: #f6f8fa; --accent: #0969da;
  --bad: #b42318; --good: #1a7f37; --warn: #9a6700; }
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; color: var(--ink); background: #fff;
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Liberation Sans", sans-serif; }
main { max-width: 1160px; margin: 0 auto; padding: 28px 24px 56px; }
header.page { margin-bottom: 20px; }
.kicker { color: var(--muted); font-size: 13px; letter-spacing: .04em; text-transform: uppercase; margin: 0; }
h1 { font-size: 28px; line-height: 1.2; margin: 2px 0 6px; overflow-wrap: anywhere; }
.subtitle { color: var(--muted); margin: 0; overflow-wrap: anywhere; }
h2 { font-size: 20px; margin: 36px 0 10px; padding-bottom: 6px; border-bottom: 1px solid var(--line); }
h3 { font-size: 16px; margin: 22px 0 6px; overflow-wrap: anywhere; }
p { margin: 6px 0 10px; max-width: 80ch; }
p.note, .note { color: var(--muted); font-size: 13px; }
code { font: 13px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace;
  background: var(--soft); padding: 1px 4px; border-radius: 4px; overflow-wrap: anywhere; }
pre { font: 12px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace;
  background: var(--soft); padding: 10px; border-radius: 6px; white-space: pre-wrap; overflow-wrap: anywhere; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(150px, 100%), 1fr)); gap: 10px; margin: 16px 0; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 10px 14px; background: var(--soft); }
.card .value { font-size: 22px; font-weight: 650; font-variant-numeric: tabular-nums; overflow-wrap: anywhere; }
.card .label { color: var(--muted); font-size: 13px; }
.card.bad { border-color: var(--bad); background: #fef3f2; } .card.bad .value { color: var(--bad); }
.card.good .value { color: var(--good); }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; margin: 8px 0 14px; font-variant-numeric: tabular-nums; }
table.full { width: 100%; }
th, td { padding: 5px 8px; border-bottom: 1px solid var(--line); text-align: right; vertical-align: middle; }
thead th { background: var(--soft); font-weight: 600; border-bottom: 2px solid var(--line); }
th:first-child, td:first-child { text-align: left; }
td.name, th.name { overflow-wrap: anywhere; min-width: 7em; }
td.node { white-space: nowrap; }
tr.sum td { font-weight: 650; background: var(--soft); }
.meter { display: flex; align-items: center; gap: 8px; min-width: 0; }
.meter .track { display: flex; flex: 1 1 60px; min-width: 48px; height: 12px; background: #eaeef2;
  border-radius: 3px; overflow: hidden; }
.meter .fill { display: block; height: 100%; }
.meter .seg { display: block; height: 100%; border-right: 1px solid #fff; }
.meter .seg:last-child { border-right: 0; }
.meter .num { flex: 0 0 auto; min-width: 3.4em; font-variant-numeric: tabular-nums; white-space: nowrap;
  text-align: right; }
.mbar { display: block; min-width: 0; }
.mbar .sub { display: block; color: var(--muted); font-size: 12px; line-height: 1.3; text-align: left; }
small { color: var(--muted); font-size: 12px; font-weight: 400; }
th.bar, td.bar { text-align: left; min-width: 8.5em; }
th.count { font-size: 13px; font-weight: 600; width: 7em; min-width: 5.5em; overflow-wrap: break-word;
  hyphens: manual; }
.swatch { display: inline-block; width: 12px; height: 12px; border-radius: 2px; vertical-align: -1px;
  margin-right: 6px; border: 1px solid rgba(0,0,0,.15); }
.swatch.empty { background: #fff; border: 1px solid #c4ccd4; }
ul.legend { list-style: none; padding: 0; margin: 8px 0; display: flex; flex-wrap: wrap; gap: 4px 18px;
  font-size: 13px; }
ul.legend li { overflow-wrap: anywhere; }
.tiles { display: grid; gap: 2px; margin: 8px 0 6px; }
.tiles.small { grid-template-columns: repeat(auto-fill, 14px); grid-auto-rows: 14px; }
.tiles.medium { grid-template-columns: repeat(auto-fill, 26px); grid-auto-rows: 26px; gap: 3px; }
.tiles.large { grid-template-columns: repeat(auto-fill, minmax(min(118px, 100%), 1fr)); gap: 6px; }
.tile { border-radius: 2px; min-width: 0; }
.tile.empty { background: #fff; box-shadow: inset 0 0 0 1px #c4ccd4; }
.tiles.large .tile.empty { box-shadow: none; border: 1px dashed #8c959f; }
.differs { color: var(--accent); font-weight: 700; }
.tile.over { outline: 2px solid var(--bad); outline-offset: -2px; }
.tiles.large .tile { border-radius: 6px; padding: 6px 8px; font-size: 12px; line-height: 1.3; }
.tile .t-name { display: block; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.tile .t-value { display: block; font-size: 18px; font-weight: 650; font-variant-numeric: tabular-nums; }
.panels { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(420px, 100%), 1fr)); gap: 16px 24px; }
.panel { min-width: 0; }
.callout { border-left: 4px solid var(--bad); background: #fef3f2; padding: 10px 14px; border-radius: 4px;
  margin: 14px 0; overflow-wrap: anywhere; }
.callout.ok { border-color: var(--good); background: #f0fbf3; }
.callout.warn { border-color: var(--warn); background: #fff8e6; }
details { margin: 8px 0; }
summary { cursor: pointer; color: var(--accent); }
ul.plain { padding-left: 20px; } ul.plain li { overflow-wrap: anywhere; margin: 2px 0; }
td.score { min-width: 3.2em; }
footer { margin-top: 40px; color: var(--muted); font-size: 12px; border-top: 1px solid var(--line);
  padding-top: 8px; }
@media (max-width: 700px) { main { padding: 18px 12px 40px; } h1 { font-size: 23px; } }
@media print {
  * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  main { max-width: none; padding: 0; }
  body { font-size: 11pt; }
  h2 { break-after: avoid; } tr, .tile, .card, .row { break-inside: avoid; }
  .scroll { overflow: visible; }
  summary { color: var(--ink); }
}
"""

# Collapsed sections would print as their one-line summary: open them all for printing.
PRINT_SCRIPT = (
    "<script>addEventListener('beforeprint',function(){"
    "document.querySelectorAll('details').forEach(function(d){d.open=true})})</script>"
)


def document(title: str, body: str, *, kicker: str = "", subtitle: str = "", extra_css: str = "") -> str:
    """A complete page: ``body`` (trusted HTML built by the report) under a header with ``title``."""
    head = f'<p class="kicker">{esc(kicker)}</p>' if kicker else ""
    sub = f'<p class="subtitle">{subtitle}</p>' if subtitle else ""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{esc(title)}</title>\n<style>{CSS}{extra_css}</style>\n</head>\n<body>\n<main>\n"
        f'<header class="page">{head}<h1>{esc(title)}</h1>{sub}</header>\n'
        f"{body}\n"
        "<footer>Written by berth; self-contained: it loads nothing from the network.</footer>\n"
        f"</main>\n{PRINT_SCRIPT}\n</body>\n</html>\n"
    )
