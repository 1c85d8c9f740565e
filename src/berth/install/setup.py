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

import contextlib
import dataclasses
import functools
import importlib
import re
import shutil
import sys
import tarfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from berth.install import background, helm, layout, lock, package, wizard
from berth.install import chart as chart_mod
from berth.install import swap as swap_mod
from berth.install import values as values_mod
from berth.kube import canonical, yamlio
from berth.kube.errors import BerthError, InputError, MultiInputError

if TYPE_CHECKING:
    from berth.install import collector, randomness, workdir
    from berth.install import split as split_mod
    from berth.kube import objects

FACTS_FILE = "facts.yaml"

AFTER_RENDER = (
    "berth.install.split",
    "berth.install.randomness",
    "berth.install.collector",
    "berth.install.revisions",
    "berth.install.workdir",
)
"""The modules setup needs only once Helm has rendered: imported while Helm runs (:func:`_import_after_render`),
not before it starts, so their ~15 ms of imports overlap Helm's time instead of delaying it."""


def _import_after_render() -> None:
    """Import :data:`AFTER_RENDER` (in a thread, while Helm renders). A module that fails to import is left to the
    import where it is used, which raises its error there."""
    for name in AFTER_RENDER:
        with contextlib.suppress(Exception):
            importlib.import_module(name)


_PARSING = threading.Lock()


def _parse_early(request: helm.RenderRequest, render: helm.Render) -> None:
    """Split a variant's render while Helm still renders the other (:func:`berth.install.split.from_render` keeps
    it, and the documents both share, for the same call after the render). One at a time: the two variants share
    almost every document, which the second then finds parsed instead of parsing it again beside the first. An
    error is left to the call after the render, which raises it where it did; NOTES.txt renders are not objects."""
    if not request.show_only:
        with _PARSING, contextlib.suppress(Exception):
            from berth.install import split as split_mod

            split_mod.from_render(render.text, render.dropped_hook_events)


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
    release: str | None = None
    """``--release`` (None: the earlier run's, else the package's)."""
    values: values_mod.ValueFlags | None = None
    """Helm's values flags (None: keep the earlier run's)."""
    reuse: values_mod.Reused | None = None
    """An upgrade's reused release values (``--reuse-values``, ``--reset-then-reuse-values``)."""


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
        if "templates" not in Path(source).parts:
            continue  # crds/ files are copied as they are, never evaluated (and can be large)
        rel = Path(*Path(source).parts[1:])  # "<chart>/templates/x.yaml" -> chart_dir/templates/x.yaml
        path = chart_dir / rel
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if _LOOKUP_CALL.search(text):
            out.append(source)
    return out


_DEFINE = re.compile(r'\{\{-?\s*define\s+"([^"]+)"\s*-?\}\}')
_INCLUDE = re.compile(r'\b(?:include|template)\s+"([^"]+)"')


def template_texts(chart_dir: Path, root: str) -> list[tuple[str, str]]:
    """(source, text) of every file under a ``templates/`` folder of the chart and its subcharts, unpacked or
    packed (``charts/<sub>.tgz``, as ``helm dependency build`` leaves them); ``source`` as Helm names it
    (``<root>/charts/<sub>/templates/x.yaml``)."""
    out: list[tuple[str, str]] = []
    for f in sorted(chart_dir.rglob("*")):
        rel = f.relative_to(chart_dir)
        if f.is_file() and "templates" in rel.parts:
            out.append((f"{root}/{rel.as_posix()}", f.read_text(encoding="utf-8", errors="replace")))
        elif f.is_file() and f.suffix == ".tgz" and rel.parent.name == "charts":
            try:
                with tarfile.open(f, "r:gz") as tar:
                    for m in tar.getmembers():
                        data = tar.extractfile(m) if m.isfile() and "/templates/" in m.name else None
                        if data is not None:
                            text = data.read().decode("utf-8", "replace")
                            out.append((f"{root}/{rel.parent.as_posix()}/{m.name}", text))
            except (OSError, tarfile.TarError):
                continue  # Helm reports an unreadable subchart when it renders
    return out


