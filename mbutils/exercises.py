"""Small helpers for the chapters' exercises (see chapters/teaching.md).

Only what a solution needs and the package does not already offer: how often a
micro-benchmark orders each pair of targets wrongly, and the expected bias of the plain
(equal-subtask-weight) stratified mean.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def pair_misorder(results: pd.DataFrame, selector: str, size: int, *, split: str = "seen") -> pd.DataFrame:
    """Per pair of target models: runs seen together, runs ordered wrongly, rate, mean true gap.

    A pair is ordered wrongly in a run when the sign of the estimate difference differs
    from the sign of the true (``split``) accuracy difference; pairs tied on the truth are
    left out. ``gap`` is the mean absolute true gap in points. Sorted by rate, then gap.
    """
    truth = f"{split}_accuracy"
    rows = results[(results["selector"] == selector) & (results["size"] == int(size))]
    out: dict[tuple[str, str], list] = {}
    for _, run in rows.groupby("run"):
        run = run.sort_values("model")
        models = run["model"].astype(str).to_numpy()
        est, true = run["estimate"].to_numpy(float), run[truth].to_numpy(float)
        i, j = np.triu_indices(len(models), 1)
        dt = true[i] - true[j]
        wrong = np.sign(est[i] - est[j]) != np.sign(dt)
        for a, b, w, g in zip(i, j, wrong, dt):
            if g == 0:
                continue
            cell = out.setdefault((models[a], models[b]), [0, 0, 0.0])
            cell[0] += 1
            cell[1] += int(w)
            cell[2] += abs(g) * 100
    table = pd.DataFrame([(a, b, n, w, w / n, g / n) for (a, b), (n, w, g) in out.items()],
                         columns=["model_a", "model_b", "runs", "wrong", "rate", "gap"])
    return table.sort_values(["rate", "gap"], ascending=[False, True], ignore_index=True)


def plain_stratified_bias(correct: np.ndarray, subtasks: np.ndarray) -> np.ndarray:
    """Expected bias (points) per model of an equal-weight subtask mean against the item mean.

    The expectation of a plain mean over equally many random items per subtask is the
    unweighted mean of the subtask accuracies; the target is the item-weighted mean.
    """
    correct = np.asarray(correct, dtype=np.float64)
    subtasks = np.asarray(subtasks, dtype=np.int64)
    per_subtask = np.stack([correct[:, subtasks == s].mean(axis=1) for s in np.unique(subtasks)], axis=1)
    return 100 * (per_subtask.mean(axis=1) - correct.mean(axis=1))
