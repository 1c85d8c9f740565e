"""``berth install``: command-line surface of the install part (one action per module, this file only wires)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from berth import cliopts
from berth.install import live_cli
from berth.kube.errors import InputError
from berth.lazycli import LazyCommands

ACTIONS = ("install", "upgrade", "uninstall", "rollback", "test")


@click.group(
    "install",
    cls=cliopts.Group,
    # the report's HTML timeline is imported only when that command runs (or --help lists it)
    commands=LazyCommands({"report": "berth.install.report:report_command"}),
    examples="""
    # a chart set up into a work dir, its plan reviewed, then applied
    berth install setup --pull examples/charts/edge-hooks -n edge --work-dir work --non-interactive
    berth install plan --work-dir work
    berth install apply --work-dir work --kube-context kind-dev
    """,
)
def group() -> None:
    """Chart -> package -> setup (render, split, plan) -> plan | script | verify."""


def _parse_base(flag: str) -> tuple[str, Path | None]:
    name, sep, values = flag.partition("=")
    if not name:
        raise InputError(f"expected NAME or NAME=VALUES.yaml, got {flag!r}", "--base")
    if sep and not Path(values).is_file():
        raise InputError("values file not found", values)
    return name, Path(values) if sep else None


@group.command(
    "package",
    examples="""
    # a chart folder as a package with its own values as the one base (default)
    berth install package examples/charts/edge-hooks --out edge-package

    # with a spec (components, inputs) and a second base
    berth install package examples/charts/edge-hooks --spec examples/charts/edge-hooks-package/spec.yaml \\
        --base default --base ha=examples/charts/edge-hooks-package/bases/ha.yaml --out edge-package
    """,
)
@click.argument("chart")
@click.option("--version", help="Chart version (required to match for folders and archives).")
@click.option("--repo", help="Helm repository URL to resolve CHART in (http(s):// or file://).")
@click.option(
    "--base", "bases", multiple=True, metavar="NAME[=VALUES.yaml]", help="A base variant (repeatable)."
)
@click.option(
    "--spec",
    "spec_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="YAML with components, inputs, collector.",
)
@cliopts.namespace_option("Default namespace for the package's renders (default: chart name).")
@cliopts.out_option("Package folder (default ./<chart>-package).", directory=True)
def package_cmd(
    chart: str,
    version: str | None,
    repo: str | None,
    bases: tuple[str, ...],
    spec_file: Path | None,
    namespace: str | None,
    out: Path | None,
) -> None:
    """Turn CHART (folder, .tgz, repo/chart, oci://) into a package folder."""
    from berth.install import package

    if spec_file is not None and not spec_file.is_file():
        raise InputError("spec file not found", str(spec_file))
    parsed = [_parse_base(b) for b in bases]
    out = out or Path(f"{Path(chart.rstrip('/')).name.removesuffix('.tgz')}-package")
    with cliopts.progress(f"Packaging {chart}"):
        pkg = package.build(chart, parsed, out, version, repo, spec_file, namespace)
    click.echo(
        f"Packaged {pkg.name} {pkg.version} (sha256 {pkg.chart.sha256[:12]}) with base(s) "
        f"{', '.join(b.name for b in pkg.bases)} to {out}"
    )


@group.command(
    "setup",
    examples="""
    # a chart straight into a work dir (its values as the one base), asking nothing
    berth install setup --pull examples/charts/edge-hooks -n edge --work-dir work --non-interactive

    # a package (install package --spec ...) with its ha base and an input answered
    berth install setup --pull edge-package --base ha --work-dir work --input licenseKey=abc

    # the facts (server version, CRDs, Secrets) checked against the cluster of a context
    berth install setup --pull edge-package --work-dir work --live --kube-context kind-dev
    """,
)
@click.option("--pull", "ref", required=True, help="Package folder or chart reference.")
@click.option("--base", help="Base variant (default: earlier choice, else the package default).")
@cliopts.namespace_option(
    "Release namespace (default: the earlier setup's, else the package's, else the kube context's, else default, "
    "as Helm's)."
)
@click.option("--release", help="Release name, as helm install's first argument (default: the package's).")
@click.option("--work-dir", required=True, type=click.Path(file_okay=False, path_type=Path))
@click.option("--select", "selects", multiple=True, help="Component to enable (repeatable).")
@click.option("--input", "inputs", multiple=True, metavar="KEY=VALUE", help="Answer an input (repeatable).")
@click.option("--non-interactive", is_flag=True, help="Never prompt; missing required inputs are errors.")
@click.option("--version", help="Chart version when --pull is a chart.")
@click.option("--repo", help="Helm repository URL when --pull is a chart name.")
@click.option(
    "--live", is_flag=True, help="Check the facts against the cluster (server version, CRDs, Secrets)."
)
@click.option(
    "--kubeconfig",
    help="Kubeconfig for --live and the default namespace (default: $KUBECONFIG or ~/.kube/config).",
)
@cliopts.context_option("Kube context for --live and the default namespace (default: current-context).")
@click.option(
    "--api-versions",
    "api_versions",
    multiple=True,
    metavar="LIST",
    help="Extra API versions for .Capabilities, as helm template takes them (group/version[/Kind], "
    "comma-separated, repeatable; remembered; an empty value clears them).",
)
@click.option("--wait-lock", is_flag=True, help=live_cli.WAIT_LOCK_HELP)
@live_cli.values_options
def setup_cmd(
    ref: str,
    base: str | None,
    namespace: str | None,
    release: str | None,
    work_dir: Path,
    selects: tuple[str, ...],
    inputs: tuple[str, ...],
    non_interactive: bool,
    version: str | None,
    repo: str | None,
    live: bool,
    kubeconfig: str | None,
    context: str | None,
    api_versions: tuple[str, ...],
    wait_lock: bool,
    value_flags: Any,
) -> None:
    """Pull, ask, collect facts, render and plan into WORK_DIR (atomically). Values flags (-f, --set...) go to
    helm as given, after the package's base, components and inputs; a later setup without them keeps them."""
    with cliopts.gc_paused():  # a short run: what it builds lives until it ends
        from berth.install import package, setup

        def prompt(inp: package.Input) -> str:
            text = inp.prompt or f"{inp.name} ({inp.type})"
            if inp.options:
                text += f" [{'/'.join(inp.options)}]"
            if inp.secret:
                text += " (not shown as you type; or @env:VAR / @file:PATH)"
            with status.paused():
                return str(click.prompt(text, default="", show_default=False, hide_input=inp.secret))

        opts = setup.SetupOptions(
            ref, work_dir, namespace, base, selects, inputs, non_interactive, version, repo, live,
            kubeconfig, context, api_versions if api_versions else None, wait_lock,
            release, value_flags,
        )  # fmt: skip
        with cliopts.progress(f"Setting up {work_dir} (pull, facts, render, plan)") as status:
            result = setup.run(opts, prompt)
        for line in result.lines:
            click.echo(line)


def _plan(work_dir: Path, action: str, wait: bool, timeout: int, revision: int | None) -> object:
    from berth.install import plan, workdir

    if revision is not None and action != "rollback":
        raise InputError("only a rollback goes to a revision; add --action rollback", "--revision")
    wd = workdir.load_workdir(work_dir)
    return workdir.build_plan(wd, plan.Action(action), str(work_dir), wait, timeout, revision)


def revision_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--revision",
        type=int,
        help="Rollback: the recorded revision to go back to (out/revisions/N; default: the newest).",
    )(fn)


