"""On-disk cache, addressed by content: the key is a hash of everything a result depends on.

Location: ``$MBUTILS_CACHE`` if set, else ``~/.cache/mbutils``. Writes are atomic
(temporary file + rename) so a crash never leaves a half-written entry.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path


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


def atomic_write(path: Path, write) -> Path:
    """Call ``write(tmp_path)`` then rename onto ``path``; the target is whole or absent."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(Path(tmp))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
