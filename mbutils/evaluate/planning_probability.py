"""The exact chance that a uniformly random k-item subset orders one pair of models like all N items.

For two models on N items, only two counts matter to a uniformly random k-item subset:
``a`` items only model A gets right and ``b`` items only B gets right (items both get
right or both get wrong add the same to both estimates). The subset holds X of the a
items and Y of the b items, (X, Y) multivariate hypergeometric, and it ranks the pair
like the N items iff X > Y when a > b. Conditioning on M = X + Y gives an exact sum::

    P(X > Y) = sum_m  P(M = m) * P(X > m/2 | M = m),
    M ~ Hypergeom(N, a + b, k),   X | M = m ~ Hypergeom(a + b, a, m).

A pair tied on the N items (a = b) agrees under the paper's rule only if its estimate
difference is positive; by symmetry its probability is P(X > Y) = (1 - P(X = Y)) / 2 for
either pair order, so the same formula covers it (``tie_rule="exclude"`` drops ties).

For large k, D = X - Y is approximately normal with the moments of a sample without
replacement: E D = k (a - b) / N, Var D = k s^2 (N - k) / (N - 1) with
s^2 = (a + b) / N - ((a - b) / N)^2, and P(D > 0) = P(D >= 1) ~ Phi((E D - 1/2) / sd).
The approximation fails where D is coarse: small k, k close to N (few items left out),
few discordant items, or nearly all items discordant (D then has the parity of k).
All of these make M = X + Y nearly constant, so ``method="auto"`` uses the normal only
where sd(M) >= :data:`NORMAL_MIN_SD` (which implies sd(D) >= it too) and the exact sum
elsewhere; tests bound the difference (:data:`NORMAL_MAX_ERROR`) on a grid.

The planner's other parts average it: over the pairs of a bundle
(:mod:`~mbutils.evaluate.planning_curves`), and for one named pair (:mod:`~mbutils.evaluate.planning_pairs`).
"""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln, ndtr
from scipy.stats import hypergeom

from mbutils.base.errors import ProtocolError

METHODS = ("auto", "exact", "normal")


#: ``method="auto"`` uses the normal approximation only where sd(M) >= this (then sd(D) is
#: too); the exact sum elsewhere: small k, k close to N, few or nearly all items discordant.
NORMAL_MIN_SD = 4.0
#: Largest |normal - exact| where ``auto`` uses the normal, on the grid of tests/evaluate/test_planning_probability.py.
NORMAL_MAX_ERROR = 0.003
_TAIL_SD = 12.0  # the exact sum skips m farther than this many sd(M) (+10) from E[M]
_BLOCK = 100_000  # cells per block in the exact sum


def _m_moments(hi, lo, n, k) -> tuple[np.ndarray, np.ndarray]:
    """Mean and sd of M = X + Y, the discordant items in a k-subset (hypergeometric)."""
    n, k = n.astype(np.float64), k.astype(np.float64)
    r = (hi + lo) / n
    var = k * r * (1.0 - r) * (n - k) / np.maximum(n - 1.0, 1.0)
    return k * r, np.sqrt(np.clip(var, 0.0, None))


def _log_choose(lf: np.ndarray, top, bottom) -> np.ndarray:
    """log C(top, bottom) from a log-factorial table; -inf outside 0 <= bottom <= top."""
    ok = (bottom >= 0) & (bottom <= top)
    b = np.where(ok, bottom, 0)
    return np.where(ok, lf[top] - lf[b] - lf[np.where(ok, top - b, 0)], -np.inf)


