"""The registry of selectors: one declaration per name, which every list of selectors is read from.

A selector joins by one declaration on its class, the :func:`register` decorator::

    @register(roles=("paper", "auto"))
    class AnchorPoints(Selector):
        name = "anchor_points"

and a named variant of a class is one more declaration on it
(``@register("subtask_equal_weighted", weighted=True)``). Nothing else lists selectors: the
names :func:`make_selector` accepts and the command line's ``--selectors`` lists
(:func:`selector_names`), the package's public selector classes (:func:`selector_classes`, read by
``mbutils.__all__``), the book's paper methods and ``build-micro --selector auto``'s candidates
(:func:`names_with_role`), and the selector contract's pytest checks
(``mbutils.testing.parametrize_with_checks()``) all read this registry.

The shipped families register themselves when imported; :data:`FAMILIES` is the order they are
imported and listed in (the book's legend order), so names are listed the same way whatever was
imported first. A class defined elsewhere (a notebook, a test) joins when its module runs the
declaration, after the families.
"""

from __future__ import annotations

import copy
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import import_module

from mbutils.base.errors import SelectorError
from mbutils.methods.selectors.base import Selector

#: The shipped families (modules of this package), in the order they are listed.
FAMILIES = ("random_sampling", "confidence", "diversity", "anchor", "tinybench", "adaptive")

#: What a role says of a registered name (``register(roles=...)``), and who reads it.
ROLES = {
    "paper": "one of the methods of the paper's figures, in the book's legend order (book.PAPER_SELECTORS)",
    "auto": "a candidate of build-micro --selector auto: a fixed list of items a micro-benchmark folder can "
            "hold (mbutils.micro.choice.CANDIDATES)",
}

_FAMILY_MODULES = frozenset(f"{__package__}.{family}" for family in FAMILIES)
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*")
_ORDER = itertools.count()


@dataclass(frozen=True, eq=False)
class Entry:
    """One registered name: the class, the parameters it sets over the class's defaults, its roles."""

    name: str
    cls: type
    params: dict = field(default_factory=dict)
    roles: frozenset = frozenset()
    #: declaration order (the order within a family)
    order: int = 0

    @property
    def family(self) -> str:
        """The module that declared it: a family of :data:`FAMILIES`, or a user's module."""
        module = self.cls.__module__
        return module.rpartition(".")[2] if self.shipped else module

    @property
    def shipped(self) -> bool:
        """Whether the class is one of the shipped families' (not a user's)."""
        return self.cls.__module__ in _FAMILY_MODULES

    def make(self) -> Selector:
        """A new selector: the class with the entry's parameters (copied, so no two objects share one)."""
        return self.cls(**copy.deepcopy(self.params))

    def _sort_key(self) -> tuple:
        return (FAMILIES.index(self.family) if self.shipped else len(FAMILIES)), self.order


_ENTRIES: dict[str, Entry] = {}


def same_class(a: type, b: type) -> bool:
    """One class, or its redefinition (a notebook cell or a module run again)."""
    return a is b or (a.__module__, a.__qualname__) == (b.__module__, b.__qualname__)


def _add(name, cls, params: dict, roles) -> None:
    if not (isinstance(cls, type) and issubclass(cls, Selector)):
        raise SelectorError(f"register() takes a Selector subclass, not {cls!r}")
    if not isinstance(name, str) or not name:
        raise SelectorError(f"{cls.__name__}: give the class a name (its class attribute `name`) or "
                            "register(\"a_name\") it")
    if not _NAME.fullmatch(name):
        raise SelectorError(f"{cls.__name__}: the name {name!r} cannot be registered: a name is letters, digits, "
                            "'_', '.' and '-' (the command line lists names with commas)")
    roles = frozenset([roles] if isinstance(roles, str) else roles)
    unknown = sorted(roles - set(ROLES))
    if unknown:
        raise SelectorError(f"{name}: unknown role {unknown[0]!r}; the roles are {', '.join(ROLES)}")
    known = cls._parameter_names()
    for key in params:
        if key not in known:
            raise SelectorError(f"{name}: unknown parameter {key!r} of {cls.__name__}; its parameters are "
                                f"{', '.join(known) or 'none'}")
    old = _ENTRIES.get(name)
    if old is not None and not same_class(old.cls, cls):
        raise SelectorError(f"the name {name!r} belongs to {old.cls.__name__}; give {cls.__name__} a name of its "
                            "own (its class attribute `name`)")
    order = old.order if old is not None else next(_ORDER)
    _ENTRIES[name] = Entry(name, cls, dict(params), roles, order)


