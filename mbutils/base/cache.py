"""On-disk cache, addressed by content: the key is a hash of everything a result depends on.

Location: ``$MBUTILS_CACHE`` if set, else ``~/.cache/mbutils``. Every path the cache
writes or deletes is resolved inside that root (names are sanitised, kinds are a fixed
list), so no option or bundle name can reach a file elsewhere. Writes are atomic
(temporary file + rename) so a crash never leaves a half-written entry; a lock file per
entry keeps two processes from computing the same entry at once; a table entry carries a
checksum of its numbers, verified on read, so an entry edited by hand is recomputed. A
cache that cannot be used (read-only, full, a file where the folder should be) is
reported once and the work goes on without it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import tempfile
import unicodedata
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Callable, Iterable, Iterator

import pandas as pd

from mbutils.base.errors import CacheError
from mbutils.base.folders import process_alive
from mbutils.base.validation import check_choice

LOCK_TIMEOUT = 6 * 3600  # seconds; a cached computation can take hours at paper settings
#: The kinds of entry (one sub-folder each) and the suffix of their files; ``cache clear --kind`` takes only these.
KINDS = ("results", "synthetic", "medoids")
SUFFIXES = {"results": ".parquet", "synthetic": ".npz", "medoids": ".npz"}
#: An entry's file name: sanitised parts, then a 24-hex content key (:func:`content_key`), then its suffix; its
#: lock file adds ".lock", an interrupted write leaves ".<name>.<random>.tmp".
_ENTRY = re.compile(r"^(?P<name>[A-Za-z0-9._+-]+-[0-9a-f]{24}(?:\.parquet|\.npz))(?P<extra>\.lock)?$")
_TEMP = re.compile(r"^\.(?P<name>[A-Za-z0-9._+-]+-[0-9a-f]{24}(?:\.parquet|\.npz))\.[^/]*\.tmp$")
CHECKSUM_KEY = b"mbutils.checksum"
_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]+")
_reported: set[str] = set()  # cache problems already told to the user in this process


def cache_root() -> Path:
    """The cache folder's path, not created (looking must never write)."""
    root = os.environ.get("MBUTILS_CACHE")
    return Path(root).expanduser() if root else Path.home() / ".cache" / "mbutils"


def cache_dir() -> Path:
    """The cache folder, created on demand; a CacheError says why it cannot be."""
    path = cache_root()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise CacheError(f"cache folder {path} cannot be created ({err.strerror or err}); "
                         "set MBUTILS_CACHE to a writable folder") from None
    if not path.is_dir():
        raise CacheError(f"cache folder {path} is not a folder; set MBUTILS_CACHE to a writable folder")
    return path


def safe_name(text: str, limit: int = 80) -> str:
    """A file-name part from any text: NFC, only [A-Za-z0-9._+-], no leading dot, bounded length."""
    name = _UNSAFE.sub("_", unicodedata.normalize("NFC", str(text))).lstrip(".")
    return name[:limit] or "_"


def inside(path: Path, root: Path) -> Path:
    """``path`` if it resolves inside ``root``; a CacheError otherwise (never touch it)."""
    resolved, base = Path(path).resolve(), Path(root).resolve()
    if resolved != base and base not in resolved.parents:
        raise CacheError(f"{path} is outside the cache folder {root}; refusing to touch it")
    return Path(path)


def _is_inside(path: Path, root: Path) -> bool:
    try:
        inside(path, root)
        return True
    except CacheError:
        return False


def entry_path(kind: str, *parts: str, suffix: str) -> Path:
    """Path of one entry of ``kind``: sanitised ``parts`` joined by '-', inside the cache root."""
    check_choice(kind, KINDS, "cache kind", CacheError)
    root = cache_root()
    name = "-".join(safe_name(p) for p in parts) + suffix
    return inside(root / kind / name, root)


def report_once(message: str) -> None:
    """Tell the user about a cache problem once per process, not once per entry."""
    if message not in _reported:
        _reported.add(message)
        print(f"mbutils: {message}", file=sys.stderr)


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


@contextmanager
def locked_if_possible(paths: Iterable[Path]) -> Iterator[bool]:
    """Like :func:`locked`, yielding True; when the cache cannot hold locks, report once and yield False."""
    with ExitStack() as stack:
        try:
            stack.enter_context(locked(paths))
            usable = True
        except OSError as err:
            report_once(f"the cache cannot be written ({err.strerror or err}: {cache_root()}); "
                        "results are computed without it")
            usable = False
        yield usable


