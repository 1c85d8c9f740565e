"""``berth demo``: the README's main job on the embedded cluster (see :mod:`berth.demo.main`).

Modules: :mod:`.main` (the six steps), :mod:`.admin` (admin requests, ServiceAccount identities, audit counts,
bounded waits), :mod:`.shapes` (the measured comparison of the two deployment shapes), :mod:`.page` (the HTML
report).
"""

from berth.demo.admin import DemoError
from berth.demo.main import run
from berth.demo.result import DemoResult

__all__ = ["DemoError", "DemoResult", "run"]
