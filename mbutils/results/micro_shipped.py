"""Micro-benchmarks that ship with the package: chosen once, stored small, turned into folders on demand.

Each shipped micro-benchmark was built by :func:`rebuild` with ``build_micro(..., selector="auto")`` (the
selector the book's paired noise rule finds most reliable at that size on the whole pool; the card
records why). What is stored under ``shipped_micro/<name>/`` is only what cannot be recomputed cheaply:
the chosen items and weights, the IRT item parameters when the estimator needs them, the pool's
accuracies, the cross-fitted calibration and the card (``shipped.json``). A usable folder (with the
lm-evaluation-harness tasks of *this* installation, its card in words and a manifest) is written from it
by :func:`export_shipped`; :func:`load_micro` keeps one such folder per name in the cache. The bundles
they come from ship with the package too (the data path falls back to them).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, fields
from pathlib import Path

import numpy as np
import pandas as pd

from mbutils.base.errors import MbutilsError
from mbutils.base.jsonfiles import json_text
from mbutils.base.tables import csv_safe, read_csv_table

#: The package data: one folder per shipped micro-benchmark.
SHIPPED = Path(__file__).resolve().parent / "shipped_micro"
FORMAT = "mbutils-shipped-micro/1"
#: Bundle -> sizes shipped, and the protocol runs and seed of every choice and card.
PLAN = {"gpqa": (25, 50, 100), "bbh-leaderboard": (50, 100, 250), "mmlu-pro-leaderboard": (50, 100, 250)}
RUNS, SEED = 20, 0


class ShippedError(MbutilsError, ValueError):
    """A shipped micro-benchmark that does not exist or cannot be used."""


def shipped_names() -> list[str]:
    """Names of the shipped micro-benchmarks (``<bundle>-<k>``), sorted by bundle then size."""
    found = [p.name for p in SHIPPED.iterdir() if (p / "shipped.json").is_file()] if SHIPPED.is_dir() else []
    return sorted(found, key=lambda n: (n.rpartition("-")[0], int(n.rpartition("-")[2])))


def record(name: str) -> dict:
    """The ``shipped.json`` of ``name``; an unknown name is one message listing the shipped ones."""
    path = SHIPPED / str(name) / "shipped.json"
    if str(name) not in shipped_names():
        raise ShippedError(f"no shipped micro-benchmark {str(name)[:80]!r}; shipped: "
                           f"{', '.join(shipped_names()) or 'none'} (python -m mbutils micro list)")
    return json.loads(path.read_text(encoding="utf-8"))


def summary() -> pd.DataFrame:
    """One row per shipped micro-benchmark: name, bundle, k, selector, MDAD and its interval, random's, coverage."""
    rows = []
    for name in shipped_names():
        rec = record(name)
        card, cov = rec["card"], (rec["card"].get("coverage") or {})
        calib = cov.get("calibration") or {}
        rows.append({"name": name, "bundle": rec["bundle"], "k": rec["k"], "n_items": rec["n_items"],
                     "selector": rec["selector"], "mdad": _num(card["mdad"]), "ci_low": _num(card["ci_low"]),
                     "ci_high": _num(card["ci_high"]), "random_mdad": _num(card["random_mdad"]),
                     "interval": rec["interval"], "coverage": (calib["covered"] / calib["models"]) if calib else np.nan,
                     "width": _num(cov.get("width")), "reason": (card.get("choice") or {}).get("reason", "")})
    return pd.DataFrame(rows)


def _num(value) -> float:
    return float("nan") if value is None else float(value)


# -- storing a build -----------------------------------------------------------------------------

def _dumps(value) -> str:
    return json_text(value, indent=1)


def freeze(built, folder: Path) -> None:
    """Store ``built`` (a BuiltMicro) in ``folder``: items, IRT parameters, pool, calibration, shipped.json."""
    from mbutils.base.version import __version__
    from mbutils.results.micro_folder import write_estimator_files

    folder.mkdir(parents=True, exist_ok=True)
    micro = built.micro
    csv_safe(pd.DataFrame({"item": built.items[micro.items], "weight": micro.weights})) \
        .to_csv(folder / "items.csv", index=False, float_format="%.17g")
    state = write_estimator_files(built, folder, params_format="%.10g")
    (folder / "shipped.json").write_text(_dumps({
        "format": FORMAT, "name": folder.name, "bundle": built.bundle, "bundle_hash": built.bundle_hash,
        "n_items": len(built.items), "k": built.k, "selector": built.selector, "selector_class": built.selector_class,
        "params": built.params, "seed": built.seed, "excluded": built.excluded, "interval": built.interval,
        "estimator": state, "card": asdict(built.card), "mbutils_version": __version__}), encoding="utf-8")


