"""Estimators that turn a target's answers on a random sample of items into a full-benchmark estimate.

Separate from how items are chosen: the plain mean of the sample; a regression on the sample (the
source models' accuracy regressed on their answers to the sampled items, the baseline of Zhang,
Dorner and Hardt 2025); and a cross-fitted difference estimator in the spirit of augmented inverse
propensity weighting (AIPW): the mean of model-based predictions over all items plus the mean
residual on the sample. The sample is split into two folds; the predictions used on one fold come
from the target's answers on the other, so each fold's estimate is exactly unbiased under uniform
random sampling whatever the predictions' quality, and its variance is estimated from the residuals.
Good predictions shrink the residuals, hence the variance; useless ones give the sample mean's.

Every estimate here is an accuracy, so it is clipped to [0, 1] where it is produced (the difference
estimator's correction can carry it past either end: a pool that predicts a model near 100% and a
positive mean residual gave 103.9 points): an estimate outside [0, 1] is never closer to an accuracy
than its clip. The residuals are not clipped (they are what the variance and a pair's noise read).

The difference estimator's interval (:func:`difference_interval`, the one place it is computed) is a
Student-t interval with ``k - 2`` degrees of freedom (:func:`difference_df`): its variance is estimated
from the k residuals of two cross-fitted halves, each half's estimate corrected by its own mean
residual, so two means are taken from the k residuals (the spread s^2 itself is taken around their
common mean, which only adds the halves' difference to it). A normal interval at k = 10 covered 0.905
at a nominal 0.95 on the synthetic GPQA stand-in (``tests/methods/test_hardening_estimates_coverage.py``).
Its per-item residual variance is floored (:func:`residual_floor`) so that a model that matches its
predictions on every sampled item never gets a zero-width interval.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm, t as student_t

#: Fewest sampled items for the difference estimator: two folds of at least two items each.
MIN_ITEMS = 4

#: The laws of the difference estimator's interval: ``"student_t"`` (k - 2 degrees of freedom, what
#: build-micro writes) and ``"normal"`` (micro-benchmark folders written before it, read as they were).
INTERVAL_LAWS = ("student_t", "normal")


def clip_accuracy(estimate) -> np.ndarray:
    """An accuracy estimate (a fraction) clipped to [0, 1]; NaN stays NaN."""
    return np.clip(np.asarray(estimate, dtype=np.float64), 0.0, 1.0)


def default_neighbours(n_sources: int) -> int:
    """The neighbours ``knn_predictions`` averages by default: a fifth of the sources, at least 5
    (all of them when there are fewer)."""
    return min(int(n_sources), max(5, int(n_sources) // 5))


def knn_predictions(source_correct: np.ndarray, target_answers: np.ndarray, on: np.ndarray,
                    neighbours: int | None = None) -> np.ndarray:
    """Each target's predicted probability of answering every item right, from the source models that
    answer the items ``on`` most like it (the mean of the ``neighbours`` nearest sources' answers).

    ``source_correct``: sources x items (0/1); ``target_answers``: targets x len(on), the targets'
    answers on the items ``on``. Returns targets x items. Sources equally near are taken in their
    row order (a stable sort of the distances), so the prediction is a function of the data alone.
    """
    sources = np.asarray(source_correct, dtype=np.float64)
    answers = np.asarray(target_answers, dtype=np.float64)
    n_sources = sources.shape[0]
    k = default_neighbours(n_sources) if neighbours is None else min(n_sources, int(neighbours))
    block = sources[:, on]
    # squared distance between 0/1 vectors = number of disagreements
    distance = (answers ** 2).sum(1)[:, None] + (block ** 2).sum(1)[None, :] - 2 * answers @ block.T
    nearest = np.argsort(distance, axis=1, kind="stable")[:, :k]
    return sources[nearest].mean(axis=1)


def _fold_estimate(y: np.ndarray, known: np.ndarray, check: np.ndarray, predictions: np.ndarray,
                   n_items: int) -> tuple[np.ndarray, np.ndarray]:
    """One fold's estimate and its residuals: ``known`` items' answers counted as they are, the other items
    by prediction, corrected by the mean residual on ``check`` (a uniform sample of the other items)."""
    rest = np.setdiff1d(np.arange(n_items), known)
    residual = y[:, check] - predictions[:, check]
    total = y[:, known].sum(1) + predictions[:, rest].sum(1) + len(rest) * residual.mean(1)
    return total / n_items, residual


def difference_residuals(y: np.ndarray, items: np.ndarray, folds: tuple[np.ndarray, np.ndarray],
                         predict, n_items: int) -> tuple[np.ndarray, np.ndarray]:
    """The cross-fitted difference estimate of every target and its residuals on the sample.

    Arguments as for :func:`difference_estimate`. Returns (estimate, residuals): the estimate clipped to
    [0, 1] (see the module's docstring; the residuals are not), residuals is targets x k,
    the answers minus the predictions made from the other fold, the items of ``folds[1]`` first, then
    those of ``folds[0]`` (the same order for every target, so two targets' residuals can be paired).
    """
    y = np.asarray(y, dtype=np.float64)
    estimates, residuals = [], []
    for fit, check in (folds, folds[::-1]):
        est, residual = _fold_estimate(y, items[fit], items[check], predict(items[fit]), n_items)
        estimates.append(est)
        residuals.append(residual)
    return clip_accuracy((estimates[0] + estimates[1]) / 2), np.concatenate(residuals, axis=1)


def residual_variance(residuals: np.ndarray, n_items: int) -> np.ndarray:
    """Variance of the mean of k cross-fitted residuals of a uniform sample of ``n_items``:
    (1 - k/N) s^2 / k per row, s^2 the row's sample variance."""
    residuals = np.asarray(residuals, dtype=np.float64)
    k = residuals.shape[1]
    return (1 - k / n_items) * residuals.var(axis=1, ddof=1) / k


def difference_estimate(y: np.ndarray, items: np.ndarray, folds: tuple[np.ndarray, np.ndarray],
                        predict, n_items: int) -> tuple[np.ndarray, np.ndarray]:
    """Cross-fitted difference (AIPW-style) estimate of every target's accuracy over ``n_items`` items.

    ``y``: targets x n_items answers (only ``items`` are read); ``folds``: the sample ``items`` split in
    two (positions into ``items``); ``predict(on)`` returns targets x n_items predictions made from the
    targets' answers on the items ``on`` only. Returns (estimate, variance) per target. Each fold's
    estimate is exactly unbiased (the other fold is a uniform sample of the items it did not see); the
    variance is that of a sample mean of the cross-fitted residuals, (1 - k/N) s^2 / k, s^2 over both
    folds' residuals: the average's error is, to first order, the mean residual over the whole sample.
    """
    estimate, residuals = difference_residuals(y, items, folds, predict, n_items)
    return estimate, residual_variance(residuals, n_items)


def normal_interval(estimate: np.ndarray, variance: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided normal interval, clipped to [0, 1]."""
    half = norm.ppf(0.5 + level / 2) * np.sqrt(np.maximum(variance, 0.0))
    return np.clip(estimate - half, 0.0, 1.0), np.clip(estimate + half, 0.0, 1.0)


def difference_df(k: int) -> int:
    """Degrees of freedom of the difference estimator's t interval at k sampled items: ``k - 2``, the k
    residuals less the two fold means they are corrected by (at least 2, since ``k >= MIN_ITEMS``)."""
    return max(int(k) - 2, 1)


def residual_floor(k: int) -> float:
    """The smallest per-item residual variance the difference estimator's interval uses with k items:
    ``p (1 - p)`` with ``p = 1 / (k + 2)``.

    It is the variance of a 0/1 disagreement whose rate is estimated by Laplace's rule of succession
    after none was seen on k items: k items that all match their predictions (a residual spread of 0,
    e.g. a pool whose models all answer them alike) cannot vouch that the model matches the predictions
    on every other item, only that it rarely disagrees. It binds when the residuals barely vary, mostly
    at small k (on the synthetic GPQA stand-in, for about one model in ten at k = 10 and almost never at
    k = 25); with it the 95% interval covered 0.954 at k = 10 and 0.946 at k = 25 there (without it
    0.935 and 0.946).
    """
    p = 1.0 / (int(k) + 2)
    return p * (1.0 - p)


def difference_interval(estimate, variance, k: int, n_items: int, level: float = 0.95,
                        law: str = "student_t") -> tuple[np.ndarray, np.ndarray]:
    """The difference estimator's two-sided interval at ``level`` for every target, clipped to [0, 1].

    ``estimate ± q sqrt(max(variance, (1 - k/N) residual_floor(k) / k))``: ``variance`` is the
    estimator's own, (1 - k/N) s^2 / k (:func:`residual_variance`), floored as if s^2 were at least
    :func:`residual_floor` (so the interval never has zero width), and ``q`` the Student-t quantile with
    :func:`difference_df` degrees of freedom (``law="student_t"``) or, for folders written before it,
    the normal quantile (``law="normal"``). The estimate is clipped to [0, 1] first, so the interval
    always holds it. Returns (low, high).
    """
    if law not in INTERVAL_LAWS:
        raise ValueError(f"unknown interval law {law!r}; choose from {', '.join(INTERVAL_LAWS)}")
    k, n_items = int(k), int(n_items)
    tail = 0.5 + level / 2
    q = student_t.ppf(tail, difference_df(k)) if law == "student_t" else norm.ppf(tail)
    floor = (1 - k / n_items) * residual_floor(k) / k
    var = np.asarray(variance, dtype=np.float64)
    half = q * np.sqrt(np.maximum(var, floor))  # a NaN variance stays NaN
    est = clip_accuracy(estimate)
    return np.clip(est - half, 0.0, 1.0), np.clip(est + half, 0.0, 1.0)


def sample_mean_variance(y: np.ndarray, items: np.ndarray, n_items: int) -> np.ndarray:
    """Variance of the plain mean of a uniform sample without replacement (finite-population corrected)."""
    k = len(items)
    return (1 - k / n_items) * np.asarray(y, dtype=np.float64)[:, items].var(axis=1, ddof=1) / k


def regression_estimate(source_correct: np.ndarray, y: np.ndarray, items: np.ndarray,
                        ridge: float = 1.0) -> np.ndarray:
    """The source models' accuracy over all items regressed (ridge, with intercept) on their answers to
    ``items``, applied to each target's answers there: the random-sample regression baseline."""
    sources = np.asarray(source_correct, dtype=np.float64)
    x = sources[:, items]
    x_mean, t = x.mean(0), sources.mean(1)
    xc = x - x_mean
    coef = np.linalg.solve(xc.T @ xc + ridge * np.eye(len(items)), xc.T @ (t - t.mean()))
    return np.clip(t.mean() + (np.asarray(y, dtype=np.float64)[:, items] - x_mean) @ coef, 0.0, 1.0)
