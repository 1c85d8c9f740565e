"""``berth install package``: a chart becomes a reviewable package folder.

A package folder holds::

    berth-package.yaml                 the manifest (below), decoded strictly: unknown fields are errors
    chart/<name>-<version>.tgz         the locked chart archive (SHA-256 in the manifest)
    bases/<base>/values.yaml           each base's values (absent = the chart's defaults)
    components/<c>/values.yaml         each component's values, layered after the base in declaration order
    bases/<base>/render/...            the base rendered with default inputs: manifests/, secrets/,
                                       lifecycle/<event>/, crds.yaml (the CRD bundle), receipt.yaml

Inputs are typed (string, int, bool, enum) and land in the Helm values at their ``path`` as a separate values
file -- never spliced into YAML text -- so a value cannot inject structure.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from berth.install import chart as chart_mod
from berth.install import helm, layout
from berth.install import values as values_mod
from berth.kube import canonical, yamlio
from berth.kube.errors import InputError, MultiInputError

if TYPE_CHECKING:
    from berth.install import split as split_mod

MANIFEST = "berth-package.yaml"
INPUT_TYPES = ("string", "int", "bool", "enum")
NAME_PATTERN = re.compile(r"^[a-z0-9]([a-z0-9_.-]*[a-z0-9])?$")
"""Base, component and input names: they become folder names and environment variable suffixes."""
INPUT_NAME_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


def check_name(name: str, where: str, pattern: re.Pattern[str] = NAME_PATTERN) -> str | None:
    """A problem message when ``name`` is not a safe identifier, else None."""
    if not pattern.match(name):
        return f"{where}: {name!r} is not a valid name (expected {pattern.pattern})"
    return None


def _unique(names: list[str], where: str) -> list[str]:
    seen: set[str] = set()
    out = []
    for n in names:
        if n in seen:
            out.append(f"{where}: {n!r} is declared twice")
        seen.add(n)
    return out


def _inside(rel: str | None, where: str) -> str | None:
    """A problem message when a relative file path would leave the package root."""
    if rel is None:
        return None
    if Path(rel).is_absolute() or ".." in Path(rel).parts:
        return f"{where}: {rel!r} must be a path inside the package"
    return None


@dataclass(frozen=True)
class Base:
    name: str
    values: str | None = None
    default: bool = False
    description: str = ""


@dataclass(frozen=True)
class Component:
    name: str
    values: str | None = None
    requires: tuple[str, ...] = ()
    conflicts: tuple[str, ...] = ()
    description: str = ""


@dataclass(frozen=True)
class Input:
    name: str
    type: str = "string"
    path: str = ""
    """Dotted path in the Helm values where the value goes (default: the input name)."""
    default: Any = None
    required: bool = False
    prompt: str = ""
    options: tuple[str, ...] = ()
    secret: bool = False
    """A license key, a password: read without echo, never printed, stored owner-only (or as a reference the user
    gives: ``@env:VAR``, ``@file:PATH``; see :mod:`berth.install.wizard`)."""

    @property
    def values_path(self) -> str:
        return self.path or self.name

    def shown(self, raw: Any) -> str:
        """How an error message shows a value: a secret input's never."""
        return "a value (not shown: a secret input)" if self.secret else repr(raw)

    def coerce(self, raw: Any, where: str) -> Any:
        """Parse a value of this input's type; a bad value names the input and the accepted form."""
        if self.type == "int":
            if isinstance(raw, bool):
                raise InputError(f"input {self.name} must be an integer, got {self.shown(raw)}", where)
            try:
                return int(str(raw).strip())
            except ValueError as exc:
                raise InputError(
                    f"input {self.name} must be an integer, got {self.shown(raw)}", where
                ) from exc
        if self.type == "bool":
            if isinstance(raw, bool):
                return raw
            text = str(raw).strip().lower()
            if text in ("true", "yes", "1", "on"):
                return True
            if text in ("false", "no", "0", "off"):
                return False
            raise InputError(f"input {self.name} must be true or false, got {self.shown(raw)}", where)
        if self.type == "enum":
            text = str(raw)
            if text not in self.options:
                raise InputError(
                    f"input {self.name} must be one of {', '.join(self.options)}, got {self.shown(raw)}",
                    where,
                )
            return text
        return str(raw)


