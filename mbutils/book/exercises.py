"""Small helpers for the chapters' exercises (see chapters/teaching.md).

Only what a solution needs and the package does not already offer: how often a
micro-benchmark orders each pair of targets wrongly, and the expected bias of the plain
(equal-subtask-weight) stratified mean.
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np
import pandas as pd

from mbutils.base.errors import CheckFailed


def plain_stratified_bias(correct: np.ndarray, subtasks: np.ndarray) -> np.ndarray:
    """Expected bias (points) per model of an equal-weight subtask mean against the item mean.

    The expectation of a plain mean over equally many random items per subtask is the
    unweighted mean of the subtask accuracies; the target is the item-weighted mean.
    """
    correct = np.asarray(correct, dtype=np.float64)
    subtasks = np.asarray(subtasks, dtype=np.int64)
    per_subtask = np.stack([correct[:, subtasks == s].mean(axis=1) for s in np.unique(subtasks)], axis=1)
    return 100 * (per_subtask.mean(axis=1) - correct.mean(axis=1))


def random_sampling_error(correct_counts, n_items: int, k: int) -> np.ndarray:
    """Expected absolute estimation error (points) of a uniform random k-item micro-benchmark.

    A model right on ``c`` of the ``n_items`` items scores X/k on k items drawn without
    replacement, X ~ Hypergeometric(n_items, c, k); the result is 100·E|X/k − c/n_items|,
    exactly (a sum over x = 0..k), for each count of ``correct_counts`` (any shape).
    """
    from scipy.stats import hypergeom

    n_items, k = int(n_items), int(k)
    if not 1 <= k <= n_items:
        raise ValueError(f"k must be between 1 and the {n_items} items, got {k}")
    c = np.asarray(correct_counts, dtype=np.int64)[..., None]
    x = np.arange(k + 1)
    pmf = hypergeom.pmf(x, n_items, c, k)
    return 100 * (pmf * np.abs(x / k - c / n_items)).sum(axis=-1)


# --------------------------------------------------------------------------- stratified allocation
def within_stratum_sd(scores: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Per stratum: the root mean over models of each model's within-stratum sample variance.

    ``scores`` is models x items, ``labels`` the stratum of each item (0..H-1, every
    stratum non-empty). A model's variance in stratum h has the N_h - 1 denominator
    (0 for a one-item stratum); averaging the variances over models and taking the root
    gives the S_h that makes n_h ~ N_h S_h minimise the mean variance over models.
    """
    scores = np.asarray(scores, dtype=np.float64)
    labels = np.asarray(labels, dtype=np.int64)
    onehot = np.eye(labels.max() + 1)[labels]                  # items x strata
    sizes = onehot.sum(axis=0)
    mean = scores @ onehot / sizes
    sq = (scores**2) @ onehot / sizes
    var = np.maximum(sq - mean**2, 0.0) * sizes / np.maximum(sizes - 1, 1)
    return np.sqrt(var.mean(axis=0))


