"""Importers: lm-eval sample logs and leaderboard details -> Benchmark, on fixtures in the real formats."""

from __future__ import annotations

import fnmatch
import importlib.util
import json
import math
import shutil
import sys
import types
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from conftest import TESTS
from mbutils.data.bundle import load_bundle, save_bundle
from mbutils.base.errors import BundleError
from mbutils.data.importers import (HubSource, LocalSource, details_repo, import_lm_eval, import_leaderboard, leaderboard_benchmark, model_name_from_results, read_model_list)

FIXTURES = TESTS / "fixtures"
LM_EVAL = FIXTURES / "lm_eval"
RAW = FIXTURES / "leaderboard" / "raw"
PARQUET = FIXTURES / "leaderboard" / "parquet"
STAMP = "2024-06-26T15-48-21.123456"
LM_MODELS = ["org-a/tiny-1", "org-b/tiny-2", "tiny-3"]
LM_FOLDERS = ["org-a__tiny-1", "org-b__tiny-2", "tiny-3"]
LB_MODELS = ["org-a/tiny-1", "org-b/tiny-2", "org-c/tiny-3"]
LM_ITEMS = ["arc_easy:0", "arc_easy:1", "arc_easy:2", "arc_easy:3", "piqa:0", "piqa:1", "piqa:2"]
# The metric fields written in the fixture logs, in model x item order (read off the files).
LM_ACC = [[0, 0, 1, 0, 0, 0, 1],
          [0, 1, 0, 0, 0, 1, 1],
          [0, 1, 0, 0, 1, 1, 1]]
LM_ACC_NORM = [[0, 0, 1, 0, 0, 1, 1],   # piqa:1 of tiny-1 flips under length normalisation
               [0, 1, 0, 0, 0, 1, 1],
               [0, 1, 0, 0, 1, 1, 1]]
GPQA_ACC_NORM = [[1, 1, 0, 0],
                 [1, 1, 1, 0],
                 [0, 0, 1, 0]]


