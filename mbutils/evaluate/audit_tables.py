"""The audit's numbers: tidy results of the micro-benchmark and of random subsets, and a bootstrap over models.

Results are in the format of experiments (:data:`mbutils.evaluate.results_table.RESULT_COLUMNS`):
the micro-benchmark is one run, each random subset of the same size one run; the interval of
an MDAD resamples models, since all pairs come from one set of models.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from mbutils.data.benchmark import Benchmark
from mbutils.evaluate.pair_metrics import first_crossing, gap_bins, monotone_rates, pair_agreement
from mbutils.evaluate.results_table import iter_groups
from mbutils.methods.protocol import rng_for

MICRO = "micro-benchmark"
RANDOM = "random"


def _tidy(models: np.ndarray, estimates: np.ndarray, truth_correct: np.ndarray, n_truth: np.ndarray,
          full_accuracy: np.ndarray, selector: str, size: int) -> pd.DataFrame:
    """Results rows for R runs x T models; estimates/truth_correct are (R, T), n_truth (R,)."""
    n_runs, n_models = estimates.shape
    n_truth = np.repeat(n_truth, n_models)
    correct = truth_correct.ravel()
    return pd.DataFrame({
        "run": np.repeat(np.arange(n_runs), n_models), "selector": selector, "size": size,
        "model": np.tile(models.astype(str), n_runs), "estimate": estimates.ravel(),
        "seen_accuracy": correct / n_truth, "unseen_accuracy": correct / n_truth,
        "full_accuracy": np.tile(full_accuracy, n_runs),
        "seen_correct": correct, "n_seen": n_truth, "unseen_correct": correct, "n_unseen": n_truth,
    })


def audit_tables(benchmark: Benchmark, models: np.ndarray, items: np.ndarray, weights: np.ndarray,
                 n_random: int, seed: int, truth: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Tidy tables of the micro-benchmark (one run) and of the random draws (one run each)."""
    correct = benchmark.correct[models].astype(np.float64)
    n_items, k = benchmark.n_items, len(items)
    total = correct.sum(1)
    names = benchmark.models[models]
    full = total / n_items

    def truth_of(chosen_correct):  # (R, T) correct counts on the chosen items
        if truth == "full":
            return np.broadcast_to(total, chosen_correct.shape), np.full(len(chosen_correct), n_items)
        return total[None, :] - chosen_correct, np.full(len(chosen_correct), n_items - k)

    micro_est = (correct[:, items] @ weights)[None, :]
    t_correct, t_n = truth_of(correct[:, items].sum(1)[None, :])
    micro = _tidy(names, micro_est, np.rint(t_correct).astype(np.int64), t_n, full, MICRO, k)

    draws = np.stack([rng_for(seed, "audit", r).choice(n_items, size=k, replace=False)
                      for r in range(n_random)])
    # (R, T) correct counts on each draw, gathered in chunks of about 20 million cells: a dense
    # draws-by-items indicator would take R x N x 8 bytes (4.6 GB for 100,000 draws of BBH)
    rand_correct = np.empty((n_random, len(models)))
    step = max(1, 20_000_000 // max(1, len(models) * k))
    for start in range(0, n_random, step):
        rand_correct[start:start + step] = correct[:, draws[start:start + step]].sum(axis=2).T
    t_correct, t_n = truth_of(rand_correct)
    random = _tidy(names, rand_correct / k, np.rint(t_correct).astype(np.int64), t_n, full, RANDOM, k)
    return micro, random


def share_closer(results: pd.DataFrame, mdad: float, bin_width: float) -> float:
    """Share of all pairs (over runs) whose true gap lies below the MDAD bin; 1 if not reached."""
    if not np.isfinite(mdad):
        return 1.0
    _, pairs = next(iter_groups(results))
    bins = gap_bins(pairs.true_diff, pairs.n_items, bin_width)
    return float((bins < round(mdad / bin_width)).mean())


def ci_models(results: pd.DataFrame, *, threshold: float, bin_width: float, tie_rule: str,
              method: str, n_boot: int, rng: np.random.Generator, bar=None) -> tuple[float, float]:
    """Percentile CI of MDAD from resampling *models* (pairs sharing a model are dependent).

    A bootstrap sample draws the models with replacement; a pair (i, j) then counts
    w_i * w_j times (w = multiplicities), for all runs at once via a sparse product.
    """
    from scipy import sparse

    _, pairs = next(iter_groups(results))
    agrees, counted = pair_agreement(pairs.est_diff, pairs.true_diff, tie_rule)
    bins = gap_bins(pairs.true_diff, pairs.n_items, bin_width)  # (runs, pairs)
    n_runs, n_pairs = bins.shape
    n_bins = int(bins.max()) + 1
    cols = bins.ravel()
    rows = np.tile(np.arange(n_pairs), n_runs)
    agree = sparse.csr_matrix(((agrees & counted).ravel().astype(np.float64), (rows, cols)), shape=(n_pairs, n_bins))
    total = sparse.csr_matrix((counted.ravel().astype(np.float64), (rows, cols)), shape=(n_pairs, n_bins))
    n_models = pairs.estimates.shape[1]
    i, j = np.triu_indices(n_models, k=1)
    values = []
    for start in range(0, n_boot, 50):  # blocks keep the (draws x pairs) weights small
        w = rng.multinomial(n_models, np.full(n_models, 1.0 / n_models), size=min(50, n_boot - start))
        pw = (w[:, i] * w[:, j]).astype(np.float64)
        a, t = np.asarray((agree.T @ pw.T).T), np.asarray((total.T @ pw.T).T)
        with np.errstate(invalid="ignore", divide="ignore"):
            rates = a / t
        if method == "monotone":
            rates = np.stack([monotone_rates(np.nan_to_num(r), tt) for r, tt in zip(rates, t)])
        b = first_crossing(rates, threshold).astype(np.float64)
        values.append(np.where(b < 0, np.inf, b * bin_width))
        if bar is not None:
            bar.update(len(b))
    lo, hi = np.quantile(np.concatenate(values), [0.025, 0.975], method="inverted_cdf")
    return (float(lo) if np.isfinite(lo) else np.nan), (float(hi) if np.isfinite(hi) else np.nan)
