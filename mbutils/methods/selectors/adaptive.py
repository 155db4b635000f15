"""Adaptive micro-benchmarks: IRT computerised adaptive testing (CAT) per target.

Every other method gives all targets the same k items. Here each target takes its own
adaptive test (Lord 1980; Segall 1996 for many ability dimensions, see :mod:`mbutils.methods.cat`):
a few items drawn at random, then, one at a time, the unasked item most informative at
its current MAP ability, until it has answered k items. Item parameters are the
tinyBenchmarks IRT fit on the sources (same model, same priors, same shared key, so an
experiment fits it once per run for the tinyBenchmarks family and this one).

``adaptive_fisher``
    maximum information; estimate = mean predicted P(correct) over all seen items at
    the final ability (the IRT estimate of Polo et al. 2024, on adaptive items).
``adaptive_randomesque``
    exposure control (Kingsbury & Zara 1989): each step picks at random among the
    ``top_m`` most informative unasked items; same estimate.
``adaptive_pirt``
    the items of ``adaptive_fisher`` (same path, same random start) with the p-IRT blend
    of Polo et al. (2024): observed answers on the answered items, predictions elsewhere.

Honest by construction: selection uses source data only; a target's estimate reads its
answers only on the items its own test gave it (:class:`mbutils.methods.cat.AdaptiveTests`).
Random starts and randomesque draws come from one generator per target,
``rng_for(root, "cat", n_start, top_m, target)`` with ``root`` drawn once per run (by the
shared preparation, from the experiment's (run, stream) generator), so tables are
identical for any number of workers. A run's test of k items is therefore the first k
items of its longer tests, so the run takes one test per target, to the largest size,
and reads every size off it (with the exact final MAP at each size). Each size's test
is the same test as an independent one would be; only the sizes of one run share it.

``adaptive_fisher`` and ``adaptive_pirt`` take the same tests: the first to estimate
keeps them in the run's prepared object (keyed by the test design and the very array of
answers it was given), and the other reuses them.

No change to the engine was needed: :meth:`MicroBenchmark.estimate` already receives
the targets' seen-item answers, so the adaptive micro-benchmark runs the tests there.
It has no common item list (``items`` is empty); :attr:`AdaptiveMicroBenchmark.size`
is the number of items each target answers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
from scipy.special import ndtr

from mbutils.methods.cat import CRITERIA, AdaptiveTests, CATPath, composite_ability
from mbutils.base.errors import SelectorError
from mbutils.methods.irt import IRTError, sigmoid
from mbutils.methods.irt_fit import IRTModel
from mbutils.methods.protocol import rng_for
from mbutils.methods.selectors.base import MicroBenchmark, Selector, SourceData
from mbutils.methods.selectors.registry import register
from mbutils.base.validation import Integer, OneOf
from mbutils.methods.selectors.tinybench import TinyBenchmarks, TinyPrepared

__all__ = ["AdaptiveAbility", "AdaptiveFisher", "AdaptiveMicroBenchmark", "AdaptivePIRT", "AdaptiveRandomesque"]

#: How a test is scored: predicted accuracy (irt), p-IRT blend (pirt), or ability (see AdaptiveAbility).
ESTIMATORS = ("irt", "pirt", "ability")


@dataclass(frozen=True)
class AdaptiveMicroBenchmark(MicroBenchmark):
    """An adaptive test of ``length`` items per target on the sources' IRT item parameters."""

    item_a: np.ndarray | None = None
    item_b: np.ndarray | None = None
    length: int = 0
    n_start: int = 0
    top_m: int = 1
    root: int = 0
    estimator: str = "irt"
    prior_sd_theta: float = 1.0
    newton_steps: int = 2
    criterion: str = "accuracy"
    memo: dict | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        a = np.asarray(self.item_a, dtype=np.float64)
        b = np.asarray(self.item_b, dtype=np.float64)
        if a.ndim != 2 or b.shape != (a.shape[0],):
            raise SelectorError(f"item parameters have shapes a {a.shape}, b {b.shape}")
        if not 1 <= self.length <= len(b):
            raise SelectorError(f"an adaptive test needs 1 to {len(b)} items, got {self.length}")
        if self.estimator not in ESTIMATORS:
            raise SelectorError(f"unknown adaptive estimator {self.estimator!r}; choose from {', '.join(ESTIMATORS)}")
        object.__setattr__(self, "item_a", a)
        object.__setattr__(self, "item_b", b)

    @property
    def size(self) -> int:
        return self.length

    @property
    def n_seen(self) -> int:
        return len(self.item_b)

    def _tests(self, correct: np.ndarray, trace: bool = False) -> tuple[AdaptiveTests, list]:
        """Untaken tests for the rows of ``correct`` and one generator per target.

        Each target's generator draws its random start first, then the randomesque
        uniforms step by step, so a longer test continues the very draws of a shorter one.
        """
        Y = np.asarray(correct)
        if Y.ndim != 2 or Y.shape[1] != self.n_seen:
            raise SelectorError(f"expected targets x {self.n_seen} seen items, got an array of shape {Y.shape}")
        gens = [rng_for(self.root, "cat", self.n_start, self.top_m, t) for t in range(len(Y))]
        s = min(self.n_start, self.n_seen)
        start = np.array([g.choice(self.n_seen, s, replace=False) for g in gens], dtype=np.int64)
        tests = AdaptiveTests(Y, self.item_a, self.item_b, start=start.reshape(len(Y), s), top_m=self.top_m,
                              prior_sd=self.prior_sd_theta, newton_steps=self.newton_steps,
                              criterion=self.criterion, trace=trace)
        return tests, gens

    def _advance(self, tests: AdaptiveTests, gens: list, k: int) -> None:
        """Lengthen ``tests`` to ``k`` items, drawing the uniforms of the new adaptive steps."""
        steps = tests.adaptive_steps(k)
        uniforms = np.array([g.random(steps) for g in gens]).reshape(len(gens), steps)
        try:
            tests.advance(k, uniforms)
        except IRTError as err:
            raise SelectorError(f"adaptive test failed: {err}") from None

    def path(self, correct: np.ndarray, trace: bool = False) -> CATPath:
        """Every target's adaptive test on its rows of ``correct`` (targets x seen items)."""
        tests, gens = self._tests(correct, trace)
        self._advance(tests, gens, self.length)
        return tests.path(self.length)

    def _memo_path(self, correct) -> CATPath:
        """The tests, shared by sibling selectors and by every length of a run.

        ``memo`` (shared through the run's prepared object) keeps, per test design, the
        last array of answers the tests were taken on, the tests so far and the paths read
        off them. A request for a longer test continues the same tests; a hit needs that
        very array (``is``), so the memo can only return what :meth:`path` would compute.
        """
        if self.memo is None:
            return self.path(correct)
        key = (self.n_start, self.top_m, self.root, self.criterion, self.newton_steps, self.prior_sd_theta)
        hit = self.memo.get(key)
        if hit is None or hit[0] is not correct:
            self.memo[key] = hit = (correct, *self._tests(correct), {})
        _, tests, gens, paths = hit
        if self.length not in paths:
            self._advance(tests, gens, self.length)
            paths[self.length] = tests.path(self.length)
        return paths[self.length]

    def estimate(self, correct: np.ndarray, confidence: np.ndarray | None = None) -> np.ndarray:
        """Predicted seen-half accuracy of each target (reads 0/1 answers of its own items only)."""
        path = self._memo_path(correct)
        if self.estimator == "ability":  # a rank score, not an accuracy: see AdaptiveAbility
            return ndtr(composite_ability(path.theta, self.item_a, self.item_b) / self.prior_sd_theta)
        prob = sigmoid(path.theta @ self.item_a.T - self.item_b)
        if self.estimator == "irt":
            return prob.mean(axis=1)
        answered = np.take_along_axis(prob, path.items, axis=1).sum(axis=1)
        return (path.answers.sum(axis=1) + prob.sum(axis=1) - answered) / self.n_seen


