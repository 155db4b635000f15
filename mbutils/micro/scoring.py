"""Score new models with a micro-benchmark folder: estimate, interval, and who they can be told from.

A new model's per-item results come as lm-evaluation-harness ``samples_*.jsonl`` logs (read
by :func:`mbutils.data.importers.import_lm_eval`; logs of the exported ``<task>_micro``
tasks are mapped back to the original documents) or as a bundle-format ``responses.csv``
of one or more models. The estimate is the folder's estimator applied exactly as the
experiment applies it (:meth:`MicroBenchmark.estimate`), so a model scores the same here
as a target of the experiment engine with the same items.

Interval (``level``, default 90%), see :mod:`mbutils.micro.intervals`:

* uniform random sampling (plain mean): the exact finite-population (hypergeometric)
  interval for the model's accuracy on all N items;
* uniform random sampling read by the cross-fitted difference estimator (``random_difference``):
  a Student-t interval with k - 2 degrees of freedom, the estimate plus or minus the t quantile times
  the standard deviation the estimator gives from its cross-fitted residuals on the k items, floored
  so it never has zero width (the pool's answers it reads are in ``pool_answers.csv``; folders written
  before it keep the normal interval they were built with); approximate, its coverage on held-out
  models is on the card;
* every other selector: the empirical interval from the cross-fitted held-out errors of
  the pool's models stored in the folder (``calibration.csv``): a cross-fitted interval in the
  spirit of CV+, whose coverage is marginal and measured, not guaranteed at the level.

The text and JSON outputs name the interval (``INTERVALS``). Every estimate and both ends of its
interval are accuracies in [0, 1]: the difference and IRT estimators clip where they estimate, and
``score`` clips every other estimator's value the same way.

A pool model is *distinguishable* from the new model when their accuracies differ by at
least the card's MDAD: at such gaps the micro-benchmark orders a pair correctly at least
the card's threshold (80%) of the time. A scored model whose name is a pool model's (``pool.csv``) is
said to be one (``in_pool``; its answers are among those the micro-benchmark learnt from, so its estimate
is in-sample) and is not compared with itself.

A log is read with the metric the bundle was built on (``micro.json``'s ``lm_eval_metric``, from the
bundle's items.csv or provenance.json: ``acc_norm`` for the leaderboard's GPQA and BBH), else ``acc``,
unless ``metric`` names another; the output says which, and which filter of the logs it read (the one
``log_filter`` names, else the only one a log records; a filter asked for that a log does not record is
refused, naming the log and the filters it records). Documents are matched to items as the folder
records them (``lm_eval_tasks``: each micro task's harness task, documents and their items), so a log
of ``leaderboard_gpqa_main`` scores the items ``gpqa_main_NNN``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from mbutils.micro.answers import ScoreError, folder_metric, listed_names, read_answers  # noqa: F401 (ScoreError: public here)
from mbutils.methods.estimators import clip_accuracy
from mbutils.micro.intervals import empirical_interval, hypergeometric_interval
from mbutils.micro.difference import DESCRIPTION, describe
from mbutils.micro.folder import MicroFolder, read_micro

#: Interval kind (micro.json's ``interval``) -> what it is, in the words of the outputs.
INTERVALS = {"hypergeometric": "exact finite-population (hypergeometric) interval",
             "empirical": "empirical interval from held-out errors of the pool's models",
             "normal": DESCRIPTION}


def score(folder, paths, *, level: float = 0.9, metric: str | None = None,
          log_filter: str | None = None) -> pd.DataFrame:
    """Estimated full-benchmark accuracy (points) with an interval, per new model.

    Parameters
    ----------
    folder : str or Path or MicroFolder
        A folder written by ``python -m mbutils build-micro``.
    paths : sequence of str or Path
        lm-eval ``samples_*.jsonl`` logs (or folders of them), or ``responses.csv`` files.
    level : float, default 0.9
        Level of the interval: exact hypergeometric for uniform random sampling; Student-t (k - 2
        degrees of freedom), from the variance of its cross-fitted residuals, for the difference
        estimator (``random_difference``, :class:`~mbutils.RandomDifference`); empirical (cross-fitted
        held-out errors, a CV+-like interval) for every other selector.
    metric : str, optional
        The lm-eval metric read as correctness; by default the one the micro-benchmark's bundle was
        built on (``acc_norm`` for the leaderboard's GPQA and BBH), else ``acc``.
    log_filter : str, optional
        The lm-eval filter to read (``strict-match``, ``flexible-extract``): needed for logs that record
        several; a log that does not record it is refused (naming the log and the filters it records),
        and so is a responses.csv, which records none. By default a log's only filter is read.

    Returns
    -------
    pandas.DataFrame
        One row per model: model, estimate, low, high (points, all in [0, 100]), level, interval (its
        kind: ``"hypergeometric"``, ``"normal"`` (the difference estimator's own, Student-t) or
        ``"empirical"``), above, below, indistinguishable (lists of pool models, never the model itself),
        mdad (points, NaN when the card has none or its interval is open at the top: then no pool model is
        told apart), metric and filter (the lm-eval metric and filter read; None for a responses.csv) and
        in_pool (the model's name is a pool model's).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from mbutils import build_micro, load_benchmark
    >>> bench = load_benchmark("synthetic-gpqa")
    >>> new = bench.models[0]
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> folder = build_micro(bench, "random", 40, exclude=[new], runs=2, out=tmp / "micro").path
    >>> row = bench.correct[[0]]
    >>> pd.DataFrame(row, columns=bench.items).assign(model=new).to_csv(tmp / "new.csv", index=False)
    >>> table = score(folder, [tmp / "new.csv"])
    >>> table.loc[0, "model"] == new, bool(table.loc[0, "low"] <= table.loc[0, "estimate"] <= table.loc[0, "high"])
    (True, True)
    """
    micro_folder = folder if isinstance(folder, MicroFolder) else read_micro(folder)
    answers = read_answers(micro_folder, paths, folder_metric(micro_folder, metric)[0], log_filter)
    micro = micro_folder.micro
    if micro.reads == "confidence" and answers.confidence is None:
        raise ScoreError(f"{answers.source}: this micro-benchmark ({micro_folder.meta['selector']}) estimates from "
                         "the model's confidence in the gold answer, which these results lack; give lm-eval logs "
                         "of a multiple-choice task, or build the micro-benchmark with a 0/1 variant "
                         "(e.g. anchor_points_binary)")
    kind = micro_folder.meta["interval"]
    if kind == "normal":  # the difference estimator: its own interval (Student-t, or a legacy folder's normal)
        estimate, low, high = micro.interval(answers.correct, level)
        bounds = np.stack([low, high], axis=1)
    elif kind == "hypergeometric":
        estimate = clip_accuracy(micro.estimate(answers.correct, answers.confidence))
        hits = np.rint(answers.correct[:, micro.items].sum(1)).astype(np.int64)
        bounds = hypergeometric_interval(hits, micro_folder.k, micro_folder.n_items, level)
    else:
        estimate = clip_accuracy(micro.estimate(answers.correct, answers.confidence))
        errors = micro_folder.calibration["error"].to_numpy(np.float64) if len(micro_folder.calibration) else []
        bounds = empirical_interval(estimate, errors, level)
    mdad = card_mdad(micro_folder.card)
    pool = micro_folder.pool
    names = pool["model"].astype(str)
    acc = 100.0 * pool["accuracy"].to_numpy(np.float64)
    rows = []
    for name, est, (low, high) in zip(answers.models, 100.0 * estimate, 100.0 * bounds):
        gap = est - acc
        other = (names != str(name)).to_numpy()  # a pool model scored as new is not compared with itself
        sure = np.isfinite(mdad) & (np.abs(gap) >= mdad)
        rows.append({"model": name, "estimate": float(est), "low": float(low), "high": float(high),
                     "level": float(level), "interval": kind, "mdad": mdad,
                     "metric": answers.metric, "filter": answers.log_filter, "in_pool": not other.all(),
                     "above": pool["model"][other & sure & (gap > 0)].tolist(),
                     "below": pool["model"][other & sure & (gap < 0)].tolist(),
                     "indistinguishable": pool["model"][other & ~sure].tolist()})
    table = pd.DataFrame(rows)
    table.attrs["filter_given"] = log_filter is not None
    return table


def _finite(value) -> bool:
    try:
        return bool(np.isfinite(float(value)))
    except (TypeError, ValueError):  # None (a NaN stored as JSON null) or not a number
        return False


def card_mdad(card: dict) -> float:
    """The card's MDAD (points) for telling a scored model from pool models; NaN when the card has none,
    or when its 95% interval does not close at the top (too few pairs: it cannot say how close is too close)."""
    if not (_finite(card.get("mdad")) and _finite(card.get("ci_high"))):
        return float("nan")
    return float(card["mdad"])


def _no_mdad_reason(card: dict) -> str:
    if card.get("note"):
        return str(card["note"])
    if _finite(card.get("mdad")):
        return "the card's MDAD interval does not close at its upper end"
    return "the card has no MDAD (not reached at this k)"


def interval_method(folder: MicroFolder) -> str:
    """What the folder's interval is, in the words of the outputs (the difference estimator's by its law)."""
    if folder.meta["interval"] == "normal":
        return describe(folder.micro)
    return INTERVALS[folder.meta["interval"]]


def format_scores(table: pd.DataFrame, folder: MicroFolder, fmt: str = "text", given_metric: str | None = None,
                  given_filter: str | None = None) -> str:
    """Text (one paragraph per model) or JSON (model -> estimate, interval, level, metric, filter, in_pool, ...)."""
    import json

    metric = table["metric"].iloc[0] if "metric" in table and len(table) else None
    log_filter = table["filter"].iloc[0] if "filter" in table and len(table) else None
    method = interval_method(folder)
    if fmt == "json":
        out = {row.model: {"estimate": round(row.estimate, 4), "interval": [round(row.low, 4), round(row.high, 4)],
                           "level": row.level, "interval_kind": row.interval,
                           "interval_method": method,
                           "metric": row.metric, "filter": getattr(row, "filter", None),
                           "in_pool": bool(getattr(row, "in_pool", False)),
                           "mdad": None if not np.isfinite(row.mdad) else row.mdad,
                           "above": row.above, "below": row.below, "indistinguishable": row.indistinguishable}
               for row in table.itertuples()}
        return json.dumps(out, indent=2) + "\n"
    how = method
    if folder.meta["interval"] == "empirical" and len(folder.calibration) == 0:
        how += (" (none stored: the pool was too small to hold models out, so the interval is the whole "
                "range; build from a larger pool)")
    lines = [f"Micro-benchmark of {folder.meta['bundle']!r}: {folder.meta['selector']}, {folder.k} of "
             f"{folder.n_items} items; {how}."]
    if metric is None:
        lines.append("Answers: 0/1 cells of a responses.csv (no lm-eval metric or filter read).")
    else:
        given = given_filter is not None or table.attrs.get("filter_given")
        recorded = "the ones the logs record" if "," in str(log_filter) else "the one the logs record"
        lines.append(f"Metric: {metric} ({folder_metric(folder, given_metric)[1]}); filter: {log_filter or 'none'} "
                     f"({'given' if given else recorded}).")
    for row in table.itertuples():
        lines.append("")
        lines.append(f"{row.model}: estimated accuracy {row.estimate:.1f} points, {100 * row.level:g}% interval "
                     f"{row.low:.1f} to {row.high:.1f}.")
        if getattr(row, "in_pool", False):
            lines.append(f"  Note: {row.model} is one of this micro-benchmark's pool models (pool.csv): its answers "
                         "are among those the micro-benchmark was built from, so this estimate is in-sample, and it "
                         "is not compared with itself.")
        if not np.isfinite(row.mdad):
            lines.append(f"  No pool model can be told apart reliably: {_no_mdad_reason(folder.card)}.")
            continue
        lines.append(f"  At the card's MDAD ({row.mdad:g} points, {100 * folder.card['threshold']:g}% agreement"
                     + (f"; {folder.card['note']}" if folder.card.get("note") else "") + "):")
        lines.append(f"  better than {len(row.above)} pool models ({listed_names(row.above) or 'none'}),")
        lines.append(f"  worse than {len(row.below)} ({listed_names(row.below) or 'none'}),")
        lines.append(f"  not distinguishable from {len(row.indistinguishable)} "
                     f"({listed_names(row.indistinguishable) or 'none'}).")
    return "\n".join(lines) + "\n"
