"""Audit a given micro-benchmark: how well does a fixed list of items rank the models?

Design. The items are fixed (e.g. a published "tiny" benchmark), so there are no sources,
no seen half and no run-to-run re-selection: every model of the bundle (or of a chosen
subset) is a target, and every pair of them is judged. A fixed list was not built from a
seen half, so the truth is the **full benchmark** accuracy by default; ``truth="rest"``
judges against the items *not* in the micro-benchmark instead (no shared items, which
removes the part of the agreement that comes from overlap). The micro-benchmark's estimate
is the weighted mean of each model's 0/1 results on its items (weights normalised).

The baseline is ``n_random`` uniformly random subsets of the same size, each judged the
same way (a seeded draw each). Results are tidy tables in the format of experiments
(:data:`mbutils.results.metrics.RESULT_COLUMNS`), so :func:`~mbutils.results.metrics.mdad_table`,
:func:`~mbutils.results.metrics.agreement_curve` and :func:`~mbutils.results.metrics.summary_table` apply
unchanged: the micro-benchmark is one run, the baseline one run per draw. Audits have no
unseen half; the ``unseen_*`` columns repeat the truth.

With ``truth="full"`` the baseline's expected curve is also computed exactly
(:mod:`mbutils.results.planning`), a check on the simulated baseline.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from mbutils.data.benchmark import Benchmark
from mbutils.base.errors import ProtocolError
from mbutils.base.tables import from_csv_text
from mbutils.results.metrics import gap_bins, iter_groups, mdad_table, agreement_curve, summary_table
from mbutils.methods.protocol import rng_for
from mbutils.base.validation import check_choice
from mbutils.base.tables import mdad_text

TRUTHS = ("full", "rest")
CI_METHODS = ("models", "pairs", "none")
MICRO = "micro-benchmark"
RANDOM = "random"
_LISTED = 5


# ---------------------------------------------------------------------------------------
# Reading item and weight files
# ---------------------------------------------------------------------------------------


#: Most (random subsets x model pairs) an audit holds at once: about 2 GB of pair arrays.
MAX_RANDOM_PAIRS = 50_000_000

def _is_table(path: Path) -> bool:
    return path.suffix.lower() in (".csv", ".tsv")


def _read_table(path: Path) -> pd.DataFrame:
    sep = "\t" if path.suffix.lower() == ".tsv" else ","
    try:
        table = pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False)
    except Exception as err:  # any parser failure: the file is not a table we can use
        raise ProtocolError(f"{path}: cannot read it as a table ({type(err).__name__}: {err})") from None
    table.columns = [str(c).strip() for c in table.columns]
    if "item" in table.columns:  # a micro-benchmark's items.csv quotes formula-like ids (base.tables.csv_text)
        table["item"] = table["item"].map(from_csv_text)
    return table


def _read_lines(path: Path) -> tuple[list[str], list[int]]:
    """Non-empty, non-comment lines (stripped) and their 1-based line numbers.

    A comment is a line whose ``#`` is followed by a space or nothing (``# chosen by hand``);
    ``#q17`` is an item id, since real ids may start with ``#``.
    """
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as err:
        raise ProtocolError(f"{path}: cannot read it ({err})") from None
    values, lines = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if line and not (line == "#" or line.startswith(("# ", "#\t"))):
            values.append(line)
            lines.append(number)
    return values, lines


def _parse_weights(values: Sequence[str], lines: Sequence[int], where: str) -> np.ndarray:
    weights = pd.to_numeric(pd.Series(list(values), dtype=object).str.strip(), errors="coerce").to_numpy(np.float64)
    bad = np.flatnonzero(~np.isfinite(weights))
    if len(bad):
        shown = ", ".join(f"line {lines[i]} ({values[i]!r})" for i in bad[:_LISTED])
        raise ProtocolError(f"{where}: weights must be finite numbers; not at {shown}")
    return weights


def read_items(path: str | Path) -> tuple[list[str], np.ndarray | None]:
    """Item names (and weights, if the file has a ``weight`` column) from an items file.

    A ``.csv``/``.tsv`` file needs an ``item`` column (optional ``weight``); any other file
    lists one item per line (blank lines and ``# `` comments are skipped; ``#q17`` is an id).
    """
    path = Path(path)
    if not path.is_file():
        raise ProtocolError(f"{path}: no such items file")
    if _is_table(path):
        table = _read_table(path)
        if "item" not in table.columns:
            raise ProtocolError(f"{path}: needs an 'item' column; it has {', '.join(table.columns) or 'none'}")
        names = table["item"].str.strip().tolist()
        lines = list(range(2, len(names) + 2))  # line 1 is the header
        weights = (_parse_weights(table["weight"].tolist(), lines, str(path))
                   if "weight" in table.columns else None)
    else:
        names, lines = _read_lines(path)
        weights = None
    blank = [line for name, line in zip(names, lines) if not name]
    if blank:
        raise ProtocolError(f"{path}: empty item name at line {', '.join(map(str, blank[:_LISTED]))}")
    _check_unique(names, lines, str(path))
    if not names:
        raise ProtocolError(f"{path}: lists no items")
    return names, weights


def read_weights(path: str | Path, items: Sequence[str]) -> np.ndarray:
    """One weight per item: a ``.csv``/``.tsv`` with a ``weight`` column (aligned by an
    ``item`` column when present, else in file order), or one number per line."""
    path = Path(path)
    if not path.is_file():
        raise ProtocolError(f"{path}: no such weights file")
    if _is_table(path):
        table = _read_table(path)
        if "weight" not in table.columns:
            raise ProtocolError(f"{path}: needs a 'weight' column; it has {', '.join(table.columns) or 'none'}")
        lines = list(range(2, len(table) + 2))
        weights = _parse_weights(table["weight"].tolist(), lines, str(path))
        if "item" in table.columns:
            names = table["item"].str.strip().tolist()
            _check_unique(names, lines, str(path))
            missing = [i for i in items if i not in set(names)]
            extra = sorted(set(names) - set(items))
            if missing or extra:
                raise ProtocolError(
                    f"{path}: its items differ from the micro-benchmark's"
                    + (f"; no weight for {_names(missing)}" if missing else "")
                    + (f"; weights for items not in it: {_names(extra)}" if extra else ""))
            order = {name: i for i, name in enumerate(names)}
            weights = weights[[order[i] for i in items]]
    else:
        values, lines = _read_lines(path)
        weights = _parse_weights(values, lines, str(path))
    if len(weights) != len(items):
        raise ProtocolError(f"{path}: {len(weights)} weights for {len(items)} items; give one weight per item")
    return weights


def _names(names: Sequence[str]) -> str:
    shown = ", ".join(map(str, list(names)[:_LISTED]))
    return shown + (f" and {len(names) - _LISTED} more" if len(names) > _LISTED else "")


def _check_unique(names: Sequence[str], lines: Sequence[int] | None, where: str) -> None:
    """Refuse repeated names, saying where each repeat occurs (lines, or 1-based positions)."""
    names = pd.Series(list(names), dtype=object)
    at = pd.Series(lines if lines is not None else np.arange(1, len(names) + 1))
    dup = names.duplicated(keep=False).to_numpy()
    if dup.any():
        label = "lines" if lines is not None else "positions"
        grouped = at[dup].groupby(names[dup].to_numpy(), sort=False).agg(lambda v: ", ".join(map(str, v)))
        repeats = [f"{name!r} ({label} {where_})" for name, where_ in grouped.items()]
        raise ProtocolError(f"{where}: items listed more than once: {_names(repeats)}; list each item once")


# ---------------------------------------------------------------------------------------
# Resolving the request against a bundle
# ---------------------------------------------------------------------------------------

def resolve_items(benchmark: Benchmark, items: Sequence[str], weights=None) -> tuple[np.ndarray, np.ndarray]:
    """Column indices of the named items and their weights normalised to sum to 1."""
    names = [str(i) for i in items]
    if not names:
        raise ProtocolError("the micro-benchmark lists no items")
    _check_unique(names, None, "micro-benchmark")
    index = pd.Index(benchmark.items.astype(str)).get_indexer(names)
    if (index < 0).any():
        unknown = [names[i] for i in np.flatnonzero(index < 0)]
        raise ProtocolError(
            f"{len(unknown)} of {len(names)} items are not in {benchmark.name}: {_names(unknown)} "
            f"(its item names look like {', '.join(map(str, benchmark.items[:3]))})"
        )
    index = index.astype(np.int64)
    if weights is None:
        return index, np.full(len(index), 1.0 / len(index))
    w = np.asarray(weights, dtype=np.float64).ravel()
    if w.shape != index.shape:
        raise ProtocolError(f"{len(w)} weights for {len(index)} items; give one weight per item")
    if not np.isfinite(w).all():
        raise ProtocolError("weights must be finite numbers")
    if (w < 0).any():
        bad = np.flatnonzero(w < 0)
        raise ProtocolError(f"weights must not be negative: {_names([f'{names[i]}={w[i]:g}' for i in bad])}")
    if w.max() <= 0:
        raise ProtocolError("weights are all zero; at least one item needs a positive weight")
    w = w / w.max()  # scaled first: weights as large as 1e308 would overflow their sum to inf
    return index, w / w.sum()


def _resolve_models(benchmark: Benchmark, models) -> np.ndarray:
    if models is None:
        index = np.arange(benchmark.n_models)
    elif isinstance(models, str):
        if models not in benchmark.target_sets:
            known = ", ".join(sorted(benchmark.target_sets)) or "none"
            raise ProtocolError(f"{benchmark.name}: no target set named {models!r} (target sets: {known})")
        index = benchmark.model_index(benchmark.target_sets[models])
    else:
        models = [str(m) for m in models]
        if len(set(models)) != len(models):
            raise ProtocolError("models are listed more than once; list each model once")
        index = benchmark.model_index(models)
    if len(index) < 2:
        raise ProtocolError("at least 2 models are needed to compare pairs")
    return index


# ---------------------------------------------------------------------------------------
# Result tables
# ---------------------------------------------------------------------------------------

def _tidy(models: np.ndarray, estimates: np.ndarray, truth_correct: np.ndarray, n_truth: np.ndarray,
          full_accuracy: np.ndarray, selector: str, size: int) -> pd.DataFrame:
    """Results rows for R runs x T models; estimates/truth_correct are (R, T), n_truth (R,)."""
    n_runs, n_models = estimates.shape
    n_truth = np.repeat(n_truth, n_models)
    correct = truth_correct.ravel()
    return pd.DataFrame({
        "run": np.repeat(np.arange(n_runs), n_models), "selector": selector, "size": size,
        "model": np.tile(models.astype(str), n_runs), "estimate": estimates.ravel(),
        "seen_accuracy": correct / n_truth, "unseen_accuracy": correct / n_truth,
        "full_accuracy": np.tile(full_accuracy, n_runs),
        "seen_correct": correct, "n_seen": n_truth, "unseen_correct": correct, "n_unseen": n_truth,
    })


def _tables(benchmark: Benchmark, models: np.ndarray, items: np.ndarray, weights: np.ndarray,
            n_random: int, seed: int, truth: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Tidy tables of the micro-benchmark (one run) and of the random draws (one run each)."""
    correct = benchmark.correct[models].astype(np.float64)
    n_items, k = benchmark.n_items, len(items)
    total = correct.sum(1)
    names = benchmark.models[models]
    full = total / n_items

    def truth_of(chosen_correct):  # (R, T) correct counts on the chosen items
        if truth == "full":
            return np.broadcast_to(total, chosen_correct.shape), np.full(len(chosen_correct), n_items)
        return total[None, :] - chosen_correct, np.full(len(chosen_correct), n_items - k)

    micro_est = (correct[:, items] @ weights)[None, :]
    t_correct, t_n = truth_of(correct[:, items].sum(1)[None, :])
    micro = _tidy(names, micro_est, np.rint(t_correct).astype(np.int64), t_n, full, MICRO, k)

    draws = np.stack([rng_for(seed, "audit", r).choice(n_items, size=k, replace=False)
                      for r in range(n_random)])
    # (R, T) correct counts on each draw, gathered in chunks of about 20 million cells: a dense
    # draws-by-items indicator would take R x N x 8 bytes (4.6 GB for 100,000 draws of BBH)
    rand_correct = np.empty((n_random, len(models)))
    step = max(1, 20_000_000 // max(1, len(models) * k))
    for start in range(0, n_random, step):
        rand_correct[start:start + step] = correct[:, draws[start:start + step]].sum(axis=2).T
    t_correct, t_n = truth_of(rand_correct)
    random = _tidy(names, rand_correct / k, np.rint(t_correct).astype(np.int64), t_n, full, RANDOM, k)
    return micro, random


def _share_closer(results: pd.DataFrame, mdad: float, bin_width: float) -> float:
    """Share of all pairs (over runs) whose true gap lies below the MDAD bin; 1 if not reached."""
    if not np.isfinite(mdad):
        return 1.0
    _, pairs = next(iter_groups(results))
    bins = gap_bins(pairs.true_diff, pairs.n_items, bin_width)
    return float((bins < round(mdad / bin_width)).mean())


def _ci_models(results: pd.DataFrame, *, threshold: float, bin_width: float, tie_rule: str,
               method: str, n_boot: int, rng: np.random.Generator, bar=None) -> tuple[float, float]:
    """Percentile CI of MDAD from resampling *models* (pairs sharing a model are dependent).

    A bootstrap sample draws the models with replacement; a pair (i, j) then counts
    w_i * w_j times (w = multiplicities), for all runs at once via a sparse product.
    """
    from scipy import sparse

    from mbutils.results.metrics import first_crossing, monotone_rates, pair_agreement

    _, pairs = next(iter_groups(results))
    agrees, counted = pair_agreement(pairs.est_diff, pairs.true_diff, tie_rule)
    bins = gap_bins(pairs.true_diff, pairs.n_items, bin_width)  # (runs, pairs)
    n_runs, n_pairs = bins.shape
    n_bins = int(bins.max()) + 1
    cols = bins.ravel()
    rows = np.tile(np.arange(n_pairs), n_runs)
    agree = sparse.csr_matrix(((agrees & counted).ravel().astype(np.float64), (rows, cols)), shape=(n_pairs, n_bins))
    total = sparse.csr_matrix((counted.ravel().astype(np.float64), (rows, cols)), shape=(n_pairs, n_bins))
    n_models = pairs.estimates.shape[1]
    i, j = np.triu_indices(n_models, k=1)
    values = []
    for start in range(0, n_boot, 50):  # blocks keep the (draws x pairs) weights small
        w = rng.multinomial(n_models, np.full(n_models, 1.0 / n_models), size=min(50, n_boot - start))
        pw = (w[:, i] * w[:, j]).astype(np.float64)
        a, t = np.asarray((agree.T @ pw.T).T), np.asarray((total.T @ pw.T).T)
        with np.errstate(invalid="ignore", divide="ignore"):
            rates = a / t
        if method == "monotone":
            rates = np.stack([monotone_rates(np.nan_to_num(r), tt) for r, tt in zip(rates, t)])
        b = first_crossing(rates, threshold).astype(np.float64)
        values.append(np.where(b < 0, np.inf, b * bin_width))
        if bar is not None:
            bar.update(len(b))
    lo, hi = np.quantile(np.concatenate(values), [0.025, 0.975], method="inverted_cdf")
    return (float(lo) if np.isfinite(lo) else np.nan), (float(hi) if np.isfinite(hi) else np.nan)


# ---------------------------------------------------------------------------------------
# The audit
# ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class AuditReport:
    """Everything an audit found; tables use points for MDAD/gaps and error."""

    name: str                   # bundle name
    items: list[str]
    weights: np.ndarray         # normalised to sum 1
    n_models: int
    n_truth_items: int          # items the truth is measured on
    truth: str
    threshold: float
    n_random: int
    results: pd.DataFrame       # tidy rows of both: selector "micro-benchmark" and "random"
    table: pd.DataFrame         # per method: mdad, ci_low, ci_high, tau, error, share_closer, ...
    curve: pd.DataFrame         # agreement per gap bin: selector, gap, agreement, n_pairs
    random_mdads: np.ndarray    # MDAD of each random draw (points; NaN = not reached)
    mdad_rank: float            # share of random draws whose MDAD is <= the micro-benchmark's


def _bar(total: int, desc: str, show: bool):
    """A progress bar on stderr (a no-op one when hidden): the bootstrap can take tens of seconds."""
    from tqdm.std import tqdm

    return tqdm(total=total, desc=desc, unit="resample", disable=not show, leave=False, file=sys.stderr)


def audit(benchmark: Benchmark, items: Sequence[str], weights=None, *, n_random: int = 100,
          seed: int = 0, threshold: float = 0.8, truth: str = "full", models=None,
          bin_width: float = 0.5, tie_rule: str = "paper", mdad_method: str = "first",
          ci: str = "models", n_boot: int = 1000, progress: bool = False) -> AuditReport:
    """Audit a given micro-benchmark: how well a fixed list of items ranks every pair of models, against random subsets.

    For a published "tiny" benchmark or your own list of items. There are no sources and no
    seen half: every model of ``benchmark`` (or of ``models``) is a target, each model's
    estimate is the weighted mean of its 0/1 results on the items, and every pair of models
    is judged against the truth. The baseline is ``n_random`` uniformly random subsets of
    the same size, judged the same way. MDADs, agreement curves, Kendall tau and error are
    those of :func:`mdad_table`, :func:`agreement_curve` and :func:`summary_table`, applied
    to the micro-benchmark as one run and the random subsets as one run each.

    Parameters
    ----------
    benchmark : Benchmark
        The full benchmark the items come from.
    items : sequence of str
        Names of the micro-benchmark's items (each once, all in ``benchmark.items``).
    weights : array_like, optional
        One non-negative weight per item, normalised to sum to 1; None: a plain mean.
    n_random : int, default 100
        Random subsets of the same size in the baseline (each a seeded draw).
    seed : int, default 0
        Root seed of the random subsets and the bootstrap.
    threshold : float, default 0.8
        Agreement the MDAD's bin must reach, in (0, 1].
    truth : {"full", "rest"}, default "full"
        What each pair is judged against: the full-benchmark accuracy, or the accuracy on
        the items *not* in the micro-benchmark (no shared items, so no agreement comes from
        the overlap). With ``"full"`` the random baseline's expected curve and MDAD are also
        computed exactly (the row ``"random (expected)"``), a check on the simulated baseline.
    models : None, str or sequence of str, default None
        The models to rank: all, a target-set name of the bundle, or a list of names (at
        least 2).
    bin_width : float, default 0.5
        Width of the gap bins in accuracy points, as in :func:`mdad_table`.
    tie_rule : {"paper", "exclude"}, default "paper"
        Pairs tied on the truth, as in :func:`mdad_table`.
    mdad_method : {"first", "monotone"}, default "first"
        The MDAD's definition, :func:`mdad_table`'s ``method``.
    ci : {"models", "pairs", "none"}, default "models"
        The 95% interval of the micro-benchmark's and the pooled random MDAD. ``"models"``
        resamples models with replacement (all pairs come from one set of models, and pairs
        sharing a model are dependent) and takes the 2.5% and 97.5% quantiles; ``"pairs"`` is
        the paper's per-bin bootstrap of pairs, far too narrow here (tens of thousands of
        dependent pairs); ``"none"``: no interval.
    n_boot : int, default 1000
        Bootstrap resamples.
    progress : bool, default False
        Show a progress bar (on stderr) for the bootstrap over models.

    Returns
    -------
    AuditReport
        A frozen record (``mbutils.results.auditing.AuditReport``; ``mbutils.results.auditing.format_audit`` prints
        it as the command line does) with ``name``, ``items`` and ``weights`` (normalised),
        ``n_models``, ``n_truth_items`` (items the truth is measured on), ``truth``,
        ``threshold``, ``n_random``; ``results`` (tidy rows in the format of
        :func:`run_experiment`, selector ``"micro-benchmark"`` and ``"random"``), ``table``
        (one row per method: selector, mdad, ci_low, ci_high, n_pairs, reached, n_runs, tau,
        tau_sd, error, error_sd and share_closer, the share of pairs closer than the MDAD),
        ``curve`` (agreement per gap bin: selector, gap, agreement, n_pairs, kind),
        ``random_mdads`` (each random subset's own MDAD, NaN when not reached) and
        ``mdad_rank`` (share of random subsets whose MDAD is at most the micro-benchmark's;
        lower MDAD is better).

    Examples
    --------
    >>> from mbutils import audit, load_benchmark
    >>> bench = load_benchmark("synthetic-gpqa")
    >>> items, models = bench.items[:20], bench.models[:40]
    >>> report = audit(bench, items, models=models, n_random=20, n_boot=100)
    >>> report.table["selector"].tolist()
    ['micro-benchmark', 'random', 'random (expected)']
    >>> report.n_models, report.n_truth_items, len(report.random_mdads)
    (40, 448, 20)
    >>> rest = audit(bench, items, models=models, n_random=20, truth="rest", ci="none")
    >>> rest.n_truth_items, rest.table["selector"].tolist()  # the other 428 items
    (428, ['micro-benchmark', 'random'])
    """
    check_choice(truth, TRUTHS, "truth", ProtocolError)
    if int(n_random) != n_random or n_random < 1:
        raise ProtocolError(f"n_random must be a positive number of random subsets, got {n_random}")
    if not 0 < threshold <= 1:
        raise ProtocolError(f"threshold must be in (0, 1], got {threshold}")
    index, w = resolve_items(benchmark, items, weights)
    if truth == "rest" and len(index) == benchmark.n_items:
        raise ProtocolError("the micro-benchmark holds every item, so no items are left for truth='rest'")
    models_idx = _resolve_models(benchmark, models)
    n_pairs = len(models_idx) * (len(models_idx) - 1) // 2
    if int(n_random) * n_pairs > MAX_RANDOM_PAIRS:  # every random subset's pairs are held at once (~40 bytes each)
        most = max(1, MAX_RANDOM_PAIRS // max(1, n_pairs))
        raise ProtocolError(f"{int(n_random):,} random subsets of {len(models_idx)} models ({n_pairs:,} pairs each) "
                            f"would need about {int(n_random) * n_pairs * 40 / 1e9:.0f} GB; use at most {most:,} "
                            "(the baseline's interval is already tight at 1,000)")
    micro, random = _tables(benchmark, models_idx, index, w, int(n_random), seed, truth)
    results = pd.concat([micro, random], ignore_index=True)

    opts = dict(threshold=threshold, bin_width=bin_width, tie_rule=tie_rule, method=mdad_method)
    if ci not in CI_METHODS:
        raise ProtocolError(f"ci must be one of {', '.join(CI_METHODS)}, got {ci!r}")
    mdads = mdad_table(results, ci="none" if ci == "models" else ci, n_boot=n_boot, seed=seed, **opts)
    if ci == "models":
        reached = mdads.index[mdads["reached"]]
        with _bar(len(reached) * n_boot, "audit: bootstrap over models", progress) as bar:
            for row in reached:
                name = mdads.at[row, "selector"]
                mdads.loc[row, ["ci_low", "ci_high"]] = _ci_models(
                    results[results["selector"] == name], threshold=threshold, bin_width=bin_width,
                    tie_rule=tie_rule, method=mdad_method, n_boot=n_boot, rng=rng_for(seed, "audit-ci", name),
                    bar=bar)
    summary = summary_table(results)[["selector", "tau", "tau_sd", "error", "error_sd"]]
    table = mdads.drop(columns=["size"]).merge(summary, on="selector")
    table["share_closer"] = [_share_closer(results[results["selector"] == s], m, bin_width)
                             for s, m in zip(table["selector"], table["mdad"])]

    per_draw = random.assign(selector=RANDOM + "#" + random["run"].astype(str), run=0)
    random_mdads = mdad_table(per_draw, ci="none", **opts)["mdad"].to_numpy(np.float64)
    micro_mdad = float(table.loc[table["selector"] == MICRO, "mdad"].iloc[0])
    rank = float(np.mean(np.nan_to_num(random_mdads, nan=np.inf) <= (np.inf if np.isnan(micro_mdad) else micro_mdad)))

    curve = agreement_curve(results, bin_width=bin_width, tie_rule=tie_rule)
    curve["kind"] = "simulated"
    curve.loc[curve["selector"] == MICRO, "kind"] = "fixed"
    if truth == "full":
        curve, table = _add_prediction(benchmark, models_idx, len(index), curve, table,
                                       threshold, bin_width, tie_rule, mdad_method)
    return AuditReport(
        name=benchmark.name, items=[str(i) for i in benchmark.items[index]], weights=w,
        n_models=len(models_idx), n_truth_items=int(micro["n_seen"].iloc[0]), truth=truth,
        threshold=threshold, n_random=int(n_random), results=results, table=table,
        curve=curve.drop(columns=["size"]), random_mdads=random_mdads, mdad_rank=rank,
    )


def _add_prediction(benchmark, models_idx, k, curve, table, threshold, bin_width, tie_rule, mdad_method):
    """The random baseline's expected curve and MDAD, computed exactly (truth = full)."""
    from mbutils.results.planning_curves import predicted_curve, predicted_mdad
    from mbutils.results.planning_population import pair_population

    sub = Benchmark(name=benchmark.name, correct=benchmark.correct[models_idx],
                    models=benchmark.models[models_idx], items=benchmark.items,
                    subtasks=benchmark.subtasks)
    pop = pair_population(sub, truth="full")
    opts = dict(bin_width=bin_width, tie_rule=tie_rule)
    pred = predicted_curve(pop, [k], **opts).drop(columns=["kind"]).assign(selector="random (expected)")
    pred["kind"] = "predicted"
    mdad = predicted_mdad(pop, [k], threshold=threshold, mdad_method=mdad_method, **opts)
    row = {"selector": "random (expected)", "mdad": float(mdad["mdad"].iloc[0]),
           "reached": bool(mdad["reached"].iloc[0]), "n_pairs": int(mdad["n_pairs"].iloc[0])}
    return pd.concat([curve, pred], ignore_index=True), pd.concat([table, pd.DataFrame([row])], ignore_index=True)


def _fmt_mdad(value: float) -> str:
    return mdad_text(value)


def _fmt_ci(low: float, high: float, has_ci: bool) -> str:
    if not has_ci:
        return ""
    return f"{_fmt_mdad(low)} to {_fmt_mdad(high)}"


LABELS = {MICRO: "micro-benchmark", RANDOM: "random, pooled over draws",
          "random (expected)": "random, expected (exact)"}


def format_audit(report: AuditReport, *, max_gap: float = 10.0) -> str:
    """Plain-text audit for the command line: headline, per-method table, agreement by gap."""
    from mbutils.base.tables import render

    where = ("full-benchmark accuracy" if report.truth == "full"
             else "accuracy on the items not in the micro-benchmark")
    weighted = "" if np.allclose(report.weights, report.weights[0]) else ", weighted"
    lines = [f"Audit of a {len(report.items)}-item micro-benchmark{weighted} on {report.name}: "
             f"{report.n_models} models, truth = {where} ({report.n_truth_items} items), "
             f"threshold {report.threshold:g}, baseline = {report.n_random} random subsets of the same size."]
    t = report.table
    has_ci = t["selector"].isin([MICRO, RANDOM]) & t["reached"].astype(bool)
    shown = pd.DataFrame({
        "method": t["selector"].map(LABELS).fillna(t["selector"]),
        "MDAD": t["mdad"].map(_fmt_mdad),
        "95% CI": [_fmt_ci(lo, hi, c) for lo, hi, c in zip(t["ci_low"], t["ci_high"], has_ci)],
        "tau": t["tau"].map(lambda v: "" if pd.isna(v) else f"{v:.3f}"),
        "error": t["error"].map(lambda v: "" if pd.isna(v) else f"{v:.2f}"),
        "pairs closer than MDAD": t["share_closer"].map(lambda v: "" if pd.isna(v) else f"{100 * v:.0f}%"),
    })
    lines += ["", render(shown, "markdown").rstrip(),
              "(MDAD and error in accuracy points; tau = Kendall tau-b against the truth.)"]
    finite = report.random_mdads[np.isfinite(report.random_mdads)]
    if len(finite):
        lo, hi = np.percentile(finite, [5, 95])
        never = len(report.random_mdads) - len(finite)
        lines.append(f"\nEach random subset's own MDAD: 5th-95th percentile {lo:g} to {hi:g} points"
                     + (f" ({never} draws never reached the threshold)" if never else "") + ".")
    lines.append(f"The micro-benchmark's MDAD is matched or beaten by {100 * report.mdad_rank:.0f}% "
                 "of the random subsets (lower MDAD is better).")
    wide = (report.curve[report.curve["gap"] <= max_gap]
            .pivot_table(index="gap", columns="selector", values="agreement", sort=False).reset_index())
    wide.columns = [LABELS.get(c, c) for c in wide.columns]
    lines += ["", f"Agreement by gap (points, up to {max_gap:g}):", render(wide, "markdown").rstrip()]
    return "\n".join(lines) + "\n"
