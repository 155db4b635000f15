"""The tidy results table of an experiment: its columns, the checks on its values, and its target pairs.

One row per run x selector x size x target; every measure starts from :func:`iter_groups`,
which checks the table and yields, per selector and size, all target pairs of all runs as
arrays (runs as rows).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import numpy as np
import pandas as pd

from mbutils.base.errors import ResultsError
from mbutils.base.provenance import check_unmixed

RESULT_COLUMNS = (
    "run", "selector", "size", "model", "estimate",
    "seen_correct", "n_seen", "unseen_correct", "n_unseen",
)
#: The results columns that hold names: read from CSV as text, whatever they look like ("001", "NaN").
RESULT_TEXT_COLUMNS = ("selector", "model", "target_set", "experiment")


@dataclass(frozen=True)
class GroupPairs:
    """All target pairs of one selector x size, runs as rows: shapes (runs, pairs)."""

    runs: np.ndarray
    n_items: np.ndarray       # (runs,) items in the half the truth is taken from
    est_diff: np.ndarray      # (runs, pairs) estimate_i - estimate_j
    true_diff: np.ndarray     # (runs, pairs) correct_i - correct_j (integers)
    estimates: np.ndarray     # (runs, targets)
    truth: np.ndarray         # (runs, targets) accuracy as a fraction
    models: np.ndarray | None = None  # (runs, targets) the targets' names, in the order of the columns

    @property
    def n_distinct(self) -> int:
        """Distinct unordered target pairs over all runs: a fixed target set repeats its pairs in every
        run, random targets mostly do not (the pairs x runs count says nothing about how many pairs the
        verdicts are about)."""
        if self.models is None:
            return int(self.true_diff.size)
        codes, _ = pd.factorize(self.models.ravel())
        codes = codes.reshape(self.models.shape).astype(np.int64)
        i, j = np.triu_indices(codes.shape[1], k=1)
        lo, hi = np.minimum(codes[:, i], codes[:, j]), np.maximum(codes[:, i], codes[:, j])
        return int(len(np.unique(lo * (int(codes.max()) + 1) + hi)))


def check_results(results: pd.DataFrame) -> None:
    missing = [c for c in RESULT_COLUMNS if c not in results.columns]
    if missing:
        raise ResultsError(
            f"results table lacks columns {', '.join(missing)}; "
            "it must come from `python -m mbutils experiment`"
        )
    if results.empty:
        raise ResultsError("results table is empty")
    check_unmixed(results)
    _check_values(results)


def _first_row(mask) -> str:
    """'row N' of the first True in ``mask``, counting the header as row 1 (as a spreadsheet does)."""
    return f"row {int(np.flatnonzero(np.asarray(mask))[0]) + 2}"


def _shown(value) -> str:
    """A cell as a message shows it: numbers plainly (nan, inf, 55), anything else quoted."""
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return f"{float(value):g}"
    return repr(str(value))


def _check_values(results: pd.DataFrame) -> None:
    """Refuse values no experiment writes, naming the column and the first row: numbers computed from
    them (an MDAD moved by one row's impossible count) would look like results."""
    no_selector = results["selector"].isna() | (results["selector"].astype(str).str.strip() == "")
    if no_selector.any():
        raise ResultsError(f"results table: {_first_row(no_selector)} has no selector; every row needs one")
    numbers = {}
    for column in ("run", "size", "estimate", "seen_correct", "n_seen", "unseen_correct", "n_unseen"):
        values = pd.to_numeric(results[column], errors="coerce").to_numpy(dtype=np.float64)
        bad = ~np.isfinite(values)
        if bad.any():
            raise ResultsError(f"results table: column {column!r}, {_first_row(bad)} holds "
                               f"{_shown(results[column].iloc[int(np.flatnonzero(bad)[0])])}, not a finite number")
        if column != "estimate" and (values != np.round(values)).any():
            off = values != np.round(values)
            raise ResultsError(f"results table: column {column!r}, {_first_row(off)} holds "
                               f"{_shown(values[off][0])}; it must be a whole number")
        numbers[column] = values
    est = numbers["estimate"]
    # some estimators extrapolate a little past 0 or 1 (a weighted or IRT estimate of 1.13 is a result);
    # a table of percentages is not: its typical estimate is tens, not a share
    if np.median(np.abs(est)) > 1.5:
        raise ResultsError(f"results table: column 'estimate' looks like percentages (median {np.median(est):g}, "
                           f"e.g. {_first_row(np.abs(est) > 1.5)} holds {_shown(est[np.abs(est) > 1.5][0])}); "
                           "estimates are shares of items, around 0 to 1")
    checks = [(numbers["run"] < 0, "'run' is negative"), (numbers["size"] < 1, "'size' is below 1"),
              (numbers["n_seen"] < 1, "'n_seen' is below 1"), (numbers["n_unseen"] < 0, "'n_unseen' is negative"),
              ((numbers["seen_correct"] < 0) | (numbers["seen_correct"] > numbers["n_seen"]),
               "'seen_correct' is not between 0 and 'n_seen'"),
              ((numbers["unseen_correct"] < 0) | (numbers["unseen_correct"] > numbers["n_unseen"]),
               "'unseen_correct' is not between 0 and 'n_unseen'")]
    for bad, what in checks:
        if bad.any():
            raise ResultsError(f"results table: {_first_row(bad)}: {what}; it must come from "
                               "`python -m mbutils experiment`")
    for group_column in ("n_seen", "n_unseen"):
        per_run = pd.Series(numbers[group_column]).groupby(numbers["run"]).nunique()
        if (per_run > 1).any():
            raise ResultsError(f"results table: run {per_run.index[per_run > 1][0]:g} has different "
                               f"'{group_column}' values; one run judges every target on the same items")


def _split_columns(split: str) -> tuple[str, str]:
    if split not in ("seen", "unseen"):
        raise ResultsError(f"split must be 'seen' or 'unseen', got {split!r}")
    return f"{split}_correct", f"n_{split}"


def iter_groups(results: pd.DataFrame, split: str = "seen", selector: str | None = None
                ) -> Iterator[tuple[tuple[str, int], GroupPairs]]:
    """Yield ((selector, size), pairs) in table order of first appearance (only ``selector``'s when given).

    The groups are cut from a frame of the needed columns without the table's ``attrs``: pandas
    deep-copies ``attrs`` (the provenance) on every operation, which cost more than the grouping."""
    check_results(results)
    correct_col, n_col = _split_columns(split)
    columns = ["selector", "size", "run", "model", "estimate", correct_col, n_col]
    frame = pd.DataFrame({c: results[c].to_numpy() for c in columns})
    if selector is not None:
        frame = frame[frame["selector"].to_numpy() == selector]
    for (selector, size), group in frame.groupby(["selector", "size"], sort=False):
        group = group.sort_values(["run", "model"], kind="stable")
        runs, counts = np.unique(group["run"].to_numpy(), return_counts=True)
        if (counts != counts[0]).any():
            raise ResultsError(f"{selector}, size {size}: runs have different numbers of targets")
        if counts[0] < 2:
            raise ResultsError(f"{selector}, size {size}: each run has {counts[0]} target model; "
                               "at least 2 per run are needed to compare pairs")
        shape = (len(runs), counts[0])
        est = group["estimate"].to_numpy(dtype=np.float64).reshape(shape)
        cor = group[correct_col].to_numpy(dtype=np.int64).reshape(shape)
        n_items = group[n_col].to_numpy(dtype=np.int64).reshape(shape)[:, 0]
        i, j = np.triu_indices(shape[1], k=1)
        yield (selector, int(size)), GroupPairs(
            runs=runs,
            n_items=n_items,
            est_diff=est[:, i] - est[:, j],
            true_diff=cor[:, i] - cor[:, j],
            estimates=est,
            truth=cor / n_items[:, None],
            models=group["model"].to_numpy().reshape(shape),
        )
