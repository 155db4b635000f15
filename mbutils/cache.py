"""On-disk cache, addressed by content: the key is a hash of everything a result depends on.

Location: ``$MBUTILS_CACHE`` if set, else ``~/.cache/mbutils``. Writes are atomic
(temporary file + rename) so a crash never leaves a half-written entry; a lock file per
entry keeps two processes from computing the same entry at once; an entry that cannot be
read back is reported once, removed and recomputed.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Callable, Iterable, Iterator

import pandas as pd

LOCK_TIMEOUT = 6 * 3600  # seconds; a cached computation can take hours at paper settings


def cache_dir() -> Path:
    """The cache folder (created on demand)."""
    root = os.environ.get("MBUTILS_CACHE")
    path = Path(root).expanduser() if root else Path.home() / ".cache" / "mbutils"
    path.mkdir(parents=True, exist_ok=True)
    return path


def content_key(*parts) -> str:
    """Stable hash of JSON-serialisable parts (dict keys sorted)."""
    payload = json.dumps(parts, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(payload.encode()).hexdigest()[:24]


def atomic_write(path: Path, write: Callable[[Path], object]) -> Path:
    """Call ``write(tmp_path)`` then rename onto ``path``; the target is whole or absent."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    umask = os.umask(0)
    os.umask(umask)
    try:
        write(Path(tmp))
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 would make results private
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


@contextmanager
def locked(paths: Iterable[Path]) -> Iterator[None]:
    """Hold one lock file per entry (sorted, so two processes never deadlock)."""
    from filelock import FileLock

    with ExitStack() as stack:
        for path in sorted(set(map(Path, paths))):
            path.parent.mkdir(parents=True, exist_ok=True)
            stack.enter_context(FileLock(str(path) + ".lock", timeout=LOCK_TIMEOUT))
        yield


def read_table(path: Path, check: Callable[[pd.DataFrame], bool] = lambda t: True) -> pd.DataFrame | None:
    """A cached table, or None if absent; a damaged entry is reported, removed and treated as absent."""
    path = Path(path)
    if not path.exists():
        return None
    try:
        table = pd.read_parquet(path)
        if check(table):
            return table
        reason = "its contents do not match what was asked for"
    except Exception as err:  # truncated or corrupted files raise many different errors
        reason = f"{type(err).__name__}: {err}"
    print(f"mbutils: cache entry {path.name} is damaged ({reason}); recomputing it", file=sys.stderr)
    path.unlink(missing_ok=True)
    return None


def list_entries() -> pd.DataFrame:
    """Every cache file: kind (folder), name, size in bytes, last modified."""
    root = cache_dir()
    rows = [
        {"kind": p.parent.relative_to(root).as_posix() or ".", "name": p.name,
         "bytes": p.stat().st_size,
         "modified": pd.Timestamp(p.stat().st_mtime, unit="s").floor("s")}
        for p in sorted(root.rglob("*")) if p.is_file() and not p.name.endswith((".lock", ".tmp"))
    ]
    return pd.DataFrame(rows, columns=["kind", "name", "bytes", "modified"])


def clear(kind: str | None = None) -> int:
    """Remove cached files (of one kind, e.g. ``results`` or ``synthetic``); returns how many."""
    root = cache_dir() if kind is None else cache_dir() / kind
    removed = 0
    for p in root.rglob("*"):
        if p.is_file():
            p.unlink(missing_ok=True)
            removed += not p.name.endswith(".lock")
    return removed
