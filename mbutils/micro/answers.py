"""New models' answers on a micro-benchmark's items, read from lm-eval logs or a ``responses.csv``.

A log is read with the metric the bundle was built on (``micro.json``'s ``lm_eval_metric``, from the
bundle's items.csv or provenance.json: ``acc_norm`` for the leaderboard's GPQA and BBH), else ``acc``,
unless ``metric`` names another; the output says which, and which filter of the logs it read (the one
``log_filter`` names, else the only one a log records; a filter asked for that a log does not record is
refused, naming the log and the filters it records). Documents are matched to items as the folder
records them (``lm_eval_tasks``: each micro task's harness task, documents and their items), so a log
of ``leaderboard_gpqa_main`` scores the items ``gpqa_main_NNN``; a micro task's documents by the original
index its filter stamped, never by position.

Their content is checked too (:func:`check_content`): each chosen document's fingerprint (stamped by a
micro task's filter; computed from the logged document for a log of the whole task) must be the one
``micro.json`` recorded when the folder was built (``fingerprints``, for a local dataset), else the log is
refused as one of a reordered or different dataset of the same size; two logs of one call must agree on
each document's content. A micro task's log whose filter stamped another micro task's identity, or
documents this one did not choose, is refused as a log of another micro-benchmark.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from mbutils.base.errors import ScoreError
from mbutils.base.validation import unsafe_names
from mbutils.micro.folder import MicroFolder

_LISTED = 5


@dataclass(frozen=True)
class Answers:
    """New models' answers on the micro-benchmark's index space (``MicroFolder.item_names``)."""

    models: list[str]
    correct: np.ndarray
    confidence: np.ndarray | None
    source: str
    metric: str | None = None    # the lm-eval metric read (None: 0/1 answers of a responses.csv)
    log_filter: str | None = None  # the lm-eval filter(s) read, comma-separated (None: a responses.csv)


def listed_names(values) -> str:
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
                         f"it has {listed_names(table.columns)}")
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
            f"items look like {listed_names(chosen[:3])}; the file's like {listed_names(names[:3])}): these are results of "
            "another task or bundle. Score results of the task the micro-benchmark was built from")
    missing = [c for c in chosen if c not in owner]
    if missing:
        raise ScoreError(f"{path}: {len(missing)} of the micro-benchmark's {len(chosen)} items are missing (no column): "
                         f"{listed_names(missing)}; evaluate the model on all of them and score complete results")
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
    from mbutils.micro.lm_eval_task import split_item

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


def _log_table(sample, results: dict | None, model: str, metric: str, micro: bool, log_filter: str | None = None,
               fields: list | None = None, stamps: dict | None = None):
    """(table, filter read): one samples file's records of ``log_filter`` (else of the one filter it records;
    one it does not record is refused, naming the file and its filters); documents of a micro task by the
    original index their filter stamped. ``stamps`` (when given) receives, per original index, the
    document's content fingerprint (stamped by a micro task's filter; for a log of the whole task computed
    from the logged document over ``fields``, when given) and the micro task's identity stamped."""
    from mbutils.data.importers.lm_eval import target_delimiter as _delimiter
    from mbutils.data.importers.records import iter_records as _iter_records, watch_filters
    from mbutils.data.importers.task_table import table_from_records as _table_from_records
    from mbutils.micro.lm_eval_filter import STAMP

    index = STAMP if micro else None
    seen: dict = {}
    records = watch_filters(_iter_records(sample.path, metric, None, index), log_filter, str(sample.path), seen)
    if stamps is not None:
        records = _watch_documents(records, micro, fields, stamps)
    table = _table_from_records(records, str(sample.path), model=model, task=sample.task, metric=metric,
                                filter_name=log_filter, subtask_field=None,
                                delimiter=_delimiter(results, sample.task), index_field=index)
    return table, log_filter if log_filter is not None else next(iter(seen), "none")


