"""Figures read well on screen and on paper: every figure's smallest text is at least 9 pt at the
size the book shows it (HTML column and PDF text width), the series colours stay apart for
colour-blind readers and in greyscale, and captions keep WCAG AA contrast with the page.

The figures are drawn from small hand-made tables (no experiment runs); the colour checks compute
CIE Lab and CIEDE2000 here; the caption check reads the CSS files the book is styled by.
"""

from __future__ import annotations

import re
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.text import Text

from mbutils.base.names import PALETTE, STYLES
from mbutils.book import display, plots
from mbutils.book.plots import layout
from mbutils.book.plots.base import SERIES_STYLES
from mbutils.book.profiles import PAPER_SELECTORS

REPO = Path(__file__).resolve().parents[2]
SIZES = [10, 25, 50, 100, 250]
#: The paper's six methods and two variants: the most a benchmark page shows in one legend.
EIGHT = [*PAPER_SELECTORS, "subtask_proportional", "tinybenchmarks_pirt"]
#: Public names of mbutils.book.plots that draw no figure of their own.
NOT_FIGURES = {"label", "palette", "style", "fit_text", "mark_stand_in", "panels", "scale_text", "size_axis",
               "SelectorStyle"}


# ------------------------------------------------------------------ small synthetic tables
def _curve(selectors) -> pd.DataFrame:
    gaps = np.arange(0, 20.5, 0.5)
    rows = [(s, k, g, 1 - 0.5 * np.exp(-g * np.sqrt(k) / (12 + i))) for i, s in enumerate(selectors)
            for k in SIZES for g in gaps]
    return pd.DataFrame(rows, columns=["selector", "size", "gap", "agreement"])


def _mdad(selectors, shift: float = 0.0) -> pd.DataFrame:
    rows = []
    for i, s in enumerate(selectors):
        for k in SIZES:
            value = np.nan if (k == 10 and i == 1) else 30 / np.sqrt(k) + 0.3 * i + shift
            rows.append((s, k, value, value - 1.5, value + 2.0))
    return pd.DataFrame(rows, columns=["selector", "size", "mdad", "ci_low", "ci_high"])


def _summary(selectors) -> pd.DataFrame:
    rows = [(s, k, 20 / np.sqrt(k) + i / 10, 1 - 1 / np.sqrt(k), 21 / np.sqrt(k), 0.98 - 1 / np.sqrt(k))
            for i, s in enumerate(selectors) for k in SIZES]
    return pd.DataFrame(rows, columns=["selector", "size", "error", "tau", "error_unseen", "tau_unseen"])


def _on_callers_axes():
    """plot_curve and plot_mdad draw on axes of a figure made elsewhere, wider than the page."""
    fig = Figure(figsize=(9.0, 3.3), layout="constrained")
    left, right = fig.subplots(1, 2)
    curve, mdad = _curve(EIGHT), _mdad(EIGHT)
    for s in EIGHT:
        plots.plot_curve(left, curve, s, 25, mdad=5.0)
        plots.plot_mdad(right, mdad, s)
    plots.size_axis(right, SIZES, "MDAD (points)")
    plots.fit_text(fig)
    return fig