def register(name_or_class=None, factory=None, /, *, roles=(), **params):
    """Make a selector class usable by name: the one declaration a selector needs, as a class decorator.

    ``@register`` registers the class under its class attribute ``name``;
    ``@register("a_name", parameter=value)`` registers a named variant, the class with those
    parameters set over its defaults (stack several for several names: the lowest is listed
    first). The name is then accepted everywhere names are: :func:`make_selector`, the command
    line's ``--selectors``, the profiles, and the selector contract's checks
    (``mbutils.testing.parametrize_with_checks()``). In Python you need no name: pass the object
    itself, ``run_experiment(bench, [MySelector()], ...)``.

    Parameters
    ----------
    name_or_class : str or Selector subclass, optional
        The name (default: the class attribute ``name``), or the class itself when used bare
        as ``@register``.
    factory : Selector subclass or callable, optional
        The older form ``register(name, factory)``: registers at once what ``factory()`` builds
        (its class and parameters).
    roles : iterable of str, optional
        Roles of the name (``ROLES``): ``"paper"`` (one of the paper's methods) and
        ``"auto"`` (a candidate of ``build-micro --selector auto``).
    **params
        Constructor parameters of the variant.

    Returns
    -------
    The class (so the decorator leaves it unchanged), or a decorator when given no class.

    Raises
    ------
    MbutilsError
        A ``SelectorError`` for a name another class holds, an unknown parameter or role,
        or something that is not a Selector subclass.

    Examples
    --------
    >>> import numpy as np
    >>> from mbutils import MicroBenchmark, Selector, make_selector, register, selector_names
    >>> @register
    ... class HardestFirst(Selector):
    ...     name = "hardest_first"
    ...     def select(self, prepared, k, rng):
    ...         self.check_size(k, prepared.n_items)
    ...         hardest = np.argsort(prepared.correct.mean(axis=0), kind="stable")[:k]
    ...         return MicroBenchmark(np.sort(hardest), np.full(k, 1.0 / k))
    >>> "hardest_first" in selector_names(), make_selector("hardest_first")
    (True, HardestFirst())
    >>> from mbutils.methods.selectors.registry import unregister
    >>> unregister("hardest_first")  # a test or an example leaves the registry as it found it
    >>> "hardest_first" in selector_names()
    False
    """
    if factory is not None:  # register(name, factory): at once
        if isinstance(factory, type):
            _add(name_or_class, factory, params, roles)
        else:
            made = factory()
            _add(name_or_class, type(made), {**made.get_params(deep=False), **params}, roles)
        return factory
    if isinstance(name_or_class, type):  # bare @register
        _add(name_or_class.name, name_or_class, params, roles)
        return name_or_class
    if name_or_class is not None and not isinstance(name_or_class, str):
        raise SelectorError(f"register() takes a name or a Selector subclass, not {name_or_class!r}")

    def decorate(cls):
        _add(cls.name if name_or_class is None and isinstance(cls, type) else name_or_class, cls, params, roles)
        return cls

    return decorate


def unregister(name: str) -> None:
    """Remove a registered name: what a test or a notebook registered (a shipped name stays removed until
    the process ends, since its family registers it once, when imported)."""
    if _ENTRIES.pop(name, None) is None:
        raise SelectorError(f"unknown selector {name!r}; nothing to unregister")


def _load_families() -> None:
    """Import every shipped family once (each registers its selectors as it is imported)."""
    for module in FAMILIES:
        import_module(f"{__package__}.{module}")


def entries(role: str | None = None) -> list[Entry]:
    """Every registered entry (of ``role``), in a fixed order: family by family, then in declaration order."""
    _load_families()
    if role is not None and role not in ROLES:
        raise SelectorError(f"unknown role {role!r}; the roles are {', '.join(ROLES)}")
    listed = sorted(_ENTRIES.values(), key=Entry._sort_key)
    return [e for e in listed if role is None or role in e.roles]


def selector_names(role: str | None = None) -> list[str]:
    """Every registered selector name, in a fixed order (the command line's choices).

    Parameters
    ----------
    role : str, optional
        Only the names of this role (``ROLES``: ``"paper"``, ``"auto"``).

    Returns
    -------
    list of str
        The names :func:`make_selector` accepts, family by family.

    Examples
    --------
    >>> selector_names()[:3]
    ['random', 'subtask_equal', 'subtask_equal_weighted']
    >>> selector_names("paper")
    ['random', 'subtask_equal', 'confidence_stratified', 'diversity', 'anchor_points', 'tinybenchmarks']
    """
    return [e.name for e in entries(role)]


def selector_classes() -> list[type]:
    """The package's own registered selector classes, once each, in the order of :func:`selector_names`
    (the public ones: ``mbutils.__all__`` lists them)."""
    seen: dict[type, None] = {}
    for entry in entries():
        if entry.shipped:
            seen.setdefault(entry.cls, None)
    return list(seen)


class SelectorNames(Sequence):
    """The names of one role, read from the registry each time it is used (so a module can define its list
    as ``names_with_role("paper")`` without importing the selectors until the list is read)."""

    def __init__(self, role: str):
        if role not in ROLES:
            raise SelectorError(f"unknown role {role!r}; the roles are {', '.join(ROLES)}")
        self.role = role

    def _names(self) -> tuple[str, ...]:
        return tuple(selector_names(self.role))

    def __getitem__(self, index):
        return self._names()[index]

    def __len__(self) -> int:
        return len(self._names())

    def __iter__(self):
        return iter(self._names())

    def __contains__(self, name) -> bool:
        return name in self._names()

    def __eq__(self, other) -> bool:
        if isinstance(other, SelectorNames):
            return self._names() == other._names()
        return isinstance(other, (tuple, list)) and self._names() == tuple(other)

    __hash__ = None

    def __add__(self, other):
        return self._names() + tuple(other)

    def __radd__(self, other):
        return tuple(other) + self._names()

    def __repr__(self) -> str:
        return repr(self._names())


def names_with_role(role: str) -> SelectorNames:
    """The registered names of ``role``, as a tuple-like list read from the registry when used.

    Examples
    --------
    >>> list(names_with_role("auto"))
    ['random', 'subtask_equal', 'random_difference', 'confidence_stratified', 'diversity', 'anchor_points',
     'tinybenchmarks']
    """
    return SelectorNames(role)


def factories() -> dict:
    """Name -> a function building that name's default object, in the order of :func:`selector_names`."""
    return {e.name: e.make for e in entries()}


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
    entry = _ENTRIES.get(name)
    if entry is None:
        raise SelectorError(f"unknown selector {name!r}; choose from: {', '.join(selector_names())}")
    selector = entry.make()
    return selector.set_params(**params) if params else selector
