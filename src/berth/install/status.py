"""``berth install status``: the release on the cluster as Helm would judge it -- missing, drifted, extra -- and the
next step that is really valid for it.

What is compared is what the release owns at its current revision: the render the last succeeded install, upgrade
or rollback on this cluster applied (:func:`berth.install.apply.installed`; its ``--is-upgrade`` variant after an
upgrade), which is ``W/out`` or, when setup was run again since, the recorded revision holding it -- the new render
is then *pending*, and ``upgrade`` is the step that applies it. Per object:

    release objects          present, and unchanged by a server-side apply of the render's copy: the apply is sent
                             with ``dryRun=All`` and its result compared with the live object (so only fields berth's
                             field manager owns can differ; defaults, other managers' fields and the server's own
                             normalisation are never drift); a field another manager took is drift, naming it;
                             the copy carries Helm's ownership metadata, and the fields the chart renders at
                             random (``spec/random.yaml``) with their live values: neither is drift
    ``crds/`` CRDs           present only (Helm never upgrades them; after an upgrade one the new version added is
                             not installed, as Helm leaves it, and is only noted)
    install-only objects     present only (``.Release.IsInstall``: upgrades neither apply nor prune them); after an
                             upgrade one that is gone is only noted
    hooks                    never (they come and go by design)

*Extra*: objects an earlier run against this cluster applied for this release (per the receipts) that the render no
longer has and that are still there, unless Helm would leave them too (``crds/`` CRDs, install-only objects, a live
``helm.sh/resource-policy: keep``) or they are being deleted. It exits 0 exactly when the release is installed from
the render the work dir holds and nothing is missing, drifted or extra -- so after every successful ``apply``,
``upgrade`` and ``rollback`` -- and otherwise prints the one command that would change what it reports.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from berth.install import (
    apply,
    kubeops,
    layout,
    ownership,
    randomness,
    receipt,
    recorder,
    release,
    revisions,
    workdir,
)
from berth.install import plan as plan_mod
from berth.install import split as split_mod
from berth.kube import objects, yamlio
from berth.kube.errors import BerthError
from berth.kube.hooks import RESOURCE_POLICY_ANNOTATION, RESOURCE_POLICY_KEEP

SKIP_META = frozenset(
    {"namespace", "creationTimestamp", "resourceVersion", "uid", "generation", "managedFields"}
)
VOLATILE_META = frozenset({"resourceVersion", "managedFields", "generation"})
"""What a no-op apply may change and is no drift (a dry run does not bump them, but a real cluster's controllers
write ``status`` and these between the read and the dry run)."""


def differences(desired: Any, live: Any, path: str = "") -> list[str]:
    """Paths where ``live`` does not carry ``desired``'s value (maps: by key; lists and scalars: equal): the subset
    comparison used where the cluster refuses the dry-run apply."""
    if isinstance(desired, dict) and isinstance(live, dict):
        out: list[str] = []
        for k, v in desired.items():
            if path == ".metadata" and k in SKIP_META:
                continue
            if v in (None, {}, []) and k not in live:
                continue
            if k not in live:
                out.append(f"{path}.{k}")
            else:
                out += differences(v, live[k], f"{path}.{k}")
        return out
    if isinstance(desired, list) and isinstance(live, list):
        if len(desired) != len(live):
            return [path or "."]
        out = []
        for n, (d, lv) in enumerate(zip(desired, live, strict=True)):
            out += differences(d, lv, f"{path}[{n}]")
        return out
    if (isinstance(desired, (int, float)) and isinstance(live, str)) or (
        isinstance(live, (int, float)) and isinstance(desired, str)
    ):
        return [] if str(desired) == str(live) else [path]
    return [] if desired == live else [path or "."]


def changed(before: Any, after: Any, path: str = "") -> list[str]:
    """Every path where two whole objects differ (both ways), ``status`` and volatile metadata left out: what a
    server-side apply would change."""
    if isinstance(before, dict) and isinstance(after, dict):
        out: list[str] = []
        for k in sorted(set(before) | set(after), key=str):
            if (not path and k == "status") or (path == ".metadata" and k in VOLATILE_META):
                continue
            if k not in before or k not in after:
                out.append(f"{path}.{k}")
            else:
                out += changed(before[k], after[k], f"{path}.{k}")
        return out
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        out = []
        for n, (b, a) in enumerate(zip(before, after, strict=True)):
            out += changed(b, a, f"{path}[{n}]")
        return out
    return [] if before == after else [path or "."]


def normalised(body: dict[str, Any]) -> dict[str, Any]:
    """What the server stores for ``body``: a Secret's ``stringData`` lands base64-encoded in ``data``."""
    if body.get("kind") == "Secret" and isinstance(body.get("stringData"), dict):
        data = dict(body.get("data") or {})
        for k, v in body.pop("stringData").items():
            data[k] = base64.b64encode(str(v).encode("utf-8")).decode("ascii")
        body["data"] = data
    return body


