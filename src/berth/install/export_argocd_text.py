"""What an Argo CD export writes and says: the files of ``DIR``, its README, the command's summary, and the plan
beside its Argo CD translation (``berth install plan --for argocd``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from berth.install import export, plan
from berth.install.export_argocd import DELETE_PHASES, EVENT_PHASE, ArgoExport, Item, Phase, RunOnce
from berth.kube import objects
from berth.kube.hooks import HookEvent

MIN_VERSIONS = (
    "Argo CD 2.10 or later runs PostDelete hooks and 3.3 or later PreDelete hooks; older ones never run them"
)


def application(x: ArgoExport, path: str) -> dict[str, Any]:
    """An Argo CD Application for the export (its ``repoURL`` is a placeholder to replace)."""
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": x.release, "namespace": "argocd"},
        "spec": {
            "project": "default",
            "source": {
                "repoURL": "https://git.example.com/REPLACE-WITH-YOUR-REPOSITORY.git",
                "targetRevision": "HEAD",
                "path": f"{path.removeprefix('./')}/manifests",
            },
            "destination": {"server": "https://kubernetes.default.svc", "namespace": x.namespace},
            "syncPolicy": {"syncOptions": ["CreateNamespace=true", "ServerSideApply=true"]},
        },
    }


def files(src: export.Source, x: ArgoExport, dest: Path) -> list[export.OutFile]:
    """Every file of ``DIR``: one per object (Secrets owner-only in a git-ignored ``secrets/``), the example
    Application (outside ``manifests/``, so the Application does not apply it) and the README."""
    path, found = export.repo_path(dest)
    out: list[export.OutFile] = []
    for item in x.items:
        secret = item.file.startswith("secrets/")
        out.append(export.yaml_file(item.file, item.body, item.source, 0o600 if secret else 0o644))
    if any(f.path.startswith("secrets/") for f in out):
        out.append(export.gitignore(["secrets/"]))
    out.append(
        export.yaml_file(
            "application.yaml",
            application(x, path),
            "# An Argo CD Application for manifests/: set repoURL (and path, if this folder moves), then apply it "
            "to the cluster Argo CD runs in.",
        )
    )
    out.append(export.text_file("README.md", readme(src, x, path, found)))
    return out


def where(item: Item, phase: Phase) -> str:
    """Where Argo CD runs ``item`` in ``phase``."""
    if phase in DELETE_PHASES:
        return f"{phase.value} (all at once)"
    return f"{phase.value} wave {item.wave}"


def _run_table(x: ArgoExport) -> list[str]:
    lines = [
        "| # | Argo CD | object | Helm (berth's plan) | delete policy | same as Helm? |",
        "|---|---|---|---|---|---|",
    ]
    notes: list[str] = []
    for n, (phase, item) in enumerate(x.runs(), 1):
        mark = "yes"
        if item.notes:
            first = len(notes) + 1
            notes += [f"{item.label}: {t}" for t in item.notes]
            mark = "no: " + ", ".join(f"[{k}]" for k in range(first, len(notes) + 1))
        lines.append(
            f"| {n} | {where(item, phase)} | {item.label} | {item.helm} | {','.join(item.policies) or '-'} | {mark} |"
        )
    if notes:
        lines += ["", *[f"[{k}] {t}" for k, t in enumerate(notes, 1)]]
    return lines


def readme(src: export.Source, x: ArgoExport, path: str, found: bool) -> str:
    secrets = [i for i in x.items if i.file.startswith("secrets/")]
    lines = export.header(src, "Argo CD")
    lines += [
        "## Use it",
        "",
        "`manifests/` holds every object of the package as a plain manifest, with Helm's lifecycle plan translated "
        "into Argo CD resource hooks and sync waves: Argo CD's order (phase, then wave, then its kind order, then "
        "name) equals berth's Helm-exact plan in every sync phase, ties included. Commit this folder and point an "
        f"Argo CD Application at `{path.removeprefix('./')}/manifests` (`application.yaml` is one: set its "
        "`repoURL`). It syncs with `CreateNamespace=true` (Helm's plan ensures the release namespace first) and "
        "`ServerSideApply=true` (berth applies everything server-side).",
    ]
    if not found:
        lines += [
            "",
            f"No Git repository was found above this folder: check that `{path.removeprefix('./')}` is its path "
            "in yours.",
        ]
    if secrets:
        lines += [
            "",
            f"`secrets/` holds the {len(secrets)} Secret(s) of the render, owner-only and git-ignored: commit "
            "them encrypted (SOPS, Sealed Secrets) into `manifests/`, or create them before the first sync; they "
            "carry the sync waves of their place in the plan.",
        ]
    lines += ["", MIN_VERSIONS + ".", "", "## Order", "", *_run_table(x), ""]
    if x.wave_splits:
        lines += ["Why the Sync phase has more than one wave:", "", *[f"- {s}" for s in x.wave_splits], ""]
    lines += [
        "Argo CD waits between waves (hooks until done, other objects until healthy), so every hook, alone in "
        "its wave, runs one at a time as in Helm; the objects of one Sync wave are created kind by kind, those of "
        "one kind together, as Helm creates them.",
        "",
        "## Hooks Helm runs only on install",
        "",
    ]
    if x.install_only:
        how = (
            "they run on every sync (Argo CD's semantics); export with `--install-only-hooks once` to run them once"
            if x.run_once == RunOnce.EVERY_SYNC
            else "the run-once guard made each a plain resource of its own Sync wave: Argo CD applies it on the "
            "first sync and, unchanged, never again (nothing deletes it; delete it by hand to run it again)"
        )
        lines += [f"{', '.join(x.install_only)}: {how}.", ""]
    else:
        lines += ["None.", ""]
    if x.upgrade_only:
        lines += [
            "Helm runs these on upgrade only; Argo CD runs them on every sync, the first included: "
            f"{', '.join(x.upgrade_only)}.",
            "",
        ]
    lines += ["## Not exported", ""]
    if x.unmapped:
        lines.append("Argo CD has no phase for these Helm events (`helm rollback`, `helm test`):")
        lines.append("")
        lines += [
            f"- {u.event}: {u.label}" + (" (exported for its other events)" if u.exported else "")
            for u in x.unmapped
        ]
    else:
        lines.append("Nothing: the chart has no rollback or test hooks.")
    if x.warnings:
        lines += ["", "## Warnings", "", *[f"- {w}" for w in x.warnings]]
    lines += [
        "",
        "## Beyond order",
        "",
        "- Argo CD deletes `HookSucceeded` hooks when the whole sync succeeded, not after each phase, and on a "
        "failed sync deletes every `HookFailed` hook, not only the one that failed.",
        "- Argo CD waits for every Sync object to be healthy before PostSync (like `helm --wait`).",
        "- Deleting the Application deletes its objects wave by wave, the highest first (Helm: its uninstall "
        "order); it never deletes CRDs or `helm.sh/resource-policy: keep` objects.",
        '- See berth\'s docs/install.md, "GitOps export", for every Helm hook rule and what the export does '
        "with it.",
        "",
    ]
    return "\n".join(lines)


def summary(x: ArgoExport, dest: Path) -> list[str]:
    """The command's output: what went where, then every warning."""
    counts: dict[str, int] = {}
    for phase, _ in x.runs():
        counts[phase.value] = counts.get(phase.value, 0) + 1
    secrets = sum(1 for i in x.items if i.file.startswith("secrets/"))
    waves = {i.wave for i in x.items if Phase.SYNC in i.phases}
    lines = [
        f"Exported release {x.release} for Argo CD to {dest}: {len(x.items) - secrets} object(s) in manifests/"
        + (f", {secrets} Secret(s) in secrets/ (git-ignored)" if secrets else ""),
        "Phases: "
        + ", ".join(f"{p.value} {counts[p.value]}" for p in Phase if p.value in counts)
        + f"; the Sync phase in {len(waves)} wave(s)",
    ]
    lines += [f"warning: {w}" for w in x.warnings]
    lines += [
        f"not exported: {u.event} {u.label} (Argo CD has no phase for {u.event})"
        for u in x.unmapped
        if not u.exported
    ]
    lines.append(f"See {dest / 'README.md'} for the order, Helm's beside Argo CD's.")
    return lines


