"""Every public figure of mbutils.book.plots, drawn as the book draws it: no text runs into another,
all text is on the canvas, every size axis is ticked alike, every method is told apart in
greyscale, and the stand-in stamp appears exactly where the caller says."""

from __future__ import annotations

import inspect
import re
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.text import Text

from helpers import random_benchmark
from mbutils.evaluate import metrics
from mbutils.book import plots
from mbutils.book import display
from mbutils.methods.experiment import run_experiment
from mbutils.methods.protocol import Protocol
from mbutils.data.synthetic import make_synthetic

SIZES = [10, 25, 50, 100, 250, 500, 1000]
GPQA_SIZES = [10, 25, 50, 100, 200]
SELECTORS = ["random", "subtask_equal", "subtask_proportional_weighted"]
TOLERANCE_PX = 1.5
#: Public names of mbutils.book.plots that are not figures (names, styles, text fitting, the stamp).
NOT_FIGURES = {"label", "palette", "style", "fit_text", "mark_stand_in", "panels", "scale_text", "size_axis",
               "SelectorStyle"}


# ------------------------------------------------------------------ inputs
@pytest.fixture(scope="module")
def wide():
    """A benchmark large enough for the paper's sizes up to 1000, two runs."""
    bench = random_benchmark(n_models=60, subtask_sizes=(900, 700, 600), seed=3)
    res = run_experiment(bench, SELECTORS, SIZES, Protocol(n_sources=30, n_targets=20, n_runs=2, seed=1),
                         progress=False)
    return {"bench": bench, "res": res, "curve": metrics.agreement_curve(res), "mdad": metrics.mdad_table(res),
            "summary": metrics.summary_table(res), "unseen": metrics.mdad_table(res, split="unseen")}


@pytest.fixture(scope="module")
def gpqa():
    """The synthetic GPQA stand-in (224 seen items), Random and Anchor Points, two runs."""
    bench = make_synthetic("synthetic-gpqa")
    res = run_experiment(bench, ["random", "anchor_points"], GPQA_SIZES,
                         Protocol(n_sources=40, n_targets=20, n_runs=2, seed=1), progress=False)
    return {"bench": bench, "res": res, "curve": metrics.agreement_curve(res), "mdad": metrics.mdad_table(res),
            "summary": metrics.summary_table(res)}


def _every_selector(table: pd.DataFrame) -> pd.DataFrame:
    """Random's rows under every selector name of the book: the longest legend there can be."""
    rows = table[table["selector"] == "random"]
    return pd.concat([rows.assign(selector=s) for s in plots.STYLES], ignore_index=True)


def _plot_on_axes(w):
    """plot_curve and plot_mdad draw on a caller's axes."""
    fig = Figure(figsize=(8, 3.3), layout="constrained")
    left, right = fig.subplots(1, 2)
    for s in SELECTORS:
        plots.plot_curve(left, w["curve"], s, 25, mdad=float(w["mdad"].query("selector == @s and size == 25")["mdad"].iloc[0]))
        plots.plot_mdad(right, w["mdad"], s)
    plots.size_axis(right, SIZES, "MDAD (points)")
    plots.fit_text(fig)
    return fig


