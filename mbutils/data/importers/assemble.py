"""Stacking per-(model, task) tables into one complete Benchmark, checking that the logs agree.

Every model needs every task and, per task, the same documents (or ``items="common"``
keeps those all have); one item must be the same document and subtask for every model.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from mbutils.data.benchmark import Benchmark
from mbutils.base.errors import BundleError
from mbutils.data.importers.samples import LISTED
from mbutils.data.importers.task_table import TaskTable


def assemble_bundle(tables: list[TaskTable], *, name: str, origin: str, models: list[str], tasks: list[str],
                    items: str, check_docs: str, confidence: bool | None) -> Benchmark:
    """Stack per-(model, task) tables into one complete Benchmark, checking they agree."""
    have = {(t.model, t.task) for t in tables}
    missing = [(m, t) for m in models for t in tasks if (m, t) not in have]
    if missing:
        listed = "; ".join(f"{m} has no {t}" for m, t in missing[:LISTED])
        raise BundleError(f"{len(missing)} model x task log(s) are missing ({listed}); every model "
                          "needs samples for every task: add them, or leave out the model or the task")
    long = pd.DataFrame({
        "model": np.concatenate([np.full(len(t.doc_id), t.model, dtype=object) for t in tables]),
        "task": np.concatenate([np.full(len(t.doc_id), t.task, dtype=object) for t in tables]),
        "doc_id": np.concatenate([t.doc_id for t in tables]),
        "correct": np.concatenate([t.correct for t in tables]),
        "confidence": np.concatenate([t.confidence for t in tables]),
        "n_choices": np.concatenate([t.n_choices for t in tables]),
        "doc_hash": np.concatenate([t.doc_hash for t in tables]),
        "subtask": np.concatenate([t.subtask for t in tables]),
    })
    long["task"] = pd.Categorical(long["task"], categories=tasks, ordered=True)
    long["model"] = pd.Categorical(long["model"], categories=models, ordered=True)
    long = _common_items(long, models, items)
    long["item"] = long["task"].astype(str) + ":" + long["doc_id"].astype(str)
    _check_same(long, "doc_hash", check_docs,
                "saw different documents (doc_hash differs); were they run on different dataset versions?")
    _check_same(long, "subtask", "error", "put the same item in different subtasks")

    item_table = (long.sort_values(["task", "doc_id", "model"])
                  .drop_duplicates("item")[["item", "subtask", "task", "doc_id", "n_choices"]])
    item_codes = pd.Index(item_table["item"]).get_indexer(long["item"])
    model_codes = long["model"].cat.codes.to_numpy()
    correct = np.zeros((len(models), len(item_table)), dtype=np.int8)
    correct[model_codes, item_codes] = long["correct"].to_numpy()
    conf = np.full(correct.shape, np.nan)
    conf[model_codes, item_codes] = long["confidence"].to_numpy()
    conf = _resolve_confidence(conf, long, confidence)

    item_info = item_table.assign(task=item_table["task"].astype(str)).reset_index(drop=True)
    if not (item_info["n_choices"] > 0).any():
        item_info = item_info.drop(columns="n_choices")
    first_source = {}
    for table in tables:
        first_source.setdefault(table.model, str(Path(table.source).parent))
    return Benchmark(
        name=name, correct=correct, models=np.array(models, dtype=object),
        items=item_info["item"].to_numpy(dtype=object), subtasks=item_info["subtask"].to_numpy(dtype=object),
        confidence=conf, item_info=item_info,
        model_info=pd.DataFrame({"model": models, "source": [first_source[m] for m in models]}),
        origin=origin,
    )


def _common_items(long: pd.DataFrame, models: list[str], items: str) -> pd.DataFrame:
    """Check (or, with items='common', enforce) that every model has the same documents per task."""
    keys = pd.MultiIndex.from_arrays([long["task"], long["doc_id"]])
    docs = keys.unique()
    doc_codes = docs.get_indexer(keys)
    present = np.zeros((len(docs), len(models)), dtype=bool)
    present[doc_codes, long["model"].cat.codes.to_numpy()] = True
    full = present.all(axis=1)
    if full.all():
        return long
    if items == "common":
        lost = docs[~full]
        warnings.warn(f"kept only the documents every model has: dropped {len(lost)} of {len(docs)} "
                      f"(e.g. {', '.join(f'{t}:{d}' for t, d in list(lost)[:LISTED])})", stacklevel=3)
        return long[full[doc_codes]]
    task = docs[np.flatnonzero(~full)[0]][0]
    in_task = np.asarray(docs.get_level_values(0) == task)
    have = present[in_task].sum(axis=0)
    n_docs = int(in_task.sum())
    short = [(m, n) for m, n in zip(models, have) if n < n_docs]
    listed = ", ".join(f"{m} has {n} of {n_docs}" for m, n in short[:LISTED])
    more = f" and {len(short) - LISTED} more" if len(short) > LISTED else ""
    raise BundleError(
        f"task {task}: the logs disagree on items: {listed}{more} (the others have all {n_docs}). "
        "Were they run with different --limit or dataset versions? Re-run them alike, or keep only "
        "the documents every model has (items='common', --items common)")


def _check_same(long: pd.DataFrame, column: str, mode: str, what: str) -> None:
    """Every model must give one item the same value of ``column`` (None = not recorded)."""
    if mode == "ignore":
        return
    known = long[long[column].notna()]
    if known.empty:
        return
    counts = known.groupby("item", sort=False)[column].nunique()
    bad = counts.index[counts > 1]
    if bad.empty:
        return
    first = known[known["item"] == bad[0]]
    reference = first[column].iloc[0]
    odd = first.loc[first[column] != reference, "model"].astype(str).tolist()
    message = (f"{len(bad)} item(s) where the models {what}; e.g. item {bad[0]}: "
               f"{', '.join(odd[:LISTED])} differ from {first['model'].astype(str).iloc[0]}")
    if mode == "error":
        hint = ". Pass check_docs='warn' (--doc-check warn) to import anyway" if column == "doc_hash" else ""
        raise BundleError(message + hint)
    warnings.warn(message, stacklevel=3)


def _resolve_confidence(conf: np.ndarray, long: pd.DataFrame, wanted: bool | None) -> np.ndarray | None:
    if wanted is False:
        return None
    lacking = long.loc[long["confidence"].isna(), "task"].astype(str).unique()
    if lacking.size == 0 and np.isfinite(conf).all():
        return conf
    reason = (f"no probability of the gold answer for task(s) {', '.join(lacking[:LISTED])} "
              "(generative tasks, or records without per-choice log-likelihoods or a usable target)")
    if wanted:
        raise BundleError(f"confidence requested but {reason}")
    if np.isfinite(conf).any():
        warnings.warn(f"bundle written without confidences: {reason}", stacklevel=3)
    return None
