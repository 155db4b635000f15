"""Deterministic synthetic benchmarks from a multidimensional IRT simulator.

Where a real bundle is absent, the book runs on ``synthetic-gpqa``, ``synthetic-bbh``,
``synthetic-mmlu-pro`` and ``synthetic-mmlu``: benchmarks with the real ones' shape
(subtask names and sizes, item counts, model counts, answer options) and a plausible
spread of model accuracies. They are simulated data, and every page using them says so.

The generative model
--------------------
*Models.* Model ``i`` has a size class (0.5B ... 70B), an instruct flag and a family,
drawn from fixed proportions, and an ability vector ``theta_i`` with ``D = n_dims``
coordinates. Coordinate 0 is a strong **general factor**
``g_i = ability_mean + size_slope*log2(size/7B) + instruct_shift*(instruct - 1/2)
+ family effect + ability_sd*N(0, 1)``, so accuracies are correlated across subtasks and
the many small models form a crowded middle under a tail of large ones. Coordinates
``1..D-1`` are specific abilities ``~ N(0, specific_sd^2)``.

*Items.* Item ``j`` of subtask ``t`` has discrimination ``a_j`` (general loading
``discrimination * exp(discrimination_sd * N)`` > 0; specific loadings = the subtask's
profile + ``specific_loading * N``), difficulty ``b_j = difficulty_mean + delta_t +
difficulty_sd * N``, ``n_options`` answer options and a gold position (positions are
balanced within a subtask). Subtask effects (profile, ``delta_t``) are centred across
subtasks so ``difficulty_mean`` alone sets the benchmark's level.

*Guessing floor.* A model that does not "know" item ``j`` guesses. With no position
preference and ``floor_concentration=None`` the guess is right with probability
``c = 1/options`` exactly, as in the 3PL model. Two documented extensions (off in a bare
``BenchmarkSpec``, on in all four stand-ins because real leaderboard data show both):

- ``floor_concentration``: the item's floor ``c_j ~ Beta`` with mean ``1/options``
  (attractive distractors push some items below chance; real GPQA has a quarter of its
  items answered correctly by fewer than 16% of models);
- position preferences: model ``i`` has a preference ``beta_ih`` for answer position
  ``h``, ``beta_i = position_bias_sd * N(0, I) + position_bias_shared * lambda_i * v``
  where ``v`` is one centred pattern shared by the population and ``lambda_i ~ N(0, 1)``
  how strongly (and in which sense) model ``i`` follows it. Its floor on item ``j`` is
  the softmax share of the gold position, with the gold's odds scaled by ``c_j``:
  ``c_ij = o_j e^{beta_ig} / (o_j e^{beta_ig} + sum_h e^{beta_ih} - e^{beta_ig})``,
  ``o_j = (K-1) c_j / (1-c_j)`` (so ``c_ij = c_j`` for a model without preferences).
  Gold positions are balanced, so preferences barely move a model's accuracy but they
  create the strongly anti-correlated "gold = A / gold = B ..." item clusters and the
  dominant first principal component seen in real GPQA responses.

*Responses.* ``z_ij = a_j . theta_i - b_j``, ``P_ij = c_ij + (1 - c_ij) sigmoid(z_ij)``,
``correct_ij ~ Bernoulli(P_ij)``.

*Confidence* (probability of the gold answer). The model's "sureness"
``s_ij = sigmoid(z_ij + confidence_noise * eps_ij)`` (0 = guessing, 1 = knows the answer).
A guessing model gives the gold its share of the guess distribution, ``c_ij``. A correct
answer moves the gold up from there, ``conf = c_ij + (1 - c_ij) s_ij``; a wrong answer
moves it down, ``conf = c_ij (1 - s_ij)``. So confidence lies in [0, 1], rises with
ability, is higher on correct cells (always ``>= c_ij`` there, ``<= c_ij`` on wrong ones),
and its item means track item p-values, including the below-chance distractor items
(weak models are near ``c_ij`` either way; strong models are confidently right, or,
rarely, confidently wrong).

Options per subtask
-------------------
GPQA 4; MMLU 4; MMLU-Pro 10 (the real set has some items with fewer, not modelled).
BBH uses the number of choices the Open LLM Leaderboard's multiple-choice formulation
scores per task (lm-evaluation-harness ``leaderboard_bbh_*``): 2 for the yes/no and
A/B tasks, 3/5/7 for the three-, five- and seven-object tasks, 3 disambiguation_qa,
4 temporal_sequences, 5 penguins_in_a_table, 6 date_understanding /
movie_recommendation / ruin_names / salient_translation_error_detection,
11 geometric_shapes, 18 reasoning_about_colored_objects, 19 object_counting (0..18).

MMLU subtask sizes are the real MMLU test-set sizes of the first 48 subjects in
alphabetical order (abstract_algebra ... professional_accounting), which sum to exactly
10,631 as in the paper.

Calibration
-----------
``synthetic-gpqa`` was fitted to the real GPQA bundle (420 x 448) by Nelder-Mead on the KS
distances of model accuracies, pairwise accuracy differences and item p-values, the
split-half reliability and the variance shares of the first principal components, over
several seeds; :func:`compare_to_reference` reports the match. ``synthetic-bbh`` and
``synthetic-mmlu-pro`` were fitted to the real leaderboard bundles ``bbh-leaderboard`` and
``mmlu-pro-leaderboard`` by :func:`mbutils.results.calibration.fit_spec`, which also reports
random sampling's agreement (MDAD) on both. Population-level draws
(size mix, ability noise, item difficulty and floors) are stratified, so a seed changes
which model or item gets which value but not the shape of the distributions: the
calibration holds for every seed, not just seed 0. ``synthetic-mmlu`` has no real
counterpart and is set by hand to the accuracy spread the paper reports.

Two further documented extensions, off unless a spec sets them: ``ability_skew`` (the
general ability's noise is skew-normal, standardised) and ``unlearnable_share`` (that share
of items, chosen at random, is answered at the guessing floor by every model: items no
model of the pool can do, as in real BBH where the strongest models still miss over a
quarter of the items).
"""

