"""Figures of the book: one style per selector, axes in points, the data actually drawn."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure

from helpers import random_benchmark
from mbutils.evaluate import metrics
from mbutils.book import plots
from mbutils.methods.experiment import run_experiment
from mbutils.methods.protocol import Protocol
from mbutils.methods.selectors import selector_names

SELECTORS = ["random", "subtask_equal"]
SIZES = [5, 10, 20]


@pytest.fixture(scope="module")
def results():
    bench = random_benchmark(n_models=40, subtask_sizes=(40, 20, 30), seed=3)
    return run_experiment(bench, SELECTORS, SIZES, Protocol(n_sources=20, n_targets=15, n_runs=3, seed=1),
                          progress=False)


@pytest.fixture(scope="module")
def tables(results):
    return {"curve": metrics.agreement_curve(results), "mdad": metrics.mdad_table(results),
            "summary": metrics.summary_table(results)}


def _lines_with_color(ax, color):
    return [ln for ln in ax.get_lines() if ln.get_color() == color and len(ln.get_xdata()) > 1]


# ----------------------------------------------------------------- one style per selector
def test_every_registered_selector_has_its_own_style():
    names = selector_names()
    missing = [n for n in names if n not in plots.STYLES]
    assert not missing, f"selectors without a book style: {missing}"
    labels = [plots.label(n) for n in names]
    assert len(set(labels)) == len(labels)
    looks = [(plots.style(n).color, plots.style(n).linestyle) for n in names]
    assert len(set(looks)) == len(looks), "two selectors would be drawn identically"


def test_unknown_selector_gets_a_stable_fallback():
    a, b = plots.style("my_method"), plots.style("my_method")
    assert a == b and a.label == "my_method"
    assert plots.palette(["random", "my_method"]) == {"Random": plots.style("random").color, "my_method": a.color}


# ------------------------------------------------------------------------- figures
def test_agreement_curves_one_panel_per_size_one_line_per_selector(tables):
    fig = plots.agreement_curves(tables["curve"], mdad=tables["mdad"], threshold=0.8)
    assert isinstance(fig, Figure)
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert len(axes) == len(SIZES)
    for ax, k in zip(axes, SIZES):
        assert ax.get_title() == f"k = {k} items"
        assert "points" in ax.get_xlabel()
        for s in SELECTORS:
            drawn = _lines_with_color(ax, plots.style(s).color)
            assert drawn, f"no curve for {s} at k={k}"
            expected = tables["curve"].query("selector == @s and size == @k and gap <= 20")
            np.testing.assert_allclose(drawn[0].get_ydata(), expected["agreement"])
        assert any(np.allclose(ln.get_ydata(), 0.8) for ln in ax.get_lines())  # threshold line
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == [plots.label(s) for s in SELECTORS]


def test_metrics_vs_size_draws_error_tau_and_mdad_in_points(tables):
    fig = plots.metrics_vs_size(tables["summary"], tables["mdad"])
    err_ax, tau_ax, mdad_ax = fig.axes[:3]
    assert err_ax.get_xscale() == "log"
    assert "points" in err_ax.get_ylabel() and "points" in mdad_ax.get_ylabel()
    color = plots.style("random").color
    random_rows = tables["summary"].query("selector == 'random'").sort_values("size")
    np.testing.assert_allclose(_lines_with_color(err_ax, color)[0].get_ydata(), random_rows["error"])
    np.testing.assert_allclose(_lines_with_color(tau_ax, color)[0].get_ydata(), random_rows["tau"])
    assert any(isinstance(c, PolyCollection) for c in mdad_ax.collections), "MDAD CI band missing"


def test_not_reached_mdad_is_drawn_as_a_marker_not_a_number():
    mdad = pd.DataFrame({"selector": "random", "size": [10, 20, 40], "mdad": [np.nan, 6.0, 3.0],
                         "ci_low": [np.nan, 5.0, 2.0], "ci_high": [np.nan, 7.0, np.nan]})
    fig = plots.mdad_vs_size(mdad)
    ax = fig.axes[0]
    main = _lines_with_color(ax, plots.style("random").color)[0]
    assert np.isnan(main.get_ydata()[0])          # a gap in the line, no made-up value
    markers = [ln for ln in ax.get_lines() if ln.get_marker() == "^"]
    assert len(markers) == 1 and list(markers[0].get_xdata()) == [10.0]
    assert ax.get_ylim()[1] < 50                 # the reference code's 50-point sentinel is absent


def test_seen_vs_unseen_points_match_tables(results, tables):
    unseen = metrics.mdad_table(results, split="unseen")
    fig = plots.seen_vs_unseen(tables["mdad"], unseen)
    scatter = fig.axes[0].collections
    offsets = np.concatenate([c.get_offsets() for c in scatter])
    both = tables["mdad"].merge(unseen, on=["selector", "size"], suffixes=("_s", "_u"))
    assert len(offsets) == len(both)
    np.testing.assert_allclose(np.sort(offsets[:, 0]), np.sort(both["mdad_s"]))


def test_thresholds_sources_and_fraction_figures(results):
    tables = {t: metrics.mdad_table(results, threshold=t) for t in (0.7, 0.8, 0.9)}
    fig = plots.mdad_by_threshold(tables)
    assert [ax.get_title() for ax in fig.axes[:3]] == ["threshold 0.7", "threshold 0.8", "threshold 0.9"]
    sweep = pd.concat([tables[0.8].assign(n_sources=n) for n in (10, 20)])
    fig = plots.mdad_vs_sources(sweep.query("size == 10"), size=10)
    assert fig.axes[0].get_xlabel() == "number of source models"
    fig = plots.mdad_vs_fraction({"a": tables[0.8], "b": tables[0.8]}, {"a": 45, "b": 90})
    lines = fig.axes[0].get_lines()
    np.testing.assert_allclose(lines[0].get_xdata(), 100 * np.array(SIZES) / 45)
    np.testing.assert_allclose(lines[1].get_xdata(), 100 * np.array(SIZES) / 90)


def test_target_set_figure_reports_share_of_pairs_closer_than_mdad():
    accuracy = np.array([0.30, 0.31, 0.35, 0.50])  # gaps in points: 1, 5, 20, 4, 19, 15
    mdad = pd.DataFrame({"selector": "random", "size": [10, 25], "mdad": [10.0, 4.5],
                         "ci_low": [8.0, 3.0], "ci_high": [12.0, 6.0]})
    fig = plots.target_set_figure(accuracy, mdad, name="set", mark_sizes=[10, 25, 25])
    texts = [t.get_text() for t in fig.legends[0].get_texts()]  # one legend area, below the panels
    assert texts == ["Random", "Random MDAD, k = 10: 50% of pairs closer", "Random MDAD, k = 25: 33% of pairs closer"]
    counts = sum(p.get_height() for p in fig.axes[0].patches)
    assert counts == 4


def test_data_figures_are_in_points():
    acc = {"x": np.array([0.2, 0.25, 0.3]), "y": np.array([0.5, 0.51])}
    fig = plots.accuracy_histograms(acc)
    assert fig.axes[0].get_xlim()[1] > 25  # points, not fractions
    fig = plots.pairwise_histograms(acc)
    assert fig.axes[0].get_title() == "x: 0% of pairs < 2 points"
    assert fig.axes[1].get_title() == "y: 100% of pairs < 2 points"


def test_selection_pictures_draw_the_chosen_items():
    rng = np.random.default_rng(0)
    x, y = rng.random(50), rng.random(50)
    chosen = np.array([3, 7, 11])
    fig = plots.selection_map(x, y, chosen, weights=np.array([0.2, 0.3, 0.5]), groups=np.arange(50) % 3)
    rings = fig.axes[0].collections[-1]
    np.testing.assert_allclose(rings.get_offsets(), np.column_stack([x[chosen], y[chosen]]))
    sizes = rings.get_sizes()
    assert sizes[2] > sizes[1] > sizes[0]  # area grows with weight
    fig = plots.weight_profile(rng.random(50), {"r": ("random", chosen, np.ones(3))}, bins=5)
    profile = _lines_with_color(fig.axes[0], plots.style("random").color)[0]
    assert np.isclose(profile.get_ydata().sum(), 1.0)
    fig = plots.allocation_bars(["a", "b"], [30, 10], {"random": np.array([0, 0, 1, 1])})
    shares = [p.get_width() for p in fig.axes[0].patches]  # subtasks are rows: shares are bar lengths
    assert shares == [0.75, 0.25, 0.5, 0.5]
    fig = plots.strata_picture(rng.random(50), np.arange(50) % 4, chosen, 3)
    assert "4 strata" in fig.axes[0].get_title()
    corr = np.corrcoef(rng.random((20, 6)), rowvar=False)
    fig = plots.cluster_heatmap(corr, np.array([1, 0, 1, 0, 2, 2]))
    assert fig.axes[0].images[0].get_array().shape == (6, 6)


def test_panels_grid_and_relative(tables):
    fig = plots.mdad_panels({"A": tables["mdad"], "B": tables["mdad"]})
    assert [ax.get_title() for ax in fig.axes[:2]] == ["A", "B"]
    fig = plots.benchmark_grid({"A": tables["curve"]}, {"A": tables["mdad"]}, {"A": SIZES})
    assert len(fig.axes) == len(SIZES) + 1
    fig = plots.relative_mdad({"A": tables["mdad"]}, "subtask_equal")
    wide = tables["mdad"].pivot(index="size", columns="selector", values="mdad")
    np.testing.assert_allclose(fig.axes[0].get_lines()[0].get_ydata(),
                               (wide["subtask_equal"] - wide["random"]).to_numpy())


def test_figures_are_not_registered_with_pyplot(tables):
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    plots.agreement_curves(tables["curve"])
    plots.tau_and_curves(tables["summary"], tables["curve"], sizes=[5, 20])
    plots.curves_and_mdad(tables["curve"], tables["mdad"], sizes=[5, 20], selectors=SELECTORS)
    assert plt.get_fignums() == before  # no figure leaks into notebooks' inline display


def test_unknown_sizes_or_selectors_are_refused(tables):
    with pytest.raises(ValueError, match="sizes 7"):
        plots.agreement_curves(tables["curve"], sizes=[7])
    with pytest.raises(ValueError, match="selectors nope"):
        plots.agreement_curves(tables["curve"], selectors=["nope"])


def test_the_use_figures_draw_what_they_are_given():
    from mbutils.book import plots

    fig = plots.score_picture(np.array([20.0, 30.0, 40.0]), 31.0, 25.0, 37.0, truth=29.0, mdad=4.0, name="m")
    ax = fig.axes[0]
    assert len(ax.collections) >= 2 and any(abs(line.get_xdata()[0] - 29.0) < 1e-9 for line in ax.lines)
    cells = pd.DataFrame({"selector": ["random"] * 3 + ["anchor_points"] * 3, "size": [10] * 6, "fold": 0,
                          "model": list("abcdef"), "estimate": 50.0, "low": 40.0, "high": 60.0,
                          "truth": [50, 55, 70, 45, 65, 50.0], "covered": [True, True, False, True, False, True]})
    fig = plots.coverage_intervals(cells, 0.9)
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert titles == ["Random, k = 10: 67% covered", "Anchor Points, k = 10: 67% covered"]
    curve = pd.DataFrame({"size": [1, 10, 100], "power": [0.3, 0.6, 0.9]})
    fig = plots.pair_power_curves({"a vs b": curve}, 0.8)
    assert np.allclose(fig.axes[0].lines[0].get_ydata(), [0.3, 0.6, 0.9])
