"""One row per shipped micro-benchmark, read from the stored cards: what a reader's page and table show.

Why a module of its own: :func:`mbutils.micro.shipped.summary` is the command line's short list;
a person deciding whether to trust a shipped set also needs how it was chosen (the paired noise rule's
numbers and verdict against random sampling), the held-out coverage, and a flag when the MDAD interval
is degenerate (no width because the pool gave few target pairs, not because the MDAD is precise).
Nothing is recomputed: every number is a field of ``shipped.json``.
"""

from __future__ import annotations

import math

import pandas as pd

from mbutils.micro.shipped import record, shipped_names


def _num(value) -> float:
    return float("nan") if value is None else float(value)


def _row(name: str) -> dict:
    rec = record(name)
    card = rec["card"]
    choice = card.get("choice") or {}
    versus = (choice.get("comparisons") or {}).get("random") or {}
    protocol = card.get("protocol") or {}
    calib = (card.get("coverage") or {}).get("calibration") or {}
    low, high = _num(card["ci_low"]), _num(card["ci_high"])
    return {
        "name": name, "bundle": rec["bundle"], "k": int(rec["k"]), "selector": rec["selector"],
        "interval": rec["interval"],
        "lowest": choice.get("lowest"), "lowest_mdad": _num((choice.get("mdads") or {}).get(choice.get("lowest"))),
        "choice_random_mdad": _num((choice.get("mdads") or {}).get("random")),
        # the rule's comparison of the lowest-MDAD selector with random (nan when the lowest is random)
        "vs_random_difference": _num(versus.get("difference")), "vs_random_low": _num(versus.get("low")),
        "vs_random_high": _num(versus.get("high")), "vs_random_verdict": versus.get("verdict"),
        "choice_runs": int(choice.get("runs") or 0), "reason": choice.get("reason", ""),
        "threshold": _num(card.get("threshold")), "mdad": _num(card["mdad"]), "ci_low": low, "ci_high": high,
        "degenerate": bool(math.isfinite(low) and low == high),
        "n_sources": int(protocol.get("n_sources") or 0), "n_targets": int(protocol.get("n_targets") or 0),
        "random_mdad": _num(card["random_mdad"]),
        "share_separated": _num(card.get("share_separated")),
        "covered": int(calib["covered"]) if calib else 0, "held_out": int(calib["models"]) if calib else 0,
        "coverage": calib["covered"] / calib["models"] if calib else float("nan"),
        "coverage_level": _num((card.get("coverage") or {}).get("level")),
        "width": _num((card.get("coverage") or {}).get("width")),
    }


def shipped_micro_table() -> pd.DataFrame:
    """One row per shipped micro-benchmark, read from its stored card (nothing recomputed).

    Columns: ``name``, ``bundle``, ``k`` (items), ``selector`` (chosen by ``auto``); how it was chosen:
    ``lowest`` (the selector with the lowest MDAD in the choice runs) and ``lowest_mdad``,
    ``choice_random_mdad``, the paired difference to random with its 95% interval
    (``vs_random_difference``, ``vs_random_low``, ``vs_random_high``), the rule's ``vs_random_verdict``
    (``"better"``, ``"within noise"``, or None when random itself was lowest), ``choice_runs`` and
    ``reason`` (the rule's sentence); ``interval`` (how ``score``'s interval is built: ``"hypergeometric"``,
    exact, for random sampling; else calibrated on held-out models); the card: ``threshold``, ``mdad`` with its 95% interval
    (``ci_low``, ``ci_high``; ``degenerate`` when it has no width), the protocol's ``n_sources`` and
    ``n_targets``, ``random_mdad`` (random sampling at the same k, the exact planner's), ``share_separated`` (share of
    the pool's pairs at least an MDAD apart), and the held-out check of the
    score interval: ``covered`` of ``held_out`` models (``coverage``, nan when not measured) at
    nominal ``coverage_level``, and its mean ``width`` in points.

    Examples
    --------
    >>> from mbutils import shipped_micro_table
    >>> table = shipped_micro_table()
    >>> list(table["k"][:3]), table.loc[0, "bundle"]
    ([50, 100, 250], 'bbh-leaderboard')
    """
    return pd.DataFrame([_row(name) for name in shipped_names()])
