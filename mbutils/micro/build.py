"""Build a micro-benchmark for use: one selection on the whole pool, with what is needed to trust it.

The paper's protocol re-selects in every run on a seen half; a practitioner needs *one*
micro-benchmark: chosen from all N items with every model of the pool (the bundle's models
minus any held out) as sources, through the same seeded path as the experiment
(:func:`mbutils.methods.runs.seeded_choices`, run 0 of the given seed). Beside the choice,
:func:`build_micro` computes

* the **calibration** (:mod:`mbutils.micro.heldout`): held-out errors (estimate - full accuracy) of
  pool models, cross-fitted: the pool is cut into folds, and each fold's models are scored by a
  micro-benchmark built, exactly as the final one, from the other folds. These are errors on models
  the selection never saw, on the same N items at the same k, which is the situation of a new model.
  For a selector other than random sampling they give its interval and its bias correction; for
  every selector they measure it. Uniform random sampling's interval is exact (hypergeometric); the
  difference estimator (``random_difference``) has one of its own, Student-t (k - 2 degrees of
  freedom) with the variance it estimates from its cross-fitted residuals;
* the **reliability card**: the MDAD at this k with its 95% interval from a protocol run of
  the selector on the pool (:func:`run_experiment`, cached), the planner's MDAD for random
  sampling under the same protocol, and the share of the pool's model pairs whose gap is at
  least the MDAD (the pairs it orders correctly at least ``threshold`` of the time); the
  coverage of its interval at ``score``'s level, and the bias, RMSE, coverage and verdicts' error
  rate at the verdicts' level (:mod:`mbutils.micro.verdicts`), measured on held-out models: the
  cross-fitted pool models, and the models held out of the build (``exclude``).

Refused before any work is written: the difference estimator with fewer than ``MIN_ITEMS`` items (its two
cross-fitted halves need two items each), and a pool whose models all answer the chosen items alike for
any selector whose estimate or interval is learnt from the pool (:func:`check_pool_varies`): such a pool
has nothing to predict or calibrate from, and gave intervals of zero width ("0.0 to 0.0" for a model of
75%). Estimates and interval ends are accuracies in [0, 1]: the estimators clip them where they produce
them, and the calibration clips every other selector's estimate as ``score`` does.

Given ``out``, :func:`build_micro` also writes the folder (:mod:`mbutils.micro.folder`: the
items, estimator, card, ``card.md`` and the lm-evaluation-harness export), whole or not at all.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from mbutils.base.errors import ProtocolError, SelectorError
from mbutils.base.vocabulary import renamed_keywords
from mbutils.data.benchmark import Benchmark
from mbutils.methods.protocol import Protocol, fit_to_pool
from mbutils.methods.runs import seeded_choices, single_threaded, source_data
from mbutils.methods.selectors.base import MicroBenchmark, Selector
from mbutils.methods.selectors.random_sampling import DifferenceMicroBenchmark
from mbutils.methods.selectors.spec import as_selector, selector_label
from mbutils.methods.selectors.tiny_estimators import IRTMicroBenchmark
from mbutils.methods.estimators import MIN_ITEMS
from mbutils.evaluate.metrics import FEW_RUNS as METRICS_FEW_RUNS
from mbutils.micro.heldout import calibrate, coverage_card, held_out_card

#: Fewer protocol runs than this make a card's MDAD and interval unreliable: the card says so (the same
#: constant as the ``mdad`` command's warning, :data:`mbutils.evaluate.metrics.FEW_RUNS`).
FEW_RUNS = METRICS_FEW_RUNS

#: The MDAD every card, `micro list`, build-micro's summary and the book quote: the monotone fit of the
#: agreement curve, its 95% interval from a bootstrap over whole runs (the paper's first crossing and
#: pair bootstrap are for comparing with the paper only).
CARD_MDAD = {"method": "monotone", "ci": "runs"}

#: Micro-benchmark classes a folder can hold: a fixed list of items (adaptive tests are not), read by
#: weights, IRT item parameters, or the difference estimator with the pool's answers.
FIXED = (MicroBenchmark, IRTMicroBenchmark, DifferenceMicroBenchmark)


@dataclass(frozen=True)
class Card:
    """The reliability card: MDADs in accuracy points (NaN: not reached or not computed).

    ``mdad`` (with its interval ``ci_low``-``ci_high``) is the micro-benchmark's MDAD at
    ``threshold`` under ``protocol``, ``random_mdad`` random sampling's at the same size, and
    ``share_separated`` the share of the pool's pairs further apart than the MDAD.

    Examples
    --------
    >>> from mbutils import Card, build_micro, load_benchmark
    >>> card = build_micro(load_benchmark("synthetic-gpqa"), "random", 20, runs=2).card
    >>> isinstance(card, Card), card.threshold, card.protocol["n_runs"]
    (True, 0.8, 2)
    """

    threshold: float
    mdad: float
    ci_low: float
    ci_high: float
    random_mdad: float
    share_separated: float
    protocol: dict | None
    note: str = ""
    coverage: dict | None = None  # level, calibration / excluded {models, covered (, width)}, width (points)
    choice: dict | None = None    # how --selector auto chose (mbutils.micro.choice), else None
    held_out: dict | None = None  # bias, RMSE, coverage, verdicts' error rate on held-out models (micro.heldout)


@dataclass(frozen=True, eq=False)
class BuiltMicro:
    """One micro-benchmark chosen on a pool, with its calibration and card (what ``build_micro`` returns).

    ``micro`` holds the chosen items as indices into ``items`` (the whole bundle's) and
    their estimator; ``pool`` the models it was chosen and calibrated on; ``path`` the folder
    written, when ``build_micro`` was given ``out``.

    Examples
    --------
    >>> from mbutils import BuiltMicro, build_micro, load_benchmark
    >>> built = build_micro(load_benchmark("synthetic-gpqa"), "random", 20, runs=2)
    >>> isinstance(built, BuiltMicro), built.k, built.selector, built.interval, built.path
    (True, 20, 'random', 'hypergeometric', None)
    """

    bundle: str
    bundle_hash: str
    items: np.ndarray            # item names of the whole bundle (N), the estimator's index space
    subtasks: np.ndarray
    micro: MicroBenchmark        # indices into ``items``
    selector: str                # label
    selector_class: str
    params: dict
    seed: int
    pool: pd.DataFrame           # model, accuracy (fractions) of the pool's models
    excluded: list[str]
    calibration: pd.DataFrame    # model, fold, estimate, truth, error (fractions); variance for "normal"
    card: Card
    interval: str                # "hypergeometric", "empirical" or "normal" (the difference estimator's, t)
    extra: dict = field(default_factory=dict)
    harness: object = None       # what the bundle states of its harness documents (HarnessMap), or None
    path: Path | None = None     # the folder, when build_micro wrote one


    @property
    def k(self) -> int:
        return self.micro.size

    def save(self, out, *, force: bool = False, tasks_dir=None) -> Path:
        """Write this micro-benchmark as a folder at ``out`` (whole or not at all; ``force`` replaces a folder
        build_micro wrote) and return its path; :func:`mbutils.load_micro` reads it back as an equal object."""
        from mbutils.micro.folder import write_micro

        return write_micro(self, out, force=force, tasks_dir=tasks_dir)

    def content(self) -> dict:
        """What the micro-benchmark *is*, for equality: the bundle, the chosen items and weights, the estimator
        and its state, the choice's provenance, the pool, the calibration and the card (not where it is
        stored, nor the bundle's other items, which a folder does not hold)."""
        import json

        from mbutils.base.jsonfiles import json_text

        micro = self.micro
        state = {key: getattr(micro, key) for key in ("reads", "estimator", "gp_lambda", "prior_sd_theta", "law")
                 if hasattr(micro, key)}
        arrays = {key: np.asarray(getattr(micro, key)).round(8).tolist()
                  for key in ("item_a", "item_b") if hasattr(micro, key)}
        if hasattr(micro, "item_a"):  # IRT parameters of the chosen items only
            arrays = {key: np.asarray(value)[micro.items].tolist() for key, value in arrays.items()}
        frames = {name: json.loads(frame.astype({c: float for c in frame.select_dtypes("number").columns})
                                   .round(12).to_json(orient="split", index=False))
                  for name, frame in (("pool", self.pool), ("calibration", self.calibration))}
        return json.loads(json_text({
            "bundle": self.bundle, "bundle_hash": self.bundle_hash, "interval": self.interval,
            "items": [str(i) for i in np.asarray(self.items)[micro.items]],
            "weights": np.asarray(micro.weights, dtype=np.float64).round(15).tolist(),
            "estimator": type(micro).__name__, "state": state, "parameters": arrays, "selector": self.selector,
            "selector_class": self.selector_class, "params": self.params, "seed": int(self.seed),
            "excluded": list(self.excluded), "card": asdict(self.card), **frames}))

    def __eq__(self, other) -> bool:
        return isinstance(other, BuiltMicro) and self.content() == other.content()

    __hash__ = None


def interval_kind(selector: Selector, k: int | None = None) -> str:
    """Exact hypergeometric for uniform random sampling's plain mean; ``"normal"`` (the family name of the
    difference estimator's own interval, Student-t since; see :mod:`mbutils.micro.difference`) for
    ``random_difference``, whose variance comes from its cross-fitted residuals (``build_micro`` refuses it
    below ``MIN_ITEMS`` items, ``k``); empirical otherwise."""
    from mbutils.methods.selectors.random_sampling import RandomDifference, RandomSampling

    if isinstance(selector, RandomDifference):
        return "normal"
    return "hypergeometric" if type(selector) is RandomSampling else "empirical"


def check_min_items(selector: Selector, k: int) -> None:
    """Refuse a k below what the selector's estimator needs: the difference estimator's two cross-fitted
    halves need ``MIN_ITEMS // 2`` items each (its interval then has k - 2 >= 2 degrees of freedom)."""
    from mbutils.methods.selectors.random_sampling import RandomDifference

    if isinstance(selector, RandomDifference) and k < MIN_ITEMS:
        raise SelectorError(f"{selector.name}: k = {k} is below the difference estimator's minimum of {MIN_ITEMS} "
                            f"items (two cross-fitted halves of {MIN_ITEMS // 2} at least, from which its interval "
                            f"is estimated); use --k {MIN_ITEMS} or more, or --selector random for the plain mean "
                            "with its exact interval")


def check_pool_varies(selector: Selector, bench: Benchmark, rows: np.ndarray, micro: MicroBenchmark | None,
                      kind: str) -> None:
    """Refuse a pool of two models or more that answers alike: on every item (``micro`` None, before the
    choice) or on the chosen items, every pool model gives the same answer to each.

    The rule (one, for every selector whose estimate or interval is learnt from the pool, i.e. all but
    uniform random sampling's exact interval): such a pool cannot tell one model from another on these
    items, so the difference estimator's predictions are the same whatever the model answers, IRT
    abilities are fitted on items no model differs on, and the calibration's held-out errors (or the
    residuals) are all equal; the interval it gave had zero width ("0.0 to 0.0" for a model of 75%). It
    is refused rather than given an interval the pool cannot support."""
    if kind == "hypergeometric" or len(rows) < 2:
        return
    block = bench.correct[rows] if micro is None else bench.correct[rows][:, micro.items]
    if block.size == 0 or not (block == block[:1]).all():
        return
    where = (f"all {bench.n_items} items" if micro is None else f"the {micro.size} items {selector.name} chose")
    right = block[0].mean()
    how = ("every one of them right on every item" if right == 1 else "every one of them wrong on every item"
           if right == 0 else "identical answers, item by item")
    raise ProtocolError(f"{bench.name}: the pool's {len(rows)} models answer {where} alike ({how}): they cannot "
                        f"tell one model from another there, so {selector.name}'s estimate and interval have nothing "
                        "to be learnt from (such a pool gave intervals of zero width); build from a pool whose models "
                        "differ on the items (add models, exclude fewer, or a larger k), or use --selector random, "
                        "whose exact interval needs no pool")


def _choose(selector: Selector, bench: Benchmark, rows: np.ndarray, k: int, seed: int,
            scope: tuple = ()) -> MicroBenchmark:
    """The selector's k items on all N items with ``rows`` as sources (run 0 of ``seed``; a fold of the
    calibration draws from its own branch of the seed tree, ``scope``)."""
    with single_threaded():
        source = source_data(bench.correct, bench.subtask_codes, bench.confidence, rows, np.arange(bench.n_items))
        _, chosen = seeded_choices(selector.clone(), source, [k], seed=seed, run=0, scope=scope)
    micro = chosen[int(k)]
    if type(micro) not in FIXED and hasattr(micro, "source_correct"):  # a regression fitted at scoring time
        raise SelectorError(f"{selector.name}: its estimate reads the pool's answers at scoring time through a model "
                            "fitted then, which a micro-benchmark folder does not hold; build it with "
                            "'random_difference' (a uniform sample read by the cross-fitted difference estimator, "
                            "whose folder holds the pool's answers) or 'random' (the plain mean)")
    if type(micro) not in FIXED:
        raise SelectorError(f"{selector.name}: its items differ from model to model (an adaptive test), so it "
                            "cannot be written as one fixed micro-benchmark; choose a non-adaptive selector")
    return micro


def _pool(bench: Benchmark, exclude) -> tuple[np.ndarray, list[str]]:
    excluded = [str(m) for m in (exclude or [])]
    unknown = sorted(set(excluded) - set(map(str, bench.models)))
    if unknown:
        shown = ", ".join(map(repr, unknown[:5])) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
        raise ProtocolError(f"models to exclude are not in {bench.name}: {shown}")
    rows = np.flatnonzero(~np.isin(bench.models.astype(str), excluded))
    if len(rows) < 1:
        raise ProtocolError(f"{bench.name}: excluding {len(excluded)} models leaves no model to learn from")
    return rows, excluded


def pool_benchmark(bench: Benchmark, rows: np.ndarray) -> Benchmark:
    """The bundle restricted to the pool's models (the bundle itself when nothing is held out)."""
    if len(rows) == bench.n_models:
        return bench
    models = bench.models[rows]
    targets = {name: [m for m in names if m in set(models)] for name, names in bench.target_sets.items()}
    return Benchmark(name=f"{bench.name}-pool{len(rows)}", correct=bench.correct[rows], models=models,
                     items=bench.items, subtasks=bench.subtasks,
                     confidence=None if bench.confidence is None else bench.confidence[rows],
                     item_info=bench.item_info,
                     target_sets={n: v for n, v in targets.items() if len(v) >= 2}, origin=bench.origin)


def share_separated(accuracy: np.ndarray, mdad: float, n_items: int) -> float:
    """Share of model pairs whose full-benchmark gap (points) is at least ``mdad``."""
    if not np.isfinite(mdad) or len(accuracy) < 2:
        return np.nan
    correct = np.rint(np.asarray(accuracy) * n_items).astype(np.int64)
    i, j = np.triu_indices(len(correct), k=1)
    gap = np.abs(correct[i] - correct[j]) * 100.0 / n_items
    return float(np.mean(gap >= mdad - 1e-9))


def reliability_card(selector: Selector, pool: Benchmark, k: int, *, runs: int, seed: int,
                     threshold: float = 0.8, jobs: int = 1, progress: bool = False) -> Card:
    """MDAD of the selector at k (protocol run on the pool), random's predicted MDAD, pairs separated."""
    from mbutils.methods.experiment import check_sizes, n_seen_items, run_experiment
    from mbutils.evaluate.metrics import mdad_table
    from mbutils.evaluate.planning_curves import predicted_mdad

    nan = float("nan")
    if pool.n_models < 3:
        return Card(threshold, nan, nan, nan, nan, nan, None,
                    note=f"the pool has {pool.n_models} models, too few for a protocol run (at least 3)")
    if k > n_seen_items(pool):
        return Card(threshold, nan, nan, nan, nan, nan, None,
                    note=f"k = {k} exceeds the protocol's seen half ({n_seen_items(pool)} items)")
    sources, targets = fit_to_pool(pool.n_models)
    protocol = Protocol(n_sources=sources, n_targets=targets, n_runs=runs, seed=seed)
    check_sizes(pool, [k])
    results = run_experiment(pool, [selector], [k], protocol, jobs=jobs, progress=progress)
    # The book's one MDAD: the monotone fit, its interval a bootstrap over whole runs (CARD_MDAD).
    row = mdad_table(results, threshold=threshold, seed=seed, **CARD_MDAD).iloc[0]
    random = predicted_mdad(pool, [k], threshold=threshold, protocol=protocol)["mdad"].iloc[0]
    mdad = float(row["mdad"]) if row["reached"] else nan
    low, high = float(row["ci_low"]), float(row["ci_high"])
    if np.isfinite(mdad):  # a percentile interval of a step function may miss its own point: it holds it
        low = min(low, mdad) if np.isfinite(low) else low
        high = max(high, mdad) if np.isfinite(high) else high
    note = ""
    if runs < FEW_RUNS or targets < 10:
        note = (f"from {runs} run{'s' if runs != 1 else ''} of {targets} target models: too few for this MDAD and its "
                f"interval to be trusted (use at least {FEW_RUNS} runs and a pool of 30 models or more)")
    elif low == high:
        note = "the interval has no width at this resolution: the MDAD is known to within one 0.5-point bin"
    return Card(threshold=threshold, mdad=mdad, ci_low=max(low, 0.0) if np.isfinite(low) else low, ci_high=high,
                random_mdad=float(random), share_separated=share_separated(pool.accuracy, mdad, pool.n_items),
                protocol=protocol.as_dict(), note=note)


@renamed_keywords(bench="benchmark")
def build_micro(benchmark: Benchmark, selector, k: int, *, seed: int = 0, exclude=None, runs: int = 20,
                threshold: float = 0.8, folds: int = 10, jobs: int = 1, progress: bool = False,
                out=None, force: bool = False, lm_eval_tasks=None) -> BuiltMicro:
    """Choose a k-item micro-benchmark on the pool and compute its calibration and reliability card;
    given ``out``, write it as a folder.

    Parameters
    ----------
    benchmark : Benchmark
        The full benchmark.
    selector : str or Selector
        A registered name or a selector object (adaptive selectors are refused), or ``"auto"``: the
        method the book's paired noise rule finds most reliable at ``k`` on the pool
        (``mbutils.micro.choice.choose_selector``; the card records why). ``"random_difference"``
        (:class:`~mbutils.RandomDifference`, a uniform sample read by the cross-fitted difference
        estimator) is written with the pool's answers on every item (``pool_answers.csv``), which its
        estimate reads, and gets a Student-t interval from its own variance (k - 2 degrees of freedom;
        at least ``MIN_ITEMS`` = 4 items); ``"random_regression"`` is
        refused (its regression is fitted at scoring time).
    k : int
        Items in the micro-benchmark (1 to N; 4 to N for ``random_difference``).
    seed : int, default 0
        Root seed of the selection (run 0 of an experiment with this seed), the folds and the
        protocol run.
    exclude : sequence of str, optional
        Models left out of everything the micro-benchmark learns from (held out).
    runs : int, default 20
        Runs of the protocol behind the card's MDAD.
    threshold : float, default 0.8
        Agreement the card's MDAD must reach.
    folds : int, default 10
        Folds of the pool for the cross-fitted calibration (not used by random sampling, whose interval
        is exact).
    jobs : int, default 1
        Workers of the protocol run.
    progress : bool, default False
        Progress bar of the protocol run.
    out : str or Path, optional
        Write the micro-benchmark folder here (new or empty; see ``force``), whole or not at all: its
        items and weights, estimator, calibration, ``card.json`` and ``card.md`` (the card in words),
        provenance, the lm-evaluation-harness export ``lm_eval/`` (one ``<harness task>_micro`` task per
        harness task and the group ``<benchmark>_micro``) and ``manifest.json``. The path is kept in
        the result's ``path``.
    force : bool, default False
        Replace an existing non-empty ``out`` (only a folder build_micro wrote).
    lm_eval_tasks : str or Path, optional
        Folder of lm-eval task YAMLs holding the original tasks (default: the installed harness's).

    Returns
    -------
    BuiltMicro

    Examples
    --------
    >>> from mbutils import load_benchmark
    >>> benchmark = load_benchmark("synthetic-gpqa")
    >>> built = build_micro(benchmark, "random", 20, exclude=list(benchmark.models[:5]), runs=2)
    >>> built.k, built.interval, len(built.pool), built.card.protocol["n_runs"]
    (20, 'hypergeometric', 415, 2)
    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "micro"
    >>> written = build_micro(benchmark, "random", 20, runs=2, out=out)
    >>> written.path == out, (out / "card.md").is_file(), (out / "manifest.json").is_file()
    (True, True, True)
    """
    from mbutils.base.validation import check_int, check_number

    auto = isinstance(selector, str) and selector.strip().lower() == "auto"
    if not auto:
        selector = as_selector(selector)
        selector.validate_params()
    k = check_int(k, "k", SelectorError, low=1, high=benchmark.n_items)
    seed = check_int(seed, "seed", ProtocolError, low=0)
    runs = check_int(runs, "runs", ProtocolError, low=1)
    threshold = check_number(threshold, "threshold", ProtocolError, low=0, high=1, low_open=True)
    rows, excluded = _pool(benchmark, exclude)
    harness = _harness_of(benchmark, out, force, lm_eval_tasks)
    choice = None
    if auto:
        from mbutils.micro.choice import choose_selector

        measured: dict = {}

        def measure(name: str) -> dict:  # what score would say with it, on the cross-fitted pool models
            candidate = as_selector(name)
            kind = interval_kind(candidate, k)
            check_min_items(candidate, k)
            micro = _choose(candidate, benchmark, rows, k, seed)
            measured[name] = calibrate(lambda sources, scope: _choose(candidate, benchmark, sources, k, seed, scope),
                                       benchmark, rows, folds, seed=seed, uses_sources=candidate.uses_sources)
            return held_out_card(kind, micro, measured[name], benchmark, np.zeros(0, np.int64), rows)

        choice = choose_selector(pool_benchmark(benchmark, rows), k, runs=runs, seed=seed, threshold=threshold,
                                 jobs=jobs, progress=progress, measure=measure)
        selector = as_selector(choice["selector"])
    if selector.uses_sources and len(rows) < 2:
        raise ProtocolError(f"{selector.name} learns from source models, and the pool has {len(rows)}; "
                            "exclude fewer models")
    kind = interval_kind(selector, k)
    check_min_items(selector, k)
    check_pool_varies(selector, benchmark, rows, None, kind)
    micro = _choose(selector, benchmark, rows, k, seed)
    check_pool_varies(selector, benchmark, rows, micro, kind)
    calibration = measured.get(choice["selector"]) if auto else None
    if calibration is None:
        calibration = calibrate(lambda sources, scope: _choose(selector, benchmark, sources, k, seed, scope),
                                benchmark, rows, folds, seed=seed, uses_sources=selector.uses_sources)
    pool = pool_benchmark(benchmark, rows)
    card = reliability_card(selector, pool, k, runs=runs, seed=seed, threshold=threshold, jobs=jobs,
                            progress=progress)
    if micro.reads == "confidence" and benchmark.confidence is None:
        micro = MicroBenchmark(micro.items, micro.weights, reads="correct")  # what it read: the 0/1 fallback
    held_out = np.setdiff1d(np.arange(benchmark.n_models), rows)
    card = replace(card, coverage=coverage_card(kind, micro, calibration, benchmark, held_out, rows),
                   held_out=held_out_card(kind, micro, calibration, benchmark, held_out, rows), choice=choice)
    pool_table = pd.DataFrame({"model": benchmark.models[rows].astype(str), "accuracy": benchmark.accuracy[rows]})
    built = BuiltMicro(bundle=benchmark.name, bundle_hash=benchmark.content_hash, items=benchmark.items.astype(str),
                       subtasks=benchmark.subtasks.astype(str), micro=micro, selector=selector_label(selector),
                       selector_class=f"{type(selector).__module__}.{type(selector).__qualname__}",
                       params={key: repr(v) for key, v in selector.get_params(deep=True).items()}, seed=seed,
                       pool=pool_table, excluded=excluded, calibration=calibration, card=card, interval=kind,
                       harness=harness)
    if out is None:
        return built
    from mbutils.micro.folder import write_micro

    return replace(built, path=write_micro(built, out, bundle_folder=_folder_of(benchmark), force=force,
                                           tasks_dir=lm_eval_tasks))


def _folder_of(benchmark: Benchmark) -> Path | None:
    """The bundle folder ``benchmark`` was loaded from (None for a stand-in or one built in memory)."""
    return Path(benchmark.origin) if benchmark.origin and Path(benchmark.origin).is_dir() else None


def _harness_of(benchmark: Benchmark, out, force: bool, tasks_dir):
    """Before any work: what the bundle states of its harness documents (a statement it cannot use is
    refused), the names the export would refuse, and, when a folder is to be written, that ``out`` may
    be and that every task the bundle states is one the harness (or ``tasks_dir``) defines."""
    from mbutils.data.bundle.harness import harness_map
    from mbutils.micro.lm_eval_task import check_exportable, item_documents, resolve_includes

    harness = harness_map(benchmark)
    if harness is None or not harness.unavailable:
        parsed = item_documents(benchmark.items, benchmark.subtasks, harness)
        check_exportable(benchmark.items, benchmark.subtasks, parsed=parsed)
    if out is not None:
        from mbutils.micro.folder import check_out

        check_out(out, _folder_of(benchmark), force)
        if tasks_dir is not None and not Path(tasks_dir).is_dir():
            raise ProtocolError(f"--lm-eval-tasks {tasks_dir}: no such folder of lm-eval task configs")
        if tasks_dir is not None and harness is not None and harness.unavailable:
            from mbutils.micro.lm_eval_task import NotDocuments

            raise NotDocuments(f"--lm-eval-tasks: {benchmark.name} has no lm-evaluation-harness export "
                               f"({harness.source}): {harness.unavailable}")
        if harness is not None and harness.tasks is not None and not harness.unavailable:
            resolve_includes(sorted({t for t in harness.tasks if t is not None}), tasks_dir, required=True)
    return harness
