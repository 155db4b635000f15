"""Calibrating the synthetic stand-ins against their real counterparts.

The stand-ins keep the paper's model counts (about 400 models) because the real pools on
the data path are too small to show what 300 source models do. Their simulator
parameters are fitted so that the stand-in looks like the real bundle on what matters for
micro-benchmarking:

- the distribution of model accuracy, of pairwise |accuracy difference| and of item
  p-values (share of models answering an item correctly), compared by two-sample
  Kolmogorov-Smirnov (KS) distance;
- split-half reliability (how well half the items rank the models);
- random sampling's minimum detectable ability difference (MDAD) at k = 25 and 100,
  under one protocol sized for the *real* pool and used on both.

Item p-values of the stand-in are measured on random pools of the real pool's size, so
that both sides carry the same binomial noise and granularity (a p-value over 40 models
moves in steps of 2.5 points). :func:`fit_spec` is the small routine that chose the
stand-ins' constants (Nelder-Mead on a smooth quantile distance, fixed seed);
:func:`calibration_report` gives the numbers that justify them.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
from scipy import optimize

from mbutils.data.benchmark import Benchmark
from mbutils.base.errors import BundleError
from mbutils.data.datasets import CATALOGUE, benchmark_key
from mbutils.data.synthetic import simulate
from mbutils.data.synthetic_compare import ks_distance, pairwise_differences, split_half_reliability
from mbutils.data.synthetic_spec import BenchmarkSpec
from mbutils.data.synthetic_standins import SYNTHETIC_SPECS
from mbutils.methods.experiment import run_experiment
from mbutils.methods.protocol import Protocol, fit_to_pool, rng_for

#: Each calibrated stand-in and the real bundle (on MBUTILS_DATA) it was fitted to.
CALIBRATION_PAIRS = {
    "synthetic-gpqa": "gpqa",
    "synthetic-bbh": "bbh-leaderboard",
    "synthetic-mmlu-pro": "mmlu-pro-leaderboard",
}

DISTRIBUTIONS = ("accuracy", "pairwise_difference", "item_pvalue")
MDAD_SIZES = (25, 100)
_PERCENTILES = np.linspace(0.01, 0.99, 99)


def parse_pairs(text) -> list[tuple[str, str | None]]:
    """'gpqa:synthetic-gpqa,bbh-leaderboard' -> [(real, stand-in), ...].

    A bundle given alone is paired with the stand-in of the benchmark it stands for
    (``bbh-leaderboard`` -> ``synthetic-bbh``), or with None when it stands for none.
    """
    pairs = []
    for item in filter(None, (part.strip() for part in str(text or "").split(","))):
        real, sep, synth = (x.strip() for x in item.partition(":"))
        if not real or (sep and not synth):
            raise BundleError(f"data: expected REAL_BUNDLE or REAL_BUNDLE:STAND_IN, got {item!r}")
        key = benchmark_key(real)
        pairs.append((real, synth or (CATALOGUE[key].stand_in if key in CATALOGUE else None)))
    return pairs


def _correct(data) -> np.ndarray:
    """Models x items float matrix (NaN = missing) from a Benchmark or an array."""
    values = np.asarray(data.correct if isinstance(data, Benchmark) else data, dtype=np.float64)
    if values.ndim != 2:
        raise BundleError("calibration needs 2-D models x items matrices")
    return values


def pooled_pvalues(matrix: np.ndarray, pool_size: int, rng: np.random.Generator, n_pools: int = 8) -> np.ndarray:
    """Item p-values over ``n_pools`` random pools of ``pool_size`` models, concatenated.

    With ``pool_size`` >= the number of models this is the plain item mean.
    """
    n_models = matrix.shape[0]
    if pool_size >= n_models:
        return np.nanmean(matrix, axis=0)
    pools = np.argsort(rng.random((n_pools, n_models)), axis=1)[:, :pool_size]
    return np.concatenate([np.nanmean(matrix[rows], axis=0) for rows in pools])


def distributions(matrix: np.ndarray, pool_size: int | None = None, seed: int = 0) -> dict[str, np.ndarray]:
    """The three compared distributions of one benchmark (p-values on pools of ``pool_size``)."""
    accuracy = np.nanmean(matrix, axis=1)
    rng = rng_for(seed, "calibration draws", 1)
    pvalues = pooled_pvalues(matrix, pool_size or matrix.shape[0], rng)
    return {"accuracy": accuracy, "pairwise_difference": pairwise_differences(accuracy), "item_pvalue": pvalues}


def ks_statistics(real, synthetic, seed: int = 0) -> dict[str, float]:
    """KS distance of each distribution, synthetic p-values on pools of the real pool's size."""
    real_m, synth_m = _correct(real), _correct(synthetic)
    a = distributions(real_m)
    b = distributions(synth_m, pool_size=real_m.shape[0], seed=seed)
    return {stat: ks_distance(a[stat], b[stat]) for stat in DISTRIBUTIONS}


