"""Click commands of the live executors: ``apply``, ``uninstall``, ``upgrade``, ``rollback``, ``test``, ``status``.

Kept apart from :mod:`berth.install.cli` (which wires them into ``berth install``) so the executors' options live
next to each other. Every command takes ``--work-dir``, ``--kubeconfig`` and ``--context``; the context rule is in
:func:`berth.install.receipt.check_target`.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from berth import cliopts

if TYPE_CHECKING:
    from berth.install.apply import ApplyOptions


def common(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The options every live command shares."""
    fn = cliopts.context_option("Kube context (required when it differs from the one first applied).")(fn)
    fn = click.option(
        "--kubeconfig", help="Kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, as kubectl)."
    )(fn)
    fn = click.option("--work-dir", required=True, type=click.Path(file_okay=False, path_type=Path))(fn)
    return fn


WAIT_LOCK_HELP = "When another berth command is using WORK_DIR, wait for it instead of refusing (exit 2)."


def _runner_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option("--wait-lock", is_flag=True, help=WAIT_LOCK_HELP)(fn)
    fn = cliopts.duration_option(
        "--timeout", default="5m", help="Per hook and per wait: a Go duration (90s, 5m, 1h30m) or seconds."
    )(fn)
    fn = click.option(
        "--resume", is_flag=True, help="Continue the last run of this action from where it stopped."
    )(fn)
    fn = click.option(
        "--dry-run", is_flag=True, help="Validate every write on the server (dryRun=All); change nothing."
    )(fn)
    fn = click.option(
        "--force-conflicts",
        is_flag=True,
        help="Take ownership of fields other managers own (server-side apply).",
    )(fn)
    return fn


def live_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The options every plan-running command shares (:func:`common` plus timeout, resume, dry run and conflict
    forcing), handed to the command as one ``opts: ApplyOptions`` argument; the command's own options follow."""

    @functools.wraps(fn)
    def command(
        work_dir: Path,
        kubeconfig: str | None,
        context: str | None,
        timeout: int,
        resume: bool,
        dry_run: bool,
        force_conflicts: bool,
        wait_lock: bool,
        **own: Any,
    ) -> Any:
        from berth.install import apply

        opts = apply.ApplyOptions(
            work_dir,
            kubeconfig,
            context,
            timeout,
            resume,
            dry_run,
            force_conflicts,
            wait_lock=wait_lock,
        )
        return fn(opts, **own)

    return common(_runner_options(command))


VALUE_FLAG_OPTIONS = (
    ("values", ("-f", "--values"), "FILE", "A values file, as helm takes it (repeatable; later files win)."),
    ("set_json", ("--set-json",), "KEY=JSON", "helm's --set-json (repeatable)."),
    ("set", ("--set",), "KEY=VAL", "helm's --set (repeatable; handed to helm as given)."),
    ("set_string", ("--set-string",), "KEY=VAL", "helm's --set-string (repeatable)."),
    ("set_file", ("--set-file",), "KEY=FILE", "helm's --set-file (repeatable; the file is recorded)."),
    ("set_literal", ("--set-literal",), "KEY=VAL", "helm's --set-literal (repeatable)."),
)


def values_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Helm's values flags, handed to the command as one ``value_flags`` argument (None when none was given:
    the work dir's recorded flags stay)."""

    @functools.wraps(fn)
    def command(*args: Any, **kwargs: Any) -> Any:
        from berth.install import values

        given = {name: tuple(kwargs.pop(name)) for name, *_ in VALUE_FLAG_OPTIONS}
        flags = values.ValueFlags(**given)
        return fn(*args, value_flags=flags if flags else None, **kwargs)

    for name, decls, metavar, text in reversed(VALUE_FLAG_OPTIONS):
        command = click.option(*decls, name, multiple=True, metavar=metavar, help=text)(command)
    return command


def _print(outcome: Any) -> None:
    """A live run's summary lines (an ``apply.Outcome``), one per line."""
    for line in outcome.lines:
        click.echo(line)


def _print_notes(opts: ApplyOptions, action: str) -> None:
    """The chart's NOTES.txt after a successful install or upgrade, as Helm prints it (not after a dry run)."""
    from berth.install import workdir

    text = "" if opts.dry_run else workdir.release_notes(opts.work_dir / "out", action)
    if text:
        click.echo(f"NOTES:\n{text}")


