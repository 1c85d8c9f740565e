"""``berth install status``: what the cluster has versus the work dir -- missing, drifted and extra objects.

Compared: the release objects of the install render (ordinary objects, Secrets, CRDs), never hooks (they come and
go by design; Flux's drift inventory excludes them too). *Missing*: not on the cluster. *Drifted*: some field
berth would apply has another value live (a subset comparison: fields the server defaults or other managers add
are not drift). *Extra*: objects an earlier run applied (per the receipts in ``W/out/runs``) that the work dir no
longer renders but the cluster still has -- what ``upgrade`` would prune.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from berth.install import kubeops, receipt, workdir
from berth.install import split as split_mod
from berth.kube import yamlio
from berth.kube.errors import BerthError

SKIP_META = frozenset(
    {"namespace", "creationTimestamp", "resourceVersion", "uid", "generation", "managedFields"}
)


def differences(desired: Any, live: Any, path: str = "") -> list[str]:
    """Paths where ``live`` does not carry ``desired``'s value (maps: by key; lists and scalars: equal)."""
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


def normalised(body: dict[str, Any]) -> dict[str, Any]:
    """What the server stores for ``body``: a Secret's ``stringData`` lands base64-encoded in ``data``."""
    if body.get("kind") == "Secret" and isinstance(body.get("stringData"), dict):
        data = dict(body.get("data") or {})
        for k, v in body.pop("stringData").items():
            data[k] = base64.b64encode(str(v).encode("utf-8")).decode("ascii")
        body["data"] = data
    return body


@dataclass
class Report:
    context: str
    present: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    drifted: dict[str, list[str]] = field(default_factory=dict)
    extra: list[str] = field(default_factory=list)
    notes: str = ""
    """The chart's NOTES.txt for the render last applied (``helm status`` shows it too); empty without one."""

    @property
    def in_sync(self) -> bool:
        return not (self.missing or self.drifted or self.extra)

    def to_json(self) -> dict[str, Any]:
        return {
            "context": self.context,
            "inSync": self.in_sync,
            "present": self.present,
            "missing": self.missing,
            "drifted": [{"object": k, "fields": v} for k, v in self.drifted.items()],
            "extra": self.extra,
            **({"notes": self.notes} if self.notes else {}),
        }

    def lines(self) -> list[str]:
        total = len(self.present) + len(self.missing)
        out = [f"Context {self.context}: {len(self.present)}/{total} object(s) of the work dir present"]
        out += [f"missing  {m}" for m in self.missing]
        out += [
            f"drifted  {k}: {', '.join(v[:5])}{' ...' if len(v) > 5 else ''}" for k, v in self.drifted.items()
        ]
        out += [f"extra    {e} (applied earlier, no longer rendered)" for e in self.extra]
        out.append(
            "In sync." if self.in_sync else "Out of sync: `berth install apply` (or `upgrade`) reconciles it."
        )
        if self.notes:
            out += ["NOTES:", self.notes]
        return out


class OutOfSync(BerthError):
    """Exit 1 after printing the report: the cluster differs from the work dir."""

    def __init__(self, report: Report) -> None:
        super().__init__(
            f"{len(report.missing)} missing, {len(report.drifted)} drifted, {len(report.extra)} extra object(s)"
        )


def last_applied_action(wd: workdir.Workdir, work_dir: Path, context: str, server: str) -> str:
    """``upgrade`` when the run the release was last deployed by (:func:`berth.install.receipt.deployed`) applied
    the ``--is-upgrade`` render, else ``install``."""
    run = receipt.deployed(work_dir, context, server, wd.package.release, wd.namespace)
    return receipt.variant(run[1]) if run else "install"


def desired_objects(wd: workdir.Workdir, variant: str) -> list[split_mod.RenderedObject]:
    """The release objects as last applied: the ``--is-upgrade`` render after an upgrade (plus the install-only
    objects the install left, which upgrades never touch), else the install render."""
    chosen = wd.split
    if variant == "upgrade" and wd.upgrade is not None:
        chosen = wd.upgrade
    objs = [*chosen.crds, *chosen.ordinary, *chosen.secrets]
    if chosen is not wd.split:
        have = {o.ref for o in objs}
        objs += [
            o
            for o in (*wd.split.crds, *wd.split.ordinary, *wd.split.secrets)
            if o.ref in wd.install_only and o.ref not in have
        ]
    return objs


def run(work_dir: Path, kubeconfig: str | None = None, context: str | None = None) -> Report:
    wd = workdir.load_workdir(work_dir)
    kube = kubeops.connect(kubeconfig, context)
    try:
        receipt.check_target(work_dir, kube.context, kube.server, context is not None)
        variant = last_applied_action(wd, work_dir, kube.context, kube.server)
        report = Report(kube.context, notes=workdir.release_notes(work_dir / "out", variant))
        desired = desired_objects(wd, variant)
        seen: set[str] = set()
        for o in desired:
            res = kube.try_resource(o.api_version, o.kind)
            ns = (o.namespace or wd.namespace) if res is None or res.namespaced else ""
            label = f"{o.kind} {ns}/{o.name}" if ns else f"{o.kind} {o.name}"
            seen.add(f"{o.kind}|{ns}|{o.name}")
            live = kube.get(res, o.name, ns) if res is not None else None
            if live is None:
                report.missing.append(label)
                continue
            report.present.append(label)
            body = normalised(yamlio.load_one(yamlio.dump(o.body)))
            diff = differences(body, live)
            if diff:
                report.drifted[label] = diff
        for key, item in receipt.inventory(work_dir).items():
            if key in seen:
                continue
            res = kube.try_resource(str(item.get("apiVersion") or "v1"), str(item["kind"]))
            ns = str(item.get("namespace") or "")
            if res is not None and kube.get(res, str(item["name"]), ns) is not None:
                report.extra.append(
                    f"{item['kind']} {ns}/{item['name']}" if ns else f"{item['kind']} {item['name']}"
                )
        return report
    finally:
        kube.close()


__all__ = ["OutOfSync", "Report", "differences", "run"]