def install_only_hooks_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--install-only-hooks",
        type=click.Choice(("every-sync", "once")),
        default="every-sync",
        show_default=True,
        help="Argo CD: hooks Helm runs on install only run on every sync (with a warning), or once (a plain "
        "resource applied on the first sync: the idempotency guard).",
    )(fn)


TIMEOUT_HELP = "Per hook: a Go duration (90s, 5m, 1h30m) or seconds."


@group.command(
    "plan",
    examples="""
    # every step of the install, in Helm's order
    berth install plan --work-dir work

    # the uninstall plan as JSON, hooks waited on for at most 10 minutes each
    berth install plan --work-dir work --action uninstall --timeout 10m -o json

    # each step beside what the Argo CD export runs
    berth install plan --work-dir work --for argocd
    """,
)
@click.option("--work-dir", required=True, type=click.Path(file_okay=False, path_type=Path))
@click.option("--action", type=click.Choice(ACTIONS), default="install", show_default=True)
@cliopts.output_option("table", "json", "yaml")
@click.option("--wait", is_flag=True, help="Add a readiness step after applying (like helm --wait).")
@cliopts.duration_option("--timeout", default="5m", help=TIMEOUT_HELP)
@revision_option
@click.option(
    "--for",
    "target",
    type=click.Choice(("helm", "argocd")),
    default="helm",
    show_default=True,
    help="argocd: each step beside what the Argo CD export (install export --argocd) runs, and where they differ.",
)
@install_only_hooks_option
def plan_cmd(
    work_dir: Path,
    action: str,
    output: str,
    wait: bool,
    timeout: int,
    revision: int | None,
    target: str,
    install_only_hooks: str,
) -> None:
    """Print every step of ACTION in Helm's execution order."""
    from berth.install import plan

    p = _plan(work_dir, action, wait, timeout, revision)
    assert isinstance(p, plan.Plan)
    if target == "argocd":
        from berth.install import export, export_argocd, export_argocd_text

        src = export.load(work_dir, timeout=timeout)
        x = export_argocd.translate(src.plans, src.read, export_argocd.RunOnce(install_only_hooks))
        if output != "table":
            cliopts.print_doc({"action": p.action.value, "rows": export_argocd_text.rows(p, x)}, output)
        else:
            click.echo(export_argocd_text.side_by_side(p, x), nl=False)
    elif output != "table":
        cliopts.print_doc(p.to_json(), output)
    else:
        click.echo(plan.render_text(p), nl=False)


