"""Folders written whole or not at all: files go into a fresh hidden sibling, which then
replaces the target in one rename, so a reader never sees half a bundle or half a
micro-benchmark, and a failure leaves the old folder as it was."""

from __future__ import annotations

import os
import secrets
import shutil
from pathlib import Path
from typing import Callable, Iterable

from mbutils.base.errors import MbutilsError


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (another user's process counts as running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


def clear_stale(parent: Path, prefix: str) -> None:
    """Remove ``parent/<prefix><pid>-<hex>`` work folders whose process is gone (killed mid-write).

    Each work folder carries its writer's process id, so a folder of a run still going, in
    this or another process, is never touched.
    """
    if not parent.is_dir():
        return
    for path in parent.glob(f"{prefix}*"):
        pid, _, rest = path.name[len(prefix):].partition("-")
        if pid.isdigit() and rest and path.is_dir() and not path.is_symlink() and not process_alive(int(pid)):
            shutil.rmtree(path, ignore_errors=True)


def fresh_sibling(target: Path, tag: str) -> Path:
    """A new, empty hidden folder next to ``target`` (created with the default permissions),
    named with this process's id; leftovers of killed writers of the same target go first."""
    prefix = f".{target.name}.{tag}-"
    clear_stale(target.parent, prefix)
    while True:
        path = target.with_name(f"{prefix}{os.getpid()}-{secrets.token_hex(4)}")
        try:
            path.mkdir()
            return path
        except FileExistsError:
            continue


def replace_folder(target: Path, write: Callable[[Path], None]) -> Path:
    """Fill a fresh sibling with ``write(folder)``, then put it in ``target``'s place.

    An existing ``target`` is moved aside first and restored if the final rename fails; the
    temporary folder is removed on any failure.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = fresh_sibling(target, "new")
    try:
        write(tmp)
        if target.exists():
            old = fresh_sibling(target, "old")
            os.replace(target, old)  # onto an empty folder: allowed on POSIX
            try:
                os.replace(tmp, target)
            except BaseException:
                os.replace(old, target)
                raise
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def check_not_input(out: str | Path, inputs: Iterable, error: type[Exception] = MbutilsError) -> None:
    """Refuse an output that is one of the inputs, lies inside an input folder or holds an input
    (None inputs are skipped): writing it would change or delete what the command reads."""
    target = Path(out).expanduser().resolve()
    for given in inputs:
        if given is None:
            continue
        source = Path(given).expanduser().resolve()
        if target == source:
            raise error(f"{out} is also this command's input; write the output elsewhere")
        if source.is_dir() and source in target.parents:
            raise error(f"{out} lies inside the input folder {source}; write the output elsewhere, so "
                        "the input stays as it is")
        if target in source.parents:
            raise error(f"{out} holds the input {given}; write the output to another folder, so "
                        "the input stays as it is")


def check_not_working_folder(out: str | Path, error: type[Exception] = MbutilsError) -> Path:
    """Refuse an output folder that is the working folder, one that holds it, the home folder or a
    file-system root: replacing it would delete the user's own files."""
    path = Path(out).expanduser()
    target = path.resolve()
    here = Path.cwd().resolve()
    if target == here or target in here.parents:
        raise error(f"{out} is the working folder{'' if target == here else ' or holds it'}; the output "
                    "folder is replaced whole, so give a new folder name, e.g. --out my-output/")
    if target == Path.home().resolve() or target.parent == target:
        raise error(f"{out} is the home folder or a file-system root; give a new folder name")
    return path


def check_output_folder(out: str | Path, force: bool, inputs: Iterable = (),
                        error: type[Exception] = MbutilsError, owned_by: Iterable[str] = (),
                        owned: Callable[[Path], bool] | None = None) -> Path:
    """The output folder ``out`` as a path, refused before any work is done when it is an input
    or lies in one, is the working folder (or holds it), is a file, has no parent folder, or holds
    files and ``force`` is not given (:func:`replace_folder` then writes it whole). With ``owned_by``,
    ``force`` replaces only a folder holding one of those files: one the command itself wrote; with
    ``owned`` (a check of the whole folder), only a folder that passes it."""
    path = check_not_working_folder(out, error)
    check_not_input(path, inputs, error)
    if path.exists() and not path.is_dir():
        raise error(f"{out} exists and is not a folder; give a new folder name")
    if not path.parent.is_dir():
        raise error(f"{out}: the folder {path.parent} does not exist; make it first, or give another --out")
    if path.is_dir() and any(path.iterdir()):
        if not force:
            raise error(f"{out} exists and is not empty; pass --force to replace it, or give another --out")
        marks = list(owned_by)
        if (marks and not any((path / name).is_file() for name in marks)) or (owned is not None and not owned(path)):
            what = f" (no {' or '.join(marks)})" if marks else ""
            raise error(f"{out} holds files this command did not write{what}; --force replaces only an earlier, "
                        "unedited output of the same command: give a new folder name")
    return path
