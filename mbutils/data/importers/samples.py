"""Importers: lm-evaluation-harness sample logs and Open LLM Leaderboard details -> Benchmark.

Both sources hold the same thing, lm-evaluation-harness *samples*: one record per
(model, task, document). Both are turned into a :class:`~mbutils.data.bundle.Benchmark` by one
code path (``_table_from_records`` per file, ``_assemble`` for the matrix).

Format followed (facts read from the lm-evaluation-harness 0.4 series source:
``evaluator.evaluate`` builds the records, ``loggers.EvaluationTracker.save_results_samples``
writes them; the Open LLM Leaderboard v2 pushed the same files to the hub):

- ``--log_samples --output_path OUT`` writes ``OUT/<model_name_sanitized>/`` holding
  ``results_<time>.json`` and one ``samples_<task>_<time>.jsonl`` per task, where
  ``<time>`` is ``datetime.isoformat()`` with ``:`` replaced by ``-``. The leaderboard's
  2024 runs named the samples files ``.json`` (still one record per line); the earliest
  0.4 tracker wrote one JSON array. All three are read.
- A record has ``doc_id``, ``doc``, ``target`` (written as ``str(target)``),
  ``arguments`` (``{"gen_args_<i>": {"arg_0": context, "arg_1": continuation}}``, one entry
  per request; earlier logs: a list of ``[context, continuation]``), ``resps``,
  ``filtered_resps``, ``filter``, ``metrics``, ``doc_hash``, ``prompt_hash``,
  ``target_hash``, and one field per metric (``acc``, ``acc_norm``, ``exact_match``, ...).
  A document appears once per filter.
- For ``multiple_choice`` tasks ``filtered_resps`` holds one ``[loglikelihood, is_greedy]``
  pair per choice (as strings since the tracker sanitises lists, numbers before). The
  continuation scored for choice *i* is ``target_delimiter + choice_i``. ``acc`` is the
  argmax of the log-likelihoods, ``acc_norm`` the argmax of log-likelihood divided by
  ``len(choice)`` in characters (the choice string without the delimiter), ``acc_bytes``
  the same with the UTF-8 byte length.
- The results file holds ``model_name`` (tracker), ``config.model_args`` (e.g.
  ``pretrained=org/name,dtype=...``) and ``configs[task].target_delimiter``.
- Leaderboard details live in the dataset ``open-llm-leaderboard/<org>__<name>-details``:
  the same files under ``<org>__<name>/`` (main branch), and the hub's Parquet conversion
  of each config ``<org>__<name>__<task>`` under ``<config>/latest/*.parquet`` on the
  ``refs/convert/parquet`` branch, whose columns are the record fields above.

Mapping to the bundle (documented choices):

- correctness = the chosen metric field (must be 0/1 or a boolean per record);
- subtask = the task name (leaderboard: without its ``leaderboard_`` prefix; MMLU-Pro: the
  document's ``category``, the 14 categories the paper uses);
- item id = ``f"{task}:{doc_id}"``. ``doc_id`` is readable and stable for a fixed dataset;
  ``doc_hash`` is not used as the id (GPQA's options are shuffled when the harness builds
  its documents, so the hash can change with the run) but, when present, it is checked:
  two models with different hashes for one id saw different documents;
- model name = the results file's ``model_name``, else ``pretrained=`` (or ``peft=``,
  ``delta=``, ``model=``, ``path=``, ``engine=``, the harness's own order) in
  ``config.model_args``, else the folder name; leaderboard: the name asked for;
- confidence = probability of the gold answer = softmax over the per-choice scores at the
  gold index, the scores being the log-likelihoods, divided by the choice's character
  length for ``acc_norm`` (byte length for ``acc_bytes``), exactly the numbers the
  harness takes the argmax of. Gold index = the position of ``target`` among the choices
  (the harness's rule for string targets), else ``int(target)``; when both readings exist
  and differ, the one that agrees with the logged metric wins. Choices are the
  continuations with one leading ``target_delimiter`` removed (from the results file; the
  harness default ``" "`` when unknown). Generative tasks have no confidence."""

from __future__ import annotations

import json
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np
import pandas as pd
from scipy.special import softmax

from mbutils.data.benchmark import Benchmark
from mbutils.base.errors import BundleError
from mbutils.base.jsonfiles import parse_json, read_json
from mbutils.base.validation import check_choice


SAMPLES_RE = re.compile(
    r"^samples_(?P<task>.+)_(?P<stamp>\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d+)?)\.jsonl?$")


RESULTS_RE = re.compile(r"^results_(?P<stamp>\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d+)?)\.json$")


DEFAULT_DELIMITER = " "  # the harness's default target_delimiter


MODEL_ARG_KEYS = ("peft", "delta", "pretrained", "model", "path", "engine")


