"""The selector contract: what every selector, shipped or a user's subclass, must do to run in an experiment.

The contract is a list of named checks (:data:`CHECKS`), one function per rule, each saying in its
docstring why the rule exists. They run on small generated pools (8 source models; three subtasks,
and one; with and without confidences), in the spirit of scikit-learn's ``check_estimator``. A
selector:

1. has a name of its own (:func:`check_has_a_name_of_its_own`);
2. is rebuilt with its parameters by ``clone()`` (:func:`check_clone_keeps_its_parameters`);
3. survives pickling with its parameters (:func:`check_survives_pickling`);
4. is deterministic under a seed (:func:`check_is_deterministic_under_a_seed`);
5. chooses k distinct seen items (:func:`check_chooses_k_distinct_seen_items`);
6. refuses a size beyond the seen items (:func:`check_refuses_a_size_beyond_the_seen_items`);
7. gives finite, non-negative weights that sum to 1 unless the class says
   ``weights_sum_to_one = False`` (:func:`check_gives_proper_weights`);
8. estimates one finite number per target (:func:`check_estimates_one_finite_number_per_target`);
9. does not modify its inputs (:func:`check_does_not_modify_its_inputs`);
10. does not modify its parameters (:func:`check_does_not_modify_its_parameters`).

:func:`check_selector` runs them all and reports every broken rule in one
:class:`SelectorContractError`; :func:`selector_checks` gives them one by one, for a test runner
(``mbutils.testing.parametrize_with_checks`` makes one pytest test of each).
"""

from __future__ import annotations

import copy
import functools
import pickle
from dataclasses import dataclass
from typing import Callable, Iterator

import numpy as np

from mbutils.base.errors import SelectorContractError, SelectorError
from mbutils.methods.runs import seeded_choices, single_threaded
from mbutils.methods.selectors.base import MicroBenchmark, Selector, SourceData
from mbutils.methods.selectors.registry import entries, same_class

#: The sizes k every check selects (each at most the smallest generated pool's 24 seen items).
SIZES = (1, 4, 9)


@dataclass(frozen=True)
class _Case:
    name: str
    source: SourceData
    targets: np.ndarray
    target_confidence: np.ndarray | None


def _cases(seed: int) -> list[_Case]:
    """Small pools drawn from a two-parameter logistic model: 8 sources, 6 targets (new arrays each call)."""
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


def _fail(selector, rule: str, case: str = "") -> SelectorContractError:
    where = f" ({case})" if case else ""
    error = SelectorContractError(f"{selector!r} breaks the selector contract{where}: {rule}")
    error.rule, error.case = rule, case
    return error


def _require_selector(selector) -> None:
    if not isinstance(selector, Selector):
        raise SelectorContractError(f"{selector!r} is not a Selector (subclass mbutils.Selector)")


def _fitting(sizes, case: _Case) -> list[int]:
    return [int(k) for k in sizes if k <= case.source.n_items]


def _choices(selector: Selector, case: _Case, sizes, seed: int) -> dict[int, MicroBenchmark]:
    """The selector's choices in run 0, single-threaded, exactly as an experiment makes them."""
    with single_threaded():
        return seeded_choices(selector, case.source, _fitting(sizes, case), seed=seed, run=0)[1]


def _same(a: MicroBenchmark, b: MicroBenchmark, targets: np.ndarray, confidence) -> bool:
    return (np.array_equal(a.items, b.items) and np.array_equal(a.weights, b.weights)
            and np.allclose(a.estimate(targets, confidence), b.estimate(targets, confidence), equal_nan=True))


