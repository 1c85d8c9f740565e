"""An upgrade's values and history from the Helm release record: reusing values, and adopting a release that
``helm install`` (or another work dir) made.

``helm upgrade`` decides the new values from the release's current revision (``Upgrade.reuseValues``): with
``--reuse-values`` or ``--reset-then-reuse-values`` its ``config`` goes under the new values (and with
``--reuse-values`` its chart's defaults replace the new chart's), with ``--reset-values`` it is dropped, and with
none of them it is kept only when no new values are given. berth reads that revision from the cluster, the record
Helm itself would read; a work dir whose release has no record uses the chart and values setup recorded.

Adopting: ``berth install upgrade --release R -n NS --pull CHART --work-dir NEW`` on a work dir that was never set
up reads R's records, sets NEW up from CHART with the values decided as above, and records R's current revision
(its manifest and hooks, parsed; its chart and values) as NEW's first recorded revision. From there it is an
ordinary upgrade: the plan prunes what that revision had and the new render lacks, the new record continues R's
history (``helm history`` then reads ``superseded, deployed``), and a later ``berth install rollback`` goes back to
the revision Helm installed.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from berth.install import apply, kubeops, layout, recorder, release, revisions, values, wizard, workdir
from berth.install.values import Reuse
from berth.kube.errors import InputError


@dataclass(frozen=True)
class UpgradeValues:
    """``install upgrade``'s Helm flags: which release, and what becomes of its values."""

    release: str | None = None
    namespace: str | None = None
    flags: values.ValueFlags | None = None
    """New values flags (None: none given)."""
    mode: Reuse = Reuse.DEFAULT

    @property
    def given(self) -> bool:
        return bool(self.release or self.namespace or self.flags is not None or self.mode != Reuse.DEFAULT)


NO_VALUES = UpgradeValues()


def is_set_up(work: Path) -> bool:
    return (work / "out" / layout.INDEX_FILE).is_file()


def current_revision(kube: kubeops.KubeOps, namespace: str, name: str) -> dict[str, Any] | None:
    """What ``helm upgrade`` replaces (the deployed revision, else a failed or superseded last one)."""
    history = release.Store(kube, namespace, name).history()
    return recorder.current(history)


def decide(
    upgrade_values: UpgradeValues,
    current: dict[str, Any] | None,
    fallback: dict[str, Any] | None,
    source: str,
) -> values.Reused | None:
    """The previous values an upgrade layers under its new ones (None: none), per Helm's reuse rules; ``current``
    is the release's current record, ``fallback`` the chart and values the work dir recorded."""
    mode = upgrade_values.mode
    if mode == Reuse.RESET:
        return None
    if mode == Reuse.DEFAULT:
        if upgrade_values.flags is not None or current is None:
            return None  # new values replace the old; a berth work dir keeps its recorded flags instead
        mode = Reuse.RESET_THEN_REUSE  # no new values: Helm keeps the last ones
    base = current if current is not None else fallback
    if base is None:
        raise InputError(
            f"--{mode.value}: the release has no record to take its values from (and the work dir recorded none); "
            "give the values again instead",
            f"--{mode.value}",
        )
    chart_values = ((base.get("chart") or {}).get("values")) or {}
    return values.Reused(mode, dict(base.get("config") or {}), dict(chart_values), source)


def reused_for(
    options: apply.ApplyOptions, upgrade_values: UpgradeValues, wd: workdir.Workdir, reporter: apply.Reporter
) -> values.Reused | None:
    """For a set-up work dir: the values a reuse mode layers under the new ones (``DEFAULT`` keeps the recorded
    flags, as setup does: nothing is read)."""
    if upgrade_values.mode in (Reuse.DEFAULT, Reuse.RESET):
        return None
    kube = apply.connect_checked(options, reporter)
    try:
        current = current_revision(kube, wd.namespace, wd.release)
    finally:
        kube.close()
    fallback = values.read_base(wd.out_dir or options.work_dir / "out")
    where = (
        f"release {wd.release} revision {release.version_of(current)}"
        if current is not None
        else f"{options.work_dir / 'out'}"
    )
    return decide(upgrade_values, current, fallback, where)


@dataclass(frozen=True)
class Adoption:
    """A release read from the cluster for a work dir that was never set up."""

    namespace: str
    name: str
    current: dict[str, Any]
    reused: values.Reused | None


def read_for_adoption(
    options: apply.ApplyOptions,
    upgrade_values: UpgradeValues,
    reporter: apply.Reporter,
    default_namespace: str,
) -> Adoption:
    """The release a new work dir adopts: ``--release`` in ``-n`` (or Helm's default namespace), its current
    revision and the values the upgrade keeps."""
    if not upgrade_values.release:
        raise InputError(
            f"{options.work_dir} is not set up; to upgrade a release Helm installed, name it: --release NAME "
            "[-n NAMESPACE] --pull CHART (berth adopts it); otherwise run berth install setup first",
            "--release",
        )
    namespace = upgrade_values.namespace or default_namespace
    kube = apply.connect_checked(options, reporter)
    try:
        current = current_revision(kube, namespace, upgrade_values.release)
    finally:
        kube.close()
    if current is None:
        raise InputError(
            f'"{upgrade_values.release}" has no deployed releases in namespace {namespace} (helm upgrade says '
            f"the same); install it with berth install setup and apply",
            "--release",
        )
    where = f"release {upgrade_values.release} revision {release.version_of(current)}"
    return Adoption(namespace, upgrade_values.release, current, decide(upgrade_values, current, None, where))


def record_adopted(work: Path, adoption: Adoption) -> str:
    """Record the adopted release's current revision in the freshly set-up work dir; one line saying so."""
    out = work / "out"
    current = adoption.current
    base = {"chart": current.get("chart") or {}, "config": current.get("config") or {}}
    number = revisions.record_release(
        out,
        release.parsed(current),
        base,
        release.version_of(current),
        datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    )
    # What a rollback to it makes W/out read: the work dir's selection and namespace, the release's name (its
    # values are the record's, in release/; it keeps no package: W/package stays, and the rollback says so).
    spec = out / revisions.REVISIONS_DIR / str(number) / "spec"
    for name in (wizard.SELECTION_FILE, wizard.INPUTS_FILE):
        shutil.copyfile(out / "spec" / name, spec / name)
    values.write(spec, values.Recorded(adoption.name))
    return (
        f"Adopted release {adoption.name} in namespace {adoption.namespace}: its "
        f"{recorder.describe(current)} is recorded as revision {number} in {out / revisions.REVISIONS_DIR} "
        "(what this upgrade prunes against and a rollback goes back to)"
    )
