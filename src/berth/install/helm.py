"""Run the real Helm 4 binary to render a chart: berth never re-implements Go templates.

Every render pins ``--kube-version`` (Helm's compiled-in default would make output depend on the Helm build),
passes ``--include-crds`` (without it the ``crds/`` folder is silently absent) and is run twice: the two outputs
must be byte-identical, or the chart is non-deterministic (``randAlphaNum``, ``now``, ``uuidv4``...) and no plan
built from it could be verified. Helm's template errors are turned into one :class:`InputError` that names the
template file and line.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from berth.kube import tools, yamlio
from berth.kube.errors import InputError, ToolError

KUBE_VERSION = "1.35.0"
"""The Kubernetes version every render assumes (``.Capabilities.KubeVersion``); recorded in facts and receipts."""

HELM_TIMEOUT_SECONDS = 120

_LOCATION = re.compile(
    r"(?P<file>[\w./@+-]+\.(?:ya?ml|tpl|txt|json|gotmpl))(?::| line )(?P<line>\d+)(?::(?P<col>\d+))?"
)
_YAML_ON = re.compile(r"YAML parse error on (?P<file>\S+):")
_UNKNOWN_HOOK = re.compile(r'skipping unknown hooks?"?\s+hookTypes=(?P<types>\S+)')


@dataclass(frozen=True)
class RenderRequest:
    """Everything that determines one ``helm template`` output."""

    chart: Path
    release: str
    namespace: str
    values_files: tuple[Path, ...] = ()
    set_values: tuple[str, ...] = ()
    kube_version: str = KUBE_VERSION
    is_upgrade: bool = False
    api_versions: tuple[str, ...] = ()

    def args(self) -> list[str]:
        """The ``helm template`` arguments (without the binary), in a stable order."""
        out = [
            "template",
            self.release,
            str(self.chart),
            "--namespace",
            self.namespace,
            "--kube-version",
            self.kube_version,
            "--include-crds",
        ]
        if self.is_upgrade:
            out.append("--is-upgrade")
        for api in self.api_versions:
            out += ["--api-versions", api]
        for vf in self.values_files:
            out += ["--values", str(vf)]
        for sv in self.set_values:
            out += ["--set", sv]
        return out


@dataclass(frozen=True)
class Render:
    """One verified render: the text, Helm's own notices and the exact command."""

    text: str
    command: tuple[str, ...]
    helm_version: str
    dropped_hook_events: tuple[str, ...] = field(default=())
    """``helm.sh/hook`` values of documents Helm dropped because an event is unknown (from Helm's log)."""


def check_values_file(path: Path) -> None:
    """Fail early, naming the file, when a values file is missing or not a YAML mapping (Helm's message is vaguer)."""
    try:
        docs = yamlio.load_file(path)
    except InputError as exc:
        raise InputError(f"invalid values file: {exc}") from exc
    if len(docs) > 1:
        raise InputError("a values file must hold one YAML document", str(path))
    if docs and not isinstance(docs[0].body, dict):
        raise InputError(
            f"a values file must be a YAML mapping, got {type(docs[0].body).__name__}", str(path)
        )


def template_error(stderr: str, chart: Path) -> InputError:
    """Turn Helm's error text into one InputError naming the template file and line when Helm gave them."""
    lines = [ln for ln in stderr.strip().splitlines() if ln.strip() and not ln.startswith("Use --debug")]
    lines = [ln for ln in lines if not ln.startswith("level=")]
    message = "\n".join(lines).removeprefix("Error: ").strip() or "helm template failed"
    m = _LOCATION.search(message)
    if m:
        where = f"{m.group('file')}:{m.group('line')}"
        return InputError(f"helm template failed: {message}", where)
    y = _YAML_ON.search(message)
    if y:
        return InputError(f"helm template failed: {message}", y.group("file"))
    return InputError(f"helm template failed: {message}", f"chart {chart.name}")


def render(request: RenderRequest, twice: bool = True) -> Render:
    """Render with the real Helm; with ``twice`` both runs go in parallel and must agree byte for byte."""
    return render_all([request], twice)[0]


def render_all(requests: list[RenderRequest], twice: bool = True) -> list[Render]:
    """Several renders at once (e.g. the install and ``--is-upgrade`` variants): every Helm process starts
    together, since a render is mostly start-up latency, not CPU."""
    for request in requests:
        for vf in request.values_files:
            check_values_file(vf)
    helm = tools.find("helm")
    cmds = [[helm.path, *request.args()] for request in requests]
    runs = 2 if twice else 1
    procs: list[subprocess.Popen[str]] = []
    try:
        for cmd in cmds:
            for _ in range(runs):
                procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        results = [p.communicate(timeout=HELM_TIMEOUT_SECONDS) for p in procs]
    except subprocess.TimeoutExpired as exc:
        for p in procs:
            p.kill()
        raise ToolError(f"helm template did not finish within {HELM_TIMEOUT_SECONDS}s") from exc
    except OSError as exc:
        for p in procs:
            p.kill()
        raise ToolError(f"cannot run {helm.path}: {exc}") from exc
    out: list[Render] = []
    for i, (request, cmd) in enumerate(zip(requests, cmds, strict=True)):
        mine = list(zip(procs[i * runs : (i + 1) * runs], results[i * runs : (i + 1) * runs], strict=True))
        for proc, (_out, err) in mine:
            if proc.returncode != 0:
                raise template_error(err, request.chart)
        texts = [text for _, (text, _err) in mine]
        if any(t != texts[0] for t in texts[1:]):
            raise InputError(
                "two renders of the same chart and values differ (the chart uses randomness or the clock, "
                "e.g. randAlphaNum, uuidv4, now); pin the value in a values file so the output is reproducible",
                f"chart {request.chart.name}",
            )
        dropped = tuple(m.group("types") for m in _UNKNOWN_HOOK.finditer(mine[0][1][1]))
        out.append(Render(texts[0], tuple(cmd), helm.version, dropped))
    return out