from __future__ import annotations

import zlib
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import special
from scipy.stats import skewnorm

from mbutils.data.benchmark import Benchmark
from mbutils.base.cache import atomic_write, content_key, entry_path, report_once
from mbutils.base.errors import BundleError

#: Bump when the simulator's output for a given spec and seed changes (invalidates caches).
SIMULATOR_VERSION = 1

#: Size classes (billions of parameters) and their share of the simulated leaderboard.
SIZE_CLASSES = (0.5, 1.0, 3.0, 7.0, 13.0, 30.0, 70.0)
SIZE_SHARES = (0.06, 0.08, 0.14, 0.40, 0.14, 0.10, 0.08)
FAMILIES = ("aurora", "basalt", "cobalt", "dune", "ember", "fjord")

#: Sizes of the generic target sets built for every synthetic benchmark.
STRONG_CLUSTER_SIZE = 12
MIDDLE_SIZE = 50


@dataclass(frozen=True)
class BenchmarkSpec:
    """Everything the simulator needs: shape, and the parameters of the IRT model.

    ``subtasks`` is a tuple of ``(name, n_items, n_options)``. Ability and difficulty
    parameters are on the logit scale; see the module docstring for the model.
    """

    n_models: int
    subtasks: tuple[tuple[str, int, int], ...]
    n_dims: int = 4
    ability_mean: float = 0.0
    ability_sd: float = 0.5
    ability_skew: float = 0.0
    size_slope: float = 0.35
    instruct_shift: float = 0.2
    family_sd: float = 0.15
    specific_sd: float = 0.4
    discrimination: float = 1.0
    discrimination_sd: float = 0.3
    specific_loading: float = 0.4
    subtask_profile_sd: float = 0.5
    difficulty_mean: float = 0.0
    difficulty_sd: float = 1.0
    subtask_difficulty_sd: float = 0.5
    floor_concentration: float | None = None
    unlearnable_share: float = 0.0
    position_bias_sd: float = 0.0
    position_bias_shared: float = 0.0
    confidence_noise: float = 1.0

    def __post_init__(self) -> None:
        if int(self.n_models) < 2:
            raise BundleError(f"BenchmarkSpec: n_models must be at least 2, got {self.n_models}")
        if not self.subtasks:
            raise BundleError("BenchmarkSpec: give at least one (name, n_items, n_options) subtask")
        names = [str(s[0]) for s in self.subtasks]
        if len(set(names)) != len(names):
            raise BundleError(f"BenchmarkSpec: duplicate subtask names in {names}")
        for entry in self.subtasks:
            if len(entry) != 3 or int(entry[1]) < 1 or int(entry[2]) < 2:
                raise BundleError(
                    f"BenchmarkSpec: subtask {entry!r} must be (name, n_items >= 1, n_options >= 2)"
                )
        if int(self.n_dims) < 1:
            raise BundleError(f"BenchmarkSpec: n_dims must be at least 1, got {self.n_dims}")
        for label in ("ability_sd", "family_sd", "specific_sd", "discrimination",
                      "discrimination_sd", "specific_loading", "subtask_profile_sd",
                      "difficulty_sd", "subtask_difficulty_sd", "position_bias_sd", "position_bias_shared",
                      "confidence_noise"):
            if not getattr(self, label) >= 0:
                raise BundleError(f"BenchmarkSpec: {label} must be >= 0, got {getattr(self, label)}")
        if not 0 <= self.unlearnable_share < 1:
            raise BundleError(f"BenchmarkSpec: unlearnable_share must be in [0, 1), got {self.unlearnable_share}")
        if self.floor_concentration is not None and not self.floor_concentration > 0:
            raise BundleError("BenchmarkSpec: floor_concentration must be > 0 or None")

    @property
    def n_items(self) -> int:
        return sum(int(s[1]) for s in self.subtasks)

    @property
    def subtask_names(self) -> tuple[str, ...]:
        return tuple(str(s[0]) for s in self.subtasks)


