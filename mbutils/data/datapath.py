"""The data path: the folders searched for bundles by name, resolved in one place.

The folders of ``MBUTILS_DATA`` come first (``os.pathsep`` separated, so a reader's own
bundles win), then the repository's ``data/``, which ships the real results the book is
about; an installed wheel has no repository, and its copy of the real bundles
(``mbutils/data/shipped/``, written there by setup.py's build step) takes that place.

A relative entry means a folder of the working directory ``mbutils`` was imported in (the
folder it was typed in), whatever the working directory later is; an entry set after the import
means a folder of the working directory of the moment it is read. Importing the package changes
no environment variable: a process that starts others which read the data path (a chapter's
kernel, which runs in ``chapters/``; the book's build) gives them the absolute form,
:func:`data_environment`. This module imports nothing heavy, so the Sphinx hook may use it.
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


def _working_directory() -> Path | None:
    try:
        return Path.cwd()
    except OSError:  # the folder was removed: relative entries then mean nothing but the current one
        return None


#: ``$MBUTILS_DATA`` and the working directory when the package was imported: relative entries of
#: that value mean folders of that directory.
_AT_IMPORT = (os.environ.get(ENV, ""), _working_directory())


def env_folders() -> list[Path]:
    """The folders of ``$MBUTILS_DATA``, in order and absolute (none when it is unset).

    A relative entry is a folder of the working directory the package was imported in, when the
    variable still holds the value it held then; else of the current working directory."""
    value = os.environ.get(ENV, "")
    base = _AT_IMPORT[1] if value == _AT_IMPORT[0] and _AT_IMPORT[1] is not None else _working_directory()
    entries = [Path(p.strip()).expanduser() for p in value.split(os.pathsep) if p.strip()]
    return [(p if p.is_absolute() or base is None else base / p).resolve() for p in entries]


def data_environment() -> dict[str, str]:
    """``{"MBUTILS_DATA": <its folders, absolute>}`` for a child process's environment (empty when unset),
    so that a process started in another working directory reads the same folders."""
    folders = env_folders()
    return {ENV: os.pathsep.join(map(str, folders))} if folders else {}


def pin_environment() -> str:
    """Write the absolute form of ``$MBUTILS_DATA`` into this process's environment, for a process
    whose children are started by others (the book's Sphinx build: its kernels inherit it).

    Importing the package never calls it. Returns the new value ("" when unset)."""
    os.environ.update(data_environment())
    return os.environ.get(ENV, "")


def data_folders() -> list[DataFolder]:
    """The data path in search order: ``$MBUTILS_DATA``'s folders, then the repository's ``data/``.

    An entry is listed once (the first time it appears), missing folders included, so that
    messages can say which ones do not exist."""
    folders, seen = [], set()
    last = (PACKAGED_DATA, "package") if not REPO_DATA.is_dir() and PACKAGED_DATA.is_dir() else (REPO_DATA, "repository")
    for path, origin in [*((p, ENV) for p in env_folders()), last]:
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