def _figures() -> dict:
    """name -> (functions of mbutils.book.plots covered, a thunk drawing the figure)."""
    rng = np.random.default_rng(0)
    every = list(STYLES)
    curve, mdad, summary = _curve(EIGHT), _mdad(EIGHT), _summary(EIGHT)
    mdads = {"MMLU-Pro (synthetic stand-in)": mdad, "GPQA Diamond": _mdad(EIGHT, 1.0), "BBH": _mdad(EIGHT, 0.5),
             "MMLU": _mdad(EIGHT, 2.0)}
    curves = {name: curve for name in mdads}
    acc = {name: rng.beta(4, 4, 120) for name in ("GPQA Diamond", "BBH", "MMLU-Pro", "MMLU")}
    subtasks = [f"high_school_subject_{i:02d}" for i in range(20)]
    x, y = rng.random(200), rng.random(200)
    chosen = rng.choice(200, 25, replace=False)
    quant = pd.DataFrame({"real": np.linspace(0.2, 0.8, 9), "synthetic": np.linspace(0.22, 0.79, 9)})
    sweep = pd.concat([mdad[mdad["size"] == 25].assign(n_sources=n) for n in (10, 50, 100, 300)])
    cells = pd.DataFrame({"selector": np.repeat(["random", "anchor_points", "tinybenchmarks_pirt"], 40),
                          "size": np.tile(np.repeat([50, 100, 250, 500], 10), 3), "fold": 0,
                          "model": [f"m{i}" for i in range(120)], "estimate": 40.0, "low": 30 + rng.random(120),
                          "high": 50 + rng.random(120), "truth": 30 + 25 * rng.random(120),
                          "covered": rng.random(120) < 0.9})
    return {
        "agreement_curves": (plots.agreement_curves, lambda: plots.agreement_curves(curve, mdad=mdad)),
        "agreement_curves_every_selector": (plots.agreement_curves, lambda: plots.agreement_curves(
            _curve(every), sizes=[10, 100])),
        "metrics_vs_size": (plots.metrics_vs_size, lambda: plots.metrics_vs_size(summary, mdad, title="GPQA")),
        "metrics_vs_size_every_selector": (plots.metrics_vs_size, lambda: plots.metrics_vs_size(
            _summary(every), _mdad(every))),
        "mdad_vs_size": (plots.mdad_vs_size, lambda: plots.mdad_vs_size(mdad)),
        "tau_and_curves": (plots.tau_and_curves, lambda: plots.tau_and_curves(summary, curve, [10, 100, 250])),
        "curves_and_mdad": (plots.curves_and_mdad, lambda: plots.curves_and_mdad(curve, mdad, [10, 50, 250])),
        "benchmark_grid": (plots.benchmark_grid, lambda: plots.benchmark_grid(
            curves, mdads, {name: [10, 50, 250] for name in mdads}, selectors=EIGHT)),
        "seen_vs_unseen": (plots.seen_vs_unseen, lambda: plots.seen_vs_unseen(mdad, _mdad(EIGHT, 1.0))),
        "mdad_by_threshold": (plots.mdad_by_threshold, lambda: plots.mdad_by_threshold(
            {t: _mdad(EIGHT, t) for t in (0.7, 0.8, 0.9)})),
        "mdad_vs_sources": (plots.mdad_vs_sources, lambda: plots.mdad_vs_sources(sweep, size=25)),
        "mdad_vs_fraction": (plots.mdad_vs_fraction, lambda: plots.mdad_vs_fraction(
            mdads, {name: n for name, n in zip(mdads, (6016, 224, 3000, 7000))})),
        "target_set_figure": (plots.target_set_figure, lambda: plots.target_set_figure(
            rng.beta(5, 4, 12), mdad, name="7B instruct", mark_sizes=[25, 250])),
        "relative_mdad": (plots.relative_mdad, lambda: plots.relative_mdad(mdads, "anchor_points")),
        "mdad_panels": (plots.mdad_panels, lambda: plots.mdad_panels(mdads)),
        "estimates_scatter": (plots.estimates_scatter, lambda: plots.estimates_scatter(
            {f"k = {k}": (rng.random(20), rng.random(20)) for k in (10, 100, 250)})),
        "plot_curve_and_plot_mdad": ((plots.plot_curve, plots.plot_mdad), _on_callers_axes),
        "accuracy_histograms": (plots.accuracy_histograms, lambda: plots.accuracy_histograms(acc, chance=0.25)),
        "pairwise_histograms": (plots.pairwise_histograms, lambda: plots.pairwise_histograms(acc)),
        "quantile_comparison": (plots.quantile_comparison, lambda: plots.quantile_comparison(
            {"accuracy": quant, "pairwise_difference": quant, "item_pvalue": quant})),
        "subtask_bars": (plots.subtask_bars, lambda: plots.subtask_bars(
            subtasks, rng.integers(100, 400, 20), rng.random(20), title="MMLU")),
        "allocation_bars": (plots.allocation_bars, lambda: plots.allocation_bars(
            subtasks[:8], rng.integers(20, 90, 8), {s: rng.integers(0, 8, 50) for s in EIGHT[:3]})),
        "selection_map": (plots.selection_map, lambda: plots.selection_map(
            x, y, chosen, rng.random(25), groups=np.arange(200) % 5, xlabel="easiness", ylabel="component 1",
            title="Anchor Points, k = 25", selector="anchor_points")),
        "selection_maps": (plots.selection_maps, lambda: plots.selection_maps(
            x, y, {"Diversity": (chosen, None), "Diversity, weighted": (chosen, rng.random(25)),
                   "Random": (chosen[::-1], None)}, xlabel="box 1", ylabel="box 2", selector="diversity")),
        "weight_profile": (plots.weight_profile, lambda: plots.weight_profile(
            rng.random(200), {"Confidence strata": ("confidence_stratified", chosen, np.ones(25)),
                              "Random": ("random", chosen[::-1], rng.random(25))})),
        "strata_picture": (plots.strata_picture, lambda: plots.strata_picture(
            rng.random(200), np.arange(200) % 6, chosen, 25)),
        "cluster_heatmap": (plots.cluster_heatmap, lambda: plots.cluster_heatmap(
            np.corrcoef(rng.random((30, 40)), rowvar=False), np.arange(40) % 4)),
        "score_picture": (plots.score_picture, lambda: plots.score_picture(
            100 * rng.random(300), 31.0, 24.5, 37.2, truth=29.0, mdad=4.5, name="a new model")),
        "coverage_intervals": (plots.coverage_intervals, lambda: plots.coverage_intervals(cells, 0.9)),
        "pair_power_curves": (plots.pair_power_curves, lambda: plots.pair_power_curves(
            {f"model-{i} vs model-{i + 1}": pd.DataFrame({"size": np.arange(1, 449),
                                                           "power": np.linspace(0.2 + i / 20, 1.0, 448)})
             for i in range(5)}, 0.8)),
    }


