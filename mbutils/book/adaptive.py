"""What the adaptive-testing chapter shows, computed from mbutils objects (no notebook logic).

Where adaptive tests apply to a setting, one target's path (estimate and interval
against items answered, beside random sampling on the same target), what adaptive
tests cost (items per model, distinct items, exposure) and where they stop beating
random sampling. Candidates to move into :mod:`mbutils.book.plots` / :mod:`mbutils.book.findings.reports`
once the book's refactor settles: :func:`path_figure`, :func:`exposure_table`,
:func:`helps_table`.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from mbutils.methods.cat import accuracy_interval
from mbutils.methods.protocol import rng_for
from mbutils.evaluate import noise
from mbutils.base.names import label, style
from mbutils.book.params import name_list
from mbutils.book.plots.base import plain_text
from mbutils.book.profiles import profile_name

#: Fewer source models than this: a 10-dimensional IRT fit has too little to go on.
MIN_SOURCES = 10
#: Fewer seen items than this: too few to choose from for a test to adapt.
MIN_SEEN = 20


def adaptive_data(value, data, *, profile: str | None = None) -> list[str]:
    """Bundles of ``data`` on which the chapter runs adaptive tests.

    The parameter when set; else every bundle of ``data``, except under the quick profile, a
    preview, where the costly tests stay on the bundles the profile runs costly variants on
    (:func:`~mbutils.book.setting.variant_data`: GPQA among the book's benchmarks), since each
    test on 3,000-6,000 seen items costs seconds per run.
    """
    from mbutils.book.setting import variant_data

    explicit = name_list(value, "adaptive_data")
    if explicit:
        return explicit
    profile = profile or profile_name()
    return variant_data(None, data, profile=profile) if profile == "quick" else (name_list(data, "data") or [])


def not_run_reason(chosen, value=None) -> str:
    """Why a bundle left out by :func:`adaptive_data` has no adaptive tests, and how to add it
    (``value``: the chapter's ``adaptive_data`` parameter)."""
    names = ", ".join(chosen) or "no bundle"
    if name_list(value, "adaptive_data"):
        return f"adaptive_data names {names} only"
    return (f"the quick profile, a preview, runs adaptive tests on {names} only; "
            "-p adaptive_data or MBUTILS_PROFILE=default runs them here too")


def applicability(n_sources: int, n_seen: int, sizes) -> tuple[list[int], str]:
    """Sizes at which adaptive tests make sense here, and why none do (empty when some do).

    A size must leave a choice (k < seen items); the IRT fit needs ``MIN_SOURCES``
    sources and adaptation ``MIN_SEEN`` seen items.
    """
    if n_sources < MIN_SOURCES:
        return [], (f"the IRT fit behind adaptive tests needs at least {MIN_SOURCES} source models; "
                    f"this protocol has {n_sources}")
    if n_seen < MIN_SEEN:
        return [], (f"adaptive tests need at least {MIN_SEEN} seen items to choose from; "
                    f"this bundle's seen half has {n_seen}")
    usable = [int(k) for k in sizes if k < n_seen]
    if not usable:
        return [], f"every size asked for uses the whole seen half ({n_seen} items), leaving nothing to adapt"
    return usable, ""


def _running_mean(y: np.ndarray) -> np.ndarray:
    return np.cumsum(y) / np.arange(1, len(y) + 1)


def path_table(micro, target_correct: np.ndarray, models, seed: int = 0, which: int | None = None) -> pd.DataFrame:
    """One target's adaptive test, answer by answer, beside random sampling of the same target.

    ``which``: row of the target (default: the one of median seen accuracy). Columns:
    answered, item, answer, estimate/low/high (IRT prediction of seen accuracy and its
    95% Laplace interval), random/random_low/random_high (running mean of the same
    number of uniformly drawn items, normal interval), truth (seen accuracy).
    """
    Y = np.asarray(target_correct, dtype=np.float64)
    truth = Y.mean(axis=1)
    row = int(np.argsort(truth)[len(truth) // 2]) if which is None else int(which)
    path = micro.path(Y, trace=True)
    acc, half = accuracy_interval(path.theta_path[:, row], path.precision_path[:, row], micro.item_a, micro.item_b)
    order = rng_for(seed, "picture", "random order").permutation(Y.shape[1])[: path.length]
    rand = _running_mean(Y[row, order])
    n = np.arange(1, path.length + 1)
    fpc = np.sqrt(np.clip((Y.shape[1] - n) / max(Y.shape[1] - 1, 1), 0, None))
    rand_half = 1.96 * np.sqrt(np.clip(rand * (1 - rand), 0.25 / n, None) / n) * fpc
    table = pd.DataFrame({
        "answered": n, "item": path.items[row], "answer": path.answers[row],
        "estimate": acc, "low": acc - half, "high": acc + half,
        "random": rand, "random_low": rand - rand_half, "random_high": rand + rand_half,
        "truth": truth[row],
    })
    table.attrs["model"] = str(np.asarray(models)[row])
    return table


def path_figure(table: pd.DataFrame, selector: str = "adaptive_fisher"):
    """Estimate and 95% interval against items answered: the adaptive test vs random items."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.2, 3.6))
    ax = fig.subplots()
    x = table["answered"]
    for name, col, lo, hi in ((selector, "estimate", "low", "high"), ("random", "random", "random_low", "random_high")):
        st = style(name)
        ax.plot(x, 100 * table[col], color=st.color, linestyle=st.linestyle, marker=st.marker, markevery=max(1, len(x) // 10),
                markersize=4, label=label(name))
        ax.fill_between(x, 100 * table[lo], 100 * table[hi], color=st.color, alpha=0.15, linewidth=0)
    ax.axhline(100 * table["truth"].iloc[0], color="#666666", linestyle="--", linewidth=0.9,
               label="accuracy on the seen half")
    marks = table["answer"] > 0
    ax.plot(x[marks], np.full(marks.sum(), 2.0), "|", color="#029e73", markersize=6, label="answered right")
    ax.plot(x[~marks], np.full((~marks).sum(), 0.5), "|", color="#d55e00", markersize=6, label="answered wrong")
    ax.set_xlabel("items answered")
    ax.set_ylabel("estimated accuracy (points)")
    ax.set_ylim(0, 100)
    ax.set_title(f"one target: {table.attrs.get('model', '')}", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, frameon=False, loc="upper right", ncol=2)
    plain_text(fig)  # the title holds a model's name: text, never mathtext (the layout below draws it)
    fig.tight_layout()
    return fig


def exposure_table(paths: dict, n_seen: int) -> pd.DataFrame:
    """What adaptive tests of each size cost and share, from the items the targets were given.

    ``paths``: size -> :class:`mbutils.methods.cat.CATPath` for the targets of one run. Columns:
    items per model, distinct items over all targets (and as a share of the seen half,
    what a static micro-benchmark of that size would need: k), the largest share of
    targets given one item, and the mean share of a test that two targets have in common.
    """
    rows = []
    for k, path in sorted(paths.items()):
        n_t = path.items.shape[0]
        given = np.zeros((n_t, n_seen), dtype=np.float64)
        given[np.arange(n_t)[:, None], path.items] = 1.0
        counts = given.sum(axis=0)
        shared = given @ given.T
        pairs = np.triu_indices(n_t, 1)
        rows.append({
            "size": int(k), "items per model": int(k), "distinct items": int((counts > 0).sum()),
            "distinct / seen (%)": 100 * float((counts > 0).mean()),
            "max exposure (%)": 100 * float(counts.max() / n_t),
            "overlap of two tests (%)": 100 * float(shared[pairs].mean() / k) if n_t > 1 else math.nan,
        })
    return pd.DataFrame(rows)


def helps_table(mdad: pd.DataFrame, selectors, baseline: str = "random") -> pd.DataFrame:
    """Per size: MDAD of each selector minus the baseline's (points; NaN where either is not reached)."""
    wide = mdad.pivot_table(index="size", columns="selector", values="mdad", dropna=False)
    out = pd.DataFrame({"size": wide.index})
    for s in selectors:
        if s in wide and baseline in wide:
            out[label(s)] = (wide[s] - wide[baseline]).to_numpy()
    return out


def stops_helping(results: pd.DataFrame, selector: str, baseline: str = "random", *, threshold: float = 0.8,
                  n_boot: int = 2000) -> dict:
    """Where ``selector`` is better than the baseline, judged by the paired comparison on the runs they
    share, and from which size it no longer is.

    ``results``: the experiment's results holding both selectors. Per size,
    :func:`mbutils.evaluate.paired.compare_selectors` gives the 95% interval of the MDAD difference on the
    same runs and pairs: a win when it lies below 0, a loss above, within noise when it holds 0, and
    "cannot tell" when it is open. A size whose runs hold fewer than ``mbutils.evaluate.noise.MIN_PAIRS``
    distinct target pairs is neither (``too_few``, with the reason in ``note``). ``stops`` is the smallest size
    after a win from which no larger size is a win (None when it wins at the largest size, or never wins).
    """
    from mbutils.evaluate.claims_paired import comparison_records
    from mbutils.evaluate.paired import compare_selectors

    empty = {"wins": [], "within": [], "losses": [], "cannot": [], "too_few": [], "stops": None, "note": ""}
    present = set(results["selector"])
    if selector not in present or baseline not in present:
        return empty
    table = compare_selectors(results, selector, baseline, threshold=threshold, n_boot=n_boot)
    if table.empty:
        return empty
    records = comparison_records(table)
    sizes = np.array([int(r["size"]) for r in records])
    verdict = np.array([r["verdict"] for r in records])
    win = verdict == noise.BETTER
    later = np.flip(np.logical_or.accumulate(np.flip(win)))  # a win at this size or a larger one
    stops = sizes[~later][0] if win.any() and (~later).any() else None
    few = verdict == noise.TOO_FEW
    note = ""
    if few.any():
        i = int(np.flatnonzero(few)[0])
        note = noise.too_few_sentence(int(table["n_distinct_pairs"].iloc[i]), int(table["n_runs"].iloc[i]))
    pick = lambda v: [int(k) for k in sizes[verdict == v]]  # noqa: E731
    return {"wins": pick(noise.BETTER), "within": pick(noise.WITHIN), "losses": pick(noise.WORSE),
            "cannot": pick("cannot tell"), "too_few": pick(noise.TOO_FEW),
            "stops": None if stops is None else int(stops), "note": note}


#: How the scoring comparison's measures read in a table: name, digits, unit.
_SCORING_MEASURES = {"tau": ("Kendall τ", 3, ""), "agreement": ("pairwise agreement", 3, ""),
                     "mdad": ("MDAD", 1, " (points)"), "error": ("estimation error", 1, " (points)")}


def _fmt(value, digits: int) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return "not reached" if math.isinf(value) else f"{value:.{digits}f}"


def scoring_display(table: pd.DataFrame) -> pd.DataFrame:
    """A :func:`mbutils.book.findings.ability_scoring.scoring_comparison` table as the page shows it: per size
    and measure, both scorings, the paired difference (ability minus accuracy) with its pointwise 95%
    interval ("open": a bound no draw reached), and the verdict for ability scoring ("—": no number, as for
    ability scoring's estimation error or a difference with an MDAD not reached)."""
    rows = []
    for r in table.itertuples(index=False):
        name, digits, unit = _SCORING_MEASURES[r.measure]
        bound = lambda x: f"{x:.{digits}f}" if np.isfinite(x) else "open"  # noqa: E731 (inf: no bound)
        if not np.isfinite(r.difference):  # an MDAD not reached (no difference), or the error (none)
            diff = "—"
        elif np.isnan(r.low) and np.isnan(r.high):
            diff = f"{r.difference:+.{digits}f}"
        else:
            diff = f"{r.difference:+.{digits}f} [{bound(r.low)}, {bound(r.high)}]"
        rows.append({"k": int(r.size), "measure": name + unit, "accuracy scoring": _fmt(r.accuracy, digits),
                     "ability scoring": _fmt(r.ability, digits), "ability − accuracy [95% paired CI]": diff,
                     "ability scoring is": r.verdict})
    return pd.DataFrame(rows)


def scoring_figure(tables: dict):
    """Ability minus accuracy scoring against k, one panel per measure of order (Kendall tau, pairwise
    agreement, MDAD), one series per benchmark (``tables``: benchmark title -> scoring_comparison table),
    bars: the pointwise 95% paired intervals; a difference not computed (an MDAD not reached) is left out."""
    from matplotlib.figure import Figure

    measures = ("tau", "agreement", "mdad")
    fig = Figure(figsize=(7.2, 6.0))
    axes = fig.subplots(3, 1, sharex=True)  # one row per measure: the sizes' labels need the page's width
    markers, colors = "osD^v", ("#000000", "#005b8e", "#b55000", "#008662", "#c2739f")
    sizes = sorted({int(k) for table in tables.values() for k in table["size"]})
    slot = {k: n for n, k in enumerate(sizes)}  # sizes at even steps, labelled with their k
    for i, (title, table) in enumerate(tables.items()):
        for ax, measure in zip(axes, measures):
            part = table[(table["measure"] == measure) & np.isfinite(table["difference"].astype(float))]
            x = np.array([slot[int(k)] for k in part["size"]], dtype=float) + 0.12 * (i - (len(tables) - 1) / 2)
            y = part["difference"].to_numpy(float)
            lo = np.where(np.isfinite(part["low"].astype(float)), y - part["low"].to_numpy(float), 0.0)
            hi = np.where(np.isfinite(part["high"].astype(float)), part["high"].to_numpy(float) - y, 0.0)
            ax.errorbar(x, y, yerr=[np.maximum(lo, 0), np.maximum(hi, 0)], marker=markers[i % 5], linestyle="-",
                        color=colors[i % 5], markersize=4, capsize=2, linewidth=1, label=title)
    names = {"tau": "Δ Kendall τ", "agreement": "Δ pairwise agreement", "mdad": "Δ MDAD (points)"}
    for ax, measure in zip(axes, measures):
        ax.axhline(0, color="#666666", linewidth=0.8, linestyle="--")
        ax.set_xticks(range(len(sizes)), [str(k) for k in sizes])
        ax.set_xlim(-0.5, len(sizes) - 0.5)
        ax.set_ylabel(names[measure], fontsize=9)
        ax.grid(alpha=0.3)
    axes[-1].set_xlabel("k")
    axes[0].set_title("ability scoring minus accuracy scoring", fontsize=10)
    axes[0].legend(fontsize=8, frameon=False, loc="best")
    plain_text(fig)  # benchmark titles in the legend are text, never mathtext
    fig.tight_layout()
    return fig