# --- the four stand-ins ---------------------------------------------------------------

_BBH_OPTIONS = {
    "boolean_expressions": 2, "causal_judgement": 2, "date_understanding": 6,
    "disambiguation_qa": 3, "formal_fallacies": 2, "geometric_shapes": 11, "hyperbaton": 2,
    "logical_deduction_five_objects": 5, "logical_deduction_seven_objects": 7,
    "logical_deduction_three_objects": 3, "movie_recommendation": 6, "navigate": 2,
    "object_counting": 19, "penguins_in_a_table": 5, "reasoning_about_colored_objects": 18,
    "ruin_names": 6, "salient_translation_error_detection": 6, "snarks": 2,
    "sports_understanding": 2, "temporal_sequences": 4,
    "tracking_shuffled_objects_five_objects": 5, "tracking_shuffled_objects_seven_objects": 7,
    "tracking_shuffled_objects_three_objects": 3, "web_of_lies": 2,
}
_BBH_SIZES = {"causal_judgement": 187, "penguins_in_a_table": 146, "snarks": 178}

_MMLU_PRO_SIZES = (
    ("philosophy", 499), ("law", 1101), ("engineering", 969), ("chemistry", 1132),
    ("business", 789), ("psychology", 798), ("health", 818), ("biology", 717),
    ("history", 381), ("other", 924), ("economics", 844), ("physics", 1299),
    ("computer science", 410), ("math", 1351),
)

_MMLU_SIZES = (
    ("abstract_algebra", 100), ("anatomy", 135), ("astronomy", 152), ("business_ethics", 100),
    ("clinical_knowledge", 265), ("college_biology", 144), ("college_chemistry", 100),
    ("college_computer_science", 100), ("college_mathematics", 100), ("college_medicine", 173),
    ("college_physics", 102), ("computer_security", 100), ("conceptual_physics", 235),
    ("econometrics", 114), ("electrical_engineering", 145), ("elementary_mathematics", 378),
    ("formal_logic", 126), ("global_facts", 100), ("high_school_biology", 310),
    ("high_school_chemistry", 203), ("high_school_computer_science", 100),
    ("high_school_european_history", 165), ("high_school_geography", 198),
    ("high_school_government_and_politics", 193), ("high_school_macroeconomics", 390),
    ("high_school_mathematics", 270), ("high_school_microeconomics", 238),
    ("high_school_physics", 151), ("high_school_psychology", 545),
    ("high_school_statistics", 216), ("high_school_us_history", 204),
    ("high_school_world_history", 237), ("human_aging", 223), ("human_sexuality", 131),
    ("international_law", 121), ("jurisprudence", 108), ("logical_fallacies", 163),
    ("machine_learning", 112), ("management", 103), ("marketing", 234),
    ("medical_genetics", 100), ("miscellaneous", 783), ("moral_disputes", 346),
    ("moral_scenarios", 895), ("nutrition", 306), ("philosophy", 311), ("prehistory", 324),
    ("professional_accounting", 282),
)

