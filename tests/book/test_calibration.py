"""Calibration helpers (mbutils.book.findings.calibration): p-values pooled as on a small pool, the small pool's
protocol, and the real:stand-in pairs a command line names."""

from __future__ import annotations

import numpy as np
import pytest

from mbutils.base.errors import BundleError
from mbutils.book.findings.calibration import pool_protocol, pooled_pvalues


def test_pooled_pvalues_match_the_pool_size():
    matrix = np.random.default_rng(0).integers(0, 2, (200, 30)).astype(float)
    rng = np.random.default_rng(1)
    assert np.array_equal(pooled_pvalues(matrix, 200, rng), matrix.mean(0))
    pooled = pooled_pvalues(matrix, 40, rng, n_pools=5)
    assert pooled.shape == (150,)
    assert np.allclose(pooled * 40, np.round(pooled * 40))  # steps of 1/40, as on a 40-model pool


@pytest.mark.parametrize("n, sources, targets", [(420, 300, 50), (78, 52, 26), (40, 27, 13)])
def test_pool_protocol_is_the_small_pool_rule(n, sources, targets):
    protocol = pool_protocol(n, n_runs=20)
    assert (protocol.n_sources, protocol.n_targets, protocol.n_runs) == (sources, targets, 20)


def test_parse_pairs():
    from mbutils.book.findings.calibration import parse_pairs

    assert parse_pairs(" gpqa:synthetic-gpqa, bbh-leaderboard:synthetic-bbh,") == [
        ("gpqa", "synthetic-gpqa"), ("bbh-leaderboard", "synthetic-bbh")]
    assert parse_pairs("gpqa,mmlu-pro-leaderboard,mine") == [
        ("gpqa", "synthetic-gpqa"), ("mmlu-pro-leaderboard", "synthetic-mmlu-pro"), ("mine", None)]
    with pytest.raises(BundleError, match="REAL_BUNDLE:STAND_IN"):
        parse_pairs("gpqa:")