def reliability(real, synthetic, seed: int = 0) -> dict[str, float]:
    """Split-half reliability of both (50 random halves each, one seeded stream)."""
    rng = rng_for(seed, "calibration draws", 2)
    return {"real": split_half_reliability(_correct(real), rng),
            "synthetic": split_half_reliability(_correct(synthetic), rng)}


def pool_protocol(n_models: int, n_runs: int = 20, seed: int = 0):
    """The protocol both sides of a comparison run: the real pool's, by the book's one rule."""
    sources, targets = fit_to_pool(n_models)
    return Protocol(n_sources=sources, n_targets=targets, n_runs=int(n_runs), seed=int(seed))


def random_mdad(benchmark: Benchmark, protocol, sizes=MDAD_SIZES, threshold: float = 0.8,
                jobs: int = 1) -> dict[int, float]:
    """Random sampling's MDAD (points; NaN = not reached) per size under ``protocol``."""
    from mbutils.evaluate.metrics import mdad_table

    results = run_experiment(benchmark, ["random"], list(sizes), protocol, jobs=jobs, progress=False)
    table = mdad_table(results, threshold=threshold, ci="none")
    return dict(zip(table["size"].astype(int), table["mdad"].astype(float)))


def calibration_report(real: Benchmark, synthetic: Benchmark, *, sizes=MDAD_SIZES, n_runs: int = 20,
                       seed: int = 0, threshold: float = 0.8, jobs: int = 1) -> pd.DataFrame:
    """One row per compared statistic: ``statistic``, ``real``, ``synthetic``, ``ks``.

    Distribution rows give the medians (fractions) and the KS distance; the split-half and
    MDAD rows give both values (MDAD in points, from the same small-pool protocol on both).
    """
    ks = ks_statistics(real, synthetic, seed)
    a, b = distributions(_correct(real)), distributions(_correct(synthetic), real.n_models, seed)
    rows = [{"statistic": f"median {stat.replace('_', ' ')}", "real": float(np.median(a[stat])),
             "synthetic": float(np.median(b[stat])), "ks": ks[stat]} for stat in DISTRIBUTIONS]
    split = reliability(real, synthetic, seed)
    rows.append({"statistic": "split-half reliability", "real": split["real"],
                 "synthetic": split["synthetic"], "ks": np.nan})
    protocol = pool_protocol(real.n_models, n_runs, seed)
    mdad = {label: random_mdad(bench, protocol, sizes, threshold, jobs)
            for label, bench in (("real", real), ("synthetic", synthetic))}
    rows += [{"statistic": f"random MDAD k={k} (points)", "real": mdad["real"][k],
              "synthetic": mdad["synthetic"][k], "ks": np.nan} for k in sizes]
    out = pd.DataFrame(rows)
    out.attrs.update({"n_sources": protocol.n_sources, "n_targets": protocol.n_targets,
                      "n_runs": protocol.n_runs, "threshold": threshold})
    return out


# --- the fit -------------------------------------------------------------------------

def _quantile_distance(real: np.ndarray, synth: np.ndarray) -> float:
    """Mean |quantile difference| over the 1..99th percentiles, in units of the real sd.

    Smooth in the parameters where KS is a step function, so Nelder-Mead can move.
    """
    scale = np.std(real) or 1.0
    return float(np.mean(np.abs(np.quantile(real, _PERCENTILES) - np.quantile(synth, _PERCENTILES))) / scale)


