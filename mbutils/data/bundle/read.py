"""Loading a bundle: read each file once, report every problem, and build the Benchmark.

A bundle folder holds ``responses.csv`` (models x items, 0/1, empty = missing),
``items.csv`` (``item,subtask`` + optional columns), and optionally
``confidence.csv``, ``models.csv``, ``target_sets.json`` and ``provenance.json`` (see data/README.md).
Reading and the problem report are one pass (a :class:`Problem` names file, row and
column): finding the folder is :mod:`~mbutils.data.bundle.search`, each file's reader is
:mod:`~mbutils.data.bundle.responses`, :mod:`~mbutils.data.bundle.metadata` or
:mod:`~mbutils.data.bundle.record` (provenance.json, whose answer options
:mod:`~mbutils.data.bundle.options` checks), and writing lives in :mod:`mbutils.data.bundle.write`.

:func:`validate_bundle` also applies ``build-micro``'s rule to the lm-eval task names the items would
export under (:mod:`~mbutils.data.bundle.harness`, :mod:`~mbutils.data.bundle.tasknames`): what it
refuses there is an error of kind ``"export"``, which ``validate`` reports and loading does not need.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from mbutils.data.benchmark import Benchmark
from mbutils.base.errors import BundleError, StatementError
from mbutils.data.bundle.format import ITEMS, MISSING_POLICIES
from mbutils.data.bundle.harness import harness_for
from mbutils.data.bundle.options import provenance_options, with_options
from mbutils.data.bundle.metadata import read_confidence, read_items, read_models, read_target_sets
from mbutils.data.bundle.problems import Problem, ProblemLog, row_label
from mbutils.data.bundle.record import read_record
from mbutils.data.bundle.tasknames import item_documents, names_fault
from mbutils.data.bundle.responses import MISSING_CODE, Responses, missing_choices, missing_summary, read_responses
from mbutils.data.bundle.search import find_bundle
from mbutils.base.validation import check_choice


@dataclass
class _Parsed:
    responses: Responses
    subtasks: np.ndarray
    item_info: pd.DataFrame | None
    confidence: np.ndarray | None
    model_info: pd.DataFrame | None
    target_sets: dict[str, list[str]]
    #: provenance.json's answer options per item and their source (None: it gives none)
    options: tuple[np.ndarray, str] | None = None
    #: the line of items.csv giving each item (in the responses' order)
    item_lines: np.ndarray | None = None


def read_bundle(folder: Path) -> tuple[_Parsed | None, list[Problem]]:
    """Read every file once, collecting every problem; the parse is usable only without errors."""
    log = ProblemLog()
    resp = read_responses(folder, log)
    items = read_items(folder, resp, log)
    confidence = read_confidence(folder, resp, log)
    model_info = read_models(folder, resp, log)
    target_sets = read_target_sets(folder, resp, log)
    options = provenance_options(read_record(folder, log), None if items is None else items[0], log)
    if resp is None or items is None or any(p.severity == "error" for p in log):
        return None, list(log)
    return _Parsed(resp, items[0], items[1], confidence, model_info, target_sets, options, items[2]), list(log)


#: The kind of the problems only ``build-micro`` (and ``score``) would refuse: loading does not need them fixed.
EXPORT = "export"


def _export_problems(folder: Path, parsed: _Parsed) -> list[Problem]:
    """What ``build-micro`` would refuse before any work: a harness statement it cannot use (named by its
    file and key or column), or task names read off the item ids that cannot be exported (named by rows)."""
    items, subtasks = parsed.responses.items, parsed.subtasks
    try:
        harness = harness_for(folder, parsed.item_info, items, subtasks)
    except StatementError as err:
        return [Problem(err.file, err.location, err.what, "error", EXPORT)]
    if harness is not None and harness.unavailable:
        return []
    fault = names_fault(item_documents(items, subtasks, harness))
    if fault is None:
        return []
    positions, what = fault
    rows = [row_label(int(parsed.item_lines[i]), "item", str(items[i])) for i in positions]
    where = " and ".join(rows) if len(rows) < 2 else \
        f"rows {' and '.join(str(parsed.item_lines[i]) for i in positions)} (items " \
        f"{' and '.join(ascii(str(items[i]))[:80] for i in positions)})"
    how = "build-micro reads each item's lm-eval task off its id ('task:doc_id', or '<subtask>_<number>')" \
        if harness is None or harness.tasks is None else \
        f"build-micro exports the items under the tasks of {harness.source}"
    return [Problem(ITEMS, where, f"{how}, and refuses this bundle: {what}", "error", EXPORT)]


def validate_bundle(name_or_dir: str | Path) -> list[Problem]:
    """Every problem of a bundle (errors and warnings), in file order; empty when all is well. A bundle
    that loads is also checked the way ``build-micro`` checks it first (problems of kind ``"export"``).

    Parameters
    ----------
    name_or_dir : str or pathlib.Path
        A bundle's name on the data path, or its folder.

    Returns
    -------
    list of Problem
        Each names its file, row and column, what is wrong and its severity (``"error"`` or
        ``"warning"``); what ``python -m mbutils validate`` prints.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from mbutils import validate_bundle
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     folder = Path(tmp) / "tiny"
    ...     folder.mkdir()
    ...     _ = (folder / "responses.csv").write_text("model,q1,q2\\nm1,1,0\\nm2,1,2\\n")
    ...     _ = (folder / "items.csv").write_text("item,subtask\\nq1,a\\nq2,a\\n")
    ...     for problem in validate_bundle(folder):
    ...         print(problem)
    responses.csv, row 3 (model 'm2'), column 'q2': value '2' is not 0 or 1
    """
    folder = find_bundle(name_or_dir)
    parsed, problems = read_bundle(folder)
    if parsed is None:
        return problems
    return problems + _export_problems(folder, parsed)


def load_bundle(name_or_dir: str | Path, *, missing: str = "error") -> Benchmark:
    """Load a bundle as a complete :class:`Benchmark`; ``missing`` says how to resolve empty cells.

    ``missing``: ``"error"`` (refuse, naming the incomplete models), ``"drop_models"`` or
    ``"drop_items"``. Simulated bundles (``synthetic-*``) are generated by
    :func:`mbutils.load_benchmark`, which also accepts everything this accepts.

    Parameters
    ----------
    name_or_dir : str or pathlib.Path
        A bundle's name on the data path, or its folder (see :func:`save_bundle`).
    missing : {"error", "drop_models", "drop_items"}, default "error"
        What to do with empty cells of ``responses.csv``.

    Returns
    -------
    Benchmark
        The bundle's models, items, answers and metadata, named after its folder.

    Raises
    ------
    MbutilsError
        A ``BundleError`` listing every problem :func:`validate_bundle` finds, when there are errors.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from mbutils import load_bundle
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     folder = Path(tmp) / "tiny"
    ...     folder.mkdir()
    ...     _ = (folder / "responses.csv").write_text("model,q1,q2,q3\\nm1,1,0,1\\nm2,1,1,\\n")
    ...     _ = (folder / "items.csv").write_text("item,subtask\\nq1,a\\nq2,a\\nq3,b\\n")
    ...     bench = load_bundle(folder, missing="drop_items")  # m2 has no answer to q3
    >>> bench.name, list(bench.items), bench.correct.tolist()
    ('tiny', ['q1', 'q2'], [[1, 0], [1, 1]])
    """
    check_choice(missing, MISSING_POLICIES, "missing", BundleError)
    folder = find_bundle(name_or_dir)
    parsed, problems = read_bundle(folder)
    errors = [p for p in problems if p.severity == "error"]
    if parsed is None or errors:
        listed = "\n".join(f"  {p}" for p in errors)
        raise BundleError(
            f"bundle '{folder.name}' ({folder}) cannot be loaded; {len(errors)} problem(s):\n{listed}\n"
            f"Fix these and check again with: python -m mbutils validate {folder}"
        )
    resp = parsed.responses
    rows, cols = _keep(resp, missing, folder)
    models = resp.models[rows]
    kept = set(models)
    item_info = None if parsed.item_info is None else parsed.item_info.iloc[cols].reset_index(drop=True)
    options = None if parsed.options is None else (parsed.options[0][cols], parsed.options[1])
    item_info = with_options(item_info, options, resp.items[cols], parsed.subtasks[cols])
    model_info = None if parsed.model_info is None else parsed.model_info.iloc[rows].reset_index(drop=True)
    return Benchmark(
        name=folder.name,
        correct=resp.codes[np.ix_(rows, cols)],
        models=models,
        items=resp.items[cols],
        subtasks=parsed.subtasks[cols],
        confidence=None if parsed.confidence is None else parsed.confidence[np.ix_(rows, cols)],
        item_info=item_info,
        model_info=model_info,
        target_sets={k: [m for m in v if m in kept] for k, v in parsed.target_sets.items()},
        origin=str(folder),
    )


def _keep(resp: Responses, missing: str, folder: Path) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the rows and columns kept under the missing-cell policy."""
    holes = resp.codes == MISSING_CODE
    rows, cols = np.arange(holes.shape[0]), np.arange(holes.shape[1])
    if not holes.any():
        return rows, cols
    if missing == "error":
        raise BundleError(
            f"bundle '{folder.name}' ({folder}) is incomplete: "
            f"{missing_summary(resp, holes)} {missing_choices(holes)}"
        )
    if missing == "drop_models":
        rows = np.flatnonzero(~holes.any(axis=1))
    else:
        cols = np.flatnonzero(~holes.any(axis=0))
    if rows.size == 0 or cols.size == 0:
        other = "drop_items" if missing == "drop_models" else "drop_models"
        every = "model" if rows.size == 0 else "item"
        raise BundleError(f"bundle '{folder.name}': missing={missing!r} leaves nothing "
                          f"(every {every} misses a cell); try missing={other!r}")
    return rows, cols
