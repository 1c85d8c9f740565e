"""The setup wizard: choose base and components, answer typed inputs, remember the answers.

Answers the user gave (flags, prompts, earlier runs) are stored apart from defaults in ``inputs.yaml``: a re-run
re-uses the answers but takes a newer package's defaults, because a default is not a decision. Interactive mode
asks only for inputs without a default.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from berth.install import layout
from berth.install.package import Input, Package
from berth.kube import yamlio
from berth.kube.errors import InputError, MultiInputError

SELECTION_FILE = "selection.yaml"
INPUTS_FILE = "inputs.yaml"
SECRET_INPUTS_FILE = "secret-inputs.yaml"
"""``out/spec/secret-inputs.yaml``: the answers to secret inputs the user typed or gave as values, owner-only (0600)
and git-ignored. Answers given as references (``@env:VAR``, ``@file:PATH``) are stored as the reference in
``inputs.yaml`` instead, and read again at every render."""
REFERENCE = re.compile(r"^@(?P<kind>env|file):(?P<name>.+)$")


@dataclass(frozen=True)
class Selection:
    base: str
    components: tuple[str, ...] = ()
    api_versions: tuple[str, ...] = ()
    """Extra ``.Capabilities.APIVersions`` the renders assume (``--api-versions``, as ``helm template`` takes):
    API groups the target cluster serves beyond a stock one, e.g. ``monitoring.coreos.com/v1`` of an operator."""


@dataclass(frozen=True)
class Answers:
    given: dict[str, Any] = field(default_factory=dict)
    """Values the user chose (now or in an earlier run); a secret input given by reference keeps the reference."""
    defaulted: dict[str, Any] = field(default_factory=dict)
    """Values taken from the package's defaults this run (not remembered as answers)."""
    secret: frozenset[str] = frozenset()
    """The names of the package's secret inputs (stored apart, never printed)."""
    resolved: dict[str, Any] = field(default_factory=dict)
    """The values behind the references among ``given`` (read now, never stored)."""

    @property
    def effective(self) -> dict[str, Any]:
        return {**self.defaulted, **self.given, **self.resolved}


def is_reference(value: Any) -> bool:
    return isinstance(value, str) and REFERENCE.match(value) is not None


def resolve_reference(inp: Input, ref: str) -> Any:
    """The value a secret input's reference points at: ``@env:VAR`` (the variable must be set) or ``@file:PATH``
    (its text, one trailing newline dropped), coerced to the input's type. Errors name the reference, never a value."""
    m = REFERENCE.match(ref)
    assert m is not None
    kind, name = m.group("kind"), m.group("name")
    where = f"input {inp.name} ({ref})"
    if kind == "env":
        value = os.environ.get(name)
        if value is None:
            raise InputError(
                f"the environment variable {name} is not set; export it before this command", where
            )
    else:
        try:
            value = Path(name).expanduser().read_text(encoding="utf-8").removesuffix("\n")
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read {name}: {getattr(exc, 'strerror', None) or exc}", where) from exc
    return inp.coerce(value, where)


def read_prior(spec_dir: Path) -> tuple[Selection | None, dict[str, Any]]:
    """The selection and the user's answers of an earlier run in this work dir, if any."""
    selection = None
    answers: dict[str, Any] = {}
    sel_path = spec_dir / SELECTION_FILE
    if sel_path.is_file():
        docs = yamlio.load_file(sel_path)
        spec = (docs[0].body or {}).get("spec") if docs and isinstance(docs[0].body, dict) else None
        if isinstance(spec, dict) and spec.get("base"):
            selection = Selection(
                str(spec["base"]),
                tuple(str(c) for c in spec.get("components") or ()),
                tuple(str(v) for v in spec.get("apiVersions") or ()),
            )
    for name in (INPUTS_FILE, SECRET_INPUTS_FILE):
        in_path = spec_dir / name
        if in_path.is_file():
            docs = yamlio.load_file(in_path)
            spec = (docs[0].body or {}).get("spec") if docs and isinstance(docs[0].body, dict) else None
            if isinstance(spec, dict) and isinstance(spec.get("values"), dict):
                answers.update(spec["values"])
    return selection, answers


