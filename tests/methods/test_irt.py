"""The 2PL IRT fit: recovery of planted parameters, held-out fit, MAP optimality, errors."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from scipy.special import expit

from mbutils.methods.irt import IRTError, cell_terms, map_abilities, sigmoid
from mbutils.methods.irt_fit import IRTModel


def planted(n_models, n_items, dims, seed, a_sd=0.5):
    """Responses from a 2PL model with a strong general factor; returns (Y, theta, a, b)."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=(n_models, dims))
    a = rng.normal(0.0, a_sd, size=(n_items, dims))
    a[:, 0] = np.abs(rng.normal(1.2, 0.4, size=n_items))
    b = rng.normal(0.0, 1.5, size=n_items)
    p = sigmoid(theta @ a.T - b)
    return (rng.random(p.shape) < p).astype(float), theta, a, b


@pytest.fixture(scope="module")
def data3():
    return planted(300, 400, 3, seed=11)


@pytest.fixture(scope="module")
def fit3(data3):
    return IRTModel(dims=3).fit(data3[0])


def test_recovers_planted_logits_and_difficulties(data3, fit3):
    """Rotation-invariant quantities match the planted model (observed: r = 0.97, 0.99)."""
    Y, theta, a, b = data3
    true_logits = theta @ a.T - b
    r_logits = np.corrcoef(fit3.logits().ravel(), true_logits.ravel())[0, 1]
    r_b = np.corrcoef(fit3.b_, b)[0, 1]
    assert r_logits > 0.95
    assert r_b > 0.97
    # probabilities are close in absolute terms too
    err = np.abs(fit3.predict_proba() - sigmoid(true_logits)).mean()
    assert err < 0.06


def test_one_dimensional_discrimination_recovered_up_to_sign():
    """D = 1: a and theta are identified up to a common sign (observed: r = 0.95, 0.99)."""
    rng = np.random.default_rng(5)
    theta = rng.normal(size=(300, 1))
    a = rng.uniform(0.2, 2.5, size=(300, 1))
    b = rng.normal(0.0, 1.5, size=300)
    Y = (rng.random((300, 300)) < sigmoid(theta @ a.T - b)).astype(float)
    model = IRTModel(dims=1).fit(Y)
    r_a = np.corrcoef(model.a_[:, 0], a[:, 0])[0, 1]
    r_theta = np.corrcoef(model.theta_[:, 0], theta[:, 0])[0, 1]
    assert abs(r_a) > 0.9 and abs(r_theta) > 0.97
    assert np.sign(r_a) == np.sign(r_theta)  # the flip is shared


def test_planted_dimensions_beat_one_dimension_on_masked_cells(data3):
    """Held-out log-likelihood on 10% masked cells (observed: -0.464 vs -0.488 nats).

    (A 10-dimensional fit overfits these 400 items: -0.514; see the next test.)
    """
    Y = data3[0]
    hold = np.random.default_rng(3).random(Y.shape) < 0.1
    train = np.where(hold, np.nan, Y)
    test = np.where(hold, Y, np.nan)
    ll = {d: IRTModel(dims=d).fit(train).score(test) for d in (1, 3)}
    assert ll[3] > ll[1] + 0.005


def test_planted_dimensions_beat_one_dimension_on_new_models():
    """Held-out models: abilities from half the items predict the other half better.

    Observed log-likelihood per answer: D=1 -0.506, D=3 -0.479, D=10 -0.496.
    """
    Y, *_ = planted(350, 400, 3, seed=21)
    train, new = Y[:300], Y[300:]
    seen, hidden = np.arange(0, 400, 2), np.arange(1, 400, 2)
    scores = {}
    for d in (1, 3, 10):
        model = IRTModel(dims=d).fit(train)
        theta = model.fit_abilities(new[:, seen], seen)
        full = np.full_like(new, np.nan)
        full[:, hidden] = new[:, hidden]
        scores[d] = model.score(full, theta=theta)
    assert scores[3] > scores[1] + 0.005
    assert scores[10] > scores[1]


def test_fit_is_deterministic_and_ignores_rng(data3, fit3):
    again = IRTModel(dims=3).fit(data3[0], rng=np.random.default_rng(123))
    np.testing.assert_array_equal(again.a_, fit3.a_)
    np.testing.assert_array_equal(again.theta_, fit3.theta_)


def test_objective_never_increases(fit3):
    path = fit3.objective_path_
    assert np.all(np.diff(path) <= 1e-9 * np.abs(path[1:]))
    assert fit3.converged_


def _joint_gradient(Y, theta, a, b, s_t, s_a, s_b):
    """Gradient of the negative log-posterior, written independently of mbutils.methods.irt."""
    p = 1.0 / (1.0 + np.exp(-(theta @ a.T - b)))
    r = p - Y
    return r @ a + theta / s_t**2, r.T @ theta + a / s_a**2, -r.sum(axis=0) + b / s_b**2


def test_converged_fit_is_a_stationary_point_of_the_posterior():
    """MAP: at a tightly converged fit the joint gradient vanishes."""
    Y, *_ = planted(60, 40, 2, seed=2)
    model = IRTModel(dims=2, prior_sd_b=2.0, tol=1e-13, max_iter=2000).fit(Y)
    g_t, g_a, g_b = _joint_gradient(Y, model.theta_, model.a_, model.b_, 1.0, 1.0, 2.0)
    scale = np.abs(Y - 0.5).sum()
    for g in (g_t, g_a, g_b):
        assert np.abs(g).max() < 1e-3 * scale / Y.size + 1e-4


