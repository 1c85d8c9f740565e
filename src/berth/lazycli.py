"""Click groups whose subcommands are imported when used: one implementation for ``berth`` and its parts.

Why: ``berth cluster up`` must not pay for the schedule part's numpy or the official client's models before it can
serve, and ``berth schedule --help`` must not load the scheduler framework to list its commands.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, MutableMapping

import click

from berth import cliopts


class LazyCommands(MutableMapping[str, click.Command]):
    """A group's commands by name, each given as ``"module:attribute"`` and imported on first lookup.

    Listing names (shell completion of names) imports nothing; looking a command up imports its module. Running
    one command imports only that command's module, but ``--help`` of the group looks every command up for its
    short help: keep heavy imports inside the command functions so that listing stays cheap.
    """

    def __init__(self, specs: dict[str, str]) -> None:
        self._specs = dict(specs)
        self._loaded: dict[str, click.Command] = {}

    def __getitem__(self, name: str) -> click.Command:
        cmd = self._loaded.get(name)
        if cmd is None:
            module, _, attr = self._specs[name].partition(":")
            with cliopts.gc_paused():
                cmd = getattr(importlib.import_module(module), attr)
            if not isinstance(cmd, click.Command):
                raise TypeError(f"{self._specs[name]} is not a click command")
            self._loaded[name] = cmd
        return cmd

    def __setitem__(self, name: str, cmd: click.Command) -> None:
        self._specs.pop(name, None)
        self._loaded[name] = cmd

    def __delitem__(self, name: str) -> None:
        found = self._specs.pop(name, None) is not None
        found = self._loaded.pop(name, None) is not None or found
        if not found:
            raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        yield from self._specs
        yield from (name for name in self._loaded if name not in self._specs)

    def __len__(self) -> int:
        return len(self._specs.keys() | self._loaded.keys())
