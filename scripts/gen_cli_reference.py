"""Regenerate docs/cli.md from the click command tree (run: .venv/bin/python scripts/gen_cli_reference.py)."""

from __future__ import annotations

from pathlib import Path

import click

from berth.cli import berth


def walk(cmd: click.Command, path: list[str]) -> list[tuple[list[str], click.Command]]:
    out = [(path, cmd)]
    if isinstance(cmd, click.Group):
        for name in sorted(cmd.commands):
            out.extend(walk(cmd.commands[name], [*path, name]))
    return out


def main() -> None:
    lines = [
        "# CLI reference",
        "",
        "Generated from the command tree by `scripts/gen_cli_reference.py`; `berth COMMAND --help` shows the same.",
        "Exit codes: 0 success, 1 failure, 2 bad input, 3 not implemented yet.",
        "",
    ]
    for path, cmd in walk(berth, ["berth"]):
        ctx = click.Context(cmd, info_name=" ".join(path))
        lines.append(f"{'#' * min(len(path) + 1, 4)} `{' '.join(path)}`")
        lines.append("")
        lines.append("```")
        lines.append(cmd.get_help(ctx).rstrip())
        lines.append("```")
        lines.append("")
    Path(__file__).resolve().parents[1].joinpath("docs", "cli.md").write_text(
        "\n".join(lines), encoding="utf-8"
    )


if __name__ == "__main__":
    main()
