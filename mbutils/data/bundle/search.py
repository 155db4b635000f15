"""Finding bundles: the folders searched by name, a bundle's folder, and a file's stored name.

A name (``gpqa``) is looked up on the data path ($MBUTILS_DATA, then the repository's
``data/``), the earlier folder winning; a path is taken as given, in either Unicode spelling.
A bundle file may be stored compressed (``responses.csv.gz``), so every reader asks
:func:`stored_file` for the name on disk.
"""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

from mbutils.data.catalogue import STAND_INS
from mbutils.data.datapath import data_folders, describe_data_path
from mbutils.base.errors import BundleError
from mbutils.data.bundle.format import RESPONSES


#: A bundle file may be stored compressed: ``responses.csv.gz`` is read as ``responses.csv``.
COMPRESSED = ".gz"


def search_path() -> list[Path]:
    """Folders searched for bundles by name: $MBUTILS_DATA (os.pathsep separated), then data/."""
    return [folder.path for folder in data_folders()]


def stored_file(folder: Path, file: str) -> Path:
    """The path a bundle file is stored at: ``file`` itself, else its compressed form ``file.gz``."""
    plain = folder / file
    if os.path.lexists(plain):
        return plain
    packed = folder / (file + COMPRESSED)
    return packed if os.path.lexists(packed) else plain


def is_bundle(folder: Path) -> bool:
    """A folder holding ``responses.csv`` (or ``responses.csv.gz``)."""
    return stored_file(folder, RESPONSES).is_file()


def list_bundles() -> dict[str, Path]:
    """Bundles found on the search path, by name; an earlier folder hides a later namesake."""
    found: dict[str, Path] = {}
    for root in search_path():
        if not root.is_dir():
            continue
        for sub in sorted(root.iterdir()):
            if sub.name.startswith(".") or sub.name in found:
                continue
            if is_bundle(sub):
                found[sub.name] = sub.resolve()
    return found


def find_bundle(name_or_dir: str | Path) -> Path:
    """The bundle folder: an existing folder as given, else a named bundle on the search path."""
    name = str(name_or_dir)
    if not name.strip():
        raise BundleError("no bundle given: name a bundle (e.g. gpqa) or a bundle folder")
    path = _spelled_as_on_disk(Path(name).expanduser())
    if path.is_dir():
        return path.resolve()
    if path.exists():
        raise BundleError(f"{path} is a file; give the bundle's folder (the one holding {RESPONSES})")
    looks_like_path = len(path.parts) != 1 or name in (".", "..")
    if not looks_like_path:
        for root in search_path():
            found = _spelled_as_on_disk(root / name)
            if is_bundle(found):
                return found.resolve()
    available = ", ".join(list_bundles()) or "none"
    if looks_like_path:
        what = f"no folder {str(path)!r}"
    else:
        what = (f"no bundle named {name!r}: looked for {name}/{RESPONSES} (or {RESPONSES}{COMPRESSED}) "
                f"in {describe_data_path()}")
    raise BundleError(
        f"{what}. Bundles available: {available}. Synthetic stand-ins: {', '.join(STAND_INS)}. "
        "Give a bundle name, a folder path, or add the folder that holds your bundles to MBUTILS_DATA."
    )


def _spelled_as_on_disk(path: Path) -> Path:
    """``path``, or its other Unicode spelling (NFC/NFD) when only that one exists: 'é' typed
    as one character or as 'e' + accent names the same folder."""
    if path.exists():
        return path
    for form in ("NFC", "NFD"):
        other = Path(unicodedata.normalize(form, str(path)))
        if other.exists():
            return other
    return path
