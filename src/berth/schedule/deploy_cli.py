"""``berth schedule rbac`` and ``berth schedule manifests``: what a configuration needs on a cluster, and the
objects that run it there.

Kept apart from ``schedule/cli.py`` so the deploy surface has one home; the ``schedule`` group attaches
:data:`rbac_command` and :data:`manifests_command`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from berth import cliopts
from berth.kube.errors import InputError
from berth.schedule.deploy_defaults import DEFAULT_NAME, DEFAULT_NAMESPACE, Shape

if TYPE_CHECKING:
    from berth.schedule.plugins import registry as registry_mod

# The framework, configuration and manifests modules are imported inside the commands: listing them in
# `berth schedule --help` must not load the scheduler.

_CONFIG_HELP = "KubeSchedulerConfiguration file (kubescheduler.config.k8s.io/v1)."
_PLUGIN_HELP = "Register a user plugin by import path (repeatable), as for `berth schedule simulate`."


def build_registry(plugin_refs: tuple[str, ...]) -> registry_mod.Registry:
    """In-tree and entry-point plugins plus every ``--plugin MODULE:CLASS``."""
    from berth.schedule.plugins import registry as registry_mod

    reg = registry_mod.default_registry()
    for ref in plugin_refs:
        reg.register(registry_mod.load_user_plugin(ref))
    return reg


def read_config(path: str) -> str:
    """The configuration file's text (kept verbatim for the ConfigMap); a missing file is an InputError."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise InputError(
            "file not found; pass --config with a KubeSchedulerConfiguration file", path
        ) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read file: {exc}", path) from exc


def _notes(notes: tuple[str, ...]) -> None:
    for note in notes:
        click.echo(f"note: {note}", err=True)


@cliopts.command(
    "rbac",
    examples="""
    # the minimal ClusterRole, each rule annotated with who needs it
    berth schedule rbac --config examples/two-profiles/config.yaml

    # the same as the rbac: values block of charts/berth-scheduler
    berth schedule rbac --config examples/two-profiles/config.yaml -o values > rbac-values.yaml

    # only what berth schedule shadow needs (list and watch)
    berth schedule rbac --config examples/two-profiles/config.yaml --shadow
    """,
)
@click.option("--config", "config_path", required=True, metavar="FILE", help=_CONFIG_HELP)
@click.option("--plugin", "plugin_refs", multiple=True, metavar="MODULE:CLASS", help=_PLUGIN_HELP)
@cliopts.output_option(
    "yaml",
    "json",
    "values",
    help="yaml/json: the ClusterRole; values: the `rbac:` values block of charts/berth-scheduler.",
)
@click.option("--name", default=DEFAULT_NAME, show_default=True, help="The ClusterRole's name.")
@click.option(
    "--shadow", is_flag=True, help="Only what `berth schedule shadow` needs: list and watch, nothing written."
)
def rbac_command(
    config_path: str, plugin_refs: tuple[str, ...], output: str, name: str, shadow: bool
) -> None:
    """Print the minimal ClusterRole the configured profiles need, each rule annotated with who needs it.

    Computed from the scheduler core (pod/node informers, pods/status patches, events.k8s.io Events), leader
    election (a lease, only when leaderElection.leaderElect is true) and what every enabled plugin berth runs
    reads and writes -- only the verbs `berth schedule run` sends.
    """
    from berth.kube import yamlio
    from berth.schedule import config as config_mod
    from berth.schedule import manifests, rbac

    reg = build_registry(plugin_refs)
    cfg = config_mod.load(config_path, reg)
    result = rbac.compute(cfg, reg)
    if shadow:
        result = result.read_only()
    role = result.cluster_role(name)
    if output == "json":
        click.echo(rbac.to_json(role), nl=False)
    elif output == "values":
        click.echo(yamlio.dump(dict(manifests.helm_values(result))), nl=False)
    else:
        click.echo(rbac.to_yaml(role, result), nl=False)
    _notes(result.notes)


@cliopts.command(
    "manifests",
    examples="""
    # everything that runs the configuration, applied into an existing namespace
    berth schedule manifests --config examples/two-profiles/config.yaml --image berth:dev -n kube-system \\
        | kubectl apply -f -

    # one Deployment per profile; only the names of the objects
    berth schedule manifests --config examples/two-profiles/config.yaml --image berth:dev --shape separate -o name
    """,
)
@click.option("--config", "config_path", required=True, metavar="FILE", help=_CONFIG_HELP)
@click.option(
    "--image", required=True, metavar="IMAGE", help="Container image with berth (see the Dockerfile)."
)
@cliopts.namespace_option("Namespace to run in.", default=DEFAULT_NAMESPACE, show_default=True)
@click.option(
    "--shape",
    type=click.Choice([s.value for s in Shape]),
    default=Shape.PROFILES.value,
    show_default=True,
    help="profiles: one Deployment runs every profile; separate: one Deployment per profile.",
)
@click.option("--name", default=DEFAULT_NAME, show_default=True, help="Base name of the objects.")
@click.option("--plugin", "plugin_refs", multiple=True, metavar="MODULE:CLASS", help=_PLUGIN_HELP)
@cliopts.output_option(
    "yaml", "json", "name", help="yaml/json: the objects; name: kind/name of each, as kubectl get -o name."
)
@click.option(
    "--shadow",
    is_flag=True,
    help="Run `berth schedule shadow` instead: read-only role, nothing scheduled, verdicts on /metrics.",
)
def manifests_command(
    config_path: str,
    image: str,
    namespace: str,
    shape: str,
    name: str,
    plugin_refs: tuple[str, ...],
    output: str,
    shadow: bool,
) -> None:
    """Print ServiceAccount, ClusterRole(+Binding), ConfigMap and Deployment(s) that run the configuration.

    Apply with `kubectl apply -f -` into an existing namespace. The image must contain berth (build it from
    the repository's Dockerfile) and any --plugin modules.
    """
    from berth.schedule import config as config_mod
    from berth.schedule import manifests

    reg = build_registry(plugin_refs)
    text = read_config(config_path)
    cfg = config_mod.load(config_path, reg)
    options = manifests.DeployOptions(
        image=image,
        namespace=namespace,
        shape=Shape(shape),
        name=name,
        plugins=plugin_refs,
        shadow=shadow,
    )
    rendered = manifests.render(text, cfg, reg, options, source=config_path)
    if output == "json":
        cliopts.print_doc({"apiVersion": "v1", "kind": "List", "items": list(rendered.objects)}, output)
    elif output == "name":
        for obj in rendered.objects:
            click.echo(cliopts.object_name(obj))
    else:
        click.echo(rendered.yaml(), nl=False)
    _notes(rendered.notes)
