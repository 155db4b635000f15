"""tinyBenchmarks (Polo et al. 2024): anchors from k-means on IRT item embeddings.

``prepare`` fits a D-dimensional 2PL IRT model (:mod:`mbutils.methods.irt_fit`) to the sources'
0/1 matrix on the seen items, once per run, and embeds every item as ``[a_j, b_j]``.
``select(k)`` runs seeded k-means with ``k`` clusters on the embeddings and takes as
anchor the item nearest each centroid; the weight of an anchor is its cluster's share
of the seen items.

Four estimators share this selection (one selector name each: ``tinybenchmarks``,
``tinybenchmarks_irt``, ``tinybenchmarks_pirt`` and ``tinybenchmarks_gpirt``); they are
described with the micro-benchmark that computes them,
:mod:`mbutils.methods.selectors.tiny_estimators`.

Details that are ours:

* Distinct anchors: when two centroids share a nearest item, the centroid closer to
  it keeps it and the other takes its nearest *unused* item (repeat until all anchors
  differ), so a micro-benchmark of size k always has k distinct items.
* If the seen items have fewer distinct embeddings than ``k`` (e.g. several items that
  every source got wrong embed identically), k-means leaves some clusters empty; their
  anchors get weight 0 and the weights still sum to one.
* The four selectors return the same :meth:`~Selector.shared_key`, so an experiment
  prepares once per run (one IRT fit) and hands them the same random streams; the
  prepared object caches each size's anchors, so they are chosen once and all four
  estimators are compared on identical items. The held-out bias of gp-IRT is computed
  on first use and cached there too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from mbutils.base.errors import SelectorError
from mbutils.methods.kmeans import kmeans
from mbutils.methods.irt import IRTError, single_threaded
from mbutils.methods import irt_memo
from mbutils.methods.irt_fit import IRTModel
from mbutils.base.validation import Integer, Real
from mbutils.methods.selectors.base import MicroBenchmark, Selector, SourceData
from mbutils.methods.selectors.registry import register
from mbutils.methods.selectors.tiny_estimators import IRTMicroBenchmark, gp_lambda

__all__ = [
    "IRTMicroBenchmark",
    "TinyBenchmarks",
    "TinyBenchmarksGPIRT",
    "TinyBenchmarksIRT",
    "TinyBenchmarksPIRT",
    "TinyPrepared",
    "gp_lambda",
]


# ---------------------------------------------------------------- shared preparation


@dataclass
class TinyPrepared:
    """What every size of one run shares: the sources' IRT item parameters.

    ``anchors_by_size`` caches anchors and weights per size, ``gp_stats`` the gp-IRT statistics
    (bias B, variance V) per hold-out scheme and ``estimates`` the targets' ability fits
    per size, so sibling selectors reuse them; ``adaptive_tests`` memoises the adaptive tests' steps. ``cat_root`` seeds the run's adaptive
    tests (:mod:`mbutils.methods.selectors.adaptive`): drawn once per run, so that a run's tests
    of every length are prefixes of one test.
    """

    item_a: np.ndarray
    item_b: np.ndarray
    source_correct: np.ndarray = field(repr=False)
    cat_root: int = 0
    anchors_by_size: dict = field(default_factory=dict, repr=False)
    adaptive_tests: dict = field(default_factory=dict, repr=False)
    gp_stats: dict = field(default_factory=dict, repr=False)
    estimates: dict = field(default_factory=dict, repr=False)

    @property
    def n_items(self) -> int:
        return len(self.item_b)

    @property
    def embedding(self) -> np.ndarray:
        """Items x (D + 1): ``[a_j, b_j]``, the space k-means clusters."""
        return np.hstack([self.item_a, self.item_b[:, None]])


def _distinct_nearest(points: np.ndarray, centers: np.ndarray) -> np.ndarray:
    """Index of the point nearest each centre, all distinct.

    When centres share a nearest point, the closer centre (ties: lower index) keeps it
    and the others move to their nearest point not yet taken; rounds repeat until every
    centre has its own point. Needs ``len(centers) <= len(points)``.
    """
    d2 = (
        (centers**2).sum(axis=1)[:, None]
        - 2.0 * centers @ points.T
        + (points**2).sum(axis=1)[None, :]
    )
    choice = np.full(len(centers), -1, dtype=np.int64)
    taken = np.zeros(len(points), dtype=bool)
    open_ = np.arange(len(centers))
    while len(open_):
        sub = d2[open_]
        sub[:, taken] = np.inf
        pick = sub.argmin(axis=1)
        dist = sub[np.arange(len(open_)), pick]
        order = np.lexsort((open_, dist))  # by distance, then by centre index
        _, first = np.unique(pick[order], return_index=True)
        winners = order[first]
        choice[open_[winners]] = pick[winners]
        taken[pick[winners]] = True
        open_ = np.delete(open_, winners)
    return choice


# ---------------------------------------------------------------- selectors


@register(roles=("paper", "auto"))
class TinyBenchmarks(Selector):
    """tinyBenchmarks (the paper's): anchor items from k-means on IRT item embeddings, cluster-weighted estimate.

    :meth:`~mbutils.Selector.prepare` fits a multidimensional 2PL IRT model to the sources' 0/1 results on the
    seen items, once per run, and embeds every item as ``[a_j, b_j]`` (discriminations and
    difficulty). For a size k, seeded k-means with k clusters runs on the embeddings and
    the item nearest each centroid is its anchor (all anchors distinct); an anchor weighs
    its cluster's share of the seen items. The estimate is the cluster-weighted 0/1
    correctness of the target on the anchors. k-means runs single-threaded, so the anchors
    cannot depend on the machine's thread count. Registered as ``"tinybenchmarks"``; the
    IRT estimators :class:`TinyBenchmarksIRT`, :class:`TinyBenchmarksPIRT` and
    :class:`TinyBenchmarksGPIRT` share its fit and anchors in an experiment.

    Parameters
    ----------
    irt : mbutils.methods.irt_fit.IRTModel, optional
        The unfitted IRT model whose hyper-parameters the sources' fit uses (dimensions,
        prior standard deviations, iterations, tolerance); None: ``IRTModel()``, the
        reference's 10 dimensions. Reach its parameters as ``irt__<name>``
        (``set_params(irt__dims=5)``).
    n_init : int, default 1
        k-means restarts (k-means++ starts drawn from one seed of the run's generator).
    kmeans_max_iter : int, default 300
        Maximum k-means iterations.

    Examples
    --------
    >>> import numpy as np
    >>> from mbutils import SourceData, TinyBenchmarks
    >>> rng = np.random.default_rng(0)
    >>> ability, difficulty = rng.normal(size=(40, 1)), rng.normal(size=80)
    >>> correct = rng.random((40, 80)) < 1 / (1 + np.exp(difficulty - ability))  # 2PL-like
    >>> source, targets = SourceData(correct[:30], np.zeros(80, dtype=int)), correct[30:]
    >>> selector = TinyBenchmarks().set_params(irt__dims=2)
    >>> selector.get_params()["irt__dims"]
    2
    >>> micro = selector.select(selector.prepare(source, rng), 10, rng)
    >>> micro.size, len(set(micro.items.tolist())), round(float(micro.weights.sum()), 9)
    (10, 10, 1.0)
    >>> micro.estimate(targets).shape
    (10,)
    """

    name: ClassVar[str] = "tinybenchmarks"
    estimator: ClassVar[str] = "anchor"

    parameter_constraints = {"n_init": Integer(low=1), "kmeans_max_iter": Integer(low=1)}

    def __init__(self, irt: IRTModel | None = None, n_init: int = 1, kmeans_max_iter: int = 300):
        self.irt = IRTModel() if irt is None else irt
        self.n_init = n_init
        self.kmeans_max_iter = kmeans_max_iter

    def shared_key(self) -> str:
        """Same key for all four estimators: one IRT fit and one anchor set per size."""
        return "tinybenchmarks|" + "|".join(
            f"{k}={v!r}" for k, v in sorted(self._shared_params().items()))

    def _shared_params(self) -> dict:
        irt = self.irt.get_params()
        return dict(dims=irt["dims"], prior_sd_theta=irt["prior_sd_theta"], prior_sd_a=irt["prior_sd_a"],
                    prior_sd_b=irt["prior_sd_b"], irt_max_iter=irt["max_iter"], irt_tol=irt["tol"],
                    n_init=self.n_init, kmeans_max_iter=self.kmeans_max_iter)

    def _fit(self, Y: np.ndarray) -> IRTModel:
        """The IRT fit of ``Y`` (read-only; the process's earlier fit of the same data if it has one)."""
        try:
            return irt_memo.fitted(self.irt, Y)
        except IRTError as err:
            raise SelectorError(f"{self.name}: IRT fit failed: {err}") from None

    def prepare(self, source: SourceData, rng: np.random.Generator) -> TinyPrepared:
        """Fit the IRT model to the sources once; every size of the run reuses it.

        The fit is deterministic; ``rng`` only draws the root of the run's adaptive tests
        (``None``: root 0).
        """
        self.validate_params()
        Y = np.asarray(source.correct, dtype=np.float64)
        if Y.ndim != 2 or Y.shape[0] < 2 or Y.shape[1] < 1:
            raise SelectorError(
                f"{self.name}: needs a sources x seen items matrix with at least 2 sources, "
                f"got shape {Y.shape}"
            )
        model = self._fit(Y)
        return TinyPrepared(item_a=model.a_, item_b=model.b_, source_correct=Y,
                            cat_root=0 if rng is None else int(rng.integers(2**63 - 1)))

    def _anchors(self, prepared: TinyPrepared, k: int, rng: np.random.Generator):
        """k distinct anchors and their cluster weights (cluster size / N), cached per k."""
        n = prepared.n_items
        self.check_size(k, n)
        k = int(k)
        if k not in prepared.anchors_by_size:
            points = prepared.embedding
            with single_threaded():
                # Fewer distinct embeddings than k leave clusters empty: they weigh 0.
                labels, centers = kmeans(points, k, int(rng.integers(2**31 - 1)), n_init=self.n_init,
                                         max_iter=self.kmeans_max_iter)
            anchors = _distinct_nearest(points, centers)
            prepared.anchors_by_size[k] = (anchors, np.bincount(labels, minlength=k) / n)
        return prepared.anchors_by_size[k]

    def _micro(self, prepared: TinyPrepared, anchors, weights, k: int) -> MicroBenchmark:
        return MicroBenchmark(items=anchors, weights=weights, reads="correct")

    def select(self, prepared: TinyPrepared, k: int, rng: np.random.Generator) -> MicroBenchmark:
        anchors, weights = self._anchors(prepared, k, rng)
        return self._micro(prepared, anchors, weights, int(k))


@register
class TinyBenchmarksIRT(TinyBenchmarks):
    """tinyBenchmarks' anchors with the IRT estimate: the target's predicted accuracy on every seen item.

    The target's ability is fitted by MAP on its anchor answers (item parameters fixed at
    the sources' fit, same prior as the fit), then its predicted P(correct) is averaged
    over all seen items. Registered as ``"tinybenchmarks_irt"``.

    Parameters
    ----------
    irt, n_init, kmeans_max_iter
        As in :class:`TinyBenchmarks` (the fit and anchors are shared with it).

    Examples
    --------
    >>> import numpy as np
    >>> from mbutils import SourceData, TinyBenchmarksIRT
    >>> rng = np.random.default_rng(0)
    >>> ability, difficulty = rng.normal(size=(40, 1)), rng.normal(size=80)
    >>> correct = rng.random((40, 80)) < 1 / (1 + np.exp(difficulty - ability))  # 2PL-like
    >>> source, targets = SourceData(correct[:30], np.zeros(80, dtype=int)), correct[30:]
    >>> selector = TinyBenchmarksIRT()
    >>> micro = selector.select(selector.prepare(source, rng), 10, rng)
    >>> estimates = micro.estimate(targets)
    >>> estimates.shape, bool(((0 < estimates) & (estimates < 1)).all())
    ((10,), True)
    >>> from mbutils import TinyBenchmarks
    >>> selector.shared_key() == TinyBenchmarks().shared_key()  # one IRT fit for both
    True
    """

    name: ClassVar[str] = "tinybenchmarks_irt"
    estimator: ClassVar[str] = "irt"

    def _micro(self, prepared, anchors, weights, k):
        return IRTMicroBenchmark(items=anchors, weights=weights, reads="correct",
                                 item_a=prepared.item_a, item_b=prepared.item_b,
                                 estimator=self.estimator, gp_lambda=self._lambda(prepared, k),
                                 prior_sd_theta=self.irt.prior_sd_theta,
                                 memo=prepared.estimates.setdefault(k, {}))

    def _lambda(self, prepared: TinyPrepared, k: int) -> float:
        return 0.0


@register
class TinyBenchmarksPIRT(TinyBenchmarksIRT):
    """tinyBenchmarks' anchors with the p-IRT estimate: observed answers on the anchors, IRT predictions elsewhere.

    The estimate is ``(1/N) [sum over anchors of y_j + sum over the other seen items of p_j]``
    with ``p_j`` the IRT-predicted P(correct) at the target's MAP ability, as in the paper's
    formula (the authors' experiment code puts the cluster-weighted anchor estimate in place
    of the plain anchor sum; we follow the paper). Registered as ``"tinybenchmarks_pirt"``.

    Parameters
    ----------
    irt, n_init, kmeans_max_iter
        As in :class:`TinyBenchmarks` (the fit and anchors are shared with it).

    Examples
    --------
    >>> import numpy as np
    >>> from mbutils import SourceData, TinyBenchmarksPIRT
    >>> rng = np.random.default_rng(0)
    >>> ability, difficulty = rng.normal(size=(40, 1)), rng.normal(size=80)
    >>> correct = rng.random((40, 80)) < 1 / (1 + np.exp(difficulty - ability))  # 2PL-like
    >>> source, targets = SourceData(correct[:30], np.zeros(80, dtype=int)), correct[30:]
    >>> selector = TinyBenchmarksPIRT()
    >>> micro = selector.select(selector.prepare(source, rng), 10, rng)
    >>> estimates = micro.estimate(targets)
    >>> estimates.shape, bool(((0 <= estimates) & (estimates <= 1)).all())
    ((10,), True)
    """

    name: ClassVar[str] = "tinybenchmarks_pirt"
    estimator: ClassVar[str] = "pirt"


@register
class TinyBenchmarksGPIRT(TinyBenchmarksIRT):
    """tinyBenchmarks' anchors with the gp-IRT estimate: a blend of the anchor and p-IRT estimates.

    The estimate is ``lam * anchor + (1 - lam) * p-IRT`` with
    ``lam = B^2 / (B^2 + V / (c k))``: p-IRT has little sampling noise but carries the IRT
    model's bias ``B``; the anchor estimate is unbiased with variance about ``V / (c k)``,
    ``V`` the mean 0/1 variance ``acc (1 - acc)`` over the sources. ``B`` is measured on
    held-out sources: every ``holdout_every``-th source is left out of a second IRT fit, its
    ability fitted on the even-numbered seen items and its accuracy predicted on the
    odd-numbered ones. Everything uses source data only. ``B`` also contains the binomial
    noise of an accuracy measured on N/2 items, so on small benchmarks it overstates the
    bias and pushes ``lam`` towards the anchor estimate. Registered as
    ``"tinybenchmarks_gpirt"``.

    Parameters
    ----------
    irt, n_init, kmeans_max_iter
        As in :class:`TinyBenchmarks` (the fit and anchors are shared with it).
    variance_factor : float, default 4.0
        ``c``, the variance reduction credited to the clustering over random sampling (the
        constant of the authors' experiments); positive.
    holdout_every : int, default 5
        Every n-th source is held out to measure ``B`` (at least 2; needs at least 3 sources).

    Examples
    --------
    >>> import numpy as np
    >>> from mbutils import SourceData, TinyBenchmarksGPIRT
    >>> rng = np.random.default_rng(0)
    >>> ability, difficulty = rng.normal(size=(40, 1)), rng.normal(size=80)
    >>> correct = rng.random((40, 80)) < 1 / (1 + np.exp(difficulty - ability))  # 2PL-like
    >>> source, targets = SourceData(correct[:30], np.zeros(80, dtype=int)), correct[30:]
    >>> selector = TinyBenchmarksGPIRT()
    >>> prepared = selector.prepare(source, rng)
    >>> micro = selector.select(prepared, 10, rng)
    >>> bool(0 <= micro.gp_lambda <= 1), micro.estimate(targets).shape
    (True, (10,))
    """

    name: ClassVar[str] = "tinybenchmarks_gpirt"
    estimator: ClassVar[str] = "gpirt"

    parameter_constraints = {**TinyBenchmarksIRT.parameter_constraints,
                             "variance_factor": Real(low=0.0, low_open=True), "holdout_every": Integer(low=2)}

    def __init__(self, irt: IRTModel | None = None, n_init: int = 1, kmeans_max_iter: int = 300,
                 variance_factor: float = 4.0, holdout_every: int = 5):
        super().__init__(irt=irt, n_init=n_init, kmeans_max_iter=kmeans_max_iter)
        self.variance_factor = variance_factor
        self.holdout_every = holdout_every

    def gp_stats(self, prepared: TinyPrepared) -> tuple[float, float]:
        """(B, V): held-out IRT error of the sources and mean 0/1 variance, cached."""
        self.validate_params()
        key = self.holdout_every
        if key not in prepared.gp_stats:
            Y = prepared.source_correct
            if len(Y) < 3 or Y.shape[1] < 2:
                raise SelectorError(
                    f"{self.name}: gp-IRT needs at least 3 sources and 2 seen items to measure "
                    f"the IRT bias on held-out sources, got {Y.shape[0]} x {Y.shape[1]}"
                )
            acc = np.nanmean(Y, axis=1)
            prepared.gp_stats[key] = (self._heldout_bias(Y, key), float(np.mean(acc * (1 - acc))))
        return prepared.gp_stats[key]

    def _heldout_bias(self, Y: np.ndarray, every: int) -> float:
        """Mean |predicted - observed accuracy| of held-out sources on unobserved items.

        Every ``every``-th source is left out of a second IRT fit; its ability is fitted
        on the even-numbered seen items and its accuracy on the odd-numbered ones is
        predicted. Sources are a random draw, so a fixed stride is a random hold-out.
        """
        held = np.zeros(len(Y), dtype=bool)
        held[::every] = True
        model = self._fit(Y[~held])
        observed = np.arange(0, Y.shape[1], 2)
        hidden = np.arange(1, Y.shape[1], 2)
        theta = model.fit_abilities(Y[np.ix_(held, observed)], observed)
        predicted = model.predict_proba(theta, hidden).mean(axis=1)
        actual = np.nanmean(Y[np.ix_(held, hidden)], axis=1)
        return float(np.mean(np.abs(predicted - actual)))

    def _lambda(self, prepared: TinyPrepared, k: int) -> float:
        bias, variance = self.gp_stats(prepared)
        return gp_lambda(bias, variance, k, self.variance_factor)
