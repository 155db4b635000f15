"""The benchmarks the book knows, and how a name becomes a bundle (real first, else a stand-in).

The registry of benchmark facts is :data:`mbutils.data.catalogue.CATALOGUE`. Here,
:func:`load_benchmark` loads any name — a folder, a bundle on the search path, or a
simulated ``synthetic-*`` stand-in — and :func:`resolve_data` turns a chapter's ``data``
value into a :class:`DataChoice`: the bundle plus a plain reason that the page prints.
"""

from __future__ import annotations

from dataclasses import dataclass

from mbutils.data.bundle import find_bundle, load_bundle as load_folder
from mbutils.data.datapath import describe_data_path
from mbutils.data.catalogue import BENCHMARK_TITLES, BENCHMARKS, BUNDLE_TITLES, CATALOGUE, SYNTHETIC_PREFIX  # noqa: F401,E501
from mbutils.base.errors import MbutilsError


#: The smallest pool the protocol can run on: 2 targets (one pair) and at least 1 source.
MIN_MODELS = 3


@dataclass(frozen=True)
class DataChoice:
    """The bundle a chapter runs on, and why (real, a synthetic stand-in, or a user's folder)."""

    requested: str
    key: str          # gpqa | bbh | mmlu-pro | mmlu | custom
    kind: str         # real | synthetic | custom
    benchmark: object
    reason: str = ""

    @property
    def name(self) -> str:
        return self.benchmark.name

    @property
    def display_name(self) -> str:
        """How pages name the bundle: a shipped real bundle by its benchmark and source ('BBH (Open LLM
        Leaderboard)'); a stand-in or a reader's bundle by the name that loads it."""
        return BUNDLE_TITLES.get(self.name, self.name) if self.kind == "real" else self.name

    @property
    def title(self) -> str:
        return BENCHMARK_TITLES.get(self.key, self.key)

    @property
    def stand_in(self) -> bool:
        """True when this is a synthetic stand-in (simulated models, not real results)."""
        return self.kind == "synthetic"

    def describe(self) -> str:
        b = self.benchmark
        what = {"real": "real results", "synthetic": "SYNTHETIC data (IRT simulator, not real model results)",
                "custom": "a user bundle"}[self.kind]
        conf = "with" if b.confidence is not None else "without"
        named = self.display_name if self.display_name == b.name else f"{self.display_name} (bundle '{b.name}')"
        return (f"{named}: {what}; {b.n_models} models x {b.n_items:,} items, "
                f"{len(b.subtask_names)} subtask{'s' if len(b.subtask_names) != 1 else ''}, {conf} confidences")


def load_benchmark(name_or_dir, *, missing: str = "error"):
    """A :class:`~mbutils.Benchmark` by folder or name, or a simulated stand-in for a ``synthetic-*``
    name no folder has.

    Parameters
    ----------
    name_or_dir : str or path
        A bundle folder (``responses.csv`` and ``items.csv``, optionally ``confidence.csv``),
        a bundle name on the data path (``gpqa``; see ``python -m mbutils data``), or
        ``synthetic-gpqa`` / ``synthetic-bbh`` / ``synthetic-mmlu-pro`` / ``synthetic-mmlu``.
    missing : {"error", "drop_models", "drop_items"}
        What to do with empty cells: refuse them (naming file, row and column), or drop
        the models or items that have them.

    Returns
    -------
    Benchmark
        Models x items correctness (and confidences, subtasks, target sets when the bundle has them).

    Examples
    --------
    >>> from mbutils import load_benchmark
    >>> bench = load_benchmark("gpqa")
    >>> bench.n_models, bench.n_items
    (420, 448)
    """
    name = str(name_or_dir)
    if name.startswith(SYNTHETIC_PREFIX):
        try:
            find_bundle(name_or_dir)
        except MbutilsError:
            from mbutils.data.synthetic import make_synthetic

            return make_synthetic(name)
    return load_folder(name_or_dir, missing=missing)


def benchmark_key(name: str) -> str:
    """Which of the paper's benchmarks a bundle name stands for (``custom`` if none)."""
    base = str(name).removeprefix("synthetic-")
    for info in CATALOGUE.values():
        if base == info.key or base in info.real_names:
            return info.key
    return "custom"


def _real_candidates(key: str, *, min_models: int, need_set: str | None):
    """Yield (name, bundle or None, why it was passed over) for the real bundles of ``key``."""
    for real in CATALOGUE[key].real_names:
        try:
            find_bundle(real)
        except MbutilsError:
            continue
        bench = load_benchmark(real, missing="drop_models")
        if bench.n_models < min_models:
            yield real, None, (f"the real bundle '{real}' has only {bench.n_models} complete models "
                               f"({min_models} needed)")
        elif need_set is not None and need_set not in bench.target_sets:
            yield real, None, f"the real bundle '{real}' names no target set '{need_set}'"
        else:
            yield real, bench, ""


def real_or_stand_in(key: str, *, min_models: int = MIN_MODELS, target_set: str | None = None):
    """The bundle a benchmark name resolves to, without generating a stand-in.

    Returns ``(name, benchmark, reason)``: the first real bundle on the data path with at
    least ``min_models`` complete models (and ``target_set``, if asked for), or the stand-in's
    name with ``benchmark`` None and the reason no real bundle was taken."""
    reasons = []
    for real, bench, why in _real_candidates(key, min_models=min_models, need_set=target_set):
        if bench is not None:
            return real, bench, f"real bundle '{real}' found on the data path"
        reasons.append(why)
    if not reasons:
        reasons.append(f"no real {CATALOGUE[key].title} bundle on the data path ({describe_data_path(short=True)})")
    stand_in = CATALOGUE[key].stand_in
    return stand_in, None, "; ".join(reasons) + f", so this page uses the stand-in '{stand_in}'"


def resolve_data(data: str, *, min_models: int = MIN_MODELS, missing: str = "error",
                 target_set: str | None = None) -> DataChoice:
    """Load the bundle a chapter asked for.

    ``gpqa``/``bbh``/``mmlu-pro``/``mmlu`` mean "the first real bundle on the data path with
    at least ``min_models`` complete models (and the named ``target_set``, if one is asked
    for), else the synthetic stand-in"; ``synthetic-*`` is always simulated; anything else
    is a bundle name or folder (``missing``: ``error``, ``drop_models`` or ``drop_items``).
    """
    data = str(data).strip()
    key = benchmark_key(data)
    if data.startswith("synthetic-"):
        return DataChoice(data, key, "synthetic", load_benchmark(data), "requested explicitly")
    if data in CATALOGUE:
        name, bench, reason = real_or_stand_in(data, min_models=min_models, target_set=target_set)
        if bench is not None:
            return DataChoice(data, key, "real", bench, reason)
        return DataChoice(data, key, "synthetic", load_benchmark(name), reason)
    bench = load_benchmark(data, missing=missing)
    kind = "real" if key != "custom" else "custom"
    return DataChoice(data, key, kind, bench, f"bundle '{data}'")