def test_map_abilities_match_a_generic_optimiser():
    rng = np.random.default_rng(8)
    a = rng.normal(size=(30, 3))
    b = rng.normal(size=30)
    Y = (rng.random((4, 30)) < 0.5).astype(float)
    Y[1, ::3] = np.nan  # some items not answered
    theta = map_abilities(Y, a, b, prior_sd=1.5)
    for i in range(4):
        obs = ~np.isnan(Y[i])

        def nlp(t, i=i, obs=obs):
            z = a[obs] @ t - b[obs]
            return np.sum(np.logaddexp(0, z) - Y[i, obs] * z) + 0.5 * t @ t / 1.5**2

        ref = minimize(nlp, np.zeros(3), method="BFGS", options={"gtol": 1e-10}).x
        np.testing.assert_allclose(theta[i], ref, atol=1e-5)


def test_fit_abilities_of_new_models_track_their_true_probabilities(data3, fit3):
    Y, theta, a, b = data3
    rng = np.random.default_rng(4)
    new_theta = rng.normal(size=(40, 3))
    p_true = sigmoid(new_theta @ a.T - b)
    new = (rng.random(p_true.shape) < p_true).astype(float)
    items = np.arange(0, 400, 2)
    est = fit3.fit_abilities(new[:, items], items)
    p_hat = fit3.predict_proba(est)
    assert est.shape == (40, 3)
    # accuracy predicted on all items vs the true expected accuracy
    r = np.corrcoef(p_hat.mean(axis=1), p_true.mean(axis=1))[0, 1]
    assert r > 0.97
    assert np.abs(p_hat.mean(axis=1) - p_true.mean(axis=1)).mean() < 0.03


def test_ability_prior_shrinks_models_with_no_answers(fit3):
    theta = fit3.fit_abilities(np.full((2, 5), np.nan), np.arange(5))
    np.testing.assert_array_equal(theta, 0.0)


def test_constant_items_stay_finite():
    """Items every model gets wrong (or right) keep finite difficulties thanks to the prior."""
    Y, *_ = planted(100, 50, 2, seed=9)
    Y[:, 0] = 0
    Y[:, 1] = 1
    model = IRTModel(dims=2).fit(Y)
    assert np.isfinite(model.b_).all() and np.isfinite(model.a_).all()
    assert model.b_[0] > 2 and model.b_[1] < -2


@pytest.mark.parametrize(
    "kwargs, match",
    [({"dims": 0}, "dims"), ({"prior_sd_a": -1.0}, "prior_sd_a"), ({"max_iter": 0}, "max_iter")],
)
def test_bad_parameters_are_refused(kwargs, match):
    with pytest.raises(IRTError, match=match):
        IRTModel(**kwargs).fit(np.eye(4))


def test_bad_responses_are_refused_with_their_position():
    Y = np.zeros((3, 4))
    Y[2, 1] = 0.5
    with pytest.raises(IRTError, match="row 2, column 1"):
        IRTModel(dims=1).fit(Y)
    with pytest.raises(IRTError, match="2-D"):
        IRTModel(dims=1).fit(np.zeros(5))


def test_unfitted_model_and_bad_item_indices_are_refused(fit3):
    with pytest.raises(IRTError, match="not fitted"):
        IRTModel().predict_proba()
    with pytest.raises(IRTError, match="item_idx"):
        fit3.fit_abilities(np.zeros((1, 2)), [0, 400])


def test_batch_fit_equals_separate_fits():
    """A stack of fits shares one sweep loop, yet every fit keeps its own halving and stopping
    (here they stop after different numbers of sweeps): the parameters equal separate fits."""
    stack = np.stack([planted(80, 60, 2, seed=s)[0] for s in range(5)])
    stack[2, :, 0] = 0.0  # an item every model gets wrong, in one fit only
    stack[3, ::7, 5] = np.nan  # missing answers, in one fit only
    batch = IRTModel(dims=3).fit_batch(stack)
    alone = [IRTModel(dims=3).fit(Y) for Y in stack]
    assert len({m.n_iter_ for m in alone}) > 1, "the fits should stop at different sweeps"
    for got, want in zip(batch, alone):
        assert got.n_iter_ == want.n_iter_ and got.converged_ == want.converged_
        for key in ("theta_", "a_", "b_", "objective_path_"):
            assert np.abs(getattr(got, key) - getattr(want, key)).max() < 1e-8, key


def test_batch_of_one_is_the_single_fit(data3, fit3):
    (one,) = IRTModel(dims=3).fit_batch(data3[0][None])
    for key in ("theta_", "a_", "b_", "objective_path_"):
        np.testing.assert_array_equal(getattr(one, key), getattr(fit3, key))
    assert IRTModel().fit_batch(np.zeros((0, 4, 3))) == []
    with pytest.raises(IRTError, match="fit 1, row 0, column 2"):
        IRTModel(dims=1).fit_batch(np.stack([np.eye(3), [[0, 0, 2], [1, 0, 1], [0, 1, 0]]]))


def test_cell_terms_equal_expit_and_its_log_in_both_tails():
    """q = P(observed answer) and -log q, against scipy's expit, out to the clipping bound."""
    z = np.array([[-800.0, -700.0, -40.0, -1.0, 0.0, 1e-9, 1.0, 40.0, 700.0, 800.0]])
    for sign in (np.ones_like(z), -np.ones_like(z)):
        mask = np.ones_like(z)
        mask[0, 3] = 0.0
        nll, q = cell_terms(z.copy(), sign, mask)
        ref = expit(np.clip(sign * z, -700.0, 700.0))
        np.testing.assert_allclose(q, ref, rtol=4e-16, atol=0)
        np.testing.assert_allclose(nll, -np.log(ref) * mask, rtol=1e-15, atol=1e-300)
        assert nll[0, 3] == 0.0 and np.isfinite(nll).all()
