"""Is a results table whole? Every (run, selector, size) its experiment ran, each with all its targets.

A table with some runs or sizes deleted is still a table every metric can read, and its MDADs and
intervals look like results; they are not the experiment's. The expected grid comes from the
provenance (runs, selectors and sizes of each experiment, runs of a combination offset as
:func:`mbutils.base.provenance.combine` numbered them); a table without one is checked against
itself (every selector at every run and size any row names, the same number of targets in each), so
rows cut evenly from every group of such a table cannot be seen: keep a CSV's ``.provenance.json``.
"""

from __future__ import annotations

import pandas as pd

from mbutils.base.errors import ResultsError
from mbutils.base.provenance import records

GROUP = ["run", "selector", "size"]
#: Bounds on what a provenance record may promise (the command line's own limits).
MAX_RUNS, MAX_CELLS = 100_000, 100_000
PARTIAL_HINT = "pass --allow-partial to score what is there anyway (the output then says it is partial)"


def _targets(table: pd.DataFrame) -> int | None:
    """Target models per group the provenance promises (None: not recorded, or a named target set)."""
    counts = set()
    for record in records(table).values():
        protocol = record.get("protocol") if isinstance(record.get("protocol"), dict) else {}
        if protocol.get("target_set") is not None or not isinstance(protocol.get("n_targets"), int):
            return None
        counts.add(protocol["n_targets"])
    return counts.pop() if len(counts) == 1 else None


def _expected(table: pd.DataFrame) -> set[tuple[int, str, int]] | None:
    """The (run, selector, size) groups the provenance promises, or None without provenance."""
    own = records(table)
    if not own:
        return None
    grid = set()
    for record in own.values():
        try:
            runs, offset = record["protocol"]["n_runs"], record.get("run_offset", 0)
            sizes, selectors = list(record["sizes"]), [str(s) for s in record["selectors"]]
            ok = (isinstance(runs, int) and isinstance(offset, int) and all(isinstance(k, int) for k in sizes)
                  and 1 <= runs <= MAX_RUNS and 0 <= offset and 1 <= len(sizes) * len(selectors) <= MAX_CELLS)
        except (KeyError, TypeError, AttributeError):
            ok = False
        if not ok:
            raise ResultsError("its provenance record is malformed (protocol.n_runs, sizes or selectors missing, of "
                               f"the wrong type, or beyond {MAX_RUNS:,} runs); was it edited? Re-run the experiment, "
                               "or remove the record to check the table against itself")
        grid |= {(offset + r, sel, size) for r in range(runs) for sel in selectors for size in sizes}
    return grid


def _shown(groups) -> str:
    listed = sorted(groups)[:3]
    text = "; ".join(f"run {r}, {s}, size {k}" for r, s, k in listed)
    return text + (f" and {len(groups) - 3} more" if len(groups) > 3 else "")


def incompleteness(table: pd.DataFrame) -> str:
    """What is missing from ``table`` ('' when it is whole)."""
    counts = table.groupby(GROUP, sort=False).size()
    have = {(int(r), str(s), int(k)) for r, s, k in counts.index}
    expected = _expected(table)
    if expected is None:
        runs = {g[0] for g in have}
        cells = {(g[1], g[2]) for g in have}
        expected = {(r, s, k) for r in runs for s, k in cells}
    missing = expected - have
    problems = []
    if missing:
        problems.append(f"{len(missing)} of {len(expected)} (run, selector, size) groups are missing "
                        f"({_shown(missing)})")
    promised = _targets(table)
    if counts.nunique() > 1 or (promised is not None and int(counts.max()) != promised):
        full = promised if promised is not None else int(counts.max())
        short = counts[counts != full]
        (r, s, k), n = short.index[0], int(short.iloc[0])
        problems.append(f"{len(short)} group(s) hold another number of target models than the experiment's {full} "
                        f"(e.g. run {r}, {s}, size {k}: {n})")
    return "; ".join(problems)


def check_complete(table: pd.DataFrame, where: str, allow_partial: bool = False) -> str:
    """Refuse an incomplete table, naming ``where``; with ``allow_partial`` return a note saying what is
    missing instead ('' when the table is whole)."""
    try:
        missing = incompleteness(table)
    except ResultsError as err:
        raise ResultsError(f"{where}: {err}") from None
    if not missing:
        return ""
    if not allow_partial:
        raise ResultsError(f"{where}: the results are incomplete: {missing}. Were rows deleted, or files joined "
                           f"by hand? Re-run the experiment, or {PARTIAL_HINT}")
    return f"partial results ({where}): {missing}; every number below is computed from what is there"
