"""Helm's values flags (``-f``, ``--set``, ``--set-string``, ``--set-file``, ``--set-json``, ``--set-literal``) and
``upgrade``'s ``--reuse-values`` / ``--reset-values`` / ``--reset-then-reuse-values``.

berth never parses a ``--set`` expression: the flags go to the real ``helm`` as the user typed them, after the
package's own values files, so what a render holds is Helm's by construction. Helm merges them in a fixed order
whatever the order on the command line (``pkg/cli/values/options.go``: every ``-f`` in order, then every
``--set-json``, ``--set``, ``--set-string``, ``--set-file``, ``--set-literal``), so the full order of a berth
render is::

    chart defaults < [reused release values] < base < components < inputs < -f ... < --set-json < --set
                   < --set-string < --set-file < --set-literal

What the user gave is recorded in the work dir (``W/out/spec/values.yaml``, with copies of the ``-f`` and
``--set-file`` files under ``W/out/spec/values/``) so every later render -- ``verify``, an upgrade that keeps the
values -- is made from the same input, and the Helm release record's ``config`` (what ``helm get values`` prints)
is Helm's own merge of them (:func:`release_base`).

Reusing values follows ``Upgrade.reuseValues`` (``pkg/action/upgrade.go``): the previous release's ``config`` is
layered under the new values (``--reuse-values``, ``--reset-then-reuse-values``) and, with ``--reuse-values``
only, the chart's own defaults are replaced by the previous chart's defaults merged with that config
(:func:`coalesce_values`). One corner differs: a new ``--set k=null`` over a reused ``k`` removes ``k`` (Helm's
``CoalesceTables`` restores the chart default); the new flags keep their types (Helm's ``--set`` integers stay
integers), which matters more.
"""

from __future__ import annotations

import copy
import gzip
import json
import shutil
from dataclasses import dataclass, fields
from enum import StrEnum
from pathlib import Path
from typing import Any

from berth.install import helm as helm_mod
from berth.install import layout
from berth.kube import yamlio
from berth.kube.errors import InputError

VALUES_FILE = "values.yaml"
"""``W/out/spec/values.yaml``: the release name and the values flags as given (files as recorded copies)."""
VALUES_DIR = "values"
"""``W/out/spec/values/``: copies of the ``-f`` and ``--set-file`` files, and a reused release's values."""
BASE_FILE = "release/base.json.gz"
"""``W/out/release/base.json.gz``: the chart and user values of the release record, as Helm serialises them."""


FLAGS = {
    "values": "--values",
    "set_json": "--set-json",
    "set": "--set",
    "set_string": "--set-string",
    "set_file": "--set-file",
    "set_literal": "--set-literal",
}
"""Field -> Helm flag, in the order Helm applies them (``pkg/cli/values/options.go`` ``MergeValues``)."""


@dataclass(frozen=True)
class ValueFlags:
    """The values flags of one render, each in the order given. Files are paths (absolute once recorded)."""

    values: tuple[str, ...] = ()
    set_json: tuple[str, ...] = ()
    set: tuple[str, ...] = ()
    set_string: tuple[str, ...] = ()
    set_file: tuple[str, ...] = ()
    set_literal: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return any(getattr(self, f.name) for f in fields(self))

    def args(self) -> list[str]:
        """The flags for ``helm``, in the order Helm applies them."""
        out: list[str] = []
        for name, flag in FLAGS.items():
            for value in getattr(self, name):
                out += [flag, value]
        return out

    def to_doc(self) -> dict[str, list[str]]:
        return {name: list(getattr(self, name)) for name in FLAGS if getattr(self, name)}

    @classmethod
    def from_doc(cls, doc: Any, where: str) -> ValueFlags:
        if not isinstance(doc, dict):
            return cls()
        unknown = sorted(set(doc) - set(FLAGS))
        if unknown or not all(
            isinstance(v, list) and all(isinstance(i, str) for i in v) for v in doc.values()
        ):
            raise InputError(f"flags: expected lists of strings under {', '.join(FLAGS)}", where)
        return cls(**{k: tuple(v) for k, v in doc.items()})


class Reuse(StrEnum):
    """What an upgrade does with the previous release's values (Helm's flags; ``default``: none given)."""

    DEFAULT = "default"
    REUSE = "reuse-values"
    RESET = "reset-values"
    RESET_THEN_REUSE = "reset-then-reuse-values"


@dataclass(frozen=True)
class Reused:
    """A previous release's values an upgrade keeps (what ``Upgrade.reuseValues`` reads from the release)."""

    mode: Reuse
    config: dict[str, Any]
    """The previous release's ``config`` (its user-supplied values)."""
    chart_values: dict[str, Any]
    """The previous release's chart defaults (``--reuse-values`` merges the config into them)."""
    source: str
    """Where they came from, for the reader (``release r revision 3``)."""

    def record(self, spec_dir: Path) -> tuple[str, str | None]:
        """Write the reused config (and with ``--reuse-values`` the replacement chart defaults) under
        ``spec_dir/values/``; return their file names."""
        root = spec_dir / VALUES_DIR
        root.mkdir(parents=True, exist_ok=True)
        (root / REUSED_FILE).write_text(json.dumps(self.config, indent=1) + "\n", encoding="utf-8")
        if self.mode != Reuse.REUSE:
            return REUSED_FILE, None
        merged = coalesce_values(self.chart_values, self.config)
        (root / CHART_VALUES_FILE).write_text(json.dumps(merged, indent=1) + "\n", encoding="utf-8")
        return REUSED_FILE, CHART_VALUES_FILE


