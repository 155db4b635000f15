"""Score new models with a micro-benchmark folder: estimate, interval, and who they can be told from.

A new model's per-item results come as lm-evaluation-harness ``samples_*.jsonl`` logs (read
by :func:`mbutils.data.importers.import_lm_eval`; logs of the exported ``<task>_micro``
tasks are mapped back to the original documents) or as a bundle-format ``responses.csv``
of one or more models. The estimate is the folder's estimator applied exactly as the
experiment applies it (:meth:`MicroBenchmark.estimate`), so a model scores the same here
as a target of the experiment engine with the same items.

Interval (``level``, default 90%), see :mod:`mbutils.results.intervals`:

* uniform random sampling (plain mean): the exact finite-population (hypergeometric)
  interval for the model's accuracy on all N items;
* every other selector: the empirical interval from the cross-fitted held-out errors of
  the pool's models stored in the folder (``calibration.csv``), at split-conformal ranks.

A pool model is *distinguishable* from the new model when their accuracies differ by at
least the card's MDAD: at such gaps the micro-benchmark orders a pair correctly at least
the card's threshold (80%) of the time.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from mbutils.base.errors import MbutilsError
from mbutils.results.intervals import empirical_interval, hypergeometric_interval
from mbutils.results.micro_folder import MicroFolder, read_micro

_LISTED = 5


class ScoreError(MbutilsError, ValueError):
    """New results that cannot be scored with this micro-benchmark."""


@dataclass(frozen=True)
class Answers:
    """New models' answers on the micro-benchmark's index space (``MicroFolder.item_names``)."""

    models: list[str]
    correct: np.ndarray
    confidence: np.ndarray | None
    source: str


def _names(values) -> str:
    values = list(values)
    return ", ".join(map(str, values[:_LISTED])) + (f" and {len(values) - _LISTED} more" if len(values) > _LISTED
                                                     else "")


def _chosen(folder: MicroFolder) -> list[str]:
    return folder.items["item"].astype(str).tolist()


def _document_map(folder: MicroFolder) -> dict[str, str]:
    """Log item id (``task:doc`` of the original or of the exported micro task) -> chosen item name."""
    from mbutils.results.lm_eval_task import split_item

    out = {}
    for name, subtask in zip(_chosen(folder), folder.items["subtask"].astype(str)):
        parsed = split_item(name, subtask)
        out[name] = name
        if parsed is not None:
            out[f"{parsed[0]}:{parsed[1]}"] = name
    for micro_task, info in (folder.meta.get("lm_eval_tasks") or {}).items():
        for position, doc in enumerate(info["docs"]):
            original = out.get(f"{info['task']}:{doc}")
            if original is not None:
                out[f"{micro_task}:{position}"] = original
    return out


def _place(folder: MicroFolder, names: list[str], correct: np.ndarray, confidence, where: str,
           models: list[str]) -> Answers:
    """Put the given columns into the folder's index space; refuse foreign or incomplete results."""
    lookup = _document_map(folder)
    mapped = [lookup.get(str(n)) for n in names]
    chosen = _chosen(folder)
    have = {m for m in mapped if m is not None}
    bundle = folder.meta["bundle"]
    if not have:
        raise ScoreError(
            f"{where}: none of its {len(names)} items is in this micro-benchmark of {bundle!r} (its items look like "
            f"{_names(chosen[:3])}; the file's like {_names(names[:3])}): these are results of another task or "
            "bundle. Score results of the task the micro-benchmark was built from")
    missing = [c for c in chosen if c not in have]
    if missing:
        tasks = ", ".join(sorted((folder.meta.get("lm_eval_tasks") or {}))) or "the original task"
        raise ScoreError(f"{where}: {len(missing)} of the micro-benchmark's {len(chosen)} items are missing: "
                         f"{_names(missing)}; evaluate the model on all of them (lm-eval tasks {tasks} in "
                         f"{folder.path / 'lm_eval'}) and score the complete logs")
    space = {name: j for j, name in enumerate(folder.item_names)}
    cols = np.array([j for j, m in enumerate(mapped) if m is not None])
    target = np.array([space[mapped[j]] for j in cols])
    full = np.zeros((len(models), len(folder.item_names)))
    full[:, target] = correct[:, cols]
    conf = None
    if confidence is not None:
        conf = np.zeros_like(full)
        conf[:, target] = confidence[:, cols]
    return Answers(models=models, correct=full, confidence=conf, source=where)