def thaw(name: str):
    """The BuiltMicro a shipped micro-benchmark was frozen from (its bundle must be on the data path)."""
    from mbutils.data.bundle.harness import harness_map
    from mbutils.data.datasets import load_benchmark
    from mbutils.methods.selectors.base import MicroBenchmark
    from mbutils.methods.selectors.tiny_estimators import IRTMicroBenchmark
    from mbutils.results.microbench import BuiltMicro, Card

    rec, folder = record(name), SHIPPED / name
    bench = load_benchmark(rec["bundle"])
    if bench.content_hash != rec["bundle_hash"]:
        raise ShippedError(f"{name}: bundle {rec['bundle']!r} on the data path ({bench.origin}) is not the one it "
                           "was built from (its content hash differs); unset MBUTILS_DATA or rebuild it")
    items = read_csv_table(folder / "items.csv", ("item",))
    index = pd.Index(bench.items.astype(str)).get_indexer(items["item"].astype(str))
    weights = items["weight"].to_numpy(np.float64)
    state = rec["estimator"]
    pool = read_csv_table(folder / "pool.csv", ("model",))
    if state["kind"] == "difference":  # the pool's answers are stored beside it (pool_answers.csv)
        from mbutils.results.micro_difference import read_difference

        _, micro = read_difference(folder, rec, items, pool, lambda path, what: ShippedError(f"{path}: {what}"))
    elif state["kind"] == "irt":
        params = read_csv_table(folder / "item_params.csv", ("item",))
        a = params[[c for c in params.columns if c.startswith("a_")]].to_numpy(np.float64)
        micro = IRTMicroBenchmark(items=index, weights=weights, item_a=a, item_b=params["b"].to_numpy(np.float64),
                                  estimator=state["estimator"], gp_lambda=float(state["gp_lambda"]),
                                  prior_sd_theta=float(state["prior_sd_theta"]))
    else:
        micro = MicroBenchmark(items=index, weights=weights, reads=state["reads"])
    floats = {f.name for f in fields(Card) if f.type in ("float", float)}
    card = Card(**{key: (np.nan if key in floats and value is None else value) for key, value in rec["card"].items()})
    calibration = read_csv_table(folder / "calibration.csv", ("model",))
    if calibration.empty:
        calibration = pd.DataFrame(columns=["model", "fold", "estimate", "truth", "error"])
    return BuiltMicro(bundle=rec["bundle"], bundle_hash=rec["bundle_hash"], items=bench.items.astype(str),
                      subtasks=bench.subtasks.astype(str), micro=micro, selector=rec["selector"],
                      selector_class=rec["selector_class"], params=rec["params"], seed=int(rec["seed"]),
                      pool=pool, excluded=list(rec["excluded"]), calibration=calibration, card=card,
                      interval=rec["interval"], harness=harness_map(bench)), bench


# -- using one ----------------------------------------------------------------------------------

def export_shipped(name: str, out, *, force: bool = False) -> Path:
    """Write shipped micro-benchmark ``name`` as a micro-benchmark folder at ``out`` (whole or not at all),
    with lm-evaluation-harness tasks that include this installation's harness configs."""
    from mbutils.results.micro_folder import write_micro

    built, bench = thaw(name)
    origin = Path(bench.origin) if bench.origin and Path(bench.origin).is_dir() else None
    return write_micro(built, out, bundle_folder=origin, force=force)


def load_micro(name: str):
    """A shipped micro-benchmark as a read, checked folder (a ``MicroFolder``, as ``read_micro`` returns),
    written once into the cache and reused.

    Examples
    --------
    >>> from mbutils.results.micro_shipped import load_micro, shipped_names
    >>> micro = load_micro(shipped_names()[0])
    >>> micro.k == len(micro.items), micro.meta["bundle"] in micro.path.name
    (True, True)
    """
    from mbutils.base.cache import cache_dir, safe_name
    from mbutils.base.version import __version__
    from mbutils.results.micro_folder import MicroFolderError, read_micro

    rec = record(name)
    digest = hashlib.sha256(json.dumps(rec, sort_keys=True).encode() + __version__.encode()).hexdigest()[:12]
    path = cache_dir() / "micro" / safe_name(f"{name}-{digest}")
    try:
        return read_micro(path)
    except MicroFolderError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    export_shipped(name, path, force=True)
    return read_micro(path)


def open_micro(name_or_folder):
    """A micro-benchmark folder by path, or a shipped one by name (a folder of that name wins)."""
    from mbutils.results.micro_folder import read_micro

    text = str(name_or_folder)
    if not Path(text).expanduser().exists() and text in shipped_names():
        return load_micro(text)
    return read_micro(name_or_folder)


# -- choosing them again (maintainers) --------------------------------------------------------------

def rebuild(bundles=None, *, jobs: int = 1, progress: bool = False, target: Path = SHIPPED) -> list[dict]:
    """Choose and store every shipped micro-benchmark of ``bundles`` (default all of :data:`PLAN`) again.

    Each is ``build_micro(bundle, "auto", k, runs=RUNS, seed=SEED)`` on the whole pool; the stored card
    holds the choice's numbers. Everything of a bundle is computed before any of its folders is replaced."""
    import shutil
    import tempfile

    from mbutils.data.datasets import load_benchmark
    from mbutils.results.microbench import build_micro

    unknown = sorted(set(bundles or ()) - set(PLAN))
    if unknown:
        raise ShippedError(f"no shipped plan for {', '.join(unknown)}; plans: {', '.join(PLAN)}")
    done = []
    for bundle in bundles or PLAN:
        bench = load_benchmark(bundle)
        built = {k: build_micro(bench, "auto", k, runs=RUNS, seed=SEED, jobs=jobs, progress=progress)
                 for k in PLAN[bundle]}
        for k, one in built.items():
            name = f"{bundle}-{k}"
            with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
                freeze(one, Path(tmp) / name)
                shutil.rmtree(target / name, ignore_errors=True)
                target.mkdir(parents=True, exist_ok=True)
                shutil.move(str(Path(tmp) / name), str(target / name))
            done.append({"name": name, "selector": one.selector, "mdad": one.card.mdad,
                         "reason": one.card.choice["reason"]})
    return done