def _cases(w, g):
    """name -> (function of mbutils.book.plots it covers, a thunk that draws the figure)."""
    rng = np.random.default_rng(0)
    bench = g["bench"]
    acc = {"GPQA stand-in": bench.accuracy, "tiny": w["bench"].accuracy}
    x, y = rng.random(224), rng.random(224)
    chosen = rng.choice(224, 25, replace=False)
    quant = pd.DataFrame({"real": np.linspace(0.2, 0.8, 9), "synthetic": np.linspace(0.22, 0.79, 9)})
    many_subtasks = [f"high_school_subject_{i:02d}" for i in range(57)]
    thresholds = {t: metrics.mdad_table(w["res"], threshold=t) for t in (0.7, 0.8, 0.9)}
    sweep = pd.concat([thresholds[0.8].assign(n_sources=n, mdad=thresholds[0.8]["mdad"] * (1 + 5 / n))
                       for n in (10, 20, 50, 100, 300)])  # fewer sources, larger MDAD
    mdads = {"MMLU-Pro (synthetic)": w["mdad"], "GPQA Diamond (synthetic)": g["mdad"]}
    pick = lambda n: rng.integers(0, 57, n)  # noqa: E731
    return {
        "agreement_curves": (plots.agreement_curves, lambda: plots.agreement_curves(w["curve"], mdad=w["mdad"])),
        "agreement_curves_all_selectors": (plots.agreement_curves, lambda: plots.agreement_curves(
            _every_selector(w["curve"]), sizes=[10, 100])),
        "metrics_vs_size": (plots.metrics_vs_size, lambda: plots.metrics_vs_size(w["summary"], w["mdad"],
                                                                              title="MMLU-Pro stand-in")),
        "metrics_vs_size_all_selectors": (plots.metrics_vs_size, lambda: plots.metrics_vs_size(
            _every_selector(w["summary"]), _every_selector(w["mdad"]))),
        "mdad_vs_size": (plots.mdad_vs_size, lambda: plots.mdad_vs_size(w["mdad"])),
        "tau_and_curves": (plots.tau_and_curves, lambda: plots.tau_and_curves(w["summary"], w["curve"], [10, 1000])),
        "curves_and_mdad": (plots.curves_and_mdad, lambda: plots.curves_and_mdad(
            g["curve"], g["mdad"], [10, 50, 200], selectors=["random", "anchor_points"])),
        "benchmark_grid": (plots.benchmark_grid, lambda: plots.benchmark_grid(
            {"MMLU-Pro (synthetic)": w["curve"], "GPQA Diamond (synthetic)": g["curve"]}, mdads,
            {"MMLU-Pro (synthetic)": [10, 100, 250], "GPQA Diamond (synthetic)": [10, 50, 200]})),
        "seen_vs_unseen": (plots.seen_vs_unseen, lambda: plots.seen_vs_unseen(w["mdad"], w["unseen"])),
        "mdad_by_threshold": (plots.mdad_by_threshold, lambda: plots.mdad_by_threshold(thresholds)),
        "mdad_vs_sources": (plots.mdad_vs_sources, lambda: plots.mdad_vs_sources(sweep.query("size == 25"), size=25)),
        "mdad_vs_fraction": (plots.mdad_vs_fraction, lambda: plots.mdad_vs_fraction(
            mdads, {"MMLU-Pro (synthetic)": 1100, "GPQA Diamond (synthetic)": 224})),
        "target_set_figure": (plots.target_set_figure, lambda: plots.target_set_figure(
            bench.accuracy[bench.model_index(bench.target_sets["7b_instruct"])], g["mdad"],
            name="synthetic-gpqa 7b_instruct", mark_sizes=[25, 200])),
        "relative_mdad": (plots.relative_mdad, lambda: plots.relative_mdad(mdads, "subtask_equal")),
        "relative_mdad_nothing_to_compare": (plots.relative_mdad, lambda: plots.relative_mdad(
            {"A": g["mdad"]}, "subtask_equal")),
        "mdad_panels": (plots.mdad_panels, lambda: plots.mdad_panels(
            {**mdads, "high_school_mathematics (150 seen)": w["mdad"], "tiny": w["mdad"]})),
        "estimates_scatter": (plots.estimates_scatter, lambda: plots.estimates_scatter(
            {f"k = {k}": (rng.random(20), rng.random(20)) for k in (10, 100)})),
        "plot_curve_and_plot_mdad": ((plots.plot_curve, plots.plot_mdad), lambda: _plot_on_axes(w)),
        "accuracy_histograms": (plots.accuracy_histograms, lambda: plots.accuracy_histograms(acc)),
        "pairwise_histograms": (plots.pairwise_histograms, lambda: plots.pairwise_histograms(acc)),
        "quantile_comparison": (plots.quantile_comparison, lambda: plots.quantile_comparison(
            {"accuracy": quant, "pairwise_difference": quant, "item_pvalue": quant})),
        "subtask_bars": (plots.subtask_bars, lambda: plots.subtask_bars(
            many_subtasks, rng.integers(100, 400, 57), rng.random(57), title="MMLU stand-in")),
        "allocation_bars": (plots.allocation_bars, lambda: plots.allocation_bars(
            many_subtasks[:14], rng.integers(20, 90, 14),
            {"random": pick(50) % 14, "subtask_equal": pick(50) % 14, "subtask_proportional": pick(50) % 14})),
        "selection_map": (plots.selection_map, lambda: plots.selection_map(
            x, y, chosen, rng.random(25), groups=np.arange(224) % 5, xlabel="easiness", ylabel="first component",
            title="Anchor Points, k = 25", selector="anchor_points")),
        "selection_maps": (plots.selection_maps, lambda: plots.selection_maps(
            x, y, {"Diversity": (chosen, None), "Diversity, weighted": (chosen, rng.random(25))},
            xlabel="box 1", ylabel="box 2", selector="diversity")),
        "weight_profile": (plots.weight_profile, lambda: plots.weight_profile(
            rng.random(224), {"Confidence strata": ("confidence_stratified", chosen, np.ones(25)),
                              "Random": ("random", chosen[::-1], rng.random(25))})),
        "strata_picture": (plots.strata_picture, lambda: plots.strata_picture(
            rng.random(224), np.arange(224) % 6, chosen, 25)),
        "cluster_heatmap": (plots.cluster_heatmap, lambda: plots.cluster_heatmap(
            np.corrcoef(rng.random((30, 40)), rowvar=False), np.arange(40) % 4)),
        "score_picture": (plots.score_picture, lambda: plots.score_picture(
            100 * rng.random(300), 31.0, 24.5, 37.2, truth=29.0, mdad=4.5,
            name="ibm-granite/granite-3.1-2b-base, a long model name")),
        "coverage_intervals": (plots.coverage_intervals, lambda: plots.coverage_intervals(pd.DataFrame({
            "selector": np.repeat(["random", "anchor_points", "tinybenchmarks_pirt"], 40),
            "size": np.tile(np.repeat([50, 100], 20), 3), "fold": 0, "model": [f"m{i}" for i in range(120)],
            "estimate": 40.0, "low": 30 + rng.random(120), "high": 50 + rng.random(120),
            "truth": 30 + 25 * rng.random(120), "covered": rng.random(120) < 0.9}), 0.9)),
        "pair_power_curves": (plots.pair_power_curves, lambda: plots.pair_power_curves(
            {f"model-{i} with a long name vs model-{i + 1}": pd.DataFrame(
                {"size": np.arange(1, 449), "power": np.linspace(0.2 + i / 20, 1.0, 448)}) for i in range(5)}, 0.8)),
    }


