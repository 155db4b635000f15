"""The steps of the chapter "Beyond the paper": estimators under the random and the frontier split.

For every benchmark of the page, the same selectors (random sampling with the plain mean, with a
regression and with the difference estimator, and the learners the page names) run under the paper's
random split and under the frontier split (targets from the strongest models, sources all weaker).
Each estimator is compared with random sampling pairwise on the runs they share: its MDAD
(:func:`mbutils.evaluate.paired.compare_selectors`) and its estimation error
(:func:`mbutils.evaluate.estimator_checks.error_difference`).
"""

from __future__ import annotations

import pandas as pd

from mbutils.base.names import label
from mbutils.methods.protocol import fit_frontier
from mbutils.evaluate.claims_paired import comparison_records
from mbutils.evaluate.estimator_checks import error_difference
from mbutils.evaluate.metrics import mdad_table, summary_table
from mbutils.evaluate.paired import compare_selectors

SPLITS = ("random split", "frontier split")


def split_results(settings: dict, selectors, frontier: float) -> dict[tuple[str, str], pd.DataFrame]:
    """(benchmark title, split) -> the results of ``selectors`` (cached; the frontier's protocol fitted to
    the pool the split leaves)."""
    out = {}
    for s in settings.values():
        out[s.page_title, SPLITS[0]] = s.results(list(selectors))
        fitted = fit_frontier(s.benchmark, s.protocol, frontier)
        out[s.page_title, SPLITS[1]] = s.results(list(selectors), frontier=fitted.frontier, target_set=None,
                                                  n_targets=fitted.n_targets, n_sources=fitted.n_sources)
    return out


def estimator_table(runs: dict, threshold: float, mdads: dict | None = None) -> pd.DataFrame:
    """Per benchmark, split, selector and size: estimation error (points) and MDAD (points, the book's;
    NaN, shown as 'not reached', when the fitted curve never reaches ``threshold``), with the MDAD's 95%
    interval as the page's table shows it (``MDAD [95%]``).

    ``mdads``: (benchmark title, split) -> ``mdad_table(results)`` when the page has them already (its
    figure draws them), so table and figure show the same numbers; else they are computed here."""
    from mbutils.book.findings.reports import mdad_cell

    rows = []
    for (title, split), res in runs.items():
        error = summary_table(res).set_index(["selector", "size"])["error"]
        table = mdads[title, split] if mdads is not None else mdad_table(res, threshold=threshold)
        mdad = table.set_index(["selector", "size"])
        for (selector, size), value in error.items():
            row = mdad.loc[(selector, size)]
            rows.append({"benchmark": title, "split": split, "method": label(selector), "k": int(size),
                         "error (points)": float(value), "MDAD (points)": float(row["mdad"]),
                         "MDAD [95%]": mdad_cell(row)})
    out = pd.DataFrame(rows)
    out.attrs["mdad_columns"] = ["MDAD (points)"]
    return out


def estimators_versus_random(runs: dict, selector: str, threshold: float, n_boot: int = 2000) -> dict:
    """split -> benchmark -> {"mdad": records of the paired MDAD comparison, "error": records of the paired
    error comparison} of ``selector`` against random sampling."""
    out: dict = {split: {} for split in SPLITS}
    for (title, split), res in runs.items():
        mdad = compare_selectors(res, selector, "random", threshold=threshold, n_boot=n_boot)
        error = error_difference(res, selector, "random")
        out[split][title] = {"mdad": comparison_records(mdad),
                             "error": error[["size", "verdict", "difference", "low", "high", "n_runs"]]
                             .to_dict("records")}
    return out
