"""The experiment grid: runs x selectors x sizes on one bundle, as a tidy table.

Runs are independent (each seeded from the root seed and its run index), so the table is
identical for any number of workers; they go to the workers in a few chunks per worker (with
loky, this process is one of the workers: it starts on the first chunk while the others start).
Each selector's results are cached on disk by content (data hash, protocol, sizes, selector parameters, package version).

The table's estimates are clipped to [0, 1], for every selector (a selector of one's own included): an
estimate is an accuracy, and one outside [0, 1] (the difference estimator's correction went down to -23.9
points; Horvitz-Thompson weights need not sum to 1) is never closer to any accuracy than its clip, so
clipping can only lower its error, and the MDAD, tau and error tables read the values ``score`` and the
card show. The one cost: two estimates past the same end become a tie, which the MDAD counts as a
disagreement, where their unclipped order might have been right. The estimator families clip where they
produce their estimates too (:mod:`mbutils.methods.estimators`); here it is the net for every other one.
"""

from __future__ import annotations

import os
import threading
from contextlib import ExitStack
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from mbutils.base.version import __version__
from mbutils.data.benchmark import Benchmark
from mbutils.base.cache import content_key, entry_path, locked_if_possible, read_table, write_table
from mbutils.base.errors import ProtocolError
from mbutils.base.fingerprint import code_fingerprint
from mbutils.base.provenance import make_record, stamp
from mbutils.methods import medoid_store
from mbutils.methods.estimators import clip_accuracy
from mbutils.methods.protocol import Protocol, Run, check_protocol, draw_run
from mbutils.methods.runs import seeded_choices, single_threaded, source_data, stream_of  # noqa: F401 (single_threaded: callers)
from mbutils.methods.selectors.base import Selector
from mbutils.methods.selectors.spec import as_selector, check_picklable, resolve_selectors, selector_identity
from mbutils.base.validation import check_choice

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


def cache_path(benchmark: Benchmark, protocol: Protocol, sizes: list[int], label: str,
               selector: Selector | None = None):
    """Where the results of ``selector`` (labelled ``label``; default: the selector of that name)
    are cached; None when they cannot be (a class defined outside the package whose source
    Python cannot read)."""
    if selector is None:
        selector = as_selector(label)
    identity = selector_identity(selector)
    if identity is None:
        return None
    key = content_key("results", __version__, code_fingerprint(), benchmark.content_hash, protocol.as_dict(), sizes,
                      label, identity)
    return entry_path("results", benchmark.name, label, key, suffix=".parquet")


def _run_chunk(runs: list[Run], correct: np.ndarray, confidence: np.ndarray | None, subtasks: np.ndarray,
               selectors: dict[str, Selector], sizes: list[int], seed: int, use_cache: bool = True) -> list[dict]:
    """Estimates of every (selector, size) for each run of a chunk (whole-bundle arrays).

    A worker gets the bundle's arrays once per chunk of runs (joblib memory-maps large
    arrays, so workers share one read-only copy) and slices each run's models itself.
    BLAS runs single-threaded, in parallel workers and in-process alike: the work is many
    small products, workers x BLAS threads > cores slows every worker down several-fold
    (on two busy cores a one-process GPQA experiment took 94 s with two BLAS threads
    against 16 s with one), and results then cannot depend on the thread count. ``use_cache``:
    read and keep large clusterings in the cache (``mbutils.methods.medoid_store``).
    """
    with single_threaded(), medoid_store.reading(use_cache):
        out = []
        for run in runs:
            rows = np.concatenate([run.sources, run.targets])
            conf = None if confidence is None else confidence[rows]
            out.append(_run_selectors(run, correct[rows], conf, subtasks, selectors, sizes, seed))
        return out


