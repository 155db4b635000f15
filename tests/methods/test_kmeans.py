"""mbutils.methods.kmeans: the same clusters as scikit-learn's KMeans, bit for bit, on seeded instances."""

import warnings

import numpy as np
import pytest
from sklearn.cluster import KMeans

from mbutils.methods.kmeans import kmeans
from mbutils.methods.runs import single_threaded


def _instances(n_cases: int = 60):
    """Seeded point sets: continuous, rounded (ties), half duplicates (empty clusters), 1 to 11 features."""
    rng = np.random.default_rng(20261204)
    for case in range(n_cases):
        n = int(rng.integers(5, 400))
        d = int(rng.choice([1, 2, 3, 11]))
        k = int(rng.integers(1, min(n, 80) + 1))
        X = rng.normal(size=(n, d))
        if case % 3 == 0:
            X = np.round(X, 1)
        if case % 5 == 0:
            X[: n // 2] = X[0]
        yield case, X, k, int(rng.integers(2**31 - 1)), 1 + (case % 4 == 0)


@pytest.mark.parametrize("case,X,k,seed,n_init", list(_instances()), ids=lambda v: None)
def test_kmeans_equals_scikit_learn(case, X, k, seed, n_init):
    with single_threaded(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn warns when duplicates leave clusters empty
        reference = KMeans(n_clusters=k, n_init=n_init, random_state=seed).fit(X)
        labels, centers = kmeans(X, k, seed, n_init=n_init)
    np.testing.assert_array_equal(labels, reference.labels_)
    np.testing.assert_array_equal(centers, reference.cluster_centers_)


def test_kmeans_fixed_point_and_inputs():
    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(loc, 0.1, size=(30, 2)) for loc in ((0, 0), (5, 5), (0, 5))])
    before = X.copy()
    labels, centers = kmeans(X, 3, seed=7)
    np.testing.assert_array_equal(X, before)  # the caller's points are not centred in place
    # Three well-separated blobs: one cluster each, centred on its blob's mean.
    assert sorted(np.bincount(labels)) == [30, 30, 30]
    for j in range(3):
        np.testing.assert_allclose(centers[j], X[labels == j].mean(axis=0), atol=1e-12)
    # Every point sits with its nearest centre.
    nearest = np.argmin(((X[:, None, :] - centers[None]) ** 2).sum(-1), axis=1)
    np.testing.assert_array_equal(labels, nearest)
    with pytest.raises(ValueError, match="at least 91 points"):
        kmeans(X, 91, seed=0)