@register
class AdaptiveFisher(Selector):
    """Adaptive testing: each target answers its own k items, the next one always the most informative; IRT estimate.

    Every other method gives all targets the same k items. Here each target takes its own
    computerised adaptive test (CAT) on the item parameters of the tinyBenchmarks IRT fit
    of the sources (same model, same priors, one fit per run for both families): a few
    random items, then, one at a time, the unasked item most informative at its current MAP
    ability, until it has answered k items. The estimate is the mean predicted P(correct)
    over all seen items at the final ability. Selection uses source data only, and a
    target's estimate reads its answers only on the items its own test gave it. A run's
    test of k items is the first k items of its longer tests. The micro-benchmark has no
    common item list (``items`` is empty); its ``size`` is the items each target answers.
    Registered as ``"adaptive_fisher"``.

    Parameters
    ----------
    n_start : int, default 1
        Random items each test starts with before adapting (at least 0; a test of k items
        starts with ``min(n_start, k)``).
    top_m : int, optional
        Randomesque exposure control: each step picks at random among the ``top_m`` most
        informative unasked items; None: the class default (1, always the most informative).
    criterion : {"accuracy", "determinant"}, default "accuracy"
        What "informative" means: ``"accuracy"``, the expected drop in the posterior
        variance of the predicted accuracy (van der Linden's minimum error variance, for
        the one score a micro-benchmark reports); ``"determinant"``, the gain in the
        determinant of the posterior precision (Segall's D-optimality; for one dimension,
        Lord's Fisher information).
    newton_steps : int, default 2
        Newton steps of the running MAP ability after each answer (the final ability is the
        exact MAP).
    irt : mbutils.methods.irt_fit.IRTModel, optional
        The unfitted IRT model of the sources' fit, as in :class:`TinyBenchmarks`.

    Examples
    --------
    >>> import numpy as np
    >>> from mbutils import SourceData, AdaptiveFisher
    >>> rng = np.random.default_rng(0)
    >>> ability, difficulty = rng.normal(size=(40, 1)), rng.normal(size=80)
    >>> correct = rng.random((40, 80)) < 1 / (1 + np.exp(difficulty - ability))  # 2PL-like
    >>> source, targets = SourceData(correct[:30], np.zeros(80, dtype=int)), correct[30:]
    >>> selector = AdaptiveFisher()
    >>> micro = selector.select(selector.prepare(source, rng), 10, rng)
    >>> micro.size, micro.items.size  # 10 items per target, no common list
    (10, 0)
    >>> micro.estimate(targets).shape
    (10,)
    """

    name: ClassVar[str] = "adaptive_fisher"
    estimator: ClassVar[str] = "irt"
    default_top_m: ClassVar[int] = 1

    parameter_constraints = {"n_start": Integer(low=0), "top_m": Integer(low=1), "criterion": OneOf(CRITERIA),
                             "newton_steps": Integer(low=1)}

    def __init__(self, n_start: int = 1, top_m: int | None = None, criterion: str = "accuracy",
                 newton_steps: int = 2, irt: IRTModel | None = None):
        self.n_start = n_start
        self.top_m = self.default_top_m if top_m is None else top_m
        self.criterion = criterion
        self.newton_steps = newton_steps
        self.irt = IRTModel() if irt is None else irt

    def _irt(self) -> TinyBenchmarks:
        """The tinyBenchmarks selector with our IRT model: its fit is the one we share."""
        return TinyBenchmarks(irt=self.irt)

    def shared_key(self) -> str:
        """tinyBenchmarks' key: one IRT fit per run for both families (and the same streams)."""
        return self._irt().shared_key()

    def prepare(self, source: SourceData, rng: np.random.Generator) -> TinyPrepared:
        """The sources' IRT fit, exactly as tinyBenchmarks prepares it."""
        self.validate_params()
        return self._irt().prepare(source, rng)

    def select(self, prepared: TinyPrepared, k: int, rng: np.random.Generator) -> AdaptiveMicroBenchmark:
        """A k-item adaptive test; nothing is chosen until the targets answer.

        ``rng`` is not used: the tests' draws come from the run's ``prepared.cat_root``.
        """
        self.validate_params()
        self.check_size(k, prepared.n_items)
        return AdaptiveMicroBenchmark(
            items=np.empty(0, dtype=np.int64), weights=np.empty(0), reads="correct",
            item_a=prepared.item_a, item_b=prepared.item_b, length=int(k), n_start=int(self.n_start),
            top_m=int(self.top_m), root=prepared.cat_root, estimator=self.estimator,
            prior_sd_theta=self.irt.prior_sd_theta, newton_steps=int(self.newton_steps), criterion=self.criterion,
            memo=prepared.adaptive_tests)