def neyman_allocation(k: int, sizes, sds, rng: np.random.Generator, minimum: int = 1) -> np.ndarray:
    """Items per stratum for Neyman allocation, n_h ~ N_h S_h, summing to exactly ``k``.

    Every stratum gets between ``min(minimum, N_h)`` items (when ``k`` allows that floor
    for all strata, else 0) and N_h items: the continuous quotas are clip(c N_h S_h, low,
    N_h) with c solved exactly on the piecewise-linear sum, then rounded by largest
    remainder, ties broken with ``rng``. A stratum with S_h = 0 gets a weight of 1e-9 of
    the largest N_h S_h (times its size), so it is filled only after every other stratum,
    and with all S_h = 0 the allocation is proportional to size.
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    sds = np.asarray(sds, dtype=np.float64)
    k = int(k)
    if sizes.ndim != 1 or sds.shape != sizes.shape or (sizes < 1).any() or (sds < 0).any():
        raise ValueError("need one positive size and one non-negative sd per stratum")
    if not 0 <= k <= sizes.sum():
        raise ValueError(f"cannot allocate {k} items to strata holding {sizes.sum()} items")
    w = sizes * sds
    w = w + 1e-9 * (w.max() if w.max() > 0 else 1.0) * sizes
    low = np.minimum(minimum, sizes)
    low = low if low.sum() <= k else np.zeros_like(sizes)
    breaks = np.sort(np.concatenate([low / w, sizes / w]))
    total = np.clip(np.outer(breaks, w), low, sizes).sum(axis=1)   # non-decreasing in c
    j = int(np.searchsorted(total, k))
    if j == 0:
        c = breaks[0]
    else:
        span = total[j] - total[j - 1]
        c = breaks[j - 1] + (breaks[j] - breaks[j - 1]) * ((k - total[j - 1]) / span if span > 0 else 0.0)
    quota = np.clip(c * w, low, sizes)
    counts = np.minimum(np.floor(quota + 1e-9).astype(np.int64), sizes)
    short = k - int(counts.sum())
    room = counts < sizes
    order = np.lexsort((rng.random(len(sizes)), -(quota - counts), ~room))
    counts[order[:short]] += 1
    return counts


def stratified_variance(scores: np.ndarray, labels: np.ndarray, counts) -> np.ndarray:
    """Exact variance (points squared) per model of the stratified (Horvitz-Thompson) mean.

    Simple random sampling without replacement of ``counts[h]`` items in stratum h:
    Var = sum_h (N_h / N)^2 (1 - n_h / N_h) S_mh^2 / n_h, S_mh^2 with the N_h - 1
    denominator. NaN for every model when a stratum gets no item (the estimate is then
    biased, and its variance is not the question).
    """
    scores = np.asarray(scores, dtype=np.float64)
    labels = np.asarray(labels, dtype=np.int64)
    counts = np.asarray(counts, dtype=np.float64)
    onehot = np.eye(labels.max() + 1)[labels]
    sizes = onehot.sum(axis=0)
    if (counts < 1).any():
        return np.full(scores.shape[0], np.nan)
    mean = scores @ onehot / sizes
    var = np.maximum((scores**2) @ onehot / sizes - mean**2, 0.0) * sizes / np.maximum(sizes - 1, 1)
    share = sizes / sizes.sum()
    return 1e4 * (var * share**2 * (1 - counts / sizes) / counts).sum(axis=1)


# --------------------------------------------------------------------------- projection DPP
def dpp_moments(Q: np.ndarray, scores: np.ndarray, weights) -> tuple[np.ndarray, np.ndarray]:
    """Exact mean and variance per model of sum_{i in S} w_i y_i, S a projection-DPP draw.

    ``Q`` (items x k, orthonormal columns) spans the kernel K = Q Q^T; ``scores`` is
    models x the same items, ``weights`` one w_i per item. With z = w * y,
    E = sum_i K_ii z_i and Var = sum_i K_ii z_i^2 - sum_ij K_ij^2 z_i z_j (from
    P(i in S) = K_ii and P(i, j in S) = K_ii K_jj - K_ij^2), the second sum computed as
    ||Q^T diag(z) Q||_F^2 one column of Q at a time (memory: items x k).
    """
    Q = np.asarray(Q, dtype=np.float64)
    z = np.asarray(scores, dtype=np.float64) * np.asarray(weights, dtype=np.float64)
    pi = np.einsum("ia,ia->i", Q, Q)
    mean = z @ pi
    cross = sum(((z @ (Q * Q[:, [a]])) ** 2).sum(axis=1) for a in range(Q.shape[1]))
    return mean, np.maximum((z**2) @ pi - cross, 0.0)


# --------------------------------------------------------------------------- named checks
# Every exercise's solution ends with its checks: ``book.check(label, name, found, expected, ...)``
# calls, each reading one name the exercise's "You produce" list asks for. The students' notebooks
# keep the checks (not the hidden ones) after the names set to ``...``; the grader
# (:mod:`mbutils.publish.grading`) runs them all, hidden ones included, after each submitted answer.

#: What a name holds until the student computes it: the stub's ``name = ...``.
NOT_DONE = Ellipsis
#: Environment: a file (or folder) where each check appends one JSON line (the grader reads it).
LOG_ENV = "MBUTILS_CHECKS_LOG"
#: Environment: ``1`` makes every check that passes also try wrong answers (a perturbed and a constant
#: value), and log whether each failed as it must (the tests read it).
MUTATE_ENV = "MBUTILS_CHECKS_MUTATE"

_STATE: dict = {"mode": "raise", "results": [], "grading": None}


class _Unreadable:
    def __init__(self, why: str):
        self.why = why

    def __repr__(self):
        return f"unreadable ({self.why})"


def check_mode(mode: str) -> None:
    """``"raise"`` (the book's builds: a failed check stops the page) or ``"report"`` (the students'
    notebooks and the grader: a failed check is printed, and the notebook goes on)."""
    if mode not in ("raise", "report"):
        raise ValueError(f"check mode is 'raise' or 'report', not {mode!r}")
    _STATE["mode"] = mode


def _short(value, limit: int = 80) -> str:
    """A value as a check's message shows it: numbers to 4 significant digits, tables by their size."""
    if value is NOT_DONE:
        return "nothing yet (...)"
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return "NaN" if np.isnan(value) else f"{float(value):.6g}" if abs(value) < 1e-3 or abs(value) >= 1e6 \
            else f"{float(value):.4f}".rstrip("0").rstrip(".") if value != round(value) else f"{float(value):g}"
    if isinstance(value, pd.DataFrame):
        return f"a table of {len(value)} rows (columns {', '.join(map(str, value.columns))})"
    if isinstance(value, (pd.Series, np.ndarray, list, tuple)):
        arr = np.asarray(value, dtype=object).ravel()
        head = ", ".join(_short(v) for v in arr[:4]) + (", ..." if len(arr) > 4 else "")
        return f"[{head}] ({len(arr)} values)"
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _numeric(value) -> np.ndarray | None:
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    return arr


