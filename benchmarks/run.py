"""Speed and memory of the whole jobs the issues set targets for (reported, not asserted).

    python benchmarks/run.py SUITE [SUITE ...] [--baseline REV] [--runs N] [--repeat N]

Suites: ``foundation``, ``selectors``, ``scale``, ``adaptive`` (experiments), ``paper`` (the paper
profile's experiments on every benchmark: 50 runs, all sizes, all fourteen selectors),
``book`` (the quick and default book builds from a clean cache), ``paper-book`` (the
paper-profile build, the same way), ``ci`` (``.ci/run`` on a clean clone) and ``targets``
(the jobs of the speed issues, each printed with its target (``TARGETS``): GPQA with the
fourteen static selectors at ``--jobs 2``, synthetic MMLU-Pro with every selector over 50 runs, the
quick, default and paper-profile books and ``.ci/run``; the paper book and ``.ci/run`` take about
an hour and 20 minutes, ``--only`` picks).

Each job runs in a fresh process: experiments as ``python -m mbutils experiment ...
--no-cache`` (synthetic bundles are generated once beforehand, so generation is not
counted), books as ``jupyter-book build`` into a temporary folder with an empty results
cache. Reported: wall time, CPU time (user + system of the job and every process it
waited for, workers included) and peak resident memory of the process tree.

``--baseline REV`` checks out the git revision REV into a temporary worktree and runs
every job a second time with that implementation, right after the current one, so the
ratio (baseline / current wall time) compares the two on the same machine in the same
load. ``--only TEXT`` (repeatable) keeps the jobs whose label contains one of the TEXTs; ``--runs N`` shrinks the experiments' runs (for a quick look; the targets are for 50).
``--repeat N`` times every job N times, current and baseline taking turns, and reports the run
with the median wall time and the range of the N: on a shared 2-core machine one GPQA
experiment took 7.9 s and 9.6 s in two runs of the same code an hour apart.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from measure import Measurement, measure  # noqa: E402

PY = sys.executable
REPO = Path(__file__).resolve().parents[1]
RANDOM = "random,subtask_equal,subtask_equal_weighted,subtask_proportional,subtask_proportional_weighted"
PAPER = "random,subtask_equal,subtask_proportional,confidence_stratified,diversity,anchor_points,tinybenchmarks"
ALL = (PAPER + ",subtask_equal_weighted,subtask_proportional_weighted,diversity_weighted,"
       "anchor_points_binary,tinybenchmarks_irt,tinybenchmarks_pirt,tinybenchmarks_gpirt")
BIG_SIZES = "10,25,50,100,250,500,1000"
GPQA_SIZES = "10,25,50,100,200"
PAPER_POOL = ["--sources", "300", "--targets", "50"]
JOBS2 = ["--jobs", "2"]
ADAPTIVE = "adaptive_fisher,adaptive_randomesque,adaptive_pirt"
FITTED_POOL = ["FITTED_POOL"]  # replaced by the book's pool for the bundle (mbutils.methods.protocol.fit_to_pool)

# (label, data, selectors, sizes, extra arguments)
EXPERIMENTS = {
    "foundation": [
        ("gpqa, random family", "gpqa", RANDOM, GPQA_SIZES, PAPER_POOL),
        ("synthetic-mmlu-pro, random family", "synthetic-mmlu-pro", RANDOM, BIG_SIZES, PAPER_POOL),
    ],
    "selectors": [
        ("gpqa, every selector", "gpqa", ALL, GPQA_SIZES, PAPER_POOL),
        ("synthetic-bbh, every selector", "synthetic-bbh", ALL, BIG_SIZES, PAPER_POOL + JOBS2),
        ("synthetic-mmlu-pro, every selector", "synthetic-mmlu-pro", ALL, BIG_SIZES, PAPER_POOL + JOBS2),
    ],
    "scale": [
        ("synthetic-mmlu-pro, random family, jobs 1", "synthetic-mmlu-pro", RANDOM, BIG_SIZES, PAPER_POOL + ["--jobs", "1"]),
        ("synthetic-mmlu-pro, random family, jobs 2", "synthetic-mmlu-pro", RANDOM, BIG_SIZES, PAPER_POOL + JOBS2),
        ("synthetic-mmlu-pro, random family, dask 2", "synthetic-mmlu-pro", RANDOM, BIG_SIZES,
         PAPER_POOL + JOBS2 + ["--backend", "dask"]),
    ],
    "paper": [
        ("gpqa, 14 selectors, jobs 1", "gpqa", ALL, GPQA_SIZES, PAPER_POOL + ["--jobs", "1"]),
        ("gpqa, 14 selectors, jobs 2", "gpqa", ALL, GPQA_SIZES, PAPER_POOL + JOBS2),
        ("bbh-leaderboard, 14 selectors", "bbh-leaderboard", ALL, BIG_SIZES, FITTED_POOL + JOBS2),
        ("mmlu-pro-leaderboard, 14 selectors", "mmlu-pro-leaderboard", ALL, BIG_SIZES, FITTED_POOL + JOBS2),
        ("synthetic-mmlu-pro, 14 selectors", "synthetic-mmlu-pro", ALL, BIG_SIZES, PAPER_POOL + JOBS2),
        ("synthetic-mmlu, 14 selectors", "synthetic-mmlu", ALL, BIG_SIZES, PAPER_POOL + JOBS2),
    ],
    "adaptive": [  # the adaptive chapter's tests, at the paper profile's sizes
        ("gpqa, adaptive family", "gpqa", ADAPTIVE, GPQA_SIZES, PAPER_POOL + JOBS2),
        ("bbh-leaderboard, adaptive family", "bbh-leaderboard", ADAPTIVE, BIG_SIZES, FITTED_POOL + JOBS2),
        ("mmlu-pro-leaderboard, adaptive family", "mmlu-pro-leaderboard", ADAPTIVE, BIG_SIZES, FITTED_POOL + JOBS2),
    ],
}
# the paper book: over an hour on two cores
BOOKS = {"book": ["quick", "default"], "paper-book": ["paper"], "targets": ["quick", "default", "paper"]}


@dataclass(frozen=True)
class Target:
    """A job's target: wall seconds, peak memory (MB), and CPU time as a share of the baseline's
    (``--baseline``; None: no such target)."""

    seconds: float
    mb: float | None = None
    cpu_share: float | None = None


#: The speed issues' targets, by job label (the last issue's; the MMLU-Pro job keeps an earlier one).
TARGETS = {
    "gpqa, 14 selectors, jobs 2": Target(4),
    "synthetic-mmlu-pro, 14 selectors": Target(240, 4096),
    "book, quick profile": Target(90),
    "book, default profile": Target(10 * 60),
    "book, paper profile": Target(20 * 60, cpu_share=0.5),
    ".ci/run, clean clone": Target(10 * 60),
}


@contextmanager
def worktree(rev: str | None):
    """A temporary checkout of ``rev`` (None: no baseline)."""
    if rev is None:
        yield None
        return
    with tempfile.TemporaryDirectory(prefix="mbutils-baseline-") as tmp:
        path = Path(tmp) / "tree"
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "--quiet", str(path), rev], check=True)
        try:
            yield path
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(path)], check=False)


def _env(tree: Path, cache: Path) -> dict:
    """The implementation in ``tree`` first on the path, a private results cache."""
    env = dict(os.environ)
    env.setdefault("MBUTILS_DATA", str(REPO / "data"))  # older revisions (--baseline) read only MBUTILS_DATA
    env["MBUTILS_DATA"] = str(Path(env["MBUTILS_DATA"]).resolve())
    env["PYTHONPATH"] = os.pathsep.join([str(tree), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["MBUTILS_CACHE"] = str(cache)
    env["MBUTILS_CHAPTERS"] = str(tree / "chapters")
    return env


def experiment(tree: Path, scratch: Path, data: str, selectors: str, sizes: str, extra: list[str],
               runs: int) -> Measurement:
    env = _env(tree, scratch / "cache")
    # Generate (and cache) a synthetic bundle first, so the job times the experiment only;
    # the same step reports the pool the book fits to the bundle's models.
    pool = subprocess.run([PY, "-c", "from mbutils.data.datasets import load_benchmark; from mbutils.methods.protocol import fit_to_pool; "
                           f"print(*fit_to_pool(load_benchmark({data!r}).n_models))"],
                          env=env, cwd=str(tree), check=True, capture_output=True, text=True).stdout.split()
    if FITTED_POOL[0] in extra:
        at = extra.index(FITTED_POOL[0])
        extra = [*extra[:at], "--sources", pool[0], "--targets", pool[1], *extra[at + 1:]]
    scratch.mkdir(parents=True, exist_ok=True)
    out = str(scratch / "results.parquet")
    return measure([PY, "-m", "mbutils", "experiment", "--data", data, "--selectors", selectors, "--sizes", sizes,
                    "--runs", str(runs), "--seed", "0", "--no-cache", "--quiet", "--out", out, *extra],
                   env, cwd=str(tree))


def book(tree: Path, scratch: Path, profile: str) -> Measurement:
    """A strict build of the whole book from an empty execution and results cache."""
    env = {**_env(tree, scratch / f"cache-{profile}"), "MBUTILS_PROFILE": profile}
    jb = str(Path(PY).with_name("jupyter-book"))
    out = scratch / f"book-{profile}"
    result = measure([jb, "build", str(tree), "--path-output", str(out), "-W", "-n", "--keep-going", "-q"],
                     env, cwd=str(tree))
    result.details = chapter_times(out)
    return result


def ci(tree: Path, scratch: Path) -> Measurement:
    """``.ci/run`` on a clean clone of ``tree``'s committed HEAD (its own venv, caches and temp files)."""
    clone = scratch / "clone"
    subprocess.run(["git", "clone", "--quiet", str(tree), str(clone)], check=True)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("MBUTILS_") and k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(CI="true", MBUTILS_CACHE=str(scratch / "cache"))
    return measure(["bash", ".ci/run"], env, cwd=str(clone))


