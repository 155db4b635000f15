"""The Selector interface shared by every micro-benchmark method.

A selector sees only the *source* models' results on the *seen* items. ``prepare``
does the work shared by all sizes of one run (a correlation matrix, an IRT fit) and
``select`` picks ``k`` items, returning a :class:`MicroBenchmark` that estimates every
target's score in one matrix product.
"""

from __future__ import annotations

import copy
import inspect
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from mbutils.base.errors import SelectorError
from mbutils.base.validation import validate_constraints


@dataclass(frozen=True)
class SourceData:
    """What a selector may look at in one run: the source models' results on the seen items.

    An experiment builds one per run and hands it to :meth:`Selector.prepare`; build one
    yourself to try a selector on your own matrix. Arrays are converted on construction
    (``correct`` and ``confidence`` to float64, ``subtasks`` to int64).

    Parameters
    ----------
    correct : array_like of shape (n_sources, n_items)
        0/1 correctness of each source model on each seen item.
    subtasks : array_like of int, shape (n_items,)
        Subtask code of each seen item (0, 1, ...; all 0 for a benchmark without subtasks).
    confidence : array_like of shape (n_sources, n_items), optional
        Each source's probability of the gold answer; ``None`` when the bundle has none.
        :attr:`proxy` then falls back to 0/1 correctness, which is what every
        confidence-based method reads in that case.

    Examples
    --------
    >>> import numpy as np
    >>> from mbutils import SourceData
    >>> source = SourceData(correct=[[1, 0, 1], [1, 1, 0]], subtasks=[0, 0, 1])
    >>> source.n_sources, source.n_items
    (2, 3)
    >>> source.proxy.tolist()  # no confidences: the 0/1 results
    [[1.0, 0.0, 1.0], [1.0, 1.0, 0.0]]
    >>> SourceData([[1, 0, 1]], [0, 0, 1], confidence=[[0.9, 0.2, 0.6]]).proxy.tolist()
    [[0.9, 0.2, 0.6]]
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
        """Number of seen items (columns)."""
        return self.correct.shape[1]

    @property
    def n_sources(self) -> int:
        """Number of source models (rows)."""
        return self.correct.shape[0]

    def checked_proxy(self, who: str) -> np.ndarray:
        """:attr:`proxy`, refused with ``who``'s name when it is empty or holds missing or infinite values."""
        proxy = self.proxy
        if proxy.ndim != 2 or proxy.shape[0] < 1 or proxy.shape[1] < 1:
            raise SelectorError(f"{who}: needs at least one source and one seen item")
        if not np.isfinite(proxy).all():
            raise SelectorError(f"{who}: source confidences contain missing or infinite values")
        return proxy

    @property
    def proxy(self) -> np.ndarray:
        """Probability of the gold answer where known, else 0/1 correctness."""
        return self.confidence if self.confidence is not None else self.correct


