"""Small builders and checks shared by tests: tiny benchmarks, hand-made results and MDAD tables, the command
line run in-process, an independent reading of the noise rule, the package's import graph, strict builds."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pandas as pd

import mbutils
from chapter_batch import BackgroundProcess
from mbutils.data.bundle import Benchmark


#: The installed package's folder (what :func:`import_graph` reads).
PACKAGE = Path(mbutils.__file__).resolve().parent


#: The front matter of a MyST Markdown notebook (jupytext), for chapters and pages the tests write.
MYST_FRONT_MATTER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
"""


def random_benchmark(n_models=40, subtask_sizes=(30, 10, 20), seed=0, confidence=False,
                     name="tiny") -> Benchmark:
    """Rasch-like 0/1 data: abilities and difficulties drawn from a fixed seed."""
    rng = np.random.default_rng(seed)
    n_items = sum(subtask_sizes)
    theta = rng.normal(0, 1, n_models)[:, None]
    b = rng.normal(0, 1, n_items)[None, :]
    p = 1 / (1 + np.exp(-(theta - b)))
    correct = (rng.random(p.shape) < p).astype(np.int8)
    subtasks = np.repeat([f"s{i}" for i in range(len(subtask_sizes))], subtask_sizes)
    conf = np.clip(p + rng.normal(0, 0.05, p.shape), 0, 1) if confidence else None
    return Benchmark(
        name=name, correct=correct, confidence=conf,
        models=[f"m{i:03d}" for i in range(n_models)],
        items=[f"q{j:04d}" for j in range(n_items)], subtasks=subtasks,
        target_sets={"first_five": [f"m{i:03d}" for i in range(5)]},
    )


def results_table(estimates, correct, n_seen, run=0, selector="x", size=10) -> pd.DataFrame:
    """A one-run results table from per-target estimates and seen correct counts."""
    estimates = np.asarray(estimates, dtype=float)
    correct = np.asarray(correct)
    return pd.DataFrame({
        "run": run, "selector": selector, "size": size,
        "model": [f"t{i:02d}" for i in range(len(estimates))],
        "estimate": estimates, "seen_correct": correct, "n_seen": n_seen,
        "unseen_correct": correct, "n_unseen": n_seen,
        "seen_accuracy": correct / n_seen, "unseen_accuracy": correct / n_seen,
        "full_accuracy": correct / n_seen,
    })


def mdad_rows(rows) -> pd.DataFrame:
    """An MDAD table from (selector, size, mdad) tuples, its interval bounds unknown (NaN)."""
    return pd.DataFrame(rows, columns=["selector", "size", "mdad"]).assign(ci_low=np.nan, ci_high=np.nan)


def run_cli(*args) -> tuple[int, str, str]:
    """``python -m mbutils ARGS`` in-process: (exit code, stdout, stderr)."""
    import io
    from contextlib import redirect_stderr, redirect_stdout

    from mbutils.cli import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


def run_command(*args) -> tuple[int, str, str]:
    """``python -m mbutils ARGS`` in-process, a malformed command line included (argparse's exit 2):
    (exit code, stdout, stderr)."""
    import io
    from contextlib import redirect_stderr, redirect_stdout

    from mbutils.cli import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main([str(a) for a in args])
        except SystemExit as exit:
            code = exit.code
    return code, out.getvalue(), err.getvalue()


def independent_interval(mdad, low, high, width=0.5):
    """The rule's interval written out case by case (no shared code with mbutils.evaluate.noise)."""
    if mdad is None or not np.isfinite(mdad):
        return np.inf, np.inf
    has_low, has_high = low is not None and np.isfinite(low), high is not None and np.isfinite(high)
    lo = low if has_low else mdad
    if has_high:
        hi = high
    elif has_low:
        hi = np.inf  # open: the pessimistic bound never crossed
    else:
        hi = mdad
    return lo, hi + width


def check_verdict(claim_fn: str, inputs: dict, text: str) -> None:
    """Fail when a glued comparison names a winner that the intervals do not support."""
    from mbutils.book.findings import claims

    if claim_fn != "best_at_size":
        return
    rows = pd.DataFrame.from_records(inputs["mdad"])
    part = rows[rows["size"] == inputs["size"]]
    iv = {r.selector: independent_interval(r.mdad, r.ci_low, r.ci_high)
          for r in part.astype(object).where(part.notna(), None).itertuples()}
    winners = [s for s, (lo, hi) in iv.items() if all(hi < iv[o][0] for o in iv if o != s)]
    if "is the most reliable method" in text:
        assert len(winners) == 1 and text.startswith(claims.label(winners[0])), (text, iv)
    else:
        assert not winners, (text, iv)


def _module_name(path: Path, package: Path = PACKAGE) -> str:
    rel = path.relative_to(package).with_suffix("")
    parts = [p for p in rel.parts if p != "__init__"]
    return ".".join(["mbutils", *parts])


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """mbutils module -> the mbutils modules it imports anywhere in its source, the package root
    (``mbutils``, the interface layer) included: ``from mbutils import X`` is an import of the root
    unless X is a module of the package."""
    modules = {_module_name(p, package): p for p in package.rglob("*.py")}
    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
                candidates = [target] + [f"{target}.{a.name}" for a in node.names]
                deps |= {c for c in candidates if c in modules}
            elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "mbutils":
                subs = {f"{node.module}.{a.name}" for a in node.names} & set(modules)
                deps |= subs if len(subs) == len(node.names) else subs | ({node.module} & set(modules))
            elif isinstance(node, ast.Import):
                deps |= {a.name for a in node.names if a.name in modules}
        deps.discard(name)
        graph[name] = deps
    return graph


class StrictBuild(BackgroundProcess):
    """A strict book build started now, in the background; :meth:`result` waits for it and checks it.

    Builds are started ahead of the tests that read them (``quick_book``) or beside each other (the
    two copies): a build is mostly one or two busy cores, and the tests meanwhile use the rest.
    """

    def __init__(self, command: list[str], env: dict, what: str):
        self.what = what
        super().__init__(command, env)

    def result(self, timeout: float = 3600) -> tuple[str, float]:
        """(log, minutes) once the build has exited 0 with no warning; fails with its warnings otherwise."""
        log, minutes, late = self.wait(timeout)
        warnings = [line for line in log.splitlines() if "WARNING" in line and "IPKernelApp" not in line]
        assert self.returncode == 0 and not warnings, (
            f"strict build of {self.what} failed ({f'timed out after {timeout:.0f} s, ' if late else ''}"
            f"exit {self.returncode}) after {minutes:.1f} min:\n" + "\n".join(warnings[:30]) + "\n" + log[-3000:])
        return log, minutes



def shipped_estimate(name: str, right_docs: set) -> float:
    """The library's estimate (points) of a shipped GPQA micro-benchmark for a model right on the documents
    ``right_docs`` of the leaderboard's split (items ``gpqa_main_<doc>``): what ``score`` must print."""
    import numpy as np

    from mbutils import load_benchmark, load_micro
    from mbutils.micro.heldout import calibration_errors, estimate_and_interval

    bench = load_benchmark("gpqa")
    row = np.array([[float(int(str(item).rsplit("_", 1)[1]) in right_docs) for item in bench.items]])
    built = load_micro(name)
    where = np.array([list(map(str, bench.items)).index(str(item)) for item in built.items])
    errors = calibration_errors(built.calibration) if built.interval == "empirical" else np.zeros(0)
    estimate, _ = estimate_and_interval(built.interval, built.micro, row[:, where], None, errors, bench.n_items, 0.9)
    return float(100 * estimate[0])
