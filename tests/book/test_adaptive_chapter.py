"""What the adaptive-testing chapter shows (mbutils.book.adaptive): the data its tests run on under each
profile, and its path figure."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from mbutils import book


def test_the_quick_preview_keeps_costly_work_on_smaller_data(monkeypatch):
    from mbutils.book.adaptive import adaptive_data, not_run_reason

    book_data = "gpqa,bbh,mmlu-pro"
    assert adaptive_data(None, book_data, profile="quick") == ["gpqa"]
    assert adaptive_data(None, book_data, profile="default") == ["gpqa", "bbh", "mmlu-pro"]
    assert adaptive_data("bbh", book_data, profile="quick") == ["bbh"]  # the parameter wins
    assert adaptive_data(None, "/my/bundle", profile="quick") == ["/my/bundle"]  # a reader's data keeps its tests
    assert "gpqa only" in not_run_reason(["gpqa"]) and "quick profile" in not_run_reason(["gpqa"])
    assert not_run_reason(["bbh"], "bbh") == "adaptive_data names bbh only"  # not the profile's doing
    assert [book.selector_stand_in(p) for p in ("quick", "default", "paper")] == \
        ["synthetic-bbh", "synthetic-mmlu-pro", "synthetic-mmlu-pro"]
    monkeypatch.setenv("MBUTILS_PROFILE", "quick")
    assert adaptive_data(None, book_data) == ["gpqa"] and book.selector_stand_in() == "synthetic-bbh"


@pytest.mark.parametrize("model", ["$\\frac{1}{$ m3", "a$b", "cost_$5"])
def test_the_adaptive_path_figure_draws_a_model_name_as_written(model):
    """Its title holds the model's name; parsed as mathtext, a lone '$' failed the layout."""
    import io

    from mbutils.book.adaptive import path_figure

    n = np.arange(1, 6)
    table = pd.DataFrame({"answered": n, "item": n, "answer": [1, 0, 1, 1, 0], "estimate": 0.5, "low": 0.4,
                          "high": 0.6, "random": 0.5, "random_low": 0.3, "random_high": 0.7, "truth": 0.55})
    table.attrs["model"] = model
    fig = path_figure(table)
    fig.savefig(io.BytesIO(), format="png")
    assert fig.axes[0].get_title() == f"one target: {model}"


def _scoring_table():
    rows = []
    for k in (10, 25):
        rows += [{"size": k, "measure": "tau", "accuracy": 0.5, "ability": 0.55, "difference": 0.05, "low": 0.01,
                  "high": 0.09, "verdict": "better", "p_value": 0.01, "detectable": 0.04, "n_runs": 5},
                 {"size": k, "measure": "agreement", "accuracy": 0.7, "ability": 0.7, "difference": 0.0, "low": -0.01,
                  "high": 0.01, "verdict": "within noise", "p_value": 1.0, "detectable": 0.02, "n_runs": 5},
                 {"size": k, "measure": "mdad", "accuracy": 4.5, "ability": float("inf") if k == 10 else 5.0,
                  "difference": float("inf") if k == 10 else 0.5, "low": 0.0, "high": float("inf"),
                  "verdict": "cannot tell", "p_value": 0.5, "detectable": float("nan"), "n_runs": 5},
                 {"size": k, "measure": "error", "accuracy": 3.25, "ability": float("nan"), "difference": float("nan"),
                  "low": float("nan"), "high": float("nan"), "verdict": "not defined", "p_value": float("nan"),
                  "detectable": float("nan"), "n_runs": 5}]
    return pd.DataFrame(rows)


def test_the_scoring_table_says_what_ability_scoring_cannot_give():
    from mbutils.book.adaptive import scoring_display

    shown = scoring_display(_scoring_table())
    first = shown[shown["k"] == 10].set_index("measure")
    assert first.loc["Kendall τ", "ability − accuracy [95% paired CI]"] == "+0.050 [0.010, 0.090]"
    assert first.loc["MDAD (points)", "ability scoring"] == "not reached"
    assert first.loc["estimation error (points)", "accuracy scoring"] == "3.2"
    assert first.loc["estimation error (points)", "ability scoring"] == "—"
    assert first.loc["estimation error (points)", "ability scoring is"] == "not defined"
    second = shown[shown["k"] == 25].set_index("measure")
    assert second.loc["MDAD (points)", "ability − accuracy [95% paired CI]"] == "+0.5 [0.0, open]"
    assert first.loc["MDAD (points)", "ability − accuracy [95% paired CI]"] == "—"  # not reached: no difference


def test_the_scoring_figure_draws_each_measure_s_differences_and_leaves_out_what_was_not_computed():
    from mbutils.book.adaptive import scoring_figure

    fig = scoring_figure({"GPQA": _scoring_table(), "$odd name": _scoring_table()})
    axes = fig.axes
    assert [ax.get_ylabel() for ax in axes] == ["Δ Kendall τ", "Δ pairwise agreement", "Δ MDAD (points)"]
    tau_line = axes[0].lines[0]
    assert list(tau_line.get_ydata()) == [0.05, 0.05]
    mdad_points = [list(line.get_ydata()) for line in axes[2].lines if len(line.get_ydata()) and
                   line.get_linestyle() == "-"]
    assert [0.5] in mdad_points  # k = 10's MDAD was not reached: only k = 25's difference is drawn
    assert [t.get_text() for t in axes[-1].get_xticklabels()] == ["10", "25"]
    fig.savefig(io.BytesIO(), format="png")