@dataclass(frozen=True)
class Collector:
    command: tuple[str, ...]
    timeout_seconds: int = 60
    description: str = ""


@dataclass(frozen=True)
class ChartLock:
    name: str
    version: str
    archive: str
    sha256: str
    source: str


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    release: str
    namespace: str
    """The release namespace the package names ("" when it names none: setup takes Helm's default)."""
    kube_version: str
    chart: ChartLock
    bases: tuple[Base, ...]
    components: tuple[Component, ...] = ()
    inputs: tuple[Input, ...] = ()
    collector: Collector | None = None
    root: Path = field(default=Path("."), compare=False)

    def base(self, name: str) -> Base:
        for b in self.bases:
            if b.name == name:
                return b
        raise InputError(
            f"unknown base {name!r}; this package has: {', '.join(b.name for b in self.bases)}", "--base"
        )

    def component(self, name: str) -> Component:
        for c in self.components:
            if c.name == name:
                return c
        have = ", ".join(c.name for c in self.components) or "none"
        raise InputError(f"unknown component {name!r}; this package has: {have}", "--select")

    def to_dict(self) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "release": self.release,
            "namespace": self.namespace,
            "kubeVersion": self.kube_version,
            "chart": {
                "name": self.chart.name,
                "version": self.chart.version,
                "archive": self.chart.archive,
                "sha256": self.chart.sha256,
                "source": self.chart.source,
            },
            "bases": [
                _drop_empty(
                    {
                        "name": b.name,
                        "values": b.values,
                        "default": b.default or None,
                        "description": b.description,
                    }
                )
                for b in self.bases
            ],
        }
        if not self.namespace:
            del spec["namespace"]  # the package names none: Helm's default applies at setup
        if self.components:
            spec["components"] = [
                _drop_empty(
                    {
                        "name": c.name,
                        "values": c.values,
                        "requires": list(c.requires),
                        "conflicts": list(c.conflicts),
                        "description": c.description,
                    }
                )
                for c in self.components
            ]
        if self.inputs:
            spec["inputs"] = [
                _drop_empty(
                    {
                        "name": i.name,
                        "type": i.type,
                        "path": i.path,
                        "default": i.default,
                        "required": i.required or None,
                        "prompt": i.prompt,
                        "options": list(i.options),
                        "secret": i.secret or None,
                    }
                )
                for i in self.inputs
            ]
        if self.collector:
            spec["collector"] = _drop_empty(
                {
                    "command": list(self.collector.command),
                    "timeoutSeconds": self.collector.timeout_seconds,
                    "description": self.collector.description,
                }
            )
        return {
            "apiVersion": layout.API_VERSION,
            "kind": "Package",
            "metadata": {"name": self.name, "version": self.version},
            "spec": spec,
        }


def _drop_empty(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v not in (None, "", [], ())}


