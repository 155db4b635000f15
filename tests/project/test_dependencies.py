"""The library and the command line work without the book's packages (the ``book`` extra)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import tomllib

from conftest import REPO

BOOK_ONLY = ("matplotlib", "seaborn", "nbformat", "jupytext", "papermill", "nbconvert", "ipykernel", "IPython",
             "myst_nb", "jupyter_book", "sphinx")

BLOCKER = textwrap.dedent(f"""
    import sys
    BLOCKED = {BOOK_ONLY!r}
    class Blocker:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ImportError(f"{{name}} is not installed (blocked by the test)")
            return None
    sys.meta_path.insert(0, Blocker())
    import importlib.util
    _find_spec = importlib.util.find_spec
    importlib.util.find_spec = lambda name, *a: None if name.split(".")[0] in BLOCKED else _find_spec(name, *a)
""")


def _run(code: str, tmp_path):
    script = tmp_path / "run.py"
    script.write_text(BLOCKER + textwrap.dedent(code))
    env = {**os.environ, "MBUTILS_CACHE": str(tmp_path / "cache")}
    return subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)


def test_core_dependencies_leave_the_book_stack_to_an_extra():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    core = {re.split(r"[<>=\[ ]", d)[0].lower() for d in project["dependencies"]}
    book = {re.split(r"[<>=\[ ]", d)[0].lower() for d in project["optional-dependencies"]["book"]}
    assert not core & {"matplotlib", "seaborn", "nbformat", "jupytext", "papermill", "nbconvert", "ipykernel",
                       "myst-nb", "jupyter-book"}
    assert {"matplotlib", "seaborn", "papermill", "myst-nb", "jupyter-book", "numpydoc"} <= book


def test_library_and_command_line_run_without_the_book_packages(tmp_path):
    proc = _run("""
        import mbutils
        bench = mbutils.load_benchmark("synthetic-gpqa")
        res = mbutils.run_experiment(bench, ["random", mbutils.AnchorPoints()], [10], mbutils.Protocol(
            n_sources=40, n_targets=10, n_runs=2), progress=False)
        print(len(mbutils.mdad_table(res)), len(mbutils.summary_table(res)))
        from mbutils.cli import main
        code = main(["experiment", "--data", "synthetic-gpqa", "--selectors", "random", "--sizes", "10",
                     "--runs", "2", "--sources", "40", "--targets", "10", "--quiet", "--out", "r.parquet"])
        code += main(["mdad", "r.parquet"])
        chapter = main(["run-chapter", "measures", "--out", "pages"])
        print("codes", code, chapter)
        print("loaded", sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED))
    """, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "2 2" in proc.stdout and "codes 0 1" in proc.stdout, proc.stdout + proc.stderr[-2000:]
    assert "loaded []" in proc.stdout
    assert "run-chapter needs the book's packages" in proc.stderr and "mbutils[book]" in proc.stderr


def test_requirements_pin_every_declared_dependency_within_its_range():
    """requirements.txt (what CI and the book's workflow install) pins each dependency of the
    library, the book and the PDF extras, at a version their pyproject range allows."""
    from packaging.requirements import Requirement

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    pins = {}
    for line in (REPO / "requirements.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            name, version = line.split("==")
            pins[name.lower().replace("_", "-")] = version
    declared = [*project["dependencies"], *project["optional-dependencies"]["book"],
                *project["optional-dependencies"]["pdf"]]
    problems = []
    for spec in declared:
        req = Requirement(spec)
        name = req.name.lower().replace("_", "-")
        if name not in pins:
            problems.append(f"{name} is not pinned")
        elif not req.specifier.contains(pins[name], prereleases=True):
            problems.append(f"{name}=={pins[name]} is outside {req.specifier}")
    assert not problems, problems