def _watch_documents(records, micro: bool, fields: list | None, stamps: dict):
    """The records unchanged; each document's (fingerprint, identity) noted in ``stamps`` by original index."""
    from mbutils.micro.lm_eval_filter import FINGERPRINT, IDENTITY, STAMP, fingerprint

    for number, record in records:
        doc = record.get("doc")
        if isinstance(doc, dict):
            index = doc.get(STAMP) if micro else record.get("doc_id")
            if isinstance(index, int) and not isinstance(index, bool):
                if micro:
                    stamps[index] = (doc.get(FINGERPRINT), doc.get(IDENTITY))
                elif fields is not None:
                    stamps[index] = (fingerprint(doc, fields), None)
        yield number, record


def _check_other_micro(path, task: str, micro_task: str, logged: np.ndarray, docs: dict[int, str], n_docs,
                       stamps: dict) -> None:
    """A micro task's log run from another micro-benchmark (of the same bundle and task name): its filter
    stamped another micro task's identity, or documents this one did not choose."""
    from mbutils.micro.lm_eval_filter import identity

    have = sorted(set(logged.tolist()))
    ours = identity(task, n_docs, sorted(docs)) if n_docs is not None else None
    theirs = {ident for _, ident in stamps.values() if ident is not None}
    other = bool(theirs) and ours is not None and theirs != {ours}
    if other or set(have) - set(docs):
        raise ScoreError(f"{path}: a log of another micro-benchmark (its documents of task {task!r}, doc_id "
                         f"{listed_names(have)}, are not this one's, doc_id {listed_names(sorted(docs))}); score it "
                         f"with the micro-benchmark folder it was run from, or run this one's task {micro_task!r} and "
                         "score that log")


def check_content(path, task: str, docs: dict[int, str], stamps: dict, record: dict | None, seen: dict) -> None:
    """Every chosen document of the log has the content the micro-benchmark chose: its fingerprint is the one
    recorded when the folder was built (``record``: doc -> fingerprint; None when none was recorded) and the
    one the other logs of the call carry (``seen``: (task, doc) -> (fingerprint, path), filled here)."""
    prints = {doc: stamps[doc][0] for doc in docs if doc in stamps and stamps[doc][0] is not None}
    if record:
        wrong = sorted(doc for doc, value in prints.items() if doc in record and value != record[doc])
        if wrong:
            raise ScoreError(f"{path}: {len(wrong)} of the {len(docs)} documents the micro-benchmark chose from task "
                             f"{task!r} hold other content in this log (doc_id {listed_names(wrong)}: their content "
                             "fingerprint differs from the one recorded when the micro-benchmark was built): the "
                             "harness loaded a reordered or different dataset of the same size. Run the task on the "
                             "dataset the micro-benchmark was built on and score that log")
    for doc, value in prints.items():
        first = seen.setdefault((task, doc), (value, path))
        if first[0] != value:
            raise ScoreError(f"{first[1]} and {path}: document {doc} of task {task!r} holds other content in the two "
                             "logs (their content fingerprints differ): they were run on different datasets (or "
                             "versions, or orders of one); score logs of one dataset")


