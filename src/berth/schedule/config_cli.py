"""``berth schedule config``: show the configuration kube-scheduler (and berth) would actually run.

Why: plugin-set merging and ``multiPoint`` expansion are easy to get wrong in one's head. This command prints the
defaulted document (as ``kube-scheduler --write-config-to`` would) or, with ``--expanded``, per profile and
extension point the plugins in run order with their score weights -- or every problem in the file (exit code 2).
Kept apart from ``schedule/cli.py``; the ``schedule`` group attaches :data:`config_command`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from berth import cliopts
from berth.schedule import deploy_cli

if TYPE_CHECKING:
    from berth.schedule import config as config_mod
    from berth.schedule.plugins import registry as registry_mod


def inactive_notes(cfg: config_mod.SchedulerConfiguration, registry: registry_mod.Registry) -> list[str]:
    """One line per profile and enabled plugin that berth accepts but does not run yet."""
    notes = []
    for profile in cfg.profiles:
        for name in profile.enabled_plugins():
            spec = registry.get(name)
            if spec is not None and not spec.active:
                notes.append(
                    f'profile "{profile.scheduler_name}": plugin {name} is accepted but not active yet in berth '
                    "(it is skipped)"
                )
    return notes


@cliopts.command(
    "config",
    examples="""
    # the configuration with every default filled in, as kube-scheduler would run it
    berth schedule config --config examples/two-profiles/config.yaml

    # per profile and extension point, the plugins that run, in order, with score weights
    berth schedule config --config examples/two-profiles/config.yaml --expanded -o json
    """,
)
@click.option(
    "--config",
    "config_path",
    required=True,
    metavar="FILE",
    help="KubeSchedulerConfiguration file (kubescheduler.config.k8s.io/v1).",
)
@click.option(
    "--plugin",
    "plugin_refs",
    multiple=True,
    metavar="MODULE:CLASS",
    help="Register a user plugin by import path (repeatable), as for `berth schedule simulate`.",
)
@cliopts.output_option("yaml", "json")
@click.option(
    "--expanded",
    is_flag=True,
    help="Per extension point, the plugins that run (multiPoint expanded), in order, with score weights.",
)
def config_command(config_path: str, plugin_refs: tuple[str, ...], output: str, expanded: bool) -> None:
    """Print the defaulted configuration, or every problem in it (exit code 2)."""
    from berth.schedule import config as config_mod

    reg = deploy_cli.build_registry(plugin_refs)
    cfg = config_mod.load(config_path, reg)
    doc = config_mod.to_dict(cfg, expanded=expanded)
    cliopts.print_doc(doc, output)
    for note in inactive_notes(cfg, reg):
        click.echo(f"note: {note}", err=True)