def _fixture_module():
    spec = importlib.util.spec_from_file_location("importer_fixtures", FIXTURES / "importer_fixtures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _record(path: Path, doc_id: int) -> dict:
    """A record read with plain json, independently of the importer."""
    for line in path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec["doc_id"] == doc_id:
            return rec
    raise AssertionError(f"doc {doc_id} not in {path}")


def _softmax_at_gold(rec: dict, delimiter: str, norm: bool) -> float:
    """Probability of the gold choice, by hand: exp(s_gold) / sum exp(s), s = ll or ll / len(choice)."""
    lls = [float(pair[0]) for pair in rec["filtered_resps"]]
    conts = [rec["arguments"][f"gen_args_{i}"]["arg_1"] for i in range(len(lls))]
    choices = [c[len(delimiter):] for c in conts]
    scores = [ll / len(c) if norm else ll for ll, c in zip(lls, choices)]
    gold = choices.index(rec["target"]) if rec["target"] in choices else int(rec["target"])
    return math.exp(scores[gold]) / sum(math.exp(s) for s in scores)


def _copy_lm_eval(tmp_path: Path) -> Path:
    root = tmp_path / "logs"
    shutil.copytree(LM_EVAL, root)
    return root


def _samples(root: Path, folder: str, task: str) -> Path:
    return root / folder / f"samples_{task}_{STAMP}.jsonl"


def _rewrite(path: Path, edit) -> None:
    """Apply ``edit(list_of_records) -> list_of_records`` to a JSONL file."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    path.write_text("".join(json.dumps(r) + "\n" for r in edit(rows)), encoding="utf-8")


# -- the committed fixtures are what the generator writes ------------------------------------


def test_committed_fixtures_match_their_generator(tmp_path):
    _fixture_module().write_lm_eval(tmp_path / "lm_eval")
    _fixture_module().write_leaderboard(tmp_path / "leaderboard")
    fresh = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    committed = sorted(p.relative_to(FIXTURES) for p in FIXTURES.rglob("*")
                       if p.is_file() and p.parts[-2:] != ("fixtures", "importer_fixtures.py")
                       and "__pycache__" not in p.parts)
    assert fresh == committed
    for rel in fresh:
        if rel.suffix == ".parquet":
            assert pq.read_table(tmp_path / rel).to_pylist() == pq.read_table(FIXTURES / rel).to_pylist(), rel
        else:
            assert (tmp_path / rel).read_bytes() == (FIXTURES / rel).read_bytes(), rel


# -- lm-eval round trip --------------------------------------------------------------------


def test_lm_eval_round_trip_acc():
    bench = import_lm_eval([LM_EVAL], metric="acc")
    assert list(bench.models) == LM_MODELS  # model_name / pretrained= / folder name
    assert list(bench.items) == LM_ITEMS
    assert list(bench.subtasks) == ["arc_easy"] * 4 + ["piqa"] * 3
    np.testing.assert_array_equal(bench.correct, LM_ACC)
    expected = [[_softmax_at_gold(_record(_samples(LM_EVAL, folder, item.split(":")[0]), int(item.split(":")[1])),
                                  " ", norm=False) for item in LM_ITEMS] for folder in LM_FOLDERS]
    np.testing.assert_allclose(bench.confidence, expected, rtol=1e-12)
    # one cell written out: tiny-1, arc_easy doc 0 (gold 0), raw log-likelihoods
    lls = [-4.8065, -2.4169, -7.6767, -2.7267]
    assert bench.confidence[0, 0] == pytest.approx(math.exp(lls[0]) / sum(map(math.exp, lls)), rel=1e-12)
    assert list(bench.item_info["n_choices"]) == [4, 4, 4, 4, 2, 2, 2]


def test_lm_eval_round_trip_acc_norm_divides_by_character_length():
    bench = import_lm_eval([LM_EVAL / folder for folder in LM_FOLDERS], metric="acc_norm")
    np.testing.assert_array_equal(bench.correct, LM_ACC_NORM)
    expected = [[_softmax_at_gold(_record(_samples(LM_EVAL, folder, item.split(":")[0]), int(item.split(":")[1])),
                                  " ", norm=True) for item in LM_ITEMS] for folder in LM_FOLDERS]
    np.testing.assert_allclose(bench.confidence, expected, rtol=1e-12)
    # the same cell: choices "dry palms", "wet palms", "palms covered with oil", "palms covered with lotion"
    scores = np.array([-4.8065, -2.4169, -7.6767, -2.7267]) / np.array([9, 9, 22, 25])
    assert bench.confidence[0, 0] == pytest.approx(np.exp(scores[0]) / np.exp(scores).sum(), rel=1e-12)
    assert not np.allclose(bench.confidence, import_lm_eval([LM_EVAL], metric="acc").confidence)


def test_correct_cells_have_the_largest_gold_probability_among_what_the_metric_compares():
    """acc = 1 exactly when the gold choice has the top score, so its probability is >= 1/n_choices."""
    for metric in ("acc", "acc_norm"):
        bench = import_lm_eval([LM_EVAL], metric=metric)
        n = bench.item_info["n_choices"].to_numpy()
        assert (bench.confidence[bench.correct == 1] >= np.broadcast_to(1 / n, bench.correct.shape)[bench.correct == 1]).all()


def test_imported_benchmark_saves_and_loads_as_a_bundle(tmp_path):
    bench = import_lm_eval([LM_EVAL], metric="acc_norm")
    folder = save_bundle(bench, tmp_path / "mine")
    back = load_bundle(folder)
    assert list(back.models) == list(bench.models) and list(back.items) == list(bench.items)
    assert list(back.subtasks) == list(bench.subtasks)
    np.testing.assert_array_equal(back.correct, bench.correct)
    np.testing.assert_array_equal(back.confidence, bench.confidence)
    assert back.content_hash == bench.content_hash
    assert list(back.item_info["n_choices"]) == [4, 4, 4, 4, 2, 2, 2]


# -- lm-eval errors ------------------------------------------------------------------------------


def test_logs_that_disagree_on_items_name_the_task_and_models(tmp_path):
    root = _copy_lm_eval(tmp_path)
    _rewrite(_samples(root, "org-b__tiny-2", "arc_easy"), lambda rows: rows[:-1])
    with pytest.raises(BundleError, match=r"task arc_easy: the logs disagree on items: org-b/tiny-2 has 3 of 4"):
        import_lm_eval([root])
    with pytest.warns(UserWarning, match="dropped 1 of 7"):
        common = import_lm_eval([root], items="common")
    assert "arc_easy:3" not in list(common.items) and common.n_items == 6
    full = import_lm_eval([LM_EVAL])
    np.testing.assert_array_equal(common.correct, np.delete(full.correct, 3, axis=1))


def test_malformed_line_reports_file_and_line(tmp_path):
    root = _copy_lm_eval(tmp_path)
    path = _samples(root, "tiny-3", "piqa")
    lines = path.read_text().splitlines(keepends=True)
    lines[1] = lines[1][: len(lines[1]) // 2] + "\n"  # a truncated write
    path.write_text("".join(lines))
    with pytest.raises(BundleError, match=rf"samples_piqa_{STAMP}\.jsonl, line 2: not valid JSON"):
        import_lm_eval([root])


def test_missing_metric_field_lists_what_the_log_has(tmp_path):
    with pytest.raises(BundleError, match=r"line 1: no 'exact_match' field; this log records: acc, acc_norm"):
        import_lm_eval([LM_EVAL], metric="exact_match")
    with pytest.raises(BundleError, match=r"no 'acc' field; this log records: acc_norm"):
        import_leaderboard(LB_MODELS, "bbh", source=LocalSource(RAW), metric="acc", progress=False)


def test_duplicate_doc_ids_are_refused(tmp_path):
    root = _copy_lm_eval(tmp_path)
    _rewrite(_samples(root, "org-a__tiny-1", "piqa"), lambda rows: rows + rows[:1])
    with pytest.raises(BundleError, match=r"doc_id 0 on lines 1, 4"):
        import_lm_eval([root])


def test_a_model_without_a_task_is_named(tmp_path):
    root = _copy_lm_eval(tmp_path)
    _samples(root, "tiny-3", "piqa").unlink()
    with pytest.raises(BundleError, match="tiny-3 has no piqa"):
        import_lm_eval([root])


def test_non_binary_metric_is_refused(tmp_path):
    root = _copy_lm_eval(tmp_path)
    _rewrite(_samples(root, "tiny-3", "piqa"), lambda rows: [{**r, "acc": 0.5} for r in rows])
    with pytest.raises(BundleError, match=r"line 1: acc = '0.5' is not 0/1"):
        import_lm_eval([root])


def test_different_documents_under_one_id_are_caught_by_doc_hash(tmp_path):
    fx = _fixture_module()
    root = _copy_lm_eval(tmp_path)

    def edit(rows):
        doc = {**rows[2]["doc"], "question": "A different question"}
        rows[2] = {**rows[2], "doc": doc, "doc_hash": fx.sha(json.dumps(doc, indent=2, ensure_ascii=False))}
        return rows

    _rewrite(_samples(root, "tiny-3", "arc_easy"), edit)
    with pytest.raises(BundleError, match=r"1 item\(s\) where the models saw different documents .* arc_easy:2: tiny-3"):
        import_lm_eval([root])
    with pytest.warns(UserWarning, match="saw different documents"):
        assert import_lm_eval([root], check_docs="warn").n_items == 7
    assert import_lm_eval([root], check_docs="ignore").n_items == 7


def test_latest_run_wins_and_the_older_is_reported(tmp_path):
    root = _copy_lm_eval(tmp_path)
    older = root / "tiny-3" / "samples_piqa_2024-01-01T00-00-00.000001.jsonl"
    shutil.copy(_samples(root, "tiny-3", "piqa"), older)
    _rewrite(older, lambda rows: [{**r, "acc": 1 - r["acc"]} for r in rows])
    with pytest.warns(UserWarning, match=f"tiny-3 / piqa: several runs; using samples_piqa_{STAMP}"):
        bench = import_lm_eval([root])
    np.testing.assert_array_equal(bench.correct, LM_ACC)


def _generative_logs(root: Path) -> None:
    """Two models x one generate_until task logged under two filters (as gsm8k does)."""
    for m, folder in enumerate(["m1", "m2"]):
        rows = []
        for doc_id in range(3):
            for k, name in enumerate(["strict-match", "flexible-extract"]):
                rows.append({"doc_id": doc_id, "doc": {"question": f"q{doc_id}", "answer": "4"}, "target": "4",
                             "arguments": {"gen_args_0": {"arg_0": f"Q: q{doc_id}\nA:",
                                                          "arg_1": {"until": ["Q:"], "do_sample": False}}},
                             "resps": [["The answer is 4."]], "filtered_resps": ["4" if (doc_id + m + k) % 2 else "[invalid]"],
                             "filter": name, "metrics": ["exact_match"],
                             "exact_match": float((doc_id + m + k) % 2), "doc_hash": f"h{doc_id}"})
        (root / folder).mkdir(parents=True)
        (root / folder / f"samples_gsm8k_{STAMP}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_generative_tasks_need_a_filter_and_have_no_confidence(tmp_path):
    _generative_logs(tmp_path)
    with pytest.raises(BundleError, match="several filters \\(strict-match, flexible-extract\\)"):
        import_lm_eval([tmp_path], metric="exact_match")
    bench = import_lm_eval([tmp_path], metric="exact_match", filter="flexible-extract")
    np.testing.assert_array_equal(bench.correct, [[1, 0, 1], [0, 1, 0]])
    assert bench.confidence is None and "n_choices" not in bench.item_info
    with pytest.raises(BundleError, match="confidence requested but no probability .* gsm8k"):
        import_lm_eval([tmp_path], metric="exact_match", filter="strict-match", confidence=True)


def test_mixing_generative_and_multiple_choice_drops_confidence_with_a_warning(tmp_path):
    _generative_logs(tmp_path)
    for m, folder in enumerate(["m1", "m2"]):
        shutil.copy(_samples(LM_EVAL, LM_FOLDERS[m], "piqa"), tmp_path / folder)
        _rewrite(tmp_path / folder / f"samples_piqa_{STAMP}.jsonl",
                 lambda rows: [{**r, "exact_match": r["acc"]} for r in rows])
    with pytest.warns(UserWarning, match=r"without confidences: no probability .* gsm8k"):
        bench = import_lm_eval([tmp_path], metric="exact_match", filter="strict-match")
    assert bench.confidence is None
    assert list(bench.items) == ["gsm8k:0", "gsm8k:1", "gsm8k:2", "piqa:0", "piqa:1", "piqa:2"]
    np.testing.assert_array_equal(bench.correct, [[0, 1, 0] + LM_ACC[0][4:], [1, 0, 1] + LM_ACC[1][4:]])
    with pytest.raises(BundleError, match="no records for filter 'none'; it has: strict-match, flexible-extract"):
        import_lm_eval([tmp_path], metric="exact_match", filter="none")


def test_target_read_as_text_or_index_follows_the_logged_metric(tmp_path):
    """Choices "1", "2": target "1" is choice 0 as text but index 1 as a number; acc decides."""
    rows = []
    for doc_id, (lls, acc) in enumerate([([-1.0, -3.0], 1), ([-1.0, -3.0], 0)]):
        rows.append({"doc_id": doc_id, "doc": {"q": doc_id}, "target": "1",
                     "arguments": {f"gen_args_{i}": {"arg_0": "Q", "arg_1": f" {c}"} for i, c in enumerate("12")},
                     "filtered_resps": [[str(x), "False"] for x in lls], "filter": "none", "acc": acc})
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / f"samples_digits_{STAMP}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    bench = import_lm_eval([tmp_path])
    p_first = math.exp(-1.0) / (math.exp(-1.0) + math.exp(-3.0))
    # doc 0: acc=1 and choice 0 scores highest -> gold is the text reading (choice "1");
    # doc 1: acc=0 -> gold must be the other choice, the index reading.
    np.testing.assert_allclose(bench.confidence, [[p_first, 1 - p_first]] * 2, rtol=1e-12)


# -- leaderboard ---------------------------------------------------------------------------------


def _lb_record(model: str, task: str, doc_id: int) -> dict:
    stem = model.replace("/", "__")
    suffix = ".json" if model == LB_MODELS[0] else ".jsonl"
    return _record(RAW / f"{stem}-details" / stem / f"samples_{task}_{STAMP}{suffix}", doc_id)


def test_leaderboard_gpqa_round_trip():
    bench = import_leaderboard(LB_MODELS, "gpqa", source=LocalSource(RAW), progress=False)
    assert bench.name == "leaderboard-gpqa-main"
    assert list(bench.models) == LB_MODELS
    assert list(bench.items) == [f"gpqa_main:{i}" for i in range(4)]
    assert list(bench.subtask_names) == ["gpqa_main"]
    np.testing.assert_array_equal(bench.correct, GPQA_ACC_NORM)
    expected = [[_softmax_at_gold(_lb_record(m, "leaderboard_gpqa_main", d), " ", norm=True) for d in range(4)]
                for m in LB_MODELS]
    np.testing.assert_allclose(bench.confidence, expected, rtol=1e-12)
    reordered = import_leaderboard(LB_MODELS[::-1], "gpqa-main", source=LocalSource(RAW), progress=False)
    np.testing.assert_array_equal(reordered.correct, bench.correct[::-1])


def test_leaderboard_bbh_has_all_24_subtasks_and_normalises_by_length():
    fx = _fixture_module()
    bench = import_leaderboard(LB_MODELS, "bbh", source=LocalSource(RAW), progress=False)
    assert list(bench.subtask_names) == list(fx.BBH_SUBTASKS)
    assert bench.n_items == 26 and bench.item_info["n_choices"].max() == 19
    counting = [list(bench.items).index(f"object_counting:{d}") for d in range(2)]
    expected = [[_softmax_at_gold(_lb_record(m, "leaderboard_bbh_object_counting", d), "", norm=True)
                 for d in range(2)] for m in LB_MODELS]
    np.testing.assert_allclose(bench.confidence[:, counting], expected, rtol=1e-12)
    raw = [[_softmax_at_gold(_lb_record(m, "leaderboard_bbh_object_counting", d), "", norm=False)
            for d in range(2)] for m in LB_MODELS]
    assert not np.allclose(expected, raw)  # choices "0".."18" differ in length, so the norm matters
    written = [[_lb_record(m, f"leaderboard_bbh_{t}", int(d))["acc_norm"] for t, d in
                (item.split(":") for item in bench.items)] for m in LB_MODELS]
    np.testing.assert_array_equal(bench.correct, written)


def test_leaderboard_mmlu_pro_takes_subtasks_from_the_category():
    bench = import_leaderboard(LB_MODELS, "mmlu-pro", source=LocalSource(RAW), progress=False)
    assert list(bench.subtasks) == ["math", "math", "law", "physics"]
    assert list(bench.item_info["n_choices"]) == [4, 10, 5, 7]
    np.testing.assert_array_equal(bench.correct, [[0, 0, 0, 0], [1, 1, 0, 0], [0, 0, 0, 0]])
    expected = [[_softmax_at_gold(_lb_record(m, "leaderboard_mmlu_pro", d), "", norm=False) for d in range(4)]
                for m in LB_MODELS]
    np.testing.assert_allclose(bench.confidence, expected, rtol=1e-12)


@pytest.mark.parametrize("benchmark", ["gpqa", "mmlu-pro"])
def test_parquet_conversion_reads_the_same_as_the_raw_files(benchmark):
    raw = import_leaderboard(LB_MODELS, benchmark, source=LocalSource(RAW), progress=False)
    converted = import_leaderboard(LB_MODELS, benchmark, source=LocalSource(PARQUET), progress=False)
    assert converted.content_hash == raw.content_hash
    np.testing.assert_array_equal(converted.confidence, raw.confidence)


def test_leaderboard_errors_are_clear(tmp_path):
    with pytest.raises(BundleError, match="unknown leaderboard benchmark 'hellaswag'"):
        import_leaderboard(LB_MODELS, "hellaswag", source=LocalSource(RAW))
    with pytest.raises(BundleError, match="org-z/none: no folder org-z__none-details under"):
        import_leaderboard(["org-z/none"], "gpqa", source=LocalSource(RAW), progress=False)
    with pytest.raises(BundleError, match="no details for leaderboard_musr_murder_mysteries"):
        import_leaderboard(LB_MODELS, "musr", source=LocalSource(RAW), progress=False)
    with pytest.raises(BundleError, match="listed more than once: org-a/tiny-1"):
        import_leaderboard(LB_MODELS + LB_MODELS[:1], "gpqa", source=LocalSource(RAW), progress=False)


def test_benchmark_names_and_repo_ids():
    assert leaderboard_benchmark("gpqa").tasks == ("leaderboard_gpqa_main",)
    assert leaderboard_benchmark("GPQA_diamond").tasks == ("leaderboard_gpqa_diamond",)
    assert len(leaderboard_benchmark("bbh").tasks) == 24
    assert leaderboard_benchmark("mmlu_pro").metric == "acc"
    assert leaderboard_benchmark("math-hard").label("leaderboard_math_algebra_hard") == "algebra_hard"
    assert details_repo("meta-llama/Meta-Llama-3-8B") == "open-llm-leaderboard/meta-llama__Meta-Llama-3-8B-details"


# -- the download layer, without network --------------------------------------------------------------


def _fake_hub(monkeypatch, tmp_path, mirror: Path, calls: list):
    """A stand-in ``huggingface_hub``: lists and copies (matching) files from ``mirror``."""

    def list_repo_files(repo_id, repo_type):
        calls.append({"listed": repo_id, "repo_type": repo_type})
        repo = mirror / repo_id.split("/", 1)[1]
        return sorted(p.relative_to(repo).as_posix() for p in repo.rglob("*") if p.is_file())

    def snapshot_download(*, repo_id, repo_type, revision, allow_patterns, **kwargs):
        calls.append({"repo_id": repo_id, "repo_type": repo_type, "revision": revision,
                      "allow_patterns": list(allow_patterns)})
        repo = mirror / repo_id.split("/", 1)[1]
        out = tmp_path / "hub" / repo_id.replace("/", "--")
        for path in repo.rglob("*"):
            rel = path.relative_to(repo).as_posix()
            if path.is_file() and any(fnmatch.fnmatch(rel, p) for p in allow_patterns):
                (out / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(path, out / rel)
        return str(out)

    api = types.SimpleNamespace(list_repo_files=list_repo_files)
    monkeypatch.setitem(sys.modules, "huggingface_hub", types.SimpleNamespace(
        snapshot_download=snapshot_download, HfApi=lambda token=None: api))


def test_hub_source_fetches_only_the_latest_run_of_the_benchmarks_files(monkeypatch, tmp_path):
    mirror = tmp_path / "mirror"
    shutil.copytree(RAW, mirror)
    old = "2024-05-01T00-00-00.000001"
    run = mirror / "org-b__tiny-2-details" / "org-b__tiny-2"
    shutil.copy(run / f"samples_leaderboard_gpqa_main_{STAMP}.jsonl", run / f"samples_leaderboard_gpqa_main_{old}.jsonl")
    shutil.copy(run / f"results_{STAMP}.json", run / f"results_{old}.json")
    calls: list = []
    _fake_hub(monkeypatch, tmp_path, mirror, calls)
    bench = import_leaderboard(LB_MODELS, "gpqa", source=HubSource(), progress=False)
    assert bench.content_hash == import_leaderboard(LB_MODELS, "gpqa", source=LocalSource(RAW),
                                                    progress=False).content_hash
    downloads = [c for c in calls if "repo_id" in c]
    assert [c["repo_id"] for c in downloads] == [details_repo(m) for m in LB_MODELS]
    assert all(c["repo_type"] == "dataset" and c["revision"] is None for c in downloads)
    assert downloads[1]["allow_patterns"] == [f"org-b__tiny-2/samples_leaderboard_gpqa_main_{STAMP}.jsonl",
                                              f"org-b__tiny-2/results_{STAMP}.json"]
    fetched = sorted(p.name for p in (tmp_path / "hub").rglob("*") if p.is_file())
    assert fetched == sorted([f"samples_leaderboard_gpqa_main_{STAMP}.json", f"results_{STAMP}.json"]
                             + [f"samples_leaderboard_gpqa_main_{STAMP}.jsonl", f"results_{STAMP}.json"] * 2)
    with pytest.raises(BundleError, match=r"org-a__tiny-1-details has no samples for leaderboard_musr_murder_mysteries"):
        import_leaderboard(LB_MODELS, "musr", source=HubSource(), progress=False)


def test_hub_source_parquet_layout_reads_the_conversion_branch(monkeypatch, tmp_path):
    calls: list = []
    _fake_hub(monkeypatch, tmp_path, PARQUET, calls)
    bench = import_leaderboard(LB_MODELS, "mmlu-pro", source=HubSource(layout="parquet"), progress=False)
    assert bench.content_hash == import_leaderboard(LB_MODELS, "mmlu-pro", source=LocalSource(RAW),
                                                    progress=False).content_hash
    assert {c.get("revision") for c in calls} == {"refs/convert/parquet"}  # nothing listed
    assert calls[0]["allow_patterns"] == ["org-a__tiny-1__leaderboard_mmlu_pro/*latest/*.parquet"]
    assert len([p for p in (tmp_path / "hub").rglob("*.parquet")]) == 3


def test_hub_source_without_huggingface_hub_says_how_to_get_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)  # import fails as if not installed
    with pytest.raises(BundleError, match="pip install huggingface_hub"):
        import_leaderboard(LB_MODELS, "gpqa", source=HubSource(), progress=False)
    with pytest.raises(BundleError, match="layout must be one of"):
        HubSource(layout="zip")


def test_hub_failures_become_one_clear_error(monkeypatch):
    def refuse(*args, **kwargs):
        raise OSError("Connection refused")

    monkeypatch.setitem(sys.modules, "huggingface_hub", types.SimpleNamespace(
        snapshot_download=refuse, HfApi=lambda token=None: types.SimpleNamespace(list_repo_files=refuse)))
    with pytest.raises(BundleError, match=r"org-a/tiny-1: cannot download open-llm-leaderboard/org-a__tiny-1-details"
                                          r" \(OSError: Connection refused\)"):
        import_leaderboard(LB_MODELS, "gpqa", source=HubSource(), progress=False)


# -- small helpers ---------------------------------------------------------------------------------------


def test_model_names_from_results_files():
    assert model_name_from_results({"model_name": "a/b", "config": {"model_args": "pretrained=c/d"}}) == "a/b"
    assert model_name_from_results({"model_name": "", "config": {"model_args": "pretrained=c/d,dtype=bf16"}}) == "c/d"
    assert model_name_from_results({"config": {"model_args": "pretrained=base,peft=adapter"}}) == "adapter"
    assert model_name_from_results({"config": {"model_args": {"pretrained": "e/f", "dtype": "auto"}}}) == "e/f"
    assert model_name_from_results({"config": {"model_args": "dtype=auto"}}) is None


def test_model_list_file(tmp_path):
    path = tmp_path / "models.txt"
    path.write_text("# GPQA targets\norg-a/tiny-1\n\n  org-b/tiny-2  # base model\n")
    assert read_model_list(path) == ["org-a/tiny-1", "org-b/tiny-2"]
    (tmp_path / "empty.txt").write_text("# nothing\n")
    with pytest.raises(BundleError, match="no model ids"):
        read_model_list(tmp_path / "empty.txt")


def test_paths_that_are_not_sample_logs(tmp_path):
    with pytest.raises(BundleError, match="no samples_<task>_<time>.jsonl files"):
        import_lm_eval([tmp_path])
    with pytest.raises(BundleError, match="no such file or folder"):
        import_lm_eval([tmp_path / "absent"])
    (tmp_path / "notes.jsonl").write_text("{}\n")
    with pytest.raises(BundleError, match="not an lm-eval samples file"):
        import_lm_eval([tmp_path / "notes.jsonl"])
    with pytest.raises(BundleError, match="items must be one of"):
        import_lm_eval([LM_EVAL], items="union")