FIGURES = list(_figures())


def _shown_texts(fig) -> list[Text]:
    """Every text a reader sees: visible, not empty, on a visible panel (tick labels included)."""
    fig.draw_without_rendering()
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()
            and (t.axes is None or t.axes.get_visible())]


def test_every_public_figure_function_is_measured_here():
    public = {name for name in plots.__all__ if callable(getattr(plots, name))} - NOT_FIGURES
    covered = set()
    for funcs, _ in _figures().values():
        covered |= {f.__name__ for f in (funcs if isinstance(funcs, tuple) else (funcs,))}
    assert public - covered == set(), "figures whose text size is not checked"


# ------------------------------------------------------------------ (a) text at its displayed size
@pytest.mark.parametrize("name", FIGURES)
def test_smallest_text_is_at_least_9_pt_as_displayed(name):
    """As the book shows it (book.show: stand-in stamps, text scaled, the PNG at FIGURE_DPI): the
    smallest font (pt in the figure) x displayed width / drawn width is 9 pt or more, in the HTML
    column (layout.HTML_COLUMN_PX, the theme's content column, shrinks a wider PNG) and in the PDF
    (layout.PDF_COLUMN_PX, the text width every figure is stretched to)."""
    fig = _figures()[name][1]()
    dpi = display.prepare_figure(fig, stand_in=True)
    png = display.figure_png(fig, dpi)
    drawn_px = int.from_bytes(png[16:20], "big") * layout.CSS_PX_PER_INCH / dpi  # CSS px at its own size
    assert fig.get_figwidth() <= layout.PAGE_WIDTH_IN + 1e-6, f"{name}: wider than the page"
    smallest = min(t.get_fontsize() for t in _shown_texts(fig))
    for where, scale in layout.displayed_scale(drawn_px).items():
        shown = smallest * scale
        assert shown >= layout.MIN_TEXT_PT - 1e-6, f"{name}: text of {shown:.2f} pt in the {where}"


def test_panels_wrap_into_rows_instead_of_shrinking():
    fig, rows = layout.panel_grid([4, 2], width=3.6, height=3.0)
    assert fig.get_figwidth() <= layout.PAGE_WIDTH_IN
    assert [len(r) for r in rows] == [4, 2]
    places = {id(ax): rc for rc, ax in fig.mbutils_grid.items()}
    assert [places[id(ax)] for ax in rows[0]] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert [places[id(ax)] for ax in rows[1]] == [(2, 0), (2, 1)]  # a group starts its own row
    assert fig.get_figwidth() / 2 >= layout.MIN_PANEL_IN  # panels keep a legible width
    narrow, groups = layout.panel_grid([4], width=3.0, height=2.5, min_width=2.3)
    assert sorted({rc[0] for rc in narrow.mbutils_grid}) == [0, 1] and len(narrow.mbutils_grid) == 4  # 2 + 2


# ------------------------------------------------------------------ (b) colours told apart
#: Machado, Oliveira & Fernandes (2009), severity 1: linear-RGB matrices simulating the two common
#: red-green colour-vision deficiencies.
CVD = {"normal vision": np.eye(3),
       "deuteranopia": np.array([[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413],
                                 [-0.011820, 0.042940, 0.968881]]),
       "protanopia": np.array([[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216],
                               [-0.003882, -0.048116, 1.051998]])}
