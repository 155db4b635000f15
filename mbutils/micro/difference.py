"""The difference (AIPW-style) estimator in a micro-benchmark folder: the pool's answers it reads when scoring.

``random_difference`` chooses a uniform random sample of k items and estimates a model's accuracy with
the cross-fitted difference estimator (``DifferenceMicroBenchmark``, see ``mbutils.methods.estimators``):
the mean, over all N items, of predictions from the pool models that answer the model's sampled items
most alike, plus the mean residual on the sample, each half of the sample corrected with predictions
made from the other half. Scoring a new model therefore reads, beside its k answers, the pool's answers
on every item. A folder of this estimator holds them in

``pool_answers.csv``  the bundle's ``responses.csv`` format: a ``model`` column (the models of ``pool.csv``,
                      in its order) and one 0/1 column per item of the bundle, in the bundle's order

and ``micro.json`` records the estimator's state: kind ``"difference"``, reads ``"correct"``, the file of
answers, the two ``folds`` (positions into the order of ``items.csv``), the ``neighbours`` rule with its
count for this pool, ``items_sha256``, a digest of the item columns' names, and the law of its interval:
``"interval_law": "student_t"`` with ``"df"`` = k - 2. The interval is the estimate plus or minus the
Student-t quantile with k - 2 degrees of freedom times the standard deviation the estimator gives from
the spread of its cross-fitted residuals on the k items, floored so it never has zero width
(:func:`mbutils.methods.estimators.difference_interval`).

micro.json's top-level ``interval`` of such a folder stays ``"normal"`` (``INTERVAL``): it names the
family, "the difference estimator's own interval", which every reader of folders checks and which
folders written before the t interval carry too. The law is in the estimator's state; a state without
``interval_law`` (a folder written before it) is read with the normal law it was written and measured
with, and the outputs say so (``LEGACY_DESCRIPTION``); build it again for the t interval.

:func:`read_difference` rebuilds the estimator and refuses, naming the file, a folder whose answers
are not 0 and 1, whose models or their accuracies are not ``pool.csv``'s, whose item columns are not
the bundle's items, or whose folds do not split the k positions in two of at least two each.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd

from mbutils.base.tables import csv_safe, from_csv_text
from mbutils.methods.estimators import MIN_ITEMS, default_neighbours, difference_df
from mbutils.methods.selectors.random_sampling import DifferenceMicroBenchmark

ANSWERS = "pool_answers.csv"
KIND = "difference"
#: The interval kind of such a folder (micro.json's ``interval``): the family name, kept for every reader.
INTERVAL = "normal"
#: The law build-micro writes (the estimator state's ``interval_law``); a state without one is ``"normal"``.
LAW = "student_t"
#: How the predictions average the pool's answers (micro.json's ``neighbours.rule``).
NEIGHBOUR_RULE = ("mean answers of the max(5, n // 5) pool models (all n when fewer) that disagree least with "
                  "the model on the fitting half of the sample, ties taken in pool.csv's order")
#: What the interval is, in the words ``score`` uses.
DESCRIPTION = ("Student-t interval (k - 2 degrees of freedom) from the cross-fitted residuals of the difference "
               "estimator")
#: The same for a folder written before the t interval (no ``interval_law`` in its state).
LEGACY_DESCRIPTION = ("normal interval from the cross-fitted residuals of the difference estimator (a folder written "
                      "before the Student-t interval; build it again to get that)")


def describe(micro) -> str:
    """The words for the interval of a ``DifferenceMicroBenchmark`` (by its law)."""
    return DESCRIPTION if getattr(micro, "law", LAW) == LAW else LEGACY_DESCRIPTION


def names_digest(names) -> str:
    """SHA-256 of a list of names (as a JSON list, so no two lists share a text)."""
    return hashlib.sha256(json.dumps([str(n) for n in names]).encode("utf-8")).hexdigest()


def write_pool_answers(built, root: Path) -> dict:
    """Write ``pool_answers.csv`` of ``built`` (its micro a ``DifferenceMicroBenchmark``) into ``root``;
    returns the estimator's state for ``micro.json``."""
    micro = built.micro
    answers = np.asarray(micro.source_correct, dtype=np.float64)
    models = built.pool["model"].astype(str).to_numpy()
    if answers.shape != (len(models), len(built.items)) or not np.isin(answers, (0.0, 1.0)).all():
        raise ValueError(f"the difference estimator's pool answers ({answers.shape}) are not 0/1 answers of the "
                         f"{len(models)} pool models on the {len(built.items)} items")
    table = pd.DataFrame(answers.astype(np.int8), columns=list(built.items))
    table.insert(0, "model", models)
    csv_safe(table).to_csv(root / ANSWERS, index=False)
    return {"kind": KIND, "reads": "correct", "answers": ANSWERS,
            "folds": [[int(p) for p in fold] for fold in micro.folds],
            "neighbours": {"rule": NEIGHBOUR_RULE, "count": default_neighbours(len(models))},
            "items_sha256": names_digest(built.items),
            "interval_law": micro.law, **({"df": difference_df(micro.size)} if micro.law == LAW else {})}


def _table(path: Path, fail) -> pd.DataFrame:
    if not path.is_file():
        raise fail(path, "missing (the difference estimator reads the pool's answers from it)")
    try:  # every cell as written (an empty one stays text, and is refused below)
        table = pd.read_csv(path, dtype={"model": str}, keep_default_na=False)
    except Exception as err:  # noqa: BLE001 -- any parser failure: not the table written
        raise fail(path, f"cannot be read as a table ({type(err).__name__})") from None
    if "model" in table:
        table["model"] = table["model"].map(from_csv_text)
    return table


