"""The data path: the folders searched for bundles by name, resolved in one place.

The folders of ``MBUTILS_DATA`` come first (``os.pathsep`` separated, so a reader's own
bundles win), then the repository's ``data/``, which ships the real results the book is
about; an installed wheel has no repository, and its copy of the real bundles
(``mbutils/data/shipped/``, written there by setup.py's build step) takes that place. Relative entries are made absolute once, when ``mbutils`` is imported, against the
working directory of that moment, and written back to the environment: a chapter's kernel
(which runs in ``chapters/``), a papermill run, the command line and the book then all read
the same folders. This module imports nothing heavy, so the Sphinx hook may use it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

ENV = "MBUTILS_DATA"
#: The repository's data/ folder (absent when the package is installed without its source tree).
REPO_DATA = Path(__file__).resolve().parents[2] / "data"
#: The real bundles a wheel carries (setup.py copies them from data/); absent in a clone.
PACKAGED_DATA = Path(__file__).resolve().parent / "shipped"


@dataclass(frozen=True)
class DataFolder:
    """One folder of the data path and where it came from (``MBUTILS_DATA`` or the repository)."""

    path: Path
    origin: str

    @property
    def exists(self) -> bool:
        return self.path.is_dir()

    def __str__(self) -> str:
        return str(self.path) if self.exists else f"{self.path} (does not exist)"


def _entries(value: str) -> list[Path]:
    return [Path(p.strip()).expanduser() for p in value.split(os.pathsep) if p.strip()]


def pin_environment() -> str:
    """Make the entries of ``$MBUTILS_DATA`` absolute in this process's environment.

    Child processes (kernels, workers) inherit the absolute form, whatever their working
    directory. Returns the new value ("" when unset)."""
    value = os.environ.get(ENV, "")
    parts = [str(p.resolve()) for p in _entries(value)]
    if parts:
        os.environ[ENV] = os.pathsep.join(parts)
    return os.environ.get(ENV, "")


def data_folders() -> list[DataFolder]:
    """The data path in search order: ``$MBUTILS_DATA``'s folders, then the repository's ``data/``.

    An entry is listed once (the first time it appears), missing folders included, so that
    messages can say which ones do not exist."""
    folders, seen = [], set()
    last = (PACKAGED_DATA, "package") if not REPO_DATA.is_dir() and PACKAGED_DATA.is_dir() else (REPO_DATA, "repository")
    for path, origin in [*((p.resolve(), ENV) for p in _entries(os.environ.get(ENV, ""))), last]:
        if path not in seen:
            seen.add(path)
            folders.append(DataFolder(path, origin))
    return folders


def describe_data_path(*, short: bool = False) -> str:
    """Where names are looked up, for messages: every folder once, missing ones named as such.

    ``short`` names the folders by role only (for pages read on other machines), except the
    ``MBUTILS_DATA`` entries that do not exist, which are still named."""
    folders = data_folders()
    if short:
        missing = [str(f) for f in folders if f.origin == ENV and not f.exists]
        env = [f for f in folders if f.origin == ENV]
        text = (f"{ENV}'s {len(env)} folder{'s' if len(env) != 1 else ''}, then the repository's data/"
                if env else "the repository's data/; MBUTILS_DATA is not set")
        return text + (f"; {', '.join(missing)}" if missing else "")
    env = [str(f) for f in folders if f.origin == ENV]
    if any(f.origin == "package" for f in folders):
        return (f"{ENV} {', '.join(env)}, then " if env else "") + \
            f"the installed package's bundles {PACKAGED_DATA}" + ("" if env else f" ({ENV} is not set)")
    repo = [str(f) for f in folders if f.origin == "repository"]
    if not env:
        return f"the repository's data folder {', '.join(repo)} ({ENV} is not set)"
    return f"{ENV} {', '.join(env)}, then " + (f"the repository's data folder {repo[0]}" if repo else
                                              "nothing else (the repository's data folder is among them)")


def signature() -> str:
    """A cheap fingerprint of what the data path holds (every file's path, size and mtime, two
    levels deep), so a cached book page is re-executed when a bundle is added, removed or edited."""
    parts = []
    for folder in data_folders():
        parts.append(f"{folder.path}|{folder.exists}")
        if not folder.exists:
            continue
        for sub in sorted(folder.path.iterdir()):
            files = sorted(sub.iterdir()) if sub.is_dir() else [sub]
            for f in files:
                try:
                    st = f.stat()
                except OSError:
                    continue
                parts.append(f"{f.relative_to(folder.path)}|{st.st_size}|{st.st_mtime_ns}")
    return "\n".join(parts)
