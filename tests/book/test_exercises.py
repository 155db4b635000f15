"""Known values of the exercise helpers in mbutils.book.exercises: the random-sampling error the chapters
measures, data, synthetic, tables, differences, guidance and target_sets use, and the helpers the selector
and adaptive chapters' solutions use (Neyman allocation, stratified variance, DPP moments)."""

from __future__ import annotations

import numpy as np
import pytest

from mbutils.book import exercises
from mbutils.book.exercises import neyman_allocation, stratified_variance, within_stratum_sd


def test_random_sampling_error_known_values():
    # N = 4 items, c = 2 right, k = 2 drawn: X = 0, 1, 2 with probabilities 1/6, 4/6, 1/6;
    # |X/2 - 1/2| = 1/2, 0, 1/2, so the expected error is 1/6 of 100 points.
    assert exercises.random_sampling_error(2, 4, 2) == pytest.approx(100 / 6)
    # all or nothing right, or every item drawn: no error
    np.testing.assert_allclose(exercises.random_sampling_error([0, 4], 4, 2), [0, 0], atol=1e-12)
    assert exercises.random_sampling_error(3, 10, 10) == pytest.approx(0, abs=1e-12)
    # k = 1: E|X - p| = 2p(1 - p)
    assert exercises.random_sampling_error(3, 10, 1) == pytest.approx(100 * 2 * 0.3 * 0.7)
    assert exercises.random_sampling_error(np.array([[1, 2], [3, 4]]), 10, 3).shape == (2, 2)
    with pytest.raises(ValueError):
        exercises.random_sampling_error(1, 4, 5)


def test_random_sampling_error_matches_simulation():
    rng = np.random.default_rng(0)
    items = np.zeros(50)
    items[:20] = 1
    draws = np.array([items[rng.choice(50, 10, replace=False)].mean() for _ in range(20000)])
    assert 100 * np.abs(draws - 0.4).mean() == pytest.approx(exercises.random_sampling_error(20, 50, 10), abs=0.2)


def test_neyman_allocation_is_proportional_to_size_times_sd():
    rng = np.random.default_rng(0)
    assert neyman_allocation(8, [10, 10], [1.0, 3.0], rng).tolist() == [2, 6]
    assert neyman_allocation(12, [10, 20, 30], [1.0, 1.0, 1.0], rng).tolist() == [2, 4, 6]


def test_neyman_allocation_caps_at_the_stratum_size_and_sums_to_k():
    rng = np.random.default_rng(1)
    # unconstrained quotas 6.7 and 3.3: the first stratum holds only 2 items
    assert neyman_allocation(10, [2, 100], [100.0, 1.0], rng, minimum=0).tolist() == [2, 8]
    for seed in range(20):
        r = np.random.default_rng(seed)
        sizes = r.integers(1, 30, 7)
        sds = r.random(7) * (r.random(7) > 0.3)
        k = int(r.integers(0, sizes.sum() + 1))
        counts = neyman_allocation(k, sizes, sds, r)
        assert counts.sum() == k and (counts <= sizes).all() and (counts >= 0).all()
        if k >= 7:
            assert (counts >= 1).all()


def test_neyman_allocation_floor_and_zero_sd_strata():
    rng = np.random.default_rng(2)
    assert neyman_allocation(6, [5, 5, 5], [0.0, 1.0, 1.0], rng, minimum=0).tolist() == [0, 3, 3]
    assert neyman_allocation(7, [5, 5, 5], [0.0, 1.0, 1.0], rng).tolist() == [1, 3, 3]
    # no spread anywhere: proportional to size
    assert neyman_allocation(6, [4, 8], [0.0, 0.0], rng).tolist() == [2, 4]
    # k below the number of strata: no floor
    assert neyman_allocation(2, [5, 5, 5], [1.0, 2.0, 3.0], rng).tolist() == [0, 1, 1]
    with pytest.raises(ValueError):
        neyman_allocation(20, [5, 5], [1.0, 1.0], rng)


