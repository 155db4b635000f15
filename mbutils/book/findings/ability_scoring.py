"""Accuracy scoring against ability scoring of the same adaptive tests, by the measures of order.

Fluid Benchmarking (Hofmann et al., 2025) ranks models by their IRT ability rather than by an
accuracy. In an experiment that runs :class:`~mbutils.methods.selectors.adaptive.AdaptiveFisher`
beside :class:`~mbutils.methods.selectors.adaptive.AdaptiveAbility`, every target took one adaptive
test, scored twice: by its predicted accuracy on the seen half (*accuracy scoring*) and by its
ability (*ability scoring*, the percentile of its composite ability, an increasing map of it).
:func:`scoring_comparison` compares the two, per size, by what a ranking can be judged by:

* ``tau``: Kendall tau-b between the scores and the targets' seen accuracies, the mean over runs
  (the ``tau`` of :func:`mbutils.evaluate.metrics.summary_table`);
* ``agreement``: the share of target pairs, pooled over runs, that the scores order as their seen
  accuracies do (pairs tied on the seen half are left out: they have no order to agree with; an
  estimated tie disagrees);
* ``mdad``: the MDAD (points; the book's, the monotone fit), from :func:`mbutils.evaluate.paired.compare_selectors`;
* ``error``: the mean absolute estimation error in accuracy points, for accuracy scoring only. An
  ability is not on the accuracy scale: ability scoring gives no error, no interval in accuracy
  points and no score that means the same under another fit (its scale is the fit's), only an order.

The two scorings share runs, targets and tests, so each difference (ability minus accuracy) has a
paired interval: a bootstrap over runs for tau and agreement (both scorings' values of a drawn run
move together), and ``compare_selectors``' bootstrap over runs for the MDAD. Every
interval is pointwise (95% each); :func:`scoring_claim` says how many comparisons a page makes and
how many differences survive Holm's family-wise control (:func:`mbutils.evaluate.claims_paired.family_note`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from mbutils.base.errors import ResultsError
from mbutils.evaluate.claim import Claim
from mbutils.evaluate.claims_paired import RESOLUTION, family_note
from mbutils.evaluate.pair_metrics import kendall_tau_b, pair_agreement
from mbutils.evaluate.noise import MIN_PAIRS, NON_INFERIOR, TOO_FEW, state as noise_state
from mbutils.evaluate.paired import BETTER, POWER_80, UNKNOWN, WITHIN, WORSE, compare_selectors
from mbutils.evaluate.results_table import iter_groups
from mbutils.methods.protocol import rng_for
from mbutils.methods.selectors.adaptive import AdaptiveAbility

ACCURACY, ABILITY = "adaptive_fisher", "adaptive_ability"
#: The measures of order both scorings have; ``error`` (accuracy scoring only) is reported beside them.
MEASURES = ("tau", "agreement", "mdad")
#: Verdict of a measure ability scoring cannot give.
UNDEFINED = "not defined"


def ability_selector(**params):
    """The ability-scored twin of ``adaptive_fisher`` (same parameters, the very same tests in one experiment)."""
    return AdaptiveAbility(**params)


def _groups(results: pd.DataFrame, selector: str) -> dict:
    found = {size: pairs for (_, size), pairs in iter_groups(results, "seen", selector)}
    if not found:
        raise ResultsError(f"selector {selector!r} is not in the results")
    return found


def run_measures(results: pd.DataFrame, selector: str) -> dict[int, dict[str, np.ndarray]]:
    """Per size, each run's Kendall tau-b, agreeing and counted pairs (truth ties left out) and error.

    ``error`` is the mean absolute difference of the scores and the seen accuracies in points, which
    is an estimation error only for a score on the accuracy scale.
    """
    out = {}
    for size, pairs in _groups(results, selector).items():
        agrees, counted = pair_agreement(pairs.est_diff, pairs.true_diff, "exclude")
        out[size] = {"runs": pairs.runs, "tau": kendall_tau_b(pairs.estimates, pairs.truth),
                     "agree": (agrees & counted).sum(axis=1).astype(float), "counted": counted.sum(axis=1).astype(float),
                     "error": 100 * np.abs(pairs.estimates - pairs.truth).mean(axis=1)}
    return out


def _p_value(draws: np.ndarray) -> float:
    """Two-sided bootstrap p-value of no difference (draws at 0 count half to each side)."""
    usable = draws[np.isfinite(draws)]
    if not len(usable):
        return float("nan")
    below = (usable < 0).mean() + 0.5 * (usable == 0).mean()
    return float(min(1.0, 2.0 * min(below, 1.0 - below)))


def _paired_runs(stat, a: dict, b: dict, n_boot: int, rng) -> dict:
    """``stat(measures, run weights)`` of both scorings, their difference b - a, and its run-bootstrap interval."""
    n_runs = len(a["runs"])
    weights = np.vstack([np.ones(n_runs), rng.multinomial(n_runs, np.full(n_runs, 1.0 / n_runs), size=n_boot)])
    va, vb = stat(a, weights), stat(b, weights)
    draws = (vb - va)[1:]
    finite = draws[np.isfinite(draws)]
    low, high = np.quantile(finite, [0.025, 0.975]) if len(finite) else (np.nan, np.nan)
    se = float(np.std(finite, ddof=1)) if len(finite) > 2 else np.nan
    return {"accuracy": float(va[0]), "ability": float(vb[0]), "difference": float(vb[0] - va[0]),
            "low": float(low), "high": float(high), "p_value": _p_value(draws),
            "detectable": POWER_80 * se if np.isfinite(se) else np.nan, "n_runs": n_runs}


def _mean_tau(m: dict, weights: np.ndarray) -> np.ndarray:
    """Mean tau over the (weighted) runs whose tau exists, as summary_table averages it."""
    ok = np.isfinite(m["tau"])
    w = weights * ok
    with np.errstate(invalid="ignore", divide="ignore"):
        return (w @ np.where(ok, m["tau"], 0.0)) / w.sum(axis=1)


def _pooled_agreement(m: dict, weights: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return (weights @ m["agree"]) / (weights @ m["counted"])


def _verdict(low: float, high: float, higher_is_better: bool) -> str:
    if not (np.isfinite(low) and np.isfinite(high)):
        return UNKNOWN
    if low > 0:
        return BETTER if higher_is_better else WORSE
    if high < 0:
        return WORSE if higher_is_better else BETTER
    return WITHIN


def scoring_comparison(results: pd.DataFrame, accuracy: str = ACCURACY, ability: str = ABILITY, *,
                       threshold: float = 0.8, n_boot: int = 400, seed: int = 0) -> pd.DataFrame:
    """Per size and measure: accuracy scoring, ability scoring, their paired difference and a verdict.

    Parameters
    ----------
    results : pandas.DataFrame
        One experiment holding both scorings of the same tests (``accuracy`` and ``ability``).
    threshold : float, default 0.8
        The MDAD's agreement threshold.
    n_boot : int, default 400
        Bootstrap draws of every paired interval.
    seed : int, default 0
        Seed of the bootstraps.

    Returns
    -------
    pandas.DataFrame
        One row per size and measure (``tau``, ``agreement``, ``mdad``, then ``error``): ``accuracy``
        and ``ability`` (the measure of each scoring; ``error`` of ability scoring is NaN),
        ``difference`` (ability minus accuracy), its pointwise 95% paired interval ``low``, ``high``,
        ``verdict`` for ability scoring (``better``: higher tau or agreement, lower MDAD beyond the
        noise; ``worse``; ``within noise``; ``cannot tell``; ``not defined`` for the error),
        ``p_value``, ``detectable`` (the difference the comparison had 80% power to see) and ``n_runs``.
        Tau and agreement are fractions, MDAD and error points.

    Examples
    --------
    >>> import mbutils
    >>> from mbutils.book.findings.ability_scoring import ability_selector, scoring_comparison
    >>> bench = mbutils.load_benchmark("synthetic-gpqa")
    >>> protocol = mbutils.Protocol(n_sources=60, n_targets=20, n_runs=3)
    >>> res = mbutils.run_experiment(bench, ["adaptive_fisher", ability_selector()], [25], protocol, progress=False)
    >>> table = scoring_comparison(res, n_boot=100)
    >>> table["measure"].tolist(), bool(table["ability"].isna().iloc[-1])
    (['tau', 'agreement', 'mdad', 'error'], True)
    """
    ma, mb = run_measures(results, accuracy), run_measures(results, ability)
    rng = rng_for(seed, "ability scoring")
    mdad = compare_selectors(results, ability, accuracy, threshold=threshold, n_boot=max(int(n_boot), 50), seed=seed)
    mdad = mdad.set_index("size")
    rows = []
    for size in sorted(set(ma) & set(mb)):
        a, b = ma[size], mb[size]
        if not np.array_equal(a["runs"], b["runs"]):
            raise ResultsError("the two scorings do not share their runs: score the tests of one experiment twice")
        for measure, stat in (("tau", _mean_tau), ("agreement", _pooled_agreement)):
            row = _paired_runs(stat, a, b, n_boot, rng)
            rows.append({"size": size, "measure": measure, **row,
                         "verdict": _verdict(row["low"], row["high"], higher_is_better=True)})
        if size in mdad.index:
            m = mdad.loc[size]
            rows.append({"size": size, "measure": "mdad", "accuracy": m["mdad_b"], "ability": m["mdad_a"],
                         **{k: m[k] for k in ("difference", "low", "high", "verdict", "p_value", "detectable")},
                         "n_runs": int(m["n_runs"])})
        rows.append({"size": size, "measure": "error", "accuracy": float(a["error"].mean()), "ability": np.nan,
                     "difference": np.nan, "low": np.nan, "high": np.nan, "verdict": UNDEFINED,
                     "p_value": np.nan, "detectable": np.nan, "n_runs": len(a["runs"])})
    out = pd.DataFrame(rows, columns=["size", "measure", "accuracy", "ability", "difference", "low", "high",
                                      "verdict", "p_value", "detectable", "n_runs"])
    out.attrs.update(accuracy=accuracy, ability=ability, threshold=float(threshold), n_boot=int(n_boot))
    return out


def comparison_rows(tables: dict) -> list[dict]:
    """The paired comparisons of several :func:`scoring_comparison` tables (benchmark -> table) as
    JSON-able records, the error rows (no comparison) left out."""
    rows = []
    for bench, table in tables.items():
        part = table[table["measure"].isin(MEASURES)].astype(object)
        for r in part.where(pd.notna(part), None).to_dict("records"):
            rows.append({"benchmark": bench, **{k: (float(v) if isinstance(v, (float, np.floating)) else v)
                                                for k, v in r.items()}})
    return rows


def _powered(row: dict, resolution: float) -> bool:
    """Whether the comparison had 80% power to see ``resolution`` points; a bootstrap whose every draw gave
    the same difference (both scorings ordering alike throughout) shows no spread to judge the power by."""
    d = row.get("detectable")
    return d is not None and np.isfinite(float(d)) and 0 < float(d) <= resolution


def scoring_claim(rows: list[dict], resolution: float = RESOLUTION) -> Claim:
    """How ability scoring compares with accuracy scoring over the comparisons of ``rows``
    (:func:`comparison_rows`): counts per measure and verdict, the MDAD comparisons within noise that
    are also within ``resolution`` points (the noise rule's non-inferiority test), and the family note
    (Holm's control over all the comparisons, few runs)."""
    inputs = {"rows": rows, "resolution": resolution}
    if not rows:
        return Claim("no adaptive tests were scored both ways", "scoring_claim", inputs)
    names = {"tau": "Kendall tau", "agreement": "pairwise agreement", "mdad": "MDAD"}
    parts = []
    for measure in MEASURES:
        part = [r for r in rows if r["measure"] == measure]
        if not part:
            continue
        count = {v: sum(r["verdict"] == v for r in part) for v in (BETTER, WORSE, WITHIN, UNKNOWN, TOO_FEW)}
        text = (f"by {names[measure]}, ability scoring is better in {count[BETTER]}, worse in {count[WORSE]}, "
                f"within noise in {count[WITHIN]}" + (f" and undecided in {count[UNKNOWN]}" if count[UNKNOWN] else "")
                + (f", with too few target pairs to tell in {count[TOO_FEW]} (fewer than {MIN_PAIRS})"
                   if count[TOO_FEW] else "") + f" of {len(part)}")
        if measure == "mdad" and count[WITHIN]:
            close = sum(noise_state(r, resolution) == NON_INFERIOR for r in part if r["verdict"] == WITHIN)
            text += f" ({close} of the {count[WITHIN]} within noise also within {resolution:g} points)"
        parts.append(text)
    cells = len({(r["benchmark"], r["size"]) for r in rows})
    text = (f"over {cells} benchmark × size cell{'s' if cells != 1 else ''}, compared pairwise on the same tests, "
            + "; ".join(parts) + family_note(rows))
    return Claim(text, "scoring_claim", inputs)
