"""A chapter's experiment (mbutils.book.setting): book.configure under each profile, its protocol fitted to
small pools and to the real bundles, and what its banner says."""

from __future__ import annotations

import pytest

from conftest import real_bundle
from helpers import random_benchmark
from mbutils import book
from mbutils.base.errors import BookError
from mbutils.book.profiles import PROFILES


def test_profiles_share_settings_and_state_them(monkeypatch):
    monkeypatch.setenv("MBUTILS_PROFILE", "quick")
    a = book.configure("synthetic-gpqa")
    b = book.configure("synthetic-gpqa", sizes=None, runs=None)
    assert (a.sizes, a.protocol) == (b.sizes, b.protocol)  # same experiment -> one cache entry
    assert a.protocol.n_runs == PROFILES["quick"]["gpqa"].runs
    assert "profile 'quick'" in a.settings_text() and "SYNTHETIC" in a.banner()
    monkeypatch.setenv("MBUTILS_PROFILE", "paper")
    c = book.configure("synthetic-gpqa")
    assert c.protocol.n_runs == 50 and c.sizes == [10, 25, 50, 100, 200]
    assert c.source_counts == [10, 50, 100, 150, 200, 250, 300]
    monkeypatch.setenv("MBUTILS_PROFILE", "huge")
    with pytest.raises(BookError, match="MBUTILS_PROFILE \\(the profile\\) must be one of"):
        book.configure("synthetic-gpqa")


def test_configure_fits_small_bundles_and_says_so(tmp_path, monkeypatch):
    from mbutils.data.bundle import save_bundle

    monkeypatch.setenv("MBUTILS_PROFILE", "quick")
    folder = save_bundle(random_benchmark(n_models=40, subtask_sizes=(60, 40)), tmp_path / "tiny")
    s = book.configure(str(folder))
    assert (s.protocol.n_targets, s.protocol.n_sources) == (13, 27)  # n // 3 targets, the rest sources
    assert s.pool_fitted and "Pool:" in s.banner() and "min(50, n // 3)" in s.banner()
    assert s.sizes == [10, 25, 50] and s.dropped_sizes == [100, 250]  # the seen half has 50 items
    assert "Sizes dropped" in s.banner()
    assert s.source_counts == [10, 27] and s.can_sweep_sources  # the profile's 10, then the whole pool
    assert s.data.kind == "custom"
    tiny = book.configure(str(save_bundle(random_benchmark(n_models=8, subtask_sizes=(40,)), tmp_path / "t8")))
    assert (tiny.protocol.n_sources, tiny.protocol.n_targets) == (6, 2)
    assert not tiny.can_sweep_sources and "needs at least two source counts" in tiny.sweep_note()


def test_real_bundles_come_first_with_a_protocol_fitted_to_their_pool():
    real_bundle("bbh-leaderboard"), real_bundle("mmlu-pro-leaderboard")
    bbh, pro = book.configure("bbh", profile="quick"), book.configure("mmlu-pro", profile="quick")
    assert (bbh.data.name, bbh.data.kind) == ("bbh-leaderboard", "real")
    assert (bbh.protocol.n_sources, bbh.protocol.n_targets) == (52, 26)
    assert (pro.data.name, pro.protocol.n_sources, pro.protocol.n_targets) == ("mmlu-pro-leaderboard", 27, 13)
    assert book.configure("gpqa", profile="quick").pool_fitted is False  # 420 models hold 300 + 50
    choice = book.resolve_data("mmlu-pro", min_models=350)  # a chapter that needs the paper's pool
    assert choice.name == "synthetic-mmlu-pro"
    assert "only 40 complete models" in choice.reason and "only 26 complete models" in choice.reason
    assert book.resolve_data("bbh", target_set="7b_instruct").name == "synthetic-bbh"  # the real pool names none


def test_the_banner_credits_only_the_parameters_the_reader_passed(monkeypatch):
    """'changed by parameters' lists a profile setting only when the reader passed the same-named
    parameter with that value; a value the chapter derives (use_micro's sizes from k) is not theirs."""
    from mbutils.book import setting

    given = {"sizes": [100], "runs": 3, "sources": None}
    monkeypatch.setattr(setting, "reader_parameters", lambda: {"data": "/tmp/x"})
    assert setting._reader_overrides(given) == {}
    monkeypatch.setattr(setting, "reader_parameters", lambda: {"data": "/tmp/x", "runs": 3, "sizes": "50,100"})
    assert setting._reader_overrides(given) == {"runs": 3}
    monkeypatch.setattr(setting, "reader_parameters", lambda: None)  # a script: its arguments are its own
    assert setting._reader_overrides(given) == {"sizes": [100], "runs": 3}
