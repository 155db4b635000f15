"""Where each book page spends its CPU: one cProfile report per page (cumulative CPU, top 20).

    python benchmarks/profile_pages.py [--profile quick|default|paper] [--pages NAME ...]
                                       [--out benchmarks/profiles/PROFILE]

Every page runs as the build runs it (its notebook in a Jupyter kernel, from ``chapters/``), in
the build's start order, with one results cache shared by the pages of this run and empty at
its start: a page that reuses an experiment another page computed is charged only for reading
it, as in a real build. Two things differ from a build, so that one profiler sees all the work:
experiments run in the kernel's own process (``MBUTILS_JOBS=1``: no worker processes, whose
CPU a profiler in the kernel would not see), and the profiler's timer is the process's CPU time
(``time.process_time``), so what other jobs on the machine do does not count.

Written to ``--out``: ``PAGE.txt`` per page (total CPU, then the 20 functions with the largest
cumulative CPU, the notebook's own frames left out) and ``summary.csv`` (page, CPU seconds,
wall seconds, in start order).
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import pstats
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import jupytext

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from mbutils.publish.publish import toc_documents  # noqa: E402
from mbutils.publish.page_runs import start_order  # noqa: E402

TOP = 20
#: Frames that are the notebook or the kernel, not work: their cumulative time is the whole page.
SKIP = ("ipykernel", "IPython", "<frozen", "<string>", "tornado", "asyncio", "zmq", "jupyter_client",
        "traitlets", "runpy", "/tmp/", "<ipython-input", "builtins.exec", "_contextvars", "coroutine")


def _wrapped(page: Path, stats_path: Path) -> nbformat.NotebookNode:
    """The page's notebook between a cell that starts a CPU-time profiler and one that saves it."""
    nb = jupytext.read(page, fmt="md:myst")
    start = nbformat.v4.new_code_cell("import cProfile as _cp, time as _t\n"
                                      "_prof = _cp.Profile(_t.process_time)\n_prof.enable()")
    stop = nbformat.v4.new_code_cell(f"_prof.disable()\n_prof.dump_stats({str(stats_path)!r})")
    nb.cells = [start, *nb.cells, stop]
    return nb


def _report(stats_path: Path, page: str, wall: float) -> tuple[str, float]:
    stats = pstats.Stats(str(stats_path))
    total = max((v[3] for v in stats.stats.values()), default=0.0)  # the outermost frame's cumulative
    rows = []
    for (file, line, func), (_, calls, _, cum, _) in stats.stats.items():
        where = f"{file}:{line}({func})"
        if any(s in where for s in SKIP):
            continue
        rows.append((cum, calls, where.replace(str(REPO) + "/", "")))
    rows.sort(reverse=True)
    out = io.StringIO()
    out.write(f"{page}: {total:.1f} s CPU in the kernel, {wall:.1f} s wall\n")
    out.write(f"{'cumulative CPU s':>16}  {'share':>6}  {'calls':>8}  function\n")
    for cum, calls, where in rows[:TOP]:
        out.write(f"{cum:16.2f}  {cum / total if total else 0:6.1%}  {calls:8d}  {where}\n")
    return out.getvalue(), total


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="default", choices=["quick", "default", "paper"])
    parser.add_argument("--pages", nargs="*", help="page names (e.g. sel_anchor); default: every executed page")
    parser.add_argument("--out", type=Path, help="folder of the reports (default: benchmarks/profiles/PROFILE)")
    args = parser.parse_args(argv)
    out = args.out or REPO / "benchmarks" / "profiles" / args.profile
    out.mkdir(parents=True, exist_ok=True)

    import papermill

    pages = start_order(d for d in toc_documents(REPO) if (REPO / f"{d}.md").exists() and _executes(REPO / f"{d}.md"))
    if args.pages:
        pages = [p for p in pages if p.split("/")[-1] in set(args.pages)]
    env_before = dict(os.environ)
    summary = []
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.update(MBUTILS_PROFILE=args.profile, MBUTILS_JOBS="1", MBUTILS_CACHE=str(Path(tmp) / "cache"),
                          MPLBACKEND="Agg")
        try:
            for name in pages:
                page = REPO / f"{name}.md"
                stats_path = Path(tmp) / f"{page.stem}.prof"
                src, dst = Path(tmp) / f"{page.stem}.ipynb", Path(tmp) / f"{page.stem}.out.ipynb"
                nbformat.write(_wrapped(page, stats_path), src)
                start = time.perf_counter()
                papermill.execute_notebook(str(src), str(dst), cwd=str(page.parent), progress_bar=False,
                                           kernel_name="python3")
                wall = time.perf_counter() - start
                text, cpu = _report(stats_path, page.stem, wall)
                (out / f"{page.stem}.txt").write_text(text)
                summary.append({"page": page.stem, "cpu_seconds": round(cpu, 1), "wall_seconds": round(wall, 1)})
                print(text.splitlines()[0], flush=True)
        finally:
            os.environ.clear()
            os.environ.update(env_before)
    with open(out / "summary.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["page", "cpu_seconds", "wall_seconds"])
        writer.writeheader()
        writer.writerows(summary)
    print(f"total: {sum(r['cpu_seconds'] for r in summary):.0f} s CPU; reports in {out}")
    return 0


def _executes(page: Path) -> bool:
    """A page with at least one code cell (the others are prose the build does not execute)."""
    return any(c.cell_type == "code" for c in jupytext.read(page, fmt="md:myst").cells)


if __name__ == "__main__":
    raise SystemExit(main())