def _answers(path: Path, table: pd.DataFrame, state: dict, n_items: int, pool: pd.DataFrame, fail) -> np.ndarray:
    """The pool's 0/1 answers, checked against micro.json (the items) and pool.csv (models, accuracies)."""
    columns = [str(c) for c in table.columns]
    if not columns or columns[0] != "model":
        raise fail(path, "needs the column model first, then one column per item of the bundle")
    names = columns[1:]
    if len(names) != n_items or len(set(names)) != len(names) or names_digest(names) != state["items_sha256"]:
        raise fail(path, f"its {len(names)} item columns are not the bundle's {n_items} items in its order (as "
                   "micro.json records them)")
    block = table[names]
    numeric = all(pd.api.types.is_numeric_dtype(dtype) for dtype in block.dtypes)
    values = (block if numeric else block.apply(pd.to_numeric, errors="coerce")).to_numpy(np.float64)
    bad = ~np.isin(values, (0.0, 1.0))
    if bad.any():
        row, col = np.argwhere(bad)[0]
        raise fail(path, f"row {row + 2}, column {names[col]!r} holds {str(table[names[col]].iloc[row])[:20]!r}; the "
                   "pool's answers are 0 or 1")
    models = table["model"].astype(str).tolist()
    expected = pool["model"].astype(str).tolist()
    if models != expected:
        where = next((i for i, (a, b) in enumerate(zip(models, expected)) if a != b), min(len(models), len(expected)))
        raise fail(path, f"its models are not pool.csv's, in its order ({len(models)} rows against {len(expected)} "
                   f"models; first difference at row {where + 2})")
    accuracy = pd.to_numeric(pool["accuracy"], errors="coerce").to_numpy(np.float64)
    off = ~(np.abs(values.mean(axis=1) - accuracy) <= 1e-9)
    if off.any():
        i = int(np.flatnonzero(off)[0])
        raise fail(path, f"model {models[i]!r} answers {values[i].mean():.4f} of the items right, not its accuracy "
                   f"{accuracy[i]:.4f} in pool.csv")
    return values


def _folds(root: Path, state: dict, k: int, fail) -> tuple[np.ndarray, np.ndarray]:
    folds = state.get("folds")
    half = MIN_ITEMS // 2
    if not (isinstance(folds, list) and len(folds) == 2
            and all(isinstance(f, list) and all(type(p) is int for p in f) for f in folds)
            and sorted(folds[0] + folds[1]) == list(range(k)) and min(map(len, folds)) >= half):
        raise fail(root / "micro.json", f"its estimator's folds do not split the {k} positions of items.csv "
                   f"(0 to {k - 1}) into two parts of at least {half} each")
    return np.array(sorted(folds[0]), dtype=np.int64), np.array(sorted(folds[1]), dtype=np.int64)


def _law(root: Path, state: dict, k: int, fail) -> str:
    """The interval's law the state records: ``"student_t"`` with k - 2 degrees of freedom, or, for a state
    written before it (no ``interval_law``), ``"normal"``; anything else is refused."""
    law = state.get("interval_law", "normal")
    if law == LAW and state.get("df") == difference_df(k) and type(state.get("df")) is int:
        return law
    if law == "normal" and "df" not in state:
        return law
    raise fail(root / "micro.json", f"its difference estimator's interval_law {str(law)[:30]!r} (df "
               f"{str(state.get('df'))[:20]}) is not {LAW!r} with df = {difference_df(k)} (k - 2)")


def read_difference(root: Path, meta: dict, items: pd.DataFrame, pool: pd.DataFrame, fail,
                    answers: Path | None = None) -> tuple[list[str], DifferenceMicroBenchmark]:
    """The item names of the estimator's index space (the bundle's N items) and the estimator a
    ``"difference"`` state describes; ``fail(path, what)`` makes the error that names a bad file."""
    state = meta["estimator"]
    k, n_items = len(items), int(meta["n_items"])
    if state.get("reads") != "correct" or state.get("answers") != ANSWERS:
        raise fail(root / "micro.json", f"its difference estimator must read 'correct' answers from {ANSWERS}")
    rule = state.get("neighbours")
    if not isinstance(rule, dict) or rule.get("rule") != NEIGHBOUR_RULE \
            or rule.get("count") != default_neighbours(len(pool)):
        raise fail(root / "micro.json", f"its neighbour rule is not the estimator's ({default_neighbours(len(pool))} "
                   f"of the {len(pool)} pool models)")
    folds = _folds(root, state, k, fail)
    law = _law(root, state, k, fail)
    path = answers or root / ANSWERS
    table = _table(path, fail)
    values = _answers(path, table, state, n_items, pool, fail)
    names = [str(c) for c in table.columns[1:]]
    index = pd.Index(names).get_indexer(items["item"].astype(str))
    if (index < 0).any():
        raise fail(path, "lacks some of the chosen items of items.csv")
    weights = pd.to_numeric(items["weight"], errors="coerce").to_numpy(np.float64)
    if not np.allclose(weights, 1.0 / k, rtol=0, atol=1e-12):
        raise fail(root / "items.csv", f"its weights are not 1/{k} (the difference estimator weighs no item)")
    return names, DifferenceMicroBenchmark(index, values, folds, law=law)
