"""Export a micro-benchmark as lm-evaluation-harness tasks: the original task, only the chosen documents.

lm-eval (0.4 series) task configs are YAML files. ``include: PATH`` loads another config
(PATH absolute, or relative to the including file's folder) and the including file's keys
override its keys; ``process_docs: !function MODULE.NAME`` names a function in
``MODULE.py`` next to the YAML file, applied to each split's ``datasets.Dataset`` before
documents are numbered, so a log's ``doc_id`` is the position in the processed split.

For each lm-eval task the micro-benchmark draws from, :func:`write_lm_eval_tasks` writes
``<task>_micro.yaml``::

    include: <the original task's YAML>
    task: <task>_micro
    process_docs: !function micro_docs.process_<task>

and one ``micro_docs.py`` whose functions first apply the original task's own
``process_docs`` (found by following its ``include`` chain, as the harness does) and then
keep the chosen documents, in increasing ``doc_id``. A split of another size than the
evaluated one (the few-shot source split) is left whole. Document ``i`` of the micro task is
therefore original document ``docs[i]``; :mod:`mbutils.results.scoring` maps it back.

Item ids give the task and document: ``task:doc_id`` (the lm-eval importer's ids), else
``<subtask>_<digits>`` (the shipped GPQA bundle's ``gpqa_main_007``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from mbutils.base.errors import BundleError

MODULE = "micro_docs"
SUFFIX = "_micro"

_TEMPLATE = '''"""Written by mbutils build-micro: keep only a micro-benchmark's documents of lm-eval tasks.

