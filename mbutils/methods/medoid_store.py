"""FasterPAM's medoids kept in the cache, by content: the same clustering is not run twice.

Anchor Points clusters a run's seen items with FasterPAM, a deterministic function of the
dissimilarity matrix, the starting point (a seeded random start or given medoids) and the
iteration limit (single-threaded; the parallel variant depends on its threads and is never
kept). Experiments that share a run's sources run the very same clusterings: a target set or
a frontier split keeps the sources and changes only the targets, and those experiments are
different entries of the results cache. On the default book, 142 of 292 clusterings of the
6,012 seen items of MMLU-Pro were such repeats, 51 s of CPU.

So each clustering of at least :data:`MIN_ITEMS` items is stored as a ``medoids`` cache entry,
keyed by the SHA-256 of the dissimilarity matrix's bytes, the start and the parameters (and the
``kmedoids`` version), with a checksum of its medoids. A hit hands back exactly what FasterPAM
returned for those bytes; an entry that fails its checks is computed again. Smaller matrices
cluster in milliseconds, less than reading an entry. ``run_experiment(use_cache=False)``
neither reads nor writes entries (:func:`reading`).
"""

from __future__ import annotations

import hashlib
import json
from contextlib import contextmanager
from contextvars import ContextVar
from importlib.metadata import version
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

from mbutils.base.cache import atomic_write, content_key, entry_path, report_once
from mbutils.base.errors import CacheError

#: Clusterings of fewer items are never stored (FasterPAM takes milliseconds there).
MIN_ITEMS = 1000
_ENABLED: ContextVar[bool] = ContextVar("mbutils_medoid_store", default=True)


@contextmanager
def reading(enabled: bool) -> Iterator[None]:
    """Use the stored clusterings (``enabled``) or compute every one, in this thread, for the block."""
    token = _ENABLED.set(bool(enabled))
    try:
        yield
    finally:
        _ENABLED.reset(token)


def matrix_digest(matrix: np.ndarray) -> str:
    """SHA-256 of a matrix's shape, dtype and bytes (C order)."""
    matrix = np.ascontiguousarray(matrix)
    digest = hashlib.sha256(json.dumps([matrix.shape, matrix.dtype.str]).encode())
    digest.update(memoryview(matrix).cast("B"))
    return digest.hexdigest()


def _checksum(key: str, medoids: np.ndarray) -> str:
    return hashlib.sha256(key.encode() + medoids.astype("<i8").tobytes()).hexdigest()


def _read(path: Path, key: str, n_items: int, k: int) -> np.ndarray | None:
    """The entry's medoids if they are whole and pass every check, else None."""
    try:
        with np.load(path, allow_pickle=False) as data:
            medoids, checksum = data["medoids"], str(data["checksum"])
    except (OSError, ValueError, KeyError, EOFError):
        return None
    if (medoids.dtype.kind not in "iu" or medoids.shape != (k,) or checksum != _checksum(key, medoids)
            or not ((medoids >= 0) & (medoids < n_items)).all() or len(np.unique(medoids)) != k):
        return None
    return medoids.astype(np.int64)


def _write(path: Path, key: str, medoids: np.ndarray) -> None:
    def write(tmp: Path) -> None:
        with open(tmp, "wb") as handle:
            np.savez(handle, medoids=medoids, checksum=np.array(_checksum(key, medoids)))

    try:
        atomic_write(path, write)
    except OSError as err:  # an unwritable cache costs the clustering next time, nothing more
        report_once(f"the cache cannot be written ({err.strerror or err}: {path.parent}); "
                    "clusterings are computed without it")


def medoids(digest: Callable[[], str], n_items: int, k: int, params: dict,
            compute: Callable[[], np.ndarray]) -> np.ndarray:
    """The medoids (int64, FasterPAM's order) of the clustering ``params`` describes: stored or computed.

    ``digest()`` gives the dissimilarity matrix's :func:`matrix_digest` (called only when the store
    is used); ``params`` hold everything else the result depends on (start, seed, iteration limit);
    ``compute()`` runs FasterPAM.
    """
    if not _ENABLED.get() or n_items < MIN_ITEMS:
        return np.asarray(compute(), dtype=np.int64)
    key = content_key("medoids", version("kmedoids"), digest(), params)
    try:
        path = entry_path("medoids", f"fasterpam-{n_items}x{k}", key, suffix=".npz")
    except CacheError as err:  # a cache root that cannot be used: compute, as without it
        report_once(f"the cache cannot be used ({err}); clusterings are computed without it")
        return np.asarray(compute(), dtype=np.int64)
    stored = _read(path, key, n_items, k) if path.is_file() else None
    if stored is not None:
        return stored
    found = np.asarray(compute(), dtype=np.int64)
    _write(path, key, found)
    return found
