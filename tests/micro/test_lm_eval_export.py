"""The harness-exact lm-eval export: the tasks the Open LLM Leaderboard runs, one group, checked by lm-eval 0.4.13.

For each shipped leaderboard bundle (gpqa, bbh-leaderboard, mmlu-pro-leaderboard, musr-leaderboard,
math-hard-leaderboard, ifeval-leaderboard) a small micro-benchmark
is built and lm-evaluation-harness's own TaskManager (the installed 0.4.13, its default tasks included)
must index every exported ``<harness task>_micro`` task and the group ``<benchmark>_micro``; each task
includes the harness's own YAML of its task and names the documents the items are. A bundle of one's own
states its documents in items.csv. The loud failures (task YAMLs missing from --lm-eval-tasks, a declared
task the harness lacks, an export the harness does not index, mmlu-pro-tiger-lab with --lm-eval-tasks)
exit 1 with one message and leave nothing.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from conftest import real_bundle
from helpers import random_benchmark
from helpers import run_command as run
from mbutils import build_micro, load_benchmark
from mbutils.base.errors import MbutilsError
from mbutils.data.bundle import save_bundle
from mbutils.methods.selectors.base import MicroBenchmark
from mbutils.micro import lm_eval_export
from mbutils.micro import lm_eval_task
from mbutils.micro.lm_eval_export import group_aggregation

if os.environ.get("CI"):  # in CI the harness is installed: its absence is a failure, never a skip
    import lm_eval  # noqa: F401
else:
    pytest.importorskip("lm_eval", reason='pip install "mbutils[harness]" to check the export')

K = 15
#: bundle -> (its group, its metric, the harness task of an item (id, subtask))
LEADERBOARD = {
    "gpqa": ("gpqa_micro", "acc_norm", lambda item, subtask: ("leaderboard_gpqa_main", int(item.rsplit("_", 1)[1]))),
    "bbh-leaderboard": ("bbh-leaderboard_micro", "acc_norm",
                        lambda item, subtask: (f"leaderboard_bbh_{subtask}", int(item.rsplit(":", 1)[1]))),
    "mmlu-pro-leaderboard": ("mmlu-pro-leaderboard_micro", "acc",
                             lambda item, subtask: ("leaderboard_mmlu_pro", int(item.rsplit(":", 1)[1]))),
    "musr-leaderboard": ("musr-leaderboard_micro", "acc_norm",
                         lambda item, subtask: (f"leaderboard_musr_{subtask}", int(item.rsplit(":", 1)[1]))),
    # the collecting repository's beginner_algebra_hard is the leaderboard's algebra_hard
    "math-hard-leaderboard": ("math-hard-leaderboard_micro", "exact_match",
                              lambda item, subtask: (f"leaderboard_math_{subtask.removeprefix('beginner_')}",
                                                     int(item.rsplit(":", 1)[1]))),
    "ifeval-leaderboard": ("ifeval-leaderboard_micro", "prompt_level_strict_acc",
                           lambda item, subtask: ("leaderboard_ifeval", int(item.rsplit(":", 1)[1]))),
}


def one_error(result) -> str:
    code, out, err = result
    assert code == 1, (code, out[-300:], err[-800:])
    assert "Traceback" not in err and len([line for line in err.splitlines() if line.startswith("error:")]) == 1, err
    return err


@pytest.fixture(scope="module")
def leaderboard(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("leaderboard")
    folders = {}
    for name in LEADERBOARD:
        real_bundle(name)
        built = build_micro(load_benchmark(name), "random", K, runs=2, out=root / name)
        folders[name] = built.path
    return folders


@pytest.fixture(scope="module")
def manager(leaderboard):
    """lm-eval 0.4.13's TaskManager over its own tasks and the three exports."""
    from lm_eval.tasks import TaskManager

    return TaskManager(include_path=[str(path / "lm_eval") for path in leaderboard.values()])


