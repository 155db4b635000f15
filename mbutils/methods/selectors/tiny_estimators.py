"""The tinyBenchmarks micro-benchmark and its four estimators of a target's accuracy from its anchor answers.

Four estimators share this selection (one selector name each):

``tinybenchmarks``
    the paper's estimate: sum of cluster weight x target correctness on the anchor.
``tinybenchmarks_irt``
    fit the target's ability by MAP on its anchor answers (item parameters fixed at the
    sources' fit, same prior as the fit), then average the predicted P(correct) over
    all seen items.
``tinybenchmarks_pirt``
    p-IRT: observed answers on the anchors, IRT predictions elsewhere,
    ``(1/N) [sum_anchors y_j + sum_others p_j]`` (= lambda * anchor mean +
    (1 - lambda) * mean prediction off the anchors, with lambda = k/N), as in the
    paper's formula. (The authors' experiment code puts the cluster-weighted anchor
    estimate in place of the plain anchor mean; we follow the paper.)
``tinybenchmarks_gpirt``
    gp-IRT: ``lam * (anchor estimate) + (1 - lam) * p-IRT``. Our reading of the
    tinyBenchmarks heuristic: p-IRT has little sampling noise but carries the IRT
    model's bias ``B``; the anchor estimate is unbiased with variance
    about ``V / (c k)``, where ``V`` is the variance of one item's 0/1 outcome for a
    model and ``c = 4`` credits the clustering with a four-fold variance reduction over
    random sampling (the constant of the authors' experiments). Weighting the two
    inversely to their mean squared errors gives ``lam = B^2 / (B^2 + V / (c k))``.
    ``B`` is measured on held-out sources, as in the authors' code: every fifth source
    is left out of a second IRT fit; their abilities are fitted on the even-numbered
    seen items and ``B`` is the mean absolute error of the predicted accuracy on the
    odd-numbered ones. ``V`` is the mean of ``acc (1 - acc)`` over the sources.
    Everything here uses source data only. Caveat: ``B`` also contains the binomial
    noise of an accuracy measured on N/2 items (about ``sqrt(V / (N/2))``), so on small
    benchmarks it overstates the bias and pushes ``lam`` towards the anchor estimate.

The anchors themselves are chosen by :mod:`mbutils.methods.selectors.tinybench`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from mbutils.base.errors import SelectorError
from mbutils.methods.estimators import clip_accuracy
from mbutils.methods.irt import IRTError, map_abilities, sigmoid
from mbutils.methods.selectors.base import MicroBenchmark

ESTIMATORS = ("anchor", "irt", "pirt", "gpirt")


@dataclass(frozen=True)
class IRTMicroBenchmark(MicroBenchmark):
    """Anchors + cluster weights, plus the sources' IRT item parameters for all seen items.

    :meth:`estimate` fits every target's ability on its anchor answers in one
    vectorised MAP step and returns the estimator named by ``estimator``;
    :meth:`estimates` returns all four at once. ``memo`` (shared by the three IRT
    selectors of one run and size, which have the same anchors) keeps the ability fit of
    the last targets seen, so it runs once per run and size instead of three times.
    """

    item_a: np.ndarray | None = None
    item_b: np.ndarray | None = None
    estimator: str = "irt"
    gp_lambda: float = 0.0
    prior_sd_theta: float = 1.0
    memo: dict | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.item_a is None or self.item_b is None:
            raise SelectorError("an IRT micro-benchmark needs the item parameters a and b")
        a = np.asarray(self.item_a, dtype=np.float64)
        b = np.asarray(self.item_b, dtype=np.float64)
        if a.ndim != 2 or b.shape != (a.shape[0],):
            raise SelectorError(f"item parameters have shapes a {a.shape}, b {b.shape}")
        if self.items.size and (self.items.min() < 0 or self.items.max() >= len(b)):
            raise SelectorError(f"anchor indices must lie in 0..{len(b) - 1}")
        if self.estimator not in ESTIMATORS:
            raise SelectorError(
                f"unknown IRT estimator {self.estimator!r}; choose from {', '.join(ESTIMATORS)}"
            )
        if not 0.0 <= self.gp_lambda <= 1.0:
            raise SelectorError(f"gp_lambda must lie in [0, 1], got {self.gp_lambda}")
        object.__setattr__(self, "item_a", a)
        object.__setattr__(self, "item_b", b)

    @property
    def n_seen(self) -> int:
        return len(self.item_b)

    def estimates(self, correct: np.ndarray) -> dict[str, np.ndarray]:
        """All four estimates (fractions in [0, 1]) for targets x seen items 0/1 data."""
        Y = np.asarray(correct, dtype=np.float64)
        if Y.ndim != 2 or Y.shape[1] != self.n_seen:
            raise SelectorError(
                f"expected targets x {self.n_seen} seen items, got an array of shape {Y.shape}"
            )
        memo = self.memo if self.memo is not None else {}
        if memo.get("targets") is not correct:  # the same array object: the same targets
            anchors = Y[:, self.items]
            try:
                theta = map_abilities(anchors, self.item_a[self.items], self.item_b[self.items],
                                      prior_sd=self.prior_sd_theta)
            except IRTError as err:
                raise SelectorError(f"cannot fit target abilities: {err}") from None
            prob = sigmoid(theta @ self.item_a.T - self.item_b)  # targets x seen items
            off_anchor = prob.sum(axis=1) - prob[:, self.items].sum(axis=1)
            memo.update(targets=correct, anchor=anchors @ self.weights, irt=prob.mean(axis=1),
                        pirt=(anchors.sum(axis=1) + off_anchor) / self.n_seen)
        anchor_est, pirt = memo["anchor"], memo["pirt"]
        # Each is an accuracy in [0, 1] by construction (means of 0/1 answers and probabilities, cluster
        # weights summing to 1, a convex blend); clipped here, the one place they are produced, so rounding
        # or weights that do not sum to 1 cannot carry an estimate past either end.
        return {
            "anchor": clip_accuracy(anchor_est),
            "irt": clip_accuracy(memo["irt"]),
            "pirt": clip_accuracy(pirt),
            "gpirt": clip_accuracy(self.gp_lambda * anchor_est + (1.0 - self.gp_lambda) * pirt),
        }

    def estimate(self, correct: np.ndarray, confidence: np.ndarray | None = None) -> np.ndarray:
        """Estimated accuracy of each target (IRT estimators read 0/1 correctness only)."""
        if self.estimator == "anchor":
            return clip_accuracy(super().estimate(correct, confidence))
        return self.estimates(correct)[self.estimator]


def gp_lambda(bias: float, variance: float, k: int, variance_factor: float) -> float:
    """``B^2 / (B^2 + V / (c k))``: weight of the anchor estimate in gp-IRT."""
    bias2 = bias**2
    noise = variance / (variance_factor * k)
    return float(bias2 / (bias2 + noise)) if bias2 + noise > 0 else 0.0
