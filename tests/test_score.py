"""score: the intervals (exact values, coverage by simulation) and every bad input's one message."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import hypergeom

from helpers import run_cli
from mbutils.results.intervals import conformal_quantiles, empirical_interval, hypergeometric_interval

FIXTURES = Path(__file__).resolve().parent / "fixtures"
LM_EVAL = FIXTURES / "lm_eval"
STAMP = "2024-06-26T15-48-21.123456"


run = run_cli


def _refused(err: str, *needles: str) -> None:
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, err


# -- the intervals ------------------------------------------------------------------------------


def test_hypergeometric_interval_is_the_inverted_exact_tests():
    """Brute force over K for a small case: K is in the 90% interval iff both one-sided p-values exceed 5%."""
    n, k = 30, 8
    for x in range(k + 1):
        kept = [big for big in range(n + 1)
                if hypergeom.sf(x - 1, n, big, k) > 0.05 and hypergeom.cdf(x, n, big, k) > 0.05]
        low, high = hypergeometric_interval([x], k, n, 0.9)[0]
        assert (round(low * n), round(high * n)) == (min(kept), max(kept))
    assert hypergeometric_interval([0], 8, 30, 0.9)[0, 0] == 0.0
    assert hypergeometric_interval([8], 8, 30, 0.9)[0, 1] == 1.0


@pytest.mark.parametrize("n,k,level", [(1, 1, 0.9), (5, 2, 0.5), (30, 29, 0.95), (101, 50, 0.999), (448, 100, 0.9),
                                       (448, 448, 0.8)])
def test_hypergeometric_interval_bisection_equals_the_scan_of_every_k(n, k, level):
    """The interval found by bisection is the one a scan of every K from 0 to N keeps, for every count."""
    x = np.arange(k + 1)
    big_k = np.arange(n + 1)[None, :]
    kept = ((hypergeom.sf(x[:, None] - 1, n, big_k, k) > (1 - level) / 2)
            & (hypergeom.cdf(x[:, None], n, big_k, k) > (1 - level) / 2))
    assert kept.any(1).all()
    scanned = np.stack([kept.argmax(1), n - kept[:, ::-1].argmax(1)], axis=1) / n
    assert np.array_equal(hypergeometric_interval(x, k, n, level), scanned)


def test_hypergeometric_interval_covers_by_simulation():
    """Fixed seed: 4,000 random 40-subsets of 300 items with K = 90 correct; coverage >= 90% within noise,
    and equal to the exact coverage (sum over x of P(x) [K in CI(x)]) within 3 standard errors."""
    rng = np.random.default_rng(11)
    n, big_k, k, draws = 300, 90, 40, 4000
    items = np.zeros(n, dtype=int)
    items[:big_k] = 1
    keys = rng.random((draws, n))
    chosen = np.argpartition(keys, k, axis=1)[:, :k]
    hits = items[chosen].sum(1)
    xs = np.arange(k + 1)
    table = hypergeometric_interval(xs, k, n, 0.9)  # the interval of every possible count, looked up per draw
    bounds = table[hits]
    covered = (bounds[:, 0] <= big_k / n) & (big_k / n <= bounds[:, 1])
    exact = float((hypergeom.pmf(xs, n, big_k, k) * ((table[:, 0] <= big_k / n) & (big_k / n <= table[:, 1]))).sum())
    se = np.sqrt(exact * (1 - exact) / draws)
    assert exact >= 0.9
    assert abs(covered.mean() - exact) < 3 * se


def test_conformal_interval_covers_new_errors_by_simulation():
    rng = np.random.default_rng(5)
    calibration = rng.normal(0.01, 0.03, size=200)
    truth = rng.uniform(0.2, 0.6, size=5000)
    estimate = truth + rng.normal(0.01, 0.03, size=5000)
    bounds = empirical_interval(estimate, calibration, 0.9)
    coverage = np.mean((bounds[:, 0] <= truth) & (truth <= bounds[:, 1]))
    assert 0.86 <= coverage <= 0.95
    assert conformal_quantiles([3.0, 1.0, 2.0] * 10, 0.5) == (1.0, 3.0)


# -- bad input ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("score")
    code, _, err = run("import", "lm-eval", LM_EVAL, "--out", root / "bundle", "--quiet")
    assert code == 0, err
    code, _, err = run("build-micro", "--data", root / "bundle", "--selector", "random", "--k", 5, "--seed", 2,
                       "--out", root / "micro", "--quiet")
    assert code == 0, err
    return root


def test_a_responses_csv_of_several_models(built, tmp_path):
    bundle = pd.read_csv(built / "bundle" / "responses.csv")
    bundle.to_csv(tmp_path / "responses.csv", index=False)
    code, out, err = run("score", built / "micro", tmp_path / "responses.csv", "--format", "json", "--level", 0.8)
    assert code == 0, err
    scored = json.loads(out)
    assert list(scored) == bundle["model"].tolist()
    items = pd.read_csv(built / "micro" / "items.csv")["item"].tolist()
    for row in bundle.itertuples(index=False):
        expected = 100 * bundle.loc[bundle["model"] == row.model, items].to_numpy().mean()
        assert scored[row.model]["estimate"] == pytest.approx(expected)
        assert scored[row.model]["level"] == 0.8
    code, text, err = run("score", built / "micro", tmp_path / "responses.csv")
    assert code == 0 and "exact finite-population (hypergeometric) interval" in text


def test_a_log_of_another_task(built, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    source = LM_EVAL / "tiny-3" / f"samples_piqa_{STAMP}.jsonl"
    (other / f"samples_hellaswag_{STAMP}.jsonl").write_text(source.read_text())
    code, _, err = run("score", built / "micro", other)
    assert code == 1
    _refused(err, "none of these logs is of a task this micro-benchmark", "hellaswag", "another task or bundle")


def test_items_missing_from_the_log(built):
    chosen = pd.read_csv(built / "micro" / "items.csv")["item"].tolist()
    only = "piqa" if any(c.startswith("arc_easy") for c in chosen) else "arc_easy"
    code, _, err = run("score", built / "micro", LM_EVAL / "tiny-3" / f"samples_{only}_{STAMP}.jsonl")
    assert code == 1
    _refused(err, "has no log of task", "arc_easy" if only == "piqa" else "piqa", "lm-eval tasks")


def test_a_folder_built_from_another_bundle(built, tmp_path):
    """Results of another bundle (a synthetic stand-in) against this folder: refused, naming the bundle."""
    from mbutils import load_benchmark

    bench = load_benchmark("synthetic-gpqa")
    pd.DataFrame(bench.correct[:2], columns=bench.items).assign(model=bench.models[:2]).to_csv(
        tmp_path / "responses.csv", index=False)
    code, _, err = run("score", built / "micro", tmp_path / "responses.csv")
    assert code == 1
    _refused(err, "micro-benchmark of 'bundle'", "another task or bundle")


def test_a_corrupt_folder(built, tmp_path):
    import shutil

    copy = tmp_path / "micro"
    shutil.copytree(built / "micro", copy)
    items = copy / "items.csv"
    items.write_text(items.read_text().replace("0.2", "0.3", 1))
    code, _, err = run("score", copy, LM_EVAL / "tiny-3")
    assert code == 1
    _refused(err, "items.csv", "changed since it was written", "build it again")
    (copy / "manifest.json").unlink()
    code, _, err = run("score", copy, LM_EVAL / "tiny-3")
    _refused(err, "manifest.json", "missing")
    code, _, err = run("score", tmp_path / "nothing", LM_EVAL / "tiny-3")
    assert code == 1
    _refused(err, "no such micro-benchmark folder")


def test_bad_responses_files(built, tmp_path):
    bundle = pd.read_csv(built / "bundle" / "responses.csv")
    chosen = pd.read_csv(built / "micro" / "items.csv")["item"].tolist()
    bundle.drop(columns=["model"]).to_csv(tmp_path / "nomodel.csv", index=False)
    code, _, err = run("score", built / "micro", tmp_path / "nomodel.csv")
    _refused(err, "needs a 'model' column")
    bad = bundle.copy()
    bad[chosen[0]] = bad[chosen[0]].astype(object)
    bad.loc[0, chosen[0]] = "maybe"
    bad.to_csv(tmp_path / "bad.csv", index=False)
    code, _, err = run("score", built / "micro", tmp_path / "bad.csv")
    assert code == 1
    _refused(err, "row 2", "must be 0 or 1")
    bundle.drop(columns=[chosen[1]]).to_csv(tmp_path / "short.csv", index=False)
    code, _, err = run("score", built / "micro", tmp_path / "short.csv")
    _refused(err, "1 of the micro-benchmark's 5 items are missing", chosen[1])
    code, _, err = run("score", built / "micro", tmp_path / "short.csv", LM_EVAL)
    _refused(err, "not both")
    code, _, err = run("score", built / "micro", tmp_path / "absent.csv")
    _refused(err, "no such file")


def test_confidence_needed_but_absent(built, tmp_path):
    code, _, err = run("build-micro", "--data", built / "bundle", "--selector", "anchor_points", "--k", 3,
                       "--out", tmp_path / "anchor", "--quiet")
    assert code == 0, err
    pd.read_csv(built / "bundle" / "responses.csv").to_csv(tmp_path / "responses.csv", index=False)
    code, _, err = run("score", tmp_path / "anchor", tmp_path / "responses.csv")
    assert code == 1
    _refused(err, "confidence", "anchor_points_binary")


def test_level_is_checked_at_the_command_line(built):
    code, _, err = run_usage("score", built / "micro", LM_EVAL, "--level", 1.5)
    assert code == 2


def run_usage(*args):
    try:
        return run(*args)
    except SystemExit as exit_:
        return exit_.code, "", ""