def compare(found, expected, *, atol: float = 1e-9, rtol: float = 0.0, source: str = "") -> str | None:
    """None when ``found`` matches ``expected`` (numbers within ``atol + rtol * |expected|``, NaN
    matching NaN, other values equal), else what differs, in words.

    Tables (a pandas Series or DataFrame expected) are matched by their index, and a DataFrame by
    each expected column: the found table needs the same index (in any order) and those columns.
    ``source`` (say "the library's") follows the expected value in the words."""
    src = f" ({source})" if source else ""
    kw = {"atol": atol, "rtol": rtol, "source": source}

    if isinstance(expected, pd.DataFrame):
        if not isinstance(found, pd.DataFrame):
            return f"expected a pandas DataFrame, found a {type(found).__name__}"
        missing = [c for c in expected.columns if c not in found.columns]
        if missing:
            return f"expected the columns {', '.join(map(str, missing))}; found only {', '.join(map(str, found.columns))}"
        for column in expected.columns:
            why = compare(found[column], expected[column], **kw)
            if why is not None:
                return f"column {column!r}: {why}"
        return None
    if isinstance(expected, pd.Series):
        if isinstance(found, pd.DataFrame) or not isinstance(found, pd.Series):
            return f"expected a pandas Series, found a {type(found).__name__}"
        if len(found) != len(expected) or set(found.index) != set(expected.index) or not found.index.is_unique:
            return (f"expected the index {_short(list(expected.index))}, found {_short(list(found.index))}")
        found = found.loc[expected.index]
        for key, f, e in zip(expected.index, found.to_numpy(), expected.to_numpy()):
            if compare(f, e, **kw) is not None:
                return f"at {key!r}: expected {_short(e)}{src}, found {_short(f)}"
        return None
    if isinstance(expected, str) or isinstance(found, str):
        return None if found == expected else f"expected {_short(expected)}{src}, found {_short(found)}"
    e, f = _numeric(expected), _numeric(found)
    if e is None:
        return None if found == expected else f"expected {_short(expected)}{src}, found {_short(found)}"
    if f is None:
        return f"expected a number or an array of numbers, found a {type(found).__name__}"
    if e.shape != f.shape:
        return f"expected the shape {e.shape}, found {f.shape}"
    bad = ~(np.isclose(f, e, atol=atol, rtol=rtol) | (np.isnan(f) & np.isnan(e)))
    if not bad.any():
        return None
    if e.ndim == 0:
        return f"expected {_short(e.item())}{src}, found {_short(f.item())}"
    where = tuple(int(i) for i in np.argwhere(bad)[0])
    return (f"{int(bad.sum())} of {e.size} values differ; the first at {where[0] if len(where) == 1 else where}: "
            f"expected {_short(e[where])}{src}, found {_short(f[where])}")