def table_checksum(table: pd.DataFrame) -> str:
    """Hash of a table's column names and values (row order included)."""
    h = hashlib.sha256("\x1f".join(map(str, table.columns)).encode())
    h.update(pd.util.hash_pandas_object(table, index=False).to_numpy().tobytes())
    return h.hexdigest()[:32]


def write_table(path: Path, table: pd.DataFrame, metadata: dict[bytes, bytes] | None = None) -> bool:
    """Store a table with its checksum; False (reported once) when the cache cannot be written."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    def write(tmp: Path) -> None:
        arrow = pa.Table.from_pandas(table, preserve_index=False)
        meta = {**(arrow.schema.metadata or {}), **(metadata or {}),
                CHECKSUM_KEY: table_checksum(table).encode()}
        pq.write_table(arrow.replace_schema_metadata(meta), tmp)

    try:
        atomic_write(path, write)
        return True
    except OSError as err:
        report_once(f"the cache cannot be written ({err.strerror or err}: {path.parent}); "
                    "results are computed without it")
        return False


def _read_checked(path: Path) -> pd.DataFrame:
    """A stored table whose checksum matches its numbers; ValueError otherwise."""
    import pyarrow.parquet as pq

    arrow = pq.read_table(path)
    stored = (arrow.schema.metadata or {}).get(CHECKSUM_KEY)
    table = arrow.to_pandas()
    if stored is None:
        raise ValueError("it carries no checksum (written by hand or by an older version)")
    if stored.decode() != table_checksum(table):
        raise ValueError("its numbers do not match its checksum (edited by hand?)")
    return table


def read_table(path: Path, check: Callable[[pd.DataFrame], bool] = lambda t: True) -> pd.DataFrame | None:
    """A cached table, or None if absent; a damaged or edited entry is reported, removed and treated as absent."""
    path = Path(path)
    if not path.exists():
        return None
    if not path.is_file():
        report_once(f"cache entry {path} is not a file; it is ignored and the results are recomputed")
        return None
    try:
        table = _read_checked(path)
        if check(table):
            return table
        reason = "its contents do not match what was asked for"
    except Exception as err:  # truncated or corrupted files raise many different errors
        reason = str(err) if isinstance(err, ValueError) else f"{type(err).__name__}: {err}"
    print(f"mbutils: cache entry {path.name} is damaged ({reason}); recomputing it", file=sys.stderr)
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass  # a read-only cache: the entry stays, and is recomputed each time
    return None


def _entry_files(kinds: Iterable[str]) -> tuple[list[Path], list[Path]]:
    """(files the cache wrote, other files) for ``kinds``.

    A cache file is one the cache names (:func:`entry_path`): directly in its kind's folder,
    an entry, its lock or an interrupted write's temporary file, with the kind's suffix.
    Anything else (a user's file, a sub-folder's contents, a link) is *other*: reported,
    never deleted. With every kind asked for, files anywhere under the root count as other.
    """
    root = cache_root()
    if not root.is_dir():
        return [], []
    ours = []
    for kind in kinds:
        folder = root / kind
        if folder.is_symlink() or not folder.is_dir():
            continue
        for p in sorted(folder.iterdir()):
            match = _ENTRY.match(p.name) or _TEMP.match(p.name)
            if (match and match["name"].endswith(SUFFIXES[kind]) and not p.is_symlink() and p.is_file()
                    and _is_inside(p, root)):
                ours.append(p)
    scope = [root] if tuple(kinds) == KINDS else [root / k for k in kinds if (root / k).is_dir()]
    seen = set(ours)
    others = sorted({p for folder in scope if not folder.is_symlink()
                     for p in folder.rglob("*") if (p.is_file() or p.is_symlink()) and p not in seen})
    return ours, others


def list_entries() -> pd.DataFrame:
    """Every cache entry: kind (folder), name, size in bytes, last modified (locks and temporary files left out)."""
    root = cache_root()
    files = [p for p in _entry_files(KINDS)[0] if _ENTRY.match(p.name) and not p.name.endswith(".lock")]
    rows = [{"kind": p.parent.relative_to(root).as_posix(), "name": p.name,
             "bytes": p.stat().st_size, "modified": pd.Timestamp(p.stat().st_mtime, unit="s").floor("s")}
            for p in files]
    return pd.DataFrame(rows, columns=["kind", "name", "bytes", "modified"])


#: The folder of the copies of shipped micro-benchmarks (``mbutils.micro.shipped.shipped_folder``):
#: ``micro/<name>-<12 hex>/`` each, its lock ``<name>-<12 hex>.lock``, and a write's work folders
#: ``.<name>-<12 hex>.new-<pid>-<hex>`` (and ``.old-``) beside it.
MICRO = "micro"
_MICRO_ENTRY = re.compile(r"^(?P<name>[A-Za-z0-9_+-][A-Za-z0-9._+-]*-[0-9a-f]{12})(?P<lock>\.lock)?$")
_MICRO_WORK = re.compile(r"^\.[A-Za-z0-9_+-][A-Za-z0-9._+-]*-[0-9a-f]{12}\.(?:new|old)-(?P<pid>[0-9]+)-[0-9a-f]+$")
#: The files of a micro-benchmark folder (``mbutils.micro.folder``): the only ones removed from one.
_MICRO_FILE = re.compile(r"^(?:(?:micro|card|provenance|manifest)\.json|card\.md"
                         r"|(?:items|item_params|pool|pool_answers|calibration)\.csv"
                         r"|lm_eval/(?:[^/]+\.(?:yaml|original_yaml)|micro_docs\.(?:json|py)|functions/[^/]+\.py"
                         r"|__pycache__/micro_docs\.[^/]+\.pyc))$")


def _clear_micro(others: list[Path]) -> tuple[int, list[Path]]:
    """Remove the micro-benchmark folders the cache wrote (their files of a micro-benchmark folder's
    layout, then the sub-folders left empty), their locks and the work folders of writes whose process
    is gone; a write still going is left alone. Returns (folders removed, ``others`` without the files
    the cache wrote): a file in such a folder that is not of the layout, or a link, is left and stays
    reported."""
    root = cache_root()
    base = root / MICRO
    if base.is_symlink() or not base.is_dir() or not _is_inside(base, root):
        return 0, others
    ours: set[Path] = set()
    removed = 0
    for path in sorted(base.iterdir()):
        entry, work = _MICRO_ENTRY.match(path.name), _MICRO_WORK.match(path.name)
        if path.is_symlink() or not (entry or work):
            continue
        if entry and entry["lock"]:
            if path.is_file():
                path.unlink(missing_ok=True)
                ours.add(path)
            continue
        if not path.is_dir() or (work and process_alive(int(work["pid"]))):
            if work and path.is_dir():  # a write in progress: its files are the cache's, not another's
                ours.update(p for p in others if path in p.parents)
            continue
        files = [p for p in path.rglob("*") if p.is_file() and not p.is_symlink()
                 and _MICRO_FILE.match(p.relative_to(path).as_posix())]
        for p in files:
            p.unlink(missing_ok=True)
        ours.update(files)
        for folder in sorted((p for p in path.rglob("*") if p.is_dir() and not p.is_symlink()),
                             key=lambda p: len(p.parts), reverse=True) + [path]:
            try:
                folder.rmdir()
            except OSError:
                pass  # holds what the cache did not write: left, and reported
        removed += bool(entry) and (bool(files) or not path.exists())
    return removed, [p for p in others if p not in ours]


def clear(kind: str | None = None) -> tuple[int, list[Path]]:
    """Remove the cache's own files (all kinds, or one of :data:`KINDS`); with every kind, also the
    copies of shipped micro-benchmarks (:data:`MICRO`, each counted as one entry).

    Returns (entries removed, files left because the cache did not write them). Only files
    the cache names are removed (see :func:`_entry_files` and :func:`_clear_micro`); symbolic
    links are never followed, and nothing else under the cache folder is touched, whatever it is.
    """
    if kind is not None:
        check_choice(kind, KINDS, "cache kind", CacheError)
    ours, others = _entry_files(KINDS if kind is None else (kind,))
    removed = 0
    for p in ours:
        p.unlink(missing_ok=True)
        removed += bool(_ENTRY.match(p.name)) and not p.name.endswith(".lock")
    if kind is None:
        micro, others = _clear_micro(others)
        removed += micro
    return removed, others