@pytest.mark.parametrize("name", list(LEADERBOARD))
def test_the_harness_indexes_every_exported_task_and_the_group(leaderboard, manager, name):
    folder = leaderboard[name]
    group, metric, document = LEADERBOARD[name]
    meta = json.loads((folder / "micro.json").read_text())
    items = pd.read_csv(folder / "items.csv")
    expected = {}
    for item, subtask in zip(items["item"], items["subtask"]):
        task, doc = document(item, subtask)
        expected.setdefault(task + "_micro", {})[doc] = item
    assert set(meta["lm_eval_tasks"]) == set(expected)
    assert sorted(p.name for p in (folder / "lm_eval").glob("*_micro.yaml")) == sorted(f"{t}.yaml" for t in expected)
    for micro_task, entry in meta["lm_eval_tasks"].items():
        assert dict(zip(entry["docs"], entry["items"])) == expected[micro_task]
        assert micro_task in manager.all_subtasks
        assert Path(manager.task_index[micro_task].yaml_path).parent == folder / "lm_eval"
        # the micro task includes the harness's own config of the task the items are documents of, resolved
        # into the folder and named by a relative path
        original = Path(lm_eval_task.harness_index()[entry["task"]].yaml_path)
        assert entry["include"] == f"{entry['task']}.original_yaml" and (folder / "lm_eval" / entry["include"]).is_file()
        tasks_root = Path(lm_eval_task.harness_index()["leaderboard_mmlu_pro"].yaml_path).resolve().parents[2]
        assert entry["config"] == f"lm-eval 0.4.13: {original.resolve().relative_to(tasks_root).as_posix()}"
    assert meta["lm_eval_group"]["name"] == group and group in manager.all_groups
    config = manager.task_index[group].cfg
    assert config["task"] == list(meta["lm_eval_tasks"])
    assert config["aggregate_metric_list"] == [{"metric": metric, "aggregation": "mean", "weight_by_size": True}]
    assert meta["lm_eval_metric"] == metric and meta["lm_eval_group"]["exact"]
    assert "indexed by lm-eval" in meta["lm_eval_check"]


def test_the_mmlu_pro_documents_are_indices_of_the_one_task(leaderboard):
    """An item category:N is document N of leaderboard_mmlu_pro: N counts over the whole test split."""
    bench = load_benchmark("mmlu-pro-leaderboard")
    numbers = sorted(int(i.rsplit(":", 1)[1]) for i in bench.items.astype(str))
    assert numbers == list(range(12032)) == list(range(bench.n_items))
    meta = json.loads((leaderboard["mmlu-pro-leaderboard"] / "micro.json").read_text())
    (entry,) = meta["lm_eval_tasks"].values()
    assert entry["task"] == "leaderboard_mmlu_pro" and entry["n_docs"] == 12032 and len(entry["docs"]) == K


def test_lm_eval_tasks_without_the_task_yamls_is_refused_and_writes_nothing(tmp_path):
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "other.yaml").write_text("task: other_task\ndataset_path: x\n")
    err = one_error(run("build-micro", "--data", "gpqa", "--selector", "random", "--k", K, "--runs", 2, "--quiet",
                        "--lm-eval-tasks", tasks, "--out", tmp_path / "out"))
    assert "leaderboard_gpqa_main" in err and "--lm-eval-tasks" in err
    assert not (tmp_path / "out").exists() and sorted(p.name for p in tmp_path.iterdir()) == ["tasks"]


def test_the_tiger_lab_bundle_has_no_export_and_says_why(tmp_path):
    real_bundle("mmlu-pro-tiger-lab")
    harness_tasks = Path(lm_eval_task.harness_index()["leaderboard_mmlu_pro"].yaml_path).parents[2]
    args = ("build-micro", "--data", "mmlu-pro-tiger-lab", "--missing", "drop-models", "--selector", "random",
            "--k", K, "--runs", 2, "--quiet")
    err = one_error(run(*args, "--lm-eval-tasks", harness_tasks, "--out", tmp_path / "refused"))
    assert "no lm-evaluation-harness export" in err and "TIGER-AI-Lab" in err
    assert not (tmp_path / "refused").exists()
    code, out, err = run(*args, "--out", tmp_path / "csv-only")
    assert code == 0, err
    assert "no lm-eval export" in out and "TIGER-AI-Lab" in out
    meta = json.loads((tmp_path / "csv-only" / "micro.json").read_text())
    assert meta["lm_eval_tasks"] == {} and meta["lm_eval_group"] is None and "TIGER-AI-Lab" in meta["lm_eval_note"]
    assert not (tmp_path / "csv-only" / "lm_eval").exists()
    assert "No harness export" in (tmp_path / "csv-only" / "card.md").read_text()


