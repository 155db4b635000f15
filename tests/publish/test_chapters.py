"""Every chapter executes on a synthetic bundle, through papermill with small parameters
(:func:`mbutils.publish.chapters.run_chapter`), and on the real data, as the strict quick book build
executed it (the session fixture ``quick_book``, which the browser tests read too); plus what
:mod:`mbutils.publish.chapters` reads of a chapter (its cells, parameters and notebook) and the book's
table of contents.

The synthetic executions run two at a time in a niced background process started with the
session's first test (:mod:`chapter_batch`);
each test then inspects one executed notebook: no error, no stderr (the strict book build would
warn), an image in every cell tagged ``figure``, an HTML page, and the glue keys the front
page reads.
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

import nbformat
import numpy as np
import pytest

from chapter_batch import ChapterBatch
from conftest import REPO, session_env, stopped_with_the_session
from mbutils import book
from mbutils.book.numbering import chapter_number
from mbutils.publish.chapters import (ChapterError, chapter_names, chapter_parameters, chapter_path, is_notebook_source, parameters_cell, parse_value, read_chapter, run_chapter, to_notebook)

SMALL = {"runs": 2, "sizes": "10,25", "sources": 60, "targets": 12, "seed": 0}
VARIANTS = ("synthetic", "real")


def params_for(chapter: str) -> dict:
    """Small parameters for a chapter on the synthetic bundles (its real-data run is the quick book's)."""
    d = "synthetic-gpqa"
    if chapter == "data":
        return {"data": d}
    if chapter == "synthetic":  # a missing real bundle is noted and skipped
        return {"data": "no-such-bundle:synthetic-bbh,gpqa:synthetic-gpqa", "others": "synthetic-bbh", "runs": 3}
    if chapter == "measures":
        return {**SMALL, "data": d, "fig1_data": d}
    if chapter == "sel_random":  # random sampling is cheap: add a benchmark with subtasks
        return {**SMALL, "data": f"{d},synthetic-bbh", "picture_data": "synthetic-bbh",
                "picture_k": 30}
    if chapter.startswith("sel_"):  # variants run on the profile's bundles among data: here d
        return {**SMALL, "data": d, "picture_data": d, "picture_k": 10}
    if chapter == "adaptive":  # adaptive tests on the GPQA stand-in only: small and quick
        return {**SMALL, "data": d, "picture_data": d, "picture_k": 20}
    if chapter.startswith("bench_"):
        return {**SMALL, "data": d, "source_counts": "20,60", "source_runs": 1}
    if chapter == "target_sets":
        return {"cases": "synthetic-gpqa:7b_instruct", "runs": 2, "sizes": "10,25", "sources": 60, "seed": 0}
    if chapter == "beyond":  # the estimators on the GPQA stand-in, no learner: small and quick
        return {**SMALL, "data": d, "learners": "", "frontier": 0.3}
    if chapter in ("guidance", "replication"):
        return {**SMALL, "data": d}
    if chapter == "tables":
        return {**SMALL, "data": d, "per_subtask_data": "synthetic-bbh", "per_subtask_count": 2}
    if chapter == "differences":
        return {**SMALL, "data": d, "confidence_data": "synthetic-gpqa"}
    if chapter == "use_micro":  # the loop on the GPQA stand-in, the second check on the real GPQA
        return {"data": d, "second_data": "gpqa", "k": 40, "sizes": "25", "checked": "random,anchor_points_binary",
                "folds": 2, "fold_size": 5, "card_runs": 2}
    if chapter == "micro_shipped":  # reads the shipped cards only: nothing to make small
        return {}
    raise AssertionError(f"no small parameters for chapter {chapter!r}; add them here")


CASES = [(c, v) for c in chapter_names() for v in VARIANTS]


def _from_book(build: Path, chapter: str):
    """(html page, executed notebook) of ``chapter`` in a book build (the notebook from the build's
    execution cache: the newest run of the page's source), or the error saying it is missing."""
    from jupyter_cache import get_cache

    html = build / "html" / "chapters" / f"{chapter}.html"
    runs = [(r.created, r.pk, cache) for cache in map(get_cache, sorted(build.glob(".jupyter_cache*")))
            for r in cache.list_cache_records() if Path(r.uri).parts[-2:] == ("chapters", f"{chapter}.md")]
    if not html.is_file() or not runs:
        return FileNotFoundError(f"the quick book build in {build} holds no executed page {chapter!r}")
    _, pk, cache = max(runs, key=lambda run: run[0])
    return html, cache.get_cache_bundle(pk).nb


_STARTED: dict = {}


def start_in_background(tmp_path_factory, items) -> ChapterBatch:
    """Start the synthetic runs of every chapter, two at a time, niced, in a background process;
    conftest calls this with the session's first test (nothing when no selected test reads them)."""
    if not _STARTED and any("executed" in item.fixturenames for item in items):
        out = tmp_path_factory.mktemp("chapters") / "synthetic"
        runs = [(chapter, chapter, params_for(chapter), out, True) for chapter in chapter_names()]
        checks = out.parent / "checks"  # every exercise check's record, wrong answers tried (issue 64)
        checks.mkdir()
        batch = ChapterBatch(runs, session_env(MBUTILS_JOBS="1", MBUTILS_PROFILE="quick", MBUTILS_CHECKS_LOG=str(checks),
                                               MBUTILS_CHECKS_MUTATE="1"), out.parent / "batch")
        _STARTED["batch"] = stopped_with_the_session(batch)
        _STARTED["checks"] = checks
    return _STARTED.get("batch")


@pytest.fixture(scope="session")
def executed(tmp_path_factory, quick_book, request):
    """(chapter, variant) -> (html path, executed notebook) or the exception raised: "synthetic" run
    with small parameters (in the background from the session's first test on), "real" as the quick
    book build executed it on the shipped data."""
    batch = start_in_background(tmp_path_factory, request.session.items)
    os.environ.update({"MBUTILS_JOBS": "1", "MBUTILS_PROFILE": "quick"})  # as the runs had it, for the tests
    done = {(chapter, "synthetic"): (html, nbformat.read(html.with_suffix(".ipynb"), as_version=4))
            if isinstance(html, Path) else html for chapter, html in batch.results().items()}
    chapters = chapter_names()
    return {**done, **{(c, "real"): _from_book(quick_book, c) for c in chapters}}


def _result(executed, chapter, variant):
    result = executed[chapter, variant]
    if isinstance(result, Exception):
        pytest.fail(f"{chapter} ({variant}) did not execute: {result}")
    return result


@pytest.mark.parametrize("chapter,variant", CASES)
def test_chapter_executes_with_every_figure(executed, chapter, variant):
    html, nb = _result(executed, chapter, variant)
    assert html.exists() and html.stat().st_size > 10_000
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert "parameters" in code[0].metadata.get("tags", [])
    figure_cells = [c for c in code if "figure" in c.metadata.get("tags", [])]
    # micro_shipped reads stored cards (no experiment to picture): its tables are its content
    assert figure_cells or chapter == "micro_shipped", f"{chapter} has no figure cell"
    for cell in code:
        for output in cell.get("outputs", []):
            assert output.output_type != "error", f"{chapter}: error in cell {cell.execution_count}"
            assert not (output.output_type == "stream" and output.name == "stderr"), (
                f"{chapter}: stderr in cell {cell.execution_count}: {output.text[:300]}")
    for cell in figure_cells:
        shown = [o.get("data", {}).get("text/html", "") for o in cell.outputs]
        images = [h for h in shown if '<figure class="mbutils-figure"' in h]
        notes = [h for h in shown if 'class="admonition' in h]  # a note saying why the data allow no figure
        assert images or notes, f"{chapter} ({variant}): figure cell {cell.execution_count} drew nothing"
        assert not [o for o in cell.outputs if "image/png" in o.get("data", {})], "a figure outside book.show"
        for figure in images:  # numbered, captioned, with alt text that is not a file name
            assert re.search(r"<b>Figure \d+\.\d+\.</b>", figure), f"{chapter}: a figure not numbered by chapter"
            alt = re.search(r'alt="([^"]*)"', figure).group(1)
            assert len(alt) > 15 and not re.search(r"\.(png|svg|jpg)$", alt), f"{chapter}: alt text {alt!r}"
    shown = "".join(o.get("data", {}).get("text/html", "") for c in code for o in c.get("outputs", []))
    for kind in ("Figure", "Table"):
        numbers = re.findall(rf"<b>{kind} (\d+)\.(\d+)\.</b>", shown)
        assert {int(c) for c, _ in numbers} <= {chapter_number(chapter)}, f"{chapter}: {kind.lower()}s of another chapter"
        counts = [int(n) for _, n in numbers]
        assert counts == list(range(1, len(counts) + 1)), f"{chapter}: {kind.lower()}s numbered {counts}"
    text = html.read_text()
    assert "Traceback" not in text


@pytest.mark.parametrize("chapter,variant", CASES)
def test_every_figure_and_table_is_labelled_and_cited(executed, chapter, variant):
    """Each figure and table has a label; the prose cites it ({glue:md}`fig-<label>`) or a computed
    sentence links to it; every citation in the prose names a figure or table the page shows."""
    _, nb = _result(executed, chapter, variant)
    source = chapter_path(chapter).read_text()
    shown = "".join(o.get("data", {}).get("text/html", "") for c in nb.cells if c.cell_type == "code"
                    for o in c.get("outputs", []))
    anchors = re.findall(r'class="mbutils-(?:figure|table-wrap)" id="([^"]+)"', shown)
    unlabelled = [a for a in anchors if re.fullmatch(r"(fig|tab)-[\d-]+", a)]
    assert not unlabelled, f"{chapter} ({variant}): figures or tables without a label: {unlabelled}"
    references = {k for k in _glued(nb) if k.startswith(("fig-", "tab-"))}
    cited = set(re.findall(r"\{glue:md\}`((?:fig|tab)-[a-z0-9-]+)`", source))
    linked = set(re.findall(r'href="#((?:fig|tab)-[a-z0-9-]+)"', shown))
    assert references <= cited | linked, f"{chapter} ({variant}): never cited: {sorted(references - cited - linked)}"
    assert cited <= references, f"{chapter} ({variant}): cited but not shown: {sorted(cited - references)}"


def _glued(nb) -> dict[str, str]:
    out = {}
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            meta = output.get("metadata", {}).get("scrapbook")
            if meta:
                out[meta["name"]] = output["data"].get("application/papermill.record/text/plain", "")
    return out


def test_every_value_the_prose_pastes_is_glued_by_its_page(executed):
    """A {glue:text} or {glue:md} of the page's own key (the key takeaways' computed numbers among
    them) that the page never glued fails the strict book build; checked on the real data."""
    missing = {}
    for chapter in chapter_names():
        result = executed[chapter, "real"]
        if isinstance(result, Exception):  # reported by test_chapter_executes_with_every_figure
            continue
        source = chapter_path(chapter).read_text()
        pasted = {c.split(":")[0] for c in re.findall(r"\{glue(?::text|:md)?\}`([^`]+)`", source) if "::" not in c}
        missing.update({chapter: sorted(pasted - set(_glued(result[1])))} if pasted - set(_glued(result[1])) else {})
    assert not missing, f"pasted but never glued by their page: {missing}"


def test_no_chapter_glues_a_key_twice(executed):
    """myst-nb warns on a duplicate glue key, which fails the strict book build."""
    glued = 0
    for (chapter, variant), result in executed.items():
        if isinstance(result, Exception):
            continue
        names = [o["metadata"]["scrapbook"]["name"] for c in result[1].cells for o in c.get("outputs", [])
                 if "scrapbook" in o.get("metadata", {})]
        twice = sorted({n for n in names if names.count(n) > 1})
        assert not twice, f"{chapter} ({variant}) glues {twice} more than once"
        glued += len(names)
    assert glued, "no executed chapter glued anything: nothing was checked"


def test_front_page_glue_keys_are_produced_by_their_chapters(executed):
    wanted: dict[str, set[str]] = {}
    for path, key in re.findall(r"\{glue:text\}`([^`:]+)::([A-Za-z0-9_]+)", (REPO / "intro.md").read_text()):
        wanted.setdefault(Path(path).stem, set()).add(key)
    assert wanted, "the front page pastes nothing"
    for chapter, keys in wanted.items():
        _, nb = _result(executed, chapter, "real")
        missing = keys - set(_glued(nb))
        assert not missing, f"{chapter} glues no {sorted(missing)} for the front page"


def _claims_of(nb) -> dict[str, tuple[str, str]]:
    """key -> (glued sentence, glued payload) for every claim a chapter glued."""
    glued = {k: ast.literal_eval(v) for k, v in _glued(nb).items()}
    return {k.removesuffix("__claim"): (glued[k.removesuffix("__claim")], v)
            for k, v in glued.items() if k.endswith("__claim")}


def test_glued_claims_say_what_their_inputs_say(executed):
    """Every computed sentence on every page is what its inputs give today."""
    from mbutils.book.findings import claims

    seen = 0
    for (chapter, variant), result in executed.items():
        if isinstance(result, Exception):
            continue
        for key, (text, payload) in _claims_of(result[1]).items():
            assert claims.recompute(payload).text == text, f"{chapter} ({variant}): claim {key} no longer holds"
            seen += 1
    assert seen >= 10, f"only {seen} glued claims found"


def test_every_glued_catch_up_or_match_had_the_power_to_see_two_points(executed):
    """A glued sentence may say "catches up", "matches" or "no longer differs" only when it comes from a
    paired-comparison claim whose cells each had 80% power to see a 2-point difference."""
    import json

    from mbutils.book.findings.claims import claim_is_powered

    words = ("catches up", "no longer differs")
    read = 0
    for (chapter, variant), result in executed.items():
        if isinstance(result, Exception):
            continue
        for key, (text, payload) in _claims_of(result[1]).items():
            read += 1
            data = json.loads(payload)
            if any(w in text for w in words) or (" matches" in text and "too small to tell whether" not in text):
                assert data["fn"] == "catch_up_paired", f"{chapter} ({variant}): {key} says {text!r} without a power check"
                assert claim_is_powered(data["fn"], data["inputs"]), f"{chapter} ({variant}): {key} is underpowered"
    assert read >= 10, f"only {read} glued claims found"


def test_no_glued_comparison_crowns_a_winner_inside_the_noise(executed):
    """Every glued "most reliable" sentence, checked against the intervals in its own inputs by an
    implementation of the noise rule independent of mbutils.evaluate.noise (helpers.check_verdict, which
    tests/evaluate/test_noise.py checks)."""
    import json

    from helpers import check_verdict

    checked = 0
    for (chapter, variant), result in executed.items():
        if isinstance(result, Exception):
            continue
        for key, (text, payload) in _claims_of(result[1]).items():
            data = json.loads(payload)
            check_verdict(data["fn"], data["inputs"], text)
            if data["fn"] == "best_at_size_paired":
                _check_paired_best(data["inputs"], text)
                checked += 1
    assert checked >= 4, f"only {checked} best-at-size claims glued"


def _check_paired_best(inputs: dict, text: str) -> None:
    """A paired "most reliable" claim: its method has the lowest reached MDAD, and the sentence crowns it only
    when every paired comparison at that size says it is lower beyond the noise."""
    size, lowest, mdads = inputs["size"], inputs["lowest"], inputs["mdads"]
    reached = {s: m for s, m in mdads.items() if m is not None}
    if not reached:
        assert "no method reaches" in text
        return
    assert reached[lowest] == min(reached.values())
    rows = [r for records in inputs["comparisons"].values() for r in records if int(r["size"]) == size]
    crowned = "is the most reliable method" in text
    assert crowned == (bool(rows) and all(r["verdict"] == "better" for r in rows)), text


def test_no_guidance_cell_states_fewer_items_than_its_interval_supports(executed):
    """Every cell of the guidance table, against the monotone MDAD tables it was read from: the
    stated size and every larger one have a reached MDAD whose interval ends at most at the gap,
    and one size fewer (the next smaller size run) does not."""
    import json

    checked = 0
    for variant in VARIANTS:
        _, nb = _result(executed, "guidance", variant)
        glued = {k: ast.literal_eval(v) for k, v in _glued(nb).items()}
        cells, tables = json.loads(glued["guidance_cells"]), json.loads(glued["guidance_tables"])
        for cell in cells:
            rows = sorted((r for r in tables[cell["benchmark"]] if r["selector"] == cell["selector"]),
                          key=lambda r: r["size"])
            good = [r["mdad"] is not None and r["ci_high"] is not None and r["ci_high"] <= cell["gap"] for r in rows]
            supported = [r["size"] for i, r in enumerate(rows) if all(good[i:])]
            assert cell["size"] == (supported[0] if supported else None), cell
            checked += 1
    assert checked >= 10


def test_benchmark_claims_follow_the_chapters_results(executed):
    """The claims of bench_gpqa, recomputed from the experiment itself (served by the cache the
    chapter filled), not from what the chapter glued."""
    from mbutils.book.findings import claims
    from mbutils.evaluate import metrics

    _, nb = _result(executed, "bench_gpqa", "real")
    glued = {k: text for k, (text, _) in _claims_of(nb).items()}
    p = {name: ast.literal_eval(spec["default"]) for name, spec in chapter_parameters("bench_gpqa").items()}
    cfg = book.configure(p["data"], sizes=p["sizes"], runs=p["runs"], sources=p["sources"], targets=p["targets"],
                         seed=p["seed"], source_counts=p["source_counts"], source_runs=p["source_runs"],
                         profile="quick", jobs=1)  # the book's page: its defaults, the quick profile
    res = cfg.results(book.PAPER_SELECTORS)
    seen, unseen = metrics.mdad_table(res), metrics.mdad_table(res, split="unseen")
    assert glued["gpqa_unseen_loss"] == claims.unseen_loss(seen, unseen).text
    assert glued["gpqa_tau_from"] == claims.tau_from(metrics.summary_table(res)).text
    assert glued["gpqa_noise"] == claims.noise_yardstick(seen, 1).text
    assert glued["gpqa_small_verdict"] == claims.best_at_size_of(res, min(cfg.sizes)).text


def test_synthetic_data_is_announced_on_the_page(executed):
    _, nb = _result(executed, "bench_gpqa", "synthetic")
    banner = "".join(o["data"].get("text/html", "") for c in nb.cells for o in c.get("outputs", [])
                     if o.get("output_type") == "display_data")
    assert "Synthetic data" in banner and "SYNTHETIC" in banner
    _, nb = _result(executed, "bench_gpqa", "real")
    banner = "".join(o["data"].get("text/html", "") for c in nb.cells for o in c.get("outputs", [])
                     if o.get("output_type") == "display_data")
    assert re.search(r"\(bundle (?:'|&#x27;)gpqa(?:'|&#x27;)\): real results", banner) and "Synthetic data" not in banner


def _myst_chapters():
    return sorted(p for p in (REPO / "chapters").glob("*.md") if is_notebook_source(p))


def test_chapters_are_text_notebooks_with_a_parameters_cell_and_no_outputs():
    """The MyST files are the only source: no generated or committed .ipynb, every chapter parses,
    its first code cell is the papermill parameters cell, and no outputs are stored in the text."""
    assert not list((REPO / "chapters").glob("*.ipynb")), "chapters are MyST Markdown; .ipynb files are not committed"
    assert len(_myst_chapters()) == len(chapter_names()) >= 14
    for path in _myst_chapters():
        nb = read_chapter(path)
        nbformat.validate(nb)
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert code, f"{path.name} has no code cell"
        assert code[0].metadata.get("tags") == ["parameters"], f"{path.name}: first code cell not tagged parameters"
        assert not any(c.get("outputs") or c.get("execution_count") for c in code), f"{path.name} has outputs"
        assert chapter_parameters(path), f"{path.name}: parameters cell assigns nothing"


def test_chapter_round_trips_through_ipynb(tmp_path):
    """``mbutils notebook`` writes the same cells, tags and parameters as the text chapter."""
    nb_path = to_notebook("bench_gpqa", tmp_path)
    assert nb_path == tmp_path / "bench_gpqa.ipynb"
    as_ipynb, as_text = nbformat.read(nb_path, as_version=4), read_chapter("bench_gpqa")
    assert [(c.cell_type, c.source, c.metadata.get("tags")) for c in as_ipynb.cells] == \
        [(c.cell_type, c.source, c.metadata.get("tags")) for c in as_text.cells]
    assert chapter_parameters(nb_path) == chapter_parameters("bench_gpqa")
    assert chapter_parameters("bench_gpqa")["runs"]["help"].startswith("runs of the protocol")


def test_an_edit_to_the_text_chapter_is_what_runs(tmp_path):
    """A chapter edited as text (here: a copy with a changed cell) is read as edited, by path."""
    text = (REPO / "chapters" / "guidance.md").read_text()
    edited = tmp_path / "guidance.md"
    edited.write_text(text.replace("# Parameters", "# An edit by a teacher\n# Parameters", 1))
    cell = parameters_cell(read_chapter(edited))
    assert cell.source.startswith("# An edit by a teacher")
    with pytest.raises(ChapterError, match="plain Markdown page"):
        chapter_path(REPO / "chapters" / "reading.md")


#: public name -> (role, what a call of it looks like in a chapter's code)
PUBLIC_CALLS = {
    "load_benchmark": ("func", r"\bload_benchmark\("), "Protocol": ("class", r"\bProtocol\("),
    "run_experiment": ("func", r"\brun_experiment\("), "mdad_table": ("func", r"\bmdad_table\("),
    "summary_table": ("func", r"\bsummary_table\("), "agreement_curve": ("func", r"\bagreement_curve\("),
    "plan": ("func", r"\bplan_table\("), "audit": ("func", r"(?<![\w.])audit\(|auditing\.audit\("),
    "make_selector": ("func", r"\bmake_selector\("), "Selector": ("class", r"\(Selector\)"),
    "MicroBenchmark": ("class", r"\bMicroBenchmark\("), "SourceData": ("class", r"\bSourceData\("),
}


def test_every_chapter_that_calls_a_public_function_links_its_reference():
    import mbutils

    assert set(PUBLIC_CALLS) <= set(mbutils.__all__)
    api = (REPO / "chapters" / "api.md").read_text()
    for name in PUBLIC_CALLS:
        assert re.search(rf"^\s*{name}$", api, re.M), f"the API reference does not list {name}"
    for path in sorted((REPO / "chapters").glob("*.md")):
        text = path.read_text()
        code = "\n".join(re.findall(r"```\{code-cell\}[^\n]*\n(.*?)```", text, re.S))
        prose = re.sub(r"```\{code-cell\}.*?```", "", text, flags=re.S)
        for name, (role, call) in PUBLIC_CALLS.items():
            if re.search(call, code):
                assert re.search(rf"\{{py:{role}\}}`~?mbutils\.{name}`", prose), (
                    f"{path.name} calls {name} but never links {{py:{role}}}`mbutils.{name}`")


def test_every_toc_chapter_exists_and_every_notebook_is_in_the_toc():
    toc = (REPO / "_toc.yml").read_text()
    files = re.findall(r"file:\s*(\S+)", toc)
    for f in files:
        assert (REPO / f"{f}.md").exists(), f"{f} in _toc.yml is missing"
    for nb in _myst_chapters():
        assert f"chapters/{nb.stem}" in files, f"{nb.name} is not in _toc.yml"


# ------------------------------------------------------------------------ run_chapter
def test_run_chapter_refuses_unknown_chapters_and_parameters(tmp_path):
    with pytest.raises(ChapterError, match="no chapter 'nope'"):
        run_chapter("nope", {}, tmp_path)
    with pytest.raises(ChapterError, match="has no parameter 'colour'.*its parameters: data, sizes"):
        run_chapter("bench_gpqa", {"colour": "red"}, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_run_chapter_failure_names_the_cell_and_keeps_only_the_failed_notebook(tmp_path):
    with pytest.raises(ChapterError, match=r"chapter 'guidance' failed: cell \[\d+\] raised BundleError: "
                                           r"no bundle named 'no-such-bundle'.*guidance.failed.ipynb"):
        run_chapter("guidance", {"data": "no-such-bundle"}, tmp_path / "out")
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["guidance.failed.ipynb"]


def test_parameter_values_are_typed_like_papermill():
    assert parse_value("10") == 10 and parse_value("0.7") == 0.7 and parse_value("None") is None
    assert parse_value("true") is True and parse_value("10,25") == "10,25" and parse_value("gpqa") == "gpqa"
    params = chapter_parameters("bench_gpqa")
    assert list(params)[:7] == ["data", "sizes", "runs", "sources", "targets", "seed", "threshold"]


def _exact_order_probability(a: int, b: int, n: int, k: int) -> float:
    """P(a k-subset of n items holds more of the a items than of the b items): M = X + Y discordant items
    drawn ~ Hypergeom(n, a + b, k), X | M ~ Hypergeom(a + b, a, M), written out with scipy (not the package)."""
    from scipy.stats import hypergeom

    if a + b == 0:
        return 0.0
    m = np.arange(0, min(a + b, k) + 1)
    p_m = hypergeom.pmf(m, n, a + b, k)
    p_x = hypergeom.sf(m // 2, a + b, a, m)  # X > M/2, one vectorised call over every M
    return float((p_m * p_x).sum())


def test_the_guidance_recommended_size_brings_80_percent_of_the_bins_pairs_to_the_threshold(executed):
    """The worked example's recommended size, checked pair by pair with an exact hypergeometric sum written
    here: at least 80% of the pairs of the gap's bin (on the whole benchmark) are ordered correctly with
    probability at least the threshold."""
    import json

    checked = 0
    for variant in VARIANTS:
        _, nb = _result(executed, "guidance", variant)
        glued = {k: ast.literal_eval(v) for k, v in _glued(nb).items()}
        rec = json.loads(glued["guidance_recommended_k"])
        from mbutils.data.datasets import resolve_data

        bench = resolve_data(rec["data"]).benchmark
        assert bench.content_hash == rec["hash"], "the page's bundle cannot be loaded again by its name"
        if rec["k"] is None:
            continue
        correct = bench.correct.astype(np.int64)
        right = correct.sum(axis=1)
        i, j = np.triu_indices(len(right), 1)
        gap = 100.0 * np.abs(right[i] - right[j]) / bench.n_items
        keep = (gap >= rec["gap"] - 1e-9) & (gap < rec["gap"] + 0.5 - 1e-9)
        a = ((correct[i[keep]] == 1) & (correct[j[keep]] == 0)).sum(axis=1)
        b = ((correct[i[keep]] == 0) & (correct[j[keep]] == 1)).sum(axis=1)
        # pairs of a bin share few (more, fewer) discordant counts: each count is summed once
        counts = list(zip(np.maximum(a, b).tolist(), np.minimum(a, b).tolist()))
        probability = {c: _exact_order_probability(*c, bench.n_items, rec["k"]) for c in set(counts)}
        reach = [probability[c] >= rec["threshold"] - 1e-12 for c in counts]
        assert reach and np.mean(reach) >= 0.8, (variant, rec, np.mean(reach))
        checked += 1
    assert checked >= 1


def test_every_check_passes_and_rejects_wrong_answers(executed):
    """Every named check the synthetic runs made (each chapter's exercises, run as the book runs them) passed, and,
    tried on wrong answers near the right one (the answer shifted past its tolerance, and a constant), failed on
    every one: no check passes whatever the student computes (issue 64). Chapters that did not run are the
    other tests' failures."""
    import json

    from mbutils.publish.student_notebooks import computing_chapters, exercises_of

    records = [json.loads(line) for path in sorted(_STARTED["checks"].glob("*.jsonl"))
               for line in path.read_text(encoding="utf-8").splitlines()]
    records = [r for r in records if r.get("name")]
    failed = [r for r in records if r["status"] != "passed"]
    assert not failed, failed[:3]
    loose = [(r["label"], r["name"], r["mutants_passed"]) for r in records if r.get("mutants_passed")]
    assert not loose, f"checks that let a wrong answer through: {loose[:5]}"
    assert all(r.get("mutants") for r in records), [r for r in records if not r.get("mutants")][:3]
    ran = {c for (c, v), result in executed.items() if v == "synthetic" and not isinstance(result, Exception)}
    labels = {label for c in computing_chapters() if c in ran
              for label in exercises_of(chapter_path(c).read_text(encoding="utf-8"))}
    checked = {r["label"] for r in records}
    skipped = labels - checked  # an exercise whose data lack what it needs says so and skips, with its checks
    assert len(skipped) <= len(labels) // 4, f"exercises whose checks never ran: {sorted(skipped)}"
