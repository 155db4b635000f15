"""How close a synthetic benchmark is to a real one: quantiles, KS distances, reliability and components.

The calibration of the stand-ins (:mod:`mbutils.data.synthetic_standins`) minimised these
distances; :func:`compare_to_reference` reports them for any pair of benchmarks.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from mbutils.data.benchmark import Benchmark
from mbutils.base.errors import BundleError

QUANTILES = (0.0, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 1.0)


def _matrix(data) -> np.ndarray:
    """0/1 models x items matrix from a Benchmark, DataFrame or array (NaN = missing)."""
    values = data.correct if isinstance(data, Benchmark) else data
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 2:
        raise BundleError("compare_to_reference needs 2-D models x items matrices")
    return values


def pairwise_differences(accuracy: np.ndarray) -> np.ndarray:
    """|acc_i - acc_j| over all unordered model pairs."""
    upper = np.triu_indices(len(accuracy), k=1)
    return np.abs(accuracy[:, None] - accuracy[None, :])[upper]


def split_half_reliability(matrix: np.ndarray, rng: np.random.Generator, n_splits: int = 50) -> float:
    """Mean correlation across models of accuracy on two random halves of the items.

    Examples
    --------
    Twenty models of graded ability on forty items:

    >>> import numpy as np, mbutils
    >>> rng = np.random.default_rng(0)
    >>> M = (rng.random((20, 40)) < np.linspace(0.2, 0.8, 20)[:, None]).astype(float)
    >>> round(mbutils.split_half_reliability(M, np.random.default_rng(0)), 3)
    0.763
    """
    n_items = matrix.shape[1]
    halves = (np.argsort(rng.random((n_splits, n_items)), axis=1) < n_items // 2).astype(np.float64)
    seen = ~np.isnan(matrix)
    values = np.where(seen, matrix, 0.0)
    first = (values @ halves.T) / (seen @ halves.T)             # models x splits
    second = (values @ (1 - halves).T) / (seen @ (1 - halves).T)
    a = first - first.mean(axis=0)
    b = second - second.mean(axis=0)
    r = (a * b).sum(0) / np.sqrt((a * a).sum(0) * (b * b).sum(0))
    return float(r.mean())


def ks_distance(x: np.ndarray, y: np.ndarray) -> float:
    """Two-sample Kolmogorov-Smirnov distance: the largest gap ``sup |F_x - F_y|`` of the two empirical CDFs.

    Examples
    --------
    >>> import numpy as np, mbutils
    >>> mbutils.ks_distance(np.array([0.1, 0.2, 0.3]), np.array([0.2, 0.3, 0.4, 0.5]))
    0.5
    """
    x, y = np.sort(x), np.sort(y)
    grid = np.concatenate([x, y])
    fx = np.searchsorted(x, grid, side="right") / len(x)
    fy = np.searchsorted(y, grid, side="right") / len(y)
    return float(np.max(np.abs(fx - fy)))


def component_shares(matrix: np.ndarray, n: int = 5) -> np.ndarray:
    """Share of variance of the first ``n`` principal components of the item-centred matrix.

    The squared singular values are the eigenvalues of the smaller Gram matrix (models x models
    for a benchmark's wide matrix): the same shares as an SVD's, to rounding, a tenth of the work.
    """
    filled = np.where(np.isnan(matrix), np.nanmean(matrix, axis=0), matrix)
    centred = filled - filled.mean(axis=0)
    gram = centred @ centred.T if centred.shape[0] <= centred.shape[1] else centred.T @ centred
    values = np.clip(np.linalg.eigvalsh(gram)[::-1], 0.0, None)
    return values[:n] / values.sum()


def compare_to_reference(synthetic, real, seed: int = 0) -> dict:
    """Quantile tables and KS distances of a synthetic benchmark against a real one.

    Compares the distributions of model accuracy, pairwise accuracy differences and item
    p-values (fraction of models correct), plus split-half reliability and the variance
    shares of the first principal components (low-rank structure). Returns
    ``{"quantiles": {stat: DataFrame(real, synthetic)}, "ks": {stat: float},
    "split_half": {"real": r, "synthetic": r}, "components": DataFrame(real, synthetic)}``.
    """
    synth_m, real_m = _matrix(synthetic), _matrix(real)
    stats = {}
    for label, matrix in (("real", real_m), ("synthetic", synth_m)):
        accuracy = np.nanmean(matrix, axis=1)
        stats[label] = {
            "accuracy": accuracy,
            "pairwise_difference": pairwise_differences(accuracy),
            "item_pvalue": np.nanmean(matrix, axis=0),
        }
    quantiles = {
        stat: pd.DataFrame(
            {label: np.quantile(stats[label][stat], QUANTILES) for label in ("real", "synthetic")},
            index=pd.Index(QUANTILES, name="quantile"),
        )
        for stat in stats["real"]
    }
    ks = {stat: ks_distance(stats["real"][stat], stats["synthetic"][stat]) for stat in stats["real"]}
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    split = {label: split_half_reliability(m, rng) for label, m in (("real", real_m), ("synthetic", synth_m))}
    components = pd.DataFrame(
        {"real": component_shares(real_m), "synthetic": component_shares(synth_m)},
        index=pd.RangeIndex(1, 6, name="component"),
    )
    return {"quantiles": quantiles, "ks": ks, "split_half": split, "components": components}
