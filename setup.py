"""Build hook: copy the demo's chart and example into the wheel, so an installed berth runs ``berth demo``.

Everything else about the package is in pyproject.toml. The copies land in ``berth/_data/`` (see
:mod:`berth.data`); the repository's folders stay the one source.
"""

import shutil
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

sys.path.insert(0, str(Path(__file__).resolve().parent / "src"))
from berth.data import SHIPPED


class BuildPyWithData(build_py):
    def run(self) -> None:
        super().run()
        root = Path(__file__).resolve().parent
        for relative in SHIPPED:
            source = root / relative
            if source.is_dir():  # absent only in a broken sdist; berth.data then says what is missing
                shutil.copytree(
                    source, Path(self.build_lib) / "berth" / "_data" / relative, dirs_exist_ok=True
                )


setup(cmdclass={"build_py": BuildPyWithData})