def test_within_stratum_sd_and_stratified_variance_known_values():
    scores = np.array([[1, 0, 1, 1], [0, 0, 1, 0]], dtype=float)
    labels = np.array([0, 0, 1, 1])
    # model 0: variances 0.5 and 0; model 1: 0 and 0.5 (ddof 1); root mean = 0.5
    assert np.allclose(within_stratum_sd(scores, labels), [0.5, 0.5])
    # one item per stratum: (1/2)^2 (1 - 1/2) 0.5 / 1 = 0.0625 -> 625 points^2 for each model
    assert np.allclose(stratified_variance(scores, labels, [1, 1]), [625.0, 625.0])
    assert np.allclose(stratified_variance(scores, labels, [2, 2]), [0.0, 0.0])
    assert np.isnan(stratified_variance(scores, labels, [0, 2])).all()


def test_stratified_variance_matches_simulation():
    rng = np.random.default_rng(3)
    scores = (rng.random((3, 60)) < np.linspace(0.1, 0.9, 60)).astype(float)
    labels = np.repeat([0, 1, 2], 20)
    counts = np.array([2, 5, 3])
    draws = []
    for _ in range(4000):
        items = np.concatenate([rng.choice(np.flatnonzero(labels == h), c, replace=False)
                                for h, c in enumerate(counts)])
        w = (20 / (counts[labels[items]] * 60.0))
        draws.append(100 * scores[:, items] @ w)
    assert np.allclose(np.var(draws, axis=0), stratified_variance(scores, labels, counts), rtol=0.1)


def test_dpp_moments_known_values_and_simulation():
    from mbutils.methods.dpp import sample_projection_dpp
    from mbutils.book.exercises import dpp_moments

    rng = np.random.default_rng(4)
    Q, _ = np.linalg.qr(rng.normal(size=(30, 4)))
    pi = (Q**2).sum(axis=1)
    ones, w = np.ones((1, 30)), np.ones(30)
    mean, var = dpp_moments(Q, ones, w)
    assert np.allclose(mean, 4) and np.allclose(var, 0, atol=1e-12)   # a projection DPP draws exactly k items
    indicator = np.eye(30)[[7]]
    mean, var = dpp_moments(Q, indicator, w)
    assert np.allclose(mean, pi[7]) and np.allclose(var, pi[7] * (1 - pi[7]))
    y = (rng.random((2, 30)) < 0.5).astype(float)
    mean, var = dpp_moments(Q, y, np.full(30, 0.25))
    draws = np.array([y[:, sample_projection_dpp(Q, rng)].mean(axis=1) for _ in range(4000)])
    assert np.allclose(draws.mean(axis=0), mean, atol=0.02)
    assert np.allclose(draws.var(axis=0), var, rtol=0.12)


# ----------------------------------------------------------------------------- named checks (issue 64)
import json

import pandas as pd

from mbutils.book.exercises import CheckFailed, check, check_mode, check_summary, compare, exercise_status, grading, \
    wrong_answers


@pytest.fixture(autouse=False)
def report_mode():
    check_mode("report")
    yield
    check_mode("raise")


def test_a_failed_check_says_what_was_expected_and_what_was_found():
    with pytest.raises(CheckFailed) as err:
        check("ex-gpqa-tau", "tau_runs", 0.8661, 0.8691)
    assert str(err.value) == ("check ex-gpqa-tau: tau_runs — expected 0.8691 (the library's), found 0.8661 "
                              "(rule: within 1e-09)")
    assert isinstance(err.value, AssertionError)  # a wrong solution fails the build as an assert would
    assert check("ex-gpqa-tau", "tau_runs", 0.8691 + 1e-12, 0.8691)


def test_a_name_still_ellipsis_is_not_done_and_raises_nothing(capsys):
    assert check("ex-x", "tau", ..., 0.5) is False
    assert "check ex-x: tau — not done" in capsys.readouterr().out
    assert exercise_status("ex-x", tau=..., other=1).startswith("exercise ex-x: not done (tau still `...`)")


