"""The package handed to Flux: helm-controller runs the same release with Helm's own hooks.

Flux's helm-controller is the Helm SDK (v4), so every hook rule of the plan holds as is; what the export must
carry over is everything else ``berth install setup`` decided. It writes:

* ``chart/<name>-<version>.tgz``: the package's locked chart archive, byte for byte (its SHA-256 checked);
* ``release/helmchart.yaml``: a ``source.toolkit.fluxcd.io/v1`` HelmChart over that archive in the Git repository
  Flux already follows. A packaged chart from a GitRepository is copied, not repackaged (ChartVersion strategy,
  no values files), so the chart Flux installs is that archive and its artifact digest is the locked SHA-256,
  pinned by the Git commit;
* ``release/helmrelease.yaml``: a ``helm.toolkit.fluxcd.io/v2`` HelmRelease with the release name and namespace,
  the values of the base, the selected components and the inputs merged as Helm merges ``--values`` files, and
  install/upgrade/uninstall options mirroring the plan (timeout per operation, waits only with ``--wait`` as
  Helm 4's default ``hookOnly``, ``crds/`` created on install and never upgraded, the namespace created);
* ``release/kustomization.yaml`` (kustomize) and ``flux-kustomization.yaml``: a ``kustomize.toolkit.fluxcd.io/v1``
  Kustomization that applies ``release/``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from berth.install import export, package, plan
from berth.kube import yamlio
from berth.kube.errors import InputError
from berth.kube.hooks import HookEvent

HELMRELEASE_API = "helm.toolkit.fluxcd.io/v2"
SOURCE_API = "source.toolkit.fluxcd.io/v1"
KUSTOMIZATION_API = "kustomize.toolkit.fluxcd.io/v1"
KUSTOMIZE_API = "kustomize.config.k8s.io/v1beta1"
HISTORY_MAX = 10
"""Helm's ``--history-max`` default, which berth's work dir keeps too (Flux's own default is 5)."""
CHART_SHA_ANNOTATION = "berth.dev/chart-sha256"
WAIT_ON = "on (`--wait`): Helm waits for the release's workloads and Jobs."
WAIT_OFF = (
    "off (`disableWait`), which is Helm 4's default `hookOnly`: hooks are waited on, release objects are not "
    "(export with `--wait` to wait)."
)
WAIT_ON = "on (`--wait`): Helm waits for the release's workloads and Jobs."
WAIT_OFF = (
    "off (`disableWait`), which is Helm 4's default `hookOnly`: hooks are waited on, release objects are not "
    "(export with `--wait` to wait)."
)


@dataclass(frozen=True)
class FluxOptions:
    source: str = "flux-system"
    """The GitRepository Flux follows that holds ``DIR`` (``flux bootstrap`` names it flux-system)."""
    namespace: str = "flux-system"
    """Where the HelmChart, HelmRelease and Kustomization live (the GitRepository's namespace)."""
    interval: str = "10m"
    wait: bool = False
    timeout: int = plan.DEFAULT_HOOK_TIMEOUT_SECONDS


def merge_values(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """``b`` over ``a`` as Helm merges two ``--values`` files (``pkg/cli/values``): maps merge key by key, anything
    else in ``b`` replaces (a null included: it later deletes the chart's default)."""
    out = dict(a)
    for k, v in b.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = merge_values(out[k], v)
        else:
            out[k] = v
    return out


def values_layers(src: export.Source) -> list[tuple[str, dict[str, Any]]]:
    """The values the render used, in Helm's order: the base file, each selected component's (declaration order),
    then the inputs; each with what it is."""
    wd = src.workdir
    pkg = wd.package
    layers: list[tuple[str, dict[str, Any]]] = []
    files: list[tuple[str, str]] = []
    base = pkg.base(wd.selection.base)
    if base.values:
        files.append((f"base {base.name} ({base.values})", base.values))
    for c in pkg.components:
        if c.name in wd.selection.components and c.values:
            files.append((f"component {c.name} ({c.values})", c.values))
    for what, rel in files:
        path = pkg.root / rel
        body = yamlio.load_one(path.read_text(encoding="utf-8"), str(path))
        if body is not None and not isinstance(body, dict):
            raise InputError("a values file must be a mapping", str(path))
        layers.append((what, body or {}))
    inputs = package.input_values(pkg.inputs, wd.answers)
    if inputs:
        layers.append(
            (f"inputs {', '.join(sorted(i.name for i in pkg.inputs if i.name in wd.answers))}", inputs)
        )
    return layers


def duration(seconds: int) -> str:
    return f"{seconds}s"


def helmrelease(src: export.Source, opts: FluxOptions, values: dict[str, Any]) -> dict[str, Any]:
    wd = src.workdir
    timeout = duration(opts.timeout)
    no_wait = not opts.wait
    spec: dict[str, Any] = {
        "interval": opts.interval,
        "chartRef": {"kind": "HelmChart", "name": wd.package.release, "namespace": opts.namespace},
        "releaseName": wd.package.release,
        "targetNamespace": wd.namespace,
        "storageNamespace": wd.namespace,
        "timeout": timeout,
        "maxHistory": HISTORY_MAX,
        "install": {
            "timeout": timeout,
            "crds": "Create",
            "createNamespace": True,
            "disableWait": no_wait,
            "disableWaitForJobs": no_wait,
            "remediation": {"retries": 0},
        },
        "upgrade": {
            "timeout": timeout,
            "crds": "Skip",
            "disableWait": no_wait,
            "disableWaitForJobs": no_wait,
            "remediation": {"retries": 0},
        },
        "uninstall": {
            "timeout": timeout,
            "disableWait": no_wait,
            "keepHistory": False,
            "deletionPropagation": "background",
        },
        "test": {"enable": False},
    }
    if values:
        spec["values"] = values
    return {
        "apiVersion": HELMRELEASE_API,
        "kind": "HelmRelease",
        "metadata": {"name": wd.package.release, "namespace": opts.namespace},
        "spec": spec,
    }


def helmchart(src: export.Source, opts: FluxOptions, chart_path: str) -> dict[str, Any]:
    pkg = src.workdir.package
    return {
        "apiVersion": SOURCE_API,
        "kind": "HelmChart",
        "metadata": {
            "name": pkg.release,
            "namespace": opts.namespace,
            "annotations": {CHART_SHA_ANNOTATION: pkg.chart.sha256},
        },
        "spec": {
            "interval": opts.interval,
            "chart": chart_path,
            "sourceRef": {"kind": "GitRepository", "name": opts.source},
            "reconcileStrategy": "ChartVersion",
        },
    }


def kustomization(src: export.Source, opts: FluxOptions, release_path: str) -> dict[str, Any]:
    return {
        "apiVersion": KUSTOMIZATION_API,
        "kind": "Kustomization",
        "metadata": {"name": f"{src.workdir.package.release}-release", "namespace": opts.namespace},
        "spec": {
            "interval": opts.interval,
            "path": release_path,
            "prune": True,
            "sourceRef": {"kind": "GitRepository", "name": opts.source},
            "wait": True,
            "timeout": duration(opts.timeout),
        },
    }


def files(src: export.Source, dest: Path, opts: FluxOptions) -> list[export.OutFile]:
    pkg = src.workdir.package
    archive = pkg.root / pkg.chart.archive
    data = archive.read_bytes()
    if hashlib.sha256(data).hexdigest() != pkg.chart.sha256:
        raise InputError(
            f"the chart archive no longer has the locked SHA-256 {pkg.chart.sha256}", str(archive)
        )
    path, found = export.repo_path(dest)
    chart_file = f"chart/{PurePosixPath(pkg.chart.archive).name}"
    layers = values_layers(src)
    values: dict[str, Any] = {}
    for _, layer in layers:
        values = merge_values(values, layer)
    kustomize = {
        "apiVersion": KUSTOMIZE_API,
        "kind": "Kustomization",
        "resources": ["helmchart.yaml", "helmrelease.yaml"],
    }
    return [
        export.OutFile(chart_file, data),
        export.yaml_file("release/helmchart.yaml", helmchart(src, opts, f"{path}/{chart_file}")),
        export.yaml_file("release/helmrelease.yaml", helmrelease(src, opts, values)),
        export.yaml_file("release/kustomization.yaml", kustomize),
        export.yaml_file(
            "flux-kustomization.yaml",
            kustomization(src, opts, f"{path}/release"),
            "# Apply this once (or add it to the path your flux-system Kustomization follows): Flux then applies "
            "release/.",
        ),
        export.text_file("README.md", readme(src, opts, path, found, chart_file, layers)),
    ]


def readme(
    src: export.Source,
    opts: FluxOptions,
    path: str,
    found: bool,
    chart_file: str,
    layers: list[tuple[str, dict[str, Any]]],
) -> str:
    wd = src.workdir
    pkg = wd.package
    tests = sum(len(s.objects) for s in src.plans.unmapped if s.phase == HookEvent.TEST.value)
    lines = export.header(src, "Flux")
    lines += [
        "## Use it",
        "",
        f"Commit this folder to the Git repository Flux follows through the GitRepository `{opts.source}` "
        f"(namespace `{opts.namespace}`), then apply `flux-kustomization.yaml` once, or add it to the path your "
        "cluster's own Kustomization follows (but keep `release/` outside that path, or Flux applies it twice).",
        f"It applies `{path}/release`: a HelmChart over `{chart_file}` and a HelmRelease that helm-controller "
        f"installs as release `{pkg.release}` in namespace `{wd.namespace}`.",
    ]
    if not found:
        lines += [
            "",
            f"No Git repository was found above this folder: check that `{path}` is its path in yours (it is in "
            "`release/helmchart.yaml` and `flux-kustomization.yaml`).",
        ]
    lines += [
        "",
        "## The chart",
        "",
        f"`{chart_file}` is the package's locked archive, SHA-256 `{pkg.chart.sha256}`. A packaged chart from a "
        "GitRepository is copied as is (reconcileStrategy ChartVersion, no valuesFiles), so the HelmChart's "
        "artifact is this archive; check it with:",
        "",
        "```sh",
        f"kubectl -n {opts.namespace} get helmchart {pkg.release} -o jsonpath='{{.status.artifact.digest}}'"
        f"   # sha256:{pkg.chart.sha256}",
        "```",
        "",
        "## Values",
        "",
        "`spec.values` holds, merged as Helm merges `--values` files (later wins, maps key by key):",
        "",
        *([f"{n}. {what}" for n, (what, _) in enumerate(layers, 1)] or ["- nothing: the chart's own values"]),
        "",
        "They are plain text in Git: move a sensitive one into a Secret the HelmRelease reads with `valuesFrom`.",
        "",
        "## Options mirroring berth's plan",
        "",
        f"- `timeout: {duration(opts.timeout)}` for each operation (a hook Job, a wait), as the plan's per-hook "
        "timeout.",
        "- waits: " + (WAIT_ON if opts.wait else WAIT_OFF),
        "- `install.crds: Create`, `upgrade.crds: Skip`: `crds/` CRDs are created when absent and never upgraded, "
        "as Helm does.",
        "- `install.createNamespace: true`: the plan ensures the release namespace first.",
        "- `remediation.retries: 0`: a failed install or upgrade stays failed, as with the Helm CLI.",
        f"- `maxHistory: {HISTORY_MAX}`: Helm's default history.",
        "- `test.enable: false`: Helm runs test hooks only on `helm test`"
        + (
            f"; set it to true to run the chart's {tests} test hook(s) after each install and upgrade."
            if tests
            else "."
        ),
        "",
        "Every hook runs under Helm itself (helm-controller is the Helm SDK), in the order berth's plan lists. Flux "
        "renders against the live cluster, where berth rendered offline: `lookup` finds live objects and "
        "`.Capabilities` are the cluster's.",
        "",
    ]
    return "\n".join(lines)


def summary(src: export.Source, dest: Path, opts: FluxOptions) -> list[str]:
    pkg = src.workdir.package
    return [
        f"Exported release {pkg.release} for Flux to {dest}: HelmRelease {opts.namespace}/{pkg.release} "
        f"(namespace {src.workdir.namespace}), HelmChart over chart/{PurePosixPath(pkg.chart.archive).name} "
        f"(sha256 {pkg.chart.sha256[:12]}), Kustomization {opts.namespace}/{pkg.release}-release",
        f"See {dest / 'README.md'}; apply {dest / 'flux-kustomization.yaml'} once.",
    ]


def run(work_dir: Path, dest: Path, opts: FluxOptions) -> list[str]:
    """``berth install export --flux DEST``: write ``DEST`` atomically, return the summary."""
    src = export.load(work_dir, opts.wait, opts.timeout)
    export.write_tree(dest, files(src, dest, opts), "flux")
    return summary(src, dest, opts)