@dataclass(frozen=True)
class MicroBenchmark:
    """A selector's choice for one size: the chosen items and how they estimate every target's score.

    :meth:`Selector.select` returns one; :meth:`estimate` turns the targets' results on the
    seen items into estimated accuracies, by default the weighted mean over the chosen
    items. Subclasses override :meth:`estimate` when a weighted mean is not enough (IRT
    estimates, adaptive tests).

    Parameters
    ----------
    items : array_like of int, shape (k,)
        The chosen items, as indices into the seen items.
    weights : array_like of float, shape (k,)
        One weight per item: the estimate is ``sum(weights * answers)``. Weights that sum
        to 1 give a weighted mean; estimators such as Horvitz-Thompson may not.
    reads : {"correct", "confidence"}, default "correct"
        Which target data the estimate reads: 0/1 correctness, or the targets' confidence
        on the gold answer (which falls back to 0/1 when the bundle has no confidences).

    Examples
    --------
    >>> import numpy as np
    >>> from mbutils import MicroBenchmark
    >>> micro = MicroBenchmark(items=[0, 2], weights=[0.5, 0.5])
    >>> micro.size
    2
    >>> targets = np.array([[1, 0, 1, 0], [0, 1, 1, 1]])  # targets x seen items
    >>> micro.estimate(targets).tolist()
    [1.0, 0.5]
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
        """Number of items each target answers (k)."""
        return len(self.items)

    def estimate(self, correct: np.ndarray, confidence: np.ndarray | None = None) -> np.ndarray:
        """Estimated accuracy (a fraction) of each target from its results on the seen items.

        Parameters
        ----------
        correct : numpy.ndarray of shape (n_targets, n_items)
            The targets' 0/1 correctness on every seen item (an estimate reads only the
            chosen ones).
        confidence : numpy.ndarray of shape (n_targets, n_items), optional
            The targets' confidences, read when ``reads == "confidence"``.

        Returns
        -------
        numpy.ndarray of shape (n_targets,)
            One estimate per target.
        """
        data = confidence if (self.reads == "confidence" and confidence is not None) else correct
        return np.asarray(data, dtype=np.float64)[:, self.items] @ self.weights


class Selector:
    """Base class of every micro-benchmark method: subclass it to compare your own method with the paper's.

    A selector sees only the source models' results on the seen items of one run
    (:class:`SourceData`). :meth:`prepare` does the work shared by every size of the run (a
    correlation matrix, an IRT fit) and :meth:`select` picks ``k`` items, returning a
    :class:`MicroBenchmark` that estimates every target's score. As in scikit-learn, a
    selector takes explicit keyword parameters in ``__init__`` and stores them under the
    same names (:meth:`get_params`, :meth:`set_params`, :meth:`clone` rely on that); the
    parameters are checked when work starts (:meth:`validate_params`), and no state is kept
    between runs: an experiment clones the selector for every run. Give
    :func:`run_experiment` an object of your subclass (a class defined in a notebook works
    too); its class attribute ``name`` labels its rows in result tables.

    The base class takes no parameters. Class attributes a subclass may set: ``name``;
    ``uses_confidence`` (it reads confidences, so the book can say when it fell back to
    0/1); ``uses_sources`` (False for methods that never look at the source models);
    ``light`` (True when a run costs milliseconds, so an experiment of light selectors
    runs in-process); ``parameter_constraints`` (parameter name to a constraint of
    ``mbutils.base.validation``, checked by :meth:`validate_params`).

    Examples
    --------
    The k items the sources find easiest, scored by the plain mean:

    >>> import numpy as np
    >>> from mbutils import MicroBenchmark, Protocol, Selector
    >>> from mbutils import load_benchmark, run_experiment
    >>> class EasiestFirst(Selector):
    ...     name = "easiest_first"
    ...     light = True
    ...     def select(self, prepared, k, rng):
    ...         self.check_size(k, prepared.n_items)
    ...         easiest = np.argsort(-prepared.correct.mean(axis=0), kind="stable")[:k]
    ...         return MicroBenchmark(np.sort(easiest), np.full(k, 1.0 / k))
    >>> bench = load_benchmark("synthetic-gpqa")
    >>> protocol = Protocol(n_sources=60, n_targets=12, n_runs=2)
    >>> res = run_experiment(bench, [EasiestFirst(), "random"], [10], protocol,
    ...                      progress=False, use_cache=False)
    >>> res.groupby("selector", sort=False).size().to_dict()  # 2 runs x 12 targets each
    {'easiest_first': 24, 'random': 24}
    """

    name: ClassVar[str] = ""
    #: True when the selector reads confidences (so the book can say it fell back to 0/1).
    uses_confidence: ClassVar[bool] = False
    #: False for selectors that never look at the source models (random sampling and its
    #: subtask-stratified forms): a practitioner can use them without any other model's results.
    uses_sources: ClassVar[bool] = True
    #: True when a run costs milliseconds (no model fitting): an experiment of light
    #: selectors only runs in-process, since starting workers would cost more than the work.
    light: ClassVar[bool] = False
    #: False when the estimator's weights need not sum to 1 (Horvitz-Thompson weights): the selector
    #: contract (:func:`mbutils.testing.check_selector`) checks the sum of the others.
    weights_sum_to_one: ClassVar[bool] = True
    #: Parameter name -> constraint of :mod:`mbutils.base.validation`, checked by :meth:`validate_params`.
    parameter_constraints: ClassVar[dict] = {}

    def validate_params(self) -> None:
        """Check the parameters before any work, so a bad value fails with a plain message, not deep inside a run.

        Every parameter declared in ``parameter_constraints`` (and a nested model's, such as
        an IRT model's) is checked; nothing is changed (an integer parameter wants an int:
        ``5.0`` is refused with a message saying to write ``5``). As in scikit-learn,
        ``__init__`` only stores; the check runs when work starts: at :meth:`prepare`, and in
        :func:`run_experiment` before any run.

        Raises
        ------
        MbutilsError
            A ``SelectorError`` naming the selector, the parameter and what it must be.

        Examples
        --------
        >>> from mbutils import ConfidenceStratified, MbutilsError
        >>> ConfidenceStratified(n_strata=5).validate_params()
        >>> for bad in (0, 5.0):
        ...     try:
        ...         ConfidenceStratified(n_strata=bad).validate_params()
        ...     except MbutilsError as err:
        ...         print(err)
        confidence_stratified: n_strata must be at least 1, not 0
        confidence_stratified: n_strata must be an integer: write 5, not 5.0
        """
        validate_constraints(self, self.parameter_constraints, f"{self.name or type(self).__name__}: ",
                             SelectorError)
        for value in self.get_params(deep=False).values():
            if hasattr(value, "validate_params") and not isinstance(value, type):
                value.validate_params()

    def prepare(self, source: SourceData, rng: np.random.Generator) -> Any:
        """Do the work shared by every size of one run once (a correlation matrix, an IRT fit).

        The default checks the parameters (:meth:`validate_params`) and keeps the source data;
        a subclass that overrides it should call :meth:`validate_params` first.

        Parameters
        ----------
        source : SourceData
            The run's source models on its seen items.
        rng : numpy.random.Generator
            The run's generator for this selector's random stream (shared by selectors with
            the same :meth:`shared_key`).

        Returns
        -------
        object
            Whatever :meth:`select` needs; the default returns ``source`` itself.

        Examples
        --------
        >>> import numpy as np
        >>> from mbutils import RandomSampling, SourceData
        >>> source = SourceData(correct=np.ones((3, 8)), subtasks=np.zeros(8, dtype=int))
        >>> RandomSampling().prepare(source, np.random.default_rng(0)) is source
        True
        """
        self.validate_params()
        return source

    def select(self, prepared: Any, k: int, rng: np.random.Generator) -> MicroBenchmark:
        """Choose a micro-benchmark of ``k`` items: the one method every selector must implement.

        Parameters
        ----------
        prepared : object
            What :meth:`prepare` returned for this run (the :class:`SourceData` by default).
        k : int
            The micro-benchmark's size, from 1 to the number of seen items (check it with
            :meth:`check_size`).
        rng : numpy.random.Generator
            The generator of this run, selector stream and size: draw every random choice
            from it, so results are reproducible and independent of the number of workers.

        Returns
        -------
        MicroBenchmark
            The chosen items (indices into the seen items) and their weights.

        Examples
        --------
        >>> import numpy as np
        >>> from mbutils import RandomSampling, SourceData
        >>> source = SourceData(correct=np.ones((3, 8)), subtasks=np.zeros(8, dtype=int))
        >>> micro = RandomSampling().select(source, 4, np.random.default_rng(0))
        >>> micro.size, micro.weights.tolist()
        (4, [0.25, 0.25, 0.25, 0.25])
        """
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
        """Refuse sizes that cannot be honoured, with a message that says why.

        Parameters
        ----------
        k : int
            The size asked for: a positive integer of at most ``n_items``.
        n_items : int
            How many items there are to choose from.
        what : str, default "seen items"
            What the items are, for the message.

        Raises
        ------
        MbutilsError
            A ``SelectorError`` when ``k`` is not a positive integer or exceeds ``n_items``.
        """
        if int(k) != k or k < 1:
            raise SelectorError(f"{self.name}: size must be a positive integer, got {k!r}")
        if k > n_items:
            raise SelectorError(
                f"{self.name}: cannot choose {k} items from {n_items} {what}; "
                f"use sizes of at most {n_items}"
            )

    @classmethod
    def _parameter_names(cls) -> list[str]:
        """The constructor's named parameters: what :meth:`get_params` reports (scikit-learn's rule)."""
        signature = inspect.signature(cls.__init__)
        return [p.name for p in list(signature.parameters.values())[1:]
                if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]

    @classmethod
    def _parameter_defaults(cls) -> dict:
        signature = inspect.signature(cls.__init__)
        return {p.name: p.default for p in list(signature.parameters.values())[1:]
                if p.default is not p.empty}

    def get_params(self, deep: bool = True) -> dict:
        """Constructor parameters by name, as in scikit-learn; used in labels, cache keys and records.

        Parameters
        ----------
        deep : bool, default True
            Also list the parameters of a parameter that has its own (an IRT model), as
            ``<name>__<parameter>``.

        Returns
        -------
        dict
            Parameter name to value, in the order of ``__init__``'s signature.

        Examples
        --------
        >>> from mbutils.methods.selectors import ConfidenceStratified
        >>> ConfidenceStratified(n_strata=5).get_params()
        {'n_strata': 5, 'estimator': 'ht'}
        """
        params = {name: getattr(self, name) for name in self._parameter_names()}
        if deep:
            for name, value in list(params.items()):
                if hasattr(value, "get_params") and not isinstance(value, type):
                    params.update({f"{name}__{k}": v for k, v in value.get_params().items()})
        return params

    def set_params(self, **params) -> "Selector":
        """Set constructor parameters (``<name>__<parameter>`` reaches a nested one); returns the selector.

        Values are checked when work starts (:meth:`validate_params`), not here.

        Parameters
        ----------
        **params
            New values by parameter name; an unknown name raises a ``SelectorError`` that
            lists the selector's parameters.

        Returns
        -------
        Selector
            The selector itself, changed in place.

        Examples
        --------
        >>> from mbutils.methods.selectors import AnchorPoints
        >>> AnchorPoints().set_params(max_iter=20).max_iter
        20
        """
        valid = self._parameter_names()
        for key, value in params.items():
            name, _, inner = key.partition("__")
            if name not in valid:
                raise SelectorError(f"{self.name or type(self).__name__}: unknown parameter {name!r}; "
                                    f"its parameters are {', '.join(valid) or 'none'}")
            if inner:
                getattr(self, name).set_params(**{inner: value})
            else:
                setattr(self, name, value)
        return self

    def clone(self) -> "Selector":
        """A new, unprepared selector with the same parameters, so no state leaks from one run into the next.

        Nested models (an IRT model) are cloned and other values deep-copied; an experiment
        clones its selectors for every run and never changes the caller's object.

        Returns
        -------
        Selector
            An object of the same class built from :meth:`get_params` (``deep=False``).

        Examples
        --------
        >>> from mbutils import AnchorPoints
        >>> selector = AnchorPoints(max_iter=20)
        >>> copy = selector.clone()
        >>> copy is selector, copy.get_params() == selector.get_params()
        (False, True)
        """
        params = {name: (value.clone() if hasattr(value, "clone") else copy.deepcopy(value))
                  for name, value in self.get_params(deep=False).items()}
        return type(self)(**params)

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params(deep=False).items())
        return f"{type(self).__name__}({params})"
