"""Display names (mbutils.base.names): column and target-set labels, yes/no, the display name of a
selector or target set, and counted nouns."""

from __future__ import annotations

import numpy as np
import pytest

from mbutils.base import names as styles


def test_column_target_set_and_boolean_names():
    assert styles.column_label("run_ci_low") == "run CI low"
    assert styles.column_label("tau_sd") == "τ s.d."
    assert styles.column_label("n_pairs") == "pairs"
    assert styles.column_label("tau_sd_unseen") == "τ s.d. unseen"
    assert styles.column_label("mdad") == "MDAD"
    assert styles.column_label("MDAD at 0.8") == "MDAD at 0.8"  # written for readers: kept
    assert styles.column_label(25) == 25
    assert styles.target_set_label("7b_instruct") == "7B instruct"
    assert styles.target_set_label("70b_base") == "70B base"
    assert (styles.yes_no(True), styles.yes_no(np.False_)) == ("yes", "no")
    assert styles.display_name("selector", "random") == "Random"
    assert styles.display_name("target_set", "70b_instruct") == "70B instruct"
    with pytest.raises(ValueError, match="kind"):
        styles.display_name("colour", "x")


def test_count_noun_is_plural_aware():
    assert styles.count_noun(1, "run") == "1 run"
    assert styles.count_noun(3, "run") == "3 runs"
    assert styles.count_noun(0, "pair") == "0 pairs"
    assert styles.count_noun(1000, "item") == "1,000 items"
    assert styles.count_noun(np.int64(1), "model") == "1 model"
    assert styles.count_noun(2, "child", "children") == "2 children"
    assert styles.count_noun(1, "child", "children") == "1 child"


def test_possessive_of_a_name_ending_in_s():
    assert styles.possessive("Random") == "Random's"
    assert styles.possessive("Anchor Points") == "Anchor Points'"


def test_a_sentence_never_recases_a_data_name():
    from mbutils.book.display import sentence_start

    assert sentence_start("bbh14x72: from k = 50") == "Per bundle, bbh14x72: from k = 50"
    assert sentence_start("gpqa has 448 items") == "In this build, gpqa has 448 items"
    assert sentence_start("mybench has 3 models", {"mybench"}) == "In this build, mybench has 3 models"
    assert sentence_start("no method is lower") == "No method is lower"
