"""One samples file's records as arrays: correctness, the gold answer's probability, document ids and hashes.

Per-record Python only extracts fields; the arithmetic (the metric's 0/1, the softmax over
the per-choice scores at the gold index) is array-wide.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np
from scipy.special import softmax

from mbutils.base.errors import BundleError
from mbutils.data.importers.samples import DEFAULT_DELIMITER, LISTED, MAX_DOC_ID


def _doc_id(value) -> int:
    """A document id as logged: an integer, or text or a float holding one exactly (2.7 is refused)."""
    if isinstance(value, bool):
        raise ValueError(value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    elif isinstance(value, str) and value.strip().isascii() and value.strip().isdigit() and len(value.strip()) < 20:
        value = int(value)
    if isinstance(value, int) and 0 <= value < MAX_DOC_ID:
        return value
    raise ValueError(value)


def _zero_one(value) -> int | None:
    """A per-record metric value as 0/1; None when it is not one."""
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, (int, float, np.integer, np.floating)) and value in (0, 1):
        return int(value)
    return None


def _loglikelihoods(resps) -> list[float] | None:
    """Per-choice log-likelihoods from ``filtered_resps``; None for generative records."""
    if not isinstance(resps, (list, tuple)) or not resps:
        return None
    if not all(isinstance(pair, (list, tuple)) and len(pair) == 2 for pair in resps):
        return None
    try:
        return [float(pair[0]) for pair in resps]
    except (TypeError, ValueError):
        return None


def _continuations(arguments) -> list[str] | None:
    """The scored continuation of each request (``arg_1``); None when not all are strings."""
    if isinstance(arguments, dict):  # {"gen_args_<i>": {"arg_0": ..., "arg_1": ...}}; Parquet pads with None
        requests = (arguments.get(f"gen_args_{i}") for i in range(len(arguments)))
        conts = [r.get("arg_1") if isinstance(r, dict) else None for r in requests if r is not None]
    elif isinstance(arguments, (list, tuple)):  # earlier logs: [[context, continuation], ...]
        conts = [a[1] if isinstance(a, (list, tuple)) and len(a) >= 2 else None for a in arguments]
    else:
        return None
    return conts if conts and all(isinstance(c, str) for c in conts) else None


def _metric_fields(record: dict) -> str:
    listed = record.get("metrics")
    if isinstance(listed, (list, tuple)) and listed:
        return ", ".join(map(str, listed))
    skip = {"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter", "metrics",
            "doc_hash", "prompt_hash", "target_hash"}
    return ", ".join(k for k in record if k not in skip) or "none"


@dataclass
class TaskTable:
    """One model's records for one task (one filter), as arrays."""

    model: str
    task: str
    source: str
    doc_id: np.ndarray        # int64
    correct: np.ndarray       # int8
    confidence: np.ndarray    # float64, NaN where it cannot be computed
    n_choices: np.ndarray     # int64, 0 for generative records
    doc_hash: np.ndarray      # object, None where absent
    subtask: np.ndarray       # object: the task label or the document's field


def _scoring(metric: str) -> str:
    return {"acc_norm": "chars", "acc_bytes": "bytes"}.get(metric, "raw")


def table_from_records(records: Iterable[tuple[int, dict]], source: str, *, model: str, task: str,
                       metric: str, filter_name: str | None, subtask_field: str | None,
                       delimiter: str | None, index_field: str | None = None) -> TaskTable:
    """Parse one file's records: per-record Python only extracts fields; the arithmetic is array-wide."""
    unit = "row" if source.endswith(".parquet") else "line"
    cols: dict[str, list] = {k: [] for k in ("line", "filter", "doc_id", "value", "lls", "conts",
                                             "target", "hash", "subtask")}
    for number, rec in records:
        if metric not in rec:
            raise BundleError(f"{source}, {unit} {number}: no {metric!r} field; this log records: "
                              f"{_metric_fields(rec)}. Choose one of those as the metric.")
        value = _zero_one(rec[metric])
        if value is None:
            raise BundleError(f"{source}, {unit} {number}: {metric} = {str(rec[metric])[:60]!r} is not 0/1, "
                              "so it cannot be a correctness value; choose a per-item 0/1 metric "
                              "(e.g. acc, acc_norm, exact_match)")
        if "doc_id" not in rec:
            raise BundleError(f"{source}, {unit} {number}: no integer 'doc_id'; is this an "
                              "lm-evaluation-harness samples file?")
        try:
            doc_id = _doc_id(rec["doc_id"])
        except (TypeError, ValueError):
            raise BundleError(f"{source}, {unit} {number}: doc_id {str(rec['doc_id'])[:40]!r} is not a document "
                              f"index (a whole number from 0 to {MAX_DOC_ID:,}); the log may have been edited") from None
        if index_field is not None:
            doc_id = _original_index(rec, index_field, source, f"{unit} {number}")
        cols["line"].append(number)
        cols["filter"].append(str(rec.get("filter") or "none"))
        cols["doc_id"].append(doc_id)
        cols["value"].append(value)
        cols["lls"].append(_loglikelihoods(rec.get("filtered_resps")))
        cols["conts"].append(_continuations(rec.get("arguments")))
        cols["target"].append(rec.get("target"))
        cols["hash"].append(rec.get("doc_hash"))
        if subtask_field is not None:
            doc = rec.get("doc")
            if not isinstance(doc, dict) or doc.get(subtask_field) is None:
                raise BundleError(f"{source}, {unit} {number}: the document has no {subtask_field!r} field to take the subtask from")
            cols["subtask"].append(str(doc[subtask_field]))
    if not cols["line"]:
        raise BundleError(f"{source}: no samples in the file")

    keep = _filter_mask(np.array(cols["filter"], dtype=object), filter_name, source)
    doc_id = np.array(cols["doc_id"], dtype=np.int64)[keep]
    lines = np.array(cols["line"])[keep]
    _check_unique_docs(doc_id, lines, source, unit)
    pick = np.flatnonzero(keep)
    lls = [cols["lls"][i] for i in pick]
    conts = [cols["conts"][i] for i in pick]
    targets = [cols["target"][i] for i in pick]
    correct = np.array(cols["value"], dtype=np.int8)[keep]
    delim = DEFAULT_DELIMITER if delimiter is None else delimiter
    choices = [None if c is None else _strip(c, delim) for c in conts]
    confidence = _gold_probability(lls, choices, targets, correct, _scoring(metric))
    subtask = (np.array(cols["subtask"], dtype=object)[keep] if subtask_field is not None
               else np.full(len(doc_id), task, dtype=object))
    return TaskTable(
        model=model, task=task, source=source, doc_id=doc_id, correct=correct, confidence=confidence,
        n_choices=np.array([0 if x is None else len(x) for x in lls], dtype=np.int64),
        doc_hash=np.array(cols["hash"], dtype=object)[keep], subtask=subtask,
    )


