"""A micro-benchmark's whole lm-evaluation-harness export: its tasks, one group to run them all, checked by the harness.

:func:`export_micro` writes into a micro-benchmark folder's ``lm_eval/`` (while the folder is still a
temporary one, :mod:`mbutils.micro.folder`):

* one ``<harness task>_micro.yaml`` per harness task the chosen items are documents of, with
  ``micro_docs.json`` and ``micro_docs.py`` (:mod:`mbutils.micro.lm_eval_task`);
* ``_group.yaml``, the group task ``<benchmark>_micro`` of lm-eval 0.4 (keys ``group``, ``task``: the
  micro tasks, ``aggregate_metric_list``: the bundle's metric, ``aggregation: mean``,
  ``weight_by_size``), so ``lm_eval --tasks <benchmark>_micro --include_path <folder>/lm_eval`` runs
  every chosen document at once. The group's mean is the micro-benchmark's estimate when the estimator
  is a plain mean of the items (``weight_by_size: true``) or gives every task the same total weight with
  equal weights inside a task (``weight_by_size: false``); for any other estimator (weighted,
  IRT, confidence-based) it is only an approximation, and ``score`` computes the estimate.

When the harness is installed it must index what was written: ``TaskManager(include_path=<lm_eval>)``
lists every micro task whose original YAML was found and the group, or the export fails (and with it
the whole folder, which is then never written). Without the harness the folder says what to install.

Each chosen document's content fingerprint (:func:`mbutils.micro.lm_eval_filter.fingerprint`) is
recorded when the build can read the dataset without the network: a task whose dataset is local files
(``dataset_path: json``, ``csv``, ``parquet``, ``text`` or ``arrow`` with ``data_files``) is loaded through
the installed harness with the exported configuration, and the fingerprints its filter stamps are kept in
``micro.json`` (``fingerprints``, beside ``docs``; ``fingerprint_fields``, the fields hashed). A task fetched
from the Hugging Face Hub at run time gets none (``fingerprints: null``; the card says so), and ``score``
then only checks that the logs it is given agree with each other.
"""

from __future__ import annotations

import logging
import re
import shutil
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import yaml

from mbutils.base.errors import BundleError
from mbutils.methods.selectors.base import MicroBenchmark
from mbutils.micro.lm_eval_task import (HEADER, INSTALL, SUFFIX, NotDocuments, check_task_name,  # noqa: F401
                                          harness_installed, harness_version, item_documents, merged_config,
                                          normalised, write_lm_eval_tasks)

GROUP_FILE = "_group.yaml"
#: The metric a bundle that does not say is read with (lm-eval's multiple-choice accuracy).
DEFAULT_METRIC = "acc"
#: ``dataset_path`` values of datasets read from local files (the ``datasets`` library's packaged builders).
LOCAL_BUILDERS = frozenset({"json", "csv", "parquet", "text", "arrow"})


def group_name(bundle: str, micro_tasks) -> str:
    """``<bundle>_micro``, the bundle's name made a task name; ``..._group`` if a micro task has that name."""
    base = re.sub(r"[^A-Za-z0-9_.\-]", "_", str(bundle)).lstrip("-.")[:90] or "benchmark"
    name = check_task_name(base + SUFFIX)
    taken = {normalised(t) for t in micro_tasks}
    return name + "_group" if normalised(name) in taken else name


def group_aggregation(micro, parsed, reads: str) -> tuple[bool, bool]:
    """(weight_by_size, exact): the group mean that reproduces the estimator, and whether it does.

    The estimate is sum_i w_i x_i over the chosen items. weight_by_size pools every document (the mean
    of all x_i): exact when every weight is 1/k. Without it the group averages the tasks' means: exact
    when weights are equal inside each task and every task's weights sum to the same share."""
    weights = np.asarray(micro.weights, dtype=float)
    k = len(weights)
    kind_ok = type(micro) is MicroBenchmark and reads == "correct"  # an IRT estimate is no mean of items
    if not kind_ok or k == 0:
        return True, False
    if np.allclose(weights, 1.0 / k, rtol=1e-9, atol=1e-12):
        return True, True
    tasks = [parsed[i][0] for i in np.asarray(micro.items)]
    names = sorted(set(tasks))
    per = {t: weights[[j for j, x in enumerate(tasks) if x == t]] for t in names}
    share = 1.0 / len(names)
    equal = all(np.allclose(w, w[0], rtol=1e-9, atol=1e-12) and np.isclose(w.sum(), share, rtol=1e-9, atol=1e-12)
                for w in per.values())
    return (False, True) if equal and len(names) > 1 else (True, False)