DeployedRender = workdir.Workdir | revisions.Revision
"""A render the release may run: the one the work dir holds, or a recorded revision."""

State = str
INSTALLED: State = "installed"
NOT_INSTALLED: State = "not-installed"
PENDING: State = "pending-upgrade"


@dataclass
class Report:
    context: str
    release: str = ""
    namespace: str = ""
    state: State = INSTALLED
    compared: str = ""
    """The render the cluster was compared with (``the render W/out holds``, ``revision 2 (...)``)."""
    present: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    drifted: dict[str, list[str]] = field(default_factory=dict)
    extra: list[str] = field(default_factory=list)
    remarks: list[str] = field(default_factory=list)
    """What is as Helm leaves it and needs no step (install-only objects gone, crds/ CRDs an upgrade skips...)."""
    pending: list[str] = field(default_factory=list)
    """The changes the render W/out holds would make (state ``pending-upgrade``): ``+``/``-``/``~`` per object."""
    next: list[str] = field(default_factory=list)
    """Valid next steps for what was found, one command each with what it does."""
    notes: str = ""
    """The chart's NOTES.txt for the render last applied (``helm status`` shows it too); empty without one."""

    @property
    def in_sync(self) -> bool:
        return self.state == INSTALLED and not (self.missing or self.drifted or self.extra)

    def to_json(self) -> dict[str, Any]:
        return {
            "context": self.context,
            "release": self.release,
            "namespace": self.namespace,
            "state": self.state,
            "compared": self.compared,
            "inSync": self.in_sync,
            "present": self.present,
            "missing": self.missing,
            "drifted": [{"object": k, "fields": v} for k, v in self.drifted.items()],
            "extra": self.extra,
            "remarks": self.remarks,
            "pending": self.pending,
            "next": self.next,
            **({"notes": self.notes} if self.notes else {}),
        }

    def lines(self) -> list[str]:
        total = len(self.present) + len(self.missing)
        what = {
            INSTALLED: f"installed from {self.compared}",
            PENDING: f"installed from {self.compared}; the work dir holds a newer render, not applied yet",
            NOT_INSTALLED: "not installed by this work dir",
        }[self.state]
        out = [f"Context {self.context}: release {self.release} (namespace {self.namespace}) {what}"]
        out.append(f"{len(self.present)}/{total} object(s) present")
        out += [f"missing  {m}" for m in self.missing]
        out += [
            f"drifted  {k}: {', '.join(v[:5])}{' ...' if len(v) > 5 else ''}" for k, v in self.drifted.items()
        ]
        out += [f"extra    {e} (applied earlier, no longer rendered)" for e in self.extra]
        out += [f"pending  {p}" for p in self.pending]
        out += [f"note: {r}" for r in self.remarks]
        out.append("In sync." if self.in_sync else "Out of sync.")
        out += [f"next: {n}" for n in self.next]
        if self.notes:
            out += ["NOTES:", self.notes]
        return out


