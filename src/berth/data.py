"""Where berth's shipped data files are: the demo's chart and example, in a wheel or in a source checkout.

A wheel carries copies of ``charts/berth-scheduler`` and ``examples/two-profiles`` inside the package
(``berth/_data/``, copied there at build time by ``setup.py``), so ``pip install`` of the wheel runs ``berth demo``;
a source checkout (the editable install ``make setup`` makes) reads the repository's own files. One function
answers for both, so nothing else needs to know which it is.
"""

from __future__ import annotations

from pathlib import Path

PACKAGED = Path(__file__).resolve().parent / "_data"
REPOSITORY = Path(__file__).resolve().parents[2]
SHIPPED = ("charts/berth-scheduler", "examples/two-profiles")
"""The folders the wheel carries (``setup.py`` copies exactly these)."""


def path(relative: str) -> Path:
    """``relative`` (e.g. ``"examples/two-profiles"``) in the installed package's copy, else in the checkout."""
    packaged = PACKAGED / relative
    return packaged if packaged.exists() else REPOSITORY / relative


def shown(found: Path) -> str:
    """``found`` as a user would type it: relative to the checkout when it is there, else absolute."""
    try:
        return str(found.relative_to(REPOSITORY))
    except ValueError:
        return str(found)