REUSED_FILE = "00-reused-config.json"
CHART_VALUES_FILE = "00-reused-chart-values.json"


@dataclass(frozen=True)
class Recorded:
    """The values of a work dir's render, as recorded: release name, flags, and what a reuse carried over."""

    release: str | None = None
    """``--release`` (None: the package's release name)."""
    flags: ValueFlags = ValueFlags()
    reused: str | None = None
    """A previous release's ``config`` (a file under ``spec/values/``), layered first."""
    chart_values: str | None = None
    """``--reuse-values``: the chart defaults replaced by the previous release's (a file under ``spec/values/``)."""
    reused_from: str = ""
    """Which release revision the reused values came from (for the reader)."""

    def for_render(self, spec_dir: Path) -> RenderValues:
        """What a render of this record takes, every file an absolute path under ``spec_dir``."""
        root = spec_dir / VALUES_DIR
        flags = ValueFlags(
            tuple(str(root / f) for f in self.flags.values),
            self.flags.set_json,
            self.flags.set,
            self.flags.set_string,
            tuple(_rebase_set_file(s, root) for s in self.flags.set_file),
            self.flags.set_literal,
        )
        return RenderValues(
            self.release,
            (root / self.reused,) if self.reused else (),
            flags,
            root / self.chart_values if self.chart_values else None,
        )


@dataclass(frozen=True)
class RenderValues:
    """The user's part of one render: release name, values layered first (a reused release's), the flags, and
    the chart defaults replacing the chart's own (``--reuse-values``)."""

    release: str | None = None
    first: tuple[Path, ...] = ()
    flags: ValueFlags = ValueFlags()
    chart_values: Path | None = None

    def prepare(self, chart_dir: Path) -> None:
        """Replace the extracted chart's ``values.yaml`` when the defaults are a reused release's (Helm's
        ``chart.Values = oldVals``)."""
        if self.chart_values is not None:
            shutil.copyfile(self.chart_values, chart_dir / "values.yaml")


def _split_set_file(expr: str) -> list[tuple[str, str]]:
    """``key=path[,key=path...]`` as Helm's ``--set-file`` takes it: (key, path) pairs. Only the paths matter here
    (to copy the files); Helm itself parses the keys."""
    out = []
    for item in expr.split(","):
        key, sep, path = item.partition("=")
        if not sep or not key or not path:
            raise InputError(f"expected KEY=FILE[,KEY=FILE...], got {expr!r}", "--set-file")
        out.append((key, path))
    return out


def _rebase_set_file(expr: str, root: Path) -> str:
    return ",".join(f"{k}={root / p}" for k, p in _split_set_file(expr))


def record(flags: ValueFlags, spec_dir: Path) -> ValueFlags:
    """Copy the flags' files into ``spec_dir/values/`` and return the flags naming the copies (relative to that
    folder). A missing file is the usual bad input: one message naming it, exit 2."""
    root = spec_dir / VALUES_DIR
    root.mkdir(parents=True, exist_ok=True)
    n = len(list(root.iterdir()))

    def keep(path: str, flag: str) -> str:
        nonlocal n
        src = Path(path).expanduser()
        if path.strip() == "-" or not src.is_file():
            raise InputError(f"{flag}: file not found (berth reads values files from disk, not stdin)", path)
        n += 1
        name = f"{n:02d}-{src.name}"
        shutil.copyfile(src, root / name)
        return name

    values = tuple(keep(p, "--values") for p in flags.values)
    set_file = tuple(
        ",".join(f"{k}={keep(p, '--set-file')}" for k, p in _split_set_file(expr)) for expr in flags.set_file
    )
    return ValueFlags(values, flags.set_json, flags.set, flags.set_string, set_file, flags.set_literal)


def write(spec_dir: Path, recorded: Recorded) -> None:
    spec: dict[str, Any] = {}
    if recorded.release:
        spec["release"] = recorded.release
    spec["flags"] = recorded.flags.to_doc()
    if recorded.reused:
        spec["reused"] = {"file": recorded.reused, "from": recorded.reused_from}
        if recorded.chart_values:
            spec["reused"]["chartValues"] = recorded.chart_values
    doc = {"apiVersion": layout.API_VERSION, "kind": "Values", "metadata": {"name": "values"}, "spec": spec}
    (spec_dir / VALUES_FILE).write_text(yamlio.dump(doc), encoding="utf-8")