@pytest.fixture(scope="module")
def cases(wide, gpqa):
    return _cases(wide, gpqa)


#: The keys of _cases, written out so that pytest can name the tests before the inputs exist.
CASE_NAMES = [
    "agreement_curves", "agreement_curves_all_selectors", "metrics_vs_size", "metrics_vs_size_all_selectors",
    "mdad_vs_size", "tau_and_curves", "curves_and_mdad", "benchmark_grid", "seen_vs_unseen", "mdad_by_threshold",
    "mdad_vs_sources", "mdad_vs_fraction", "target_set_figure", "relative_mdad", "relative_mdad_nothing_to_compare",
    "mdad_panels", "estimates_scatter", "plot_curve_and_plot_mdad", "accuracy_histograms", "pairwise_histograms",
    "quantile_comparison", "subtask_bars", "allocation_bars", "selection_map", "selection_maps", "weight_profile",
    "strata_picture", "cluster_heatmap", "score_picture", "coverage_intervals", "pair_power_curves"]


# ------------------------------------------------------------------ drawing and measuring
def _draw(fig, dpi: float | None = None):
    """Draw with Agg (at ``dpi`` if given) and return the renderer."""
    if dpi is not None:
        fig.set_dpi(dpi)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return canvas.get_renderer()


def _drawn_tick_labels(fig) -> list[Text]:
    """Tick labels actually drawn: visible, non-empty, at a tick inside the view interval."""
    labels = []
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_transform().transform(axis.get_view_interval()))
            eps = 1e-9 * max(abs(hi - lo), 1e-12)
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                where = axis.get_transform().transform([tick.get_loc()])[0]
                if not lo - eps <= where <= hi + eps:
                    continue
                labels += [t for t in (tick.label1, tick.label2) if t.get_visible() and t.get_text().strip()]
    return labels


