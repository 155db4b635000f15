"""``score``'s verdicts: is a new model better than a pool model, worse, or can it not be told apart?

The pool models were run on every item, so a pool model M's full accuracy ``acc(M)`` is known exactly:
the uncertainty of ``acc(N) - acc(M)`` is the new model N's alone. A verdict needs two things at the
stated level (:data:`VERDICT_LEVEL`, 95%):

* **the test**: N's interval at the level lies wholly above ``acc(M)`` (better) or below it (worse), a
  one-sided test at ``(1 - level) / 2`` with the estimator's own interval (exact hypergeometric for a
  uniform random sample, Student-t for the difference estimator, the cross-fitted empirical interval
  otherwise), so an estimator's bias is in it. All of a model's verdicts read one interval, so they
  hold together whenever it covers.
* **the error rate**: among the verdicts made, the share that is wrong is at most ``1 - level``. Coverage
  alone does not give this: a model whose interval misses is judged against every pool model between its
  accuracy and its interval, and where pool models crowd (most of GPQA's lie within ten points) one miss
  makes a hundred wrong verdicts while a covered model makes few. So a verdict also needs the chance that
  it is wrong, given the model's answers, to be at most ``1 - level``: the posterior chance that
  ``acc(N) <= acc(M)`` (for "better"), with the pool's accuracies (smoothed, and a floor of
  :data:`PRIOR_FLOOR` spread evenly so a model beyond the pool can be found better than all of it) as
  the population a new model comes from, and the estimator's own law as the likelihood. When new models
  are like the pool's, the verdicts so made are wrong at most that often on average (a local false sign
  rate, Stephens 2017); :func:`held_out_measures` measures it on models the micro-benchmark never saw.

The card's MDAD is not used: it is about how two *micro* scores order, not a micro score against a
known accuracy. :func:`shipping_problems` is the rule a shipped micro-benchmark must pass.
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
#: Share of the population prior spread evenly over [0, 1] (the rest: the pool's smoothed accuracies).
PRIOR_FLOOR = 0.05
#: Points of the accuracy grid the posterior lives on (at most; a bundle of N items uses N + 1 if fewer).
GRID_POINTS = 1001


def accuracy_grid(n_items: int) -> np.ndarray:
    """The accuracies a posterior is computed at: every K / N when N is at most 1,000, else 1,001 points."""
    return np.linspace(0.0, 1.0, min(int(n_items) + 1, GRID_POINTS))


def population_prior(grid: np.ndarray, pool_accuracy, floor: float = PRIOR_FLOOR) -> np.ndarray:
    """Prior mass on ``grid`` (rows summing to 1): the pool's accuracies smoothed by a normal kernel
    (Silverman's bandwidth, at least one grid step), mixed with ``floor`` spread evenly.

    ``pool_accuracy``: one pool (p,) or one row per model (m, p), NaN for no model; returns (rows, G).

    Examples
    --------
    >>> grid = accuracy_grid(10)
    >>> prior = population_prior(grid, [0.3, 0.3, 0.4])
    >>> prior.shape, bool(np.isclose(prior.sum(), 1)), int(np.argmax(prior[0]))
    ((1, 11), True, 3)
    """
    pool = np.atleast_1d(np.asarray(pool_accuracy, dtype=np.float64))
    pool = pool[None, :] if pool.ndim == 1 else pool
    step = grid[1] - grid[0] if len(grid) > 1 else 1.0
    column = np.nanmax(np.where(np.isfinite(pool), pool, -np.inf), axis=0)
    shared = bool(np.all(np.isfinite(pool) <= (pool == column[None, :])))  # each column one model (or NaN)
    if shared and np.isfinite(column).sum() >= 3:
        # one pool with some models left out of some rows: the whole pool's kernels less the left-out ones
        values = column[np.isfinite(column)]
        width = max(1.06 * values.std(ddof=1) * len(values) ** -0.2, step)
        kernels = np.exp(-0.5 * ((grid[:, None] - np.where(np.isfinite(column), column, np.inf)[None, :])
                                 / width) ** 2)
        dens = kernels.sum(1)[None, :] - (~np.isfinite(pool)).astype(np.float64) @ kernels.T
        dens = np.maximum(dens, 0.0)
        few = np.isfinite(pool).sum(1) < 2
        dens[few] = 1.0
    else:
        rows = []
        for row in pool:
            values = row[np.isfinite(row)]
            if len(values) < 2:
                rows.append(np.ones_like(grid))
                continue
            width = max(1.06 * values.std(ddof=1) * len(values) ** -0.2, step)
            rows.append(np.exp(-0.5 * ((grid[:, None] - values[None, :]) / width) ** 2).sum(1))
        dens = np.array(rows)
    return (1 - floor) * dens / dens.sum(1, keepdims=True) + floor / len(grid)


class Posterior:
    """Each model's posterior mass on an accuracy grid: the chances that its accuracy is at most, or at
    least, given values."""

    def __init__(self, grid: np.ndarray, likelihood: np.ndarray, prior: np.ndarray):
        mass = np.asarray(likelihood, dtype=np.float64) * prior
        total = mass.sum(axis=1, keepdims=True)
        flat = ~(total[:, 0] > 0)  # answers no accuracy on the grid explains: the prior alone
        mass[flat] = np.broadcast_to(prior, mass.shape)[flat]
        self.grid = grid
        self.mass = mass / mass.sum(axis=1, keepdims=True)
        self._below = np.cumsum(self.mass, axis=1)

    def _cumulative(self, values, side: str) -> np.ndarray:
        values = np.atleast_1d(np.asarray(values, dtype=np.float64))
        values = values[None, :] if values.ndim == 1 else values
        index = np.searchsorted(self.grid + 1e-12 * (side == "left") - 1e-12 * (side == "right"),
                                np.nan_to_num(values, nan=-1.0), side=side) - 1
        rows = np.arange(len(self.mass))[:, None]
        out = np.where(index >= 0, self._below[rows, np.clip(index, 0, None)], 0.0)
        return np.where(np.isfinite(values), out, np.nan)

    def at_most(self, values) -> np.ndarray:
        """P(accuracy <= v) for each model (rows) and value (columns; one row of values for all, or one per model)."""
        return self._cumulative(values, "right")

    def at_least(self, values) -> np.ndarray:
        """P(accuracy >= v), as :meth:`at_most`."""
        return 1.0 - self._cumulative(values, "left")


def verdicts(low, high, pool_accuracy, posterior: Posterior | None = None,
             level: float = VERDICT_LEVEL) -> tuple[np.ndarray, np.ndarray]:
    """Masks ``(better, worse)`` of shape (models, pool): N above / below each pool model at the interval's
    level, and, given a ``posterior``, with a chance of at most ``1 - level`` of being wrong.

    ``low``, ``high``: each new model's interval (fractions or points, as ``pool_accuracy``, which is one
    pool for all, or one row per model; NaN cells compare with nothing).

    Examples
    --------
    >>> better, worse = verdicts([0.50], [0.60], [0.40, 0.55, 0.70])
    >>> better.tolist(), worse.tolist()
    ([[True, False, False]], [[False, False, True]])
    """
    low = np.atleast_1d(np.asarray(low, dtype=np.float64))[:, None]
    high = np.atleast_1d(np.asarray(high, dtype=np.float64))[:, None]
    pool = np.atleast_1d(np.asarray(pool_accuracy, dtype=np.float64))
    pool = pool[None, :] if pool.ndim == 1 else pool  # (models, pool): each model its own pool (NaN: none)
    if low.shape != high.shape:
        raise ResultsError(f"verdicts: {low.shape[0]} lower ends but {high.shape[0]} upper ends")
    better, worse = low > pool, high < pool
    if posterior is not None:
        alpha = 1.0 - level
        better &= posterior.at_most(pool) <= alpha
        worse &= posterior.at_least(pool) <= alpha
    return better, worse


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
                      level: float = VERDICT_LEVEL, posterior: Posterior | None = None) -> dict:
    """Bias, RMSE, coverage and false-verdict rate of held-out models (fractions in, points out).

    Parameters
    ----------
    estimates, lows, highs, truths : array_like of shape (m,)
        Each held-out model's estimate, its interval at ``level`` and its full accuracy.
    pool_truths : array_like of shape (p,) or (m, p)
        Full accuracies of the models a verdict compares with (one row per model when each has its own
        pool; NaN cells are no model).
    same : array_like of bool, shape (m, p), optional
        Pairs that are one model (not compared: a model is never judged against itself).
    level : float
        The level ``lows``/``highs`` were computed at (recorded, and the bound of the false rate).
    posterior : Posterior, optional
        The models' posteriors, for verdicts made as ``score`` makes them (:func:`verdicts`).

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
    pool = pool[None, :] if pool.ndim == 1 else pool
    if not (est.shape == low.shape == high.shape == truth.shape):
        raise ResultsError("held_out_measures: estimates, interval ends and truths differ in length")
    out = {"level": float(level), "models": int(len(est))}
    if not len(est):
        return {**out, "bias": np.nan, "rmse": np.nan, "half_width": np.nan, "covered": 0, "coverage": np.nan,
                "verdicts": 0, "false_verdicts": 0, "false_rate": np.nan, "models_with_false": 0}
    error = est - truth
    inside = (low - 1e-12 <= truth) & (truth <= high + 1e-12)
    better, worse = verdicts(low, high, pool, posterior, level)
    if same is not None:
        keep = ~np.asarray(same, dtype=bool)
        better, worse = better & keep, worse & keep
    wrong = (better & ~(truth[:, None] > pool)) | (worse & ~(truth[:, None] < pool))
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
