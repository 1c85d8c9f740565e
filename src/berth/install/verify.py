"""``berth install verify``: prove ``W/out`` is exactly what Helm renders, nothing more, nothing less.

A fresh ``helm template`` of the locked chart with the recorded selection, inputs and values flags is compared,
object by object and canonically (key order, nulls, empty maps and lists ignored), with the ordinary objects,
CRDs, Secrets and hook objects in ``W/out``; fields the chart renders at random (``W/out/spec/random.yaml``) are
masked in both, and the report says which. It also checks that every object is in exactly one place: each file is listed in
the manifest index, no hook is also a release object, and a hook has one identical copy in each of its events'
folders and nowhere else.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from berth.install import chart as chart_mod
from berth.install import helm, layout, package, randomness, values, workdir
from berth.install import plan as plan_mod
from berth.install import split as split_mod
from berth.kube import canonical, objects, yamlio
from berth.kube.errors import BerthError, InputError

OBJECT_DIRS = ("manifests", "secrets", "lifecycle")


@dataclass
class Report:
    expected: int = 0
    matched: int = 0
    problems: list[str] = field(default_factory=list)
    upgrade_expected: int | None = None
    """Objects of the ``--is-upgrade`` render, when ``out/upgrade/`` holds that variant."""
    upgrade_matched: int = 0
    masked: list[str] = field(default_factory=list)
    """Fields compared masked: the chart renders them at random (``W/out/spec/random.yaml``)."""

    @property
    def ok(self) -> bool:
        upgrade_ok = self.upgrade_expected is None or self.upgrade_matched == self.upgrade_expected
        return not self.problems and self.matched == self.expected and upgrade_ok

    def lines(self) -> list[str]:
        out = [f"{self.matched}/{self.expected} objects match"]
        if self.upgrade_expected is not None:
            out.append(
                f"upgrade variant (out/upgrade): {self.upgrade_matched}/{self.upgrade_expected} objects match"
            )
        out += [f"masked: {m}" for m in self.masked]
        out += [f"difference: {p}" for p in self.problems]
        return out


class VerifyFailed(BerthError):
    """W/out differs from Helm's render (exit 1)."""

    exit_code = 1

    def __init__(self, report: Report) -> None:
        super().__init__(f"verify failed: {len(report.problems)} difference(s); re-run berth install setup")


