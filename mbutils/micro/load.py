"""The one reader of micro-benchmarks: a shipped one by name, or a folder, read back as what built it.

:func:`load_micro` returns the same type :func:`mbutils.build_micro` returns (a ``BuiltMicro``), with the
same card type, so ``load_micro(build_micro(...).save(folder))`` equals the built object. A shipped name
opens the shipped micro-benchmark unless a micro-benchmark folder of that name exists in the working
folder (holding manifest.json or micro.json), which wins; anything else is read as a folder.
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import numpy as np

from mbutils.micro.build import BuiltMicro, Card
from mbutils.micro.folder import MicroFolder
from mbutils.micro.shipped import open_micro


def card_from_dict(card: dict) -> Card:
    """A card as JSON stores it (NaN as null) back as a :class:`Card` (null numbers as NaN again)."""
    numbers = {f.name for f in fields(Card) if f.type in ("float", float)}
    known = {f.name for f in fields(Card)}
    return Card(**{key: (np.nan if key in numbers and value is None else value)
                   for key, value in card.items() if key in known})


def as_built(folder: MicroFolder) -> BuiltMicro:
    """A read folder as the micro-benchmark it holds: its items (the estimator's index space), chosen
    items' subtasks, estimator, choice provenance, pool, calibration and card; ``path`` the folder."""
    names = np.asarray(folder.item_names, dtype=str)
    subtasks = np.full(len(names), "", dtype=object)
    if "subtask" in folder.items:
        subtasks[folder.micro.items] = folder.items["subtask"].astype(str).to_numpy()
    calibration = folder.calibration
    if not len(calibration):
        calibration = calibration.reindex(columns=["model", "fold", "estimate", "truth", "error"])
    prov = folder.provenance
    return BuiltMicro(bundle=folder.meta["bundle"], bundle_hash=folder.meta.get("bundle_hash", prov.get("bundle_hash")),
                      items=names, subtasks=subtasks.astype(str), micro=folder.micro, selector=folder.meta["selector"],
                      selector_class=prov.get("selector_class", ""), params=prov.get("params", {}),
                      seed=int(prov.get("seed", 0)), pool=folder.pool, excluded=list(prov.get("excluded_models", [])),
                      calibration=calibration, card=card_from_dict(folder.card), interval=folder.meta["interval"],
                      path=folder.path)


def load_micro(name_or_folder) -> BuiltMicro:
    """A micro-benchmark by shipped name (``python -m mbutils micro list``) or by folder, checked on read.

    Parameters
    ----------
    name_or_folder : str or Path
        A shipped name such as ``"gpqa-100"``, or a folder written by :func:`mbutils.build_micro`
        (``out=``) or ``BuiltMicro.save``.

    Returns
    -------
    BuiltMicro
        What :func:`mbutils.build_micro` returns, with ``path`` set to the folder read.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from mbutils import build_micro, load_benchmark
    >>> built = build_micro(load_benchmark("synthetic-gpqa"), "random", 20, runs=2)
    >>> folder = built.save(pathlib.Path(tempfile.mkdtemp()) / "micro")
    >>> load_micro(folder) == built
    True
    """
    return as_built(open_micro(Path(name_or_folder) if not isinstance(name_or_folder, str) else name_or_folder))
