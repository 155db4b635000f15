"""Exact sampling of projection determinantal point processes (DPPs).

A projection DPP on ``n`` items with kernel ``K = Q Q^T`` (``Q``: n x k with orthonormal
columns) always draws exactly ``k`` distinct items; a k-subset ``S`` has probability
``det(K_S)`` and item ``i`` is included with probability ``K_ii = ||Q_i||^2``.

The sampler follows the chain rule (Hough, Krishnapur, Peres & Virag 2006): pick item
``i`` with probability ``||r_i||^2 / (k - t)``, where ``r_i`` is row ``i`` of ``Q``
projected onto the orthogonal complement of the rows chosen so far, then project once
more. Done naively, every step updates all ``n x k`` numbers (a memory-bound rank-one
update per draw; see benchmarks/bench_dpp.py for the cost). Here the projections are
applied in blocks:

* At the start of a block with ``m = k - t`` directions left, every row is expressed in
  an orthonormal basis of the remaining ``m``-dimensional complement (``W``, n x m), so
  its residual norm ``d_i = ||W_i||^2`` is exact, not a difference of squares.
* Inside the block, residual norms only shrink, so an item can be drawn with
  probability proportional to its *current* residual by **rejection**: propose ``i``
  with probability ``d_i / m`` (the block-start norms) and accept it with probability
  ``||current residual of W_i||^2 / d_i``. The accepted item has exactly the chain-rule
  distribution; only the proposed row is projected (O(m b) work), never all ``n``.
* The block has ``b = ceil(m / 2)`` steps, so the acceptance rate stays at least 1/2.
  At its end one matrix product ``W <- W C`` (``C``: orthonormal basis of the complement
  of the block's directions) brings every row up to date; the dimension halves, so the
  products cost about (2/3) n k^2 flops in all, done by BLAS-3.
* The last few draws (and small problems) use the plain chain rule, which updates all
  rows after every draw: cheap when few directions are left, and no Python overhead.
"""

from __future__ import annotations

import numpy as np

from mbutils.base.errors import SelectorError

#: Column norms of ``Q`` must be 1 within this tolerance (``Q`` comes from a QR).
_NORM_TOL = 1e-6
#: Below this many remaining draws the plain chain rule is cheaper than a block.
_DIRECT_BELOW = 16


def _check_basis(Q) -> np.ndarray:
    """``Q`` as a float array, n x k with k <= n and finite entries; raise otherwise."""
    Q = np.asarray(Q, dtype=np.float64)
    if Q.ndim != 2:
        raise SelectorError(f"a projection DPP needs an n x k matrix, got shape {Q.shape}")
    n, k = Q.shape
    if k > n:
        raise SelectorError(f"a projection DPP of rank {k} needs at least {k} items, got {n}")
    if not np.isfinite(Q).all():
        raise SelectorError("the DPP basis contains NaN or infinite values")
    return Q


def inclusion_probabilities(Q) -> np.ndarray:
    """``P(i in S) = K_ii``: the squared row norms of ``Q`` (they sum to ``k``).

    Examples
    --------
    >>> import numpy as np, mbutils
    >>> Q = np.linalg.qr(np.random.default_rng(1).normal(size=(5, 2)))[0]
    >>> p = mbutils.inclusion_probabilities(Q)
    >>> bool(np.all((0 <= p) & (p <= 1))), round(float(p.sum()), 6)
    (True, 2.0)
    """
    Q = _check_basis(Q)
    return np.einsum("ij,ij->i", Q, Q)


def _check_orthonormal_columns(Q: np.ndarray) -> None:
    """Cheap O(nk) guard: unit column norms (full orthonormality would cost n k^2)."""
    norms = np.einsum("ij,ij->j", Q, Q)
    bad = np.flatnonzero(np.abs(norms - 1.0) > _NORM_TOL)
    if bad.size:
        raise SelectorError(
            f"the DPP basis must have orthonormal columns (e.g. from a QR); column {bad[0]} "
            f"has squared norm {norms[bad[0]]:.6g}"
        )