DOCS[task]: the chosen doc_ids of the original task, increasing; N_DOCS[task]: the size of the
split they index; ORIGINAL[task]: the original task's YAML (absolute, or relative to this file).
Each process_<task> applies the original task's own process_docs, then keeps DOCS[task]; a
split of another size (a few-shot source) is returned whole.
"""

import importlib.util
import os

import yaml

DOCS = __DOCS__
N_DOCS = __N_DOCS__
ORIGINAL = __ORIGINAL__
HERE = os.path.dirname(os.path.abspath(__file__))


class _Function:
    def __init__(self, folder, name):
        self.folder, self.name = folder, name

    def load(self):
        module, _, function = self.name.rpartition(".")
        path = os.path.join(self.folder, module.replace(".", os.sep) + ".py")
        spec = importlib.util.spec_from_file_location(module, path)
        loaded = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(loaded)
        return getattr(loaded, function)


def _read(path):
    folder = os.path.dirname(path)

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!function", lambda loader, node: _Function(folder, loader.construct_scalar(node)))
    Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    with open(path, encoding="utf-8") as handle:
        return yaml.load(handle, Loader=Loader) or {}


def _original_process_docs(path):
    """The process_docs the harness would use for the YAML at path (following include), or None."""
    path = path if os.path.isabs(path) else os.path.join(HERE, path)
    config = _read(path)
    if "process_docs" in config:
        value = config["process_docs"]
        return value.load() if isinstance(value, _Function) else None
    includes = config.get("include") or []
    for include in reversed([includes] if isinstance(includes, str) else list(includes)):
        found = include if os.path.isfile(include) else os.path.join(os.path.dirname(path), include)
        inner = _original_process_docs(found)
        if inner is not None:
            return inner
    return None


def keep(task, dataset):
    inner = _original_process_docs(ORIGINAL[task])
    if inner is not None:
        dataset = inner(dataset)
    if len(dataset) != N_DOCS[task]:
        return dataset
    return dataset.select(DOCS[task])
'''


def task_name(name: str) -> str:
    """A task or function name part made of letters, digits and underscores."""
    return re.sub(r"\W", "_", str(name))


def split_item(item: str, subtask: str) -> tuple[str, int] | None:
    """(task, doc_id) of an item id, or None when it names no document."""
    head, sep, tail = str(item).rpartition(":")
    if sep and tail.isdigit():
        return head, int(tail)
    match = re.fullmatch(r"(.+)_(\d+)", str(item))
    if match and match[1] == str(subtask):
        return match[1], int(match[2])
    return None


def documents(items, subtasks, chosen) -> tuple[dict[str, list[int]], dict[str, int]]:
    """Chosen doc_ids per task (increasing) and the documents each task has in the bundle."""
    parsed = [split_item(i, s) for i, s in zip(items, subtasks)]
    bad = [str(items[c]) for c in chosen if parsed[c] is None]
    if bad:
        raise BundleError(f"items {', '.join(bad[:3])} name no lm-eval document (ids look like task:doc_id); "
                          "the micro-benchmark cannot be exported for lm-evaluation-harness")
    per_task: dict[str, int] = {}
    for p in parsed:
        if p is not None:
            per_task[p[0]] = max(per_task.get(p[0], 0), p[1] + 1)
    docs: dict[str, list[int]] = {}
    for c in np.sort(np.asarray(chosen)):
        task, doc = parsed[c]
        docs.setdefault(task, []).append(doc)
    return {t: sorted(v) for t, v in sorted(docs.items())}, {t: per_task[t] for t in sorted(docs)}


def find_task_yaml(task: str, tasks_dir: str | Path | None) -> str:
    """The YAML file defining ``task``: under ``tasks_dir`` if given, else in an installed lm_eval,
    else ``<task>.yaml`` next to the export (to be copied or linked there)."""
    if tasks_dir is not None:
        try:
            import yaml  # lm-eval's own dependency: present wherever its task folders are
        except ImportError:
            raise BundleError("--lm-eval-tasks needs PyYAML to read the task configs: pip install pyyaml") from None
        root = Path(tasks_dir)
        if not root.is_dir():
            raise BundleError(f"{tasks_dir}: no such folder of lm-eval task configs")

        class Loader(yaml.SafeLoader):
            pass

        Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
        for path in sorted(root.rglob("*.yaml")):
            try:
                config = yaml.load(path.read_text(encoding="utf-8"), Loader=Loader)
            except (yaml.YAMLError, UnicodeDecodeError, OSError):
                continue
            if isinstance(config, dict) and config.get("task") == task:
                return str(path.resolve())
        raise BundleError(f"{tasks_dir}: no YAML file defines task {task!r}")
    try:
        from lm_eval.tasks import TaskManager  # optional: pip install 'mbutils[lm-eval]'
    except ImportError:
        return f"{task}.yaml"
    info = TaskManager().task_index.get(task) or {}
    return str(info.get("yaml_path") or f"{task}.yaml")


def write_lm_eval_tasks(folder: Path, items, subtasks, chosen, tasks_dir=None) -> dict[str, dict]:
    """Write ``<task>_micro.yaml`` per task and ``micro_docs.py`` into ``folder``; returns the map
    micro task -> {"task", "docs", "include"} (kept in the micro-benchmark's ``micro.json``)."""
    docs, n_docs = documents(items, subtasks, chosen)
    folder.mkdir(parents=True, exist_ok=True)
    original = {task: find_task_yaml(task, tasks_dir) for task in docs}
    source = (_TEMPLATE.replace("__DOCS__", json.dumps(docs)).replace("__N_DOCS__", json.dumps(n_docs))
              .replace("__ORIGINAL__", json.dumps(original)))
    source += "".join(f"\n\ndef process_{task_name(t)}(dataset):\n    return keep({t!r}, dataset)\n" for t in docs)
    (folder / f"{MODULE}.py").write_text(source, encoding="utf-8")
    tasks = {}
    for task, chosen_docs in docs.items():
        micro = task_name(task) + SUFFIX
        text = (f"# Written by mbutils build-micro: {task} restricted to the micro-benchmark's "
                f"{len(chosen_docs)} documents.\n"
                f"include: {json.dumps(original[task])}\n"
                f"task: {micro}\n"
                f"process_docs: !function {MODULE}.process_{task_name(task)}\n")
        (folder / f"{micro}.yaml").write_text(text, encoding="utf-8")
        tasks[micro] = {"task": task, "docs": chosen_docs, "include": original[task]}
    return tasks
