"""Random baselines: uniform, stratified by subtask (equal and "proportional"), and uniform with a
model-based estimator (a regression, and the cross-fitted difference estimator).

The paper's stratified estimates are plain means, which are biased when subtasks differ in
size; the ``*_weighted`` variants weight each subtask by its share of the seen items.
"""

from __future__ import annotations

import numpy as np

from mbutils.base.errors import SelectorError
from mbutils.methods.selectors.base import MicroBenchmark, Selector, SourceData
from mbutils.methods.selectors.registry import register
from mbutils.base.validation import Boolean
from mbutils.base.vocabulary import retired_names


@register(roles=("paper", "auto"))
class RandomSampling(Selector):
    """Uniform random sampling, the baseline every method must beat: k distinct seen items, plain mean.

    Needs no source models (``uses_sources`` is False): a practitioner can use it without
    any other model's results. The estimate is the target's mean 0/1 correctness on the k
    items. Registered as ``"random"``; it takes no parameters.

    Examples
    --------
    >>> import numpy as np
    >>> from mbutils import RandomSampling, SourceData, make_selector
    >>> source = SourceData(correct=np.zeros((3, 8)), subtasks=np.zeros(8, dtype=int))
    >>> micro = RandomSampling().select(source, 4, np.random.default_rng(0))
    >>> micro.size, len(set(micro.items.tolist())), micro.weights.tolist()
    (4, 4, [0.25, 0.25, 0.25, 0.25])
    >>> make_selector("random")
    RandomSampling()
    """

    name = "random"
    uses_sources = False
    light = True

    def select(self, prepared: SourceData, k: int, rng: np.random.Generator) -> MicroBenchmark:
        self.check_size(k, prepared.n_items)
        items = rng.choice(prepared.n_items, size=k, replace=False)
        return MicroBenchmark(np.sort(items), np.full(k, 1.0 / k))


def _subtask_weights(items: np.ndarray, subtasks: np.ndarray, weighted: bool) -> np.ndarray:
    """Plain mean (paper) or weights that give each subtask its share of the population."""
    k = len(items)
    if not weighted:
        return np.full(k, 1.0 / k)
    sizes = np.bincount(subtasks)
    chosen = np.bincount(subtasks[items], minlength=len(sizes))
    own = subtasks[items]
    # Subtasks not sampled get no weight; renormalise over those that were.
    weights = sizes[own] / chosen[own]
    return weights / weights.sum()


