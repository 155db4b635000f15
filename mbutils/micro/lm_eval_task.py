"""Export a micro-benchmark as lm-evaluation-harness tasks: the original task, only the chosen documents.

lm-eval (0.4 series) task configs are YAML files. ``include: PATH`` loads another config
(PATH absolute, or relative to the including file's folder) and the including file's keys
override its keys; ``process_docs: !function MODULE.NAME`` names a function in
``MODULE.py`` next to the YAML file, applied to each split's ``datasets.Dataset`` before
documents are numbered, so a log's ``doc_id`` is the position in the processed split.

For each lm-eval task the micro-benchmark draws from, :func:`write_lm_eval_tasks` writes
``<task>_micro.yaml`` through a YAML serialiser (no text of a bundle is templated into it)::

    include: <the original task's YAML>
    task: <task>_micro
    process_docs: !function micro_docs.process_<i>

plus ``micro_docs.json`` (the chosen documents, by a JSON serialiser) and ``micro_docs.py``, a
fixed copy of :mod:`mbutils.micro.lm_eval_filter`, which keeps those documents and stamps each
with its original index (``mbutils_doc_id``); :mod:`mbutils.micro.scoring` matches logs by it.

The harness task and document of each item are what the bundle states
(:mod:`mbutils.data.bundle.harness`: items.csv columns ``lm_eval_task`` and ``doc_id``, or
provenance.json's ``lm_eval``, as the shipped leaderboard bundles give ``leaderboard_gpqa_main``,
``leaderboard_bbh_<subtask>`` and ``leaderboard_mmlu_pro``); a bundle that states nothing has them
read off its item ids: ``task:doc_id`` (the lm-eval importer's ids), else ``<subtask>_<digits>``.
A task name that becomes a file name must match :data:`TASK_NAME`; two that would be one file on a
case-insensitive file system, or one name once ``-`` and ``.`` read as ``_``, are refused.
"""

from __future__ import annotations

import functools
import json
import re
import shutil
from pathlib import Path

import numpy as np
import yaml

from mbutils.base.errors import BundleError, NotDocuments
# The task-name rule is the bundle's (validate applies it too); the export uses it from there.
from mbutils.data.bundle.tasknames import (SUFFIX, TASK_NAME, check_distinct, check_exportable,  # noqa: F401
                                           check_task_name, item_documents, normalised, split_item)

MODULE = "micro_docs"
#: The header of every exported YAML file (fixed text: no data of the bundle).
HEADER = "# Written by mbutils build-micro; manifest.json of the micro-benchmark folder seals this file.\n"


def documents(items, subtasks, chosen, parsed=None) -> tuple[dict[str, list[int]], dict[str, int]]:
    """Chosen doc_ids per task (increasing) and the documents each task has in the bundle."""
    parsed = [split_item(i, s) for i, s in zip(items, subtasks)] if parsed is None else list(parsed)
    bad = [str(items[c]) for c in chosen if parsed[c] is None]
    if bad:
        raise NotDocuments(f"items {', '.join(map(ascii, bad[:3]))} name no lm-eval document (ids look like "
                          "task:doc_id); the micro-benchmark cannot be exported for lm-evaluation-harness")
    per_task: dict[str, int] = {}
    for p in parsed:
        if p is not None:
            per_task[p[0]] = max(per_task.get(p[0], 0), p[1] + 1)
    docs: dict[str, list[int]] = {}
    for c in np.sort(np.asarray(chosen)):
        task, doc = parsed[c]
        docs.setdefault(task, []).append(doc)
    check_exportable(items, subtasks, "items of the micro-benchmark", parsed)
    return {t: sorted(v) for t, v in sorted(docs.items())}, {t: per_task[t] for t in sorted(docs)}


def _yaml_entry_path(entry) -> str | None:
    """The YAML path of a task-index entry: a dict before lm-eval 0.4.10, an object since."""
    value = entry.get("yaml_path") if isinstance(entry, dict) else getattr(entry, "yaml_path", None)
    return str(value) if value not in (None, -1, "") else None


def _configs_under(root: Path) -> dict[str, str]:
    """Task name -> the YAML file defining it, for every YAML under ``root`` (read once per export)."""

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    found: dict[str, str] = {}
    for path in sorted(root.rglob("*.yaml")):
        try:
            config = yaml.load(path.read_text(encoding="utf-8"), Loader=Loader)
        except (yaml.YAMLError, UnicodeDecodeError, OSError, RecursionError):
            continue
        if isinstance(config, dict) and isinstance(config.get("task"), str):
            found.setdefault(config["task"], str(path.resolve()))
    return found


def find_task_yaml(task: str, tasks_dir: str | Path | None, required: bool = False, configs=None) -> str:
    """The YAML file defining ``task``: under ``tasks_dir`` if given (refused when absent), else in an
    installed lm_eval, else ``<task>.yaml`` next to the export (to be copied or linked there). With
    ``required`` (the bundle states that its items are documents of ``task``), a task the installed harness
    does not define is refused too."""
    if tasks_dir is not None:
        root = Path(tasks_dir)
        if not root.is_dir():
            raise BundleError(f"--lm-eval-tasks {tasks_dir}: no such folder of lm-eval task configs")
        found = (configs if configs is not None else _configs_under(root)).get(task)
        if found is None:
            raise BundleError(f"--lm-eval-tasks {tasks_dir}: no YAML file there defines task {task!r}; point it at "
                              "the folder holding that task's config (the harness's lm_eval/tasks, or a copy)")
        return found
    found = _declared_once(task) or _yaml_entry_path(harness_index().get(task) or {})
    if found is None and required and harness_installed():
        raise BundleError(f"the bundle says its items are documents of lm-eval task {task!r}, which the installed "
                          f"lm-evaluation-harness ({harness_version()}) does not define; install the version the "
                          "bundle was built with (pip install -r requirements-harness.txt: lm-eval==0.4.13), or give "
                          "--lm-eval-tasks DIR holding that task's YAML")
    return found or f"{task}.yaml"


