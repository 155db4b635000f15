"""The selector contract (``mbutils.testing``): every registered selector and a user's own keep each named
rule, one pytest test per selector and rule; each kind of broken selector fails the rule it breaks, and
``check_selector`` reports every broken rule, not only the first."""

from __future__ import annotations

import numpy as np
import pytest

from mbutils import MicroBenchmark, Selector, make_selector
from mbutils.testing import (CHECKS, SelectorContractError, check_does_not_modify_its_inputs,
                             check_does_not_modify_its_parameters, check_selector, parametrize_with_checks,
                             registered_selectors, selector_checks)


class HardestFirst(Selector):
    """A user's selector: the k items the sources find hardest, by the plain mean."""

    name = "hardest_first"
    light = True

    def select(self, prepared, k, rng):
        self.check_size(k, prepared.n_items)
        hardest = np.argsort(prepared.correct.mean(axis=0), kind="stable")[:k]
        return MicroBenchmark(np.sort(hardest), np.full(k, 1.0 / k))


#: Every registered name's default object, some shipped selectors with other parameters, and a user's own.
SELECTORS = [*registered_selectors(),
             make_selector("confidence_stratified", estimator="hajek", n_strata=3),
             make_selector("diversity_weighted", normalize=True),
             make_selector("anchor_points", warm_start=False),
             HardestFirst()]


@parametrize_with_checks(SELECTORS)
def test_every_selector_keeps_every_rule(selector, check):
    check()


def test_one_test_per_selector_and_rule():
    mark = parametrize_with_checks(SELECTORS)
    ids = mark.kwargs["ids"]
    assert len(ids) == len(set(ids)) == len(SELECTORS) * len(CHECKS) >= 200
    assert "hardest_first-check_does_not_modify_its_inputs" in ids
    assert "confidence_stratified(n_strata=3, estimator='hajek')-check_gives_proper_weights" in ids
    assert all(check.__doc__ and "Why:" in check.__doc__ for check in CHECKS)  # each rule says why it exists


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
        self.check_size(k, prepared.n_items)
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


class _Connection:
    """A parameter that can be shared in a process but not sent to another (a client, an open file)."""

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        raise TypeError("a connection cannot be pickled")


class Unpicklable(EasiestFirst):
    name = "unpicklable"

    def __init__(self, connection=None):
        self.connection = connection


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


class Impostor(EasiestFirst):
    name = "random"


class _Unknown(MicroBenchmark):
    def estimate(self, correct, confidence=None):
        return np.full(len(correct), np.nan)


class NoEstimate(EasiestFirst):
    name = "no_estimate"

    def select(self, prepared, k, rng):
        micro = super().select(prepared, k, rng)
        return _Unknown(micro.items, micro.weights)


# -- the two rules beyond the first contract: inputs and parameters left as they were -----------------

class SortsInPlace(EasiestFirst):
    """Sorts each source's answers in place to find the easiest items: the run's source data is changed."""

    name = "sorts_in_place"

    def select(self, prepared, k, rng):
        prepared.correct.sort(axis=1)
        return super().select(prepared, k, rng)


class CentresInPrepare(EasiestFirst):
    """Centres the confidences in ``prepare`` with ``-=``: changes the array it was given."""

    name = "centres_in_prepare"

    def prepare(self, source, rng):
        if source.confidence is not None:
            confidence = source.confidence
            confidence -= confidence.mean()
        return source


class FillsTargets(EasiestFirst):
    """An estimate that writes into the targets' answers it reads."""

    name = "fills_targets"

    def select(self, prepared, k, rng):
        micro = super().select(prepared, k, rng)
        return _Filling(micro.items, micro.weights)


class _Filling(MicroBenchmark):
    def estimate(self, correct, confidence=None):
        correct[:, self.items] = np.clip(correct[:, self.items], 0, 1)
        correct[0, 0] = 0.5  # "a neutral answer"
        return super().estimate(correct, confidence)


class RemembersSizes(EasiestFirst):
    """Appends every size to a list parameter: the next run starts from another selector."""

    name = "remembers_sizes"

    def __init__(self, history=()):
        self.history = history

    def select(self, prepared, k, rng):
        if not isinstance(self.history, list):
            self.history = list(self.history)
        self.history.append(k)
        return super().select(prepared, k, rng)