def _check_documents(path, task: str, logged: np.ndarray, docs: dict[int, str], micro: bool,
                     n_docs: int | None) -> None:
    """A log must hold every chosen document once; a micro task's log nothing else, a full one no
    document beyond the task's size in the bundle."""
    have = set(logged.tolist())
    missing = sorted(set(docs) - have)
    if missing:
        raise ScoreError(f"{path}: {len(missing)} of the {len(docs)} documents the micro-benchmark chose from task "
                         f"{task!r} are not in this log (doc_id {listed_names(missing)}); run the model on all of them "
                         "and score the complete log")
    if micro and len(have) != len(docs):
        extra = sorted(have - set(docs))
        raise ScoreError(f"{path}: holds {len(extra)} document(s) the micro-benchmark did not choose (original "
                         f"doc_id {listed_names(extra)}); a log of the micro task holds exactly its {len(docs)} documents")
    beyond = sorted(d for d in have if n_docs is not None and d >= int(n_docs))
    if beyond:
        raise ScoreError(f"{path}: holds document(s) {listed_names(beyond)} of task {task!r}, which had {n_docs} documents "
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
    from mbutils.data.importers.lm_eval import results_for as _results_for, find_sample_files, model_name_from_results
    from mbutils.data.importers.records import load_json as _load_json

    chosen = _chosen_documents(folder)
    named = {name for docs in chosen.values() for name in docs.values()}
    loose = [name for name in _chosen(folder) if name not in named]
    if loose:
        raise ScoreError(f"{folder.path / 'items.csv'}: {len(loose)} of its {len(_chosen(folder))} items name no lm-eval "
                         f"document ({listed_names(map(ascii, loose))}), so no log can answer them; score a bundle-format "
                         "responses.csv")
    tasks = _log_tasks(folder, chosen)
    micro_tasks = {micro: entry["task"] for micro, (_, entry) in tasks.items() if entry is not None}
    by_task = {entry_task: tasks[micro][1] for micro, entry_task in micro_tasks.items()}
    owner: dict[tuple[str, str], Path] = {}
    answers: dict[str, dict[str, tuple[float, float]]] = {}
    filters: dict[str, None] = {}  # the filters read, in the order met
    contents: dict = {}  # (task, doc) -> (content fingerprint, log): the documents' content across the logs
    files = find_sample_files(paths)
    used = [sample for sample in files if sample.task in tasks]  # a model's logs of other tasks are not read
    if not used:
        raise ScoreError(f"{listed_names(str(f.path) for f in files)}: none of these logs is of a task this micro-benchmark "
                         f"of {folder.meta['bundle']!r} chose items from (its tasks: {listed_names(sorted(tasks))}; the "
                         f"logs': {listed_names(sorted({f.task for f in files}))}): these are results of another task or "
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
        info = entry or by_task.get(original) or {}
        stamps: dict = {}
        table, used_filter = _log_table(sample, results, model, metric, entry is not None, log_filter,
                                        fields=info.get("fingerprint_fields"), stamps=stamps)
        filters.setdefault(used_filter, None)
        docs = chosen[original]
        n_docs = info.get("n_docs")
        if entry is not None:
            _check_other_micro(sample.path, original, sample.task, table.doc_id, docs, n_docs, stamps)
        _check_documents(sample.path, original, table.doc_id, docs, entry is not None, n_docs)
        record = info.get("fingerprints")
        check_content(sample.path, original, docs, stamps,
                      dict(zip(map(int, info["docs"]), record)) if isinstance(record, list) else None, contents)
        keep = np.isin(table.doc_id, list(docs))
        cells = answers.setdefault(model, {})
        for doc, right, conf in zip(table.doc_id[keep], table.correct[keep], table.confidence[keep]):
            cells[docs[int(doc)]] = (float(right), float(conf))
    for model in answers:
        lacking = [task for task in chosen if (model, task) not in owner]
        if lacking:
            raise ScoreError(f"model {model!r} has no log of task(s) {listed_names(lacking)}, from which the micro-benchmark "
                             "chose items; give its logs of every task (lm-eval tasks "
                             f"{listed_names(sorted(micro_tasks)) or listed_names(sorted(chosen))})")
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
                   metric=metric, log_filter=", ".join(filters))


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
    if log_filter is not None:
        raise ScoreError(f"{csvs[0]}: a responses.csv records 0/1 answers and no lm-eval filter, so filter "
                         f"{log_filter!r} cannot be read from it; leave --filter out, or give lm-eval samples logs")
    parts = [read_responses_csv(folder, p) for p in csvs]
    models = [m for part in parts for m in part.models]
    repeated = sorted(m for m, n in Counter(models).items() if n > 1)
    if repeated:
        raise ScoreError(f"models appear in more than one file: {listed_names(repeated)}; give each model once")
    return Answers(models=models, correct=np.concatenate([p.correct for p in parts]), confidence=None,
                   source=", ".join(map(str, csvs)))