class OutOfSync(BerthError):
    """Exit 1 after printing the report: the cluster differs from the work dir."""

    def __init__(self, report: Report) -> None:
        what = {NOT_INSTALLED: "not installed", PENDING: "an upgrade is pending"}.get(report.state)
        super().__init__(
            (f"{what}; " if what else "")
            + f"{len(report.missing)} missing, {len(report.drifted)} drifted, {len(report.extra)} extra object(s)"
        )


def desired_objects(wd: workdir.Workdir, variant: str) -> list[split_mod.RenderedObject]:
    """The release objects as last applied: the ``--is-upgrade`` render after an upgrade (plus the install-only
    objects the install left, which upgrades never touch), else the install render."""
    return [o for o, _ in _desired(wd, variant)]


def _desired(render: DeployedRender, variant: str) -> list[tuple[split_mod.RenderedObject, str]]:
    """(object, how it is compared: ``full``, ``crds-dir``, ``install-only``) of a render as ``variant`` applied it."""
    chosen = render.upgrade if variant == "upgrade" and render.upgrade is not None else render.split
    out: list[tuple[split_mod.RenderedObject, str]] = []
    for o in (*chosen.crds, *chosen.ordinary, *chosen.secrets):
        if o.from_crds_dir:
            out.append((o, "crds-dir"))
        elif o.ref in render.install_only:
            out.append((o, "install-only"))
        else:
            out.append((o, "full"))
    if chosen is not render.split:
        have = {o.ref for o, _ in out}
        out += [
            (o, "install-only")
            for o in (*render.split.crds, *render.split.ordinary, *render.split.secrets)
            if o.ref in render.install_only and o.ref not in have
        ]
    return out


def _label(kind: str, ns: str, name: str) -> str:
    return f"{kind} {ns}/{name}" if ns else f"{kind} {name}"


@dataclass
class _Comparer:
    kube: kubeops.KubeOps
    report: Report
    release_namespace: str
    lookups: frozenset[str]
    variant: str
    release: str = ""
    random: dict[str, randomness.RandomFields] = field(default_factory=dict)
    """The fields the chart renders at random (``spec/random.yaml`` of the render compared)."""
    force_hint: bool = False

    def compare(self, o: split_mod.RenderedObject, how: str) -> str:
        """Compare one object; returns its inventory key (``kind|namespace|name``)."""
        res = self.kube.try_resource(o.api_version, o.kind)
        ns = (o.namespace or self.release_namespace) if res is None or res.namespaced else ""
        label = _label(o.kind, ns, o.name)
        live = self.kube.get(res, o.name, ns) if res is not None else None
        if live is None:
            if how == "install-only" and self.variant == "upgrade":
                self.report.remarks.append(
                    f"{label} is gone: it is rendered only on install (.Release.IsInstall), so upgrades neither "
                    "recreate nor prune it"
                )
            elif how == "crds-dir" and self.variant == "upgrade":
                self.report.remarks.append(
                    f"CRD {o.name} of the chart's crds/ folder is not on the cluster: Helm installs crds/ CRDs only "
                    "at first install, never on upgrade"
                )
            else:
                self.report.missing.append(label)
            return f"{o.kind}|{ns}|{o.name}"
        self.report.present.append(label)
        if how != "full" or res is None:
            return f"{o.kind}|{ns}|{o.name}"
        diff = self._drift(o, res, ns, live)
        if diff:
            self.report.drifted[label] = diff
            if o.source in self.lookups:
                self.report.remarks.append(
                    f"{label} comes from {o.source}, which calls lookup: Helm would keep what it finds live, while "
                    "berth applies the render's copy (rendered offline, where lookup finds nothing)"
                )
        return f"{o.kind}|{ns}|{o.name}"

    def _drift(
        self, o: split_mod.RenderedObject, res: kubeops.Resource, ns: str, live: dict[str, Any]
    ) -> list[str]:
        """What a server-side apply of the render's copy would change (``dryRun=All``); fields another field manager
        took are named with it. Without permission to patch, the subset comparison with the render's copy."""
        body = yamlio.load_one(yamlio.dump(o.body))
        if ns and not objects.namespace(body):
            objects.meta(body)["namespace"] = ns
        # As applied: Helm's ownership metadata, and what the chart renders at random as it is live (not drift).
        body = ownership.stamp(body, self.release, self.release_namespace)
        random = self.random.get(randomness.key_of(o))
        if random is not None:
            body = randomness.keep_live(body, live, random.paths)
        try:
            _, after = self.kube.apply(body, res, force=False, dry_run=True)
        except kubeops.ApplyConflict as exc:
            self.force_hint = True
            return [f"{f} ({m})" for f, m in exc.fields] or [exc.api_message]
        except kubeops.Forbidden:
            return differences(normalised(body), live)
        return changed(live, after)