def _all_tick_labels(fig) -> set[int]:
    return {id(t) for ax in fig.axes for axis in (ax.xaxis, ax.yaxis)
            for tick in axis.get_major_ticks() + axis.get_minor_ticks() for t in (tick.label1, tick.label2)}


def drawn_texts(fig) -> list[Text]:
    """Every text the reader sees: tick labels, axis labels, titles, legend texts, annotations."""
    ticks = _all_tick_labels(fig)
    others = [t for t in fig.findobj(Text) if id(t) not in ticks and t.get_visible() and t.get_text().strip()
              and (t.axes is None or t.axes.get_visible())]
    return _drawn_tick_labels(fig) + others


def text_clashes(fig, renderer, tol: float = TOLERANCE_PX) -> list[str]:
    """Pairs of drawn texts whose boxes overlap by more than ``tol`` pixels both ways."""
    texts = drawn_texts(fig)
    boxes = np.array([t.get_window_extent(renderer).extents for t in texts]).reshape(-1, 4)
    x0, y0, x1, y1 = boxes.T
    dx = np.minimum(x1[:, None], x1[None, :]) - np.maximum(x0[:, None], x0[None, :])
    dy = np.minimum(y1[:, None], y1[None, :]) - np.maximum(y0[:, None], y0[None, :])
    i, j = np.nonzero(np.triu((dx > tol) & (dy > tol), k=1))
    return [f"{texts[a].get_text()!r} / {texts[b].get_text()!r}" for a, b in zip(i, j)]


def off_canvas(fig, renderer, tol: float = TOLERANCE_PX) -> list[str]:
    """Drawn texts that stick out of the figure's canvas."""
    width, height = fig.bbox.width, fig.bbox.height
    out = []
    for t in drawn_texts(fig):
        b = t.get_window_extent(renderer)
        if b.x0 < -tol or b.y0 < -tol or b.x1 > width + tol or b.y1 > height + tol:
            out.append(repr(t.get_text()))
    return out


# ------------------------------------------------------------------ every figure is covered
def test_every_public_plotting_function_is_drawn_here(cases):
    public = {name for name in plots.__all__ if callable(getattr(plots, name))} - NOT_FIGURES
    covered = set()
    for funcs, _ in cases.values():
        covered |= {f.__name__ for f in (funcs if isinstance(funcs, tuple) else (funcs,))}
    assert public - covered == set(), "figures without a layout test"
    assert list(cases) == CASE_NAMES


# ------------------------------------------------------------------ each figure drawn and measured once
def _size_axes(fig):
    """Axes of micro-benchmark size k that tick something (an empty panel ticks nothing)."""
    return [ax for ax in fig.axes if ax.get_visible() and "size k" in ax.get_xlabel().replace("\n", " ")
            and len(ax.get_xticks())]


