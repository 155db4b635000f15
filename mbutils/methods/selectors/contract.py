"""The selector contract: what every selector, shipped or a user's subclass, must do to run in an experiment.

:func:`check_selector` runs it on small generated pools (8 source models; three subtasks, and one;
with and without confidences), in the spirit of scikit-learn's ``check_estimator``. A selector:

1. has a ``name``, and ``clone()`` and ``get_params()`` agree (an experiment rebuilds it in workers);
2. survives pickling with its parameters (workers receive it pickled);
3. is deterministic under a seed: the same run's choices twice are the same items and weights;
4. respects the size: ``select(prepared, k)`` gives k items (an adaptive test: k items per target),
   none twice, all among the seen items; a k beyond them is refused with a ``SelectorError``;
5. gives finite, non-negative weights that sum to 1 (a weighted mean), unless the class says
   ``weights_sum_to_one = False`` (Horvitz-Thompson weights, IRT estimators), and an estimate that is
   finite for every target;
6. does all this on a pool of 8 models and on a benchmark of one subtask.

A broken rule raises :class:`SelectorContractError` naming the selector, the rule and the case.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass

import numpy as np

from mbutils.base.errors import SelectorError
from mbutils.methods.runs import seeded_choices, single_threaded
from mbutils.methods.selectors.base import MicroBenchmark, Selector, SourceData


class SelectorContractError(AssertionError):
    """A selector that breaks the contract (an ``AssertionError``, so a test reports it as a failure)."""


@dataclass(frozen=True)
class _Case:
    name: str
    source: SourceData
    targets: np.ndarray
    target_confidence: np.ndarray | None


def _cases(seed: int) -> list[_Case]:
    """Small pools drawn from a two-parameter logistic model: 8 sources, 6 targets."""
    rng = np.random.default_rng(seed)
    out = []
    for name, n_items, n_subtasks, with_confidence in (("8 models, 3 subtasks", 36, 3, True),
                                                       ("8 models, one subtask", 24, 1, False)):
        ability = rng.normal(size=14)
        difficulty = rng.normal(size=n_items)
        p = 1 / (1 + np.exp(-(ability[:, None] - difficulty[None, :])))
        correct = (rng.random(p.shape) < p).astype(np.float64)
        confidence = np.clip(p + rng.normal(scale=0.1, size=p.shape), 0.01, 0.99) if with_confidence else None
        subtasks = np.arange(n_items) % n_subtasks
        source = SourceData(correct[:8], subtasks, None if confidence is None else confidence[:8])
        out.append(_Case(name, source, correct[8:], None if confidence is None else confidence[8:]))
    return out


def _fail(selector: Selector, rule: str, case: str = "") -> SelectorContractError:
    where = f" ({case})" if case else ""
    return SelectorContractError(f"{selector!r} breaks the selector contract{where}: {rule}")


def _same(a: MicroBenchmark, b: MicroBenchmark, targets: np.ndarray, confidence) -> bool:
    return (np.array_equal(a.items, b.items) and np.array_equal(a.weights, b.weights)
            and np.allclose(a.estimate(targets, confidence), b.estimate(targets, confidence), equal_nan=True))


def _check_micro(selector: Selector, micro, k: int, case: _Case) -> None:
    n = case.source.n_items
    if not isinstance(micro, MicroBenchmark):
        raise _fail(selector, f"select(k={k}) returned {type(micro).__name__}, not a MicroBenchmark", case.name)
    if micro.size != k:
        raise _fail(selector, f"select(k={k}) gave a micro-benchmark of {micro.size} items", case.name)
    items = np.asarray(micro.items)
    if len(np.unique(items)) != len(items) or (len(items) and (items.min() < 0 or items.max() >= n)):
        raise _fail(selector, f"select(k={k}) chose an item twice or outside the {n} seen items", case.name)
    weights = np.asarray(micro.weights)
    if not np.all(np.isfinite(weights)) or np.any(weights < 0):
        raise _fail(selector, f"select(k={k}) gave weights that are not finite and non-negative", case.name)
    if getattr(selector, "weights_sum_to_one", True) and len(weights) and not np.isclose(weights.sum(), 1.0):
        raise _fail(selector, f"select(k={k}) gave weights summing to {weights.sum():.6g}, not 1 (set the class "
                    "attribute weights_sum_to_one = False for an estimator whose weights need not)", case.name)
    estimate = np.asarray(micro.estimate(case.targets, case.target_confidence))
    if estimate.shape != (len(case.targets),) or not np.all(np.isfinite(estimate)):
        raise _fail(selector, f"estimate() of the k={k} micro-benchmark is not one finite number per target",
                    case.name)


def check_selector(selector: Selector, *, sizes=(1, 4, 9), seed: int = 0) -> None:
    """Run the selector contract on ``selector``; raise :class:`SelectorContractError` on the first broken rule.

    Parameters
    ----------
    selector : Selector
        An object of a :class:`Selector` subclass (shipped or your own), with its parameters.
    sizes : sequence of int, default (1, 4, 9)
        The sizes k to select (each at most the smallest generated pool's 24 seen items).
    seed : int, default 0
        Seed of the generated pools and of the runs.

    Examples
    --------
    >>> import numpy as np
    >>> from mbutils import MicroBenchmark, Selector
    >>> from mbutils.testing import check_selector
    >>> class EasiestFirst(Selector):
    ...     name = "easiest_first"
    ...     def select(self, prepared, k, rng):
    ...         self.check_size(k, prepared.n_items)
    ...         easiest = np.argsort(-prepared.correct.mean(axis=0), kind="stable")[:k]
    ...         return MicroBenchmark(np.sort(easiest), np.full(k, 1.0 / k))
    >>> check_selector(EasiestFirst())  # passes silently
    >>> class Careless(EasiestFirst):
    ...     name = "careless"
    ...     def select(self, prepared, k, rng):
    ...         return MicroBenchmark(np.zeros(k, dtype=int), np.full(k, 1.0 / k))  # item 0, k times
    >>> check_selector(Careless())
    Traceback (most recent call last):
    ...
    mbutils.methods.selectors.contract.SelectorContractError: Careless() breaks the selector contract (8 models, 3 subtasks): select(k=4) chose an item twice or outside the 36 seen items
    """
    if not isinstance(selector, Selector):
        raise SelectorContractError(f"{selector!r} is not a Selector (subclass mbutils.Selector)")
    if not isinstance(selector.name, str) or not selector.name:
        raise _fail(selector, "its class attribute name is empty; give the class a name")
    params = selector.get_params(deep=False)
    if repr(selector.clone().get_params(deep=False)) != repr(params):
        raise _fail(selector, "clone() does not keep the parameters get_params() reports")
    try:
        restored = pickle.loads(pickle.dumps(selector))
    except Exception as err:  # noqa: BLE001 -- any pickling failure breaks the rule
        raise _fail(selector, f"it cannot be pickled for worker processes ({type(err).__name__}: {err})") from None
    if repr(restored.get_params(deep=False)) != repr(params):
        raise _fail(selector, "pickling changes its parameters")
    for case in _cases(seed):
        fit = [int(k) for k in sizes if k <= case.source.n_items]
        with single_threaded():
            _, first = seeded_choices(selector.clone(), case.source, fit, seed=seed, run=0)
            _, again = seeded_choices(selector.clone(), case.source, fit, seed=seed, run=0)
        for k in fit:
            _check_micro(selector, first[k], k, case)
            if not _same(first[k], again[k], case.targets, case.target_confidence):
                raise _fail(selector, f"two runs with seed {seed} chose differently at k={k}", case.name)
        prepared = selector.clone().prepare(case.source, np.random.default_rng(seed))
        try:
            selector.clone().select(prepared, case.source.n_items + 1, np.random.default_rng(seed))
        except SelectorError:
            pass
        else:
            raise _fail(selector, f"select(k={case.source.n_items + 1}) beyond the {case.source.n_items} seen items "
                        "was not refused with a SelectorError (call self.check_size(k, n_items))", case.name)
