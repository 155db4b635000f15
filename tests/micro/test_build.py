"""build-micro: the folder it writes, the same estimate as the experiment engine, lm-eval export."""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import TESTS
from helpers import run_cli
from mbutils.data.bundle import load_bundle
from mbutils.methods.runs import seeded_choices, single_threaded, source_data
from mbutils.methods.selectors import make_selector
from mbutils.micro import folder as micro_folder
from mbutils.micro import lm_eval_filter
from mbutils.micro.lm_eval_task import documents, split_item

FIXTURES = TESTS / "fixtures"
LM_EVAL = FIXTURES / "lm_eval"
STAMP = "2024-06-26T15-48-21.123456"
LM_ACC = np.array([[0, 0, 1, 0, 0, 0, 1],   # tests/data/test_importers.py: the fixture logs' acc, models x items
                   [0, 1, 0, 0, 0, 1, 1],
                   [0, 1, 0, 0, 1, 1, 1]])


run = run_cli


@pytest.fixture(scope="module")
def fixture_bundle(tmp_path_factory):
    """The lm-eval fixture logs imported as a bundle by the command line."""
    out = tmp_path_factory.mktemp("bundle") / "tiny-lm"
    code, _, err = run("import", "lm-eval", LM_EVAL, "--out", out, "--quiet")
    assert code == 0, err
    return out


def _build(bundle, out, *extra):
    code, stdout, err = run("build-micro", "--data", bundle, "--out", out, "--quiet", *extra)
    assert code == 0, err
    return stdout


def _engine_estimate(bench, selector_name, k, seed, pool_rows, model_row, **params):
    """The experiment engine's path: seeded_choices on the pool, all items seen, then MicroBenchmark.estimate."""
    with single_threaded():
        source = source_data(bench.correct, bench.subtask_codes, bench.confidence, pool_rows,
                             np.arange(bench.n_items))
        _, chosen = seeded_choices(make_selector(selector_name, **params), source, [k], seed=seed, run=0)
    micro = chosen[k]
    conf = None if bench.confidence is None else bench.confidence[[model_row]]
    return micro, float(micro.estimate(bench.correct[[model_row]], conf)[0])


def test_build_then_score_matches_the_engine_random(fixture_bundle, tmp_path):
    models = tmp_path / "held.txt"
    models.write_text("tiny-3\n")
    _build(fixture_bundle, tmp_path / "m", "--selector", "random", "--k", 3, "--seed", 4, "--exclude-models", models)
    code, out, err = run("score", tmp_path / "m", LM_EVAL / "tiny-3", "--format", "json")
    assert code == 0, err
    scored = json.loads(out)["tiny-3"]
    bench = load_bundle(fixture_bundle)
    micro, engine = _engine_estimate(bench, "random", 3, 4, np.array([0, 1]), 2)
    assert scored["estimate"] == pytest.approx(100 * engine, abs=1e-4)
    assert scored["estimate"] == pytest.approx(100 * LM_ACC[2, micro.items].mean(), abs=1e-4)
    low, high = scored["interval"]
    assert low <= scored["estimate"] <= high and scored["level"] == 0.9
    chosen = pd.read_csv(tmp_path / "m" / "items.csv")["item"].tolist()
    assert chosen == list(bench.items[micro.items])
    provenance = json.loads((tmp_path / "m" / "provenance.json").read_text())
    assert provenance["excluded_models"] == ["tiny-3"] and provenance["seed"] == 4
    assert provenance["bundle_hash"] == bench.content_hash and len(provenance["code"]) == 16


def test_build_then_score_matches_the_engine_with_confidences(fixture_bundle, tmp_path):
    """anchor_points reads the target's confidence on the medoids: score reads it from the logs."""
    _build(fixture_bundle, tmp_path / "m", "--selector", "anchor_points", "--k", 3)
    code, out, err = run("score", tmp_path / "m", LM_EVAL, "--format", "json")
    assert code == 0, err
    scored = json.loads(out)
    bench = load_bundle(fixture_bundle)
    for row, model in enumerate(bench.models):
        _, engine = _engine_estimate(bench, "anchor_points", 3, 0, np.arange(3), row)
        # score corrects the engine's estimate by minus the calibration's mean error, and nothing else
        correction = -100 * pd.read_csv(tmp_path / "m" / "calibration.csv")["error"].mean()
        assert scored[model]["bias_correction"] == pytest.approx(correction, abs=1e-4)
        expected = float(np.clip(100 * engine + correction, scored[model]["interval"][0], scored[model]["interval"][1]))
        assert scored[model]["estimate"] == pytest.approx(expected, abs=1e-4)
    # the confidence-reading estimate is not the 0/1 one
    weights = pd.read_csv(tmp_path / "m" / "items.csv")["weight"].to_numpy()
    assert weights.sum() == pytest.approx(1.0)


