"""A fingerprint of the package's source, so that no cache serves numbers from older code.

The experiment cache and the book's execution cache both key their entries by it: an
edit to a selector, the protocol or the metrics gives new keys, and the next run
recomputes instead of serving results the current code would not produce.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]
#: What only reads or presents results: the meta-evaluation (metrics, the planner, the audit), the
#: micro-benchmark product, the book (the paper's tables among it), its publishing and the command line. The experiment never imports
#: them (tests/base/test_fingerprint.py checks), so editing them changes no cached experiment and does
#: not invalidate it; the book's execution cache still sees them.
DOWNSTREAM = frozenset({"evaluate", "micro", "book", "publish", "cli", "__main__.py", "data/inventory.py"})


def source_fingerprint(root: Path = PACKAGE, *, include_downstream: bool = False) -> str:
    """SHA-256 over the relative path and bytes of every ``.py`` file under ``root`` (sorted)."""
    h = hashlib.sha256()
    for source in sorted(Path(root).rglob("*.py")):
        rel = source.relative_to(root)
        if not include_downstream and (rel.parts[0] in DOWNSTREAM or rel.as_posix() in DOWNSTREAM):
            continue
        h.update(str(rel).encode() + b"\x1f" + source.read_bytes() + b"\x1e")
    return h.hexdigest()[:16]


@lru_cache(maxsize=None)
def code_fingerprint() -> str:
    """The fingerprint of the code that computes results (read once per process)."""
    return source_fingerprint(PACKAGE)


@lru_cache(maxsize=None)
def book_fingerprint() -> str:
    """The fingerprint of everything a book page shows, downstream modules included."""
    return source_fingerprint(PACKAGE, include_downstream=True)
