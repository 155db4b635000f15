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
* uniform random sampling read by the cross-fitted difference estimator (``random_difference``):
  a normal interval, the estimate plus or minus the normal quantile times the standard deviation
  the estimator gives from its cross-fitted residuals on the k items (the pool's answers it reads
  are in ``pool_answers.csv``); approximate, its coverage on held-out models is on the card;
* every other selector: the empirical interval from the cross-fitted held-out errors of
  the pool's models stored in the folder (``calibration.csv``): a cross-fitted interval in the
  spirit of CV+, whose coverage is marginal and measured, not guaranteed at the level.

The text and JSON outputs name the interval (``INTERVALS``).

A pool model is *distinguishable* from the new model when their accuracies differ by at
least the card's MDAD: at such gaps the micro-benchmark orders a pair correctly at least
the card's threshold (80%) of the time.

A log is read with the metric the bundle was built on (``micro.json``'s ``lm_eval_metric``, from the
bundle's items.csv or provenance.json: ``acc_norm`` for the leaderboard's GPQA and BBH), else ``acc``,
unless ``metric`` names another; the output says which. Documents are matched to items as the folder
records them (``lm_eval_tasks``: each micro task's harness task, documents and their items), so a log
of ``leaderboard_gpqa_main`` scores the items ``gpqa_main_NNN``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from mbutils.base.errors import MbutilsError
from mbutils.base.validation import unsafe_names
from mbutils.results.intervals import empirical_interval, hypergeometric_interval, normal_interval
from mbutils.results.micro_difference import DESCRIPTION
from mbutils.results.micro_folder import MicroFolder, read_micro

_LISTED = 5
#: Interval kind (micro.json's ``interval``) -> what it is, in the words of the outputs.
INTERVALS = {"hypergeometric": "exact finite-population (hypergeometric) interval",
             "empirical": "empirical interval from held-out errors of the pool's models",
             "normal": DESCRIPTION}


class ScoreError(MbutilsError, ValueError):
    """New results that cannot be scored with this micro-benchmark."""


@dataclass(frozen=True)
class Answers:
    """New models' answers on the micro-benchmark's index space (``MicroFolder.item_names``)."""

    models: list[str]
    correct: np.ndarray
    confidence: np.ndarray | None
    source: str
    metric: str | None = None    # the lm-eval metric read (None: 0/1 answers of a responses.csv)


def _names(values) -> str:
    values = list(values)
    return ", ".join(map(str, values[:_LISTED])) + (f" and {len(values) - _LISTED} more" if len(values) > _LISTED
                                                     else "")


def _chosen(folder: MicroFolder) -> list[str]:
    return folder.items["item"].astype(str).tolist()


def _document_map(folder: MicroFolder) -> dict[str, str]:
    """Column name of a responses table (the item, or ``task:doc`` of the document it is) -> chosen item."""
    out = {name: name for name in _chosen(folder)}
    for task, docs in _chosen_documents(folder).items():
        for doc, name in docs.items():
            out.setdefault(f"{task}:{doc}", name)
    return out


def folder_metric(folder: MicroFolder, metric: str | None) -> tuple[str, str]:
    """(metric, why): the one given, else the one the bundle was built on, else ``acc``."""
    if metric is not None:
        return str(metric), "given"
    stated = folder.meta.get("lm_eval_metric")
    if isinstance(stated, str) and stated:
        return stated, "the metric the micro-benchmark's bundle was built on"
    return "acc", "the default: the bundle does not say which metric it was built on"


def _header(path: Path) -> list[str]:
    """The header row as written (pandas renames a repeated column, hiding it)."""
    import csv

    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            return next(csv.reader(handle), [])
    except (OSError, UnicodeDecodeError, csv.Error) as err:
        raise ScoreError(f"{path}: cannot read it as a responses table ({type(err).__name__})") from None


def read_responses_csv(folder: MicroFolder, path: Path) -> Answers:
    """A bundle-format ``responses.csv`` (``model`` column, one 0/1 column per item): every chosen item
    in exactly one column, every model in one row, every answer 0 or 1."""
    header = _header(path)
    repeated = sorted(name for name, n in Counter(header).items() if n > 1)  # linear: a header may hold 12,000 items
    if repeated:
        first = repeated[0]
        columns = [str(j + 1) for j, name in enumerate(header) if name == first]
        raise ScoreError(f"{path}: row 1 (header): column {first!r} appears {len(columns)} times (columns "
                         f"{', '.join(columns)}); give each item one column")
    try:
        table = pd.read_csv(path, dtype={"model": str}, keep_default_na=False, na_values=[""])
    except Exception as err:  # noqa: BLE001 -- any parser failure: not a responses table
        raise ScoreError(f"{path}: cannot read it as a responses table ({type(err).__name__})") from None
    if "model" not in table.columns:
        raise ScoreError(f"{path}: needs a 'model' column and one 0/1 column per item (the bundle format); "
                         f"it has {_names(table.columns)}")
    models = table["model"].astype(str).tolist()
    odd = unsafe_names(models)
    if odd.size:
        raise ScoreError(f"{path}: row {int(odd[0]) + 2}, column 'model': the name holds a line break or another control "
                         "character; give each model a plain name")
    twice = sorted(m for m, n in Counter(models).items() if n > 1)
    if twice:
        rows = [str(i + 2) for i, m in enumerate(models) if m == twice[0]]
        raise ScoreError(f"{path}: model {twice[0]!r} has rows {', '.join(rows)}; give each model one row")
    names = [str(c) for c in table.columns if c != "model"]
    lookup = _document_map(folder)
    mapped = [lookup.get(n) for n in names]
    chosen = _chosen(folder)
    owner: dict[str, str] = {}
    for name, item in zip(names, mapped):
        if item is not None and owner.setdefault(item, name) != name:
            raise ScoreError(f"{path}: columns {owner[item]!r} and {name!r} are both item {item!r}; keep one")
    if not owner:
        raise ScoreError(
            f"{path}: none of its {len(names)} items is in this micro-benchmark of {folder.meta['bundle']!r} (its "
            f"items look like {_names(chosen[:3])}; the file's like {_names(names[:3])}): these are results of "
            "another task or bundle. Score results of the task the micro-benchmark was built from")
    missing = [c for c in chosen if c not in owner]
    if missing:
        raise ScoreError(f"{path}: {len(missing)} of the micro-benchmark's {len(chosen)} items are missing (no column): "
                         f"{_names(missing)}; evaluate the model on all of them and score complete results")
    space = {name: j for j, name in enumerate(folder.item_names)}
    columns = [owner[item] for item in chosen]
    values = table[columns].apply(pd.to_numeric, errors="coerce").to_numpy(np.float64)
    bad = ~np.isin(values, (0.0, 1.0))
    if bad.any():
        row, col = np.argwhere(bad)[0]
        raise ScoreError(f"{path}: row {row + 2}, column {columns[col]!r} holds {table[columns[col]].iloc[row]!r}; "
                         "answers must be 0 or 1 on every item of the micro-benchmark")
    full = np.zeros((len(models), len(folder.item_names)))
    full[:, [space[item] for item in chosen]] = values
    return Answers(models=models, correct=full, confidence=None, source=str(path))


def _chosen_documents(folder: MicroFolder) -> dict[str, dict[int, str]]:
    """Original task -> {original doc_id: chosen item name}: as micro.json records them (the bundle's
    statement of its harness documents), else read off the item ids (folders written before)."""
    from mbutils.results.lm_eval_task import split_item

    out: dict[str, dict[int, str]] = {}
    tasks = folder.meta.get("lm_eval_tasks") or {}
    if tasks and all(isinstance(info, dict) and "items" in info for info in tasks.values()):
        for info in tasks.values():
            out.setdefault(str(info["task"]), {}).update(zip(map(int, info["docs"]), map(str, info["items"])))
        return out
    for name, subtask in zip(_chosen(folder), folder.items["subtask"].astype(str)):
        parsed = split_item(name, subtask)
        if parsed is not None:
            out.setdefault(parsed[0], {})[parsed[1]] = name
    return out


def _log_tasks(folder: MicroFolder, chosen: dict) -> dict[str, tuple[str, dict | None]]:
    """Task name a log may carry -> (original task, the exported micro task's entry or None)."""
    tasks: dict[str, tuple[str, dict | None]] = {task: (task, None) for task in chosen}
    for micro_task, info in (folder.meta.get("lm_eval_tasks") or {}).items():
        tasks[str(micro_task)] = (str(info["task"]), info)
    return tasks


def _log_table(sample, results: dict | None, model: str, metric: str, micro: bool, log_filter: str | None = None):
    """One samples file's records; documents of a micro task by the original index their filter stamped."""
    from mbutils.data.importers.lm_eval import _delimiter
    from mbutils.data.importers.records import _iter_records
    from mbutils.data.importers.task_table import _table_from_records
    from mbutils.results.lm_eval_filter import STAMP

    index = STAMP if micro else None
    return _table_from_records(_iter_records(sample.path, metric, None, index), str(sample.path), model=model,
                               task=sample.task, metric=metric, filter_name=log_filter, subtask_field=None,
                               delimiter=_delimiter(results, sample.task), index_field=index)


def _check_documents(path, task: str, logged: np.ndarray, docs: dict[int, str], micro: bool,
                     n_docs: int | None) -> None:
    """A log must hold every chosen document once; a micro task's log nothing else, a full one no
    document beyond the task's size in the bundle."""
    have = set(logged.tolist())
    missing = sorted(set(docs) - have)
    if missing:
        raise ScoreError(f"{path}: {len(missing)} of the {len(docs)} documents the micro-benchmark chose from task "
                         f"{task!r} are not in this log (doc_id {_names(missing)}); run the model on all of them "
                         "and score the complete log")
    if micro and len(have) != len(docs):
        extra = sorted(have - set(docs))
        raise ScoreError(f"{path}: holds {len(extra)} document(s) the micro-benchmark did not choose (original "
                         f"doc_id {_names(extra)}); a log of the micro task holds exactly its {len(docs)} documents")
    beyond = sorted(d for d in have if n_docs is not None and d >= int(n_docs))
    if beyond:
        raise ScoreError(f"{path}: holds document(s) {_names(beyond)} of task {task!r}, which had {n_docs} documents "
                         f"(0 to {int(n_docs) - 1}) when the micro-benchmark was built: a dataset of another size or "
                         "version; score a log of the same dataset")
    if n_docs is not None and len(have) > int(n_docs):
        raise ScoreError(f"{path}: logs {len(have)} documents of task {task!r}, which had {n_docs} when the "
                         "micro-benchmark was built: a dataset of another size or version; score a log of the same "
                         "dataset")


def read_lm_eval(folder: MicroFolder, paths: list[Path], metric: str, log_filter: str | None = None) -> Answers:
    """lm-eval samples logs of one or more models, of the original tasks or the exported micro tasks.

    Documents are matched by their original index (a micro task's log carries it in ``doc``, stamped by
    the exported filter), never by position; one log per model and task; every chosen document present
    exactly once. Anything else is refused with the file named.
    """
    from mbutils.data.importers.lm_eval import _results_for, find_sample_files, model_name_from_results
    from mbutils.data.importers.records import _load_json

    chosen = _chosen_documents(folder)
    named = {name for docs in chosen.values() for name in docs.values()}
    loose = [name for name in _chosen(folder) if name not in named]
    if loose:
        raise ScoreError(f"{folder.path / 'items.csv'}: {len(loose)} of its {len(_chosen(folder))} items name no lm-eval "
                         f"document ({_names(map(ascii, loose))}), so no log can answer them; score a bundle-format "
                         "responses.csv")
    tasks = _log_tasks(folder, chosen)
    micro_tasks = {micro: entry["task"] for micro, (_, entry) in tasks.items() if entry is not None}
    by_task = {entry_task: tasks[micro][1] for micro, entry_task in micro_tasks.items()}
    owner: dict[tuple[str, str], Path] = {}
    answers: dict[str, dict[str, tuple[float, float]]] = {}
    files = find_sample_files(paths)
    used = [sample for sample in files if sample.task in tasks]  # a model's logs of other tasks are not read
    if not used:
        raise ScoreError(f"{_names(str(f.path) for f in files)}: none of these logs is of a task this micro-benchmark "
                         f"of {folder.meta['bundle']!r} chose items from (its tasks: {_names(sorted(tasks))}; the "
                         f"logs': {_names(sorted({f.task for f in files}))}): these are results of another task or "
                         "bundle. Score logs of the tasks the micro-benchmark was built from")
    for sample in used:
        original, entry = tasks[sample.task]
        results_path = _results_for(sample.path.parent, sample.stamp)
        results = _load_json(results_path) if results_path is not None else None
        model = (model_name_from_results(results) if results else None) or sample.path.parent.name
        if (model, original) in owner:
            raise ScoreError(f"{owner[model, original]} and {sample.path} both log model {model!r} on task "
                             f"{original!r}; give one log per model and task (remove one, or score them in two calls)")
        owner[model, original] = sample.path
        if unsafe_names([model]).size:
            raise ScoreError(f"{results_path or sample.path}: model name {ascii(model)[:80]} holds a line break or "
                             "another control character; give the model a plain name in model_name")
        table = _log_table(sample, results, model, metric, entry is not None, log_filter)
        docs = chosen[original]
        n_docs = (entry or by_task.get(original) or {}).get("n_docs")
        _check_documents(sample.path, original, table.doc_id, docs, entry is not None, n_docs)
        keep = np.isin(table.doc_id, list(docs))
        cells = answers.setdefault(model, {})
        for doc, right, conf in zip(table.doc_id[keep], table.correct[keep], table.confidence[keep]):
            cells[docs[int(doc)]] = (float(right), float(conf))
    for model in answers:
        lacking = [task for task in chosen if (model, task) not in owner]
        if lacking:
            raise ScoreError(f"model {model!r} has no log of task(s) {_names(lacking)}, from which the micro-benchmark "
                             "chose items; give its logs of every task (lm-eval tasks "
                             f"{_names(sorted(micro_tasks)) or _names(sorted(chosen))})")
    models = list(answers)
    space = {name: j for j, name in enumerate(folder.item_names)}
    correct = np.zeros((len(models), len(folder.item_names)))
    confidence = np.zeros_like(correct)
    for i, model in enumerate(models):
        for name, (right, conf) in answers[model].items():
            correct[i, space[name]], confidence[i, space[name]] = right, conf
    picked = [space[name] for name in _chosen(folder)]
    usable = np.isfinite(confidence[:, picked]).all()
    where = ", ".join(map(str, paths[:3])) + (" ..." if len(paths) > 3 else "")
    return Answers(models=models, correct=correct, confidence=confidence if usable else None, source=where,
                   metric=metric)


def read_answers(folder: MicroFolder, paths, metric: str = "acc", log_filter: str | None = None) -> Answers:
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
        return read_lm_eval(folder, paths, metric, log_filter)
    parts = [read_responses_csv(folder, p) for p in csvs]
    models = [m for part in parts for m in part.models]
    repeated = sorted(m for m, n in Counter(models).items() if n > 1)
    if repeated:
        raise ScoreError(f"models appear in more than one file: {_names(repeated)}; give each model once")
    return Answers(models=models, correct=np.concatenate([p.correct for p in parts]), confidence=None,
                   source=", ".join(map(str, csvs)))


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
        Level of the interval: exact hypergeometric for uniform random sampling; normal, from the
        variance of its cross-fitted residuals, for the difference estimator (``random_difference``,
        :class:`~mbutils.RandomDifference`); empirical (cross-fitted held-out errors, a CV+-like
        interval) for every other selector.
    metric : str, optional
        The lm-eval metric read as correctness; by default the one the micro-benchmark's bundle was
        built on (``acc_norm`` for the leaderboard's GPQA and BBH), else ``acc``.
    log_filter : str, optional
        For logs that record several filters (``strict-match``, ``flexible-extract``), the one to read.

    Returns
    -------
    pandas.DataFrame
        One row per model: model, estimate, low, high (points), level, interval (its kind:
        ``"hypergeometric"``, ``"normal"`` or ``"empirical"``),
        above, below, indistinguishable (lists of pool models), mdad (points, NaN when the
        card has none or its interval is open at the top: then no pool model is told apart) and metric (the lm-eval metric read; None for a responses.csv).

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
    if kind == "normal":  # the difference estimator: the variance of its own cross-fitted residuals
        estimate, variance = micro.estimate_with_variance(answers.correct)
        bounds = normal_interval(estimate, variance, level)
    elif kind == "hypergeometric":
        estimate = micro.estimate(answers.correct, answers.confidence)
        hits = np.rint(answers.correct[:, micro.items].sum(1)).astype(np.int64)
        bounds = hypergeometric_interval(hits, micro_folder.k, micro_folder.n_items, level)
    else:
        estimate = micro.estimate(answers.correct, answers.confidence)
        errors = micro_folder.calibration["error"].to_numpy(np.float64) if len(micro_folder.calibration) else []
        bounds = empirical_interval(estimate, errors, level)
    mdad = card_mdad(micro_folder.card)
    pool = micro_folder.pool
    acc = 100.0 * pool["accuracy"].to_numpy(np.float64)
    rows = []
    for name, est, (low, high) in zip(answers.models, 100.0 * estimate, 100.0 * bounds):
        gap = est - acc
        sure = np.isfinite(mdad) & (np.abs(gap) >= mdad)
        rows.append({"model": name, "estimate": float(est), "low": float(low), "high": float(high),
                     "level": float(level), "interval": kind, "mdad": mdad,
                     "metric": answers.metric,
                     "above": pool["model"][sure & (gap > 0)].tolist(),
                     "below": pool["model"][sure & (gap < 0)].tolist(),
                     "indistinguishable": pool["model"][~sure].tolist()})
    return pd.DataFrame(rows)


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


def format_scores(table: pd.DataFrame, folder: MicroFolder, fmt: str = "text", given_metric: str | None = None) -> str:
    """Text (one paragraph per model) or JSON (model -> estimate, interval, level, metric, ...)."""
    import json

    metric = table["metric"].iloc[0] if "metric" in table and len(table) else None
    if fmt == "json":
        out = {row.model: {"estimate": round(row.estimate, 4), "interval": [round(row.low, 4), round(row.high, 4)],
                           "level": row.level, "interval_kind": row.interval,
                           "interval_method": INTERVALS.get(row.interval), "metric": row.metric,
                           "mdad": None if not np.isfinite(row.mdad) else row.mdad,
                           "above": row.above, "below": row.below, "indistinguishable": row.indistinguishable}
               for row in table.itertuples()}
        return json.dumps(out, indent=2) + "\n"
    how = INTERVALS[folder.meta["interval"]]
    if folder.meta["interval"] == "empirical" and len(folder.calibration) == 0:
        how += (" (none stored: the pool was too small to hold models out, so the interval is the whole "
                "range; build from a larger pool)")
    lines = [f"Micro-benchmark of {folder.meta['bundle']!r}: {folder.meta['selector']}, {folder.k} of "
             f"{folder.n_items} items; {how}."]
    if metric is None:
        lines.append("Answers: 0/1 cells of a responses.csv (no lm-eval metric read).")
    else:
        lines.append(f"Metric: {metric} ({folder_metric(folder, given_metric)[1]}).")
    for row in table.itertuples():
        lines.append("")
        lines.append(f"{row.model}: estimated accuracy {row.estimate:.1f} points, {100 * row.level:g}% interval "
                     f"{row.low:.1f} to {row.high:.1f}.")
        if not np.isfinite(row.mdad):
            lines.append(f"  No pool model can be told apart reliably: {_no_mdad_reason(folder.card)}.")
            continue
        lines.append(f"  At the card's MDAD ({row.mdad:g} points, {100 * folder.card['threshold']:g}% agreement"
                     + (f"; {folder.card['note']}" if folder.card.get("note") else "") + "):")
        lines.append(f"  better than {len(row.above)} pool models ({_names(row.above) or 'none'}),")
        lines.append(f"  worse than {len(row.below)} ({_names(row.below) or 'none'}),")
        lines.append(f"  not distinguishable from {len(row.indistinguishable)} "
                     f"({_names(row.indistinguishable) or 'none'}).")
    return "\n".join(lines) + "\n"
