"""Every example in README.md and docs/*.md: the repository paths it names exist, and its berth commands parse.

Parsing goes through click itself (the same command tree, option types and required options as a run), without
running anything. docs/cli.md is generated from that tree and is left out.
"""

from __future__ import annotations

import itertools
import re
import shlex
from pathlib import Path

import click
import pytest

from berth.cli import berth

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "cli.md")]
TOP = ("examples", "charts", "docs", "src", "tests", "scripts", "benchmarks", "constraints")
PATH = re.compile(rf"(?<![\w./$-])((?:{'|'.join(TOP)})/[\w./-]*[\w/])")
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
PLACEHOLDER = re.compile(r"<[^>]*>|\.\.\.|…|\b[A-Z][A-Z_]{2,}\b|\s\[-")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
INLINE = re.compile(r"`([^`\n]+)`")


def code_of(text: str) -> tuple[list[str], list[str]]:
    """(lines of fenced shell blocks with continuations joined: the examples; every other code span)."""
    lines: list[str] = []
    spans: list[str] = []
    for block in FENCE.finditer(text):
        if block[1] in ("", "sh", "bash", "console", "shell"):
            lines.extend(re.sub(r"\\\n\s*", " ", block[2]).splitlines())
        else:
            spans.append(block[2])
    spans.extend(INLINE.findall(FENCE.sub("", text)))  # inline mentions: paths are checked, commands are not
    return lines, spans


def commands(line: str) -> list[list[str]]:
    """The berth invocations in one shell line (after `|`, `&&`, `;`, `$(`), each as argv without `berth`."""
    out = []
    for segment in re.split(r"\|\||&&|[|;]|\$\(", line.split(" # ")[0].split("  #")[0]):
        segment = segment.split(")")[0].split(" > ")[0]  # the end of a $(...), a redirection
        try:
            words = shlex.split(segment.strip().lstrip("$ "))
        except ValueError:
            continue
        while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):  # VAR=value before the command
            words = words[1:]
        if words and words[0] in ("berth", ".venv/bin/berth", "$(BIN)/berth"):
            out.append(words[1:])
    return out


def examples() -> list[tuple[str, list[str]]]:
    found = []
    for doc in DOCS:
        lines, _ = code_of(doc.read_text(encoding="utf-8"))
        for line in lines:
            if PLACEHOLDER.search(line.split(" # ")[0]):
                continue
            found.extend((f"{doc.name}: {' '.join(argv)}", argv) for argv in commands(line))
    return found


def parse(argv: list[str]) -> None:
    """Resolve and parse ``berth ARGV`` down to the last command, as a run would, without invoking it."""
    cmd: click.Command = berth
    ctx = cmd.make_context("berth", list(argv))
    while isinstance(cmd, click.Group):
        protected = ctx.__dict__.get("_protected_args")  # click >= 8.2 (protected_args is deprecated there)
        rest = [*(ctx.protected_args if protected is None else protected), *ctx.args]
        if not rest:
            return
        name, sub, args = cmd.resolve_command(ctx, rest)
        assert sub is not None and name is not None
        cmd = sub
        ctx = cmd.make_context(name, args, parent=ctx)


EXAMPLES = examples()


INPUTS = ("--pull", "--config", "--cluster", "--workload", "--values", "-f", "--base")
"""Options that read a file or chart the example expects to be there (outputs are created by the command)."""


def test_the_docs_have_examples() -> None:
    assert len(EXAMPLES) >= 25


@pytest.mark.parametrize("argv", [argv for _, argv in EXAMPLES], ids=[name for name, _ in EXAMPLES])
def test_every_local_input_of_a_documented_command_exists(argv: list[str]) -> None:
    for option, value in itertools.pairwise(argv):
        value = value.split("=", 1)[-1] if option == "--base" else value
        if option in INPUTS and value.startswith(("./", *(f"{top}/" for top in TOP))):
            assert (ROOT / value).exists(), f"berth {shlex.join(argv)}: {option} {value} does not exist"


@pytest.mark.parametrize("argv", [argv for _, argv in EXAMPLES], ids=[name for name, _ in EXAMPLES])
def test_every_documented_command_parses(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # examples are written from the repository root
    try:
        parse(argv)
    except click.exceptions.Exit:
        pass  # --help, --version
    except click.UsageError as exc:
        message = exc.format_message()
        # an output or work path an earlier step creates (`/tmp/w`, `work`) is fine; anything else is not
        if not re.search(r"(Path|Directory|File) '[^']+' does not exist", message):
            pytest.fail(f"berth {shlex.join(argv)}: {message}")


@pytest.mark.parametrize("doc", DOCS, ids=[d.name for d in DOCS])
def test_every_repository_path_in_the_docs_exists(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    lines, spans = code_of(text)
    named = {m for chunk in [*lines, *spans] for m in PATH.findall(chunk) if not PLACEHOLDER.search(m)}
    named |= {m for m in LINK.findall(text) if not re.match(r"\w+://|mailto:", m)}
    base = {m: (doc.parent if m in LINK.findall(text) else ROOT) for m in named}
    missing = sorted(m for m in named if not (base[m] / m).exists() and not (ROOT / m).exists())
    assert missing == [], f"{doc.name} names paths that do not exist"
