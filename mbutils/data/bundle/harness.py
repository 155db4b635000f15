"""Which lm-evaluation-harness document each item is, as the bundle states it (or None when it does not).

A micro-benchmark is run by the harness on the original documents, so its export must know, for each
item, the harness task and the document index (``doc_id``) it came from, and which 0/1 metric the
bundle's correctness was read from. A bundle states this in one of two ways:

* ``items.csv`` columns ``lm_eval_task`` (the harness task's name) and ``doc_id`` (a whole number, the
  document's index in that task's evaluation split); an item with both cells empty is no harness
  document. The columns ``task`` and ``doc_id`` that ``import lm-eval`` writes are read the same way
  when there is no ``lm_eval_task``. The metric, optionally, in a column ``lm_eval_metric`` (one value
  for the bundle) or in ``provenance.json`` (below).
* ``provenance.json`` key ``lm_eval`` (what the shipped bundles use, whose ``items.csv`` is kept as
  delivered): ``{"tasks": {subtask: harness task}, "doc_id": "item_suffix", "metric": "acc_norm"}``,
  where ``item_suffix`` reads the document index off the whole number that ends the item id, after its
  last ``:`` or ``_`` (``gpqa_main_007`` -> 7, ``boolean_expressions:12`` -> 12). A bundle whose items
  are no harness documents says so and why: ``{"unavailable": "reason"}``.

:func:`harness_map` returns what the bundle states (None when it states nothing: the export then reads
``task:doc_id`` item ids, :mod:`mbutils.data.bundle.tasknames`); a statement it cannot use is one
:class:`StatementError` naming the file, the key or column, and what to change. A task name the bundle
states is held to the export's rule here (:mod:`~mbutils.data.bundle.tasknames`), so a bad name is
blamed on the file and key that give it; ``validate`` reports the same through :func:`harness_for`.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

from mbutils.base.errors import StatementError
from mbutils.data.bundle.format import ITEMS, PROVENANCE
from mbutils.data.bundle.record import read_record
from mbutils.data.bundle.tasknames import SUFFIX, first_lookalike, lookalike_fault, suffix_clash, suffix_fault, \
    task_name_fault

PROVENANCE_KEY = "lm_eval"
TASK_COLUMN, DOC_COLUMN, METRIC_COLUMN = "lm_eval_task", "doc_id", "lm_eval_metric"
#: The task column of bundles ``import lm-eval`` writes (read with ``doc_id`` when ``lm_eval_task`` is absent).
IMPORTED_TASK_COLUMN = "task"
#: How ``provenance.json`` may say an item id gives its document index.
DOC_RULES = {"item_suffix": "the whole number ending the item id, after its last ':' or '_'"}
_SUFFIX = re.compile(r".*[:_]([0-9]{1,12})")
_METRIC = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]{0,99}")
_KEY = f"key {PROVENANCE_KEY!r}"
#: What to do about a task name the bundle states that the export cannot use.
_FIX = "write the task's name as lm-evaluation-harness knows it"


@dataclass(frozen=True)
class HarnessMap:
    """Per item (in the benchmark's order) the harness task and document index (None: no document);
    ``tasks`` and ``docs`` are None when the bundle states only its metric."""

    tasks: tuple | None
    docs: tuple | None
    metric: str | None
    source: str              # where the bundle says it, for people reading a folder
    unavailable: str = ""    # the bundle says its items are no harness documents, and why


def _fail(folder: Path | None, file: str, location: str, what: str) -> StatementError:
    shown = str(Path(folder) / file) if folder is not None else file
    return StatementError(f"{shown}, {location}: {what}" if location else f"{shown}: {what}", file, location, what)


def _provenance(folder: Path | None) -> dict | None:
    """The ``lm_eval`` entry of the bundle's provenance.json (None when there is none, or the file cannot be
    read: validation reports that)."""
    record = read_record(folder)
    entry = record.get(PROVENANCE_KEY) if record is not None else None
    if entry is not None and not isinstance(entry, dict):
        raise _fail(folder, PROVENANCE, _KEY, "is not an object; give {\"tasks\": {subtask: harness task}, "
                    "\"doc_id\": \"item_suffix\", \"metric\": ...} or {\"unavailable\": reason} (see data/README.md)")
    return entry


def _metric(value, folder: Path | None, file: str, location: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not _METRIC.fullmatch(value):
        raise _fail(folder, file, location, f"metric {ascii(str(value))[:60]} is not an lm-eval metric name (ASCII "
                    "letters, digits, '_', '-', '.'); write the metric the bundle's 0/1 answers were read from, e.g. "
                    "acc_norm")
    return value


def _check_names(labels: dict[str, str], folder: Path | None, file: str, one: str, two: str) -> None:
    """The export's name rule over the task names a file states (``labels``: task -> who states it first,
    placed after ``one`` for one name, ``two`` for two): unusable, look-alike or named like an export."""
    for task, label in labels.items():
        fault = task_name_fault(task)
        if fault:
            raise _fail(folder, file, f"{one} {label}", f"{fault}; {_FIX}")
    pair = first_lookalike(labels)
    if pair:
        raise _fail(folder, file, f"{two} {labels[pair[0]]} and {labels[pair[1]]}", lookalike_fault(*pair))
    clash = suffix_clash(labels)
    if clash:
        raise _fail(folder, file, f"{two} {labels[clash]} and {labels[clash[: -len(SUFFIX)]]}", suffix_fault(clash))


def _from_columns(info, items, entry: dict | None, folder: Path | None, task_column: str = TASK_COLUMN) -> HarnessMap:
    if DOC_COLUMN not in info:
        raise _fail(folder, ITEMS, "", f"has the column {TASK_COLUMN} but not {DOC_COLUMN}; give both (the harness "
                    "task and the document index of each item) or neither")
    tasks, docs = [], []
    for item, task, doc in zip(items, info[task_column], info[DOC_COLUMN]):
        task = None if task is None or (isinstance(task, float) and math.isnan(task)) or str(task).strip() == "" \
            else str(task).strip()
        number = None
        if doc is not None and not (isinstance(doc, float) and math.isnan(doc)):
            try:
                number = float(doc)
            except (TypeError, ValueError, OverflowError):
                number = -1.0
            if not (number.is_integer() and 0 <= number < 1e12):
                raise _fail(folder, ITEMS, f"item {ascii(str(item))[:80]}, column {DOC_COLUMN}",
                            f"{ascii(str(doc))[:40]} is not a document index; give a whole number of at least 0 (its "
                            "position in the task's split)")
            number = int(number)
        if (task is None) != (number is None):
            raise _fail(folder, ITEMS, f"item {ascii(str(item))[:80]}",
                        f"has a {TASK_COLUMN if task else DOC_COLUMN} but no {DOC_COLUMN if task else TASK_COLUMN}; "
                        "give both, or leave both empty for an item that is no harness document")
        tasks.append(task)
        docs.append(number)
    labels: dict[str, str] = {}
    for item, task in zip(items, tasks):
        if task is not None:
            labels.setdefault(task, ascii(str(item))[:80])
    _check_names(labels, folder, ITEMS, f"column {task_column}, item", f"column {task_column}, items")
    metric = None
    if METRIC_COLUMN in info:
        values = {str(v).strip() for v in info[METRIC_COLUMN] if v is not None and str(v).strip() not in ("", "nan")}
        if len(values) > 1:
            raise _fail(folder, ITEMS, f"column {METRIC_COLUMN}", f"names {len(values)} metrics "
                        f"({', '.join(sorted(values)[:3])}); a bundle is scored on one metric: give one value (or "
                        "leave the column out)")
        metric = _metric(values.pop(), folder, ITEMS, f"column {METRIC_COLUMN}") if values else None
    if metric is None and entry is not None:
        metric = _metric(entry.get("metric"), folder, PROVENANCE, _KEY)
    return HarnessMap(tuple(tasks), tuple(docs), metric, f"items.csv columns {task_column} and {DOC_COLUMN}")


def _from_provenance(entry: dict, folder: Path | None, items, subtasks) -> HarnessMap:
    source = f"{PROVENANCE}, {_KEY}"
    if "unavailable" in entry:
        reason = "".join(c for c in " ".join(str(entry["unavailable"]).split()) if c.isprintable())[:600]
        return HarnessMap((None,) * len(items), (None,) * len(items), None, source,
                          unavailable=reason or "(no reason given)")
    if "tasks" not in entry and "doc_id" not in entry:
        return HarnessMap(None, None, _metric(entry.get("metric"), folder, PROVENANCE, _KEY), source)
    spec, rule = entry.get("tasks"), entry.get("doc_id")
    if not isinstance(spec, dict) or not all(isinstance(v, str) and v.strip() for v in spec.values()):
        raise _fail(folder, PROVENANCE, _KEY, "needs \"tasks\": an object of subtask -> harness task name (see "
                    "data/README.md)")
    labels: dict[str, str] = {}
    for subtask, task in spec.items():
        labels.setdefault(task.strip(), json.dumps(subtask))
    _check_names(labels, folder, PROVENANCE, f"{_KEY}, \"tasks\" entry", f"{_KEY}, \"tasks\" entries")
    if rule not in DOC_RULES:
        raise _fail(folder, PROVENANCE, _KEY, f"\"doc_id\" is {ascii(rule)[:40]}; give one of: "
                    + "; ".join(f"{name!r} ({what})" for name, what in DOC_RULES.items()))
    tasks, docs = [], []
    for item, subtask in zip(items, subtasks):
        if str(subtask) not in spec:
            raise _fail(folder, PROVENANCE, _KEY, f"\"tasks\" names no harness task for subtask "
                        f"{ascii(str(subtask))[:80]}; map every subtask of the bundle")
        match = _SUFFIX.fullmatch(str(item))
        if match is None:
            raise _fail(folder, PROVENANCE, _KEY, f"item {ascii(str(item))[:80]} does not end in a document index "
                        "after ':' or '_', as \"doc_id\": \"item_suffix\" says; give items.csv columns lm_eval_task "
                        "and doc_id instead")
        tasks.append(spec[str(subtask)].strip())
        docs.append(int(match[1]))
    return HarnessMap(tuple(tasks), tuple(docs), _metric(entry.get("metric"), folder, PROVENANCE, _KEY), source)


def harness_for(folder: Path | None, item_info, items, subtasks) -> HarnessMap | None:
    """What a bundle states of its items' harness documents, from its folder (None: a bundle built in
    memory) and its items.csv content: items.csv columns first, else provenance.json; None when it states
    nothing. A statement it cannot use raises :class:`StatementError`."""
    entry = _provenance(folder)
    items = [str(i) for i in items]
    if item_info is not None and TASK_COLUMN in item_info:
        return _from_columns(item_info, items, entry, folder)
    if item_info is not None and IMPORTED_TASK_COLUMN in item_info and DOC_COLUMN in item_info:
        return _from_columns(item_info, items, entry, folder, IMPORTED_TASK_COLUMN)
    if entry is not None:
        return _from_provenance(entry, folder, items, [str(s) for s in subtasks])
    if item_info is not None and METRIC_COLUMN in item_info:  # a metric only: the item ids say the documents
        stated = _from_columns(item_info.assign(**{TASK_COLUMN: None, DOC_COLUMN: None}), items, None, folder)
        if stated.metric is None:
            return None
        return HarnessMap(None, None, stated.metric, f"items.csv column {METRIC_COLUMN}")
    return None


def harness_map(benchmark) -> HarnessMap | None:
    """What ``benchmark``'s bundle states of its items' harness documents: items.csv columns first, else
    provenance.json (read from the folder the benchmark was loaded from); None when it states nothing."""
    folder = Path(benchmark.origin) if benchmark.origin and Path(benchmark.origin).is_dir() else None
    return harness_for(folder, benchmark.item_info, benchmark.items, benchmark.subtasks)
