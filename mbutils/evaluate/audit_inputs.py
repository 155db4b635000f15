"""The audit's inputs: a micro-benchmark's item and weight files read, and resolved against a bundle.

An item list is a plain text file (one name a line) or a CSV/TSV table with an ``item``
column (and optionally ``weight``); every problem names the file and line. Resolving checks
the names against the bundle, normalises the weights and picks the models to rank.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from mbutils.data.benchmark import Benchmark
from mbutils.base.errors import ProtocolError
from mbutils.base.tables import from_csv_text

_LISTED = 5


def _is_table(path: Path) -> bool:
    return path.suffix.lower() in (".csv", ".tsv")


def _read_table(path: Path) -> pd.DataFrame:
    sep = "\t" if path.suffix.lower() == ".tsv" else ","
    try:
        table = pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False)
    except Exception as err:  # any parser failure: the file is not a table we can use
        raise ProtocolError(f"{path}: cannot read it as a table ({type(err).__name__}: {err})") from None
    table.columns = [str(c).strip() for c in table.columns]
    if "item" in table.columns:  # a micro-benchmark's items.csv quotes formula-like ids (base.tables.csv_text)
        table["item"] = table["item"].map(from_csv_text)
    return table


def _read_lines(path: Path) -> tuple[list[str], list[int]]:
    """Non-empty, non-comment lines (stripped) and their 1-based line numbers.

    A comment is a line whose ``#`` is followed by a space or nothing (``# chosen by hand``);
    ``#q17`` is an item id, since real ids may start with ``#``.
    """
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as err:
        raise ProtocolError(f"{path}: cannot read it ({err})") from None
    values, lines = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if line and not (line == "#" or line.startswith(("# ", "#\t"))):
            values.append(line)
            lines.append(number)
    return values, lines


def _parse_weights(values: Sequence[str], lines: Sequence[int], where: str) -> np.ndarray:
    weights = pd.to_numeric(pd.Series(list(values), dtype=object).str.strip(), errors="coerce").to_numpy(np.float64)
    bad = np.flatnonzero(~np.isfinite(weights))
    if len(bad):
        shown = ", ".join(f"line {lines[i]} ({values[i]!r})" for i in bad[:_LISTED])
        raise ProtocolError(f"{where}: weights must be finite numbers; not at {shown}")
    return weights


def read_items(path: str | Path) -> tuple[list[str], np.ndarray | None]:
    """Item names (and weights, if the file has a ``weight`` column) from an items file.

    A ``.csv``/``.tsv`` file needs an ``item`` column (optional ``weight``); any other file
    lists one item per line (blank lines and ``# `` comments are skipped; ``#q17`` is an id).
    """
    path = Path(path)
    if not path.is_file():
        raise ProtocolError(f"{path}: no such items file")
    if _is_table(path):
        table = _read_table(path)
        if "item" not in table.columns:
            raise ProtocolError(f"{path}: needs an 'item' column; it has {', '.join(table.columns) or 'none'}")
        names = table["item"].str.strip().tolist()
        lines = list(range(2, len(names) + 2))  # line 1 is the header
        weights = (_parse_weights(table["weight"].tolist(), lines, str(path))
                   if "weight" in table.columns else None)
    else:
        names, lines = _read_lines(path)
        weights = None
    blank = [line for name, line in zip(names, lines) if not name]
    if blank:
        raise ProtocolError(f"{path}: empty item name at line {', '.join(map(str, blank[:_LISTED]))}")
    _check_unique(names, lines, str(path))
    if not names:
        raise ProtocolError(f"{path}: lists no items")
    return names, weights


def read_weights(path: str | Path, items: Sequence[str]) -> np.ndarray:
    """One weight per item: a ``.csv``/``.tsv`` with a ``weight`` column (aligned by an
    ``item`` column when present, else in file order), or one number per line."""
    path = Path(path)
    if not path.is_file():
        raise ProtocolError(f"{path}: no such weights file")
    if _is_table(path):
        table = _read_table(path)
        if "weight" not in table.columns:
            raise ProtocolError(f"{path}: needs a 'weight' column; it has {', '.join(table.columns) or 'none'}")
        lines = list(range(2, len(table) + 2))
        weights = _parse_weights(table["weight"].tolist(), lines, str(path))
        if "item" in table.columns:
            names = table["item"].str.strip().tolist()
            _check_unique(names, lines, str(path))
            missing = [i for i in items if i not in set(names)]
            extra = sorted(set(names) - set(items))
            if missing or extra:
                raise ProtocolError(
                    f"{path}: its items differ from the micro-benchmark's"
                    + (f"; no weight for {_names(missing)}" if missing else "")
                    + (f"; weights for items not in it: {_names(extra)}" if extra else ""))
            order = {name: i for i, name in enumerate(names)}
            weights = weights[[order[i] for i in items]]
    else:
        values, lines = _read_lines(path)
        weights = _parse_weights(values, lines, str(path))
    if len(weights) != len(items):
        raise ProtocolError(f"{path}: {len(weights)} weights for {len(items)} items; give one weight per item")
    return weights


def _names(names: Sequence[str]) -> str:
    shown = ", ".join(map(str, list(names)[:_LISTED]))
    return shown + (f" and {len(names) - _LISTED} more" if len(names) > _LISTED else "")


def _check_unique(names: Sequence[str], lines: Sequence[int] | None, where: str) -> None:
    """Refuse repeated names, saying where each repeat occurs (lines, or 1-based positions)."""
    names = pd.Series(list(names), dtype=object)
    at = pd.Series(lines if lines is not None else np.arange(1, len(names) + 1))
    dup = names.duplicated(keep=False).to_numpy()
    if dup.any():
        label = "lines" if lines is not None else "positions"
        grouped = at[dup].groupby(names[dup].to_numpy(), sort=False).agg(lambda v: ", ".join(map(str, v)))
        repeats = [f"{name!r} ({label} {where_})" for name, where_ in grouped.items()]
        raise ProtocolError(f"{where}: items listed more than once: {_names(repeats)}; list each item once")


# ---------------------------------------------------------------------------------------
# Resolving the request against a bundle
# ---------------------------------------------------------------------------------------

def resolve_items(benchmark: Benchmark, items: Sequence[str], weights=None) -> tuple[np.ndarray, np.ndarray]:
    """Column indices of the named items and their weights normalised to sum to 1."""
    names = [str(i) for i in items]
    if not names:
        raise ProtocolError("the micro-benchmark lists no items")
    _check_unique(names, None, "micro-benchmark")
    index = pd.Index(benchmark.items.astype(str)).get_indexer(names)
    if (index < 0).any():
        unknown = [names[i] for i in np.flatnonzero(index < 0)]
        raise ProtocolError(
            f"{len(unknown)} of {len(names)} items are not in {benchmark.name}: {_names(unknown)} "
            f"(its item names look like {', '.join(map(str, benchmark.items[:3]))})"
        )
    index = index.astype(np.int64)
    if weights is None:
        return index, np.full(len(index), 1.0 / len(index))
    w = np.asarray(weights, dtype=np.float64).ravel()
    if w.shape != index.shape:
        raise ProtocolError(f"{len(w)} weights for {len(index)} items; give one weight per item")
    if not np.isfinite(w).all():
        raise ProtocolError("weights must be finite numbers")
    if (w < 0).any():
        bad = np.flatnonzero(w < 0)
        raise ProtocolError(f"weights must not be negative: {_names([f'{names[i]}={w[i]:g}' for i in bad])}")
    if w.max() <= 0:
        raise ProtocolError("weights are all zero; at least one item needs a positive weight")
    w = w / w.max()  # scaled first: weights as large as 1e308 would overflow their sum to inf
    return index, w / w.sum()


def resolve_models(benchmark: Benchmark, models) -> np.ndarray:
    """Row indices of the models to audit: all, a target set's, or those listed (at least two)."""
    if models is None:
        index = np.arange(benchmark.n_models)
    elif isinstance(models, str):
        if models not in benchmark.target_sets:
            known = ", ".join(sorted(benchmark.target_sets)) or "none"
            raise ProtocolError(f"{benchmark.name}: no target set named {models!r} (target sets: {known})")
        index = benchmark.model_index(benchmark.target_sets[models])
    else:
        models = [str(m) for m in models]
        if len(set(models)) != len(models):
            raise ProtocolError("models are listed more than once; list each model once")
        index = benchmark.model_index(models)
    if len(index) < 2:
        raise ProtocolError("at least 2 models are needed to compare pairs")
    return index
