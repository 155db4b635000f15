"""The Selector interface shared by every micro-benchmark method.

A selector sees only the *source* models' results on the *seen* items. ``prepare``
does the work shared by all sizes of one run (a correlation matrix, an IRT fit) and
``select`` picks ``k`` items, returning a :class:`MicroBenchmark` that estimates every
target's score in one matrix product.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..errors import SelectorError


@dataclass(frozen=True)
class SourceData:
    """What a selector may look at: sources x seen items.

    ``confidence`` is ``None`` when the bundle has none; :attr:`proxy` then falls back to
    0/1 correctness, which is what every confidence-based method reads in that case.
    """

    correct: np.ndarray
    subtasks: np.ndarray
    confidence: np.ndarray | None = None

    def __post_init__(self) -> None:
        correct = np.asarray(self.correct, dtype=np.float64)
        object.__setattr__(self, "correct", correct)
        object.__setattr__(self, "subtasks", np.asarray(self.subtasks, dtype=np.int64))
        if self.confidence is not None:
            object.__setattr__(self, "confidence", np.asarray(self.confidence, dtype=np.float64))

    @property
    def n_items(self) -> int:
        return self.correct.shape[1]

    @property
    def n_sources(self) -> int:
        return self.correct.shape[0]

    @property
    def proxy(self) -> np.ndarray:
        """Probability of the gold answer where known, else 0/1 correctness."""
        return self.confidence if self.confidence is not None else self.correct


@dataclass(frozen=True)
class MicroBenchmark:
    """Chosen items (indices into the seen items) and the weights of a weighted mean.

    ``reads`` says which target data the estimate uses: ``"correct"`` (0/1) or
    ``"confidence"`` (falls back to 0/1 when the bundle has no confidences).
    Subclasses override :meth:`estimate` when a weighted mean is not enough.
    """

    items: np.ndarray
    weights: np.ndarray
    reads: str = "correct"

    def __post_init__(self) -> None:
        items = np.asarray(self.items, dtype=np.int64)
        weights = np.asarray(self.weights, dtype=np.float64)
        if items.ndim != 1 or weights.shape != items.shape:
            raise SelectorError("a micro-benchmark needs one weight per item")
        object.__setattr__(self, "items", items)
        object.__setattr__(self, "weights", weights)

    @property
    def size(self) -> int:
        return len(self.items)

    def estimate(self, correct: np.ndarray, confidence: np.ndarray | None = None) -> np.ndarray:
        """Estimated accuracy (fraction) of each target; inputs are targets x seen items."""
        data = confidence if (self.reads == "confidence" and confidence is not None) else correct
        return np.asarray(data, dtype=np.float64)[:, self.items] @ self.weights


class Selector:
    """Base class: explicit parameters in ``__init__``, no hidden state between runs."""

    name: ClassVar[str] = ""
    #: True when the selector reads confidences (so the book can say it fell back to 0/1).
    uses_confidence: ClassVar[bool] = False
    #: False for selectors that never look at the source models (random sampling and its
    #: subtask-stratified forms): a practitioner can use them without any other model's results.
    uses_sources: ClassVar[bool] = True
    #: True when a run costs milliseconds (no model fitting): an experiment of light
    #: selectors only runs in-process, since starting workers would cost more than the work.
    light: ClassVar[bool] = False

    def prepare(self, source: SourceData, rng: np.random.Generator) -> Any:
        """Work shared by every size of one run; the default keeps the source data."""
        return source

    def select(self, prepared: Any, k: int, rng: np.random.Generator) -> MicroBenchmark:
        raise NotImplementedError

    def shared_key(self) -> str | None:
        """Selectors returning the same key make the same choices and differ only in the estimate.

        The experiment then prepares once per run for all of them and gives them the same
        random streams, so variants (e.g. 0/1 vs confidence estimates) are compared on
        identical items; a prepared object may cache per-size work for its siblings.
        ``None`` (default): nothing is shared.
        """
        return None

    def check_size(self, k: int, n_items: int, what: str = "seen items") -> None:
        """Refuse sizes that cannot be honoured, with a message that says why."""
        if int(k) != k or k < 1:
            raise SelectorError(f"{self.name}: size must be a positive integer, got {k!r}")
        if k > n_items:
            raise SelectorError(
                f"{self.name}: cannot choose {k} items from {n_items} {what}; "
                f"use sizes of at most {n_items}"
            )

    def get_params(self) -> dict:
        """Constructor parameters, used in cache keys and result tables."""
        return {k: v for k, v in vars(self).items() if not k.startswith("_")}

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({params})"
