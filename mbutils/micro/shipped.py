"""Micro-benchmarks that ship with the package: chosen once, stored small, turned into folders on demand.

Each shipped micro-benchmark was built by :func:`rebuild` with ``build_micro(..., selector="auto")`` (the
selector the book's paired noise rule finds most reliable at that size on the whole pool; the card
records why). What is stored under ``shipped_micro/<name>/`` is only what cannot be recomputed cheaply:
the chosen items and weights, the IRT item parameters when the estimator needs them, the pool's
accuracies, the cross-fitted calibration and the card (``shipped.json``), with ``hashes.json``: the
SHA-256 of each of those files, written when the folder is built (:func:`write_hashes`). Every read checks
them (:func:`verify`) and then the values (one check with :func:`~mbutils.micro.folder.read_micro`'s):
an edited, added or missing file, or a value no build writes, is one message naming the file; the shipped
data is verified, never sealed again. A usable folder (with the lm-evaluation-harness tasks of *this*
installation, its card in words and a manifest) is written from it by :func:`export_shipped`;
:func:`shipped_folder` keeps one such folder per name in the cache, keyed on those hashes. The bundles they
come from ship with the package too (the data path falls back to them).

A shipped micro-benchmark is a folder ``<bundle>-<k>`` (``k`` a whole number written without leading
zeros) holding ``shipped.json`` or ``hashes.json``; any other folder there is not one, and is skipped.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import MISSING, asdict, fields
from pathlib import Path

import numpy as np
import pandas as pd

from mbutils.base.errors import ShippedError
from mbutils.base.jsonfiles import json_text, read_json
from mbutils.base.tables import csv_safe, read_csv_table

#: The package data: one folder per shipped micro-benchmark.
SHIPPED = Path(__file__).resolve().parent / "shipped_micro"
FORMAT = "mbutils-shipped-micro/1"
#: Bundle -> sizes shipped, and the protocol runs and seed of every choice and card.
PLAN = {"gpqa": (25, 50, 100), "bbh-leaderboard": (50, 100, 250), "mmlu-pro-leaderboard": (50, 100, 250),
        "musr-leaderboard": (50, 100, 250), "math-hard-leaderboard": (50, 100, 250),
        "ifeval-leaderboard": (50, 100, 250)}
RUNS, SEED = 20, 0


#: Each shipped folder's list of its files' SHA-256 (written by :func:`write_hashes`).
HASHES = "hashes.json"
HASHES_FORMAT = "mbutils-shipped-hashes/1"
#: The name of a shipped micro-benchmark: ``<bundle>-<k>``.
_NAME = re.compile(r"(?P<bundle>[A-Za-z0-9][A-Za-z0-9._+-]*)-(?P<k>[1-9][0-9]{0,8})")
_HEX = frozenset("0123456789abcdef")
#: What to do about shipped data that fails its check.
MODIFIED = ("the shipped micro-benchmark data was modified after the package was built (or built damaged): "
            "reinstall mbutils (pip install --force-reinstall mbutils), or, in a clone, run the maintainers' "
            "`python -m mbutils micro rebuild`")
#: The files of every shipped folder (``item_params.csv``, ``pool_answers.csv`` too when its estimator needs them).
FILES = ("shipped.json", "items.csv", "pool.csv", "calibration.csv")
#: The keys of ``shipped.json``.
KEYS = ("format", "name", "bundle", "bundle_hash", "n_items", "k", "selector", "selector_class", "params", "seed",
        "excluded", "interval", "estimator", "card", "mbutils_version")


def _fail(path: Path, what: str) -> ShippedError:
    return ShippedError(f"{path}: {what}; {MODIFIED}")


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _is_shipped(folder: Path) -> bool:
    """A folder of the shipped data that is a shipped micro-benchmark: named ``<bundle>-<k>``, holding
    ``shipped.json`` or ``hashes.json`` (anything else there is skipped)."""
    return bool(_NAME.fullmatch(folder.name)) and folder.is_dir() \
        and ((folder / "shipped.json").exists() or (folder / HASHES).exists())


def shipped_names() -> list[str]:
    """Names of the shipped micro-benchmarks (``<bundle>-<k>``), sorted by bundle then size."""
    found = [p.name for p in SHIPPED.iterdir() if _is_shipped(p)] if SHIPPED.is_dir() else []
    return sorted(found, key=lambda n: (n.rpartition("-")[0], int(n.rpartition("-")[2])))


def _present(folder: Path) -> list[str]:
    """Every file of ``folder`` but its hashes, as relative POSIX paths (a file in a sub-folder too)."""
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")
                  if not p.is_dir() and p != folder / HASHES)


def write_hashes(folder: Path) -> dict:
    """Write ``hashes.json`` into a shipped folder: the SHA-256 of each of its other files (what
    :func:`freeze` stores). Run when the folder is built (by :func:`freeze`, so by :func:`rebuild`); the
    readers only check it. Returns what it wrote."""
    folder = Path(folder)
    value = {"format": HASHES_FORMAT, "name": folder.name,
             "files": {name: _sha(folder / name) for name in _present(folder)}}
    (folder / HASHES).write_text(_dumps(value), encoding="utf-8")
    return value


def verify(name: str) -> dict:
    """Check shipped micro-benchmark ``name`` against its ``hashes.json``: exactly the files it lists, each
    with the content it lists; returns the hashes. A failure is one :class:`ShippedError` naming the file."""
    folder = SHIPPED / str(name)
    path = folder / HASHES
    if not path.is_file():
        raise _fail(path, "missing (the file of SHA-256 hashes every shipped micro-benchmark carries)")
    try:
        value = read_json(path, ShippedError, what="an object of format, name and files")
    except ShippedError as err:
        raise ShippedError(f"{err}; {MODIFIED}") from None
    listed = value.get("files")
    if value.get("format") != HASHES_FORMAT or value.get("name") != folder.name or not isinstance(listed, dict):
        raise _fail(path, f"is not the hashes of {folder.name} (format {HASHES_FORMAT!r}, name, files)")
    for file, digest in listed.items():
        if not (isinstance(digest, str) and len(digest) == 64 and set(digest) <= _HEX) \
                or "/" in file or "\\" in file or file in ("", ".", "..", HASHES):
            raise _fail(path, f"its entry {ascii(file)[:80]} is not a file name with its SHA-256 digest")
    present = _present(folder)
    extra = sorted(set(present) - set(listed))
    if extra:
        raise _fail(folder / extra[0], f"not listed in {HASHES} (a file added to the folder)")
    for file in sorted(set(listed) | set(FILES)):
        target = folder / file
        if file not in present or not target.is_file():
            raise _fail(target, "missing" if file in listed else f"not listed in {HASHES}")
        if _sha(target) != listed[file]:
            raise _fail(target, f"changed (its SHA-256 is not the one {HASHES} lists)")
    return value


def record(name: str) -> dict:
    """The ``shipped.json`` of ``name``, after its folder passed :func:`verify` and its values their check
    (:func:`check_shipped`); an unknown name is one message listing the shipped ones.

    Examples
    --------
    >>> from mbutils.micro.shipped import record
    >>> rec = record("gpqa-25")
    >>> rec["bundle"], rec["k"], rec["name"]
    ('gpqa', 25, 'gpqa-25')
    """
    return _checked(name)[0]


def _checked(name: str) -> tuple[dict, dict]:
    """(``shipped.json``, ``hashes.json``) of a shipped name, the folder verified and its values checked."""
    if str(name) not in shipped_names():
        raise ShippedError(f"no shipped micro-benchmark {str(name)[:80]!r}; shipped: "
                           f"{', '.join(shipped_names()) or 'none'} (python -m mbutils micro list)")
    hashes = verify(name)
    rec = _read_record(SHIPPED / str(name))
    check_shipped(SHIPPED / str(name), rec)
    return rec, hashes


def _read_record(folder: Path) -> dict:
    try:
        return read_json(folder / "shipped.json", ShippedError)
    except ShippedError as err:
        raise ShippedError(f"{err}; {MODIFIED}") from None


def _table(path: Path, text: tuple) -> pd.DataFrame:
    try:
        return read_csv_table(path, text)
    except Exception as err:  # noqa: BLE001 -- any parser failure: the file is not the table written
        raise _fail(path, f"cannot be read as a table ({type(err).__name__})") from None


def _items(folder: Path, rec: dict) -> pd.DataFrame:
    """``items.csv``, checked as every micro-benchmark's items are (each named once, positive weights that
    sum to 1 for a weighted mean, as many as k)."""
    from mbutils.micro.checks import check_items, check_sizes, weights_sum_to_one

    path = folder / "items.csv"
    items = _table(path, ("item",))
    check_items(items, path, _fail, sum_to_one=weights_sum_to_one(rec["selector_class"], rec["params"]))
    check_sizes(rec["k"], rec["n_items"], len(items), folder / "shipped.json", _fail)
    return items


def check_shipped(folder: Path, rec: dict) -> None:
    """The values of a shipped record and its tables, as a micro-benchmark folder's are checked: the keys
    :func:`freeze` writes, of their types; its name, bundle and k those of its folder; the card
    (:func:`~mbutils.micro.checks.check_card`); the items, pool and calibration."""
    from mbutils.micro.checks import check_card

    path = folder / "shipped.json"
    absent = [key for key in KEYS if key not in rec]
    if absent:
        raise _fail(path, f"lacks {', '.join(absent)}")
    if rec["format"] != FORMAT:
        raise _fail(path, f"format {str(rec['format'])[:40]!r} is not {FORMAT!r}")
    match = _NAME.fullmatch(folder.name)
    if rec["name"] != folder.name or rec["bundle"] != match["bundle"] or not isinstance(rec["k"], int) \
            or isinstance(rec["k"], bool) or rec["k"] != int(match["k"]):
        raise _fail(path, f"its name, bundle and k ({str(rec['name'])[:40]!r}, {str(rec['bundle'])[:40]!r}, "
                    f"{str(rec['k'])[:20]}) are not those of its folder {folder.name}")
    texts = ("bundle_hash", "selector", "selector_class", "mbutils_version")
    wrong = [key for key in texts if not isinstance(rec[key], str)]
    wrong += [key for key in ("params", "estimator", "card") if not isinstance(rec[key], dict)]
    if not isinstance(rec["excluded"], list) or not all(isinstance(m, str) for m in rec["excluded"]):
        wrong.append("excluded")
    if not isinstance(rec["seed"], int) or isinstance(rec["seed"], bool) or rec["seed"] < 0:
        wrong.append("seed")
    if wrong:
        raise _fail(path, f"its {', '.join(wrong)} {'is' if len(wrong) == 1 else 'are'} not of the type a build writes")
    if rec["interval"] not in ("hypergeometric", "empirical", "normal"):
        raise _fail(path, f"interval {str(rec['interval'])[:30]!r} is not 'hypergeometric', 'empirical' or 'normal'")
    state = rec["estimator"]
    kinds = {"weighted_mean": ("reads",), "irt": ("estimator", "gp_lambda", "prior_sd_theta"), "difference": ()}
    if state.get("kind") not in kinds or any(key not in state for key in kinds[state["kind"]]) \
            or (state["kind"] == "weighted_mean" and state["reads"] not in ("correct", "confidence")) \
            or (state["kind"] == "irt" and not all(isinstance(state[key], (int, float)) and np.isfinite(state[key])
                                                   for key in ("gp_lambda", "prior_sd_theta"))):
        raise _fail(path, "its estimator state is not one a build writes")
    if (rec["interval"] == "normal") != (state["kind"] == "difference"):
        raise _fail(path, "the 'normal' interval goes with the difference estimator, and only with it")
    from mbutils.micro.build import Card

    unknown = sorted(set(rec["card"]) - {f.name for f in fields(Card)})
    if unknown:
        raise _fail(path, f"its card holds {', '.join(map(repr, unknown))[:80]}, which no card has")
    lacking = [f.name for f in fields(Card) if f.default is MISSING and f.name not in rec["card"]]
    if lacking:
        raise _fail(path, f"its card lacks {', '.join(lacking)}")
    coverage = rec["card"].get("coverage")
    parts = [("protocol", rec["card"].get("protocol")), ("coverage", coverage), ("choice", rec["card"].get("choice"))]
    parts += [(f"coverage.{key}", coverage.get(key)) for key in ("calibration", "excluded")] \
        if isinstance(coverage, dict) else []
    odd = [key for key, part in parts if part is not None and not isinstance(part, dict)]
    if odd:
        raise _fail(path, f"its card's {odd[0]} is neither an object nor null")
    check_card(rec["card"], path, _fail)
    _items(folder, rec)
    pool = _table(folder / "pool.csv", ("model",))
    accuracy = pd.to_numeric(pool.get("accuracy", pd.Series(dtype=object)), errors="coerce").to_numpy(float)
    if not {"model", "accuracy"} <= set(pool.columns) or not len(pool) or not ((accuracy >= 0) & (accuracy <= 1)).all() \
            or pool["model"].duplicated().any():
        raise _fail(folder / "pool.csv", "needs the columns model and accuracy, each model once, every accuracy "
                    "between 0 and 1")
    calibration = _table(folder / "calibration.csv", ("model",))
    columns = ["estimate", "truth", "error"]
    if not {"model", "fold", *columns} <= set(calibration.columns) \
            or not np.isfinite(calibration[columns].apply(pd.to_numeric, errors="coerce").to_numpy(float)).all() \
            or not set(calibration["model"]) <= set(pool["model"]):
        raise _fail(folder / "calibration.csv", "needs the columns model, fold, estimate, truth and error, a finite "
                    "number in each, for models of pool.csv")
    if calibration.empty:  # every shipped set is measured on its cross-fitted pool models
        raise _fail(folder / "calibration.csv", "holds no row, and the card's held-out measures were made on them")
    calib = (rec["card"].get("coverage") or {}).get("calibration")
    if isinstance(calib, dict) and calib["models"] != len(calibration):
        raise _fail(folder / "calibration.csv", f"holds {len(calibration)} models, and the card's coverage was "
                    f"measured on {calib['models']}")


def summary() -> pd.DataFrame:
    """One row per shipped micro-benchmark: name, bundle, k, selector, MDAD and its interval (measured in
    ``runs`` protocol runs on the pool), ``random_mdad`` (the exact planner's prediction for random sampling
    at the same k), coverage."""
    rows = []
    for name in shipped_names():
        rec = record(name)
        card, cov = rec["card"], (rec["card"].get("coverage") or {})
        calib = cov.get("calibration") or {}
        rows.append({"name": name, "bundle": rec["bundle"], "k": rec["k"], "n_items": rec["n_items"],
                     "selector": rec["selector"], "mdad": _num(card["mdad"]), "ci_low": _num(card["ci_low"]),
                     "ci_high": _num(card["ci_high"]), "runs": (card.get("protocol") or {}).get("n_runs"),
                     "random_mdad": _num(card["random_mdad"]),
                     "interval": rec["interval"], "coverage": (calib["covered"] / calib["models"]) if calib else np.nan,
                     "width": _num(cov.get("width")), "reason": (card.get("choice") or {}).get("reason", "")})
    return pd.DataFrame(rows)


def _num(value) -> float:
    return float("nan") if value is None else float(value)


# -- storing a build -----------------------------------------------------------------------------

def _dumps(value) -> str:
    return json_text(value, indent=1)


def freeze(built, folder: Path) -> None:
    """Store ``built`` (a BuiltMicro) in ``folder``: items, IRT parameters, pool, calibration, shipped.json,
    and last the SHA-256 of each (``hashes.json``, :func:`write_hashes`), which every reader checks."""
    from mbutils.base.version import __version__
    from mbutils.micro.folder import write_estimator_files

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
    write_hashes(folder)


def thaw(name: str):
    """The BuiltMicro a shipped micro-benchmark was frozen from (its bundle must be on the data path), after
    its folder passed :func:`verify` and its values their check, the chosen items all in the bundle."""
    from mbutils.data.bundle.harness import harness_map
    from mbutils.data.datasets import load_benchmark
    from mbutils.methods.selectors.base import MicroBenchmark
    from mbutils.methods.selectors.tiny_estimators import IRTMicroBenchmark
    from mbutils.micro.build import BuiltMicro, Card

    rec, folder = record(name), SHIPPED / name
    bench = load_benchmark(rec["bundle"])
    if bench.content_hash != rec["bundle_hash"]:
        raise ShippedError(f"{name}: bundle {rec['bundle']!r} on the data path ({bench.origin}) is not the one it "
                           "was built from (its content hash differs); unset MBUTILS_DATA or rebuild it")
    if rec["n_items"] != bench.n_items:
        raise _fail(folder / "shipped.json", f"n_items = {rec['n_items']}, and bundle {rec['bundle']!r} has "
                    f"{bench.n_items} items")
    items = _items(folder, rec)
    names = pd.Index(bench.items.astype(str))
    index = names.get_indexer(items["item"].astype(str))
    if (index < 0).any():
        row = int(np.flatnonzero(index < 0)[0])
        raise _fail(folder / "items.csv", f"row {row + 2} names item {str(items['item'].iloc[row])[:80]!r}, which "
                    f"bundle {rec['bundle']!r} does not hold")
    weights = items["weight"].to_numpy(np.float64)
    state = rec["estimator"]
    pool = _table(folder / "pool.csv", ("model",))
    if state["kind"] == "difference":  # the pool's answers are stored beside it (pool_answers.csv)
        from mbutils.micro.difference import read_difference

        _, micro = read_difference(folder, rec, items, pool, _fail)
    elif state["kind"] == "irt":
        path = folder / "item_params.csv"
        params = _table(path, ("item",))
        a = params[[c for c in params.columns if c.startswith("a_")]].apply(pd.to_numeric, errors="coerce")
        b = pd.to_numeric(params.get("b", pd.Series(dtype=object)), errors="coerce").to_numpy(np.float64)
        if "item" not in params or params["item"].astype(str).tolist() != names.tolist() or a.shape[1] < 1 \
                or not np.isfinite(a.to_numpy(np.float64)).all() or not np.isfinite(b).all():
            raise _fail(path, f"needs one row per item of bundle {rec['bundle']!r}, in its order, with finite "
                        "numbers b, a_0, a_1, ...")
        micro = IRTMicroBenchmark(items=index, weights=weights, item_a=a.to_numpy(np.float64), item_b=b,
                                  estimator=state["estimator"], gp_lambda=float(state["gp_lambda"]),
                                  prior_sd_theta=float(state["prior_sd_theta"]))
    else:
        micro = MicroBenchmark(items=index, weights=weights, reads=state["reads"])
    floats = {f.name for f in fields(Card) if f.type in ("float", float)}
    card = Card(**{key: (np.nan if key in floats and value is None else value) for key, value in rec["card"].items()})
    calibration = _table(folder / "calibration.csv", ("model",))
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
    from mbutils.micro.folder import write_micro

    built, bench = thaw(name)
    origin = Path(bench.origin) if bench.origin and Path(bench.origin).is_dir() else None
    return write_micro(built, out, bundle_folder=origin, force=force)


def shipped_folder(name: str):
    """A shipped micro-benchmark as a read, checked folder (a ``MicroFolder``, as ``read_micro`` returns),
    written once into the cache and reused (:func:`mbutils.load_micro` reads it as a micro-benchmark).

    The cached copy (``<cache>/micro/<name>-<key>``) is keyed on the SHA-256 of every file it is written
    from (``hashes.json``) and the mbutils version. A copy that fails its check, or no longer holds the
    shipped items, weights and card, is the cache's own file: it is written again.

    Examples
    --------
    >>> from mbutils.micro.shipped import shipped_folder, shipped_names
    >>> micro = shipped_folder(shipped_names()[0])
    >>> micro.k == len(micro.items), micro.meta["bundle"] in micro.path.name
    (True, True)
    """
    from mbutils.base.cache import cache_dir, locked_if_possible, safe_name
    from mbutils.micro.folder import read_micro

    rec, hashes = _checked(name)
    path = cache_dir() / "micro" / safe_name(f"{name}-{cache_key(name, hashes)}")
    with locked_if_possible([path]):
        folder = _cached(path, rec)
        if folder is not None:
            return folder
        _discard(path)
        export_shipped(name, path)
        return read_micro(path)


def cache_key(name: str, hashes: dict | None = None) -> str:
    """The 12 hex digits that name ``name``'s copy in the cache: a hash of the SHA-256 of each file it is
    written from (its ``hashes.json``) and of the mbutils version that writes it."""
    from mbutils.base.version import __version__

    files = (hashes or verify(name))["files"]
    payload = json.dumps({"name": str(name), "files": files, "mbutils": __version__}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:12]


def _cached(path: Path, rec: dict):
    """The cached folder at ``path`` when it passes its check and holds the shipped items, weights and card;
    else None."""
    from mbutils.micro.folder import MicroFolderError, read_micro

    if path.is_symlink() or not path.is_dir():
        return None
    try:
        folder = read_micro(path)
        card = json.loads((path / "card.json").read_text(encoding="utf-8"))
    except (MicroFolderError, OSError, ValueError):
        return None
    stored = _items(SHIPPED / rec["name"], rec)
    same = (folder.meta.get("bundle_hash") == rec["bundle_hash"] and folder.k == rec["k"]
            and folder.items["item"].astype(str).tolist() == stored["item"].astype(str).tolist()
            and np.array_equal(pd.to_numeric(folder.items["weight"]).to_numpy(float),
                               stored["weight"].to_numpy(float))
            and all(card.get(key) == value for key, value in json.loads(json_text(rec["card"])).items()))
    return folder if same else None


def _discard(path: Path) -> None:
    """Remove the cache's copy at ``path`` (a link is removed, never followed)."""
    import shutil

    from mbutils.base.cache import cache_root, inside

    inside(path.parent, cache_root())
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def _is_micro_folder(path: Path) -> bool:
    """A folder that is (or was) a micro-benchmark folder: it holds manifest.json or micro.json."""
    return path.is_dir() and ((path / "manifest.json").exists() or (path / "micro.json").exists())


