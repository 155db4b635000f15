"""The wheel carries the real bundles: build_py copies them from the repository's data/ into the package.

``data/`` stays at the repository's top level (the book and the tests read it there); a wheel has no
repository, so its build step copies the bundles the shipped micro-benchmarks need into
``mbutils/data/shipped/``, where :mod:`mbutils.data.datapath` looks when ``data/`` is absent. The
paper's result tables (``data/paper-results``) are the book's, not the library's, and stay out.
Everything else is configured in pyproject.toml.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
#: The real bundles a wheel carries (about 450 KB): those of the shipped micro-benchmarks and MMLU-Pro's other source.
BUNDLES = ("gpqa", "bbh-leaderboard", "mmlu-pro-leaderboard", "mmlu-pro-tiger-lab", "musr-leaderboard",
           "math-hard-leaderboard", "ifeval-leaderboard")


class BuildWithBundles(build_py):
    """build_py, then data/<bundle> copied into build_lib/mbutils/data/shipped/<bundle>."""

    def run(self):
        super().run()
        for name in BUNDLES:
            source = HERE / "data" / name
            if not source.is_dir():  # an sdist without data/: nothing to copy, the wheel reads MBUTILS_DATA
                continue
            target = Path(self.build_lib) / "mbutils" / "data" / "shipped" / name
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


setup(cmdclass={"build_py": BuildWithBundles})
