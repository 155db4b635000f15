"""The four synthetic stand-ins' specs: each real benchmark's shape, with parameters fitted to it.

Where a real bundle is absent, the book runs on ``synthetic-gpqa``, ``synthetic-bbh``,
``synthetic-mmlu-pro`` and ``synthetic-mmlu``: benchmarks with the real ones' shape
(subtask names and sizes, item counts, model counts, answer options) and a plausible
spread of model accuracies. They are simulated data, and every page using them says so.

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
several seeds; :func:`~mbutils.data.synthetic_compare.compare_to_reference` reports
the match. ``synthetic-bbh`` and
``synthetic-mmlu-pro`` were fitted to the real leaderboard bundles ``bbh-leaderboard`` and
``mmlu-pro-leaderboard`` by :func:`mbutils.book.findings.calibration.fit_spec`, which also reports
random sampling's agreement (MDAD) on both. Population-level draws
(size mix, ability noise, item difficulty and floors) are stratified, so a seed changes
which model or item gets which value but not the shape of the distributions: the
calibration holds for every seed, not just seed 0. ``synthetic-mmlu`` has no real
counterpart and is set by hand to the accuracy spread the paper reports.
"""

from __future__ import annotations

from mbutils.data.synthetic_spec import BenchmarkSpec

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
    # variance shares, seeds 0-2); see compare_to_reference and tests/data/test_synthetic.py.
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
    # and mmlu-pro-leaderboard (40 models) with mbutils.book.findings.calibration.fit_spec (seed 0,
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