@register
class AdaptiveRandomesque(AdaptiveFisher):
    """Adaptive testing with randomesque exposure control: each step a random one of the ``top_m`` most informative items.

    As :class:`AdaptiveFisher`, but each step picks uniformly among the ``top_m`` (default
    5) most informative unasked items (Kingsbury & Zara, 1989), so the most informative
    items are not given to every target. Same IRT estimate. Registered as
    ``"adaptive_randomesque"``.

    Parameters
    ----------
    n_start, top_m, criterion, newton_steps, irt
        As in :class:`AdaptiveFisher`; ``top_m=None`` means 5.

    Examples
    --------
    >>> import numpy as np
    >>> from mbutils import SourceData, AdaptiveRandomesque
    >>> rng = np.random.default_rng(0)
    >>> ability, difficulty = rng.normal(size=(40, 1)), rng.normal(size=80)
    >>> correct = rng.random((40, 80)) < 1 / (1 + np.exp(difficulty - ability))  # 2PL-like
    >>> source, targets = SourceData(correct[:30], np.zeros(80, dtype=int)), correct[30:]
    >>> selector = AdaptiveRandomesque()
    >>> selector.top_m
    5
    >>> micro = selector.select(selector.prepare(source, rng), 10, rng)
    >>> micro.size, micro.estimate(targets).shape
    (10, (10,))
    """

    name: ClassVar[str] = "adaptive_randomesque"
    default_top_m: ClassVar[int] = 5


