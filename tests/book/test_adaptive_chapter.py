"""What the adaptive-testing chapter shows (mbutils.book.adaptive): the data its tests run on under each
profile, and its path figure."""

from __future__ import annotations

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