def chapter_times(out: Path) -> dict[str, float]:
    """Execution seconds of every page, from the build's execution cache (jupyter-cache)."""
    import json
    import sqlite3

    times = {}
    for db in out.glob("_build/.jupyter_cache*/global.db"):
        with sqlite3.connect(db) as con:
            for uri, data in con.execute("select uri, data from nbcache"):
                times[Path(uri).stem] = float(json.loads(data).get("execution_seconds", float("nan")))
    return dict(sorted(times.items(), key=lambda item: -item[1]))


def _suite_jobs(name: str):
    """(label, data, selectors, sizes, extra) of an experiment suite; ``targets`` takes its
    experiments from the others by label."""
    if name != "targets":
        return EXPERIMENTS.get(name, [])
    every = [job for suite in EXPERIMENTS.values() for job in suite]
    return [job for label in TARGETS for job in every if job[0] == label]


def jobs(names: list[str], runs: int):
    """(label, callable(tree, scratch) -> Measurement) for every job of the suites."""
    for name in names:
        for label, data, selectors, sizes, extra in _suite_jobs(name):
            yield label, (lambda t, s, a=(data, selectors, sizes, extra): experiment(t, s, *a, runs))
        for profile in BOOKS.get(name, []):
            yield f"book, {profile} profile", (lambda t, s, p=profile: book(t, s, p))
        if name in ("ci", "targets"):
            yield ".ci/run, clean clone", ci


