"""Property-based checks of the metrics (hypothesis)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from mbutils.evaluate.pair_metrics import gap_bins, kendall_tau_b, mdad_bin, pair_agreement

diffs = st.integers(-50, 50)
est = st.sampled_from([-0.3, -0.1, -1e-15, 0.0, 1e-15, 0.02, 0.4])


@given(st.lists(st.tuples(est, diffs), min_size=1, max_size=60))
def test_agreement_is_symmetric_in_the_pair(pairs):
    e = np.array([p[0] for p in pairs])
    t = np.array([p[1] for p in pairs])
    a1, c1 = pair_agreement(e, t, "exclude")
    a2, c2 = pair_agreement(-e, -t, "exclude")
    assert (c1 == c2).all() and (a1 == a2)[c1].all()
    # The paper's rule is symmetric too, except on pairs tied on the full benchmark.
    p1, _ = pair_agreement(e, t, "paper")
    p2, _ = pair_agreement(-e, -t, "paper")
    assert (p1 == p2)[t != 0].all()


counts = arrays(np.int64, st.integers(1, 30), elements=st.integers(0, 40))


@given(counts, st.data())
def test_mdad_is_monotone_in_the_threshold_and_monotone_variant_is_later(total, data):
    agree = np.array([data.draw(st.integers(0, int(n))) for n in total])

    def value(b):
        return np.inf if b < 0 else b

    thresholds = sorted(data.draw(st.lists(st.floats(0.05, 1.0), min_size=2, max_size=4)))
    first = [value(mdad_bin(agree, total, t, "first")) for t in thresholds]
    assert all(a <= b for a, b in zip(first, first[1:]))
    for t in thresholds:
        assert value(mdad_bin(agree, total, t, "monotone")) >= value(mdad_bin(agree, total, t, "first"))


@given(arrays(np.int64, st.integers(2, 25), elements=st.integers(0, 10**6), unique=True))
def test_tau_of_identical_rankings_is_one(x):
    x = x / 10**6
    assert np.isclose(kendall_tau_b(x[None, :], x[None, :])[0], 1.0)
    assert np.isclose(kendall_tau_b(x[None, :], -x[None, :])[0], -1.0)


@settings(max_examples=200)
@given(st.integers(1, 5000), st.data(), st.sampled_from([0.5, 1.0, 0.25, 2.0]))
def test_bins_are_nonnegative_integers_and_floor_the_gap(n, data, width):
    dc = np.array(data.draw(st.lists(st.integers(-n, n), min_size=1, max_size=20)))
    bins = gap_bins(dc, np.array([n]), width)
    assert np.issubdtype(bins.dtype, np.integer) and (bins >= 0).all()
    gap = 100 * np.abs(dc) / n
    assert (bins * width <= gap + 1e-9).all() and (gap < (bins + 1) * width + 1e-9).all()
