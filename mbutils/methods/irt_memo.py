"""A process's recent IRT fits, looked up by their hyper-parameters and responses.

A MAP fit (:class:`~mbutils.methods.irt_fit.IRTModel`) is a deterministic function of its
hyper-parameters and its responses (an SVD start, single-threaded BLAS), and one process
often fits the same sources again: a micro-benchmark built at several sizes refits its pool
and each calibration fold at every size, and a chapter's experiments share their runs'
sources. Handing back the earlier fit gives the same numbers without the work. The memo
is small (the last :data:`MEMO_SIZE` fits) and holds the fits read-only, so no caller can
change what another one reads.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

import numpy as np

from mbutils.methods.irt_fit import IRTModel

#: Fits kept (the least recently used leaves first); a fit of 12,000 items holds about 1 MB.
MEMO_SIZE = 16
_FITS: OrderedDict = OrderedDict()
_LOCK = threading.Lock()


def fit_key(model: IRTModel, Y: np.ndarray) -> tuple:
    """What a fit depends on: the hyper-parameters, the shape and a digest of the responses' bytes."""
    digest = hashlib.blake2b(np.ascontiguousarray(Y, dtype=np.float64), digest_size=20).digest()
    return tuple(sorted(model.get_params().items())), tuple(Y.shape), digest


def fitted(model: IRTModel, Y: np.ndarray) -> IRTModel:
    """A fitted clone of ``model`` on ``Y``: an earlier fit of this process when it had the same key.

    The returned model's arrays are read-only (it may be shared); errors of the fit propagate
    and nothing is kept for them.
    """
    key = fit_key(model, Y)
    with _LOCK:
        hit = _FITS.get(key)
        if hit is not None:
            _FITS.move_to_end(key)
            return hit
    fit = model.clone().fit(Y)
    for name in ("theta_", "a_", "b_", "objective_path_"):
        getattr(fit, name).setflags(write=False)
    with _LOCK:
        _FITS[key] = fit
        while len(_FITS) > MEMO_SIZE:
            _FITS.popitem(last=False)
    return fit


def clear() -> None:
    """Forget every kept fit (tests; a process that wants its memory back)."""
    with _LOCK:
        _FITS.clear()
