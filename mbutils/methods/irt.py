"""Multidimensional two-parameter logistic (2PL) IRT: the model's MAP numerics, and abilities for fixed items.

The model: ``logit P(correct_ij) = a_j . theta_i - b_j`` with Gaussian priors
``theta_i ~ N(0, s_theta^2 I)``, ``a_j ~ N(0, s_a^2 I)``, ``b_j ~ N(0, s_b^2)``.
Abilities for fixed items (:func:`map_abilities`) and each half of a fit are small
ridge-logistic regressions, solved for all rows at once by the batched Newton steps with
per-row step halving here; fitting the items too is :mod:`mbutils.methods.irt_fit`.

Identifiability: with ``D > 1`` the priors are rotation invariant, so ``theta`` and
``a`` are determined only up to a common rotation (and, for ``D = 1``, a sign).
Compare fits through rotation-invariant quantities: logits ``a . theta - b``,
probabilities, or ``b``.

Missing responses are ``NaN`` and are simply left out of the likelihood.

Fits run single-threaded (BLAS limited to one thread for their duration): the work is
many small matrix products, for which extra threads mostly add overhead, results then
cannot depend on the machine's thread count, and parallel experiment workers do not
oversubscribe the cores.
"""

from __future__ import annotations

import functools
import sys

import numpy as np
import scipy.linalg  # noqa: F401  (imported here, so that single_threaded() limits its BLAS too)
from scipy.special import expit

from mbutils.base.errors import IRTError

__all__ = ["IRTError", "map_abilities", "sigmoid", "single_threaded"]

_THREADPOOLS = None


def single_threaded():
    """Context manager limiting the loaded BLAS and OpenMP pools to one thread.

    Scanning the loaded libraries is slow (~0.1 s), so the scan is redone only when
    modules have been imported since the last one (new imports may load new pools).
    """
    global _THREADPOOLS
    stamp = len(sys.modules)
    if _THREADPOOLS is None or _THREADPOOLS[0] != stamp:
        from threadpoolctl import ThreadpoolController

        _THREADPOOLS = (len(sys.modules), ThreadpoolController())
    return _THREADPOOLS[1].limit(limits=1)


# ---------------------------------------------------------------- elementwise helpers


def sigmoid(z: np.ndarray) -> np.ndarray:
    """Logistic function (``scipy.special.expit``: no overflow warnings).

    Examples
    --------
    >>> import numpy as np, mbutils
    >>> mbutils.sigmoid(np.array([-2.0, 0.0, 2.0])).round(3)
    array([0.119, 0.5  , 0.881])
    """
    return expit(z)


def cell_terms(z: np.ndarray, sign: np.ndarray, mask: np.ndarray | None, nll: np.ndarray | None = None):
    """Per-cell negative log-likelihood and q = P(observed answer); ``z`` becomes q.

    ``sign`` is ``2y - 1`` for 0/1 responses ``y``. ``q = expit(sign * z)`` is accurate in
    both tails, and it is all a Newton step needs: ``P - y = sign (q - 1)`` and
    ``P (1 - P) = q (1 - q)``. With ``u = 1 + exp(-sign * z)``, ``q = 1 / u`` and the
    cell's negative log-likelihood is ``log u``: one ``exp`` and one ``log`` pass, the
    costly part of a fit, in about a third of the time of ``scipy.special.expit`` then
    ``log``, and within a few ulps of them in both tails (``u`` is large exactly where
    ``q`` is small, so ``1 / u`` keeps its relative accuracy). ``nll`` (an array to
    overwrite) spares a fresh allocation on every pass.
    """
    np.multiply(z, sign, out=z)
    np.clip(z, -700.0, 700.0, out=z)  # exp(700) is finite: u never overflows
    np.negative(z, out=z)
    u = np.exp(z, out=z)
    u += 1.0
    nll = np.log(u, out=nll)
    q = np.reciprocal(u, out=u)
    if mask is not None:
        nll *= mask
    return nll, q


def residuals(q: np.ndarray, sign: np.ndarray, mask: np.ndarray | None, out=None):
    """Residuals P - y and weights P (1 - P) from q, zero at missing cells (into ``out``)."""
    R, W = (np.empty_like(q), np.empty_like(q)) if out is None else out
    np.subtract(q, 1.0, out=R)
    R *= sign
    np.subtract(1.0, q, out=W)
    W *= q
    if mask is not None:
        R *= mask
        W *= mask
    return R, W


def as_responses(Y, what: str = "responses", ndim: int = 2) -> tuple[np.ndarray, np.ndarray | None]:
    """0/1 float array with NaN for missing -> (Y with 0 at missing cells, mask or None)."""
    Y = np.array(Y, dtype=np.float64)
    if Y.ndim != ndim:
        shape = "models x items matrix" if ndim == 2 else "runs x models x items array"
        raise IRTError(f"{what} must be a {ndim}-D {shape}, got shape {Y.shape}")
    missing = np.isnan(Y)
    bad = ~missing & (Y != 0) & (Y != 1)
    if bad.any():
        *lead, row, col = np.argwhere(bad)[0]
        where = f"fit {lead[0]}, " if lead else ""
        raise IRTError(
            f"{what} must be 0/1 (NaN for missing); found {Y[(*lead, row, col)]!r} at {where}row {row}, "
            f"column {col}"
        )
    if not missing.any():
        return Y, None
    Y[missing] = 0.0
    return Y, (~missing).astype(np.float64)


