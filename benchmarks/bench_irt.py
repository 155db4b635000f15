"""Speed and memory of the IRT fit and of the tinyBenchmarks family (not a test).

Run: ``python benchmarks/bench_irt.py [--models 300] [--items 6012] [--dims 10]``.
Prints wall time and CPU time (the machine may be shared: CPU time is the steadier
number), peak traced memory of one fit and the peak resident memory of the process. Data: a planted 10-dimensional 2PL simulation shaped
like the MMLU-Pro seen half (300 sources x 6,012 items) plus 50 targets.
"""

from __future__ import annotations

import argparse
import resource
import time
import tracemalloc

import numpy as np

from mbutils.methods.irt_fit import IRTModel
from mbutils.methods.selectors import make_selector
from mbutils.methods.selectors import tiny_estimators
from mbutils.methods.selectors.base import SourceData

FAMILY = ["tinybenchmarks", "tinybenchmarks_irt", "tinybenchmarks_pirt", "tinybenchmarks_gpirt"]
SIZES = [10, 25, 50, 100, 250, 500, 1000]


def planted(n_models: int, n_items: int, dims: int, rng: np.random.Generator):
    """0/1 responses from a 2PL model with one strong general factor (accuracies ~10-90%)."""
    theta = rng.normal(size=(n_models, dims))
    a = rng.normal(0.0, 0.4, size=(n_items, dims))
    a[:, 0] = np.abs(rng.normal(1.2, 0.4, size=n_items))
    b = rng.normal(0.0, 1.5, size=n_items)
    logit = theta @ a.T - b
    return (rng.random(logit.shape) < 1.0 / (1.0 + np.exp(-logit))).astype(np.float64), logit


class Timer:
    def __enter__(self):
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.wall = time.perf_counter() - self.wall
        self.cpu = time.process_time() - self.cpu

    def __str__(self):
        return f"wall {self.wall:6.2f} s  cpu {self.cpu:6.2f} s"


def bench_fit(Y, logit, dims: int) -> None:
    with Timer() as t:
        model = IRTModel(dims=dims).fit(Y)
    corr = np.corrcoef(model.logits().ravel(), logit.ravel())[0, 1]
    print(f"IRT fit {Y.shape[0]} x {Y.shape[1]}, D={dims}: {t}  sweeps {model.n_iter_} "
          f"converged {model.converged_}  corr(fitted, planted logits) {corr:.3f}")
    tracemalloc.start()
    IRTModel(dims=dims).fit(Y)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"IRT fit peak traced memory: {peak / 2**20:.0f} MiB "
          f"(data matrix itself: {Y.nbytes / 2**20:.0f} MiB)")


def bench_family(sources, targets, sizes) -> None:
    """As the experiment runs it: one prepare for the four (shared key), same streams."""
    source = SourceData(correct=sources, subtasks=np.zeros(sources.shape[1], dtype=int))
    truth = targets.mean(axis=1)
    selectors = [make_selector(name) for name in FAMILY]
    assert len({s.shared_key() for s in selectors}) == 1
    with Timer() as total:
        with Timer() as t_prep:
            prepared = selectors[0].prepare(source, np.random.default_rng(0))
        print(f"  prepare (IRT fit, shared by the family): {t_prep}")
        for selector in selectors:
            errors = []
            with Timer() as t_sel:
                for k in sizes:
                    micro = selector.select(prepared, k, np.random.default_rng(k))
                    errors.append(np.abs(micro.estimate(targets) - truth).mean())
            print(f"  {selector.name:22s} {len(sizes)} sizes select+estimate {t_sel}")
            print(" " * 25 + "MAE by size: " + ", ".join(
                f"{k}:{e:.4f}" for k, e in zip(sizes, errors)))
    bias, variance = selectors[-1].gp_stats(prepared)
    lams = [tiny_estimators.gp_lambda(bias, variance, k, selectors[-1].variance_factor) for k in sizes]
    print(f"  gp-IRT: held-out IRT error B={bias:.4f}, item variance V={variance:.4f}, "
          "lambda by size: " + ", ".join(f"{k}:{lam:.2f}" for k, lam in zip(sizes, lams)))
    print(f"whole family ({len(FAMILY)} selectors x {len(sizes)} sizes, {len(targets)} targets): "
          f"{total}")


def bench_random(targets, sizes, n_items) -> None:
    truth = targets.mean(axis=1)
    rng = np.random.default_rng(1)
    errors = [np.mean([np.abs(targets[:, rng.choice(n_items, k, replace=False)].mean(axis=1)
                              - truth).mean() for _ in range(20)]) for k in sizes]
    print("  random subsets (20 draws)  MAE by size: " + ", ".join(
        f"{k}:{e:.4f}" for k, e in zip(sizes, errors)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--models", type=int, default=300)
    parser.add_argument("--targets", type=int, default=50)
    parser.add_argument("--items", type=int, default=6012)
    parser.add_argument("--dims", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    Y, logit = planted(args.models + args.targets, args.items, args.dims, rng)
    sources, targets = Y[: args.models], Y[args.models:]
    bench_fit(sources, logit[: args.models], args.dims)
    sizes = [k for k in SIZES if k <= args.items]
    print("tinyBenchmarks family:")
    bench_family(sources, targets, sizes)
    bench_random(targets, sizes, args.items)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak resident memory of this process: {peak:.0f} MiB")


if __name__ == "__main__":
    main()
