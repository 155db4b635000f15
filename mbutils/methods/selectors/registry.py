"""The registry of selector names: what the command line and the profiles accept."""

from __future__ import annotations

from typing import Callable

from mbutils.base.errors import SelectorError
from mbutils.methods.selectors.base import Selector

_REGISTRY: dict[str, Callable[[], Selector]] = {}


def register(name: str, factory: Callable[[], Selector]) -> None:
    """Make ``name`` usable where names are (the command line, profiles). In Python, pass the
    object itself instead: ``run_experiment(bench, [MySelector()], ...)``."""
    _REGISTRY[name] = factory


FAMILIES = ("random_sampling", "confidence", "diversity", "anchor", "tinybench", "adaptive")


def _load_families() -> None:
    """Import every family once, in a fixed order, so names are always listed the same way.

    A family module offers its selectors in a ``SELECTORS`` dict and imports nothing of
    this package but ``base``, so the registry depends on the families and never the
    reverse (older families may still call :func:`register`).
    """
    from importlib import import_module

    for module in FAMILIES:
        for name, factory in getattr(import_module(f"{__package__}.{module}"), "SELECTORS", {}).items():
            _REGISTRY.setdefault(name, factory)


def selector_names() -> list[str]:
    """Every registered selector name, in a fixed order (the command line's choices).

    Returns
    -------
    list of str
        The names :func:`make_selector` accepts, family by family.

    Examples
    --------
    >>> selector_names()[:3]
    ['random', 'subtask_equal', 'subtask_equal_weighted']
    """
    _load_families()
    return list(_REGISTRY)


def needs_sources(name: str) -> bool:
    """Whether a selector learns from source models (False: usable without other models' results);
    unknown names count as needing them."""
    try:
        return make_selector(name).uses_sources
    except Exception:  # noqa: BLE001 -- an unknown name is not ours to vouch for
        return True


def make_selector(name: str, **params) -> Selector:
    """A new selector of a registered name, with ``params`` set over its defaults.

    Parameters
    ----------
    name : str
        A name of :func:`selector_names` (``"anchor_points"``).
    **params
        Constructor parameters to set (``<name>__<parameter>`` reaches a nested model's).

    Returns
    -------
    Selector
        A fresh, unprepared selector. Unknown names list the known ones; unknown
        parameters list the selector's.

    Examples
    --------
    >>> make_selector("confidence_stratified", n_strata=5)
    ConfidenceStratified(n_strata=5, estimator='ht')
    """
    _load_families()
    try:
        factory = _REGISTRY[name]
    except KeyError:
        raise SelectorError(
            f"unknown selector {name!r}; choose from: {', '.join(_REGISTRY)}"
        ) from None
    selector = factory()
    return selector.set_params(**params) if params else selector


