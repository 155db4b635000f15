"""Do the intervals of ``score`` cover held-out models' true accuracy at their nominal level?

The check a practitioner's loop needs before trusting an interval: hold models out of a
micro-benchmark's build, score them from their answers on the chosen items only, and count
how often the interval holds their accuracy on all items. :func:`held_out_scores` does it
exactly as the command line does (``build-micro --exclude-models``, then ``score`` on a
``responses.csv``), :func:`coverage_summary` tabulates it, and
:func:`exact_random_coverage` gives random sampling's coverage over every k-subset, with no
simulation noise, for comparison.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from mbutils.base.errors import ProtocolError
from mbutils.base.names import label
from mbutils.base.validation import check_int, check_number
from mbutils.data.benchmark import Benchmark
from mbutils.micro.intervals import hypergeometric_interval
from mbutils.micro.folder import write_micro
from mbutils.micro.build import build_micro
from mbutils.micro.scoring import score
from mbutils.methods.protocol import branch_seed, rng_for

COLUMNS = ["selector", "size", "fold", "model", "estimate", "low", "high", "truth", "covered"]


def held_out_folds(bench: Benchmark, folds: int, fold_size: int, seed: int = 0) -> list[np.ndarray]:
    """``folds`` disjoint sets of ``fold_size`` model indices, drawn without replacement."""
    folds = check_int(folds, "folds", ProtocolError, low=1)
    fold_size = check_int(fold_size, "fold_size", ProtocolError, low=1)
    if folds * fold_size > bench.n_models - 3:
        raise ProtocolError(f"{bench.name} has {bench.n_models} models: too few to hold out {folds} folds of "
                            f"{fold_size} and keep at least 3 to learn from; use fewer or smaller folds")
    order = rng_for(seed, "held-out folds").permutation(bench.n_models)
    return [order[f * fold_size:(f + 1) * fold_size] for f in range(folds)]


def held_out_scores(bench: Benchmark, selectors: Sequence, sizes: Sequence[int], *, folds: int = 5,
                    fold_size: int = 20, level: float = 0.9, runs: int = 10, seed: int = 0,
                    calibration_folds: int = 10, progress: bool = False) -> pd.DataFrame:
    """Every held-out model's score and interval, for each selector and size.

    Each fold's models are left out of everything the micro-benchmark learns from (seed of
    the build: its own branch of the seed tree, ``branch_seed(seed, "held-out build", fold)``), the folder is written and read back, and the fold's models are
    scored from a ``responses.csv`` of their answers, as ``python -m mbutils score`` does.
    ``runs`` and ``calibration_folds`` are each build's :func:`~mbutils.build_micro` ``runs`` and
    ``folds``.

    Returns
    -------
    pandas.DataFrame
        One row per (selector, size, held-out model): estimate, low, high and truth (accuracy on
        all items) in points, and ``covered`` (truth inside [low, high]).

    Examples
    --------
    >>> from mbutils import load_benchmark
    >>> bench = load_benchmark("synthetic-gpqa")
    >>> cells = held_out_scores(bench, ["random"], [40], folds=2, fold_size=5, runs=2)
    >>> len(cells), sorted(cells["fold"].unique().tolist())
    (10, [0, 1])
    >>> bool(((cells["low"] <= cells["estimate"]) & (cells["estimate"] <= cells["high"])).all())
    True
    """
    level = check_number(level, "level", ProtocolError, low=0, high=1, low_open=True, high_open=True)
    parts = []
    held_out = held_out_folds(bench, folds, fold_size, seed)
    steps = [(f, held, selector, int(k)) for f, held in enumerate(held_out) for selector in selectors for k in sizes]
    if progress:
        from tqdm.auto import tqdm

        steps = tqdm(steps, desc="builds", unit="build")
    with tempfile.TemporaryDirectory(prefix="mbutils-coverage-") as scratch:
        root = Path(scratch)
        for f, held, selector, k in steps:
            answers = root / f"fold{f}.csv"
            if not answers.exists():
                pd.DataFrame(bench.correct[held], columns=bench.items.astype(str)) \
                    .assign(model=bench.models[held].astype(str)).to_csv(answers, index=False)
            built = build_micro(bench, selector, k, seed=branch_seed(seed, "held-out build", f), exclude=list(bench.models[held].astype(str)),
                                runs=runs, folds=calibration_folds)
            folder = write_micro(built, root / f"micro-{len(parts)}")
            table = score(folder, [answers], level=level)
            truth = 100.0 * bench.accuracy[bench.model_index(table["model"].tolist())]
            parts.append(pd.DataFrame({
                "selector": built.selector, "size": k, "fold": f, "model": table["model"],
                "estimate": table["estimate"], "low": table["low"], "high": table["high"], "truth": truth,
                "covered": (table["low"].to_numpy() <= truth + 1e-9) & (truth - 1e-9 <= table["high"].to_numpy())}))
    return pd.concat(parts, ignore_index=True)[COLUMNS] if parts else pd.DataFrame(columns=COLUMNS)


def coverage_summary(cells: pd.DataFrame) -> pd.DataFrame:
    """Per selector and size: held-out models, coverage (%) with its binomial standard error,
    mean interval width and RMSE of the estimates (points).

    The standard error treats the models as independent; models of one fold share a
    micro-benchmark, so it is a lower bound on the coverage's real spread.
    """
    grouped = cells.groupby(["selector", "size"], sort=False)
    out = grouped.agg(models=("covered", "size"), coverage=("covered", "mean")).reset_index()
    width = (cells["high"] - cells["low"]).groupby([cells["selector"], cells["size"]], sort=False).mean()
    rmse = np.sqrt(((cells["estimate"] - cells["truth"]) ** 2).groupby([cells["selector"], cells["size"]],
                                                                       sort=False).mean())
    out["se"] = 100 * np.sqrt(out["coverage"] * (1 - out["coverage"]) / out["models"])
    out["coverage"] = 100 * out["coverage"]
    out["mean width"] = width.to_numpy()
    out["rmse"] = rmse.to_numpy()
    return out[["selector", "size", "models", "coverage", "se", "mean width", "rmse"]]


def exact_random_coverage(bench: Benchmark, models: Sequence[int], k: int, level: float = 0.9) -> float:
    """Mean over ``models`` of the exact probability, over uniform k-subsets of the N items, that
    the hypergeometric interval holds the model's accuracy (random sampling without simulation).

    Examples
    --------
    >>> from mbutils import load_benchmark
    >>> bench = load_benchmark("synthetic-gpqa")
    >>> 0.9 <= exact_random_coverage(bench, range(20), 50, 0.9) <= 1.0
    True
    """
    from scipy.stats import hypergeom

    n = bench.n_items
    k = check_int(k, "k", ProtocolError, low=1, high=n)
    hits = np.arange(k + 1)
    bounds = hypergeometric_interval(hits, k, n, level)
    total = bench.correct[np.asarray(list(models), dtype=np.int64)].sum(1)[:, None]
    inside = (bounds[None, :, 0] <= total / n + 1e-12) & (total / n - 1e-12 <= bounds[None, :, 1])
    return float((hypergeom.pmf(hits[None, :], n, total, k) * inside).sum(1).mean())


def coverage_sentence(summary: pd.DataFrame, level: float) -> str:
    """What :func:`coverage_summary` says, in words: per row the coverage, the held-out models,
    and whether the nominal level lies inside the coverage's exact (Clopper-Pearson) 95%
    binomial interval; "consistent with" is all a coverage inside it can claim."""
    from scipy.stats import beta

    nominal = 100 * float(level)
    parts = []
    for row in summary.itertuples(index=False):
        hits, n = round(row.coverage * row.models / 100), int(row.models)
        low = 100 * (beta.ppf(0.025, hits, n - hits + 1) if hits > 0 else 0.0)
        high = 100 * (beta.ppf(0.975, hits + 1, n - hits) if hits < n else 1.0)
        verdict = "consistent with" if low <= nominal <= high else "below" if high < nominal else "above"
        parts.append(f"{label(row.selector)} at k = {row.size}: {row.coverage:.0f}% of {n} models "
                     f"({verdict} the nominal {nominal:g}%)")
    return ("the intervals held their true accuracy for " + "; ".join(parts)) if parts else "no interval was checked"