def _target_text(target: Target | None) -> str:
    if target is None:
        return ""
    text = f"<= {target.seconds / 60:.0f} min" if target.seconds >= 600 else f"<= {target.seconds:.0f} s"
    text += f", <= {target.mb / 1024:.0f} GB" if target.mb else ""
    return text + (f", CPU <= {target.cpu_share:g} x baseline's" if target.cpu_share else "")


def _met(target: Target | None, m: Measurement, baseline: Measurement | None) -> str:
    """yes / no; a CPU-share target without a baseline in the run cannot be judged ("no baseline")."""
    if target is None:
        return ""
    met = m.seconds <= target.seconds and (target.mb is None or m.peak_mb <= target.mb)
    if target.cpu_share is not None:
        if baseline is None:
            return ("wall yes" if met else "no") + ", CPU: no baseline"
        met = met and m.cpu_seconds <= target.cpu_share * baseline.cpu_seconds
    return "yes" if met else "no"


def median_run(runs: list[Measurement]) -> Measurement:
    """The run with the median wall time (the lower middle one of an even number)."""
    return sorted(runs, key=lambda m: m.seconds)[(len(runs) - 1) // 2]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suites", nargs="*", default=["foundation"], choices=[*EXPERIMENTS, *BOOKS, "ci"])
    parser.add_argument("--baseline", metavar="REV", help="git revision to time in the same run, for ratios")
    parser.add_argument("--runs", type=int, default=50, help="runs per experiment (default 50, the paper's)")
    parser.add_argument("--only", metavar="TEXT", action="append",
                        help="only the jobs whose label contains TEXT (repeat for several)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="time each job N times, current and baseline taking turns, and report the run "
                             "with the median wall time and the range (for a noisy machine)")
    args = parser.parse_args(argv)

    def row(ms: list[Measurement]) -> str:
        m = median_run(ms)
        spread = f" ({min(x.seconds for x in ms):.1f}-{max(x.seconds for x in ms):.1f})" if len(ms) > 1 else ""
        return f"{m.seconds:.1f}{spread} | {m.cpu_seconds:.1f} | {m.peak_mb:.0f}"

    with_targets = "targets" in args.suites
    head = "| job |" + (" target |" if with_targets else "") + " wall s | CPU s | peak MB |"
    if args.baseline:
        head += f" baseline {args.baseline} wall s | CPU s | peak MB | speed-up (wall) |"
    if with_targets:
        head += " met |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    with worktree(args.baseline) as base, tempfile.TemporaryDirectory() as tmp:
        for i, (label, run) in enumerate(jobs(args.suites, args.runs)):
            if args.only and not any(text in label for text in args.only):
                continue
            currents, olds = [], []
            for r in range(max(1, args.repeat)):  # taking turns, so that a slow spell of the machine hits both
                currents.append(run(REPO, Path(tmp) / f"current-{i}-{r}"))
                if base is not None:
                    olds.append(run(base, Path(tmp) / f"baseline-{i}-{r}"))
            current = median_run(currents)
            old = median_run(olds) if olds else None
            target = TARGETS.get(label) if with_targets else None
            line = f"| {label} |" + (f" {_target_text(target)} |" if with_targets else "") + f" {row(currents)} |"
            if base is not None:
                line += f" {row(olds)} | {old.seconds / current.seconds:.2f}x |"
            if with_targets:
                line += f" {_met(target, current, old)} |"
            print(line, flush=True)
            for name, details in (("current", current), ("baseline", old if base is not None else None)):
                if details is not None and details.details:
                    print(f"|   {name}: " + ", ".join(f"{page} {sec:.0f} s" for page, sec in details.details.items())
                          + " |", flush=True)


if __name__ == "__main__":
    main()
