"""Speed of Anchor Points at MMLU-Pro scale: one ``prepare`` plus every size of one run.

Synthetic source confidences (300 sources x 6,012 seen items by default) from a
multidimensional logistic model with one latent skill per subtask, so items have real
correlation structure. Prints seconds per step; not a test.

    python benchmarks/bench_anchor.py [--dtype float64] [--init build] [--cold] [--sizes 10,25,...]

``--cold`` starts every size from ``init`` (no warm start from the previous size). FasterPAM runs every
time: the clusterings kept in the cache (``mbutils.methods.medoid_store``) are not read.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from mbutils.methods import medoid_store
from mbutils.methods.selectors.anchor import AnchorPoints
from mbutils.methods.selectors.base import SourceData

MMLU_PRO_SEEN = np.array([499, 1101, 969, 1132, 789, 798, 818, 717, 381, 924, 844, 1299, 410, 1351]) // 2


def synthetic_sources(n_sources: int, subtask_sizes, rng: np.random.Generator) -> SourceData:
    """Confidences with a general ability plus one skill per subtask."""
    subtasks = np.repeat(np.arange(len(subtask_sizes)), subtask_sizes)
    general = rng.normal(size=(n_sources, 1))
    skill = rng.normal(scale=0.7, size=(n_sources, len(subtask_sizes)))
    difficulty = rng.normal(size=len(subtasks))
    logit = general + skill[:, subtasks] - difficulty + rng.normal(scale=0.8, size=(n_sources, len(subtasks)))
    confidence = 1 / (1 + np.exp(-logit))
    correct = (rng.random(confidence.shape) < confidence).astype(np.float64)
    return SourceData(correct=correct, subtasks=subtasks, confidence=confidence)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", type=int, default=300)
    parser.add_argument("--sizes", default="10,25,50,100,250,500,1000")
    parser.add_argument("--dtype", default="float32", choices=["float64", "float32"])
    parser.add_argument("--init", default="random", choices=["random", "build"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cold", action="store_true", help="no warm start across sizes")
    args = parser.parse_args()
    with medoid_store.reading(False):  # time the clustering, not a read of a stored one
        run(args)


def run(args) -> None:
    sizes = [int(s) for s in args.sizes.split(",")]

    rng = np.random.default_rng(args.seed)
    source = synthetic_sources(args.sources, MMLU_PRO_SEEN, rng)
    selector = AnchorPoints(dtype=args.dtype, init=args.init, warm_start=not args.cold)
    print(f"{args.sources} sources x {source.n_items} items, dtype={args.dtype}, init={args.init}, "
          f"warm start={not args.cold}")

    start = time.perf_counter()
    prepared = selector.prepare(source, rng)
    prepare_s = time.perf_counter() - start
    print(f"prepare (correlation + 1 - corr): {prepare_s:6.2f} s, "
          f"matrix {prepared.dissimilarity.nbytes / 1e6:.0f} MB")

    total = prepare_s
    for k in sizes:
        start = time.perf_counter()
        mb = selector.select(prepared, k, rng)
        seconds = time.perf_counter() - start
        total += seconds
        print(f"k={k:5d}: {seconds:6.2f} s   largest cluster {mb.weights.max() * source.n_items:5.0f} items")
    print(f"total (prepare once + all sizes): {total:.2f} s")


if __name__ == "__main__":
    main()