# -- berth install plan --for argocd ---------------------------------------------------------------------------

PLAIN_PHASES = {
    plan.Phase.NAMESPACE.value: "Application syncOption CreateNamespace=true",
    plan.Phase.DELETE.value: "deleted with the Application (reverse waves)",
    plan.Phase.PRUNE.value: "pruned by Argo CD (when pruning is on)",
    plan.Phase.READINESS.value: "Argo CD waits for health between waves",
}


def rows(p: plan.Plan, x: ArgoExport) -> list[dict[str, Any]]:
    """One row per object of the plan (and per Argo CD-only hook run of this action's phases): where Helm runs it,
    where Argo CD does, and why they differ (no reasons: the same)."""
    out: list[dict[str, Any]] = []
    phases_here: set[Phase] = set()
    seen: set[objects.Ref] = set()
    release_waves = {i.wave for i in x.items if not i.hook and not i.events}
    for n, step in enumerate(p.steps, 1):
        event = _event(step.phase)
        for o in step.objects:
            r = export.ref_of(o)
            item = x.item(r)
            seen.add(r)
            helm = o.label + (f" (weight {o.weight})" if o.weight is not None else "")
            if event is not None and event not in EVENT_PHASE:
                out.append(
                    _row(n, step.phase, helm, "not exported", [f"Argo CD has no phase for {event.value}"])
                )
                continue
            if step.phase in PLAIN_PHASES:
                notes = []
                if step.phase == plan.Phase.DELETE.value and o.kind == "CustomResourceDefinition":
                    notes.append("Argo CD never deletes a CRD with its Application")
                elif step.phase == plan.Phase.DELETE.value and item is not None and len(release_waves) > 1:
                    notes.append(
                        f"Argo CD deletes the Application's objects a wave at a time, the highest first (this one "
                        f"with Sync wave {item.wave}); Helm issues every deletion in its uninstall order"
                    )
                out.append(_row(n, step.phase, helm, PLAIN_PHASES[step.phase], notes))
                continue
            if item is None:
                out.append(_row(n, step.phase, helm, "not exported", ["not in the install render"]))
                continue
            phase = EVENT_PHASE[event] if event is not None and item.hook else Phase.SYNC
            phases_here.add(phase)
            out.append(_row(n, step.phase, helm, where(item, phase), list(item.notes)))
    for phase, item in x.runs():
        if phase in phases_here and item.ref not in seen and item.hook:
            helm = f"{item.label} ({', '.join(e.value for e in item.events)})"
            out.append(_row(0, "", helm, where(item, phase), list(item.notes)))
    return out