def _exact_cells(hi, lo, n, k) -> np.ndarray:
    """Exact P(X_hi > X_lo) for each cell (hi, lo, n, k), one cell per entry.

    Sums P(M = m) * P(X > m/2 | M = m) over the m that carry mass. The conditional
    tail g(m) = 1 - F_m(floor(m/2)) is carried along m by the one-draw recurrence
    F_{m+1}(t) = F_m(t) - P(X_m = t) (hi - t) / (d - m), so each cell needs one scipy
    cdf call and a short loop of vector operations (over m, never over pairs).
    """
    out = np.empty(len(hi))
    if len(hi) == 0:
        return out
    lf = gammaln(np.arange(int(n.max()) + 2, dtype=np.float64) + 1.0)
    d, rest = hi + lo, n - hi - lo
    mean, sd = _m_moments(hi, lo, n, k)
    start = np.maximum(np.maximum(k - rest, 0), np.floor(mean - _TAIL_SD * sd - 10)).astype(np.int64)
    stop = np.minimum(np.minimum(k, d), np.ceil(mean + _TAIL_SD * sd + 10)).astype(np.int64)
    order = np.argsort(stop - start, kind="stable")  # blocks of similar window widths
    for first in range(0, len(order), _BLOCK):
        rows = order[first:first + _BLOCK]
        out[rows] = _exact_window(hi[rows], lo[rows], n[rows], k[rows], start[rows], stop[rows], lf)
    return np.clip(out, 0.0, 1.0)


def _exact_window(hi, lo, n, k, start, stop, lf) -> np.ndarray:
    """The sum of :func:`_exact_cells` over each cell's window start..stop of m.

    Cells are processed narrowest window first and each step works only on the cells whose
    window is still open (a suffix), so the cost is the sum of the widths, not their maximum
    times the number of cells. The log binomials a step shares with the next are carried
    over, and those whose arguments are in range by construction skip the range check.
    """
    order = np.argsort(stop - start, kind="stable")
    hi, lo, n, k, start, stop = (v[order] for v in (hi, lo, n, k, start, stop))
    width = stop - start
    d = hi + lo
    rest = n - d
    lf_d, lf_rest = lf[d], lf[rest]
    log_total = _log_choose(lf, n, k)
    m = start.copy()
    t = m // 2
    with np.errstate(invalid="ignore"):
        cdf = np.where(m > 0, hypergeom.cdf(t, np.maximum(d, 1), hi, m), 1.0)  # F_m(t); m = 0: X = 0
    mm = np.minimum(m, d)
    log_d = lf_d - lf[mm] - lf[d - mm]  # log C(d, mm): 0 <= mm <= d always
    log_hi, log_lo = _log_choose(lf, hi, t), _log_choose(lf, lo, mm - t)
    acc = np.zeros(len(hi))
    for step_no in range(int(width.max()) + 1):
        s = slice(int(np.searchsorted(width, step_no)), None)  # the cells with m <= stop
        hi_s, lo_s, k_s, d_s, m_s, t_s = hi[s], lo[s], k[s], d[s], m[s], t[s]
        a_s = log_d[s]
        # log C(n - d, k - m): start >= k - (n - d) and m <= stop <= min(k, d) keep it in range
        km = k_s - np.minimum(m_s, d_s)
        p_m = np.exp(a_s + (lf_rest[s] - lf[km] - lf[rest[s] - km]) - log_total[s])
        acc[s] += p_m * (1.0 - cdf[s])
        # one more draw: F_{m+1}(t) = F_m(t) - P(X_m = t) (hi - t) / (d - m); then t -> floor((m+1)/2)
        p_t = np.exp(log_hi[s] + log_lo[s] - a_s)
        c = cdf[s] - p_t * (hi_s - t_s) / np.maximum(d_s - m_s, 1)
        step = m_s % 2 == 1
        t_s, m_s = t_s + step, m_s + 1
        mm = np.minimum(m_s, d_s)
        a_s = lf_d[s] - lf[mm] - lf[d_s - mm]
        h_s, l_s = _log_choose(lf, hi_s, t_s), _log_choose(lf, lo_s, mm - t_s)
        cdf[s] = np.clip(c + np.where(step & (m_s <= d_s), np.exp(h_s + l_s - a_s), 0.0), 0.0, 1.0)
        t[s], m[s], log_d[s], log_hi[s], log_lo[s] = t_s, m_s, a_s, h_s, l_s
    out = np.empty(len(hi))
    out[order] = acc
    return out


