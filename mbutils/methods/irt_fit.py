"""Fitting the 2PL IRT model by MAP: alternating Newton steps on items and abilities, one fit or a batch.

The fit maximises the joint posterior density (MAP) by *alternating Newton* steps:
with the items fixed, every model's ``theta_i`` is a small ridge-logistic regression,
and with the abilities fixed, every item's ``(a_j, b_j)`` is one too. Both halves are
solved for all rows at once (batched ``D x D`` Hessians), with per-row step halving so
that the posterior never decreases. The tinyBenchmarks reference fits the same model by
variational inference (2000 Adam steps); MAP gives the posterior mode of the same model,
deterministically, in a fraction of the time.

:meth:`IRTModel.fit_batch` fits a stack of equally shaped matrices (an experiment's runs)
in one sweep loop; each fit keeps its own step halving and stopping rule, so it equals
its own :meth:`IRTModel.fit` (which is a batch of one). Most of a fit's time is the
``exp`` and ``log`` of every cell, twice per sweep, which batching cannot shrink; it
saves the per-sweep overhead of small fits.

The model, its Newton pieces and abilities for fixed items are :mod:`mbutils.methods.irt`.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from mbutils.base.errors import IRTError
from mbutils.base.validation import Integer, Real, validate_constraints
from mbutils.methods.irt import (as_responses, cell_terms, halving_update, map_abilities, newton_steps, residuals, sigmoid,
                                 single_threaded)


def _groups(rows: np.ndarray, size: int):
    """(fit, positions in ``rows``, indices within the fit) for flattened row indices."""
    fits, within = np.divmod(rows, size)
    for fit in np.unique(fits):
        sel = np.flatnonzero(fits == fit)
        yield fit, sel, within[sel]


def _init_theta(Y: np.ndarray, mask: np.ndarray | None, dims: int) -> np.ndarray:
    """Abilities from the leading singular vectors of each fit's centred responses.

    Deterministic, so a fit depends on the data alone. Dimensions beyond the rank of the
    centred data start, and stay, at zero (they could not be identified). The vectors
    come from the smaller of the two Gram matrices (models x models or items x items),
    asking LAPACK for the leading ``dims`` eigenpairs only.
    """
    n_fits, n, m = Y.shape
    filled = Y if mask is None else np.where(mask > 0, Y, np.nan)
    col_mean = np.nan_to_num(np.nanmean(filled, axis=1), nan=0.5)
    centred = Y - col_mean[:, None] if mask is None else (Y - col_mean[:, None]) * mask
    theta = np.zeros((n_fits, n, dims))
    side = min(n, m)
    top = min(dims, side)
    for fit, C in enumerate(centred):
        G = C @ C.T if n <= m else C.T @ C
        evals, evecs = scipy.linalg.eigh(G, subset_by_index=[side - top, side - 1])
        evals, evecs = evals[::-1], evecs[:, ::-1]
        d = int((evals > 1e-9 * max(evals[0], 1e-300)).sum())
        U = evecs[:, :d] if n <= m else (C @ evecs[:, :d]) / np.sqrt(evals[:d])
        theta[fit, :, :d] = U * np.sqrt(n)  # unit variance, like the prior
        # Orient each column so that its correlation with the row means is >= 0: a
        # fixed convention that makes the fit reproducible across LAPACK builds.
        signs = np.sign(theta[fit, :, :d].T @ C.mean(axis=1))
        signs[signs == 0] = 1.0
        theta[fit, :, :d] *= signs
    return theta


def _design(theta: np.ndarray) -> np.ndarray:
    """``[theta, -1]``: the items' regressors (their coefficients are ``[a_j, b_j]``)."""
    return np.concatenate([theta, -np.ones(theta.shape[:-1] + (1,))], axis=-1)


