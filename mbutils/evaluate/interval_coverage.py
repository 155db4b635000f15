"""How often an MDAD's 95% interval holds the MDAD it estimates: replicates of R runs against a pooled truth.

The MDAD of an experiment is computed from its runs; with many more runs its agreement curve, and
so its MDAD, settles. :func:`mdad_coverage` takes one experiment of many runs, calls the MDAD pooled
over all of them the truth, cuts the runs into disjoint replicates of ``replicate_runs`` runs each
(the size of the experiment a page runs), computes the interval of every replicate as
:func:`mbutils.evaluate.metrics.mdad_table` does, and counts how often it holds the truth. A 95%
interval should hold it in about 95% of the replicates; the shares that miss below and above say
on which side it fails. The truth is itself estimated (from ``replicates x replicate_runs`` runs),
so the measured coverage is a little pessimistic, and its Monte Carlo standard error is reported.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from mbutils.base.errors import ResultsError
from mbutils.base.validation import check_int
from mbutils.evaluate.metrics import mdad_table


def replicate_blocks(results: pd.DataFrame, replicate_runs: int) -> list[pd.DataFrame]:
    """The results cut into disjoint replicates of ``replicate_runs`` runs each, in run order (the
    runs left over after the last whole replicate are not used)."""
    replicate_runs = check_int(replicate_runs, "runs per replicate", ResultsError, low=1)
    runs = np.sort(pd.unique(results["run"]))
    count = len(runs) // replicate_runs
    if count < 2:
        raise ResultsError(f"{len(runs)} runs make fewer than two replicates of {replicate_runs} runs; "
                           "run more, or use smaller replicates")
    run_values = results["run"].to_numpy()
    return [results[np.isin(run_values, runs[r * replicate_runs:(r + 1) * replicate_runs])] for r in range(count)]


def mdad_coverage(results: pd.DataFrame, replicate_runs: int, *, threshold: float = 0.8, method: str = "monotone",
                  ci: str = "runs", n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Coverage of the MDAD's 95% interval, per selector and size, against the MDAD pooled over every run.

    Parameters
    ----------
    results : pandas.DataFrame
        One experiment with many runs (several times ``replicate_runs``).
    replicate_runs : int
        Runs per replicate: the experiment size whose interval is checked.
    threshold : float, default 0.8
        As for :func:`mbutils.evaluate.metrics.mdad_table`.
    method, ci : str, default "monotone", "runs"
        The MDAD and interval checked (the book's; ``"first"``, ``"pairs"`` checks the paper's). The truth
        is the same ``method``'s MDAD pooled over all runs.
    n_boot : int, default 1000
        Bootstrap resamples per interval.
    seed : int, default 0
        Root seed; replicate ``r`` uses ``seed + r``.

    Returns
    -------
    pandas.DataFrame
        One row per selector and size: ``truth`` (points), ``replicates``, ``replicate_runs``,
        ``pooled_runs`` (the runs the truth is pooled over), ``coverage`` (share of replicates whose
        interval holds the truth; an open upper end reaches infinity), ``below`` (upper end below the
        truth), ``above`` (lower end above it), ``se`` (Monte Carlo standard error of ``coverage``),
        ``mean_mdad`` (over replicates that reach the threshold) and ``median_width`` (points).

    Examples
    --------
    >>> import mbutils
    >>> bench = mbutils.load_benchmark("synthetic-gpqa")
    >>> res = mbutils.run_experiment(bench, ["random"], [25], mbutils.Protocol(n_sources=60, n_targets=20, n_runs=12),
    ...                              progress=False, use_cache=False)
    >>> table = mdad_coverage(res, 4, n_boot=100)
    >>> table[["size", "replicates", "replicate_runs", "pooled_runs"]].values.tolist()
    [[25, 3, 4, 12]]
    >>> 0 <= float(table["coverage"].iloc[0]) <= 1
    True
    """
    blocks = replicate_blocks(results, replicate_runs)
    used = pd.concat(blocks)
    truth = mdad_table(used, threshold=threshold, method=method, ci="none")
    truth = truth.set_index(["selector", "size"])["mdad"]
    rows = {}
    for r, block in enumerate(blocks):
        table = mdad_table(block, threshold=threshold, method=method, ci=ci, n_boot=n_boot, seed=seed + r)
        for row in table.itertuples(index=False):
            key = (row.selector, int(row.size))
            t = float(truth.get(key, np.nan))
            t = np.inf if not np.isfinite(t) else t
            m = float(row.mdad) if np.isfinite(row.mdad) else np.inf
            lo = float(row.ci_low) if np.isfinite(row.ci_low) else (m if np.isfinite(m) else np.inf)
            hi = float(row.ci_high) if np.isfinite(row.ci_high) else np.inf
            rows.setdefault(key, []).append((m, lo, hi, lo <= t <= hi, hi < t, lo > t))
    out = []
    for (selector, size), values in rows.items():
        m, lo, hi, cov, below, above = (np.array(v, dtype=float) for v in zip(*values))
        n = len(values)
        p = float(cov.mean())
        with np.errstate(invalid="ignore"):
            width = hi - lo
        finite = np.isfinite(width)
        out.append({"selector": selector, "size": size, "truth": float(truth.get((selector, size), np.nan)),
                    "replicates": n, "replicate_runs": int(replicate_runs), "pooled_runs": n * int(replicate_runs),
                    "coverage": p, "below": float(below.mean()), "above": float(above.mean()),
                    "se": float(np.sqrt(p * (1 - p) / n)),
                    "mean_mdad": float(m[np.isfinite(m)].mean()) if np.isfinite(m).any() else np.nan,
                    "median_width": float(np.median(width[finite])) if finite.any() else np.inf})
    table = pd.DataFrame(out)
    table.attrs.update(method=method, ci=ci, threshold=float(threshold))
    return table
