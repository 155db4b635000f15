"""The values of a micro-benchmark folder that no build writes wrong, checked wherever one is read.

One set of rules for a written folder (:func:`mbutils.micro.folder.read_micro`) and a shipped record
(:mod:`mbutils.micro.shipped`): items in the bundle and not repeated, weights finite, not negative, not all 0, and (for a
weighted mean) summing to 1, k and the bundle's size consistent, and a card whose numbers are in range.
Each check raises ``fail(path, what)``, so every refusal names its file.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd


#: How far from 1 the weights of a weighted mean may sum (they are written with 17 digits).
WEIGHT_SUM_TOLERANCE = 1e-9


def is_number(value, low: float = 0, high: float = np.inf) -> bool:
    """A finite JSON number (a bool is not one) in [low, high]."""
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_)) \
        and bool(np.isfinite(value)) and low <= value <= high


def is_count(value, low: int = 0) -> bool:
    return is_number(value, low) and float(value).is_integer() and not isinstance(value, (float, np.floating))


def absent(value) -> bool:
    """None, or the NaN a reader puts in its place."""
    return value is None or (isinstance(value, float) and np.isnan(value))


def weights_sum_to_one(selector_class, params) -> bool:
    """Whether the weights of the selector a micro-benchmark records (class path and parameters, each value
    its ``repr``, as provenance.json and shipped.json store them) must sum to 1: False for Horvitz-Thompson
    weights and for a class this mbutils does not register (a user's selector says so only in its code)."""
    import ast

    from mbutils.methods.selectors.registry import make_selector, selector_names

    for name in selector_names():
        selector = make_selector(name)
        if f"{type(selector).__module__}.{type(selector).__qualname__}" != selector_class:
            continue
        for key, text in (params.items() if isinstance(params, dict) else ()):
            try:  # one at a time: a value that is no literal (a nested model) keeps the default
                selector.set_params(**{str(key): ast.literal_eval(text) if isinstance(text, str) and len(text) < 1000
                                       else text})
            except Exception:  # noqa: BLE001 -- not a literal, or not a parameter of this class
                continue
        return bool(getattr(selector, "weights_sum_to_one", True))
    return False


def check_items(items: pd.DataFrame, path: Path, fail, *, sum_to_one: bool) -> None:
    """The chosen items (columns item, weight): each named once, each weight a finite number of 0 or more
    (a selector may keep an item it gives no weight, e.g. an empty stratum's), not all 0, summing to 1 when
    ``sum_to_one``. ``fail(path, what)`` makes the error."""
    if not {"item", "weight"} <= set(items.columns) or not len(items):
        raise fail(path, "needs the columns item and weight and a row per chosen item")
    names = items["item"].astype(str)
    weights = pd.to_numeric(items["weight"], errors="coerce").to_numpy(np.float64)
    bad = np.flatnonzero((names.str.strip() == "").to_numpy() | ~np.isfinite(weights) | (weights < 0))
    if len(bad):
        raise fail(path, f"row {bad[0] + 2} (item {names.iloc[bad[0]][:80]!r}, weight "
                   f"{str(items['weight'].iloc[bad[0]])[:30]!r}) names no item or has a negative or non-finite weight")
    if not (weights > 0).any():
        raise fail(path, "gives every item a weight of 0: the estimate would read nothing")
    if names.duplicated().any():
        raise fail(path, f"names item {names[names.duplicated()].iloc[0][:80]!r} twice")
    if sum_to_one and abs(float(weights.sum()) - 1.0) > WEIGHT_SUM_TOLERANCE:
        raise fail(path, f"its weights sum to {float(weights.sum()):.12g}, not 1 (the estimate is their weighted mean)")


def check_sizes(k, n_items, n_chosen: int, path: Path, fail) -> None:
    """k and the bundle's item count: whole numbers with 1 <= k <= n_items, k the number of chosen items."""
    if not (is_count(k, 1) and is_count(n_items, 1) and k <= n_items and k == n_chosen):
        raise fail(path, f"k = {str(k)[:20]} and n_items = {str(n_items)[:20]} do not fit its {n_chosen} chosen items")


def check_part(card: dict, key: str, path: Path, fail, counts=(), numbers=(), texts=()) -> dict | None:
    """``card[key]`` (a dotted key reaches into a part): None, or an object whose ``counts`` are whole
    numbers, ``numbers`` numbers of 0 or more (or null) and ``texts`` strings; returned."""
    part = card
    for step in key.split("."):
        part = part.get(step) if isinstance(part, dict) else None
    if absent(part):
        return None
    wrong = ([] if isinstance(part, dict) else [""]) or [k for k in counts if not is_count(part.get(k))] \
        + [k for k in numbers if not (absent(part.get(k)) or is_number(part.get(k)))] \
        + [k for k in texts if not isinstance(part.get(k), str)]
    if wrong:
        raise fail(path, f"its card's {key}{'.' + wrong[0] if wrong[0] else ''} is not as a build writes it")
    return part


def check_card(card, path: Path, fail) -> None:
    """The reliability card (``card.json``, or a shipped record's): threshold in (0, 1]; MDAD, random
    sampling's MDAD and the interval's low end in [0, 100] points or null; its high end 0 or more or null
    (open); ci_low <= mdad <= ci_high; the share separated in [0, 1]; protocol, coverage, held-out
    measures and choice as built."""
    if not isinstance(card, dict):
        raise fail(path, "its card is not an object")
    if not (is_number(card.get("threshold"), 0, 1) and card["threshold"] > 0):
        raise fail(path, f"its card's threshold {str(card.get('threshold'))[:30]!r} is not in (0, 1]")
    values = {}
    for key, high in (("mdad", 100), ("ci_low", 100), ("ci_high", np.inf), ("random_mdad", 100), ("share_separated", 1)):
        if not (absent(card.get(key)) or is_number(card[key], 0, high)):
            raise fail(path, f"its card's {key} {str(card[key])[:30]!r} is not a number from 0 to {high:g} or null")
        values[key] = None if absent(card.get(key)) else float(card[key])
    mdad, low, high = values["mdad"], values["ci_low"], values["ci_high"]
    if any(a is not None and b is not None and a > b for a, b in ((low, mdad), (mdad, high), (low, high))):
        raise fail(path, f"its card's interval {low} to {high} does not hold its MDAD {mdad} (ci_low <= mdad <= ci_high)")
    if not (absent(card.get("note")) or isinstance(card["note"], str)):
        raise fail(path, "its card's note is not text")
    check_part(card, "protocol", path, fail, counts=("n_runs", "n_sources", "n_targets"))
    check_part(card, "coverage", path, fail, numbers=("level", "width"))
    for key in ("coverage.calibration", "coverage.excluded"):
        part = check_part(card, key, path, fail, counts=("models", "covered"), numbers=("width",))
        if part is not None and not part["covered"] <= part["models"] >= 1:
            raise fail(path, f"its card's {key} covers {part['covered']} of {part['models']} models")
    check_part(card, "held_out", path, fail, numbers=("level",))
    for key in ("held_out.calibration", "held_out.excluded"):
        part = check_part(card, key, path, fail, counts=("models", "covered", "verdicts", "false_verdicts"),
                           numbers=("rmse", "half_width", "coverage", "false_rate"))
        if part is not None and not (part["covered"] <= part["models"] and part["false_verdicts"] <= part["verdicts"]
                                     and (absent(part.get("bias")) or is_number(abs(part["bias"]), 0, 100))):
            raise fail(path, f"its card's {key} is not as a build writes it")
    choice = check_part(card, "choice", path, fail, counts=("runs", "seed"), numbers=("threshold",), texts=("reason",))
    if choice is not None and not (isinstance(choice.get("mdads"), dict) and all(
            absent(v) or is_number(v, 0, 100) for v in choice["mdads"].values())):
        raise fail(path, "its card's choice.mdads is not a map of selector -> MDAD (0-100 points or null)")
