"""Judging estimators beyond the MDAD: paired differences in estimation error, and the signal-to-noise ratio.

Estimators of one experiment share their runs and targets, so their errors are compared pairwise: the
mean absolute error of A minus that of B, with a bootstrap over runs (each run's targets move together).
The signal-to-noise ratio follows Heineman et al. (2025): the spread of the models' true scores over
the noise of their estimates; here, per selector and size, the standard deviation of the targets' true
accuracies over the root mean squared estimation error, both on the seen half and pooled over runs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from mbutils.base.errors import ResultsError
from mbutils.methods.protocol import rng_for


def _per_run_error(results: pd.DataFrame, selector: str, split: str) -> pd.DataFrame:
    part = results[results["selector"].astype(str) == selector]
    if part.empty:
        raise ResultsError(f"selector {selector!r} is not in the results")
    truth = part[f"{split}_correct"] / part[f"n_{split}"]
    return part.assign(abs_error=100 * (part["estimate"] - truth).abs()).groupby(["size", "run"])["abs_error"].mean()


def error_difference(results: pd.DataFrame, a: str, b: str, *, split: str = "seen", n_boot: int = 2000,
                     seed: int = 0) -> pd.DataFrame:
    """Per size: mean absolute estimation error (points) of ``a`` and ``b``, their difference ``a - b`` and its
    95% interval from a bootstrap over runs (paired: both selectors' errors of a run are drawn together),
    and a verdict (lower / higher / within noise)."""
    ea, eb = _per_run_error(results, a, split), _per_run_error(results, b, split)
    both = pd.concat({"a": ea, "b": eb}, axis=1).dropna()
    rng = rng_for(seed, "estimator checks")
    rows = []
    for size, part in both.groupby(level="size"):
        diff = (part["a"] - part["b"]).to_numpy()
        draws = diff[rng.integers(0, len(diff), (n_boot, len(diff)))].mean(axis=1)
        low, high = np.quantile(draws, [0.025, 0.975])
        verdict = "lower" if high < 0 else "higher" if low > 0 else "within noise"
        rows.append({"size": int(size), "error_a": float(part["a"].mean()), "error_b": float(part["b"].mean()),
                     "difference": float(diff.mean()), "low": float(low), "high": float(high), "verdict": verdict,
                     "n_runs": len(diff)})
    return pd.DataFrame(rows)


def signal_to_noise(results: pd.DataFrame, split: str = "seen") -> pd.DataFrame:
    """Per selector and size: signal (standard deviation of the targets' true accuracies, points), noise
    (root mean squared estimation error, points) and their ratio, pooled over runs."""
    truth = 100 * results[f"{split}_correct"] / results[f"n_{split}"]
    table = results.assign(truth=truth, sq_error=(100 * results["estimate"] - truth) ** 2)
    out = table.groupby(["selector", "size"], sort=False).agg(signal=("truth", "std"), mse=("sq_error", "mean"))
    out["noise"] = np.sqrt(out.pop("mse"))
    out["snr"] = out["signal"] / out["noise"]
    return out.reset_index()


def snr_mdad_agreement(snr: pd.DataFrame, mdad: pd.DataFrame) -> tuple[float, int]:
    """Spearman correlation over selector x size cells between the SNR and the MDAD's reciprocal (cells whose
    MDAD is reached), and the number of cells: do the two measures rank the cells alike?"""
    both = snr.merge(mdad[["selector", "size", "mdad"]], on=["selector", "size"])
    both = both[np.isfinite(both["mdad"].astype(float)) & (both["mdad"].astype(float) > 0)]
    if len(both) < 3 or both["snr"].nunique() < 2 or both["mdad"].nunique() < 2:
        return float("nan"), len(both)  # a constant ranking has no correlation
    return float(spearmanr(both["snr"], 1.0 / both["mdad"].astype(float)).statistic), len(both)