@register("subtask_equal_weighted", weighted=True)
@register(roles=("paper", "auto"))
class SubtaskEqual(Selector):
    """Random sampling stratified by subtask with equal allocation: every subtask gets the same share of k.

    Each of the S subtasks gets floor(k/S) items, the k mod S left over go one each to
    random subtasks. A subtask smaller than its allocation gives all its items; the
    shortfall goes to random other subtasks with room, so exactly k items are always
    chosen. Within a subtask the items are a simple random sample. Needs no source models.
    Registered as ``"subtask_equal"`` and, with ``weighted=True``, ``"subtask_equal_weighted"``;
    both choose the same items in a run and differ only in the estimate.

    Parameters
    ----------
    weighted : bool, default False
        False: the plain mean over the k items (the paper's; biased when subtasks differ in
        size). True: each chosen item weighs its subtask's share of the seen items divided by
        the items chosen from it, so each subtask counts by its size (subtasks not sampled
        get no weight; the weights are renormalised over those that were).

    Examples
    --------
    >>> import numpy as np
    >>> from mbutils import SourceData, SubtaskEqual
    >>> source = SourceData(correct=np.zeros((3, 8)), subtasks=[0, 0, 0, 0, 0, 0, 1, 1])
    >>> micro = SubtaskEqual().select(source, 4, np.random.default_rng(0))
    >>> np.bincount(source.subtasks[micro.items]).tolist()  # 2 items from each subtask
    [2, 2]
    >>> weighted = SubtaskEqual(weighted=True)
    >>> weighted.select(source, 4, np.random.default_rng(0)).weights.tolist()
    [0.375, 0.375, 0.125, 0.125]
    """

    name = "subtask_equal"
    uses_sources = False
    light = True

    parameter_constraints = {"weighted": Boolean()}

    def __init__(self, weighted: bool = False):
        self.weighted = weighted

    def shared_key(self) -> str:
        return "subtask_equal"  # the weighted variant reweights the same items

    def select(self, prepared: SourceData, k: int, rng: np.random.Generator) -> MicroBenchmark:
        self.check_size(k, prepared.n_items)
        subtasks = prepared.subtasks
        sizes = np.bincount(subtasks)
        n_sub = len(sizes)
        alloc = np.full(n_sub, k // n_sub)
        alloc[rng.choice(n_sub, size=k % n_sub, replace=False)] += 1
        alloc = _fill_shortfall(np.minimum(alloc, sizes), sizes, k, rng)
        items = _sample_within(subtasks, alloc, rng)
        return MicroBenchmark(items, _subtask_weights(items, subtasks, self.weighted))


def _fill_shortfall(alloc: np.ndarray, sizes: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """Give the items a capped allocation lost to random subtasks that still have room."""
    alloc = alloc.copy()
    while alloc.sum() < k:
        room = np.flatnonzero(alloc < sizes)
        extra = rng.choice(room, size=min(len(room), k - alloc.sum()), replace=False)
        alloc[extra] += 1
    return alloc


def _sample_within(subtasks: np.ndarray, alloc: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Simple random sample of alloc[s] items from every subtask s, vectorised."""
    order = np.lexsort((rng.random(len(subtasks)), subtasks))
    sorted_codes = subtasks[order]
    rank = np.arange(len(order)) - np.searchsorted(sorted_codes, sorted_codes, side="left")
    return np.sort(order[rank < alloc[sorted_codes]])


@register("subtask_proportional_weighted", weighted=True)
@register
class SubtaskProportional(Selector):
    """The reference code's "proportional" subtask sampling: k items drawn with P(item) proportional to 1/subtask size.

    Despite the name this allocates equally *in expectation* (each subtask gets the same
    total probability); kept for fidelity, the book explains the difference. The k items
    are drawn without replacement in one weighted draw, so a subtask's count varies from
    run to run. Needs no source models. Registered as ``"subtask_proportional"`` and, with
    ``weighted=True``, ``"subtask_proportional_weighted"``.

    Parameters
    ----------
    weighted : bool, default False
        False: the plain mean over the k items (the paper's). True: each subtask counts by
        its share of the seen items, as in :class:`SubtaskEqual`.

    Examples
    --------
    >>> import numpy as np
    >>> from mbutils import SourceData, SubtaskProportional
    >>> source = SourceData(correct=np.zeros((3, 8)), subtasks=[0, 0, 0, 0, 0, 0, 1, 1])
    >>> micro = SubtaskProportional().select(source, 4, np.random.default_rng(0))
    >>> micro.size, micro.weights.tolist()
    (4, [0.25, 0.25, 0.25, 0.25])
    >>> SubtaskProportional(weighted=True).get_params()
    {'weighted': True}
    """

    name = "subtask_proportional"
    uses_sources = False
    light = True
    parameter_constraints = {"weighted": Boolean()}

    def __init__(self, weighted: bool = False):
        self.weighted = weighted

    def shared_key(self) -> str:
        return "subtask_proportional"

    def select(self, prepared: SourceData, k: int, rng: np.random.Generator) -> MicroBenchmark:
        self.check_size(k, prepared.n_items)
        subtasks = prepared.subtasks
        p = 1.0 / np.bincount(subtasks)[subtasks]
        items = np.sort(rng.choice(len(subtasks), size=k, replace=False, p=p / p.sum()))
        return MicroBenchmark(items, _subtask_weights(items, subtasks, self.weighted))


#: Class names retired for one release (see mbutils.base.vocabulary): served with a FutureWarning.
__getattr__ = retired_names(__name__, {"RandomSelector": "RandomSampling", "SubtaskEqualSelector": "SubtaskEqual",
            "SubtaskProportionalSelector": "SubtaskProportional"}, lambda name: globals()[name])


class DifferenceMicroBenchmark(MicroBenchmark):
    """A uniform random sample read by the cross-fitted difference (AIPW-style) estimator: predictions
    from the source models most like the target, corrected by the mean residual on the sample
    (:func:`mbutils.methods.estimators.difference_estimate`). Its estimates are clipped to [0, 1].

    ``law``: the law of its interval (:meth:`interval`), ``"student_t"`` (k - 2 degrees of freedom) or
    ``"normal"`` (how folders written before the t interval were scored; they are read with it)."""

    def __init__(self, items, source_correct: np.ndarray, folds: tuple[np.ndarray, np.ndarray],
                 law: str = "student_t"):
        from mbutils.methods.estimators import INTERVAL_LAWS

        k = len(items)
        super().__init__(items, np.full(k, 1.0 / k))
        if law not in INTERVAL_LAWS:
            raise SelectorError(f"unknown interval law {law!r} of the difference estimator; choose from "
                                f"{', '.join(INTERVAL_LAWS)}")
        object.__setattr__(self, "source_correct", np.asarray(source_correct))
        object.__setattr__(self, "folds", folds)
        object.__setattr__(self, "law", law)

    def residuals(self, correct: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(estimate, cross-fitted residuals on the k items, targets x k) per target; the residuals of two
        targets are in the same item order, so their difference is the noise of the pair's difference."""
        from mbutils.methods.estimators import difference_residuals, knn_predictions

        y = np.asarray(correct, dtype=np.float64)
        predict = lambda on: knn_predictions(self.source_correct, y[:, on], on)  # noqa: E731
        return difference_residuals(y, self.items, self.folds, predict, y.shape[1])

    def estimate_with_variance(self, correct: np.ndarray, confidence=None) -> tuple[np.ndarray, np.ndarray]:
        """(estimate, variance) per target; the variance bounds that of the estimate (see the estimator)."""
        from mbutils.methods.estimators import residual_variance

        estimate, residuals = self.residuals(correct)
        return estimate, residual_variance(residuals, np.asarray(correct).shape[1])

    def bounds(self, estimate, variance, n_items: int, level: float) -> tuple[np.ndarray, np.ndarray]:
        """(low, high) of this micro-benchmark's interval at ``level`` from estimates and variances
        (:func:`mbutils.methods.estimators.difference_interval`, with its law and k)."""
        from mbutils.methods.estimators import difference_interval

        return difference_interval(estimate, variance, self.size, n_items, level, self.law)

    def interval(self, correct: np.ndarray, level: float = 0.9) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(estimate, low, high) per target: the estimate and its interval at ``level`` (fractions in [0, 1])."""
        estimate, variance = self.estimate_with_variance(correct)
        low, high = self.bounds(estimate, variance, np.asarray(correct).shape[1], level)
        return estimate, low, high

    def estimate(self, correct: np.ndarray, confidence=None) -> np.ndarray:
        return self.estimate_with_variance(correct)[0]


class RegressionMicroBenchmark(MicroBenchmark):
    """A uniform random sample read by a ridge regression of the sources' accuracy on their answers to it."""

    def __init__(self, items, source_correct: np.ndarray):
        k = len(items)
        super().__init__(items, np.full(k, 1.0 / k))
        object.__setattr__(self, "source_correct", np.asarray(source_correct))

    def estimate(self, correct: np.ndarray, confidence=None) -> np.ndarray:
        from mbutils.methods.estimators import regression_estimate

        return regression_estimate(self.source_correct, correct, self.items)


@register(roles=("auto",))
class RandomDifference(RandomSampling):
    """Uniform random sampling with the cross-fitted difference estimator (AIPW-style, beyond the paper).

    The items are a uniform random sample, as for ``random``; the estimate is the mean of predictions
    over all seen items (from the source models that answer the target's sampled items most alike)
    plus the mean residual on the sample, cross-fitted over two halves of the sample so that it is
    unbiased whatever the predictions' quality (Zhang, Dorner & Hardt 2025 discuss such estimators).
    Estimates are clipped to [0, 1]. In an experiment, fewer than 4 items (``MIN_ITEMS``) are read by the
    plain mean; ``build_micro`` refuses them. Registered as ``"random_difference"``; it takes no
    parameters.

    Examples
    --------
    >>> import numpy as np
    >>> from mbutils import RandomDifference, SourceData
    >>> rng = np.random.default_rng(0)
    >>> source = SourceData(correct=(rng.random((20, 60)) < 0.5).astype(float), subtasks=np.zeros(60, dtype=int))
    >>> micro = RandomDifference().select(source, 10, np.random.default_rng(1))
    >>> target = source.correct[:1]  # a source as its own target: its estimate is near its accuracy
    >>> estimate, variance = micro.estimate_with_variance(target)
    >>> micro.size, bool(abs(estimate[0] - target.mean()) < 4 * np.sqrt(variance[0]) + 0.05)
    (10, True)
    """

    name = "random_difference"
    uses_sources = True

    def select(self, prepared: SourceData, k: int, rng: np.random.Generator) -> MicroBenchmark:
        from mbutils.methods.estimators import MIN_ITEMS

        self.check_size(k, prepared.n_items)
        items = np.sort(rng.choice(prepared.n_items, size=k, replace=False))
        if k < MIN_ITEMS:  # two folds of two items at least; fewer: the plain mean
            return MicroBenchmark(items, np.full(k, 1.0 / k))
        order = rng.permutation(k)
        return DifferenceMicroBenchmark(items, prepared.correct, (np.sort(order[: k // 2]), np.sort(order[k // 2:])))


@register
class RandomRegression(RandomSampling):
    """Uniform random sampling with a regression estimate: the source models' accuracy regressed (ridge)
    on their answers to the sampled items, applied to the target's answers (the random-sample
    regression baseline of Zhang, Dorner & Hardt 2025). Registered as ``"random_regression"``; it takes
    no parameters.

    Examples
    --------
    >>> import numpy as np
    >>> from mbutils import RandomRegression, SourceData
    >>> rng = np.random.default_rng(0)
    >>> source = SourceData(correct=(rng.random((20, 60)) < 0.5).astype(float), subtasks=np.zeros(60, dtype=int))
    >>> micro = RandomRegression().select(source, 10, np.random.default_rng(1))
    >>> estimate = micro.estimate(source.correct[:3])
    >>> micro.size, estimate.shape, bool(((0 <= estimate) & (estimate <= 1)).all())
    (10, (3,), True)
    """

    name = "random_regression"
    uses_sources = True

    def select(self, prepared: SourceData, k: int, rng: np.random.Generator) -> MicroBenchmark:
        self.check_size(k, prepared.n_items)
        items = np.sort(rng.choice(prepared.n_items, size=k, replace=False))
        return RegressionMicroBenchmark(items, prepared.correct)