def _size_tick_problems(fig, name: str) -> list[str]:
    """What is wrong with the figure's size axes as last drawn: log axes ticked with plain integers and
    no minor ticks; size axes ticked at the sizes run, the smallest and largest labelled."""
    problems = []
    for ax in fig.axes:
        if ax.get_visible() and ax.get_xscale() == "log":
            shown = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
            if not (shown and all(re.fullmatch(r"\d+(\.\d+)?", s) for s in shown)):
                problems.append(f"{name}: log axis labels {shown}")
            if ax.xaxis.get_minorticklocs().size:
                problems.append(f"{name}: minor ticks on a log axis")
    for ax in _size_axes(fig):
        if ax.get_xscale() != "log":
            problems.append(f"{name}: a size axis on a {ax.get_xscale()} scale")
            continue
        locs = ax.get_xticks()
        if not set(locs) <= set(SIZES) | set(GPQA_SIZES):
            problems.append(f"{name}: ticks at {locs}, not the sizes run")
        shown = {float(t.get_text()) for t in ax.get_xticklabels() if t.get_text()}
        if not {locs.min(), locs.max()} <= shown:
            problems.append(f"{name}: the smallest and largest size lost their labels")
    return problems


_MEASURED: dict = {}


def measured(cases, name: str) -> dict:
    """The figure's measurements, made once for the three tests below (drawing is most of their time).

    One copy is drawn as built, then readied for the page (no stand-in stamp) and drawn again at the
    book's dpi; a second copy takes the book's path with stand-in stamps on every panel.
    """
    if name not in _MEASURED:
        fig = cases[name][1]()
        renderer = _draw(fig)
        out = {"clashes": text_clashes(fig, renderer), "off": off_canvas(fig, renderer),
               "ticks": _size_tick_problems(fig, name)}
        _draw(fig, display.prepare_figure(fig))
        out["ticks"] += _size_tick_problems(fig, name + " (scaled for the page)")
        book = cases[name][1]()
        dpi = display.prepare_figure(book, stand_in=True)
        renderer = _draw(book, dpi)
        out.update(book_clashes=text_clashes(book, renderer), book_off=off_canvas(book, renderer),
                   book_px=min(t.get_fontsize() for t in drawn_texts(book)) * dpi / 72)
        _MEASURED[name] = out
    return _MEASURED[name]


# ------------------------------------------------------------------ no text runs into another
@pytest.mark.parametrize("name", CASE_NAMES)
def test_texts_do_not_overlap_and_stay_on_the_canvas(cases, name):
    found = measured(cases, name)
    assert not found["clashes"], f"{name}: overlapping texts: {found['clashes']}"
    assert not found["off"], f"{name}: text outside the figure: {found['off']}"


@pytest.mark.parametrize("name", CASE_NAMES)
def test_texts_do_not_overlap_as_the_book_shows_them(cases, name):
    """The book's path: stand-in stamps on every panel, text scaled for the column, that dpi."""
    found = measured(cases, name)
    assert not found["book_clashes"], f"{name}: overlapping texts in the book: {found['book_clashes']}"
    assert not found["book_off"], f"{name}: text outside the figure in the book: {found['book_off']}"
    assert found["book_px"] >= display.MIN_TEXT_PX - 1e-6


# ------------------------------------------------------------------ size axes look alike
@pytest.mark.parametrize("name", CASE_NAMES)
def test_size_axes_tick_the_sizes_run_as_plain_integers(cases, name):
    problems = measured(cases, name)["ticks"]
    assert not problems, problems


def test_size_labels_thin_out_instead_of_colliding(wide):
    fig = plots.mdad_vs_size(wide["mdad"])
    fig.set_size_inches(2.2, 2.5)  # far too narrow for seven labels
    renderer = _draw(fig)
    ax = fig.axes[0]
    shown = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert shown[0] == "10" and shown[-1] == "1000" and len(shown) < len(SIZES)
    assert not text_clashes(fig, renderer)


