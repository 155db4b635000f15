"""Checks for your own extensions of mbutils: run the selector contract on a selector before an experiment.

The contract is a list of named checks, one per rule (:data:`CHECKS`; each check's docstring says
why its rule exists). :func:`check_selector` runs them all and reports every broken rule;
:func:`selector_checks` gives them one by one; :func:`parametrize_with_checks` makes them pytest
tests, one per selector and check:

>>> from mbutils import make_selector
>>> from mbutils.testing import check_selector
>>> check_selector(make_selector("random"))  # passes silently; a broken rule raises SelectorContractError
"""

from __future__ import annotations

from mbutils.methods.selectors.contract import (CHECKS, SIZES, SelectorContractError,
                                                check_chooses_k_distinct_seen_items, check_clone_keeps_its_parameters,
                                                check_does_not_modify_its_inputs, check_does_not_modify_its_parameters,
                                                check_estimates_one_finite_number_per_target,
                                                check_gives_proper_weights, check_has_a_name_of_its_own,
                                                check_is_deterministic_under_a_seed,
                                                check_refuses_a_size_beyond_the_seen_items, check_selector,
                                                check_survives_pickling, selector_checks)

__all__ = ["CHECKS", "SelectorContractError", "check_selector", "parametrize_with_checks", "registered_selectors",
           "selector_checks", *(check.__name__ for check in CHECKS)]


def registered_selectors() -> list:
    """One default object of every registered selector name (what the contract's tests run by default).

    Examples
    --------
    >>> [type(s).__name__ for s in registered_selectors()][:3]
    ['RandomSampling', 'SubtaskEqual', 'SubtaskEqual']
    """
    from mbutils.methods.selectors.registry import make_selector, selector_names

    return [make_selector(name) for name in selector_names()]


def _label(selector) -> str:
    """A selector's label in result tables (its pytest id); the class name of anything else."""
    from mbutils.methods.selectors.base import Selector
    from mbutils.methods.selectors.spec import selector_label

    if not isinstance(selector, Selector):
        return type(selector).__name__
    try:
        return selector_label(selector)
    except Exception:  # noqa: BLE001 -- a name another class holds (a check reports it): label by the class
        return type(selector).__name__


def parametrize_with_checks(selectors=None, *, sizes=SIZES, seed: int = 0):
    """A ``pytest.mark.parametrize`` that runs every check of the contract on every selector, one test each.

    The test receives ``selector`` and ``check`` (a callable of no arguments that raises
    :class:`SelectorContractError` when its rule is broken); its ids are ``<label>-<check name>``, so
    a failure names the selector and the rule, and ``-k check_does_not_modify_its_inputs`` runs one
    rule on every selector.

    Parameters
    ----------
    selectors : iterable of Selector, optional
        The selectors to check (default: :func:`registered_selectors`, every registered name).
    sizes : sequence of int, default (1, 4, 9)
        The sizes k the checks select.
    seed : int, default 0
        Seed of the generated pools and of the runs.

    Examples
    --------
    >>> from mbutils import make_selector
    >>> from mbutils.testing import parametrize_with_checks
    >>> mark = parametrize_with_checks([make_selector("random")])
    >>> mark.args[0], len(mark.args[1])
    ('selector, check', 10)
    >>> mark.kwargs["ids"][0]
    'random-check_has_a_name_of_its_own'

    In a test module::

        @parametrize_with_checks([MySelector(), MySelector(depth=3)])
        def test_my_selector_keeps_the_contract(selector, check):
            check()
    """
    import pytest

    selectors = registered_selectors() if selectors is None else list(selectors)
    values, ids = [], []
    for selector in selectors:
        label = _label(selector)
        for name, check in selector_checks(selector, sizes=sizes, seed=seed):
            values.append((selector, check))
            ids.append(f"{label}-{name}")
    return pytest.mark.parametrize("selector, check", values, ids=ids)