def group_config(name: str, micro_tasks, metric: str, weight_by_size: bool) -> str:
    """The group YAML's text, by the serialiser."""
    config = {"group": name, "task": list(micro_tasks),
              "aggregate_metric_list": [{"metric": metric, "aggregation": "mean", "weight_by_size": bool(weight_by_size)}],
              "metadata": {"version": 1.0}}
    return HEADER + yaml.safe_dump(config, sort_keys=False, allow_unicode=False, default_flow_style=False, width=10**6)


def check_indexed(folder: Path, tasks: list[str], group: str | None) -> str:
    """The installed harness's TaskManager indexes every task of ``tasks`` and the group, else one error;
    returns what was checked, for the card."""
    if not harness_installed():
        return f"not checked: lm-evaluation-harness is not installed here ({INSTALL})"
    from lm_eval.tasks import TaskManager

    manager = TaskManager(include_path=str(folder), include_defaults=False)
    index = manager.task_index
    absent = [t for t in tasks if t not in index]
    if group is not None and group not in getattr(manager, "all_groups", index):
        absent.append(group)
    if absent:
        raise BundleError(f"the exported lm-eval tasks are not indexed by the installed harness ({harness_version()}): "
                          f"{', '.join(absent[:5])}; the export would not run, so nothing was written. Check that "
                          "the original task YAMLs load in this harness (or give --lm-eval-tasks DIR), and build again")
    return f"indexed by {harness_version()}'s TaskManager: {len(tasks)} task(s)" + (" and the group" if group else "")


def export_micro(folder: Path, built, tasks_dir=None) -> dict:
    """Write the export of ``built`` (a :class:`~mbutils.micro.build.BuiltMicro`) into ``folder``;
    returns the keys ``micro.json`` keeps of it (``lm_eval_*``). A bundle whose items are no harness
    documents gets no export (a note says why), unless ``tasks_dir`` asks for one: then it is refused."""
    harness = getattr(built, "harness", None)
    metric = (harness.metric if harness is not None else None) or None
    out = {"lm_eval_tasks": {}, "lm_eval_note": "", "lm_eval_metric": metric, "lm_eval_group": None,
           "lm_eval_check": "", "lm_eval_source": harness.source if harness is not None else "item ids"}
    if harness is not None and harness.unavailable:
        note = f"{built.bundle} has no lm-evaluation-harness export ({harness.source}): {harness.unavailable}"
        if tasks_dir is not None:
            raise NotDocuments(f"--lm-eval-tasks: {note}")
        return {**out, "lm_eval_note": note}
    stated = harness is not None and harness.tasks is not None
    parsed = item_documents(built.items, built.subtasks, harness)
    try:
        tasks = write_lm_eval_tasks(folder, built.items, built.subtasks, built.micro.items, tasks_dir, parsed=parsed,
                                    required=stated)
    except NotDocuments as err:  # a bundle whose items are no harness documents: scored from CSV only
        if tasks_dir is not None:
            raise
        return {**out, "lm_eval_note": str(err)}
    weight_by_size, exact = group_aggregation(built.micro, parsed, built.micro.reads)
    name = group_name(built.bundle, tasks)
    (folder / GROUP_FILE).write_text(group_config(name, tasks, metric or DEFAULT_METRIC, weight_by_size),
                                     encoding="utf-8")
    unresolved = sorted(m for m, e in tasks.items() if e.get("config") is None)
    check = check_indexed(folder, [m for m in tasks if m not in unresolved], name)
    recorded = record_fingerprints(folder, tasks)
    return {**out, "lm_eval_tasks": tasks, "lm_eval_check": f"{check}; {recorded}" if recorded else check,
            "lm_eval_group": {"name": name, "tasks": list(tasks), "metric": metric or DEFAULT_METRIC,
                              "weight_by_size": weight_by_size, "exact": exact, "unresolved": unresolved}}


# -- the chosen documents' content, recorded when the dataset is local ----------------------------------