def _normal_cells(hi, lo, n, k) -> np.ndarray:
    """Normal approximation of P(D > 0), D = X_hi - X_lo, with continuity correction."""
    hi, lo, n, k = (v.astype(np.float64) for v in (hi, lo, n, k))
    mu = (hi - lo) / n
    var = k * ((hi + lo) / n - mu**2) * (n - k) / np.maximum(n - 1.0, 1.0)
    mean, sd = k * mu, np.sqrt(np.clip(var, 0.0, None))
    with np.errstate(divide="ignore", invalid="ignore"):
        p = ndtr((mean - 0.5) / sd)  # the standard normal cdf, without scipy.stats' argument checks
    return np.where(sd > 1e-12, p, (mean > 0.5).astype(np.float64))  # sd = 0: D is constant


def _cells(hi, lo, n, k, method: str) -> np.ndarray:
    """P(agree) for 1-D arrays of cells with the chosen method."""
    if method not in METHODS:
        raise ProtocolError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    if method == "normal":
        return _normal_cells(hi, lo, n, k)
    if method == "exact":
        return _exact_cells(hi, lo, n, k)
    exact = _m_moments(hi, lo, n, k)[1] < NORMAL_MIN_SD
    out = np.empty(len(hi))
    out[exact] = _exact_cells(hi[exact], lo[exact], n[exact], k[exact])
    out[~exact] = _normal_cells(hi[~exact], lo[~exact], n[~exact], k[~exact])
    return out


def probability_matrix(hi, lo, n, ks, method: str) -> np.ndarray:
    """P(agree) for keys (rows) x sizes (columns)."""
    ks = np.asarray(ks, dtype=np.int64)
    shape = (len(hi), len(ks))
    cells = [np.broadcast_to(v, shape).ravel() for v in (hi[:, None], lo[:, None], n[:, None], ks[None, :])]
    return _cells(*cells, method).reshape(shape)


def as_counts(name: str, value) -> np.ndarray:
    """``value`` as int64 counts; whole floats are accepted, anything else is refused."""
    arr = np.asarray(value)
    if arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
        arr = arr.astype(np.int64)
    if arr.dtype.kind not in "iu":
        raise ProtocolError(f"{name} must be whole numbers (counts of items), got {value!r}")
    return arr.astype(np.int64)


def agreement_probability(a, b, n_items, k, method: str = "auto"):
    """Probability that a uniform k-subset of N items ranks a pair like the N items do.

    ``a``/``b``: items only model A / only model B gets right (array-like, broadcast).
    A tied pair (a = b) counts with the paper's rule, which in expectation is symmetric:
    P(X > Y). Returns a float for scalar input, else an array of the broadcast shape.

    Examples
    --------
    A pair three items apart on 100 items (A alone gets 3 right, B alone 1), by 25 and 50 items:

    >>> import mbutils
    >>> round(mbutils.agreement_probability(3, 1, 100, 25), 3)
    0.476
    >>> mbutils.agreement_probability(3, 1, 100, [25, 50]).round(3)
    array([0.476, 0.687])
    """
    a, b, n, k = (as_counts(label, v) for label, v in
                  (("a", a), ("b", b), ("n_items", n_items), ("k", k)))
    a, b, n, k = np.broadcast_arrays(a, b, n, k)
    if (a < 0).any() or (b < 0).any():
        raise ProtocolError("item counts a and b must be non-negative")
    if (a + b > n).any():
        raise ProtocolError("a + b cannot exceed n_items (they count disjoint sets of items)")
    if (k < 1).any() or (k > n).any():
        raise ProtocolError("k must lie between 1 and n_items")
    cells = np.stack([np.maximum(a, b).ravel(), np.minimum(a, b).ravel(), n.ravel(), k.ravel()])
    keys, inverse = np.unique(cells, axis=1, return_inverse=True)  # compute each distinct cell once
    out = _cells(*keys, method)[inverse.ravel()]
    out = out.reshape(a.shape)
    return float(out) if out.ndim == 0 else out
