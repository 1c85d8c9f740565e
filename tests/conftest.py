"""Suite-wide setup: the suite's own cache folder.

berth keeps what it can recompute (``helm version`` per binary, decoded large YAML) in
:func:`berth.kube.tools.cache_dir`. A test run must neither read what a user's earlier runs left there nor fill the
user's ``~/.cache/berth``, so every test process (each xdist worker, and every berth process a test starts, which
inherits the environment) uses a fresh folder of its own, removed at the end. A ``BERTH_CACHE_DIR`` set by whoever
runs the suite is kept.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

_OWN_CACHE: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    if not os.environ.get("BERTH_CACHE_DIR"):
        path = tempfile.mkdtemp(prefix="berth-test-cache-")
        _OWN_CACHE.append(path)
        os.environ["BERTH_CACHE_DIR"] = path


def pytest_unconfigure(config: pytest.Config) -> None:
    while _OWN_CACHE:
        shutil.rmtree(_OWN_CACHE.pop(), ignore_errors=True)
