"""What a micro-benchmark does on models it never saw: the cross-fitted calibration, and the estimate,
interval and verdicts every output gives, measured on held-out models.

One function, :func:`estimate_and_interval`, makes a model's estimate and interval for every kind of
micro-benchmark; ``score``, the card and the book all call it, so a number means the same everywhere:

* ``"hypergeometric"`` (uniform random sampling, plain mean): the exact finite-population interval;
* ``"normal"`` (the difference estimator): its own Student-t interval (``micro.interval``);
* ``"empirical"`` (every other selector): the interval read off the cross-fitted held-out errors
  (``calibration.csv``), and the estimate **bias-corrected** by their mean. The errors are those of
  models the selection never saw, so their mean is the estimator's bias on a new model; subtracting it
  moves the estimate to the middle of the same interval (the interval, built from the same errors,
  does not change). A selection that estimates 6 points high (the diversity sets do on GPQA) is then
  centred instead of reported high inside a shifted interval.

:func:`calibrate` makes the calibration: the pool is cut into folds, and each fold's models are scored by
a micro-benchmark chosen, exactly as the final one, from the other folds (its streams a branch of the seed
tree, ``("calibration", fold)``; the fold split another, ``("calibration", "folds")``). It is made for
every kind, random sampling's included, so that every card measures its own estimator.

:func:`held_out_card` measures, on those cross-fitted models (each against the interval it would have
had: for the empirical kind the errors of the *other* models, leave one out) and on the models held out
of the build: bias, RMSE, coverage and the verdicts' error rate (:mod:`mbutils.micro.verdicts`), and the
shipping rule's verdict. :func:`coverage_card` gives the interval's coverage at ``score``'s default level.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd

from mbutils.data.benchmark import Benchmark
from mbutils.methods.estimators import clip_accuracy
from mbutils.micro.intervals import empirical_interval, hypergeometric_interval
from mbutils.micro.verdicts import (VERDICT_LEVEL, Posterior, accuracy_grid, held_out_measures, population_prior,
                                    shipping_problems)

#: Columns of ``calibration.csv`` (the difference estimator adds ``variance``).
CALIBRATION_COLUMNS = ["model", "fold", "estimate", "truth", "error"]
#: ``score``'s default interval level, whose coverage the card states.
SCORE_LEVEL = 0.9


def calibrate(choose: Callable, bench: Benchmark, rows: np.ndarray, folds: int = 10, *, seed: int,
              uses_sources: bool = True) -> pd.DataFrame:
    """Cross-fitted held-out errors of the pool's models (empty when the pool is too small).

    ``choose(sources, scope)`` is the build's own choice (the final micro-benchmark's selector at its k)
    from the rows ``sources``, its streams under ``scope`` of the seed tree. For an estimator that gives
    its own variance (the difference estimator) each model's ``variance`` is kept too. Estimates are the
    raw ones, clipped to [0, 1]: errors measure the estimator before any correction."""
    from mbutils.methods.protocol import rng_for
    from mbutils.methods.selectors.random_sampling import DifferenceMicroBenchmark

    folds = min(int(folds), len(rows))
    need = 2 if uses_sources else 0
    if folds < 2 or len(rows) - int(np.ceil(len(rows) / folds)) < max(need, 1):
        return pd.DataFrame(columns=CALIBRATION_COLUMNS)
    order = rng_for(seed, "calibration", "folds").permutation(rows)
    parts = []
    for f, held in enumerate(np.array_split(order, folds)):
        micro = choose(np.setdiff1d(rows, held), ("calibration", f))
        extra = {}
        if isinstance(micro, DifferenceMicroBenchmark):
            est, extra["variance"] = micro.estimate_with_variance(bench.correct[held])
        else:
            est = clip_accuracy(micro.estimate(bench.correct[held],
                                               None if bench.confidence is None else bench.confidence[held]))
        truth = bench.accuracy[held]
        parts.append(pd.DataFrame({"model": bench.models[held].astype(str), "fold": f, "estimate": est,
                                   "truth": truth, "error": est - truth, **extra}))
    return pd.concat(parts, ignore_index=True)


def calibration_errors(calibration: pd.DataFrame) -> np.ndarray:
    """The finite held-out errors of ``calibration`` (fractions; empty when there are none)."""
    if calibration is None or not len(calibration):
        return np.zeros(0)
    errors = calibration["error"].to_numpy(np.float64)
    return errors[np.isfinite(errors)]


def corrected(estimates, errors, level: float) -> tuple[np.ndarray, np.ndarray]:
    """(estimate, bounds) of the empirical kind: the interval from ``errors`` and the estimate less their mean.

    Examples
    --------
    >>> est, box = corrected([0.60], [0.05, 0.07, 0.06] * 20, 0.9)
    >>> round(float(est[0]), 3), box.round(3).tolist()
    (0.54, [[0.53, 0.55]])
    """
    raw = clip_accuracy(np.atleast_1d(np.asarray(estimates, dtype=np.float64)))
    errors = np.asarray(errors, dtype=np.float64)
    bounds = empirical_interval(raw, errors, level)
    if not len(errors):
        return raw, bounds
    return np.clip(clip_accuracy(raw - errors.mean()), bounds[:, 0], bounds[:, 1]), bounds


def estimate_and_interval(kind: str, micro, correct: np.ndarray, confidence, errors, n_items: int,
                          level: float) -> tuple[np.ndarray, np.ndarray]:
    """(estimates, bounds of shape (models, 2)) in [0, 1] for models' answers on the bundle's items.

    ``errors``: the calibration's held-out errors (read by the empirical kind only)."""
    if kind == "normal":
        est, low, high = micro.interval(correct, level)
        return est, np.stack([low, high], axis=1)
    if kind == "hypergeometric":
        est = clip_accuracy(micro.estimate(correct, confidence))
        hits = np.rint(np.asarray(correct)[:, micro.items].sum(1)).astype(np.int64)
        return est, hypergeometric_interval(hits, micro.size, n_items, level)
    return corrected(micro.estimate(correct, confidence), errors, level)


