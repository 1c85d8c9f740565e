"""Every command's ``--help`` ends with Examples, every example parses, and a sample of them runs as written.

The sample runs in a scratch directory that sees the repository's ``examples/`` (the examples name its files), in
the order a user would type them: package, setup, plan, script, verify, export, the schedule commands, and the
embedded cluster's up, status and down. Examples that need a cluster of their own (``--kube-context kind-dev``,
the live install actions) are parsed but not run here; the live tests run those commands.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from berth import cli, cliopts
from berth.cli import berth

ROOT = Path(__file__).resolve().parents[1]


def walk(cmd: click.Command, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    yield path, cmd
    if isinstance(cmd, click.Group):
        for name in sorted(cmd.commands):
            yield from walk(cmd.commands[name], (*path, name))


COMMANDS = list(walk(berth))
IDS = [" ".join(("berth", *p)) for p, _ in COMMANDS]


def invocations(line: str) -> list[tuple[dict[str, str], list[str]]]:
    """The berth commands of one example line (a pipe, ``&&`` or ``;`` may join others; ``> FILE`` is dropped),
    each with the ``VAR=value`` words before it and its arguments."""
    found = []
    line = line.split(" # ")[0]  # a comment at the end of the line
    inner = re.findall(r"\$\(([^)]*)\)", line)  # $(...): a command of its own, whose output is one word here
    for segment in [*inner, *re.split(r"\|\||&&|[|;]", re.sub(r'"?\$\([^)]*\)"?', "OUTPUT", line))]:
        words = shlex.split(segment.split(" > ")[0])
        env = {}
        while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
            key, _, value = words.pop(0).partition("=")
            env[key] = value
        if words and words[0] == "berth":
            found.append((env, words[1:]))
    return found


def parse(argv: list[str]) -> click.Command:
    """Resolve and parse ``berth ARGV`` down to its command, as a run would, without running it."""
    cmd: click.Command = berth
    ctx = cmd.make_context("berth", list(argv))
    while isinstance(cmd, click.Group):
        protected = ctx.__dict__.get("_protected_args")  # click >= 8.2 (protected_args is deprecated there)
        rest = [*(ctx.protected_args if protected is None else protected), *ctx.args]
        if not rest:
            break
        name, sub, args = cmd.resolve_command(ctx, rest)
        assert sub is not None and name is not None
        cmd = sub
        ctx = cmd.make_context(name, args, parent=ctx)
    return cmd


@pytest.mark.parametrize(("path", "cmd"), COMMANDS, ids=IDS)
def test_help_ends_with_examples_of_the_command(path: tuple[str, ...], cmd: click.Command) -> None:
    ctx = click.Context(cmd, info_name=" ".join(("berth", *path)))
    text = cmd.get_help(ctx)
    sections = re.findall(r"^([A-Z][a-z]+):$", text, re.MULTILINE)
    assert sections and sections[-1] == "Examples", f"sections: {sections}"
    mine = [argv for line in cliopts.examples_of(cmd) for _, argv in invocations(line)]
    assert any(argv[: len(path)] == list(path) for argv in mine), f"no example runs berth {' '.join(path)}"
    assert "Examples:" not in text.split("\nOptions:")[0], "Examples belong after Options"


EXAMPLES = [
    (f"{' '.join(('berth', *path))}: {line}", argv, path)
    for path, cmd in COMMANDS
    for line in cliopts.examples_of(cmd)
    for _, argv in invocations(line)
]


def test_there_are_examples_to_check() -> None:
    assert len(COMMANDS) >= 36 and len(EXAMPLES) >= 2 * len(COMMANDS)


@pytest.mark.parametrize(("argv", "path"), [e[1:] for e in EXAMPLES], ids=[e[0] for e in EXAMPLES])
def test_every_example_parses(
    argv: list[str], path: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)  # examples are written from the repository root
    try:
        parse(argv)
    except click.UsageError as exc:
        pytest.fail(f"berth {shlex.join(argv)}: {exc.format_message()}")


# ---- a sample, run as written ------------------------------------------------------------------------------------

SAMPLE = [
    ("install", "package"),
    ("install", "setup"),
    ("install", "plan"),
    ("install", "script"),
    ("install", "verify"),
    ("install", "export"),
    ("schedule", "simulate"),
    ("schedule", "compare"),
    ("schedule", "config"),
    ("schedule", "rbac"),
    ("schedule", "manifests"),
    ("tools", "path"),
]
"""The commands whose every example runs offline, in the order their examples build on each other."""

NEEDS_A_CLUSTER = ("--live", "--kube-context")


def examples_of(path: tuple[str, ...]) -> list[tuple[dict[str, str], list[str]]]:
    cmd = dict(COMMANDS)[path]
    runs = [inv for line in cliopts.examples_of(cmd) for inv in invocations(line)]
    return [(env, argv) for env, argv in runs if not any(flag in argv for flag in NEEDS_A_CLUSTER)]


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run_example(env: dict[str, str], argv: list[str], monkeypatch: pytest.MonkeyPatch) -> int:
    for entry in env.get("PYTHONPATH", "").split(":"):
        if entry:
            monkeypatch.syspath_prepend(str(Path(entry).resolve()))
    return cli.main(argv)


def test_a_sample_of_the_examples_runs_as_written(
    scratch: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ran = []
    for path in SAMPLE:
        for env, argv in examples_of(path):
            code = run_example(env, argv, monkeypatch)
            out, err = capsys.readouterr()
            assert code == 0, f"berth {shlex.join(argv)}: exit {code}\n{err}"
            assert out.strip(), f"berth {shlex.join(argv)} printed nothing"
            ran.append(argv)
    assert len(ran) >= 25
    assert (
        (scratch / "install.sh").is_file()
        and (scratch / "edge-argocd").is_dir()
        and (scratch / "placement.html").is_file()
    )


def test_the_cluster_examples_run_as_written(
    scratch: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    group = [argv for _, argv in examples_of(("cluster",)) if argv[:1] == ["cluster"]]
    status = [argv for _, argv in examples_of(("cluster", "status"))]
    up, down = group[0], group[-1]
    assert up[:2] == ["cluster", "up"] and down == ["cluster", "down"] and len(status) == 2
    assert cli.main(up) == 0
    try:
        for argv in status:
            assert cli.main(argv) == 0
        out = capsys.readouterr().out
        assert "running: yes" in out and '"running": true' in out
    finally:
        assert cli.main(down) == 0
    assert "stopped the cluster" in capsys.readouterr().out
