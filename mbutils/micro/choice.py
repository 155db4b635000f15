"""``--selector auto``: the selector the book finds most reliable at one size, chosen by its noise rule.

The candidates are the paper's methods that a micro-benchmark folder can hold (fixed items; the
confidence-stratified one only when the bundle has confidences) and random sampling read by the
cross-fitted difference estimator (``random_difference``). They are run under the paper's protocol on
the pool (the same run the card's MDAD comes from, so it is cached once), and the paired noise rule of
:func:`mbutils.evaluate.claims_paired.best_at_size_of` compares the method with the lowest MDAD
(monotone fit) with every other on shared runs. Then what ``score`` would say with it is measured on
held-out pool models (``measure``: bias, coverage and the verdicts' error rate, cross-fitted; the
shipping rule of :func:`mbutils.micro.verdicts.shipping_problems`). The choice:

* the lowest-MDAD method when it is lower than random sampling's beyond the noise and its held-out
  measures pass the rule;
* otherwise random sampling: nothing measured beats it (or what beat it fails on held-out models), and
  it needs no model and has an exact interval.

The record says which, with the numbers that decided it, and :func:`choice_table` shows them.
"""

from __future__ import annotations

import numpy as np

from mbutils.base.errors import ProtocolError
from mbutils.base.names import label
from mbutils.methods.selectors.registry import names_with_role

#: Candidates of ``auto``, in the paper's legend order (adaptive tests and model-based estimators left out).
CANDIDATES = names_with_role("auto")  # the registry's names of role "auto", read when used


def candidates(benchmark) -> list[str]:
    """The candidates that apply to ``benchmark`` (stratifying by subtask needs subtasks; by confidence, confidences)."""
    names = list(CANDIDATES)
    if benchmark.confidence is None:
        names.remove("confidence_stratified")
    if len(np.unique(benchmark.subtask_codes)) < 2:
        names.remove("subtask_equal")  # one subtask: the same items as random sampling
    return names


def choose_selector(pool, k: int, *, runs: int, seed: int, threshold: float = 0.8, jobs: int = 1,
                    n_boot: int = 400, progress: bool = False, measure=None) -> dict:
    """Run the candidates at ``k`` on ``pool`` (a Benchmark of the pool's models) and choose one.

    Returns a JSON-able record: ``selector``, ``reason`` (one or two sentences with numbers), ``k``,
    ``runs``, ``seed``, ``protocol``, ``mdads`` (selector -> monotone MDAD, points or None),
    ``comparisons`` (other -> the paired row against the lowest), ``claim`` (the noise rule's sentence) and
    ``held_out`` (selector -> its held-out measures, for the lowest and random sampling, when ``measure``,
    a function of a selector name returning a card's ``held_out``, is given).
    """
    from mbutils.methods.experiment import check_sizes, run_experiment
    from mbutils.methods.protocol import Protocol, fit_to_pool
    from mbutils.evaluate.claims_paired import best_at_size_of

    if pool.n_models < 3:
        raise ProtocolError(f"--selector auto compares selectors on the pool, and the pool has {pool.n_models} "
                            "models (at least 3); name a selector")
    check_sizes(pool, [k])
    sources, targets = fit_to_pool(pool.n_models)
    protocol = Protocol(n_sources=sources, n_targets=targets, n_runs=runs, seed=seed)
    names = candidates(pool)
    results = run_experiment(pool, names, [k], protocol, jobs=jobs, progress=progress)
    claim = best_at_size_of(results, k, threshold=threshold, n_boot=n_boot, seed=seed)
    mdads, lowest = claim.inputs["mdads"], claim.inputs["lowest"]
    rows = {other: next((r for r in records if int(r["size"]) == int(k)), None)
            for other, records in claim.inputs["comparisons"].items()}
    versus = rows.get("random")
    held_out = {}
    if measure is not None:
        for name in dict.fromkeys([lowest, "random"]):
            if name in names:
                held_out[name] = measure(name)
    chosen = decide(lowest, mdads, versus, held_out.get(lowest))
    return {"selector": chosen, "reason": _reason(chosen, lowest, mdads, versus, k, runs, held_out.get(lowest)),
            "k": int(k), "runs": int(runs), "seed": int(seed), "threshold": float(threshold), "candidates": names,
            "protocol": protocol.as_dict(), "mdads": mdads, "lowest": lowest,
            "comparisons": {o: r for o, r in rows.items() if r is not None}, "claim": claim.text,
            "held_out": held_out}


