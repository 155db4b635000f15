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
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import yaml

from mbutils.base.errors import BundleError
from mbutils.methods.selectors.base import MicroBenchmark
from mbutils.micro.lm_eval_task import (HEADER, SUFFIX, NotDocuments, check_task_name, harness_installed,
                                          harness_version, item_documents, normalised, write_lm_eval_tasks)

GROUP_FILE = "_group.yaml"
#: The metric a bundle that does not say is read with (lm-eval's multiple-choice accuracy).
DEFAULT_METRIC = "acc"
INSTALL = "pip install -r requirements-harness.txt (lm-eval==0.4.13)"


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
    unresolved = sorted(m for m, e in tasks.items() if not Path(e["include"]).is_absolute())
    check = check_indexed(folder, [m for m in tasks if m not in unresolved], name)
    return {**out, "lm_eval_tasks": tasks, "lm_eval_check": check,
            "lm_eval_group": {"name": name, "tasks": list(tasks), "metric": metric or DEFAULT_METRIC,
                              "weight_by_size": weight_by_size, "exact": exact, "unresolved": unresolved}}
