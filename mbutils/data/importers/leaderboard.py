"""Open LLM Leaderboard v2 details -> Benchmark: the leaderboard's benchmarks and their tasks,
where the details files are (a local folder or the hub), and the latest run of each model."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from mbutils.data.benchmark import Benchmark
from mbutils.base.errors import BundleError
from mbutils.data.importers.lm_eval import SampleFile, parse_samples_name, results_for, target_delimiter
from mbutils.data.importers.assemble import assemble_bundle
from mbutils.data.importers.records import iter_records, load_json, with_progress
from mbutils.data.importers.samples import DOC_CHECKS, ITEM_POLICIES, LISTED, check_option
from mbutils.data.importers.task_table import table_from_records


@dataclass(frozen=True)
class LeaderboardBenchmark:
    """A leaderboard benchmark: its lm-eval tasks, official 0/1 metric and subtask labels."""

    name: str
    tasks: tuple[str, ...]
    metric: str
    prefix: str = "leaderboard_"      # removed from task names to make subtask labels
    subtask_field: str | None = None  # take subtasks from this document field instead

    def label(self, task: str) -> str:
        return task[len(self.prefix):] if task.startswith(self.prefix) else task


_BBH = ("boolean_expressions", "causal_judgement", "date_understanding", "disambiguation_qa",
        "formal_fallacies", "geometric_shapes", "hyperbaton", "logical_deduction_five_objects",
        "logical_deduction_seven_objects", "logical_deduction_three_objects", "movie_recommendation",
        "navigate", "object_counting", "penguins_in_a_table", "reasoning_about_colored_objects",
        "ruin_names", "salient_translation_error_detection", "snarks", "sports_understanding",
        "temporal_sequences", "tracking_shuffled_objects_five_objects",
        "tracking_shuffled_objects_seven_objects", "tracking_shuffled_objects_three_objects", "web_of_lies")


_MATH = ("algebra", "counting_and_prob", "geometry", "intermediate_algebra", "num_theory", "prealgebra",
         "precalculus")


LEADERBOARD_BENCHMARKS: dict[str, LeaderboardBenchmark] = {
    "gpqa-main": LeaderboardBenchmark("gpqa-main", ("leaderboard_gpqa_main",), "acc_norm"),
    "gpqa-diamond": LeaderboardBenchmark("gpqa-diamond", ("leaderboard_gpqa_diamond",), "acc_norm"),
    "gpqa-extended": LeaderboardBenchmark("gpqa-extended", ("leaderboard_gpqa_extended",), "acc_norm"),
    "bbh": LeaderboardBenchmark("bbh", tuple(f"leaderboard_bbh_{t}" for t in _BBH), "acc_norm",
                                prefix="leaderboard_bbh_"),
    "mmlu-pro": LeaderboardBenchmark("mmlu-pro", ("leaderboard_mmlu_pro",), "acc", subtask_field="category"),
    "musr": LeaderboardBenchmark("musr", tuple(f"leaderboard_musr_{t}" for t in
                                               ("murder_mysteries", "object_placements", "team_allocation")),
                                 "acc_norm", prefix="leaderboard_musr_"),
    "math-hard": LeaderboardBenchmark("math-hard", tuple(f"leaderboard_math_{t}_hard" for t in _MATH),
                                      "exact_match", prefix="leaderboard_math_"),
    "ifeval": LeaderboardBenchmark("ifeval", ("leaderboard_ifeval",), "prompt_level_strict_acc"),
}


LEADERBOARD_ALIASES = {"gpqa": "gpqa-main", "mmlu_pro": "mmlu-pro", "math": "math-hard",
                       "math_hard": "math-hard", "gpqa_main": "gpqa-main", "gpqa_diamond": "gpqa-diamond",
                       "gpqa_extended": "gpqa-extended"}


def leaderboard_benchmark(name: str) -> LeaderboardBenchmark:
    """The spec for a benchmark name (``gpqa`` means GPQA main, the paper's set)."""
    key = LEADERBOARD_ALIASES.get(name.lower(), name.lower())
    if key not in LEADERBOARD_BENCHMARKS:
        raise BundleError(f"unknown leaderboard benchmark {name!r}; choose one of "
                          f"{', '.join(['gpqa', *LEADERBOARD_BENCHMARKS])}")
    return LEADERBOARD_BENCHMARKS[key]


def details_repo(model: str) -> str:
    """The hub dataset holding a model's details: ``open-llm-leaderboard/<org>__<name>-details``."""
    return f"open-llm-leaderboard/{model.strip().replace('/', '__')}-details"


class LeaderboardSource:
    """Where details come from: ``fetch`` returns a local folder with the details repo's layout."""

    def fetch(self, model: str, tasks: Sequence[str]) -> Path:
        raise NotImplementedError

    def describe(self) -> str:
        return type(self).__name__


class LocalSource(LeaderboardSource):
    """Details already on disk: ``root/<org>__<name>-details/`` laid out as on the hub.

    Either the repo's own files (``<org>__<name>/samples_<task>_<time>.json[l]`` and
    ``results_<time>.json``) or its Parquet conversion (``<org>__<name>__<task>/latest/*.parquet``).
    """

    def __init__(self, root: str | Path):
        self.root = Path(root).expanduser()

    def fetch(self, model: str, tasks: Sequence[str]) -> Path:
        folder = self.root / details_repo(model).split("/", 1)[1]
        if not folder.is_dir():
            there = sorted(p.name for p in self.root.iterdir() if p.is_dir())[:LISTED] if self.root.is_dir() else []
            raise BundleError(f"{model}: no folder {folder.name} under {self.root}"
                              + (f" (it has: {', '.join(there)}, ...)" if there else " (the folder is empty or absent)"))
        return folder

    def describe(self) -> str:
        return f"local copy {self.root}"


class HubSource(LeaderboardSource):
    """Download details from the Hugging Face hub with ``huggingface_hub`` (optional dependency).

    Only the files of the requested tasks are fetched (``allow_patterns``); downloads go to
    the hub cache (``cache_dir``), so a second import reads from disk, and an interrupted
    download is resumed. ``layout="raw"`` lists the repo and fetches the latest run's
    samples file per task (and that run's results file) from the main branch;
    ``layout="parquet"`` fetches the ``latest`` split of the hub's Parquet conversion
    (``refs/convert/parquet``), smaller to download when it exists.
    """

    LAYOUTS = ("raw", "parquet")

    def __init__(self, *, cache_dir: str | Path | None = None, layout: str = "raw",
                 token: str | bool | None = None, max_workers: int = 4):
        check_option(layout, self.LAYOUTS, "layout")
        self.cache_dir = cache_dir
        self.layout = layout
        self.token = token
        self.max_workers = max_workers

    def fetch(self, model: str, tasks: Sequence[str]) -> Path:
        try:
            import huggingface_hub as hub
        except ImportError:
            raise BundleError("downloading leaderboard details needs the optional package huggingface_hub: "
                              "pip install huggingface_hub (or use a LocalSource on files you downloaded)") from None
        repo = details_repo(model)
        try:
            if self.layout == "raw":
                files = hub.HfApi(token=self.token).list_repo_files(repo, repo_type="dataset")
                patterns, revision = latest_run_files(files, tasks, repo), None
            else:
                stem = model.strip().replace("/", "__")
                patterns, revision = [f"{stem}__{t}/*latest/*.parquet" for t in tasks], "refs/convert/parquet"
            path = hub.snapshot_download(repo_id=repo, repo_type="dataset", revision=revision,
                                         allow_patterns=patterns, cache_dir=self.cache_dir,
                                         token=self.token, max_workers=self.max_workers)
        except BundleError:
            raise
        except Exception as err:  # network, auth, missing repo: one message for people
            raise BundleError(f"{model}: cannot download {repo} ({type(err).__name__}: {str(err)[:200]}). "
                              "Check the model id (org/name as on the leaderboard), your network, and "
                              "`huggingface-cli login` for gated repos") from None
        return Path(path)

    def describe(self) -> str:
        return f"Hugging Face hub ({self.layout})"


def latest_run_files(files: Sequence[str], tasks: Sequence[str], repo: str = "the repo") -> list[str]:
    """Repo paths to fetch: per task the latest samples file, plus the results file of its run."""
    latest: dict[str, tuple[str, str]] = {}
    for name in files:
        sample = parse_samples_name(Path(name))
        if sample and sample.task in tasks and sample.stamp > latest.get(sample.task, ("", ""))[0]:
            latest[sample.task] = (sample.stamp, name)
    absent = [t for t in tasks if t not in latest]
    if absent:
        raise BundleError(f"{repo} has no samples for {', '.join(absent[:LISTED])}"
                          + (f" (and {len(absent) - LISTED} more)" if len(absent) > LISTED else "")
                          + "; was the model evaluated on this benchmark?")
    wanted = [name for _, name in latest.values()]
    runs = {(str(Path(name).parent), stamp) for stamp, name in latest.values()}
    have = set(files)
    wanted += sorted(r for folder, stamp in runs
                     if (r := (f"{folder}/" if folder != "." else "") + f"results_{stamp}.json") in have)
    return wanted


def _details_files(folder: Path, model: str, tasks: Sequence[str]) -> dict[str, tuple[list[Path], dict | None]]:
    """Per task: the latest run's samples file (or Parquet shards) and its results json."""
    raw: dict[str, SampleFile] = {}
    for sample in filter(None, map(parse_samples_name, sorted(folder.rglob("samples_*.json*")))):
        if sample.task in tasks and (sample.task not in raw or sample.stamp > raw[sample.task].stamp):
            raw[sample.task] = sample
    found = {}
    for task in tasks:
        if task in raw:
            sample = raw[task]
            results_path = results_for(sample.path.parent, sample.stamp)
            found[task] = ([sample.path], load_json(results_path) if results_path else None)
            continue
        shards = sorted(p for d in folder.glob(f"*__{task}") for split in ("latest", "partial-latest")
                        for p in (d / split).glob("*.parquet"))
        if not shards:
            raise BundleError(f"{model}: no details for {task} in {folder} (expected "
                              f"samples_{task}_<time>.jsonl or <org>__<name>__{task}/latest/*.parquet)")
        found[task] = (shards, None)
    return found


def import_leaderboard(models: Sequence[str], benchmark: str, *, source: LeaderboardSource,
                       metric: str | None = None, name: str | None = None, items: str = "same",
                       check_docs: str = "warn", confidence: bool | None = None,
                       progress: bool = True) -> Benchmark:
    """Open LLM Leaderboard v2 per-item details of ``models`` on ``benchmark`` -> Benchmark.

    ``metric`` defaults to the leaderboard's own metric for the benchmark (acc_norm for
    GPQA, BBH and MuSR; acc for MMLU-Pro; exact_match for MATH-hard; prompt-level strict
    accuracy for IFEval). ``check_docs`` defaults to ``"warn"``: the leaderboard ran many
    harness builds, and a differing ``doc_hash`` there need not mean a different question.
    Other options as in :func:`import_lm_eval`.
    """
    check_option(items, ITEM_POLICIES, "items")
    check_option(check_docs, DOC_CHECKS, "check_docs")
    spec = leaderboard_benchmark(benchmark)
    metric = metric or spec.metric
    models = [m.strip() for m in models]
    if not models:
        raise BundleError("no models given")
    dup = [m for m in set(models) if models.count(m) > 1]
    if dup:
        raise BundleError(f"models listed more than once: {', '.join(sorted(dup)[:LISTED])}")
    tables = []
    for model in with_progress(models, progress, f"{spec.name} details"):
        folder = source.fetch(model, spec.tasks)
        for task, (paths, results) in _details_files(folder, model, spec.tasks).items():
            records = (rec for path in paths for rec in iter_records(path, metric, spec.subtask_field))
            source_name = str(paths[0]) if len(paths) == 1 else f"{paths[0].parent}/*.parquet"
            tables.append(table_from_records(
                records, source_name, model=model, task=spec.label(task), metric=metric, filter_name=None,
                subtask_field=spec.subtask_field, delimiter=target_delimiter(results, task)))
    return assemble_bundle(tables, name=name or f"leaderboard-{spec.name}", models=models,
                           tasks=[spec.label(t) for t in spec.tasks], items=items, check_docs=check_docs,
                           confidence=confidence,
                           origin=f"Open LLM Leaderboard v2 details, {spec.name} ({metric}), {source.describe()}")


def read_model_list(path: str | Path) -> list[str]:
    """Model ids from a text file: one per line, ``#`` comments and blank lines ignored."""
    path = Path(path).expanduser()
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as err:
        raise BundleError(f"{path}: cannot read the model list ({err.strerror})") from None
    models = [line.split("#", 1)[0].strip() for line in lines]
    models = [m for m in models if m]
    if not models:
        raise BundleError(f"{path}: no model ids in the file (one org/name per line)")
    return models
