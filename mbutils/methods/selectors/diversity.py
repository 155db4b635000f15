"""Diversity: a projection DPP over the items' confidence profiles (Yauney et al., 2025, section "Diversity").

Each seen item is a point whose coordinates are the sources' confidences on it (0/1
correctness when the bundle has none). Once per run (:meth:`Diversity.prepare`):

1. **PCA** to ``n_components`` (4) dimensions, fitted on this run's seen items.
2. **Trim** items outside the per-dimension ``[trim, 1 - trim]`` quantile box (1%-99%);
   the rest are the *candidates*.
3. **Rescale** each dimension to ``[-scale, scale]`` (``[-0.99, 0.99]``) by its min and max
   over the candidates.

For a size ``k`` the items are an exact draw of the projection DPP ``K = Q Q^T`` where
``Q`` is an orthonormal basis (thin QR) of the first ``k`` multivariate monomials in the
features: the discrete multivariate orthogonal-polynomial ensemble, or "DPP coreset", of
Bardenet & Hardy and Tremblay et al. (the reference code calls it ``draw_discrete_OPE``).

**Order of the monomials.** ``order="max"`` (default, the reference's) sorts the
exponent vectors ``a`` by their largest entry (the layers of a growing hypercube, as in
Bardenet & Hardy's multivariate Jacobi ensemble), lexicographically within a layer
(first coordinate, i.e. the first principal component, most significant; the order of
``itertools.product``). ``order="total"`` sorts by total degree, lexicographically
within a degree. Where ``k`` cuts a layer this choice changes which monomials are in.

**Numerical stability.** Raw monomials are badly conditioned (x^5 and x^7 look alike on
[-1, 1]). We use tensor products of Chebyshev polynomials ``T_a(x) = prod_j T_{a_j}(x_j)``
in the same order. ``T_a`` is ``x^a`` (times a constant) plus monomials ``x^c`` with
``c <= a`` entrywise, ``c != a``, and both orders list every such ``c`` before ``a``
(smaller largest entry or total degree, or the same layer and lexicographically
smaller). So every prefix of the Chebyshev list spans the same space as the same prefix
of monomials: the projection kernel is identical in exact arithmetic, only computed
stably. Columns are scaled to unit norm and orthonormalised block by block (below).

**One basis for all sizes.** If ``B = Q R`` with ``R`` upper triangular then
``B[:, :k] = Q[:, :k] R[:k, :k]``: the first ``k`` columns of ``Q`` are an orthonormal
basis of the first ``k`` polynomials for every ``k`` (when ``R[:k, :k]`` is
nonsingular). So one basis per run serves every size by slicing. It is grown on demand
in blocks of doubling width (32, 64, 128, ...): each block of new columns is projected
twice onto the complement of the earlier ones (block Gram-Schmidt with
reorthogonalisation, matrix products only) and then QR-factorised; earlier columns never
change. The numbers a size sees therefore do not depend on which sizes were asked for
before, and a run that only needs small sizes never pays for a wide basis.

**Rank.** ``|R_jj|`` (unit-norm columns) is the distance of polynomial ``j`` from the span
of the earlier ones. If it is below ``RANK_RTOL`` for some ``j < k`` (few distinct
feature vectors, e.g. 0/1 data from few sources, or points on an algebraic curve), the
first ``k`` polynomials do not span ``k`` dimensions on the candidates and a projection
DPP of rank ``k`` does not exist: :class:`SelectorError` says so (the reference code
silently samples from an arbitrary completion of the basis).

Estimates (both read target 0/1 correctness):

* ``diversity`` (the paper's): plain mean over the ``k`` items (weights ``1/k``).
* ``diversity_weighted``: Horvitz-Thompson weights ``1 / (N K_ii)``, ``N`` the number of
  candidates. The DPP includes item ``i`` with probability ``K_ii``, so
  ``E[sum_{i in S} f_i / K_ii] = sum_i K_ii f_i / K_ii = sum_i f_i``: the estimate is
  unbiased for the target's mean over the *candidates* (not over all seen items: items
  outside the quantile box, up to ``2 * trim`` of them per dimension, are never drawn).
  The weights sum to one only in expectation (``E[sum_S 1/(N K_ii)] = 1``), so an
  estimate can exceed 1. ``normalize=True`` rescales
  them to sum to one (the ratio, or Hajek, estimator: always in [0, 1], slightly biased);
  the paper computes these normalised weights but does not use them.
"""