@register
class AdaptivePIRT(AdaptiveFisher):
    """The tests of :class:`AdaptiveFisher` with the p-IRT estimate: observed answers where asked, predictions elsewhere.

    Same path and random start as :class:`AdaptiveFisher` of the same parameters (in an
    experiment the two take the very same tests); the estimate blends the target's answers
    on its k items with the IRT predictions on the other seen items, as
    :class:`TinyBenchmarksPIRT` does for anchors. Registered as ``"adaptive_pirt"``.

    Parameters
    ----------
    n_start, top_m, criterion, newton_steps, irt
        As in :class:`AdaptiveFisher`.

    Examples
    --------
    >>> import numpy as np
    >>> from mbutils import SourceData, AdaptivePIRT
    >>> rng = np.random.default_rng(0)
    >>> ability, difficulty = rng.normal(size=(40, 1)), rng.normal(size=80)
    >>> correct = rng.random((40, 80)) < 1 / (1 + np.exp(difficulty - ability))  # 2PL-like
    >>> source, targets = SourceData(correct[:30], np.zeros(80, dtype=int)), correct[30:]
    >>> selector = AdaptivePIRT()
    >>> micro = selector.select(selector.prepare(source, rng), 10, rng)
    >>> micro.estimator, micro.size, micro.estimate(targets).shape
    ('pirt', 10, (10,))
    """

    name: ClassVar[str] = "adaptive_pirt"
    estimator: ClassVar[str] = "pirt"


class AdaptiveAbility(AdaptiveFisher):
    """The tests of :class:`AdaptiveFisher`, scored by ability instead of accuracy (as Fluid Benchmarking scores).

    Hofmann et al. (2025) rank models by their IRT ability rather than by an accuracy. The tests
    here are :class:`AdaptiveFisher`'s (same path and start; in an experiment the very same tests),
    and a target's score is its final MAP ability along :func:`~mbutils.methods.cat.ability_direction`
    (the direction in which the predicted accuracy grows fastest at the prior's centre; in one
    dimension, the ability itself),
    reported as its percentile under the fit's prior, ``Phi(u^T theta / prior_sd)``: a strictly
    increasing map, so every measure of order (Kendall tau, pairwise agreement, MDAD) is that of the
    ability. The score is *not* an accuracy: an estimation error against the targets' accuracies
    means nothing, so this selector is not registered by name (the command line's tables report
    that error); pass the object, ``run_experiment(bench, [AdaptiveAbility()], ...)``, and judge it by
    :mod:`mbutils.book.findings.ability_scoring`. Labelled ``"adaptive_ability"``.

    Parameters
    ----------
    n_start, top_m, criterion, newton_steps, irt
        As in :class:`AdaptiveFisher`.

    Examples
    --------
    >>> import numpy as np
    >>> from mbutils.methods.selectors.adaptive import AdaptiveAbility, AdaptiveFisher
    >>> rng = np.random.default_rng(0)
    >>> ability, difficulty = rng.normal(size=(40, 1)), rng.normal(size=80)
    >>> correct = rng.random((40, 80)) < 1 / (1 + np.exp(difficulty - ability))  # 2PL-like
    >>> source, targets = SourceData(correct[:30], np.zeros(80, dtype=int)), correct[30:]
    >>> prepared = AdaptiveFisher().prepare(source, rng)
    >>> score = AdaptiveAbility().select(prepared, 10, rng).estimate(targets)
    >>> bool(((score > 0) & (score < 1)).all())  # percentiles of the ability, not accuracies
    True
    """

    name: ClassVar[str] = "adaptive_ability"
    estimator: ClassVar[str] = "ability"