@group.command(
    "script",
    examples="""
    # the install as a bash script, then run against a context
    berth install script --work-dir work --out install.sh
    bash install.sh --context kind-dev

    # the uninstall script, to stdout
    berth install script --work-dir work --action uninstall
    """,
)
@click.option("--work-dir", required=True, type=click.Path(file_okay=False, path_type=Path))
@click.option("--action", type=click.Choice(ACTIONS), default="install", show_default=True)
@cliopts.out_option("Write the script to FILE (default stdout).")
@click.option(
    "--wait/--no-wait",
    default=True,
    show_default=True,
    help="Include the readiness step, as apply does (the script's own --no-wait skips it at run time).",
)
@cliopts.duration_option("--timeout", default="5m", help=TIMEOUT_HELP)
@revision_option
def script_cmd(
    work_dir: Path, action: str, out: Path | None, wait: bool, timeout: int, revision: int | None
) -> None:
    """Write a bash 3.2 script (kubectl only) that performs exactly the plan."""
    from berth.install import plan, script
    from berth.kube import yamlio

    p = _plan(work_dir, action, wait, timeout, revision)
    assert isinstance(p, plan.Plan)
    _warn_installed(work_dir, p)
    text = script.generate(p, (work_dir.resolve() / "out"))
    if out is None:
        click.echo(text, nl=False)
    else:
        yamlio.write_atomic(out, text, mode=0o755)
        click.echo(f"Wrote {out} ({len(p.steps)} step(s) for {action})")