#: Colour difference (CIEDE2000) two series of one figure need. 1 is about a just-noticeable
#: difference between large patches side by side; lines 1.4 pt wide and 5 pt markers are small marks,
#: for which colour differences must be several times larger to be told apart (Stone, Szafir &
#: Setlur 2014, "An engineering model for color difference as a function of size"), and a reader has
#: to match a line to its legend entry, not only see two lines differ: 10 asks for that margin. The
#: book's former palette had pairs at 2.8 (Anchor Points' vermillion and the adaptive tests' brown
#: under protanopia) and 0 (greys differing in lightness only, the same hue for the eye).
MIN_DELTA_E = 10.0
#: Lightness (CIE L*) two series need to be told apart in greyscale by their grey alone: two steps of
#: the Munsell value scale (one step is about 10 L*), a difference a photocopy keeps. Series closer
#: than this must differ in marker and in line style.
GREY_MARGIN = 20.0


def _linear(color) -> np.ndarray:
    c = np.array(to_rgb(color))
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def _lab(color, matrix=np.eye(3)) -> np.ndarray:
    """CIE Lab (D65) of an sRGB colour as seen through ``matrix`` (a CVD simulation)."""
    linear = np.clip(matrix @ _linear(color), 0, 1)
    xyz = np.array([[0.4124564, 0.3575761, 0.1804375], [0.2126729, 0.7151522, 0.0721750],
                    [0.0193339, 0.1191920, 0.9503041]]) @ linear / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > 216 / 24389, np.cbrt(xyz), (24389 / 27 * xyz + 16) / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def delta_e2000(lab1, lab2) -> float:
    """CIEDE2000 colour difference (Sharma, Wu & Dalal 2005)."""
    (l1, a1, b1), (l2, a2, b2) = lab1, lab2
    c_mean = (np.hypot(a1, b1) + np.hypot(a2, b2)) / 2
    g = 0.5 * (1 - np.sqrt(c_mean**7 / (c_mean**7 + 25**7)))
    a1, a2 = (1 + g) * a1, (1 + g) * a2
    c1, c2 = np.hypot(a1, b1), np.hypot(a2, b2)
    h1, h2 = np.degrees(np.arctan2(b1, a1)) % 360, np.degrees(np.arctan2(b2, a2)) % 360
    dh = 0.0 if c1 * c2 == 0 else (h2 - h1 + 180) % 360 - 180
    dl, dc, d_hue = l2 - l1, c2 - c1, 2 * np.sqrt(c1 * c2) * np.sin(np.radians(dh / 2))
    l_mean, c_mean = (l1 + l2) / 2, (c1 + c2) / 2
    if c1 * c2 == 0:
        h_mean = h1 + h2
    elif abs(h1 - h2) <= 180:
        h_mean = (h1 + h2) / 2
    else:
        h_mean = (h1 + h2 + 360) / 2 if h1 + h2 < 360 else (h1 + h2 - 360) / 2
    t = (1 - 0.17 * np.cos(np.radians(h_mean - 30)) + 0.24 * np.cos(np.radians(2 * h_mean))
         + 0.32 * np.cos(np.radians(3 * h_mean + 6)) - 0.20 * np.cos(np.radians(4 * h_mean - 63)))
    s_l = 1 + 0.015 * (l_mean - 50) ** 2 / np.sqrt(20 + (l_mean - 50) ** 2)
    s_c, s_h = 1 + 0.045 * c_mean, 1 + 0.015 * c_mean * t
    r_t = (-2 * np.sqrt(c_mean**7 / (c_mean**7 + 25**7))
           * np.sin(np.radians(60 * np.exp(-(((h_mean - 275) / 25) ** 2)))))
    return float(np.sqrt((dl / s_l) ** 2 + (dc / s_c) ** 2 + (d_hue / s_h) ** 2 + r_t * (dc / s_c) * (d_hue / s_h)))


def test_delta_e2000_matches_the_published_test_data():
    # Sharma, Wu & Dalal (2005), table 1: pairs 1, 7 and 17
    assert delta_e2000((50, 2.6772, -79.7751), (50, 0, -82.7485)) == pytest.approx(2.0425, abs=1e-4)
    assert delta_e2000((50, 0, 0), (50, -1, 2)) == pytest.approx(2.3669, abs=1e-4)
    assert delta_e2000((50, 2.5, 0), (73, 25, -18)) == pytest.approx(27.1492, abs=1e-4)


def _looks():
    """The first eight series of a figure: the non-selector series, and the eight methods a
    benchmark page compares (colour, line style, marker)."""
    selectors = [(STYLES[s].color, STYLES[s].linestyle, STYLES[s].marker) for s in EIGHT]
    return {"series": list(SERIES_STYLES[:8]), "selectors": selectors}


def _same_dashes(a: str, b: str) -> bool:
    return Line2D([], [], linestyle=a).get_linestyle() == Line2D([], [], linestyle=b).get_linestyle()


