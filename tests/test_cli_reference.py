"""docs/cli.md must name every command users can run (regenerate with scripts/gen_cli_reference.py)."""

from __future__ import annotations

from pathlib import Path

import click

from berth.cli import berth

DOC = Path(__file__).resolve().parents[1] / "docs" / "cli.md"


def _paths(cmd: click.Command, path: str) -> list[str]:
    out = [path]
    if isinstance(cmd, click.Group):
        for name, sub in cmd.commands.items():
            out.extend(_paths(sub, f"{path} {name}"))
    return out


def test_every_command_is_documented() -> None:
    text = DOC.read_text(encoding="utf-8")
    missing = [p for p in _paths(berth, "berth") if f"`{p}`" not in text]
    assert missing == [], f"run scripts/gen_cli_reference.py; undocumented: {missing}"