def chunk_runs(runs: list[Run], workers: int, per_worker: int = 8) -> list[list[Run]]:
    """Runs in consecutive chunks that shrink towards the end (guided scheduling).

    Each chunk takes the runs left divided by ``workers * per_worker / 2`` (at least one), so
    data transfer is paid a few times per worker while the last chunks are single runs that
    let the processes finish together (GPQA's 14 selectors, 50 runs, two processes: median 8.3 s
    with 8 equal chunks per process, 7.7 s with shrinking ones; ``benchmarks/run.py --repeat 5``).
    One worker: one run per chunk (one step of the progress bar each)."""
    if workers <= 1:
        return [[run] for run in runs]
    chunks, start = [], 0
    while start < len(runs):
        size = max(1, -(-(len(runs) - start) * 2 // (workers * per_worker)))
        chunks.append(runs[start:start + size])
        start += size
    return chunks


def _run_selectors(run, correct, confidence, subtasks, selectors, sizes, seed) -> dict:
    """Estimates of every (label, size) in one run; ``correct`` holds the run's sources, then its targets.

    Every estimate is clipped to [0, 1] here (see the module's docstring), whatever the selector."""
    n_src = len(run.sources)
    tgt_conf = None if confidence is None else confidence[n_src:][:, run.seen]
    source = source_data(correct, subtasks, confidence, np.arange(n_src), run.seen)
    target_correct = correct[n_src:][:, run.seen]
    out, shared = {}, {}
    for label, template in selectors.items():
        selector = template.clone()  # no state carried from one run to the next
        stream = stream_of(selector, label)
        shared[stream], chosen = seeded_choices(selector, source, sizes, seed=seed, run=run.index, label=label,
                                                prepared=shared.get(stream))
        for k, micro in chosen.items():
            out[label, k] = clip_accuracy(micro.estimate(target_correct, tgt_conf))
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
        if backend == "loky":  # this process works too, from the first second
            from mbutils.methods.pool import map_with_parent

            lock = threading.Lock()

            def advance(index: int) -> None:
                with lock:
                    bar.update(weights[index])

            return map_with_parent(func, list(tasks), jobs, on_done=advance)
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


def _compute(benchmark: Benchmark, protocol: Protocol, selectors: dict[str, Selector], sizes: list[int],
             jobs: int, backend: str, progress: bool, scheduler: str | None,
             use_cache: bool = True) -> dict[str, pd.DataFrame]:
    """Run the missing selectors in one pass over runs; each task gets only its run's models."""
    if not selectors:
        return {}
    runs = [draw_run(benchmark, protocol, r) for r in range(protocol.n_runs)]
    if all(getattr(s, "light", False) for s in selectors.values()):
        jobs = 1  # a few milliseconds per run: starting workers would cost more than the work
    if backend in ("loky", "dask", "ray") and worker_count(jobs, len(runs)) > 1:
        for label, selector in selectors.items():
            check_picklable(label, selector)
    chunks = chunk_runs(runs, worker_count(jobs, len(runs)) if backend != "sequential" else 1)
    tasks = ((chunk, benchmark.correct, benchmark.confidence, benchmark.subtask_codes, selectors, sizes, protocol.seed,
              use_cache) for chunk in chunks)
    outputs = _parallel_map(_run_chunk, tasks, len(chunks), jobs, backend, progress,
                            desc=f"{benchmark.name}: {', '.join(selectors)}", scheduler=scheduler,
                            weights=[len(c) for c in chunks])
    return _tidy(benchmark, runs, [out for chunk in outputs for out in chunk], selectors, sizes)


def run_experiment(benchmark: Benchmark, selectors: Sequence, sizes: Sequence[int],
                   protocol: Protocol = Protocol(), *, jobs: int = 1, backend: str = "loky",
                   use_cache: bool = True, progress: bool = True,
                   scheduler: str | None = None) -> pd.DataFrame:
    """Run the paper's protocol for every selector and size; returns the tidy results table.

    Parameters
    ----------
    benchmark : Benchmark
        The bundle (models x items).
    selectors : sequence of str or Selector
        Registered names (``"anchor_points"``) or selector objects (``AnchorPoints(warm_start=False)``,
        or a class of your own); each is labelled in the ``selector`` column by
        ``mbutils.methods.selectors.selector_label``, and cached under its class and parameters.
    sizes : sequence of int
        Micro-benchmark sizes k, each at most the seen half.
    protocol : Protocol
        Sources, targets, runs and seed (default: the paper's headline setting).
    jobs : int
        Processes that compute (-1: all cores): with loky, this one and ``jobs - 1`` workers;
        the table is identical for any number.
    backend : {"loky", "threading", "sequential", "dask", "ray"}
        Where runs go: ``loky`` processes (default), threads, this process, a Dask cluster or
        a Ray runtime. Selector objects reach worker processes by pickling (classes defined
        in a notebook too); one that cannot be pickled is refused with what to do.
    use_cache : bool
        Read and write the results cache (``$MBUTILS_CACHE``, else ``~/.cache/mbutils``), and the
        clusterings of Anchor Points' large matrices kept there (``mbutils.methods.medoid_store``).
    progress : bool
        Show a progress bar over runs.
    scheduler : str, optional
        Dask: address of a running scheduler (else a local cluster of ``jobs`` workers);
        Ray: cluster address (else a local runtime).

    Returns
    -------
    pandas.DataFrame
        One row per run, selector, size and target model: the estimate and the model's
        seen, unseen and full accuracies. Cached selectors are read back; only the missing
        ones are computed, in one pass over runs.

    Examples
    --------
    >>> from mbutils import Protocol, load_benchmark, run_experiment
    >>> from mbutils.methods.selectors import AnchorPoints
    >>> bench = load_benchmark("synthetic-gpqa")
    >>> res = run_experiment(bench, ["random", AnchorPoints(warm_start=False)], [10, 25],
    ...                      Protocol(n_sources=60, n_targets=12, n_runs=2), progress=False)
    >>> sorted(res["selector"].unique())
    ['anchor_points(warm_start=False)', 'random']
    >>> len(res) == 2 * 2 * 2 * 12  # selectors x sizes x runs x targets
    True
    """
    selectors = resolve_selectors(selectors)  # unknown names and bad objects fail here, before any work
    for selector in selectors.values():
        selector.validate_params()
    check_protocol(benchmark, protocol)
    sizes = check_sizes(benchmark, sizes)
    check_choice(backend, BACKENDS, "backend", ProtocolError)
    if jobs == 0 or jobs < -1:
        raise ProtocolError(f"jobs must be a positive number of workers or -1 (all cores), got {jobs}")

    paths = {label: cache_path(benchmark, protocol, sizes, label, s) for label, s in selectors.items()}
    cached = {label: p for label, p in paths.items() if p is not None} if use_cache else {}
    expected_rows = len(sizes) * protocol.n_runs * _n_targets(benchmark, protocol)
    check = lambda t: len(t) == expected_rows and set(_COLUMNS) <= set(t.columns)  # noqa: E731
    tables = {label: t for label, p in cached.items() if (t := read_table(p, check)) is not None}
    todo = [label for label in cached if label not in tables]
    if todo:
        with locked_if_possible(cached[label] for label in todo) as writable:
            # Another process may have written entries while we waited for the locks.
            for label in todo:
                if (table := read_table(cached[label], check)) is not None:
                    tables[label] = table
            todo = {label: selectors[label] for label in todo if label not in tables}
            computed = _compute(benchmark, protocol, todo, sizes, jobs, backend, progress, scheduler, use_cache)
            for label, table in computed.items():
                writable = writable and write_table(cached[label], table)
            tables.update(computed)
    uncached = {label: s for label, s in selectors.items() if label not in tables}
    tables.update(_compute(benchmark, protocol, uncached, sizes, jobs, backend, progress, scheduler, use_cache))
    results = pd.concat([tables[label][list(_COLUMNS)] for label in selectors], ignore_index=True)
    record = make_record(bundle=benchmark.name, bundle_hash=benchmark.content_hash, protocol=protocol.as_dict(),
                         sizes=sizes, selectors={label: selector_identity(s) or {"class": type(s).__qualname__,
                                                                                   "params": repr(s)}
                                                 for label, s in selectors.items()},
                         version=__version__, code=code_fingerprint())
    results = stamp(results, record)
    results.attrs.update({
        "data": benchmark.name, "sizes": sizes, "selectors": list(selectors),
        **protocol.as_dict(), "mbutils_version": __version__,
    })
    return results
