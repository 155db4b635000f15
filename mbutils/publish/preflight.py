"""A chapter's parameter values checked before its kernel starts: bundles, sizes, pools and models.

``run-chapter`` refuses, before any cell runs, a value the chapter could only fail on or would
quietly change: a bundle name that names no bundle, sizes larger than a bundle's seen half (the
chapter would drop them, or run the whole seen half in their place), sources and targets the pool
cannot hold, a ``new_model`` the bundle does not have. Each check is the library's own rule with
its own message, the one ``python -m mbutils experiment`` prints for the same sizes or pool
(:func:`mbutils.methods.experiment.check_sizes`, :func:`mbutils.methods.protocol.check_protocol`);
advice that names the experiment command's options (``--sources``) is worded with run-chapter's
``-p`` names (:func:`run_chapter_wording`). A refusal is a :class:`ChapterParameterError`, which
the command line reports with exit status 2, as it does a malformed command line.
"""

from __future__ import annotations

import ast
import re

from mbutils.base.errors import ChapterParameterError, MbutilsError
from mbutils.book.params import int_list, name_list, optional_int, parse_cases
from mbutils.book.profiles import target_cases
from mbutils.data.bundle import find_bundle
from mbutils.data.catalogue import CATALOGUE, STAND_INS
from mbutils.data.datasets import resolve_data
from mbutils.methods.protocol import Protocol, check_protocol, fit_to_pool

#: Parameters that name bundles: comma-separated names, folders or ``synthetic-*`` (``cases``:
#: BUNDLE:TARGET_SET pairs; the synthetic chapter's ``data``: REAL:STAND_IN pairs).
BUNDLE_PARAMETERS = ("data", "picture_data", "adaptive_data", "confidence_data", "fig1_data", "per_subtask_data",
                     "second_data", "others", "cases")
#: (chapter, parameter) whose items are pairs REAL[:STAND_IN] of which only the stand-in must exist: the
#: synthetic chapter compares each real bundle with its stand-in and notes a real one that is not there.
OPTIONAL_REAL = frozenset({("synthetic", "data")})
#: Single-bundle parameters whose bundle runs the experiment with the page's sizes, sources and targets.
EXPERIMENT_BUNDLES = ("confidence_data", "fig1_data", "per_subtask_data")
#: Chapters whose ``sizes`` are not the experiment's sizes on the seen half (use_micro: the sizes of its
#: coverage check, drawn from all items).
OWN_SIZES = frozenset({"use_micro"})

#: How the library's advice names an option of the experiment command -> run-chapter's words for it.
_OPTIONS = {"--missing drop-models": ("missing", "-p missing drop_models"),
            "--missing drop-items": ("missing", "-p missing drop_items"),
            "--sources": ("sources", "-p sources N"), "--targets": ("targets", "-p targets N"),
            "--runs": ("runs", "-p runs N"), "--seed": ("seed", "-p seed N"), "--sizes": ("sizes", "-p sizes K,K"),
            "--frontier": ("frontier", "-p frontier SHARE"), "--threshold": ("threshold", "-p threshold T")}
_OPTION = re.compile("(?:" + "|".join(re.escape(o) for o in sorted(_OPTIONS, key=len, reverse=True)) + r")(?![\w-])")


def run_chapter_wording(message: str, parameters) -> str:
    """``message`` with each option of the experiment command it names (``--sources``) written as the
    run-chapter parameter that sets the same (``-p sources N``), where the chapter has that parameter."""
    def word(match):
        name, words = _OPTIONS[match.group(0)]
        return words if name in parameters else match.group(0)

    return _OPTION.sub(word, str(message))


def _default(parameters: dict, name: str):
    """The value a chapter's parameters cell gives ``name`` (its source text read as a literal)."""
    source = parameters.get(name, {}).get("default")
    try:
        return ast.literal_eval(source) if source is not None else None
    except (ValueError, SyntaxError):
        return None


class _Run:
    """The values one run of a chapter is given, its parameters, and the bundles they load (each once)."""

    def __init__(self, stem: str, parameters: dict, values: dict, profile: str | None):
        self.stem, self.parameters, self.values, self.profile = stem, parameters, values, profile
        self._loaded: dict[str, object] = {}

    def value(self, name: str):
        return self.values[name] if name in self.values else _default(self.parameters, name)

    def refuse(self, name: str | None, err) -> ChapterParameterError:
        where = f"chapter {self.stem!r}" + (f", parameter {name}" if name else "")
        return ChapterParameterError(f"{where}: {run_chapter_wording(err, self.parameters)}")

    def benchmark(self, name: str, param: str = "data"):
        """The bundle ``name`` (given by ``param``) resolves to in the chapter (a benchmark's real bundle, else
        its stand-in)."""
        if name not in self._loaded:
            missing = self.value("missing") or "error"
            try:
                self._loaded[name] = resolve_data(name, missing=str(missing)).benchmark
            except MbutilsError as err:
                raise self.refuse(param, err) from None
        return self._loaded[name]

    def experiment_bundles(self) -> list[tuple[str, str]]:
        """(bundle, the parameter naming it) of each bundle the chapter runs its experiments on: those of
        ``data`` (for a target-set chapter without them: its cases', else the profile's cases), and its
        experiment bundles the reader named."""
        data = self.value("data")
        try:
            names = [(n, "data") for n in name_list(None if data is None else str(data), "data") or []]
            if not names and "cases" in self.parameters:
                cases = parse_cases(str(self.value("cases") or target_cases(self.profile)))
                names = [(bundle, "cases") for bundle, _ in cases]
        except MbutilsError as err:
            raise self.refuse(None, err) from None
        names += [(str(self.values[p]), p) for p in EXPERIMENT_BUNDLES if self.values.get(p) not in (None, "", "None")]
        return list(dict.fromkeys(names))