# ------------------------------------------------------------------ greyscale-separable methods
def _lightness(color: str) -> float:
    """CIE L* (0 black - 100 white): what is left of a colour in greyscale."""
    rgb = np.array(to_rgb(color))
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    y = linear @ np.array([0.2126, 0.7152, 0.0722])
    return float(116 * np.cbrt(y) - 16 if y > 216 / 24389 else y * 24389 / 27)


LIGHTNESS_MARGIN = 20.0


def test_every_two_selectors_differ_in_lightness_line_style_or_marker():
    for a, b in combinations(plots.STYLES, 2):
        sa, sb = plots.STYLES[a], plots.STYLES[b]
        apart = abs(_lightness(sa.color) - _lightness(sb.color)) >= LIGHTNESS_MARGIN
        assert apart or sa.linestyle != sb.linestyle or sa.marker != sb.marker, (a, b)


def test_within_a_family_line_style_and_marker_are_unique():
    families: dict[str, list] = {}
    for name, st in plots.STYLES.items():
        assert st.family, f"{name} has no family"
        families.setdefault(st.family, []).append((st.linestyle, st.marker))
    for family, looks in families.items():
        assert len(set(looks)) == len(looks), family


def test_members_of_a_family_sharing_a_line_style_or_marker_differ_in_lightness():
    """The greys and oranges that used to be confused: same family, same look but for colour."""
    for a, b in combinations(plots.STYLES, 2):
        sa, sb = plots.STYLES[a], plots.STYLES[b]
        if sa.family == sb.family and sa.color != sb.color:
            assert abs(_lightness(sa.color) - _lightness(sb.color)) >= LIGHTNESS_MARGIN, (a, b)


LINE_FIGURES = ["agreement_curves", "agreement_curves_all_selectors", "metrics_vs_size",
                "metrics_vs_size_all_selectors", "mdad_vs_size", "tau_and_curves", "curves_and_mdad",
                "benchmark_grid", "seen_vs_unseen", "mdad_by_threshold", "mdad_vs_sources", "target_set_figure",
                "mdad_panels", "plot_curve_and_plot_mdad", "weight_profile"]


@pytest.mark.parametrize("name", LINE_FIGURES)
def test_selector_lines_are_drawn_in_their_style(cases, name):
    fig = cases[name][1]()
    by_color = {}
    for sel, st in plots.STYLES.items():
        by_color.setdefault(st.color, []).append(st)
    checked = 0
    for ax in fig.axes:
        for line in ax.get_lines():
            x, y = np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)
            if len(np.unique(x[np.isfinite(x)])) < 2 or len(np.unique(y[np.isfinite(y)])) < 2:
                continue  # reference lines (thresholds, MDAD markers), not-reached marks, single points
            looks = by_color.get(line.get_color(), [])
            if looks:
                assert any(line.get_linestyle() == Line2D([], [], linestyle=st.linestyle).get_linestyle()
                           and line.get_marker() == st.marker for st in looks), (name, line.get_color())
                checked += 1
    assert checked


def test_non_selector_series_are_greyscale_separable():
    looks = plots.base.SERIES_STYLES
    for (ca, la, ma), (cb, lb, mb) in combinations(looks, 2):
        assert la != lb or ma != mb


# ------------------------------------------------------------------ the stand-in stamp
def _stamps(fig):
    return [t for t in fig.findobj(Text) if t.get_text() == plots.STAND_IN_TEXT]


def test_no_stamp_and_no_title_unless_asked(wide):
    fig = plots.mdad_vs_size(wide["mdad"])
    html = display.render_figure(fig, "Synthetic stand-in: MDAD against k.")
    assert not _stamps(fig) and fig._suptitle is None
    assert "Synthetic stand-in: MDAD against k." in html