def test_irt_state_round_trips(tmp_path):
    """A p-IRT folder holds every item's parameters and scores exactly as the selector's own object."""
    from mbutils import load_benchmark
    from mbutils.micro.build import build_micro
    from mbutils.micro.scoring import score

    bench = load_benchmark("synthetic-gpqa")
    built = build_micro(bench, "tinybenchmarks_pirt", 30, exclude=list(bench.models[:4]), runs=2, folds=4)
    folder = micro_folder.write_micro(built, tmp_path / "m")
    params = pd.read_csv(folder / "item_params.csv")
    assert len(params) == bench.n_items and {"item", "b", "a_0"} <= set(params.columns)
    pd.DataFrame(bench.correct[:4], columns=bench.items).assign(model=bench.models[:4]).to_csv(tmp_path / "r.csv",
                                                                                              index=False)
    table = score(folder, [tmp_path / "r.csv"])
    expected = built.micro.estimate(bench.correct[:4].astype(float))  # the raw estimate, bias-corrected by score
    np.testing.assert_allclose(table["estimate"], 100 * expected + table["bias_correction"], atol=1e-9)
    assert table["bias_correction"].iloc[0] == pytest.approx(-100 * built.calibration["error"].mean())
    assert len(built.calibration) == bench.n_models - 4  # every pool model scored once, held out


def test_the_card_and_the_calibration(tmp_path):
    from mbutils import load_benchmark
    from mbutils.micro.build import build_micro, share_separated

    bench = load_benchmark("synthetic-gpqa")
    built = build_micro(bench, "anchor_points", 25, exclude=list(bench.models[:10]), runs=3)
    card = built.card
    assert card.protocol["n_runs"] == 3 and card.protocol["n_sources"] + card.protocol["n_targets"] <= 410
    assert np.isfinite(card.mdad) and card.ci_low <= card.mdad <= card.ci_high
    assert np.isfinite(card.random_mdad) and 0 < card.share_separated < 1
    assert card.share_separated == share_separated(bench.accuracy[10:], card.mdad, bench.n_items)
    assert not set(built.calibration["model"]) & set(bench.models[:10])  # held-out models never used
    assert share_separated(np.array([0.1, 0.2, 0.5]), 15.0, 100) == pytest.approx(2 / 3)


def test_refusals_of_the_output_folder(fixture_bundle, tmp_path):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("keep me")
    code, _, err = run("build-micro", "--data", fixture_bundle, "--selector", "random", "--k", 2,
                       "--out", tmp_path / "full")
    assert code == 1 and "not empty" in err and "--force" in err and "Traceback" not in err
    assert (tmp_path / "full" / "x").read_text() == "keep me"
    # --force replaces only an earlier micro-benchmark (a folder with a manifest), never a user's folder
    code, _, err = run("build-micro", "--data", fixture_bundle, "--selector", "random", "--k", 2,
                       "--out", tmp_path / "full", "--force")
    assert code == 1 and "did not write" in err and (tmp_path / "full" / "x").read_text() == "keep me"
    _build(fixture_bundle, tmp_path / "made", "--selector", "random", "--k", 2)
    _build(fixture_bundle, tmp_path / "made", "--selector", "random", "--k", 3, "--force")
    assert json.loads((tmp_path / "made" / "micro.json").read_text())["k"] == 3
    # a micro-benchmark folder with the user's own file added is no longer only ours: refused
    (tmp_path / "made" / "notes.txt").write_text("left by hand")
    code, _, err = run("build-micro", "--data", fixture_bundle, "--selector", "random", "--k", 2,
                       "--out", tmp_path / "made", "--force")
    assert code == 1 and "did not write" in err and (tmp_path / "made" / "notes.txt").read_text() == "left by hand"
    code, _, err = run("build-micro", "--data", fixture_bundle, "--selector", "random", "--k", 2,
                       "--out", fixture_bundle / "micro")
    assert code == 1 and f"inside the input folder {fixture_bundle.resolve()}" in err
    assert not (fixture_bundle / "micro").exists()
    # a folder that holds the bundle, even with --force, would be replaced by the micro-benchmark
    files = sorted(fixture_bundle.rglob("*"))
    code, _, err = run("build-micro", "--data", fixture_bundle, "--selector", "random", "--k", 2,
                       "--out", fixture_bundle.parent, "--force")
    assert code == 1 and "holds the input" in err and sorted(fixture_bundle.rglob("*")) == files
    code, _, err = run("build-micro", "--data", fixture_bundle, "--selector", "adaptive_fisher", "--k", 2,
                       "--out", tmp_path / "ad")
    assert code == 1 and "adaptive" in err and not (tmp_path / "ad").exists()