def _rule(atol: float, rtol: float, rule: str | None) -> str:
    if rule:
        return rule
    parts = ([f"within {atol:g}"] if atol else []) + ([f"within {rtol:.0%} of it"] if rtol else [])
    return " or ".join(parts) or "exactly"


def wrong_answers(found, *, atol: float = 1e-9, rtol: float = 0.0) -> list:
    """Wrong values near a right one: ``found`` shifted past the tolerance, and a constant of its
    shape (what a check must reject; the tests run every check on them)."""
    def shift(x):  # an infinite value stays infinite (no NaN from 0 * inf, no warning)
        with np.errstate(invalid="ignore"):
            step = 10 * atol + np.where(np.isfinite(x), 10 * rtol * np.abs(x), 0.0) + 0.01
        return x + step * np.where(x >= 0, 1, -1)
    if isinstance(found, pd.DataFrame):
        cols = [c for c in found.columns if pd.api.types.is_numeric_dtype(found[c])
                and not pd.api.types.is_bool_dtype(found[c])]
        flags = [c for c in found.columns if pd.api.types.is_bool_dtype(found[c])]
        out = []

        def changed(change):
            copy = found.copy()
            for c in (cols if change != "flip" else flags):
                copy[c] = shift(found[c].astype(float)) if change == "shift" else -7.0 if change == "constant" else ~found[c]
            return copy

        if cols:
            out += [changed("shift"), changed("constant")]
        if flags:
            out.append(changed("flip"))
        return out
    if isinstance(found, pd.Series):
        if pd.api.types.is_bool_dtype(found):
            return [~found]
        if pd.api.types.is_numeric_dtype(found):
            return [shift(found.astype(float)), pd.Series(-7.0, index=found.index)]
        return [pd.Series("wrong", index=found.index)]
    if isinstance(found, (bool, np.bool_)):
        return [not found]
    if isinstance(found, str):
        return ["wrong"]
    arr = _numeric(found)
    if arr is None:
        if isinstance(found, (list, tuple)):
            return [type(found)([*found[:-1], "wrong"]), type(found)()]
        return []
    if arr.size == 0:
        return [np.array([-7.0])]
    if arr.dtype == bool or (isinstance(found, np.ndarray) and found.dtype == bool):
        return [~np.asarray(found, dtype=bool)]
    if isinstance(found, (int, np.integer)):
        return [int(found) + 1, -7]
    return [shift(arr) if arr.ndim else float(shift(arr)), np.full(arr.shape, -7.0) if arr.ndim else -7.0]


def _differs(a, b) -> bool:
    try:
        return compare(a, b, atol=0.0, rtol=0.0) is not None
    except Exception:
        return True


def _log(record: dict) -> None:
    where = os.environ.get(LOG_ENV)
    if not where:
        return
    path = os.path.join(where, f"checks-{os.getpid()}.jsonl") if os.path.isdir(where) else where
    with open(path, "a", encoding="utf-8") as fh:  # one short line per write: appends do not interleave
        fh.write(json.dumps(record, default=str) + "\n")