def _bundle_exists(name: str) -> None:
    """Refuse a name that reaches no bundle: not a benchmark of the book, a stand-in, a folder or a bundle
    on the data path (the loader's message, which lists what is there)."""
    if name in CATALOGUE or name in STAND_INS:
        return
    find_bundle(name)


def _check_bundles(run: _Run) -> None:
    for param in BUNDLE_PARAMETERS:
        if param not in run.values or param not in run.parameters:
            continue
        value = run.values[param]
        try:
            items = name_list(None if value is None else str(value), param) or []
        except MbutilsError as err:
            raise run.refuse(param, err) from None
        for item in items:
            for part in _must_exist(run.stem, param, item):
                try:
                    _bundle_exists(part)
                except MbutilsError as err:
                    raise run.refuse(param, err) from None


def _must_exist(stem: str, param: str, item: str) -> list[str]:
    """The bundle names in one item of a bundle parameter that must reach a bundle."""
    if (stem, param) in OPTIONAL_REAL:
        stand_in = item.partition(":")[2]
        return [stand_in.strip()] if stand_in.strip() else []
    if param == "cases":  # BUNDLE:TARGET_SET
        return [item.partition(":")[0].strip() or item]
    return [item]


def _check_sizes(run: _Run) -> None:
    """The reader's sizes fit the seen half of every bundle the experiments run on, by the rule and in the
    words of ``experiment``."""
    from mbutils.methods.experiment import check_sizes

    try:
        sizes = int_list(run.values["sizes"], "sizes")
    except MbutilsError as err:
        raise run.refuse(None, err) from None
    if sizes is None:
        return
    for name, param in run.experiment_bundles():
        try:
            check_sizes(run.benchmark(name, param), sizes)
        except MbutilsError as err:
            raise run.refuse("sizes", err) from None


def _check_pool(run: _Run) -> None:
    """The sources and targets (the reader's, or fitted to the pool as the chapter fits them) fit every
    bundle the experiments run on, by the rule and in the words of ``experiment``."""
    try:
        sources, targets = optional_int(run.value("sources"), "sources"), optional_int(run.value("targets"), "targets")
    except MbutilsError as err:
        raise run.refuse(None, err) from None
    for name, param in run.experiment_bundles():
        bench = run.benchmark(name, param)
        try:
            n_sources, n_targets = fit_to_pool(bench.n_models, n_sources=sources, n_targets=targets)
            check_protocol(bench, Protocol(n_sources=n_sources, n_targets=n_targets, n_runs=1))
        except MbutilsError as err:
            raise run.refuse(None, err) from None


def _check_new_model(run: _Run) -> None:
    """The held-out model the reader named is a model of the chapter's bundle."""
    new = run.values["new_model"]
    if new in (None, "", "None"):
        return
    bench = run.benchmark(str(run.value("data")))
    models = [str(m) for m in bench.models]
    if str(new) not in models:
        shown = ", ".join(repr(m) for m in models[:5]) + (f" and {len(models) - 5:,} more" if len(models) > 5 else "")
        raise run.refuse("new_model", f"{str(new)!r} is not a model of {bench.name}, whose {len(models):,} models "
                                      f"are {shown}; give one of them, or leave new_model out for the pool's "
                                      "median-accuracy model")


def check_values(stem: str, parameters: dict, values: dict, *, profile: str | None = None) -> None:
    """Refuse, before a kernel starts, the values of ``values`` (a run's parameters, typed) that chapter
    ``stem`` (its parameters cell read into ``parameters``) cannot use; see the module."""
    run = _Run(stem, parameters, values, profile)
    _check_bundles(run)
    if "sizes" in values and "sizes" in parameters and stem not in OWN_SIZES:
        _check_sizes(run)
    if {"sources", "targets"} <= set(parameters) and {"data", "sources", "targets"} & set(values):
        _check_pool(run)
    if "new_model" in values and "new_model" in parameters:
        _check_new_model(run)