def test_a_failed_build_writes_nothing(fixture_bundle, tmp_path, monkeypatch):
    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(micro_folder.pd.DataFrame, "to_csv", broken)
    code, _, err = run("build-micro", "--data", fixture_bundle, "--selector", "random", "--k", 2,
                       "--out", tmp_path / "m")
    assert code == 1 and "No space left" in err
    assert list(tmp_path.iterdir()) == []  # neither the folder nor its temporary sibling


def test_parameters_reach_the_selector(fixture_bundle, tmp_path):
    _build(fixture_bundle, tmp_path / "m", "--selector", "confidence_stratified", "--k", 3,
           "--param", "n_strata=2", "--param", "estimator=hajek")
    provenance = json.loads((tmp_path / "m" / "provenance.json").read_text())
    assert provenance["params"]["n_strata"] == "2" and provenance["params"]["estimator"] == "'hajek'"
    code, _, err = run("build-micro", "--data", fixture_bundle, "--selector", "random", "--k", 2,
                       "--param", "oops", "--out", tmp_path / "n")
    assert code == 1 and "key=value" in err


# -- lm-evaluation-harness export ---------------------------------------------------------------


def test_item_ids_name_documents():
    assert split_item("arc_easy:12", "arc_easy") == ("arc_easy", 12)
    assert split_item("gpqa_main_007", "gpqa_main") == ("gpqa_main", 7)
    assert split_item("q1", "x") is None
    docs, n_docs = documents(["t:0", "t:1", "t:2", "u:0", "u:1"], ["t"] * 3 + ["u"] * 2, [4, 2, 0])
    assert docs == {"t": [0, 2], "u": [1]} and n_docs == {"t": 3, "u": 2}


def test_export_yaml_and_its_document_filter(fixture_bundle, tmp_path):
    """The exported YAML includes the original's configuration, resolved into the folder (its includes merged,
    a function of its own copied beside it), renames the task and filters documents; its filter applies the
    original task's own process_docs first, and stamps each kept document with its index, content fingerprint
    and the micro task's identity."""
    import yaml
    tasks = tmp_path / "tasks"
    (tasks / "arc").mkdir(parents=True)
    (tasks / "arc" / "_template.yaml").write_text("process_docs: !function helpers.double\noutput_type: "
                                                  "multiple_choice\n")
    (tasks / "arc" / "helpers.py").write_text("def double(dataset):\n    return dataset.mapped('x2')\n")
    (tasks / "arc" / "arc_easy.yaml").write_text("include: _template.yaml\ntask: arc_easy\n")
    (tasks / "piqa.yaml").write_text("task: piqa\n")
    _build(fixture_bundle, tmp_path / "m", "--selector", "random", "--k", 4, "--lm-eval-tasks", tasks)
    meta = json.loads((tmp_path / "m" / "micro.json").read_text())
    chosen = pd.read_csv(tmp_path / "m" / "items.csv")["item"].tolist()
    export = tmp_path / "m" / "lm_eval"
    for micro_task, info in meta["lm_eval_tasks"].items():
        assert micro_task == info["task"] + "_micro"
        assert [f"{info['task']}:{d}" for d in info["docs"]] == [c for c in chosen if c.startswith(info["task"] + ":")]

        class Loader(yaml.SafeLoader):
            pass

        Loader.add_constructor("!function", lambda loader, node: ("function", loader.construct_scalar(node)))
        config = yaml.load((export / f"{micro_task}.yaml").read_text(), Loader=Loader)
        assert config["task"] == micro_task and config["include"] == f"{info['task']}.original_yaml"
        index = list(meta["lm_eval_tasks"]).index(micro_task)
        assert config["process_docs"] == ("function", f"micro_docs.process_{index}")
        assert set(config) == {"include", "task", "process_docs"}
        original = yaml.load((export / config["include"]).read_text(), Loader=Loader)
        assert "task" not in original and "include" not in original
        assert info["config"] == f"--lm-eval-tasks: {'arc/' if info['task'] == 'arc_easy' else ''}{info['task']}.yaml"
        if info["task"] == "arc_easy":  # the template's keys merged in; its function copied into the folder
            assert original == {"process_docs": ("function", "micro_docs.function_0"), "output_type": "multiple_choice"}
    assert (export / "functions" / "helpers.py").read_bytes() == (tasks / "arc" / "helpers.py").read_bytes()
    assert json.loads((export / "micro_docs.json").read_text())["functions"] == [{"file": "functions/helpers.py",
                                                                                  "name": "double"}]

    # micro_docs.py is the package's fixed filter, byte for byte; the chosen documents are JSON beside it
    assert (export / "micro_docs.py").read_bytes() == Path(lm_eval_filter.__file__).read_bytes()
    spec = importlib.util.spec_from_file_location("micro_docs", export / "micro_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    entries = json.loads((export / "micro_docs.json").read_text())["tasks"]

    class Dataset:
        column_names = ["q"]

        def __init__(self, n, tag=""):
            self.n, self.tag, self.kept, self.columns = n, tag, None, {}

        def __len__(self):
            return self.n

        def __iter__(self):
            return iter([{"q": f"Q{i}", "added": self.tag} for i in (self.kept or range(self.n))])

        def mapped(self, tag):
            return Dataset(self.n, self.tag + tag)

        def select(self, ids):
            out = Dataset(len(ids), self.tag)
            out.kept = list(ids)
            return out

        def add_column(self, name, values):
            self.columns[name] = list(values)
            return self

    for index, entry in enumerate(entries):
        n = entry["n_docs"]
        kept = getattr(module, f"process_{index}")(Dataset(n))
        prints = [module.fingerprint({"q": f"Q{i}"}) for i in entry["docs"]]  # the dataset's own field, only
        name = module.identity(entry["task"], n, entry["docs"])
        assert kept.kept == entry["docs"] and kept.columns == {"mbutils_doc_id": entry["docs"], "mbutils_doc_sha256":
                                                               prints, "mbutils_micro": [name] * len(prints)}
        assert kept.tag == ("x2" if entry["task"] == "arc_easy" else "")  # the original's own process_docs ran first
        few_shot = getattr(module, f"process_{index}")(Dataset(n + 10))
        assert few_shot.kept is None and few_shot.columns == {}  # another split is left whole, unstamped
    with pytest.raises(AttributeError):
        module.process_x


def test_export_loads_with_the_harness_config_loader(fixture_bundle, tmp_path):
    if not os.environ.get("CI"):  # in CI the harness is installed (requirements-harness.txt): never skipped
        pytest.importorskip("lm_eval", reason="pip install -r requirements-harness.txt to check the export "
                            "against the harness's own config loader")
    try:  # the harness's task-config loader: lm_eval.utils before 0.4.9, lm_eval.tasks._yaml_loader since
        from lm_eval.utils import load_yaml_config
    except ImportError:
        from lm_eval.tasks._yaml_loader import load_yaml as load_yaml_config
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "arc_easy.yaml").write_text("task: arc_easy\ndataset_path: allenai/ai2_arc\noutput_type: "
                                         "multiple_choice\n")
    (tasks / "piqa.yaml").write_text("task: piqa\ndataset_path: piqa\noutput_type: multiple_choice\n")
    _build(fixture_bundle, tmp_path / "m", "--selector", "random", "--k", 7, "--lm-eval-tasks", tasks)
    config = load_yaml_config(str(tmp_path / "m" / "lm_eval" / "arc_easy_micro.yaml"))
    assert config["task"] == "arc_easy_micro" and config["dataset_path"] == "allenai/ai2_arc"
    assert callable(config["process_docs"])
    try:
        from lm_eval.tasks import TaskManager
    except ImportError:
        return
    manager = TaskManager(include_path=str(tmp_path / "m" / "lm_eval"))  # indexes the export as the CLI would
    assert "arc_easy_micro" in manager.all_tasks