def decide(lowest: str, mdads: dict, versus: dict | None, held_out: dict | None = None) -> str:
    """The rule: ``lowest`` (the lowest-MDAD method) when its paired comparison with random sampling
    (``versus``) says "better" and its held-out measures (when given) pass the shipping rule, else random
    sampling."""
    if lowest != "random" and mdads.get(lowest) is not None and versus is not None and versus["verdict"] == "better" \
            and not (held_out or {}).get("problems"):
        return lowest
    return "random"


def choice_table(choice: dict):
    """The table ``auto`` chose from: per candidate its MDAD (monotone fit), the paired difference from the
    lowest, and the held-out bias, coverage and verdicts' error rate where they were measured."""
    import pandas as pd

    rows = []
    for name in choice["candidates"]:
        versus = choice["comparisons"].get(name) or {}
        held = ((choice.get("held_out") or {}).get(name) or {})
        part = held.get("calibration") or held.get("excluded") or {}
        paired = ("the lowest" if name == choice["lowest"] else
                  {"better": "lower beyond noise"}.get(versus.get("verdict"), versus.get("verdict", "")))
        rows.append({"selector": name, "MDAD": choice["mdads"].get(name), "lowest's MDAD against it": paired,
                     "bias": part.get("bias"), "coverage %": None if not part else 100 * part["coverage"],
                     "wrong verdicts %": None if not part or part.get("false_rate") is None
                     else 100 * part["false_rate"],
                     "held-out rule": "" if not held else ("passes" if not held.get("problems")
                                                           else "; ".join(held["problems"])),
                     "chosen": "yes" if name == choice["selector"] else ""})
    return pd.DataFrame(rows)


def _num(value) -> str:
    return "not reached" if value is None or not np.isfinite(float(value)) else f"{float(value):.1f} points"


def _reason(chosen: str, lowest: str, mdads: dict, versus: dict | None, k: int, runs: int,
            held_out: dict | None = None) -> str:
    """One or two sentences: the lowest MDAD, its paired difference from random's, and what that decided."""
    head = f"At k = {k} over {runs} protocol runs"
    if mdads.get(lowest) is None:
        return f"{head}, no candidate reached the threshold; chose random sampling (no model, exact interval)."
    if lowest == "random":
        return (f"{head}, random sampling has the lowest MDAD ({_num(mdads['random'])}, monotone fit) of "
                f"{len(mdads)} candidates; chose it.")
    diff = "" if versus is None else (f" (difference {versus['difference']:+.1f} points, paired 95% interval "
                                      f"[{versus['low']:+.1f}, {versus['high']:+.1f}])")
    if chosen != lowest and versus is not None and versus["verdict"] == "better" and (held_out or {}).get("problems"):
        return (f"{head}, {label(lowest)} has the lowest MDAD ({_num(mdads[lowest])}, monotone fit), lower than random "
                f"sampling's beyond the noise{diff}, but on held-out pool models {'; '.join(held_out['problems'])}; "
                "chose random sampling (no model, exact interval).")
    if chosen == lowest:
        return (f"{head}, {label(lowest)} has the lowest MDAD ({_num(mdads[lowest])}, monotone fit) and is lower "
                f"than random sampling's ({_num(mdads.get('random'))}) beyond the noise{diff}; chose {label(lowest)}.")
    return (f"{head}, {label(lowest)} has the lowest MDAD ({_num(mdads[lowest])}, monotone fit), but random "
            f"sampling's ({_num(mdads.get('random'))}) cannot be told from it by the paired noise rule{diff}; "
            "chose random sampling (no model, exact interval).")
