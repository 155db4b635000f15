"""Micro-benchmark selectors by name.

``make_selector("random")`` returns a fresh selector; :func:`selector_names` lists every
name the command line accepts. Each family lives in its own module and offers its
names in a ``SELECTORS`` dict.
"""

from __future__ import annotations

from typing import Callable

from ..errors import SelectorError
from .base import MicroBenchmark, Selector, SourceData

_REGISTRY: dict[str, Callable[[], Selector]] = {}


def register(name: str, factory: Callable[[], Selector]) -> None:
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
        for name, factory in getattr(import_module(f"{__name__}.{module}"), "SELECTORS", {}).items():
            _REGISTRY.setdefault(name, factory)


def selector_names() -> list[str]:
    _load_families()
    return list(_REGISTRY)


def needs_sources(name: str) -> bool:
    """Whether a selector learns from source models (False: usable without other models' results);
    unknown names count as needing them."""
    try:
        return make_selector(name).uses_sources
    except Exception:  # noqa: BLE001 -- an unknown name is not ours to vouch for
        return True


def make_selector(name: str) -> Selector:
    """A new selector with default parameters; unknown names list the known ones."""
    _load_families()
    try:
        return _REGISTRY[name]()
    except KeyError:
        raise SelectorError(
            f"unknown selector {name!r}; choose from: {', '.join(_REGISTRY)}"
        ) from None


_load_families()

__all__ = ["MicroBenchmark", "Selector", "SourceData", "make_selector", "needs_sources", "register", "selector_names"]