def read_responses_csv(folder: MicroFolder, path: Path) -> Answers:
    """A bundle-format ``responses.csv`` (``model`` column, one 0/1 column per item)."""
    try:
        table = pd.read_csv(path, dtype={"model": str})
    except Exception as err:  # noqa: BLE001 -- any parser failure: not a responses table
        raise ScoreError(f"{path}: cannot read it as a responses table ({type(err).__name__})") from None
    if "model" not in table.columns:
        raise ScoreError(f"{path}: needs a 'model' column and one 0/1 column per item (the bundle format); "
                         f"it has {_names(table.columns)}")
    names = [str(c) for c in table.columns if c != "model"]
    frame = table.drop(columns="model")
    # columns the parser read as numbers stay as they are; only the others are converted, cell by cell
    text = [c for c, kind in frame.dtypes.items() if not pd.api.types.is_numeric_dtype(kind)]
    if text:
        frame[text] = frame[text].apply(pd.to_numeric, errors="coerce")
    values = frame.to_numpy(np.float64)
    answers = _place(folder, names, np.nan_to_num(values, nan=-1.0), None, str(path),
                     table["model"].astype(str).tolist())
    chosen = set(_chosen(folder))
    chosen_cols = [j for j, n in enumerate(names) if n in chosen]
    bad = ~np.isin(values[:, chosen_cols], (0.0, 1.0))
    if bad.any():
        row, col = np.argwhere(bad)[0]
        raise ScoreError(f"{path}: row {row + 2}, column {names[chosen_cols[col]]!r} holds "
                         f"{table[names[chosen_cols[col]]].iloc[row]!r}; answers must be 0 or 1 on every item of the "
                         "micro-benchmark")
    return answers


def read_lm_eval(folder: MicroFolder, paths: list[Path], metric: str) -> Answers:
    """lm-eval samples logs of one or more models (original or exported micro tasks)."""
    from mbutils.data.importers import import_lm_eval

    bench = import_lm_eval(paths, metric=metric)
    where = ", ".join(map(str, paths[:3])) + (" ..." if len(paths) > 3 else "")
    answers = _place(folder, bench.items.astype(str).tolist(), bench.correct.astype(np.float64),
                     bench.confidence, where, bench.models.astype(str).tolist())
    return answers


def read_answers(folder: MicroFolder, paths, metric: str = "acc") -> Answers:
    """New models' answers from ``responses.csv`` files or lm-eval samples logs (not mixed)."""
    paths = [Path(p).expanduser() for p in paths]
    if not paths:
        raise ScoreError("give the new model's results: lm-eval samples_*.jsonl files or a responses.csv")
    for path in paths:
        if not path.exists():
            raise ScoreError(f"{path}: no such file or folder")
    csvs = [p for p in paths if p.suffix == ".csv"]
    if csvs and len(csvs) != len(paths):
        raise ScoreError("give either responses.csv files or lm-eval samples logs, not both in one call")
    if not csvs:
        return read_lm_eval(folder, paths, metric)
    parts = [read_responses_csv(folder, p) for p in csvs]
    models = [m for part in parts for m in part.models]
    repeated = sorted({m for m in models if models.count(m) > 1})
    if repeated:
        raise ScoreError(f"models appear in more than one file: {_names(repeated)}; give each model once")
    return Answers(models=models, correct=np.concatenate([p.correct for p in parts]), confidence=None,
                   source=", ".join(map(str, csvs)))