def _row(step: int, phase: str, helm: str, argo: str, notes: list[str]) -> dict[str, Any]:
    return {"step": step, "phase": phase, "helm": helm, "argocd": argo, "notes": notes}


def _event(phase: str) -> HookEvent | None:
    try:
        return HookEvent(phase)
    except ValueError:
        return None


def side_by_side(p: plan.Plan, x: ArgoExport) -> str:
    """The plan beside its Argo CD translation, for review: ``=`` where Argo CD runs an object as Helm does,
    ``≠ [n]`` with the reason below where it does not."""
    table = rows(p, x)
    to = f" to {p.target}" if p.target else ""
    lines = [
        f"Plan: {p.action.value} release {p.release} in namespace {p.namespace}{to}, beside its Argo CD export "
        f"(install-only hooks: {x.run_once.value})",
        "Helm 4 runs hooks by weight, then name, then kind; Argo CD by phase, then wave, then its kind order, then "
        "name. Every hook has a wave of its own.",
        "",
    ]
    width = max([len(r["helm"]) for r in table] + [20]) + 2
    notes: list[str] = []
    last = -1
    for r in table:
        if r["step"] != last:
            lines.append(
                f"{r['step']}. {r['phase']}"
                if r["step"]
                else "Argo CD only (Helm runs these in another action):"
            )
            last = r["step"]
        mark = "="
        if r["notes"]:
            first = len(notes) + 1
            notes += r["notes"]
            mark = "≠ " + ",".join(str(k) for k in range(first, len(notes) + 1))
        lines.append(f"   {r['helm']:<{width}} {r['argocd']:<44} {mark}")
    same = sum(1 for r in table if not r["notes"])
    lines += ["", f"The same in {same} of {len(table)} row(s)."]
    if notes:
        lines += ["", "Differences:", *[f"  {k}. {t}" for k, t in enumerate(notes, 1)]]
    if x.wave_splits:
        lines += ["", "Sync waves:", *[f"  {s}" for s in x.wave_splits]]
    return "\n".join(lines) + "\n"


def run(work_dir: Path, dest: Path, run_once: RunOnce, timeout: int) -> list[str]:
    """``berth install export --argocd DEST``: translate, write ``DEST`` atomically, return the summary."""
    from berth.install.export_argocd import translate

    src = export.load(work_dir, timeout=timeout)
    x = translate(src.plans, src.read, run_once)
    export.write_tree(dest, files(src, x, dest), "argocd")
    return summary(x, dest)