def templates_keeping_live(chart_dir: Path, root: str) -> set[str]:
    """The templates that call ``lookup`` themselves or through the named templates they include (transitively):
    grafana's ``secret.yaml`` includes ``grafana.secretsData``, which includes ``grafana.password``, which looks up
    the live Secret to keep its admin password. Named templates are global in Helm, across subcharts."""
    texts = template_texts(chart_dir, root)
    bodies: dict[str, str] = {}
    for _, text in texts:
        starts = list(_DEFINE.finditer(text))
        for n, m in enumerate(starts):
            end = starts[n + 1].start() if n + 1 < len(starts) else len(text)
            bodies[m.group(1)] = bodies.get(m.group(1), "") + text[m.end() : end]
    calling = {name for name, body in bodies.items() if _LOOKUP_CALL.search(body)}
    grew = True
    while grew:
        more = {n for n, body in bodies.items() if n not in calling and set(_INCLUDE.findall(body)) & calling}
        calling |= more
        grew = bool(more)
    return {
        source for source, text in texts if _LOOKUP_CALL.search(text) or set(_INCLUDE.findall(text)) & calling
    }


def lookup_note(source: str) -> str:
    return (
        f"{source} calls lookup, which finds nothing offline: what it renders from the result is the chart's "
        "fallback where helm install/upgrade would read and keep the live value; before an upgrade (or "
        "--force-conflicts) check that no live value is overwritten"
    )


@dataclass(frozen=True)
class Rendered:
    """What setup renders of one selection."""

    split: split_mod.Split
    upgrade: split_mod.Split | None
    """The ``--is-upgrade`` render when it differs."""
    install_only: frozenset[objects.Ref]
    notes: list[str]
    """Review notes on the differences between the two variants and on ``lookup`` calls."""
    chart_notes: tuple[str, str] | None
    """The chart's NOTES.txt as ``helm install`` and ``helm upgrade`` would print it (None when it has none)."""
    lookups: list[str]
    """The templates that call ``lookup``."""
    base: dict[str, Any]
    """The release record's ``chart`` and ``config`` (:func:`berth.install.values.release_base`)."""
    random: tuple[randomness.RandomFields, ...] = ()
    """Fields that differed between two renders (both variants); the first render is the one kept."""


