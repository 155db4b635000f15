"""Write the book's chapter notebooks (the .ipynb files are committed; this is their source).

Run ``python chapters/make_notebooks.py`` after editing a chapter here; it rewrites every
notebook without outputs. Conventions: the first code cell is tagged ``parameters``
(papermill), cells whose output is a figure are tagged ``figure`` (the tests check that
each of them produced an image), and plumbing cells are tagged ``hide-input``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from textwrap import dedent

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent
KERNEL = {"display_name": "Python 3", "language": "python", "name": "python3"}


def md(text: str):
    return new_markdown_cell(dedent(text).strip("\n"))


def code(text: str, *tags: str):
    cell = new_code_cell(dedent(text).strip("\n"))
    if tags:
        cell.metadata["tags"] = list(tags)
    return cell


def params(*parts: str):
    """The parameters cell; each part is dedented on its own so parts can be combined."""
    text = "\n".join(dedent(part).strip("\n") for part in parts)
    return code(text, "parameters")


def fig(text: str):
    return code(text, "figure")


SETUP = """
        from IPython.display import HTML, display
        import numpy as np
        import pandas as pd
        from mbutils import book, metrics, plots
"""

COMMON_PARAMS = """
# Parameters (papermill -p NAME VALUE); None = the profile's value
# data: gpqa | bbh | mmlu-pro | mmlu (real bundle on MBUTILS_DATA,
#   else the synthetic stand-in), synthetic-*, a bundle name or folder
data = "{data}"
sizes = None       # micro-benchmark sizes, e.g. "10,25,50,100,200"
runs = None        # runs of the protocol (paper: 50)
sources = None     # source models per run (paper: 300)
targets = None     # random target models per run (paper: 50)
seed = 0           # root seed of every random choice
threshold = 0.8    # agreement an MDAD must reach
missing = "error"  # empty cells: error | drop_models | drop_items
"""


def notebook(cells) -> nbformat.NotebookNode:
    nb = new_notebook(cells=cells)
    nb.metadata["kernelspec"] = KERNEL
    nb.metadata["language_info"] = {"name": "python"}
    return nb


# =========================================================================== chapters
def data_chapter():
    return notebook([
        md("""
        # The benchmark data

        A benchmark here is a matrix of models × items holding 0/1 correctness, a subtask
        label per item and, when available, each model's probability of the gold answer
        (its *confidence*). This chapter looks at the real results on the data path
        (`MBUTILS_DATA`): GPQA from the Open LLM Leaderboard, 420 models × 448 items, and
        MMLU-Pro as published by its authors (TIGER-Lab), 29 models × 12,032 items. The
        data format is described in the project's `data/README.md`.

        Two properties of the data decide how hard micro-benchmarking is: how spread out
        the models' accuracies are, and — above all — how many *pairs* of models are close.
        A micro-benchmark only has to tell apart models that somebody wants to compare, and
        most comparisons on a leaderboard are between close neighbours.
        """),
        params("""
        # Parameters: papermill -p NAME VALUE
        datasets = "gpqa,mmlu-pro-tiger-lab"   # bundles to describe (names, folders or synthetic-*)
        missing = "drop_models"                # how to load bundles with empty cells: drop_models | drop_items
        """),
        code(SETUP + """
        names = book.name_list(datasets, "datasets")
        loaded = {}
        for name in names:
            try:
                choice = book.resolve_data(name, missing=missing)
            except book.MbutilsError as err:
                book.note(f"{name}: not used", str(err).split(". ")[0], "warning")
                continue
            loaded[choice.name] = choice
            book.note(choice.name, choice.describe() + ". " + choice.reason + ".",
                      "warning" if choice.kind == "synthetic" else "note")
        """, "hide-input"),
        md("""
        ## What the bundles hold

        The table gives each bundle's size, the spread of model accuracy (in accuracy
        points, 0–100) and the share of model pairs closer than 1, 2 and 5 points.
        """),
        code("""
        overview = book.data_overview({n: c.benchmark for n, c in loaded.items()})
        book.table(overview, caption="Bundles on the data path: models, items, accuracy "
                   "spread (points) and the share of model pairs closer than a given gap.")
        """),
        md("""
        ## Incomplete results

        Real result files have holes. The loader never guesses: a bundle with empty cells
        is refused unless the caller chooses to drop the incomplete models or the items
        that some model lacks. `python -m mbutils validate NAME` lists every problem.
        """),
        code("""
        for name in names:
            report = book.missing_report(name)
            if report is not None:
                book.table(report, caption=f"{name}: models with empty cells (validate's findings).")
        """),
        md("""
        ## Model accuracies and pairwise differences

        Most models sit in a crowded middle. The right-hand figure is the one that matters
        for micro-benchmarks: the distribution of the accuracy gap between two models.
        """),
        fig("""
        accs = {n: c.benchmark.accuracy for n, c in loaded.items()}
        book.show(plots.accuracy_histograms(accs),
                  "Model accuracy on the full benchmark, in points. Data: " + ", ".join(
                      c.describe() for c in loaded.values()) + ". No sampling involved (no runs, no seed).")
        """),
        fig("""
        book.show(plots.pairwise_histograms(accs),
                  "Absolute accuracy difference over all model pairs, 0.5-point bins, gaps up to "
                  "30 points. Data: " + ", ".join(loaded) + " (all models; no runs, no seed).")
        """),
        code("""
        gpqa_like = next((c for c in loaded.values() if c.key == "gpqa"), None)
        if gpqa_like is not None:
            gaps = book.pair_gaps(gpqa_like.benchmark.accuracy)
            book.glue("data_gpqa_pairs_2pts", f"{np.mean(gaps < 2):.0%}")
            book.glue("data_gpqa_models", f"{gpqa_like.benchmark.n_models}")
        """, "hide-input"),
        md("""
        ## Subtasks

        Subtasks matter for the protocol (each subtask is split in half separately) and
        for the subtask-stratified random selectors. GPQA has a single subtask; MMLU-Pro
        has 14 categories of very different sizes.
        """),
        fig("""
        for name, choice in loaded.items():
            b = choice.benchmark
            counts = np.bincount(b.subtask_codes)
            acc = [b.correct[:, b.subtask_codes == t].mean() for t in range(len(counts))]
            book.show(plots.subtask_bars(list(b.subtask_names), counts, acc, title=name),
                      f"Items per subtask (bars) and mean model accuracy per subtask (dots). "
                      f"Data: {choice.describe()}; no runs, no seed.")
        """),
        md("""
        ## Fixed target sets

        A bundle can name sets of models for the fixed-target case studies
        ({doc}`target_sets`). GPQA ships the paper's sets.
        """),
        code("""
        sets = [{"bundle": n, "target set": k, "models": len(v)}
                for n, c in loaded.items() for k, v in c.benchmark.target_sets.items()]
        if sets:
            book.table(pd.DataFrame(sets), caption="Named target sets per bundle.")
        else:
            book.note("Target sets", "None of these bundles names target sets.")
        """),
    ])


def synthetic_chapter():
    return notebook([
        md("""
        # Synthetic stand-ins

        The paper used four benchmarks; the data path of this project holds real results
        for GPQA only (and MMLU-Pro for 29 models). Where a benchmark's real results are
        absent, the book runs on a **synthetic stand-in** with the benchmark's shape —
        subtask names and sizes, item counts, model counts, answer options — simulated from
        a multidimensional item-response model. Every page that uses one says so at the top.

        **How the simulator works** (`mbutils.synthetic`, in brief). Each model has an
        ability vector: a strong general factor that grows with model size and instruction
        tuning, plus subtask-specific abilities. Each item has a discrimination vector, a
        difficulty and a number of options. A model that does not "know" an item guesses,
        succeeding with probability near 1/options; on GPQA the guessing floor varies by
        item and models prefer some answer positions, because the real data demand it.
        Responses are Bernoulli draws; confidences (the probability of the gold answer) are
        derived from the same latent score, so the stand-ins *have* confidences while the
        real bundles do not.

        The stand-ins are useful for exercising every method on every benchmark shape, but
        they are simulations: their numbers are not the paper's and must not be read as
        statements about real models.
        """),
        params("""
        # Parameters: papermill -p NAME VALUE
        reference = "gpqa"            # the real bundle the GPQA stand-in is compared with
        stand_in = "synthetic-gpqa"   # the stand-in compared with it
        others = "synthetic-bbh,synthetic-mmlu-pro,synthetic-mmlu"   # further stand-ins to describe
        seed = 0                      # seed of the split-half reliability draws
        """),
        code(SETUP + """
        from mbutils.synthetic import compare_to_reference

        synth = book.resolve_data(stand_in).benchmark
        try:
            real = book.resolve_data(reference).benchmark
        except book.MbutilsError as err:
            real = None
            book.note("No reference", f"{reference}: {err}", "warning")
        if real is not None and real.name.startswith("synthetic-"):
            book.note("No real reference", f"'{reference}' resolved to the stand-in {real.name}: there is "
                      "no real bundle to compare with on this data path.", "warning")
            real = None
        """, "hide-input"),
        md("""
        ## How close does the GPQA stand-in come to real GPQA?

        We compare quantiles of three distributions — model accuracy, pairwise accuracy
        differences and item difficulty (the share of models answering an item correctly) —
        plus split-half reliability, the correlation across models of accuracy on two
        random halves of the items (which bounds how well half a benchmark can rank models).
        """),
        fig("""
        if real is not None:
            cmp = compare_to_reference(synth, real, seed=seed)
            book.show(plots.quantile_comparison(cmp["quantiles"]),
                      f"Quantiles (0, 1, 5, 10, 25, 50, 75, 90, 95, 99, 100%) of real {real.name} (x) "
                      f"against {synth.name} (y), in points; the dashed line is a perfect match. "
                      f"All models and items; split-half reliability from 50 random halves, seed {seed}.")
        """),
        code("""
        if real is not None:
            ks = pd.DataFrame({"statistic": list(cmp["ks"]), "KS distance": list(cmp["ks"].values())})
            book.table(ks, digits=3, caption="Kolmogorov-Smirnov distance between real and "
                       "synthetic distributions (0 = identical, 1 = disjoint).")
            sh = cmp["split_half"]
            book.glue("synthetic_ks_accuracy", f"{cmp['ks']['accuracy']:.2f}")
            book.glue("synthetic_split_half", f"{sh['synthetic']:.2f} (real: {sh['real']:.2f})")
            display(HTML(f"<p>Split-half reliability: real {sh['real']:.3f}, synthetic {sh['synthetic']:.3f}.</p>"))
        """),
        md("""
        ## The four stand-ins

        The BBH, MMLU-Pro and MMLU stand-ins are set by hand to the accuracy ranges the paper
        reports; their models number as in the paper (409, 447, 366).
        """),
        fig("""
        names = [stand_in] + book.name_list(others, "others")
        benches = {n: book.resolve_data(n).benchmark for n in names}
        accs = {n: b.accuracy for n, b in benches.items()}
        book.show(plots.accuracy_histograms(accs),
                  "Model accuracy (points) of the synthetic stand-ins: " + "; ".join(
                      f"{n}: {b.n_models} models x {b.n_items:,} items" for n, b in benches.items())
                  + ". Simulated data, simulator seed 0.")
        """),
        fig("""
        book.show(plots.pairwise_histograms(accs),
                  "Absolute accuracy difference over all model pairs (points) of the synthetic "
                  "stand-ins. Simulated data, simulator seed 0.")
        """),
        code("""
        book.table(book.data_overview(benches), caption="The stand-ins at a glance (simulated data).")
        """),
    ])


def measures_chapter():
    return notebook([
        md("""
        # Measuring reliability

        A micro-benchmark gives each model an *estimated* score. How do we judge it? This
        chapter defines the measures the rest of the book uses, on real GPQA where the data
        path has it, and reproduces the paper's first two figures.

        **The protocol.** In each *run*, every subtask's items are split at random into a
        *seen* half (from which micro-benchmarks are built) and an *unseen* half; 50
        *target* models are drawn at random and 300 *source* models from the rest. A
        selector picks *k* seen items looking only at the sources' results, and produces an
        estimate for every target from the targets' results on those items. The estimate is
        judged against the target's accuracy on the whole seen half. Splits and model draws
        are shared by all selectors and sizes of a run, and every random choice derives from
        one root seed.

        **Estimation error** is the mean absolute difference between estimate and seen
        accuracy over the targets, in points. **Kendall τ** (τ-b) is the rank correlation
        between estimates and accuracies. Both summarise all targets at once.

        **Pairwise agreement** asks the question a leaderboard reader asks: for two models
        A and B, does the micro-benchmark order them as the full benchmark does? A pair
        *agrees* when the estimated difference has the sign of the true difference; an
        estimated tie counts as a disagreement. Pairs tied on the full benchmark are, in the
        paper's rule, counted as agreeing only when the estimated difference of (A, B) is
        positive — which depends on the order of the pair; the alternative rule used in
        {doc}`differences` leaves them out.

        **The agreement curve** pools the pairs of all runs, bins them by the size of their
        true gap (0.5-point bins, computed exactly from correct counts), and plots the mean
        agreement per bin. **MDAD**, the *minimum detectable ability difference*, is the
        smallest gap whose bin reaches 80% agreement: pairs closer than the MDAD are ordered
        correctly less than 80% of the time.
        """),
        params(COMMON_PARAMS.format(data="gpqa"), """
        fig1_data = "mmlu-pro"  # the paper draws figure 1 on MMLU-Pro
        """),
        code(SETUP + """
        cfg = book.configure(data, sizes=sizes, runs=runs, sources=sources, targets=targets, seed=seed,
                             missing=missing)
        display(HTML(cfg.banner()))
        selectors = list(book.PAPER_SELECTORS)
        res = cfg.results(selectors)
        summary = metrics.summary_table(res)
        mdad = metrics.mdad_table(res, threshold=threshold)
        curve = metrics.agreement_curve(res)
        small, large = min(cfg.sizes), max(cfg.sizes)
        """, "hide-input"),
        md("""
        ## Estimates for one run

        Each dot is a target model of run 0: its accuracy on the seen half against its
        estimate from a random micro-benchmark. With few items the estimates scatter
        widely; estimation error is the mean vertical distance to the diagonal.
        """),
        fig("""
        panels = {}
        for k in (small, large):
            part = res[(res["run"] == 0) & (res["selector"] == "random") & (res["size"] == k)]
            panels[f"k = {k}"] = (part["seen_accuracy"].to_numpy(), part["estimate"].to_numpy())
        book.show(plots.estimates_scatter(panels, "random"),
                  cfg.caption("Random micro-benchmarks: estimate against seen-half accuracy for the "
                              "targets of run 0 (dashed: perfect estimate)."))
        """),
        md("""
        ## High τ hides unreliable close comparisons (figure 1 of the paper)

        Kendall τ rises quickly with *k* and looks reassuring. The agreement curves tell a
        different story: at small *k*, pairs a few points apart are ordered barely better
        than a coin flip, whatever the method.
        """),
        fig("""
        book.show(plots.tau_and_curves(summary, curve, sizes=[small, large], selectors=selectors,
                                       threshold=threshold),
                  cfg.caption(f"Left: Kendall tau-b against k (mean over runs). Right: agreement curves "
                              f"(0.5-point bins, pairs pooled over runs) at k = {small} and {large}; "
                              f"dashed line: the {threshold:g} threshold."))
        """),
        code("""
        fig1 = book.configure(fig1_data, sizes=sizes, runs=runs, sources=sources, targets=targets, seed=seed)
        if fig1.data.name != cfg.data.name:
            display(HTML(fig1.banner()))
        """, "hide-input"),
        fig("""
        res1 = fig1.results(selectors)
        k1 = [min(fig1.sizes), 500 if 500 in fig1.sizes else max(fig1.sizes)]
        book.show(plots.tau_and_curves(metrics.summary_table(res1), metrics.agreement_curve(res1),
                                       sizes=k1, selectors=selectors, threshold=threshold),
                  fig1.caption(f"Figure 1 on {fig1.data.title} as in the paper: Kendall tau-b against k; "
                               f"agreement curves at k = {k1[0]} and {k1[1]}."))
        """),
        md("""
        ## MDAD and its uncertainty (figure 2 of the paper)

        The MDAD is read off the agreement curve where it first reaches the threshold
        (dotted vertical lines below). Its confidence interval here is the paper's: each
        bin's pairs are bootstrapped, the bins where the 2.5% and 97.5% bounds first cross
        the threshold are found, and the interval is made symmetric around the MDAD.
        {doc}`differences` compares it with a bootstrap over whole runs, which respects
        that pairs of one run share the same split and micro-benchmark.
        """),
        fig("""
        mids = sorted(cfg.sizes)[len(cfg.sizes) // 2]
        pair = ["random", "anchor_points"]
        book.show(plots.curves_and_mdad(curve, mdad, sizes=[small, mids, large], selectors=pair,
                                        threshold=threshold),
                  cfg.caption(f"Random vs Anchor Points: agreement curves at k = {small}, {mids}, {large} "
                              f"with the MDAD at the {threshold:g} line (dotted), and MDAD against k "
                              f"with the paper's 95% bootstrap CI (1,000 resamples of pairs per bin)."))
        """),
        code("""
        wide = book.mdad_wide(mdad)
        book.table(wide, caption=cfg.caption(f"MDAD in points at threshold {threshold:g} with the "
                                             "paper's 95% CI, per selector and size."))
        hk = book.headline_size(cfg.sizes)
        row = summary[(summary["selector"] == "random") & (summary["size"] == hk)].iloc[0]
        m = mdad[(mdad["selector"] == "random") & (mdad["size"] == hk)].iloc[0]
        book.glue("measures_k", str(hk))
        book.glue("measures_tau_random", f"{row['tau']:.2f}")
        book.glue("measures_mdad_random", book.fmt_points(m["mdad"]))
        display(HTML(f"<p>At k = {hk}, random sampling reaches Kendall τ = {row['tau']:.2f}, yet "
                     f"its MDAD is {book.fmt_points(m['mdad'])}.</p>"))
        """),
        md("""
        ## Other thresholds

        80% agreement is a convention. The benchmark chapters also report the MDAD at 70%
        and 90%: a stricter threshold asks for larger gaps, and at small sizes the 90%
        level is often not reached at all within the observed gaps ("not reached" in the
        tables, open triangles in the figures — never a made-up number).
        """),
        fig("""
        tables = {t: metrics.mdad_table(res, threshold=t) for t in (0.7, 0.8, 0.9)}
        book.show(plots.mdad_by_threshold(tables, selectors),
                  cfg.caption("MDAD against k at agreement thresholds 0.7, 0.8 and 0.9 (bands: the "
                              "paper's 95% CI)."))
        """),
    ])


# ------------------------------------------------------------------ selector chapters
SELECTOR_PARAMS = """
# Parameters (papermill -p NAME VALUE); None = the profile's value
benchmarks = "gpqa,bbh,mmlu-pro,mmlu"  # compared on (real bundle or stand-in)
variant_data = None   # benchmarks for the variants
picture_data = "synthetic-bbh"    # bundle pictured (has confidences)
picture_k = 25        # size of the pictured micro-benchmark
sizes = None          # sizes for every benchmark, e.g. "10,25,50"
runs = None           # runs of the protocol for every benchmark
sources = None
targets = None
seed = 0
threshold = 0.8
"""


def _selector_intro_cells(main: str, variants: list[str]):
    sel = [main] + [v for v in variants]
    return [
        code(SETUP + f"""
        MAIN, VARIANTS = {main!r}, {variants!r}
        settings = {{b: book.configure(b, sizes=sizes, runs=runs, sources=sources, targets=targets, seed=seed)
                    for b in book.name_list(benchmarks, "benchmarks")}}
        variant_names = book.name_list(variant_data, "variant_data") or book.variant_benchmarks()
        variant_settings = {{b: book.configure(b, sizes=sizes, runs=runs, sources=sources, targets=targets, seed=seed)
                            for b in variant_names}}
        display(HTML(book.settings_list(settings, "Benchmarks compared")))
        """, "hide-input"),
    ]


def _selector_reliability_cells(main: str):
    return [
        md(f"""
        ## Reliability against random sampling, benchmark by benchmark

        The same experiments as the benchmark chapters (same runs, splits and model
        draws, shared through the cache): MDAD against *k* for this method and for uniform
        random sampling.
        """),
        fig("""
        mdads = {s.data.title + (" (synthetic)" if s.data.kind == "synthetic" else ""):
                 metrics.mdad_table(s.results(["random", MAIN]), threshold=threshold)
                 for s in settings.values()}
        book.show(plots.mdad_panels(mdads),
                  "MDAD (points) against k: " + plots.label(MAIN) + " vs Random, per benchmark (bands: "
                  "the paper's 95% CI). " + book.settings_caption(settings))
        """),
        fig("""
        book.show(plots.relative_mdad(mdads, MAIN),
                  "MDAD of " + plots.label(MAIN) + " minus MDAD of Random (points); below zero the "
                  "method beats random sampling. " + book.settings_caption(settings))
        """),
        code("""
        book.table(book.relative_table(mdads, MAIN), caption="MDAD (points) of " + plots.label(MAIN)
                   + " and Random per benchmark and size; 'difference' = method - random. "
                   + book.settings_caption(settings))
        """),
    ]


def _selector_variant_cells(title_text: str):
    return [
        md(f"""
        ## Variants

        {title_text}
        """),
        fig("""
        for name, s in variant_settings.items():
            res = s.results(["random", MAIN, *VARIANTS])
            book.show(plots.metrics_vs_size(metrics.summary_table(res),
                                            metrics.mdad_table(res, threshold=threshold)),
                      s.caption(f"Estimation error, Kendall tau-b and MDAD against k for {plots.label(MAIN)}, "
                                "its variants and Random (MDAD bands: the paper's 95% CI)."))
        """),
    ]


def selector_random_chapter():
    return notebook([
        md("""
        # Random sampling

        The baseline every other method must beat: choose *k* seen items uniformly at
        random and estimate a model's score by its mean correctness on them. Its estimate is
        unbiased and its error shrinks like 1/√k; it needs no source models at all.

        **Subtask-stratified random sampling** spreads the *k* items over the subtasks:
        `subtask_equal` gives each subtask ⌊k/S⌋ items and the remaining k mod S to randomly
        chosen subtasks; `subtask_proportional` — named "proportional" in the reference code —
        draws items with probability inversely proportional to their subtask's size, which
        is equal allocation *in expectation*. Both then take the plain mean, so subtasks
        are weighted equally, not by their size: a bias whenever subtasks differ in size and
        difficulty. The `_weighted` variants reweight each item by its subtask's share of
        the seen half, which removes that bias.
        """),
        params(SELECTOR_PARAMS.replace('picture_data = "synthetic-bbh"   ', 'picture_data = "synthetic-mmlu-pro"')),
        *_selector_intro_cells("random", ["subtask_equal", "subtask_proportional",
                                          "subtask_equal_weighted", "subtask_proportional_weighted"]),
        md("""
        ## What the methods pick

        On a benchmark with subtasks of different sizes, uniform sampling follows the
        subtask sizes, the stratified versions flatten them.
        """),
        fig("""
        pic = book.configure(picture_data, runs=1, seed=seed)
        source, _, _, run = book.run_view(pic)
        picks = {name: source.subtasks[book.pick(name, source, picture_k, seed)[2].items]
                 for name in ["random", "subtask_equal", "subtask_proportional"]}
        seen_counts = np.bincount(source.subtasks)
        book.show(plots.allocation_bars(list(pic.benchmark.subtask_names), seen_counts, picks),
                  pic.caption(f"Share of a k = {picture_k} micro-benchmark per subtask (run 0) next to the "
                              "subtask's share of the seen half.", runs=1, sizes=[picture_k]))
        """),
        *_selector_reliability_cells("random")[:1],
        fig("""
        mdads = {s.data.title + (" (synthetic)" if s.data.kind == "synthetic" else ""):
                 metrics.mdad_table(s.results(["random", *VARIANTS]), threshold=threshold)
                 for s in settings.values()}
        book.show(plots.mdad_panels(mdads),
                  "MDAD (points) against k for uniform and subtask-stratified random sampling, per benchmark "
                  "(bands: the paper's 95% CI). " + book.settings_caption(settings))
        """),
        md("""
        ## Bias from equal subtask weights

        Estimation error separates the plain-mean stratified estimates from their
        reweighted versions on benchmarks whose subtasks differ in size and difficulty.
        """),
        fig("""
        with_subtasks = {n: s for n, s in settings.items() if len(s.benchmark.subtask_names) > 1}
        if not with_subtasks:
            book.note("Skipped", "None of the benchmarks compared has more than one subtask.", "warning")
        for name, s in with_subtasks.items():
            res = s.results(["random", *VARIANTS])
            book.show(plots.metrics_vs_size(metrics.summary_table(res),
                                            metrics.mdad_table(res, threshold=threshold)),
                      s.caption("Estimation error, Kendall tau-b and MDAD against k for random sampling "
                                "and its subtask-stratified variants."))
        """),
    ])


def selector_confidence_chapter():
    return notebook([
        md("""
        # Stratified sampling by confidence

        Items differ in difficulty; a random sample can, by chance, be too easy or too hard.
        Stratification fixes the mix: each seen item gets a *proxy* — the sources' mean
        confidence on its gold answer, i.e. how easy it is — the items are grouped into 10
        strata by one-dimensional k-means on the proxy, each stratum receives items in
        proportion to its size (rounded so that the sizes add up to exactly *k*; the
        reference code can overshoot *k*), and the estimate is the Horvitz–Thompson mean,
        which weights every chosen item by its stratum's size over the number chosen there.

        The real bundles have no confidences; the proxy then falls back to the sources'
        0/1 correctness, so strata are bands of *empirical difficulty* (share of sources
        correct). The synthetic stand-ins have confidences.
        """),
        params(SELECTOR_PARAMS),
        *_selector_intro_cells("confidence_stratified", []),
        md("""
        ## What it picks

        The histogram shows the seen items of one run by easiness, coloured by stratum; the
        rug marks the chosen items. Every band of difficulty is represented in proportion.
        """),
        fig("""
        pic = book.configure(picture_data, runs=1, seed=seed)
        source, _, _, run = book.run_view(pic)
        selector, strata, micro = book.pick(MAIN, source, picture_k, seed)
        book.show(plots.strata_picture(source.proxy.mean(axis=0), strata.labels, micro.items, picture_k),
                  pic.caption(f"Confidence strata of run 0 and a k = {picture_k} stratified sample "
                              f"(proxy: {'mean source confidence' if source.confidence is not None else 'share of sources correct'}).",
                              runs=1, sizes=[picture_k]))
        """),
        fig("""
        picks = {}
        for name in ("random", MAIN):
            chosen = book.pick(name, source, picture_k, seed)[2]
            picks[plots.label(name)] = (name, chosen.items, chosen.weights)
        book.show(plots.weight_profile(source.proxy.mean(axis=0), picks),
                  pic.caption(f"Share of the estimate's weight per easiness decile for one k = {picture_k} "
                              "micro-benchmark of each method, against the decile's share of the seen half.",
                              runs=1, sizes=[picture_k]))
        """),
        *_selector_reliability_cells("confidence_stratified"),
    ])


def selector_diversity_chapter():
    return notebook([
        md("""
        # Diversity: a determinantal point process

        A diverse sample covers the space of items instead of clustering where items are
        dense. The method embeds each seen item by its profile of source confidences,
        reduces it to four principal components, drops items outside the 1–99% quantile
        box and rescales each coordinate to [−0.99, 0.99]. It then draws an exact sample of
        a *projection DPP*: the kernel projects onto the span of the first *k* multivariate
        monomials of the coordinates, orthonormalised over the items (a discrete
        orthogonal-polynomial ensemble, the "DPP coreset" construction). Such samples repel
        each other: two items with similar profiles are rarely chosen together.

        The paper's estimate is the plain mean over the chosen items. The DPP also
        supplies importance weights (1/(n·K_ii)) that the paper computed but did not use;
        `diversity_weighted` uses them. Because trimming removes the extreme items, both
        estimates miss the tails — a bias that does not shrink with *k*.
        """),
        params(SELECTOR_PARAMS),
        *_selector_intro_cells("diversity", ["diversity_weighted"]),
        md("""
        ## What it picks

        The seen items of one run in the plane of their first two principal components
        (what the DPP sees, up to the trimming and rescaling). Rings mark the chosen items;
        a ring's size grows with the item's weight in the estimate.
        """),
        fig("""
        pic = book.configure(picture_data, runs=1, seed=seed)
        source, _, _, run = book.run_view(pic)
        coords = book.item_map(source)
        picks = {}
        for name in ("random", MAIN, "diversity_weighted"):
            micro = book.pick(name, source, picture_k, seed)[2]
            picks[plots.label(name)] = (micro.items, micro.weights)
        book.show(plots.selection_maps(coords["box1"], coords["box2"], picks,
                                       xlabel="PC 1 of source profiles (rescaled)", ylabel="PC 2 (rescaled)",
                                       selector=MAIN),
                  pic.caption(f"k = {picture_k} items chosen in run 0 by Random, the DPP, and the DPP with "
                              "importance weights (ring area ~ weight), in the first two of the four "
                              "principal components, clipped to the 1-99% quantile box and rescaled; "
                              f"{int(coords['outside_box'].sum())} items outside the box (drawn on its edge) "
                              "can never be chosen by the DPP.", runs=1, sizes=[picture_k]))
        """),
        *_selector_reliability_cells("diversity"),
        *_selector_variant_cells("Plain mean (the paper) against the DPP's importance weights, on the "
                                 "profile's variant benchmarks."),
    ])


def selector_anchor_chapter():
    return notebook([
        md("""
        # Anchor Points

        Items whose source results rise and fall together are interchangeable for ranking
        models. Anchor Points computes the Pearson correlation between every pair of seen
        items over the source models (one matrix product of standardised columns; items
        constant over the sources get correlation 0 instead of the reference code's NaN),
        runs *k*-medoids (FasterPAM) on the dissimilarity 1 − correlation, lets every item
        join its most correlated medoid, and weights each medoid by its cluster's share of
        the items. The estimate is the weighted mean of the target's results on the medoids.

        The paper's version reads the **target's confidence** on the medoids — the only
        method that uses richer target data than 0/1 correctness. `anchor_points_binary`
        keeps the same items and weights but reads 0/1 correctness, which separates the
        effect of the item choice from that of the extra information. On bundles without
        confidences (real GPQA) the two coincide.
        """),
        params(SELECTOR_PARAMS),
        *_selector_intro_cells("anchor_points", ["anchor_points_binary"]),
        md("""
        ## What it picks

        The correlation matrix of one run's seen items ordered by anchor cluster: blocks on
        the diagonal are groups of items that move together, each represented by its medoid.
        """),
        fig("""
        pic = book.configure(picture_data, runs=1, seed=seed)
        source, _, _, run = book.run_view(pic)
        selector, prepared, micro = book.pick(MAIN, source, picture_k, seed)
        members = book.anchor_members(prepared, micro)
        book.show(plots.cluster_heatmap(1.0 - prepared.dissimilarity, members),
                  pic.caption(f"Item-item correlation over sources, items grouped by their k = {picture_k} "
                              "anchor clusters (run 0).", runs=1, sizes=[picture_k]))
        """),
        fig("""
        coords = book.item_map(source)
        book.show(plots.selection_map(coords["easiness"], coords["pc1"], micro.items, micro.weights,
                                      groups=members, xlabel="item easiness (points)",
                                      ylabel="PC 1 of source profiles", selector=MAIN,
                                      title=f"{picture_k} anchors, items coloured by cluster"),
                  pic.caption("Seen items coloured by anchor cluster; rings mark the medoids, ring area ~ "
                              "cluster size (run 0).", runs=1, sizes=[picture_k]))
        """),
        *_selector_reliability_cells("anchor_points"),
        *_selector_variant_cells("Confidences against 0/1 correctness for the targets, same items and "
                                 "weights. On bundles without confidences the two lines coincide."),
    ])


def selector_irt_chapter():
    return notebook([
        md("""
        # tinyBenchmarks and item response theory

        tinyBenchmarks (Polo et al., 2024) describes each item by an item-response model
        fitted to the source models: a 10-dimensional two-parameter logistic model,
        logit P(model *i* answers item *j*) = a_j·θ_i − b_j, with Gaussian priors. Each item
        becomes the point [a_j, b_j]; *k*-means with *k* clusters groups similar items; the
        item nearest each centroid is the anchor, weighted by its cluster's share; the
        estimate is the weighted mean of the target's correctness on the anchors. This is
        what the paper evaluated. Our fit is a vectorised maximum a posteriori estimate with
        analytic gradients (the reference fits by variational inference).

        The tinyBenchmarks paper's better estimators use the model itself: **IRT** fits the
        target's ability θ on the anchors and predicts its accuracy on all items;
        **p-IRT** mixes the anchors' observed mean with that prediction; **gp-IRT** weighs
        the two by how much each can be trusted. The reference code of the micro-benchmarking
        paper did not use them; here they are `tinybenchmarks_irt`, `tinybenchmarks_pirt` and
        `tinybenchmarks_gpirt`.
        """),
        params(SELECTOR_PARAMS),
        *_selector_intro_cells("tinybenchmarks", ["tinybenchmarks_irt", "tinybenchmarks_pirt",
                                                  "tinybenchmarks_gpirt"]),
        md("""
        ## What it picks

        Items in the plane of the IRT embedding (two principal components of [a_j, b_j]),
        coloured by cluster; rings mark the anchors, with area proportional to weight.
        """),
        fig("""
        pic = book.configure(picture_data, runs=1, seed=seed)
        source, _, _, run = book.run_view(pic)
        selector, prepared, micro = book.pick(MAIN, source, picture_k, seed)
        emb = book.irt_embedding(prepared)
        members = book.nearest_anchor(emb["features"], micro.items)
        book.show(plots.selection_map(emb["x"], emb["y"], micro.items, micro.weights, groups=members,
                                      xlabel=emb["xlabel"], ylabel=emb["ylabel"], selector=MAIN,
                                      title=f"{picture_k} anchors in the IRT embedding"),
                  pic.caption(f"IRT item embedding of run 0 (fitted on the sources) and the k = {picture_k} "
                              "anchors; colours: nearest anchor.", runs=1, sizes=[picture_k]))
        """),
        *_selector_reliability_cells("tinybenchmarks"),
        *_selector_variant_cells("The anchors are the same for all four; only the estimator changes: "
                                 "the anchors' weighted mean (the paper), the IRT prediction, and the "
                                 "p-IRT and gp-IRT mixtures."),
    ])


# ----------------------------------------------------------------- benchmark chapters
BENCH_TEXT = {
    "gpqa": ("GPQA", """
        GPQA (main) holds 448 graduate-level multiple-choice science questions with four
        options, in a single subtask; the seen half has 224 items, so the paper's sizes stop at
        200. The real Open LLM Leaderboard results cover 420 models, with accuracies from
        about 21% to 45% — chance is 25%, and most models are crowded just above it.
        """),
    "bbh": ("BBH", """
        BIG-Bench Hard: 24 subtasks (21 of 250 items; causal_judgement 187,
        penguins_in_a_table 146, snarks 178), 5,761 items in all, 2,880 seen, between 2 and
        19 answer options, 409 models in the paper.
        """),
    "mmlu-pro": ("MMLU-Pro", """
        MMLU-Pro: 12,032 ten-option questions in 14 categories of very different sizes (381
        to 1,351 items), 6,012 seen, 447 models in the paper, chance at 10%.
        """),
    "mmlu": ("MMLU", """
        MMLU as on the first Open LLM Leaderboard: the first 48 subjects (abstract_algebra …
        professional_accounting), 10,631 four-option items, 5,306 seen, 366 models in the paper.
        """),
}


def benchmark_chapter(key: str):
    title, text = BENCH_TEXT[key]
    extra_params = ""
    tail = []
    if key == "mmlu-pro":
        extra_params = """
        real_check = "mmlu-pro-tiger-lab"  # real bundle for a small-protocol check ("": skip)
        real_sizes = "10,25,50,100,250"
        real_targets = 10                  # of the 26 complete models
        """
        tail = [
            md("""
            ## A check on the real MMLU-Pro results

            The real bundle `mmlu-pro-tiger-lab` has 29 models, 26 of them with complete
            results: far too few for 300 sources and 50 targets, which is why the chapter
            above runs on the stand-in. The same experiment at a small scale — 10 random
            targets and the remaining 16 models as sources — shows whether the real data tell
            a similar story. With 45 target pairs per run the curves are coarse; read the
            estimation error and τ first.
            """),
            code("""
            small_cfg = None
            if not real_check:
                book.note("Skipped", "The parameter real_check is empty: no real MMLU-Pro check in this run.",
                          "warning")
            else:
                try:
                    small_cfg = book.configure(real_check, sizes=real_sizes, runs=runs, targets=real_targets,
                                               sources=None, seed=seed, missing="drop_models")
                except book.MbutilsError as err:
                    book.note("Skipped", f"{real_check}: {err}", "warning")
            if small_cfg is not None:
                display(HTML(small_cfg.banner()))
            """, "hide-input"),
            fig("""
            if small_cfg is None:
                book.note("Skipped", "No real MMLU-Pro check (see above).", "warning")
            else:
                small_res = small_cfg.results(selectors)
                book.show(plots.metrics_vs_size(metrics.summary_table(small_res),
                                                metrics.mdad_table(small_res, threshold=threshold)),
                          small_cfg.caption("Real MMLU-Pro (TIGER-Lab) with a small protocol: estimation "
                                            "error, Kendall tau-b and MDAD against k."))
            """),
        ]
    return notebook([
        md(f"# {title}\n\n" + dedent(text).strip() + "\n\n" + dedent("""
        This chapter runs the paper's protocol with every selector and reproduces the
        paper's per-benchmark results: agreement curves by size (figure 3), estimation
        error, Kendall τ and MDAD against size (figure 4), MDAD on the seen and the unseen
        half (figure 6), MDAD at three thresholds and against the number of source models
        (appendix figures).
        """).strip()),
        params(COMMON_PARAMS.format(data=key), """
        selectors = None       # selector names, comma separated (None: the paper's six)
        source_counts = None   # source counts of the sources sweep, e.g. "10,100,300"
        source_runs = None     # runs per source count
        """, extra_params),
        code(SETUP + """
        cfg = book.configure(data, sizes=sizes, runs=runs, sources=sources, targets=targets, seed=seed,
                             source_counts=source_counts, source_runs=source_runs, missing=missing)
        display(HTML(cfg.banner()))
        selectors = book.paper_selectors(cfg, selectors)
        res = cfg.results(selectors)
        mdad = metrics.mdad_table(res, threshold=threshold)
        summary = metrics.summary_table(res)
        """, "hide-input"),
        md("""
        ## Agreement curves by size (figure 3)

        One panel per micro-benchmark size; pairs of targets pooled over runs and binned by
        their true accuracy gap in 1-point bins, as in the paper's figure 3. Dotted lines mark
        each method's MDAD (0.5-point bins, as everywhere else).
        """),
        fig("""
        curve1 = metrics.agreement_curve(res, bin_width=1.0)
        book.show(plots.agreement_curves(curve1, mdad=mdad, threshold=threshold),
                  cfg.caption(f"Mean pairwise agreement against the true accuracy gap (1-point bins) per "
                              f"size; dashed: the {threshold:g} threshold, dotted: MDAD."))
        """),
        md("""
        ## Error, τ and MDAD against size (figure 4)
        """),
        fig("""
        book.show(plots.metrics_vs_size(summary, mdad),
                  cfg.caption("Estimation error (points), Kendall tau-b and MDAD (points; band: the paper's "
                              "95% CI) against k, log scale; means over runs."))
        """),
        code("""
        book.table(book.mdad_wide(mdad), caption=cfg.caption(f"MDAD (points) at threshold {threshold:g}, "
                                                             "with the paper's 95% CI."))
        book.table(book.summary_wide(summary), caption=cfg.caption("Kendall tau-b and estimation error "
                                                                   "(points), mean over runs."))
        """),
        md("""
        ## Seen vs unseen half (figure 6)

        Micro-benchmarks are built from the seen half. Judged against the *unseen* half —
        a fresh draw of items from the same task — every method loses some reliability; a
        method that fits the seen half too closely loses more.
        """),
        fig("""
        mdad_unseen = metrics.mdad_table(res, threshold=threshold, split="unseen")
        book.show(plots.seen_vs_unseen(mdad, mdad_unseen),
                  cfg.caption("MDAD judged against accuracy on the seen half vs on the unseen half."))
        """),
        md("""
        ## MDAD at thresholds 0.7, 0.8 and 0.9
        """),
        fig("""
        tables = {t: metrics.mdad_table(res, threshold=t) for t in (0.7, 0.8, 0.9)}
        book.show(plots.mdad_by_threshold(tables),
                  cfg.caption("MDAD against k at three agreement thresholds (bands: the paper's 95% CI)."))
        """),
        code("""
        book.table(book.threshold_table(tables), caption=cfg.caption("MDAD (points) by threshold."))
        """),
        md("""
        ## MDAD against the number of source models

        Selectors other than random sampling learn from source models. With few sources
        they have little to learn from; random sampling does not depend on them.
        """),
        fig("""
        sweep = book.sources_table(cfg.sources_sweep(selectors), threshold)
        book.show(plots.mdad_vs_sources(sweep, size=cfg.source_size),
                  cfg.caption(f"MDAD (points) at k = {cfg.source_size} against the number of source models "
                              f"(bands: the paper's 95% CI).", runs=cfg.source_runs, sizes=[cfg.source_size],
                              n_sources=", ".join(map(str, cfg.source_counts))))
        """),
        md("""
        ## In short
        """),
        code(f"""
        facts = book.benchmark_facts(cfg, res, mdad, summary)
        for name, value in facts.items():
            book.glue("{key.replace('-', '_')}_" + name, value)
        display(HTML(book.facts_html(facts, cfg)))
        """),
        *tail,
    ])


# ------------------------------------------------------------- case studies, guidance
def target_sets_chapter():
    return notebook([
        md("""
        # Fixed target sets

        A practitioner rarely compares 50 random leaderboard models; more often a handful of
        similar models — all 7B instruction-tuned models, say. Such sets are crowded: their
        accuracies are close, so their pairwise gaps are small, and a micro-benchmark's MDAD
        must be compared with *those* gaps. Here the 50 random targets are replaced by a named
        set and 300 sources are drawn from the remaining models (figure 5 of the paper, which
        used MMLU-Pro's 8B and 70B and BBH's 7B and 70B instruction-tuned sets). The real GPQA
        bundle carries the paper's GPQA sets, used in every profile; the `paper` profile adds
        the MMLU-Pro and BBH instruction-tuned sets (of the stand-ins where no real bundle is on
        the data path).
        """),
        params("""
        # Parameters: papermill -p NAME VALUE (None = the value of the profile in MBUTILS_PROFILE).
        cases = None           # benchmark:target_set, comma separated (None: the profile's cases)
        sizes = None
        runs = None
        sources = None
        seed = 0
        threshold = 0.8
        claim_k = 25           # the size at which the paper states its claim
        """),
        code(SETUP + """
        selectors = list(book.PAPER_SELECTORS)
        case_list = book.parse_cases(cases or book.target_cases())
        """, "hide-input"),
        fig("""
        shares = []
        for data_name, set_name in case_list:
            cfg = book.configure(data_name, sizes=sizes, runs=runs, sources=sources, seed=seed)
            display(HTML(cfg.banner()))
            if set_name not in cfg.benchmark.target_sets:
                book.note("Missing target set", f"{cfg.data.name} has no target set '{set_name}' "
                          f"(it has: {', '.join(cfg.benchmark.target_sets) or 'none'}).", "warning")
                continue
            res = cfg.results(selectors, target_set=set_name)
            mdad = metrics.mdad_table(res, threshold=threshold)
            models = cfg.benchmark.model_index(cfg.benchmark.target_sets[set_name])
            acc = cfg.benchmark.accuracy[models]
            marks = [k for k in (claim_k, max(cfg.sizes)) if k in cfg.sizes]
            book.show(plots.target_set_figure(acc, mdad, name=f"{cfg.data.name} {set_name}",
                                              mark_sizes=marks),
                      cfg.caption(f"Target set '{set_name}': accuracy of its {len(acc)} models (full benchmark), "
                                  "their pairwise gaps with Random's MDAD marked, and MDAD against k.",
                                  target_set=set_name))
            shares.append(book.closer_than_mdad(cfg.data.name, set_name, acc, mdad))
        """),
        md("""
        ## How many pairs are closer than the MDAD?

        For each target set, method and size: the share of the set's model pairs whose true
        gap is smaller than the MDAD — the pairs the micro-benchmark cannot be trusted to
        order.
        """),
        code("""
        share_table = pd.concat(shares, ignore_index=True) if shares else pd.DataFrame()
        if len(share_table):
            book.table(share_table, caption="Share of target-set pairs closer than the MDAD (threshold "
                       f"{threshold:g}); 'not reached' MDADs count every pair.")
            head = share_table[(share_table["size"] == claim_k) & (share_table["target set"] == case_list[0][1])]
            if len(head):
                book.glue("ts_claim_k", str(claim_k))
                book.glue("ts_claim_set", f"{case_list[0][0]} {case_list[0][1]}")
                book.glue("ts_claim_share", f"{head['share closer than MDAD'].min():.0%}"
                          f"–{head['share closer than MDAD'].max():.0%}")
        """),
    ])


def guidance_chapter():
    return notebook([
        md("""
        # How many items do I need?

        The question a practitioner brings: *I want to compare models that differ by about
        Δ points — how large must my micro-benchmark be, and does the selection method
        matter?* The tables below answer it from the benchmark chapters' experiments (same
        runs, read from the cache): for each benchmark, gap and method, the smallest size
        among those run whose MDAD is at most the gap.
        """),
        params("""
        # Parameters: papermill -p NAME VALUE (None = the value of the profile in MBUTILS_PROFILE).
        benchmarks = "gpqa,bbh,mmlu-pro,mmlu"
        gaps = "1,2,3,5,10"    # accuracy gaps (points) a reader wants to resolve
        sizes = None           # sizes for every benchmark (None: each benchmark's profile sizes)
        runs = None
        sources = None
        targets = None
        seed = 0
        threshold = 0.8
        """),
        code(SETUP + """
        selectors = list(book.PAPER_SELECTORS)
        settings = {b: book.configure(b, sizes=sizes, runs=runs, sources=sources, targets=targets, seed=seed)
                    for b in book.name_list(benchmarks, "benchmarks")}
        display(HTML(book.settings_list(settings, "Experiments used")))
        mdads = {s.data.title + (" (synthetic)" if s.data.kind == "synthetic" else ""):
                 metrics.mdad_table(s.results(selectors), threshold=threshold) for s in settings.values()}
        """, "hide-input"),
        md("""
        ## The table to read off
        """),
        code("""
        need = book.items_needed(mdads, book.int_list(gaps, "gaps"))
        book.table(need, caption="Smallest size k (among the sizes run) whose MDAD at threshold "
                   f"{threshold:g} is at most the gap, per benchmark and method; '> K' means even the "
                   "largest size K run was not enough. " + book.settings_caption(settings))
        """),
        md("""
        ## When does random sampling catch up?

        For each benchmark: the smallest size from which random sampling's MDAD is within
        0.5 points of the best method's at every larger size run.
        """),
        code("""
        catch = book.random_catch_up(mdads)
        book.table(catch, caption="Size from which Random is within 0.5 points of the best method's MDAD. "
                   + book.settings_caption(settings))
        book.glue("guidance_catch_up", book.catch_up_sentence(catch))
        """),
        md("""
        ## All benchmarks at a glance (figure 3)
        """),
        fig("""
        curves = {}
        shown = {}
        for s in settings.values():
            name = s.data.title + (" (synthetic)" if s.data.kind == "synthetic" else "")
            res = s.results(selectors)
            curves[name] = metrics.agreement_curve(res, bin_width=1.0)
            shown[name] = [k for k in s.sizes if k <= 250]
        book.show(plots.benchmark_grid(curves, mdads, shown),
                  "Rows: benchmarks. Agreement curves (1-point bins) at k up to 250, then MDAD against k. "
                  + book.settings_caption(settings))
        """),
        md("""
        ## Advice

        * Decide first how close the models you compare are (see {doc}`target_sets`); the
          MDAD must be smaller than those gaps, not just "small".
        * The paper concludes that with very few items no method orders close models
          reliably, and that from about 250 items random sampling is competitive with the
          cleverer methods — while needing no source models at all. The tables above show
          whether this build's experiments agree, benchmark by benchmark.
        * Report the MDAD (with its interval) of the micro-benchmark you use, for the
          models you compare; Kendall τ alone hides the close comparisons.
        """),
    ])


def tables_chapter():
    return notebook([
        md("""
        # Full result tables

        Every number behind the benchmark chapters' figures, as tables you can download:
        MDAD with both confidence intervals (the paper's per-bin pair bootstrap and a run
        bootstrap) at thresholds 0.7, 0.8 and 0.9 on the seen and the unseen half, and
        Kendall τ and estimation error with their spread over runs. The links embed the CSV
        in the page.
        """),
        params("""
        # Parameters: papermill -p NAME VALUE (None = the value of the profile in MBUTILS_PROFILE).
        benchmarks = "gpqa,bbh,mmlu-pro,mmlu"
        sizes = None           # sizes for every benchmark (None: each benchmark's profile sizes)
        runs = None
        sources = None
        targets = None
        seed = 0
        per_subtask_data = "mmlu-pro"   # benchmark for micro-benchmarks built per subtask
        per_subtask_count = 3           # how many of its subtasks (the largest ones)
        """),
        code(SETUP + """
        selectors = list(book.PAPER_SELECTORS)
        settings = {b: book.configure(b, sizes=sizes, runs=runs, sources=sources, targets=targets, seed=seed)
                    for b in book.name_list(benchmarks, "benchmarks")}
        display(HTML(book.settings_list(settings, "Experiments tabulated")))
        """, "hide-input"),
        md("""
        ## Downloads
        """),
        code("""
        results = {name: s.results(selectors) for name, s in settings.items()}
        mdad_all = book.full_mdad_table(results)
        summary_all = book.full_summary_table(results)
        book.download(mdad_all, "mdad.csv", f"MDAD table: {len(mdad_all)} rows (CSV)")
        book.download(summary_all, "summary.csv", f"Kendall tau and estimation error: {len(summary_all)} rows (CSV)")
        """),
        md("""
        ## MDAD at threshold 0.8 (seen half)
        """),
        code("""
        main = mdad_all[(mdad_all["threshold"] == 0.8) & (mdad_all["split"] == "seen")]
        book.table(main.drop(columns=["threshold", "split"]),
                   caption="MDAD (points) with the paper's CI (ci_low/ci_high) and the run-bootstrap CI "
                   "(run_ci_low/run_ci_high). " + book.settings_caption(settings))
        """),
        md("""
        ## Kendall τ and estimation error
        """),
        code("""
        book.table(summary_all, caption="Mean and standard deviation over runs. " + book.settings_caption(settings))
        """),
        md("""
        ## Size as a share of the benchmark

        The same MDADs against *k* as a percentage of the seen half: a given *k* is a much
        larger share of GPQA than of MMLU-Pro.
        """),
        fig("""
        for selector in ("random", "anchor_points"):
            by_bench = {s.data.title: metrics.mdad_table(results[n][results[n]["selector"] == selector])
                        for n, s in settings.items()}
            book.show(plots.mdad_vs_fraction(by_bench, {s.data.title: s.n_seen for s in settings.values()},
                                             selector),
                      f"MDAD (points) of {plots.label(selector)} against k as a percentage of the seen half. "
                      + book.settings_caption(settings))
        """),
        md("""
        ## Micro-benchmarks per subtask

        Each of the largest subtasks treated as a benchmark of its own: the protocol runs on
        that subtask's items only.
        """),
        fig("""
        base = book.configure(per_subtask_data, sizes=sizes, runs=runs, sources=sources, targets=targets, seed=seed)
        per_sub, sub_sizes = {}, []
        for sub in book.largest_subtasks(base.benchmark, per_subtask_count):
            s = book.subtask_setting(base, sub)
            sub_sizes = s.sizes
            per_sub[f"{sub} ({s.n_seen} seen)"] = metrics.mdad_table(s.results(["random", "anchor_points"]))
        if per_sub:
            book.show(plots.mdad_panels(per_sub),
                      base.caption(f"MDAD (points) against k within single subtasks of {base.data.name} "
                                   "(Random and Anchor Points); each subtask's items form their own benchmark "
                                   "with its own seen/unseen split.", sizes=sub_sizes))
        else:
            book.note("No subtasks", f"{base.data.name} has a single subtask.")
        """),
    ])


def differences_chapter():
    return notebook([
        md("""
        # How this implementation differs from the reference code

        `mbutils` reproduces the paper's methods and measures as the authors' reference code
        implements them, except where that code is unsound. Each difference is listed here
        with what it changes, measured on the book's experiments where it can be.

        | reference code | here | measured below |
        |---|---|---|
        | nothing seeded; parallel workers may share random streams | one root seed; a generator per (run, purpose, method, size); identical results for any number of workers | — |
        | agreement gaps re-binned in floating point; some 0.5-point bins unreachable | bins computed once from integer correct counts | yes |
        | MDAD = first bin reaching the threshold, not monotone; "not reached" written as 0.5 (50 points) | first crossing by default, a monotone (isotonic) variant; "not reached" reported as such | yes |
        | CI: per-bin bootstrap of pairs, mirrored around MDAD (can go below 0) | the same, plus a bootstrap over runs (pairs of a run are correlated) | yes |
        | tied pairs agree only if the estimated difference is positive (order dependent) | the same by default; a rule that leaves ties out | yes |
        | confidence strata can select more than k items | allocation sums to exactly k | yes |
        | diversity trims extreme items, biasing the estimate | the same (faithful), plus importance weights | yes |
        | Anchor Points: NaN correlations for constant items | constant items get correlation 0 | — |
        | Anchor Points reads target confidences, the others 0/1 | both, side by side | yes |
        | subtask "proportional" is equal allocation in expectation | kept, named as such, plus reweighted variants | yes |
        | run counts differed across methods | the same runs for every method | yes |
        """),
        params(COMMON_PARAMS.format(data="gpqa"), """
        confidence_data = "mmlu-pro"   # a bundle with confidences for the Anchor Points comparison
        """),
        code(SETUP + """
        cfg = book.configure(data, sizes=sizes, runs=runs, sources=sources, targets=targets, seed=seed,
                             missing=missing)
        display(HTML(cfg.banner()))
        selectors = list(book.PAPER_SELECTORS)
        res = cfg.results(selectors)
        """, "hide-input"),
        md("""
        ## Binning: integer counts vs floating point

        A pair's gap bin is ⌊200·|c_A − c_B| / N⌋ in exact integer arithmetic. Computed from
        floating-point accuracies instead, gaps that sit exactly on a bin edge can fall into
        the bin below.
        """),
        code("""
        binning = book.binning_comparison(res)
        book.table(binning, caption=cfg.caption("Pairs whose 0.5-point bin differs between exact integer "
                                                "binning and floor(200 x |accuracy difference|) in floating point."))
        """),
        md("""
        ## Tie rule, MDAD definition and confidence intervals
        """),
        code("""
        variants = book.mdad_variants(res, threshold)
        book.table(variants, caption=cfg.caption(f"MDAD (points, threshold {threshold:g}) under the paper's "
                   "rules and under each alternative; CI widths of the pair bootstrap (paper) and the run "
                   "bootstrap."))
        """),
        fig("""
        book.show(plots.mdad_panels({"paper rules": metrics.mdad_table(res, threshold=threshold),
                                     "run-bootstrap CI": metrics.mdad_table(res, threshold=threshold, ci="runs"),
                                     "monotone MDAD": metrics.mdad_table(res, threshold=threshold, method="monotone", ci="runs"),
                                     "ties excluded": metrics.mdad_table(res, threshold=threshold, tie_rule="exclude")}),
                  cfg.caption("MDAD against k under the paper's rules and the alternatives (bands: the "
                              "respective 95% CIs)."))
        """),
        md("""
        ## "Not reached"

        Where no bin reaches the threshold the reference code writes 0.5 (50 points), which
        then appears in averages and plots as if it were a measurement.
        """),
        code("""
        nr = book.not_reached_counts(res)
        book.table(nr, caption=cfg.caption("Selector x size cells whose MDAD is not reached, per threshold."))
        """),
        md("""
        ## Stratified sampling takes exactly k items
        """),
        code("""
        source, _, _, _ = book.run_view(cfg)
        sizes_taken = pd.DataFrame([{"k": k, "items chosen": book.pick("confidence_stratified", source, k, seed)[2].size}
                                    for k in cfg.sizes])
        book.table(sizes_taken, caption=cfg.caption("Items chosen by confidence_stratified in run 0 for each "
                                                    "requested size.", runs=1))
        """),
        md("""
        ## Diversity's trimming bias, Anchor Points' information, subtask weighting

        Three selector-level differences, on a bundle with confidences and subtasks
        (the estimation-error column shows the bias).
        """),
        fig("""
        ccfg = book.configure(confidence_data, sizes=sizes, runs=runs, sources=sources, targets=targets, seed=seed)
        display(HTML(ccfg.banner()))
        groups = {"diversity": ["random", "diversity", "diversity_weighted"],
                  "anchor": ["random", "anchor_points", "anchor_points_binary"],
                  "subtask": ["random", "subtask_equal", "subtask_equal_weighted", "subtask_proportional",
                              "subtask_proportional_weighted"]}
        for title, names in groups.items():
            r = ccfg.results(names)
            book.show(plots.metrics_vs_size(metrics.summary_table(r), metrics.mdad_table(r, threshold=threshold)),
                      ccfg.caption(f"{title}: estimation error, Kendall tau-b and MDAD against k."))
        """),
        md("""
        ## The same runs for every method
        """),
        code("""
        counts = res.groupby("selector", sort=False)["run"].nunique().rename("runs").reset_index()
        book.table(counts, caption=cfg.caption("Runs per selector in this book's GPQA experiment."))
        """),
    ])


# ======================================================================= write them
CHAPTERS = {
    "data": data_chapter,
    "synthetic": synthetic_chapter,
    "measures": measures_chapter,
    "sel_random": selector_random_chapter,
    "sel_confidence": selector_confidence_chapter,
    "sel_diversity": selector_diversity_chapter,
    "sel_anchor": selector_anchor_chapter,
    "sel_irt": selector_irt_chapter,
    "bench_gpqa": lambda: benchmark_chapter("gpqa"),
    "bench_bbh": lambda: benchmark_chapter("bbh"),
    "bench_mmlu_pro": lambda: benchmark_chapter("mmlu-pro"),
    "bench_mmlu": lambda: benchmark_chapter("mmlu"),
    "target_sets": target_sets_chapter,
    "guidance": guidance_chapter,
    "tables": tables_chapter,
    "differences": differences_chapter,
}


def main(names=None) -> None:
    for name in names or CHAPTERS:
        nb = CHAPTERS[name]()
        nbformat.validate(nb)
        path = HERE / f"{name}.ipynb"
        nbformat.write(nb, path)
        print(f"wrote {path.relative_to(HERE.parent)}")


if __name__ == "__main__":
    main(sys.argv[1:])
