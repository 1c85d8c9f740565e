"""Install: chart -> package -> wizard -> real Helm render -> split -> lifecycle plan -> apply | script.

The public face other parts use (``berth demo`` sets a chart up, prints its plan and applies it); nothing outside
this part reaches its submodules. What it exports:

- setup: :class:`SetupOptions` -> :func:`run_setup` -> :class:`SetupResult` (a work dir, written atomically);
- the work dir and its plans: :func:`load_workdir` -> :class:`Workdir`, :func:`build_plan` -> :class:`Plan` of an
  :class:`Action`, :func:`render_plan` (the text ``berth install plan`` prints);
- the live executor: :class:`ApplyOptions`, :func:`load_plan` (work dir and plan in one call), :func:`run_apply`
  (``berth install apply``) with a :class:`Reporter` for progress, :class:`Outcome`, and :class:`RunFailed` when a
  step fails.

Exported functions carry a verb (``run_setup``, not ``setup``) so they never shadow the submodule of that name.
The names are resolved on first use (PEP 562 ``__getattr__``): every submodule -- the CLI's too -- imports this
package first, and ``berth install --help`` should not pay for the Kubernetes client.
"""

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from berth.install.apply import ApplyOptions, Outcome, Reporter, RunFailed, load_plan
    from berth.install.apply import run as run_apply
    from berth.install.plan import Action, Plan
    from berth.install.plan import render_text as render_plan
    from berth.install.setup import SetupOptions, SetupResult
    from berth.install.setup import run as run_setup
    from berth.install.workdir import Workdir, build_plan, load_workdir

__all__ = [
    "Action",
    "ApplyOptions",
    "Outcome",
    "Plan",
    "Reporter",
    "RunFailed",
    "SetupOptions",
    "SetupResult",
    "Workdir",
    "build_plan",
    "load_plan",
    "load_workdir",
    "render_plan",
    "run_apply",
    "run_setup",
]

# Exported name -> (module, attribute) it is read from on first use.
_LAZY = {
    **{
        n: ("berth.install.apply", n)
        for n in ("ApplyOptions", "Outcome", "Reporter", "RunFailed", "load_plan")
    },
    "run_apply": ("berth.install.apply", "run"),
    "Action": ("berth.install.plan", "Action"),
    "Plan": ("berth.install.plan", "Plan"),
    "render_plan": ("berth.install.plan", "render_text"),
    "SetupOptions": ("berth.install.setup", "SetupOptions"),
    "SetupResult": ("berth.install.setup", "SetupResult"),
    "run_setup": ("berth.install.setup", "run"),
    **{n: ("berth.install.workdir", n) for n in ("Workdir", "build_plan", "load_workdir")},
}


def __getattr__(name: str) -> object:
    """Import an exported name's module on first access and cache the name here."""
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value