def stored_answers(spec_dir: Path, pkg: Package) -> dict[str, Any]:
    """A render's effective answers as its spec records them: defaults, answers (secret ones from their own file)
    and references resolved now."""
    docs = yamlio.load_file(spec_dir / INPUTS_FILE)
    spec = (docs[0].body or {}).get("spec") or {}
    _, given = read_prior(spec_dir)
    out = {**(spec.get("defaults") or {}), **given}
    for inp in pkg.inputs:
        if inp.secret and is_reference(out.get(inp.name)):
            out[inp.name] = resolve_reference(inp, str(out[inp.name]))
    return out


def select(
    pkg: Package,
    base: str | None,
    selects: tuple[str, ...],
    prior: Selection | None,
    api_versions: tuple[str, ...] | None = None,
) -> Selection:
    """The base (flag, else earlier run, else the default, else the only one) and components with ``requires``
    closed over and ``conflicts`` checked both ways; components keep the package's declaration order. Extra API
    versions: the flags' (comma-separated, as helm's), else the earlier run's."""
    if base is None and prior is not None:
        if not any(b.name == prior.base for b in pkg.bases):
            raise InputError(
                f"this work dir was set up with base {prior.base!r}, which package {pkg.name} {pkg.version} does "
                f"not have (it has: {', '.join(b.name for b in pkg.bases)}); choose one with --base NAME",
                "--base",
            )
        base = prior.base
    if base is None:
        defaults = [b for b in pkg.bases if b.default]
        if defaults:
            base = defaults[0].name
        elif len(pkg.bases) == 1:
            base = pkg.bases[0].name
        else:
            raise InputError(f"choose a base with --base ({', '.join(b.name for b in pkg.bases)})", "--base")
    pkg.base(base)
    wanted = list(selects)
    if not selects and prior is not None:
        gone = [c for c in prior.components if not any(x.name == c for x in pkg.components)]
        if gone:
            raise InputError(
                f"this work dir was set up with component(s) {', '.join(gone)}, which package {pkg.name} "
                f"{pkg.version} does not have (it has: {', '.join(c.name for c in pkg.components) or 'none'}); "
                "choose the components with --select NAME (repeatable)",
                "--select",
            )
        wanted = list(prior.components)
    chosen: list[str] = []
    todo = list(wanted)
    while todo:
        name = todo.pop(0)
        comp = pkg.component(name)
        if name in chosen:
            continue
        chosen.append(name)
        todo.extend(comp.requires)
    problems = []
    for name in chosen:
        for other in pkg.component(name).conflicts:
            if other in chosen:
                problems.append(f"component {name} conflicts with {other}; select only one of them")
    if problems:
        raise MultiInputError(sorted(set(problems)), "conflicting components")
    ordered = tuple(c.name for c in pkg.components if c.name in chosen)
    if api_versions is None:
        extra = prior.api_versions if prior is not None else ()
    else:
        extra = parse_api_versions(api_versions)
    return Selection(base, ordered, extra)


_API_VERSION = re.compile(r"(?:[a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?v[0-9]+[a-z0-9]*(?:/[A-Z][A-Za-z0-9]*)?")


def parse_api_versions(flags: tuple[str, ...]) -> tuple[str, ...]:
    """``--api-versions`` values, each comma-separated (``group/version`` or ``group/version/Kind``, ``v1`` for
    core), deduplicated in order; an empty flag clears them. Refuses anything else, naming it."""
    out: list[str] = []
    for flag in flags:
        for item in (p.strip() for p in flag.split(",")):
            if not item:
                continue
            if not _API_VERSION.fullmatch(item):
                raise InputError(
                    f'"{item}" is not an API version: use group/version or group/version/Kind '
                    "(e.g. monitoring.coreos.com/v1 or monitoring.coreos.com/v1/ServiceMonitor)",
                    "--api-versions",
                )
            if item not in out:
                out.append(item)
    return tuple(out)