def _own_bundle(root: Path, tasks: list[str], metric: str | None = None) -> Path:
    """A bundle of one's own whose items (q000 ...) state their harness documents in items.csv."""
    bench = random_benchmark(n_models=16, subtask_sizes=(12, 12), seed=3)
    folder = save_bundle(bench, root / "own")
    items = pd.read_csv(folder / "items.csv")
    items["lm_eval_task"] = [tasks[0] if s == items["subtask"].iloc[0] else tasks[1] for s in items["subtask"]]
    items["doc_id"] = items.groupby("subtask").cumcount()
    if metric:
        items["lm_eval_metric"] = metric
    items.to_csv(folder / "items.csv", index=False)
    return folder


def _local_tasks(root: Path, names: list[str]) -> Path:
    folder = root / "tasks"
    folder.mkdir()
    for name in names:
        data = root / f"{name}.jsonl"
        data.write_text("".join(json.dumps({"q": f"Q{i}?", "choices": ["a", "b"], "answer": i % 2}) + "\n"
                                for i in range(12)))
        config = {"task": name, "dataset_path": "json", "dataset_kwargs": {"data_files": {"test": str(data)}},
                  "test_split": "test", "output_type": "multiple_choice", "doc_to_text": "{{q}}",
                  "doc_to_choice": "{{choices}}", "doc_to_target": "{{answer}}", "metric_list": [{"metric": "acc"}]}
        (folder / f"{name}.yaml").write_text(yaml.safe_dump(config))
    return folder


def test_a_bundle_of_ones_own_states_its_documents_in_items_csv(tmp_path):
    from lm_eval.tasks import TaskManager

    bundle = _own_bundle(tmp_path, ["alpha_task", "beta_task"], metric="acc")
    tasks = _local_tasks(tmp_path, ["alpha_task", "beta_task"])
    built = build_micro(load_benchmark(bundle), "subtask_equal", 6, runs=2, out=tmp_path / "micro",
                        lm_eval_tasks=tasks)
    meta = json.loads((built.path / "micro.json").read_text())
    info = pd.read_csv(bundle / "items.csv").set_index("item")
    assert set(meta["lm_eval_tasks"]) == {"alpha_task_micro", "beta_task_micro"}
    for entry in meta["lm_eval_tasks"].values():
        assert [(info.loc[i, "lm_eval_task"], info.loc[i, "doc_id"]) for i in entry["items"]] == \
            [(entry["task"], d) for d in entry["docs"]]
    group = meta["lm_eval_group"]
    # three items of each task, each weighted 1/6: the group's pooled mean is the estimate
    assert group["name"] == "own_micro" and group["exact"] and group["weight_by_size"]
    manager = TaskManager(include_path=str(built.path / "lm_eval"), include_defaults=False)
    assert {"alpha_task_micro", "beta_task_micro"} <= set(manager.all_subtasks) and "own_micro" in manager.all_groups


def test_a_task_the_harness_lacks_is_refused_when_the_bundle_states_it(tmp_path):
    bundle = _own_bundle(tmp_path, ["no_such_task_anywhere", "no_such_task_either"])
    with pytest.raises(MbutilsError, match="no_such_task_anywhere.*does not define"):
        build_micro(load_benchmark(bundle), "random", 6, runs=2, out=tmp_path / "micro")
    assert not (tmp_path / "micro").exists()


def test_an_export_the_harness_does_not_index_is_refused_and_nothing_is_written(tmp_path, monkeypatch):
    import lm_eval.tasks

    class Blind:  # a harness that indexes nothing of the export
        task_index: dict = {}
        all_groups: list = []

        def __init__(self, **kwargs):
            pass

    bench = load_benchmark("gpqa")
    monkeypatch.setattr(lm_eval.tasks, "TaskManager", Blind)
    with pytest.raises(MbutilsError, match="not indexed by the installed harness.*nothing was written"):
        build_micro(bench, "random", K, runs=2, out=tmp_path / "micro")
    assert list(tmp_path.iterdir()) == []