ITEM_POLICIES = ("same", "common")


DOC_CHECKS = ("error", "warn", "ignore")


LISTED = 5


#: Document ids beyond this are no index of a dataset (and would overflow the arrays).
MAX_DOC_ID = 2**53


def _iter_records(path: Path, metric: str, subtask_field: str | None = None,
                  index_field: str | None = None) -> Iterator[tuple[int, dict]]:
    """(line or row number, record) for a JSONL, JSON-array or Parquet samples file.

    For Parquet only the fields the import reads are loaded: the prompts, raw responses and
    documents are most of the bytes and are skipped.
    """
    if path.suffix == ".parquet":
        yield from _parquet_records(path, metric, subtask_field, index_field)
        return
    with path.open("rb") as fh:
        head = fh.read(4096).lstrip()
    if head.startswith(b"["):  # earliest 0.4 tracker: one JSON array
        data = path.read_bytes()
        text = "\n".join(_utf8_line(raw, path, n) for n, raw in enumerate(data.split(b"\n"), 1))
        try:
            records = json.loads(text)
        except json.JSONDecodeError as err:
            raise BundleError(f"{path}, line {err.lineno}: not valid JSON ({err.msg}); the file "
                              "may be truncated: re-run the evaluation or remove the file") from None
        except (RecursionError, ValueError):
            records = parse_json(text, str(path), BundleError)  # raises its one message
        if not isinstance(records, list):
            raise BundleError(f"{path}: a samples file holds one JSON object per line, or one array of them")
        for number, record in enumerate(records, 1):
            yield number, _record_dict(record, path, number)
        return
    with path.open("rb") as fh:  # bytes, so a bad byte is reported at its own line
        for number, raw in enumerate(fh, 1):
            line = _utf8_line(raw, path, number)
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as err:
                raise BundleError(
                    f"{path}, line {number}: not valid JSON ({err.msg} at column {err.colno}); the "
                    "file may be truncated or edited: re-run the evaluation or remove the file") from None
            except (RecursionError, ValueError):
                record = parse_json(line, f"{path}, line {number}", BundleError)  # raises its one message
            yield number, _record_dict(record, path, number)


def _utf8_line(raw: bytes, path: Path, number: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise BundleError(f"{path}, line {number}: not UTF-8 text (byte 0x{raw[err.start]:02x} at column "
                          f"{err.start + 1}); the log may be damaged: re-run the evaluation or remove the file") from None


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


def _record_dict(record, path: Path, number: int) -> dict:
    if not isinstance(record, dict):
        raise BundleError(f"{path}, line {number}: expected one JSON object per sample, "
                          f"found {type(record).__name__}")
    return record


def _parquet_records(path: Path, metric: str, subtask_field: str | None,
                     index_field: str | None = None) -> Iterator[tuple[int, dict]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        file = pq.ParquetFile(path)
        schema = file.schema_arrow
        top = [c for c in ("doc_id", "filter", "target", "filtered_resps", "doc_hash", "metrics", metric)
               if c in schema.names]
        args = schema.field("arguments").type if "arguments" in schema.names else None
        requests = ([f.name for f in args if pa.types.is_struct(f.type) and f.type.get_field_index("arg_1") >= 0]
                    if args is not None and pa.types.is_struct(args) else [])
        doc = schema.field("doc").type if "doc" in schema.names else None
        fields = [f for f in (subtask_field, index_field) if f is not None and doc is not None
                  and pa.types.is_struct(doc) and doc.get_field_index(f) >= 0]
        columns = top + [f"doc.{f}" for f in fields] + [f"arguments.{r}.arg_1" for r in requests]
        table = file.read(columns=columns)  # nested paths: structs pruned to these leaves
    except Exception as err:  # any reader failure means the file is not usable Parquet
        raise BundleError(f"{path}: cannot read it as Parquet ({type(err).__name__}: {err})") from None
    yield from enumerate(table.to_pylist(), 1)


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
class _TaskTable:
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


def _table_from_records(records: Iterable[tuple[int, dict]], source: str, *, model: str, task: str,
                        metric: str, filter_name: str | None, subtask_field: str | None,
                        delimiter: str | None, index_field: str | None = None) -> _TaskTable:
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
    return _TaskTable(
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


def _check_option(value, allowed: tuple, what: str) -> None:
    check_choice(value, allowed, what, BundleError)


def _assemble(tables: list[_TaskTable], *, name: str, origin: str, models: list[str], tasks: list[str],
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


def _load_json(path: Path) -> dict:
    """A results file beside samples logs: one JSON object, or one message naming the file."""
    return read_json(path, BundleError, what="a results JSON object")


def _progress(iterable, show: bool, desc: str):
    if not show:
        return iterable
    from tqdm.auto import tqdm

    return tqdm(iterable, desc=desc, unit="file")