def test_stand_in_true_stamps_every_panel_with_data_inside_it(wide):
    fig = plots.agreement_curves(wide["curve"], sizes=[10, 25, 50, 100])  # 4 panels in a 3 x 2 grid
    html = display.render_figure(fig, "Agreement curves.", stand_in=True)
    panels = [ax for ax in fig.axes if ax.get_visible()]
    stamps = _stamps(fig)
    assert len(stamps) == len(panels) == 4
    assert {id(t.axes) for t in stamps} == {id(ax) for ax in panels}
    renderer = _draw(fig)
    for t in stamps:
        assert t.axes.get_window_extent(renderer).contains(*t.get_window_extent(renderer).p0)
        assert t.axes.get_window_extent(renderer).contains(*t.get_window_extent(renderer).p1)
    assert "<b>Figure" in html and "Agreement curves." in html


def test_stand_in_axes_stamp_only_those_panels(wide, gpqa):
    fig = plots.mdad_panels({"real": wide["mdad"], "stand-in": gpqa["mdad"]})
    display.render_figure(fig, "MDAD per benchmark.", stand_in=[fig.axes[1]])
    assert [t.axes for t in _stamps(fig)] == [fig.axes[1]]


def test_panels_name_the_axes_of_each_benchmark(wide, gpqa):
    mdads = {"real": wide["mdad"], "stand-in": gpqa["mdad"]}
    fig = plots.mdad_panels(mdads)
    assert plots.panels(fig, ["stand-in"]) == [fig.axes[1]]
    grid = plots.benchmark_grid({"real": wide["curve"], "stand-in": gpqa["curve"]}, mdads,
                                {"real": [10, 25], "stand-in": [10]})
    row = plots.panels(grid, ["stand-in"])
    assert len(row) == 2 and all(ax.get_visible() for ax in row)  # its curve panel and its MDAD panel
    assert set(map(id, row)) == {id(grid.axes[3]), id(grid.axes[4])}  # no hidden filler panels
    one = plots.mdad_vs_fraction(mdads, {"real": 1100, "stand-in": 224})
    assert plots.panels(one, ["stand-in", "real"]) == [one.axes[0]]  # one panel mixes both
    with pytest.raises(ValueError, match="no panels of nope"):
        plots.panels(fig, ["nope"])
    display.render_figure(grid, "x", stand_in=row)
    assert sorted(id(t.axes) for t in _stamps(grid)) == sorted(map(id, row))


def test_a_panel_is_stamped_once(wide):
    fig = plots.mdad_vs_size(wide["mdad"])
    plots.mark_stand_in(fig)
    plots.mark_stand_in(fig, [fig.axes[0]])
    assert len(_stamps(fig)) == 1


def test_stand_in_must_be_a_flag_or_axes(wide):
    fig = plots.mdad_vs_size(wide["mdad"])
    with pytest.raises(TypeError):
        display.render_figure(fig, "x", stand_in="synthetic")
    other = plots.mdad_vs_size(wide["mdad"])
    with pytest.raises(ValueError):
        display.render_figure(fig, "x", stand_in=[other.axes[0]])


def test_stamp_takes_the_emptiest_corner():
    fig = Figure(figsize=(4, 3), layout="constrained")
    ax = fig.subplots()
    grid = np.linspace(0, 1, 40)
    ax.plot(grid, grid, color="k")            # the diagonal crosses lower left and upper right
    ax.scatter(np.full(30, 0.05), np.linspace(0.85, 1, 30))  # and the upper left is crowded
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    plots.mark_stand_in(fig)
    stamp = _stamps(fig)[0]
    assert (stamp.get_horizontalalignment(), stamp.get_verticalalignment()) == ("right", "bottom")


def test_show_keeps_its_old_call(monkeypatch, wide):
    shown = []
    monkeypatch.setattr(display, "display", shown.append)
    display.show(plots.mdad_vs_size(wide["mdad"]), "A caption.", alt="MDAD")
    assert "A caption." in shown[0].data and 'alt="MDAD"' in shown[0].data
    assert "stand_in" in inspect.signature(display.show).parameters
