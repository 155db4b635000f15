"""Intervals for a model's full-benchmark accuracy estimated from a micro-benchmark.

Three constructions, chosen by how the micro-benchmark estimates:

* **Plain mean of a uniform random subset** (:func:`hypergeometric_interval`). The k items
  are drawn without replacement from the N items, so the model's count of correct answers
  on them is X ~ Hypergeom(N, K, k) given its K correct answers on all N items. The exact
  interval inverts the two one-sided tests, as Clopper-Pearson does for the binomial: K is
  kept when P(X >= x | K) > alpha/2 and P(X <= x | K) > alpha/2. Its coverage is at least
  the level for every K (it is conservative, never anti-conservative).
* **Any other estimate** (weighted, IRT, anchors; :func:`empirical_interval`). No sampling
  model gives an exact law, so the interval is read off held-out errors e = estimate -
  truth of models the micro-benchmark was not built from (cross-fitted on the pool, see
  :mod:`mbutils.micro.build`): the truth lies in [est - q_hi, est - q_lo] with q_lo,
  q_hi the alpha/2 and 1 - alpha/2 empirical quantiles of the errors, taken at the ranks
  ceil((n + 1) p). This is a *cross-fitted* interval in the spirit of CV+ (Barber et al.
  2021), not split-conformal: the held-out errors come from micro-benchmarks built on the
  other folds, not from the one being scored, so the split-conformal guarantee (coverage at
  least the level for exchangeable models) does not carry over as such; CV+'s guarantee is
  coverage of at least 1 - 2 alpha in the worst case, and about the level in practice. The
  coverage is marginal (over models like the held-out ones) and is measured by simulation
  in ``benchmarks/coverage.py`` and in the chapter on using a micro-benchmark.
* **The cross-fitted difference estimator** (``random_difference``; :func:`difference_interval`). It
  estimates its own variance from its cross-fitted residuals on the k items, (1 - k/N) s^2 / k,
  and the interval is the estimate plus or minus the Student-t quantile with k - 2 degrees of freedom
  times its square root, s^2 floored at p (1 - p), p = 1 / (k + 2), so it never has zero width
  (:func:`mbutils.methods.estimators.difference_interval`, where the rule is argued). The normal
  quantile it replaced covered 0.905 at a nominal 0.95 with k = 10; the t interval covers 0.954 there
  and 0.946 at k = 25 (synthetic GPQA stand-in, ``tests/methods/test_hardening_estimates_coverage.py``). It is
  still approximate; its coverage on held-out models is measured like the empirical interval's.
  :func:`normal_interval` is the law of folders written before it.

All are fractions in [0, 1] (the estimates and both ends); callers show points.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import hypergeom

from mbutils.base.errors import ResultsError


def _check_level(level: float) -> float:
    if not 0 < level < 1:
        raise ResultsError(f"level must lie strictly between 0 and 1, not {level!r}")
    return float(level)


def hypergeometric_interval(correct, k: int, n_items: int, level: float = 0.9) -> np.ndarray:
    """Exact interval for K / N given x correct of a uniform random k of N items.

    Parameters
    ----------
    correct : array_like of int
        Correct answers on the k items, one per model.
    k, n_items : int
        Items in the micro-benchmark and in the full benchmark (1 <= k <= n_items).
    level : float, default 0.9
        Two-sided level, in (0, 1).

    Returns
    -------
    numpy.ndarray of shape (n, 2)
        Lower and upper bound of the full-benchmark accuracy (fractions).

    Examples
    --------
    >>> hypergeometric_interval([5], 10, 10).tolist()  # every item seen: no uncertainty
    [[0.5, 0.5]]
    >>> low, high = hypergeometric_interval([30], 100, 448)[0]
    >>> bool(low < 0.3 < high), bool(high - low < 0.2)
    (True, True)
    """
    level = _check_level(level)
    x = np.atleast_1d(np.asarray(correct, dtype=np.int64))
    if not 1 <= k <= n_items:
        raise ResultsError(f"k must lie between 1 and the {n_items} items, not {k}")
    if (x < 0).any() or (x > k).any():
        raise ResultsError(f"correct counts must lie between 0 and k = {k}")
    half = (1.0 - level) / 2
    # P(X >= x | K) rises with K and P(X <= x | K) falls with it (X grows stochastically with K), so
    # the kept K are the interval from the first K whose upper tail exceeds alpha/2 to the last K whose
    # lower tail does: two bisections over 0..N, all models at once (about 2 log2 N tail evaluations
    # per model instead of 2 (N + 1)).
    low = _bisect(lambda big_k: hypergeom.sf(x - 1, n_items, big_k, k) > half, n_items, len(x), first=True)
    high = _bisect(lambda big_k: hypergeom.cdf(x, n_items, big_k, k) > half, n_items, len(x), first=False)
    empty = low > high  # no K kept (cannot happen for a level below 1; kept as the degenerate answer x)
    low, high = np.where(empty, x, low), np.where(empty, x, high)
    return np.stack([low, high], axis=1) / n_items


def _bisect(holds, n_items: int, n: int, *, first: bool) -> np.ndarray:
    """Per row, the first K in 0..N where the rising condition ``holds(K)`` is true (``first``; N + 1
    where none is), or the last K where the falling one is (-1 where none is)."""
    lo, hi = (np.zeros(n, np.int64), np.full(n, n_items + 1, np.int64)) if first else \
        (np.full(n, -1, np.int64), np.full(n, n_items, np.int64))
    while (open_ := lo < hi).any():
        mid = np.clip((lo + hi + (0 if first else 1)) // 2, 0, n_items)
        ok = holds(mid)
        if first:  # every K >= hi holds, every K < lo fails
            hi, lo = np.where(open_ & ok, mid, hi), np.where(open_ & ~ok, mid + 1, lo)
        else:  # every K <= lo holds, every K > hi fails
            lo, hi = np.where(open_ & ok, mid, lo), np.where(open_ & ~ok, mid - 1, hi)
    return lo


def conformal_quantiles(errors, level: float = 0.9) -> tuple[float, float]:
    """(q_lo, q_hi): the errors at the ranks ceil((n + 1) p) of alpha/2 and 1 - alpha/2 (the conformal ranks).

    With n errors the upper bound is the ceil((n + 1)(1 - alpha/2))-th smallest error
    (+inf when that rank exceeds n) and the lower one the mirror image, so that a new
    exchangeable error falls in [q_lo, q_hi] with probability at least ``level``.

    Examples
    --------
    >>> conformal_quantiles(list(range(-50, 51)), 0.9)
    (-46.0, 46.0)
    >>> conformal_quantiles([0.1, -0.1], 0.9)  # too few errors: no finite bound
    (-inf, inf)
    """
    level = _check_level(level)
    e = np.sort(np.asarray(errors, dtype=np.float64).ravel())
    e = e[np.isfinite(e)]
    n = len(e)
    if n == 0:
        return -np.inf, np.inf
    alpha = 1.0 - level
    rank_hi = int(np.ceil((n + 1) * (1 - alpha / 2)))
    rank_lo = n + 1 - rank_hi
    q_hi = float(e[rank_hi - 1]) if rank_hi <= n else np.inf
    q_lo = float(e[rank_lo - 1]) if rank_lo >= 1 else -np.inf
    return q_lo, q_hi


def empirical_interval(estimates, errors, level: float = 0.9) -> np.ndarray:
    """[est - q_hi, est - q_lo] from held-out errors (estimate - truth), clipped to [0, 1].

    Examples
    --------
    >>> errors = [-0.02, -0.01, 0.0, 0.01, 0.02] * 20
    >>> empirical_interval([0.5], errors, 0.9).round(3).tolist()
    [[0.48, 0.52]]
    """
    q_lo, q_hi = conformal_quantiles(errors, level)
    est = np.atleast_1d(np.asarray(estimates, dtype=np.float64))
    return np.clip(np.stack([est - q_hi, est - q_lo], axis=1), 0.0, 1.0)


def normal_interval(estimates, variances, level: float = 0.9) -> np.ndarray:
    """[est - z sd, est + z sd], z the normal quantile of ``level``, clipped to [0, 1]: the plain normal
    interval (no floor), the difference estimator's before :func:`difference_interval` replaced it.

    Examples
    --------
    >>> normal_interval([0.5], [0.0025], 0.9).round(4).tolist()
    [[0.4178, 0.5822]]
    """
    from mbutils.methods.estimators import normal_interval as two_sided

    low, high = two_sided(np.atleast_1d(np.asarray(estimates, dtype=np.float64)),
                          np.atleast_1d(np.asarray(variances, dtype=np.float64)), _check_level(level))
    return np.stack([low, high], axis=1)


def difference_interval(estimates, variances, k: int, n_items: int, level: float = 0.9,
                        law: str = "student_t") -> np.ndarray:
    """The difference estimator's interval, (n, 2) fractions in [0, 1]: Student-t with k - 2 degrees of
    freedom (``law="normal"``: the normal quantile of folders written before it), its variance floored;
    see :func:`mbutils.methods.estimators.difference_interval`.

    Examples
    --------
    >>> difference_interval([0.5], [0.0025], 40, 400, 0.9).round(4).tolist()
    [[0.4157, 0.5843]]
    >>> difference_interval([0.5], [0.0], 40, 400, 0.9).round(4).tolist()  # no spread: the floor, not zero width
    [[0.4614, 0.5386]]
    """
    from mbutils.methods.estimators import difference_interval as two_sided

    low, high = two_sided(np.atleast_1d(np.asarray(estimates, dtype=np.float64)),
                          np.atleast_1d(np.asarray(variances, dtype=np.float64)), k, n_items, _check_level(level), law)
    return np.stack([low, high], axis=1)