def render_selection(
    pkg: package.Package,
    selection: wizard.Selection,
    answers: dict[str, Any],
    namespace: str,
    scratch: Path,
    shown: str | None = None,
    user: values_mod.RenderValues = values_mod.NO_USER_VALUES,
) -> Rendered:
    """The install render (split), the upgrade render when it differs, the identities only the install variant
    has, notes, the chart's NOTES.txt, the templates that call ``lookup``, the release record's chart and config,
    and the fields rendered at random; the Helm processes all run at once. ``shown``: how an error names the
    package's chart archive (the user's path); ``user``: the user's values flags and release name."""
    chart_dir = chart_mod.safe_extract(pkg.root / pkg.chart.archive, scratch / "chart", shown)
    user.prepare(chart_dir)
    extra = selection.api_versions
    req = package.render_request(
        pkg, chart_dir, selection.base, selection.components, answers, namespace, scratch, False, extra, user,
        chart_crds=False,
    )  # fmt: skip
    value_args = [a for f in req.values_files for a in ("--values", str(f))] + list(req.value_args)
    release = req.release
    dry = background.Call(  # Helm first: the dry run takes no --api-versions, so it starts before they are known
        lambda: helm.install_dry_run(chart_dir, release, namespace, value_args), "berth-dry-run"
    )
    try:
        text = helm.chart_text(chart_dir)  # read once: the renders below see the same folder
        crds = helm.capability_api_versions(
            chart_dir, text
        )  # the chart's own, before the selection's (as ever)
        req = dataclasses.replace(req, api_versions=(*crds, *req.api_versions))
        # The variants differ only in --is-upgrade (render_request's other arguments are the same).
        upgrade_req = dataclasses.replace(req, is_upgrade=True)
        notes_req = helm.notes_request(req, scratch / "notes")
        # One copy of the chart for both variants' notes.
        notes_reqs = [notes_req, dataclasses.replace(notes_req, is_upgrade=True)] if notes_req else []
        later = threading.Thread(target=_import_after_render, name="berth-imports", daemon=True)

        def install_release() -> helm.DryRun | None:
            try:
                return dry.result()
            except BerthError:
                return None  # Helm renders the install variant itself, and reports the error where it does

        renders = helm.render_all(
            [req, upgrade_req, *notes_reqs],
            release=(req, install_release),
            meanwhile=later.start,
            ready=_parse_early,
            texts={chart_dir: text},
        )
        rendered, up_rendered, *notes_renders = renders
        release_base = values_mod.base_of(dry.result())
    finally:
        dry.wait()  # Helm reads the extracted chart until it ends
    if later.ident is not None:
        later.join()  # the modules it imports are used from here on
    from berth.install import randomness
    from berth.install import split as split_mod
    from berth.install.workdir import UPGRADE_DIR

    chart_notes = tuple(helm.notes_text(r) for r in notes_renders)
    result = split_mod.from_render(rendered.text, rendered.dropped_hook_events)
    twins = split_mod.release_namespace_duplicates(result, namespace)
    if twins:
        raise MultiInputError(
            twins, "duplicate object identities (each object must be rendered exactly once)"
        )
    upgrade = split_mod.from_render(up_rendered.text, up_rendered.dropped_hook_events)
    lookups = lookup_sources(result, chart_dir)
    sources = {randomness.key_of(o): o.source for o in (*upgrade.all_objects(), *result.all_objects())}
    random = randomness.merge(rendered.random, up_rendered.random)
    if random:
        keeping = templates_keeping_live(chart_dir, next(iter(sources.values())).split("/")[0])
        random = tuple(dataclasses.replace(f, keep_live=sources.get(f.key) in keeping) for f in random)
    paths = {f.key: f.paths for f in random}

    def comparable(o: split_mod.RenderedObject) -> str:
        return canonical.canonical_json(randomness.masked(o.body, paths.get(randomness.key_of(o), ())))

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
        elif not (o.text and o.text == mine[r].text) and comparable(o) != comparable(mine[r]):
            notes.append(f"{r} renders differently on upgrade; the upgrade plan uses out/{UPGRADE_DIR}/")
    return Rendered(
        result,
        (upgrade if notes else None),
        install_only,
        [*notes, *(lookup_note(s) for s in lookups)],
        (chart_notes[0], chart_notes[1]) if len(chart_notes) == 2 else None,
        lookups,
        release_base,
        random,
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


def context_namespace(kubeconfig: str | None, context: str | None) -> str:
    """Helm's default namespace: the kube context's, else ``default`` (no kubeconfig, or none readable)."""
    from berth.kube import kubeconfig as kubeconfig_mod  # only without -n

    try:
        return kubeconfig_mod.resolve(kubeconfig, context).namespace
    except InputError:
        return "default"


def release_namespace(opts: SetupOptions, pkg: package.Package, spec_dir: Path) -> str:
    """``-n`` if given, else the namespace an earlier setup of this work dir used, else the package's when it
    names one, else Helm's default (:func:`context_namespace`)."""
    if opts.namespace:
        return opts.namespace
    path = spec_dir / wizard.INPUTS_FILE
    if path.is_file():
        docs = yamlio.load_file(path)
        spec = (docs[0].body or {}).get("spec") if docs and isinstance(docs[0].body, dict) else None
        if isinstance(spec, dict) and spec.get("namespace"):
            return str(spec["namespace"])
    return pkg.namespace or context_namespace(opts.kubeconfig, opts.context)


def _stage_and_swap(
    opts: SetupOptions,
    work: Path,
    prompt: Callable[[package.Input], str] | None,
    cluster: collector.LiveCluster | None,
    committed: list[int | None],
    in_place: Callable[[], str],
) -> SetupResult:
    """Build everything in a stage folder, then swap it in (the commit: ``committed`` gets the recorded revision)."""
    helm.prefetch_tool()
    with swap_mod.stage_dir(work, ".berth-setup-") as stage:
        ref = Path(opts.ref)
        current = _current_package(work)
        if ref.is_dir() and (ref / package.MANIFEST).is_file():
            package.load(ref)  # validate before copying
            shutil.copytree(ref, stage / "package")
            pkg = package.load(stage / "package")
        elif current is not None:  # a newer chart for this work dir: keep its bases, components and inputs
            pkg = package.rebase(
                current, opts.ref, stage / "package", opts.version, opts.repo, opts.namespace, False
            )
        else:  # the work dir's own package: W/out holds its render, so no review renders of the bases
            pkg = package.build(
                opts.ref,
                [("default", None)],
                stage / "package",
                opts.version,
                opts.repo,
                namespace=opts.namespace,
                review_renders=False,
            )  # build and rebase return the package as load reads it back
        prior_spec = work / "out" / "spec"
        namespace = release_namespace(opts, pkg, prior_spec)
        prior_sel, prior_answers = wizard.read_prior(prior_spec)
        selection = wizard.select(pkg, opts.base, opts.selects, prior_sel, opts.api_versions)
        answers = wizard.answer(
            pkg,
            wizard.parse_input_flags(opts.inputs),
            prior_answers,
            None if opts.non_interactive else prompt,
        )
        out = stage / "out"
        spec_dir = out / "spec"
        spec_dir.mkdir(parents=True)
        recorded = values_mod.decide(prior_spec, spec_dir, opts.release, opts.values, opts.reuse)
        shown = str(ref / pkg.chart.archive) if (ref / package.MANIFEST).is_file() else opts.ref
        rendered = render_selection(
            pkg,
            selection,
            answers.effective,
            namespace,
            stage / "scratch",
            shown,
            recorded.for_render(spec_dir),
        )
        result = rendered.split
        if rendered.notes:
            result = dataclasses.replace(result, warnings=(*result.warnings, *rendered.notes))
        wizard.write(spec_dir, pkg, selection, answers, namespace)  # the .gitignore names its secret file
        files = layout.Background()  # the render's files are written while the rest is built
        try:
            # First: its compression (most of its time) runs without the interpreter lock, beside the main thread.
            files.put(functools.partial(values_mod.write_base, out, rendered.base))
            written = _write_render(out, pkg, result, rendered, files)
            files.put(functools.partial(shutil.rmtree, stage / "scratch", ignore_errors=True))  # read no more
            facts, wd, revision = _record(
                opts,
                work,
                pkg,
                selection,
                answers,
                namespace,
                recorded,
                rendered,
                result,
                written,
                cluster,
                out,
            )
        except BaseException:
            with contextlib.suppress(Exception):
                files.wait()  # every write has ended before the stage is removed
            raise
        files.wait()  # raises the first write's error
        with lock.no_interrupt(in_place):  # a Ctrl-C from here on reports the new render in place
            swap_mod.swap(stage, work, ("package", "out"))
            committed.append(revision)
    lines = _summary(work / "out", wd, facts, revision)
    from berth.install import randomness

    lines += randomness.lines(rendered.random)
    return SetupResult(pkg, selection, namespace, result, facts, tuple(lines))


def _record(
    opts: SetupOptions,
    work: Path,
    pkg: package.Package,
    selection: wizard.Selection,
    answers: wizard.Answers,
    namespace: str,
    recorded: values_mod.Recorded,
    rendered: Rendered,
    result: split_mod.Split,
    written: list[layout.WrittenFile],
    cluster: collector.LiveCluster | None,
    out: Path,
) -> tuple[dict[str, Any], workdir.Workdir, int | None]:
    """Everything of ``out`` but the render's files and answers: facts, values, the render's id, the revision it
    replaces and the plan. Returns the facts, the work dir as set up and the revision recorded."""
    from berth.install import collector, randomness, revisions
    from berth.install.workdir import NOTES_FILES, PLAN_FILE, Workdir, plan_document

    spec_dir = out / "spec"
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
    values_mod.write(spec_dir, recorded)
    randomness.write(spec_dir, rendered.random)
    (spec_dir / FACTS_FILE).write_text(
        yamlio.dump(wizard.spec_doc(pkg, "Facts", {"values": facts})), encoding="utf-8"
    )
    if rendered.chart_notes is not None:
        for action, text in zip(NOTES_FILES, rendered.chart_notes, strict=True):
            (spec_dir / NOTES_FILES[action]).write_text(text + "\n", encoding="utf-8")
    layout.write_render_id(out, written)
    revision = revisions.record(
        work / "out", work / "package", out, datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    )
    wd = Workdir(
        pkg, selection, answers.effective, namespace, result, rendered.install_only, rendered.upgrade, out,
        recorded.release or "",
    )  # fmt: skip
    doc = plan_document(wd, str(opts.work_dir))
    (out / PLAN_FILE).parent.mkdir(parents=True, exist_ok=True)
    (out / PLAN_FILE).write_text(yamlio.dump(doc), encoding="utf-8")
    return facts, wd, revision


def _write_render(
    out: Path, pkg: package.Package, result: split_mod.Split, rendered: Rendered, files: layout.Background
) -> list[layout.WrittenFile]:
    """The render's files (the upgrade variant under ``out/upgrade/``) and the ``.gitignore`` that keeps the
    rendered Secrets and the release record's values out of version control; returns every file of the render
    (paths under ``out``), for its id."""
    from berth.install.workdir import UPGRADE_DIR

    twins: layout.Twins = {}  # the upgrade variant's unchanged files are hard links to the install variant's
    written = layout.write_split(result, out, pkg.name, rendered.install_only, rendered.lookups, twins, files)
    ignored = ["secrets/", "release/"]
    ignored += [w.path for w in written if w.role == "hook" and w.ref.kind == "Secret" and not w.ref.group]
    upgrade = rendered.upgrade
    if upgrade is not None:
        ignored.append(f"{UPGRADE_DIR}/secrets/")
        ignored += [
            f"{UPGRADE_DIR}/lifecycle/{e.value}/{upgrade.file_names[h.obj.ref]}"
            for h in upgrade.hooks
            if h.obj.kind == "Secret" and not h.obj.ref.group
            for e in dict.fromkeys(h.events)
        ]
        written += [
            dataclasses.replace(w, path=f"{UPGRADE_DIR}/{w.path}")
            for w in layout.write_split(
                upgrade,
                out / UPGRADE_DIR,
                f"{pkg.name}-upgrade",
                lookup_sources=rendered.lookups,
                twins=twins,
                background=files,
            )
        ]
    if (out / "spec" / wizard.SECRET_INPUTS_FILE).is_file():
        ignored.append(f"spec/{wizard.SECRET_INPUTS_FILE}")
    (out / ".gitignore").write_text("".join(f"{p}\n" for p in ignored), encoding="utf-8")
    return written


def _summary(out_dir: Path, wd: workdir.Workdir, facts: dict[str, Any], revision: int | None) -> list[str]:
    from berth.install import revisions
    from berth.install.workdir import PLAN_FILE

    result, selection = wd.split, wd.selection
    n_manifests = len(result.ordinary) + len(result.crds)
    lines = [
        f"Wizard wrote {out_dir}/spec/selection.yaml and inputs.yaml",
        f"Collector produced {len(facts)} fact(s) in {out_dir}/spec/facts.yaml",
        f"Base: {selection.base}; components: [{', '.join(selection.components)}]",
        f"Namespace: {wd.namespace}",
        f"Release: {wd.release}",
        f"Rendered {n_manifests} manifest(s) to {out_dir}/manifests",
    ]
    if result.secrets:
        lines.append(f"Rendered {len(result.secrets)} secret(s) to {out_dir}/secrets (not uploaded)")
    n_hooks = len(result.hooks)
    events = ", ".join(e.value for e in result.events()) or "none"
    lines.append(
        f"Extracted {n_hooks} hook object(s) to {out_dir}/lifecycle (events: {events}); plan in {out_dir}/{PLAN_FILE}"
    )
    if revision is not None:
        lines.append(
            f"Recorded the render this replaced as revision {revision} in {out_dir}/{revisions.REVISIONS_DIR} "
            "(what upgrade prunes against and rollback goes back to)"
        )
    lines += [f"warning: {w}" for w in result.warnings]
    for u in facts.get("unmet", []):
        lines.append(f"requirement: {u['requirement']}; fix: {u['fix']}")
    return lines
