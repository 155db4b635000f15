"""Known values of the exercise helpers in mbutils.book.exercises used by the chapters measures, data,
synthetic, tables, differences, guidance and target_sets."""

from __future__ import annotations

import numpy as np
import pytest

from mbutils.book import exercises


def test_random_sampling_error_known_values():
    # N = 4 items, c = 2 right, k = 2 drawn: X = 0, 1, 2 with probabilities 1/6, 4/6, 1/6;
    # |X/2 - 1/2| = 1/2, 0, 1/2, so the expected error is 1/6 of 100 points.
    assert exercises.random_sampling_error(2, 4, 2) == pytest.approx(100 / 6)
    # all or nothing right, or every item drawn: no error
    np.testing.assert_allclose(exercises.random_sampling_error([0, 4], 4, 2), [0, 0], atol=1e-12)
    assert exercises.random_sampling_error(3, 10, 10) == pytest.approx(0, abs=1e-12)
    # k = 1: E|X - p| = 2p(1 - p)
    assert exercises.random_sampling_error(3, 10, 1) == pytest.approx(100 * 2 * 0.3 * 0.7)
    assert exercises.random_sampling_error(np.array([[1, 2], [3, 4]]), 10, 3).shape == (2, 2)
    with pytest.raises(ValueError):
        exercises.random_sampling_error(1, 4, 5)


def test_random_sampling_error_matches_simulation():
    rng = np.random.default_rng(0)
    items = np.zeros(50)
    items[:20] = 1
    draws = np.array([items[rng.choice(50, 10, replace=False)].mean() for _ in range(20000)])
    assert 100 * np.abs(draws - 0.4).mean() == pytest.approx(exercises.random_sampling_error(20, 50, 10), abs=0.2)
