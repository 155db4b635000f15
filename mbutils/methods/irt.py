"""Multidimensional two-parameter logistic (2PL) IRT, fitted by MAP with numpy.

The model: ``logit P(correct_ij) = a_j . theta_i - b_j`` with Gaussian priors
``theta_i ~ N(0, s_theta^2 I)``, ``a_j ~ N(0, s_a^2 I)``, ``b_j ~ N(0, s_b^2)``.
The fit maximises the joint posterior density (MAP) by *alternating Newton* steps:
with the items fixed, every model's ``theta_i`` is a small ridge-logistic regression,
and with the abilities fixed, every item's ``(a_j, b_j)`` is one too. Both halves are
solved for all rows at once (batched ``D x D`` Hessians), with per-row step halving so
that the posterior never decreases. The tinyBenchmarks reference fits the same model by
variational inference (2000 Adam steps); MAP gives the posterior mode of the same model,
deterministically, in a fraction of the time.

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

import sys

import numpy as np
from scipy.special import expit

from mbutils.base.errors import MbutilsError
from mbutils.base.validation import Integer, Real, validate_constraints

__all__ = ["IRTError", "IRTModel", "map_abilities", "sigmoid", "single_threaded"]

_THREADPOOLS = None


class IRTError(MbutilsError, ValueError):
    """The data or parameters cannot be used to fit or apply an IRT model."""


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
    """Logistic function (``scipy.special.expit``: no overflow warnings)."""
    return expit(z)


def _nll_parts(z: np.ndarray, sign: np.ndarray, mask: np.ndarray | None):
    """Per-cell negative log-likelihood and P(correct); ``z`` is overwritten.

    ``sign`` is ``2y - 1`` for 0/1 responses ``y``. Works through q = P(observed
    answer) = expit(sign * z), accurate in both tails, with one ``expit`` and one
    ``log`` pass (the costly parts of a fit).
    """
    np.multiply(z, sign, out=z)
    np.clip(z, -700.0, 700.0, out=z)
    q = expit(z, out=z)
    prob = q * sign
    prob += 0.5 * (1.0 - sign)  # q where y = 1, 1 - q where y = 0
    nll = np.log(q)
    np.negative(nll, out=nll)
    if mask is not None:
        nll *= mask
    return nll, prob


def _as_responses(Y, what: str = "responses") -> tuple[np.ndarray, np.ndarray | None]:
    """0/1 float matrix with NaN for missing -> (Y with 0 at missing cells, mask or None)."""
    Y = np.array(Y, dtype=np.float64)
    if Y.ndim != 2:
        raise IRTError(f"{what} must be a 2-D models x items matrix, got shape {Y.shape}")
    missing = np.isnan(Y)
    bad = ~missing & (Y != 0) & (Y != 1)
    if bad.any():
        row, col = np.argwhere(bad)[0]
        raise IRTError(
            f"{what} must be 0/1 (NaN for missing); found {Y[row, col]!r} at row {row}, "
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


def _row_newton_step(X: np.ndarray, XX: np.ndarray, R: np.ndarray, W: np.ndarray,
                     params: np.ndarray, precision: np.ndarray) -> np.ndarray:
    """Newton steps for many independent ridge-logistic regressions sharing design ``X``.

    Row ``r`` of ``params`` (p coefficients) has logits ``X @ params[r]``; ``R`` and ``W``
    hold residuals (P - y) and weights P(1 - P) with one row per regression.
    """
    p = X.shape[1]
    grad = R @ X + params * precision
    hess = (W @ XX).reshape(-1, p, p)
    hess[:, np.arange(p), np.arange(p)] += precision
    return np.linalg.solve(hess, grad[:, :, None])[:, :, 0]


def _outer_rows(X: np.ndarray) -> np.ndarray:
    """Row-wise outer products, flattened: (n, p) -> (n, p*p)."""
    return (X[:, :, None] * X[:, None, :]).reshape(len(X), -1)


def map_abilities(Y, a: np.ndarray, b: np.ndarray, prior_sd: float = 1.0,
                  max_iter: int = 50, tol: float = 1e-6) -> np.ndarray:
    """MAP abilities of models answering items with *fixed* parameters ``a``, ``b``.

    ``Y`` is models x items (0/1, NaN = not asked); all models are solved at once by
    batched Newton steps with step halving (the posterior is strictly log-concave, so
    this converges to the unique mode). Returns models x D.
    """
    with single_threaded():
        return _map_abilities(Y, a, b, prior_sd, max_iter, tol)


def _map_abilities(Y, a, b, prior_sd, max_iter, tol) -> np.ndarray:
    Y, mask = _as_responses(Y, "ability responses")
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
    aa = _outer_rows(a)

    sign = 2.0 * Y - 1.0

    def objective(th, rows):
        sg = sign if rows is None else sign[rows]
        mk = mask if (mask is None or rows is None) else mask[rows]
        nll, prob = _nll_parts(th @ a.T - b, sg, mk)
        return nll.sum(axis=1) + 0.5 * (th**2 * precision).sum(axis=1), prob

    f, prob = objective(theta, None)
    for _ in range(max_iter):
        R = prob - Y if mask is None else (prob - Y) * mask
        W = prob * (1 - prob) if mask is None else prob * (1 - prob) * mask
        step = _row_newton_step(a, aa, R, W, theta, precision)
        theta, f, prob = _halving_update(theta, step, f, objective)
        if np.abs(step).max() < tol:
            break
    return theta


def _halving_update(params, step, f_old, objective, max_halvings: int = 30):
    """Apply ``params - step`` per row, halving the step where the objective went up.

    ``objective(p, rows)`` returns (per-row objective, per-row probabilities) for the
    parameter rows ``p`` belonging to row indices ``rows`` (``None`` = all rows).
    Rows that cannot improve keep their old values, so the objective never increases.
    """
    slack = 1e-12 * np.abs(f_old)  # rounding noise is not an increase
    new = params - step
    f_new, prob_new = objective(new, None)
    scale = 1.0
    for _ in range(max_halvings):
        worse = np.flatnonzero(f_new > f_old + slack)
        if not len(worse):
            break
        scale *= 0.5
        new[worse] = params[worse] - scale * step[worse]
        f_new[worse], prob_new[worse] = objective(new[worse], worse)
    worse = np.flatnonzero(f_new > f_old)
    if len(worse):  # no improvement found: keep the old values (and refresh any state)
        new[worse] = params[worse]
        f_new[worse], prob_new[worse] = objective(new[worse], worse)
    return new, f_new, prob_new


# ---------------------------------------------------------------- the model


class IRTModel:
    """Multidimensional 2PL IRT fitted by MAP (scikit-learn style).

    Parameters
    ----------
    dims : number of latent dimensions D (the tinyBenchmarks reference uses 10).
    prior_sd_theta, prior_sd_a, prior_sd_b : standard deviations of the Gaussian priors.
        ``b`` gets a wide prior so that items every model gets wrong (or right) stay
        finite without being pulled towards 50%.
    max_iter : maximum number of alternating sweeps (items step + models step).
    tol : stop when a sweep lowers the negative log-posterior by less than ``tol``
        times its value. The default stops after a handful of sweeps on benchmark-sized
        data; in our checks held-out likelihood no longer improves beyond that point
        (it drifts slightly down as the MAP fit chases noise), see benchmarks/bench_irt.py.

    Attributes after :meth:`fit`: ``theta_`` (models x D), ``a_`` (items x D),
    ``b_`` (items), ``n_iter_``, ``objective_`` (negative log-posterior), ``converged_``.
    """

    def __init__(self, dims: int = 10, prior_sd_theta: float = 1.0, prior_sd_a: float = 1.0,
                 prior_sd_b: float = 3.0, max_iter: int = 100, tol: float = 1e-4):
        self.dims = dims
        self.prior_sd_theta = prior_sd_theta
        self.prior_sd_a = prior_sd_a
        self.prior_sd_b = prior_sd_b
        self.max_iter = max_iter
        self.tol = tol

    def get_params(self) -> dict:
        return {k: getattr(self, k) for k in ("dims", "prior_sd_theta", "prior_sd_a", "prior_sd_b", "max_iter", "tol")}

    def set_params(self, **params) -> "IRTModel":
        unknown = set(params) - set(self.get_params())
        if unknown:
            raise IRTError(f"unknown IRT parameter {sorted(unknown)[0]!r}; its parameters are "
                           f"{', '.join(self.get_params())}")
        for key, value in params.items():
            setattr(self, key, value)
        return self

    def clone(self) -> "IRTModel":
        """An unfitted model with the same parameters."""
        return IRTModel(**self.get_params())

    def validate_params(self) -> None:
        """Check the hyper-parameters (as a fit does), with :mod:`mbutils.base.validation`'s wording."""
        self._validate()

    def __eq__(self, other) -> bool:  # equal hyper-parameters: the same model to fit
        return isinstance(other, IRTModel) and self.get_params() == other.get_params()

    __hash__ = None

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"IRTModel({params})"

    # -- fitting -------------------------------------------------------------------

    #: The hyper-parameters' constraints (:mod:`mbutils.base.validation`): checked when a fit starts.
    parameter_constraints = {"dims": Integer(low=1), "prior_sd_theta": Real(low=0.0, low_open=True),
                             "prior_sd_a": Real(low=0.0, low_open=True), "prior_sd_b": Real(low=0.0, low_open=True),
                             "max_iter": Integer(low=1), "tol": Real(low=0.0, low_open=True)}

    def _validate(self) -> None:
        validate_constraints(self, self.parameter_constraints, "IRT model: ", IRTError)

    def _init_theta(self, Y: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
        """Abilities from the leading singular vectors of the centred responses.

        Deterministic, so a fit depends on the data alone. Dimensions beyond the rank
        of the centred data start, and stay, at zero (they could not be identified).
        """
        n, m = Y.shape
        filled = Y if mask is None else np.where(mask > 0, Y, np.nan)
        col_mean = np.nan_to_num(np.nanmean(filled, axis=0), nan=0.5)
        centred = Y - col_mean if mask is None else (Y - col_mean) * mask
        # Left singular vectors from the small models x models Gram matrix (cheaper than
        # an SVD of the full matrix when items outnumber models).
        evals, evecs = np.linalg.eigh(centred @ centred.T)
        order = np.argsort(evals)[::-1]
        d = min(self.dims, n, int((evals > 1e-9 * max(evals.max(), 1e-300)).sum()))
        theta = np.zeros((n, self.dims))
        theta[:, :d] = evecs[:, order[:d]] * np.sqrt(n)  # unit variance, like the prior
        # Orient each column so that its correlation with the row means is >= 0: a
        # fixed convention that makes the fit reproducible across LAPACK builds.
        signs = np.sign(theta[:, :d].T @ (centred.mean(axis=1)))
        signs[signs == 0] = 1.0
        theta[:, :d] *= signs
        return theta

    def fit(self, Y, rng: np.random.Generator | None = None) -> "IRTModel":
        """Fit to a models x items 0/1 matrix (NaN = missing).

        ``rng`` is accepted for interface symmetry and unused: the SVD start makes the
        fit a deterministic function of the data, so fits can be shared and cached.
        """
        self._validate()
        Y, mask = _as_responses(Y)
        n, m = Y.shape
        if n < 2 or m < 1:
            raise IRTError(f"need at least 2 models and 1 item to fit IRT, got {n} x {m}")
        with single_threaded():
            self._fit(Y, mask)
        return self

    def _fit(self, Y: np.ndarray, mask: np.ndarray | None) -> None:
        n, m = Y.shape
        D = int(self.dims)
        prec_theta = np.full(D, 1.0 / self.prior_sd_theta**2)
        prec_item = np.r_[np.full(D, 1.0 / self.prior_sd_a**2), 1.0 / self.prior_sd_b**2]
        theta = self._init_theta(Y, mask)
        items = np.zeros((m, D + 1))  # columns: a_j (D), b_j
        # One models x items state at the current (theta, items): cell nll and P(correct).
        X = np.hstack([theta, -np.ones((n, 1))])
        sign = 2.0 * Y - 1.0
        nll, prob = _nll_parts(X @ items.T, sign, mask)

        def item_cols(cols_params, cols):
            """Per-item objective for item columns ``cols``; refreshes the state there."""
            idx = slice(None) if cols is None else cols
            mk = None if mask is None else mask[:, idx]
            sub_nll, sub_prob = _nll_parts(X @ cols_params.T, sign[:, idx], mk)
            nll[:, idx], prob[:, idx] = sub_nll, sub_prob
            f = sub_nll.sum(axis=0) + 0.5 * (cols_params**2 * prec_item).sum(axis=1)
            return f, sub_prob.T

        def model_rows(rows_params, rows):
            """Per-model objective for rows ``rows``; refreshes the state there."""
            idx = slice(None) if rows is None else rows
            mk = None if mask is None else mask[idx]
            z = rows_params @ items[:, :D].T - items[:, D]
            sub_nll, sub_prob = _nll_parts(z, sign[idx], mk)
            nll[idx], prob[idx] = sub_nll, sub_prob
            f = sub_nll.sum(axis=1) + 0.5 * (rows_params**2 * prec_theta).sum(axis=1)
            return f, sub_prob

        def residuals():
            R = prob - Y
            W = prob * (1.0 - prob)
            if mask is not None:
                R *= mask
                W *= mask
            return R, W

        f_items = nll.sum(axis=0) + 0.5 * (items**2 * prec_item).sum(axis=1)
        history = []
        self.converged_ = False
        for sweep in range(1, int(self.max_iter) + 1):
            # items step (abilities fixed): ridge-logistic regressions on X = [theta, -1]
            R, W = residuals()
            step = _row_newton_step(X, _outer_rows(X), R.T, W.T, items, prec_item)
            items, f_items, _ = _halving_update(items, step, f_items, item_cols)
            # models step (items fixed): ridge-logistic regressions on a
            f_models = nll.sum(axis=1) + 0.5 * (theta**2 * prec_theta).sum(axis=1)
            R, W = residuals()
            a = items[:, :D]
            step = _row_newton_step(a, _outer_rows(a), R, W, theta, prec_theta)
            theta, f_models, _ = _halving_update(theta, step, f_models, model_rows)
            X = np.hstack([theta, -np.ones((n, 1))])
            f_items = nll.sum(axis=0) + 0.5 * (items**2 * prec_item).sum(axis=1)
            history.append(f_models.sum() + 0.5 * (items**2 * prec_item).sum())
            if len(history) > 1 and history[-2] - history[-1] < self.tol * abs(history[-1]):
                self.converged_ = True
                break
        self.theta_ = theta
        self.a_ = items[:, :D].copy()
        self.b_ = items[:, D].copy()
        self.n_iter_ = sweep
        self.objective_ = history[-1]
        self.objective_path_ = np.array(history)

    # -- using a fit ---------------------------------------------------------------

    def _check_fitted(self) -> None:
        if not hasattr(self, "a_"):
            raise IRTError("this IRTModel is not fitted yet; call fit(Y) first")

    def logits(self, theta=None, items=None) -> np.ndarray:
        """``theta @ a.T - b`` for the given abilities (default: the fitted models)."""
        self._check_fitted()
        theta = self.theta_ if theta is None else np.atleast_2d(np.asarray(theta, float))
        a, b = (self.a_, self.b_) if items is None else (self.a_[items], self.b_[items])
        if theta.shape[1] != a.shape[1]:
            raise IRTError(f"abilities have {theta.shape[1]} dimensions, the model {a.shape[1]}")
        return theta @ a.T - b

    def predict_proba(self, theta=None, items=None) -> np.ndarray:
        """P(correct) for abilities x items (default: fitted models x all items)."""
        return sigmoid(self.logits(theta, items))

    def fit_abilities(self, Y_sub, item_idx, max_iter: int = 50, tol: float = 1e-6) -> np.ndarray:
        """MAP abilities of *new* models from their responses on items ``item_idx``.

        Item parameters stay fixed at the fitted values; the prior is the same as in
        the fit. ``Y_sub`` is new models x len(item_idx) (NaN = not answered).
        """
        self._check_fitted()
        item_idx = np.asarray(item_idx)
        if item_idx.dtype == bool:
            item_idx = np.flatnonzero(item_idx)
        item_idx = item_idx.astype(np.int64)
        if item_idx.ndim != 1 or (item_idx < 0).any() or (item_idx >= len(self.b_)).any():
            raise IRTError(f"item_idx must index the model's {len(self.b_)} items")
        return map_abilities(Y_sub, self.a_[item_idx], self.b_[item_idx],
                             prior_sd=self.prior_sd_theta, max_iter=max_iter, tol=tol)

    def score(self, Y, theta=None) -> float:
        """Mean log-likelihood per observed cell of ``Y`` (NaN = ignored)."""
        Y, mask = _as_responses(Y)
        z = self.logits(theta)
        if z.shape != Y.shape:
            raise IRTError(f"responses have shape {Y.shape}, predictions {z.shape}")
        nll, _ = _nll_parts(z, 2.0 * Y - 1.0, mask)
        count = Y.size if mask is None else mask.sum()
        return float(-nll.sum() / count)
