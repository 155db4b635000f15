"""How much a build computes (mbutils.book.profiles): the held-out check's plan, fitted to the pool, per
profile."""

from __future__ import annotations

from mbutils.book.profiles import HELD_OUT, held_out_plan


def test_held_out_plan_fits_the_pool():
    assert held_out_plan(420, "default") == HELD_OUT["default"]
    for n in (5, 8, 14, 78):
        plan = held_out_plan(n, "paper")
        assert plan.folds * plan.fold_size <= n - 3 and plan.folds >= 1
    assert held_out_plan(4, "default").folds == 1 and held_out_plan(3, "default").folds == 0
    assert held_out_plan(420, "quick", folds=3, fold_size=7, card_runs=4) == type(HELD_OUT["quick"])(3, 7, 4, 5)
    assert held_out_plan(420, "quick", calibration_folds=8).calibration_folds == 8


def test_the_quick_preview_cross_fits_over_fewer_folds():
    assert [held_out_plan(420, p).calibration_folds for p in ("quick", "default", "paper")] == [5, 10, 10]
