"""The in-memory benchmark: a complete models x items 0/1 matrix with its names and metadata.

Readers (:mod:`mbutils.data.bundle`), the simulator (:mod:`mbutils.data.synthetic`) and the importers
all build a :class:`Benchmark`; everything downstream reads only this object.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from mbutils.base.errors import BundleError
from mbutils.base.validation import unsafe_names


@dataclass(frozen=True, eq=False)
class Benchmark:
    """A benchmark's results as every method reads them: a complete models x items 0/1 matrix with names.

    :func:`load_benchmark` builds one from a bundle folder or a synthetic stand-in; build one
    yourself to run the protocol on results you hold in memory. Instances are always
    complete and valid (checked on construction, :class:`MbutilsError` otherwise): missing
    cells are resolved by the loader (an error or an explicit drop), so every algorithm
    downstream can rely on dense arrays. The object is frozen; ``correct`` is stored as
    ``int8`` and ``confidence`` as ``float64``.

    Parameters
    ----------
    name : str
        The bundle's name, used in messages, cache entries and result metadata.
    correct : array_like of shape (n_models, n_items)
        1 where the model answered the item correctly, else 0.
    models : sequence of str
        One unique name per row of ``correct``.
    items : sequence of str
        One unique name per column of ``correct``.
    subtasks : sequence of str
        The subtask of each item (one value for all items when the benchmark has none);
        every subtask is split into seen and unseen halves separately.
    confidence : array_like of shape (n_models, n_items), optional
        Each model's probability of the gold answer, in [0, 1]; the confidence-based
        selectors read it, and fall back to ``correct`` without it.
    item_info, model_info : pandas.DataFrame, optional
        Extra columns per item and per model (from ``items.csv`` and ``models.csv``), in the
        order of ``items`` and ``models``.
    target_sets : dict of str to list of str, optional
        Named sets of models, usable as a protocol's ``target_set``; every name must be one
        of ``models``.
    origin : str, optional
        Where the data came from (a folder, the simulator), for people reading a result.

    Examples
    --------
    >>> import numpy as np
    >>> from mbutils import Benchmark
    >>> correct = np.array([[1, 0, 1, 1], [0, 0, 1, 0], [1, 1, 1, 0]])
    >>> bench = Benchmark(name="toy", correct=correct,
    ...                   models=["m1", "m2", "m3"], items=["q1", "q2", "q3", "q4"],
    ...                   subtasks=["x", "x", "y", "y"])
    >>> bench
    Benchmark('toy': 3 models x 4 items, 2 subtasks)
    >>> bench.n_models, bench.n_items, bench.accuracy.tolist()
    (3, 4, [0.75, 0.25, 0.75])
    >>> bench.subtask_names.tolist(), bench.subtask_codes.tolist()
    (['x', 'y'], [0, 0, 1, 1])
    >>> bench.model_index(["m3", "m1"]).tolist()
    [2, 0]
    """

    name: str
    correct: np.ndarray
    models: np.ndarray
    items: np.ndarray
    subtasks: np.ndarray
    confidence: np.ndarray | None = None
    item_info: pd.DataFrame | None = None
    model_info: pd.DataFrame | None = None
    target_sets: dict[str, list[str]] = field(default_factory=dict)
    origin: str = ""

    def __post_init__(self) -> None:
        correct = np.asarray(self.correct)
        if correct.ndim != 2:
            raise BundleError(f"{self.name}: correctness must be a 2-D models x items matrix")
        if not np.isin(correct, (0, 1)).all():
            raise BundleError(f"{self.name}: correctness values must be 0 or 1")
        object.__setattr__(self, "correct", np.ascontiguousarray(correct, dtype=np.int8))
        n_models, n_items = correct.shape
        models = np.asarray(self.models, dtype=object)
        items = np.asarray(self.items, dtype=object)
        subtasks = np.asarray(self.subtasks, dtype=object)
        if models.shape != (n_models,):
            raise BundleError(f"{self.name}: {len(models)} model names for {n_models} rows")
        if items.shape != (n_items,) or subtasks.shape != (n_items,):
            raise BundleError(
                f"{self.name}: {len(items)} item names and {len(subtasks)} subtasks "
                f"for {n_items} columns"
            )
        for label, names in (("model", models), ("item", items), ("subtask", subtasks)):
            bad = [ascii(str(names[i]))[:80] for i in unsafe_names(names)[:5]]
            if bad:
                raise BundleError(
                    f"{self.name}: {label} names must not be only white space or contain line breaks or other "
                    f"control characters (Unicode line separators and bidirectional controls too): {', '.join(bad)}"
                )
        for label, names in (("model", models), ("item", items)):
            uniq, counts = np.unique(names.astype(str), return_counts=True)
            if (counts > 1).any():
                raise BundleError(f"{self.name}: duplicate {label} names: {', '.join(uniq[counts > 1][:5])}")
        object.__setattr__(self, "models", models)
        object.__setattr__(self, "items", items)
        object.__setattr__(self, "subtasks", subtasks)
        if self.confidence is not None:
            conf = np.ascontiguousarray(self.confidence, dtype=np.float64)
            if conf.shape != correct.shape:
                raise BundleError(
                    f"{self.name}: confidence has shape {conf.shape}, responses {correct.shape}"
                )
            if not (np.isfinite(conf).all() and (conf >= 0).all() and (conf <= 1).all()):
                raise BundleError(f"{self.name}: confidences must lie in [0, 1]")
            object.__setattr__(self, "confidence", conf)
        unknown = {m for names in self.target_sets.values() for m in names} - set(models)
        if unknown:
            raise BundleError(
                f"{self.name}: target sets name models not in the bundle: {', '.join(sorted(unknown)[:5])}"
            )

    @property
    def n_models(self) -> int:
        """Number of models (rows)."""
        return self.correct.shape[0]

    @property
    def n_items(self) -> int:
        """Number of items (columns)."""
        return self.correct.shape[1]

    @cached_property
    def subtask_names(self) -> np.ndarray:
        """Subtask names in order of first appearance (the order of items.csv)."""
        _, first = np.unique(self.subtasks.astype(str), return_index=True)
        return self.subtasks[np.sort(first)]

    @cached_property
    def subtask_codes(self) -> np.ndarray:
        """Integer code per item indexing :attr:`subtask_names`."""
        lookup = {name: code for code, name in enumerate(self.subtask_names)}
        return np.fromiter((lookup[s] for s in self.subtasks), dtype=np.int64, count=self.n_items)

    @cached_property
    def accuracy(self) -> np.ndarray:
        """Full-benchmark accuracy per model (fraction, not points)."""
        return self.correct.mean(axis=1)

    @cached_property
    def n_options(self) -> np.ndarray:
        """Answer options per item (floats; NaN where the bundle does not say): items.csv's ``n_options``
        column, else the bundle's provenance.json (:mod:`mbutils.data.bundle.options`)."""
        from mbutils.data.bundle.options import options_per_item

        return options_per_item(self.item_info, self.n_items)

    @property
    def chance(self) -> float | None:
        """Expected accuracy of a uniform guess over the items (the mean of 1 / options), as a fraction;
        None when any item's number of options is unknown."""
        options = self.n_options
        return None if np.isnan(options).any() else float(np.mean(1.0 / options))

    @property
    def has_confidence(self) -> bool:
        """Whether the bundle has confidences (probabilities of the gold answer)."""
        return self.confidence is not None

    @cached_property
    def content_hash(self) -> str:
        """Hash of everything a result depends on, for the content-addressed cache."""
        h = hashlib.sha256()
        h.update(self.correct.tobytes())
        h.update(str(self.correct.shape).encode())
        if self.confidence is not None:
            h.update(self.confidence.tobytes())
        for names in (self.models, self.items, self.subtasks):
            h.update("\x1f".join(map(str, names)).encode())
        for key in sorted(self.target_sets):
            h.update(("\x1e" + key + "\x1f" + "\x1f".join(self.target_sets[key])).encode())
        return h.hexdigest()[:20]

    def model_index(self, names) -> np.ndarray:
        """Row indices of the named models, in the order given."""
        lookup = {m: i for i, m in enumerate(self.models)}
        missing = [m for m in names if m not in lookup]
        if missing:
            raise BundleError(f"{self.name}: models not in the bundle: {', '.join(missing[:5])}")
        return np.array([lookup[m] for m in names], dtype=np.int64)

    def __repr__(self) -> str:
        conf = ", with confidences" if self.has_confidence else ""
        return (
            f"Benchmark({self.name!r}: {self.n_models} models x {self.n_items} items, "
            f"{len(self.subtask_names)} subtasks{conf})"
        )