def test_without_the_harness_the_folder_says_what_to_install(tmp_path, monkeypatch):
    for module in (lm_eval_task, lm_eval_export):
        monkeypatch.setattr(module, "harness_installed", lambda: False)
    monkeypatch.setattr(lm_eval_task, "harness_index", lambda: {})
    built = build_micro(load_benchmark("gpqa"), "random", K, runs=2, out=tmp_path / "micro")
    meta = json.loads((built.path / "micro.json").read_text())
    assert meta["lm_eval_tasks"]["leaderboard_gpqa_main_micro"]["include"] == "leaderboard_gpqa_main.yaml"
    assert meta["lm_eval_check"].startswith("not checked") and 'pip install "mbutils[harness]"' in meta["lm_eval_check"]
    card = (built.path / "card.md").read_text()
    assert "lm-eval==0.4.13" in card and "leaderboard\\_gpqa\\_main\\_micro" in card


def test_the_group_aggregation_follows_the_estimator():
    parsed = [("a", 0), ("a", 1), ("a", 2), ("b", 0), ("b", 1)]
    plain = MicroBenchmark(np.arange(4), np.full(4, 0.25))
    assert group_aggregation(plain, parsed, "correct") == (True, True)
    by_task = MicroBenchmark(np.array([0, 1, 3]), np.array([0.25, 0.25, 0.5]))  # each task half the weight
    assert group_aggregation(by_task, parsed, "correct") == (False, True)
    weighted = MicroBenchmark(np.array([0, 1, 3]), np.array([0.2, 0.3, 0.5]))
    assert group_aggregation(weighted, parsed, "correct") == (True, False)
    assert group_aggregation(plain, parsed, "confidence") == (True, False)


def _functions_named(value, prefix: str, dotted):
    """A config loaded without its functions, each ``!function`` (a path string under ``prefix``) as its import path."""
    if isinstance(value, dict):
        return {key: _functions_named(inner, prefix, dotted) for key, inner in value.items()}
    if isinstance(value, list):
        return [_functions_named(inner, prefix, dotted) for inner in value]
    if isinstance(value, str) and value.startswith(prefix):
        return ("function", dotted(value[len(prefix):]))
    return value


@pytest.mark.parametrize("name", list(LEADERBOARD))
def test_each_micro_task_is_the_harness_task_renamed_and_filtered_and_nothing_else(leaderboard, name):
    """lm-eval's own loader reads each exported micro task as the harness's task (includes merged) with only its
    name and document filter changed; the harness's functions named by their import path in the pinned lm-eval."""
    import lm_eval
    from lm_eval.tasks._yaml_loader import load_yaml

    root = Path(lm_eval.__file__).resolve().parent
    folder = (leaderboard[name] / "lm_eval").resolve()
    meta = json.loads((leaderboard[name] / "micro.json").read_text())
    for index, (micro_task, entry) in enumerate(meta["lm_eval_tasks"].items()):
        original = load_yaml(lm_eval_task.harness_index()[entry["task"]].yaml_path, resolve_func=False)
        original = _functions_named(original, f"{root}/", lambda rest: "lm_eval." + rest.replace("/", "."))
        ours = _functions_named(load_yaml(folder / f"{micro_task}.yaml", resolve_func=False), f"{folder}/",
                                lambda rest: rest)
        assert ours.pop("task") == micro_task and original.pop("task") == entry["task"]
        assert ours.pop("process_docs") == ("function", f"micro_docs.process_{index}")
        resolved = _functions_named(load_yaml(folder / entry["include"], resolve_func=False), f"{folder}/",
                                    lambda rest: rest)
        assert resolved.get("process_docs") == original.get("process_docs")  # the filter applies it first
        original.pop("process_docs", None)
        original.pop("tag", None)
        assert ours == original
