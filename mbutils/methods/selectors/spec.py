"""Selectors given by name or as objects: one label for tables, one identity for the cache.

``run_experiment(bench, ["random", AnchorPoints(warm_start=False)], ...)`` mixes both
forms. A selector with its class's default parameters is labelled by its name
(``"anchor_points"``); one with other parameters by its name and what differs
(``"anchor_points(warm_start=False)"``), so two parameterisations never share a row label
or a cache entry.
"""

from __future__ import annotations

import hashlib
import inspect

from mbutils.base.errors import SelectorError
from mbutils.methods.selectors.base import Selector


def _registered():
    """Name -> factory of every registered selector."""
    from mbutils.methods.selectors.registry import factories

    return factories()


def as_selector(spec) -> Selector:
    """A fresh selector from a registered name or a :class:`Selector` (cloned, so a run never
    changes the caller's object)."""
    if isinstance(spec, str):
        from mbutils.methods.selectors.registry import make_selector

        return make_selector(spec)
    if isinstance(spec, Selector):
        try:
            return spec.clone()
        except Exception as err:  # noqa: BLE001 -- a parameter that cannot be copied
            raise SelectorError(f"{type(spec).__name__}: cannot copy its parameters ({type(err).__name__}: {err}); "
                                "give it parameters that can be copied (numbers, text, arrays)") from None
    if isinstance(spec, type) and issubclass(spec, Selector):
        raise SelectorError(f"give a selector object, {spec.__name__}(), not the class {spec.__name__}")
    raise SelectorError(f"a selector is a name or a Selector object, not {type(spec).__name__} {spec!r}")


def _params(selector: Selector) -> dict:
    return selector.get_params(deep=False)


def _same(a, b) -> bool:
    try:
        return bool(a == b) and type(a) is type(b)
    except Exception:  # noqa: BLE001 -- arrays and the like: compared by their text
        return repr(a) == repr(b)


def _same_params(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)


def selector_label(selector: Selector) -> str:
    """The registered name of an object equal to ``selector``; else its name followed by the
    parameters that differ from that name's default object (or its class's defaults).

    Examples
    --------
    >>> from mbutils.methods.selectors import AnchorPoints, SubtaskEqual
    >>> selector_label(AnchorPoints())
    'anchor_points'
    >>> selector_label(SubtaskEqual(weighted=True))
    'subtask_equal_weighted'
    >>> selector_label(AnchorPoints(warm_start=False))
    'anchor_points(warm_start=False)'
    """
    params = _params(selector)
    defaults_by_name = {name: factory() for name, factory in _registered().items()}
    for name, default in defaults_by_name.items():
        if type(default) is type(selector) and _same_params(_params(default), params):
            return name
    name = selector.name or type(selector).__name__
    default = defaults_by_name.get(name)
    if default is not None and type(default) is not type(selector):
        raise SelectorError(f"the name {name!r} belongs to {type(default).__name__}; give "
                            f"{type(selector).__name__} a name of its own (its class attribute `name`)")
    if default is not None:
        defaults = _params(default)
    else:
        try:
            defaults = _params(type(selector)())
        except Exception:  # noqa: BLE001 -- a class with required parameters has no default object
            defaults = type(selector)._parameter_defaults()
    changed = {k: v for k, v in params.items() if k not in defaults or not _same(v, defaults[k])}
    if not changed:
        return name
    return f"{name}({', '.join(f'{k}={v!r}' for k, v in changed.items())})"


def _class_source_hash(cls) -> str | None:
    """Hash of the source of a class defined outside the package (None when Python cannot find it)."""
    try:
        source = inspect.getsource(cls)
    except (OSError, TypeError):
        return None
    return hashlib.sha256(source.encode()).hexdigest()[:16]


def selector_identity(selector: Selector) -> dict | None:
    """What a cached result of ``selector`` is keyed by: class, name and every parameter.

    A class of this package is covered by the package's code fingerprint; a class defined
    elsewhere (a notebook, a test module) adds the hash of its source, and is not cached
    at all when its source cannot be read (None), since its code could change unseen.
    """
    cls = type(selector)
    identity = {"class": f"{cls.__module__}.{cls.__qualname__}", "name": selector.name,
                "params": {k: repr(v) for k, v in selector.get_params(deep=True).items()}}
    if not cls.__module__.startswith("mbutils."):
        source = _class_source_hash(cls)
        if source is None:
            return None
        identity["source"] = source
    return identity


def resolve_selectors(specs) -> dict[str, Selector]:
    """Label -> fresh selector for every name or object of ``specs`` (repeats kept once).

    Examples
    --------
    >>> from mbutils.methods.selectors import AnchorPoints
    >>> list(resolve_selectors(["random", AnchorPoints(warm_start=False), "random"]))
    ['random', 'anchor_points(warm_start=False)']
    """
    if isinstance(specs, (str, Selector)):
        specs = [specs]
    out: dict[str, Selector] = {}
    for spec in specs:
        selector = as_selector(spec)
        out.setdefault(selector_label(selector), selector)
    if not out:
        raise SelectorError("give at least one selector")
    return out


def check_picklable(label: str, selector: Selector) -> None:
    """Refuse, with what to do, a selector that worker processes could not receive."""
    import cloudpickle  # joblib's own dependency: what loky sends tasks with

    try:
        cloudpickle.dumps(selector)
    except Exception as err:  # noqa: BLE001 -- any pickling failure means the same thing here
        raise SelectorError(
            f"selector {label!r} cannot be sent to worker processes ({type(err).__name__}: {err}); "
            "run it with jobs=1 or backend='threading', or keep unpicklable objects out of its parameters"
        ) from None
