"""A micro-benchmark folder on disk: written whole or not at all, read back only when intact.

Files (all text, so a reader can inspect them):

``micro.json``        format, bundle and its content hash, selector, k, estimator state
                      (kind, reads, IRT estimator, gp lambda, prior; the difference estimator's folds
                      and neighbour rule), interval kind, lm-eval tasks
``items.csv``         item, subtask, weight: the chosen items (in the estimator's order)
``item_params.csv``   IRT selectors only: item, b, a_0 .. a_{D-1} for every item of the bundle
``pool_answers.csv``  the difference estimator (``random_difference``) only: the pool's 0/1 answers on every
                      item of the bundle, one row per pool model (:mod:`mbutils.micro.difference`)
``pool.csv``          model, accuracy: the models it learned from, with their full accuracy
``calibration.csv``   model, fold, estimate, truth, error (and variance, for the difference estimator):
                      cross-fitted held-out errors
``card.json``         the reliability card (MDAD with interval, random's, share separated, interval coverage)
``card.md``           the same card in words, for a person (:mod:`mbutils.micro.card`)
``provenance.json``   bundle, hash, selector and parameters, seed, excluded models, version, code
``lm_eval/``          ``<task>_micro.yaml`` per harness task, ``_group.yaml`` (the group ``<benchmark>_micro``),
                      ``micro_docs.json`` and ``micro_docs.py`` (:mod:`mbutils.micro.lm_eval_export`)
``manifest.json``     SHA-256 of every other file: a changed or missing file is refused
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd

from mbutils.base.version import __version__
from mbutils.base.errors import MicroFolderError
from mbutils.base.jsonfiles import json_text
from mbutils.base.folders import check_output_folder, replace_folder
from mbutils.base.jsonfiles import read_json
from mbutils.base.tables import csv_safe, read_csv_table
from mbutils.base.fingerprint import code_fingerprint
from mbutils.methods.selectors.base import MicroBenchmark
from mbutils.methods.selectors.random_sampling import DifferenceMicroBenchmark
from mbutils.methods.selectors.tiny_estimators import IRTMicroBenchmark
from mbutils.micro.lm_eval_export import GROUP_FILE, export_micro
from mbutils.micro.card import card_markdown
from mbutils.micro.checks import check_card, check_items, check_sizes, weights_sum_to_one

FORMAT = "mbutils-micro-benchmark/1"
MANIFEST = "manifest.json"
#: Files every micro-benchmark folder holds (``item_params.csv`` too for IRT estimators).
REQUIRED = ("micro.json", "items.csv", "pool.csv", "calibration.csv", "card.json", "provenance.json")
_HEX = frozenset("0123456789abcdef")


def _json(value) -> str:
    return json_text(value, indent=2)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def check_out(out: str | Path, bundle_folder: Path | None, force: bool) -> Path:
    """Refuse an output folder that exists and is not empty (unless ``force``, and then only a folder
    build-micro wrote: it holds a manifest), lies in the bundle, or is a symbolic link (the folder is
    replaced whole by a rename, which would replace the link, not the folder it points to)."""
    if Path(out).expanduser().is_symlink():
        raise MicroFolderError(f"{out} is a symbolic link; the output folder may not be one (it is replaced "
                               "whole): give the folder it points to, or a new folder name")
    return check_output_folder(out, force, [bundle_folder], MicroFolderError, owned=_is_sealed)


def _is_sealed(root: Path) -> bool:
    """True for an unedited micro-benchmark folder: its manifest lists exactly its files, with their content."""
    try:
        _verify(root)
    except MicroFolderError:
        return False
    return True


def _present(root: Path) -> list[str]:
    """Every file of the folder but the manifest, as relative POSIX paths (compiled Python in a
    ``__pycache__`` counts: it would run in place of ``micro_docs.py``)."""
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.name != MANIFEST and not p.is_dir())


def write_estimator_files(built, root: Path, params_format: str = "%.17g") -> dict:
    """Write what a build's estimate needs beside its items (IRT item parameters, the pool's answers of
    the difference estimator, the pool, the calibration) into ``root``; returns the estimator's state as
    the folder's JSON records it. One writer for a micro folder and a shipped micro-benchmark, so the
    two cannot drift."""
    micro = built.micro
    state = {"kind": "weighted_mean", "reads": micro.reads}
    if isinstance(micro, DifferenceMicroBenchmark):
        from mbutils.micro.difference import write_pool_answers

        state = write_pool_answers(built, root)
    if isinstance(micro, IRTMicroBenchmark):
        state = {"kind": "irt", "reads": "correct", "estimator": micro.estimator,
                 "gp_lambda": micro.gp_lambda, "prior_sd_theta": micro.prior_sd_theta}
        params = pd.DataFrame(micro.item_a, columns=[f"a_{d}" for d in range(micro.item_a.shape[1])])
        params.insert(0, "b", micro.item_b)
        params.insert(0, "item", built.items)
        csv_safe(params).to_csv(root / "item_params.csv", index=False, float_format=params_format)
    csv_safe(built.pool).to_csv(root / "pool.csv", index=False, float_format="%.17g")
    csv_safe(built.calibration).to_csv(root / "calibration.csv", index=False, float_format="%.17g")
    return state


def _write_files(built, root: Path, tasks_dir) -> None:
    micro = built.micro
    chosen = micro.items
    csv_safe(pd.DataFrame({"item": built.items[chosen], "subtask": built.subtasks[chosen], "weight": micro.weights})) \
        .to_csv(root / "items.csv", index=False, float_format="%.17g")
    state = write_estimator_files(built, root)
    export = export_micro(root / "lm_eval", built, tasks_dir)
    meta = {"format": FORMAT, "bundle": built.bundle, "bundle_hash": built.bundle_hash, "n_items": len(built.items),
            "selector": built.selector, "k": built.k, "estimator": state, "interval": built.interval, **export}
    (root / "card.json").write_text(_json(asdict(built.card)), encoding="utf-8")
    (root / "card.md").write_text(card_markdown(built, meta), encoding="utf-8")
    (root / "micro.json").write_text(_json(meta), encoding="utf-8")
    (root / "provenance.json").write_text(_json({
        "bundle": built.bundle, "bundle_hash": built.bundle_hash, "selector": built.selector,
        "selector_class": built.selector_class, "params": built.params, "seed": built.seed,
        "excluded_models": built.excluded, "n_pool": len(built.pool), "mbutils_version": __version__,
        "code": code_fingerprint()}), encoding="utf-8")
    (root / MANIFEST).write_text(_json({name: _sha(root / name) for name in _present(root)}), encoding="utf-8")


def write_micro(built, out: str | Path, *, bundle_folder: Path | None = None, force: bool = False,
                tasks_dir=None) -> Path:
    """Write ``built`` (a :class:`~mbutils.micro.build.BuiltMicro`) as a folder, atomically: into a
    temporary sibling, checked (the harness indexes its export), then renamed into place. The public door
    is :func:`mbutils.build_micro` with ``out``."""
    path = check_out(out, bundle_folder, force)
    return replace_folder(path, lambda folder: _write_files(built, folder, tasks_dir))


# -- reading ---------------------------------------------------------------------------------

class MicroFolder:
    """A micro-benchmark folder read back: its items, estimator, pool, calibration and card.

    What ``read_micro`` and ``mbutils.load_micro`` return; ``mbutils.score`` reads one.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from mbutils import MicroFolder, build_micro, load_benchmark
    >>> from mbutils.micro.folder import read_micro
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "micro"
    >>> _ = build_micro(load_benchmark("synthetic-gpqa"), "random", 20, runs=2, out=out)
    >>> folder = read_micro(out)
    >>> isinstance(folder, MicroFolder), folder.k, len(folder.item_names), folder.path == out
    (True, 20, 20, True)
    """

    def __init__(self, path: Path, meta: dict, items: pd.DataFrame, micro: MicroBenchmark, item_names: list[str],
                 pool: pd.DataFrame, calibration: pd.DataFrame, card: dict, provenance: dict):
        self.path, self.meta, self.items, self.micro = path, meta, items, micro
        self.item_names, self.pool, self.calibration = item_names, pool, calibration
        self.card, self.provenance = card, provenance

    @property
    def n_items(self) -> int:
        return int(self.meta["n_items"])

    @property
    def k(self) -> int:
        return int(self.meta["k"])


def _fail(path: Path, what: str) -> MicroFolderError:
    return MicroFolderError(f"{path}: {what}; the micro-benchmark folder is damaged or incomplete: build it "
                            "again with `python -m mbutils build-micro`")


def _compiled_filter(root: Path, name: str) -> bool:
    """True for the bytecode cache Python leaves when the harness imports ``lm_eval/micro_docs.py``, and only
    when it holds that sealed file's compilation by this Python (any other bytes would run in its place)."""
    import importlib.util
    import marshal

    parts = name.split("/")
    if len(parts) != 3 or parts[:2] != ["lm_eval", "__pycache__"] or not parts[2].startswith("micro_docs.") \
            or not parts[2].endswith(".pyc") or not (root / "lm_eval" / "micro_docs.py").is_file():
        return False
    data = (root / name).read_bytes()
    if data[:4] != importlib.util.MAGIC_NUMBER:
        return False
    try:
        loaded = marshal.loads(data[16:])
        expected = compile((root / "lm_eval" / "micro_docs.py").read_bytes(), loaded.co_filename, "exec",
                           dont_inherit=True)
    except (ValueError, EOFError, TypeError, AttributeError, SyntaxError):
        return False
    return loaded == expected