def parse_input_flags(flags: tuple[str, ...]) -> dict[str, str]:
    """``--input KEY=VALUE`` (split once on ``=``; commas are part of the value)."""
    out: dict[str, str] = {}
    for flag in flags:
        key, sep, value = flag.partition("=")
        if not sep or not key:
            raise InputError(f"expected KEY=VALUE, got {flag!r}", "--input")
        out[key.strip()] = value
    return out


def answer(
    pkg: Package,
    given: dict[str, str],
    prior: dict[str, Any],
    prompt: Callable[[Input], str] | None,
) -> Answers:
    """Resolve every input: flag, else earlier answer (re-validated), else default, else ask (when ``prompt``)."""
    known = {i.name for i in pkg.inputs}
    problems = [
        f"unknown input {k!r} (this package has: {', '.join(sorted(known)) or 'none'})"
        for k in given
        if k not in known
    ]
    answers: dict[str, Any] = {}
    defaulted: dict[str, Any] = {}
    resolved: dict[str, Any] = {}
    for inp in pkg.inputs:
        try:
            raw, where = (
                (given[inp.name], f"--input {inp.name}")
                if inp.name in given
                else (prior[inp.name], f"earlier answer {inp.name}")
                if inp.name in prior
                else (None, "")
            )
            if raw is not None and inp.secret and is_reference(raw):
                answers[inp.name] = raw
                resolved[inp.name] = resolve_reference(inp, str(raw))
            elif raw is not None:
                answers[inp.name] = inp.coerce(raw, where)
            elif inp.default is not None:
                defaulted[inp.name] = inp.default
            elif prompt is not None:
                raw = prompt(inp)
                if raw != "" and inp.secret and is_reference(raw):
                    answers[inp.name] = raw
                    resolved[inp.name] = resolve_reference(inp, raw)
                elif raw != "":
                    answers[inp.name] = inp.coerce(raw, f"answer {inp.name}")
                elif inp.required:
                    problems.append(f"missing required input {inp.name}: pass --input {inp.name}=VALUE")
            elif inp.required:
                problems.append(f"missing required input {inp.name}: pass --input {inp.name}=VALUE")
        except InputError as exc:
            problems.append(str(exc))
    if problems:
        raise MultiInputError(problems, "inputs")
    return Answers(answers, defaulted, frozenset(i.name for i in pkg.inputs if i.secret), resolved)


def spec_doc(pkg: Package, kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": layout.API_VERSION,
        "kind": kind,
        "metadata": {"name": f"{pkg.name}-{kind.lower()}"},
        "spec": {"package": pkg.name, "packageVersion": pkg.version, **spec},
    }


def write(spec_dir: Path, pkg: Package, selection: Selection, answers: Answers, namespace: str) -> None:
    spec_dir.mkdir(parents=True, exist_ok=True)
    chosen: dict[str, Any] = {"base": selection.base, "components": list(selection.components)}
    if selection.api_versions:
        chosen["apiVersions"] = list(selection.api_versions)
    sel = spec_doc(pkg, "Selection", chosen)
    (spec_dir / SELECTION_FILE).write_text(yamlio.dump(sel), encoding="utf-8")
    plain = {k: v for k, v in answers.given.items() if k not in answers.secret or is_reference(v)}
    hidden = {k: v for k, v in answers.given.items() if k not in plain}
    inputs = spec_doc(pkg, "Inputs", {"namespace": namespace, "values": plain, "defaults": answers.defaulted})
    (spec_dir / INPUTS_FILE).write_text(yamlio.dump(inputs), encoding="utf-8")
    if hidden:
        text = yamlio.dump(spec_doc(pkg, "SecretInputs", {"values": hidden}))
        fd = os.open(spec_dir / SECRET_INPUTS_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
