"""Sentences computed from the book's numbers (mbutils.book.findings.claims): the words follow the numbers, and
each claim recomputes from its own payload."""

from __future__ import annotations

import numpy as np
import pandas as pd

from helpers import mdad_rows


def test_a_claim_changes_its_words_when_its_numbers_change():
    from mbutils.book.findings import claims

    mdad = mdad_rows([("random", 10, 12.0), ("random", 50, 4.0), ("anchor_points", 10, 8.0), ("anchor_points", 50, 4.5)])
    mdad["ci_high"] = mdad["mdad"] + 1.0
    assert claims.catch_up({"B": mdad}).text == "B: from k = 50 (upper bounds at most 1.0 points)"
    mdad.loc[2, "mdad"], mdad.loc[2, "ci_high"] = 12.5, 13.0  # anchor no better at k = 10
    assert claims.catch_up({"B": mdad}).text == "B: from k = 10 (upper bounds at most 1.0 points)"
    mdad.loc[1, "mdad"] = np.nan  # random not reached at the largest size
    assert claims.catch_up({"B": mdad}).text == ("B: not within the sizes run (an MDAD not reached, or an interval "
                                                 "open above, at k = 50)")
    table = mdad_rows([("random", 10, np.nan), ("random", 25, 3.0)])
    assert claims.not_reached(table, 0.9).text == "the 90% level is not reached in 1 of the 2 cells"
    assert claims.not_reached(table.fillna(9.0), 0.9).text == "the 90% level is reached in every one of the 2 cells"
    summary = pd.DataFrame({"selector": "random", "size": [10, 50, 100], "tau": [0.25, 0.46, 0.81]})
    assert claims.tau_from(summary).text.endswith("stays at or above 0.8 from k = 100 (τ = 0.81)")
    assert "stays below 0.9" in claims.tau_from(summary, level=0.9).text
    payload = claims.tau_from(summary).payload()
    assert claims.recompute(payload).text == claims.tau_from(summary).text
    tampered = payload.replace("0.81", "0.79")
    assert claims.recompute(tampered).text != claims.tau_from(summary).text


def test_every_claim_recomputes_from_its_own_payload():
    """Each claim function's payload holds only its own inputs (a stray key would break recompute)."""
    from mbutils.book.findings import claims

    mdad = mdad_rows([("random", 10, 12.0), ("subtask_equal", 10, 9.5), ("random", 25, 6.0), ("subtask_equal", 25, 6.5)])
    mdad["ci_low"], mdad["ci_high"] = mdad["mdad"] - 1, mdad["mdad"] + 1
    summary = pd.DataFrame({"selector": "random", "size": [10, 25], "tau": [0.3, 0.5]})
    sweep = mdad.assign(n_sources=[10, 10, 50, 50])
    made = [claims.catch_up({"B": mdad}), claims.not_reached(mdad, 0.8), claims.tau_from(summary),
            claims.noise_yardstick(mdad, 1), claims.noise_yardstick(mdad, 3), claims.unseen_loss(mdad, mdad),
            claims.sources_spread(sweep), claims.versus_random({"B": mdad}, "subtask_equal"),
            claims.best_at_size(mdad, 10), claims.best_at_size(mdad, 25),
            # benchmarks in the page's order, which is not the alphabet's: a payload keeps it
            claims.catch_up({"GPQA": mdad, "BBH": mdad}), claims.versus_random({"GPQA": mdad, "BBH": mdad}, "subtask_equal")]
    for claim in made:
        assert claims.recompute(claim.payload()).text == claim.text, claim.fn
    assert made[3].value == 2.5 and "differ by up to 2.5 points" in made[3].text
    assert made[-4].text.startswith("no method is more reliable than every other beyond the noise at k = 10")
    assert made[-2].text.startswith("GPQA: from k = ")


def test_tau_from_names_the_size_from_which_tau_stays_at_the_level():
    """τ = 1.00, 0.74, 0.78 at k = 25, 50, 100 reaches 0.8 at k = 25 but does not stay there."""
    from mbutils.book.findings import claims

    dips = pd.DataFrame({"selector": "random", "size": [10, 25, 50, 100], "tau": [0.5, 1.0, 0.74, 0.78]})
    text = claims.tau_from(dips).text
    assert "reaches 0.8 at k = 25 (τ = 1.00) but does not stay there (τ = 0.78 at k = 100)" in text
    assert "from k = 25" not in text
    back = pd.DataFrame({"selector": "random", "size": [10, 25, 50, 100], "tau": [0.5, 0.9, 0.7, 0.85]})
    assert claims.tau_from(back).text.endswith("stays at or above 0.8 from k = 100 (τ = 0.85)")


def test_unseen_loss_ranks_the_size_of_the_change_under_the_noise_rule():
    """Changes of -3 and -5 points: the larger change is -5 (the old code named -3 "most"), and a
    ranking needs the noise rule's intervals to tell the two changes apart."""
    from mbutils.book.findings import claims

    seen = pd.DataFrame({"selector": ["x", "y"], "size": 10, "mdad": [10.0, 10.0]})
    tight = pd.DataFrame({"selector": ["x", "y"], "size": 10, "mdad": [7.0, 5.0], "ci_low": [7.0, 5.0],
                          "ci_high": [7.0, 5.0]})
    text = claims.unseen_loss(seen, tight).text
    assert "falls most (-5.0 points" in text and "changes least (-3.0)" in text, text
    # wide intervals: the same changes are within noise under noise.compare (old rule: mean half-width + 0.5)
    wide = tight.assign(ci_low=[6.0, 4.0], ci_high=[8.0, 6.5])
    assert "no method is singled out" in claims.unseen_loss(seen, wide).text
    for unseen in (tight, wide):
        claim = claims.unseen_loss(seen, unseen)
        assert claims.recompute(claim.payload()).text == claim.text
