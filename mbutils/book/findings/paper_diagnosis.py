"""Diagnosing a departure from the paper: our estimates' bias, and what each selector picks.

When our numbers and the paper's differ, these say why: a bias shared by a run's targets
leaves rankings intact while the within-run spread breaks pairs, and a selector's picks may
lean to easy, weakly discriminating items or away from the seen half's subtask mix.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from mbutils.methods.runs import choose, run_data
from mbutils.methods.selectors.spec import as_selector


# ----------------------------------------------------------------------- diagnosing a departure
def estimation_bias(results: pd.DataFrame) -> pd.DataFrame:
    """Per selector x size: mean signed error (bias), and the spread of errors within a run.

    A bias shared by all targets of a run leaves every ranking intact; what breaks pairs is
    the within-run spread, so both are shown (points).
    """
    err = 100.0 * (results["estimate"] - results["seen_accuracy"])
    within = err - err.groupby([results["selector"], results["size"], results["run"]]).transform("mean")
    frame = results[["selector", "size"]].assign(err=err, within=within, abs_err=err.abs())
    out = frame.groupby(["selector", "size"], sort=False).agg(
        bias=("err", "mean"), within_run_sd=("within", "std"), error=("abs_err", "mean")).reset_index()
    return out


def _item_total_correlation(correct: np.ndarray) -> np.ndarray:
    """Per item: correlation of its 0/1 column with the models' mean score (0 for constant items)."""
    x = correct - correct.mean(axis=0)
    s = correct.mean(axis=1) - correct.mean()
    denom = np.sqrt((x ** 2).sum(axis=0) * (s ** 2).sum())
    return np.divide(x.T @ s, denom, out=np.zeros(correct.shape[1]), where=denom > 0)


def pick_profile(benchmark, protocol, selectors, k: int, runs: int = 5, low: float = 0.1):
    """What each selector picks at size ``k`` in the first ``runs`` runs, beside the seen half.

    Returns ``(summary, mix)``: per selector the picks' mean source accuracy (points),
    their mean discrimination (item-total correlation among the run's targets: how well an
    item separates strong from weak targets) and the share below ``low``; and per subtask
    the share of the seen half and of each selector's picks. Same generators as the experiment.
    """
    names = list(benchmark.subtask_names)
    rows, mixes = [], {s: [] for s in selectors}
    seen_mix = []
    for run in range(min(runs, protocol.n_runs)):
        r, source = run_data(benchmark, protocol, run)
        easiness = 100.0 * source.correct.mean(axis=0)
        disc = _item_total_correlation(np.asarray(benchmark.correct[r.targets][:, r.seen], dtype=np.float64))
        seen_mix.append(np.bincount(source.subtasks, minlength=len(names)) / source.n_items)
        rows.append({"selector": "all seen items", "run": run, "source accuracy": easiness.mean(),
                     "discrimination": disc.mean(), f"share below {low:g}": np.mean(disc < low)})
        for name in selectors:
            items = choose(as_selector(name), source, k, seed=protocol.seed, run=run)[1].items  # the experiment's own pick
            mixes[name].append(np.bincount(source.subtasks[items], minlength=len(names)) / len(items))
            rows.append({"selector": name, "run": run, "source accuracy": easiness[items].mean(),
                         "discrimination": disc[items].mean(), f"share below {low:g}": np.mean(disc[items] < low)})
    summary = pd.DataFrame(rows).groupby("selector", sort=False).mean(numeric_only=True).drop(columns="run")
    mix = pd.DataFrame({"subtask": names, "seen half": np.mean(seen_mix, axis=0),
                        **{name: np.mean(m, axis=0) for name, m in mixes.items()}})
    return summary.reset_index(), mix