def score(folder, paths, *, level: float = 0.9, metric: str = "acc") -> pd.DataFrame:
    """Estimated full-benchmark accuracy (points) with an interval, per new model.

    Parameters
    ----------
    folder : str or Path or MicroFolder
        A folder written by ``python -m mbutils build-micro``.
    paths : sequence of str or Path
        lm-eval ``samples_*.jsonl`` logs (or folders of them), or ``responses.csv`` files.
    level : float, default 0.9
        Level of the interval: exact hypergeometric for uniform random sampling, empirical
        (cross-fitted held-out errors, split-conformal ranks) for every other selector.
    metric : str, default "acc"
        The lm-eval metric read as correctness.

    Returns
    -------
    pandas.DataFrame
        One row per model: model, estimate, low, high (points), level, interval (its kind),
        above, below, indistinguishable (lists of pool models) and mdad (points, NaN when the
        card has none).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from mbutils import load_benchmark
    >>> from mbutils.results.microbench import build_micro
    >>> from mbutils.results.micro_folder import write_micro
    >>> bench = load_benchmark("synthetic-gpqa")
    >>> new = bench.models[0]
    >>> built = build_micro(bench, "random", 40, exclude=[new], runs=2)
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> folder = write_micro(built, tmp / "micro")
    >>> row = bench.correct[[0]]
    >>> pd.DataFrame(row, columns=bench.items).assign(model=new).to_csv(tmp / "new.csv", index=False)
    >>> table = score(folder, [tmp / "new.csv"])
    >>> table.loc[0, "model"] == new, bool(table.loc[0, "low"] <= table.loc[0, "estimate"] <= table.loc[0, "high"])
    (True, True)
    """
    micro_folder = folder if isinstance(folder, MicroFolder) else read_micro(folder)
    answers = read_answers(micro_folder, paths, metric)
    micro = micro_folder.micro
    if micro.reads == "confidence" and answers.confidence is None:
        raise ScoreError(f"{answers.source}: this micro-benchmark ({micro_folder.meta['selector']}) estimates from "
                         "the model's confidence in the gold answer, which these results lack; give lm-eval logs "
                         "of a multiple-choice task, or build the micro-benchmark with a 0/1 variant "
                         "(e.g. anchor_points_binary)")
    estimate = micro.estimate(answers.correct, answers.confidence)
    if micro_folder.meta["interval"] == "hypergeometric":
        hits = np.rint(answers.correct[:, micro.items].sum(1)).astype(np.int64)
        bounds = hypergeometric_interval(hits, micro_folder.k, micro_folder.n_items, level)
    else:
        errors = micro_folder.calibration["error"].to_numpy(np.float64) if len(micro_folder.calibration) else []
        bounds = empirical_interval(estimate, errors, level)
    mdad = float(micro_folder.card.get("mdad", np.nan))
    pool = micro_folder.pool
    acc = 100.0 * pool["accuracy"].to_numpy(np.float64)
    rows = []
    for name, est, (low, high) in zip(answers.models, 100.0 * estimate, 100.0 * bounds):
        gap = est - acc
        sure = np.isfinite(mdad) & (np.abs(gap) >= mdad)
        rows.append({"model": name, "estimate": float(est), "low": float(low), "high": float(high),
                     "level": float(level), "interval": micro_folder.meta["interval"], "mdad": mdad,
                     "above": pool["model"][sure & (gap > 0)].tolist(),
                     "below": pool["model"][sure & (gap < 0)].tolist(),
                     "indistinguishable": pool["model"][~sure].tolist()})
    return pd.DataFrame(rows)


def format_scores(table: pd.DataFrame, folder: MicroFolder, fmt: str = "text") -> str:
    """Text (one paragraph per model) or JSON (model -> estimate, interval, level, ...)."""
    import json

    if fmt == "json":
        out = {row.model: {"estimate": round(row.estimate, 4), "interval": [round(row.low, 4), round(row.high, 4)],
                           "level": row.level, "interval_kind": row.interval,
                           "mdad": None if not np.isfinite(row.mdad) else row.mdad,
                           "above": row.above, "below": row.below, "indistinguishable": row.indistinguishable}
               for row in table.itertuples()}
        return json.dumps(out, indent=2) + "\n"
    how = ("exact finite-population (hypergeometric) interval" if folder.meta["interval"] == "hypergeometric"
           else "empirical interval from held-out errors of the pool's models")
    if folder.meta["interval"] != "hypergeometric" and len(folder.calibration) == 0:
        how += (" (none stored: the pool was too small to hold models out, so the interval is the whole "
                "range; build from a larger pool)")
    lines = [f"Micro-benchmark of {folder.meta['bundle']!r}: {folder.meta['selector']}, {folder.k} of "
             f"{folder.n_items} items; {how}."]
    for row in table.itertuples():
        lines.append("")
        lines.append(f"{row.model}: estimated accuracy {row.estimate:.1f} points, {100 * row.level:g}% interval "
                     f"{row.low:.1f} to {row.high:.1f}.")
        if not np.isfinite(row.mdad):
            note = folder.card.get("note") or "the card has no MDAD (not reached at this k)"
            lines.append(f"  No pool model can be told apart reliably: {note}.")
            continue
        lines.append(f"  At the card's MDAD ({row.mdad:g} points, {100 * folder.card['threshold']:g}% agreement):")
        lines.append(f"  better than {len(row.above)} pool models ({_names(row.above) or 'none'}),")
        lines.append(f"  worse than {len(row.below)} ({_names(row.below) or 'none'}),")
        lines.append(f"  not distinguishable from {len(row.indistinguishable)} "
                     f"({_names(row.indistinguishable) or 'none'}).")
    return "\n".join(lines) + "\n"