def open_micro(name_or_folder):
    """A micro-benchmark folder by path, or a shipped one by name: a shipped name opens the shipped one unless
    a micro-benchmark folder of that name (holding manifest.json or micro.json) exists, which wins; a file or
    another folder of that name does not shadow it. Anything else is read as a folder."""
    from mbutils.micro.folder import read_micro

    text = str(name_or_folder)
    if text in shipped_names() and not _is_micro_folder(Path(text).expanduser()):
        return shipped_folder(text)
    return read_micro(name_or_folder)


# -- choosing them again (maintainers) --------------------------------------------------------------

def rebuild(bundles=None, *, jobs: int = 1, progress: bool = False, target: Path = SHIPPED) -> list[dict]:
    """Choose and store every shipped micro-benchmark of ``bundles`` (default all of :data:`PLAN`) again.

    Each is ``build_micro(bundle, "auto", k, runs=RUNS, seed=SEED)`` on the whole pool; the stored card
    holds the choice's numbers. Everything of a bundle is computed before any of its folders is replaced."""
    import shutil
    import tempfile

    from mbutils.data.datasets import load_benchmark
    from mbutils.micro.build import build_micro

    unknown = sorted(set(bundles or ()) - set(PLAN))
    if unknown:
        raise ShippedError(f"no shipped plan for {', '.join(unknown)}; plans: {', '.join(PLAN)}")
    done = []
    for bundle in bundles or PLAN:
        bench = load_benchmark(bundle)
        built = {k: build_micro(bench, "auto", k, runs=RUNS, seed=SEED, jobs=jobs, progress=progress)
                 for k in PLAN[bundle]}
        failing = {k: one.card.held_out["problems"] for k, one in built.items() if one.card.held_out["problems"]}
        if failing:  # nothing of the bundle is replaced: a set that fails on held-out models is not shipped
            raise ShippedError(f"{bundle}: not shipped, held-out models refute it: {failing}")
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