class LearnsItsOffset(EasiestFirst):
    """Stores what ``prepare`` learned as a parameter."""

    name = "learns_its_offset"

    def __init__(self, offset: int = 0):
        self.offset = offset

    def prepare(self, source, rng):
        self.offset = int(source.n_items // 10)
        return source


class FillsInItsDefault(EasiestFirst):
    """Resolves a default in ``__init__``: the object does not store what it was given."""

    name = "fills_in_its_default"

    def __init__(self, strata: int = 0):
        self.strata = strata or 4


class CopiesItsArgument(EasiestFirst):
    """Copies a list argument in ``__init__``: the clone is another object than the one given."""

    name = "copies_its_argument"

    def __init__(self, items: tuple = (1, 2)):
        self.items = list(items)


@pytest.mark.parametrize("selector, check, rule", [
    (SortsInPlace(), check_does_not_modify_its_inputs, r"changed the source data it was given \(correct\)"),
    (CentresInPrepare(), check_does_not_modify_its_inputs, r"changed the source data it was given \(confidence\)"),
    (FillsTargets(), check_does_not_modify_its_inputs, "changed the targets' answers"),
    (RemembersSizes(), check_does_not_modify_its_parameters, r"changed its parameters \(history\)"),
    (LearnsItsOffset(), check_does_not_modify_its_parameters, "offset=0 became 3"),
    (FillsInItsDefault(), check_does_not_modify_its_parameters, "stores strata=4 when given its default 0"),
    (CopiesItsArgument(), check_does_not_modify_its_parameters, r"stores items=\[1, 2\] when given \[1, 2\]"),
], ids=lambda value: type(value).__name__ if isinstance(value, Selector) else getattr(value, "__name__", "rule"))
def test_each_new_check_catches_the_selector_that_breaks_it(selector, check, rule):
    with pytest.raises(SelectorContractError, match=rule):
        check(selector)
    for name, other in selector_checks(selector):  # and it is the only rule the selector breaks
        if name != check.__name__:
            other()


@pytest.mark.parametrize("selector, rule", [
    (Repeats(), "chose an item twice"), (WrongSize(), "gave a micro-benchmark of"),
    (Unseeded(), "chose differently"), (Unpicklable(_Connection()), "cannot be pickled for worker processes"),
    (NoSizeCheck(), "was not refused"), (BadWeights(), "summing to 2"), (Nameless(), "name is empty"),
    (Impostor(), "its name 'random' belongs to RandomSampling"),
    (NoEstimate(), "is not one finite number per target"),
    (SortsInPlace(), "changed the source data"), (RemembersSizes(), "changed its parameters")],
    ids=lambda value: type(value).__name__ if isinstance(value, Selector) else "")
def test_a_selector_that_breaks_the_contract_fails_it(selector, rule):
    with pytest.raises(SelectorContractError, match=rule):
        check_selector(selector)


class Careless(EasiestFirst):
    name = "careless"

    def select(self, prepared, k, rng):
        prepared.correct.sort(axis=1)
        return MicroBenchmark(np.zeros(k, dtype=int), np.full(k, 1.0 / k))


def test_every_broken_rule_is_reported_not_only_the_first():
    with pytest.raises(SelectorContractError) as caught:
        check_selector(Careless())
    message = str(caught.value)
    assert message.startswith("Careless() breaks 3 rules of the selector contract:\n"), message
    for name in ("check_chooses_k_distinct_seen_items", "check_refuses_a_size_beyond_the_seen_items",
                 "check_does_not_modify_its_inputs"):
        assert f"\n- {name} (8 models, 3 subtasks): " in message


def test_the_user_object_is_left_as_it_was():
    selector = RemembersSizes(history=[1])
    with pytest.raises(SelectorContractError):
        check_selector(selector)
    assert selector.history == [1]  # the checks ran on clones


def test_not_a_selector_is_refused():
    with pytest.raises(SelectorContractError, match="is not a Selector"):
        check_selector(object())
    (name, check), *_ = selector_checks(object())
    with pytest.raises(SelectorContractError, match="is not a Selector"):
        check()


@pytest.mark.parametrize("module_name", ["mbutils.methods.selectors.contract", "mbutils.testing"])
def test_the_contracts_examples_run(module_name):
    import doctest
    import importlib

    module = importlib.import_module(module_name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted and not result.failed