def _deployed_render(
    kube: kubeops.KubeOps, work: Path, wd: workdir.Workdir, report: Report
) -> tuple[DeployedRender, Path, str]:
    """The render the release runs, its root folder and variant; sets the report's state and what it compares."""
    out = work / "out"
    inst = apply.installed(kube, work, wd.release, wd.namespace)
    if inst is None or not inst.present:
        report.state, report.compared = NOT_INSTALLED, f"the render {out} holds"
        return wd, out, "install"
    variant = receipt.variant(inst.spec)
    if inst.same_render or inst.revision is None:
        report.compared = f"the render {out} holds (run {inst.run})"
        if not inst.same_render:
            report.remarks.append(
                f"run {inst.run} applied a render this work dir no longer records, so the cluster is compared "
                f"with the render {out} holds"
            )
        return wd, out, variant
    report.state, report.compared = PENDING, f"{inst.revision.label} (run {inst.run})"
    from berth.install import upgrade

    report.pending = [line for line in upgrade.diff_lines(inst.revision, wd) if not line.startswith(" ")]
    return inst.revision, out / inst.revision.prefix, variant


def _recorded_identities(out: Path) -> tuple[set[str], set[tuple[str, str, str]]]:
    """Across the current render and every recorded one: the names of ``crds/`` CRDs and the (kind, namespace, name)
    of install-only objects -- what Helm never prunes, so never "extra". Read from the manifest indexes alone."""
    crds_dir: set[str] = set()
    install_only: set[tuple[str, str, str]] = set()
    roots = [out, *(out / revisions.REVISIONS_DIR / str(n) for n in revisions.numbers(out))]
    for root in [r for base in roots for r in (base, base / workdir.UPGRADE_DIR)]:
        path = root / layout.INDEX_FILE
        if not path.is_file():
            continue
        body = yamlio.load_file(path)[0].body
        for item in (body.get("spec") or {}).get("files") or []:
            source = Path(str(item.get("source") or ""))
            if item.get("role") == "crd" and source.parent.name == "crds":
                crds_dir.add(str(item.get("name")))
            if item.get("installOnly"):
                install_only.add(
                    (str(item.get("kind")), str(item.get("namespace") or ""), str(item.get("name")))
                )
    return crds_dir, install_only


def _extras(
    kube: kubeops.KubeOps, work: Path, report: Report, seen: set[str], release_namespace: str
) -> None:
    crds_dir, install_only = _recorded_identities(work / "out")
    for key, item in receipt.inventory(
        work, kube.context, kube.server, report.release, report.namespace
    ).items():
        kind, ns, name = str(item["kind"]), str(item.get("namespace") or ""), str(item["name"])
        if key in seen or (kind == "CustomResourceDefinition" and name in crds_dir):
            continue
        if (kind, ns, name) in install_only or (
            kind,
            "" if ns == release_namespace else ns,
            name,
        ) in install_only:
            continue
        res = kube.try_resource(str(item.get("apiVersion") or "v1"), kind)
        live = (
            kube.get(res, name, ns if res is not None and res.namespaced else "") if res is not None else None
        )
        if live is None or (live.get("metadata") or {}).get("deletionTimestamp"):
            continue
        if objects.annotations(live).get(RESOURCE_POLICY_ANNOTATION) == RESOURCE_POLICY_KEEP:
            report.remarks.append(
                f"{_label(kind, ns, name)} is no longer rendered and stays: its live copy has "
                f"{RESOURCE_POLICY_ANNOTATION}: {RESOURCE_POLICY_KEEP}"
            )
            continue
        report.extra.append(_label(kind, ns, name))


