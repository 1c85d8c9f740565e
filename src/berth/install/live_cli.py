"""Click commands of the live executors: ``apply``, ``uninstall``, ``upgrade``, ``rollback``, ``test``, ``status``.

Kept apart from :mod:`berth.install.cli` (which wires them into ``berth install``) so the executors' options live
next to each other. Every command takes ``--work-dir``, ``--kubeconfig`` and ``--context``; the context rule is in
:func:`berth.install.receipt.check_target`.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from berth.install import report
from berth.kube.errors import InputError

if TYPE_CHECKING:
    from berth.install.apply import ApplyOptions

DURATION_UNITS = {"s": 1, "m": 60, "h": 3600}


def parse_duration(text: str) -> int:
    """``300``, ``90s``, ``5m``, ``1h`` -> seconds (what ``--timeout`` accepts, like Helm's)."""
    t = text.strip().lower()
    unit = t[-1:] if t[-1:] in DURATION_UNITS else "s"
    number = t[:-1] if t[-1:] in DURATION_UNITS else t
    try:
        value = float(number)
    except ValueError:
        raise InputError(f"expected a duration like 300, 90s, 5m or 1h, got {text!r}", "--timeout") from None
    seconds = int(value * DURATION_UNITS[unit])
    if seconds <= 0:
        raise InputError("must be positive", "--timeout")
    return seconds


def common(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The options every live command shares."""
    fn = click.option(
        "--context", help="Kube context (required when it differs from the one first applied)."
    )(fn)
    fn = click.option(
        "--kubeconfig", help="Kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, as kubectl)."
    )(fn)
    fn = click.option("--work-dir", required=True, type=click.Path(file_okay=False, path_type=Path))(fn)
    return fn


WAIT_LOCK_HELP = "When another berth command is using WORK_DIR, wait for it instead of refusing (exit 2)."
"""The same words as ``berth install setup --wait-lock`` (:data:`berth.install.cli.WAIT_LOCK_HELP`)."""


def _runner_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option("--wait-lock", is_flag=True, help=WAIT_LOCK_HELP)(fn)
    fn = click.option(
        "--timeout", default="5m", show_default=True, help="Per hook and per wait (300, 90s, 5m)."
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
        timeout: str,
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
            parse_duration(timeout),
            resume,
            dry_run,
            force_conflicts,
            wait_lock=wait_lock,
        )
        return fn(opts, **own)

    return common(_runner_options(command))


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


@click.command("apply")
@live_options
@click.option("--no-wait", is_flag=True, help="Skip the readiness step (Deployments, StatefulSets, Jobs).")
@report.with_report
def apply_command(opts: ApplyOptions, no_wait: bool) -> None:
    """Run the install plan of WORK_DIR against a cluster, with a receipt in WORK_DIR/out/runs."""
    from berth.install import apply

    _print(apply.run(dataclasses.replace(opts, wait=not no_wait)))
    _print_notes(opts, "install")


@click.command("uninstall")
@live_options
@click.option(
    "--delete-crds", is_flag=True, help="Also delete the chart's crds/ CRDs (and every object of them)."
)
def uninstall_command(opts: ApplyOptions, delete_crds: bool) -> None:
    """Run the uninstall plan: pre-delete hooks, deletions in Helm's order (keep objects stay), post-delete."""
    from berth.install import uninstall

    _print(uninstall.run(opts, delete_crds))


@click.command("upgrade")
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
def upgrade_command(
    opts: ApplyOptions,
    ref: str | None,
    version: str | None,
    repo: str | None,
    base: str | None,
    selects: tuple[str, ...],
    inputs: tuple[str, ...],
    no_wait: bool,
) -> None:
    """Re-render with --pull NEWREF (or take the render WORK_DIR holds now), show the diff, then pre-upgrade, apply,
    prune, post-upgrade. Base, components, inputs and values carry over unless --base/--select/--input change them."""
    from berth.install import upgrade

    if not ref and (base or selects or inputs):
        ref = str(opts.work_dir / "package")  # a changed choice: render the work dir's own package again
    source = upgrade.UpgradeSource(ref, version, repo, base, selects, inputs) if ref else None
    _print(upgrade.run(dataclasses.replace(opts, wait=not no_wait), source))
    _print_notes(opts, "upgrade")


@click.command("rollback")
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


@click.command("test")
@live_options
@click.option("--logs", is_flag=True, help="Print the logs of every Job and Pod test hook after the run.")
def release_test_command(opts: ApplyOptions, logs: bool) -> None:
    """Run the release's test hooks (as helm test): one at a time in Helm's order, each waited on; a failed one
    fails the run (exit 1) naming it. No test hooks: says so, exit 0."""
    from berth.install import release_test

    _print(release_test.run(opts, logs))


@click.command("status")
@common
@click.option("-o", "--output", type=click.Choice(("text", "json")), default="text", show_default=True)
def status_command(work_dir: Path, kubeconfig: str | None, context: str | None, output: str) -> None:
    """What the cluster has vs WORK_DIR: missing, drifted and extra objects (exit 1 when they differ)."""
    from berth.install import status

    report = status.run(work_dir, kubeconfig, context)
    if output == "json":
        click.echo(json.dumps(report.to_json(), indent=2))
    else:
        for line in report.lines():
            click.echo(line)
    if not report.in_sync:
        raise status.OutOfSync(report)