def _warn_installed(work_dir: Path, p: Any) -> None:
    """An install script for a work dir whose receipts record the release installed: the script cannot tell
    whether the cluster it runs against has the release (it reads no receipt), so it always installs, hooks
    included, where ``berth install apply`` would re-apply the objects without hooks. Say so on stderr."""
    from berth.install import apply, plan, receipt

    found = (
        receipt.deployed(work_dir, release=p.release, namespace=p.namespace)
        if p.action == plan.Action.INSTALL
        else None
    )
    if found is None:
        return
    context = found[1].get("context")
    click.echo(
        f"warning: {work_dir} records release {p.release} installed on context {context} (run {found[0].stem}); "
        "this script installs it as new, running the install hooks again (it cannot see receipts). To re-apply "
        f"the objects of the installed release without hooks, run {apply.live_command(plan.Action.INSTALL, work_dir)}"
        f"; to apply a changed render, {apply.live_command(plan.Action.UPGRADE, work_dir)} or this command with "
        "--action upgrade",
        err=True,
    )


@group.command(
    "export",
    examples="""
    # plain manifests with the plan as Argo CD hooks and sync waves
    berth install export --work-dir work --argocd edge-argocd

    # a Flux HelmRelease with the locked chart, 10 minutes per operation
    berth install export --work-dir work --flux edge-flux --timeout 10m
    """,
)
@click.option("--work-dir", required=True, type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--argocd",
    "argocd_dir",
    type=click.Path(path_type=Path),
    metavar="DIR",
    help="Write plain manifests with the plan as Argo CD hooks and sync waves (Helm's order) to DIR.",
)
@click.option(
    "--flux",
    "flux_dir",
    type=click.Path(path_type=Path),
    metavar="DIR",
    help="Write a Flux HelmRelease, the locked chart with its HelmChart source, and a Kustomization to DIR.",
)
@install_only_hooks_option
@click.option("--wait", is_flag=True, help="Flux: wait for the release's workloads (like helm --wait).")
@cliopts.duration_option(
    "--timeout", default="5m", help="Per hook (Flux: per operation): a Go duration (90s, 5m) or seconds."
)
@click.option(
    "--flux-source", default="flux-system", show_default=True, help="Flux: the GitRepository holding DIR."
)
@click.option(
    "--flux-namespace", default="flux-system", show_default=True, help="Flux: namespace of the Flux objects."
)
def export_cmd(
    work_dir: Path,
    argocd_dir: Path | None,
    flux_dir: Path | None,
    install_only_hooks: str,
    wait: bool,
    timeout: int,
    flux_source: str,
    flux_namespace: str,
) -> None:
    """Hand the package to GitOps: Argo CD (the plan as hooks and waves) or Flux (Helm runs it); DIR is atomic."""
    from berth.install import export_argocd, export_argocd_text, export_flux

    if (argocd_dir is None) == (flux_dir is None):
        raise InputError("give exactly one of --argocd DIR and --flux DIR", "berth install export")
    if argocd_dir is not None:
        lines = export_argocd_text.run(
            work_dir, argocd_dir, export_argocd.RunOnce(install_only_hooks), timeout
        )
    else:
        assert flux_dir is not None
        opts = export_flux.FluxOptions(flux_source, flux_namespace, wait=wait, timeout=timeout)
        lines = export_flux.run(work_dir, flux_dir, opts)
    for line in lines:
        click.echo(line)


@group.command(
    "verify",
    examples="""
    # W/out against a fresh helm template of the locked chart, base, components and inputs
    berth install verify --work-dir work
    """,
)
@click.option("--work-dir", required=True, type=click.Path(file_okay=False, path_type=Path))
def verify_cmd(work_dir: Path) -> None:
    """Prove W/out equals a fresh `helm template` of the same chart and values."""
    from berth.install import verify

    with cliopts.progress(f"Rendering {work_dir} again with helm template"):
        report = verify.run(work_dir)
    for line in report.lines():
        click.echo(line)
    if not report.ok:
        raise verify.VerifyFailed(report)


# The cluster-facing actions (issue 6) live in live_cli; the plan they execute is built here, in plan.py.
group.add_command(live_cli.apply_command, "apply")
group.add_command(live_cli.uninstall_command, "uninstall")
group.add_command(live_cli.upgrade_command, "upgrade")
group.add_command(live_cli.rollback_command, "rollback")
group.add_command(live_cli.release_test_command, "test")
group.add_command(live_cli.status_command, "status")
