"""The ``berth`` console script: the CLI imported with the cyclic garbage collector paused, then frozen.

Importing the CLI (click, typing, PyYAML, berth's own modules) creates some hundred thousand objects that all live
as long as the process: the collector would walk them ~30 times during the imports and free nothing (~3 ms of
every command's start). They are moved to the permanent generation instead (``gc.freeze``), and collection goes
on as before for what the command itself allocates (a short command pauses it, a server settles it:
:mod:`berth.cliopts`). ``berth.cli:main`` stays the function that runs a command line.
"""

from __future__ import annotations

import gc


def main() -> int:
    enabled = gc.isenabled()
    gc.disable()
    try:
        from berth.cli import main as run
    finally:
        gc.freeze()
        if enabled:
            gc.enable()
    return run()
