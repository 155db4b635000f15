"""Computerised adaptive testing (CAT) on a fitted multidimensional 2PL model.

Lord (1980): give each examinee next the item that is most informative at the current
estimate of their ability. With ``D``-dimensional abilities the information of item ``j``
is the matrix ``p_j q_j a_j a_j^T`` (``q = 1 - p``). Two criteria turn it into one number
(:func:`information_gain`): ``accuracy``, the selectors' default, picks the item that most
reduces the posterior variance of the predicted accuracy, the one combination of
abilities a micro-benchmark reports (van der Linden 1999); ``determinant``, the Bayesian
multidimensional CAT of Segall (1996), picks the item that most increases the determinant
of the posterior precision ``H`` (D-optimality): since
``det(H + p q a a^T) = det(H) (1 + p q a^T H^-1 a)``, its gain is ``p_j q_j a_j^T H^-1 a_j``,
which for ``D = 1`` orders items exactly as Lord's Fisher information ``p q a^2`` does.
The ability estimate after each answer is the MAP under the fit's Gaussian prior (warm-started Newton steps, all targets at once).

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

from mbutils.base.errors import IRTError
from mbutils.methods.irt import map_abilities, single_threaded

__all__ = ["CRITERIA", "AdaptiveTests", "CATPath", "ability_direction", "accuracy_interval", "composite_ability",
           "information_gain", "run_cat"]


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

    Examples
    --------
    One target at ability 0 with prior precision 1; the item of difficulty 0 tells most:

    >>> import numpy as np, mbutils
    >>> a, b = np.ones((3, 1)), np.array([-1.0, 0.0, 1.0])
    >>> mbutils.information_gain(np.zeros((1, 1)), np.ones((1, 1, 1)), a, b).round(3)
    array([[0.197, 0.25 , 0.197]])
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


class AdaptiveTests:
    """Every target's adaptive test, lengthened on demand.

    A test of length k is the first k steps of any longer test with the same start and
    the same draws (each step depends only on the answers before it), so the tests of
    several lengths cost one test of the longest: :meth:`advance` continues where the
    last call stopped and :meth:`path` reads off any length already taken.
    ``correct`` (targets x items, 0/1), ``start`` (targets x s, the items answered first)
    and the options are those of :func:`run_cat`.
    """

    def __init__(self, correct: np.ndarray, a: np.ndarray, b: np.ndarray, *, start: np.ndarray,
                 top_m: int = 1, prior_sd: float = 1.0, newton_steps: int = 2,
                 criterion: str = "determinant", trace: bool = False):
        self.correct = np.asarray(correct)
        self.a = np.asarray(a, dtype=np.float64)
        self.b = np.asarray(b, dtype=np.float64)
        self.start = np.asarray(start, dtype=np.int64)
        self.top_m, self.prior_sd, self.newton_steps = top_m, prior_sd, newton_steps
        self.criterion, self.trace = criterion, trace
        n_t, n_items = self.correct.shape
        dims = self.a.shape[1]
        self._rows = np.arange(n_t)
        self._prec = np.full(dims, 1.0 / prior_sd**2)
        self._items = np.zeros((n_t, n_items), dtype=np.int64)
        self._answers = np.zeros((n_t, n_items))
        self._a_given = np.zeros((n_t, n_items, dims))  # a of the items given, in order
        self._b_given = np.zeros((n_t, n_items))
        self._asked = np.zeros((n_t, n_items), dtype=bool)
        self._aa = (self.a[:, :, None] * self.a[:, None, :]).reshape(n_items, -1)
        self._theta = np.zeros((n_t, dims))
        self._hess = np.broadcast_to(np.diag(self._prec), (n_t, dims, dims))
        self._updated = True  # the estimate has seen every answer given so far
        self._thetas, self._precisions = [], []
        self.length = 0

    @property
    def n_start(self) -> int:
        return self.start.shape[1]

    def adaptive_steps(self, k: int) -> int:
        """How many adaptive choices (randomesque uniforms) lengthening to ``k`` takes."""
        return max(k - max(self.length, self.n_start), 0)

    def _update(self) -> None:
        """The running MAP estimate after the answers given so far."""
        s = self.length
        self._theta, self._hess = _posterior(self._theta, self._a_given[:, :s], self._b_given[:, :s],
                                             self._answers[:, :s], self._prec, self.newton_steps)
        self._updated = True
        if self.trace:
            self._thetas.append(self._theta)
            self._precisions.append(self._hess)

    def _answer(self, chosen: np.ndarray) -> None:
        """Give item ``chosen[t]`` to target t: the only place an answer is read."""
        y = self.correct[self._rows, chosen].astype(np.float64)
        if np.isnan(y).any():
            raise IRTError("a target has no answer on an item it was given (missing cell)")
        s = self.length
        self._items[:, s], self._answers[:, s] = chosen, y
        self._a_given[:, s], self._b_given[:, s] = self.a[chosen], self.b[chosen]
        self._asked[self._rows, chosen] = True
        self.length = s + 1
        self._updated = False

    def advance(self, k: int, uniforms: np.ndarray | None = None) -> None:
        """Lengthen every test to ``k`` items (no-op if already that long).

        ``uniforms`` (randomesque only): one value in [0, 1) per target and adaptive step
        this call takes, targets x (k - max(length, n_start)).
        """
        n_t, n_items = self.correct.shape
        if not 0 <= k <= n_items:
            raise IRTError(f"an adaptive test of {k} items needs 0 <= {k} <= {n_items} items")
        steps = self.adaptive_steps(k)
        if self.top_m > 1 and steps and (uniforms is None or uniforms.shape != (n_t, steps)):
            raise IRTError("randomesque choice needs one uniform per target and adaptive step")
        drawn = 0
        with single_threaded():
            while self.length < k:
                if not self._updated:
                    self._update()
                step = self.length
                if step < self.n_start:
                    chosen = self.start[:, step]
                else:
                    gain = information_gain(self._theta, self._hess, self.a, self.b, self.criterion, self._aa)
                    u = None if self.top_m <= 1 else uniforms[:, drawn]
                    drawn += 1
                    chosen = _choose(gain, self._asked, self.top_m, u)
                self._answer(chosen)
                if self.trace:  # every step's estimate is kept, the last one included
                    self._update()

    def path(self, k: int | None = None) -> CATPath:
        """The first ``k`` items of every test (default: all taken), with the exact final MAP."""
        k = self.length if k is None else k
        if not 1 <= k <= self.length:
            raise IRTError(f"the tests have {self.length} items; cannot read a test of {k}")
        n_t, n_items = self.correct.shape
        items, answers = self._items[:, :k].copy(), self._answers[:, :k].copy()
        observed = np.full((n_t, n_items), np.nan)
        observed[self._rows[:, None], items] = answers
        final = map_abilities(observed, self.a, self.b, prior_sd=self.prior_sd)
        if not self.trace:
            return CATPath(items, answers, final)
        thetas, precisions = list(self._thetas[:k]), list(self._precisions[:k])
        thetas[-1] = final  # the last point of the path is the exact MAP
        precisions[-1] = _posterior(final, self._a_given[:, :k], self._b_given[:, :k], answers, self._prec, 0)[1]
        return CATPath(items, answers, final, np.stack(thetas), np.stack(precisions))


def run_cat(correct: np.ndarray, a: np.ndarray, b: np.ndarray, k: int, *, start: np.ndarray,
            top_m: int = 1, uniforms: np.ndarray | None = None, prior_sd: float = 1.0,
            newton_steps: int = 2, criterion: str = "determinant", trace: bool = False) -> CATPath:
    """Adaptive tests of length ``k`` for every row of ``correct`` (targets x items, 0/1).

    ``start`` (targets x s, s <= k) are the items each target answers first; then every
    target gets, one step at a time, the item of largest :func:`information_gain`
    (``criterion``) at its current estimate (``top_m`` > 1: randomesque, drawing with ``uniforms``, targets x
    (k - s), values in [0, 1)). The final ability is the exact MAP (:func:`~mbutils.methods.irt.map_abilities`)
    on the target's k answers. :class:`AdaptiveTests` takes the same tests step by step.
    """
    start = np.asarray(start, dtype=np.int64)
    n_items = np.shape(correct)[1]
    if not 0 <= start.shape[1] <= k <= n_items:
        raise IRTError(f"an adaptive test of {k} items needs 0 <= start items <= {k} <= {n_items} items")
    tests = AdaptiveTests(correct, a, b, start=start, top_m=top_m, prior_sd=prior_sd,
                          newton_steps=newton_steps, criterion=criterion, trace=trace)
    tests.advance(k, uniforms)
    return tests.path(k)


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



def ability_direction(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The unit direction of ability space in which the predicted accuracy grows fastest at the prior's centre.

    With ``D``-dimensional abilities, ranking models by "their ability" needs one number per model.
    Here it is the ability along ``u``, the normalised gradient of the predicted accuracy
    ``mean_j p_j(theta)`` at ``theta = 0`` (the fit's prior mean): ``u ~ mean_j p_j(0) q_j(0) a_j``,
    the direction in which a move of the ability raises the benchmark score most. For ``D = 1`` it is
    ``[1]`` whenever that gradient is positive (the discriminations mostly positive), so the
    composite is the ability itself, as a unidimensional 2PL scores it. The reference composite of
    multidimensional IRT (Reckase 2009), the leading eigenvector of ``sum_j a_j a_j^T``, is the other
    common choice; it follows how the items vary, not what the benchmark's score rewards.

    Examples
    --------
    Two items of difficulty 0 that load on the second dimension only:

    >>> import numpy as np
    >>> ability_direction(np.array([[0.0, 1.0], [0.0, 2.0]]), np.zeros(2)).tolist()
    [0.0, 1.0]
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.ndim != 2 or b.shape != (len(a),) or not len(a):
        raise IRTError(f"item parameters have shapes a {a.shape}, b {b.shape}")
    p = expit(-b)
    grad = (p * (1.0 - p)) @ a / len(a)
    norm = float(np.linalg.norm(grad))
    if not norm > 0:
        raise IRTError("the predicted accuracy does not change with the ability at the prior's centre: "
                       "no direction to rank abilities by")
    return grad / norm


def composite_ability(theta: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Each ability (rows of ``theta``, ... x D) along :func:`ability_direction` of the items ``a``, ``b``.

    Under the fit's prior ``theta ~ N(0, s^2 I)`` the composite is ``N(0, s^2)`` (a unit direction).

    >>> import numpy as np
    >>> composite_ability(np.array([[1.0, 1.0], [0.0, 2.0]]), np.array([[0.0, 1.0], [0.0, 2.0]]), np.zeros(2)).tolist()
    [1.0, 2.0]
    """
    return np.asarray(theta, dtype=np.float64) @ ability_direction(a, b)
