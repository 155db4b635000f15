"""``score``'s verdicts: is a new model better than a pool model, worse, or can it not be told apart?

A verdict is a test at a stated level (:data:`VERDICT_LEVEL`, 95% by default). The pool models were run
on every item, so a pool model M's full accuracy ``acc(M)`` is known exactly and the uncertainty of
``acc(N) - acc(M)`` is the new model N's alone: the interval of the difference is N's interval for its
accuracy shifted by ``acc(M)``. So

* **better than M** when the lower end of N's interval at the level is above ``acc(M)``;
* **worse than M** when its upper end is below ``acc(M)``;
* **cannot tell** otherwise.

Each verdict is a one-sided test of ``acc(N) <= acc(M)`` (or ``>=``) at ``(1 - level) / 2``, and since
all of a model's verdicts read one interval, they hold *together* whenever that interval covers: the
chance that any of N's verdicts is wrong is at most the interval's miss rate, ``1 - level`` when it
covers at its nominal level. The interval is the estimator's own (exact hypergeometric for a uniform
random sample, Student-t for the difference estimator, the cross-fitted empirical interval otherwise),
so an estimator's bias is in it, not in an unstated margin. The card's MDAD is not used: it measures
how two *micro* scores order against each other, not a micro score against a known accuracy.

:func:`held_out_measures` measures all of it on models the micro-benchmark never saw (the cross-fitted
pool models and the models held out of a build): bias and RMSE of the estimate, coverage of the interval,
and the share of the verdicts made that are wrong against the full accuracies. :func:`shipping_problems`
is the rule a shipped micro-benchmark must pass.
"""

from __future__ import annotations

import numpy as np

from mbutils.base.errors import ResultsError

#: The level of ``score``'s verdicts (two-sided; each verdict a one-sided test at half of 1 - level).
VERDICT_LEVEL = 0.95
#: A shipped set's |bias| may be at most this share of its median interval half-width.
MAX_BIAS_SHARE = 0.5
#: Binomial standard errors a measured coverage or false-verdict rate may stray from its bound.
SLACK_SE = 2.0


def verdicts(low, high, pool_accuracy) -> tuple[np.ndarray, np.ndarray]:
    """Masks ``(better, worse)`` of shape (models, pool): N above / below each pool model at the interval's level.

    ``low``, ``high``: each new model's interval (fractions or points, as ``pool_accuracy``).

    Examples
    --------
    >>> better, worse = verdicts([0.50], [0.60], [0.40, 0.55, 0.70])
    >>> better.tolist(), worse.tolist()
    ([[True, False, False]], [[False, False, True]])
    """
    low = np.atleast_1d(np.asarray(low, dtype=np.float64))[:, None]
    high = np.atleast_1d(np.asarray(high, dtype=np.float64))[:, None]
    pool = np.atleast_1d(np.asarray(pool_accuracy, dtype=np.float64))[None, :]
    if low.shape != high.shape:
        raise ResultsError(f"verdicts: {low.shape[0]} lower ends but {high.shape[0]} upper ends")
    return low > pool, high < pool


def verdict_sentence(n_better: int, n_worse: int, n_unclear: int, level: float = VERDICT_LEVEL) -> str:
    """The verdicts in words, with their level.

    Examples
    --------
    >>> verdict_sentence(12, 3, 30)
    'better than 12 pool models and worse than 3 at 95% confidence; 30 cannot be told apart'
    """
    return (f"better than {n_better} pool model{'s' if n_better != 1 else ''} and worse than {n_worse} at "
            f"{100 * level:g}% confidence; {n_unclear} cannot be told apart")