def _verify(root: Path) -> None:
    """The folder holds exactly the files its manifest lists, each with the content it lists."""
    manifest = root / MANIFEST
    if not manifest.is_file():
        raise _fail(manifest, "missing (is this a micro-benchmark folder written by build-micro?)")
    listed = read_json(manifest, MicroFolderError, what="an object of file -> SHA-256")
    for name, digest in listed.items():
        if not (isinstance(digest, str) and len(digest) == 64 and set(digest) <= _HEX):
            raise _fail(manifest, f"its entry {ascii(name)[:80]} is not a SHA-256 digest")
    every = _present(root)
    compiled = [name for name in every if name.endswith(".pyc") or "__pycache__" in name.split("/")]
    for name in compiled:  # listed or not: only the sealed filter's own compilation may stand beside it
        if not _compiled_filter(root, name):
            raise _fail(root / name, "compiled Python that is not the compilation of the sealed lm_eval/micro_docs.py "
                        "by this Python; it would run in the filter's place: delete lm_eval/__pycache__ (Python "
                        "rebuilds it from the sealed source)")
    present = [name for name in every if name not in compiled]
    listed = {name: digest for name, digest in listed.items() if name not in compiled}
    extra = sorted(set(present) - set(listed))
    if extra:
        raise _fail(root / extra[0], "not listed in manifest.json (added after the folder was written)")
    for name in sorted(set(listed) | set(REQUIRED)):
        file = root / name
        if name not in present or file.is_symlink():
            raise _fail(file, "missing" if name in listed else "not listed in manifest.json")
        if _sha(file) != listed[name]:
            raise _fail(file, "changed since it was written (its SHA-256 differs from manifest.json)")


