"""The install report: a run receipt as a page -- the plan's steps on a timeline, each object's work in it, the
durations, and the step that failed.

Why from the receipt: a receipt already records every step's start and end and the moment each thing was done to
each object (created, waited on, deleted, ...), atomically as the run went, so the report can be drawn for any run
after the fact -- a finished one, a failed one, an interrupted one, or one resumed from an earlier run -- with no
cluster at hand. Each record closes a span that began with the record before it in the same step (or with the
step's start): the time it took to create an object, to wait for a Job or a rollout, to delete a hook.

``berth install apply --report FILE`` writes it as the run ends (success or not); ``berth install report`` writes it
from any receipt (``--receipt``) or from a work dir's newest one (``--work-dir``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import click

from berth import cliopts
from berth.kube import htmlpage as hp
from berth.kube.errors import InputError
from berth.kube.htmlpage import esc

# What a record of the receipt closes: the kind of span, and the words the row says.
WRITES = frozenset({"created", "applied", "exists", "kept-newer", "kept"})
WAITS = frozenset({"established", "ready", "succeeded"})
DELETES = frozenset({"deleted", "absent"})
KIND_COLOURS = {
    "write": "#0072B2",
    "wait": "#56B4E9",
    "delete": "#CC79A7",
    "failed": "#D55E00",
    "plan": "#8c959f",
}
KIND_WORDS = {
    "write": "create or apply",
    "wait": "wait (hook, CRD, readiness)",
    "delete": "delete",
    "failed": "failed",
    "plan": "dry run: checked only",
}
STATUS_WORDS = {"done": "✓ done", "failed": "✗ failed", "not-run": "not run", "pending": "not run"}


def parse_time(text: Any) -> datetime | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ")
    except ValueError:
        return None


def seconds_text(s: float) -> str:
    if s < 0.0005:
        return "0 ms"
    if s < 1:
        return f"{s * 1000:.0f} ms"
    if s < 60:
        return f"{s:.2f} s"
    return f"{int(s // 60)} min {s % 60:.0f} s"


@dataclass(frozen=True)
class Span:
    kind: str  # write, wait, delete, failed, plan
    start: float  # seconds since the run started
    end: float
    words: str


@dataclass
class Row:
    """One object in one step: everything done to it, in order."""

    label: str
    weight: int | None = None
    spans: list[Span] = field(default_factory=list)
    failed: bool = False
    logs: str = ""

    @property
    def seconds(self) -> float:
        return sum(s.end - s.start for s in self.spans)


@dataclass
class StepView:
    index: int
    phase: str
    description: str
    status: str
    start: float | None
    end: float | None
    error: str = ""
    done_by: str = ""
    rows: list[Row] = field(default_factory=list)

    @property
    def seconds(self) -> float | None:
        return None if self.start is None or self.end is None else self.end - self.start

    @property
    def is_hook(self) -> bool:
        return self.phase.startswith(("pre-", "post-")) or self.phase == "test"


@dataclass
class Timeline:
    spec: dict[str, Any]
    name: str
    total: float  # seconds from the run's start to its end (or its last record)
    steps: list[StepView]

    @property
    def failed(self) -> StepView | None:
        return next((s for s in self.steps if s.status == "failed"), None)


def _span(item: dict[str, Any], start: float, end: float) -> Span:
    action = str(item.get("action") or "")
    detail = str(item.get("detail") or "")
    took = seconds_text(end - start)
    if action == "failed":
        return Span("failed", start, end, f"failed after {took}" + (f": {detail}" if detail else ""))
    if action in DELETES:
        what = "deleted" if action == "deleted" else "already absent"
        return Span("delete", start, end, f"{what}{f' ({detail})' if detail else ''}")
    if action in WAITS:
        return Span("wait", start, end, f"{action} after {took}")
    if action.startswith("would-"):
        return Span("plan", start, end, action.replace("-", " ") + (f" ({detail})" if detail else ""))
    words = action if action in WRITES else action or "recorded"
    return Span("write", start, end, words + (f" ({detail})" if detail and action != "created" else ""))


def _label(item: dict[str, Any]) -> str:
    ns = item.get("namespace")
    return f"{item.get('kind')} {ns}/{item.get('name')}" if ns else f"{item.get('kind')} {item.get('name')}"


def timeline(body: dict[str, Any]) -> Timeline:
    """The receipt ``body`` (as :func:`berth.install.receipt.load` returns it) laid out on one time axis."""
    spec = body.get("spec") or {}
    t0 = parse_time(spec.get("startedAt"))
    name = str((body.get("metadata") or {}).get("name") or "run")

    def at(text: Any) -> float | None:
        t = parse_time(text)
        return None if t is None or t0 is None else (t - t0).total_seconds()

    steps: list[StepView] = []
    last = 0.0
    for raw in spec.get("steps") or []:
        done_by = str(raw.get("doneBy") or "")
        start, end = (None, None) if done_by else (at(raw.get("startedAt")), at(raw.get("finishedAt")))
        step = StepView(
            int(raw.get("index") or len(steps) + 1),
            str(raw.get("phase") or ""),
            str(raw.get("description") or ""),
            str(raw.get("status") or "pending"),
            start,
            end,
            str(raw.get("error") or ""),
            done_by,
        )
        rows: dict[str, Row] = {}
        previous = start
        for item in raw.get("objects") or []:
            row = rows.setdefault(str(item.get("key") or _label(item)), Row(_label(item)))
            if isinstance(item.get("weight"), int):
                row.weight = item["weight"]
            if item.get("action") == "failed":
                row.failed = True
                row.logs = str(item.get("logs") or "")
            t = None if done_by else at(item.get("at"))
            if t is not None:
                row.spans.append(_span(item, previous if previous is not None else t, t))
                previous = t
                last = max(last, t)
        step.rows = list(rows.values())
        if step.end is not None:
            last = max(last, step.end)
        steps.append(step)
    total = at(spec.get("finishedAt"))
    return Timeline(spec, name, max(total if total is not None else last, 1e-6), steps)


# ---- the page ------------------------------------------------------------------------------------------------


def _ticks(total: float) -> list[float]:
    """Four or five round tick marks from 0 to ``total`` seconds."""
    raw = total / 5
    magnitude = 10 ** (len(str(int(raw * 1000))) - 1) / 1000 if raw > 0 else 1
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    out, t = [], 0.0
    while t <= total + 1e-9:
        out.append(t)
        t += step
    return out


def _axis(total: float) -> str:
    marks = "".join(
        f'<span class="tick" style="left:{100 * t / total:.3f}%">{esc(seconds_text(t) if t else "0")}</span>'
        for t in _ticks(total)
    )
    return f'<div class="tl-row tl-axis"><div></div><div></div><div class="tl-track axis">{marks}</div><div></div></div>'


def _track(spans: list[Span], total: float, band: tuple[float, float] | None = None) -> str:
    parts = []
    if band is not None:
        left, right = band
        parts.append(
            f'<span class="band" style="left:{100 * left / total:.3f}%;width:{100 * (right - left) / total:.3f}%"></span>'
        )
    for s in spans:
        cls = "span failed" if s.kind == "failed" else "span"
        parts.append(
            f'<span class="{cls}" style="left:{100 * s.start / total:.3f}%;width:{100 * (s.end - s.start) / total:.3f}%;'
            f'background:{KIND_COLOURS[s.kind]}" title="{esc(s.words)}"></span>'
        )
    return f'<div class="tl-track">{"".join(parts)}</div>'


def _step_rows(step: StepView, total: float) -> str:
    status = STATUS_WORDS.get(step.status, step.status)
    if step.done_by:
        status = f"✓ done by the earlier run {step.done_by}"
    took = seconds_text(step.seconds) if step.seconds is not None else ""
    cls = f"tl-row tl-step {step.status}"
    head = (
        f'<div class="{cls}"><div class="tl-label"><b>{step.index} · {esc(step.phase)}</b> '
        f'<span class="status">{esc(status)}</span><span class="sub">{esc(step.description)}</span></div>'
        '<div class="tl-weight"></div>'
        + _track(
            [], total, (step.start, step.end) if step.start is not None and step.end is not None else None
        )
        + f'<div class="tl-dur"><b>{esc(took)}</b></div></div>'
    )
    rows = []
    for r in step.rows:
        words = "; ".join(s.words for s in r.spans) or "recorded (done by the earlier run)"
        weight = "" if r.weight is None else f"weight {r.weight}"
        mark = "✗ " if r.failed else ""
        rows.append(
            f'<div class="tl-row{" failed" if r.failed else ""}"><div class="tl-label">{mark}{esc(r.label)}'
            f'<span class="sub">{esc(words)}</span></div><div class="tl-weight">{esc(weight)}</div>'
            f'{_track(r.spans, total)}<div class="tl-dur">{esc(seconds_text(r.seconds)) if r.spans else ""}</div></div>'
        )
    return head + "".join(rows)


TIMELINE_CSS = """
.timeline { margin: 10px 0 20px; }
.tl-row { display: grid; grid-template-columns: minmax(0, 34%) 5.5em minmax(0, 1fr) 5.5em; gap: 0 10px;
  align-items: center; padding: 4px 0; border-bottom: 1px solid #eaeef2; break-inside: avoid; }
.tl-row.tl-step { border-top: 2px solid var(--line); background: var(--soft); margin-top: 6px; padding: 6px 0; }
.tl-row.tl-step.failed { background: #fef3f2; border-top-color: var(--bad); }
.tl-row.tl-step.not-run, .tl-row.tl-step.pending { color: var(--muted); }
.tl-row.failed .tl-label { color: var(--bad); font-weight: 600; }
.tl-label { min-width: 0; overflow-wrap: anywhere; padding-left: 8px; }
.tl-label .sub { display: block; color: var(--muted); font-size: 12px; font-weight: 400; }
.tl-label .status { font-size: 13px; margin-left: 6px; }
.tl-step.failed .status { color: var(--bad); font-weight: 650; }
.tl-weight { font-size: 12px; color: var(--muted); font-variant-numeric: tabular-nums; }
.tl-dur { text-align: right; font-variant-numeric: tabular-nums; padding-right: 8px; white-space: nowrap; }
.tl-track { position: relative; height: 16px; background: #f3f5f7; border-radius: 3px; min-width: 0; }
.tl-track .band { position: absolute; top: 0; bottom: 0; background: #d0d7de; border-radius: 3px; }
.tl-track .span { position: absolute; top: 2px; bottom: 2px; min-width: 2px; border-radius: 2px; }
.tl-track .span.failed { background-image: repeating-linear-gradient(45deg, rgba(255,255,255,.55) 0 3px,
  transparent 3px 7px) !important; }
.tl-axis { border-bottom: 0; padding-bottom: 0; }
.tl-track.axis { background: none; height: 18px; border-bottom: 1px solid var(--line); border-radius: 0; }
.tl-track.axis .tick { position: absolute; bottom: 2px; transform: translateX(-50%); font-size: 11px;
  color: var(--muted); white-space: nowrap; }
.tl-track.axis .tick:first-child { transform: none; }
@media (max-width: 700px) { .tl-row { grid-template-columns: minmax(0, 40%) 4em minmax(0, 1fr) 4.5em; } }
"""


def _cards(t: Timeline) -> str:
    spec = t.spec
    result = str(spec.get("result") or "")
    tone = {"succeeded": "good", "failed": "bad", "interrupted": "bad"}.get(result, "")
    mark = {"succeeded": "✓", "failed": "✗", "interrupted": "✗"}.get(result, "")
    ran = sum(1 for s in t.steps if s.status == "done")
    spans = [s for step in t.steps for r in step.rows for s in r.spans]
    hooks = sum(
        1 for step in t.steps if step.is_hook for r in step.rows if any(s.kind == "wait" for s in r.spans)
    )
    return hp.cards(
        [
            (esc(result or "unknown"), f"{mark} {spec.get('action', '')} result".strip(), tone),
            (esc(seconds_text(t.total)), "from start to end", ""),
            (f"{ran} <small>of {len(t.steps)}</small>", "steps done", ""),
            (str(hooks), "hooks run", ""),
            (str(sum(1 for s in spans if s.kind == "write")), "objects written", ""),
            (str(sum(1 for s in spans if s.kind == "delete")), "deletions", ""),
        ]
    )


def _failure(t: Timeline) -> str:
    step = t.failed
    error = str(t.spec.get("error") or "")
    if step is None and not error:
        return ""
    where = f"step {step.index} ({step.phase})" if step is not None else "the run"
    text = (step.error if step is not None and step.error else "") or error
    out = f'<div class="callout"><b>Failed at {esc(where)}.</b> <pre>{esc(text)}</pre></div>'
    for r in step.rows if step is not None else ():
        if r.failed and r.logs and r.logs.strip() not in text:
            out += hp.details(f"Logs of {esc(r.label)}", f"<pre>{esc(r.logs)}</pre>", open_=True)
    return out


def _legend() -> str:
    items = "".join(
        f"<li>{hp.swatch(KIND_COLOURS[k])}{esc(words)}</li>" for k, words in KIND_WORDS.items() if k != "plan"
    )
    return f'<ul class="legend">{items}<li><span class="swatch" style="background:#d0d7de"></span>the step</li></ul>'


def render_html(body: dict[str, Any], source: str = "") -> str:
    """The page of one receipt (``source``: where it was read from, shown under the title)."""
    t = timeline(body)
    spec = t.spec
    action = str(spec.get("action") or "run")
    title = f"berth install: {action} of {spec.get('release', '?')}"
    subtitle = (
        f"Release <b>{esc(spec.get('release', ''))}</b> in namespace <b>{esc(spec.get('namespace', ''))}</b> on "
        f"context <b>{esc(spec.get('context', ''))}</b> (<code>{esc(spec.get('server', ''))}</code>); run "
        f"<code>{esc(t.name)}</code> started {esc(spec.get('startedAt', ''))} by {esc(spec.get('user', ''))}"
        f" with berth {esc(spec.get('berthVersion', ''))}"
        + (" (a dry run: nothing was changed)" if spec.get("dryRun") else "")
        + (f", resuming {esc(spec.get('resumedFrom'))}" if spec.get("resumedFrom") else "")
        + "."
    )
    parts = [_cards(t), _failure(t), "<h2>Timeline</h2>"]
    parts.append(
        '<p class="note">Every step of the plan in order; under it, each object and what was done to it, each bar '
        "from the record before to its own. Hover a bar for what it was.</p>"
    )
    parts.append(_legend())
    rows = "".join(_step_rows(s, t.total) for s in t.steps)
    parts.append(f'<div class="timeline" role="table">{_axis(t.total)}{rows}</div>')
    parts.extend(_notes(spec, source))
    return hp.document(
        title,
        "\n".join(p for p in parts if p),
        kicker="install report",
        subtitle=subtitle,
        extra_css=TIMELINE_CSS,
    )


def _notes(spec: dict[str, Any], source: str) -> list[str]:
    out = []
    warnings = spec.get("warnings") or []
    if warnings:
        out.append(
            '<h2>Warnings</h2><ul class="plain">' + "".join(f"<li>{esc(w)}</li>" for w in warnings) + "</ul>"
        )
    kept = spec.get("kept") or []
    if kept:
        items = "".join(
            f"<li>{esc(k.get('kind'))} {esc(k.get('name'))}: {esc(k.get('reason', ''))}</li>" for k in kept
        )
        out.append(f'<h2>Kept</h2><ul class="plain">{items}</ul>')
    by_command: dict[str, list[str]] = {}
    for n in spec.get("notRun") or []:
        if isinstance(n, dict):
            by_command.setdefault(str(n.get("runBy") or ""), []).append(str(n.get("phase") or ""))
    if by_command:
        items = "".join(
            f"<li>{esc(', '.join(phases))}" + (f": <code>{esc(cmd)}</code>" if cmd else "") + "</li>"
            for cmd, phases in by_command.items()
        )
        out.append(f'<h2>Steps this action does not run</h2><ul class="plain">{items}</ul>')
    command = spec.get("command")
    out.append(
        '<p class="note">'
        + (f"Command: <code>{esc(command)}</code>. " if command else "")
        + (f"Receipt: <code>{esc(source)}</code>." if source else "")
        + "</p>"
    )
    return out


# ---- writing it ----------------------------------------------------------------------------------------------


def write(receipt_path: Path, out: Path) -> Path:
    """Read the receipt at ``receipt_path`` and write its page to ``out`` (atomically)."""
    from berth.install import receipt
    from berth.kube import yamlio

    body = receipt.load(receipt_path)
    yamlio.write_atomic(out, render_html(body, str(receipt_path)))
    return out


def newest(work_dir: Path) -> Path:
    from berth.install import receipt

    found = receipt.receipts(work_dir)
    if not found:
        raise InputError(
            f"no run receipt in {work_dir / receipt.RUNS_DIR}: run `berth install apply` first", "--work-dir"
        )
    return found[-1][0]


def receipts(work_dir: Path) -> set[Path]:
    """The run receipts a work dir holds now (``--report`` takes the one its run added)."""
    from berth.install import receipt

    runs = work_dir / receipt.RUNS_DIR
    return {p for p in runs.glob("*.yaml") if p.name != receipt.TARGET_FILE} if runs.is_dir() else set()


@cliopts.command(
    "report",
    examples="""
    # the newest run of a work dir as a timeline
    berth install report --work-dir work --out install.html

    # one receipt: here the work dir's last install run
    berth install report --receipt "$(ls work/out/runs/*-install.yaml | tail -1)" --out install.html
    """,
)
@click.option(
    "--receipt",
    "receipt_path",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="RECEIPT.yaml",
    help="A run receipt (WORK_DIR/out/runs/*.yaml).",
)
@click.option(
    "--work-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Take the newest receipt of this work dir (instead of --receipt).",
)
@click.option(
    "--out", "out", required=True, type=click.Path(dir_okay=False, path_type=Path), metavar="FILE.html"
)
def report_command(receipt_path: Path | None, work_dir: Path | None, out: Path) -> None:
    """Draw a run receipt as an HTML page: the plan's steps on a timeline (CRDs, each hook with its weight, waits,
    deletions, readiness), with durations and the step that failed, if any."""
    if (receipt_path is None) == (work_dir is None):
        raise InputError("give either --receipt or --work-dir", "--receipt")
    if receipt_path is not None and not receipt_path.is_file():
        raise InputError("receipt not found", str(receipt_path))
    path = receipt_path if receipt_path is not None else newest(work_dir or Path("."))
    write(path, out)
    click.echo(f"Report of {path.name}: {out}")
