"""The selector contract (``mbutils.testing.check_selector``): every shipped selector passes it, so does the
user subclass of the docs, and each kind of broken selector fails it with the rule it breaks."""

from __future__ import annotations

import numpy as np
import pytest

from mbutils import MicroBenchmark, Selector, make_selector, selector_names
from mbutils.testing import SelectorContractError, check_selector


@pytest.mark.parametrize("name", selector_names())
def test_every_shipped_selector_keeps_the_contract(name):
    check_selector(make_selector(name))


@pytest.mark.parametrize("name, params", [("confidence_stratified", {"estimator": "hajek", "n_strata": 3}),
                                          ("diversity_weighted", {"normalize": True}),
                                          ("anchor_points", {"warm_start": False})])
def test_shipped_selectors_with_other_parameters_keep_it(name, params):
    check_selector(make_selector(name, **params))


class EasiestFirst(Selector):
    """The docs' own subclass: the k items the sources find easiest, by the plain mean."""

    name = "easiest_first"

    def select(self, prepared, k, rng):
        self.check_size(k, prepared.n_items)
        easiest = np.argsort(-prepared.correct.mean(axis=0), kind="stable")[:k]
        return MicroBenchmark(np.sort(easiest), np.full(k, 1.0 / k))


def test_a_user_subclass_keeps_the_contract():
    check_selector(EasiestFirst())


class Repeats(EasiestFirst):
    name = "repeats"

    def select(self, prepared, k, rng):
        return MicroBenchmark(np.zeros(k, dtype=int), np.full(k, 1.0 / k))


class WrongSize(EasiestFirst):
    name = "wrong_size"

    def select(self, prepared, k, rng):
        return super().select(prepared, max(1, k - 1), rng)


class Unseeded(EasiestFirst):
    name = "unseeded"

    def select(self, prepared, k, rng):
        self.check_size(k, prepared.n_items)
        return MicroBenchmark(np.sort(np.random.default_rng().choice(prepared.n_items, k, replace=False)),
                              np.full(k, 1.0 / k))


class Unpicklable(EasiestFirst):
    name = "unpicklable"

    def __init__(self, score=lambda column: column.mean()):
        self.score = score


class NoSizeCheck(EasiestFirst):
    name = "no_size_check"

    def select(self, prepared, k, rng):
        k = min(k, prepared.n_items)
        return MicroBenchmark(np.arange(k), np.full(k, 1.0 / k))


class BadWeights(EasiestFirst):
    name = "bad_weights"

    def select(self, prepared, k, rng):
        micro = super().select(prepared, k, rng)
        return MicroBenchmark(micro.items, np.full(k, 2.0 / k))


class Nameless(EasiestFirst):
    name = ""


@pytest.mark.parametrize("selector, rule", [
    (Repeats(), "chose an item twice"), (WrongSize(), "gave a micro-benchmark of"),
    (Unseeded(), "chose differently"), (Unpicklable(), "cannot be pickled"),
    (NoSizeCheck(), "was not refused"), (BadWeights(), "summing to 2"), (Nameless(), "name is empty")],
    ids=lambda value: type(value).__name__ if isinstance(value, Selector) else "")
def test_a_selector_that_breaks_the_contract_fails_it(selector, rule):
    with pytest.raises(SelectorContractError, match=rule):
        check_selector(selector)


def test_not_a_selector_is_refused():
    with pytest.raises(SelectorContractError, match="is not a Selector"):
        check_selector(object())
