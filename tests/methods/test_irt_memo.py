"""The process's memo of IRT fits: the same numbers as a fresh fit, shared read-only, bounded."""

from __future__ import annotations

import numpy as np
import pytest

from mbutils.methods import irt_memo
from mbutils.methods.irt_fit import IRTModel
from mbutils.methods.selectors.tinybench import TinyBenchmarks
from mbutils.methods.selectors.base import SourceData


@pytest.fixture(autouse=True)
def _empty_memo():
    irt_memo.clear()
    yield
    irt_memo.clear()


def responses(seed: int, n: int = 30, m: int = 40) -> np.ndarray:
    rng = np.random.default_rng(seed)
    ability, easiness = rng.normal(size=(n, 1)), rng.normal(size=m)
    return (rng.random((n, m)) < 1 / (1 + np.exp(-(ability + easiness)))).astype(float)


def test_a_memoised_fit_equals_a_fresh_fit_bit_for_bit_and_is_shared_read_only():
    Y = responses(0)
    model = IRTModel(dims=3)
    first = irt_memo.fitted(model, Y)
    fresh = IRTModel(dims=3).fit(Y)
    for name in ("theta_", "a_", "b_", "objective_path_"):
        np.testing.assert_array_equal(getattr(first, name), getattr(fresh, name))
    assert irt_memo.fitted(model, Y.copy()) is first  # same content, another array
    assert not hasattr(model, "a_")  # the model asked for stays unfitted
    with pytest.raises(ValueError):
        first.a_[0, 0] = 1.0


def test_other_data_or_hyper_parameters_get_their_own_fit():
    Y = responses(1)
    base = irt_memo.fitted(IRTModel(dims=2), Y)
    changed = Y.copy()
    changed[0, 0] = 1 - changed[0, 0]
    assert irt_memo.fitted(IRTModel(dims=2), changed) is not base
    assert irt_memo.fitted(IRTModel(dims=2, prior_sd_b=2.0), Y) is not base
    assert irt_memo.fitted(IRTModel(dims=2), Y[:, :-1]) is not base
    missing = Y.copy()
    missing[3, 4] = np.nan
    assert irt_memo.fitted(IRTModel(dims=2), missing) is not base


def test_the_memo_keeps_only_its_most_recent_fits(monkeypatch):
    monkeypatch.setattr(irt_memo, "MEMO_SIZE", 2)
    model = IRTModel(dims=1)
    fits = [irt_memo.fitted(model, responses(seed, 12, 10)) for seed in range(3)]
    assert irt_memo.fitted(model, responses(2, 12, 10)) is fits[2]
    assert irt_memo.fitted(model, responses(0, 12, 10)) is not fits[0]  # evicted, fitted again
    assert len(irt_memo._FITS) == 2


def test_tinybenchmarks_prepares_from_the_memo_with_the_numbers_of_a_fresh_fit():
    Y = responses(3, 40, 60)
    source = SourceData(correct=Y, subtasks=np.zeros(60, dtype=int))
    selector = TinyBenchmarks(irt=IRTModel(dims=2))
    first = selector.prepare(source, np.random.default_rng(0))
    irt_memo.clear()
    again = selector.prepare(source, np.random.default_rng(0))
    np.testing.assert_array_equal(first.item_a, again.item_a)
    np.testing.assert_array_equal(first.item_b, again.item_b)
    assert selector.prepare(source, np.random.default_rng(0)).item_a is again.item_a