def _fit_stack(Y: np.ndarray, mask: np.ndarray | None, dims: int, sd_theta: float, sd_a: float,
               sd_b: float, max_iter: int, tol: float) -> list[dict]:
    """MAP fits of a stack of fits x models x items responses, in one sweep loop.

    Every fit keeps its own step halving (per row, as in a single fit) and its own
    stopping rule; a fit that stops leaves the stack, so the rest run on smaller arrays.
    Returns one dict of fitted arrays per fit, in order.
    """
    n_fits, n, m = Y.shape
    D, p = dims, dims + 1
    prec_theta = np.full(D, 1.0 / sd_theta**2)
    prec_item = np.r_[np.full(D, 1.0 / sd_a**2), 1.0 / sd_b**2]
    theta = _init_theta(Y, mask, D)
    items = np.zeros((n_fits, m, p))  # per item: a_j (D), b_j
    s = {"sign": 2.0 * Y - 1.0, "mask": mask, "X": _design(theta)}
    # One fits x models x items state at the current (theta, items): cell nll and q.
    s["nll"], s["q"] = cell_terms(s["X"] @ items.transpose(0, 2, 1), s["sign"], mask)
    s["RW"] = (np.empty_like(Y), np.empty_like(Y))  # reused buffers: residuals, weights

    def cells(fit, rows, cols):
        mk = s["mask"]
        return s["sign"][fit][rows, cols], None if mk is None else mk[fit][rows, cols]

    def item_objective(new, rows):
        """Per-item objective of item rows (flattened fit x item) ``rows``; refreshes the state."""
        prior = 0.5 * (new**2 * prec_item).sum(axis=1)
        if rows is None:
            z = np.matmul(s["X"], new.reshape(-1, m, p).transpose(0, 2, 1), out=s["q"])
            cell_terms(z, s["sign"], s["mask"], s["nll"])
            return s["nll"].sum(axis=1).ravel() + prior
        f = np.empty(len(rows))
        for fit, sel, cols in _groups(rows, m):
            nll, s["q"][fit][:, cols] = cell_terms(s["X"][fit] @ new[sel].T, *cells(fit, slice(None), cols))
            s["nll"][fit][:, cols] = nll
            f[sel] = nll.sum(axis=0)
        return f + prior

    def model_objective(new, rows):
        """Per-model objective of model rows (flattened fit x model) ``rows``; refreshes the state."""
        prior = 0.5 * (new**2 * prec_theta).sum(axis=1)
        a, b = s["items"][..., :D], s["items"][..., D]
        if rows is None:
            z = np.matmul(new.reshape(-1, n, D), a.transpose(0, 2, 1), out=s["q"])
            z -= b[:, None, :]
            cell_terms(z, s["sign"], s["mask"], s["nll"])
            return s["nll"].sum(axis=2).ravel() + prior
        f = np.empty(len(rows))
        for fit, sel, idx in _groups(rows, n):
            nll, s["q"][fit][idx] = cell_terms(new[sel] @ a[fit].T - b[fit], *cells(fit, idx, slice(None)))
            s["nll"][fit][idx] = nll
            f[sel] = nll.sum(axis=1)
        return f + prior

    live = np.arange(n_fits)  # fits still running, in stack order
    paths = np.zeros((n_fits, int(max_iter)))
    out = [None] * n_fits
    for sweep in range(1, int(max_iter) + 1):
        # items step (abilities fixed): ridge-logistic regressions on X = [theta, -1]
        R, W = residuals(s["q"], s["sign"], s["mask"], s["RW"])
        step = newton_steps(s["X"], R.transpose(0, 2, 1), W.transpose(0, 2, 1), items, prec_item)
        f_items = s["nll"].sum(axis=1) + 0.5 * (items**2 * prec_item).sum(axis=2)
        items, _ = halving_update(items.reshape(-1, p), step.reshape(-1, p), f_items.ravel(), item_objective)
        items = s["items"] = items.reshape(-1, m, p)
        # models step (items fixed): ridge-logistic regressions on a
        R, W = residuals(s["q"], s["sign"], s["mask"], s["RW"])
        step = newton_steps(items[..., :D], R, W, theta, prec_theta)
        f_models = s["nll"].sum(axis=2) + 0.5 * (theta**2 * prec_theta).sum(axis=2)
        theta, f_models = halving_update(theta.reshape(-1, D), step.reshape(-1, D), f_models.ravel(),
                                         model_objective)
        theta, f_models = theta.reshape(-1, n, D), f_models.reshape(-1, n)
        s["X"] = _design(theta)
        paths[live, sweep - 1] = f_models.sum(axis=1) + 0.5 * (items**2 * prec_item).sum(axis=(1, 2))
        path = paths[live, :sweep]
        converged = (path[:, -2] - path[:, -1] < tol * np.abs(path[:, -1])) if sweep > 1 else np.zeros(len(live), bool)
        done = converged | (sweep == int(max_iter))
        for i in np.flatnonzero(done):
            out[live[i]] = dict(theta=theta[i].copy(), a=items[i, :, :D].copy(), b=items[i, :, D].copy(), n_iter=sweep,
                                converged=bool(converged[i]), path=path[i].copy())
        if done.all():
            break
        if done.any():  # finished fits leave the stack
            keep = ~done
            live, theta, items = live[keep], theta[keep], items[keep]
            s.update({key: None if s[key] is None else s[key][keep] for key in ("sign", "mask", "X", "nll", "q")})
            s["RW"] = (np.empty_like(s["q"]), np.empty_like(s["q"]))
            s["items"] = items
    return out


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

    def fit(self, Y, rng: np.random.Generator | None = None) -> "IRTModel":
        """Fit to a models x items 0/1 matrix (NaN = missing).

        ``rng`` is accepted for interface symmetry and unused: the SVD start makes the
        fit a deterministic function of the data, so fits can be shared and cached.
        """
        self._validate()
        Y = np.asarray(Y)
        if Y.ndim != 2:
            as_responses(Y)  # refused with the 2-D message
        return self._fit_many(Y[None], "responses")[0]._into(self)

    def fit_batch(self, Y) -> list["IRTModel"]:
        """Fit one model of these hyper-parameters to each of a stack of response matrices.

        ``Y`` is fits x models x items (0/1, NaN = missing), e.g. the sources of several
        runs of an experiment. The fits share one vectorised sweep loop (the per-sweep
        overhead of small fits is paid once), yet each keeps its own step halving and
        stopping rule, so every fit equals :meth:`fit` on its own matrix (to rounding).
        Returns fitted clones, in order; this model stays unfitted.
        """
        return self._fit_many(Y, "stacked responses")

    def _fit_many(self, Y, what: str) -> list["IRTModel"]:
        self._validate()
        Y, mask = as_responses(Y, what, ndim=3)
        _, n, m = Y.shape
        if n < 2 or m < 1:
            raise IRTError(f"need at least 2 models and 1 item to fit IRT, got {n} x {m}")
        if not len(Y):
            return []
        with single_threaded():
            fits = _fit_stack(Y, mask, int(self.dims), self.prior_sd_theta, self.prior_sd_a, self.prior_sd_b,
                              int(self.max_iter), self.tol)
        models = []
        for fit in fits:
            model = self.clone()
            model.theta_, model.a_, model.b_ = fit["theta"], fit["a"], fit["b"]
            model.n_iter_, model.converged_ = fit["n_iter"], fit["converged"]
            model.objective_path_ = fit["path"]
            model.objective_ = float(fit["path"][-1])
            models.append(model)
        return models

    def _into(self, other: "IRTModel") -> "IRTModel":
        """Copy this fit's attributes onto ``other`` (same hyper-parameters); returns it."""
        for key in ("theta_", "a_", "b_", "n_iter_", "converged_", "objective_", "objective_path_"):
            setattr(other, key, getattr(self, key))
        return other

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
        Y, mask = as_responses(Y)
        z = self.logits(theta)
        if z.shape != Y.shape:
            raise IRTError(f"responses have shape {Y.shape}, predictions {z.shape}")
        nll, _ = cell_terms(z, 2.0 * Y - 1.0, mask)
        count = Y.size if mask is None else mask.sum()
        return float(-nll.sum() / count)