from __future__ import annotations

from math import comb

import numpy as np
import scipy.linalg

from mbutils.methods.dpp import inclusion_probabilities, sample_projection_dpp
from mbutils.base.errors import SelectorError
from mbutils.base.validation import Boolean, Integer, OneOf, Real
from mbutils.methods.selectors.base import MicroBenchmark, Selector, SourceData
from mbutils.methods.selectors.registry import register

ORDERS = ("max", "total")
#: A polynomial whose distance from the span of the earlier ones (unit-norm columns) is
#: below this is treated as dependent on them.
RANK_RTOL = 1e-10
#: Principal components with variance below this fraction of the first one are noise.
_PCA_RTOL = 1e-10
#: Width of the first block of the polynomial basis (then 64, 128, ...).
_FIRST_WIDTH = 32


# --------------------------------------------------------------------------- features
def pca_scores(X: np.ndarray, n_components: int) -> np.ndarray:
    """Scores of the rows of ``X`` (items x sources) on the leading principal components.

    Eigen-decomposition of the sources x sources scatter matrix of the centred data
    (deterministic, unlike the reference's randomised SVD). Components with negligible
    variance are dropped, so fewer than ``n_components`` columns may come back. Signs
    are arbitrary; nothing downstream depends on them (the quantile box and the
    rescaling are symmetric and the polynomial spaces are invariant under x -> -x).
    """
    Xc = X - X.mean(axis=0)
    m = Xc.shape[1]
    c = min(int(n_components), m, Xc.shape[0])
    if c == 0:
        return np.zeros((Xc.shape[0], 0))
    vals, vecs = scipy.linalg.eigh(Xc.T @ Xc, subset_by_index=[m - c, m - 1])
    vals, vecs = vals[::-1], vecs[:, ::-1]
    keep = vals > _PCA_RTOL * max(vals[0], 0.0)
    return Xc @ vecs[:, keep]