class _Reader:
    """Strict decoding with field paths; collects every problem before failing."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.problems: list[str] = []

    def map(self, value: Any, path: str, allowed: set[str], required: tuple[str, ...] = ()) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.problems.append(f"{path}: must be a mapping")
            return {}
        for key in value:
            if key not in allowed:
                self.problems.append(f"{path}.{key}: unknown field (allowed: {', '.join(sorted(allowed))})")
        for key in required:
            if value.get(key) in (None, ""):
                self.problems.append(f"{path}.{key}: required")
        return value

    def strings(self, value: Any, path: str) -> tuple[str, ...]:
        if value is None:
            return ()
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.problems.append(f"{path}: must be a list of strings")
            return ()
        return tuple(value)

    def list(self, value: Any, path: str) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            self.problems.append(f"{path}: must be a list")
            return []
        return value


def parse_spec_parts(
    spec: dict[str, Any], r: _Reader, prefix: str
) -> tuple[tuple[Component, ...], tuple[Input, ...], Collector | None]:
    """components, inputs and collector: shared by the manifest and the ``package --spec`` file."""
    components: list[Component] = []
    for i, c in enumerate(r.list(spec.get("components"), f"{prefix}.components")):
        p = f"{prefix}.components[{i}]"
        c = r.map(c, p, {"name", "values", "requires", "conflicts", "description"}, ("name",))
        components.append(
            Component(
                str(c.get("name", "")),
                c.get("values"),
                r.strings(c.get("requires"), f"{p}.requires"),
                r.strings(c.get("conflicts"), f"{p}.conflicts"),
                str(c.get("description") or ""),
            )
        )
    names = [c.name for c in components]
    r.problems += _unique(names, f"{prefix}.components")
    for i, c in enumerate(components):
        problem = check_name(c.name, f"{prefix}.components[{i}].name")
        if problem:
            r.problems.append(problem)
        for dep in (*c.requires, *c.conflicts):
            if dep not in names:
                r.problems.append(f"{prefix}.components[{i}]: refers to unknown component {dep!r}")
    inputs: list[Input] = []
    for i, raw in enumerate(r.list(spec.get("inputs"), f"{prefix}.inputs")):
        p = f"{prefix}.inputs[{i}]"
        d = r.map(
            raw, p, {"name", "type", "path", "default", "required", "prompt", "options", "secret"}, ("name",)
        )
        typ = str(d.get("type") or "string")
        if typ not in INPUT_TYPES:
            r.problems.append(f"{p}.type: {typ!r} is not one of {', '.join(INPUT_TYPES)}")
            typ = "string"
        options = r.strings(d.get("options"), f"{p}.options")
        if typ == "enum" and not options:
            r.problems.append(f"{p}.options: an enum input needs options")
        inp = Input(
            str(d.get("name", "")),
            typ,
            str(d.get("path") or ""),
            d.get("default"),
            bool(d.get("required", False)),
            str(d.get("prompt") or ""),
            options,
            bool(d.get("secret", False)),
        )
        if inp.secret and inp.default is not None:
            r.problems.append(
                f"{p}.default: a secret input has no default (it would be written in the package)"
            )
        elif inp.default is not None:
            try:
                inp = dataclasses.replace(inp, default=inp.coerce(inp.default, p))
            except InputError as exc:
                r.problems.append(f"{p}.default: {exc}")
        problem = check_name(inp.name, f"{p}.name", INPUT_NAME_PATTERN)
        if problem:
            r.problems.append(problem)
        inputs.append(inp)
    r.problems += _unique([i.name for i in inputs], f"{prefix}.inputs")
    collector = None
    if spec.get("collector") is not None:
        p = f"{prefix}.collector"
        d = r.map(spec["collector"], p, {"command", "timeoutSeconds", "description"}, ("command",))
        cmd = r.strings(d.get("command"), f"{p}.command")
        collector = Collector(cmd, int(d.get("timeoutSeconds") or 60), str(d.get("description") or ""))
    return tuple(components), tuple(inputs), collector


def load(root: Path) -> Package:
    """Read and strictly validate ``berth-package.yaml`` in ``root``."""
    path = root / MANIFEST
    if not path.is_file():
        raise InputError(f"not a berth package: no {MANIFEST}", str(root))
    docs = yamlio.load_file(path)
    r = _Reader(str(path))
    top = r.map(
        docs[0].body if docs else None, "", {"apiVersion", "kind", "metadata", "spec"}, ("metadata", "spec")
    )
    if top.get("apiVersion") != layout.API_VERSION or top.get("kind") != "Package":
        r.problems.append(f"apiVersion/kind: must be {layout.API_VERSION} Package")
    meta = r.map(top.get("metadata"), "metadata", {"name", "version"}, ("name", "version"))
    spec = r.map(
        top.get("spec"),
        "spec",
        {"release", "namespace", "kubeVersion", "chart", "bases", "components", "inputs", "collector"},
        ("chart", "bases"),
    )
    ch = r.map(
        spec.get("chart"),
        "spec.chart",
        {"name", "version", "archive", "sha256", "source"},
        ("name", "version", "archive", "sha256"),
    )
    bases: list[Base] = []
    for i, b in enumerate(r.list(spec.get("bases"), "spec.bases")):
        b = r.map(b, f"spec.bases[{i}]", {"name", "values", "default", "description"}, ("name",))
        bases.append(
            Base(
                str(b.get("name", "")),
                b.get("values"),
                bool(b.get("default", False)),
                str(b.get("description") or ""),
            )
        )
    if not bases:
        r.problems.append("spec.bases: at least one base is required")
    r.problems += _unique([b.name for b in bases], "spec.bases")
    for i, b in enumerate(bases):
        for problem in (
            check_name(b.name, f"spec.bases[{i}].name"),
            _inside(b.values, f"spec.bases[{i}].values"),
        ):
            if problem:
                r.problems.append(problem)
    if sum(b.default for b in bases) > 1:
        r.problems.append("spec.bases: at most one base may be the default")
    components, inputs, collector = parse_spec_parts(spec, r, "spec")
    for i, c in enumerate(components):
        problem = _inside(c.values, f"spec.components[{i}].values")
        if problem:
            r.problems.append(problem)
    if ch.get("archive"):
        problem = _inside(str(ch["archive"]), "spec.chart.archive")
        if problem:
            r.problems.append(problem)
    if r.problems:
        raise MultiInputError(r.problems, f"invalid {path}")
    pkg = Package(
        str(meta["name"]),
        str(meta["version"]),
        str(spec.get("release") or meta["name"]),
        str(spec.get("namespace") or ""),
        str(spec.get("kubeVersion") or helm.KUBE_VERSION),
        ChartLock(
            str(ch["name"]),
            str(ch["version"]),
            str(ch["archive"]),
            str(ch["sha256"]),
            str(ch.get("source") or ""),
        ),
        tuple(bases),
        components,
        inputs,
        collector,
        root,
    )
    archive = root / pkg.chart.archive
    if not archive.is_file():
        raise InputError("the locked chart archive is missing", str(archive))
    actual = chart_mod.sha256_file(archive)
    if actual != pkg.chart.sha256:
        raise InputError(f"chart archive SHA-256 is {actual}, the lock says {pkg.chart.sha256}", str(archive))
    return pkg


def input_values(inputs: tuple[Input, ...], answers: dict[str, Any]) -> dict[str, Any]:
    """Nested Helm values from typed answers, one scalar per dotted path."""
    out: dict[str, Any] = {}
    for inp in inputs:
        if inp.name not in answers:
            continue
        node = out
        parts = inp.values_path.split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = answers[inp.name]
    return out


def render_request(
    pkg: Package,
    chart_dir: Path,
    base: str,
    components: tuple[str, ...],
    answers: dict[str, Any],
    namespace: str,
    scratch: Path,
    is_upgrade: bool = False,
    api_versions: tuple[str, ...] = (),
    user: values_mod.RenderValues = values_mod.NO_USER_VALUES,
    chart_crds: bool = True,
) -> helm.RenderRequest:
    """The render of one selection: reused release values (an upgrade's), base values, then components in
    declaration order, then the inputs file, then the user's values flags (:mod:`berth.install.values`);
    ``api_versions`` (the selection's ``--api-versions``) join the chart's own CRDs in ``.Capabilities``
    (``chart_crds=False``: they do not, the caller adds them with :func:`berth.install.helm.capability_api_versions`
    -- setup first starts Helm's install dry run, which takes no ``.Capabilities``)."""
    files: list[Path] = list(user.first)
    b = pkg.base(base)
    if b.values:
        files.append(pkg.root / b.values)
    for c in pkg.components:
        if c.name in components and c.values:
            files.append(pkg.root / c.values)
    values = input_values(pkg.inputs, answers)
    if values:
        scratch.mkdir(parents=True, exist_ok=True)
        inputs_file = scratch / "inputs-values.yaml"
        fd = os.open(inputs_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # it may hold secret inputs
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(yamlio.dump(values))
        files.append(inputs_file)
    label = [f"base {base}" + (f" ({b.values})" if b.values else " (the chart's values)")]
    chosen = [c.name for c in pkg.components if c.name in components]
    if chosen:
        label.append(f"components {', '.join(chosen)}")
    if values:
        label.append(f"inputs {', '.join(sorted(answers))}")
    if user.flags:
        label.append("values flags")
    return helm.RenderRequest(
        chart_dir, user.release or pkg.release, namespace, tuple(files), tuple(user.flags.args()),
        kube_version=pkg.kube_version, is_upgrade=is_upgrade,
        api_versions=(*(helm.capability_api_versions(chart_dir) if chart_crds else ()), *api_versions),
        label="; ".join(label),
    )  # fmt: skip


def images(obj: Any) -> set[str]:
    """Container images found structurally: every ``containers``/``initContainers``/``ephemeralContainers`` list."""
    found: set[str] = set()
    if isinstance(obj, dict):
        for key, value in obj.items():
            if key in ("containers", "initContainers", "ephemeralContainers") and isinstance(value, list):
                for c in value:
                    if isinstance(c, dict) and isinstance(c.get("image"), str):
                        found.add(c["image"])
            found |= images(value)
    elif isinstance(obj, list):
        for item in obj:
            found |= images(item)
    return found


def receipt(
    pkg_name: str,
    lock: ChartLock,
    base: str,
    values_sha: str | None,
    result: split_mod.Split,
    written: list[layout.WrittenFile],
    render: helm.Render,
    kube_version: str,
) -> dict[str, Any]:
    """What was generated, checkable later: SHA-256 of every file, identities, counts and images."""
    all_images: set[str] = set()
    for o in result.all_objects():
        all_images |= images(o.body)
    return {
        "apiVersion": layout.API_VERSION,
        "kind": "GenerationReceipt",
        "metadata": {"name": f"{pkg_name}-{base}"},
        "spec": {
            "chart": lock.name,
            "version": lock.version,
            "chartSha256": lock.sha256,
            "renderer": {
                "name": "helm",
                "version": render.helm_version,
                "kubeVersion": kube_version,
                "flags": ["--include-crds"],
            },
            "base": base,
            "valuesSha256": values_sha,
            "counts": {
                "total": len(result.all_objects()),
                "ordinary": len(result.ordinary),
                "crds": len(result.crds),
                "secrets": len(result.secrets),
                "hooks": len(result.hooks),
                "hookJobs": sum(1 for h in result.hooks if h.obj.kind == "Job"),
            },
            "images": sorted(all_images),
            "imagesPinnedByDigest": all("@sha256:" in i for i in all_images),
            "warnings": list(result.warnings),
            "files": [
                {"path": w.path, "sha256": w.sha256, "object": w.ref.key}
                for w in sorted(written, key=lambda w: w.path)
            ],
        },
    }


def read_spec_file(
    path: Path,
) -> tuple[tuple[Component, ...], tuple[Input, ...], Collector | None, dict[str, Any]]:
    """The optional ``package --spec`` file: components (values relative to it), inputs, collector, release, namespace."""
    docs = yamlio.load_file(path)
    r = _Reader(str(path))
    body = r.map(
        docs[0].body if docs else {}, "", {"components", "inputs", "collector", "release", "namespace"}
    )
    comps, inputs, collector = parse_spec_parts(body, r, "")
    if r.problems:
        raise MultiInputError(r.problems, f"invalid {path}")
    extras = {k: body[k] for k in ("release", "namespace") if body.get(k)}
    return comps, inputs, collector, extras


def build(
    chart_ref: str,
    bases: list[tuple[str, Path | None]],
    out: Path,
    version: str | None = None,
    repo: str | None = None,
    spec_file: Path | None = None,
    namespace: str | None = None,
    carry: Package | None = None,
    review_renders: bool = True,
) -> Package:
    """Build a package folder at ``out`` (written to a temp folder first, then moved into place). ``carry``: take
    components (with their values files), inputs, collector, release and namespace from that package instead of a
    spec file (:func:`rebase`). ``review_renders=False`` leaves out ``bases/<b>/render/`` (a work dir's own package,
    whose render ``W/out`` holds; :func:`restore_base_renders` writes them when wanted)."""
    if not bases:
        bases = [("default", None)]
    names = [b for b, _ in bases]
    if len(set(names)) != len(names):
        raise InputError("each --base name may be given once", "--base")
    for n in names:
        problem = check_name(n, "--base")
        if problem:
            raise InputError(problem)
    # Built beside ``out`` when its folder exists, so the finished package is renamed into place, not copied.
    beside = out.parent if out.parent.is_dir() else None
    with tempfile.TemporaryDirectory(prefix=f".{out.name}.build-", dir=beside) as tmp_s:
        tmp = Path(tmp_s)
        stage = tmp / "pkg"
        (stage / "chart").mkdir(parents=True)
        # The archive is written where the package keeps it (no copy, and no folder of its own to remove).
        lock_src = chart_mod.resolve(
            chart_ref, tmp / "src", version, repo, extract=review_renders, archive_dir=stage / "chart"
        )
        comps: tuple[Component, ...] = ()
        inputs: tuple[Input, ...] = ()
        collector: Collector | None = None
        extras: dict[str, Any] = {}
        if spec_file is not None:
            comps, inputs, collector, extras = read_spec_file(spec_file)
            copied = []
            for c in comps:
                rel = None
                if c.values:
                    src = (spec_file.parent / c.values).resolve()
                    helm.check_values_file(src)
                    rel = f"components/{c.name}/values.yaml"
                    (stage / rel).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(src, stage / rel)
                copied.append(Component(c.name, rel, c.requires, c.conflicts, c.description))
            comps = tuple(copied)
        elif carry is not None:
            comps = tuple(_carry_component(c, carry.root, stage) for c in carry.components)
            inputs, collector = carry.inputs, carry.collector
            extras = {"release": carry.release, "namespace": carry.namespace}
        archive_rel = f"chart/{lock_src.archive.name}"
        base_objs: list[Base] = []
        for i, (bname, values) in enumerate(bases):
            rel = None
            if values is not None:
                helm.check_values_file(values)
                rel = f"bases/{bname}/values.yaml"
                (stage / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(values, stage / rel)
            base_objs.append(Base(bname, rel, i == 0))
        lock = ChartLock(lock_src.name, lock_src.version, archive_rel, lock_src.sha256, chart_ref)
        ns = namespace or str(extras.get("namespace") or "")
        pkg = Package(
            lock_src.name,
            lock_src.version,
            str(extras.get("release") or lock_src.name),
            ns,
            helm.KUBE_VERSION,
            lock,
            tuple(base_objs),
            comps,
            inputs,
            collector,
            stage,
        )
        if review_renders:
            write_base_renders(pkg, lock_src.directory, tmp / "scratch")
        (stage / MANIFEST).write_text(yamlio.dump(pkg.to_dict()), encoding="utf-8")
        if out.exists() and not (out / MANIFEST).is_file() and any(out.iterdir()):
            raise InputError("output folder exists and is not a berth package; choose another -o", str(out))
        _move_into_place(stage, out)
    return load(out)


def _carry_component(c: Component, root: Path, stage: Path) -> Component:
    """A component of another package, its values file copied into ``stage``."""
    if not c.values:
        return c
    rel = f"components/{c.name}/values.yaml"
    (stage / rel).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(root / c.values, stage / rel)
    return Component(c.name, rel, c.requires, c.conflicts, c.description)


def rebase(
    old: Package,
    chart_ref: str,
    out: Path,
    version: str | None = None,
    repo: str | None = None,
    namespace: str | None = None,
    review_renders: bool = True,
) -> Package:
    """``old`` with its chart replaced by ``chart_ref``: its bases (values files), components, inputs, collector,
    release and namespace carried over, so an upgrade to a newer chart keeps what the user chose (``--pull`` of a
    bare chart would otherwise give a package with only the chart's defaults). The default base stays the default."""
    bases = sorted(old.bases, key=lambda b: not b.default)  # build makes the first base the default
    return build(
        chart_ref,
        [(b.name, old.root / b.values if b.values else None) for b in bases],
        out,
        version,
        repo,
        namespace=namespace or old.namespace,
        carry=old,
        review_renders=review_renders,
    )


def write_base_renders(pkg: Package, chart_dir: Path, scratch: Path) -> None:
    """Render every base with the default inputs into ``bases/<b>/render/`` of the package at ``pkg.root``: the
    split render, ``crds.yaml`` and ``receipt.yaml`` -- the review copy a package carries."""
    from berth.install import split as split_mod  # not on setup's way to Helm (it imports it while Helm runs)

    defaults = {i.name: i.default for i in pkg.inputs if i.default is not None}
    requests = [
        render_request(pkg, chart_dir, b.name, (), defaults, pkg.namespace or "default", scratch / b.name)
        for b in pkg.bases
    ]
    for b, rendered in zip(pkg.bases, helm.render_all(requests), strict=True):
        result = split_mod.from_render(rendered.text, rendered.dropped_hook_events)
        root = pkg.root / "bases" / b.name / "render"
        written = layout.write_split(result, root, f"{pkg.name}-{b.name}")
        bundle = yamlio.dump_all(c.body for c in result.crds)
        (root / "crds.yaml").write_text(bundle, encoding="utf-8")
        values_sha = chart_mod.sha256_file(pkg.root / b.values) if b.values else None
        rec = receipt(pkg.name, pkg.chart, b.name, values_sha, result, written, rendered, pkg.kube_version)
        (root / "receipt.yaml").write_text(yamlio.dump(rec), encoding="utf-8")


def restore_base_renders(package_dir: Path) -> None:
    """Render the base review copies again into a package kept without them (a work dir's revisions keep packages
    without ``bases/<b>/render/``: the archive and values files reproduce them, and renders are deterministic)."""
    pkg = load(package_dir)
    with tempfile.TemporaryDirectory(prefix="berth-base-renders-") as tmp_s:
        tmp = Path(tmp_s)
        chart_dir = chart_mod.safe_extract(pkg.root / pkg.chart.archive, tmp / "chart")
        write_base_renders(pkg, chart_dir, tmp / "scratch")


def _move_into_place(stage: Path, out: Path) -> None:
    """Put the finished package at ``out``: renamed there when there is none yet; else moved beside it first
    (renamed when the stage is on the same file system, else copied), then swapped in by renames, so a failed or
    interrupted move leaves the previous package whole."""
    out.parent.mkdir(parents=True, exist_ok=True)
    if not out.exists():
        try:
            stage.rename(out)  # nothing to keep whole: one rename puts it in place
            return
        except OSError:
            pass  # another file system (or ``out`` appeared meanwhile): the moves below
    new = Path(tempfile.mkdtemp(prefix=f".{out.name}.new-", dir=out.parent))
    old = out.with_name(f".{out.name}.old")
    try:
        try:
            new.rmdir()
            stage.rename(new)  # built on the same file system: no copy
        except OSError:
            new.mkdir(exist_ok=True)
            shutil.copytree(stage, new, dirs_exist_ok=True)
        shutil.rmtree(old, ignore_errors=True)
        if out.exists():
            out.rename(old)
        try:
            new.rename(out)
        except OSError:
            if old.exists():
                old.rename(out)
            raise
    finally:
        shutil.rmtree(new, ignore_errors=True)
    shutil.rmtree(old, ignore_errors=True)


def run_collector(pkg: Package, env: dict[str, str]) -> dict[str, Any]:
    """Run the package's collector command (cwd = package root) with a timeout; stdout must be a YAML mapping."""
    assert pkg.collector is not None
    cmd = list(pkg.collector.command)
    try:
        proc = subprocess.run(
            cmd, cwd=pkg.root, env=env, capture_output=True, text=True, timeout=pkg.collector.timeout_seconds
        )
    except subprocess.TimeoutExpired as exc:
        raise InputError(
            f"collector {cmd[0]} did not finish within {pkg.collector.timeout_seconds}s", "spec.collector"
        ) from exc
    except OSError as exc:
        raise InputError(f"cannot run collector {cmd[0]}: {exc}", "spec.collector") from exc
    if proc.returncode != 0:
        raise InputError(
            f"collector {cmd[0]} exited {proc.returncode}: {proc.stderr.strip()}", "spec.collector"
        )
    data = yamlio.load_one(proc.stdout, f"collector {cmd[0]} output")
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InputError("collector output must be a YAML mapping", "spec.collector")
    return data


def values_sha(pkg: Package, base: str) -> str | None:
    b = pkg.base(base)
    return canonical.sha256_text((pkg.root / b.values).read_bytes()) if b.values else None