def resolve_includes(tasks, tasks_dir=None, required: bool = False) -> dict[str, str]:
    """task -> the YAML its micro task includes (:func:`find_task_yaml`), every task looked up at once."""
    configs = _configs_under(Path(tasks_dir)) if tasks_dir is not None and Path(tasks_dir).is_dir() else None
    return {task: find_task_yaml(task, tasks_dir, required, configs) for task in tasks}


def harness_installed() -> bool:
    """Whether lm-evaluation-harness can be imported here."""
    try:
        import lm_eval.tasks  # noqa: F401  (optional: pip install 'mbutils[lm-eval]')
    except ImportError:
        return False
    return True


def harness_version() -> str:
    """``lm-eval X.Y.Z`` of the installed harness, or 'not installed'."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"lm-eval {version('lm_eval')}"
    except PackageNotFoundError:
        return "not installed"


@functools.cache
def harness_index() -> dict:
    """The installed harness's task index (task -> entry), read once per process (indexing its thousands
    of task configs takes seconds); empty when lm_eval is not installed."""
    try:
        from lm_eval.tasks import TaskManager  # optional: pip install 'mbutils[lm-eval]'
    except ImportError:
        return {}
    return dict(TaskManager().task_index)


#: A top-level ``task: NAME`` line of a harness config (quotes and a trailing comment allowed).
_TASK_LINE = re.compile(rb"^task:[ \t]*['\"]?([^\s'\"#]+)['\"]?[ \t]*(?:#.*)?$", re.M)


@functools.cache
def _task_lines() -> dict[str, tuple[str, ...]]:
    """task -> the installed harness's YAML files that declare it on a ``task:`` line.

    A text scan of the configs (about a second for lm-eval 0.4.13's 14,000 files) instead of the
    harness's own index (about five seconds, paid by every process that exports)."""
    try:
        import lm_eval.tasks  # optional: pip install 'mbutils[lm-eval]'
    except ImportError:
        return {}
    found: dict[str, list[str]] = {}
    for path in sorted(Path(lm_eval.tasks.__file__).parent.rglob("*.yaml")):
        try:
            text = path.read_bytes()
        except OSError:
            continue
        for match in _TASK_LINE.finditer(text):
            found.setdefault(match.group(1).decode("utf-8", "replace"), []).append(str(path))  # resolved when used
    return {task: tuple(paths) for task, paths in found.items()}


def _declared_once(task: str) -> str | None:
    """The one installed YAML that declares ``task``; None when none or several do (the harness's
    index then decides, as it would when running the task)."""
    paths = _task_lines().get(task, ()) if harness_installed() else ()
    return str(Path(paths[0]).resolve()) if len(paths) == 1 else None


class _Function(str):
    """A ``!function`` reference, so the serialiser writes the tag the harness reads."""


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(_Function, lambda dumper, value: dumper.represent_scalar("!function", str(value)))


def task_config(micro: str, include: str, index: int) -> str:
    """One exported task's YAML text, by the serialiser (ASCII only: every other character escaped)."""
    config = {"include": include, "task": micro, "process_docs": _Function(f"{MODULE}.process_{index}")}
    return HEADER + yaml.dump(config, Dumper=_Dumper, sort_keys=False, allow_unicode=False,
                              default_flow_style=False, width=10**6)


def write_lm_eval_tasks(folder: Path, items, subtasks, chosen, tasks_dir=None, *, parsed=None,
                        required: bool = False) -> dict[str, dict]:
    """Write ``<task>_micro.yaml`` per task, ``micro_docs.json`` and ``micro_docs.py`` into ``folder``;
    returns the map micro task -> {"task", "docs", "n_docs", "include", "items"} (kept in ``micro.json``).

    ``parsed`` gives (task, doc_id) per item as the bundle states them (:func:`item_documents`; read off
    the item ids when None); ``required``: the bundle stated them, so every task must be one the harness
    (or ``tasks_dir``) defines."""
    parsed = [split_item(i, s) for i, s in zip(items, subtasks)] if parsed is None else list(parsed)
    docs, n_docs = documents(items, subtasks, chosen, parsed)
    original = resolve_includes(docs, tasks_dir, required)
    owner = {parsed[c]: str(items[c]) for c in chosen}
    folder.mkdir(parents=True, exist_ok=True)
    tasks, entries = {}, []
    for index, (task, chosen_docs) in enumerate(docs.items()):
        micro = task + SUFFIX
        (folder / f"{micro}.yaml").write_text(task_config(micro, original[task], index), encoding="utf-8")
        entry = {"task": task, "docs": chosen_docs, "n_docs": n_docs[task], "include": original[task]}
        entries.append({"micro_task": micro, **entry})
        tasks[micro] = {**entry, "items": [owner[task, doc] for doc in chosen_docs]}
    (folder / f"{MODULE}.json").write_text(json.dumps({"tasks": entries}, indent=1) + "\n", encoding="utf-8")
    shutil.copyfile(Path(__file__).with_name("lm_eval_filter.py"), folder / f"{MODULE}.py")
    return tasks
