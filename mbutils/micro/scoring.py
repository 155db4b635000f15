"""Score new models with a micro-benchmark folder: an estimate, an interval, and verdicts at a stated level.

A new model's per-item results come as lm-evaluation-harness ``samples_*.jsonl`` logs or as a
bundle-format ``responses.csv`` (:mod:`mbutils.micro.answers` reads both). The estimate and interval are
the ones every output of the package gives (:func:`mbutils.micro.heldout.estimate_and_interval`):

* uniform random sampling (plain mean): the exact finite-population (hypergeometric) interval for the
  model's accuracy on all N items;
* uniform random sampling read by the cross-fitted difference estimator (``random_difference``): a
  Student-t interval with k - 2 degrees of freedom from the variance the estimator gives from its
  cross-fitted residuals, floored so it never has zero width (folders written before it keep the
  normal interval they were built with);
* every other selector: the empirical interval from the cross-fitted held-out errors of the pool's
  models (``calibration.csv``), in the spirit of CV+, with the estimate corrected by their mean (the
  estimator's bias on models it never saw).

Every estimate and both ends of its interval are accuracies in [0, 100] points.

**Verdicts** (:mod:`mbutils.micro.verdicts`): the new model is better than a pool model when the lower
end of its interval at ``verdict_level`` (95%) is above that model's full accuracy (known: pool models
were run on every item) and the chance that it is not better, given its answers and the pool as the
population of models, is at most 5%; worse likewise; otherwise they cannot be told apart. The card
states how often such verdicts were wrong on held-out models. The card's MDAD is not used: it is
about two micro scores, not a micro score against a known accuracy. A scored model whose name is a pool
model's is said to be one (``in_pool``; its estimate is in-sample) and is not compared with itself.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from mbutils.micro.answers import ScoreError, folder_metric, listed_names, read_answers  # noqa: F401 (ScoreError: public here)
from mbutils.micro.heldout import calibration_errors, estimate_and_interval, posterior_for, raw_evidence
from mbutils.micro.verdicts import VERDICT_LEVEL, verdict_sentence, verdicts
from mbutils.micro.difference import DESCRIPTION, describe
from mbutils.micro.folder import MicroFolder, read_micro

#: Interval kind (micro.json's ``interval``) -> what it is, in the words of the outputs.
INTERVALS = {"hypergeometric": "exact finite-population (hypergeometric) interval",
             "empirical": "empirical interval from held-out errors of the pool's models",
             "normal": DESCRIPTION}


def score(folder, paths, *, level: float = 0.9, metric: str | None = None, log_filter: str | None = None,
          verdict_level: float = VERDICT_LEVEL) -> pd.DataFrame:
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
    verdict_level : float, default 0.95
        Level of the verdicts' interval: better / worse than a pool model when it lies wholly above /
        below that model's accuracy.

    Returns
    -------
    pandas.DataFrame
        One row per model: model, estimate, low, high (points, all in [0, 100]), level, interval (its
        kind: ``"hypergeometric"``, ``"normal"`` (the difference estimator's own, Student-t) or
        ``"empirical"``), bias_correction (points added to the raw estimate: minus the cross-fitted
        mean error for the empirical kind, else 0), verdict_level, verdict_low, verdict_high (the
        verdicts' interval), above, below, indistinguishable (lists of pool models the model is better
        than, worse than, or cannot be told from at ``verdict_level``; never the model itself), mdad (the
        card's, for reference), metric and filter (the lm-eval metric and filter read; None for a
        responses.csv) and in_pool (the model's name is a pool model's).

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
    errors = calibration_errors(micro_folder.calibration) if kind == "empirical" else np.zeros(0)

    def scored(at: float):
        return estimate_and_interval(kind, micro, answers.correct, answers.confidence, errors,
                                     micro_folder.n_items, at)

    estimate, bounds = scored(level)
    _, verdict_bounds = scored(verdict_level)
    pool = micro_folder.pool
    names = pool["model"].astype(str).to_numpy()
    same = np.asarray(answers.models, dtype=str)[:, None] == names[None, :]
    pools = np.where(same, np.nan, pool["accuracy"].to_numpy(np.float64)[None, :])  # never itself
    posterior = posterior_for(kind, micro, raw_evidence(kind, micro, answers.correct, answers.confidence), pools,
                              n_items=micro_folder.n_items, errors=errors)
    better, worse = verdicts(verdict_bounds[:, 0], verdict_bounds[:, 1], pools, posterior, verdict_level)
    bias = 100.0 * float(errors.mean()) if len(errors) else 0.0
    rows = []
    for i, name in enumerate(answers.models):
        other = names != str(name)  # a pool model scored as new is not compared with itself
        rows.append({"model": name, "estimate": float(100 * estimate[i]), "low": float(100 * bounds[i, 0]),
                     "high": float(100 * bounds[i, 1]), "level": float(level), "interval": kind,
                     "bias_correction": -bias, "verdict_level": float(verdict_level),
                     "verdict_low": float(100 * verdict_bounds[i, 0]),
                     "verdict_high": float(100 * verdict_bounds[i, 1]), "mdad": card_mdad(micro_folder.card),
                     "metric": answers.metric, "filter": answers.log_filter, "in_pool": not other.all(),
                     "above": names[other & better[i]].tolist(), "below": names[other & worse[i]].tolist(),
                     "indistinguishable": names[other & ~better[i] & ~worse[i]].tolist()})
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


def _held_out_rate(card: dict) -> str:
    """The card's measured error rate of these verdicts, in one sentence ('' when the card has none)."""
    held = (card.get("held_out") or {})
    part = held.get("calibration") or held.get("excluded")
    if not part or not part.get("models"):
        return ""
    made, wrong = int(part["verdicts"]), int(part["false_verdicts"])
    share = f"{100 * wrong / made:.1f}%" if made else "none made"
    return (f"On {part['models']} held-out pool models, {wrong} of {made} such verdicts were wrong ({share}); "
            f"bias {part['bias']:+.1f} points, {100 * part['coverage']:.0f}% of {100 * held['level']:g}% intervals "
            "covered (card.json's held_out).")


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
                           "bias_correction": round(row.bias_correction, 4),
                           "verdicts": {"level": row.verdict_level,
                                        "interval": [round(row.verdict_low, 4), round(row.verdict_high, 4)],
                                        "better_than": row.above, "worse_than": row.below,
                                        "cannot_tell": row.indistinguishable},
                           "card_mdad": None if not np.isfinite(row.mdad) else row.mdad,
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
        if row.bias_correction:
            lines.append(f"  The estimate is corrected by {row.bias_correction:+.1f} points, minus the mean error of this "
                         "micro-benchmark on held-out pool models (calibration.csv).")
        lines.append(f"  Verdicts at {100 * row.verdict_level:g}% (its {100 * row.verdict_level:g}% interval "
                     f"{row.verdict_low:.1f} to {row.verdict_high:.1f} against each pool model's full accuracy): "
                     + verdict_sentence(len(row.above), len(row.below), len(row.indistinguishable), row.verdict_level)
                     + ".")
        lines.append(f"  better than: {listed_names(row.above) or 'none'}; worse than: "
                     f"{listed_names(row.below) or 'none'}.")
    rate = _held_out_rate(folder.card)
    if rate:
        lines.append("")
        lines.append(rate)
    return "\n".join(lines) + "\n"