def test_report_mode_prints_the_failure_and_goes_on(report_mode, capsys):
    assert check("ex-x", "t", 2.0, 1.0) is False
    assert "expected 1 (the library's), found 2" in capsys.readouterr().err
    table = check_summary()
    assert "ex-x" in set(table["exercise"]) and table.set_index("exercise").loc["ex-x", "status"] == "failed"


def test_tables_are_compared_by_index_and_named_columns():
    expected = pd.DataFrame({"error": [1.0, 2.0], "tau": [0.5, np.nan]}, index=pd.Index([10, 25], name="size"))
    assert compare(expected.iloc[::-1].assign(extra=1), expected) is None  # order and other columns do not matter
    assert "column 'tau': at 10: expected 0.5" in compare(expected.assign(tau=[0.6, np.nan]), expected, source="")
    assert "expected the columns error" in compare(expected.drop(columns="error"), expected)
    assert "expected the index" in compare(expected["error"].iloc[:1], expected["error"])
    assert "found a str" in compare("0.5", 0.5) or compare("0.5", 0.5).startswith("expected 0.5")
    assert "2 of 3 values differ" in compare(np.array([1.0, 5.0, 6.0]), np.array([1.0, 2.0, 3.0]))


def test_of_reads_the_answer_through_a_function_and_an_unreadable_answer_fails(report_mode):
    table = pd.DataFrame({"a": [1.0, 2.0]})
    assert check("ex-x", "t", table, [1.0, 2.0], of=lambda t: t["a"].to_numpy())
    assert not check("ex-x", "t", pd.DataFrame({"b": [1.0]}), [1.0], of=lambda t: t["a"].to_numpy())
    assert check("ex-x", "t", ..., [1.0], of=lambda t: t["a"]) is False  # not done: the function is not called


def test_choices_record_an_answer_and_refuse_another_letter(report_mode):
    assert check("q-x", "answer", "B", choices="ABCD")
    assert not check("q-x", "answer", "Z", choices="ABCD")


@pytest.mark.parametrize("right", [0.8691, 3, np.array([0.1, 0.2]), np.array([1, 2]), np.array([], dtype=int),
                                   pd.Series([1.0, 2.0], index=["a", "b"]), ["random", "mine"], True, "B",
                                   pd.DataFrame({"x": [1.0, 2.0], "flag": [True, False]})])
def test_every_kind_of_answer_has_wrong_answers_a_check_rejects(right):
    wrong = wrong_answers(right)
    assert wrong
    for value in wrong:
        assert compare(value, right) is not None, (right, value)


def test_the_grader_context_logs_and_swallows_errors(tmp_path, monkeypatch, capsys):
    log = tmp_path / "log.jsonl"
    monkeypatch.setenv("MBUTILS_CHECKS_LOG", str(log))
    with grading("ex-y"):
        check("ex-y", "a", 2.0, 1.0)  # failed, not raised: the grader goes on
        undefined_name  # noqa: F821  (a name the student never set)
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["grading"], r["status"]) for r in records] == [("ex-y", "failed"), ("ex-y", "error")]
    assert "NameError" in records[1]["message"]


def test_mutation_mode_logs_whether_wrong_answers_fail(tmp_path, monkeypatch):
    log = tmp_path / "log.jsonl"
    monkeypatch.setenv("MBUTILS_CHECKS_LOG", str(log))
    monkeypatch.setenv("MBUTILS_CHECKS_MUTATE", "1")
    check("ex-z", "good", 0.5, 0.5)
    check("ex-z", "loose", 0.5, 0.5, atol=1e6, rule="anything goes")  # a check that tests nothing
    good, loose = [json.loads(line) for line in log.read_text().splitlines()]
    assert good["mutants"] == 2 and good["mutants_passed"] == []
    assert loose["mutants_passed"], "a check that passes whatever the answer is found out"
