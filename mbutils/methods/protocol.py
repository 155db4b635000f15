"""The paper's protocol for one run: seen/unseen halves, target and source draws, seeding.

Every random choice comes from a generator derived from one root seed and a key
``(run, purpose, ...)`` via :class:`numpy.random.SeedSequence`, so results do not depend
on how many workers run, or in which order.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, replace

import numpy as np

from mbutils.data.benchmark import Benchmark
from mbutils.base.errors import ProtocolError


def _key_part(part) -> int:
    """Stable non-negative integer for a key part (strings hashed with CRC-32)."""
    if isinstance(part, str):
        return zlib.crc32(part.encode())
    value = int(part)
    if value < 0:
        raise ValueError(f"seed key parts must be non-negative, got {part!r}")
    return value


def rng_for(seed: int, *key) -> np.random.Generator:
    """Generator for one (run, purpose, ...) of an experiment with root ``seed``."""
    seq = np.random.SeedSequence(int(seed), spawn_key=tuple(_key_part(p) for p in key))
    return np.random.default_rng(seq)


def branch_seed(seed: int, *key) -> int:
    """A whole-number seed for a separate build or experiment on the branch ``key`` of ``seed``'s tree (a
    function that takes a seed, not a generator): distinct for distinct keys, and unlike ``seed + i`` it
    never equals a nearby root seed's own.

    Examples
    --------
    >>> branch_seed(0, "held-out build", 0) != branch_seed(1, "held-out build", 0) != 1
    True
    """
    return int(rng_for(seed, *key).integers(2 ** 31))


@dataclass(frozen=True)
class Protocol:
    """The paper's protocol for an experiment: how many models play each role, how many runs, which seed.

    In each run every subtask's items are split at random into a seen half (floor(n/2)
    items, from which micro-benchmarks are built and on which estimates are judged) and an
    unseen half; ``n_targets`` target models are drawn at random and ``n_sources`` source
    models from the rest. A selector sees only the sources' results on the seen items.
    Splits and model draws are shared by every selector and size of a run, and every random
    choice derives from ``seed``, so results do not depend on the number of workers. The
    defaults are the paper's headline setting; a protocol is checked against the bundle when
    an experiment starts.

    Parameters
    ----------
    n_sources : int, default 300
        Source models per run: the models whose results a selector may read (at least 1).
    n_targets : int, default 50
        Target models per run, drawn at random (at least 2, so there is a pair to compare);
        ignored when ``target_set`` is given. Targets and sources together must fit the bundle.
    n_runs : int, default 50
        Independent runs (at least 1); MDADs pool the pairs of all runs.
    seed : int, default 0
        Root seed (non-negative) of every split and model draw, and of the selectors' random
        streams.
    target_set : str or None, default None
        Name of a target set of the bundle (``Benchmark.target_sets``): the same named targets
        in every run instead of a random draw.
    frontier : float or None, default None
        The frontier split (beyond the paper): targets are drawn from the strongest ``frontier``
        share of the models (by accuracy on all items, at least 2 models), sources from the models
        weaker than every one of those, so every target is stronger than every source: the case of
        a new model that beats all models a method learned from. None: the paper's random draw.

    Examples
    --------
    >>> from mbutils import Protocol
    >>> Protocol()
    Protocol(n_sources=300, n_targets=50, n_runs=50, seed=0, target_set=None, frontier=None)
    >>> quick = Protocol(n_sources=60, n_targets=12, n_runs=2)
    >>> quick.as_dict()
    {'n_sources': 60, 'n_targets': 12, 'n_runs': 2, 'seed': 0, 'target_set': None}
    >>> from dataclasses import replace
    >>> replace(quick, seed=1).seed  # protocols are frozen: derive a new one
    1
    """

    n_sources: int = 300
    n_targets: int = 50
    n_runs: int = 50
    seed: int = 0
    target_set: str | None = None
    frontier: float | None = None

    def as_dict(self) -> dict:
        """The parameters by name, as cache keys and result metadata record them (``frontier`` only when
        set, so the paper's protocol keeps its keys)."""
        out = {
            "n_sources": self.n_sources,
            "n_targets": self.n_targets,
            "n_runs": self.n_runs,
            "seed": self.seed,
            "target_set": self.target_set,
        }
        if self.frontier is not None:
            out["frontier"] = float(self.frontier)
        return out


PAPER_N_SOURCES, PAPER_N_TARGETS = 300, 50
#: How a pool smaller than the paper's 350 models is shared out, as the book states it.
POOL_RULE = "targets = min(50, n // 3) and sources = min(300, n - targets) for a pool of n models"


def fit_to_pool(n_models: int, *, n_sources: int | None = None, n_targets: int | None = None) -> tuple[int, int]:
    """(sources, targets) for a pool of ``n_models``: the paper's 300 + 50 where they fit.

    A smaller pool keeps a third of its models as targets (at most 50, at least 2, so
    there is a pair to compare) and uses the rest as sources (at most 300); a value the
    caller gives is kept as given.
    """
    n_models = int(n_models)
    if n_models < 3:
        raise ProtocolError(f"the protocol needs at least 3 models (2 targets and 1 source), got {n_models}")
    targets = int(n_targets) if n_targets is not None else max(2, min(PAPER_N_TARGETS, n_models // 3))
    sources = int(n_sources) if n_sources is not None else max(1, min(PAPER_N_SOURCES, n_models - targets))
    return sources, targets


@dataclass(frozen=True)
class Run:
    """One run's draws: item indices of each half, model indices of sources and targets."""

    index: int
    seen: np.ndarray
    unseen: np.ndarray
    sources: np.ndarray
    targets: np.ndarray


def split_items(subtask_codes: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Random seen/unseen halves inside every subtask: floor(n/2) seen, the rest unseen."""
    codes = np.asarray(subtask_codes)
    order = np.lexsort((rng.random(len(codes)), codes))  # by subtask, random within
    sorted_codes = codes[order]
    starts = np.searchsorted(sorted_codes, sorted_codes, side="left")
    rank = np.arange(len(codes)) - starts
    sizes = np.bincount(codes)
    seen_mask = np.empty(len(codes), dtype=bool)
    seen_mask[order] = rank < sizes[sorted_codes] // 2
    return np.flatnonzero(seen_mask), np.flatnonzero(~seen_mask)


def frontier_pools(benchmark: Benchmark, frontier: float) -> tuple[np.ndarray, np.ndarray]:
    """(strong, weak): the strongest ``frontier`` share of the models (at least 2) and the models weaker
    than every one of them (ties with the weakest strong model are in neither)."""
    if not 0 < frontier < 1:
        raise ProtocolError(f"frontier must be a share of the models in (0, 1), got {frontier}")
    accuracy = benchmark.correct.mean(axis=1)
    order = np.argsort(-accuracy, kind="stable")
    n_strong = max(2, int(np.ceil(frontier * benchmark.n_models)))
    strong = np.sort(order[:n_strong])
    weak = np.flatnonzero(accuracy < accuracy[strong].min())
    return strong, weak


def fit_frontier(benchmark: Benchmark, protocol: Protocol, frontier: float) -> Protocol:
    """``protocol`` with the frontier split, its targets and sources cut to the pools the split leaves
    (a small bundle has few models in its strongest share)."""
    strong, weak = frontier_pools(benchmark, frontier)
    if len(weak) < 1:
        raise ProtocolError(f"{benchmark.name}: no model is weaker than the strongest {frontier:g} of the models")
    return replace(protocol, target_set=None, frontier=float(frontier), n_targets=min(protocol.n_targets, len(strong)),
                   n_sources=min(protocol.n_sources, len(weak)))


def check_protocol(benchmark: Benchmark, protocol: Protocol) -> None:
    """Refuse protocols the bundle cannot support, before any work starts."""
    if protocol.n_runs < 1:
        raise ProtocolError(f"runs must be at least 1, got {protocol.n_runs}")
    if int(protocol.seed) != protocol.seed or protocol.seed < 0:
        raise ProtocolError(f"seed must be a non-negative integer, got {protocol.seed}")
    if protocol.n_sources < 1:
        raise ProtocolError(f"sources must be at least 1, got {protocol.n_sources}")
    if protocol.target_set is not None:
        if protocol.target_set not in benchmark.target_sets:
            known = ", ".join(sorted(benchmark.target_sets)) or "none"
            raise ProtocolError(
                f"{benchmark.name}: no target set named {protocol.target_set!r} "
                f"(target sets in this bundle: {known})"
            )
        n_targets = len(benchmark.target_sets[protocol.target_set])
    else:
        n_targets = protocol.n_targets
    if n_targets < 2:
        raise ProtocolError(f"at least 2 targets are needed to compare pairs, got {n_targets}")
    if n_targets + protocol.n_sources > benchmark.n_models:
        raise ProtocolError(
            f"{benchmark.name} has {benchmark.n_models} models, too few for "
            f"{n_targets} targets + {protocol.n_sources} sources; lower --sources or --targets"
        )
    if protocol.frontier is not None:
        if protocol.target_set is not None:
            raise ProtocolError("give a target set or a frontier split, not both")
        strong, weak = frontier_pools(benchmark, protocol.frontier)
        if protocol.n_targets > len(strong):
            raise ProtocolError(f"{benchmark.name}: the strongest {protocol.frontier:g} of the models are "
                                f"{len(strong)}, fewer than {protocol.n_targets} targets; lower --targets or raise "
                                "--frontier")
        if protocol.n_sources > len(weak):
            raise ProtocolError(f"{benchmark.name}: {len(weak)} models are weaker than the strongest "
                                f"{protocol.frontier:g}, fewer than {protocol.n_sources} sources; lower --sources")
    if np.bincount(benchmark.subtask_codes).min() < 2:
        raise ProtocolError(
            f"{benchmark.name}: every subtask needs at least 2 items to have a seen and an unseen half"
        )


def draw_run(benchmark: Benchmark, protocol: Protocol, run: int) -> Run:
    """The split and model draws of run ``run``; shared by every selector and size."""
    check_protocol(benchmark, protocol)
    seen, unseen = split_items(benchmark.subtask_codes, rng_for(protocol.seed, run, "split"))
    rng = rng_for(protocol.seed, run, "models")
    if protocol.frontier is not None:
        strong, weak = frontier_pools(benchmark, protocol.frontier)
        targets = np.sort(rng.choice(strong, protocol.n_targets, replace=False))
        return Run(index=run, seen=seen, unseen=unseen, targets=targets,
                   sources=np.sort(rng.permutation(weak)[: protocol.n_sources]))
    if protocol.target_set is not None:
        targets = benchmark.model_index(benchmark.target_sets[protocol.target_set])
    else:
        targets = np.sort(rng.choice(benchmark.n_models, protocol.n_targets, replace=False))
    rest = np.setdiff1d(np.arange(benchmark.n_models), targets)
    # A permutation prefix: the sources of a smaller n_src are a subset of a larger one's.
    sources = np.sort(rng.permutation(rest)[: protocol.n_sources])
    return Run(index=run, seen=seen, unseen=unseen, sources=sources, targets=targets)