def _complement(G: np.ndarray) -> np.ndarray:
    """Orthonormal basis (m x (m - b)) of the complement of the rows of ``G`` (b x m)."""
    full, _ = np.linalg.qr(G.T, mode="complete")
    return full[:, G.shape[0]:]


def _residual_norms(W: np.ndarray, taken: np.ndarray) -> np.ndarray:
    """Squared row norms of ``W``, zero for rows already chosen."""
    d = np.einsum("ij,ij->i", W, W)
    d[taken] = 0.0
    return d


def _draw_from(d: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
    """Indices drawn with probability proportional to ``d`` (inverse CDF, one per uniform)."""
    cum = np.cumsum(d)
    picks = np.searchsorted(cum, uniforms * cum[-1], side="right")
    last = len(d) - 1 - int(np.argmax(d[::-1] > 0))  # u * total may round up to total
    return np.minimum(picks, last)


def _direct_steps(W, taken, chosen, t, rng) -> None:
    """The plain chain rule for the last few draws: O(n m) per step, no rejection."""
    W = W.copy()
    for step, u in zip(range(t, len(chosen)), rng.random(len(chosen) - t)):
        d = _residual_norms(W, taken)
        i = int(_draw_from(d, np.array([u]))[0])
        v = W[i] / np.sqrt(d[i])
        W -= (W @ v)[:, None] * v
        chosen[step] = i
        taken[i] = True


def _block(W, taken, chosen, t, rng) -> np.ndarray:
    """Draws ``b = ceil(m/2)`` items by rejection from the block-start residual norms.

    Returns the ``b`` orthonormal directions (rows, in the ``m`` active coordinates) of
    the chosen rows' residuals, which the caller projects out of every row.
    """
    k = len(chosen)
    m = k - t
    d = _residual_norms(W, taken)
    if not abs(d.sum() - m) <= 1e-6 * k:  # the residual mass is the rank left
        raise SelectorError(
            f"the DPP basis is not orthonormal: residual mass {d.sum():.6g} with {m} draws left"
        )
    b = (m + 1) // 2
    G = np.empty((b, m))
    s = 0
    while s < b:
        # proposals do not depend on what is accepted, so draw them in batches
        batch = 2 * (b - s) + 8
        proposals = _draw_from(d, rng.random(batch)).tolist()
        for i, u in zip(proposals, rng.random(batch).tolist()):
            if taken[i]:
                continue
            r = W[i] - G[:s].T @ (G[:s] @ W[i])
            rr = float(r @ r)
            if u * d[i] < rr:  # accept with probability current / block-start residual
                r -= G[:s].T @ (G[:s] @ r)  # second Gram-Schmidt pass (CGS2) keeps G orthonormal
                G[s] = r / np.linalg.norm(r)
                chosen[t + s] = i
                taken[i] = True
                s += 1
                if s == b:
                    break
    return G


def sample_projection_dpp(Q, rng: np.random.Generator) -> np.ndarray:
    """Exact draw of the projection DPP with kernel ``Q Q^T``: ``k`` distinct indices.

    ``Q`` (n x k) must have orthonormal columns; only their norms are checked. Indices
    are returned in the order the chain rule picked them. O(n k^2) flops, mostly in
    matrix products (see the module docstring for the blocked rejection scheme).
    """
    Q = _check_basis(Q)
    _check_orthonormal_columns(Q)
    n, k = Q.shape
    chosen = np.empty(k, dtype=np.int64)
    taken = np.zeros(n, dtype=bool)
    W, t = Q, 0
    while k - t > _DIRECT_BELOW:
        G = _block(W, taken, chosen, t, rng)
        t += len(G)
        if t < k:
            W = W @ _complement(G)
    if t < k:
        _direct_steps(W, taken, chosen, t, rng)
    return chosen