def _csv(path: Path) -> pd.DataFrame:
    try:
        return read_csv_table(path, ("item", "model", "subtask"))
    except Exception as err:  # noqa: BLE001 -- any parser failure: the file is not the table written
        raise _fail(path, f"cannot be read as a table ({type(err).__name__})") from None


def _estimator(root: Path, meta: dict, items: pd.DataFrame, pool: pd.DataFrame) -> tuple[list[str], MicroBenchmark]:
    """The item names of the estimator's index space and the estimator the folder describes."""
    state = meta["estimator"]
    if state["kind"] == "difference":
        from mbutils.micro.difference import read_difference

        return read_difference(root, meta, items, pool, _fail)
    if state["kind"] == "irt":
        params = _csv(root / "item_params.csv")
        names = params["item"].astype(str).tolist()
        index = pd.Index(names).get_indexer(items["item"].astype(str))
        if (index < 0).any():
            raise _fail(root / "item_params.csv", "lacks some of the chosen items")
        a = params[[c for c in params.columns if c.startswith("a_")]].to_numpy(np.float64)
        return names, IRTMicroBenchmark(items=index, weights=items["weight"].to_numpy(np.float64), item_a=a,
                                        item_b=params["b"].to_numpy(np.float64), estimator=state["estimator"],
                                        gp_lambda=float(state["gp_lambda"]),
                                        prior_sd_theta=float(state["prior_sd_theta"]))
    names = items["item"].astype(str).tolist()
    return names, MicroBenchmark(items=np.arange(len(items)), weights=items["weight"].to_numpy(np.float64),
                                 reads=state["reads"])