def raw_evidence(kind: str, micro, correct: np.ndarray, confidence) -> dict:
    """What a model's answers say before any correction, as :func:`likelihood` reads it: the raw estimate,
    and the hits (plain mean) or the variance (difference estimator)."""
    if kind == "normal":
        est, var = micro.estimate_with_variance(correct)
        return {"estimate": clip_accuracy(est), "variance": var}
    out = {"estimate": clip_accuracy(micro.estimate(correct, confidence))}
    if kind == "hypergeometric":
        out["hits"] = np.rint(np.asarray(correct)[:, micro.items].sum(1)).astype(np.int64)
    return out


def _error_density(errors: np.ndarray, grid: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """(points, density of the errors there summed over errors, bandwidth): a normal kernel estimate of the
    held-out errors on a grid of error values, Silverman's bandwidth (at least one grid step)."""
    step = grid[1] - grid[0]
    width = max(1.06 * errors.std(ddof=1) * len(errors) ** -0.2, step) if len(errors) > 1 else step
    points = np.arange(-len(grid) + 1, len(grid)) * step
    kernel = np.exp(-0.5 * ((points[:, None] - errors[None, :]) / width) ** 2) / (width * np.sqrt(2 * np.pi))
    return points, kernel.sum(1), width


def hypergeometric_likelihood(hits, counts, k: int, n_items: int) -> np.ndarray:
    """P(hits of k | K correct of N) for each model's hits (rows) and each K of ``counts`` (columns), by
    log-binomials (scipy's hypergeom.pmf, exact but slow on a grid, gives the same).

    Examples
    --------
    >>> from scipy.stats import hypergeom
    >>> mine = hypergeometric_likelihood([3], np.array([0, 10, 20]), 10, 40)
    >>> bool(np.allclose(mine, hypergeom.pmf(3, 40, [0, 10, 20], 10)))
    True
    """
    from scipy.special import gammaln

    def log_choose(n, r):
        with np.errstate(invalid="ignore"):
            return gammaln(n + 1) - gammaln(r + 1) - gammaln(n - r + 1)

    x = np.asarray(hits, dtype=np.float64)[:, None]
    K = np.asarray(counts, dtype=np.float64)[None, :]
    possible = (x <= K) & (k - x <= n_items - K)
    log = log_choose(K, x) + log_choose(n_items - K, k - x) - log_choose(n_items, k)
    return np.where(possible, np.exp(np.where(possible, log, 0.0)), 0.0)


def likelihood(kind: str, evidence: dict, grid: np.ndarray, *, k: int, n_items: int, errors=None,
               law: str = "student_t", leave_out: bool = False) -> np.ndarray:
    """(models, grid) likelihood of each model's raw evidence if its accuracy were each grid value.

    Exact hypergeometric for the plain mean (hits of k from N); the difference estimator's own law
    (Student-t with k - 2 degrees of freedom, or normal) with its floored variance; for the empirical kind
    a kernel density of the held-out ``errors`` at (raw estimate - accuracy), each model's own error left
    out when ``leave_out`` (the calibration's models are among the errors)."""
    from scipy.stats import norm, t as student_t

    from mbutils.methods.estimators import difference_df, residual_floor

    est = np.atleast_1d(evidence["estimate"]).astype(np.float64)
    if kind == "hypergeometric":
        return hypergeometric_likelihood(evidence["hits"], np.rint(grid * n_items).astype(np.int64), k, n_items)
    if kind == "normal":
        floor = (1 - k / n_items) * residual_floor(k) / k
        sd = np.sqrt(np.maximum(np.asarray(evidence["variance"], dtype=np.float64), floor))[:, None]
        z = (est[:, None] - grid[None, :]) / sd
        return (student_t.pdf(z, difference_df(k)) if law == "student_t" else norm.pdf(z)) / sd
    errors = np.asarray(errors, dtype=np.float64)
    errors = errors[np.isfinite(errors)]
    if len(errors) < 2:
        return np.ones((len(est), len(grid)))  # no errors to learn a law from: the answers say nothing
    points, summed, width = _error_density(errors, grid)
    gap = est[:, None] - grid[None, :]
    dens = np.interp(gap, points, summed)
    if leave_out:  # the model's own error is one of the kernel's centres: take it out exactly
        own = (est - np.asarray(evidence["truth"], dtype=np.float64))[:, None]
        dens = dens - np.exp(-0.5 * ((gap - own) / width) ** 2) / (width * np.sqrt(2 * np.pi))
        return np.maximum(dens, 0.0) / (len(errors) - 1)
    return dens / len(errors)


def posterior_for(kind: str, micro, evidence: dict, pool_accuracy, *, n_items: int, errors=None,
                  leave_out: bool = False) -> Posterior:
    """The models' posteriors on the accuracy grid: :func:`likelihood` times the pool as population prior
    (one pool, or one row per model with NaN where a model is not its own prior)."""
    grid = accuracy_grid(n_items)
    lik = likelihood(kind, evidence, grid, k=micro.size, n_items=n_items, errors=errors,
                     law=getattr(micro, "law", "student_t"), leave_out=leave_out)
    return Posterior(grid, lik, population_prior(grid, pool_accuracy))


def cross_fitted(kind: str, micro, calibration: pd.DataFrame, n_items: int,
                 level: float) -> tuple[np.ndarray, np.ndarray]:
    """(estimates, bounds) of the calibration's own models, each as a new model would get them from the
    micro-benchmark built without it: its fold's estimate; for the empirical kind, the interval and the
    correction from the *other* models' errors (leave one out)."""
    est = calibration["estimate"].to_numpy(np.float64)
    if kind == "hypergeometric":  # the plain mean of k items: the estimate is hits / k
        hits = np.rint(est * micro.size).astype(np.int64)
        return est, hypergeometric_interval(hits, micro.size, n_items, level)
    if kind == "normal":
        return est, np.stack(micro.bounds(est, calibration["variance"].to_numpy(np.float64), n_items, level),
                             axis=1)
    errors = calibration["error"].to_numpy(np.float64)
    out, bounds = np.empty_like(est), np.empty((len(est), 2))
    for i in range(len(est)):
        others = np.delete(errors, i)
        e, b = corrected(est[i:i + 1], others[np.isfinite(others)], level)
        out[i], bounds[i] = e[0], b[0]
    return out, bounds


def _held_out(kind, micro, calibration, bench, excluded_rows, level) -> dict:
    """name -> (models, estimates, bounds, truths, evidence, leave_out) of the cross-fitted and excluded models."""
    parts = {}
    if calibration is not None and len(calibration) and (kind != "normal" or "variance" in calibration):
        est, bounds = cross_fitted(kind, micro, calibration, bench.n_items, level)
        raw = calibration["estimate"].to_numpy(np.float64)
        evidence = {"estimate": raw, "truth": calibration["truth"].to_numpy(np.float64)}
        if kind == "hypergeometric":
            evidence["hits"] = np.rint(raw * micro.size).astype(np.int64)
        if kind == "normal":
            evidence["variance"] = calibration["variance"].to_numpy(np.float64)
        parts["calibration"] = (calibration["model"].astype(str).to_numpy(), est, bounds,
                                calibration["truth"].to_numpy(np.float64), evidence, True)
    if len(excluded_rows):
        correct = bench.correct[excluded_rows]
        confidence = None if bench.confidence is None else bench.confidence[excluded_rows]
        est, bounds = estimate_and_interval(kind, micro, correct, confidence, calibration_errors(calibration),
                                            bench.n_items, level)
        parts["excluded"] = (bench.models[excluded_rows].astype(str), est, bounds, bench.accuracy[excluded_rows],
                             raw_evidence(kind, micro, correct, confidence), False)
    return parts


def held_out_card(kind: str, micro, calibration: pd.DataFrame, bench: Benchmark, excluded_rows: np.ndarray,
                  pool_rows: np.ndarray, level: float = VERDICT_LEVEL) -> dict:
    """The card's ``held_out``: bias, RMSE, coverage and verdict error rate at ``level`` on the cross-fitted
    pool models (each compared with every other pool model) and on the excluded models (compared with the
    pool), the verdicts made as ``score`` makes them; the estimator's ``raw_bias`` (points, the
    calibration's mean error before any correction) and the shipping rule's ``problems`` (judged on the
    cross-fitted models, else the excluded)."""
    pool_names = bench.models[pool_rows].astype(str)
    pool_truth = bench.accuracy[pool_rows]
    errors = calibration_errors(calibration)
    out: dict = {"level": float(level), "calibration": None, "excluded": None}
    for part, (names, est, bounds, truth, evidence, leave_out) in _held_out(kind, micro, calibration, bench,
                                                                             excluded_rows, level).items():
        same = names[:, None] == pool_names[None, :]
        pools = np.where(same, np.nan, pool_truth[None, :])  # a model is neither its own prior nor compared
        posterior = posterior_for(kind, micro, evidence, pools, n_items=bench.n_items, errors=errors,
                                  leave_out=leave_out)
        out[part] = held_out_measures(est, bounds[:, 0], bounds[:, 1], truth, pools, level=level,
                                      posterior=posterior)
    out["raw_bias"] = float(100 * errors.mean()) if len(errors) else None  # before any correction
    judged = out["calibration"] or out["excluded"]
    out["problems"] = shipping_problems(judged) if judged else ["no held-out models were measured"]
    return out


def coverage_card(kind: str, micro, calibration: pd.DataFrame, bench: Benchmark, excluded_rows: np.ndarray,
                  pool_rows: np.ndarray, level: float = SCORE_LEVEL) -> dict:
    """The card's ``coverage`` at ``score``'s default level: per part, models covered and mean width
    (points); ``width``, the median width over the held-out models (the cross-fitted ones first), or for
    random sampling without them the interval of a model at the pool's median accuracy."""
    out: dict = {"level": float(level), "calibration": None, "excluded": None}
    widths = np.zeros(0)
    for part, (_, _, bounds, truth, _, _) in _held_out(kind, micro, calibration, bench, excluded_rows,
                                                       level).items():
        inside = (bounds[:, 0] - 1e-12 <= truth) & (truth <= bounds[:, 1] + 1e-12)
        width = 100 * (bounds[:, 1] - bounds[:, 0])
        out[part] = {"models": int(len(truth)), "covered": int(inside.sum()), "width": float(width.mean())}
        widths = widths if len(widths) else width
    if not len(widths) and kind == "hypergeometric":
        median = float(np.median(bench.accuracy[pool_rows]))
        widths = 100 * np.diff(hypergeometric_interval([int(round(median * micro.size))], micro.size,
                                                       bench.n_items, level), axis=1)[:, 0]
    out["width"] = float(np.median(widths)) if len(widths) else float("nan")
    return out