def trim_and_rescale(scores: np.ndarray, trim: float, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """Candidates inside the per-dimension quantile box, rescaled to ``[-scale, scale]``.

    Returns (indices of the kept rows, their features). A dimension that is constant on
    the kept rows carries no information and is dropped (the reference divides by zero).
    With a handful of items each can be extreme in some dimension, so the box may hold none:
    then every item is a candidate (there is nothing to trim).
    """
    if scores.shape[1] == 0:
        return np.arange(len(scores)), scores
    low, high = np.quantile(scores, [trim, 1.0 - trim], axis=0)
    keep = np.flatnonzero(np.all((scores >= low) & (scores <= high), axis=1))
    if len(keep) == 0:
        keep = np.arange(len(scores))
    return keep, box_coordinates(scores, keep, scale)[keep]


def box_coordinates(scores: np.ndarray, keep: np.ndarray, scale: float) -> np.ndarray:
    """Every item in the rescaled coordinates of the candidates' box, an item outside it clipped
    onto its edge (the candidates' own rows are exactly their features): the DPP's view of the
    seen items, for pictures that must show what the selector saw."""
    if scores.shape[1] == 0:
        return scores
    kept = scores[keep]
    lo, hi = kept.min(axis=0), kept.max(axis=0)
    spread = scores.max(axis=0) - scores.min(axis=0)
    varies = (hi - lo) > 1e-9 * spread
    clipped = np.clip(scores[:, varies], lo[varies], hi[varies])
    return scale * (2.0 * (clipped - lo[varies]) / (hi[varies] - lo[varies]) - 1.0)


# --------------------------------------------------------------------------- polynomial basis
def graded_exponents(n_terms: int, n_dims: int, order: str = "max") -> np.ndarray:
    """The first ``n_terms`` exponent vectors (rows) in graded order.

    ``order="max"``: by largest entry, then lexicographically (the reference's order);
    ``order="total"``: by total degree, then lexicographically. With ``n_dims = 0`` only
    the constant exists, so at most one row comes back.
    """
    if order not in ORDERS:
        raise SelectorError(f"unknown monomial order {order!r}; choose from {', '.join(ORDERS)}")
    if n_dims == 0:
        return np.zeros((min(n_terms, 1), 0), dtype=np.int64)
    top = 0
    count = (lambda L: (L + 1) ** n_dims) if order == "max" else (lambda L: comb(L + n_dims, n_dims))
    while count(top) < n_terms:
        top += 1
    grid = np.indices((top + 1,) * n_dims).reshape(n_dims, -1).T  # lexicographic rows
    layer = grid.max(axis=1) if order == "max" else grid.sum(axis=1)
    grid, layer = grid[layer <= top], layer[layer <= top]
    return grid[np.argsort(layer, kind="stable")][:n_terms]


def chebyshev_design(features: np.ndarray, exponents: np.ndarray) -> np.ndarray:
    """Items x terms matrix of ``prod_j T_{a_j}(x_j)`` (Chebyshev polynomials of the first kind)."""
    n, d = features.shape
    top = int(exponents.max(initial=0))
    T = np.empty((d, top + 1, n))
    T[:, 0] = 1.0
    if top >= 1:
        T[:, 1] = features.T
    for deg in range(2, top + 1):
        T[:, deg] = 2.0 * features.T * T[:, deg - 1] - T[:, deg - 2]
    design = np.ones((n, len(exponents)))
    for j in range(d):
        design *= T[j, exponents[:, j]].T
    return design


def extend_basis(Q: np.ndarray, independence: np.ndarray, features: np.ndarray, width: int, order: str):
    """Grow an orthonormal polynomial basis to the first ``width`` graded polynomials.

    The new Chebyshev columns are scaled to unit norm, projected twice onto the
    complement of ``Q`` (block classical Gram-Schmidt with reorthogonalisation, BCGS2:
    matrix products only) and orthonormalised by a Householder QR. Earlier columns are
    never changed. Returns the grown ``(Q, independence)``; ``independence[j]`` is the
    distance of unit-norm polynomial ``j`` from the span of the earlier ones (|R_jj| of a
    QR of the whole design). Fewer than ``width`` columns exist when there are fewer
    polynomials (only the constant when there are no feature dimensions).
    """
    exponents = graded_exponents(width, features.shape[1], order)[Q.shape[1]:]
    if len(exponents) == 0:
        return Q, independence
    new = chebyshev_design(features, exponents)
    norms = np.linalg.norm(new, axis=0)
    new /= np.where(norms > 0, norms, 1.0)  # a polynomial vanishing on every item stays 0
    if Q.shape[1]:
        for _ in range(2):
            new -= Q @ (Q.T @ new)
    Q_new, R_new = np.linalg.qr(new)
    return np.hstack([Q, Q_new]), np.concatenate([independence, np.abs(np.diag(R_new))])


def _widths(n_max: int):
    """Basis widths 32, 64, 128, ... capped at ``n_max``: the sizes one QR block covers."""
    width = _FIRST_WIDTH
    while width < n_max:
        yield width
        width *= 2
    yield n_max


def _grow(Q: np.ndarray, independence: np.ndarray, features: np.ndarray, k: int, order: str):
    """Extend the basis block by block (widths 32, 64, ...) until it has ``k`` columns."""
    for width in _widths(len(features)):
        if Q.shape[1] >= k:
            break
        if width > Q.shape[1]:
            grown, grown_independence = extend_basis(Q, independence, features, width, order)
            if grown.shape[1] == Q.shape[1]:  # no more polynomials exist
                break
            Q, independence = grown, grown_independence
    return Q, independence


def orthonormal_polynomials(features: np.ndarray, n_terms: int, order: str = "max"):
    """Orthonormal basis (items x terms) of the first ``n_terms`` graded polynomials.

    Returns ``(Q, independence)`` (see :func:`extend_basis`); the basis is built in
    blocks of doubling width exactly as :class:`DiversityState` builds it.
    """
    n = len(features)
    Q, independence = _grow(np.zeros((n, 0)), np.zeros(0), features, int(n_terms), order)
    return Q[:, :n_terms], independence[:n_terms]


class DiversityState:
    """One run's candidates and features, with the polynomial basis grown on demand.

    The basis is shared by all sizes of the run: it grows in blocks of doubling width
    (32, 64, 128, ..., capped at the number of candidates) up to the largest size asked
    for, and its first ``k`` columns serve size ``k``. Earlier columns never change, so
    every size gets the same numbers whatever order sizes are asked for in.
    """

    def __init__(self, candidates, features, n_seen: int, order: str, scores=None, scale: float = 0.99):
        self.candidates = np.asarray(candidates, dtype=np.int64)
        self.features = np.asarray(features, dtype=np.float64)
        self.n_seen = int(n_seen)
        self.order = order
        #: the principal-component scores of every seen item, before trimming (for pictures)
        self.scores = None if scores is None else np.asarray(scores, dtype=np.float64)
        self.scale = float(scale)
        self._Q = np.zeros((len(self.candidates), 0))
        self._independence = np.zeros(0)

    @property
    def n_candidates(self) -> int:
        return len(self.candidates)

    @property
    def width(self) -> int:
        """Number of basis columns computed so far."""
        return self._Q.shape[1]

    def basis(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Orthonormal basis of the first ``k`` polynomials and their independence values."""
        self._Q, self._independence = _grow(self._Q, self._independence, self.features, k, self.order)
        return self._Q[:, :k], self._independence[:k]


# --------------------------------------------------------------------------- selectors
@register(roles=("paper", "auto"))
class Diversity(Selector):
    """The paper's Diversity method: items spread over the sources' view of them (a projection DPP), plain mean.

    Each seen item is a point whose coordinates are the sources' confidences on it (0/1
    correctness without confidences). Once per run, :meth:`~mbutils.Selector.prepare` projects the items on
    their first ``n_components`` principal components, keeps the *candidates* inside the
    per-dimension ``[trim, 1 - trim]`` quantile box and rescales each dimension to
    ``[-scale, scale]``. For a size k the items are an exact draw of the projection DPP
    whose kernel projects onto the first k multivariate polynomials of the features (the
    discrete orthogonal-polynomial ensemble, or "DPP coreset", of Bardenet & Hardy and
    Tremblay et al.), computed stably with Chebyshev polynomials. When the candidates
    support only r < k such polynomials (few distinct feature vectors), r items come from
    the DPP and k - r uniformly from the other seen items. The estimate is the plain mean
    of the target's 0/1 correctness (see ``mbutils.methods.selectors.diversity`` for the details).
    Registered as ``"diversity"``.

    Parameters
    ----------
    n_components : int, default 4
        Principal components the items are described by (fewer when the data have fewer
        non-negligible ones).
    trim : float, default 0.01
        Quantile cut per side and dimension, in [0, 0.5): the items outside the box are never
        drawn.
    scale : float, default 0.99
        Half-width of the rescaled box, in (0, 1].
    order : {"max", "total"}, default "max"
        Order of the monomials: by largest exponent (the reference's), or by total degree;
        where k cuts a layer, this changes which polynomials are in.

    Examples
    --------
    >>> import numpy as np
    >>> from mbutils import Diversity, SourceData
    >>> rng = np.random.default_rng(0)
    >>> conf = rng.random((30, 80))  # 30 sources x 80 seen items
    >>> source = SourceData(conf > 0.5, np.zeros(80, dtype=int), confidence=conf)
    >>> selector = Diversity()
    >>> state = selector.prepare(source, rng)
    >>> micro = selector.select(state, 10, rng)
    >>> micro.size, len(set(micro.items.tolist())), bool(np.allclose(micro.weights, 0.1))
    (10, 10, True)
    """

    name = "diversity"
    uses_confidence = True
    parameter_constraints = {"n_components": Integer(low=1), "trim": Real(low=0.0, high=0.5, high_open=True),
                             "scale": Real(low=0.0, high=1.0, low_open=True), "order": OneOf(ORDERS)}

    def __init__(
        self,
        n_components: int = 4,
        trim: float = 0.01,
        scale: float = 0.99,
        order: str = "max",
    ):
        self.n_components = n_components
        self.trim = trim
        self.scale = scale
        self.order = order

    def prepare(self, source: SourceData, rng: np.random.Generator) -> DiversityState:
        """PCA, trimming and rescaling of the seen items (deterministic; ``rng`` unused)."""
        self.validate_params()
        proxy = source.checked_proxy(self.name)
        scores = pca_scores(proxy.T, self.n_components)
        candidates, features = trim_and_rescale(scores, self.trim, self.scale)
        return DiversityState(candidates, features, proxy.shape[1], self.order, scores=scores, scale=self.scale)

    def shared_key(self) -> str:
        return f"diversity|{self.n_components}|{self.trim}|{self.scale}|{self.order}"

    def select(self, prepared: DiversityState, k: int, rng: np.random.Generator) -> MicroBenchmark:
        """A DPP sample of size k; when the data support only r < k, r by the DPP plus k - r at random.

        Items with identical source profiles make the polynomial kernel rank-deficient
        (on GPQA's 0/1 data with few sources, often below k = 200). The reference code
        samples anyway from a broken kernel; we sample the exact DPP of the largest size r
        the candidates support and fill the other k - r items uniformly from the rest of
        the seen items. The estimate then mixes the two parts in proportion r : k - r.
        """
        self.check_size(k, prepared.n_seen)
        k = int(k)
        r = self.dpp_size(prepared, k)
        Q, _ = prepared.basis(r)
        picked = np.sort(sample_projection_dpp(Q, rng))
        items = prepared.candidates[picked]
        weights = self._weights(Q[picked], prepared.n_candidates) * (r / k)
        if r < k:
            rest = np.setdiff1d(np.arange(prepared.n_seen), items)
            fill = rng.choice(rest, size=k - r, replace=False)
            items = np.concatenate([items, fill])
            weights = np.concatenate([weights, np.full(k - r, 1.0 / k)])
            order = np.argsort(items)
            items, weights = items[order], weights[order]
        return MicroBenchmark(items, weights, reads="correct")

    def _weights(self, rows: np.ndarray, n_candidates: int) -> np.ndarray:
        return np.full(len(rows), 1.0 / len(rows))

    @staticmethod
    def dpp_size(prepared: DiversityState, k: int) -> int:
        """Largest r <= k whose first r graded polynomials are independent on the candidates."""
        _, independence = prepared.basis(min(k, prepared.n_candidates))
        dependent = np.flatnonzero(~(independence > RANK_RTOL))
        return int(dependent[0]) if dependent.size else len(independence)


@register
class DiversityWeighted(Diversity):
    """Diversity's items with the DPP's Horvitz-Thompson weights: an estimate unbiased over the candidates.

    The same items as :class:`Diversity` (same parameters, same draw); each chosen item
    weighs ``1 / (N K_ii)``, where ``N`` is the number of candidates and ``K_ii`` the DPP's
    probability of including the item. The estimate is then unbiased for the target's mean
    over the candidates (not over all seen items: items outside the quantile box are never
    drawn). The weights sum to one only in expectation, so an estimate can exceed 1.
    Registered as ``"diversity_weighted"``.

    Parameters
    ----------
    n_components, trim, scale, order
        As in :class:`Diversity`.
    normalize : bool, default False
        Rescale the weights to sum to one (the ratio, or Hajek, estimator: always in [0, 1],
        slightly biased); the paper computes these normalised weights but does not use them.

    Examples
    --------
    >>> import numpy as np
    >>> from mbutils import DiversityWeighted, SourceData
    >>> rng = np.random.default_rng(0)
    >>> conf = rng.random((30, 80))  # 30 sources x 80 seen items
    >>> source = SourceData(conf > 0.5, np.zeros(80, dtype=int), confidence=conf)
    >>> selector = DiversityWeighted(normalize=True)
    >>> micro = selector.select(selector.prepare(source, rng), 10, rng)
    >>> micro.size, round(float(micro.weights.sum()), 9)
    (10, 1.0)
    """

    name = "diversity_weighted"
    parameter_constraints = {**Diversity.parameter_constraints, "normalize": Boolean()}

    @property
    def weights_sum_to_one(self) -> bool:
        """Inverse-inclusion weights sum to 1 only when normalised (Hajek); plain ones are Horvitz-Thompson's."""
        return bool(self.normalize)

    def __init__(
        self,
        n_components: int = 4,
        trim: float = 0.01,
        scale: float = 0.99,
        order: str = "max",
        normalize: bool = False,
    ):
        super().__init__(n_components, trim, scale, order)
        self.normalize = normalize

    def _weights(self, rows: np.ndarray, n_candidates: int) -> np.ndarray:
        weights = 1.0 / (n_candidates * inclusion_probabilities(rows))
        return weights / weights.sum() if self.normalize else weights