def _check_positive(**values) -> None:
    for name, value in values.items():
        if not (np.isfinite(value) and value > 0):
            raise IRTError(f"{name} must be a positive number, got {value!r}")


# ---------------------------------------------------------------- batched Newton steps


@functools.lru_cache(maxsize=None)
def _symmetric_layout(p: int):
    """Rows and columns of the p (p + 1) / 2 upper-triangle entries, and for every entry
    of a p x p matrix the position of its value among them."""
    iu, ju = np.triu_indices(p)
    where = np.empty((p, p), dtype=np.intp)
    where[iu, ju] = where[ju, iu] = np.arange(len(iu))
    return iu, ju, where.ravel()


def newton_steps(X: np.ndarray, R: np.ndarray, W: np.ndarray, params: np.ndarray,
                 precision: np.ndarray) -> np.ndarray:
    """Newton steps for many independent ridge-logistic regressions, in stacks.

    In every stack (leading axes) the rows of ``params`` (p coefficients each) share the
    design ``X`` (n x p): row ``r`` has logits ``X @ params[r]``, residuals (P - y) ``R[r]``
    and weights P (1 - P) ``W[r]``. Only the p (p + 1) / 2 distinct Hessian entries are
    multiplied out (the Hessian is symmetric): half the work of the largest product.
    """
    p = X.shape[-1]
    iu, ju, where = _symmetric_layout(p)
    H = (W @ (X[..., iu] * X[..., ju]))[..., where]
    H[..., ::p + 1] += precision
    H = H.reshape(H.shape[:-1] + (p, p))
    return np.linalg.solve(H, (R @ X + params * precision)[..., None])[..., 0]


def map_abilities(Y, a: np.ndarray, b: np.ndarray, prior_sd: float = 1.0,
                  max_iter: int = 50, tol: float = 1e-6) -> np.ndarray:
    """MAP abilities of models answering items with *fixed* parameters ``a``, ``b``.

    ``Y`` is models x items (0/1, NaN = not asked); all models are solved at once by
    batched Newton steps with step halving (the posterior is strictly log-concave, so
    this converges to the unique mode). Returns models x D.

    Examples
    --------
    Two models answer three one-dimensional items of difficulty -1, 0 and 1:

    >>> import numpy as np, mbutils
    >>> Y = np.array([[1, 1, 0], [1, 0, 0]], dtype=float)
    >>> mbutils.map_abilities(Y, np.ones((3, 1)), np.array([-1.0, 0.0, 1.0])).round(3)
    array([[ 0.305],
           [-0.305]])
    """
    with single_threaded():
        return _map_abilities(Y, a, b, prior_sd, max_iter, tol)


def _map_abilities(Y, a, b, prior_sd, max_iter, tol) -> np.ndarray:
    Y, mask = as_responses(Y, "ability responses")
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.ndim != 2 or b.shape != (a.shape[0],) or Y.shape[1] != a.shape[0]:
        raise IRTError(
            f"responses have {Y.shape[1]} items but item parameters have shapes "
            f"a {a.shape}, b {b.shape}"
        )
    _check_positive(prior_sd=prior_sd)
    precision = np.full(a.shape[1], 1.0 / prior_sd**2)
    theta = np.zeros((Y.shape[0], a.shape[1]))
    sign = 2.0 * Y - 1.0
    q = np.empty_like(Y)

    def objective(th, rows):
        idx = slice(None) if rows is None else rows
        nll, q[idx] = cell_terms(th @ a.T - b, sign[idx], None if mask is None else mask[idx])
        return nll.sum(axis=1) + 0.5 * (th**2 * precision).sum(axis=1)

    f = objective(theta, None)
    for _ in range(max_iter):
        R, W = residuals(q, sign, mask)
        step = newton_steps(a, R, W, theta, precision)
        theta, f = halving_update(theta, step, f, objective)
        if np.abs(step).max() < tol:
            break
    return theta


def halving_update(params, step, f_old, objective, max_halvings: int = 30):
    """Apply ``params - step`` per row, halving the step where the objective went up.

    ``objective(p, rows)`` returns the per-row objective of the parameter rows ``p``
    belonging to row indices ``rows`` (``None`` = all rows) and refreshes the caller's
    state there. Rows that cannot improve keep their old values, so the objective never
    increases; each row's fate depends on that row alone, so rows of independent fits
    can share one call. Returns (new parameters, their objective).
    """
    slack = 1e-12 * np.abs(f_old)  # rounding noise is not an increase
    new = params - step
    f_new = objective(new, None)
    scale = 1.0
    for _ in range(max_halvings):
        worse = np.flatnonzero(f_new > f_old + slack)
        if not len(worse):
            break
        scale *= 0.5
        new[worse] = params[worse] - scale * step[worse]
        f_new[worse] = objective(new[worse], worse)
    worse = np.flatnonzero(f_new > f_old)
    if len(worse):  # no improvement found: keep the old values (and refresh any state)
        new[worse] = params[worse]
        f_new[worse] = objective(new[worse], worse)
    return new, f_new