def held_out_measures(estimates, lows, highs, truths, pool_truths, *, same=None,
                      level: float = VERDICT_LEVEL) -> dict:
    """Bias, RMSE, coverage and false-verdict rate of held-out models (fractions in, points out).

    Parameters
    ----------
    estimates, lows, highs, truths : array_like of shape (m,)
        Each held-out model's estimate, its interval at ``level`` and its full accuracy.
    pool_truths : array_like of shape (p,)
        Full accuracies of the models a verdict compares with.
    same : array_like of bool, shape (m, p), optional
        Pairs that are one model (not compared: a model is never judged against itself).
    level : float
        The level ``lows``/``highs`` were computed at (recorded, and the bound of the false rate).

    Returns
    -------
    dict
        ``models``, ``bias``, ``rmse``, ``half_width`` (median, points), ``covered``, ``coverage``,
        ``verdicts`` (made), ``false_verdicts``, ``false_rate`` (wrong / made; NaN when none made),
        ``models_with_false`` (models with at least one wrong verdict) and ``level``.

    Examples
    --------
    >>> m = held_out_measures([0.5, 0.6], [0.45, 0.55], [0.55, 0.65], [0.52, 0.70], [0.3, 0.62, 0.9])
    >>> m["covered"], m["verdicts"], m["false_verdicts"], round(m["bias"], 1)
    (1, 5, 0, -6.0)
    """
    est, low, high, truth = (np.atleast_1d(np.asarray(a, dtype=np.float64)) for a in (estimates, lows, highs, truths))
    pool = np.atleast_1d(np.asarray(pool_truths, dtype=np.float64))
    if not (est.shape == low.shape == high.shape == truth.shape):
        raise ResultsError("held_out_measures: estimates, interval ends and truths differ in length")
    out = {"level": float(level), "models": int(len(est))}
    if not len(est):
        return {**out, "bias": np.nan, "rmse": np.nan, "half_width": np.nan, "covered": 0, "coverage": np.nan,
                "verdicts": 0, "false_verdicts": 0, "false_rate": np.nan, "models_with_false": 0}
    error = est - truth
    inside = (low - 1e-12 <= truth) & (truth <= high + 1e-12)
    better, worse = verdicts(low, high, pool)
    if same is not None:
        keep = ~np.asarray(same, dtype=bool)
        better, worse = better & keep, worse & keep
    wrong = (better & ~(truth[:, None] > pool[None, :])) | (worse & ~(truth[:, None] < pool[None, :]))
    made = int(better.sum() + worse.sum())
    return {**out, "bias": float(100 * error.mean()), "rmse": float(100 * np.sqrt(np.mean(error ** 2))),
            "half_width": float(100 * np.median((high - low) / 2)), "covered": int(inside.sum()),
            "coverage": float(inside.mean()), "verdicts": made, "false_verdicts": int(wrong.sum()),
            "false_rate": float(wrong.sum() / made) if made else np.nan,
            "models_with_false": int(wrong.any(axis=1).sum())}


def binomial_slack(rate: float, n: int) -> float:
    """``SLACK_SE`` binomial standard errors of a proportion ``rate`` over ``n`` trials (inf when n = 0)."""
    return SLACK_SE * float(np.sqrt(rate * (1 - rate) / n)) if n > 0 else float("inf")


def shipping_problems(measures: dict) -> list[str]:
    """What keeps a micro-benchmark from shipping, by its held-out ``measures`` (empty: it may ship).

    The rule: |bias| at most :data:`MAX_BIAS_SHARE` of the median interval half-width; coverage within
    :data:`SLACK_SE` binomial standard errors of the level (or above it); false-verdict rate at most
    ``1 - level`` plus that slack.

    Examples
    --------
    >>> shipping_problems({"level": 0.95, "models": 100, "bias": 4.0, "half_width": 5.0, "covered": 80,
    ...                    "coverage": 0.8, "verdicts": 1000, "false_verdicts": 10, "false_rate": 0.01})
    ['|bias| 4.0 points exceeds half the median interval half-width (2.5)', 'coverage 80% of 100 held-out models is below 95% by more than 2 binomial standard errors']
    """
    level, n = float(measures["level"]), int(measures["models"])
    if n == 0:
        return ["no held-out models were measured"]
    problems = []
    bias, half = float(measures["bias"]), float(measures["half_width"])
    if not abs(bias) <= MAX_BIAS_SHARE * half:
        problems.append(f"|bias| {abs(bias):.1f} points exceeds half the median interval half-width "
                        f"({MAX_BIAS_SHARE * half:.1f})")
    if measures["coverage"] < level - binomial_slack(level, n):
        problems.append(f"coverage {100 * measures['coverage']:.0f}% of {n} held-out models is below "
                        f"{100 * level:g}% by more than {SLACK_SE:g} binomial standard errors")
    alpha, made = 1 - level, int(measures["verdicts"])
    if made and measures["false_rate"] > alpha + binomial_slack(alpha, made):
        problems.append(f"{100 * measures['false_rate']:.1f}% of {made} verdicts were wrong, more than "
                        f"{100 * alpha:g}% plus {SLACK_SE:g} binomial standard errors")
    return problems
