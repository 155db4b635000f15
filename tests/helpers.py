"""Small builders shared by tests: tiny benchmarks and hand-made results tables."""

from __future__ import annotations

import numpy as np
import pandas as pd

from chapter_batch import BackgroundProcess
from mbutils.data.bundle import Benchmark


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


def run_cli(*args) -> tuple[int, str, str]:
    """``python -m mbutils ARGS`` in-process: (exit code, stdout, stderr)."""
    import io
    from contextlib import redirect_stderr, redirect_stdout

    from mbutils.cli import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


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