def _equal(a, b) -> bool:
    """Whether two parameter values are equal: arrays by dtype and values, a nested model by its type (its
    own parameters are compared under their ``<name>__`` keys), others by ``==`` or else by their pickles."""
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return (a.dtype == b.dtype and a.shape == b.shape
                and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")))
    if hasattr(a, "get_params") and not isinstance(a, type):
        return True
    try:
        if bool(a == b):
            return True
    except Exception:  # noqa: BLE001 -- a value whose == is not a truth value
        pass
    try:
        return pickle.dumps(a) == pickle.dumps(b)
    except Exception:  # noqa: BLE001 -- not picklable: its text is all there is to compare
        return repr(a) == repr(b)


def _stored_as_given(given, stored) -> bool:
    """The constructor kept the very object it was given (or an equal number, text or flag)."""
    if stored is given:
        return True
    return type(stored) is type(given) and isinstance(given, (bool, int, float, str, bytes)) and stored == given


def _snapshot(source: SourceData) -> dict:
    return {name: None if array is None else (array.dtype.str, array.shape, array.tobytes())
            for name, array in (("correct", source.correct), ("subtasks", source.subtasks),
                                ("confidence", source.confidence))}


# ------------------------------------------------------------------------------------------ the checks

def check_has_a_name_of_its_own(selector: Selector, *, sizes=SIZES, seed: int = 0) -> None:
    """Its class attribute ``name`` is a non-empty text that no other registered class holds.

    Why: the name labels the selector's rows in every results table and is part of its cache key;
    rows without a name cannot be told apart, and a name another class holds would put two methods'
    results under one label.
    """
    _require_selector(selector)
    name = selector.name
    if not isinstance(name, str) or not name:
        raise _fail(selector, "its class attribute name is empty; give the class a name")

    owner = next((e.cls for e in entries() if e.name == name), None)
    if owner is not None and not same_class(owner, type(selector)):
        raise _fail(selector, f"its name {name!r} belongs to {owner.__name__}; give the class a name of its own")


def check_clone_keeps_its_parameters(selector: Selector, *, sizes=SIZES, seed: int = 0) -> None:
    """``clone()`` builds an equal selector: same class, same ``get_params()``.

    Why: an experiment never runs the caller's object; it clones it for every run (and in every
    worker), so a parameter that ``clone()`` loses or changes would silently run another method.
    """
    _require_selector(selector)
    params = selector.get_params(deep=False)
    try:
        copy_ = selector.clone()
    except Exception as err:  # noqa: BLE001 -- any failure to clone breaks the rule
        raise _fail(selector, f"clone() fails ({type(err).__name__}: {err}); store each constructor "
                    "argument under its own name") from None
    if type(copy_) is not type(selector) or repr(copy_.get_params(deep=False)) != repr(params):
        raise _fail(selector, "clone() does not keep the parameters get_params() reports")


def check_survives_pickling(selector: Selector, *, sizes=SIZES, seed: int = 0) -> None:
    """A copy pickled as worker processes receive it (with cloudpickle, as loky, Dask and Ray send tasks) has
    the same parameters.

    Why: worker processes receive the selector pickled; a selector that cannot be pickled cannot run
    with ``jobs > 1``, and one whose parameters change on the way runs another method in the workers.
    """
    import cloudpickle  # joblib's own dependency: what loky sends tasks with

    _require_selector(selector)
    params = selector.get_params(deep=False)
    try:
        restored = pickle.loads(cloudpickle.dumps(selector))
    except Exception as err:  # noqa: BLE001 -- any pickling failure breaks the rule
        raise _fail(selector, f"it cannot be pickled for worker processes ({type(err).__name__}: {err})") from None
    if repr(restored.get_params(deep=False)) != repr(params):
        raise _fail(selector, "pickling changes its parameters")


def check_is_deterministic_under_a_seed(selector: Selector, *, sizes=SIZES, seed: int = 0) -> None:
    """The same run, made twice with the same seed, chooses the same items with the same weights and estimates.

    Why: results are cached and compared across selectors on the same runs; a selector that draws
    from anything but the generators it is given (``np.random`` without a seed, the clock) cannot be
    reproduced, and its results change with the number of workers.
    """
    _require_selector(selector)
    for case in _cases(seed):
        first = _choices(selector.clone(), case, sizes, seed)
        again = _choices(selector.clone(), case, sizes, seed)
        for k in first:
            if not _same(first[k], again[k], case.targets, case.target_confidence):
                raise _fail(selector, f"two runs with seed {seed} chose differently at k={k}", case.name)


def check_chooses_k_distinct_seen_items(selector: Selector, *, sizes=SIZES, seed: int = 0) -> None:
    """``select(prepared, k)`` returns a MicroBenchmark of k items, none twice, all among the seen items
    (an adaptive test: k items per target).

    Why: every measure is read at a size k, the number of items a target answers; a repeated item
    or one outside the seen half would estimate with fewer items, or with the unseen ones the truth
    is measured on.
    """
    _require_selector(selector)
    for case in _cases(seed):
        n = case.source.n_items
        for k, micro in _choices(selector.clone(), case, sizes, seed).items():
            if not isinstance(micro, MicroBenchmark):
                raise _fail(selector, f"select(k={k}) returned {type(micro).__name__}, not a MicroBenchmark",
                            case.name)
            if micro.size != k:
                raise _fail(selector, f"select(k={k}) gave a micro-benchmark of {micro.size} items", case.name)
            items = np.asarray(micro.items)
            if len(np.unique(items)) != len(items) or (len(items) and (items.min() < 0 or items.max() >= n)):
                raise _fail(selector, f"select(k={k}) chose an item twice or outside the {n} seen items", case.name)


def check_refuses_a_size_beyond_the_seen_items(selector: Selector, *, sizes=SIZES, seed: int = 0) -> None:
    """``select`` with k larger than the number of seen items raises a ``SelectorError``.

    Why: a size that cannot be honoured must stop the experiment with a message that says so, not
    give a smaller micro-benchmark that is then reported under the larger size.
    """
    _require_selector(selector)
    for case in _cases(seed):
        n = case.source.n_items
        prepared = selector.clone().prepare(case.source, np.random.default_rng(seed))
        try:
            selector.clone().select(prepared, n + 1, np.random.default_rng(seed))
        except SelectorError:
            continue
        raise _fail(selector, f"select(k={n + 1}) beyond the {n} seen items was not refused with a "
                    "SelectorError (call self.check_size(k, n_items))", case.name)


def check_gives_proper_weights(selector: Selector, *, sizes=SIZES, seed: int = 0) -> None:
    """The weights are finite and non-negative, and sum to 1 unless the class sets ``weights_sum_to_one = False``.

    Why: the default estimate is ``sum(weights * answers)``; weights summing to 1 make it a weighted
    mean, an accuracy. Estimators whose weights need not (Horvitz-Thompson, IRT) say so on the class.
    """
    _require_selector(selector)
    for case in _cases(seed):
        for k, micro in _choices(selector.clone(), case, sizes, seed).items():
            weights = np.asarray(micro.weights)
            if not np.all(np.isfinite(weights)) or np.any(weights < 0):
                raise _fail(selector, f"select(k={k}) gave weights that are not finite and non-negative", case.name)
            if getattr(selector, "weights_sum_to_one", True) and len(weights) and not np.isclose(weights.sum(), 1.0):
                raise _fail(selector, f"select(k={k}) gave weights summing to {weights.sum():.6g}, not 1 (set the "
                            "class attribute weights_sum_to_one = False for an estimator whose weights need not)",
                            case.name)


def check_estimates_one_finite_number_per_target(selector: Selector, *, sizes=SIZES, seed: int = 0) -> None:
    """``estimate()`` of every chosen micro-benchmark gives one finite number per target.

    Why: the metrics compare every target with every other; a missing or infinite estimate would
    drop pairs silently or poison every mean it enters.
    """
    _require_selector(selector)
    for case in _cases(seed):
        for k, micro in _choices(selector.clone(), case, sizes, seed).items():
            estimate = np.asarray(micro.estimate(case.targets, case.target_confidence))
            if estimate.shape != (len(case.targets),) or not np.all(np.isfinite(estimate)):
                raise _fail(selector, f"estimate() of the k={k} micro-benchmark is not one finite number per target",
                            case.name)


def check_does_not_modify_its_inputs(selector: Selector, *, sizes=SIZES, seed: int = 0) -> None:
    """The SourceData arrays given to ``prepare``/``select`` (and the targets' answers given to ``estimate``)
    are byte-identical afterwards.

    Why: an experiment hands the same run's source data to every selector, and the same targets'
    answers to every estimate; a selector that sorts, normalises or fills them in place changes what
    the selectors after it see, so the comparison depends on the order they ran in.
    """
    _require_selector(selector)
    for case in _cases(seed):
        before = _snapshot(case.source)
        targets = case.targets.tobytes(), None if case.target_confidence is None else case.target_confidence.tobytes()
        chosen = _choices(selector.clone(), case, sizes, seed)
        changed = [name for name, value in _snapshot(case.source).items() if value != before[name]]
        if changed:
            raise _fail(selector, f"prepare()/select() changed the source data it was given ({', '.join(changed)}); "
                        "work on a copy (np.sort(x), not x.sort(); x = x / s, not x /= s)", case.name)
        for k, micro in chosen.items():
            micro.estimate(case.targets, case.target_confidence)
            after = (case.targets.tobytes(),
                     None if case.target_confidence is None else case.target_confidence.tobytes())
            if after != targets:
                raise _fail(selector, f"estimate() of the k={k} micro-benchmark changed the targets' answers it "
                            "was given; work on a copy", case.name)


def check_does_not_modify_its_parameters(selector: Selector, *, sizes=SIZES, seed: int = 0) -> None:
    """``get_params()`` is the same before and after ``prepare``/``select``, and equal to the constructor's arguments.

    Why: the parameters are the selector's identity: its label in result tables, its cache key and
    its record in provenance files are read from ``get_params()``, and ``clone()`` rebuilds it from
    them. A constructor that changes its arguments (rounds, copies, fills in a default) makes the
    clone differ from the original; a ``prepare`` or ``select`` that changes them (a fitted value
    stored as a parameter, a list appended to) makes the next run another method, and the label
    lie. A default of ``None`` may stand for a value the class picks (the adaptive tests' ``top_m``).
    """
    _require_selector(selector)
    own = selector.clone()
    given = own.get_params(deep=False)
    try:
        stored = type(own)(**given).get_params(deep=False)
    except Exception as err:  # noqa: BLE001 -- a class that cannot be rebuilt from its parameters
        raise _fail(selector, f"it cannot be rebuilt from get_params() ({type(err).__name__}: {err})") from None
    for key, value in given.items():
        if not _stored_as_given(value, stored[key]):
            raise _fail(selector, f"its constructor stores {key}={stored[key]!r} when given {value!r}; store each "
                        "argument unchanged (check it in validate_params, derive from it in prepare)")
    try:
        plain = type(own)()
    except TypeError:  # required parameters: no default object to check
        plain = None
    if plain is not None:
        kept = plain.get_params(deep=False)
        for key, default in type(own)._parameter_defaults().items():
            if default is not None and not _stored_as_given(default, kept[key]):
                raise _fail(selector, f"its constructor stores {key}={kept[key]!r} when given its default "
                            f"{default!r}; store each argument unchanged")
    try:
        before = copy.deepcopy(own.get_params(deep=True))
    except Exception as err:  # noqa: BLE001 -- parameters that cannot be copied cannot be compared
        raise _fail(selector, f"its parameters cannot be copied ({type(err).__name__}: {err})") from None
    for case in _cases(seed):
        _choices(own, case, sizes, seed)
        after = own.get_params(deep=True)
        changed = sorted(set(before) ^ set(after)) or [k for k in before if not _equal(before[k], after[k])]
        if changed:
            raise _fail(selector, f"prepare()/select() changed its parameters ({', '.join(changed)}): "
                        f"{', '.join(f'{k}={before.get(k)!r} became {after.get(k)!r}' for k in changed)}; keep "
                        "what a run learns in what prepare() returns, not in the selector", case.name)


#: Every check of the contract, in the order :func:`check_selector` runs them.
CHECKS: tuple[Callable[..., None], ...] = (
    check_has_a_name_of_its_own, check_clone_keeps_its_parameters, check_survives_pickling,
    check_is_deterministic_under_a_seed, check_chooses_k_distinct_seen_items,
    check_refuses_a_size_beyond_the_seen_items, check_gives_proper_weights,
    check_estimates_one_finite_number_per_target, check_does_not_modify_its_inputs,
    check_does_not_modify_its_parameters,
)


def selector_checks(selector: Selector, *, sizes=SIZES, seed: int = 0) -> Iterator[tuple[str, Callable[[], None]]]:
    """The contract's checks of ``selector``, one by one: ``(check name, check)`` pairs.

    Each check is called with no arguments and raises :class:`SelectorContractError` when
    ``selector`` breaks its rule (for a test runner that reports each rule as its own test; see
    ``mbutils.testing.parametrize_with_checks``).

    Examples
    --------
    >>> from mbutils import make_selector
    >>> for name, check in selector_checks(make_selector("random")):
    ...     check()  # passes silently
    >>> [name for name, _ in selector_checks(make_selector("random"))][:2]
    ['check_has_a_name_of_its_own', 'check_clone_keeps_its_parameters']
    """
    for check in CHECKS:
        yield check.__name__, functools.partial(check, selector, sizes=sizes, seed=seed)


def check_selector(selector: Selector, *, sizes=SIZES, seed: int = 0) -> None:
    """Run the selector contract on ``selector``; raise :class:`SelectorContractError` naming every broken rule.

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
    mbutils.base.errors.SelectorContractError: Careless() breaks 2 rules of the selector contract:
    - check_chooses_k_distinct_seen_items (8 models, 3 subtasks): select(k=4) chose an item twice or
      outside the 36 seen items
    - check_refuses_a_size_beyond_the_seen_items (8 models, 3 subtasks): select(k=37) beyond the 36 seen
      items was not refused with a SelectorError (call self.check_size(k, n_items))
    """
    _require_selector(selector)
    broken: list[tuple[str, SelectorContractError]] = []
    for name, check in selector_checks(selector, sizes=sizes, seed=seed):
        try:
            check()
        except SelectorContractError as err:
            broken.append((name, err))
        except Exception as err:  # noqa: BLE001 -- a check the selector crashes breaks its rule too
            broken.append((name, _fail(selector, f"{name} raised {type(err).__name__}: {err}")))
    if len(broken) == 1:
        raise broken[0][1]
    if broken:
        lines = [f"- {name}{f' ({err.case})' if getattr(err, 'case', '') else ''}: {getattr(err, 'rule', err)}"
                 for name, err in broken]
        raise SelectorContractError(f"{selector!r} breaks {len(broken)} rules of the selector contract:\n"
                                    + "\n".join(lines))
