"""lm-evaluation-harness output folders (``--log_samples``) -> Benchmark: find the samples files,
name each model, keep the latest run, and assemble them with :mod:`mbutils.data.importers.assemble`."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from mbutils.data.benchmark import Benchmark
from mbutils.base.errors import BundleError
from mbutils.data.importers.assemble import assemble_bundle
from mbutils.data.importers.records import iter_records, load_json, with_progress
from mbutils.data.importers.samples import (DOC_CHECKS, ITEM_POLICIES, MODEL_ARG_KEYS, RESULTS_RE, SAMPLES_RE,
                                            check_option)
from mbutils.data.importers.task_table import table_from_records


@dataclass(frozen=True)
class SampleFile:
    """One ``samples_<task>_<time>.jsonl`` file."""

    path: Path
    task: str
    stamp: str


def parse_samples_name(path: Path) -> SampleFile | None:
    match = SAMPLES_RE.match(path.name)
    return SampleFile(path, match["task"], match["stamp"]) if match else None


def find_sample_files(paths: Sequence[str | Path]) -> list[SampleFile]:
    """Every samples file given or found (recursively) under the folders given."""
    if isinstance(paths, (str, Path)):
        paths = [paths]
    found: list[SampleFile] = []
    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_file():
            parsed = parse_samples_name(path)
            if parsed is None:
                raise BundleError(f"{path}: not an lm-eval samples file (expected samples_<task>_<time>.jsonl)")
            found.append(parsed)
        elif path.is_dir():
            here = [s for s in map(parse_samples_name, sorted(path.rglob("samples_*.json*"))) if s]
            if not here:
                raise BundleError(f"{path}: no samples_<task>_<time>.jsonl files in it; run lm_eval with "
                                  "--log_samples --output_path to write them")
            found += here
        else:
            raise BundleError(f"{path}: no such file or folder")
    return list(dict.fromkeys(found))


def results_for(folder: Path, stamp: str) -> Path | None:
    """The results file of the same run, else the folder's latest one."""
    same = folder / f"results_{stamp}.json"
    if same.is_file():
        return same
    runs = sorted((m["stamp"], p) for p in folder.glob("results_*.json") if (m := RESULTS_RE.match(p.name)))
    return runs[-1][1] if runs else None


def model_name_from_results(results: dict) -> str | None:
    """``model_name`` (tracker), else the model id in ``config.model_args``."""
    name = results.get("model_name")
    if isinstance(name, str) and name.strip():
        return name.strip()
    args = (results.get("config") or {}).get("model_args")
    if isinstance(args, str):
        pairs = dict(part.split("=", 1) for part in args.split(",") if "=" in part)
    elif isinstance(args, dict):
        pairs = {str(k): str(v) for k, v in args.items()}
    else:
        return None
    for key in MODEL_ARG_KEYS:
        if pairs.get(key, "").strip():
            return pairs[key].strip()
    return None


def target_delimiter(results: dict | None, task: str) -> str | None:
    """The task's ``target_delimiter`` in a results file's configs, or ``None``."""
    config = ((results or {}).get("configs") or {}).get(task) or {}
    value = config.get("target_delimiter")
    return value if isinstance(value, str) else None


def _latest(files: list[tuple]) -> list[tuple]:
    """One (model, task, SampleFile, ...) entry per (model, task), in the order found: the latest
    run; the others are reported."""
    best: dict[tuple[str, str], tuple] = {}
    for entry in files:
        key = entry[:2]
        if key not in best:
            best[key] = entry
            continue
        here, there = entry[2].path.parent, best[key][2].path.parent
        if here.resolve() != there.resolve():
            raise BundleError(
                f"two folders log the same model name {key[0]!r} for task {key[1]!r}: {there} and {here}; "
                "one would silently replace the other. Import them separately, or give one of them its "
                "own model_name in its results file")
        old, new = sorted([best[key], entry], key=lambda e: e[2].stamp)
        warnings.warn(f"{key[0]} / {key[1]}: several runs; using {new[2].path.name}, "
                      f"skipping {old[2].path.name}", stacklevel=4)
        best[key] = new
    return list(best.values())


def import_lm_eval(paths: Sequence[str | Path], metric: str = "acc", *, filter: str | None = None,
                   name: str = "lm-eval", items: str = "same", check_docs: str = "error",
                   confidence: bool | None = None, subtask_field: str | None = None,
                   progress: bool = False) -> Benchmark:
    """Read lm-evaluation-harness ``--log_samples`` output into a Benchmark.

    ``paths``: samples files or folders (searched recursively). ``metric``: the per-sample
    0/1 field used as correctness. ``filter``: which filter's records to use for tasks
    that log several (e.g. ``strict-match``); a task with one filter uses it. ``items``: ``"same"`` (every model must have the same documents per task)
    or ``"common"`` (keep the documents all have). ``check_docs``: what to do when models
    saw different documents under one id. ``confidence``: None = include when available
    for every cell, True = require, False = omit. ``subtask_field``: take the subtask from
    this document field instead of the task name (e.g. ``"category"`` for MMLU-Pro).
    """
    check_option(items, ITEM_POLICIES, "items")
    check_option(check_docs, DOC_CHECKS, "check_docs")
    paths = [paths] if isinstance(paths, (str, Path)) else list(paths)
    results_cache: dict[Path | None, dict | None] = {None: None}
    entries = []
    for sample in find_sample_files(paths):
        results_path = results_for(sample.path.parent, sample.stamp)
        if results_path not in results_cache:
            results_cache[results_path] = load_json(results_path)
        results = results_cache[results_path]
        model = (model_name_from_results(results) if results else None) or sample.path.parent.name
        entries.append((model, sample.task, sample, results))
    entries = _latest(entries)
    models = list(dict.fromkeys(e[0] for e in entries))
    tasks = sorted(dict.fromkeys(e[1] for e in entries))
    tables = []
    for model, task, sample, results in with_progress(entries, progress, "reading samples"):
        tables.append(table_from_records(
            iter_records(sample.path, metric, subtask_field), str(sample.path), model=model, task=task, metric=metric,
            filter_name=filter, subtask_field=subtask_field, delimiter=target_delimiter(results, task)))
    where = ", ".join(map(str, paths[:3])) + (" ..." if len(paths) > 3 else "")
    return assemble_bundle(tables, name=name, models=models, tasks=tasks, items=items, check_docs=check_docs,
                           confidence=confidence,
                           origin=f"lm-evaluation-harness samples ({metric}) from {len(entries)} file(s) under {where}")