def with_report(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``--report FILE`` for a command that runs a plan (its first argument: ``ApplyOptions``): when the command
    ends, however it ends, the receipt its run wrote becomes a page at FILE."""

    @functools.wraps(fn)
    def command(opts: Any, *args: Any, report_path: Path | None = None, **kwargs: Any) -> Any:
        if report_path is None:
            return fn(opts, *args, **kwargs)
        from berth.install import report  # the HTML timeline: only for --report

        before = report.receipts(opts.work_dir)
        try:
            return fn(opts, *args, **kwargs)
        finally:
            new = sorted(report.receipts(opts.work_dir) - before)
            if not new:
                click.echo("no report: the run stopped before it wrote a receipt", err=True)
            else:
                report.write(new[-1], report_path)
                click.echo(f"Report: {report_path}", err=True)

    return click.option(
        "--report",
        "report_path",
        type=click.Path(dir_okay=False, path_type=Path),
        metavar="FILE.html",
        help="When the run ends (succeeded or not), write its timeline as an HTML report.",
    )(command)


TAKE_OWNERSHIP_HELP = (
    "Adopt existing objects that belong to another release or to none (Helm 4's --take-ownership) instead of "
    "refusing."
)


@cliopts.command(
    "apply",
    examples="""
    # install the release a work dir holds, on the current context's cluster
    berth install apply --work-dir work

    # on another context, every write validated by the server first, 10 minutes per hook
    berth install apply --work-dir work --kube-context kind-dev --dry-run --timeout 10m

    # continue a run that stopped, and draw its timeline
    berth install apply --work-dir work --resume --report install.html
    """,
)
@live_options
@click.option("--no-wait", is_flag=True, help="Skip the readiness step (Deployments, StatefulSets, Jobs).")
@click.option("--take-ownership", is_flag=True, help=TAKE_OWNERSHIP_HELP)
@with_report
def apply_command(opts: ApplyOptions, no_wait: bool, take_ownership: bool) -> None:
    """Run the install plan of WORK_DIR against a cluster, with a receipt in WORK_DIR/out/runs, and record the
    release as helm install does (helm list, status and history read it)."""
    from berth.install import apply

    _print(apply.run(dataclasses.replace(opts, wait=not no_wait, take_ownership=take_ownership)))
    _print_notes(opts, "install")


@cliopts.command(
    "uninstall",
    examples="""
    # pre-delete hooks, deletions in Helm's order, post-delete hooks
    berth install uninstall --work-dir work

    # also the chart's crds/ CRDs, and every object of them
    berth install uninstall --work-dir work --delete-crds
    """,
)
@live_options
@click.option(
    "--delete-crds", is_flag=True, help="Also delete the chart's crds/ CRDs (and every object of them)."
)
@click.option(
    "--keep-history",
    is_flag=True,
    help="Keep the release's records, the last one marked uninstalled (as helm uninstall --keep-history).",
)
def uninstall_command(opts: ApplyOptions, delete_crds: bool, keep_history: bool) -> None:
    """Run the uninstall plan: pre-delete hooks, deletions in Helm's order (keep objects stay), post-delete; then
    the release's records go."""
    from berth.install import uninstall

    _print(uninstall.run(opts, delete_crds, keep_history=keep_history))


@cliopts.command(
    "upgrade",
    examples="""
    # apply what the work dir holds now (after a setup with other inputs)
    berth install upgrade --work-dir work

    # a new chart version; inputs and selection carry over
    berth install upgrade --work-dir work --pull examples/charts/edge-hooks --timeout 10m
    """,
)
@live_options
@click.option(
    "--pull",
    "ref",
    help="New package folder or chart; inputs and selection carry over (default: the render set up now).",
)
@click.option("--version", help="Chart version when --pull is a chart.")
@click.option("--repo", help="Helm repository URL when --pull is a chart name.")
@click.option("--base", help="Another base of the package (default: the one the work dir was set up with).")
@click.option(
    "--select",
    "selects",
    multiple=True,
    help="Components to enable instead of the earlier ones (repeatable).",
)
@click.option("--input", "inputs", multiple=True, metavar="KEY=VALUE", help="Change an answer (repeatable).")
@click.option("--no-wait", is_flag=True, help="Skip the readiness step.")
@click.option(
    "--release",
    help="The release (as helm upgrade's first argument): on a WORK_DIR never set up, the release Helm installed "
    "that berth adopts.",
)
@click.option(
    "-n", "--namespace", help="The release's namespace (default: the kube context's, else default)."
)
@values_options
@click.option("--reuse-values", "reuse", flag_value="reuse-values", help="Keep the last release's values and "
              "chart defaults; new values flags go over them (helm's).")  # fmt: skip
@click.option(
    "--reset-values", "reuse", flag_value="reset-values", help="Only the values given now (helm's)."
)
@click.option("--reset-then-reuse-values", "reuse", flag_value="reset-then-reuse-values",
              help="The new chart's defaults, the last release's values, the new values over them (helm's).")  # fmt: skip
@click.option("--take-ownership", is_flag=True, help=TAKE_OWNERSHIP_HELP)
def upgrade_command(
    opts: ApplyOptions,
    ref: str | None,
    version: str | None,
    repo: str | None,
    base: str | None,
    selects: tuple[str, ...],
    inputs: tuple[str, ...],
    no_wait: bool,
    release: str | None,
    namespace: str | None,
    value_flags: Any,
    reuse: str | None,
    take_ownership: bool,
) -> None:
    """Re-render with --pull NEWREF (or take the render WORK_DIR holds now), show the diff, then pre-upgrade, apply,
    prune, post-upgrade, and record the new revision as helm upgrade does. Base, components, inputs and values
    carry over unless --base/--select/--input or values flags change them (values flags as helm's; none keeps
    them; --reuse-values and friends as helm's)."""
    from berth.install import adopt, upgrade, values

    if not ref and (base or selects or inputs):
        ref = str(opts.work_dir / "package")  # a changed choice: render the work dir's own package again
    source = upgrade.UpgradeSource(ref, version, repo, base, selects, inputs) if ref else None
    given = adopt.UpgradeValues(release, namespace, value_flags, values.Reuse(reuse or "default"))
    options = dataclasses.replace(opts, wait=not no_wait, take_ownership=take_ownership)
    _print(upgrade.run(options, source, given=given))
    _print_notes(opts, "upgrade")


@cliopts.command(
    "rollback",
    examples="""
    # back to the newest recorded revision
    berth install rollback --work-dir work

    # back to revision 2, without waiting for readiness
    berth install rollback --work-dir work --revision 2 --no-wait
    """,
)
@live_options
@click.option(
    "--revision",
    type=int,
    help="The recorded revision to go back to (out/revisions/N; default: the newest, or the resumed run's).",
)
@click.option("--no-wait", is_flag=True, help="Skip the readiness step.")
@click.option(
    "--switch-only",
    is_flag=True,
    help="The generated script rolled the cluster back: only make WORK_DIR follow (no cluster is contacted).",
)
def rollback_command(opts: ApplyOptions, revision: int | None, no_wait: bool, switch_only: bool) -> None:
    """Roll back to a recorded revision (as helm rollback): its pre-rollback hooks, its objects, prune what it
    lacks, its post-rollback hooks; then WORK_DIR/out and WORK_DIR/package hold that revision's render and package,
    and the replaced render is recorded as a revision."""
    from berth.install import rollback

    _print(rollback.run(dataclasses.replace(opts, wait=not no_wait), revision, only_switch=switch_only))


@cliopts.command(
    "test",
    examples="""
    # the release's test hooks, with their logs
    berth install test --work-dir work --logs
    """,
)
@live_options
@click.option("--logs", is_flag=True, help="Print the logs of every Job and Pod test hook after the run.")
def release_test_command(opts: ApplyOptions, logs: bool) -> None:
    """Run the release's test hooks (as helm test): one at a time in Helm's order, each waited on; a failed one
    fails the run (exit 1) naming it. No test hooks: says so, exit 0."""
    from berth.install import release_test

    _print(release_test.run(opts, logs))


@cliopts.command(
    "status",
    examples="""
    # missing, drifted and extra objects (exit 1 when the cluster differs)
    berth install status --work-dir work

    # the same as JSON, on the cluster of another context
    berth install status --work-dir work --kube-context kind-dev -o json
    """,
)
@common
@cliopts.output_option("table", "json", "yaml")
def status_command(work_dir: Path, kubeconfig: str | None, context: str | None, output: str) -> None:
    """What the cluster has vs WORK_DIR: missing, drifted and extra objects (exit 1 when they differ)."""
    from berth.install import status

    report = status.run(work_dir, kubeconfig, context)
    if output != "table":
        cliopts.print_doc(report.to_json(), output)
    else:
        for line in report.lines():
            click.echo(line)
    if not report.in_sync:
        raise status.OutOfSync(report)
