"""Writing a Benchmark as a bundle folder, atomically: the folder is whole or untouched."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pandas as pd

from mbutils.data.benchmark import Benchmark
from mbutils.base.errors import BundleError
from mbutils.base.folders import replace_folder
from mbutils.base.vocabulary import renamed_keywords
from mbutils.data.bundle.format import CONFIDENCE, ITEMS, MODELS, RESPONSES, TARGET_SETS


def _csv_line(fields) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(fields)
    return buf.getvalue()


def _text(values: np.ndarray | pd.Series) -> list[str]:
    """CSV text for a column: exact float repr, '' for missing."""
    values = pd.Series(values).to_numpy(dtype=object)
    missing = pd.isna(values)
    return ["" if gone else repr(float(v)) if isinstance(v, float) else str(v)
            for v, gone in zip(values.tolist(), missing)]


def _info_frame(info: pd.DataFrame | None, names: np.ndarray, key: str, owner: str) -> pd.DataFrame | None:
    """Metadata rows in the order of ``names`` (by index label when it matches, else by position)."""
    if info is None or info.shape[1] == 0:
        return None
    if key in info.columns:
        info = info.set_index(key)
    if set(info.index) == set(names) and len(info) == len(names):
        return info.reindex(names)
    if len(info) != len(names):
        raise BundleError(f"{owner}: {key}_info has {len(info)} rows for {len(names)} {key}s")
    return info


@renamed_keywords(bench="benchmark")
def _write_bundle(benchmark: Benchmark, folder: Path) -> None:
    """Write every file of the bundle into ``folder`` (a fresh temporary folder)."""
    model_fields = [_csv_line([m])[:-1] for m in benchmark.models]
    header = _csv_line(["model", *benchmark.items])
    # 0/1 as bytes with commas in between: one array op for the whole matrix.
    body = np.full((benchmark.n_models, 2 * benchmark.n_items + 1), ord(","), dtype=np.uint8)
    body[:, 1::2] = benchmark.correct + ord("0")
    body[:, -1] = ord("\n")
    with open(folder / RESPONSES, "wb") as f:
        f.write(header.encode())
        for field_, row in zip(model_fields, body):
            f.write(field_.encode() + row.tobytes())

    columns = {"item": list(map(str, benchmark.items)), "subtask": list(map(str, benchmark.subtasks))}
    info = _info_frame(benchmark.item_info, benchmark.items, "item", benchmark.name)
    if info is not None:
        columns.update({str(c): _text(info[c]) for c in info.columns if c not in ("item", "subtask")})
    with open(folder / ITEMS, "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows(zip(*columns.values()))

    if benchmark.confidence is not None:
        with open(folder / CONFIDENCE, "w", encoding="utf-8", newline="") as f:
            f.write(header)
            for field_, row in zip(model_fields, benchmark.confidence.tolist()):
                f.write(field_ + "," + ",".join(map(repr, row)) + "\n")

    info = _info_frame(benchmark.model_info, benchmark.models, "model", benchmark.name)
    if info is not None:
        columns = {"model": list(map(str, benchmark.models))}
        columns.update({str(c): _text(info[c]) for c in info.columns if c != "model"})
        with open(folder / MODELS, "w", encoding="utf-8", newline="") as f:
            writer = csv.writer(f, lineterminator="\n")
            writer.writerow(columns)
            writer.writerows(zip(*columns.values()))

    if benchmark.target_sets:
        with open(folder / TARGET_SETS, "w", encoding="utf-8") as f:
            sets = {k: list(map(str, v)) for k, v in benchmark.target_sets.items()}
            json.dump(sets, f, indent=1, ensure_ascii=False)
            f.write("\n")


def save_bundle(benchmark: Benchmark, folder: str | Path, *, overwrite: bool = False) -> Path:
    """Write ``benchmark`` as a bundle folder, atomically: the folder is whole or untouched.

    Files go into a temporary folder next to the target, which is then renamed into place.
    An existing non-empty folder is replaced only with ``overwrite=True``. :func:`load_bundle`
    reads the folder back as an equal benchmark (the round trip below).

    Parameters
    ----------
    benchmark : Benchmark
        What to write: a loaded bundle, a simulated one (:func:`simulate`), or your own.
    folder : str or pathlib.Path
        The bundle folder to write (its name is the bundle's name when loaded).
    overwrite : bool, default False
        Replace an existing non-empty folder.

    Returns
    -------
    pathlib.Path
        The folder written (absolute).

    Examples
    --------
    The round trip: simulate a small benchmark, save it, validate and load it back.

    >>> import tempfile
    >>> from pathlib import Path
    >>> import numpy as np
    >>> from mbutils import BenchmarkSpec, load_bundle, save_bundle, simulate, validate_bundle
    >>> spec = BenchmarkSpec(n_models=20, subtasks=(("algebra", 30, 4), ("logic", 20, 2)))
    >>> bench = simulate(spec, seed=1, name="toy")
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     folder = save_bundle(bench, Path(tmp) / "toy")
    ...     print(sorted(path.name for path in folder.iterdir()))
    ...     problems = validate_bundle(folder)
    ...     back = load_bundle(folder)
    ['confidence.csv', 'items.csv', 'models.csv', 'responses.csv', 'target_sets.json']
    >>> problems  # nothing to fix
    []
    >>> back.name, back.correct.shape
    ('toy', (20, 50))
    >>> np.array_equal(back.correct, bench.correct), np.array_equal(back.confidence, bench.confidence)
    (True, True)
    >>> list(back.models) == list(bench.models) and list(back.items) == list(bench.items)
    True
    """
    target = Path(folder).expanduser().resolve()
    if target.exists() and not target.is_dir():
        raise BundleError(f"cannot save bundle to {target}: it is a file")
    if target.is_dir() and any(target.iterdir()) and not overwrite:
        raise BundleError(f"cannot save bundle to {target}: the folder exists and is not empty; "
                          "pass overwrite=True to replace it")
    return replace_folder(target, lambda folder: _write_bundle(benchmark, folder))