@pytest.mark.parametrize("kind", ["series", "selectors"])
@pytest.mark.parametrize("vision", list(CVD))
def test_first_eight_colours_differ_with_colour_blindness(kind, vision):
    looks = _looks()[kind]
    assert len(looks) == 8
    close = [(a[0], b[0], round(d, 1)) for a, b in combinations(looks, 2)
             if (d := delta_e2000(_lab(a[0], CVD[vision]), _lab(b[0], CVD[vision]))) < MIN_DELTA_E]
    assert not close, f"{kind} too alike under {vision} (CIEDE2000 < {MIN_DELTA_E}): {close}"


@pytest.mark.parametrize("kind", ["series", "selectors"])
def test_first_eight_differ_in_greyscale_by_marker_or_by_line_style_and_lightness(kind):
    """In greyscale the colours may merge (eight colours cannot all be GREY_MARGIN apart in L*), so
    markers and line styles are the second channel: two of the first eight series differ in marker,
    or (two methods of one family, which share a marker) in line style and by GREY_MARGIN in L*. The
    non-selector series all differ in marker, and those closer than GREY_MARGIN in line style too."""
    looks = _looks()[kind]
    for (ca, la, ma), (cb, lb, mb) in combinations(looks, 2):
        grey_apart = abs(_lab(ca)[0] - _lab(cb)[0]) >= GREY_MARGIN
        assert ma != mb or (not _same_dashes(la, lb) and grey_apart), f"{kind}: {ca} and {cb} alike in greyscale"
        if kind == "series":
            assert ma != mb and (grey_apart or not _same_dashes(la, lb)), f"{ca} and {cb}: alike in greyscale"


def test_the_palette_is_the_eight_series_colours_and_family_hues():
    assert [c for c, _, _ in SERIES_STYLES] == [PALETTE[n] for n in ("blue", "vermillion", "green", "purple",
                                                                     "orange", "sky", "wine", "black")]
    heads = {st.family: st.color for name, st in STYLES.items() if name in ("random", *PAPER_SELECTORS,
                                                                              "adaptive_fisher")}
    assert len(set(heads.values())) == len(heads) and set(heads.values()) <= set(PALETTE.values())


# ------------------------------------------------------------------ (c) caption contrast
def _theme_css() -> str:
    """The compiled CSS of the HTML theme, in the order the page loads it: pydata, then the book theme."""
    import pydata_sphinx_theme
    import sphinx_book_theme

    pydata = next(Path(pydata_sphinx_theme.__file__).parent.rglob("styles/pydata-sphinx-theme.css"))
    book = next(Path(sphinx_book_theme.__file__).parent.rglob("styles/sphinx-book-theme.css"))
    return pydata.read_text(encoding="utf-8") + "\n" + book.read_text(encoding="utf-8")


def _variables(css: str, mode: str) -> dict[str, str]:
    """Custom properties of ``html[data-theme=<mode>]`` blocks, later ones winning."""
    found = {}
    for block in re.findall(rf'html\[data-theme="?{mode}"?\][^{{]*{{([^}}]*)}}', css):
        found.update(re.findall(r"(--[\w-]+)\s*:\s*([^;]+)", block))
    return found


def _resolve(value: str, variables: dict[str, str]) -> str:
    while (m := re.fullmatch(r"\s*var\((--[\w-]+)\)\s*", value)):
        value = variables[m.group(1)]
    return value.strip()


def _contrast(fg: str, bg: str) -> float:
    """WCAG 2 contrast ratio of two sRGB colours."""
    lum = [float(_linear(c) @ np.array([0.2126, 0.7152, 0.0722])) for c in (fg, bg)]
    return (max(lum) + 0.05) / (min(lum) + 0.05)


def test_captions_reach_wcag_aa_contrast_in_light_and_dark_mode():
    ours = (REPO / "_static" / "mbutils.css").read_text(encoding="utf-8")
    rule = re.search(r"figcaption\.mbutils-caption[^{]*{([^}]*)}", ours)
    assert rule, "_static/mbutils.css styles no caption"
    color = re.search(r"(?<![-\w])color\s*:\s*([^;]+);", rule.group(1)).group(1)
    theme = _theme_css()
    for mode in ("light", "dark"):
        variables = _variables(theme, mode)
        fg, bg = _resolve(color, variables), _resolve(variables["--pst-color-background"], variables)
        assert _contrast(fg, bg) >= 4.5, f"{mode} mode: caption {fg} on {bg} is {_contrast(fg, bg):.2f}:1"
    weight = re.search(r"font-weight\s*:\s*(\d+)", rule.group(1))
    assert weight and int(weight.group(1)) >= 400, "captions are not set in a light weight"
