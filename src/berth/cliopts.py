"""The options every berth command spells alike, as helm and kubectl users type them, and the pieces behind them.

Why one module: each part declares its own commands, but a user moves between them in one shell. ``-n`` is the
namespace, ``--context`` is also helm's ``--kube-context``, ``-o`` only ever picks a format from one family (files
and directories are ``--out``), durations are Go's (``5m``, ``1h30m``), every ``--help`` ends with Examples, tables
fit the terminal (and are never cut when piped), and anything slow shows that it is working -- the same way in
every command because the same code does it.

Importing this module costs only click: ``berth --help`` and ``berth cluster up`` must not load rich (the table
and progress pieces import it when used) -- ``tests/schedule/test_cli_help.py`` checks it.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import json
import math
import os
import sys
import textwrap
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar

import click

from berth.kube.errors import InputError

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress

F = TypeVar("F", bound=Callable[..., Any])


def warn(text: str) -> None:
    """One ``warning:`` line on stderr."""
    click.echo(f"warning: {text}", err=True)


# ---- Examples at the end of every --help -----------------------------------------------------------------------


class _WithExamples:
    """A command or group whose help ends with an Examples section (after Options, as the last thing shown).

    ``examples`` is a block of lines: ``# what it does`` comments, each followed by a runnable ``berth ...`` line,
    blank lines between examples (kubectl's layout). Shown as written: never re-wrapped, so a command stays one
    line that can be copied."""

    def __init__(self, *args: Any, examples: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.examples = textwrap.dedent(examples or "").strip("\n")

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_epilog(ctx, formatter)  # type: ignore[misc]
        if not self.examples:
            return
        with formatter.section("Examples"):
            pad = " " * formatter.current_indent
            for line in self.examples.splitlines():
                formatter.write(f"{pad}{line}\n" if line.strip() else "\n")


class Command(_WithExamples, click.Command):
    """A berth command (see :class:`_WithExamples`)."""


class Group(_WithExamples, click.Group):
    """A berth group: its ``@group.command`` and ``@group.group`` make :class:`Command` and :class:`Group`."""

    command_class = Command
    group_class = type


def command(name: str | None = None, **attrs: Any) -> Callable[[Callable[..., Any]], Command]:
    """``click.command`` making a :class:`Command` (for commands a group attaches later, by name)."""
    make: Callable[[Callable[..., Any]], Command] = click.command(name, cls=Command, **attrs)
    return make


def examples_of(cmd: click.Command) -> list[str]:
    """The shell lines of ``cmd``'s Examples, each continued line (``\\``) joined; comments left out."""
    text = getattr(cmd, "examples", "") or ""
    joined = text.replace("\\\n", " ")
    return [
        " ".join(line.split())
        for line in joined.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]


# ---- -o/--output: one family of formats --------------------------------------------------------------------------

FORMATS = ("table", "wide", "json", "yaml", "name", "values")
"""Every format any ``-o`` offers; each command takes the ones that fit its output (kubectl's and helm's names)."""

RENAMED_FORMATS = {"text": "table"}
"""Old spellings still accepted (hidden from --help and completion), with a warning."""


class OutputFormat(click.Choice):  # type: ignore[type-arg]
    """A choice among some of :data:`FORMATS`; a renamed one (``text``) still works, with a one-line warning."""

    def __init__(self, formats: Sequence[str]) -> None:
        unknown = [f for f in formats if f not in FORMATS]
        if unknown:
            raise ValueError(f"not in the -o family {FORMATS}: {unknown}")
        super().__init__(list(formats))

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        new = RENAMED_FORMATS.get(value) if isinstance(value, str) else None
        if new is not None and new in self.choices:
            if ctx is None or not ctx.resilient_parsing:
                warn(f"-o {value} is deprecated and will be removed; use -o {new}")
            value = new
        return super().convert(value, param, ctx)


def output_option(*formats: str, default: str | None = None, help: str | None = None) -> Callable[[F], F]:
    """``-o/--output FORMAT`` choosing among ``formats`` (the first is the default unless ``default`` says)."""
    return click.option(
        "-o",
        "--output",
        type=OutputFormat(formats),
        default=formats[0] if default is None else default,
        show_default=True,
        help=help or "Output format.",
    )


def print_doc(doc: Any, output: str, *, one_line: bool = False) -> None:
    """A JSON-like document as ``-o json`` (indented; ``one_line`` for a record per run, as benchmarks and the
    shadow summary print it) or ``-o yaml`` prints it."""
    if output == "json":
        click.echo(json.dumps(doc) if one_line else json.dumps(doc, indent=2))
    elif output == "yaml":
        from berth.kube import yamlio

        click.echo(yamlio.dump(doc), nl=False)
    else:
        raise ValueError(f"not a document format: {output}")


def object_name(obj: dict[str, Any]) -> str:
    """An object as ``kubectl get -o name`` prints it: ``deployment.apps/web``, ``serviceaccount/web``."""
    from berth.kube import objects

    r = objects.ref(obj)
    kind = f"{r.kind.lower()}.{r.group}" if r.group else r.kind.lower()
    return f"{kind}/{r.name}"


# ---- --out: where a file or directory goes ---------------------------------------------------------------------


class _LegacyOutPath(click.ParamType):  # type: ignore[type-arg]
    """What ``-o`` used to take in a command that writes a file or directory: a path still works (with a warning);
    a format name is refused, since ``-o json`` meant a format to a kubectl user and wrote a file named ``json``."""

    name = "path"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        text = str(value)
        if text in FORMATS or text in RENAMED_FORMATS:
            raise InputError(
                f"-o selects an output format, and this command has none to choose; to write to a path named "
                f"{text!r}, use --out {text}",
                f"-o {text}",
            )
        if ctx is None or not ctx.resilient_parsing:
            warn(f"-o PATH is deprecated here and will be removed; use --out {text}")
        return Path(text)


def out_option(help: str, *, directory: bool = False, metavar: str | None = None) -> Callable[[F], F]:
    """``--out PATH`` (a file, or a directory when ``directory``), plus the old ``-o PATH`` hidden beside it.

    The command receives one ``out: Path | None``."""

    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        def command(*args: Any, out: Path | None, legacy_out: Path | None, **kwargs: Any) -> Any:
            if legacy_out is not None:
                if out is not None:
                    raise InputError("give the path once, with --out", "-o")
                out = legacy_out
            return fn(*args, out=out, **kwargs)

        wrapped = click.option("-o", "--output", "legacy_out", type=_LegacyOutPath(), hidden=True)(command)
        path = click.Path(file_okay=not directory, dir_okay=directory, path_type=Path)
        meta = metavar or ("DIR" if directory else "FILE")
        return click.option("--out", "out", type=path, metavar=meta, help=help)(wrapped)  # type: ignore[return-value]

    return decorate


# ---- -n/--namespace and --context/--kube-context ---------------------------------------------------------------


def namespace_option(help: str, **attrs: Any) -> Callable[[F], F]:
    """``-n/--namespace NAME`` (kubectl's and helm's spelling)."""
    return click.option("-n", "--namespace", metavar="NAME", help=help, **attrs)


def context_option(help: str) -> Callable[[F], F]:
    """``--context NAME`` (kubectl's name), also spelled ``--kube-context`` (helm's)."""
    return click.option("--context", "--kube-context", "context", metavar="NAME", help=help)


# ---- durations ---------------------------------------------------------------------------------------------------


def parse_seconds(text: str) -> float | None:
    """Seconds of a duration as a flag takes it: Go's form (``90s``, ``5m``, ``1h30m``, ``250ms``, as helm and
    kubectl take ``--timeout``), or a bare number of seconds (what berth's ``--timeout 300`` always meant).
    None when it is neither."""
    from berth.kube import durations

    t = text.strip()
    try:
        return float(t)
    except ValueError:
        return durations.parse_duration(t)


class Duration(click.ParamType):  # type: ignore[type-arg]
    """A positive duration (:func:`parse_seconds`) as seconds: a float, or whole seconds rounded up (a timeout is
    never shorter than asked) when ``whole``. Bad text is one ``error:`` line naming the flag, exit code 2."""

    name = "duration"

    def __init__(self, whole: bool = False) -> None:
        self.whole = whole

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        flag = max(param.opts, key=len) if param is not None and param.opts else "duration"
        if isinstance(value, int | float) and not isinstance(value, bool):
            seconds: float | None = float(value)
        else:
            seconds = parse_seconds(str(value))
        if seconds is None or not math.isfinite(seconds):
            raise InputError(
                f"{value!r} is not a duration; write it as Go does, like 90s, 5m, 1h30m or 250ms "
                "(a bare number is seconds)",
                flag,
            )
        if seconds <= 0:
            raise InputError(f"must be longer than zero, got {value!r}", flag)
        return math.ceil(seconds) if self.whole else seconds


def duration_option(*decls: str, default: str | None, help: str, whole: bool = True) -> Callable[[F], F]:
    """A duration flag (``--timeout``): Go's form, shown as DURATION with its default as written."""
    return click.option(
        *decls,
        type=Duration(whole),
        default=default,
        show_default=default is not None,
        metavar="DURATION",
        help=help,
    )


# ---- tables as wide as the terminal, never cut when piped --------------------------------------------------------

PIPED_WIDTH = 1_000_000
"""The width of a console that is not a terminal: unbounded in practice, so tables take the width their widest
cell needs and no line is wrapped or cut (kubectl's rule for piped output)."""


def is_terminal(stream: IO[str] | Any) -> bool:
    """Whether ``stream`` is a terminal (FORCE_COLOR does not make a pipe one)."""
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if isatty is not None else False
    except ValueError:  # closed
        return False


RULE_WIDTH = 80
"""How wide a horizontal rule is drawn when the console is unbounded (a rule has no width of its own)."""


def console(stream: IO[str] | None = None) -> Console:
    """A rich console for tables on ``stream`` (stdout): the terminal's own width on a terminal ($COLUMNS when
    set), else as wide as the content (:data:`PIPED_WIDTH`; its rules :data:`RULE_WIDTH`). Colour follows rich:
    none when piped or under NO_COLOR."""
    out = stream if stream is not None else sys.stdout
    cls = _console_class()
    if is_terminal(out):
        return cls(file=out)
    return cls(file=out, width=PIPED_WIDTH)


@functools.cache
def _console_class() -> type[Console]:
    from rich.console import Console
    from rich.rule import Rule

    class TableConsole(Console):
        """A console whose rules stay readable when its width is unbounded."""

        def rule(
            self, title: Any = "", *, characters: str = "─", style: Any = "rule.line", align: Any = "center"
        ) -> None:
            line = Rule(title=title, characters=characters, style=style, align=align)
            self.print(line, width=self.width if self.width < PIPED_WIDTH else RULE_WIDTH)

    return TableConsole


# ---- progress for anything slow ----------------------------------------------------------------------------------


class Status:
    """What a running operation shows on stderr: a spinner, what it does and how long it has taken. Does nothing
    when the display is off (stderr is not a terminal)."""

    def __init__(self, progress: Progress | None = None) -> None:
        self._progress = progress
        self._task: Any = None
        if progress is not None:
            self._task = progress.add_task("", total=None)

    @property
    def shown(self) -> bool:
        return self._progress is not None

    def update(self, description: str) -> None:
        """Say what is being done now."""
        if self._progress is not None:
            self._progress.update(self._task, description=description)

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """Take the display away while the body runs (a prompt that waits for the user)."""
        if self._progress is None:
            yield
            return
        self._progress.stop()
        try:
            yield
        finally:
            self._progress.start()


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection inside (as it was after): for imports and a short command's run. Their objects
    live until the command ends, so the collector would only walk them again and again (~4 ms of a setup's
    imports and as much of its run); cycles among them are few, and they are collected after."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def settle_gc() -> None:
    """For a long-lived process once it has loaded what it keeps (``berth cluster up`` once it serves, ``berth
    schedule run`` once its informers synced): what is alive now (modules, schema tables, the store's or the
    cache's objects) stays alive, so the cyclic collector need not re-scan it (``gc.freeze``); requests and
    scheduling cycles allocate many short-lived dicts that reference counting frees, so the young generation is
    collected less often (the server's cyclic GC: ~28 -> ~15 us of CPU per create). The live benchmark runs both
    processes this way."""
    gc.freeze()
    gc.set_threshold(10_000, 20, 20)


def progress_enabled(stream: IO[str] | Any = None) -> bool:
    """Show progress on ``stream`` (stderr)? Only on a terminal that can redraw a line (not TERM=dumb)."""
    return is_terminal(sys.stderr if stream is None else stream) and os.environ.get("TERM") != "dumb"


@contextlib.contextmanager
def progress(description: str) -> Iterator[Status]:
    """Show ``description`` with a spinner and the elapsed time on stderr while the body runs, then erase it.

    For every operation that can take more than two seconds. Silent when stderr is not a terminal (a pipe, a log,
    CI); no colour under NO_COLOR (rich's rule). stdout is left alone, so output and the display never mix."""
    if not progress_enabled():
        yield Status()
        return
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    shown = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=Console(file=sys.stderr),
        transient=True,
        redirect_stdout=False,
    )
    with shown:
        status = Status(shown)
        status.update(description)
        yield status