def _check_export(root: Path, meta: dict) -> None:
    """The lm-eval export holds only what build-micro writes: the package's fixed filter, byte for byte, and
    task files of the three keys it writes, one per task of ``micro.json``."""
    import yaml

    from mbutils.micro import lm_eval_filter

    tasks = meta.get("lm_eval_tasks") or {}
    folder = root / "lm_eval"
    if not isinstance(tasks, dict):
        raise _fail(root / "micro.json", "its lm_eval_tasks is not a map of task -> documents")
    if not folder.is_dir():
        if tasks:
            raise _fail(folder, "missing")
        return
    code = folder / "micro_docs.py"
    if code.exists() and code.read_bytes() != Path(lm_eval_filter.__file__).read_bytes():
        raise _fail(code, "is not the document filter this mbutils writes (it could run code the micro-benchmark "
                    "did not ship)")

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("!", lambda loader, suffix, node: loader.construct_scalar(node)
                                 if isinstance(node, yaml.ScalarNode) else None)
    listing = folder / "micro_docs.json"
    entries = read_json(listing, MicroFolderError).get("tasks") if listing.exists() else None
    written = {e.get("micro_task"): {k: e.get(k) for k in ("task", "docs", "n_docs", "include")}
               for e in entries or [] if isinstance(e, dict)}
    if tasks and written != {m: {k: info.get(k) for k in ("task", "docs", "n_docs", "include")}
                             for m, info in tasks.items()}:
        raise _fail(listing, "does not list the documents micro.json says the micro-benchmark chose")
    _check_items(root, tasks)
    _check_group(root, meta, folder / GROUP_FILE, Loader)
    found = set()
    for path in sorted(p for p in folder.glob("*.yaml") if p.name != GROUP_FILE):
        try:
            config = yaml.load(path.read_text(encoding="utf-8"), Loader=Loader)
        except (yaml.YAMLError, UnicodeDecodeError, RecursionError):
            raise _fail(path, "is not the YAML build-micro writes") from None
        if not isinstance(config, dict) or set(config) != {"include", "task", "process_docs"} \
                or config["task"] != path.stem or path.stem not in tasks:
            raise _fail(path, "holds other keys or another task than build-micro writes (include, task, process_docs)")
        found.add(path.stem)
    if found != set(tasks):
        raise _fail(folder, f"lacks the task files of {', '.join(sorted(set(tasks) - found))}")


def _check_items(root: Path, tasks: dict) -> None:
    """Where micro.json names each document's item (folders since the harness-exact export), every item is
    named once, beside its document."""
    named = [info.get("items") for info in tasks.values() if isinstance(info, dict)]
    if not any(v is not None for v in named):
        return
    if not all(isinstance(v, list) and isinstance(info.get("docs"), list) and len(v) == len(info["docs"])
               and all(isinstance(x, str) for x in v) for v, info in zip(named, tasks.values())) \
            or len({x for v in named for x in v}) != sum(map(len, named)):
        raise _fail(root / "micro.json", "its lm_eval_tasks do not name one item per chosen document")


