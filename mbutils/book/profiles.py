"""How much a build computes: the book's profiles (``MBUTILS_PROFILE``) and their sizes.

``quick``
    few runs and sizes up to 250, the costliest checks on smaller data (a preview: minutes for
    the whole book);
``default``
    the paper's protocol on GPQA (50 runs), fewer runs on the large benchmarks;
``paper``
    the paper's settings everywhere (50 runs, all sizes, all source counts; over an hour).

Standard library only, so the Sphinx hook can read the profile without loading the package."""

from __future__ import annotations

import os
from dataclasses import dataclass

from mbutils.data.catalogue import BENCHMARKS, GPQA_SIZES, PAPER_SIZES
from mbutils.base.errors import BookError
from mbutils.base.validation import check_choice
from mbutils.methods.selectors.registry import names_with_role


PROFILE_ENV = "MBUTILS_PROFILE"


PAPER_SOURCES = (10, 50, 100, 150, 200, 250, 300)


#: The six methods of the paper's figures, in legend order.
PAPER_SELECTORS = names_with_role("paper")  # the registry's names of role "paper", read when used


@dataclass(frozen=True)
class BenchProfile:
    """Experiment sizes for one benchmark under one profile."""

    sizes: tuple[int, ...]
    runs: int
    source_counts: tuple[int, ...]   # MDAD vs number of source models
    source_runs: int
    source_size: int                 # the k at which the sources sweep is run


def _profiles() -> dict[str, dict[str, BenchProfile]]:
    small = (10, 25, 50, 100, 250)
    return {
        "quick": {
            "gpqa": BenchProfile(GPQA_SIZES, 10, (10, 50, 100, 300), 5, 100),
            "bbh": BenchProfile(small, 3, (10, 100, 300), 1, 100),
            "mmlu-pro": BenchProfile(small, 3, (10, 100, 300), 1, 100),
            "mmlu": BenchProfile(small, 3, (10, 100, 300), 1, 100),
            "custom": BenchProfile(small, 3, (10, 100, 300), 1, 100),
        },
        "default": {
            "gpqa": BenchProfile(GPQA_SIZES, 50, PAPER_SOURCES, 20, 100),
            "bbh": BenchProfile(PAPER_SIZES, 10, (10, 50, 100, 200, 300), 5, 100),
            "mmlu-pro": BenchProfile(PAPER_SIZES, 10, (10, 50, 100, 200, 300), 5, 100),
            "mmlu": BenchProfile(PAPER_SIZES, 10, (10, 50, 100, 200, 300), 5, 100),
            "custom": BenchProfile(PAPER_SIZES, 10, (10, 50, 100, 200, 300), 5, 100),
        },
        "paper": {
            "gpqa": BenchProfile(GPQA_SIZES, 50, PAPER_SOURCES, 50, 100),
            **{b: BenchProfile(PAPER_SIZES, 50, PAPER_SOURCES, 50, 100) for b in ("bbh", "mmlu-pro", "mmlu")},
            "custom": BenchProfile(PAPER_SIZES, 50, PAPER_SOURCES, 50, 100),
        },
    }


PROFILES = _profiles()


def profile_name() -> str:
    """The active profile: ``$MBUTILS_PROFILE`` or ``default``."""
    name = os.environ.get(PROFILE_ENV, "").strip() or "default"
    check_choice(name, PROFILES, f"{PROFILE_ENV} (the profile)", BookError)
    return name


def default_jobs() -> int:
    """Workers for experiments: ``$MBUTILS_JOBS`` or every core."""
    value = os.environ.get("MBUTILS_JOBS", "").strip()
    return int(value) if value else (os.cpu_count() or 1)


PROFILE_BLURB = {
    "quick": "few runs, sizes up to 250, the costliest checks on smaller data: a fast preview, noisy estimates",
    "default": "the paper's protocol on GPQA, fewer runs on the large benchmarks",
    "paper": "the paper's settings everywhere",
}


def variant_benchmarks(profile: str | None = None) -> list[str]:
    """Benchmarks on which selector chapters compare variants (costly ones stay on GPQA when quick)."""
    return {"quick": ["gpqa"], "default": ["gpqa", "mmlu-pro"], "paper": list(BENCHMARKS)}[profile or profile_name()]


def selector_stand_in(profile: str | None = None) -> str:
    """The stand-in (confidences and subtasks) on which the book draws its selector-level figures.

    The MMLU-Pro stand-in (12,032 items); the quick profile, a preview, takes BBH's (5,761
    items), on which Anchor Points' k-medoids over the seen items' N x N dissimilarities costs
    about a quarter as much.
    """
    return "synthetic-bbh" if (profile or profile_name()) == "quick" else "synthetic-mmlu-pro"


def target_cases(profile: str | None = None) -> str:
    """Fixed target sets studied under a profile (benchmark:set, comma separated).

    GPQA's real sets everywhere; the paper profile adds the paper's MMLU-Pro and BBH
    instruction-tuned sets (on the stand-ins unless real bundles are on the data path).
    """
    cases = ["gpqa:7b_instruct", "gpqa:70b_instruct"]
    if (profile or profile_name()) == "paper":
        cases += ["mmlu-pro:7b_instruct", "mmlu-pro:70b_instruct", "bbh:7b_instruct", "bbh:70b_instruct"]
    return ",".join(cases)


@dataclass(frozen=True)
class HeldOutPlan:
    """How the chapter on using a micro-benchmark checks its intervals on held-out models."""

    folds: int        # disjoint sets of held-out models, one build each
    fold_size: int    # models per set
    card_runs: int    # protocol runs behind each build's reliability card
    calibration_folds: int = 10  # folds of each build's cross-fitted calibration (build_micro's folds)


#: The quick profile, a preview, cross-fits the calibration over 5 folds instead of 10: every pool
#: model is still held out once (as many calibration errors), each fit learns from 80% of the pool
#: instead of 90%, and an IRT build fits half as many models.
HELD_OUT = {"quick": HeldOutPlan(2, 10, 3, 5), "default": HeldOutPlan(5, 10, 5), "paper": HeldOutPlan(10, 20, 20)}


def held_out_plan(n_models: int, profile: str | None = None, *, folds=None, fold_size=None,
                  card_runs=None, calibration_folds=None) -> HeldOutPlan:
    """The profile's plan (or the values given), shrunk to a pool of ``n_models``: the folds
    together leave at least 3 models to learn from; ``folds`` is 0 when the pool is too small."""
    base = HELD_OUT[profile or profile_name()]
    size = int(fold_size or base.fold_size)
    size = max(1, min(size, (n_models - 3) // 2))
    count = max(0, min(int(folds or base.folds), (n_models - 3) // size))
    return HeldOutPlan(count, size, int(card_runs or base.card_runs),
                       int(calibration_folds or base.calibration_folds))