def _next_steps(report: Report, work: Path, force: bool, context: str) -> None:
    """The commands that would change what the report found (none when in sync)."""
    cmd = {a: apply.live_command(a, work) for a in plan_mod.Action}
    runs = [(p, b["spec"]) for p, b in receipt.receipts(work) if not b["spec"].get("dryRun")]
    runs = [(p, s) for p, s in runs if s.get("context") == context and s.get("release") == report.release]
    stopped = runs[-1] if runs and runs[-1][1].get("result") != receipt.Result.SUCCEEDED else None
    if stopped is not None and stopped[1].get("action") in receipt.DEPLOYING:
        action = plan_mod.Action(stopped[1]["action"])
        report.next.append(
            f"{cmd[action]} --resume: continues the {action.value} that stopped (run {stopped[0].stem})"
        )
    if report.state == NOT_INSTALLED:
        report.next.append(f"{cmd[plan_mod.Action.INSTALL]}: installs the release (install hooks included)")
        return
    if report.state == PENDING:
        report.next.append(
            f"{cmd[plan_mod.Action.UPGRADE]}: upgrades the release to the render the work dir holds (pre-upgrade "
            "hooks, apply, prune, post-upgrade hooks)"
        )
    elif report.missing or report.drifted:
        flag = " --force-conflicts" if force else ""
        why = "takes back the fields other managers took and " if force else ""
        report.next.append(
            f"{cmd[plan_mod.Action.INSTALL]}{flag}: {why}re-applies the release's objects (no hooks run: the "
            "release is installed)"
        )
    for e in report.extra:
        kind, _, rest = e.partition(" ")
        ns, _, name = rest.rpartition("/")
        report.next.append(
            f"kubectl delete {kind.lower()} {name}{f' -n {ns}' if ns else ''}: removes {e}, which the render no "
            "longer has (an upgrade prunes only what the revision it replaces had)"
        )


def run(work_dir: Path, kubeconfig: str | None = None, context: str | None = None) -> Report:
    wd = workdir.load_workdir(work_dir)
    kube = kubeops.connect(kubeconfig, context)
    try:
        receipt.check_target(work_dir, kube.context, kube.server, context is not None)
        report = Report(kube.context, wd.release, wd.namespace)
        render, root, variant = _deployed_render(kube, work_dir, wd, report)
        report.notes = workdir.release_notes(root, variant) if report.state != NOT_INSTALLED else ""
        comparer = _Comparer(
            kube, report, wd.namespace, layout.lookup_templates(root), variant, wd.release,
            randomness.read(root / "spec"),
        )  # fmt: skip
        seen = {comparer.compare(o, how) for o, how in _desired(render, variant)}
        if report.state != NOT_INSTALLED:
            _extras(kube, work_dir, report, seen, wd.namespace)
            history = release.Store(kube, wd.namespace, wd.release).history()
            outside = recorder.changed_outside(history, wd, variant, work_dir)
            if outside is not None:
                report.remarks.append(
                    f"the release's deployed {recorder.describe(outside)} was made outside this work dir (helm "
                    f"upgrade or rollback): the cluster runs that, so what differs from {work_dir / 'out'} is "
                    f"Helm's change (helm history {wd.release} -n {wd.namespace} shows it)"
                )
        _next_steps(report, work_dir, comparer.force_hint, kube.context)
        return report
    finally:
        kube.close()


__all__ = ["OutOfSync", "Report", "changed", "differences", "run"]
