"""The simulator's random draws: models, items and their responses from a spec and one seeded stream.

Every draw comes from one root stream per (name, seed), split into models, items and
responses, so the same spec, seed and name give identical arrays on every machine (the
model is described in :mod:`mbutils.data.synthetic_spec`).
"""

from __future__ import annotations

import zlib

import numpy as np
from scipy import special
from scipy.stats import skewnorm

from mbutils.base.errors import BundleError
from mbutils.data.synthetic_spec import FAMILIES, SIZE_CLASSES, SIZE_SHARES, BenchmarkSpec


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _centred(values: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Remove the (weighted) mean so random group effects never shift the overall level."""
    return values - np.average(values, axis=0, weights=weights)


def _stratified_uniform(rng: np.random.Generator, n: int) -> np.ndarray:
    """n uniforms, one in each of n equal strata, in random order (Latin hypercube in 1-D).

    Used for the population-level draws so that a seed changes which model or item gets
    which value, but not the shape of the distribution (the calibration holds for every seed).
    """
    return (rng.permutation(n) + rng.random(n)) / n


def _stratified_normal(rng: np.random.Generator, n: int) -> np.ndarray:
    return special.ndtri(_stratified_uniform(rng, n))


def _ability_noise(rng: np.random.Generator, n: int, skew: float) -> np.ndarray:
    """Stratified standardised noise: normal, or skew-normal with shape ``skew``.

    A negative skew gives a long tail of weak models under a crowd of strong ones, as in
    real leaderboard pools dominated by fine-tunes of a few strong base models. Mean 0 and
    variance 1 whatever the skew, so ``ability_mean``/``ability_sd`` keep their meaning.
    """
    if skew == 0:
        return _stratified_normal(rng, n)
    delta = skew / np.sqrt(1.0 + skew**2)
    mean, sd = delta * np.sqrt(2.0 / np.pi), np.sqrt(1.0 - 2.0 * delta**2 / np.pi)
    return (skewnorm.ppf(_stratified_uniform(rng, n), skew) - mean) / sd


def _exact_shares(rng: np.random.Generator, n: int, shares) -> np.ndarray:
    """Category per unit with counts as close to ``n * shares`` as possible, shuffled."""
    counts = np.floor(np.asarray(shares) * n).astype(int)
    extra = np.argsort(-(np.asarray(shares) * n - counts), kind="stable")[: n - counts.sum()]
    counts[extra] += 1
    return rng.permutation(np.repeat(np.arange(len(shares)), counts))


def _draw_models(spec: BenchmarkSpec, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Covariates and ability vectors of every model."""
    n = int(spec.n_models)
    size_b = np.asarray(SIZE_CLASSES)[_exact_shares(rng, n, SIZE_SHARES)]
    instruct = _exact_shares(rng, n, (0.5, 0.5)) == 1
    family = _exact_shares(rng, n, np.full(len(FAMILIES), 1.0 / len(FAMILIES)))
    family_effect = _centred(spec.family_sd * rng.standard_normal(len(FAMILIES)))
    general = (
        spec.ability_mean
        + spec.size_slope * np.log2(size_b / 7.0)
        + spec.instruct_shift * (instruct - 0.5)
        + family_effect[family]
        + spec.ability_sd * _ability_noise(rng, n, spec.ability_skew)
    )
    specific = spec.specific_sd * rng.standard_normal((n, int(spec.n_dims) - 1))
    max_options = max(int(s[2]) for s in spec.subtasks)
    bias = spec.position_bias_sd * rng.standard_normal((n, max_options))
    # One preference pattern shared by the population, each model following it more or
    # less (or reversed): gives the dominant low-rank structure of real response matrices.
    pattern = rng.standard_normal(max_options)
    pattern -= pattern.mean()
    pattern /= np.sqrt(np.mean(pattern**2)) if max_options > 1 else 1.0
    bias = bias + spec.position_bias_shared * rng.standard_normal(n)[:, None] * pattern
    return {
        "size_b": size_b,
        "instruct": instruct,
        "family": family.astype(np.int8),
        "theta": np.column_stack([general, specific]),
        "position_bias": bias,
    }


def _draw_items(spec: BenchmarkSpec, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Loadings, difficulty, options, gold position and guessing floor of every item."""
    sizes = np.array([int(s[1]) for s in spec.subtasks])
    options_per_task = np.array([int(s[2]) for s in spec.subtasks])
    code = np.repeat(np.arange(len(sizes)), sizes)
    options = options_per_task[code]
    n_items, n_spec = len(code), int(spec.n_dims) - 1

    profile = _centred(spec.subtask_profile_sd * rng.standard_normal((len(sizes), n_spec)), sizes)
    delta = _centred(spec.subtask_difficulty_sd * rng.standard_normal(len(sizes)), sizes)
    general = spec.discrimination * np.exp(spec.discrimination_sd * rng.standard_normal(n_items))
    specific = profile[code] + spec.specific_loading * rng.standard_normal((n_items, n_spec))
    difficulty = spec.difficulty_mean + delta[code] + spec.difficulty_sd * _stratified_normal(rng, n_items)

    # Balanced gold positions within each subtask: 0,1,..,K-1,0,1,.. then shuffled.
    start = np.repeat(np.cumsum(sizes) - sizes, sizes)
    gold = _shuffle_within((np.arange(n_items) - start) % options, code, rng)

    chance = 1.0 / options
    if spec.floor_concentration is None:
        floor = chance
    else:
        kappa = float(spec.floor_concentration)
        floor = special.betaincinv(kappa * chance, kappa * (1.0 - chance), _stratified_uniform(rng, n_items))
        floor = np.clip(floor, 1e-4, 1.0 - 1e-4)
    learnable = np.ones(n_items)
    if spec.unlearnable_share > 0:  # drawn last, so a share of 0 leaves the other draws as they were
        learnable = (rng.permutation(n_items) >= round(spec.unlearnable_share * n_items)).astype(np.float64)
    return {
        "code": code,
        "options": options.astype(np.int16),
        "gold": gold.astype(np.int16),
        "floor": np.asarray(floor, dtype=np.float64) * np.ones(n_items),
        "loadings": np.column_stack([general, specific]),
        "difficulty": difficulty,
        "learnable": learnable,
    }


def _shuffle_within(values: np.ndarray, groups: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Permute ``values`` within each group (groups are contiguous blocks)."""
    order = np.lexsort((rng.random(len(values)), groups))
    return values[order]


def _guess_floor(bias: np.ndarray, items: dict) -> np.ndarray:
    """Per (model, item) probability that a guess hits the gold, for the models in ``bias``."""
    c = items["floor"]
    if not np.any(bias):
        return np.broadcast_to(c, (len(bias), len(c)))
    weight = np.exp(bias)
    total = np.cumsum(weight, axis=1)[:, items["options"] - 1]
    gold_w = weight[:, items["gold"]]
    hit = (items["options"] - 1) * c / (1.0 - c) * gold_w
    return hit / (hit + total - gold_w)


def _latent_logit(theta: np.ndarray, items: dict) -> np.ndarray:
    """``a_j . theta_i - b_j`` with plain float64 multiply-adds in a fixed order.

    Avoids BLAS, whose kernels (and so the last bits) differ between CPUs.
    """
    loadings = items["loadings"]
    logit = -np.broadcast_to(items["difficulty"], (len(theta), len(loadings))).copy()
    for d in range(loadings.shape[1]):
        logit += theta[:, d, None] * loadings[None, :, d]
    return logit


def _respond(spec: BenchmarkSpec, models: dict, items: dict, rng: np.random.Generator):
    """Draw 0/1 correctness and gold-answer confidence for every (model, item).

    Works in blocks of :data:`RESPONSE_BLOCK` models to bound memory. For bit-identical
    output across machines the success probability is quantised to multiples of 2**-16
    before being compared with an integer uniform, and confidences are rounded to float32,
    so last-bit differences of ``exp`` between CPUs practically never reach the output.
    """
    n_models, n_items = len(models["theta"]), len(items["difficulty"])
    correct = np.empty((n_models, n_items), dtype=np.int8)
    confidence = np.empty((n_models, n_items), dtype=np.float32)
    for lo in range(0, n_models, RESPONSE_BLOCK):
        rows = slice(lo, min(lo + RESPONSE_BLOCK, n_models))
        logit = _latent_logit(models["theta"][rows], items)
        floor = _guess_floor(models["position_bias"][rows], items)
        p_correct = floor + (1.0 - floor) * _sigmoid(logit) * items["learnable"]
        threshold = np.floor(p_correct * _GRID).astype(np.int32)
        hit = rng.integers(0, _GRID, size=logit.shape, dtype=np.int32) < threshold
        sure = _sigmoid(logit + spec.confidence_noise * rng.standard_normal(logit.shape)) * items["learnable"]
        conf = np.where(hit, floor + (1.0 - floor) * sure, floor * (1.0 - sure))
        correct[rows] = hit
        confidence[rows] = np.clip(conf, 0.0, 1.0)
    return correct, confidence


#: Models per block in :func:`_respond`; part of the random stream (bump the version if changed).
RESPONSE_BLOCK = 64
_GRID = 1 << 16


def _generator(seed: int, name: str) -> np.random.Generator:
    """One root stream per (name, seed), identical on every machine."""
    if int(seed) < 0:
        raise BundleError(f"seed must be a non-negative integer, got {seed}")
    return np.random.default_rng(np.random.SeedSequence([int(seed), zlib.crc32(name.encode())]))


def simulate_arrays(spec: BenchmarkSpec, seed: int, name: str) -> dict[str, np.ndarray]:
    """All random draws of one synthetic benchmark, as plain arrays (what the cache stores)."""
    root = _generator(seed, name)
    model_rng, item_rng, response_rng = root.spawn(3)
    models = _draw_models(spec, model_rng)
    items = _draw_items(spec, item_rng)
    correct, confidence = _respond(spec, models, items, response_rng)
    return {
        "correct": correct,
        "confidence": confidence,
        "size_b": models["size_b"],
        "instruct": models["instruct"],
        "family": models["family"],
        "ability": models["theta"][:, 0],
        "gold": items["gold"],
        "floor": items["floor"],
        "discrimination": items["loadings"][:, 0],
        "difficulty": items["difficulty"],
    }