def _original_index(record: dict, field: str, source: str, where: str) -> int:
    """The document's index in the original split, stamped by an exported micro task's filter."""
    doc = record.get("doc")
    value = doc.get(field) if isinstance(doc, dict) else None
    if value is None:
        raise BundleError(f"{source}, {where}: the document carries no {field!r}, the original index the "
                          "micro-benchmark's filter stamps on every document it keeps; the task ran on a "
                          "dataset of another size than the micro-benchmark was built on (so nothing was "
                          "filtered), or the log was edited. Check the dataset version and run the task again")
    try:
        return _doc_id(value)
    except (TypeError, ValueError):
        raise BundleError(f"{source}, {where}: {field} {str(value)[:40]!r} is not a document index") from None


def _filter_mask(filters: np.ndarray, wanted: str | None, source: str) -> np.ndarray:
    """Records of the one filter a file logs, or of ``wanted`` when it logs several."""
    names = list(dict.fromkeys(filters))
    if len(names) == 1:
        return np.ones(len(filters), dtype=bool)
    if wanted is None:
        raise BundleError(f"{source}: the log records several filters ({', '.join(names)}); "
                          "choose one (filter=..., --filter NAME)")
    if wanted not in names:
        raise BundleError(f"{source}: no records for filter {wanted!r}; it has: {', '.join(names)}")
    return filters == wanted


def _check_unique_docs(doc_id: np.ndarray, lines: np.ndarray, source: str, unit: str) -> None:
    values, counts = np.unique(doc_id, return_counts=True)
    dup = values[counts > 1]
    if dup.size:
        first = dup[0]
        where = ", ".join(map(str, lines[doc_id == first][:LISTED]))
        raise BundleError(f"{source}: {dup.size} doc_id(s) appear more than once (e.g. doc_id {first} "
                          f"on {unit}s {where}); a samples file holds each document once per filter. "
                          "Was the file appended to by two runs?")


def _strip(continuations: list[str], delimiter: str) -> list[str]:
    """The choice strings: each continuation without one leading target delimiter."""
    if not delimiter:
        return continuations
    n = len(delimiter)
    return [c[n:] if c.startswith(delimiter) else c for c in continuations]


def _gold_candidates(choices: list | None, target, n: int) -> tuple[int, int]:
    """(index of target among the choices, int(target)); -1 where a reading does not apply."""
    text = None if target is None else str(target)
    by_text = choices.index(text) if choices is not None and text in choices else -1
    by_int = int(text) if text is not None and text.isdecimal() else -1
    return by_text, by_int if by_int < n else -1


def _gold_probability(lls: list, choices: list, targets: list, correct: np.ndarray,
                      scoring: str) -> np.ndarray:
    """Softmax of the per-choice scores at the gold index, all records at once (NaN = unknown)."""
    n = len(lls)
    counts = np.array([0 if x is None else len(x) for x in lls], dtype=np.int64)
    out = np.full(n, np.nan)
    if not counts.any():
        return out
    width = int(counts.max())
    filled = np.arange(width) < counts[:, None]
    scores = np.full((n, width), -np.inf)
    scores[filled] = np.concatenate([x for x in lls if x is not None])
    usable = counts > 0
    if scoring != "raw":
        ok = np.array([c is not None and x is not None and len(c) == len(x) for c, x in zip(choices, lls)])
        lengths = np.ones((n, width))
        measure = len if scoring == "chars" else (lambda s: len(s.encode("utf-8")))
        flat = [measure(s) for c, x, good in zip(choices, lls, ok) if good for s in c]
        lengths[filled & ok[:, None]] = flat
        with np.errstate(divide="ignore", invalid="ignore"):
            scores = scores / lengths
        usable &= ok
    cands = np.array([_gold_candidates(c, t, k) for c, t, k in zip(choices, targets, counts)],
                     dtype=np.int64).reshape(n, 2)
    pred = np.argmax(np.where(np.isnan(scores), -np.inf, scores), axis=1)
    agrees = (pred[:, None] == cands) == correct.astype(bool)[:, None]
    by_text, by_int = cands[:, 0], cands[:, 1]
    use_text = (by_text >= 0) & ((by_int < 0) | agrees[:, 0] | ~agrees[:, 1])
    gold = np.where(use_text, by_text, by_int)
    usable &= gold >= 0
    with np.errstate(invalid="ignore", over="ignore"):
        prob = softmax(scores[usable], axis=1)
    out[usable] = prob[np.arange(usable.sum()), gold[usable]]
    out[~np.isfinite(out)] = np.nan
    return out