def first_difference(a: Any, b: Any, path: str = "") -> str:
    """The first field path where two canonical values differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a:
                return f"{path}.{k} only in W/out"
            if k not in b:
                return f"{path}.{k} missing from W/out"
            if a[k] != b[k]:
                return first_difference(a[k], b[k], f"{path}.{k}")
        return path or "."
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} items rendered, {len(b)} in W/out"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return first_difference(x, y, f"{path}[{i}]")
        return path
    return f"{path}: rendered {a!r}, W/out has {b!r}"


def _compare(
    fresh: list[split_mod.RenderedObject],
    have_objs: list[split_mod.RenderedObject],
    label: str,
    random: dict[str, randomness.RandomFields] | None = None,
) -> tuple[int, list[str]]:
    """(matched count, problems) between Helm's objects and the written ones, canonically, with the fields the
    chart renders at random masked in both."""
    random = random or {}

    def body(o: split_mod.RenderedObject) -> Any:
        f = random.get(randomness.key_of(o))
        return canonical.canonicalize(randomness.masked(o.body, f.paths) if f else o.body)

    expected = {o.ref: body(o) for o in fresh}
    have = {o.ref: body(o) for o in have_objs}
    matched = 0
    problems = []
    for r, body in expected.items():
        if r not in have:
            problems.append(f"{label}{r} is rendered by Helm but missing from W/out")
        elif have[r] != body:
            where = first_difference(body, have[r])
            if r.kind == "Secret" and not r.group:  # never print Secret data: the path, not the values
                where = where.split(": rendered ", 1)[0] + ": the values differ (not shown: a Secret)"
            problems.append(f"{label}{r} differs: {where}")
        else:
            matched += 1
    problems += [f"{label}{r} is in W/out but Helm does not render it" for r in have if r not in expected]
    return matched, problems


def run(work_dir: Path) -> Report:
    wd = workdir.load_workdir(work_dir)
    pkg = wd.package
    out = work_dir.resolve() / "out"
    report = Report()
    with tempfile.TemporaryDirectory(prefix="berth-verify-") as tmp:
        chart_dir = chart_mod.safe_extract(pkg.root / pkg.chart.archive, Path(tmp) / "chart")
        user = values.read(out / "spec").for_render(out / "spec")
        user.prepare(chart_dir)
        requests = [
            package.render_request(
                pkg,
                chart_dir,
                wd.selection.base,
                wd.selection.components,
                wd.answers,
                wd.namespace,
                Path(tmp) / "scratch",
                is_upgrade=is_upgrade,
                api_versions=wd.selection.api_versions,
                user=user,
            )
            for is_upgrade in (False, True)
        ]
        fresh, fresh_upgrade = (
            split_mod.parse_render(r.text) for r in helm.render_all(requests, twice=False)
        )
    random = randomness.read(out / "spec")
    report.masked = [
        f"{f.label}: {', '.join(randomness.show(p) for p in f.paths)} (random in the chart's render)"
        for f in random.values()
    ]
    report.expected = len(fresh)
    report.matched, problems = _compare(fresh, wd.split.all_objects(), "", random)
    report.problems += problems
    report.problems += _placement_problems(out, wd.split)
    if wd.upgrade is not None:
        report.upgrade_expected = len(fresh_upgrade)
        report.upgrade_matched, problems = _compare(
            fresh_upgrade, wd.upgrade.all_objects(), "upgrade variant: ", random
        )
        report.problems += problems
        report.problems += [
            f"upgrade variant: {p}" for p in _placement_problems(out / workdir.UPGRADE_DIR, wd.upgrade)
        ]
    else:
        _, problems = _compare(fresh_upgrade, wd.split.all_objects(), "", random)
        if problems:
            report.problems.append(
                f"the --is-upgrade render differs from W/out but out/{workdir.UPGRADE_DIR}/ is missing; "
                "re-run berth install setup"
            )
    report.problems += _plan_problems(out, wd)
    return report


def _plan_problems(out: Path, wd: workdir.Workdir) -> list[str]:
    """``lifecycle/plan.yaml`` must list the same steps as the plan rebuilt from W/out now."""
    path = out / workdir.PLAN_FILE
    if not path.is_file():
        return [f"{workdir.PLAN_FILE} is missing"]
    docs = yamlio.load_file(path)
    plans = ((docs[0].body or {}).get("spec") or {}).get("plans") or []
    stored = {p.get("action"): p.get("steps") for p in plans}
    problems = []
    for action in plan_mod.Action:
        try:
            fresh = workdir.build_plan(wd, action, "W").to_json()["steps"]
        except InputError:  # rollback without a recorded revision: listed as unavailable, not planned
            fresh = None
        if stored.get(action.value) != fresh:
            problems.append(
                f"{workdir.PLAN_FILE}: the {action.value} plan differs from the one W/out implies"
            )
    return problems


def _placement_problems(out: Path, result: split_mod.Split) -> list[str]:
    """Every object file indexed, hooks only under their events, identical copies."""
    problems: list[str] = []
    docs = yamlio.load_file(out / layout.INDEX_FILE)
    entries = (docs[0].body or {}).get("spec", {}).get("files", []) if docs else []
    indexed: dict[str, objects.Ref] = {}
    for e in entries:
        ident = objects.Ref(
            objects.split_api_version(str(e.get("apiVersion", "")))[0],
            str(e.get("kind", "")),
            str(e.get("namespace") or ""),
            str(e.get("name", "")),
        )
        for rel in e.get("files") or [e.get("file")]:
            indexed[str(rel)] = ident
    hooks = {h.obj.ref: h for h in result.hooks}
    on_disk: list[str] = []
    for folder in OBJECT_DIRS:
        base = out / folder
        if base.is_dir():
            depth = 3 if folder == "lifecycle" else 2  # lifecycle/<event>/<file>; plan.yaml is not an object
            on_disk += [
                p.relative_to(out).as_posix()
                for p in sorted(base.rglob("*.yaml"))
                if len(p.relative_to(out).parts) == depth
            ]
    copies: dict[objects.Ref, list[str]] = {}
    for rel in on_disk:
        if rel not in indexed:
            problems.append(f"{rel} is not in the manifest index (a stale file from an earlier render?)")
            continue
        copies.setdefault(indexed[rel], []).append(rel)
    for r, rels in copies.items():
        hook = hooks.get(r)
        if hook is None:
            if len(rels) != 1 or rels[0].startswith("lifecycle/"):
                problems.append(f"{r} must be in exactly one place, found: {', '.join(rels)}")
            continue
        wanted = {f"lifecycle/{e.value}/{result.file_names[r]}" for e in hook.events}
        if set(rels) != wanted:
            problems.append(f"hook {r} should be in {sorted(wanted)}, found {sorted(rels)}")
        bodies = {
            canonical.canonical_json(yamlio.load_objects((out / p).read_text(encoding="utf-8"), p)[0][1])
            for p in rels
        }
        if len(bodies) > 1:
            problems.append(f"hook {r} has copies that differ: {', '.join(rels)}")
    return problems
