"""Anchor Points (Vivek et al., 2024, as used by Yauney et al., 2025): k-medoids on item-item correlation.

Items whose source confidences rise and fall together are interchangeable for ranking
models, so one medoid per cluster stands for the cluster, weighted by its size.
``anchor_points`` reads the target's confidence on the medoids (as the paper does);
``anchor_points_binary`` picks the same items and weights but reads 0/1 correctness.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

import numpy as np

from mbutils.base.errors import SelectorError
from mbutils.base.validation import Boolean, Integer, OneOf
from mbutils.methods import medoid_store
from mbutils.methods.selectors.base import MicroBenchmark, Selector, SourceData
from mbutils.methods.selectors.registry import register

DTYPES = ("float64", "float32")
INITS = ("random", "build")


def item_correlation(proxy: np.ndarray, dtype="float64") -> np.ndarray:
    """Pearson correlation between items (columns of sources x items) in one BLAS product.

    Columns are standardised (population std) and multiplied, Z.T @ Z / n_sources. An item
    that is constant over the sources has no defined correlation; it is given
    correlation 0 with every other item and 1 with itself, so it forms its own cluster
    instead of poisoning the matrix with NaN (the reference code's behaviour).
    The result is exactly symmetric (the product is computed as a symmetric rank update).
    """
    proxy = np.asarray(proxy)
    if proxy.ndim != 2 or proxy.shape[0] < 1:
        raise SelectorError("item correlation needs a sources x items matrix with at least one source")
    if not np.isfinite(proxy).all():
        raise SelectorError("item correlation: source data contain missing or infinite values")
    n_sources = proxy.shape[0]
    z = proxy - proxy.mean(axis=0)
    scale = np.sqrt((z * z).sum(axis=0))  # std * sqrt(n): folds the 1/n into the columns
    constant = scale <= 1e-12 * np.sqrt(n_sources)
    z /= np.where(constant, 1.0, scale)
    z[:, constant] = 0.0
    z = z.astype(dtype, copy=False)
    corr = z.T @ z
    np.clip(corr, -1.0, 1.0, out=corr)
    np.fill_diagonal(corr, 1.0)
    return corr


#: Largest dissimilarity matrix Anchor Points builds (bytes): 4 GB, about 31,600 items in float32.
MAX_MATRIX_BYTES = 4_000_000_000

@dataclass
class AnchorPrepared:
    """Dissimilarity 1 - correlation between seen items (symmetric, zero diagonal), and a memo.

    ``medoids_by_size`` is filled by :meth:`AnchorPoints.select`: (medoids, weights) per size,
    so the 0/1 variant sharing this run's preparation does not run FasterPAM a second time.
    It is state, deliberately: with ``warm_start`` a size starts from the medoids of the
    largest smaller size already in the memo, so a size's medoids depend on the sizes
    selected before it on this preparation. The experiment engine selects a run's sizes in
    ascending order, which makes every run's chain of warm starts the same. Clusterings of
    large matrices are also kept in the cache by content (``mbutils.methods.medoid_store``),
    for other experiments on the same sources.
    """

    dissimilarity: np.ndarray
    medoids_by_size: dict = field(default_factory=dict, repr=False)
    _digest: str | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def n_items(self) -> int:
        return self.dissimilarity.shape[0]

    def digest(self) -> str:
        """The dissimilarity matrix's content hash (computed once): the key of its stored clusterings."""
        if self._digest is None:
            self._digest = medoid_store.matrix_digest(self.dissimilarity)
        return self._digest


@register(roles=("paper", "auto"))
class AnchorPoints(Selector):
    """Anchor Points (the paper's): k medoids of the items under 1 - correlation of source confidences.

    Items whose source confidences rise and fall together are interchangeable for ranking
    models, so one medoid per cluster stands for the cluster, weighted by its size; the
    estimate reads the target's confidence on the medoids (as the paper does).
    Registered as ``"anchor_points"``.

    Correlations use each source's confidence on the gold answer, or its 0/1
    correctness when the bundle has none (see ``mbutils.methods.selectors.anchor.item_correlation``
    for constant items). The dissimilarity is built once per run in
    :meth:`~mbutils.Selector.prepare` (N^2 values of ``dtype``). The default float32 halves
    the matrix (145 MB at 6,012 items against 289 MB in float64) and FasterPAM runs about
    1.5x faster on it (``benchmarks/bench_anchor.py``);
    in our checks (15 runs and sizes of 1,500 items) it picked exactly the medoids of
    float64, whose correlations differ from it by about 1e-7.

    Medoids come from FasterPAM (``kmedoids.fasterpam``), single-threaded by default so
    results do not depend on the machine (``n_cpu > 1`` uses the parallel variant, whose
    result depends on ``n_cpu``). Where FasterPAM starts:

    - the smallest size of a run starts from ``init``: "random" medoids as in the
      reference code (seeded from the run's generator), or the deterministic "build",
      which costs O(N^2 k) and takes minutes at 6,012 items for k >= 50;
    - with ``warm_start`` (the default) every larger size of the run starts from the
      medoids of the largest smaller size already clustered, plus new ones drawn by
      k-medoids++ seeding (probability proportional to the squared dissimilarity to the
      nearest medoid). That is as valid a start as a random one and needs fewer swap
      passes over the N x N matrix (about 1.4x faster over the paper's sizes at 6,016
      items, see ``benchmarks/bench_anchor.py``); a size's medoids then depend on the
      smaller sizes clustered before it in the run. ``warm_start=False`` starts every
      size from ``init``, as the reference code does.

    Every item then joins its most-correlated medoid (the first one on ties), a medoid
    always joins itself, and a medoid's weight is its cluster size / N.
    The estimate reads the target's confidence on the medoids (0/1 without confidences).

    Parameters
    ----------
    init : {"random", "build"}, default "random"
        FasterPAM's start for the smallest size of a run (see above).
    max_iter : int, default 100
        Maximum FasterPAM swap passes, at least 1.
    dtype : {"float32", "float64"}, default "float32"
        Precision of the N x N dissimilarity matrix.
    n_cpu : int, default 1
        FasterPAM's threads; more than 1 uses the parallel variant, whose result depends on
        ``n_cpu``.
    warm_start : bool, default True
        Start every larger size of a run from the medoids of the largest smaller size (see
        above); False starts every size from ``init``, as the reference code does.

    Examples
    --------
    >>> import numpy as np
    >>> from mbutils import AnchorPoints, SourceData
    >>> rng = np.random.default_rng(0)
    >>> conf = rng.random((30, 80))  # 30 sources x 80 seen items
    >>> source = SourceData(conf > 0.5, np.zeros(80, dtype=int), confidence=conf)
    >>> selector = AnchorPoints()
    >>> micro = selector.select(selector.prepare(source, rng), 10, rng)
    >>> micro.size, micro.reads, round(float(micro.weights.sum()), 9)  # cluster shares
    (10, 'confidence', 1.0)
    >>> AnchorPoints(warm_start=False).get_params()
    {'init': 'random', 'max_iter': 100, 'dtype': 'float32', 'n_cpu': 1, 'warm_start': False}
    """

    name = "anchor_points"
    uses_confidence = True
    reads = "confidence"

    parameter_constraints = {"init": OneOf(INITS), "max_iter": Integer(low=1), "dtype": OneOf(DTYPES),
                             "n_cpu": Integer(low=1), "warm_start": Boolean()}

    def __init__(self, init: str = "random", max_iter: int = 100, dtype: str = "float32", n_cpu: int = 1,
                 warm_start: bool = True):
        self.init = init
        self.max_iter = max_iter
        self.dtype = dtype
        self.n_cpu = n_cpu
        self.warm_start = warm_start

    def prepare(self, source: SourceData, rng: np.random.Generator) -> AnchorPrepared:
        """1 - correlation, turned into a dissimilarity in place (no second N x N copy)."""
        self.validate_params()
        n, itemsize = source.n_items, np.dtype(self.dtype).itemsize
        if n * n * itemsize > MAX_MATRIX_BYTES:
            raise SelectorError(f"{self.name} on {n:,} seen items needs a {n:,} x {n:,} dissimilarity matrix "
                                f"({n * n * itemsize / 1e9:.1f} GB in {self.dtype}), more than the "
                                f"{MAX_MATRIX_BYTES / 1e9:.0f} GB it may take; run it on a subset of the items")
        dissimilarity = item_correlation(source.proxy, self.dtype)
        np.subtract(1.0, dissimilarity, out=dissimilarity)  # diagonal becomes exactly 0
        return AnchorPrepared(dissimilarity)

    def shared_key(self) -> str:
        return f"anchor_points|{self.init}|{self.max_iter}|{self.dtype}|{self.n_cpu}|{self.warm_start}"

    def select(self, prepared: AnchorPrepared, k: int, rng: np.random.Generator) -> MicroBenchmark:
        n_items = prepared.n_items
        self.check_size(k, n_items)
        if k not in prepared.medoids_by_size:
            prepared.medoids_by_size[k] = self._medoids(prepared, k, rng)
        medoids, weights = prepared.medoids_by_size[k]
        return MicroBenchmark(items=medoids, weights=weights, reads=self.reads)

    def _medoids(self, prepared: AnchorPrepared, k: int, rng: np.random.Generator):
        kmedoids = import_kmedoids()
        n_items = prepared.n_items
        seed = int(rng.integers(0, 2**31 - 1))
        smaller = [size for size in prepared.medoids_by_size if size < k] if self.warm_start else []
        if smaller:  # a warm start: the given medoids (FasterPAM ignores init and draws nothing)
            start = extend_medoids(prepared.dissimilarity, prepared.medoids_by_size[max(smaller)][0], int(k), rng)
            params, random_state = {"start": start.tolist(), "max_iter": self.max_iter}, None
        else:
            start = int(k)
            params, random_state = {"k": start, "init": self.init, "seed": seed, "max_iter": self.max_iter}, seed

        def run():
            return kmedoids.fasterpam(prepared.dissimilarity, start, max_iter=self.max_iter, init=self.init,
                                      random_state=random_state, n_cpu=self.n_cpu).medoids

        # the parallel variant's result depends on its threads: never stored
        found = medoid_store.medoids(prepared.digest, n_items, int(k), params, run) if self.n_cpu == 1 else run()
        medoids = np.sort(np.asarray(found, dtype=np.int64))
        members = assign_to_medoids(prepared.dissimilarity, medoids)
        weights = np.bincount(members, minlength=len(medoids)) / float(n_items)
        return medoids, weights


def import_kmedoids():
    """The ``kmedoids`` package, imported without scikit-learn when that is not loaded yet.

    ``kmedoids`` imports scikit-learn only to give its ``KMedoids`` estimator scikit-learn's base
    classes, and falls back to plain ``object`` when the import fails. FasterPAM needs neither,
    and scikit-learn costs over a second of CPU in every process that runs Anchor Points (each
    worker of an experiment, each chapter's kernel). So the import is made with scikit-learn
    marked absent, under the interpreter's import lock, so that no other thread sees it absent.
    Where scikit-learn is already loaded, the plain import is used.
    """
    if "kmedoids" in sys.modules or "sklearn" in sys.modules:
        import kmedoids

        return kmedoids
    import _imp

    _imp.acquire_lock()
    try:
        sys.modules["sklearn"] = None  # ``import sklearn...`` raises ImportError while this is set
        try:
            import kmedoids
        finally:
            del sys.modules["sklearn"]
    finally:
        _imp.release_lock()
    return kmedoids


def extend_medoids(dissimilarity: np.ndarray, medoids: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """``medoids`` plus ``k - len(medoids)`` new ones by k-medoids++ seeding.

    Each new medoid is drawn with probability proportional to the squared dissimilarity
    of an item to its nearest medoid so far, so items identical to a medoid are never
    drawn; when every item left is identical to a medoid, the rest are drawn uniformly.
    One O(N) update per new medoid (the draw is sequential by definition).
    """
    medoids = [int(m) for m in medoids]
    n_items = dissimilarity.shape[0]
    nearest = np.min(dissimilarity[medoids], axis=0).astype(np.float64)
    np.maximum(nearest, 0.0, out=nearest)
    nearest[medoids] = 0.0
    while len(medoids) < k:
        weight = nearest * nearest
        total = weight.sum()
        if total > 0:
            new = int(rng.choice(n_items, p=weight / total))
        else:
            free = np.setdiff1d(np.arange(n_items), medoids)
            new = int(rng.choice(free))
        medoids.append(new)
        np.minimum(nearest, dissimilarity[new], out=nearest)
        nearest[new] = 0.0
    return np.asarray(medoids, dtype=np.uintp)


def assign_to_medoids(dissimilarity: np.ndarray, medoids: np.ndarray) -> np.ndarray:
    """Cluster of each item: its least dissimilar (most correlated) medoid, first on ties.

    A medoid is put in its own cluster even when another medoid is just as close (items
    with identical source data), so no cluster is empty and weights stay positive.
    """
    members = np.argmin(dissimilarity[medoids], axis=0)
    members[medoids] = np.arange(len(medoids))
    return members


@register
class AnchorPointsBinary(AnchorPoints):
    """Anchor Points with the same items and weights, estimated from target 0/1 correctness.

    The paper's Anchor Points is the only method that reads target confidences; this
    variant isolates the effect of the item choice from that of the richer target data.
    In an experiment it shares the run's preparation and random stream with
    :class:`AnchorPoints` of the same parameters, so both choose identical medoids.
    Registered as ``"anchor_points_binary"``.

    Parameters
    ----------
    init, max_iter, dtype, n_cpu, warm_start
        As in :class:`AnchorPoints`.

    Examples
    --------
    >>> import numpy as np
    >>> from mbutils import AnchorPoints, AnchorPointsBinary, SourceData
    >>> rng = np.random.default_rng(0)
    >>> conf = rng.random((30, 80))
    >>> source = SourceData(conf > 0.5, np.zeros(80, dtype=int), confidence=conf)
    >>> prepared = AnchorPoints().prepare(source, rng)
    >>> soft = AnchorPoints().select(prepared, 10, np.random.default_rng(1))
    >>> hard = AnchorPointsBinary().select(prepared, 10, np.random.default_rng(1))
    >>> hard.reads, bool((hard.items == soft.items).all())
    ('correct', True)
    >>> AnchorPointsBinary().shared_key() == AnchorPoints().shared_key()
    True
    """

    name = "anchor_points_binary"
    reads = "correct"