def _data_files(value) -> list:
    """The file names of a ``data_files`` value (a name, a list, or split -> name or list)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [name for inner in value.values() for name in _data_files(inner)]
    if isinstance(value, (list, tuple)):
        return [name for inner in value for name in _data_files(inner)]
    return [None]


def local_dataset(config: dict) -> bool:
    """Whether a task configuration reads its dataset from local files that exist here (no network)."""
    kwargs = config.get("dataset_kwargs")
    files = _data_files(kwargs.get("data_files")) if isinstance(kwargs, dict) and kwargs.get("data_files") else []
    return (config.get("dataset_path") in LOCAL_BUILDERS and bool(files)
            and all(isinstance(name, str) and Path(name).expanduser().is_file() for name in files))


@contextmanager
def _quiet_harness(folder: Path):
    """The harness loading tasks in this process: its logs and progress bars silenced, the datasets it
    prepares cached in a temporary folder (the user's Hugging Face cache is left as it was), no bytecode
    written into the folder (it would be sealed with it), and the modules it loaded from the folder forgotten
    after."""
    import datasets

    loggers = [logging.getLogger(name) for name in ("lm_eval", "lm-eval", "datasets", "huggingface_hub", "fsspec")]
    levels = [logger.level for logger in loggers]
    bytecode, cache = sys.dont_write_bytecode, datasets.config.HF_DATASETS_CACHE
    bars = datasets.utils.logging.is_progress_bar_enabled()
    datasets.utils.logging.disable_progress_bar()
    for logger in loggers:
        logger.setLevel(logging.ERROR)
    sys.dont_write_bytecode = True
    scratch = tempfile.TemporaryDirectory(prefix="mbutils-datasets-")
    datasets.config.HF_DATASETS_CACHE = Path(scratch.name)
    try:
        yield
    finally:
        datasets.config.HF_DATASETS_CACHE = cache
        scratch.cleanup()
        sys.dont_write_bytecode = bytecode
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)
        if bars:
            datasets.utils.logging.enable_progress_bar()
        prefix = str(folder.resolve())
        for name, module in list(sys.modules.items()):
            if str(getattr(module, "__file__", "") or "").startswith(prefix):
                sys.modules.pop(name, None)
        shutil.rmtree(folder / "__pycache__", ignore_errors=True)


def record_fingerprints(folder: Path, tasks: dict) -> str:
    """Add ``fingerprints`` and ``fingerprint_fields`` to each micro task's entry of ``tasks``: those the
    exported filter stamps on the chosen documents when the installed harness loads the task here, for a
    task whose dataset is local files; else None. Returns what was recorded, for the card."""
    from mbutils.micro.lm_eval_filter import FINGERPRINT, STAMP

    for entry in tasks.values():
        entry["fingerprints"], entry["fingerprint_fields"] = None, None
    resolved = {m: e for m, e in tasks.items() if e.get("config") is not None}
    if not resolved or not harness_installed():
        return ""
    configs = {m: merged_config(folder / e["include"]) for m, e in resolved.items()}
    local = [m for m, config in configs.items() if local_dataset(config)]
    remote = len(resolved) - len(local)
    why = [f"{remote} task(s) read their dataset from the Hugging Face Hub when run (or from files not found from "
           "here), which build-micro does not fetch, so score checks only that the logs it is given agree with each "
           "other on their documents"] if remote else []
    if local:
        with _quiet_harness(folder):
            try:
                from lm_eval.tasks import TaskManager

                loaded = TaskManager(include_path=str(folder), include_defaults=False).load(local)["tasks"]
            except Exception as err:  # noqa: BLE001 -- any failure of the harness or the dataset: nothing recorded
                loaded = {}
                why.append(f"the harness could not load the local one(s) here ({type(err).__name__})")
            for micro in local:
                task, entry = loaded.get(micro), tasks[micro]
                if task is None:
                    continue
                docs = list(task.eval_docs)
                split = task.config.test_split if task.has_test_docs() else task.config.validation_split
                stamped = {int(doc[STAMP]): doc[FINGERPRINT] for doc in docs if STAMP in doc and FINGERPRINT in doc}
                if sorted(stamped) != list(entry["docs"]):
                    why.append(f"{micro}'s dataset holds {len(docs)} documents, not the {entry['n_docs']} the bundle "
                               "was built on")
                    continue
                entry["fingerprints"] = [stamped[d] for d in entry["docs"]]
                entry["fingerprint_fields"] = list(task.dataset[split].column_names)
    done = sum(entry["fingerprints"] is not None for entry in tasks.values())
    return (f"the chosen documents' content fingerprints recorded for {done} of {len(tasks)} task(s)"
            + "".join(f"; {reason}" for reason in why))