def check(label: str, name: str, found, expected=None, *, atol: float = 1e-9, rtol: float = 0.0,
          rule: str | None = None, source: str = "the library's", choices=None, hidden: bool = False,
          of=None) -> bool:
    """Check one name of an exercise's answer; print what was expected and what was found.

    ``label`` is the exercise's (``ex-gpqa-tau``), ``name`` the name its text asks for, ``found``
    its value and ``expected`` the value it must have (``source`` says where that comes from: "the
    library's", "the page's"), within ``atol + rtol * |expected|`` (``rule`` words another rule).
    ``of``: a function of the found value whose result is compared instead (a column of a table, a
    selector's draw: the check block never reads a student's name but through it).
    ``choices`` instead of ``expected``: the answer must be one of them (a multiple-choice question,
    graded by a hidden check). A ``found`` still ``...`` is *not done*: reported, never an error, so
    Run All goes on. A wrong value raises :class:`CheckFailed` (``check_mode("raise")``, the book's
    builds) or is printed on stderr (``"report"``). ``hidden``: the check is left out of the students'
    notebooks (the grader and the book run it). Returns whether the check passed.
    """
    what = f"check {label}: {name}"
    record = {"label": label, "name": name, "hidden": bool(hidden), "grading": _STATE["grading"]}
    if found is NOT_DONE:
        print(f"{what} — not done (compute {name} in place of `...`)")
        _STATE["results"].append({**record, "status": "not done"})
        _log({**record, "status": "not done"})
        return False
    if of is not None:
        try:
            found = of(found)
        except Exception as err:  # the student's value is not of the kind asked for
            found = _Unreadable(f"{type(err).__name__}: {err}")
    if choices is not None:
        def why_of(value):
            return None if value in list(choices) else \
                f"expected one of {', '.join(map(repr, choices))}, found {_short(value)}"
        rule_text = "one of the choices"
    else:
        def why_of(value):
            if isinstance(value, _Unreadable):
                return f"expected {_short(expected)} ({source}), but the answer could not be read ({value.why})"
            try:
                return compare(value, expected, atol=atol, rtol=rtol, source=source)
            except Exception as err:  # a value of the wrong kind is a wrong answer, not a crash
                return f"cannot compare {_short(value)} with {_short(expected)} ({type(err).__name__}: {err})"
        rule_text = _rule(atol, rtol, rule)
    why = why_of(found)
    if why is None:
        shown = "an answer is recorded; your instructor grades it" if choices is not None else (
            f"as expected ({_short(expected)}, {source}; {rule_text})")
        print(f"{what} — passed: {shown}")
        status = {"status": "passed"}
        if os.environ.get(MUTATE_ENV) == "1":
            wrong = wrong_answers(found, atol=atol, rtol=rtol) if choices is None else ["no such choice"]
            wrong = [w for w in wrong if _differs(w, found)]  # a shifted NaN is no wrong answer
            status["mutants"] = len(wrong)
            status["mutants_passed"] = [_short(w) for w in wrong if why_of(w) is None]
        _STATE["results"].append({**record, **status})
        _log({**record, **status})
        return True
    message = f"{what} — {why} (rule: {rule_text})"
    _STATE["results"].append({**record, "status": "failed", "message": message})
    _log({**record, "status": "failed", "message": message})
    if _STATE["mode"] == "raise" and _STATE["grading"] is None:
        raise CheckFailed(message)
    print(message, file=sys.stderr)
    return False


class grading:
    """``with book.grading(label): <checks>``: the grader's own run of an exercise's checks (hidden
    ones included), after the student's cell. Nothing stops the notebook: a failure, or an error
    such as a name the student never set (``NameError``), is logged as the exercise's."""

    def __init__(self, label: str):
        self.label = label

    def __enter__(self):
        self._before = _STATE["grading"]
        _STATE["grading"] = self.label
        return self

    def __exit__(self, kind, err, tb):
        _STATE["grading"] = self._before
        if err is not None:
            message = f"check {self.label}: the checks could not run ({kind.__name__}: {err})"
            _log({"label": self.label, "name": "", "hidden": False, "grading": self.label, "status": "error",
                  "message": message})
            print(message)
        return True


def exercise_status(label: str, **names) -> str:
    """The line a students' stub ends with: ``not done`` while a name is still ``...``, else how its
    checks in this kernel went (printed and returned)."""
    missing = [name for name, value in names.items() if value is NOT_DONE]
    if missing:
        line = f"exercise {label}: not done ({', '.join(missing)} still `...`)"
    else:
        mine = [r for r in _STATE["results"] if r["label"] == label and r["grading"] is None]
        failed = sum(r["status"] == "failed" for r in mine)
        line = (f"exercise {label}: answered" + (f"; {failed} check(s) failed" if failed else
                "; the checks shown passed" if mine else "") + " (your instructor's checks grade it)")
    print(line)
    _log({"label": label, "name": "", "hidden": False, "grading": _STATE["grading"],
          "status": "not done" if missing else "answered"})
    return line


def check_summary():
    """Each exercise's checks run so far in this kernel: passed, failed or not done (a table; the
    students' notebooks end with it)."""
    rows = {}
    for r in _STATE["results"]:
        if r["grading"] is not None:
            continue
        row = rows.setdefault(r["label"], {"exercise": r["label"], "passed": 0, "failed": 0, "not done": 0})
        row[r["status"]] += 1
    table = pd.DataFrame(list(rows.values()), columns=["exercise", "passed", "failed", "not done"])
    table["status"] = np.where(table["failed"] > 0, "failed",
                               np.where(table["not done"] > 0, "not done", "passed"))
    return table
