"""The experiment grid: runs x selectors x sizes on one bundle, as a tidy table.

Runs are independent tasks (joblib), each seeded from the root seed and its run index,
so the table is identical for any number of workers. Each selector's results are cached
on disk by content (data hash, protocol, sizes, selector parameters, package version).
"""

from __future__ import annotations

import time
from typing import Sequence

import numpy as np
import pandas as pd

from . import __version__
from .bundle import Benchmark
from .cache import atomic_write, cache_dir, content_key
from .errors import ProtocolError
from .protocol import Protocol, Run, check_protocol, draw_run, rng_for
from .selectors import make_selector
from .selectors.base import SourceData

BACKENDS = ("loky", "threading", "sequential")


def n_seen_items(benchmark: Benchmark) -> int:
    """Size of every run's seen half: floor(n/2) items of each subtask."""
    return int((np.bincount(benchmark.subtask_codes) // 2).sum())


def _check_sizes(benchmark: Benchmark, sizes: Sequence[int]) -> list[int]:
    sizes = [int(k) for k in sizes]
    if not sizes:
        raise ProtocolError("give at least one micro-benchmark size")
    n_seen = n_seen_items(benchmark)
    bad = [k for k in sizes if not 1 <= k <= n_seen]
    if bad:
        raise ProtocolError(
            f"{benchmark.name}: sizes {', '.join(map(str, bad))} do not fit the seen half "
            f"({n_seen} items); use sizes from 1 to {n_seen}"
        )
    if len(set(sizes)) != len(sizes):
        raise ProtocolError(f"sizes repeat: {sizes}")
    return sorted(sizes)


def _cache_path(benchmark: Benchmark, protocol: Protocol, sizes: list[int], name: str):
    params = make_selector(name).get_params()
    key = content_key("results", __version__, benchmark.content_hash, protocol.as_dict(), sizes, name, params)
    return cache_dir() / "results" / f"{benchmark.name}-{name}-{key}.parquet"


def _run_task(run: Run, correct: np.ndarray, confidence: np.ndarray | None, subtasks: np.ndarray,
              selectors: list[str], sizes: list[int], seed: int) -> dict:
    """Estimates of every (selector, size) for one run; arrays are the run's models only.

    ``correct``/``confidence`` rows are sources then targets (as indexed by the caller).
    """
    n_src = len(run.sources)
    src_conf = None if confidence is None else confidence[:n_src][:, run.seen]
    tgt_conf = None if confidence is None else confidence[n_src:][:, run.seen]
    source = SourceData(correct[:n_src][:, run.seen], subtasks[run.seen], src_conf)
    target_correct = correct[n_src:][:, run.seen]
    out, timings = {}, {}
    for name in selectors:
        selector = make_selector(name)
        start = time.perf_counter()
        prepared = selector.prepare(source, rng_for(seed, run.index, "prepare", name))
        for k in sizes:
            micro = selector.select(prepared, k, rng_for(seed, run.index, "select", name, k))
            out[name, k] = micro.estimate(target_correct, tgt_conf)
        timings[name] = time.perf_counter() - start
    return {"estimates": out, "timings": timings}


def _tidy(benchmark: Benchmark, runs: list[Run], outputs: list[dict], selectors: list[str],
          sizes: list[int]) -> dict[str, pd.DataFrame]:
    """One tidy frame per selector: run, selector, size, model, estimate, counts, accuracies."""
    frames: dict[str, list[pd.DataFrame]] = {name: [] for name in selectors}
    for run, output in zip(runs, outputs):
        tgt = benchmark.correct[run.targets]
        seen_c = tgt[:, run.seen].sum(1)
        unseen_c = tgt[:, run.unseen].sum(1)
        base = pd.DataFrame({
            "run": run.index,
            "model": benchmark.models[run.targets].astype(str),
            "seen_correct": seen_c, "n_seen": len(run.seen),
            "unseen_correct": unseen_c, "n_unseen": len(run.unseen),
            "seen_accuracy": seen_c / len(run.seen),
            "unseen_accuracy": unseen_c / len(run.unseen),
            "full_accuracy": tgt.mean(1),
        })
        for name in selectors:
            for k in sizes:
                frame = base.assign(selector=name, size=k, estimate=output["estimates"][name, k])
                frames[name].append(frame)
    order = ["run", "selector", "size", "model", "estimate", "seen_accuracy", "unseen_accuracy",
             "full_accuracy", "seen_correct", "n_seen", "unseen_correct", "n_unseen"]
    return {name: pd.concat(parts, ignore_index=True)[order] for name, parts in frames.items()}


def _parallel_map(func, tasks: list[tuple], jobs: int, backend: str, progress: bool, desc: str) -> list:
    from tqdm.auto import tqdm

    bar = tqdm(total=len(tasks), desc=desc, unit="run", disable=not progress, leave=False)
    if jobs == 1 or backend == "sequential" or len(tasks) == 1:
        results = []
        for task in tasks:
            results.append(func(*task))
            bar.update()
    else:
        from joblib import Parallel, delayed

        results = []
        parallel = Parallel(n_jobs=jobs, backend=backend, return_as="generator")
        for result in parallel(delayed(func)(*task) for task in tasks):
            results.append(result)
            bar.update()
    bar.close()
    return results


def run_experiment(benchmark: Benchmark, selectors: Sequence[str], sizes: Sequence[int],
                   protocol: Protocol = Protocol(), *, jobs: int = 1, backend: str = "loky",
                   use_cache: bool = True, progress: bool = True) -> pd.DataFrame:
    """Run the paper's protocol for every selector and size; returns the tidy results table.

    Cached selectors are read back; only the missing ones are computed, in one pass over runs.
    """
    selectors = list(dict.fromkeys(selectors))
    for name in selectors:
        make_selector(name)  # unknown names fail here, before any work
    check_protocol(benchmark, protocol)
    sizes = _check_sizes(benchmark, sizes)
    if backend not in BACKENDS:
        raise ProtocolError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if jobs == 0 or jobs < -1:
        raise ProtocolError(f"jobs must be a positive number of workers or -1 (all cores), got {jobs}")

    paths = {name: _cache_path(benchmark, protocol, sizes, name) for name in selectors}
    tables: dict[str, pd.DataFrame] = {}
    if use_cache:
        for name, path in paths.items():
            if path.exists():
                tables[name] = pd.read_parquet(path)
    todo = [name for name in selectors if name not in tables]
    if todo:
        runs = [draw_run(benchmark, protocol, r) for r in range(protocol.n_runs)]
        tasks = []
        for run in runs:
            rows = np.concatenate([run.sources, run.targets])
            conf = None if benchmark.confidence is None else benchmark.confidence[rows]
            tasks.append((run, benchmark.correct[rows], conf, benchmark.subtask_codes,
                          todo, sizes, protocol.seed))
        outputs = _parallel_map(_run_task, tasks, jobs, backend, progress,
                                desc=f"{benchmark.name}: {', '.join(todo)}")
        for name, table in _tidy(benchmark, runs, outputs, todo, sizes).items():
            tables[name] = table
            if use_cache:
                atomic_write(paths[name], lambda tmp, t=table: t.to_parquet(tmp, index=False))
    results = pd.concat([tables[name] for name in selectors], ignore_index=True)
    results.attrs.update({
        "data": benchmark.name, "sizes": sizes, "selectors": selectors,
        **protocol.as_dict(), "mbutils_version": __version__,
    })
    return results
