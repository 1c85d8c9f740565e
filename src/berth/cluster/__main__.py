"""``python -m berth.cluster up|down|status``: the cluster commands without loading the rest of berth's CLI.

Same commands and options as ``berth cluster ...``; ``--detach`` and the benchmark start servers this way so
start-up pays only for the cluster's own imports.
"""

from __future__ import annotations

import sys

import click

from berth.cluster import cli
from berth.kube.errors import BerthError


def main(argv: list[str] | None = None) -> int:
    try:
        cli.group.main(args=argv, prog_name="berth cluster", standalone_mode=False)
    except BerthError as exc:
        click.echo(f"error: {exc}", err=True)
        return exc.exit_code
    except click.ClickException as exc:
        exc.show()
        return 2
    except click.exceptions.Abort:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
