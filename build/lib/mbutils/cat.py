"""Computerised adaptive testing (CAT) on a fitted multidimensional 2PL model.

Lord (1980): give each examinee next the item that is most informative at the current
estimate of their ability. With ``D``-dimensional abilities the information of item ``j``
is the matrix ``p_j q_j a_j a_j^T`` (``q = 1 - p``); following the Bayesian
multidimensional CAT of Segall (1996), we choose the item that most increases the
determinant of the posterior precision ``H`` (D-optimality). Since
``det(H + p q a a^T) = det(H) (1 + p q a^T H^-1 a)``, the gain of item ``j`` is
``p_j q_j a_j^T H^-1 a_j``; for ``D = 1`` this orders items exactly as Lord's Fisher
information ``p q a^2`` does. The ability estimate after each answer is the MAP under
the fit's Gaussian prior (warm-started Newton steps, all targets at once).

Exposure control, *randomesque* (Kingsbury & Zara 1989): choose uniformly among the
``top_m`` most informative unasked items, so that the most informative items are not
given to every examinee.

Every function advances all targets of a run one item per step (numpy, no loop over
targets or items) and reads a target's answers only on the items it was given: an
answer enters :func:`run_cat` through ``correct[rows, chosen]`` and nowhere else.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from .irt import IRTError, map_abilities, single_threaded

__all__ = ["CRITERIA", "CATPath", "accuracy_interval", "information_gain", "run_cat"]


@dataclass(frozen=True)
class CATPath:
    """One adaptive test per target: what it was asked, what it answered, where it ended.

    ``items`` and ``answers`` are targets x k in the order given; ``theta`` is the final
    MAP ability (targets x D), fitted on exactly those answers. With ``trace=True``
    :func:`run_cat` also keeps ``theta_path`` (k x targets x D, the estimate after each
    answer) and ``precision_path`` (k x targets x D x D, the posterior precision there).
    """

    items: np.ndarray
    answers: np.ndarray
    theta: np.ndarray
    theta_path: np.ndarray | None = None
    precision_path: np.ndarray | None = None

    @property
    def length(self) -> int:
        return self.items.shape[1]


def _posterior(theta, a_sel, b_sel, y, prec, steps: int, max_step: float = 1.0):
    """Newton steps towards each target's MAP ability on its own answered items.

    ``a_sel`` (targets x s x D), ``b_sel`` and ``y`` (targets x s) are the items each
    target answered. Steps are capped in length (a trust region): after one new answer
    the mode moves little, and the cap keeps an early, extreme answer pattern from
    overshooting. Returns the new abilities and the posterior precision at the point
    the last step started from (``steps = 0``: at ``theta``), which is what the next
    choice needs to within one step of tracking and saves a pass over the items.
    """
    a_t = a_sel.transpose(0, 2, 1)                        # targets x D x s
    for step_no in range(max(steps, 1)):
        p = expit(np.matmul(a_sel, theta[..., None])[..., 0] - b_sel)
        hess = np.matmul(a_t * (p * (1 - p))[:, None, :], a_sel) + np.diag(prec)
        if steps == 0:
            break
        grad = np.matmul(a_t, (p - y)[..., None])[..., 0] + theta * prec
        step = np.linalg.solve(hess, grad[..., None])[..., 0]
        norm = np.linalg.norm(step, axis=1, keepdims=True)
        theta = theta - step * np.minimum(1.0, max_step / np.maximum(norm, 1e-300))
    return theta, hess


CRITERIA = ("determinant", "accuracy")


def information_gain(theta: np.ndarray, precision: np.ndarray, a: np.ndarray, b: np.ndarray,
                     criterion: str = "determinant", aa: np.ndarray | None = None) -> np.ndarray:
    """How much answering each item next would tell about each target (targets x items).

    ``determinant``: ``p q a^T H^-1 a``, the relative gain in the determinant of the
    posterior precision (Segall 1996); for one dimension, Fisher information ``p q a^2``
    over the current precision (Lord 1980). ``accuracy``: the expected drop in the
    posterior variance of the predicted accuracy ``g^T H^-1 g`` (``g`` its gradient in
    theta), ``p q (a^T H^-1 g)^2 / (1 + p q a^T H^-1 a)`` by Sherman-Morrison: the
    minimum-error-variance criterion of van der Linden (1999) for the one combination
    of abilities a micro-benchmark reports. With many dimensions ``determinant`` spends
    items on dimensions that hardly move the score; ``accuracy`` does not.
    ``aa`` (items x D*D, the flattened ``a_j a_j^T``) may be passed to save recomputing it.
    """
    if criterion not in CRITERIA:
        raise IRTError(f"unknown information criterion {criterion!r}; choose from {', '.join(CRITERIA)}")
    cov = np.linalg.inv(precision)                        # targets x D x D
    if aa is None:
        aa = (a[:, :, None] * a[:, None, :]).reshape(len(a), -1)
    quad = cov.reshape(len(cov), -1) @ aa.T               # a_j^T H_t^-1 a_j = <H_t^-1, a_j a_j^T>
    p = expit(theta @ a.T - b)
    w = p * (1.0 - p)
    if criterion == "determinant":
        return w * quad
    grad = w @ a / a.shape[0]                             # targets x D: d accuracy / d theta
    lin = np.matmul(cov, grad[..., None])[..., 0] @ a.T   # a_j^T H_t^-1 g_t
    return w * lin**2 / (1.0 + w * quad)


def _choose(gain: np.ndarray, asked: np.ndarray, top_m: int, u: np.ndarray) -> np.ndarray:
    """Per target: the most informative unasked item, or one of the ``top_m`` at random.

    ``u`` (one uniform per target) picks among the top ``m`` ordered by gain, ties by
    item index, so the choice is a deterministic function of the gains and ``u``.
    """
    gain = np.where(asked, -np.inf, gain)
    m = int(min(top_m, (~asked).sum(axis=1).min()))
    if m <= 1:
        return gain.argmax(axis=1)
    top = np.argpartition(-gain, m - 1, axis=1)[:, :m]
    top_gain = np.take_along_axis(gain, top, axis=1)
    order = np.lexsort((top, -top_gain), axis=1)
    top = np.take_along_axis(top, order, axis=1)
    pick = np.minimum((u * m).astype(np.int64), m - 1)
    return top[np.arange(len(top)), pick]


def run_cat(correct: np.ndarray, a: np.ndarray, b: np.ndarray, k: int, *, start: np.ndarray,
            top_m: int = 1, uniforms: np.ndarray | None = None, prior_sd: float = 1.0,
            newton_steps: int = 2, criterion: str = "determinant", trace: bool = False) -> CATPath:
    """Adaptive tests of length ``k`` for every row of ``correct`` (targets x items, 0/1).

    ``start`` (targets x s, s <= k) are the items each target answers first; then every
    target gets, one step at a time, the item of largest :func:`information_gain`
    (``criterion``) at its current estimate (``top_m`` > 1: randomesque, drawing with ``uniforms``, targets x
    (k - s), values in [0, 1)). The final ability is the exact MAP (:func:`~mbutils.irt.map_abilities`)
    on the target's k answers.
    """
    correct = np.asarray(correct)
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    start = np.asarray(start, dtype=np.int64)
    n_t, n_items = correct.shape
    n_start = start.shape[1]
    if not 0 <= n_start <= k <= n_items:
        raise IRTError(f"an adaptive test of {k} items needs 0 <= start items <= {k} <= {n_items} items")
    if top_m > 1 and k > n_start and (uniforms is None or uniforms.shape != (n_t, k - n_start)):
        raise IRTError("randomesque choice needs one uniform per target and adaptive step")
    rows = np.arange(n_t)
    prec = np.full(a.shape[1], 1.0 / prior_sd**2)
    items = np.zeros((n_t, k), dtype=np.int64)
    answers = np.zeros((n_t, k))
    asked = np.zeros((n_t, n_items), dtype=bool)
    theta = np.zeros((n_t, a.shape[1]))
    hess = np.broadcast_to(np.diag(prec), (n_t, a.shape[1], a.shape[1]))
    thetas, precisions = [], []
    aa = (a[:, :, None] * a[:, None, :]).reshape(n_items, -1)

    def answer(step: int, chosen: np.ndarray) -> None:
        """Give item ``chosen[t]`` to target t: the only place an answer is read."""
        y = correct[rows, chosen].astype(np.float64)
        if np.isnan(y).any():
            raise IRTError("a target has no answer on an item it was given (missing cell)")
        items[:, step], answers[:, step] = chosen, y
        asked[rows, chosen] = True

    with single_threaded():
        for step in range(k):
            if step < n_start:
                chosen = start[:, step]
            else:
                gain = information_gain(theta, hess, a, b, criterion, aa)
                u = None if top_m <= 1 else uniforms[:, step - n_start]
                chosen = _choose(gain, asked, top_m, u)
            answer(step, chosen)
            if trace or step < k - 1:  # the same updates with and without a trace: the same path
                s = step + 1
                theta, hess = _posterior(theta, a[items[:, :s]], b[items[:, :s]], answers[:, :s], prec,
                                         newton_steps)
            if trace:
                thetas.append(theta)
                precisions.append(hess)
    observed = np.full((n_t, n_items), np.nan)
    observed[rows[:, None], items] = answers
    final = map_abilities(observed, a, b, prior_sd=prior_sd)
    if trace:  # the last point of the path is the exact MAP
        thetas[-1] = final
        precisions[-1] = _posterior(final, a[items], b[items], answers, prec, 0)[1]
        return CATPath(items, answers, final, np.stack(thetas), np.stack(precisions))
    return CATPath(items, answers, final)


def accuracy_interval(theta: np.ndarray, precision: np.ndarray, a: np.ndarray, b: np.ndarray,
                      z: float = 1.96) -> tuple[np.ndarray, np.ndarray]:
    """Predicted accuracy on the items ``a``, ``b`` and its approximate half-width.

    The ability posterior is approximated by N(MAP, H^-1) (Laplace); the accuracy's
    standard deviation follows by the delta method, ``g^T H^-1 g`` with ``g`` the mean of
    ``p q a_j`` over items. Works on any leading shape of ``theta`` (..., D).
    """
    p = expit(theta @ a.T - b)
    grad = (p * (1.0 - p)) @ a / a.shape[0]
    cov = np.linalg.inv(precision)
    sd = np.sqrt(np.einsum("...d,...de,...e->...", grad, cov, grad))
    return p.mean(axis=-1), z * sd
