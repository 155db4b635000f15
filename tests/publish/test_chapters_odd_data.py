"""Every benchmark and selector chapter, re-run on a generated bundle whose counts differ from every shipped
one (13 models, 97 items in 3 subtasks, 5 answer options), states that bundle's facts and no shipped one's."""

from __future__ import annotations

import csv
import html
import re
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from mbutils.publish.chapters import chapter_parameters, run_chapter

CHAPTERS = ("sel_random", "sel_confidence", "sel_diversity", "sel_anchor", "sel_irt", "adaptive",
            "bench_gpqa", "bench_bbh", "bench_mmlu_pro", "bench_mmlu")
#: Facts of the shipped bundles and of the paper's data; a sentence may hold one only with a citation.
SHIPPED_FACTS = ("448", "224 ", "5,761", "2,880", "12,032", "6,012", "10,631", "5,306", "420 models", "409 models",
                 "447 models", "366 models", "25%", "four options", "ten options", "single subtask",
                 "24 subtasks", "14 categories", "57 subjects")
CITED = re.compile(r"et al\.|as published|\(\d{4}\)")


def odd_bundle(folder):
    """13 models x 97 items in subtasks of 30, 33 and 34 items with 5 options each; odd names."""
    rng = np.random.default_rng(7)
    folder.mkdir()
    sizes, subs = [30, 33, 34], ["topic_x", "topic_y", "topic_z"]
    items = [f"{s}-q{i:03d}" for s, n in zip(subs, sizes) for i in range(n)]
    subtask = [s for s, n in zip(subs, sizes) for _ in range(n)]
    ability = np.linspace(-1, 1.5, 13)
    p = 0.2 + 0.8 / (1 + np.exp(-(ability[:, None] - rng.normal(0, 1, len(items))[None, :])))
    correct = (rng.random(p.shape) < p).astype(int)
    with open(folder / "responses.csv", "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["model", *items])
        out.writerows([f"lab{i % 4}/odd-model-{i:02d}", *row] for i, row in enumerate(correct))
    with open(folder / "items.csv", "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["item", "subtask", "n_options"])
        out.writerows([i, s, 5] for i, s in zip(items, subtask))
    return folder


def page_text(path) -> str:
    """The page as a reader reads it: no code cells, scripts or styles."""
    text = path.read_text(encoding="utf-8")
    text = re.sub(r"<(script|style)[^>]*>.*?</\1>", " ", text, flags=re.S)
    text = re.sub(r'<div class="jp-CodeMirrorEditor[^"]*"[^>]*>.*?</pre>', " ", text, flags=re.S)  # code cells' sources
    text = re.sub(r"<code[^>]*>.*?</code>", " ", text, flags=re.S)  # inline code: names a reader types
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", text)))


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    root = tmp_path_factory.mktemp("odd")
    bundle = odd_bundle(root / "oddbench")

    def run(chapter):
        try:
            return chapter, run_chapter(chapter, {"data": str(bundle), "runs": 3}, root / chapter, profile="quick")
        except Exception as err:  # reported per chapter below
            return chapter, err

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(run, CHAPTERS))


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_a_chapter_on_a_readers_bundle_states_that_bundles_facts(pages, chapter):
    result = pages[chapter]
    if isinstance(result, Exception):
        pytest.fail(f"{chapter} did not run on the odd bundle: {result}")
    text = page_text(result)
    assert "run on oddbench" in text, "the title must name the bundle the page ran on"
    if chapter.startswith("bench_"):
        assert "13 models" in text and "97 items in 3 subtasks of 30 to 34 items" in text and "5 answer options" in text and "20%" in text
    internal = [n for n in (*chapter_parameters(chapter), "bbh-leaderboard", "mmlu-pro-leaderboard", "mmlu-pro-tiger-lab")
                if ("_" in n or "-" in n) and re.search(rf"(?<![\w./-]){re.escape(n)}(?![\w/-])", text)]
    assert not internal, f"{chapter} shows package identifiers to its reader: {internal}"
    wrong = [s.strip() for s in re.split(r"(?<=[.;:])\s+", text)
             if any(fact in s for fact in SHIPPED_FACTS) and not CITED.search(s)]
    assert not wrong, f"{chapter} states shipped-data facts without a citation: {wrong[:3]}"