def test_logs_of_the_exported_micro_task_are_mapped_back(fixture_bundle, tmp_path):
    """A log of <task>_micro numbers documents 0..; score maps them back by the original index the filter
    stamped on each document (``doc.mbutils_doc_id``), never by position."""
    _build(fixture_bundle, tmp_path / "m", "--selector", "random", "--k", 4, "--seed", 1)
    meta = json.loads((tmp_path / "m" / "micro.json").read_text())
    logs = tmp_path / "logs" / "tiny-3"
    logs.mkdir(parents=True)
    for micro_task, info in meta["lm_eval_tasks"].items():
        source = LM_EVAL / "tiny-3" / f"samples_{info['task']}_{STAMP}.jsonl"
        records = {json.loads(line)["doc_id"]: json.loads(line) for line in source.read_text().splitlines()}
        lines = [json.dumps({**records[doc], "doc_id": i, "doc": {**records[doc]["doc"], "mbutils_doc_id": doc}})
                 for i, doc in enumerate(info["docs"])]
        (logs / f"samples_{micro_task}_{STAMP}.jsonl").write_text("\n".join(lines) + "\n")
    code, out, err = run("score", tmp_path / "m", logs, "--format", "json")
    assert code == 0, err
    code, full, err = run("score", tmp_path / "m", LM_EVAL / "tiny-3", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["tiny-3"]["estimate"] == json.loads(full)["tiny-3"]["estimate"]


@pytest.mark.parametrize("module", ["mbutils.micro.intervals", "mbutils.micro.build",
                                    "mbutils.micro.scoring", "mbutils.micro.lm_eval_task"])
def test_module_examples_run(module):
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = [t for t in doctest.DocTestFinder().find(importlib.import_module(module)) if t.examples]
    for test in tests:
        runner.run(test)
    assert runner.failures == 0