def read(spec_dir: Path) -> Recorded:
    """The recorded values of a render (none recorded: the package's release, no flags)."""
    path = spec_dir / VALUES_FILE
    if not path.is_file():
        return Recorded()
    docs = yamlio.load_file(path)
    body = docs[0].body if docs else None
    spec = body.get("spec") if isinstance(body, dict) else None
    if not isinstance(spec, dict):
        raise InputError("not a values record berth wrote; re-run berth install setup", str(path))
    reused: dict[str, Any] = spec["reused"] if isinstance(spec.get("reused"), dict) else {}
    return Recorded(
        str(spec["release"]) if spec.get("release") else None,
        ValueFlags.from_doc(spec.get("flags"), str(path)),
        str(reused["file"]) if reused.get("file") else None,
        str(reused["chartValues"]) if reused.get("chartValues") else None,
        str(reused.get("from") or ""),
    )


def decide(
    old_spec: Path, new_spec: Path, release: str | None, flags: ValueFlags | None, reuse: Reused | None
) -> Recorded:
    """The values of a new render in ``new_spec`` (files copied there): new flags replace the recorded ones, no
    flags keep them (as answers are kept, and as ``helm upgrade`` without values reuses the last ones); with a
    reuse mode only the flags given now count, and the previous release's values go under them."""
    prior = read(old_spec)
    if flags is None and reuse is not None and reuse.mode != Reuse.DEFAULT:
        kept = (
            ValueFlags()
        )  # Helm's new values are only the flags given now; the reused config holds the rest
    elif flags is None:
        kept = prior.flags
        if (old_spec / VALUES_DIR).is_dir():
            names = [*kept.values, *(p for e in kept.set_file for _, p in _split_set_file(e))]
            (new_spec / VALUES_DIR).mkdir(parents=True, exist_ok=True)
            for name in names:
                shutil.copyfile(old_spec / VALUES_DIR / name, new_spec / VALUES_DIR / name)
    else:
        kept = record(flags, new_spec)
    release_name = release if release is not None else prior.release
    if reuse is None or reuse.mode in (Reuse.DEFAULT, Reuse.RESET):
        return Recorded(release_name, kept)
    reused, chart_values = reuse.record(new_spec)
    return Recorded(release_name, kept, reused, chart_values, reuse.source)


# ---- Helm's coalescing, for reused values ---------------------------------------------------------------------


def coalesce_tables(dst: dict[str, Any], src: dict[str, Any]) -> dict[str, Any]:
    """Helm's ``CoalesceTables(dst, src)``: ``src`` fills what ``dst`` lacks, tables merge, a null in ``dst``
    over a non-null in ``src`` deletes the key. Works on copies."""
    dst, src = copy.deepcopy(dst), copy.deepcopy(src)
    return _coalesce_tables(dst, src)


def _coalesce_tables(dst: dict[str, Any], src: dict[str, Any]) -> dict[str, Any]:
    src_non_null = {k for k, v in src.items() if v is not None}
    for key, val in dst.items():
        if val is None:
            src[key] = None
    for key, val in src.items():
        if key in dst and dst[key] is None and key in src_non_null:
            del dst[key]
        elif key not in dst:
            dst[key] = val
        elif isinstance(val, dict) and isinstance(dst[key], dict):
            _coalesce_tables(dst[key], val)
    return dst


def coalesce_values(chart_values: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Helm's ``CoalesceValues(chart, config)`` for a chart as a release record stores it (no subcharts): the
    config, with the chart's defaults filling what it lacks; a null in the config removes the default."""
    out = copy.deepcopy(config)
    for key, val in copy.deepcopy(chart_values).items():
        if key not in out:
            out[key] = val
        elif out[key] is None:
            del out[key]
        elif isinstance(out[key], dict) and isinstance(val, dict):
            _coalesce_tables(out[key], val)
    return out


# ---- the release record's chart and config, by Helm ----------------------------------------------------------


def release_base(chart_dir: Path, release: str, namespace: str, value_args: list[str]) -> dict[str, Any]:
    """``chart`` and ``config`` of a release as Helm 4 records them: ``helm install --dry-run=client -o json``
    with the render's values arguments (offline; Helm serialises the chart and merges the values itself)."""
    return base_of(helm_mod.install_dry_run(chart_dir, release, namespace, value_args))


def base_of(dry: helm_mod.DryRun) -> dict[str, Any]:
    """The release record's ``chart`` and ``config`` out of an install dry run (:func:`release_base`)."""
    return {"chart": dry.release.get("chart") or {}, "config": dry.release.get("config") or {}}


def write_base(out: Path, base: dict[str, Any]) -> None:
    path = out / BASE_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps(base, separators=(",", ":")).encode("utf-8")
    path.write_bytes(gzip.compress(data, compresslevel=1, mtime=0))  # read only by berth: speed over size


def read_base(out: Path) -> dict[str, Any] | None:
    """The chart and config recorded with a render (None: set up before berth recorded them)."""
    path = out / BASE_FILE
    if not path.is_file():
        return None
    try:
        data = json.loads(gzip.decompress(path.read_bytes()))
    except (OSError, ValueError) as exc:
        raise InputError(f"unreadable release base ({exc}); re-run berth install setup", str(path)) from exc
    return data if isinstance(data, dict) else None


NO_USER_VALUES = RenderValues()