SYNTHETIC_SPECS: dict[str, BenchmarkSpec] = {
    # Fitted to the real GPQA bundle (Nelder-Mead on KS distances of accuracies, pairwise
    # differences and item p-values, split-half reliability and principal-component
    # variance shares, seeds 0-2); see compare_to_reference and tests/test_synthetic.py.
    "synthetic-gpqa": BenchmarkSpec(
        n_models=420,
        subtasks=(("gpqa_main", 448, 4),),
        ability_mean=-1.077,
        ability_sd=0.375,
        size_slope=0.372,
        difficulty_mean=1.914,
        difficulty_sd=0.8,
        discrimination=1.118,
        floor_concentration=3.519,
        position_bias_sd=0.946,
        position_bias_shared=0.895,
    ),
    # BBH and MMLU-Pro: fitted to the real leaderboard bundles bbh-leaderboard (78 models)
    # and mmlu-pro-leaderboard (40 models) with mbutils.results.calibration.fit_spec (seed 0,
    # Nelder-Mead on the quantile distances of accuracies, pairwise differences and item
    # p-values plus split-half reliability); calibration_report gives the match. The
    # real BBH pool is crowded at the top (many fine-tunes of one 72B model) and its
    # strongest models still miss about 28% of the items: hence the negative ability skew
    # and the share of items no model can learn. Position preferences are kept as set by
    # hand (GPQA-like, weaker); they were not fitted.
    "synthetic-bbh": BenchmarkSpec(
        n_models=409,
        subtasks=tuple((t, _BBH_SIZES.get(t, 250), k) for t, k in _BBH_OPTIONS.items()),
        ability_mean=0.49,
        ability_sd=1.033,
        ability_skew=-4.857,
        size_slope=0.326,
        discrimination=1.709,
        difficulty_mean=0.241,
        difficulty_sd=1.505,
        subtask_difficulty_sd=0.8,
        floor_concentration=8.0,
        unlearnable_share=0.291,
        position_bias_sd=0.3,
        position_bias_shared=0.5,
    ),
    "synthetic-mmlu-pro": BenchmarkSpec(
        n_models=447,
        subtasks=tuple((t, n, 10) for t, n in _MMLU_PRO_SIZES),
        ability_mean=-0.63,
        ability_sd=0.345,
        size_slope=0.559,
        discrimination=0.965,
        difficulty_mean=1.003,
        difficulty_sd=1.711,
        subtask_difficulty_sd=0.5,
        floor_concentration=8.0,
        unlearnable_share=0.01,
        position_bias_sd=0.3,
        position_bias_shared=0.5,
    ),
    # No real MMLU bundle to fit against: set by hand (quantile matching of accuracies,
    # seed 0) to the spread PAPER.md reports, with GPQA-like distractors.
    "synthetic-mmlu": BenchmarkSpec(
        n_models=366,
        subtasks=tuple((t, n, 4) for t, n in _MMLU_SIZES),
        ability_mean=-0.819,
        ability_sd=0.35,
        size_slope=0.444,
        discrimination=1.5,
        difficulty_sd=1.5,
        subtask_difficulty_sd=1.962,
        floor_concentration=8.0,
        position_bias_sd=0.3,
        position_bias_shared=0.5,
    ),
}


# --- simulation -----------------------------------------------------------------------

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


def _simulate_arrays(spec: BenchmarkSpec, seed: int, name: str) -> dict[str, np.ndarray]:
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


