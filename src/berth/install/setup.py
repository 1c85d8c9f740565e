"""``berth install setup``: pull -> wizard -> collector -> render -> split -> plan, written atomically.

Everything is built in a staging folder inside the work dir and swapped in only when every step succeeded, so a
failed run (bad values, template error, missing input, duplicate identities...) leaves ``W/out`` and
``W/package`` exactly as they were. The swap itself is journaled (:func:`berth.install.swap.swap`): a run killed
between its renames leaves a journal, and the next command that loads the work dir
(:func:`berth.install.swap.recover`, from :func:`berth.install.workdir.load_workdir` and :func:`run`) finishes it
or undoes it, so ``W/package`` and ``W/out`` always belong together.

The chart is rendered twice over: the install variant (what is written) and the ``--is-upgrade`` variant, whose
difference tells which objects exist only under ``.Release.IsInstall`` (an upgrade must neither re-apply nor prune
them, as Helm's live ``keep`` check does).
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from berth.install import chart as chart_mod
from berth.install import collector, helm, layout, lock, package, revisions, wizard
from berth.install import split as split_mod
from berth.install import swap as swap_mod
from berth.install.workdir import NOTES_FILES, PLAN_FILE, UPGRADE_DIR, Workdir, plan_document
from berth.kube import canonical, objects, yamlio
from berth.kube.errors import InputError, MultiInputError

FACTS_FILE = "facts.yaml"


@dataclass(frozen=True)
class SetupOptions:
    ref: str
    work_dir: Path
    namespace: str | None = None
    base: str | None = None
    selects: tuple[str, ...] = ()
    inputs: tuple[str, ...] = ()
    non_interactive: bool = False
    version: str | None = None
    repo: str | None = None
    live: bool = False
    kubeconfig: str | None = None
    context: str | None = None
    api_versions: tuple[str, ...] | None = None
    """``--api-versions`` flags (None: keep the earlier run's)."""
    wait_lock: bool = False
    """Wait for another command holding the work dir (:mod:`berth.install.lock`) instead of refusing."""


@dataclass(frozen=True)
class SetupResult:
    package: package.Package
    selection: wizard.Selection
    namespace: str
    split: split_mod.Split
    facts: dict[str, Any]
    lines: tuple[str, ...]


_LOOKUP_CALL = re.compile(r"\blookup\s+[\"$.(]")
"""A call of Helm's ``lookup`` (its first argument is a string, a variable, a field or a sub-expression)."""


def lookup_sources(result: split_mod.Split, chart_dir: Path) -> list[str]:
    """The templates that call ``lookup``: offline it finds nothing, so their objects hold the chart's fallback (a
    generated password, a default), where ``helm install``/``upgrade`` read the live object and keep it. Recorded
    in the manifest index (``status`` names them when such an object drifted) and named in a review note each: an
    upgrade from this render overwrites such live values (or stops at a field-manager conflict, where
    ``--force-conflicts`` would overwrite them)."""
    out = []
    for source in dict.fromkeys(o.source for o in result.all_objects()):
        rel = Path(*Path(source).parts[1:])  # "<chart>/templates/x.yaml" -> chart_dir/templates/x.yaml
        path = chart_dir / rel
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if _LOOKUP_CALL.search(text):
            out.append(source)
    return out


def lookup_note(source: str) -> str:
    return (
        f"{source} calls lookup, which finds nothing offline: what it renders from the result is the chart's "
        "fallback where helm install/upgrade would read and keep the live value; before an upgrade (or "
        "--force-conflicts) check that no live value is overwritten"
    )


def render_selection(
    pkg: package.Package,
    selection: wizard.Selection,
    answers: dict[str, Any],
    namespace: str,
    scratch: Path,
    shown: str | None = None,
) -> tuple[
    split_mod.Split,
    split_mod.Split | None,
    frozenset[objects.Ref],
    list[str],
    tuple[str, str] | None,
    list[str],
]:
    """The install render (split), the upgrade render when it differs, the identities only the install variant
    has, notes on the differences, the chart's NOTES.txt as ``helm install`` and ``helm upgrade`` would print it
    (None when it has none), and the templates that call ``lookup``. ``shown``: how an error names the package's
    chart archive (the user's path)."""
    chart_dir = chart_mod.safe_extract(pkg.root / pkg.chart.archive, scratch / "chart", shown)
    extra = selection.api_versions
    req = package.render_request(
        pkg, chart_dir, selection.base, selection.components, answers, namespace, scratch, api_versions=extra
    )
    upgrade_req = package.render_request(
        pkg, chart_dir, selection.base, selection.components, answers, namespace, scratch, True, extra
    )
    notes_reqs = [
        n
        for n in (
            helm.notes_request(req, scratch / "notes"),
            helm.notes_request(upgrade_req, scratch / "notes-up"),
        )
        if n
    ]
    rendered, up_rendered, *notes_renders = helm.render_all([req, upgrade_req, *notes_reqs])
    chart_notes = tuple(helm.notes_text(r) for r in notes_renders)
    result = split_mod.from_render(rendered.text, rendered.dropped_hook_events)
    twins = split_mod.release_namespace_duplicates(result, namespace)
    if twins:
        raise MultiInputError(
            twins, "duplicate object identities (each object must be rendered exactly once)"
        )
    upgrade = split_mod.from_render(up_rendered.text, up_rendered.dropped_hook_events)
    up = {o.ref: o for o in upgrade.all_objects()}
    mine = {o.ref: o for o in result.all_objects()}
    install_only = frozenset(r for r in mine if r not in up)
    notes = [
        f"{r} is rendered only on install (.Release.IsInstall); upgrade neither applies nor prunes it"
        for r in mine
        if r not in up
    ]
    for r, o in up.items():
        if r not in mine:
            notes.append(
                f"{r} is rendered only on upgrade; the upgrade plan applies it from out/{UPGRADE_DIR}/"
            )
        elif not (o.text and o.text == mine[r].text) and canonical.canonical_json(
            o.body
        ) != canonical.canonical_json(mine[r].body):  # the same text renders the same object
            notes.append(f"{r} renders differently on upgrade; the upgrade plan uses out/{UPGRADE_DIR}/")
    lookups = lookup_sources(result, chart_dir)
    return (
        result,
        (upgrade if notes else None),
        install_only,
        [*notes, *(lookup_note(s) for s in lookups)],
        (chart_notes[0], chart_notes[1]) if len(chart_notes) == 2 else None,
        lookups,
    )


def run(
    opts: SetupOptions,
    prompt: Callable[[package.Input], str] | None = None,
    cluster: collector.LiveCluster | None = None,
) -> SetupResult:
    """The whole setup; raises before touching ``W/out`` on any error. With ``opts.live`` the facts are checked
    against ``cluster`` (default: a client for ``opts.kubeconfig``/``opts.context``)."""
    work = opts.work_dir.resolve()
    fresh = not work.exists()
    had_lock = (work / lock.LOCK_FILE).exists()
    with lock.hold(work, opts.wait_lock, create=True):
        try:
            return _run(opts, work, prompt, cluster)
        except BaseException:
            # A first setup that failed leaves the folder as it found it: no lock file, no empty work dir.
            if not had_lock and not (work / "out").exists() and not (work / "package").exists():
                lock.release_file(work)
                if fresh and not any(work.iterdir()):
                    work.rmdir()
            raise


def _run(
    opts: SetupOptions,
    work: Path,
    prompt: Callable[[package.Input], str] | None,
    cluster: collector.LiveCluster | None,
) -> SetupResult:
    swap_mod.recover(work)  # setup reads W/out (earlier answers, the render it records as a revision)
    committed: list[int | None] = []

    def in_place() -> str:
        recorded = committed[0] if committed else None
        return (
            f"interrupted, but setup had already put the new render in place: {work / 'out'} holds it and "
            f"{work / 'package'} its package"
            + (f"; the render it replaced is recorded as revision {recorded}" if recorded is not None else "")
        )

    try:
        return _stage_and_swap(opts, work, prompt, cluster, committed, in_place)
    except KeyboardInterrupt:
        if committed:
            raise lock.InterruptedAfterCommit(in_place()) from None
        raise


def _current_package(work: Path) -> package.Package | None:
    """The package the work dir holds (None: a first setup, or one that cannot be read, which setup replaces)."""
    if not (work / "package" / package.MANIFEST).is_file():
        return None
    try:
        return package.load(work / "package")
    except InputError as exc:
        print(f"warning: {exc}; setting up from the chart's defaults", file=sys.stderr)
        return None


def _stage_and_swap(
    opts: SetupOptions,
    work: Path,
    prompt: Callable[[package.Input], str] | None,
    cluster: collector.LiveCluster | None,
    committed: list[int | None],
    in_place: Callable[[], str],
) -> SetupResult:
    """Build everything in a stage folder, then swap it in (the commit: ``committed`` gets the recorded revision)."""
    with swap_mod.stage_dir(work, ".berth-setup-") as stage:
        ref = Path(opts.ref)
        current = _current_package(work)
        if ref.is_dir() and (ref / package.MANIFEST).is_file():
            package.load(ref)  # validate before copying
            shutil.copytree(ref, stage / "package")
        elif current is not None:  # a newer chart for this work dir: keep its bases, components and inputs
            package.rebase(
                current, opts.ref, stage / "package", opts.version, opts.repo, opts.namespace, False
            )
        else:  # the work dir's own package: W/out holds its render, so no review renders of the bases
            package.build(
                opts.ref,
                [("default", None)],
                stage / "package",
                opts.version,
                opts.repo,
                namespace=opts.namespace,
                review_renders=False,
            )
        pkg = package.load(stage / "package")
        namespace = opts.namespace or pkg.namespace
        prior_sel, prior_answers = wizard.read_prior(work / "out" / "spec")
        selection = wizard.select(pkg, opts.base, opts.selects, prior_sel, opts.api_versions)
        answers = wizard.answer(
            pkg,
            wizard.parse_input_flags(opts.inputs),
            prior_answers,
            None if opts.non_interactive else prompt,
        )
        shown = str(ref / pkg.chart.archive) if (ref / package.MANIFEST).is_file() else opts.ref
        result, upgrade, install_only, notes, chart_notes, lookups = render_selection(
            pkg, selection, answers.effective, namespace, stage / "scratch", shown
        )
        if notes:
            result = split_mod.Split(
                result.ordinary,
                result.crds,
                result.secrets,
                result.hooks,
                (*result.warnings, *notes),
                result.file_names,
            )
        out = stage / "out"
        env = {
            "INSTALLER_PACKAGE_DIR": str(work / "package"),
            "INSTALLER_WORK_DIR": str(work),
            "INSTALLER_OUT_DIR": str(work / "out"),
            "INSTALLER_NAMESPACE": namespace,
            "INSTALLER_BASE": selection.base,
            "INSTALLER_SELECTED": ",".join(selection.components),
            **{f"INSTALLER_INPUT_{k.upper()}": str(v) for k, v in answers.effective.items()},
        }
        if opts.live and cluster is None:
            cluster = collector.KubeCluster(opts.kubeconfig, opts.context)
        facts = collector.collect(pkg, result, namespace, env, cluster if opts.live else None)
        spec_dir = out / "spec"
        wizard.write(spec_dir, pkg, selection, answers, namespace)
        (spec_dir / FACTS_FILE).write_text(
            yamlio.dump(wizard.spec_doc(pkg, "Facts", {"values": facts})), encoding="utf-8"
        )
        if chart_notes is not None:
            for action, text in zip(NOTES_FILES, chart_notes, strict=True):
                (spec_dir / NOTES_FILES[action]).write_text(text + "\n", encoding="utf-8")
        written = layout.write_split(result, out, pkg.name, install_only, lookups)
        hook_secrets = [
            w.path for w in written if w.role == "hook" and w.ref.kind == "Secret" and not w.ref.group
        ]
        if upgrade is not None:
            hook_secrets.append(f"{UPGRADE_DIR}/secrets/")
            hook_secrets += [
                f"{UPGRADE_DIR}/lifecycle/{e.value}/{upgrade.file_names[h.obj.ref]}"
                for h in upgrade.hooks
                if h.obj.kind == "Secret" and not h.obj.ref.group
                for e in dict.fromkeys(h.events)
            ]
        if (spec_dir / wizard.SECRET_INPUTS_FILE).is_file():
            hook_secrets.append(f"spec/{wizard.SECRET_INPUTS_FILE}")
        (out / ".gitignore").write_text(
            "".join(f"{p}\n" for p in ["secrets/", *hook_secrets]), encoding="utf-8"
        )
        if upgrade is not None:
            written += [
                dataclasses.replace(w, path=f"{UPGRADE_DIR}/{w.path}")
                for w in layout.write_split(
                    upgrade,
                    out / UPGRADE_DIR,
                    f"{pkg.name}-upgrade",
                    lookup_sources=lookups,
                )
            ]
        layout.write_render_id(out, written)
        recorded = revisions.record(
            work / "out", work / "package", out, datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        )
        wd = Workdir(pkg, selection, answers.effective, namespace, result, install_only, upgrade, out)
        doc = plan_document(wd, str(opts.work_dir))
        (out / PLAN_FILE).parent.mkdir(parents=True, exist_ok=True)
        (out / PLAN_FILE).write_text(yamlio.dump(doc), encoding="utf-8")
        shutil.rmtree(stage / "scratch", ignore_errors=True)
        with lock.no_interrupt(in_place):  # a Ctrl-C from here on reports the new render in place
            swap_mod.swap(stage, work, ("package", "out"))
            committed.append(recorded)
    out_dir = work / "out"
    n_manifests = len(result.ordinary) + len(result.crds)
    lines = [
        f"Wizard wrote {out_dir}/spec/selection.yaml and inputs.yaml",
        f"Collector produced {len(facts)} fact(s) in {out_dir}/spec/facts.yaml",
        f"Base: {selection.base}; components: [{', '.join(selection.components)}]",
        f"Namespace: {namespace}",
        f"Rendered {n_manifests} manifest(s) to {out_dir}/manifests",
    ]
    if result.secrets:
        lines.append(f"Rendered {len(result.secrets)} secret(s) to {out_dir}/secrets (not uploaded)")
    n_hooks = len(result.hooks)
    events = ", ".join(e.value for e in result.events()) or "none"
    lines.append(
        f"Extracted {n_hooks} hook object(s) to {out_dir}/lifecycle (events: {events}); plan in {out_dir}/{PLAN_FILE}"
    )
    if recorded is not None:
        lines.append(
            f"Recorded the render this replaced as revision {recorded} in {out_dir}/{revisions.REVISIONS_DIR} "
            "(what upgrade prunes against and rollback goes back to)"
        )
    lines += [f"warning: {w}" for w in result.warnings]
    for u in facts.get("unmet", []):
        lines.append(f"requirement: {u['requirement']}; fix: {u['fix']}")
    return SetupResult(pkg, selection, namespace, result, facts, tuple(lines))