def random_curves(benchmark: Benchmark, protocol, sizes=MDAD_SIZES, use_cache: bool = True) -> pd.DataFrame:
    """Random sampling's agreement curve (0.5-point bins) per size under ``protocol``."""
    from mbutils.evaluate.metrics import agreement_curve

    results = run_experiment(benchmark, ["random"], list(sizes), protocol, use_cache=use_cache, progress=False)
    return agreement_curve(results)


def curve_distance(real: pd.DataFrame, synth: pd.DataFrame, max_gap: float = 20.0) -> float:
    """Mean |agreement difference| over the gap bins up to ``max_gap`` points, weighted by real pairs."""
    both = real.merge(synth, on=["size", "gap"], suffixes=("_real", "_synth"))
    both = both[both["gap"] <= max_gap]
    return float(np.average(np.abs(both["agreement_real"] - both["agreement_synth"]), weights=both["n_pairs_real"]))


def calibration_loss(spec: BenchmarkSpec, real: Benchmark, name: str, seed: int = 0,
                     curve_weight: float = 0.0, real_curve: pd.DataFrame | None = None) -> float:
    """Sum of the three quantile distances, the gap in log split-half unreliability and,
    with ``curve_weight`` > 0, the distance between random sampling's agreement curves."""
    synth = simulate(spec, seed, name)
    real_m, synth_m = _correct(real), synth.correct.astype(np.float64)
    a, b = distributions(real_m), distributions(synth_m, real_m.shape[0], seed)
    loss = sum(_quantile_distance(a[s], b[s]) for s in DISTRIBUTIONS)
    split = reliability(real_m, synth_m, seed)
    loss += 0.5 * abs(np.log1p(-split["synthetic"]) - np.log1p(-split["real"]))
    if curve_weight > 0:
        protocol = pool_protocol(real.n_models, seed=seed)
        if real_curve is None:
            real_curve = random_curves(real, protocol)
        loss += curve_weight * curve_distance(real_curve, random_curves(synth, protocol, use_cache=False))
    return float(loss)


def fit_spec(name: str, real: Benchmark, parameters: tuple[str, ...], *, seed: int = 0, max_evals: int = 150,
             curve_weight: float = 0.0, start: BenchmarkSpec | None = None) -> tuple[BenchmarkSpec, float]:
    """Nelder-Mead over ``parameters`` of the stand-in ``name``'s spec against ``real``.

    Returns the fitted spec (values rounded to 3 decimals, as written into
    :data:`mbutils.data.synthetic_standins.SYNTHETIC_SPECS`) and its loss. Non-negative parameters are
    kept non-negative (a share below 0.9). Costs one simulation per evaluation (about a second for BBH).
    """
    spec = start or SYNTHETIC_SPECS[name]
    x0 = np.array([float(getattr(spec, p)) for p in parameters])
    signed = {"ability_mean", "difficulty_mean", "ability_skew"}
    real_curve = random_curves(real, pool_protocol(real.n_models, seed=seed)) if curve_weight > 0 else None

    def make(x):
        values = {p: round(float(v if p in signed else min(abs(v), _UPPER.get(p, np.inf))), 3)
                  for p, v in zip(parameters, x)}
        return dataclasses.replace(spec, **values)

    def loss(x):
        return calibration_loss(make(x), real, name, seed, curve_weight, real_curve)

    result = optimize.minimize(loss, x0, method="Nelder-Mead",
                               options={"maxfev": max_evals, "xatol": 1e-3, "fatol": 1e-4,
                                        "initial_simplex": _simplex(x0)})
    best = make(result.x)
    return best, loss(result.x)


_UPPER = {"unlearnable_share": 0.9}


def _simplex(x0: np.ndarray) -> np.ndarray:
    """Starting simplex with steps of 20% of each value (0.2 for values near zero)."""
    steps = np.where(np.abs(x0) > 0.1, 0.2 * np.abs(x0), 0.2)
    return np.vstack([x0, x0 + np.diag(steps)])