def _target_sets(accuracy: np.ndarray, size_b: np.ndarray, instruct: np.ndarray,
                 models: np.ndarray) -> dict[str, list[str]]:
    """Named model sets for fixed-target studies, mirroring the real bundles' kinds."""
    sets: dict[str, list[str]] = {}
    for size, label in ((7.0, "7b"), (70.0, "70b")):
        for flag, kind in ((True, "instruct"), (False, "base")):
            chosen = np.flatnonzero((size_b == size) & (instruct == flag))
            if len(chosen) >= 2:
                sets[f"{label}_{kind}"] = list(models[chosen])
    order = np.argsort(accuracy, kind="stable")
    n = len(order)
    if n >= MIDDLE_SIZE:
        mid = order[(n - MIDDLE_SIZE) // 2:(n - MIDDLE_SIZE) // 2 + MIDDLE_SIZE]
        sets["mid_50"] = list(models[np.sort(mid)])
    top = order[-max(n // 4, STRONG_CLUSTER_SIZE):]
    if len(top) >= STRONG_CLUSTER_SIZE:
        span = accuracy[top[STRONG_CLUSTER_SIZE - 1:]] - accuracy[top[:len(top) - STRONG_CLUSTER_SIZE + 1]]
        start = int(np.argmin(span))
        sets["strong_cluster"] = list(models[np.sort(top[start:start + STRONG_CLUSTER_SIZE])])
    return sets


def _assemble(spec: BenchmarkSpec, name: str, seed: int, arrays: dict[str, np.ndarray]) -> Benchmark:
    """Turn the random draws into a named :class:`Benchmark` (same path fresh or cached)."""
    models = np.array([f"synthetic-model-{i:03d}" for i in range(spec.n_models)], dtype=object)
    items, subtasks, options = [], [], []
    for task, n_items, n_options in spec.subtasks:
        stem = str(task).replace(" ", "_")
        items += [f"{stem}_{i:04d}" for i in range(int(n_items))]
        subtasks += [str(task)] * int(n_items)
        options += [int(n_options)] * int(n_items)
    correct = arrays["correct"]
    if correct.shape != (spec.n_models, spec.n_items):
        raise BundleError(f"{name}: simulated arrays have shape {correct.shape}, spec says "
                          f"{(spec.n_models, spec.n_items)}")
    item_info = pd.DataFrame({
        "item": items, "subtask": subtasks, "n_choices": options,
        "gold_position": arrays["gold"].astype(np.int64),
        "guess_floor": arrays["floor"], "discrimination": arrays["discrimination"],
        "difficulty": arrays["difficulty"],
    })
    model_info = pd.DataFrame({
        "model": models, "family": np.asarray(FAMILIES)[arrays["family"]],
        "size_b": arrays["size_b"], "instruct": arrays["instruct"].astype(bool),
        "ability": arrays["ability"],
    })
    accuracy = correct.mean(axis=1)
    return Benchmark(
        name=name,
        correct=correct,
        models=models,
        items=np.array(items, dtype=object),
        subtasks=np.array(subtasks, dtype=object),
        confidence=arrays["confidence"].astype(np.float64),
        item_info=item_info,
        model_info=model_info,
        target_sets=_target_sets(accuracy, arrays["size_b"], arrays["instruct"].astype(bool), models),
        origin=f"synthetic: IRT simulator v{SIMULATOR_VERSION}, {name}, seed {seed} (not real model results)",
    )


def simulate(spec: BenchmarkSpec, seed: int = 0, name: str = "synthetic") -> Benchmark:
    """Simulate one benchmark from ``spec``; same (spec, seed, name) -> identical data."""
    if not isinstance(spec, BenchmarkSpec):
        raise BundleError(f"simulate needs a BenchmarkSpec, got {type(spec).__name__}")
    return _assemble(spec, name, seed, _simulate_arrays(spec, seed, name))


def cache_path(name: str, seed: int = 0) -> Path:
    """Where :func:`make_synthetic` keeps the arrays of (name, seed)."""
    spec = _spec_for(name)
    key = content_key(asdict(spec), SIMULATOR_VERSION)
    return entry_path("synthetic", name, str(int(seed)), key, suffix=".npz")


def _spec_for(name: str) -> BenchmarkSpec:
    if name not in SYNTHETIC_SPECS:
        raise BundleError(
            f"unknown synthetic benchmark {name!r}; known: {', '.join(sorted(SYNTHETIC_SPECS))}"
        )
    return SYNTHETIC_SPECS[name]


_ARRAY_KEYS = ("correct", "confidence", "size_b", "instruct", "family", "ability", "gold",
               "floor", "discrimination", "difficulty")


def _load_arrays(path: Path) -> dict[str, np.ndarray] | None:
    """Arrays from a cache file, or None when it is absent or unreadable (then regenerate)."""
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            return {key: data[key] for key in data.files}
    except (OSError, ValueError, KeyError, EOFError):
        return None


def make_synthetic(name: str, seed: int = 0) -> Benchmark:
    """The named synthetic stand-in, generated once per (name, seed, spec) and cached."""
    spec = _spec_for(name)
    path = cache_path(name, seed)
    arrays = _load_arrays(path)
    if arrays is None or set(arrays) != set(_ARRAY_KEYS):
        arrays = _simulate_arrays(spec, seed, name)

        def write(tmp: Path) -> None:
            with open(tmp, "wb") as handle:
                np.savez(handle, **arrays)

        try:
            atomic_write(path, write)
        except OSError as err:  # an unwritable cache costs a re-simulation next time, nothing more
            report_once(f"the cache cannot be written ({err.strerror or err}: {path.parent}); "
                        "the synthetic bundle is simulated without it")
    return _assemble(spec, name, seed, arrays)


# --- comparison with real data --------------------------------------------------------

QUANTILES = (0.0, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 1.0)


def _matrix(data) -> np.ndarray:
    """0/1 models x items matrix from a Benchmark, DataFrame or array (NaN = missing)."""
    values = data.correct if isinstance(data, Benchmark) else data
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 2:
        raise BundleError("compare_to_reference needs 2-D models x items matrices")
    return values


def pairwise_differences(accuracy: np.ndarray) -> np.ndarray:
    """|acc_i - acc_j| over all unordered model pairs."""
    upper = np.triu_indices(len(accuracy), k=1)
    return np.abs(accuracy[:, None] - accuracy[None, :])[upper]


def split_half_reliability(matrix: np.ndarray, rng: np.random.Generator, n_splits: int = 50) -> float:
    """Mean correlation across models of accuracy on two random halves of the items."""
    n_items = matrix.shape[1]
    halves = (np.argsort(rng.random((n_splits, n_items)), axis=1) < n_items // 2).astype(np.float64)
    seen = ~np.isnan(matrix)
    values = np.where(seen, matrix, 0.0)
    first = (values @ halves.T) / (seen @ halves.T)             # models x splits
    second = (values @ (1 - halves).T) / (seen @ (1 - halves).T)
    a = first - first.mean(axis=0)
    b = second - second.mean(axis=0)
    r = (a * b).sum(0) / np.sqrt((a * a).sum(0) * (b * b).sum(0))
    return float(r.mean())


def ks_distance(x: np.ndarray, y: np.ndarray) -> float:
    """Two-sample Kolmogorov-Smirnov distance (sup |F_x - F_y|)."""
    x, y = np.sort(x), np.sort(y)
    grid = np.concatenate([x, y])
    fx = np.searchsorted(x, grid, side="right") / len(x)
    fy = np.searchsorted(y, grid, side="right") / len(y)
    return float(np.max(np.abs(fx - fy)))


def component_shares(matrix: np.ndarray, n: int = 5) -> np.ndarray:
    """Share of variance of the first ``n`` principal components of the item-centred matrix."""
    filled = np.where(np.isnan(matrix), np.nanmean(matrix, axis=0), matrix)
    values = np.linalg.svd(filled - filled.mean(axis=0), compute_uv=False) ** 2
    return values[:n] / values.sum()


def compare_to_reference(synthetic, real, seed: int = 0) -> dict:
    """Quantile tables and KS distances of a synthetic benchmark against a real one.

    Compares the distributions of model accuracy, pairwise accuracy differences and item
    p-values (fraction of models correct), plus split-half reliability and the variance
    shares of the first principal components (low-rank structure). Returns
    ``{"quantiles": {stat: DataFrame(real, synthetic)}, "ks": {stat: float},
    "split_half": {"real": r, "synthetic": r}, "components": DataFrame(real, synthetic)}``.
    """
    synth_m, real_m = _matrix(synthetic), _matrix(real)
    stats = {}
    for label, matrix in (("real", real_m), ("synthetic", synth_m)):
        accuracy = np.nanmean(matrix, axis=1)
        stats[label] = {
            "accuracy": accuracy,
            "pairwise_difference": pairwise_differences(accuracy),
            "item_pvalue": np.nanmean(matrix, axis=0),
        }
    quantiles = {
        stat: pd.DataFrame(
            {label: np.quantile(stats[label][stat], QUANTILES) for label in ("real", "synthetic")},
            index=pd.Index(QUANTILES, name="quantile"),
        )
        for stat in stats["real"]
    }
    ks = {stat: ks_distance(stats["real"][stat], stats["synthetic"][stat]) for stat in stats["real"]}
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    split = {label: split_half_reliability(m, rng) for label, m in (("real", real_m), ("synthetic", synth_m))}
    components = pd.DataFrame(
        {"real": component_shares(real_m), "synthetic": component_shares(synth_m)},
        index=pd.RangeIndex(1, 6, name="component"),
    )
    return {"quantiles": quantiles, "ks": ks, "split_half": split, "components": components}
