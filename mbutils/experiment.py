"""The experiment grid: runs x selectors x sizes on one bundle, as a tidy table.

Runs are independent (each seeded from the root seed and its run index), so the table is
identical for any number of workers; they go to joblib workers in a few chunks per worker.
Each selector's results are cached on disk by content (data hash, protocol, sizes, selector parameters, package version).
"""

from __future__ import annotations

import os
from contextlib import ExitStack
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from . import __version__
from .benchmark import Benchmark
from .cache import content_key, entry_path, locked_if_possible, read_table, write_table
from .errors import ProtocolError
from .fingerprint import code_fingerprint
from .provenance import make_record, stamp
from .protocol import Protocol, Run, check_protocol, draw_run, rng_for
from .selectors import make_selector
from .selectors.base import SourceData
from .validation import check_choice

BACKENDS = ("loky", "threading", "sequential", "dask", "ray")
_COLUMNS = ("run", "selector", "size", "model", "estimate", "seen_accuracy", "unseen_accuracy",
            "full_accuracy", "seen_correct", "n_seen", "unseen_correct", "n_unseen")


def n_seen_items(benchmark: Benchmark) -> int:
    """Size of every run's seen half: floor(n/2) items of each subtask."""
    return int((np.bincount(benchmark.subtask_codes) // 2).sum())


def check_sizes(benchmark: Benchmark, sizes: Sequence[int]) -> list[int]:
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


def cache_path(benchmark: Benchmark, protocol: Protocol, sizes: list[int], name: str):
    params = make_selector(name).get_params()
    key = content_key("results", __version__, code_fingerprint(), benchmark.content_hash, protocol.as_dict(), sizes,
                      name, params)
    return entry_path("results", benchmark.name, name, key, suffix=".parquet")


def single_threaded():
    """BLAS limited to one thread, as every experiment runs: a selection recomputed outside the
    experiment (a chapter's picture or exercise) must run so too, or a large product summed in
    another order can tip a k-medoids tie and pick other items (0.2 points apart on MMLU-Pro)."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1)


def _run_chunk(runs: list[Run], correct: np.ndarray, confidence: np.ndarray | None, subtasks: np.ndarray,
               selectors: list[str], sizes: list[int], seed: int) -> list[dict]:
    """Estimates of every (selector, size) for each run of a chunk (whole-bundle arrays).

    A worker gets the bundle's arrays once per chunk of runs (joblib memory-maps large
    arrays, so workers share one read-only copy) and slices each run's models itself.
    BLAS runs single-threaded, in parallel workers and in-process alike: the work is many
    small products, workers x BLAS threads > cores slows every worker down several-fold
    (on two busy cores a one-process GPQA experiment took 94 s with two BLAS threads
    against 16 s with one), and results then cannot depend on the thread count.
    """
    with single_threaded():
        out = []
        for run in runs:
            rows = np.concatenate([run.sources, run.targets])
            conf = None if confidence is None else confidence[rows]
            out.append(_run_selectors(run, correct[rows], conf, subtasks, selectors, sizes, seed))
        return out


def chunk_runs(runs: list[Run], workers: int, per_worker: int = 4) -> list[list[Run]]:
    """Runs in consecutive chunks: ``per_worker`` chunks per worker, so start-up and data
    transfer are paid a few times per worker, not once per run, and the progress bar and
    the load balance still have several steps."""
    n_chunks = min(len(runs), workers * per_worker) if workers > 1 else len(runs)
    return [[runs[i] for i in part] for part in np.array_split(np.arange(len(runs)), max(n_chunks, 1)) if len(part)]


def _run_selectors(run, correct, confidence, subtasks, selectors, sizes, seed) -> dict:
    n_src = len(run.sources)
    src_conf = None if confidence is None else confidence[:n_src][:, run.seen]
    tgt_conf = None if confidence is None else confidence[n_src:][:, run.seen]
    source = SourceData(correct[:n_src][:, run.seen], subtasks[run.seen], src_conf)
    target_correct = correct[n_src:][:, run.seen]
    out, shared = {}, {}
    for name in selectors:
        selector = make_selector(name)
        stream = selector.shared_key() or name
        if stream not in shared:
            shared[stream] = selector.prepare(source, rng_for(seed, run.index, "prepare", stream))
        for k in sizes:
            micro = selector.select(shared[stream], k, rng_for(seed, run.index, "select", stream, k))
            out[name, k] = micro.estimate(target_correct, tgt_conf)
    return out


def _tidy(benchmark: Benchmark, runs: list[Run], outputs: list[dict], selectors: list[str],
          sizes: list[int]) -> dict[str, pd.DataFrame]:
    """One tidy frame per selector: run, selector, size, model, estimate, counts, accuracies.

    Rows are ordered run, then size, then target model. The per-run columns are built once
    and tiled over the sizes, so the table costs a few array operations, not one frame
    per (run, size).
    """
    n_sizes = len(sizes)
    per_run = {key: [] for key in ("run", "model", "seen_correct", "n_seen", "unseen_correct", "n_unseen",
                                   "full_accuracy")}
    for run in runs:
        tgt = benchmark.correct[run.targets]
        n_targets = len(run.targets)
        per_run["run"].append(np.full(n_targets, run.index))
        per_run["model"].append(benchmark.models[run.targets].astype(str))
        per_run["seen_correct"].append(tgt[:, run.seen].sum(1))
        per_run["n_seen"].append(np.full(n_targets, len(run.seen)))
        per_run["unseen_correct"].append(tgt[:, run.unseen].sum(1))
        per_run["n_unseen"].append(np.full(n_targets, len(run.unseen)))
        per_run["full_accuracy"].append(tgt.mean(1))
    counts = [len(run.targets) for run in runs]
    # Each run's block of target rows repeated once per size, runs one after the other.
    columns = {key: np.concatenate([np.tile(part, n_sizes) for part in parts]) for key, parts in per_run.items()}
    columns["seen_accuracy"] = columns["seen_correct"] / columns["n_seen"]
    columns["unseen_accuracy"] = columns["unseen_correct"] / columns["n_unseen"]
    size_column = np.concatenate([np.repeat(np.asarray(sizes, dtype=np.int64), n) for n in counts])
    tables = {}
    for name in selectors:
        estimate = np.concatenate([np.asarray(output[name, k], dtype=np.float64)
                                   for output in outputs for k in sizes])
        frame = pd.DataFrame({**columns, "selector": name, "size": size_column, "estimate": estimate})
        tables[name] = frame[list(_COLUMNS)]
    return tables


def _parallel_map(func, tasks: Iterable[tuple], n_tasks: int, jobs: int, backend: str, progress: bool,
                  desc: str, scheduler: str | None = None, weights: Sequence[int] | None = None) -> list:
    """Run tasks in order on the chosen backend; results come back in task order.

    ``weights`` are the runs each task holds (the progress bar counts runs)."""
    if progress:
        from tqdm.auto import tqdm
    else:  # tqdm.auto warns inside kernels without widgets even when disabled
        from tqdm.std import tqdm

    weights = list(weights) if weights is not None else [1] * n_tasks
    bar = tqdm(total=sum(weights), desc=desc, unit="run", disable=not progress, leave=False)
    jobs = worker_count(jobs, n_tasks)
    try:
        if backend == "sequential" or n_tasks == 1 or (jobs == 1 and backend in ("loky", "threading")):
            results = []
            for task, weight in zip(tasks, weights):
                results.append(func(*task))
                bar.update(weight)
            return results
        from joblib import Parallel, delayed, parallel_config

        with ExitStack() as stack:
            stack.enter_context(parallel_config(backend=_joblib_backend(backend, jobs, scheduler, stack)))
            # Ray's joblib backend cannot stream results; it reports progress at the end.
            stream = "list" if backend == "ray" else "generator"
            results = []
            for result, weight in zip(Parallel(n_jobs=jobs, return_as=stream)(delayed(func)(*t) for t in tasks),
                                      weights):
                results.append(result)
                bar.update(weight)
            return results
    finally:
        bar.close()


def worker_count(jobs: int, n_tasks: int) -> int:
    """Workers actually started: never more than the tasks, nor than the cores (-1: all cores)."""
    cores = os.cpu_count() or 1
    return max(1, min(cores if jobs == -1 else jobs, n_tasks, cores))


def _joblib_backend(backend: str, jobs: int, scheduler: str | None, stack: ExitStack) -> str:
    """Name of the joblib backend, starting a Dask client or Ray runtime when asked for."""
    if backend == "dask":
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise ProtocolError("the dask backend needs `pip install -r requirements-scale.txt`") from None
        if scheduler:
            stack.enter_context(Client(scheduler))
        else:
            workers = jobs  # already capped by worker_count
            cluster = stack.enter_context(LocalCluster(n_workers=workers, threads_per_worker=1,
                                                       processes=True, dashboard_address=None))
            stack.enter_context(Client(cluster))
    elif backend == "ray":
        try:
            import ray
            from ray.util.joblib import register_ray
        except ImportError:
            raise ProtocolError("the ray backend needs `pip install -r requirements-scale.txt`") from None
        register_ray()
        if not ray.is_initialized():
            ray.init(address=scheduler, num_cpus=jobs,
                     include_dashboard=False, log_to_driver=False)
            stack.callback(ray.shutdown)
    return backend


def _n_targets(benchmark: Benchmark, protocol: Protocol) -> int:
    if protocol.target_set is not None:
        return len(benchmark.target_sets[protocol.target_set])
    return protocol.n_targets


def _compute(benchmark: Benchmark, protocol: Protocol, selectors: list[str], sizes: list[int],
             jobs: int, backend: str, progress: bool, scheduler: str | None) -> dict[str, pd.DataFrame]:
    """Run the missing selectors in one pass over runs; each task gets only its run's models."""
    if not selectors:
        return {}
    runs = [draw_run(benchmark, protocol, r) for r in range(protocol.n_runs)]
    if all(getattr(make_selector(name), "light", False) for name in selectors):
        jobs = 1  # a few milliseconds per run: starting workers would cost more than the work
    chunks = chunk_runs(runs, worker_count(jobs, len(runs)) if backend != "sequential" else 1)
    tasks = ((chunk, benchmark.correct, benchmark.confidence, benchmark.subtask_codes, selectors, sizes, protocol.seed)
             for chunk in chunks)
    outputs = _parallel_map(_run_chunk, tasks, len(chunks), jobs, backend, progress,
                            desc=f"{benchmark.name}: {', '.join(selectors)}", scheduler=scheduler,
                            weights=[len(c) for c in chunks])
    return _tidy(benchmark, runs, [out for chunk in outputs for out in chunk], selectors, sizes)


def run_experiment(benchmark: Benchmark, selectors: Sequence[str], sizes: Sequence[int],
                   protocol: Protocol = Protocol(), *, jobs: int = 1, backend: str = "loky",
                   use_cache: bool = True, progress: bool = True,
                   scheduler: str | None = None) -> pd.DataFrame:
    """Run the paper's protocol for every selector and size; returns the tidy results table.

    Cached selectors are read back; only the missing ones are computed, in one pass over runs.
    ``backend`` is ``loky`` (processes, default), ``threading``, ``sequential``, ``dask``
    (``scheduler`` = address of a running scheduler, else a local cluster of ``jobs``
    workers) or ``ray`` (``scheduler`` = cluster address, else a local runtime).
    """
    selectors = list(dict.fromkeys(selectors))
    for name in selectors:
        make_selector(name)  # unknown names fail here, before any work
    check_protocol(benchmark, protocol)
    sizes = check_sizes(benchmark, sizes)
    check_choice(backend, BACKENDS, "backend", ProtocolError)
    if jobs == 0 or jobs < -1:
        raise ProtocolError(f"jobs must be a positive number of workers or -1 (all cores), got {jobs}")

    paths = {name: cache_path(benchmark, protocol, sizes, name) for name in selectors}
    expected_rows = len(sizes) * protocol.n_runs * _n_targets(benchmark, protocol)
    check = lambda t: len(t) == expected_rows and set(_COLUMNS) <= set(t.columns)  # noqa: E731
    tables: dict[str, pd.DataFrame] = {}
    if use_cache:
        tables = {name: t for name, p in paths.items() if (t := read_table(p, check)) is not None}
    todo = [name for name in selectors if name not in tables]
    if todo and use_cache:
        with locked_if_possible(paths[name] for name in todo) as writable:
            # Another process may have written entries while we waited for the locks.
            for name in todo:
                if (table := read_table(paths[name], check)) is not None:
                    tables[name] = table
            todo = [name for name in selectors if name not in tables]
            computed = _compute(benchmark, protocol, todo, sizes, jobs, backend, progress, scheduler)
            for name, table in computed.items():
                writable = writable and write_table(paths[name], table)
            tables.update(computed)
    elif todo:
        tables.update(_compute(benchmark, protocol, todo, sizes, jobs, backend, progress, scheduler))
    results = pd.concat([tables[name][list(_COLUMNS)] for name in selectors], ignore_index=True)
    record = make_record(bundle=benchmark.name, bundle_hash=benchmark.content_hash, protocol=protocol.as_dict(),
                         sizes=sizes, selectors={name: make_selector(name).get_params() for name in selectors},
                         version=__version__, code=code_fingerprint())
    results = stamp(results, record)
    results.attrs.update({
        "data": benchmark.name, "sizes": sizes, "selectors": selectors,
        **protocol.as_dict(), "mbutils_version": __version__,
    })
    return results
