"""Importers: evaluation logs -> Benchmark, so readers can bring their own results.

``samples`` states the format and the options; ``records``, ``task_table`` and ``assemble``
turn lm-evaluation-harness *samples* records (one per model, task and document) into
correctness and confidence matrices; ``lm_eval`` reads the harness's ``--log_samples``
output folders; ``leaderboard`` reads Open LLM Leaderboard v2 details, from a local folder or
the hub. Both sources share that one code path.
"""

from mbutils.data.importers.leaderboard import (LEADERBOARD_ALIASES, LEADERBOARD_BENCHMARKS, HubSource, LeaderboardBenchmark, LeaderboardSource, LocalSource, details_repo, import_leaderboard, latest_run_files, leaderboard_benchmark, read_model_list)
from mbutils.data.importers.lm_eval import (SampleFile, find_sample_files, import_lm_eval, model_name_from_results, parse_samples_name)
from mbutils.data.importers.samples import DOC_CHECKS, ITEM_POLICIES

__all__ = ["DOC_CHECKS", "HubSource", "ITEM_POLICIES", "LEADERBOARD_ALIASES", "LEADERBOARD_BENCHMARKS",
           "LeaderboardBenchmark", "LeaderboardSource", "LocalSource", "SampleFile", "details_repo",
           "find_sample_files", "import_leaderboard", "import_lm_eval", "latest_run_files", "leaderboard_benchmark",
           "model_name_from_results", "parse_samples_name", "read_model_list"]