def _check_group(root: Path, meta: dict, path: Path, loader) -> None:
    """``_group.yaml``: present exactly when micro.json records a group, holding that group of its tasks."""
    import yaml

    group = meta.get("lm_eval_group")
    if not path.exists():
        if group:
            raise _fail(path, "missing")
        return
    if not isinstance(group, dict):
        raise _fail(path, "is not listed as the export's group in micro.json")
    try:
        config = yaml.load(path.read_text(encoding="utf-8"), Loader=loader)
    except (yaml.YAMLError, UnicodeDecodeError, RecursionError):
        raise _fail(path, "is not the YAML build-micro writes") from None
    expected = {"group": group.get("name"), "task": list(meta.get("lm_eval_tasks") or {}),
                "aggregate_metric_list": [{"metric": group.get("metric"), "aggregation": "mean",
                                           "weight_by_size": group.get("weight_by_size")}],
                "metadata": {"version": 1.0}}
    if config != expected:
        raise _fail(path, "is not the group build-micro writes (its name, tasks or aggregation differ from micro.json)")


# -- the values of a micro-benchmark: one check wherever one is read (a folder, a shipped record) ------



def _check_values(root: Path, meta: dict, items: pd.DataFrame, micro: MicroBenchmark, card: dict,
                  names: list[str]) -> None:
    """Numbers an edited folder could hold and no build writes: each refused, naming its file."""
    if meta["interval"] not in ("hypergeometric", "empirical", "normal"):
        raise _fail(root / "micro.json", f"interval {str(meta['interval'])[:30]!r} is not 'hypergeometric', "
                    "'empirical' or 'normal'")
    if (meta["interval"] == "normal") != isinstance(micro, DifferenceMicroBenchmark):
        raise _fail(root / "micro.json", "the 'normal' interval goes with the difference estimator, and only with it")
    check_sizes(meta["k"], meta["n_items"], len(items), root / "micro.json", _fail)
    if micro.size != len(items):
        raise _fail(root / "micro.json", f"its estimator holds {micro.size} items, not the {len(items)} of items.csv")
    if meta["estimator"].get("kind") in ("irt", "difference") and len(names) != meta["n_items"]:
        where = "item_params.csv" if meta["estimator"]["kind"] == "irt" else "pool_answers.csv"
        raise _fail(root / where, f"holds {len(names)} items, not the bundle's {meta['n_items']} (micro.json)")
    check_card(card, root / "card.json", _fail)


def read_micro(folder: str | Path) -> MicroFolder:
    """Read and check a folder written by :func:`write_micro`; every failure is one message."""
    root = Path(folder).expanduser()
    if not root.is_dir():
        raise MicroFolderError(f"{folder}: no such micro-benchmark folder (make one with "
                               "`python -m mbutils build-micro`)")
    _verify(root)
    meta, card, provenance = (read_json(root / name, MicroFolderError)
                              for name in ("micro.json", "card.json", "provenance.json"))
    if meta.get("format") != FORMAT:
        raise _fail(root / "micro.json", f"format {str(meta.get('format'))[:40]!r} is not {FORMAT!r}")
    absent = [key for key in ("bundle", "n_items", "k", "interval", "estimator") if key not in meta]
    if absent:
        raise _fail(root / "micro.json", f"lacks {', '.join(absent)}")
    pool = _csv(root / "pool.csv")
    accuracy = pd.to_numeric(pool.get("accuracy", pd.Series(dtype=float)), errors="coerce").to_numpy(float)
    if not {"model", "accuracy"} <= set(pool.columns) or not ((accuracy >= 0) & (accuracy <= 1)).all():
        raise _fail(root / "pool.csv", "needs the columns model and accuracy, every accuracy between 0 and 1")
    items = _csv(root / "items.csv")
    check_items(items, root / "items.csv", _fail,
                sum_to_one=weights_sum_to_one(provenance.get("selector_class"), provenance.get("params")))
    try:
        names, micro = _estimator(root, meta, items, pool)
    except MicroFolderError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as err:
        raise _fail(root / "micro.json", f"its estimator state is not as build-micro writes it "
                    f"({type(err).__name__}: {str(err)[:80]})") from None
    card = {key: (np.nan if value is None and key not in ("protocol", "note", "coverage") else value)
            for key, value in card.items()}
    _check_values(root, meta, items, micro, card, names)
    _check_export(root, meta)
    return MicroFolder(root, meta, items, micro, names, pool, _csv(root / "calibration.csv"), card, provenance)
